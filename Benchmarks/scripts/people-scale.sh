#!/usr/bin/env bash
# People migrations at scale, side by side in one run: moult with the LMDB association table, moult
# with the in-memory one, and the SQL floor (the sqlite3 shell doing the same mapping by hand).
#
#     Benchmarks/scripts/people-scale.sh [SIZES...]      # default: 100000 1000000 (10000000 allowed)
#
# For each size N (persons):
#   v1->v3   generate a v1 store (seed 1); moult migrate --to v3 (v1 -> v2 -> v3); floor: floor/v1-to-v3.sql
#   v2->v3   generate a v2 store; the address split with Mappings/v2-to-v3.json;   floor: floor/v2-to-v3.sql
#   v3->v4   generate a v3 store; the Adult/Child split with Mappings/v3-to-v4.json; floor: floor/v3-to-v4.sql
#   v4->v5   generate a v4 store; unique companies and schools with BuiltinPolicy/v4-to-v5.json;
#            floor: floor/v4-to-v5.sql
# every run with --chunk-size 10000, measured by peakmem (peak RssAnon and total RSS of the process
# tree, wall time). The floor's destination is made by `moult create` (inside the measured command).
#
# Output: a table on stdout and Benchmarks/results/<date>-people-scale.tsv with the columns
#   scenario size tool objects objects_per_s wall_s peak_anon_mib peak_total_mib dest_mib vs_floor same_as_floor
# where objects counts the source's objects (rows of every entity table), vs_floor is moult's wall
# time over the floor's in the same run (how many times slower than sqlite3 alone), and same_as_floor
# says whether moult's destination holds the floor's rows (every entity table and Z_MAX, Z_OPT aside).
# Environment: BENCH_WORK (work folder; default .build/bench-work/people-scale), MOULT_SKIP_BUILD=1,
# RESULTS_NAME (the TSV's name under Benchmarks/results, default <date>-people-scale), APPEND=1 (add rows to today's TSV instead of starting it again, e.g. a 10M run after the others),
# CHUNK_SIZE (default 10000), SCENARIOS (default "v1-v3 v2-v3 v3-v4"; v4-v5 also), TOOLS (default
# "sql-floor moult-lmdb moult-memory"; also moult-lmdb-per-object: LMDB with stage 2 forced object by
# object, --per-object-stage2, the engine before its set operations; moult-lmdb-keep-links: LMDB
# with both sides of a relationship written, --keep-repeated-links, the engine before RepeatedLinks;
# moult-lmdb-keep-order: LMDB with the create passes in the mappings' order, --keep-pass-order;
# moult-lmdb-write-all: LMDB with every association written and every step of a chain streamed,
# --write-all-associations --stream-every-step; moult-lmdb-unique-per-object: LMDB with the built-in
# uniquing policy object by object, --unique-per-object, the engine before its set operations).
# SCENARIOS may also name v1-v3-chain:
# v1 -> v3 in two steps, v1 -> v2 inferred and the given Mappings/v2-to-v3.json (floor: v1-to-v3.sql).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(100000 1000000)
CHUNK_SIZE=${CHUNK_SIZE:-10000}
SCENARIOS=${SCENARIOS:-"v1-v3 v2-v3 v3-v4"}
TOOLS=${TOOLS:-"sql-floor moult-lmdb moult-memory"}
for n in "${SIZES[@]}"; do [[ "$n" =~ ^[0-9]+$ ]] || die "not a size: $n"; done

build_moult
make_work people-scale
mkdir -p "$ROOT/Benchmarks/results"
RESULTS="$ROOT/Benchmarks/results/${RESULTS_NAME:-$(date -u +%F)-people-scale}.tsv"
HEADER="scenario	size	tool	objects	objects_per_s	wall_s	peak_anon_mib	peak_total_mib	dest_mib	vs_floor	same_as_floor	cpu_s"
if [[ -n "${APPEND:-}" && -s "$RESULTS" ]]; then
    [[ "$(head -n 1 "$RESULTS")" == "$HEADER" ]] || die "$RESULTS has other columns: cannot append"
else
    echo "$HEADER" >"$RESULTS"
    : >"$RESULTS.txt"
fi
{
    echo "# $(date -u '+%F %T') UTC, $(nproc) cores, $(uname -srm), $(git -C "$ROOT" rev-parse --short HEAD)"
    echo "# Benchmarks/scripts/people-scale.sh ${SIZES[*]}  (CHUNK_SIZE=$CHUNK_SIZE SCENARIOS=\"$SCENARIOS\" TOOLS=\"$TOOLS\")"
} >>"$RESULTS.txt"

# generate VERSION N STORE
generate() {
    rm -f "$3" "$3-wal" "$3-shm"
    echo "generate: moult-people generate --model-version $1 --objects $2 --seed 1 $(basename "$3")" >&2
    "$MOULT_PEOPLE" generate --model-version "$1" --objects "$2" --seed 1 "$3" >/dev/null
}

