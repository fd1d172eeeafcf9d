#!/bin/sh
# The steps of the moult-test workflow (moult-test.yml), as a script that runs anywhere: in CI, on a
# laptop, and in Moult's own tests (CIWorkflowTests), from the app repository's root.
#
#     sh moult-test.sh test      # every version's stores (generated, and every frozen fixture) migrated to
#                                # the current version by every path; the JUnit report in $MOULT_REPORT
#     sh moult-test.sh freeze    # a fixture of the current (shipped) version frozen into $MOULT_FIXTURES
#                                # and listed in its manifest, unless it has one already: commit it
#
# Settings (environment):
#   MOULT_MODEL     the app's versioned model (.xcdatamodeld)                     (required)
#   MOULT_MAPPINGS  a mapping model or a folder of them                           (optional)
#   MOULT_FIXTURES  the folder of frozen fixtures, with fixtures.manifest          (default: MigrationFixtures)
#   MOULT_REPORT    where the reports go: moult.xml (JUnit), moult.json, moult.txt (default: moult-report)
#   MOULT_OBJECTS   objects per generated store                                  (default: 500)
#   MOULT_ARGS      more options for moult test (--policy, --allow-loss, --stages)  (optional)
#   MOULT           the moult executable                                          (default: moult)
set -eu
MOULT=${MOULT:-moult}
MODEL=${MOULT_MODEL:?set MOULT_MODEL to the versioned model of the app}
FIXTURES=${MOULT_FIXTURES:-MigrationFixtures}
REPORT=${MOULT_REPORT:-moult-report}
OBJECTS=${MOULT_OBJECTS:-500}
MAPPINGS=${MOULT_MAPPINGS:-}

# The current version: the model's .xccurrentversion, as Xcode writes it.
current() {
    sed -n 's:.*<string>\(.*\)\.xcdatamodel</string>.*:\1:p' "$MODEL/.xccurrentversion" | head -n 1
}

case "${1:-test}" in
freeze)
    version=$(current)
    [ -n "$version" ] || { echo "moult-test.sh: $MODEL has no current version (.xccurrentversion)" >&2; exit 64; }
    mkdir -p "$FIXTURES"
    if [ -f "$FIXTURES/fixtures.manifest" ] && cut -f 2 "$FIXTURES/fixtures.manifest" | grep -qx "$version"; then
        echo "moult-test.sh: $FIXTURES already holds a fixture of $version"
        exit 0
    fi
    frozen=$(mktemp -d)
    trap 'rm -rf "$frozen"' EXIT
    "$MOULT" test "$MODEL" --freeze "$frozen/f" --version "$version" --objects "$OBJECTS" --seed 1
    [ -f "$FIXTURES/fixtures.manifest" ] || printf 'moult-fixtures 1\n' >"$FIXTURES/fixtures.manifest"
    # The store and its external data, then their lines (the manifest's own comments left out).
    (cd "$frozen/f" && find . -type f ! -name fixtures.manifest | while read -r file; do
        mkdir -p "$OLDPWD/$FIXTURES/$(dirname "$file")" && cp -p "$file" "$OLDPWD/$FIXTURES/$file"
    done)
    grep -v '^moult-fixtures \|^#' "$frozen/f/fixtures.manifest" >>"$FIXTURES/fixtures.manifest"
    echo "moult-test.sh: froze a fixture of $version into $FIXTURES: commit it"
    ;;
test)
    mkdir -p "$REPORT"
    set -- "$MODEL" --objects "$OBJECTS" --junit "$REPORT/moult.xml"
    [ -n "$MAPPINGS" ] && set -- "$@" --mapping "$MAPPINGS"
    [ -f "$FIXTURES/fixtures.manifest" ] && set -- "$@" --fixtures "$FIXTURES"
    # shellcheck disable=SC2086
    status=0
    "$MOULT" test "$@" ${MOULT_ARGS:-} >"$REPORT/moult.txt" || status=$?
    cat "$REPORT/moult.txt"
    exit "$status"
    ;;
*)
    echo "moult-test.sh: unknown step '$1' (test or freeze)" >&2
    exit 64
    ;;
esac
