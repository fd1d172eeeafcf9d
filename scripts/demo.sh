#!/usr/bin/env bash
# The demo: what `make demo` runs once `moult` is built.
set -euo pipefail
cd "$(dirname "$0")/.."
MOULT=.build/release/moult
"$MOULT" hash Datasets/People/People.xcdatamodeld
