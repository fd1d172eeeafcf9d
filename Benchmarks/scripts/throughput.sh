#!/usr/bin/env bash
# Issue 13's table: every People step side by side with its SQL floor, written into BENCHMARKS.md.
#
#     Benchmarks/scripts/throughput.sh [SIZES...]        # default: 1000000
#
# Runs people-scale.sh with every step (v1-v3: one command, inferred directly; v1-v3-chain: two
# steps, v1 -> v2 inferred and the given v2 -> v3; v2-v3, v3-v4, v4-v5) and three tools, one after the
# other on the same generated store: the SQL floor, moult as it was before the last change measured
# (BEFORE_TOOL, default moult-lmdb-write-all: every association written and every step streamed,
# migrate --write-all-associations --stream-every-step; moult-lmdb-keep-links writes both sides of
# a relationship; moult-lmdb-per-object is the engine before stage 2's set operations)
# and moult as it is, both with LMDB associations and chunks of 10,000. Each moult destination is
# checked to hold the floor's rows. Then it replaces the table between the `throughput-table` markers
# in BENCHMARKS.md with, for every size of the TSV:
#   throughput ratio = floor time / moult time (issue 13's figure: 1.0 = the floor's pace), by CPU time
#   (user + system: what a loaded machine moves least) and by wall time,
#   peak RssAnon of each run, and whether the destination is the floor's.
# The raw rows are in Benchmarks/results/<date>-throughput.tsv. APPEND=1 adds a size to today's TSV
# (e.g. `APPEND=1 TOOLS="sql-floor moult-lmdb" throughput.sh 10000000`: a 10M run without "before").
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(1000000)
NAME=${RESULTS_NAME:-$(date -u +%F)-throughput}
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD)  # the engine measured (the build is of the tree as it is)
BEFORE_TOOL=${BEFORE_TOOL:-moult-lmdb-write-all}
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)  # the machine's load, written beside the figures
SCENARIOS=${SCENARIOS:-"v1-v3 v1-v3-chain v2-v3 v3-v4 v4-v5"} TOOLS=${TOOLS:-"sql-floor $BEFORE_TOOL moult-lmdb"} RESULTS_NAME=$NAME \
    "$ROOT/Benchmarks/scripts/people-scale.sh" "${SIZES[@]}"
TSV="$ROOT/Benchmarks/results/$NAME.tsv"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$TSV" "$ROOT/BENCHMARKS.md" "$COMMIT" "$BEFORE_TOOL" "$LOAD_BEFORE" "$LOAD_AFTER" "$(nproc)" <<'PY'
import csv, sys, datetime
tsv, md, commit, before_tool, load_before, load_after, cores = sys.argv[1:8]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
runs = {}
for r in rows:
    runs.setdefault((r["scenario"], r["size"]), {})[r["tool"]] = r
sizes = " ".join(sorted({size for _, size in runs}, key=int))
lines = [
    f"Run ending {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC at {commit}: "
    f"`Benchmarks/scripts/throughput.sh` for {sizes} persons ([TSV](Benchmarks/results/{tsv.rsplit('/', 1)[1]})); "
    f"\"before\" is `{before_tool}`. The machine: {cores} cores, load average (1, 5, 15 min) {load_before} at the start "
    f"and {load_after} at the end.",
    "",
    "| step | persons | floor CPU s (wall) | before CPU s (wall) | moult CPU s (wall) | CPU ratio before | **CPU ratio now** | wall ratio now | peak RssAnon MiB (floor / before / now) | destination MiB (floor / now) | same as floor |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
]
labels = {"v1-v3": "v1 → v3 (one step, inferred directly)", "v1-v3-chain": "v1 → v2 → v3 (inferred + given, two steps)"}
def figure(run, key):
    value = run.get(key, "-") if run else "-"
    return None if value in ("-", "", None) else float(value)
for (scenario, size), tools in runs.items():
    floor, before, now = tools.get("sql-floor"), tools.get(before_tool), tools.get("moult-lmdb")
    if not (floor and now):
        continue
    fc, fw, nc, nw = figure(floor, "cpu_s"), figure(floor, "wall_s"), figure(now, "cpu_s"), figure(now, "wall_s")
    bc, bw = figure(before, "cpu_s"), figure(before, "wall_s")
    cell = lambda c, w: "-" if w is None else (f"{c:.2f} ({w:.2f})" if c is not None else f"- ({w:.2f})")
    ratio = lambda a, b: f"{a / b:.2f}" if a is not None and b else "-"
    checks = [r["same_as_floor"] for r in (before, now) if r]
    same = "yes" if all(c == "same" for c in checks) else f"no ({'; '.join(checks)})"
    memory = f"{floor['peak_anon_mib']} / {before['peak_anon_mib'] if before else '-'} / {now['peak_anon_mib']}"
    lines.append(
        f"| {labels.get(scenario, scenario.replace('-', ' → '))} | {int(size):,} | {cell(fc, fw)} | {cell(bc, bw)} | {cell(nc, nw)} | {ratio(fc, bc)} | "
        f"**{ratio(fc, nc)}** | {ratio(fw, nw)} | {memory} | {floor.get('dest_mib', '-')} / {now.get('dest_mib', '-')} | {same} |")
text = open(md).read()
start, end = "<!-- throughput-table -->", "<!-- /throughput-table -->"
head, rest = text.split(start, 1)
_, tail = rest.split(end, 1)
open(md, "w").write(head + start + "\n" + "\n".join(lines) + "\n" + end + tail)
print("\n".join(lines))
PY
