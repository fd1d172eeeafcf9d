#!/usr/bin/env bash
# The crash harness for in-place migrations (`moult migrate STORE` without --output): a run killed at
# any instant leaves the store at its old version, intact, or at a later version, whole; run again, it
# ends identical to a run never interrupted; the NAME~.EXT backup is never lost.
#
#     Benchmarks/scripts/inplace-crash-harness.sh [--kills K] [--seed S] [--modes "sql rebuild swap chain deferred kinds triggers"]
#         [--journal "rollback wal"] [--binaries DIR]
#         defaults: 24 random kill points per mode, seed 1, every mode, each store in WAL mode then in
#         rollback-journal mode; the release build (--binaries: DIR/moult and DIR/moult-people, not built)
#
# Modes (each on its own store):
#   sql      People v1 -> v2 (two ADD COLUMN), 20,000 persons, backup kept
#   rebuild  Widening v1 -> v2 (Integer 32 -> Double: the table is rebuilt), 300,000 readings, backup kept
#   swap     People v2 -> v3 with its mapping model (streamed into the work folder, then swapped), 20,000
#   chain    People v1 -> v3: an SQL step then a streamed one, 20,000 persons
#   deferred Cleanup v1 -> v2 (Tests/InPlaceModels) with --defer-cleanup, then `moult finish` (killed too:
#            named points inplace-cleanup-statement:n), 200,000 items
#   kinds    Kinds v1 -> v2 (models/Kinds.xcdatamodeld), by SQL: a to-many made ordered, a to-many made
#            to-one, Integer 32 -> a required Decimal with a default (1 book in 17 has nil), a removed sub-entity whose objects links reach, a derived
#            count's triggers dropped and made again; 200,000 books, 20,000 shelves (Z_ENT 2 Shelf, 3 the
#            removed Crate: 16,000 of them), 20,000 tags. Named points inplace-change-<kind>:n before
#            each change of a kind; an R-tree index on Book.sold (Z_Book_bySold) dropped and made again
#   triggers People v1 -> v2, 20,000 persons, with an application's trigger on ZPERSON (Photos-like
#            ZT_): dropped around the change and made again (named point inplace-foreign-triggers)
# For each mode: an uninterrupted in-place run on a copy is the reference. Then K kills at random instants
# (the k-th in the k-th of K slices of the reference's wall time) and one kill at each named point
# (MOULT_FAULT=<point>:<n>). After each kill: PRAGMA integrity_check is ok; the store's entity hashes are
# those of the old version or a later one; at the old version its digest is the original's. Then the
# same command is run again until it exits 0: the store's digest must equal the reference's, and the
# backup's (when kept) the original's. Prints one line per kill point and a summary; exits 1 on any failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KILLS=24 SEED=1 MODES="sql rebuild swap chain deferred kinds triggers" JOURNALS="wal rollback" BINARIES=""
while [[ $# -gt 0 ]]; do
    case "$1" in
    --kills) KILLS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --journal) JOURNALS=$2; shift 2 ;;
    --binaries) BINARIES=$2; shift 2 ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
RANDOM=$SEED
WIDENING="$SCRIPTS/models/Widening.xcdatamodeld"
CLEANUP="$ROOT/Tests/InPlaceModels/Cleanup.xcdatamodeld"
KINDS="$SCRIPTS/models/Kinds.xcdatamodeld"

if [[ -n "$BINARIES" ]]; then
    MOULT="$BINARIES/moult" MOULT_PEOPLE="$BINARIES/moult-people"
else
    build_moult
fi
make_work inplace-crash-harness

# hashes STORE: the entity version hashes recorded in the store's metadata, one line per entity.
hashes() {
    python3 - "$1" <<'EOF'
import plistlib, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
plist = plistlib.loads(db.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()[0])
for name, value in sorted(plist["NSStoreModelVersionHashes"].items()):
    print(name, value.hex())
EOF
}

