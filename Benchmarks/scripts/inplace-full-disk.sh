#!/usr/bin/env bash
# A full disk during an in-place migration: the store is left as it was, exit 75 (resumable), and the
# same command completes once there is room, identical to a run that had room from the start.
#
#     Benchmarks/scripts/inplace-full-disk.sh [--readings N]     # default 300000 readings
#
# Needs root (a size-limited tmpfs under the work folder, unmounted on exit). Two cases on the Widening
# v1 -> v2 step (Integer 32 -> Double: the table is rebuilt inside the store):
#   rebuild  --no-backup, the tmpfs 1.3× the store: the rebuild's copy does not fit
#   backup   the backup kept, the tmpfs 1.5× the store: the NAME~.EXT copy does not fit
# Each: exit 75 and a message; the store's digest unchanged, integrity ok, no backup or temporary left;
# then the tmpfs grows to 8× and the same command exits 0, its result identical to the reference.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

READINGS=300000
while [[ $# -gt 0 ]]; do
    case "$1" in
    --readings) READINGS=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
[[ "$(id -u)" == 0 ]] || die "needs root to mount a small tmpfs"
WIDENING="$SCRIPTS/models/Widening.xcdatamodeld"
build_moult
make_work inplace-full-disk
SMALL="$WORK/small"
cleanup() { mountpoint -q "$SMALL" && umount "$SMALL" || true; }
trap cleanup EXIT

SRC="$WORK/original.sqlite"
"$MOULT" create "$SRC" --model "$WIDENING/v1.xcdatamodel" >/dev/null
sqlite3 "$SRC" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $READINGS)
    INSERT INTO ZREADING (Z_PK, Z_ENT, Z_OPT, ZSENSOR, ZSEQUENCE, ZVALUE)
    SELECT i, 1, 1, 'sensor-' || (i % 97), i, (i * 7919) % 100003 - 50000 FROM n;
    UPDATE Z_PRIMARYKEY SET Z_MAX = $READINGS WHERE Z_ENT = 1; PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
SIZE=$(stat -c %s "$SRC")
ORIGINAL=$(python3 "$SCRIPTS/store-digest.py" "$SRC")
mkdir -p "$WORK/reference"
cp "$SRC" "$WORK/reference/store.sqlite"
"$MOULT" migrate "$WORK/reference/store.sqlite" --model "$WIDENING" --no-backup --quiet >/dev/null
REFERENCE=$(python3 "$SCRIPTS/store-digest.py" "$WORK/reference/store.sqlite")
echo "inplace-full-disk: store $((SIZE / 1024)) KiB, $READINGS readings"

FAILED=0
for case in rebuild backup; do
    cleanup
    mkdir -p "$SMALL"
    factor=$([[ "$case" == rebuild ]] && echo 1.3 || echo 1.5)
    options=()
    [[ "$case" == rebuild ]] && options=(--no-backup)
    mount -t tmpfs -o size=$(python3 -c "print(int($SIZE * $factor))") tmpfs "$SMALL"
    cp "$SRC" "$SMALL/store.sqlite"
    rc=0
    "$MOULT" migrate "$SMALL/store.sqlite" --model "$WIDENING" "${options[@]}" --quiet >"$WORK/$case.log" 2>&1 || rc=$?
    problems=()
    [[ "$rc" == 75 ]] || problems+=("exit $rc, not 75")
    [[ "$(sqlite3 "file:$SMALL/store.sqlite?mode=ro" "PRAGMA integrity_check")" == ok ]] || problems+=("integrity_check failed")
    [[ "$(python3 "$SCRIPTS/store-digest.py" "$SMALL/store.sqlite")" == "$ORIGINAL" ]] || problems+=("the store changed")
    leftovers=$(ls -A "$SMALL" | grep -v -E '^store\.sqlite(-wal|-shm)?$|^\.store\.sqlite\.moult-inplace$' || true)
    [[ -z "$leftovers" ]] || problems+=("left beside the store: $leftovers")
    message=$(grep -m1 'error' "$WORK/$case.log" || true)
    mount -o remount,size=$((SIZE * 8)) "$SMALL"
    rc2=0
    "$MOULT" migrate "$SMALL/store.sqlite" --model "$WIDENING" "${options[@]}" --quiet >>"$WORK/$case.log" 2>&1 || rc2=$?
    [[ "$rc2" == 0 ]] || problems+=("the run with room exited $rc2")
    [[ "$(python3 "$SCRIPTS/store-digest.py" "$SMALL/store.sqlite")" == "$REFERENCE" ]] || problems+=("the result differs from the reference")
    if [[ "$case" == backup ]]; then
        [[ "$(python3 "$SCRIPTS/store-digest.py" "$SMALL/store~.sqlite")" == "$ORIGINAL" ]] || problems+=("the backup is not the original")
    fi
    if [[ ${#problems[@]} == 0 ]]; then
        echo "  $case: full disk -> exit 75, store unchanged, nothing left; with room -> identical to the reference"
        echo "    message: $message"
    else
        FAILED=1
        echo "  $case: FAILED: ${problems[*]}"
        tail -n 3 "$WORK/$case.log" | sed 's/^/    /'
    fi
done
exit $FAILED
