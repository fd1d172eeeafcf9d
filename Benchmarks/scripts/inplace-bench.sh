#!/usr/bin/env bash
# In place vs streaming, side by side in one run, with peak memory (tools/peakmem):
#
#     Benchmarks/scripts/inplace-bench.sh [--sizes "1000000 10000000"] [--readings N] [--rounds R]
#
# For each size N (persons):
#   - People v1 -> v2 in place with --no-backup (two ALTER TABLE … ADD COLUMN: schema only)
#   - the same with the NAME~.EXT backup (the copy of the store beside it)
#   - the streaming copy (`--output`), as before
# Then a step that needs a table rebuild: Widening v1 -> v2 (Integer 32 -> Double) on --readings rows
# (default 1,000,000), in place --no-backup, against the same rebuild written by hand in the sqlite3
# shell (CREATE, INSERT … SELECT, DROP, RENAME, metadata left alone: the floor), R rounds (default 3)
# alternating the two. `--sizes ""` runs the rebuild alone.
# Prints a table; writes Benchmarks/results/<date>-inplace.tsv.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZES="1000000" READINGS=1000000 ROUNDS=3
while [[ $# -gt 0 ]]; do
    case "$1" in
    --sizes) SIZES=$2; shift 2 ;;
    --readings) READINGS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
WIDENING="$SCRIPTS/models/Widening.xcdatamodeld"
build_moult
make_work inplace-bench
TSV="$ROOT/Benchmarks/results/$(date -u +%F)-inplace.tsv"
printf 'case\tobjects\twall_s\tmigration_s\tpeak_rss_anon_mib\tpeak_rss_total_mib\tstore_mib\n' >"$TSV"

# The process's wall time (peakmem: start-up, model reading, metadata included) and the migration's own
# time as `--json` reports it ("seconds").
row() { # CASE OBJECTS STORE
    local own
    own=$(grep -o '"seconds":[0-9.]*' "$WORK/last.out" | tail -n 1 | cut -d: -f2 || true)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$WALL" "${own:--}" "$ANON" "$TOTAL" "$(store_mib "$3")" | tee -a "$TSV"
    OWN=${own:-$WALL}
}

for n in $SIZES; do
    src="$WORK/people-v1-$n.sqlite"
    echo "generating $n persons (v1)" >&2
    "$MOULT_PEOPLE" generate --model-version 1 --objects "$n" --seed 1 "$src" >/dev/null
    sqlite3 "$src" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
    sync

    # Each copy is synced first, so that no run pays for flushing the copy made just before it.
    cp "$src" "$WORK/a.sqlite"; sync
    measure "$MOULT" migrate "$WORK/a.sqlite" --model "$MODEL" --to v2 --no-backup --json
    row "people v1->v2 in place --no-backup" "$n" "$WORK/a.sqlite"
    inplace=$WALL inplace_own=$OWN
    rm -f "$WORK/a.sqlite"*

    cp "$src" "$WORK/b.sqlite"; sync
    measure "$MOULT" migrate "$WORK/b.sqlite" --model "$MODEL" --to v2 --json
    row "people v1->v2 in place, backup kept" "$n" "$WORK/b.sqlite"
    rm -f "$WORK/b.sqlite"* "$WORK/b~.sqlite"

    measure "$MOULT" migrate "$src" --model "$MODEL" --to v2 --output "$WORK/c.sqlite" --json
    row "people v1->v2 streaming copy" "$n" "$WORK/c.sqlite"
    echo "  $n persons: streaming / in place = $(ratio "$WALL" "$inplace") (process wall), $(ratio "$OWN" "$inplace_own") (the migrations' own times)" >&2
    rm -f "$WORK/c.sqlite"* "$src"*
done

# The rebuild, against the same rebuild by hand.
src="$WORK/widening-v1.sqlite"
"$MOULT" create "$src" --model "$WIDENING/v1.xcdatamodel" >/dev/null
sqlite3 "$src" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $READINGS)
    INSERT INTO ZREADING (Z_PK, Z_ENT, Z_OPT, ZSENSOR, ZSEQUENCE, ZVALUE)
    SELECT i, 1, 1, 'sensor-' || (i % 97), i, (i * 7919) % 100003 - 50000 FROM n;
    UPDATE Z_PRIMARYKEY SET Z_MAX = $READINGS WHERE Z_ENT = 1; PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
for round in $(seq 1 "$ROUNDS"); do
    cp "$src" "$WORK/w.sqlite"; sync
    measure "$MOULT" migrate "$WORK/w.sqlite" --model "$WIDENING" --no-backup --json
    row "widening rebuild in place --no-backup (round $round)" "$READINGS" "$WORK/w.sqlite"
    moult=$WALL
    rm -f "$WORK/w.sqlite"*
    cp "$src" "$WORK/h.sqlite"; sync
    measure sqlite3 "$WORK/h.sqlite" "PRAGMA journal_mode = WAL" "BEGIN IMMEDIATE" \
        "CREATE TABLE \"moult_hand\" ( \"Z_PK\" INTEGER PRIMARY KEY, \"Z_ENT\" INTEGER, \"Z_OPT\" INTEGER, \"ZSEQUENCE\" INTEGER, \"ZVALUE\" FLOAT, \"ZSENSOR\" VARCHAR )" \
        "INSERT INTO \"moult_hand\" (\"Z_PK\", \"Z_ENT\", \"Z_OPT\", \"ZSEQUENCE\", \"ZVALUE\", \"ZSENSOR\") SELECT \"Z_PK\", \"Z_ENT\", \"Z_OPT\", \"ZSEQUENCE\", \"ZVALUE\", \"ZSENSOR\" FROM \"ZREADING\"" \
        "DROP TABLE \"ZREADING\"" "ALTER TABLE \"moult_hand\" RENAME TO \"ZREADING\"" "COMMIT"
    row "widening rebuild by hand in sqlite3 (round $round)" "$READINGS" "$WORK/h.sqlite"
    echo "  rebuild: moult / by hand = $(ratio "$moult" "$WALL")" >&2
    rm -f "$WORK/h.sqlite"*
done
echo "results: ${TSV#"$ROOT"/}" >&2
