#!/usr/bin/env bash
# The XML store's crash harness: `moult migrate` in place on a Core Data XML store (XML -> XML, the
# original kept as NAME~.xml), killed at any instant, leaves the store either as it was or as the whole
# new store, never part of one; run again, it ends identical to a run never interrupted.
#
#     Benchmarks/scripts/xml-crash-harness.sh [--objects N] [--kills K] [--seed S] [--chunk-size C]
#         defaults: 20000 persons, 24 random kill points, seed 1, chunk size 500; People v2 -> v3
#
# 1. Generates a People v2 store of N persons, converts it to an XML store (`moult convert`), and
#    migrates a copy in place uninterrupted, twice: the reference (the XML store's bytes without its
#    <UUID> line, which a new destination draws afresh) and a check that two runs agree.
# 2. K random kill points: a fresh copy of the XML store is migrated in place and `kill -9`ed after a
#    delay drawn in the k-th of K equal slices of the reference's wall time (so kills spread over the
#    copy into SQLite, the migration, and the XML writer's output). Right after the kill the store must
#    be byte for byte the original, or a whole XML store that `moult inspect --model` reads as v3. The
#    same command then runs again (some of those runs killed too) until one exits 0.
# 3. The fault points of the engine (MOULT_FAULT=<point>:1) inside the XML run's SQLite migration, and
#    a crash before each file operation of the run on the XML store (MOULT_FILE_CRASH=<n>): the
#    original linked aside, the new file synced, renamed over the store, its folder synced; and kills
#    right after the new file is renamed over the store (its inode watched).
# After each: the store equals the reference, NAME~.xml is the original, and no temporary file or work
# folder is left. Prints one line per kill point and a summary; exits 1 on any mismatch.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OBJECTS=20000 KILLS=24 SEED=1 CHUNK=500
while [[ $# -gt 0 ]]; do
    case "$1" in
    --objects) OBJECTS=$2; shift 2 ;;
    --kills) KILLS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --chunk-size) CHUNK=$2; shift 2 ;;
    -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
FAULT_POINTS=${FAULT_POINTS:-"store-created chunk-start after-sqlite-commit before-finish after-rename"}
MAX_RESUMES=20
RANDOM=$SEED

build_moult
make_work xml-crash-harness
"$MOULT_PEOPLE" generate --model-version 2 --objects "$OBJECTS" --seed "$SEED" "$WORK/source.sqlite" >/dev/null
ORIGINAL="$WORK/original.xml"
"$MOULT" convert "$WORK/source.sqlite" --to xml --output "$ORIGINAL" --model "$MODEL" >/dev/null
ORIGINAL_SHA=$(sha256sum "$ORIGINAL" | cut -d' ' -f1)
echo "xml-crash-harness: $OBJECTS persons as an XML store of $(du -h "$ORIGINAL" | cut -f1), chunk size $CHUNK"

migrate() { # STORE
    "$MOULT" migrate "$1" --model "$MODEL" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" --chunk-size "$CHUNK" --quiet
}
digest() { grep -v '<UUID>' "$1" | sha256sum | cut -d' ' -f1; }

mkdir -p "$WORK/reference" "$WORK/reference-2"
cp "$ORIGINAL" "$WORK/reference/People.xml"
cp "$ORIGINAL" "$WORK/reference-2/People.xml"
start=$(date +%s.%N)
migrate "$WORK/reference/People.xml" >"$WORK/reference/log" 2>&1 || { cat "$WORK/reference/log"; die "the uninterrupted migration failed"; }
REF_WALL=$(python3 -c "print(round($(date +%s.%N) - $start, 3))")
migrate "$WORK/reference-2/People.xml" >"$WORK/reference-2/log" 2>&1 || die "the second uninterrupted migration failed"
REFERENCE=$(digest "$WORK/reference/People.xml")
[[ "$REFERENCE" == "$(digest "$WORK/reference-2/People.xml")" ]] || die "two uninterrupted runs differ: no kill point can be checked"
echo "xml-crash-harness: reference ${REF_WALL}s"

