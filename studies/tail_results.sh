#!/usr/bin/env bash
# Regenerates docs/results/tail.md "Tail latency: T-LRU vs LRU and Threshold-LRU": `kvpolicy study tail`
# (lru, threshold_lru, tlru at every xi, and tlru_end, tlru_length, tail_belady at --figure-xi)
# on the built-in conversation workload, Chatbot Arena, Mooncake and the ShareGPT sample, each
# with T-LRU's default budget (calibration=model) and, beside it, the earlier linear rule
# (--tlru-params calibration=linear; the oracle variants' linear runs come from `simulate`).
# Usage: studies/tail_results.sh OUT_DIR   (run from the source tree; K=build/kvpolicy and
# T=../shared/traces by default). Writes every study's JSON and the traces it builds to OUT_DIR
# and prints the markdown tables on stdout. About 4 minutes on one core (Mooncake is most).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: tail_results.sh OUT_DIR}
K=${K:-build/kvpolicy}
T=${T:-../shared/traces}
K=$(realpath "$K")
T=$(realpath "$T")
M=$T/mooncake-conversation/conversation_trace.jsonl
for f in "$K" "$M" "$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl" \
         "$T/sharegpt-sample/sharegpt_sample_slim.jsonl"; do
  [[ -e $f ]] || { echo "missing: $f" >&2; exit 1; }
done
mkdir -p "$out"
cd "$out"
rm -f ./*.json
log() { echo "+ $*" >&2; "$@" > /dev/null; }
tables() { python3 "$src/studies/tail_results_tables.py" "$@"; }
linear=calibration=linear
oracle_linear() {  # trace, capacities, xi, slo, json, then cost-model options
  local t=$1 c=$2 xi=$3 slo=$4 json=$5
  shift 5
  log "$K" simulate -t "$t" -c "$c" --xi "$xi" --slo "$slo" --jobs 1 --json "$json" "$@" \
      -p "tlru_end:xi_ms=$xi,$linear,tlru_length:xi_ms=$xi,$linear,tail_belady:xi_ms=$xi,$linear"
}

# ---- the built-in conversation workload (1000 sessions, seed 1) ------------------------------
log "$K" trace generate --kind conversation --seed 1 -o conv.kvtrace
c=0.05,0.1,0.2
log "$K" study tail -t conv.kvtrace -c $c --json conv.json
log "$K" study tail -t conv.kvtrace -c $c --tlru-params $linear --json conv-linear.json
oracle_linear conv.kvtrace $c 200 200 conv-oracle-linear.json
# Where violations still rise (20 %, xi = SLO): the next prompt's estimate. Q-hat = 25 blocks is
# twice the mean new user prompt (200 tokens).
log "$K" study tail -t conv.kvtrace -c $c --xi 150,200 --tlru-params qhat=25 --json conv-qhat25.json

# ---- Chatbot Arena (cl100k_base, 16-token blocks), the paper's capacities in tokens ----------
log "$K" trace build --source chatbot-arena \
    -i "$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl" -o arena.kvtrace
c=1000t,2000t,4000t,6000t,8000t,10000t,0.05,0.1
qwen=(--model qwen2.5-32b --gpu a100-80gb)
log "$K" study tail -t arena.kvtrace -c $c "${qwen[@]}" --json arena.json
log "$K" study tail -t arena.kvtrace -c $c "${qwen[@]}" --tlru-params $linear --json arena-linear.json
oracle_linear arena.kvtrace 625,0.05,0.1 200 200 arena-oracle-linear.json "${qwen[@]}"
# The default Llama-3.1-8B preset, at the paper's scale and at its own (SLO 50 ms).
log "$K" study tail -t arena.kvtrace -c $c --json arena-llama.json
log "$K" study tail -t arena.kvtrace -c $c --tlru-params $linear --json arena-llama-linear.json
log "$K" study tail -t arena.kvtrace -c $c --xi 10,20,30,50,100 --slo 50 --figure-xi 50 \
    --json arena-llama-slo50.json
log "$K" study tail -t arena.kvtrace -c $c --xi 10,20,30,50,100 --slo 50 --figure-xi 50 \
    --tlru-params $linear --json arena-llama-slo50-linear.json

# ---- Mooncake (sessions inferred), Llama-3.1-8B --------------------------------------------
c=0.02,0.05,0.1,0.2
log "$K" study tail -t "$M" -c $c --json mooncake.json
log "$K" study tail -t "$M" -c $c --tlru-params $linear --json mooncake-linear.json
own=(--xi 500,1000,2000,3000,5000 --slo 2000 --figure-xi 2000)
log "$K" study tail -t "$M" -c $c "${own[@]}" --json mooncake-slo2000.json
log "$K" study tail -t "$M" -c $c "${own[@]}" --tlru-params $linear --json mooncake-slo2000-linear.json

# ---- ShareGPT sample, Qwen2.5-32B -----------------------------------------------------------
log "$K" trace build --source sharegpt -i "$T/sharegpt-sample/sharegpt_sample_slim.jsonl" \
    -o sharegpt.jsonl --skip-bad-lines
c=1000t,2000t,4000t,6000t,8000t,10000t,0.05,0.1
log "$K" study tail -t sharegpt.jsonl -c $c "${qwen[@]}" --json sharegpt.json
log "$K" study tail -t sharegpt.jsonl -c $c "${qwen[@]}" --tlru-params $linear --json sharegpt-linear.json

# ---- tables ---------------------------------------------------------------------------------
tables "Built-in conversation workload, Llama-3.1-8B @ A100-80GB, SLO 200 ms" conv.json \
    --linear conv-linear.json --oracle-linear conv-oracle-linear.json
tables "Built-in conversation workload, T-LRU with qhat=25 blocks" conv-qhat25.json --tables slo
tables "Chatbot Arena, Qwen2.5-32B @ A100-80GB, SLO 200 ms" arena.json \
    --linear arena-linear.json --oracle-linear arena-oracle-linear.json
tables "Chatbot Arena, Llama-3.1-8B @ A100-80GB, SLO 200 ms" arena-llama.json \
    --linear arena-llama-linear.json --tables baselines,t1,slo
tables "Chatbot Arena, Llama-3.1-8B @ A100-80GB, SLO 50 ms" arena-llama-slo50.json \
    --linear arena-llama-slo50-linear.json --tables t1,slo,fig
tables "Mooncake, Llama-3.1-8B @ A100-80GB, SLO 200 ms" mooncake.json \
    --linear mooncake-linear.json --tables baselines,t1,slo,fig
tables "Mooncake, Llama-3.1-8B @ A100-80GB, SLO 2000 ms" mooncake-slo2000.json \
    --linear mooncake-slo2000-linear.json --tables t1,slo,fig
tables "ShareGPT sample, Qwen2.5-32B @ A100-80GB, SLO 200 ms" sharegpt.json \
    --linear sharegpt-linear.json --tables baselines,t1,slo,fig
