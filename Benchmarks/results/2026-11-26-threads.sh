#!/bin/bash
# Two threads against one, on the per-object path (SQLite source, --no-bulk-sql) and from an XML source
cd /tmp/bench
R=/work/wt-harness/.build/release/moult; M=/work/main/Datasets/People/People.xcdatamodeld; MP=/work/main/Datasets/People/Mappings/v2-to-v3.json
P=/work/main/Benchmarks/scripts/pair.sh
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "=== SQLite source, per object, 300,000 persons: A = --threads 2, B = --threads 1"
$P -n 3 --vs "sh -c 'rm -rf /tmp/bench/t1.sqlite*; exec $R migrate p2-300k.sqlite --model $M --to v3 --mapping $MP --output /tmp/bench/t1.sqlite --no-bulk-sql --threads 1 --quiet'" -- sh -c "rm -rf /tmp/bench/t2.sqlite*; exec $R migrate p2-300k.sqlite --model $M --to v3 --mapping $MP --output /tmp/bench/t2.sqlite --no-bulk-sql --threads 2 --quiet"
cmp t1.sqlite t2.sqlite && echo "the same file"
echo "=== XML source, 300,000 persons: A = --threads 2, B = --threads 1"
$P -n 3 --vs "sh -c 'rm -rf /tmp/bench/x1.sqlite*; exec $R migrate p2-300k.xml --model $M --to v3 --mapping $MP --output /tmp/bench/x1.sqlite --threads 1 --quiet'" -- sh -c "rm -rf /tmp/bench/x2.sqlite*; exec $R migrate p2-300k.xml --model $M --to v3 --mapping $MP --output /tmp/bench/x2.sqlite --threads 2 --quiet"
cmp x1.sqlite x2.sqlite && echo "the same file"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
