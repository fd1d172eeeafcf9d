#!/usr/bin/env bash
set -uo pipefail
ROOT=/work/wt-xml; M=$ROOT/Datasets/People/People.xcdatamodeld
B=$ROOT/.build/release/moult; P=$ROOT/Benchmarks/scripts/peakmem
cd $ROOT/.build/xml-bench; rm -f p.xml back.sqlite
echo "commit $(git -C $ROOT log -1 --format=%h) $(date -u); people-v2-1m.sqlite as generated before (moult-people generate --model-version 2 --objects 1000000 --seed 1)"
echo "-- SQLite -> XML"; $P -- $B convert people-v2-1m.sqlite --to xml --output p.xml --model $M 2>&1 | tail -2
echo "-- XML -> SQLite"; $P -- $B convert p.xml --to sqlite --output back.sqlite --model $M 2>&1 | tail -2
echo "-- inspect XML"; $P -- $B inspect p.xml --model $M 2>&1 | tail -1
