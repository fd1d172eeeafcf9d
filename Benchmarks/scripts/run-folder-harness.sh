#!/usr/bin/env bash
# The random-kill harness over every way a run writes beside a store: a run killed (kill -9, or SIGTERM)
# at a random instant and run again until it exits 0 ends identical to a run never interrupted, keeps its
# backup whole, and leaves nothing beside the store but what an uninterrupted run leaves.
#
#     Benchmarks/scripts/run-folder-harness.sh [--kills K] [--seed S] [--objects N] [--paths "..."] [--binaries DIR]
#         defaults: 50 kills per path, seed 1, 4,000 persons, every path; the release build (--binaries:
#         DIR/moult and DIR/moult-people, not built)
#
# Paths (each from its own copy of one People v1 store, WAL mode, --chunk-size 200):
#   inplace4   in place, v1 -> v5: one step by SQL, three streamed (v2-to-v3, v3-to-v4, the built-in
#              uniquing policy of v4-to-v5), the original kept as NAME~.sqlite
#   inplace2   in place, v2 -> v4: two streamed steps (the store made v2 first)
#   output4    --output, v1 -> v5 (the same mappings): a chain of four steps into DEST
#   staged     --stages: People v1 -> v3 staged (lightweight v1 -> v2, then the v2 -> v3 mapping), backup kept
#   xml        in place on an XML store (v2 -> v3): the store converted to XML first
#   xmlout     an XML store to SQLite (--output --output-type sqlite, v2 -> v3), read directly
#   xmltoxml   an XML store to an XML DEST (--output, v2 -> v3)
#   external   in place on a store with external binary data (`Removed` v1 -> v2 of the external-binary-
#              storage fixture: the attribute stops allowing external storage, the files are inlined by
#              SQL and removed after the commit, the backup keeps its own support folder)
#   convert    convert SQLite -> XML, then that XML -> SQLite (each killed)
#   fleet      a fleet of 6 stores (v2 -> v3 into out/), one shard, run again after each kill
# Each kill is at a random instant within the uninterrupted run's wall time; odd kills are SIGKILL, even
# ones SIGTERM (the run must then end with 75, or 0 when it had finished). After each kill the same
# command is run until it exits 0 (at most 5 times). Compared with the uninterrupted run: every store's
# rows and metadata (store-digest.py, the UUID included but for DEST of a fresh run), the backup's
# digest with the original's, and the listing of the folder (names only; the run's own work folders and
# lock must be gone). Prints a line per kill and a summary; exits 1 on any failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KILLS=50 SEED=1 OBJECTS=4000 PATHS="inplace4 inplace2 output4 staged xml xmlout xmltoxml convert fleet external" BINARIES=""
while [[ $# -gt 0 ]]; do
    case "$1" in
    --kills) KILLS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --objects) OBJECTS=$2; shift 2 ;;
    --paths) PATHS=$2; shift 2 ;;
    --binaries) BINARIES=$2; shift 2 ;;
    -h | --help) sed -n '2,31p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
done
RANDOM=$SEED
if [[ -n "$BINARIES" ]]; then MOULT="$BINARIES/moult" MOULT_PEOPLE="$BINARIES/moult-people"; else build_moult; fi
make_work run-folder-harness
M=$MODEL
CHAIN=(--mapping "$MAPPINGS/v2-to-v3.json" --mapping "$MAPPINGS/v3-to-v4.json" --mapping "$ROOT/Datasets/People/BuiltinPolicy/v4-to-v5.json")
A=(--model "$M" --chunk-size 200 --quiet)

"$MOULT_PEOPLE" generate "$WORK/v1.sqlite" --model-version 1 --objects "$OBJECTS" --model "$M" >/dev/null
"$MOULT_PEOPLE" generate "$WORK/v2.sqlite" --model-version 2 --objects "$OBJECTS" --model "$M" >/dev/null
"$MOULT" convert "$WORK/v2.sqlite" --to xml --output "$WORK/v2.xml" --model "$M" >/dev/null
digest() { python3 "$SCRIPTS/store-digest.py" "$@"; }
xmldigest() { sha256sum <"$1" | cut -c1-64; }
# The external path's store: three rows naming files in its support folder, one inline value, one nil.
EXTERNAL_MODEL="$ROOT/Tests/Fixtures/regressions/fidelity/external-binary-storage/Removed.xcdatamodeld"
mkdir -p "$WORK/external-source"
"$MOULT" create "$WORK/external-source/s.sqlite" --model "$EXTERNAL_MODEL" --model-version v1 >/dev/null
python3 - "$WORK/external-source" <<'PY'
import os, random, sqlite3, sys, uuid
folder = sys.argv[1]
files = os.path.join(folder, ".s_SUPPORT", "_EXTERNAL_DATA")
os.makedirs(files, exist_ok=True)
random.seed(5)
db = sqlite3.connect(os.path.join(folder, "s.sqlite"))
for key in range(1, 41):
    if key % 10 == 0:
        value = bytes([1]) + b"inline"
    else:
        name = str(uuid.UUID(int=random.getrandbits(128))).upper()
        with open(os.path.join(files, name), "wb") as f:
            f.write(random.randbytes(2000 + 1000 * key))
        value = bytes([2]) + name.encode() + bytes([0])
    db.execute("INSERT INTO ZBLOB (Z_PK, Z_ENT, Z_OPT, ZDATA, ZX) VALUES (?, 1, 1, ?, ?)", (key, value, key))
