#!/usr/bin/env bash
# Regenerates docs/results/predictors.md "3b. The reuse predictor": LARU, FPB and HF with
# the reuse predictor against LRU and Belady on Mooncake, Chatbot Arena and ShareGPT at 2, 5
# and 10 % of unique blocks, its cost per access, its out-of-sample AUC and feature gains, and
# an in-sample upper bound (one model fitted on every resolved sample of a first replay, then
# replayed frozen).
# Usage: studies/predictor_results.sh OUTDIR. Builds the two text traces and writes JSON into
# OUTDIR; prints the markdown tables on stdout (commands on stderr).
# Env: K (default build/kvpolicy), T (default ../shared/traces), EXTRA (reuse parameters added
# to every learned policy, e.g. EXTRA=horizon=100,bonus_x=0.3).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: predictor_results.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
K=${K:-build/kvpolicy}
T=${T:-../shared/traces}
cd "$src"
run() { echo "\$ ${*}" >&2; "$@" > /dev/null; }
P="predictor=reuse${EXTRA:+,$EXTRA}"

run "$K" trace build --source chatbot-arena \
    -i "$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl" -o "$out/arena.kvtrace"
run "$K" trace build --source sharegpt -i "$T/sharegpt-sample/sharegpt_sample_slim.jsonl" \
    -o "$out/sharegpt.jsonl" --skip-bad-lines

for tr in mooncake:$T/mooncake-conversation/conversation_trace.jsonl arena:$out/arena.kvtrace \
          sharegpt:$out/sharegpt.jsonl; do
  name=${tr%%:*}
  file=${tr#*:}
  rm -f "$out/$name.json" "$out/$name"-bound-*.json
  # One replay at a time: the cost per access is a timing.
  run "$K" simulate -t "$file" -c 0.02,0.05,0.1 --jobs 1 --json "$out/$name.json" \
      -p "lru,belady,laru:$P,fpb:$P,hf:$P"
  for cap in 0.02 0.05 0.1; do
    model=$out/$name-$cap.model.json
    run "$K" simulate -t "$file" -c $cap --jobs 1 -p "laru:$P,save_model=$model"
    run "$K" simulate -t "$file" -c $cap --jobs 1 --json "$out/$name-bound-$cap.json" \
        -p "laru:$P,load_model=$model,fpb:$P,load_model=$model,hf:$P,load_model=$model"
  done
done
python3 "$src/studies/predictor_results_tables.py" "$out"

# Two deployable variants: FPB with the reuse predictor inside the guard (never far below LRU),
# and LARU with the paper's LLM setting of its trust decay (lambda halved every k/32 induced
# misses instead of every one).
for tr in mooncake:$T/mooncake-conversation/conversation_trace.jsonl arena:$out/arena.kvtrace \
          sharegpt:$out/sharegpt.jsonl; do
  name=${tr%%:*}
  rm -f "$out/$name-variants.json"
  run "$K" simulate -t "${tr#*:}" -c 0.02,0.05,0.1 --jobs 1 --json "$out/$name-variants.json" \
      -p "lru,belady,fpb:$P,guarded:inner=fpb,inner_params=${P//,/;},laru:$P,laru:$P,halve_every=0"
  echo
  echo "Variants on $name, block hit % and the share of the LRU–Belady gap closed:"
  echo
  python3 "$src/studies/results_tables.py" hitrates "$out/$name-variants.json" --gap
done
