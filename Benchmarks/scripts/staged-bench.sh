#!/usr/bin/env bash
# Apple's optional -> non-optional example as a staged migration, against the same work written by
# hand, with peak memory (tools/peakmem):
#
#     Benchmarks/scripts/staged-bench.sh [--objects N] [--chunks "1000 10000"] [--rounds R]
#
# On N attachments (default 1,000,000; Tests/StagedModels/Attachments.xcdatamodeld v1, one in three
# without a date):
#   - staged: `moult migrate STORE --stages fill.json --no-backup` (willMigrate fills the nil dates with
#     now(), chunk by chunk with the checkpoint; then the step v1 -> v2 in place), for each chunk size
#   - by hand: one `UPDATE ZATTACHMENT SET ZDATECREATED = … WHERE ZDATECREATED IS NULL` in the sqlite3
#     shell, then `moult migrate STORE --to v2 --no-backup` (the lightweight step in place)
# R rounds (default 3) alternating the cases. Each result is checked: at v2, no nil date, the other
# values untouched. Prints a table; writes Benchmarks/results/<date>-staged.tsv.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OBJECTS=1000000 CHUNKS="1000 10000" ROUNDS=3
while [[ $# -gt 0 ]]; do
    case "$1" in
    --objects) OBJECTS=$2; shift 2 ;;
    --chunks) CHUNKS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
ATTACHMENTS="$ROOT/Tests/StagedModels/Attachments.xcdatamodeld"
build_moult
make_work staged-bench
mkdir -p "$ROOT/Benchmarks/results"
TSV="$ROOT/Benchmarks/results/$(date -u +%F)-staged.tsv"
printf 'case\tround\tobjects\twall_s\tpeak_rss_anon_mib\tpeak_rss_total_mib\n' >"$TSV"

"$MOULT" create "$WORK/original.sqlite" --model "$ATTACHMENTS/v1.xcdatamodel" >/dev/null
sqlite3 "$WORK/original.sqlite" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $OBJECTS)
    INSERT INTO ZATTACHMENT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSIZE, ZDATECREATED)
    SELECT i, 1, 1, 'file-' || i, i % 1000, CASE WHEN i % 3 = 1 THEN NULL ELSE i * 60.0 END FROM n;
    UPDATE Z_PRIMARYKEY SET Z_MAX = $OBJECTS WHERE Z_ENT = 1; PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
NILS=$(sqlite3 "$WORK/original.sqlite" "SELECT count(*) FROM ZATTACHMENT WHERE ZDATECREATED IS NULL")
cat >"$WORK/fill.json" <<'EOF'
{ "stages": [ { "custom": { "from": "v1", "to": "v2",
    "willMigrate": [ { "update": "Attachment", "where": "dateCreated == nil", "set": { "dateCreated": "now()" } } ] } } ] }
EOF
echo "staged-bench: $OBJECTS attachments, $NILS without a date ($(store_mib "$WORK/original.sqlite") MiB)"

# check STORE: at v2, no nil date, every other value as in the original.
check() {
    local version nils changed
    version=$("$MOULT" inspect "$1" --model "$ATTACHMENTS" --json | python3 -c 'import json, sys; print(json.load(sys.stdin).get("matchingVersion"))')
    nils=$(sqlite3 "$1" "SELECT count(*) FROM ZATTACHMENT WHERE ZDATECREATED IS NULL")
    changed=$(sqlite3 "file:$1?mode=ro" "ATTACH 'file:$WORK/original.sqlite?mode=ro' AS o" \
        "SELECT count(*) FROM ZATTACHMENT a JOIN o.ZATTACHMENT b USING (Z_PK)
         WHERE a.ZNAME IS NOT b.ZNAME OR a.ZSIZE IS NOT b.ZSIZE OR (b.ZDATECREATED IS NOT NULL AND a.ZDATECREATED IS NOT b.ZDATECREATED)")
    [[ "$version" == v2 && "$nils" == 0 && "$changed" == 0 ]] || die "$1: version $version, $nils nil dates, $changed values changed"
}

for round in $(seq 1 "$ROUNDS"); do
    for chunk in $CHUNKS; do
        cp "$WORK/original.sqlite" "$WORK/staged.sqlite"
        measure "$MOULT" migrate "$WORK/staged.sqlite" --model "$ATTACHMENTS" --stages "$WORK/fill.json" --chunk-size "$chunk" --no-backup --quiet
        check "$WORK/staged.sqlite"
        printf 'staged, chunks of %s\t%s\t%s\t%s\t%s\t%s\n' "$chunk" "$round" "$OBJECTS" "$WALL" "$ANON" "$TOTAL" | tee -a "$TSV"
        rm -f "$WORK/staged.sqlite"*
    done
    cp "$WORK/original.sqlite" "$WORK/hand.sqlite"
    now=$(python3 -c "import time; print(time.time() - 978307200)")
    measure sqlite3 "$WORK/hand.sqlite" "UPDATE ZATTACHMENT SET ZDATECREATED = $now WHERE ZDATECREATED IS NULL"
    update_wall=$WALL update_anon=$ANON update_total=$TOTAL
    measure "$MOULT" migrate "$WORK/hand.sqlite" --model "$ATTACHMENTS" --to v2 --no-backup --quiet
    check "$WORK/hand.sqlite"
    total=$(python3 -c "print(round($update_wall + $WALL, 3))")
    anon=$(python3 -c "print(max($update_anon, $ANON))")
    rss=$(python3 -c "print(max($update_total, $TOTAL))")
    printf 'by hand: SQL UPDATE (%ss) + lightweight step (%ss)\t%s\t%s\t%s\t%s\t%s\n' "$update_wall" "$WALL" "$round" "$OBJECTS" "$total" "$anon" "$rss" | tee -a "$TSV"
    rm -f "$WORK/hand.sqlite"*
done
echo
print_table "$TSV"
