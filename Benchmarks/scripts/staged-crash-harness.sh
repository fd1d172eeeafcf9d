#!/usr/bin/env bash
# The crash harness for staged migrations (`moult migrate STORE --model M --stages FILE`): a run killed
# at any instant, inside a handler's chunk included, leaves the store intact at a version of its model
# with the record of where the migration is; run again, it ends identical to a run never interrupted,
# and the NAME~.EXT backup is the original.
#
#     Benchmarks/scripts/staged-crash-harness.sh [--kills K] [--seed S] [--modes "fill dedupe people"]
#                                                 [--journals "rollback wal"]
#         defaults: 24 random kill points per mode, seed 1, every mode, both journal modes
#
# Modes (each on its own store, stages files written by the script):
#   fill    Attachments v1 -> v2 (Tests/StagedModels): willMigrate fills the nil dates of 200,000
#           attachments (one in three) in chunks of 1,000, then the step (by SQL: an attribute made
#           non-optional). The date is a constant here, so that two
#           runs compare byte for byte; `now()` is the same instant across a resume (tested in the suite).
#   dedupe  Tags v1 -> v2: willMigrate deletes the duplicate names of 200,000 tags (each with a note
#           that loses its tag), then the step adds the unique index (by SQL).
#   people  People v1 -> v5 in five stages: lightweight [v1]; custom v1 -> v2 (inferred, by SQL) whose
#           didMigrate gives the persons over 30 an address; custom v2 -> v3 with its mapping (streamed,
#           swapped in) whose didMigrate upper-cases the addresses' states; custom v3 -> v4 and v4 -> v5
#           with their mappings (built-in policies); 20,000 persons.
# Each mode runs on its store in each journal mode: `rollback` (PRAGMA journal_mode = DELETE, as `moult
# create` makes stores: a kill inside a transaction leaves a hot -journal) and `wal` (a kill leaves a -wal).
# For each mode an uninterrupted run on a copy is the reference. Then K kills at random instants (the
# k-th in the k-th of K slices of the reference's wall time) and one at each named point
# (MOULT_FAULT=<point>:<n>). After each kill: PRAGMA integrity_check is ok and the store is at a
# version of the model, both checked on a copy of the store and its -journal/-wal (a read-write check
# of the store itself would roll its hot journal back before Moult's next run sees it). The same command is then run until it exits 0 (at most 5 runs): the store's
# digest must equal the reference's, and the backup's the original's. Exits 1 on any failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KILLS=24 SEED=1 MODES="fill dedupe people" JOURNALS="rollback wal"
while [[ $# -gt 0 ]]; do
    case "$1" in
    --kills) KILLS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --journals) JOURNALS=$2; shift 2 ;;
    -h | --help) sed -n '2,32p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
RANDOM=$SEED
STAGED_MODELS="$ROOT/Tests/StagedModels"

build_moult
make_work staged-crash-harness

# version STORE MODEL: the name of the model's version whose entity hashes the store records, or "none".
version() {
    python3 - "$1" "$2" <<'EOF'
import plistlib, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
plist = plistlib.loads(db.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()[0])
print("recorded" if "MoultStagedMigration" in plist else "clean", end=" ")
EOF
    "$MOULT" inspect "$1" --model "$2" --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin).get("matchingVersion") or "none")' || echo none
}

setup_mode() {
    local mode=$1 journal=$2
    # (Made again for each journal mode.)
    rm -f "$WORK/$mode-original.sqlite" "$WORK/$mode-original.sqlite-wal" "$WORK/$mode-original.sqlite-shm" "$WORK/$mode-original.sqlite-journal"
    case "$mode" in
    fill)
        MODEL_PATH="$STAGED_MODELS/Attachments.xcdatamodeld"
        "$MOULT" create "$WORK/$mode-original.sqlite" --model "$MODEL_PATH/v1.xcdatamodel" >/dev/null
        sqlite3 "$WORK/$mode-original.sqlite" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
            INSERT INTO ZATTACHMENT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSIZE, ZDATECREATED)
            SELECT i, 1, 1, 'file-' || i, i % 1000, CASE WHEN i % 3 = 1 THEN NULL ELSE i * 60.0 END FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 200000 WHERE Z_ENT = 1;" >/dev/null
        cat >"$WORK/$mode.json" <<'EOF'
{ "format": "moult-stages/1",
  "stages": [ { "custom": { "from": "v1", "to": "v2",
      "willMigrate": [ { "update": "Attachment", "where": "dateCreated == nil", "set": { "dateCreated": "CAST(700000000, \"NSDate\")" } } ] } } ] }
