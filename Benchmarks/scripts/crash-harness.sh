#!/usr/bin/env bash
# The crash harness: a migration killed at any instant and resumed ends identical to one that never
# stopped, and the source never changes.
#
#     Benchmarks/scripts/crash-harness.sh [--objects N] [--kills K] [--seed S] [--chunk-size C] [--step STEP]
#         [--journal wal|rollback] [--threads T] [--per-object] [--wal-checkpoint-bytes B]
#         defaults: 20000 persons, 24 random kill points, seed 1, chunk size 500, step v2-v3, a WAL source
#         (--journal rollback: the source in rollback-journal mode, as many Core Data stores are)
#         --threads T: every killed and resumed run on T threads (`migrate --threads T`), the references
#         on one; --per-object: every run with --no-bulk-sql (the path a second thread reads ahead for);
#         --wal-checkpoint-bytes B: on two threads, the destination's WAL checkpointed between chunks once
#         over B bytes (0: between every two chunks), in the killed and resumed runs
#
# STEP is the People step migrated: v2-v3 (the address split, the default), v3-v4 (the Adult/Child
# split, Mappings/v3-to-v4.json), v4-v5 (unique companies and schools, BuiltinPolicy/v4-to-v5.json)
# or v1-v3 (a chain: v1 -> v2 inferred, its intermediate store made by SQL, then Mappings/v2-to-v3.json).
#
# 1. Generates a People v2 store of N persons and runs the address split (v2 -> v3, with
#    Datasets/People/Mappings/v2-to-v3.json) uninterrupted, twice: the reference, and a check that two
#    uninterrupted runs agree (when their store UUIDs differ, UUIDs are left out of the comparison).
# 2. K random kill points: starts the same migration, `kill -9`s it after a delay drawn in the k-th of K
#    equal slices of the reference's wall time (so the kills spread over every stage), then re-runs it
#    with --resume, killing some of those resumes too, until one run exits 0.
# 3. Deterministic fault points: MOULT_FAULT=<point>:<n> makes moult SIGKILL itself the n-th time it
#    reaches <point>, for every point below and n in {1, 3}; then resumes until a run exits 0.
# After each: the destination's digest (schema, every table's rows, Z_METADATA decoded; see
# store-digest.py) must equal the reference's, and the source's sha256 must be unchanged.
# Prints one line per kill point and a summary; exits 1 on any mismatch.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OBJECTS=20000 KILLS=24 SEED=1 CHUNK=500 STEP=v2-v3 JOURNAL=wal
RUN_OPTIONS=() REFERENCE_OPTIONS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
    --objects) OBJECTS=$2; shift 2 ;;
    --kills) KILLS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --chunk-size) CHUNK=$2; shift 2 ;;
    --step) STEP=$2; shift 2 ;;
    --journal) JOURNAL=$2; shift 2 ;;
    --threads) RUN_OPTIONS+=(--threads "$2"); REFERENCE_OPTIONS+=(--threads 1); shift 2 ;;
    --per-object) RUN_OPTIONS+=(--no-bulk-sql); REFERENCE_OPTIONS+=(--no-bulk-sql); shift ;;
    --wal-checkpoint-bytes) RUN_OPTIONS+=(--wal-checkpoint-bytes "$2"); shift 2 ;;
    -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
case "$STEP" in
v2-v3) FROM=2 TO=v3 MAPPING=v2-to-v3.json ;;
v3-v4) FROM=3 TO=v4 MAPPING=v3-to-v4.json ;;
v4-v5) FROM=4 TO=v5 MAPPING=../BuiltinPolicy/v4-to-v5.json ;;
v1-v3) FROM=1 TO=v3 MAPPING=v2-to-v3.json ;;
*) die "unknown step: $STEP (v2-v3, v3-v4, v4-v5 or v1-v3)" ;;
esac
POINTS="store-created chunk-start associations-mirrored associations-unwritten relationships-left-out set-links-staged set-links-written after-rows after-lmdb-commit after-sqlite-commit before-finish after-marker after-rename"
# The chain's first step: after its copy, inside and at the end of its transaction, before its rename.
[[ "$STEP" != v1-v3 ]] || POINTS="chain-step-copied inplace-statement inplace-before-commit chain-step-migrated $POINTS"
FAULT_POINTS=${FAULT_POINTS:-$POINTS}
FAULT_COUNTS=${FAULT_COUNTS:-"1 3"}
MAX_RESUMES=20  # resumes of one kill point before giving up
RANDOM=$SEED    # the kill delays are reproducible for a seed

