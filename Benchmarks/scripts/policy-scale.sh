#!/usr/bin/env bash
# The People v4 → v5 step with its policies written as an app writes them for Core Data
# (`Datasets/People/CoreData/`: `NSEntityMigrationPolicy` subclasses that find the companies and
# schools already made through `manager.userInfo`), built by `moult policies build`, side by side with
# the same step and the same mapping (`Mappings/v4-to-v5.json`) run by `moult-people`, whose policies
# are written with Moult's own protocol (`Datasets/People/Swift/UniquingPolicy.swift`).
#
#     Benchmarks/scripts/policy-scale.sh [SIZES...]      # default: 100000 1000000 (persons)
#
# Each run: --chunk-size 10000, measured by peakmem (peak RssAnon and total RSS, wall and CPU). The two
# destinations must hold the same rows (store-digest.py, without the metadata, which records the run);
# the script stops otherwise. Output: a table on stdout and
# Benchmarks/results/<date>-policy-scale.tsv (+ .txt with the commands and the commit).
# Environment: BENCH_WORK (default .build/bench-work/policy-scale; the generated package of the
# policy build is kept there, so a second run builds incrementally), MOULT_SKIP_BUILD=1, CHUNK_SIZE.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(100000 1000000)
for n in "${SIZES[@]}"; do [[ "$n" =~ ^[0-9]+$ ]] || die "not a size: $n"; done
CHUNK_SIZE=${CHUNK_SIZE:-10000}
WORK=${BENCH_WORK:-$ROOT/.build/bench-work/policy-scale}
mkdir -p "$WORK"
rm -rf "$WORK/runs" && mkdir -p "$WORK/runs"

build_moult
BUILT="$WORK/moult-coredata-people"
if [[ -z "${MOULT_SKIP_BUILD:-}" || ! -x "$BUILT" ]]; then
    echo "building $BUILT: moult policies build (release; it builds Moult again)" >&2
    "$MOULT" policies build "$ROOT/Datasets/People/CoreData/AdultToCompanyPolicy.swift" \
        "$ROOT/Datasets/People/CoreData/ChildToSchoolPolicy.swift" --module PeoplePolicies \
        --moult "$ROOT" --work "$WORK/package" --configuration release --output "$BUILT" >&2
fi

mkdir -p "$ROOT/Benchmarks/results"
RESULTS="$ROOT/Benchmarks/results/$(date -u +%F)-policy-scale.tsv"
echo "persons	tool	wall_s	cpu_s	peak_anon_mib	peak_total_mib	cpu_vs_native	wall_vs_native" >"$RESULTS"
{
    echo "# $(date -u '+%F %T') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -srm), $(git -C "$ROOT" rev-parse --short HEAD)"
    echo "# Benchmarks/scripts/policy-scale.sh ${SIZES[*]}  (CHUNK_SIZE=$CHUNK_SIZE)"
} >"$RESULTS.txt"

rows() { python3 "$SCRIPTS/store-digest.py" --ignore-uuid "$1" | grep -v '^metadata'; }
for n in "${SIZES[@]}"; do
    src="$WORK/runs/v4-$n.sqlite"
    echo "generate: moult-people generate --model-version 4 --objects $n --seed 1" >&2
    "$MOULT_PEOPLE" generate --model-version 4 --objects "$n" --seed 1 "$src" >/dev/null
    declare -A WALLS=() CPUS=()
    for tool in native coredata; do
        dest="$WORK/runs/v5-$n-$tool.sqlite"
        binary=$MOULT_PEOPLE
        [[ "$tool" == native ]] || binary=$BUILT
        command=("$binary" migrate "$src" --model "$MODEL" --to v5 --mapping "$MAPPINGS/v4-to-v5.json"
            --output "$dest" --chunk-size "$CHUNK_SIZE" --quiet)
        echo "run: ${command[*]}" >>"$RESULTS.txt"
        measure "${command[@]}"
        WALLS[$tool]=$WALL CPUS[$tool]=$CPU
        line="$n	$tool	$WALL	$CPU	$ANON	$TOTAL	$(ratio "$CPU" "${CPUS[native]}")	$(ratio "$WALL" "${WALLS[native]}")"
        echo "$line" >>"$RESULTS"
        echo "$line" | tr '\t' ' ' >&2
    done
    if ! diff -q <(rows "$WORK/runs/v5-$n-native.sqlite") <(rows "$WORK/runs/v5-$n-coredata.sqlite") >/dev/null; then
        die "$n persons: the Core Data policies' store differs from moult-people's"
    fi
    echo "$n persons: the same rows" | tee -a "$RESULTS.txt" >&2
    rm -f "$src" "$WORK"/runs/v5-"$n"-*.sqlite*
done
print_table "$RESULTS"
