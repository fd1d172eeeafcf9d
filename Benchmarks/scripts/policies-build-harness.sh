#!/usr/bin/env bash
# The policy build, end to end: the five public policy files (Tests/Fixtures, with their licences)
# compiled unchanged by `moult policies build` into a moult of their own, which then migrates
# CoreDataPlus's SampleModel V2 store to V3 (V2to3MakerPolicy: makers uniqued among registeredObjects)
# at chunk sizes 1, 37 and 10,000 and through K random `kill -9`s and reruns, every result compared with
# the one-chunk run's digest (store-digest.py), and the makers checked against the source's names.
#
#     Benchmarks/scripts/policies-build-harness.sh [--kills K] [--seed S] [--configuration debug|release]
#         defaults: 30 kills, seed 1, debug (the generated package builds Moult again: minutes)
#
# Stores of different chunk sizes are compared on their schema and rows (their metadata records the
# arguments); a killed and rerun migration on everything, metadata included, with an uninterrupted run
# of the same arguments. The generated package is kept in $WORK/package (its .build too, so a second run is incremental).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KILLS=30 SEED=1 CONFIGURATION=debug
while [[ $# -gt 0 ]]; do
    case "$1" in
    --kills) KILLS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --configuration) CONFIGURATION=$2; shift 2 ;;
    *) die "unknown option $1" ;;
    esac
done
RANDOM=$SEED
WORK=${BENCH_WORK:-$ROOT/.build/bench-work/policies-build}
mkdir -p "$WORK"
rm -rf "$WORK"/runs && mkdir -p "$WORK/runs"

FIXTURES="$ROOT/Tests/Fixtures"
SOURCES=(
    "$FIXTURES/wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Migration/Policies/Post2ToPost3MigrationPolicy.swift"
    "$FIXTURES/alemar11__CoreDataPlus/Tests/Resources/SampleModel/MappingModels/V2to3MakerPolicy.swift"
    "$FIXTURES/alemar11__CoreDataPlus/Tests/Resources/SampleModel2/BookCoverToCoverMigrationPolicy.swift"
    "$FIXTURES/jdspoone__CoreDataMigrationExample/CoreDataMigration/NoteToNotePolicy.swift"
    "$FIXTURES/jdspoone__CoreDataMigrationExample/CoreDataMigration/ImageToImagePolicy.swift"
    # The app's own value class the book policy casts to (CoreDataPlus's is in its test model).
    "$ROOT/Tests/CoreDataPolicyTests/Cover.swift"
)

echo "building moult (debug) to run \`moult policies build\`" >&2
swift build --product moult >&2
BUILT="$WORK/moult-publicpolicies"
start=$(date +%s)
"$ROOT/.build/debug/moult" policies build "${SOURCES[@]}" --module PublicPolicies --moult "$ROOT" --work "$WORK/package" \
    --configuration "$CONFIGURATION" --output "$BUILT"
echo "policies-build-harness: built $BUILT in $(( $(date +%s) - start ))s"

SAMPLE="$FIXTURES/alemar11__CoreDataPlus/Tests/Resources/SampleModel"
SOURCE="$WORK/runs/source.sqlite"
cp "$SAMPLE/Fixtures/SampleModel_V2.sqlite" "$SOURCE"
arguments() { # OUTPUT CHUNK: the migration's command line
    ARGS=("$BUILT" migrate "$SOURCE" --model "$SAMPLE/SampleModel.xcdatamodeld" --to SampleModel3
        --mapping "$SAMPLE/MappingModels/V2toV3.xcmappingmodel" --output "$1" --chunk-size "$2" --quiet)
}
migrate() { arguments "$1" "$2"; "${ARGS[@]}"; }
digest() { python3 "$SCRIPTS/store-digest.py" --ignore-uuid "$1"; }
# Every table's rows and the schema, without the metadata (which records the run's arguments, the chunk size among them).
rows() { digest "$1" | grep -v '^metadata'; }

migrate "$WORK/runs/reference.sqlite" 10000
digest "$WORK/runs/reference.sqlite" >"$WORK/runs/reference.digest"
expected=$(sqlite3 "$SOURCE" "SELECT group_concat(m, '|') FROM (SELECT DISTINCT ZMAKER m FROM ZCAR WHERE ZMAKER IS NOT NULL ORDER BY m)")
found=$(sqlite3 "$WORK/runs/reference.sqlite" "SELECT group_concat(n, '|') FROM (SELECT ZNAME n FROM ZMAKER ORDER BY n)")
[[ "$expected" == "$found" ]] || die "the makers are not the source's names: $found, expected $expected"
echo "policies-build-harness: reference: makers $found"

FAILED=()
for chunk in 1 37; do
    migrate "$WORK/runs/chunk-$chunk.sqlite" "$chunk"
    if diff -q <(rows "$WORK/runs/chunk-$chunk.sqlite") <(grep -v '^metadata' "$WORK/runs/reference.digest") >/dev/null; then
        echo "  chunk size $chunk: identical"
    else
        FAILED+=("chunk size $chunk"); echo "  chunk size $chunk: DIFFERS"
    fi
done

# The kills' reference: an uninterrupted run with the same arguments (chunks of 5, an output named out.sqlite).
mkdir -p "$WORK/runs/uninterrupted"
start=$(date +%s%N); migrate "$WORK/runs/uninterrupted/out.sqlite" 5; wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
digest "$WORK/runs/uninterrupted/out.sqlite" >"$WORK/runs/uninterrupted.digest"
for k in $(seq 1 "$KILLS"); do
    mkdir -p "$WORK/runs/kill-$k"
    out="$WORK/runs/kill-$k/out.sqlite"
    delay_ms=$(( (RANDOM % (wall_ms > 0 ? wall_ms : 1)) ))
    # moult itself in the background (not a shell around it), so that the kill reaches it.
    arguments "$out" 5
    "${ARGS[@]}" >"$WORK/runs/kill-$k.log" 2>&1 & pid=$!
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    killed=yes; kill -9 "$pid" 2>/dev/null || killed="no (it had finished)"
    wait "$pid" 2>/dev/null || true
    reruns=0
    until [[ -f "$out" ]] && [[ ! -d "$out.moult" ]]; do
        reruns=$((reruns + 1)); [[ $reruns -le 5 ]] || break
        migrate "$out" 5 >>"$WORK/runs/kill-$k.log" 2>&1 || true
    done
    if [[ -f "$out" ]] && diff -q <(digest "$out") "$WORK/runs/uninterrupted.digest" >/dev/null; then
        echo "  kill $k after ${delay_ms}ms (killed: $killed): identical after $reruns rerun(s)"
    else
        FAILED+=("kill $k"); echo "  kill $k after ${delay_ms}ms: DIFFERS or unfinished (log: $WORK/runs/kill-$k.log)"
    fi
done
if [[ ${#FAILED[@]} -gt 0 ]]; then die "failed: ${FAILED[*]}"; fi
echo "policies-build-harness: chunk sizes 1, 37, 10000 and $KILLS kills: every store identical to the reference"
