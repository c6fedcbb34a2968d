#!/usr/bin/env bash
# Regenerates the serve-mode results of docs/results/serve.md (section "Serve mode"):
#   (a) RLT vs LRU hit rate on GSP in round-robin order, one worker, capacity / cycle footprint
#   (b) the cluster study: every router x {lru, rlt}, 4 workers, GSP in three orders,
#       conversations (ShareGPT, Chatbot Arena) and LooGLE (kvpolicy study route)
#   (c) WA vs LRU queued TTFT on Mooncake, 1 and 4 workers
#   (d) LARU (oracle) vs LRU vs Belady TTFT percentiles on Chatbot Arena and LooGLE
# Usage: studies/serve_results.sh OUT_DIR
# Writes every run's JSON (one object per line) and the traces it builds to OUT_DIR, and prints
# the markdown tables (studies/serve_results_tables.py). Every run uses --jobs 1; the whole
# script takes about a minute on one core.
# Environment: KVPOLICY (the binary, default build/kvpolicy), KVPOLICY_DATA (default
# ../shared/traces beside the source tree).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: serve_results.sh OUT_DIR}
REQUIRE=(chatbot-arena/chatbot_arena_conversations_raw.jsonl loogle/shortdep_qa.jsonl)
source "$src/studies/serve_env.sh"

# ---- (a) GSP, round-robin order, one worker -------------------------------------------------
# The RLT paper's single-worker setting (its Table 3): 64 groups x 32 prompts, other GSP
# parameters at KVRouting's defaults.
log "$K" trace generate --kind gsp --params groups=64,prompts=32,order=round_robin --seed 1 \
    -o gsp-rr.kvtrace
log "$K" trace stats -t gsp-rr.kvtrace --json a-gsp-stats.json
# Cycle footprint F = the unique blocks of one round-robin cycle (one prompt of every group) =
# every group's prefix + one question each. All prompts of a group have the same length, so a
# cycle is block_accesses / (prompts per group) and prompts per group = requests / sessions.
read -r F caps < <(python3 - <<'EOF'
import json
s = json.load(open("a-gsp-stats.json"))
per_group = s["requests"] // s["sessions"]
F = s["block_accesses"] // per_group
ratios = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.96, 0.965, 0.97, 0.975,
          0.98, 0.99, 1.0, 1.02, 1.05, 1.1, 1.25, 1.5]
print(F, ",".join(str(round(r * F)) for r in ratios))
EOF
)
echo "GSP round-robin cycle footprint: $F blocks" >&2
log "$K" simulate -t gsp-rr.kvtrace -p lru,belady -c "$caps" --jobs 1 --json a-replay.json
for seed in 1 2 3; do
  log "$K" simulate -t gsp-rr.kvtrace -p rlt -c "$caps" --seed $seed --jobs 1 \
      --json a-replay-rlt-seed$seed.json
done
# The serve-mode check: one worker at the paper's 12 req/s (as generated) and at 0.05 req/s
# (requests almost never overlap), and replay at one block less (a running request's output
# needs a block: 4 output tokens after a whole number of prompt blocks).
chk=$(python3 -c "print(','.join(str(round(r*$F)) for r in (0.85, 0.98)))")
chk1=$(python3 -c "print(','.join(str(round(r*$F)-1) for r in (0.85, 0.98)))")
log "$K" serve -t gsp-rr.kvtrace -w 1 -p lru,rlt -c "$chk" --seed 1 --jobs 1 --json a-serve-rate12.json
log "$K" serve -t gsp-rr.kvtrace -w 1 -p lru,rlt -c "$chk" --rate 0.05 --seed 1 --jobs 1 \
    --json a-serve-rate0.05.json
log "$K" simulate -t gsp-rr.kvtrace -p lru,rlt -c "$chk,$chk1" --seed 1 --jobs 1 --json a-check-replay.json