build_moult
make_work crash-harness
SRC="$WORK/source-v$FROM.sqlite"
echo "crash-harness: moult-people generate --model-version $FROM --objects $OBJECTS --seed $SEED; step $STEP"
"$MOULT_PEOPLE" generate --model-version "$FROM" --objects "$OBJECTS" --seed "$SEED" "$SRC" >/dev/null
# The source in the journal mode asked (the generator writes WAL; Core Data's stores come in both).
[[ "$JOURNAL" == wal ]] || sqlite3 "$SRC" "PRAGMA journal_mode = DELETE" >/dev/null
echo "crash-harness: source in $(sqlite3 "$SRC" 'PRAGMA journal_mode') mode"
SRC_SHA=$(sha256sum "$SRC" | cut -d' ' -f1)

migrate() { # DEST [extra options...]
    local dest=$1; shift
    "$MOULT" migrate "$SRC" --model "$MODEL" --to "$TO" --mapping "$MAPPINGS/$MAPPING" \
        --output "$dest" --chunk-size "$CHUNK" ${REFERENCE_OPTIONS[@]+"${REFERENCE_OPTIONS[@]}"} "$@"
}

# MARK: - Reference

mkdir -p "$WORK/reference" "$WORK/reference-2"
start=$(date +%s.%N)
migrate "$WORK/reference/out.sqlite" >"$WORK/reference/log" 2>&1 || { cat "$WORK/reference/log"; die "the uninterrupted migration failed"; }
REF_WALL=$(python3 -c "import time; print(round($(date +%s.%N) - $start, 3))")
migrate "$WORK/reference-2/out.sqlite" >"$WORK/reference-2/log" 2>&1 || { cat "$WORK/reference-2/log"; die "the second uninterrupted migration failed"; }
DIGEST_OPTIONS=()
uuid1=$(python3 "$SCRIPTS/store-digest.py" "$WORK/reference/out.sqlite" | grep '^uuid' || true)
uuid2=$(python3 "$SCRIPTS/store-digest.py" "$WORK/reference-2/out.sqlite" | grep '^uuid' || true)
if [[ "$uuid1" != "$uuid2" ]]; then
    DIGEST_OPTIONS=(--ignore-uuid)
    echo "crash-harness: two uninterrupted runs give different store UUIDs: UUIDs are left out of the comparison"
fi
python3 "$SCRIPTS/store-digest.py" "${DIGEST_OPTIONS[@]}" "$WORK/reference/out.sqlite" >"$WORK/reference.digest"
python3 "$SCRIPTS/store-digest.py" "${DIGEST_OPTIONS[@]}" "$WORK/reference-2/out.sqlite" >"$WORK/reference-2.digest"
if ! diff -u "$WORK/reference.digest" "$WORK/reference-2.digest" >&2; then
    die "two uninterrupted runs differ: the migration is not deterministic, so no kill point can be checked"
fi
echo "crash-harness: reference: $OBJECTS persons, chunk size $CHUNK, ${REF_WALL}s; $(grep -c '^table' "$WORK/reference.digest") tables"

# MARK: - Kill points

TOTAL=0 IDENTICAL=0 KILLED_RUNS=0 REFUSED=0 FAILED=()

# run_killing DIR DELAY [env...]: runs the migration (a resume when DIR/out.sqlite's work is there,
# i.e. when RESUME=1), kills it with SIGKILL after DELAY seconds (none when DELAY is empty); sets RC.
run_killing() {
    local dir=$1 delay=$2; shift 2
    local options=()
    [[ "${RESUME:-0}" == 1 ]] && options=(--resume)
    env "$@" "$MOULT" migrate "$SRC" --model "$MODEL" --to "$TO" --mapping "$MAPPINGS/$MAPPING" \
        --output "$dir/out.sqlite" --chunk-size "$CHUNK" ${RUN_OPTIONS[@]+"${RUN_OPTIONS[@]}"} "${options[@]}" >>"$dir/log" 2>&1 &
    local pid=$!
    if [[ -n "$delay" ]]; then
        sleep "$delay"
        kill -9 "$pid" 2>/dev/null || true
    fi
    RC=0
    wait "$pid" 2>/dev/null || RC=$?
}

