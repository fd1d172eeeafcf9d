#!/bin/bash
# Issue 13, create passes reordered (v2 -> v3's Person.address written at insert): CPU time of moult
# against its SQL floor and against itself with MOULT_KEEP_PASS_ORDER=1, paired (Benchmarks/scripts/pair.sh), at
# 1,000,000 persons (`moult-people generate /tmp/s3/v2-1m.sqlite --model-version 2 --objects 1000000
# --seed 1`), release build of this worktree.
cd /tmp/s3
R=/work/wt-speed2; M=$R/.build/release/moult; MD=$R/Datasets/People/People.xcdatamodeld; MP=$R/Datasets/People/Mappings; F=$R/Benchmarks/scripts/floor
pair() { # label env... (A = moult with env, B = the floor)
  echo "=== $1 vs floor v2->v3"; shift
  env "$@" "$(dirname "$0")/../scripts/pair.sh" -n 2 --warmup 0 --vs "sh -c 'rm -f /tmp/s3/gb.sqlite*; $M create /tmp/s3/gb.sqlite --model $MD --model-version v3 >/dev/null && sqlite3 -bail /tmp/s3/gb.sqlite -cmd \"ATTACH '\"'\"'/tmp/s3/v2-1m.sqlite'\"'\"' AS src\" < $F/v2-to-v3.sql'" -- sh -c "rm -rf /tmp/s3/ga*; exec $M migrate v2-1m.sqlite --model $MD --to v3 --mapping $MP/v2-to-v3.json --output /tmp/s3/ga.sqlite --chunk-size 10000" 2>&1 | grep -E "median"
}
pair reordered X=1
pair "kept order (MOULT_KEEP_PASS_ORDER=1)" MOULT_KEEP_PASS_ORDER=1
echo "=== reordered (A) vs kept order (B) v2->v3"
"$(dirname "$0")/../scripts/pair.sh" -n 3 --warmup 0 --vs "sh -c 'rm -rf /tmp/s3/gk*; MOULT_KEEP_PASS_ORDER=1 exec $M migrate v2-1m.sqlite --model $MD --to v3 --mapping $MP/v2-to-v3.json --output /tmp/s3/gk.sqlite --chunk-size 10000'" -- sh -c "rm -rf /tmp/s3/ga*; exec $M migrate v2-1m.sqlite --model $MD --to v3 --mapping $MP/v2-to-v3.json --output /tmp/s3/ga.sqlite --chunk-size 10000" 2>&1 | grep -E "median"
echo done
