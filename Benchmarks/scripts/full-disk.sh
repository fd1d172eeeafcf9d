#!/usr/bin/env bash
# A full disk: a migration whose output fills its filesystem stops with the resumable exit code (75)
# and a clear message; once space is freed, `--resume` completes it, identical to an uninterrupted run.
#
#     Benchmarks/scripts/full-disk.sh [--objects N]     # default 200000 persons (People v2 -> v3)
#
# Needs root (it mounts a size-limited tmpfs under the work folder, and unmounts it on exit). The tmpfs
# starts at half the size the uninterrupted run's destination needed, then grows (remount) to four times.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OBJECTS=200000 CHUNK=${CHUNK_SIZE:-10000}
while [[ $# -gt 0 ]]; do
    case "$1" in
    --objects) OBJECTS=$2; shift 2 ;;
    -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
[[ "$(id -u)" == 0 ]] || die "needs root to mount a small tmpfs"

build_moult
make_work full-disk
SRC="$WORK/source-v2.sqlite"
SMALL="$WORK/small"
cleanup() { mountpoint -q "$SMALL" && umount "$SMALL" || true; }
trap cleanup EXIT

"$MOULT" generate people --version 2 --objects "$OBJECTS" --seed 1 "$SRC" >/dev/null
SRC_SHA=$(sha256sum "$SRC" | cut -d' ' -f1)
migrate() { # DEST [options...]
    local dest=$1; shift
    "$MOULT" migrate "$SRC" --model "$MODEL" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" \
        --output "$dest" --chunk-size "$CHUNK" "$@"
}

# The reference, twice (store UUIDs are compared only when two uninterrupted runs agree on them).
mkdir -p "$WORK/ref1" "$WORK/ref2"
migrate "$WORK/ref1/out.sqlite" >/dev/null 2>"$WORK/ref1/err" || { cat "$WORK/ref1/err"; die "the reference migration failed"; }
migrate "$WORK/ref2/out.sqlite" >/dev/null 2>"$WORK/ref2/err" || { cat "$WORK/ref2/err"; die "the second reference migration failed"; }
DIGEST_OPTIONS=()
if [[ "$(python3 "$SCRIPTS/store-digest.py" "$WORK/ref1/out.sqlite" | grep '^uuid' || true)" != \
      "$(python3 "$SCRIPTS/store-digest.py" "$WORK/ref2/out.sqlite" | grep '^uuid' || true)" ]]; then
    DIGEST_OPTIONS=(--ignore-uuid)
fi
python3 "$SCRIPTS/store-digest.py" "${DIGEST_OPTIONS[@]}" "$WORK/ref1/out.sqlite" >"$WORK/reference.digest"
need_kib=$(du -sk "$WORK/ref1" | cut -f1)
small_kib=$((need_kib / 2)); [[ $small_kib -ge 512 ]] || small_kib=512
echo "full-disk: the uninterrupted run's folder needs ${need_kib} KiB; tmpfs of ${small_kib} KiB"

mkdir -p "$SMALL"
mount -t tmpfs -o "size=${small_kib}k" tmpfs "$SMALL"
rc=0
migrate "$SMALL/out.sqlite" >/dev/null 2>"$WORK/full.err" || rc=$?
echo "full-disk: first run: exit $rc; its message:"
sed 's/^/    /' "$WORK/full.err"
[[ "$rc" == 75 ]] || die "expected exit 75 (interrupted, resumable) on a full disk, got $rc"
grep -qiE "space|full|ENOSPC" "$WORK/full.err" || die "the message does not say the disk is full"

mount -o "remount,size=$((need_kib * 4 + 16384))k" "$SMALL"
rc=0
migrate "$SMALL/out.sqlite" --resume >/dev/null 2>"$WORK/resume.err" || rc=$?
[[ "$rc" == 0 ]] || { cat "$WORK/resume.err"; die "the resume after freeing space exited $rc"; }
python3 "$SCRIPTS/store-digest.py" "${DIGEST_OPTIONS[@]}" "$SMALL/out.sqlite" >"$WORK/resumed.digest"
diff -u "$WORK/reference.digest" "$WORK/resumed.digest" || die "the resumed destination differs from the uninterrupted run's"
[[ "$(sha256sum "$SRC" | cut -d' ' -f1)" == "$SRC_SHA" ]] || die "the source changed"
echo "full-disk: exit 75 on a full disk (${small_kib} KiB tmpfs), resumed after growing it: identical to the uninterrupted run; source unchanged"
