#!/usr/bin/env bash
# Shows that `make install PREFIX=$HOME/.local` works for a user without root: adds a user of its own
# (useradd; removed at the end), gives it a clone of this repository's HEAD that it owns, and runs, as
# that user, `make install PREFIX=$HOME/.local` in the clone. Then checks that the user wrote nothing but
# the clone and PREFIX (every file the user owns, on every local file system, before and after), that
# the installed `moult` runs and names no library of the toolchain, and prints the figures (wall time,
# sizes). It shows too what `make` says as that user when a Debian package is missing (it cannot
# install one without root): it names the package and how to get it, and stops.
#
# Run it as root, which adding the user needs (the build itself runs without root). A full release
# build: 15 minutes or more on 2 cores.
#
#     scripts/check-nonroot-install.sh [--keep]     (--keep leaves the user's folder, named at the end)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEEP=${1:-}
if [[ $(id -u) != 0 ]]; then
    echo "check-nonroot-install.sh: run it as root: it adds a user without root to build as (useradd), which only root can"
    exit 1
fi
for tool in useradd userdel setpriv git make; do
    command -v "$tool" >/dev/null || { echo "check-nonroot-install.sh: needs $tool, which is not here"; exit 1; }
done
SWIFT_BIN=$(dirname "$(readlink -f "$(command -v swift)")")
TOOLCHAIN=$(dirname "$(dirname "$SWIFT_BIN")")

USER_NAME="moult-nonroot-$$"
BASE=$(mktemp -d /tmp/moult-nonroot.XXXXXX)
chmod 755 "$BASE"
HOME_DIR="$BASE/home"
CLONE="$HOME_DIR/moult"
PREFIX="$HOME_DIR/.local"
cleanup() {
    userdel "$USER_NAME" 2>/dev/null || true
    getent group "$USER_NAME" >/dev/null && groupdel "$USER_NAME" 2>/dev/null || true
    if [[ "$KEEP" == "--keep" ]]; then echo "kept: $BASE (the user is removed; its files are now owned by a free uid)"; else rm -rf "$BASE"; fi
}
trap cleanup EXIT
useradd --create-home --home-dir "$HOME_DIR" --user-group --shell /bin/sh "$USER_NAME"
USER_ID=$(id -u "$USER_NAME")
GROUP_ID=$(id -g "$USER_NAME")
echo "user: $USER_NAME (uid $USER_ID, not root), home $HOME_DIR"

# The clone: this repository's HEAD, owned by the user.
git clone -q --no-hardlinks "$ROOT" "$CLONE"
chown -R "$USER_NAME:$USER_NAME" "$CLONE"
echo "clone: $CLONE at $(git -C "$ROOT" rev-parse --short HEAD), owned by $(stat -c %U "$CLONE")"

# This machine serves GitHub's repositories from local mirrors owned by root (/etc/gitconfig's
# insteadOf), which git refuses to read for another user unless `safe.directory` says so; a user
# fetching from GitHub itself needs nothing of the kind. The setting is in a file of this script's
# (GIT_CONFIG_GLOBAL), root's, which the user reads and does not write.
GIT_GLOBAL="$BASE/gitconfig"
: >"$GIT_GLOBAL"
if git config --system --get-regexp '^url\..*\.insteadof$' 2>/dev/null | grep -q '^url\./'; then
    printf '[safe]\n\tdirectory = *\n' >"$GIT_GLOBAL"
    echo "note: the Swift packages come from this machine's root-owned mirrors; git is told they are safe to read (GIT_CONFIG_GLOBAL=$GIT_GLOBAL)"
fi
chmod 644 "$GIT_GLOBAL"

as_user() {
    setpriv --reuid "$USER_ID" --regid "$GROUP_ID" --init-groups \
        env -i HOME="$HOME_DIR" USER="$USER_NAME" LOGNAME="$USER_NAME" PATH="$SWIFT_BIN:/usr/local/bin:/usr/bin:/bin" \
        LANG=C.UTF-8 GIT_CONFIG_GLOBAL="$GIT_GLOBAL" "$@"
}

# Every file the user owns, outside /proc and /sys, on each local file system.
owned() {
    local mounts
    mounts=$(findmnt -rn -o TARGET,FSTYPE | awk '$2 ~ /^(ext[234]|xfs|btrfs|tmpfs|overlay|zfs)$/ { print $1 }' | grep -v '^/mnt/sandboxing' || true)
    # shellcheck disable=SC2086
    find $mounts -xdev -user "$USER_ID" 2>/dev/null | sort -u || true
}
before=$(mktemp)
after=$(mktemp)
trap 'rm -f "$before" "$after"; cleanup' EXIT
owned >"$before"

