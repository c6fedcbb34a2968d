#!/usr/bin/env bash
# Regenerates "LPC across datasets" of docs/results/lpc.md:
#   1. the continuation classifier per turn, in and across datasets: trained on Chatbot Arena's
#      train half, ShareGPT's train half, or both (a mixture); tested on each held-out half and
#      on the other dataset's whole file; uncalibrated and calibrated (Platt scaling fitted on a
#      validation share of the training side)
#   2. LPC's decay chosen on the validation split of each training dataset (`study lpc-decay`)
#   3. LPC before (uncalibrated scores, the paper's decay 0.01/s, no drift rule) and after
#      (calibrated scores, the chosen decay, the drift rule), alone and guarded, against lru and
#      lpc:predictor=oracle at 2/5/10/20 %, in and across datasets
#   4. the features that might transfer (--extra-features), on the cross-dataset test
# Usage: studies/lpc_cross.sh OUT_DIR. Env: KVPOLICY (default build/kvpolicy), KVPOLICY_DATA,
# JOBS (replays at once, default 1), ONLY=4 (section 4 alone). About 3 minutes on one core.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: lpc_cross.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
source "$src/studies/lpc_env.sh"
cd "$out"

if [[ ${ONLY:-} != 4 ]]; then
echo "## 1. models: train half of each dataset, and both; uncalibrated and calibrated"
run "$K" classifier train "${ARENA[@]}" "${HALF[@]}" --out arena.bin > /dev/null
run "$K" classifier train "${SHARE[@]}" "${HALF[@]}" --out sharegpt.bin > /dev/null
run "$K" classifier train "${ARENA[@]}" "${HALF[@]}" --also "sharegpt=$S" --out mix.bin > /dev/null
run "$K" classifier train "${ARENA[@]}" "${HALF[@]}" "${VAL[@]}" --out arena-cal.bin | grep Platt
run "$K" classifier train "${SHARE[@]}" "${HALF[@]}" "${VAL[@]}" --out sharegpt-cal.bin | grep Platt
run "$K" classifier train "${ARENA[@]}" "${HALF[@]}" "${VAL[@]}" --also "sharegpt=$S" \
    --out mix-cal.bin | grep Platt

echo
echo "## 1. per-turn evaluation (JSON in eval-<model>-on-<data>-<split>.json)"
evaluate() {  # evaluate MODEL DATA(arena|sharegpt) SPLIT(test|all)
  local args
  if [[ $2 == arena ]]; then args=("${ARENA[@]}"); else args=("${SHARE[@]}"); fi
  run "$K" classifier eval "${args[@]}" "${HALF[@]}" --model "$1.bin" --split "$3" \
      --json "eval-$1-on-$2-$3.json" > "eval-$1-on-$2-$3.txt"
}
for m in arena sharegpt mix arena-cal sharegpt-cal mix-cal; do
  evaluate "$m" arena test
  evaluate "$m" sharegpt test
done
evaluate arena sharegpt all
evaluate arena-cal sharegpt all
evaluate sharegpt arena all
evaluate sharegpt-cal arena all
/usr/bin/python3 "$src/studies/lpc_cross_table.py" eval-arena*.json eval-sharegpt*.json eval-mix*.json

echo
echo "## 2. the decay chosen on each training dataset's validation split"
run "$K" trace build "${ARENA[@]}" --classifier arena-cal.bin --split validation "${HALF[@]}" \
    "${VAL[@]}" --out arena-val.kvtrace > /dev/null
run "$K" trace build "${SHARE[@]}" --classifier sharegpt-cal.bin --split validation "${HALF[@]}" \
    "${VAL[@]}" --out sharegpt-val.kvtrace > /dev/null
run "$K" study lpc-decay -t arena-val.kvtrace --jobs "$JOBS" --json arena-decay.json
run "$K" study lpc-decay -t sharegpt-val.kvtrace --jobs "$JOBS" --json sharegpt-decay.json
scale_arena=$(chosen arena-decay.json)
scale_sharegpt=$(chosen sharegpt-decay.json)
echo "chosen: Arena-trained scale_s=$scale_arena, ShareGPT-trained scale_s=$scale_sharegpt"

