#!/usr/bin/env bash
# Runs the Kubernetes Indexed Job of Sources/MoultCommand/MoultCommand.docc/Fleets.md as its pods run it,
# without Docker or a cluster: the Job's `args`, `completions`, `securityContext` and `mountPath` are read
# from the page (so a change there is what runs here), the image's user from the Dockerfile's USER.
#
#   1. A scratch folder is laid out as the volume: a manifest of stores (half migrated in place, half to
#      out/) written by root, then owned as the kubelet leaves a volume mounted with `fsGroup` (every file
#      and folder given to the group, files g+rw, folders g+rwxs: kubelet's SetVolumeOwnership).
#   2. Each index 0..completions-1 runs `moult` with the Job's args ($(JOB_COMPLETION_INDEX) expanded, as
#      the kubelet does, and set in the environment, as the Job controller does) as runAsUser:runAsGroup
#      with fsGroup as supplementary group (setpriv), all at once (parallelism), in the volume's folder
#      (the mountPath replaced by the scratch folder's path, the image's WORKDIR).
#   3. `moult fleet report` on the results: every store migrated, none failed; every shard's metrics file
#      written; no lock file left.
#   4. The same volume without fsGroup (root's, 0755, files 0644), shard 0 as the image's user without the
#      group: it must stop before migrating anything, exit 74, naming the file, its folder and the fix.
#
# Needs root (to run as another user and own the volume as the kubelet does), setpriv (util-linux) and
# python3. The image holds the release build; by default this runs the debug build.
#
#     scripts/k8s-example.sh [--moult PATH] [--stores N] [--keep]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOULT=$ROOT/.build/debug/moult
STORES=16
KEEP=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --moult) MOULT=$(readlink -f "$2"); shift 2 ;;
        --stores) STORES=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "usage: $0 [--moult PATH] [--stores N] [--keep]" >&2; exit 64 ;;
    esac
done
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "k8s-example.sh needs root: it runs moult as the image's user and owns the volume as the kubelet does" >&2; exit 77; }
command -v setpriv >/dev/null || { echo "k8s-example.sh needs setpriv (util-linux)" >&2; exit 77; }
[[ -x $MOULT ]] || fail "no moult at $MOULT (swift build, or --moult PATH)"
PEOPLE=$(dirname "$MOULT")/moult-people
[[ -x $PEOPLE ]] || fail "no moult-people beside $MOULT"

# --- The example, from the page ---------------------------------------------------------------------
PAGE=$ROOT/Sources/MoultCommand/MoultCommand.docc/Fleets.md
YAML=$(awk '/^### Job runners/ { section = 1 } section && /^```yaml/ { inside = 1; next } inside && /^```/ { exit } inside' "$PAGE")
[[ -n $YAML ]] || fail "no yaml block under \"### Job runners\" in $PAGE"
field() { # the value of `key: value` (a number or a word), first occurrence, flow mappings included
    { grep -oE "\\b$1: *[A-Za-z0-9/._-]+" <<<"$YAML" || true; } | head -1 | sed -E 's/^[^:]+: *//'
}
COMPLETIONS=$(field completions)
RUN_USER=$(field runAsUser)
RUN_GROUP=$(field runAsGroup)
FS_GROUP=$(field fsGroup)
MOUNT=$(field mountPath)
ARGS_JSON=$({ grep -oE '^ *args: *\[.*\]' <<<"$YAML" || true; } | sed -E 's/^ *args: *//')
for name in COMPLETIONS RUN_USER RUN_GROUP FS_GROUP MOUNT ARGS_JSON; do
    [[ -n ${!name} ]] || fail "the Job in $PAGE gives no ${name,,} (completions, securityContext runAsUser/runAsGroup/fsGroup, mountPath, args)"
