#!/usr/bin/env bash
# Regenerates the LPC results of docs/results/lpc.md ("LPC and the guard"):
#   1. the continuation classifier (fastText) on Chatbot Arena and ShareGPT: test-split metrics
#   2. study lpc on held-out conversations: a model trained on half of the conversations scores
#      a trace built from the other half (`trace build --split test --test-share 0.5`)
#   3. the guard around LPC under noisy / adversarial continuation scores, and around FPB and WA
#      on Mooncake (studies/guard_study.sh)
# Usage: studies/lpc_results.sh OUT_DIR [FIGURES_DIR]. Writes models, traces and JSON to
# OUT_DIR, PNG plots to FIGURES_DIR (default OUT_DIR), and prints what docs/results/lpc.md shows.
# Env: KVPOLICY (default build/kvpolicy), KVPOLICY_DATA (default ../shared/traces).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: lpc_results.sh OUT_DIR [FIGURES_DIR]}
mkdir -p "$out"
out=$(cd "$out" && pwd)
fig=${2:-$out}
mkdir -p "$fig"
fig=$(cd "$fig" && pwd)
source "$src/studies/lpc_env.sh"
cd "$out"

echo "## 1. classifier, test split of 20 % of the conversations"
run "$K" classifier train --source chatbot-arena --input "$A" --out arena.bin --json arena-test.json
run "$K" classifier eval --model arena.bin --source chatbot-arena --input "$A" --min-turn 2
run "$K" classifier train --source sharegpt --input "$S" --skip-bad-lines --out sharegpt.bin \
    --json sharegpt-test.json

POLICIES='lru,lpc,lpc:predictor=oracle,belady,wa,s3fifo,guarded:inner=lpc'
for src_name in chatbot-arena:$A sharegpt:$S; do
  name=${src_name%%:*}
  input=${src_name#*:}
  echo
  echo "## 2. lpc-study, $name, held-out half"
  run "$K" classifier train --source "$name" --input "$input" --skip-bad-lines --test-share 0.5 \
      --out "$name-half.bin" > /dev/null
  run "$K" trace build --source "$name" --input "$input" --skip-bad-lines --classifier \
      "$name-half.bin" --split test --test-share 0.5 --out "$name-heldout.kvtrace"
  run "$K" study lpc -t "$name-heldout.kvtrace" -p "$POLICIES" --jobs 1 --json "$name-lpc.jsonl"
  if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
    /usr/bin/python3 "$src/studies/plot_lpc_study.py" "$name-lpc.jsonl" "$fig/lpc-$name.png"
  else
    echo "(no matplotlib: plot skipped; apt-get install python3-matplotlib)"
  fi
done

echo
echo "## 2. the decay rate on held-out Chatbot Arena (the mechanism, not a tuned result)"
run "$K" simulate -t chatbot-arena-heldout.kvtrace -c 0.02,0.05,0.1 --jobs 1 \
    -p lru,lpc,lpc:scale_s=0.05,lpc:scale_s=0.2,lpc:predictor=constant

echo
echo "## 3. the guard around LPC (held-out Chatbot Arena), noisy continuation scores"
TRACE=$out/chatbot-arena-heldout.kvtrace FORMAT=native OUT=$out/guard-lpc.csv KVPOLICY=$K \
  POLICIES='lru,lpc:predictor=noisy,p={p},guarded:inner=lpc,inner_params=predictor=noisy;p={p}' \
  "$src/studies/guard_study.sh"
echo
echo "## 3. the guard around FPB and WA (Mooncake)"
OUT=$out/guard-mooncake.csv KVPOLICY=$K "$src/studies/guard_study.sh"
