#!/usr/bin/env bash
# A learned row whose model never fitted is flagged (ctest CliModelFitted): WA with a refit
# interval beyond the trace's span never fits, so simulate's JSON row says model_fitted: false
# and stderr names it; a fitted WA row says true and gets no warning, LRU has no such field.
set -euo pipefail
K=$1
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=40 --seed 3 -o "$work/t.kvtrace" > /dev/null
"$K" simulate -p lru,wa:refit_s=1000000000,wa:refit_s=0.001 -c 10% --trace "$work/t.kvtrace" \
  --json "$work/rows.jsonl" > /dev/null 2> "$work/err.txt"
grep -q "warning: wa:refit_s=1000000000 .*never fitted" "$work/err.txt"
if grep -q "warning: wa:refit_s=0.001" "$work/err.txt"; then
  echo "CliModelFitted: a fitted row was flagged" >&2
  exit 1
fi
python3 - "$work/rows.jsonl" <<'PY'
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
fitted = {r["params"]: r.get("model_fitted") for r in rows}
assert fitted == {"": None, "refit_s=1000000000": False, "refit_s=0.001": True}, fitted
print("CliModelFitted: ok")
PY