echo
echo "## 3. LPC before and after, in and across datasets, 2/5/10/20 %"
# Test traces: Arena's held-out half and ShareGPT's held-out half (never trained on by either
# model's own dataset), each scored by the uncalibrated (before) and calibrated (after) model.
compare() {  # compare NAME DATA(arena|sharegpt) MODEL SCALE [SPLIT (test)]
  local args
  if [[ $2 == arena ]]; then args=("${ARENA[@]}"); else args=("${SHARE[@]}"); fi
  run "$K" trace build "${args[@]}" --classifier "$3.bin" --split "${5:-test}" "${HALF[@]}" \
      --out "$1-before.kvtrace" > /dev/null
  run "$K" trace build "${args[@]}" --classifier "$3-cal.bin" --split "${5:-test}" "${HALF[@]}" \
      --out "$1-after.kvtrace" > /dev/null
  run "$K" simulate -t "$1-before.kvtrace" -c 2%,5%,10%,20% --jobs "$JOBS" --json "$1-before.jsonl" \
      -p "lru,lpc:predictor=oracle,lpc:drift=false,guarded:inner=lpc,inner_params=drift=false,lpc" \
      > /dev/null
  run "$K" simulate -t "$1-after.kvtrace" -c 2%,5%,10%,20% --jobs "$JOBS" --json "$1-after.jsonl" \
      -p "lpc:drift=false,lpc:scale_s=$4,drift=false,lpc:scale_s=$4,guarded:inner=lpc,inner_params=scale_s=$4" \
      > /dev/null
  /usr/bin/python3 "$src/studies/lpc_cross_table.py" --hit "$1" "$1-before.jsonl" "$1-after.jsonl"
}
compare arena-on-sharegpt sharegpt arena "$scale_arena"
compare sharegpt-on-arena arena sharegpt "$scale_sharegpt"
compare arena-on-arena arena arena "$scale_arena"
compare sharegpt-on-sharegpt sharegpt sharegpt "$scale_sharegpt"
# The whole ShareGPT file is unseen by the Arena-trained model.
compare arena-on-sharegpt-all sharegpt arena "$scale_arena" all
fi

echo
echo "## 4. features that might transfer: Arena-trained (calibrated), tested on ShareGPT's held-out half"
# Each variant gets its own decay, chosen on Arena's validation split as above.
for variant in base:"" no-turn:--no-turn-token answer:--answer-length both:--no-turn-token,--answer-length; do
  name=${variant%%:*}
  IFS=, read -r -a flags <<< "${variant#*:}"
  run "$K" classifier train "${ARENA[@]}" "${HALF[@]}" "${VAL[@]}" "${flags[@]}" \
      --out "feat-$name.bin" > /dev/null
  for data in arena sharegpt; do
    if [[ $data == arena ]]; then args=("${ARENA[@]}"); else args=("${SHARE[@]}"); fi
    run "$K" classifier eval "${args[@]}" "${HALF[@]}" --model "feat-$name.bin" \
        --json "feat-eval-feat_$name-on-$data-test.json" > /dev/null
  done
  run "$K" trace build "${ARENA[@]}" --classifier "feat-$name.bin" --split validation "${HALF[@]}" \
      "${VAL[@]}" --out "feat-$name-val.kvtrace" > /dev/null
  run "$K" study lpc-decay -t "feat-$name-val.kvtrace" --jobs "$JOBS" --json "feat-$name-decay.json" \
      > /dev/null
  scale=$(chosen "feat-$name-decay.json")
  echo "feat-$name: chosen scale_s=$scale"
  run "$K" trace build "${SHARE[@]}" --classifier "feat-$name.bin" --split test "${HALF[@]}" \
      --out "feat-$name-sharegpt.kvtrace" > /dev/null
  run "$K" simulate -t "feat-$name-sharegpt.kvtrace" -c 2%,5%,10%,20% --jobs "$JOBS" \
      --json "feat-$name-after.jsonl" -p "lru,lpc:scale_s=$scale,lpc:scale_s=$scale,drift=false" \
      > /dev/null
  /usr/bin/python3 "$src/studies/lpc_cross_table.py" --hit "feat-$name (Arena-trained, on ShareGPT)" \
      "feat-$name-after.jsonl"
done
(cd "$out" && for f in feat-eval-*.json; do cp "$f" "${f#feat-}"; done)
/usr/bin/python3 "$src/studies/lpc_cross_table.py" eval-feat_*.json
