#!/usr/bin/env bash
# Checks that `make install` gives a `moult` that runs on a machine without the Swift toolchain:
# installs into a scratch PREFIX (as the user running this; no root needed for the install itself),
# lists what `ldd` names, fails if any of it is a library of the toolchain, then runs `moult --version` and
# a migration with the toolchain's folder hidden (an empty folder bound over it in a mount namespace of
# this process alone: needs root or unprivileged user namespaces), and times the start-up.
#
#     scripts/check-static.sh [--toolchain DIR]     (default: the folder holding `swift`'s real path, two up)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TOOLCHAIN=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
[[ "${1:-}" == "--toolchain" ]] && TOOLCHAIN=$2
PREFIX=$(mktemp -d)
trap 'rm -rf "$PREFIX"' EXIT
make install PREFIX="$PREFIX" >/dev/null
BIN="$PREFIX/bin/moult"
echo "ldd $BIN:"
ldd "$BIN" | sed 's/^/  /'
if ldd "$BIN" | grep -F "$TOOLCHAIN" >/dev/null; then
    echo "FAIL: moult links a library of the toolchain ($TOOLCHAIN)"; exit 1
fi
if ldd "$BIN" | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime' >/dev/null; then
    echo "FAIL: moult links the Swift runtime dynamically"; exit 1
fi
WORK=$(mktemp -d)
trap 'rm -rf "$PREFIX" "$WORK"' EXIT
M="$ROOT/Datasets/People/People.xcdatamodeld"
"$PREFIX/bin/moult-people" generate "$WORK/s.sqlite" --model-version 2 --objects 1000 --model "$M" >/dev/null
hidden() {
    unshare -m --propagation private sh -c "mkdir -p '$WORK/empty' && mount --bind '$WORK/empty' '$TOOLCHAIN' && $*"
}
echo "with $TOOLCHAIN hidden:"
hidden "'$BIN' --version" | sed 's/^/  /'
hidden "'$BIN' migrate '$WORK/s.sqlite' --model '$M' --to v3 --mapping '$ROOT/Datasets/People/Mappings/v2-to-v3.json' --output '$WORK/d.sqlite' --quiet" | sed 's/^/  /'
hidden "test ! -e '$TOOLCHAIN/bin/swift'" && echo "  (the toolchain was hidden: $TOOLCHAIN/bin/swift not there)"
# Start-up: `moult --version`, 10 runs, the median wall time.
for _ in $(seq 10); do
    start=$(date +%s%N); "$BIN" --version >/dev/null; end=$(date +%s%N)
    echo $(( (end - start) / 1000 ))
done | sort -n | sed -n '5p' | awk '{ printf "  start-up: %.1f ms (median of 10 runs of moult --version)\n", $1 / 1000 }'

echo "ok: moult runs without the toolchain"