done
IMAGE_USER=$(sed -nE 's/^USER +//p' "$ROOT/Dockerfile")
[[ $IMAGE_USER == "$RUN_USER:$RUN_GROUP" ]] || fail "the Dockerfile's USER is $IMAGE_USER, the Job runs as $RUN_USER:$RUN_GROUP"
mapfile -t ARGS < <(python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])))' "$ARGS_JSON")
MANIFEST=
for ((i = 0; i < ${#ARGS[@]}; i++)); do [[ ${ARGS[i]} == --manifest ]] && MANIFEST=${ARGS[i + 1]}; done
[[ $MANIFEST == "$MOUNT"/* ]] || fail "the Job's --manifest ($MANIFEST) is not on the volume ($MOUNT)"
echo "the Job of Fleets.md: $COMPLETIONS indexes as $RUN_USER:$RUN_GROUP, fsGroup $FS_GROUP, volume at $MOUNT"
echo "  args: ${ARGS[*]}"

# --- A volume --------------------------------------------------------------------------------------------
WORK=$(mktemp -d)
chmod 0755 "$WORK"
[[ $KEEP == 1 ]] && echo "kept: $WORK" || trap 'rm -rf "$WORK"' EXIT
MODEL=$ROOT/Datasets/People/People.xcdatamodeld
# A volume as an operator fills it (as root): the model, the stores, the manifest, a folder for outputs.
# Paths in the manifest are relative to it, so that it reads the same at the mount path and here.
fill() {
    local volume=$1 manifest=$1/${MANIFEST#"$MOUNT"/}
    local folder
    folder=$(dirname "$manifest")
    mkdir -p "$folder/stores" "$folder/out"
    cp -R "$MODEL" "$folder/People.xcdatamodeld"
    "$PEOPLE" generate "$WORK/seed-$$.sqlite" --model-version 1 --objects 40 --model "$MODEL" >/dev/null
    : >"$manifest"
    for ((n = 0; n < STORES; n++)); do
        cp "$WORK/seed-$$.sqlite" "$folder/stores/s$n.sqlite"
        local output=""
        ((n % 2)) && output=", \"output\": \"out/s$n.sqlite\""
        echo "{\"store\": \"stores/s$n.sqlite\", \"model\": \"People.xcdatamodeld\", \"to\": \"v2\"$output}" >>"$manifest"
    done
    rm "$WORK/seed-$$.sqlite"
}
# The image's args on this volume: the mount path replaced by the volume's folder, the index expanded.
args_for() {
    local volume=$1 index=$2 arg
    for arg in "${ARGS[@]}"; do
        arg=${arg//\$(JOB_COMPLETION_INDEX)/$index}
        [[ $arg == "$MOUNT"/* || $arg == "$MOUNT" ]] && arg=$volume${arg#"$MOUNT"}
        printf '%s\0' "$arg"
    done
}
# Runs `moult ARGS…` in a pod: as the image's user, with `groups` as supplementary groups, in the volume.
pod() {
    local volume=$1 groups=$2 index=$3
    shift 3
    (cd "$volume" && setpriv --reuid "$RUN_USER" --regid "$RUN_GROUP" $groups \
        env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/ JOB_COMPLETION_INDEX="$index" "$MOULT" "$@")
}

# --- With fsGroup: the example as written -----------------------------------------------------------------
VOLUME=$WORK/with-fsgroup
fill "$VOLUME"
# kubelet's SetVolumeOwnership for fsGroup: group fsGroup, files |= 0660, folders |= 02770.
chown -R "root:$FS_GROUP" "$VOLUME"
find "$VOLUME" -type f -exec chmod g+rw {} +
find "$VOLUME" -type d -exec chmod g+rwxs {} +
echo "volume with fsGroup: $(stat -c '%U:%G %A' "$VOLUME")"
START=$(date +%s%N)
declare -A PIDS=()
for ((index = 0; index < COMPLETIONS; index++)); do
    mapfile -d '' -t RUN < <(args_for "$VOLUME" "$index")
    pod "$VOLUME" "--groups $FS_GROUP" "$index" "${RUN[@]}" >"$WORK/pod-$index.log" 2>&1 &
    PIDS[$index]=$!
done
FAILED=0
for index in "${!PIDS[@]}"; do
    if ! wait "${PIDS[$index]}"; then
        FAILED=1
        echo "index $index failed:" >&2
        cat "$WORK/pod-$index.log" >&2
    fi
done
[[ $FAILED == 0 ]] || fail "a pod of the Job failed"
echo "  $COMPLETIONS pods done in $(( ($(date +%s%N) - START) / 1000000 )) ms"
RESULTS=$VOLUME/${MANIFEST#"$MOUNT"/}.results.jsonl
REPORT=$(pod "$VOLUME" "--groups $FS_GROUP" 0 fleet report "$RESULTS" --json)
pod "$VOLUME" "--groups $FS_GROUP" 0 fleet report "$RESULTS" | sed 's/^/  /'
python3 - "$REPORT" "$STORES" <<'PY' || fail "moult fleet report: not every store migrated"
import json, sys
report, stores = json.loads(sys.argv[1]), int(sys.argv[2])
outcomes = report["outcomes"]
sys.exit(0 if report["stores"] == stores and outcomes["migrated"] == stores and outcomes["failed"] == 0 else 1)
PY
for ((index = 0; index < COMPLETIONS; index++)); do
    mapfile -d '' -t RUN < <(args_for "$VOLUME" "$index")
    for ((i = 0; i < ${#RUN[@]}; i++)); do
        [[ ${RUN[i]} == --metrics ]] || continue
        METRICS=${RUN[i + 1]}
        grep -q '^moult_' "$METRICS" 2>/dev/null || fail "index $index wrote no metrics to $METRICS"
    done
done
echo "  metrics: $(ls "$(dirname "$METRICS")" | wc -l) files in $(dirname "$METRICS") ($(stat -c '%U:%G %A' "$(dirname "$METRICS")"))"
LEFT=$(find "$VOLUME" -name '*.moult-lock' -o -name '*.moult-tmp' | head -5)
[[ -z $LEFT ]] || fail "left behind: $LEFT"

# --- Without fsGroup: root's volume, as the example was first written -------------------------------------
BARE=$WORK/without-fsgroup
fill "$BARE"
chown -R root:root "$BARE"
chmod -R go-w "$BARE"
echo "volume without fsGroup: $(stat -c '%U:%G %A' "$BARE")"
mapfile -d '' -t RUN < <(args_for "$BARE" 0)
set +e
MESSAGE=$(pod "$BARE" --clear-groups 0 "${RUN[@]}" 2>&1)
CODE=$?
set -e
echo "  exit $CODE: $MESSAGE"
[[ $CODE == 74 ]] || fail "without fsGroup: exit $CODE, not 74 (I/O)"
grep -qF "$BARE" <<<"$MESSAGE" || fail "without fsGroup: the message does not name the volume's folder"
grep -qF "uid $RUN_USER" <<<"$MESSAGE" || fail "without fsGroup: the message does not say which user"
grep -qF fsGroup <<<"$MESSAGE" || fail "without fsGroup: the message does not say the fix"
WRITTEN=$(find "$BARE" -name '*.moult-*' -o -name '*.results.jsonl' -o -path '*/out/*' -o -name '*.prom')
[[ -z $WRITTEN ]] || fail "without fsGroup: something was written: $WRITTEN"
echo "ok: the Kubernetes example runs as written"
