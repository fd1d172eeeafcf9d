#!/usr/bin/env bash
# Two runs started together on one destination (and on one store in place): one finishes (exit 0), the
# other gets busy (73) at once, and the result is identical to a single run's, with nothing stray beside it.
#
#     Benchmarks/scripts/lock-race.sh [--trials N] [--objects N] [--seed S]
#         defaults: 50 trials of each mode, 20000 persons, seed 1
#
# For each trial the second run starts after a delay drawn (seeded) between 0 and 600 ms, so some start
# while the first is making its plan and others while it copies chunks. A second run that starts after the
# first has finished gets 74 ("output exists") for --output, or 0 with nothing to do in place (the store is
# current): both are counted, as "after". Any other pair of exits, a destination unlike the reference, or a
# file left beside it fails the script.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TRIALS=50 OBJECTS=20000 SEED=1
while [[ $# -gt 0 ]]; do
    case "$1" in
    --trials) TRIALS=$2; shift 2 ;;
    --objects) OBJECTS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    *) die "unknown option $1" ;;
    esac
done
build_moult
make_work lock-race
"$MOULT_PEOPLE" generate "$WORK/src.sqlite" --model-version 2 --objects "$OBJECTS" --model "$MODEL" >/dev/null
ARGS=(--model "$MODEL" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" --chunk-size 1000 --quiet)
"$MOULT" migrate "$WORK/src.sqlite" "${ARGS[@]}" --output "$WORK/ref.sqlite"
REF=$(python3 "$SCRIPTS/store-digest.py" "$WORK/ref.sqlite")
cp "$WORK/src.sqlite" "$WORK/ref-inplace.sqlite"
"$MOULT" migrate "$WORK/ref-inplace.sqlite" "${ARGS[@]}" --no-backup
REF_INPLACE=$(python3 "$SCRIPTS/store-digest.py" "$WORK/ref-inplace.sqlite")
RANDOM=$SEED

declare -A SEEN
failures=0
for mode in output inplace; do
    for trial in $(seq 1 "$TRIALS"); do
        T="$WORK/t"; rm -rf "$T"; mkdir "$T"
        delay=$(printf "0.%03d" $((RANDOM % 600)))
        if [[ $mode == output ]]; then
            target="$T/d.sqlite"; run=("$MOULT" migrate "$WORK/src.sqlite" "${ARGS[@]}" --output "$target")
        else
            target="$T/s.sqlite"; cp "$WORK/src.sqlite" "$target"; run=("$MOULT" migrate "$target" "${ARGS[@]}" --no-backup)
        fi
        set +e
        "${run[@]}" >/dev/null 2>"$T.e1" & p1=$!
        sleep "$delay"
        "${run[@]}" >/dev/null 2>"$T.e2" & p2=$!
        wait $p1; r1=$?; wait $p2; r2=$?
        set -e
        case "$mode:$r1:$r2" in
        *:0:73 | *:73:0) kind=busy ;;
        output:0:74) kind=after ;;
        inplace:0:0) kind=after ;;
        *) kind="unexpected($r1,$r2)" ;;
        esac
        if [[ $mode == output ]]; then ref=$REF; else ref=$REF_INPLACE; fi
        digest=$(python3 "$SCRIPTS/store-digest.py" "$target" 2>/dev/null || echo none)
        left=$(ls -A "$T" | tr '\n' ' ')
        want=$([[ $mode == output ]] && echo "d.sqlite " || echo "s.sqlite ")
        if [[ $kind == unexpected* || $digest != "$ref" || $left != "$want" ]]; then
            failures=$((failures + 1))
            echo "FAIL $mode trial $trial (delay $delay): exits $r1 $r2, left: $left$([[ $digest != "$ref" ]] && echo ', destination differs')"
            head -2 "$T.e1" "$T.e2"
        fi
        SEEN[$mode:$kind]=$(( ${SEEN[$mode:$kind]:-0} + 1 ))
    done
done
for key in $(printf "%s\n" "${!SEEN[@]}" | sort); do echo "$key: ${SEEN[$key]}"; done
echo "lock race: $((2 * TRIALS)) trials, $failures failures"
[[ $failures -eq 0 ]]
