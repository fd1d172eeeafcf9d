#!/bin/bash
# Issue 13, repeated links left out and to-ones at insert: CPU time of moult against its SQL floor, paired (Benchmarks/scripts/pair.sh), at
# 1,000,000 persons (stores made by `moult-people generate --model-version N --objects 1000000 --seed 1`
# in /tmp/s2), release build of this worktree. "stage2" = MOULT_TO_ONES_IN_STAGE2=1 (to-ones written by stage 2, repeated links left out).
cd /tmp/s2
R=/work/wt-speed2; M=$R/.build/release/moult; MD=$R/Datasets/People/People.xcdatamodeld; MP=$R/Datasets/People/Mappings; F=$R/Benchmarks/scripts/floor
pair() { # from to mapping label env...
  local from=$1 to=$2 mapping=$3 label=$4; shift 4
  echo "=== $label v$from->v$to"
  env "$@" "$(dirname "$0")/../scripts/pair.sh" -n 2 --warmup 0 --vs "sh -c 'rm -f /tmp/s2/gb.sqlite*; $M create /tmp/s2/gb.sqlite --model $MD --model-version v$to >/dev/null && sqlite3 -bail /tmp/s2/gb.sqlite -cmd \"ATTACH '\"'\"'/tmp/s2/v$from-1m.sqlite'\"'\"' AS src\" < $F/v$from-to-v$to.sql'" -- sh -c "rm -rf /tmp/s2/ga*; exec $M migrate v$from-1m.sqlite --model $MD --to v$to --mapping $MP/$mapping.json --output /tmp/s2/ga.sqlite --chunk-size 10000" 2>&1 | grep -E "median"
}
pair 2 3 v2-to-v3 now X=1
for step in "3 4 v3-to-v4" "4 5 v4-to-v5-builtin"; do
  pair $step now X=1
  pair $step stage2 MOULT_TO_ONES_IN_STAGE2=1
done
echo done
