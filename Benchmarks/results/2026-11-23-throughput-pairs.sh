#!/bin/bash
cd /tmp/speed
M=/work/wt-speed/.build/release/moult; MD=/work/wt-speed/Datasets/People/People.xcdatamodeld; MP=/work/wt-speed/Datasets/People/Mappings; F=/work/wt-speed/Benchmarks/scripts/floor
pair() { # from to mapping label env
  local from=$1 to=$2 mapping=$3 label=$4; shift 4
  echo "=== $label v$from->v$to"
  env "$@" "$(dirname "$0")/../scripts/pair.sh" -n 2 --warmup 0 --vs "sh -c 'rm -f /tmp/speed/fb.sqlite*; $M create /tmp/speed/fb.sqlite --model $MD --model-version v$to >/dev/null && sqlite3 -bail /tmp/speed/fb.sqlite -cmd \"ATTACH '\"'\"'/tmp/speed/v$from-1m.sqlite'\"'\"' AS src\" < $F/v$from-to-v$to.sql'" -- sh -c "rm -rf /tmp/speed/fa*; exec $M migrate v$from-1m.sqlite --model $MD --to v$to --mapping $MP/$mapping.json --output /tmp/speed/fa.sqlite --chunk-size 10000" 2>&1 | grep -E "median"
}
pair 2 3 v2-to-v3 per-object MOULT_PER_OBJECT_STAGE2=1
pair 3 4 v3-to-v4 set X=1
pair 3 4 v3-to-v4 per-object MOULT_PER_OBJECT_STAGE2=1
pair 4 5 v4-to-v5-builtin set X=1
pair 4 5 v4-to-v5-builtin per-object MOULT_PER_OBJECT_STAGE2=1
echo done
