#!/usr/bin/env bash
# Regenerates the "LARU that keeps its robustness" part of docs/results/robustness.md: block hit
# rate of LRU, FPB, LARU (Algorithm 1, lambda = 1 at every phase start) and
# laru:carry=evidence as the noisy oracle's adversarial corruption probability p goes 0:1:0.1,
# at 2, 5, 10 and 20 % of the unique blocks, both noise models, on every trace at hand: the
# generated conversation workload (one of the two sets carry_w and carry_gain were chosen on),
# Mooncake, Chatbot Arena's test half and ShareGPT (built with `kvpolicy trace build`) and, if
# present, Mooncake's synthetic trace.
# Writes JSON and the built traces to OUT_DIR, then the tables (stdout) and the figure
# (OUT_DIR/laru_carry.png) through studies/laru_carry_tables.py.
# Usage: studies/laru_carry_results.sh OUT_DIR. Env: K (binary, default build/kvpolicy), T (trace
# directory, default ../shared/traces), EXTRA (Mooncake synthetic trace, default
# /work/extra-traces/mooncake-synthetic/synthetic_trace.jsonl; skipped when absent), JOBS (runs
# at once, default 2). About 30 minutes on the shared 2-core machine.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: laru_carry_results.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$src"
K=${K:-build/kvpolicy}
T=${T:-../shared/traces}
EXTRA=${EXTRA:-/work/extra-traces/mooncake-synthetic/synthetic_trace.jsonl}
JOBS=${JOBS:-2}
POLICIES=lru,fpb,laru,laru:carry=evidence

"$K" trace generate -k conversation --seed 1 -o "$out/generated.kvtrace" > /dev/null
# Arena's test half: carry_w and carry_gain were chosen on its train half (and the generated
# workload).
"$K" trace build --source chatbot-arena -i "$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl" \
  --split test -o "$out/arena.kvtrace" > /dev/null 2>&1
"$K" trace build --source sharegpt -i "$T/sharegpt-sample/sharegpt_sample_slim.jsonl" \
  -o "$out/sharegpt.kvtrace" > /dev/null 2>&1
traces=("generated:$out/generated.kvtrace" "arena:$out/arena.kvtrace"
        "sharegpt:$out/sharegpt.kvtrace")
[[ -f $EXTRA ]] && traces+=("synthetic:$EXTRA")
traces=("mooncake:$T/mooncake-conversation/conversation_trace.jsonl" "${traces[@]}")  # longest first

run() {  # NAME FILE REDRAW
  echo "\$ kvpolicy study robustness -t $2 -c 0.02,0.05,0.1,0.2 -n 0:1:0.1 -p $POLICIES" \
    "--redraw $3 --json $1-$3.jsonl" >&2
  "$K" study robustness -t "$2" -c 0.02,0.05,0.1,0.2 -n 0:1:0.1 -p "$POLICIES" --redraw "$3" \
    --json "$out/$1-$3.jsonl" > /dev/null 2>&1
}
for t in "${traces[@]}"; do
  for redraw in request access; do
    while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
    run "${t%%:*}" "${t#*:}" "$redraw" &
  done
done
wait
python3 studies/laru_carry_tables.py "$out"