# Per mode and journal mode: SRC (the original), ARGS (migrate's arguments after the store), VERSIONS (old first).
setup_mode() {
    local mode=$1
    rm -f "$WORK/$mode-original.sqlite" "$WORK/$mode-original.sqlite-wal" "$WORK/$mode-original.sqlite-shm"
    case "$mode" in
    sql | chain | triggers)
        "$MOULT_PEOPLE" generate --model-version 1 --objects 20000 --seed "$SEED" "$WORK/$mode-original.sqlite" >/dev/null
        if [[ "$mode" == triggers ]]; then
            sqlite3 "$WORK/$mode-original.sqlite" "CREATE TRIGGER ZT_ZPERSON_ZNAME_UPDATE AFTER UPDATE OF ZNAME ON ZPERSON
                BEGIN UPDATE ZPERSON SET Z_OPT = Z_OPT + 1 WHERE Z_PK = NEW.Z_PK; END"
            ARGS=(--model "$MODEL" --to v2)
        elif [[ "$mode" == sql ]]; then
            ARGS=(--model "$MODEL" --to v2)
        else
            ARGS=(--model "$MODEL" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" --chunk-size 2000)
        fi ;;
    swap)
        "$MOULT_PEOPLE" generate --model-version 2 --objects 20000 --seed "$SEED" "$WORK/$mode-original.sqlite" >/dev/null
        ARGS=(--model "$MODEL" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" --chunk-size 2000) ;;
    rebuild)
        "$MOULT" create "$WORK/$mode-original.sqlite" --model "$WIDENING/v1.xcdatamodel" >/dev/null
        sqlite3 "$WORK/$mode-original.sqlite" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
            INSERT INTO ZREADING (Z_PK, Z_ENT, Z_OPT, ZSENSOR, ZSEQUENCE, ZVALUE)
            SELECT i, 1, 1, 'sensor-' || (i % 97), i, (i * 7919) % 100003 - 50000 FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 300000 WHERE Z_ENT = 1;" >/dev/null
        ARGS=(--model "$WIDENING") ;;
    deferred)
        "$MOULT" create "$WORK/$mode-original.sqlite" --model "$CLEANUP/v1.xcdatamodel" >/dev/null
        sqlite3 "$WORK/$mode-original.sqlite" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZOBSOLETE) SELECT i, 1, 1, 'item-' || i, 'old-' || (i % 13) FROM n;
            INSERT INTO ZRETIRED (Z_PK, Z_ENT, Z_OPT, ZNOTE) VALUES (1, 2, 1, 'gone');
            UPDATE Z_PRIMARYKEY SET Z_MAX = 200000 WHERE Z_ENT = 1; UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = 2;" >/dev/null
        ARGS=(--model "$CLEANUP" --defer-cleanup) ;;
    kinds)
        "$MOULT" create "$WORK/$mode-original.sqlite" --model "$KINDS/v1.xcdatamodel" >/dev/null
        # The derived count's triggers call Core Data's functions, which the sqlite3 shell lacks: they
        # are set aside while the rows go in, the counts computed, and the triggers put back.
        local triggers
        triggers=$(sqlite3 "$WORK/$mode-original.sqlite" "SELECT sql || ';' FROM sqlite_master WHERE type = 'trigger'")
        sqlite3 "$WORK/$mode-original.sqlite" "SELECT 'DROP TRIGGER ' || name || ';' FROM sqlite_master WHERE type = 'trigger'" \
            | sqlite3 "$WORK/$mode-original.sqlite"
        sqlite3 "$WORK/$mode-original.sqlite" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
            INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZSOLD, ZSHELF, Z2_SHELF, ZTITLE)
            SELECT i, 1, 1, CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7919) % 100003 END, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 13) % 20000 + 1 END,
                CASE WHEN i % 11 = 0 THEN NULL WHEN ((i * 13) % 20000 + 1) % 5 = 0 THEN 2 ELSE 3 END, 'book-' || i FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
            INSERT INTO ZSHELF (Z_PK, Z_ENT, Z_OPT, ZDEPTH, ZNAME) SELECT i, CASE WHEN i % 5 = 0 THEN 2 ELSE 3 END, 1,
                CASE WHEN i % 5 = 0 THEN i % 7 END, 'shelf-' || i FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
            INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, Z1TAGS, ZLABEL) SELECT i, 4, 1, CASE WHEN i % 3 = 0 THEN NULL ELSE (i * 31) % 5000 + 1 END, 'tag-' || i FROM n;
            UPDATE ZSHELF SET ZBOOKCOUNT = (SELECT COUNT(*) FROM ZBOOK WHERE ZBOOK.ZSHELF = ZSHELF.Z_PK);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 200000 WHERE Z_ENT = 1; UPDATE Z_PRIMARYKEY SET Z_MAX = 20000 WHERE Z_ENT IN (2, 4);" >/dev/null
        sqlite3 "$WORK/$mode-original.sqlite" "$triggers"
        sqlite3 "$WORK/$mode-original.sqlite" "INSERT INTO Z_Book_bySold (Z_PK, ZSOLD_MIN, ZSOLD_MAX) SELECT Z_PK, ZSOLD, ZSOLD FROM ZBOOK" >/dev/null
        ARGS=(--model "$KINDS") ;;
    esac
    SRC="$WORK/$mode-original.sqlite"
    sqlite3 "$SRC" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
    # The store's journal mode, recorded in its header: what every copy of it opens in.
    case "$2" in
    wal) sqlite3 "$SRC" "PRAGMA journal_mode = WAL" >/dev/null ;;
    rollback) sqlite3 "$SRC" "PRAGMA journal_mode = DELETE" >/dev/null ;;
    *) die "unknown journal mode: $2 (wal or rollback)" ;;
    esac
    ORIGINAL_DIGEST=$(python3 "$SCRIPTS/store-digest.py" "$SRC")
    OLD_HASHES=$(hashes "$SRC")
}