EOF
        ARGS=(--model "$MODEL_PATH" --stages "$WORK/$mode.json" --chunk-size 1000) ;;
    dedupe)
        MODEL_PATH="$STAGED_MODELS/Tags.xcdatamodeld"
        "$MOULT" create "$WORK/$mode-original.sqlite" --model "$MODEL_PATH/v1.xcdatamodel" >/dev/null
        sqlite3 "$WORK/$mode-original.sqlite" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
            INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCOLOR) SELECT i, 2, 1, 'tag-' || ((i * 7919) % 50000), 'red' FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
            INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZTAG) SELECT i, 1, 1, 'note-' || i, i FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 200000;" >/dev/null
        cat >"$WORK/$mode.json" <<'EOF'
{ "stages": [ { "custom": { "from": "v1", "to": "v2", "willMigrate": [ { "deleteDuplicates": "Tag", "by": ["name"] } ] } } ] }
EOF
        ARGS=(--model "$MODEL_PATH" --stages "$WORK/$mode.json" --chunk-size 1000) ;;
    people)
        MODEL_PATH="$MODEL"
        "$MOULT_PEOPLE" generate --model-version 1 --objects 20000 --seed "$SEED" "$WORK/$mode-original.sqlite" >/dev/null
        cat >"$WORK/$mode.json" <<EOF
{ "stages": [
    { "lightweight": ["v1"] },
    { "custom": { "from": "v1", "to": "v2",
                  "didMigrate": [ { "update": "Person", "where": "age > 30", "set": { "state": "'ca'", "street": "'Main Street'" } } ] } },
    { "custom": { "from": "v2", "to": "v3", "mapping": "$MAPPINGS/v2-to-v3.json",
                  "didMigrate": [ { "update": "Address", "where": "state != nil", "set": { "state": "uppercase:(state)" } } ] } },
    { "custom": { "from": "v3", "to": "v4", "mapping": "$MAPPINGS/v3-to-v4.json" } },
    { "custom": { "from": "v4", "to": "v5", "mapping": "$MAPPINGS/../BuiltinPolicy/v4-to-v5.json" } } ] }
EOF
        ARGS=(--model "$MODEL_PATH" --stages "$WORK/$mode.json" --chunk-size 1000) ;;
    esac
    SRC="$WORK/$mode-original.sqlite"
    sqlite3 "$SRC" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
    case "$journal" in
    rollback) sqlite3 "$SRC" "PRAGMA journal_mode = DELETE" >/dev/null ;;
    wal) sqlite3 "$SRC" "PRAGMA journal_mode = WAL; PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null ;;
    *) die "unknown journal mode: $journal (rollback or wal)" ;;
    esac
    [[ "$(sqlite3 "$SRC" "PRAGMA journal_mode")" == "$([[ $journal == wal ]] && echo wal || echo delete)" ]] || die "$mode: the store is not in $journal mode"
    ORIGINAL_DIGEST=$(python3 "$SCRIPTS/store-digest.py" "$SRC")
}

TOTAL=0 OK=0 FAILED=()

