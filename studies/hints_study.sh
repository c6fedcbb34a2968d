#!/usr/bin/env bash
# The retention-hint study (docs/results/hints.md): block hit rate of lru, s3fifo and wa, each
# bare and inside the guard (guarded:inner=...), with no hints, correct hints (rules matching the
# workload's structure, and the oracle: the bound), wrong hints (random blocks) and adversarial
# hints (the blocks never reused again, at 100 forever), on the Mooncake conversation trace,
# Chatbot Arena (built with `kvpolicy trace build`) and the agent generator (its defaults but 200
# sessions instead of 500: lru's list scan grew with the hinted blocks when first measured,
# docs/results/hints.md);
# then TTFT in serve mode for lru on the agent workload. Every hint parameter is fixed here, chosen before
# any run (the issue's examples), not tuned on these traces.
# Env: KVPOLICY (binary, default build/kvpolicy), KVPOLICY_DATA, OUT (default hints_study),
# CAPACITY (default 0.05), JOBS (default 1), ONLY (run these traces only: "agent serve"; "offload"
# runs the minimum priority for offload's serve rows, not in the default set).
set -euo pipefail
cd "$(dirname "$0")/.."
K=${KVPOLICY:-build/kvpolicy}
T=${KVPOLICY_DATA:-/work/shared/traces}
OUT=${OUT:-hints_study}
CAPACITY=${CAPACITY:-0.05}
JOBS=${JOBS:-1}
POLICIES=lru,s3fifo,wa,guarded:inner=lru,guarded:inner=s3fifo,guarded:inner=wa
mkdir -p "$OUT"
run() { echo "\$ ${*/#$K/kvpolicy}"; "$@"; }

ONLY=${ONLY:-mooncake arena agent serve}
run "$K" trace generate -k agent --params sessions=200 --seed 1 -o "$OUT/agent.kvtrace" > /dev/null
run "$K" trace build --source chatbot-arena -i "$T/chatbot-arena/chatbot_arena_conversations_raw.jsonl" \
  -o "$OUT/arena.kvtrace" > /dev/null 2>&1
traces=("mooncake:$T/mooncake-conversation/conversation_trace.jsonl"
        "arena:$OUT/arena.kvtrace" "agent:$OUT/agent.kvtrace")

# name:rules (';' between rules)
hints=("none:"
       "system-prompt:system-prompt=90:600s"
       "session-pin:session-pin=120s"
       "both:system-prompt=90:600s;session-pin=120s"
       "oracle:oracle=90:600s"
       "random:random=90:600s:0.1"
       "adversarial:adversarial=100:inf")

for t in "${traces[@]}"; do
  name=${t%%:*} file=${t#*:}
  [[ " $ONLY " == *" $name "* ]] || continue
  for h in "${hints[@]}"; do
    label=${h%%:*} rules=${h#*:}
    flags=()
    IFS=';' read -ra list <<< "$rules"
    for r in "${list[@]}"; do [[ -n $r ]] && flags+=(--hint "$r"); done
    run "$K" simulate -t "$file" -p "$POLICIES" -c "$CAPACITY" -j "$JOBS" "${flags[@]}" \
      --json "$OUT/$name.$label.jsonl" > /dev/null 2>&1
  done
done

# TTFT in serve mode: lru on the agent workload, 4 workers (cache-aware routing), 5 % each.
[[ " $ONLY " == *" serve "* ]] && for h in "none:" "session-pin:session-pin=120s" "oracle:oracle=90:600s" "adversarial:adversarial=100:inf"; do
  label=${h%%:*} rule=${h#*:}
  flags=()
  [[ -n $rule ]] && flags=(--hint "$rule")
  run "$K" serve -t "$OUT/agent.kvtrace" -p lru,guarded:inner=lru --workers 4 --router cache_aware \
    -c 0.05 "${flags[@]}" --json "$OUT/serve.$label.jsonl" > /dev/null 2>&1
done
# The minimum priority for offload (docs/serve.md, "Memory tiers"): the same serve runs for lru
# with a DRAM tier twice HBM, each hint rule without and with --offload-min-priority. With the
# system-prompt rule (prefixes at 90, the rest unhinted at 35) a minimum of 36 demotes only the
# hinted prefixes; with the oracle rule (blocks never used again at 0) TensorRT-LLM's default of
# 30 drops exactly those.
if [[ " $ONLY " == *" offload "* ]]; then for h in "system-prompt:system-prompt=90:600s:36" "oracle:oracle=90:600s:30"; do
  label=${h%%:*} rest=${h#*:}
  rule=${rest%:*} min=${rest##*:}
  for m in off "$min"; do
    flags=(--hint "$rule")
    [[ $m != off ]] && flags+=(--offload-min-priority "$m")
    run "$K" serve -t "$OUT/agent.kvtrace" -p lru --workers 4 --router cache_aware -c 0.05 \
      --dram 2 "${flags[@]}" --json "$OUT/offload.$label.$m.jsonl" > /dev/null 2>&1
  done
done; fi

python3 studies/hints_tables.py "$OUT"