echo
echo "1. as the user, a missing Debian package: make names it and says how to get it"
set +e
message=$(cd "$CLONE" && as_user make build-deps BUILD_PACKAGES="pkg-config moult-check-absent-package" 2>&1)
status=$?
set -e
echo "$message" | sed 's/^/   /'
if [[ $status == 0 ]] || ! grep -q "missing Debian packages: moult-check-absent-package" <<<"$message" || ! grep -q "needs root" <<<"$message"; then
    echo "FAIL: make did not stop naming the missing package and that it needs root (exit $status)"; exit 1
fi
echo "   (exit $status, before anything was built)"

echo
echo "2. as the user: make install PREFIX=$PREFIX"
start=$(date +%s)
set +e
(cd "$CLONE" && as_user make install PREFIX="$PREFIX") >"$BASE/make.log" 2>&1
status=$?
set -e
end=$(date +%s)
grep -v '^\[' "$BASE/make.log" | tail -n 15 | sed 's/^/   /'
if [[ $status != 0 ]]; then
    echo "FAIL: make install exited $status as a user without root (the log: $BASE/make.log)"; KEEP=--keep; exit 1
fi
echo "   wall time: $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s"

echo
echo "3. what the user wrote"
owned >"$after"
outside=$(comm -13 "$before" "$after" | grep -v -e "^$CLONE\(/\|$\)" -e "^$PREFIX\(/\|$\)" || true)
# SwiftPM itself, on any command in any package (a three-line package with no dependency does it too),
# makes ~/.swiftpm in the home its user database names (not $HOME), whatever --cache-path, --config-path
# and --security-path say: `configuration` and `security` empty, `cache` a link to XDG_CACHE_HOME's
# folder, which the release build puts in the clone. Those entries, and only when so, are SwiftPM's; the
# rest must be empty.
swiftpm="$HOME_DIR/.swiftpm"
if [[ -d "$swiftpm" ]] && [[ -z "$(ls -A "$swiftpm/configuration" 2>/dev/null)" ]] && [[ -z "$(ls -A "$swiftpm/security" 2>/dev/null)" ]] &&
    [[ "$(readlink "$swiftpm/cache" 2>/dev/null)" == "$CLONE/"* ]] && [[ "$(ls -A "$swiftpm" | sort | tr '\n' ' ')" == "cache configuration security " ]]; then
    echo "   SwiftPM's own ~/.swiftpm (configuration and security empty, cache -> $(readlink "$swiftpm/cache")): left out of the check"
    outside=$(grep -v -x -e "$swiftpm" -e "$swiftpm/cache" -e "$swiftpm/configuration" -e "$swiftpm/security" <<<"$outside" || true)
fi
if [[ -n "$outside" ]]; then
    echo "FAIL: the build wrote outside the clone and PREFIX:"
    echo "$outside" | head -n 40 | sed 's/^/   /'
    exit 1
fi
echo "   new files owned by the user: $(comm -13 "$before" "$after" | grep -c "^$CLONE\(/\|$\)") in the clone, $(comm -13 "$before" "$after" | grep -c "^$PREFIX\(/\|$\)") in PREFIX, none anywhere else"
echo "   the clone's .build: $(du -sh "$CLONE/.build" | cut -f1)"

echo
echo "4. the installed binaries"
for binary in moult moult-people; do
    [[ -x "$PREFIX/bin/$binary" ]] || { echo "FAIL: $PREFIX/bin/$binary is not there"; exit 1; }
    echo "   $PREFIX/bin/$binary: $(stat -c '%U, %s bytes' "$PREFIX/bin/$binary")"
done
version=$(as_user "$PREFIX/bin/moult" --version)
echo "   moult --version (as the user): $version"
if ldd "$PREFIX/bin/moult" | grep -F "$TOOLCHAIN" >/dev/null || ldd "$PREFIX/bin/moult" | grep -E 'libswift|libFoundation|libdispatch' >/dev/null; then
    echo "FAIL: the installed moult links a library of the toolchain:"; ldd "$PREFIX/bin/moult" | sed 's/^/   /'; exit 1
fi
echo "   ldd names no library of the toolchain ($TOOLCHAIN)"
echo
echo "ok: make install PREFIX=\$HOME/.local built and installed without root, writing only the clone and PREFIX (and SwiftPM's own empty ~/.swiftpm)"