TOTAL=0 IDENTICAL=0 KILLED=0 MID_STATES_OLD=0 MID_STATES_NEW=0 FAILED=()

# run_killing DIR DELAY [env...]: migrates DIR/People.xml in place, SIGKILLs it after DELAY seconds
# (none when empty); sets RC.
run_killing() {
    local dir=$1 delay=$2; shift 2
    env "$@" "$MOULT" migrate "$dir/People.xml" --model "$MODEL" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" \
        --chunk-size "$CHUNK" --quiet >>"$dir/log" 2>&1 &
    local pid=$!
    if [[ -n "$delay" ]]; then
        sleep "$delay"
        kill -9 "$pid" 2>/dev/null || true
    fi
    RC=0
    wait "$pid" 2>/dev/null || RC=$?
}

# check_whole DIR LABEL: the store is the original, or a whole v3 XML store.
check_whole() {
    local dir=$1 label=$2
    if [[ "$(sha256sum "$dir/People.xml" | cut -d' ' -f1)" == "$ORIGINAL_SHA" ]]; then
        MID_STATES_OLD=$((MID_STATES_OLD + 1))
    elif "$MOULT" inspect "$dir/People.xml" --model "$MODEL" 2>/dev/null | grep -q '^matching version: v3$'; then
        MID_STATES_NEW=$((MID_STATES_NEW + 1))
    else
        FAILED+=("$label: after the kill the store is neither the original nor a whole v3 store")
        cp -r "$dir" "$WORK/failed-$(echo "$label" | tr ' :/' '___')"
    fi
}

finish_and_check() { # DIR LABEL HOW
    local dir=$1 label=$2 how=$3 runs=0 killed_runs=0 delay result
    TOTAL=$((TOTAL + 1))
    while [[ "$RC" != 0 ]]; do
        [[ "$RC" == 137 || "$RC" == 75 ]] || { FAILED+=("$label: exit $RC: $(tail -n 1 "$dir/log")"); echo "  $label FAILED: exit $RC"; return; }
        check_whole "$dir" "$label (run $runs)"
        runs=$((runs + 1))
        [[ $runs -le $MAX_RESUMES ]] || { FAILED+=("$label: no run completed"); return; }
        delay=""
        if [[ $runs -le 3 && $((RANDOM % 3)) == 0 ]]; then delay=$(python3 -c "print(round($REF_WALL * $RANDOM / 32767, 3))"); fi
        run_killing "$dir" "$delay"
        [[ -n "$delay" && "$RC" == 137 ]] && killed_runs=$((killed_runs + 1))
    done
    if [[ "$(digest "$dir/People.xml")" != "$REFERENCE" ]]; then
        result="DIFFERENT"
        FAILED+=("$label: the store differs from the reference")
        cp -r "$dir" "$WORK/failed-$(echo "$label" | tr ' :/' '___')"
    elif [[ "$(sha256sum "$dir/People~.xml" | cut -d' ' -f1)" != "$ORIGINAL_SHA" ]]; then
        result="BACKUP IS NOT THE ORIGINAL"
        FAILED+=("$label: People~.xml is not the original")
    elif compgen -G "$dir/.People.xml.moult*" >/dev/null; then
        result="LEFT OVER: $(cd "$dir" && ls -a | grep moult | tr '\n' ' ')"
        FAILED+=("$label: $result")
    else
        result="identical"
        IDENTICAL=$((IDENTICAL + 1))
    fi
    printf '  %-26s %-30s runs again %d (%d killed)  %s\n' "$label" "$how" "$runs" "$killed_runs" "$result"
    rm -rf "$dir"
}

echo "xml-crash-harness: $KILLS random kill points over ${REF_WALL}s"
for k in $(seq 1 "$KILLS"); do
    dir="$WORK/kill-$k"; mkdir -p "$dir"; cp "$ORIGINAL" "$dir/People.xml"
    delay=$(python3 -c "print(round($REF_WALL * ($k - 1 + $RANDOM / 32767) / $KILLS, 3))")
    run_killing "$dir" "$delay"
    how="kill -9 at ${delay}s"
    [[ "$RC" == 137 ]] && KILLED=$((KILLED + 1)) || how="$how (finished, exit $RC)"
    finish_and_check "$dir" "random $k/$KILLS" "$how"