TOTAL=0 OK=0 FAILED=()

# one_kill MODE LABEL DELAY FAULT: copies the original, runs in place (killed after DELAY seconds, or
# at FAULT), checks the store, runs again until done, compares.
one_kill() {
    local mode=$1 label=$2 delay=$3 fault=$4
    local dir="$WORK/$mode-$journal-$TOTAL"
    TOTAL=$((TOTAL + 1))
    rm -rf "$dir"; mkdir -p "$dir"
    cp "$SRC" "$dir/store.sqlite"
    local rc=0
    if [[ -n "$fault" ]]; then
        MOULT_FAULT=$fault "$MOULT" migrate "$dir/store.sqlite" "${ARGS[@]}" --quiet >"$dir/log" 2>&1 || rc=$?
    elif [[ -z "$delay" ]]; then
        "$MOULT" migrate "$dir/store.sqlite" "${ARGS[@]}" --quiet >"$dir/log" 2>&1 || rc=$?
    else
        "$MOULT" migrate "$dir/store.sqlite" "${ARGS[@]}" --quiet >"$dir/log" 2>&1 &
        local pid=$!
        sleep "$delay"
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || rc=$?
    fi
    local state problem=""
    local check
    # A rollback-journal store killed mid-transaction has a hot journal, which only a read-write
    # connection can roll back (as any next open does); a read-only one fails on it.
    local uri="file:$dir/store.sqlite?mode=ro"
    [[ -e "$dir/store.sqlite-journal" ]] && uri="$dir/store.sqlite"
    check=$(sqlite3 "$uri" "PRAGMA integrity_check" 2>&1 || true)
    [[ "$check" == ok ]] || problem="integrity_check after the kill: $check"
    if [[ -z "$problem" && "$(hashes "$dir/store.sqlite")" == "$OLD_HASHES" ]]; then
        state="old"
        [[ "$(python3 "$SCRIPTS/store-digest.py" "$dir/store.sqlite")" == "$ORIGINAL_DIGEST" ]] || problem="at the old version but changed"
    else
        state="later"
    fi
    [[ "$rc" == 0 ]] && state="$state, run had finished"
    local runs=0
    while [[ -z "$problem" ]]; do
        runs=$((runs + 1))
        [[ $runs -le 5 ]] || { problem="not done after 5 runs"; break; }
        if "$MOULT" migrate "$dir/store.sqlite" "${ARGS[@]}" --quiet >>"$dir/log" 2>&1; then break; fi
    done
    if [[ -z "$problem" && "$mode" == deferred ]]; then
        # The clean-up, killed at FINISH_FAULT when given, then run until it exits 0.
        [[ -n "${FINISH_FAULT:-}" ]] && { MOULT_FAULT=$FINISH_FAULT "$MOULT" finish "$dir/store.sqlite" --model "$CLEANUP" >>"$dir/log" 2>&1 || true; }
        check=$(sqlite3 "file:$dir/store.sqlite?mode=ro" "PRAGMA integrity_check" 2>&1 || true)
        [[ "$check" == ok ]] || problem="integrity_check after the killed finish: $check"
        [[ -n "$problem" ]] || "$MOULT" finish "$dir/store.sqlite" --model "$CLEANUP" >>"$dir/log" 2>&1 || problem="finish failed"
    fi
    if [[ -z "$problem" ]]; then
        [[ "$(python3 "$SCRIPTS/store-digest.py" "$dir/store.sqlite")" == "$REFERENCE_DIGEST" ]] || problem="the result differs from the uninterrupted run"
    fi
    if [[ -z "$problem" ]]; then
        [[ -e "$dir/store~.sqlite" && "$(python3 "$SCRIPTS/store-digest.py" "$dir/store~.sqlite")" == "$ORIGINAL_DIGEST" ]] \
            || problem="the backup is missing or not the original"
    fi
    if [[ -z "$problem" ]]; then
        OK=$((OK + 1))
        printf '  %-8s %-8s %-34s after the kill: %-24s runs to finish %d  identical\n' "$mode" "$journal" "$label" "$state" "$runs"
        rm -rf "$dir"
    else
        FAILED+=("$mode ($journal) $label: $problem")
        printf '  %-8s %-8s %-34s FAILED: %s (kept: %s)\n' "$mode" "$journal" "$label" "$problem" "${dir#"$ROOT"/}"
    fi
}

