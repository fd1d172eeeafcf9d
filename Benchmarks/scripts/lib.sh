# Shared helpers of the side-by-side scripts; sourced, never run.
#
# Every script runs from the repository root (wherever it is called from), builds the release
# `moult` once, and measures commands with `peakmem` (beside this file): peak RssAnon and peak total
# RSS of the whole process tree, sampled every 5 ms, and the wall time.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCRIPTS="$ROOT/Benchmarks/scripts"
PEAKMEM="$SCRIPTS/peakmem"
MODEL="$ROOT/Datasets/People/People.xcdatamodeld"
MAPPINGS="$ROOT/Datasets/People/Mappings"
MOULT="$ROOT/.build/release/moult"
# The People command (moult with the People policies, and the People generator).
MOULT_PEOPLE="$ROOT/.build/release/moult-people"
cd "$ROOT"

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

command -v sqlite3 >/dev/null || die "sqlite3 is missing (apt-get install sqlite3)"
command -v python3 >/dev/null || die "python3 is missing"

# Builds the release `moult` and `moult-people` once per script run (incremental when nothing changed).
build_moult() {
    if [[ -n "${MOULT_SKIP_BUILD:-}" && -x "$MOULT" && -x "$MOULT_PEOPLE" ]]; then return; fi
    echo "building: swift build -c release --product moult (and moult-people)" >&2
    swift build -c release --product moult >&2
    swift build -c release --product moult-people >&2
}

# A work folder for stores: $BENCH_WORK, or a fresh one under .build (ignored by git).
make_work() {
    local name=$1
    WORK=${BENCH_WORK:-$ROOT/.build/bench-work/$name}
    rm -rf "$WORK"
    mkdir -p "$WORK"
}

# measure COMMAND... : runs it under peakmem; sets WALL, ANON, TOTAL, RC. The command's stdout and
# stderr go to $WORK/last.out / $WORK/last.err. Fails (prints the command's stderr) unless the command
# exits 0, or the exit code given in $EXPECT_RC.
measure() {
    local err="$WORK/last.err"
    set +e
    "$PEAKMEM" --json -- "$@" >"$WORK/last.out" 2>"$err"
    RC=$?
    set -e
    local json
    # The figures are the last line peakmem prints; a progress display may share that line (\r).
    json=$(grep -o -E '\{"peak_rss_anon_mib"[^}]*\}' "$err" | tail -n 1 || true)
    [[ -n "$json" ]] || { cat "$err" >&2; die "peakmem printed no figures for: $*"; }
    read -r WALL ANON TOTAL CPU < <(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
print(d["wall_s"], d["peak_rss_anon_mib"], d["peak_rss_total_mib"], d.get("cpu_s", "-"))' "$json")
    if [[ "$RC" != "${EXPECT_RC:-0}" ]]; then
        echo "--- exit code $RC; stderr:" >&2
        tr '\r' '\n' <"$err" | grep -v -E '\{"peak_rss_anon_mib"' | tail -n 30 >&2
        die "failed: $*"
    fi
}

# Size of a store with its -wal/-shm files, in MiB.
store_mib() {
    local total=0 f
    for f in "$1" "$1-wal" "$1-shm"; do
        [[ -e "$f" ]] && total=$((total + $(stat -c %s "$f")))
    done
    python3 -c "print(round($total / 1048576, 1))"
}

# Number of objects in a Core Data store: rows of every entity table (Z* tables that are not Z_*).
count_objects() {
    local tables t total=0
    tables=$(sqlite3 "$1" "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'Z*' AND name NOT GLOB 'Z_*'")
    for t in $tables; do
        total=$((total + $(sqlite3 "$1" "SELECT count(*) FROM $t")))
    done
    echo "$total"
}

# Rows per second, one decimal.
# Fails unless every point of "$1" (names, or name:n) is one `moult fault-points` lists: the harnesses'
# kill points come from the binary's own list of fault points, never from a stale copy.
require_fault_points() {
    local known point
    known=$("$MOULT" fault-points)
    for point in $1; do
        grep -qx -- "${point%%:*}" <<<"$known" || die "no fault point named ${point%%:*} (moult fault-points lists them)"
    done
}

rate() { python3 -c "print(round($1 / max($2, 1e-9)))"; }

# a / b with two decimals.
ratio() { python3 -c "print(f'{$1 / max($2, 1e-9):.2f}')"; }

# A checksum of a store's content: every table except Z_METADATA's plist and sqlite_* tables, each
# dumped in primary-key order, plus Z_METADATA's plist decoded (the store UUID left out when
# IGNORE_UUID=1). Two stores with the same objects, keys, relationships and metadata give the same sum.
store_checksum() {
    python3 "$SCRIPTS/store-digest.py" "$1"
}

# same_entities A B: compares every entity table (Z* but not Z_*) of two stores and Z_PRIMARYKEY's
# Z_MAX, ignoring Z_OPT (a row's version counter, which two writers may start differently). Prints
# "same", or the first table that differs and how many rows differ.
same_entities() {
    local a=$1 b=$2 t columns diff
    for t in $(sqlite3 "$a" "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'Z*' AND name NOT GLOB 'Z_*' ORDER BY name") Z_PRIMARYKEY; do
        columns=$(sqlite3 "$a" "SELECT group_concat(name, ', ') FROM pragma_table_info('$t') WHERE name != 'Z_OPT'")
        diff=$(sqlite3 "file:$a?mode=ro" "ATTACH 'file:$b?mode=ro' AS b" \
            "SELECT (SELECT count(*) FROM (SELECT $columns FROM main.$t EXCEPT SELECT $columns FROM b.$t))
                  + (SELECT count(*) FROM (SELECT $columns FROM b.$t EXCEPT SELECT $columns FROM main.$t))" 2>&1) \
            || { echo "$t: $diff"; return; }
        [[ "$diff" == 0 ]] || { echo "$t: $diff rows differ"; return; }
    done
    echo same
}

# print_table TSV: the TSV as a Markdown table (for BENCHMARKS.md).
print_table() {
    python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1]), delimiter="\t"))
print("| " + " | ".join(rows[0]) + " |")
print("|" + "---|" * len(rows[0]))
for r in rows[1:]:
    print("| " + " | ".join(r) + " |")
PY
}
