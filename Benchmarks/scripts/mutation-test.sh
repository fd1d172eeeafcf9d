#!/usr/bin/env bash
# The mutation test of `moult test` itself: seeded random model pairs (`moult generate-models`), each
# given its inferred mapping changed to lose data in one way (a filter that rejects an entity's objects,
# an attribute mapping removed, an expression reading another attribute or nil, a relationship left out
# on both sides), which `moult test` must fail (67), or kept right (its copies written as Xcode's
# `valueForKey:` form), which it must pass (0). Every mutation has data behind it in the generated store
# (mutate-mapping.py reads it first).
#
#     Benchmarks/scripts/mutation-test.sh [--count N] [--seed S] [--objects N] [--jobs J] [--debug]
#         defaults: 200 lossy and 200 right, seed 1, 40 objects, 2 jobs, the release build
#
# Prints one line per case (`lossy 17 attribute: … -> 67 ok`) and the counts; exits 1 when a lossy
# mapping passed or a right one failed. `make test` runs 20 of each (MutationScriptTests).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=200 SEED=1 OBJECTS=40 JOBS=2 DEBUG=
while [[ $# -gt 0 ]]; do
    case "$1" in
    --count) COUNT=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --objects) OBJECTS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --debug) DEBUG=1; shift ;;
    *) die "unknown option $1" ;;
    esac
done
if [[ -n "${MOULT_BINARY:-}" ]]; then
    MOULT=$MOULT_BINARY
elif [[ -n "$DEBUG" ]]; then
    MOULT="$ROOT/.build/debug/moult"
elif [[ -z "${MOULT_SKIP_BUILD:-}" || ! -x "$MOULT" ]]; then
    swift build -c release --product moult >&2
fi
make_work mutation-test
export MOULT OBJECTS SEED WORK SCRIPTS

# One case: its kind (lossy or right), its number. Tries pairs until the mutation has data behind it.
run_case() {
    local side=$1 number=$2 kinds=(filter attribute expression relationship) kind pair dir attempt
    kind=right
    [[ $side == lossy ]] && kind=${kinds[$((number % 4))]}
    for ((attempt = 0; attempt < 25; attempt++)); do
        pair=$((number * 25 + attempt))
        dir="$WORK/$side-$number"
        rm -rf "$dir" && mkdir -p "$dir"
        "$MOULT" generate-models "$dir" --first "$pair" --count 1 --seed "$SEED" >/dev/null
        local model="$dir/Pair$pair.xcdatamodeld"
        "$MOULT" infer --model "$model" --from v1 --to v2 --json >"$dir/inferred.json" 2>/dev/null || continue
        "$MOULT" generate "$dir/v1.sqlite" --model "$model" --model-version v1 --objects "$OBJECTS" --seed "$number" >/dev/null
        local what
        what=$(python3 "$SCRIPTS/mutate-mapping.py" "$kind" "$number" "$dir/inferred.json" "$model/v1.xcdatamodel/contents" \
            "$dir/v1.sqlite" "$dir/mapping.json") || continue
        local rc=0
        "$MOULT" test "$model" --to v2 --version v1 --mapping "$dir/mapping.json" --objects "$OBJECTS" --seed "$number" \
            >"$dir/out.txt" 2>"$dir/err.txt" || rc=$?
        local expected=0 verdict=ok
        [[ $side == lossy ]] && expected=67
        [[ $rc == "$expected" ]] || verdict=WRONG
        echo "$side $number pair $pair $what -> $rc $verdict"
        [[ $verdict == ok ]] && rm -rf "$dir"
        return 0
    done
    echo "$side $number: no pair offers a $kind mutation with data behind it -> SKIPPED"
}
export -f run_case

{
    for ((n = 0; n < COUNT; n++)); do echo "lossy $n"; done
    for ((n = 0; n < COUNT; n++)); do echo "right $n"; done
} | xargs -P "$JOBS" -L 1 bash -c 'run_case "$0" "$1"' | tee "$WORK/results.txt"

lossy_ok=$(grep -c '^lossy .* -> 67 ok$' "$WORK/results.txt" || true)
right_ok=$(grep -c '^right .* -> 0 ok$' "$WORK/results.txt" || true)
wrong=$(grep -c 'WRONG$' "$WORK/results.txt" || true)
skipped=$(grep -c 'SKIPPED$' "$WORK/results.txt" || true)
echo "lossy: $lossy_ok of $COUNT failed as they must; right: $right_ok of $COUNT passed; wrong: $wrong; skipped: $skipped"
[[ $wrong == 0 && $skipped == 0 ]]
