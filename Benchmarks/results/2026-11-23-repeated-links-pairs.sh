#!/bin/bash
# Issue 13, repeated links left out: CPU time of moult against its SQL floor, paired (Benchmarks/scripts/pair.sh), at
# 1,000,000 persons (stores made by `moult-people generate --model-version N --objects 1000000 --seed 1`
# in /tmp/s2), release build of this worktree. "keep" = MOULT_KEEP_REPEATED_LINKS=1 (both sides written).
cd /tmp/s2
R=/work/wt-speed2; M=$R/.build/release/moult; MD=$R/Datasets/People/People.xcdatamodeld; MP=$R/Datasets/People/Mappings; F=$R/Benchmarks/scripts/floor
pair() { # from to mapping label env...
  local from=$1 to=$2 mapping=$3 label=$4; shift 4
  echo "=== $label v$from->v$to"
  env "$@" "$(dirname "$0")/../scripts/pair.sh" -n 2 --warmup 0 --vs "sh -c 'rm -f /tmp/s2/fb.sqlite*; $M create /tmp/s2/fb.sqlite --model $MD --model-version v$to >/dev/null && sqlite3 -bail /tmp/s2/fb.sqlite -cmd \"ATTACH '\"'\"'/tmp/s2/v$from-1m.sqlite'\"'\"' AS src\" < $F/v$from-to-v$to.sql'" -- sh -c "rm -rf /tmp/s2/fa*; exec $M migrate v$from-1m.sqlite --model $MD --to v$to --mapping $MP/$mapping.json --output /tmp/s2/fa.sqlite --chunk-size 10000" 2>&1 | grep -E "median"
}
for step in "2 3 v2-to-v3" "3 4 v3-to-v4" "4 5 v4-to-v5-builtin"; do
  pair $step now X=1
  pair $step keep MOULT_KEEP_REPEATED_LINKS=1
done
echo done
