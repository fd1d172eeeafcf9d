#!/usr/bin/env bash
# The store generator's memory: `moult generate` of N objects of the 20-entity model
# (Benchmarks/scripts/models/Twenty.xcdatamodeld: every attribute type, sub-entities, one-to-many chains,
# reflexive many-to-many, external storage), under peakmem. Prints the objects, the peak RssAnon and total
# RSS, the wall time and the store's size.
#
#     Benchmarks/scripts/generate-memory.sh [--objects N] [--seed S]     defaults: 1000000 objects, seed 1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OBJECTS=1000000 SEED=1
while [[ $# -gt 0 ]]; do
    case "$1" in
    --objects) OBJECTS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    *) die "unknown option $1" ;;
    esac
done
build_moult
make_work generate-memory
measure "$MOULT" generate "$WORK/twenty.sqlite" --model "$SCRIPTS/models/Twenty.xcdatamodeld" --objects "$OBJECTS" --seed "$SEED"
files=$(find "$WORK" -path '*_EXTERNAL_DATA/*' -type f | wc -l)
echo "objects $OBJECTS, peak RssAnon $ANON MiB, peak RSS $TOTAL MiB, wall $WALL s, store $(store_mib "$WORK/twenty.sqlite") MiB, $files external files"
echo "$(tail -n 1 "$WORK/last.out")"