# one_kill MODE LABEL DELAY FAULT: copies the original, runs the stages (killed after DELAY seconds, or
# at FAULT), checks the store, runs again until done, compares.
one_kill() {
    local mode=$1 label=$2 delay=$3 fault=$4
    local dir="$WORK/$mode-$JOURNAL-$TOTAL"
    TOTAL=$((TOTAL + 1))
    rm -rf "$dir"; mkdir -p "$dir"
    cp "$SRC" "$dir/store.sqlite"
    local rc=0
    if [[ -n "$fault" ]]; then
        MOULT_FAULT=$fault "$MOULT" migrate "$dir/store.sqlite" "${ARGS[@]}" --quiet >"$dir/log" 2>&1 || rc=$?
    else
        "$MOULT" migrate "$dir/store.sqlite" "${ARGS[@]}" --quiet >"$dir/log" 2>&1 &
        local pid=$!
        sleep "$delay"
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || rc=$?
    fi
    local problem="" state check companions=""
    # On a copy with its companions: read-write, as any next open is (a hot journal the kill left is
    # rolled back first), while the store itself is left as the kill left it for Moult's next run.
    mkdir -p "$dir/check"
    for suffix in "" -journal -wal; do
        [[ -e "$dir/store.sqlite$suffix" ]] && cp "$dir/store.sqlite$suffix" "$dir/check/store.sqlite$suffix" && companions+="${suffix:+$suffix }"
    done
    check=$(sqlite3 "$dir/check/store.sqlite" "PRAGMA integrity_check" 2>&1 || true)
    [[ "$check" == ok ]] || problem="integrity_check after the kill: $check"
    state=$(version "$dir/check/store.sqlite" "$MODEL_PATH" | tr '\n' ' ')
    [[ -n "$companions" ]] && state="$state(left ${companions% })"
    [[ "$state" == *none* ]] && problem="${problem:-the store is at no version after the kill}"
    [[ "$rc" == 0 ]] && state="$state(run had finished)"
    local runs=0
    while [[ -z "$problem" ]]; do
        runs=$((runs + 1))
        [[ $runs -le 5 ]] || { problem="not done after 5 runs"; break; }
        if "$MOULT" migrate "$dir/store.sqlite" "${ARGS[@]}" --quiet >>"$dir/log" 2>&1; then break; fi
    done
    if [[ -z "$problem" ]]; then
        [[ "$(python3 "$SCRIPTS/store-digest.py" "$dir/store.sqlite")" == "$REFERENCE_DIGEST" ]] || problem="the result differs from the uninterrupted run"
    fi
    if [[ -z "$problem" ]]; then
        [[ -e "$dir/store~.sqlite" && "$(python3 "$SCRIPTS/store-digest.py" "$dir/store~.sqlite")" == "$ORIGINAL_DIGEST" ]] \
            || problem="the backup is missing or not the original"
    fi
    if [[ -z "$problem" ]]; then
        OK=$((OK + 1))
        printf '  %-7s %-8s %-36s after the kill: %-40s runs to finish %d  identical\n' "$mode" "$JOURNAL" "$label" "$state" "$runs"
        rm -rf "$dir"
    else
        FAILED+=("$mode $JOURNAL $label: $problem")
        printf '  %-7s %-8s %-36s FAILED: %s (kept: %s)\n' "$mode" "$JOURNAL" "$label" "$problem" "${dir#"$ROOT"/}"
    fi
}

for JOURNAL in $JOURNALS; do
for mode in $MODES; do
    setup_mode "$mode" "$JOURNAL"
    rm -rf "$WORK/$mode-reference"; mkdir -p "$WORK/$mode-reference"
    cp "$SRC" "$WORK/$mode-reference/store.sqlite"
    start=$(date +%s.%N)
    "$MOULT" migrate "$WORK/$mode-reference/store.sqlite" "${ARGS[@]}" --quiet >"$WORK/$mode-reference/log" 2>&1 \
        || { cat "$WORK/$mode-reference/log"; die "$mode: the uninterrupted staged run failed"; }
    wall=$(python3 -c "print(round($(date +%s.%N) - $start, 3))")
    REFERENCE_DIGEST=$(python3 "$SCRIPTS/store-digest.py" "$WORK/$mode-reference/store.sqlite")
    echo "staged-crash-harness: $mode ($JOURNAL journal): uninterrupted ${wall}s ($(head -n 1 "$WORK/$mode-reference/log" | head -c 120))"
    case "$mode" in
    fill) POINTS="inplace-backup-copied:1 staged-chunk-start:1 staged-before-commit:1 staged-after-commit:1 staged-before-commit:40 staged-after-commit:150 staged-phase:1 inplace-statement:1 inplace-before-commit:1 staged-phase:2 staged-finished:1" ;;
    dedupe) POINTS="inplace-backup-copied:1 staged-chunk-start:1 staged-before-commit:1 staged-after-commit:1 staged-before-commit:77 staged-after-commit:150 staged-phase:1 inplace-statement:1 inplace-before-commit:1 staged-phase:2 staged-finished:1" ;;
    people) POINTS="inplace-backup-copied:1 staged-phase:1 inplace-statement:1 inplace-before-commit:1 staged-phase:2 staged-before-commit:5 staged-after-commit:13 staged-phase:3 after-sqlite-commit:2 inplace-before-swap:1 inplace-after-swap:1 staged-before-commit:18 staged-after-commit:24 staged-phase:5 inplace-after-swap:2 staged-phase:7 inplace-before-swap:3 staged-finished:1" ;;
    esac
    require_fault_points "$POINTS"
    for point in $POINTS; do one_kill "$mode" "at $point" "" "$point"; done
    for k in $(seq 1 "$KILLS"); do
        delay=$(python3 -c "import random; random.seed($SEED * 1000 + $k + ${#mode}); print(round($wall * ($k - 1 + random.random()) / $KILLS, 4))")
        one_kill "$mode" "random kill $k after ${delay}s" "$delay" ""
    done
done
done

echo "staged-crash-harness: $TOTAL kill points, $OK ended identical to the uninterrupted run with the backup intact, ${#FAILED[@]} failed"
if [[ ${#FAILED[@]} -gt 0 ]]; then
    printf '  %s\n' "${FAILED[@]}"
    exit 1
fi
