#!/usr/bin/env bash
# The demo that `make demo` runs once `moult` and `moult-people` are built (release): the main job on the
# bundled People data. `moult-people` is moult with the People scenario's compiled policies
# (AdultToCompanyPolicy, ChildToSchoolPolicy) and its generator: Datasets/People/CLI, the example of
# "your own CLI with your policies".
#
#   1. generate the default People store with moult-people: 100,000 persons at v2 (names, ages, 80% with
#      an address);
#   2. migrate it with moult-people step by step v2 -> v3 (address split) -> v4 (Adult/Child split) -> v5,
#      in chunks of 10,000, with the live progress display, under peakmem;
#   3. generate 100,000 persons at v4 (with company and school names) and migrate them to v5 with
#      moult-people, where its compiled policy makes one Company per distinct name; then the same with
#      plain moult and a mapping naming the built-in policy unique(key: companyName) instead;
#   4. verify each destination against its source with SQL of its own (counts per entity, every person's
#      address, every adult's company, every child's school), check that the built-in policy wrote the
#      same rows as the compiled one, and print a summary.
#
# Environment: DEMO_OBJECTS (default 100000), DEMO_DIR (default ./demo-output, emptied first).
set -euo pipefail
cd "$(dirname "$0")/.."
MOULT=${MOULT:-.build/release/moult}
PEOPLE=${MOULT_PEOPLE:-.build/release/moult-people}
PEAKMEM=${PEAKMEM:-Benchmarks/scripts/peakmem}
MODEL=Datasets/People/People.xcdatamodeld
MAPPINGS=Datasets/People/Mappings
OBJECTS=${DEMO_OBJECTS:-100000}
DIR=${DEMO_DIR:-demo-output}

rm -rf "$DIR"
mkdir -p "$DIR"

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# Runs a command under peakmem; prints its output and leaves "anon total wall" in $DIR/last.mem.
measured() {
    "$PEAKMEM" --json -- "$@" 2> >(tee "$DIR/last.err" >&2)
    python3 - "$DIR/last.err" > "$DIR/last.mem" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip().split("\r")[-1]
    if line.startswith("{") and "peak_rss_anon_mib" in line:
        r = json.loads(line)
        print(r["peak_rss_anon_mib"], r["peak_rss_total_mib"], r["wall_s"])
EOF
}

section "1. Generate $OBJECTS persons at People v2"
"$PEOPLE" generate --model-version 2 --objects "$OBJECTS" --seed 1 "$DIR/people-v2.sqlite"
"$MOULT" inspect "$DIR/people-v2.sqlite" --model "$MODEL"

section "2. Migrate v2 -> v3 -> v4 -> v5 with moult-people, in chunks of 10,000 (LMDB associations)"
"$PEOPLE" plan "$DIR/people-v2.sqlite" --model "$MODEL" --to v5 \
    --mapping "$MAPPINGS/v2-to-v3.json" --mapping "$MAPPINGS/v3-to-v4.json" --mapping "$MAPPINGS/v4-to-v5.json"
measured "$PEOPLE" migrate "$DIR/people-v2.sqlite" --model "$MODEL" --to v5 \
    --mapping "$MAPPINGS/v2-to-v3.json" --mapping "$MAPPINGS/v3-to-v4.json" --mapping "$MAPPINGS/v4-to-v5.json" \
    --output "$DIR/people-v5.sqlite" --chunk-size 10000
read -r ANON1 TOTAL1 WALL1 < "$DIR/last.mem"

section "3. Generate $OBJECTS persons at v4 (company and school names) and migrate them to v5"
"$PEOPLE" generate --model-version 4 --objects "$OBJECTS" --seed 2 "$DIR/people-v4.sqlite"
echo "moult-people, its compiled policies (AdultToCompanyPolicy, ChildToSchoolPolicy):"
measured "$PEOPLE" migrate "$DIR/people-v4.sqlite" --model "$MODEL" --to v5 --mapping "$MAPPINGS/v4-to-v5.json" \
    --output "$DIR/companies-v5.sqlite" --chunk-size 10000
read -r ANON2 TOTAL2 WALL2 < "$DIR/last.mem"
echo "moult, the built-in policy unique(key: companyName) named by the mapping, nothing compiled:"
measured "$MOULT" migrate "$DIR/people-v4.sqlite" --model "$MODEL" --to v5 --mapping "$MAPPINGS/../BuiltinPolicy/v4-to-v5.json" \
    --output "$DIR/companies-builtin-v5.sqlite" --chunk-size 10000
read -r ANON3 TOTAL3 WALL3 < "$DIR/last.mem"

section "4. Verify"
"$MOULT" inspect "$DIR/people-v5.sqlite" --model "$MODEL"
"$MOULT" inspect "$DIR/companies-v5.sqlite" --model "$MODEL" | tail -n 1

