#!/usr/bin/env bash
# MoultStore's cursor read and batched write against the sqlite3 shell, side by side in one run.
#
#     Benchmarks/scripts/store-floor.sh [SIZES...]      # default: 100000 1000000 (persons)
#
# For each size N: a People v2 store of N persons (`moult-people generate --model-version 2 --seed 1`), then
#   read   moult-bench store-read  (every object through ObjectCursor, batches of 10,000)
#          vs sqlite3 -readonly: SELECT * FROM ZPERSON, printed to /dev/null (the shell's own scan)
#   write  moult-bench store-write (SQLiteStore.create + StoreWriter.insert, 10,000 per transaction,
#          same primary keys) vs `moult create` + sqlite3: INSERT INTO … SELECT * FROM the attached source
# measured by peakmem (peak RssAnon and total RSS, wall time). moult-bench is the Benchmarks package's
# executable (Benchmarks/Sources/MoultBench), built in release.
#
# Output: a table on stdout and Benchmarks/results/<date>-store-floor.tsv with the columns
#   operation size tool rows rows_per_s wall_s peak_anon_mib peak_total_mib vs_floor
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(100000 1000000)
for n in "${SIZES[@]}"; do [[ "$n" =~ ^[0-9]+$ ]] || die "not a size: $n"; done

build_moult
if [[ -z "${MOULT_SKIP_BUILD:-}" ]]; then
    echo "building: swift build -c release --package-path Benchmarks --product moult-bench" >&2
    swift build -c release --package-path "$ROOT/Benchmarks" --product moult-bench >&2
fi
BENCH="$(swift build -c release --package-path "$ROOT/Benchmarks" --show-bin-path)/moult-bench"
[[ -x "$BENCH" ]] || die "moult-bench was not built: $BENCH"

make_work store-floor
mkdir -p "$ROOT/Benchmarks/results"
RESULTS="$ROOT/Benchmarks/results/$(date -u +%F)-store-floor.tsv"
SOURCE_NOTE="source made by moult-people generate --model-version 2 --seed 1"
echo "operation	size	tool	rows	rows_per_s	wall_s	peak_anon_mib	peak_total_mib	vs_floor" >"$RESULTS"

# The floor of the batched write: copy every entity table and Z_MAX with INSERT … SELECT.
COPY_SQL='BEGIN;
INSERT INTO main.ZPERSON SELECT * FROM src.ZPERSON;
UPDATE main.Z_PRIMARYKEY SET Z_MAX = (SELECT s.Z_MAX FROM src.Z_PRIMARYKEY AS s WHERE s.Z_ENT = Z_PRIMARYKEY.Z_ENT);
COMMIT;'

row() {
    echo "$1" >>"$RESULTS"
    echo "$1" | tr '\t' ' ' >&2
}

for n in "${SIZES[@]}"; do
    src="$WORK/people-v2-$n.sqlite"
    echo "generate: moult-people generate --model-version 2 --objects $n --seed 1" >&2
    if ! "$MOULT_PEOPLE" generate --model-version 2 --objects "$n" --seed 1 "$src" >/dev/null 2>"$WORK/generate.err" \
        || [[ ! -s "$src" ]]; then
        # Before `moult generate` exists: a v2 store made by `moult create`, filled by sqlite3 with
        # names, ages 0…99 and an address for 4 persons in 5 (the same shape as the generator's data).
        echo "generate: no store made ($(head -n 1 "$WORK/generate.err")); filling a 'moult create' store with sqlite3 instead" >&2
        SOURCE_NOTE="source made by moult create + sqlite3 (moult-people generate unavailable)"
        rm -f "$src"*
        "$MOULT" create "$src" --model "$MODEL" --model-version v2 >/dev/null
        sqlite3 -bail "$src" "BEGIN;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $n)
            INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZAGE, ZNAME, ZSTATE, ZSTREET)
                SELECT i, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Person'), 1, (i * 7919) % 100, 'Person ' || i,
                       CASE WHEN i % 5 THEN substr('CANYTXWAOR', 1 + 2 * (i % 5), 2) END,
                       CASE WHEN i % 5 THEN i || ' Main Street' END
                FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = $n WHERE Z_NAME = 'Person';
            COMMIT;"
    fi
    rows=$(sqlite3 "$src" "SELECT count(*) FROM ZPERSON")
    [[ "$rows" == "$(count_objects "$src")" ]] || die "the v2 store holds more than persons: update COPY_SQL"
    sha=$(sha256sum "$src" | cut -d' ' -f1)

    # Read.
    measure sqlite3 -readonly "$src" ".output /dev/null" "SELECT * FROM ZPERSON;"
    floor=$WALL
    row "read	$n	sqlite3	$rows	$(rate "$rows" "$WALL")	$WALL	$ANON	$TOTAL	1.00"
    measure "$BENCH" store-read "$src" --model "$MODEL" --batch-size 10000
    grep -q "rows=$rows " "$WORK/last.out" || die "moult-bench read $(cat "$WORK/last.out"), expected $rows rows"
    row "read	$n	moult-store	$rows	$(rate "$rows" "$WALL")	$WALL	$ANON	$TOTAL	$(ratio "$WALL" "$floor")"

    # Write.
    dest="$WORK/copy-sql-$n.sqlite"
    rm -f "$dest"*
    measure bash -c 'set -e; "$1" create "$2" --model "$3" --version v2 >/dev/null; sqlite3 -bail "$2" -cmd "ATTACH '"'"'$4'"'"' AS src" "$5"' \
        floor "$MOULT" "$dest" "$MODEL" "$src" "$COPY_SQL"
    floor=$WALL
    row "write	$n	sqlite3	$rows	$(rate "$rows" "$WALL")	$WALL	$ANON	$TOTAL	1.00"
    copy="$WORK/copy-moult-$n.sqlite"
    rm -f "$copy"*
    measure "$BENCH" store-write "$src" "$copy" --model "$MODEL" --batch-size 10000
    row "write	$n	moult-store	$rows	$(rate "$rows" "$WALL")	$WALL	$ANON	$TOTAL	$(ratio "$WALL" "$floor")"
    same=$(same_entities "$copy" "$dest")
    [[ "$same" == same ]] || die "moult-bench's copy differs from sqlite3's: $same"

    [[ "$(sha256sum "$src" | cut -d' ' -f1)" == "$sha" ]] || die "the source changed: $src"
    rm -f "$src"* "$dest"* "$copy"*
done

echo "# $(date -u '+%F %T') UTC, $(nproc) cores, $(git -C "$ROOT" rev-parse --short HEAD); $SOURCE_NOTE" >"$RESULTS.txt"
echo
echo "Results: ${RESULTS#"$ROOT"/} ($SOURCE_NOTE)"
print_table "$RESULTS"