# finish_and_check DIR LABEL HOW: resumes until a run exits 0, compares with the reference, prints
# one line.
finish_and_check() {
    local dir=$1 label=$2 how=$3 resumes=0 killed_resumes=0 delay note=""
    TOTAL=$((TOTAL + 1))
    while [[ "$RC" != 0 ]]; do
        case "$RC" in
        137 | 75) ;;  # killed (SIGKILL), or interrupted and resumable
        *)
            if grep -qiE "no checkpoint|nothing to resume|not.*resum" "$dir/log" && [[ "$resumes" == 0 ]]; then
                # Killed before the first checkpoint: nothing to resume; the user re-runs.
                note=" (resume refused before any checkpoint: re-run without --resume)"
                REFUSED=$((REFUSED + 1))
                rm -rf "$dir/out.sqlite"*
                RESUME=0 run_killing "$dir" ""
                continue
            fi
            FAILED+=("$label ($how): exit $RC after $resumes resumes: $(tr '\r' '\n' <"$dir/log" | tail -n 1)")
            printf '  %-32s %-28s resumes %d (%d killed)  FAILED: exit %s; work folder kept: %s\n' \
                "$label" "$how" "$resumes" "$killed_resumes" "$RC" "${dir#"$ROOT"/}"
            tr '\r' '\n' <"$dir/log" | tail -n 2 | sed 's/^/      /'
            return ;;
        esac
        resumes=$((resumes + 1))
        [[ $resumes -le $MAX_RESUMES ]] || { FAILED+=("$label: no run completed after $MAX_RESUMES resumes"); echo "  $label: FAILED, no completion"; return; }
        # Kill about a third of the first resumes too, at a random instant of the run.
        delay=""
        if [[ $resumes -le 3 && $((RANDOM % 3)) == 0 ]]; then
            delay=$(python3 -c "print(round($REF_WALL * $RANDOM / 32767, 3))")
        fi
        RESUME=1 run_killing "$dir" "$delay"
        [[ -n "$delay" && "$RC" == 137 ]] && killed_resumes=$((killed_resumes + 1))
    done
    local result sha
    python3 "$SCRIPTS/store-digest.py" "${DIGEST_OPTIONS[@]}" "$dir/out.sqlite" >"$dir/digest"
    sha=$(sha256sum "$SRC" | cut -d' ' -f1)
    if [[ "$sha" != "$SRC_SHA" ]]; then
        result="SOURCE CHANGED"
        FAILED+=("$label: the source changed")
    elif diff -q "$WORK/reference.digest" "$dir/digest" >/dev/null; then
        result="identical"
        IDENTICAL=$((IDENTICAL + 1))
    else
        result="DIFFERENT: $(diff "$WORK/reference.digest" "$dir/digest" | grep '^>' | cut -c3- | cut -f1 | tr '\n' ',' | sed 's/,$//')"
        FAILED+=("$label: $result")
        cp -r "$dir" "$WORK/failed-$(echo "$label" | tr ' :/' '___')"
    fi
    printf '  %-32s %-28s resumes %d (%d killed)  %s%s\n' "$label" "$how" "$resumes" "$killed_resumes" "$result" "$note"
    rm -rf "$dir"
}

echo "crash-harness: $KILLS random kill points over ${REF_WALL}s"
for k in $(seq 1 "$KILLS"); do
    dir="$WORK/kill-$k"; mkdir -p "$dir"
    # Stratified: the k-th kill falls in the k-th of KILLS equal slices of the reference's wall time.
    delay=$(python3 -c "print(round($REF_WALL * ($k - 1 + $RANDOM / 32767) / $KILLS, 3))")
    RESUME=0 run_killing "$dir" "$delay"
    how="kill -9 at ${delay}s"
    [[ "$RC" == 137 ]] && KILLED_RUNS=$((KILLED_RUNS + 1)) || how="$how (finished first, exit $RC)"
    finish_and_check "$dir" "random $k/$KILLS" "$how"
done

echo "crash-harness: fault points (MOULT_FAULT=<point>:<n>)"
require_fault_points "$FAULT_POINTS"
for point in $FAULT_POINTS; do
    for n in $FAULT_COUNTS; do
        dir="$WORK/fault-$point-$n"; mkdir -p "$dir"
        RESUME=0 run_killing "$dir" "" "MOULT_FAULT=$point:$n"
        how="fault $point:$n"
        if [[ "$RC" == 137 ]]; then
            KILLED_RUNS=$((KILLED_RUNS + 1))
        else
            how="$how (not killed, exit $RC)"
        fi
        finish_and_check "$dir" "fault $point:$n" "$how"
    done
done

# MARK: - Summary

source_note="source unchanged"
[[ "$(sha256sum "$SRC" | cut -d' ' -f1)" == "$SRC_SHA" ]] || source_note="SOURCE CHANGED"
extra=""
[[ $REFUSED == 0 ]] || extra=" ($REFUSED resumes refused before any checkpoint, re-run without --resume)"
echo "crash-harness: $IDENTICAL/$TOTAL kill points identical to the uninterrupted run; $source_note$extra"
echo "crash-harness: $KILLED_RUNS of the $((KILLS + $(wc -w <<<"$FAULT_POINTS") * $(wc -w <<<"$FAULT_COUNTS"))) first runs were really killed; reference ${REF_WALL}s, $OBJECTS persons, chunk size $CHUNK, step $STEP"
if [[ ${#FAILED[@]} -gt 0 || $IDENTICAL != "$TOTAL" || "$source_note" != "source unchanged" ]]; then
    printf 'crash-harness: FAILED: %s\n' "${FAILED[@]}"
    exit 1
fi
