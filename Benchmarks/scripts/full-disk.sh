#!/usr/bin/env bash
# A full disk: a migration whose output fills its filesystem stops with the resumable exit code (75)
# and a clear message; once space is freed, `--resume` completes it, identical to an uninterrupted run.
#
#     Benchmarks/scripts/full-disk.sh [--objects N]     # default 200000 persons (People v2 -> v3)
#
# Needs root (it mounts a size-limited tmpfs under the work folder, and unmounts it on exit). The tmpfs
# starts at half the size the uninterrupted run's work folder needed, then grows (remount) to four
# times that. Runs once with each association table (ASSOCIATIONS, default "lmdb memory"), since either
# LMDB or SQLite may be the first to meet the full disk. Exits 1 when any case fails.
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

"$MOULT_PEOPLE" generate --model-version 2 --objects "$OBJECTS" --seed 1 "$SRC" >/dev/null
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

# One case per association table: with LMDB, the first write to fail may be LMDB's; in memory, SQLite's.
FAILURES=()
run_case() {
    local association=$1 rc=0
    # The reference of this mode (the destination's UUID is derived from the run's inputs, the
    # association table among them).
    mkdir -p "$WORK/ref-$association"
    migrate "$WORK/ref-$association/out.sqlite" --association "$association" --quiet >/dev/null 2>&1 \
        || die "the uninterrupted migration with --association $association failed"
    python3 "$SCRIPTS/store-digest.py" "${DIGEST_OPTIONS[@]}" "$WORK/ref-$association/out.sqlite" >"$WORK/reference-$association.digest"
    mkdir -p "$SMALL"
    mount -t tmpfs -o "size=${small_kib}k" tmpfs "$SMALL"
    migrate "$SMALL/out.sqlite" --association "$association" --quiet >/dev/null 2>"$WORK/full-$association.err" || rc=$?
    echo "full-disk [$association]: first run on ${small_kib} KiB: exit $rc; its message:"
    tr '\r' '\n' <"$WORK/full-$association.err" | sed 's/^/    /'
    if [[ "$rc" == 0 ]]; then
        FAILURES+=("[$association] the migration fit in ${small_kib} KiB: no full disk was met")
        umount "$SMALL"; return
    elif [[ "$rc" != 75 ]]; then
        # Wrong exit code; the resume below still tells whether the state left behind is resumable.
        FAILURES+=("[$association] expected exit 75 (interrupted, resumable) on a full disk, got $rc")
    fi
    grep -qiE "space|full|ENOSPC" "$WORK/full-$association.err" \
        || FAILURES+=("[$association] the message does not say the disk is full")
    local rc_full=$rc
    mount -o "remount,size=$((need_kib * 4 + 16384))k" "$SMALL"
    rc=0
    migrate "$SMALL/out.sqlite" --association "$association" --quiet --resume >/dev/null 2>"$WORK/resume-$association.err" || rc=$?
    if [[ "$rc" != 0 ]]; then
        FAILURES+=("[$association] the resume after growing the tmpfs exited $rc: $(tail -n 1 "$WORK/resume-$association.err")")
        umount "$SMALL"; return
    fi
    python3 "$SCRIPTS/store-digest.py" "${DIGEST_OPTIONS[@]}" "$SMALL/out.sqlite" >"$WORK/resumed-$association.digest"
    if diff -u "$WORK/reference-$association.digest" "$WORK/resumed-$association.digest"; then
        echo "full-disk [$association]: exit $rc_full on a full disk, resumed after growing it to $((need_kib * 4 + 16384)) KiB: identical to the uninterrupted run"
    else
        FAILURES+=("[$association] the resumed destination differs from the uninterrupted run's")
    fi
    umount "$SMALL"
}

for association in ${ASSOCIATIONS:-lmdb memory}; do
    run_case "$association"
done
[[ "$(sha256sum "$SRC" | cut -d' ' -f1)" == "$SRC_SHA" ]] || FAILURES+=("the source changed")
if [[ ${#FAILURES[@]} -gt 0 ]]; then
    printf 'full-disk: FAILED: %s\n' "${FAILURES[@]}"
    exit 1
fi
echo "full-disk: every case stopped with exit 75 and resumed to the uninterrupted run's result; source unchanged"
