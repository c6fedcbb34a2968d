#!/usr/bin/env bash
# `kvpolicy mrc` end to end on a small generated trace (ctest: CliMrc): the table, the target
# sentence per policy, JSON and CSV rows with the GB figure, LRU's one-pass curve checked against
# replays, bad options refused, and --plot (drawn when matplotlib is there, else one message
# naming the package). Usage: check_mrc_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_mrc_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=200 --out t.kvtrace > /dev/null || exit 1
"$K" mrc -t t.kvtrace -p lru,fifo --points 6 --min 2% --target-hit 20% --check-lru 3 --jobs 1 \
  --json m.jsonl --csv m.csv > out.txt 2> err.txt || fail "mrc exited $?: $(cat err.txt)"
grep -q "lru one-pass curve checked against 3 replays: identical" out.txt ||
  fail "no --check-lru line"
grep -Eq '^lru: 20 % block hit rate needs [0-9.]+ GB of KV \([0-9,]+ blocks of 16 tokens, llama-3.1-8b fp16; .* exact\)' out.txt ||
  fail "no exact lru target sentence"
grep -Eq '^fifo: 20 % block hit rate (needs .* by bisection|not reached)' out.txt ||
  fail "no fifo target sentence"
[[ $(grep -c '"kind":"point"' m.jsonl) -eq 12 ]] || fail "expected 12 point rows in m.jsonl"
[[ $(grep -c '"kind":"target"' m.jsonl) -eq 2 ]] || fail "expected 2 target rows in m.jsonl"
[[ $(wc -l < m.csv) -eq 13 ]] || fail "expected a header and 12 rows in m.csv"
head -1 m.csv | grep -q '^trace,policy,method,capacity_blocks,capacity_gb,' || fail "CSV header"
# The GB figure is blocks x KV bytes per block, and the LRU rows come from the stack pass.
python3 - m.jsonl << 'EOF' || fail "JSON rows inconsistent"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
pts = [r for r in rows if r["kind"] == "point"]
for r in pts:
    assert abs(r["capacity_gb"] - r["capacity_blocks"] * r["kv_bytes_per_block"] / 1e9) < 1e-5, r
    assert r["method"] == ("stack" if r["policy"] == "lru" else "replay"), r
    assert 0 <= r["block_hit_rate"] <= r["infinite_hit_rate"] + 1e-9, r
lru = sorted((r["capacity_blocks"], r["block_hit_rate"]) for r in pts if r["policy"] == "lru")
assert all(a[1] <= b[1] for a, b in zip(lru, lru[1:])), lru  # LRU's curve never falls
EOF
# Capacities in GB parse through the cost model: 8 points up to 2 GB, every one at most 2 GB.
"$K" mrc -t t.kvtrace --min 0.1GB --max 2GB --points 8 --json g.jsonl > /dev/null 2>&1 ||
  fail "--max 2GB exited $?"
python3 -c "
import json, sys
gb = [json.loads(l)['capacity_gb'] for l in open('g.jsonl')]
sys.exit(0 if len(gb) == 8 and max(gb) <= 2 and min(gb) >= 0.09 else 1)" || fail "GB capacities"
"$K" mrc -t t.kvtrace --target-hit 150% > /dev/null 2>&1 && fail "--target-hit 150% was accepted"
"$K" mrc -t t.kvtrace --min 50% --max 10% > /dev/null 2>&1 && fail "--min above --max was accepted"
KVPOLICY_SCRIPTS=$work "$K" mrc -t t.kvtrace --points 3 --plot p.png > /dev/null 2> plot-err.txt &&
  fail "--plot without the script succeeded"
grep -q "plot_mrc.py is absent" plot-err.txt || fail "--plot without the script: $(cat plot-err.txt)"
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
  "$K" mrc -t t.kvtrace -p lru,fifo --points 5 --target-hit 20% --plot p.png > /dev/null 2>&1 ||
    fail "--plot exited $?"
  [[ -s p.png ]] || fail "--plot wrote no PNG"
fi
finish "mrc: table, target sentences, JSON/CSV rows, --check-lru, GB capacities, --plot"
