#!/usr/bin/env bash
# Regenerates "4.5 Features that might transfer, and isotonic calibration" of
# docs/results/lpc.md: the continuation classifier trained on Chatbot Arena's train half,
# ShareGPT's, or both, with each extra feature (alone and together) and each calibration
# (Platt or isotonic, fitted on the validation share of the training side); its validation
# AUC (the only number a default may be chosen on), and its per-turn AUC / MCC on each
# dataset's held-out half. Then LPC's block hit rates (alone and guarded) on the cross-dataset
# held-out halves for the base model with each calibration (VARIANT=X: X's isotonic model
# instead of the base's) and for EXTRA_MODELS (e.g. "answer-platt tq-platt all-platt"), each with
# the decay chosen on its training dataset's validation split.
# Last, the validation AUC of each variant against the base with a paired bootstrap
# (studies/lpc_paired.py).
# Usage: studies/lpc_features.sh OUT_DIR. Env: KVPOLICY (default build/kvpolicy), KVPOLICY_DATA,
# JOBS (replays at once, default 1), SKIP_TRAIN=1 (reuse OUT_DIR's models). About 5 minutes on
# one core for the models, 2 more per LPC model.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: lpc_features.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
source "$src/studies/lpc_env.sh"
cd "$out"
VARIANTS=(base: no-turn:--no-turn-token answer:--answer-length tq:--turn-quantile
          tq-no-turn:--turn-quantile,--no-turn-token all:--answer-length,--turn-quantile
          all-no-turn:--answer-length,--turn-quantile,--no-turn-token)

echo "## models and their evaluations (JSON: train-<src>-<variant>-<cal>.json, eval-...-on-<data>.json)"
if [[ -z ${SKIP_TRAIN:-} ]]; then
for trainer in arena sharegpt mix; do
  case $trainer in
    arena) targs=("${ARENA[@]}") ;;
    sharegpt) targs=("${SHARE[@]}") ;;
    mix) targs=("${ARENA[@]}" --also "sharegpt=$S") ;;
  esac
  for variant in "${VARIANTS[@]}"; do
    name=${variant%%:*}
    IFS=, read -r -a flags <<< "${variant#*:}"
    for cal in platt isotonic; do
      m=$trainer-$name-$cal
      run "$K" classifier train "${targs[@]}" "${HALF[@]}" "${VAL[@]}" --calibration "$cal" \
          "${flags[@]}" --out "$m.bin" --json "train-$m.json" > "train-$m.txt"
      for data in arena sharegpt; do
        if [[ $data == arena ]]; then args=("${ARENA[@]}"); else args=("${SHARE[@]}"); fi
        run "$K" classifier eval "${args[@]}" "${HALF[@]}" --model "$m.bin" \
            --json "eval-$m-on-$data.json" > /dev/null
      done
    done
  done
done
fi
/usr/bin/python3 "$src/studies/lpc_features_table.py" .

# LPC with the variant chosen on validation (VARIANT, default base) against the base, on the
# cross-dataset held-out halves; each model's decay chosen on its training validation split.
echo
echo "## LPC on the cross-dataset held-out halves, 2/5/10/20 %"
for pair in arena:sharegpt sharegpt:arena; do
  trainer=${pair%%:*}
  data=${pair#*:}
  if [[ $trainer == arena ]]; then targs=("${ARENA[@]}"); else targs=("${SHARE[@]}"); fi
  if [[ $data == arena ]]; then args=("${ARENA[@]}"); else args=("${SHARE[@]}"); fi
  rows=()
  for m in "$trainer-base-platt" "$trainer-${VARIANT:-base}-isotonic" \
           ${EXTRA_MODELS:+$(for x in $EXTRA_MODELS; do echo "$trainer-$x"; done)}; do
    [[ -e $m-decay.json ]] || {
      run "$K" trace build "${targs[@]}" --classifier "$m.bin" --split validation "${HALF[@]}" \
          "${VAL[@]}" --out "$m-val.kvtrace" > /dev/null
      run "$K" study lpc-decay -t "$m-val.kvtrace" --jobs "$JOBS" --json "$m-decay.json" > /dev/null
    }
    scale=$(chosen "$m-decay.json")
    echo "$m: chosen scale_s=$scale"
    run "$K" trace build "${args[@]}" --classifier "$m.bin" --split test "${HALF[@]}" \
        --out "$m-on-$data.kvtrace" > /dev/null
    run "$K" simulate -t "$m-on-$data.kvtrace" -c 2%,5%,10%,20% --jobs "$JOBS" \
        --json "hit-$m-on-$data.jsonl" \
        -p "lru,lpc:scale_s=$scale,guarded:inner=lpc,inner_params=scale_s=$scale" > /dev/null
    rows+=("hit-$m-on-$data.jsonl")
  done
  /usr/bin/python3 "$src/studies/lpc_features_table.py" --hit "$trainer-trained on $data" "${rows[@]}"
done

# Paired: each variant against the base (Platt models; AUC does not depend on a monotone map) on
# the training dataset's validation split, scored as LPC sees it (a trace, online turn quantile).
echo
echo "## validation AUC, variant minus base, paired bootstrap over conversations"
for trainer in arena sharegpt; do
  if [[ $trainer == arena ]]; then targs=("${ARENA[@]}"); else targs=("${SHARE[@]}"); fi
  files=()
  for variant in "${VARIANTS[@]}"; do
    name=${variant%%:*}
    run "$K" trace build "${targs[@]}" --classifier "$trainer-$name-platt.bin" --split validation \
        "${HALF[@]}" "${VAL[@]}" --out "val-$trainer-$name.jsonl" > /dev/null 2>&1
    files+=("val-$trainer-$name.jsonl")
  done
  /usr/bin/python3 "$src/studies/lpc_paired.py" "${files[@]}"
done
