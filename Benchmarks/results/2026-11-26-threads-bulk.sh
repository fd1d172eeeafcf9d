#!/bin/bash
# Two threads against one on the bulk path (People v2 -> v3 copied by INSERT ... SELECT per chunk), and
# two threads against the SQL floor, 1,000,000 persons, chunks of 10,000, LMDB associations.
set -e
cd /tmp/bench
R=/work/main/.build/release/moult; M=/work/main/Datasets/People/People.xcdatamodeld; MP=/work/main/Datasets/People/Mappings/v2-to-v3.json
FLOOR=/work/main/Benchmarks/scripts/floor/v2-to-v3.sql
P=/work/main/Benchmarks/scripts/pair.sh
[[ -f p2-1m.sqlite ]] || /work/main/.build/release/moult-people generate --model-version 2 --objects 1000000 --seed 1 p2-1m.sqlite >/dev/null
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "=== bulk, 1,000,000 persons: A = --threads 2, B = --threads 1"
$P -n 3 --vs "sh -c 'rm -rf /tmp/bench/b1.sqlite*; exec $R migrate p2-1m.sqlite --model $M --to v3 --mapping $MP --output /tmp/bench/b1.sqlite --association lmdb --threads 1 --quiet'" -- sh -c "rm -rf /tmp/bench/b2.sqlite*; exec $R migrate p2-1m.sqlite --model $M --to v3 --mapping $MP --output /tmp/bench/b2.sqlite --association lmdb --threads 2 --quiet"
cmp b1.sqlite b2.sqlite && echo "the same file"
echo "=== bulk, 1,000,000 persons: A = --threads 2, B = the SQL floor (a new v3 store by moult create, then the floor's SQL)"
$P -n 3 --vs "sh -c 'rm -rf /tmp/bench/f.sqlite*; $R create /tmp/bench/f.sqlite --model $M --model-version v3 >/dev/null && sqlite3 -bail /tmp/bench/f.sqlite -cmd \"ATTACH '\''/tmp/bench/p2-1m.sqlite'\'' AS src\" < $FLOOR'" -- sh -c "rm -rf /tmp/bench/b2.sqlite*; exec $R migrate p2-1m.sqlite --model $M --to v3 --mapping $MP --output /tmp/bench/b2.sqlite --association lmdb --threads 2 --quiet"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
