#!/usr/bin/env bash
# `kvpolicy bench` (ctest CliBench): the Mooncake workload repeats the trace with fresh keys, so
# its hit column is one copy's, equal to `simulate` on the trace at the bench's capacity, and the
# copies' own rate (block_hit_rate) is another figure; the headline rate is the median round's.
# Skips (77) without the Mooncake trace under KVPOLICY_DATA.
set -euo pipefail
K=$1
source "$(dirname "$0")/lib.sh"
need_data mooncake-conversation/conversation_trace.jsonl
DATA=$data
TRACE=$DATA/mooncake-conversation/conversation_trace.jsonl

"$K" bench --quick -p sieve --data "$DATA" --json "$work/bench.json" > "$work/bench.txt"
grep -q "hit % x1" "$work/bench.txt"
cap=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["workloads"][0]["capacity_blocks"])' "$work/bench.json")
"$K" simulate -p sieve -c "$cap" --trace "$TRACE" --json "$work/one.jsonl" > /dev/null
python3 - "$work/bench.json" "$work/one.jsonl" <<'PY'
import json
import sys

mooncake = json.load(open(sys.argv[1]))["workloads"][0]
sieve = next(p for p in mooncake["policies"] if p["policy"] == "sieve")
one_copy = json.loads(open(sys.argv[2]).readline())
assert abs(sieve["one_copy_block_hit_rate"] - one_copy["block_hit_rate"]) < 1e-6, (sieve, one_copy)
# Over the copies SIEVE keeps the earlier copies' blocks, which never recur: a lower figure.
assert sieve["block_hit_rate"] < one_copy["block_hit_rate"] - 0.01, (sieve, one_copy)
median_rate = mooncake["block_accesses"] / sieve["median_cpu_seconds"]
assert abs(sieve["accesses_per_second"] - median_rate) <= 1e-3 * median_rate, sieve
assert json.load(open(sys.argv[1]))["repeat"] == 1  # --quick: one round by default
print("CliBench: ok")
PY
# An explicit --repeat holds with --quick (the cost tables quote three-round medians).
"$K" bench --quick --repeat 2 -p sieve --data "$DATA" --json "$work/bench2.json" > /dev/null
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["repeat"] == 2' "$work/bench2.json"
