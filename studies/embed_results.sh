#!/usr/bin/env bash
# docs/results/embed.md, the embedding cache (the LCR paper's DLRM case): the generated workload
# against Meta's histogram, then `kvpolicy embed bench` with the GBM (async) on the in-memory
# and the Redis store, the weak predictor (robustness) and the oracle, and the figures.
# Usage: studies/embed_results.sh OUT [FIGURES_DIR]   (K=build/kvpolicy T=../shared/traces)
set -euo pipefail
out=${1:?usage: embed_results.sh OUT [FIGURES_DIR]}
figs=${2:-$out}
src=$(cd "$(dirname "$0")/.." && pwd)
K=${K:-$src/build/kvpolicy}
export KVPOLICY_DATA=${T:-${KVPOLICY_DATA:-$src/../shared/traces}}
mkdir -p "$out" "$figs"
# 2 M lookups with the reuse counts of the first block of Meta's 2021 statistics; --drift 1 gives
# every key a window of half the trace for its uses, so recency means something (with uses
# spread over the whole trace it means nothing, and any order beats LRU: docs/results/embed.md).
W=(--samples 40000 --drift 1 --seed 1)

"$K" embed generate "${W[@]}" --out "$out/dlrm.csv" | tee "$out/workload.txt"
run() {  # run NAME ARGS...
  local name=$1
  shift
  rm -f "$out/$name.jsonl"
  "$K" embed bench --trace "$out/dlrm.csv" --json "$out/$name.jsonl" "$@" | tee "$out/$name.txt"
}
run gbm-memory --store memory
run gbm-redis --store redis
run weak-memory --store memory --predictor weak --policy lru,fpb,laru
run weak-redis --store redis --predictor weak --policy lru,fpb,laru
run oracle-memory --store memory --predictor oracle --policy lru,fpb,laru
python3 "$src/studies/plot_embed.py" "$out/gbm-redis.jsonl" "$figs/embed-sls-gbm.png" \
  "SLS latency, Redis store, GBM predictor (async): LCR paper Figure 9"
python3 "$src/studies/plot_embed.py" "$out/weak-redis.jsonl" "$figs/embed-sls-weak.png" \
  "SLS latency, Redis store, weak predictor (1 feature, 1 tree): LCR paper Figure 10"
python3 "$src/studies/embed_tables.py" "$out" > "$out/tables.md"
echo "tables: $out/tables.md"
