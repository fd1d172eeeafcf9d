#!/usr/bin/env bash
# Issue 13's table: every People step side by side with its SQL floor, written into BENCHMARKS.md.
#
#     Benchmarks/scripts/throughput.sh [SIZES...]        # default: 1000000
#
# Runs people-scale.sh with every step (v1-v3, v2-v3, v3-v4, v4-v5) and three tools, one after the
# other on the same generated store: the SQL floor, moult with stage 2 forced object by object
# (MOULT_PER_OBJECT_STAGE2=1, the engine before its set operations) and moult as it is, both with
# LMDB associations and chunks of 10,000. Each moult destination is checked to hold the floor's rows.
# Then it replaces the table between the `throughput-table` markers in BENCHMARKS.md with:
#   throughput ratio = floor wall time / moult wall time (issue 13's figure: 1.0 = the floor's pace),
#   peak RssAnon of each run, and whether the destination is the floor's.
# The raw rows are in Benchmarks/results/<date>-throughput.tsv.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SIZES=("$@")
[[ ${#SIZES[@]} -gt 0 ]] || SIZES=(1000000)
NAME="$(date -u +%F)-throughput"
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD)  # the engine measured (the build is of the tree as it is)
SCENARIOS=${SCENARIOS:-"v1-v3 v2-v3 v3-v4 v4-v5"} TOOLS="sql-floor moult-lmdb-per-object moult-lmdb" RESULTS_NAME=$NAME \
    "$ROOT/Benchmarks/scripts/people-scale.sh" "${SIZES[@]}"
TSV="$ROOT/Benchmarks/results/$NAME.tsv"
python3 - "$TSV" "$ROOT/BENCHMARKS.md" "$COMMIT" "${SIZES[*]}" <<'PY'
import csv, sys, datetime
tsv, md, commit, sizes = sys.argv[1:5]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
runs = {}
for r in rows:
    runs.setdefault((r["scenario"], r["size"]), {})[r["tool"]] = r
lines = [
    f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC at {commit}: "
    f"`Benchmarks/scripts/throughput.sh {sizes}` ([TSV](Benchmarks/results/{tsv.rsplit('/', 1)[1]})).",
    "",
    "| step | persons | floor s | per-object stage 2 s | ratio before | moult s | **ratio now** | peak RssAnon MiB (floor / before / now) | same as floor |",
    "|---|---|---|---|---|---|---|---|---|",
]
for (scenario, size), tools in runs.items():
    floor, before, now = tools.get("sql-floor"), tools.get("moult-lmdb-per-object"), tools.get("moult-lmdb")
    if not (floor and before and now):
        continue
    f, b, n = float(floor["wall_s"]), float(before["wall_s"]), float(now["wall_s"])
    same = "yes" if before["same_as_floor"] == "same" and now["same_as_floor"] == "same" else f"no ({before['same_as_floor']}; {now['same_as_floor']})"
    lines.append(
        f"| {scenario.replace('-', ' → ')} | {int(size):,} | {f:.2f} | {b:.2f} | {f / b:.2f} | {n:.2f} | **{f / n:.2f}** | "
        f"{floor['peak_anon_mib']} / {before['peak_anon_mib']} / {now['peak_anon_mib']} | {same} |")
text = open(md).read()
start, end = "<!-- throughput-table -->", "<!-- /throughput-table -->"
head, rest = text.split(start, 1)
_, tail = rest.split(end, 1)
open(md, "w").write(head + start + "\n" + "\n".join(lines) + "\n" + end + tail)
print("\n".join(lines))
PY
