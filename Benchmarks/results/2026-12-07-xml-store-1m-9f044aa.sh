#!/usr/bin/env bash
# XML store at 1,000,000 persons, branch xml-speed: SQLite -> XML, XML -> SQLite and inspect of People v2
# (no relationships) and v3 (1,000,000 persons and 800,139 addresses, a to-one and a to-many each), the
# release moult of this commit ($B) beside the release moult of a14e8cc, before it ($OLD), for v2.
set -uo pipefail
ROOT=${ROOT:-/work/wt-xml}; M=$ROOT/Datasets/People/People.xcdatamodeld
B=${B:-$ROOT/.build/release/moult}; OLD=${OLD:-/tmp/moult-baseline}; P=$ROOT/Benchmarks/scripts/peakmem
cd $ROOT/.build/xml-bench
echo "commit $(git -C $ROOT log -1 --format=%h) $(date -u); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "stores made by: moult-people generate people-vN-1m.sqlite --model-version N --objects 1000000 --seed 1 --model \$M (N = 2, 3)"
for v in 2 3; do
  rm -f p$v.xml back$v.sqlite; rm -rf .back${v}_SUPPORT
  echo "-- v$v SQLite -> XML"; $P -- $B convert people-v$v-1m.sqlite --to xml --output p$v.xml --model $M 2>&1 | tail -1
  echo "-- v$v XML -> SQLite"; $P -- $B convert p$v.xml --to sqlite --output back$v.sqlite --model $M 2>&1 | tail -1
  echo "-- v$v inspect XML"; $P -- $B inspect p$v.xml --model $M 2>&1 | tail -1
  echo "-- v$v same rows back: $(for t in ZPERSON ZADDRESS Z_PRIMARYKEY; do sqlite3 people-v$v-1m.sqlite "select count(*) from sqlite_master where name='$t'" | grep -q 1 && { a=$(sqlite3 people-v$v-1m.sqlite "select * from $t order by 1" | md5sum | cut -c1-8); b=$(sqlite3 back$v.sqlite "select * from $t order by 1" | md5sum | cut -c1-8); echo -n "$t $([ $a = $b ] && echo same || echo DIFFERENT) "; }; done)"
done
echo "-- v2 XML -> SQLite, a14e8cc"; rm -f old.sqlite; $P -- $OLD convert p2.xml --to sqlite --output old.sqlite --model $M 2>&1 | tail -1
echo "-- v2 inspect XML, a14e8cc"; $P -- $OLD inspect p2.xml --model $M 2>&1 | tail -1