done

echo "xml-crash-harness: fault points (MOULT_FAULT=<point>:1)"
require_fault_points "$FAULT_POINTS"
for point in $FAULT_POINTS; do
    dir="$WORK/fault-$point"; mkdir -p "$dir"; cp "$ORIGINAL" "$dir/People.xml"
    run_killing "$dir" "" "MOULT_FAULT=$point:1"
    how="fault $point:1"
    [[ "$RC" == 137 ]] && KILLED=$((KILLED + 1)) || how="$how (not killed, exit $RC)"
    finish_and_check "$dir" "fault $point" "$how"
done

# The XML writer's own instants: a crash before each file operation (MOULT_FILE_CRASH=<n>, counted in
# FileOperations) that touches the XML store or its temporary file: the original linked aside, the
# temporary file synced, renamed over the store, the folder synced, the backup linked.
dir="$WORK/trace"; mkdir -p "$dir"; cp "$ORIGINAL" "$dir/People.xml"
MOULT_FILE_TRACE="$dir/trace" migrate "$dir/People.xml" >"$dir/log" 2>&1 || die "the traced run failed"
OPERATIONS=$(grep -n -E 'People(~)?\.xml|moult-xml' "$dir/trace" | grep -v -E 'source\.sqlite|destination\.sqlite|\.moult/' | cut -d: -f1 | tr '\n' ' ')
# and the last one, the folder's sync after the rename: a crash there leaves the whole new store.
OPERATIONS=$(echo $OPERATIONS "$(wc -l <"$dir/trace")" | tr ' ' '\n' | sort -nu | tr '\n' ' ')
echo "xml-crash-harness: file operations of the XML run: $(wc -l <"$dir/trace"); crashing before each of: $OPERATIONS"
rm -rf "$dir"
for n in $OPERATIONS; do
    dir="$WORK/file-$n"; mkdir -p "$dir"; cp "$ORIGINAL" "$dir/People.xml"
    run_killing "$dir" "" "MOULT_FILE_CRASH=$n"
    how="before file operation $n"
    [[ "$RC" == 137 ]] && KILLED=$((KILLED + 1)) || how="$how (not killed, exit $RC)"
    finish_and_check "$dir" "file operation $n" "$how"
done

# Right after the rename: the process is killed as soon as the store's inode changes (the new file was
# renamed over it), while it syncs the folder and removes its work folder.
for k in 1 2 3 4; do
    dir="$WORK/renamed-$k"; mkdir -p "$dir"; cp "$ORIGINAL" "$dir/People.xml"
    inode=$(stat -c %i "$dir/People.xml")
    "$MOULT" migrate "$dir/People.xml" --model "$MODEL" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" \
        --chunk-size "$CHUNK" --quiet >>"$dir/log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && [[ "$(stat -c %i "$dir/People.xml" 2>/dev/null)" == "$inode" ]]; do sleep 0.001; done
    kill -9 "$pid" 2>/dev/null || true
    RC=0
    wait "$pid" 2>/dev/null || RC=$?
    how="kill -9 after the rename"
    [[ "$RC" == 137 ]] && KILLED=$((KILLED + 1)) || how="$how (finished first, exit $RC)"
    finish_and_check "$dir" "after the rename $k" "$how"
done

echo "xml-crash-harness: $IDENTICAL/$TOTAL identical to the uninterrupted run; $KILLED first runs really killed;" \
    "after a kill the store was the original $MID_STATES_OLD times and the whole new store $MID_STATES_NEW times, never anything else"
if [[ ${#FAILED[@]} -gt 0 || $IDENTICAL != "$TOTAL" ]]; then
    printf 'FAILED: %s\n' "${FAILED[@]}"
    exit 1
fi