# set_command SCENARIO TOOL SRC DEST: sets CMD, the measured command.
# moult's v1 -> v3 is one command when `moult plan --to v3` accepts the two steps; otherwise two
# commands (v1 -> v2, then v2 -> v3) run by one bash, so that peakmem measures both and sums their time.
# The floor: a new destination by `moult create`, then the hand-written SQL with the source attached.
set_command() {
    local scenario=$1 tool=$2 src=$3 dest=$4 steps=${1%-chain}
    local to=${steps#*-}
    case "$tool" in
    sql-floor)
        local sql="$SCRIPTS/floor/${steps%-*}-to-$to.sql"
        CMD=(bash -c 'set -e; "$1" create "$3" --model "$2" --model-version "$4" >/dev/null; sqlite3 -bail "$3" -cmd "ATTACH '"'"'$5'"'"' AS src" <"$6"' \
            floor "$MOULT" "$MODEL" "$dest" "$to" "$src" "$sql")
        return ;;
    moult-lmdb | moult-memory | moult-lmdb-per-object | moult-lmdb-keep-links | moult-lmdb-keep-order | moult-lmdb-write-all | moult-lmdb-unique-per-object) ;;
    *) die "unknown tool: $tool" ;;
    esac
    local storage=${tool#moult-}
    storage=${storage%-unique-per-object}
    storage=${storage%-per-object}
    storage=${storage%-keep-links}
    storage=${storage%-write-all}
    local options=(--chunk-size "$CHUNK_SIZE" --association "${storage%-keep-order}")
    local moult=("$MOULT")
    # The engine's other paths, by hidden options of `migrate` (every scenario passes "${options[@]}").
    [[ "$tool" != *-per-object || "$tool" == *-unique-per-object ]] || options+=(--per-object-stage2)
    [[ "$tool" != *-keep-links ]] || options+=(--keep-repeated-links)
    [[ "$tool" != *-keep-order ]] || options+=(--keep-pass-order)
    [[ "$tool" != *-write-all ]] || options+=(--write-all-associations --stream-every-step)
    [[ "$tool" != *-unique-per-object ]] || options+=(--unique-per-object)
    case "$scenario" in
    v1-v3)
        if "$MOULT" plan "$src" --model "$MODEL" --to v3 >/dev/null 2>&1; then
            CMD=("${moult[@]}" migrate "$src" --model "$MODEL" --to v3 --output "$dest" "${options[@]}")
        else
            CMD=(bash -c "$(cat <<'SH'
set -e
moult=$1 src=$2 model=$3 dest=$4; shift 4
mid="$dest.v2.sqlite"; rm -f "$mid"
"$moult" migrate "$src" --model "$model" --to v2 --output "$mid" "$@"
"$moult" migrate "$mid" --model "$model" --to v3 --output "$dest" "$@"
rm -f "$mid"
SH
)" two-steps "$MOULT" "$src" "$MODEL" "$dest" "${options[@]}")
        fi ;;
    # Two steps, as the issue's "inferred + given": v1 -> v2 inferred, then the given v2 -> v3 mapping.
    v1-v3-chain) CMD=("${moult[@]}" migrate "$src" --model "$MODEL" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" --output "$dest" "${options[@]}") ;;
    v2-v3) CMD=("${moult[@]}" migrate "$src" --model "$MODEL" --to v3 --mapping "$MAPPINGS/v2-to-v3.json" --output "$dest" "${options[@]}") ;;
    v3-v4) CMD=("${moult[@]}" migrate "$src" --model "$MODEL" --to v4 --mapping "$MAPPINGS/v3-to-v4.json" --output "$dest" "${options[@]}") ;;
    v4-v5) CMD=("${moult[@]}" migrate "$src" --model "$MODEL" --to v5 --mapping "$MAPPINGS/../BuiltinPolicy/v4-to-v5.json" --output "$dest" "${options[@]}") ;;
    *) die "unknown scenario: $scenario" ;;
    esac
}

declare -A FLOOR_WALL
row() {
    local line="$1"
    echo "$line" >>"$RESULTS"
    echo "$line" | tr '\t' ' ' >&2
}

for n in "${SIZES[@]}"; do
    for scenario in $SCENARIOS; do
        from=${scenario%%-*}
        src="$WORK/$scenario-$n-source.sqlite"
        generate "${from#v}" "$n" "$src"
        sha_before=$(sha256sum "$src" | cut -d' ' -f1)
        objects=$(count_objects "$src")
        for tool in $TOOLS; do
            dest="$WORK/$scenario-$n-$tool.sqlite"
            rm -rf "$dest" "$dest-wal" "$dest-shm" "$dest.v2.sqlite"*
            set_command "$scenario" "$tool" "$src" "$dest"
            printf '%s\n' "run: ${CMD[*]}" >>"$RESULTS.txt"
            measure "${CMD[@]}"
            dest_mib=$(store_mib "$dest")
            floor_dest="$WORK/$scenario-$n-sql-floor.sqlite"
            if [[ "$tool" == sql-floor ]]; then
                FLOOR_WALL[$scenario-$n]=$WALL
                vs="1.00" same="-"
            elif [[ -n "${FLOOR_WALL[$scenario-$n]:-}" ]]; then
                vs=$(ratio "$WALL" "${FLOOR_WALL[$scenario-$n]}")
                same=$(same_entities "$dest" "$floor_dest")
            else
                vs="-" same="-"
            fi
            row "$scenario	$n	$tool	$objects	$(rate "$objects" "$WALL")	$WALL	$ANON	$TOTAL	$dest_mib	$vs	$same	$CPU"
            # Keep only what the next runs need: the disk holds 10M-object stores.
            [[ "$tool" == sql-floor ]] || rm -f "$dest"* 2>/dev/null || true
        done
        [[ "$(sha256sum "$src" | cut -d' ' -f1)" == "$sha_before" ]] || die "the source changed: $src"
        rm -f "$src" "$src-wal" "$src-shm" "$WORK/$scenario-$n-sql-floor.sqlite"*
    done
done

echo
echo "Results: ${RESULTS#"$ROOT"/}"
print_table "$RESULTS"
