#!/usr/bin/env bash
# XML at 1,000,000 persons: convert both ways, inspect.
set -uo pipefail
ROOT=/work/wt-xml; cd $ROOT
M=$ROOT/Datasets/People/People.xcdatamodeld
B=$ROOT/.build/release/moult; P=$ROOT/Benchmarks/scripts/peakmem
W=$ROOT/.build/xml-bench; rm -rf $W; mkdir -p $W; cd $W
echo "commit $(git -C $ROOT log -1 --format=%h) $(date -u)"
$B-people generate people-v2-1m.sqlite --model-version 2 --objects 1000000 --seed 1 --model $M | tail -1
for i in 1; do
rm -f p.xml back.sqlite
echo "== run $i"
echo "-- SQLite -> XML"; $P -- $B convert people-v2-1m.sqlite --to xml --output p.xml --model $M 2>&1 | tail -3
ls -la p.xml | awk '{print $5}'
echo "-- XML -> SQLite"; $P -- $B convert p.xml --to sqlite --output back.sqlite --model $M 2>&1 | tail -3
echo "-- inspect XML"; $P -- $B inspect p.xml --model $M 2>&1 | tail -3
done