# ---- (b) the cluster study (the RLT paper's setting: Llama-3.1-8B on L40s, 200k-token caches,
# 4 workers, 12 requests/s; and at 6 requests/s, below saturation) ---------------------------
for rate in 12 6; do
  log "$K" study route --workloads all --data "$T" --rate $rate --jobs 1 \
      --json b-route-study-rate$rate.jsonl
  # LBGR's token cost: the authors' scale (the default) against the cluster's real one (-1).
  log "$K" study route --workloads gsp-random --router cache_aware,lbgr,lbgr:token_cost_ms=-1 \
      --policy lru,rlt --rate $rate --jobs 1 --json b-lbgr-token-cost-rate$rate.jsonl
done

# ---- (c) WA vs LRU, queued TTFT on Mooncake --------------------------------------------------
# 894 blocks = 60 GB of Llama-3.1-8B KV (64 MiB per 512-token block; an A100-80GB's memory
# beside the weights); 3,656 blocks = 2 % of the unique blocks, where WA's replay gain is
# largest. --rate stretches the trace's clock, so WA's window and refit period (trace seconds)
# are stretched by the same factor.
log "$K" trace stats -t "$M" -f mooncake --sessions infer --json c-mooncake-stats.json
log "$K" simulate -t "$M" -f mooncake --sessions infer -p lru,wa -c 894,3656 --jobs 1 \
    --json c-replay.json
wa_for_rate() {
  python3 - "$1" <<'EOF'
import json, sys
s = json.load(open("c-mooncake-stats.json"))
scale = (s["requests"] - 1) / float(sys.argv[1]) / s["duration_s"]
print(f"wa:window_s={1800 * scale:.0f},refit_s={60 * scale:.0f}")
EOF
}
for cfg in 1:round_robin:0.2 1:round_robin:0.3 1:round_robin:0.4 \
           4:cache_aware:0.8 4:cache_aware:1.2 4:cache_aware:1.6 4:round_robin:1.2; do
  IFS=: read -r w router rate <<< "$cfg"
  log "$K" serve -t "$M" -f mooncake --sessions infer -w "$w" -r "$router" \
      -p "lru,$(wa_for_rate "$rate")" -c 894,3656 --rate "$rate" --jobs 1 \
      --json "c-serve-w$w-$router-rate$rate.json"
done
# Evidence: WA with its window in trace seconds unscaled, at the most stretched rate.
log "$K" serve -t "$M" -f mooncake --sessions infer -w 1 -p wa -c 894,3656 --rate 0.2 --jobs 1 \
    --json c-wa-unscaled.json

# ---- (d) LARU with the oracle vs LRU, TTFT percentiles ---------------------------------------
# Chatbot Arena built as in docs/results/wa.md (cl100k, 16-token blocks, 1 conversation start/s,
# 100 s think time), Qwen2.5-32B on one A100-80GB (the LCR paper's LLM is 32B or larger);
# capacities 2.5, 5, 8 % of the unique blocks (the paper's Online-QA range).
log "$K" trace build --source chatbot-arena \
    -i "$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl" -o arena.kvtrace
log "$K" trace build --source loogle -i "$T/loogle/shortdep_qa.jsonl" -o loogle-shortdep-qa.kvtrace
for rate in 0 3; do
  log "$K" serve -t arena.kvtrace -w 1 -p lru,laru:predictor=oracle,belady -c 0.025,0.05,0.08 \
      --model qwen2.5-32b --gpu a100-80gb --rate $rate --jobs 1 --json d-arena-rate$rate.json
done
log "$K" serve -t loogle-shortdep-qa.kvtrace -w 1 -p lru,laru:predictor=oracle,belady \
    -c 2400,3600,4800 --model qwen2.5-32b --gpu a100-80gb --jobs 1 --json d-loogle.json

commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
python3 "$src/studies/serve_results_tables.py" "$out" "$commit"
for rate in 12 6; do
  echo
  echo "### (b) route-study at $rate requests/s (commit $commit)"
  echo
  python3 "$src/studies/route_study_tables.py" --summary "$out/b-route-study-rate$rate.jsonl"
  python3 "$src/studies/route_study_tables.py" "$out/b-route-study-rate$rate.jsonl"
  echo
  echo "### (b) LBGR's token cost at $rate requests/s (commit $commit)"
  python3 "$src/studies/route_study_tables.py" "$out/b-lbgr-token-cost-rate$rate.jsonl"
done
