#!/usr/bin/env bash
# `make docs`, and the documentation check at the end of `make test`: builds the DocC documentation of
# every library module under Sources/ with swift-docc-plugin (`swift package generate-documentation`),
# the modules combined so that an article can link to the modules its module depends on, and fails when
# DocC warns about anything: a symbol or article link that resolves to nothing, a parameter a doc
# comment leaves out, an article whose file name shadows a symbol.
#
#   scripts/docs.sh           the archive to host: .build/plugins/Swift-DocC/outputs/Moult.doccarchive
#   scripts/docs.sh --check   the same build and check, without the search index (`make test` runs this)
#
# The umbrella module `Moult` is left out: it only re-exports the others. DocC's output is kept in
# .build/docs.log.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
LOG=.build/docs.log

options=(--enable-experimental-combined-documentation)
if [ "${1:-}" = "--check" ]; then options+=(--disable-indexing); fi

modules=$("$SWIFT" package describe --type json | python3 -c '
import json, sys
for target in json.load(sys.stdin)["targets"]:
    if target["type"] == "library" and target["path"].startswith("Sources/") and target["name"] != "Moult":
        print(target["name"])')
for module in $modules; do options+=(--target "$module"); done

mkdir -p .build
status=0
"$SWIFT" package generate-documentation "${options[@]}" >"$LOG" 2>&1 || status=$?

# Each DocC warning is a line "warning: …", then, when it has a place, " --> PATH:LINE:COL…", PATH
# relative to the catalog of the module being built. The plugin builds one module while DocC converts
# another, and their lines can cut into each other: the build's progress lines are taken out first,
# wherever they fall. Each warning is printed as PATH:LINE: message, PATH from the repository: the one
# file under a catalog that PATH names, or among several, the one of the module the message names. As a
# safety net, every "warning: " or "error: " left anywhere in the output counts.
python3 - "$LOG" <<'PY'
import glob, os, re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
progress = (r"Building for debugging\.\.\.\n|\[\d+/\d+\] [^\n]*\n|Build of target: '[^'\n]*' complete! \([^)\n]*\)\n"
            r"|Build complete! \([^)\n]*\)\n|(Finished )?[Ee]xtracting symbol information for '[^'\n]*'[^\n]*\n"
            r"|(Finished )?[Bb]uilding documentation for '[^'\n]*'[^\n]*\n")
lines = re.sub(progress, "", text).splitlines()
sources = set(glob.glob("Sources/**/*", recursive=True))
found = 0
for i, line in enumerate(lines):
    if not re.match(r"(warning|error):", line):
        continue
    found += 1
    place = ""
    if i + 1 < len(lines) and lines[i + 1].lstrip().startswith("-->"):
        path, _, rest = lines[i + 1].lstrip()[4:].partition(":")
        if not os.path.isabs(path):
            files = sorted({os.path.normpath(os.path.join(catalog, path))
                            for catalog in glob.glob("Sources/*/*.docc")} & sources)
            named = re.search(r"at '/(\w+)", line)
            if len(files) > 1 and named:
                files = [f for f in files if f.startswith(f"Sources/{named.group(1)}/")] or files
            if files:
                path = " or ".join(files)
        place = f"{path}:{rest.split(':')[0]}: "
    print(f"docs: {place}{line}")
anywhere = len(re.findall(r"(?<![\w-])(warning|error): ", text))
if anywhere > found:
    print(f"docs: {anywhere - found} more warning(s) or error(s) in the output, not read whole: see the log")
with open(sys.argv[1] + ".count", "w") as out:
    out.write(str(max(found, anywhere)))
PY
warnings=$(cat "$LOG.count")
if [ "$status" -ne 0 ]; then
    tail -n 20 "$LOG"
    echo "docs: swift package generate-documentation failed (exit $status); the whole output is in $LOG" >&2
    exit "$status"
fi
if [ "$warnings" -ne 0 ]; then
    echo "docs: $warnings DocC warning(s), listed above; the whole output is in $LOG" >&2
    exit 1
fi
echo "docs: $(echo $modules | wc -w) modules, no warning: .build/plugins/Swift-DocC/outputs/Moult.doccarchive"