fail=0
check() { # name, expected, actual
    if [ "$2" = "$3" ]; then printf '  ok    %-58s %s\n' "$1" "$3"; else printf '  FAIL  %-58s expected %s, got %s\n' "$1" "$2" "$3"; fail=1; fi
}
q() { sqlite3 "$1" "$2"; }
S="$DIR/people-v2.sqlite"; D="$DIR/people-v5.sqlite"
check "persons kept" "$(q "$S" 'SELECT COUNT(*) FROM ZPERSON')" "$(q "$D" 'SELECT COUNT(*) FROM ZPERSON')"
check "addresses = persons with a street or state" \
    "$(q "$S" 'SELECT COUNT(*) FROM ZPERSON WHERE ZSTREET IS NOT NULL OR ZSTATE IS NOT NULL')" "$(q "$D" 'SELECT COUNT(*) FROM ZADDRESS')"
ADULT=$(q "$D" "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Adult'")
check "adults (age >= 18)" "$(q "$S" 'SELECT COUNT(*) FROM ZPERSON WHERE ZAGE >= 18')" "$(q "$D" "SELECT COUNT(*) FROM ZPERSON WHERE Z_ENT = $ADULT")"
# Every person keeps its own address: the multiset of (name, age, street, state) is the same.
SRC_LINKS=$(q "$S" "SELECT ZNAME, ZAGE, ZSTREET, ZSTATE FROM ZPERSON ORDER BY 1, 2, 3, 4" | sha256sum | cut -c1-16)
DST_LINKS=$(q "$D" "SELECT p.ZNAME, p.ZAGE, a.ZSTREET, a.ZSTATE FROM ZPERSON p LEFT JOIN ZADDRESS a ON a.Z_PK = p.ZADDRESS ORDER BY 1, 2, 3, 4" | sha256sum | cut -c1-16)
check "every person -> its own address ($(q "$D" 'SELECT COUNT(ZADDRESS) FROM ZPERSON') links)" "$SRC_LINKS" "$DST_LINKS"

S="$DIR/people-v4.sqlite"; D="$DIR/companies-v5.sqlite"
check "companies = distinct company names" "$(q "$S" 'SELECT COUNT(DISTINCT ZCOMPANYNAME) FROM ZPERSON')" "$(q "$D" 'SELECT COUNT(*) FROM ZCOMPANY')"
check "schools = distinct school names" "$(q "$S" 'SELECT COUNT(DISTINCT ZSCHOOLNAME) FROM ZPERSON')" "$(q "$D" 'SELECT COUNT(*) FROM ZSCHOOL')"
check "Apple makes phones" "makes phones" "$(q "$D" "SELECT ZBUSINESS FROM ZCOMPANY WHERE ZNAME = 'Apple'")"
SRC_JOBS=$(q "$S" "SELECT ZNAME, ZAGE, ZCOMPANYNAME, ZSCHOOLNAME FROM ZPERSON ORDER BY 1, 2, 3, 4" | sha256sum | cut -c1-16)
DST_JOBS=$(q "$D" "SELECT p.ZNAME, p.ZAGE, c.ZNAME, s.ZNAME FROM ZPERSON p LEFT JOIN ZCOMPANY c ON c.Z_PK = p.ZCOMPANY LEFT JOIN ZSCHOOL s ON s.Z_PK = p.ZSCHOOL ORDER BY 1, 2, 3, 4" | sha256sum | cut -c1-16)
rows() { sqlite3 "$1" .dump | grep -v Z_METADATA | sha256sum | cut -c1-16; }
check "built-in unique policy: the same rows as the compiled one" "$(rows "$D")" "$(rows "$DIR/companies-builtin-v5.sqlite")"
check "every adult -> its company, every child -> its school ($(q "$D" 'SELECT COUNT(ZCOMPANY) + COUNT(ZSCHOOL) FROM ZPERSON') links)" "$SRC_JOBS" "$DST_JOBS"
check "sources unchanged (still v2 and v4)" "v2 v4" \
    "$("$MOULT" inspect "$DIR/people-v2.sqlite" --model "$MODEL" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["matchingVersion"])') $("$MOULT" inspect "$DIR/people-v4.sqlite" --model "$MODEL" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["matchingVersion"])')"

section "Summary"
printf '  v2 -> v5, %s persons, 3 steps: %ss, peak RssAnon %s MiB, peak total RSS %s MiB\n' "$OBJECTS" "$WALL1" "$ANON1" "$TOTAL1"
printf '  v4 -> v5, %s persons (unique companies, compiled policy): %ss, peak RssAnon %s MiB, peak total RSS %s MiB\n' "$OBJECTS" "$WALL2" "$ANON2" "$TOTAL2"
printf '  v4 -> v5, %s persons (unique companies, built-in policy): %ss, peak RssAnon %s MiB, peak total RSS %s MiB\n' "$OBJECTS" "$WALL3" "$ANON3" "$TOTAL3"
if [ "$fail" = 0 ]; then echo "  all checks passed; the stores are in $DIR/"; else echo "  SOME CHECKS FAILED"; exit 1; fi
