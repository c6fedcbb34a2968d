#!/usr/bin/env bash
# Re-measures the seed claims that need serve mode's issue-37 features (docs/results/serve.md,
# sections (g)-(i)): (g) WA's queued TTFT with a host-DRAM tier (WA paper: -28 to -42 %),
# (h) LARU's P99 TTFT with realistic predictors, not the oracle (LCR paper: P99 up to -28.3 %),
# (i) T-LRU in serve mode against Threshold-LRU (T-LRU paper: P90 -27.5 %, P95 -23.9 %,
# SLO violations -38.9 %). Usage: studies/serve_claims37.sh OUT_DIR; prints the tables
# (studies/serve_claims37_tables.py). Every run uses --jobs 1.
# Environment: KVPOLICY (the binary, default build/kvpolicy), KVPOLICY_DATA (default
# ../shared/traces beside the source tree).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: serve_claims37.sh OUT_DIR}
REQUIRE=(chatbot-arena/chatbot_arena_conversations_raw.jsonl)
source "$src/studies/serve_env.sh"
A=$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl

# ---- (g) WA with a DRAM tier: section (c)'s one-worker runs, plus 256 GB of host DRAM --------
# WA's window and refit period are in trace seconds, stretched with the arrivals (section (c)).
for spec in "0.2 30611 1020" "0.3 20407 680" "0.4 15305 510"; do
  read -r rate win refit <<<"$spec"
  wa="wa:window_s=$win,refit_s=$refit"
  for policy in lru "$wa"; do
    tag=$([[ $policy == lru ]] && echo lru || echo wa)
    log "$K" serve -t "$M" -f mooncake --sessions infer -w 1 -r round_robin -p "$policy" \
        -c 894 --rate "$rate" --jobs 1 --json "g-hbm-$tag-rate$rate.json"
    log "$K" serve -t "$M" -f mooncake --sessions infer -w 1 -r round_robin -p "$policy" \
        --dram 256GB --dram-policy "$policy" -c 894 --rate "$rate" --jobs 1 \
        --json "g-dram-$tag-rate$rate.json"
  done
  # WA in HBM over an LRU DRAM tier (every demoted block enters DRAM as new to its policy).
  log "$K" serve -t "$M" -f mooncake --sessions infer -w 1 -r round_robin -p "$wa" \
      --dram 256GB --dram-policy lru -c 894 --rate "$rate" --jobs 1 \
      --json "g-dram-walru-rate$rate.json"
done

# ---- (h) LARU with realistic predictors on Chatbot Arena (section (d)'s setting) ------------
log "$K" trace build --source chatbot-arena -i "$A" -o arena.kvtrace
for rate in 0 3; do
  log "$K" serve -t arena.kvtrace -w 1 \
      -p "lru,laru:predictor=oracle,laru:predictor=reuse,laru:predictor=gbm" \
      -c 0.025,0.05,0.08 --model qwen2.5-32b --gpu a100-80gb --rate $rate --jobs 1 \
      --json "h-arena-rate$rate.json"
done

# ---- (i) T-LRU in serve mode against Threshold-LRU and LRU (tail.md's setting, queueing on) --
for rate in 0 3; do
  log "$K" serve -t arena.kvtrace -w 1 -p "lru,threshold_lru,tlru" -c 0.025,0.05,0.08 \
      --model qwen2.5-32b --gpu a100-80gb --slo 200 --rate $rate --jobs 1 \
      --json "i-arena-rate$rate.json"
done

python3 "$src/studies/serve_claims37_tables.py" "$out"