db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 40 WHERE Z_NAME = 'Blob'")
db.commit()
PY

# setup PATH DIR: the path's input files in DIR. command PATH DIR: the command (an array in CMD).
setup() {
    local path=$1 dir=$2
    rm -rf "$dir"; mkdir -p "$dir"
    case "$path" in
    inplace4 | output4 | staged) cp "$WORK/v1.sqlite" "$dir/s.sqlite" ;;
    inplace2) cp "$WORK/v2.sqlite" "$dir/s.sqlite" ;;
    xml | xmlout | xmltoxml) cp "$WORK/v2.xml" "$dir/s.xml" ;;
    external) cp -a "$WORK/external-source/." "$dir/" ;;
    convert) cp "$WORK/v2.sqlite" "$dir/s.sqlite" ;;
    fleet)
        mkdir -p "$dir/in" "$dir/out"
        for i in 0 1 2 3 4 5; do
            cp "$WORK/v2.sqlite" "$dir/in/s$i.sqlite"
            echo "{\"store\": \"in/s$i.sqlite\", \"model\": \"$M\", \"to\": \"v3\", \"mappings\": [\"$MAPPINGS/v2-to-v3.json\"], \"output\": \"out/s$i.sqlite\"}"
        done >"$dir/fleet.jsonl" ;;
    esac
}
command_of() {
    local path=$1 dir=$2
    case "$path" in
    inplace4) CMD=("$MOULT_PEOPLE" migrate "$dir/s.sqlite" "${A[@]}" --to v5 "${CHAIN[@]}") ;;
    inplace2) CMD=("$MOULT_PEOPLE" migrate "$dir/s.sqlite" "${A[@]}" --to v4 --mapping "$MAPPINGS/v2-to-v3.json" --mapping "$MAPPINGS/v3-to-v4.json") ;;
    output4) CMD=("$MOULT_PEOPLE" migrate "$dir/s.sqlite" "${A[@]}" --to v5 "${CHAIN[@]}" --output "$dir/d.sqlite") ;;
    staged)
        echo "{\"stages\": [{\"lightweight\": [\"v1\", \"v2\"]}, {\"custom\": {\"from\": \"v2\", \"to\": \"v3\", \"mapping\": \"$MAPPINGS/v2-to-v3.json\"}}]}" >"$dir/stages.json"
        CMD=("$MOULT" migrate "$dir/s.sqlite" "${A[@]}" --stages "$dir/stages.json") ;;
    xml) CMD=("$MOULT" migrate "$dir/s.xml" "${A[@]}" --to v3 --mapping "$MAPPINGS/v2-to-v3.json") ;;
    xmlout) CMD=("$MOULT" migrate "$dir/s.xml" "${A[@]}" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" --output "$dir/d.sqlite" --output-type sqlite) ;;
    xmltoxml) CMD=("$MOULT" migrate "$dir/s.xml" "${A[@]}" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" --output "$dir/d.xml") ;;
    external) CMD=("$MOULT" migrate "$dir/s.sqlite" --model "$EXTERNAL_MODEL" --to v2 --chunk-size 200 --quiet) ;;
    convert) CMD=(sh -c "'$MOULT' convert '$dir/s.sqlite' --to xml --output '$dir/o.xml' --model '$M' >/dev/null && '$MOULT' convert '$dir/o.xml' --to sqlite --output '$dir/back.sqlite' --model '$M' >/dev/null") ;;
    fleet) CMD=(sh -c "cd '$dir' && '$MOULT' migrate --manifest fleet.jsonl --shard 0/1 --chunk-size 200 --quiet") ;;
    esac
}
# A convert chain is its own rerun only once its first file is there.
rerun_of() {
    local path=$1 dir=$2
    command_of "$path" "$dir"
    if [[ $path == convert && -e "$dir/o.xml" ]]; then
        CMD=(sh -c "'$MOULT' convert '$dir/o.xml' --to sqlite --output '$dir/back.sqlite' --model '$M' >/dev/null")
    fi
}
# state DIR: every file's digest (stores by rows, XML by bytes) and the listing of the folder.
state() {
    local dir=$1 f
    (cd "$dir" && find . -mindepth 1 -not -name 'fleet.jsonl.results.jsonl' -not -name stages.json | LC_ALL=C sort)
    while IFS= read -r f; do
        case "$f" in
        # (A store that cannot be read is a finding, named in the listing: the harness goes on.)
        *.sqlite) echo "$f $( (digest --ignore-uuid "$dir/$f" 2>/dev/null || echo unreadable) | sha256sum | cut -c1-16)" ;;
        *.xml) echo "$f $(grep -v -E 'NSStoreUUID|<database' "$dir/$f" | sha256sum | cut -c1-16)" ;;
        *_EXTERNAL_DATA/*) echo "$f $(sha256sum <"$dir/$f" | cut -c1-16)" ;;
        esac
    done < <(cd "$dir" && find . -type f \( -name '*.sqlite' -o -name '*.xml' -o -path '*_EXTERNAL_DATA/*' \) | LC_ALL=C sort)
}

FAILED=0 TOTAL=0
for path in $PATHS; do
    ref="$WORK/$path-reference"
    setup "$path" "$ref"
    command_of "$path" "$ref"
    start=$(date +%s.%N)
    "${CMD[@]}" >/dev/null 2>"$WORK/$path-reference.err" || die "$path: the uninterrupted run failed: $(tail -3 "$WORK/$path-reference.err")"
    wall=$(python3 -c "import time; print(max(0.05, time.time() - $start))")
    expected=$(state "$ref" | sed "s#$ref#DIR#g")
    printf '%s: uninterrupted run %.2f s\n' "$path" "$wall"
    ok=0
    for ((k = 1; k <= KILLS; k++)); do
        dir="$WORK/$path-run"
        setup "$path" "$dir"
        command_of "$path" "$dir"
        delay=$(python3 -c "import random; random.seed($SEED * 1000 + $k); print(round(random.uniform(0.0, $wall), 3))")
        signal=$([[ $((k % 2)) == 1 ]] && echo KILL || echo TERM)
        set +e
        "${CMD[@]}" >/dev/null 2>"$dir.err" &
        pid=$!
        sleep "$delay"
        if [[ $signal == KILL ]]; then pkill -KILL -P "$pid" 2>/dev/null; kill -KILL "$pid" 2>/dev/null; else pkill -TERM -P "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null; fi
        wait "$pid"; first=$?
        # (A child the kill missed, forked by `sh -c` just before it, goes on: its rerun would be busy, 73.
        # The harness waits for it, as a job runner waits for a job's processes.)
        for _ in $(seq 100); do pgrep -f "$dir/" >/dev/null || break; sleep 0.1; done
        # (A run that had finished before the kill is done: its rerun is not what is tested here.)
        runs=0 rc=$first
        while [[ $runs -lt 5 && $rc != 0 ]]; do
            rerun_of "$path" "$dir"
            "${CMD[@]}" >/dev/null 2>>"$dir.err"; rc=$?
            runs=$((runs + 1))
        done
        set -e
        TOTAL=$((TOTAL + 1))
        problem=""
        [[ $signal == TERM && $first != 0 && $first != 75 && $first != 143 ]] && problem="SIGTERM ended the run with $first"
        [[ $rc == 0 ]] || problem="the rerun exits $rc: $(tail -1 "$dir.err")"
        if [[ -z "$problem" ]]; then
            got=$(state "$dir" | sed "s#$dir#DIR#g")
            [[ "$got" == "$expected" ]] || problem="differs from the uninterrupted run: $(diff <(echo "$expected") <(echo "$got") | grep '^[<>]' | head -3 | tr '\n' ' ')"
        fi
        if [[ -z "$problem" ]]; then
            ok=$((ok + 1))
        else
            FAILED=$((FAILED + 1))
            printf '  %-9s kill %2d (%s at %s s, first exit %s): FAILED %s\n' "$path" "$k" "$signal" "$delay" "$first" "$problem"
        fi
    done
    echo "  $path: $ok/$KILLS identical to the uninterrupted run"
done
echo "run-folder harness: $((TOTAL - FAILED))/$TOTAL identical, $FAILED failed (seed $SEED, $OBJECTS persons)"
[[ $FAILED == 0 ]]
