#!/bin/sh
# Store read/write throughput and peak anonymous memory, Moult beside the sqlite3 shell, in one run.
#   Benchmarks/scripts/store-bench.sh [ROWS] [debug|release]
# Moult: writes ROWS objects in batches of 10,000 through StoreWriter, then reads them through an
# ObjectCursor (batches of 10,000). sqlite3: the same scan (SELECT over every column) and the same
# INSERT … SELECT into a fresh table of the same schema. Each under peakmem (RssAnon = heap).
set -eu
ROWS=${1:-1000000}
CONFIG=${2:-debug}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PEAKMEM=${PEAKMEM:-/work/shared/tools/peakmem}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"
swift build --build-tests -c "$CONFIG" >/dev/null
run_moult() {
    MOULT_BENCH=1 MOULT_BENCH_PHASE=$1 MOULT_BENCH_ROWS=$ROWS MOULT_BENCH_STORE="$WORK/moult.sqlite" \
        "$PEAKMEM" -- swift test -c "$CONFIG" --skip-build --filter storeBenchmark 2>&1 | grep -E "MOULT_BENCH |peak|wall" || true
}
echo "== Moult write ($ROWS rows, $CONFIG)"; run_moult write
echo "== Moult read"; run_moult read
echo "== sqlite3 scan"
"$PEAKMEM" -- sh -c "sqlite3 '$WORK/moult.sqlite' 'SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZAMOUNT, ZCREATED FROM ZITEM' >/dev/null" 2>&1 | grep -E "peak|wall" || true
echo "== sqlite3 INSERT … SELECT"
"$PEAKMEM" -- sqlite3 "$WORK/moult.sqlite" "CREATE TABLE ZCOPY (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAMOUNT INTEGER, ZCREATED TIMESTAMP, ZNAME VARCHAR); INSERT INTO ZCOPY SELECT Z_PK, Z_ENT, Z_OPT, ZAMOUNT, ZCREATED, ZNAME FROM ZITEM;" 2>&1 | grep -E "peak|wall" || true
