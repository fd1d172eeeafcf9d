#!/usr/bin/env bash
# A fleet of People stores migrated by shards under GNU parallel: stores per second with 1, 2 and 4
# shards (issue 14).
#
#   Benchmarks/scripts/fleet-bench.sh [--stores N] [--persons N] [--shards "1 2 4"]
#
# Makes one People v1 store of PERSONS persons with moult-people, copies it STORES times (a store per
# user of a service), writes a manifest migrating each in place to v2 (the inferred step: SQL in one
# transaction, a backup kept beside each store), then for each shard count starts that many shards
# with `parallel` on fresh copies, and checks with `moult fleet report` that every store was migrated
# exactly once. Prints a TSV line per shard count: shards, stores, wall s, stores/s, peak RssAnon of
# the whole run (MiB).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STORES=10000
PERSONS=1000
SHARDS="1 2 4"
while [[ $# -gt 0 ]]; do
    case $1 in
        --stores) STORES=$2; shift 2 ;;
        --persons) PERSONS=$2; shift 2 ;;
        --shards) SHARDS=$2; shift 2 ;;
        *) die "unknown argument: $1" ;;
    esac
done
command -v parallel >/dev/null || die "GNU parallel is missing (make deps installs it)"
build_moult
make_work fleet

"$MOULT_PEOPLE" generate "$WORK/template.sqlite" --model "$MODEL" --model-version 1 --objects "$PERSONS" >/dev/null

printf 'shards\tstores\twall_s\tstores_per_s\tpeak_rss_anon_mib\n'
for shards in $SHARDS; do
    fleet="$WORK/fleet-$shards"
    rm -rf "$fleet"
    mkdir -p "$fleet/users"
    manifest="$fleet/fleet.jsonl"
    for ((i = 0; i < STORES; i++)); do
        cp "$WORK/template.sqlite" "$fleet/users/$i.sqlite"
        printf '{"store": "users/%d.sqlite", "model": "%s", "to": "v2"}\n' "$i" "$MODEL"
    done >"$manifest"
    sync
    measure parallel --will-cite -j "$shards" "$MOULT" migrate --manifest "$manifest" --shard '{}'/"$shards" --quiet ::: $(seq 0 $((shards - 1)))
    "$MOULT" fleet report "$manifest.results.jsonl" --json >"$fleet/report.json"
    python3 - "$fleet/report.json" "$STORES" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
text = json.dumps(report)
stores = int(sys.argv[2])
migrated = report.get("outcomes", {}).get("migrated", report.get("migrated"))
if migrated != stores:
    sys.exit(f"fleet report: {migrated} stores migrated, {stores} expected: {text[:400]}")
EOF
    python3 -c 'import sys; s, n, w, a = sys.argv[1:]; print(f"{s}\t{n}\t{float(w):.2f}\t{int(n) / float(w):.0f}\t{a}")' \
        "$shards" "$STORES" "$WALL" "$ANON"
done
