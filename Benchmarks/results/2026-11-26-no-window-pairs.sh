#!/usr/bin/env bash
# The pairs quoted in BENCHMARKS.md "No window": release builds of ce7a6ba (/work/main) and 551feaf (/tmp/oldwt).
set -e
P=/work/main/Benchmarks/scripts/pair.sh
echo "== chain v1 -> v2 -> v3 at 1M, two threads: A this build, B 551feaf"; cat /tmp/ip/chainnew.sh /tmp/ip/chainold.sh
$P -n 5 --vs 'bash /tmp/ip/chainold.sh' -- bash /tmp/ip/chainnew.sh | tail -3
echo "== the same, --threads 1"
$P -n 5 --vs 'bash /tmp/ip/chain1old.sh' -- bash /tmp/ip/chain1new.sh | tail -3
echo "== v3 -> v4 at 1M: A this build, B the SQL floor"; cat /tmp/ip/moult34.sh /tmp/ip/floor34.sh
$P -n 5 --vs 'bash /tmp/ip/floor34.sh' -- bash /tmp/ip/moult34.sh | tail -3
echo "== v4 -> v5 at 1M: A this build, B the SQL floor"; cat /tmp/ip/moult45.sh /tmp/ip/floor45.sh
$P -n 5 --vs 'bash /tmp/ip/floor45.sh' -- bash /tmp/ip/moult45.sh | tail -3
