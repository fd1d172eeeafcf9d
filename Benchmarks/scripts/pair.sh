#!/usr/bin/env bash
# Times two commands in turn (A B A B …) as whole processes and prints, for each, the median wall and
# CPU seconds (user + system: the kernel's accounting of the finished child, /usr/bin/time), and the
# ratios A/B taken pair by pair, so that a comparison holds while a shared machine's speed drifts.
#
#     Benchmarks/scripts/pair.sh [-n RUNS] [--warmup N] --vs 'COMMAND B' -- COMMAND A [ARG ...]
#         defaults: 5 counted runs of each, 1 warm-up pair; COMMAND B is one string run by sh -c.
#         A command that exits non-zero in a counted run makes pair.sh say so and exit 1, without ratios.
set -euo pipefail
RUNS=5 WARMUP=1 B=""
while [[ $# -gt 0 ]]; do
    case "$1" in
    -n) RUNS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --vs) B=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "pair.sh: unknown argument $1" >&2; exit 64 ;;
    esac
done
[[ $# -gt 0 && -n "$B" ]] || { echo "pair.sh: need --vs 'COMMAND B' -- COMMAND A" >&2; exit 64; }
TIMES=$(mktemp)
trap 'rm -f "$TIMES"' EXIT
# one LABEL: runs it once, appends "LABEL wall user sys" to $TIMES (warm-ups as "warm")
one() {
    local label=$1; shift
    /usr/bin/time -f "$label %e %U %S %x" -a -o "$TIMES" "$@" >/dev/null 2>&1 || true
}
for ((i = 0; i < WARMUP + RUNS; i++)); do
    label_a=A label_b=B
    ((i >= WARMUP)) || { label_a=warm; label_b=warm; }
    one "$label_a" "$@"
    one "$label_b" sh -c "$B"
done
python3 - "$TIMES" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip() and not line.startswith("Command")]
runs = {"A": [], "B": []}
failed = {"A": 0, "B": 0}
for label, wall, user, system, status in (r[:5] for r in rows if r[0] in runs):
    runs[label].append((float(wall), float(user) + float(system)))
    failed[label] += status != "0"

median = statistics.median
for label in "AB":
    walls, cpus = [w for w, _ in runs[label]], [c for _, c in runs[label]]
    print(f"{label}: wall median {median(walls):.3f} s (min {min(walls):.3f}, max {max(walls):.3f}); cpu median {median(cpus):.3f} s")
if any(failed.values()):
    for label, count in failed.items():
        if count:
            print(f"pair.sh: {label} exited non-zero in {count} of its runs: its times are not of the work asked for", file=sys.stderr)
    sys.exit(1)
pairs = list(zip(runs["A"], runs["B"]))
cpu = [a[1] / b[1] for a, b in pairs if b[1] > 0]
print(f"A/B pair by pair: wall median {median(a[0] / b[0] for a, b in pairs if b[0] > 0):.3f}; "
      f"cpu median {f'{median(cpu):.3f}' if cpu else '-'} ({len(pairs)} pairs)")
PY