for journal in $JOURNALS; do
for mode in $MODES; do
    setup_mode "$mode" "$journal"
    rm -rf "$WORK/$mode-reference"; mkdir -p "$WORK/$mode-reference"
    cp "$SRC" "$WORK/$mode-reference/store.sqlite"
    start=$(date +%s.%N)
    "$MOULT" migrate "$WORK/$mode-reference/store.sqlite" "${ARGS[@]}" --quiet >"$WORK/$mode-reference/log" 2>&1 \
        || { cat "$WORK/$mode-reference/log"; die "$mode: the uninterrupted in-place run failed"; }
    if [[ "$mode" == deferred ]]; then
        "$MOULT" finish "$WORK/$mode-reference/store.sqlite" --model "$CLEANUP" >>"$WORK/$mode-reference/log" 2>&1 || die "deferred: finish failed"
    fi
    wall=$(python3 -c "print(round($(date +%s.%N) - $start, 3))")
    REFERENCE_DIGEST=$(python3 "$SCRIPTS/store-digest.py" "$WORK/$mode-reference/store.sqlite")
    echo "inplace-crash-harness: $mode ($journal journal): uninterrupted in place ${wall}s ($(tail -n 1 "$WORK/$mode-reference/log" | head -c 120))"
    case "$mode" in
    sql) POINTS="inplace-backup-copied:1 inplace-statement:1 inplace-statement:2 inplace-statement:3 inplace-statement:5 inplace-statement:8 inplace-before-commit:1" ;;
    rebuild) POINTS="inplace-backup-copied:1 inplace-statement:1 inplace-statement:2 inplace-statement:3 inplace-statement:4 inplace-statement:6 inplace-before-commit:1" ;;
    swap) POINTS="chunk-start:1 after-rows:2 after-lmdb-commit:3 after-sqlite-commit:5 before-finish:1 after-marker:1 after-rename:1 inplace-before-swap:1 inplace-after-swap:1" ;;
    chain) POINTS="chain-step-copied:1 inplace-statement:2 inplace-before-commit:1 chain-step-migrated:1 chunk-start:1 after-sqlite-commit:4 after-marker:1 after-rename:1 inplace-before-swap:1 inplace-after-swap:1" ;;
    deferred) POINTS="inplace-backup-copied:1 inplace-statement:1 inplace-statement:2 inplace-before-commit:1" ;;
    triggers) POINTS="inplace-backup-copied:1 inplace-statement:1 inplace-statement:3 inplace-foreign-triggers:1 inplace-before-commit:1" ;;
    kinds) POINTS="inplace-backup-copied:1 inplace-change-dropTriggers:1 inplace-change-rebuildTable:1 inplace-change-rebuildTable:2
        inplace-change-rebuildTable:3 inplace-change-dropTable:2 inplace-change-renameTable:3 inplace-change-createIndex:2
        inplace-change-primaryKeys:1 inplace-change-computeDerived:1 inplace-change-createTriggers:1 inplace-statement:9 inplace-before-commit:1
        inplace-change-dropTable:1 inplace-change-createTable:1 inplace-change-createTriggers:2" ;;
    esac
    require_fault_points "$POINTS"
    for point in $POINTS; do one_kill "$mode" "at $point" "" "$point"; done
    if [[ "$mode" == deferred ]]; then
        for point in inplace-cleanup-statement:1 inplace-cleanup-statement:2 inplace-cleanup-statement:3; do
            FINISH_FAULT=$point one_kill "$mode" "finish at $point" "" ""
        done
    fi
    for k in $(seq 1 "$KILLS"); do
        delay=$(python3 -c "import random; random.seed($SEED * 1000 + $k + ${#mode}); print(round($wall * ($k - 1 + random.random()) / $KILLS, 4))")
        one_kill "$mode" "random kill $k after ${delay}s" "$delay" ""
    done
done
done

echo "inplace-crash-harness: $TOTAL kill points, $OK ended identical to the uninterrupted run with the backup intact, ${#FAILED[@]} failed"
if [[ ${#FAILED[@]} -gt 0 ]]; then
    printf '  %s\n' "${FAILED[@]}"
    exit 1
fi
