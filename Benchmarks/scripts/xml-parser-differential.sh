#!/usr/bin/env bash
# The XML parser's differential fuzz, long: Moult's XML pull parser against Python's expat on N mutated
# store documents (XMLParserDifferentialTests, which the suite runs on 3,000): every document Moult reads,
# expat reads to the same elements, attributes and text. Moult may refuse more (an internal subset, a
# non-ASCII name, another encoding than UTF-8), never read a document otherwise.
#
#     Benchmarks/scripts/xml-parser-differential.sh [--inputs N] [--seed S]
#         defaults: 1,000,000 documents, seed 1
#
# Builds the tests (debug, as `swift test` does) and runs the one test with the count and seed; prints
# "XML parser differential: N documents, A read by both alike, R refused by Moult only, D read otherwise"
# and exits non-zero on any document read otherwise.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
INPUTS=1000000 SEED=1
while [[ $# -gt 0 ]]; do
    case "$1" in
    --inputs) INPUTS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    *) echo "usage: $0 [--inputs N] [--seed S]" >&2; exit 64 ;;
    esac
done
command -v python3 >/dev/null || { echo "python3 is missing" >&2; exit 1; }
swift build --build-tests >&2
MOULT_XML_DIFFERENTIAL_INPUTS=$INPUTS MOULT_XML_DIFFERENTIAL_SEED=$SEED \
    swift test --skip-build --filter XMLParserDifferentialTests 2>&1 | grep -E "XML parser differential|✘|passed|failed"
