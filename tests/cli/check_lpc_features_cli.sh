#!/usr/bin/env bash
# LPC's transfer features and isotonic calibration (docs/results/lpc.md, 4.5): `classifier train
# --turn-quantile --calibration isotonic` stores both with the model, `classifier eval` and
# `trace build --classifier` use them, and their bad inputs fail with nothing written
# (ctest: CliLpcFeatures). Usage: check_lpc_features_cli.sh KVPOLICY_BINARY. Made-up data.
set -uo pipefail
K=${1:?usage: check_lpc_features_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" classifier --help > /dev/null 2>&1 || skip "no classifier command"
help=$("$K" classifier train --help 2>&1)
[[ $help == *--turn-quantile* && $help == *--calibration* ]] ||
  fail "train --help lacks --turn-quantile or --calibration"

# 300 conversations of 1 to 5 turns (lib.sh).
chat_conversations 300 5 > arena.jsonl
A=(--source chatbot-arena --input arena.jsonl)

"$K" classifier train "${A[@]}" --test-share 0.3 --validation-share 0.3 --calibration isotonic \
  --turn-quantile --epochs 5 --out iso.bin --json iso.json > iso.txt 2>&1 ||
  fail_now "train --calibration isotonic --turn-quantile: $(cat iso.txt)"
grep -q "isotonic calibration on the validation split: [1-9][0-9]* breakpoints" iso.txt ||
  fail "train printed no isotonic fit: $(cat iso.txt)"
grep -q "cross-fitted on its two halves: platt 0\.[0-9]*, isotonic 0\.[0-9]*" iso.txt ||
  fail "train printed no cross-fitted Brier scores"
grep -q '"turn_quantile":1,"calibration":"isotonic"' iso.json || fail "train JSON lacks the new fields"
grep -q '"isotonic_points":[1-9]' iso.json || fail "train JSON lacks isotonic_points"
grep -q '"validation_auc":0\.' iso.json || fail "train JSON lacks validation_auc"
"$K" classifier eval "${A[@]}" --test-share 0.3 --model iso.bin --json eval.json > /dev/null 2>&1 ||
  fail "eval of an isotonic model"
grep -q '"isotonic_points":[1-9]' eval.json || fail "eval JSON lacks isotonic_points"
"$K" classifier eval "${A[@]}" --test-share 0.3 --model iso.bin --uncalibrated --json raw.json \
  > /dev/null 2>&1 || fail "eval --uncalibrated of an isotonic model"
cmp -s eval.json raw.json && fail "isotonic and uncalibrated evaluations are identical"
"$K" trace build "${A[@]}" --tokenizer approx --classifier iso.bin --out iso.kvtrace > build.txt 2>&1 ||
  fail "trace build with a turn-quantile model: $(cat build.txt)"
grep -q "scored .* requests with the continuation classifier" build.txt || fail "trace build scored nothing"
# Platt (the default) writes no isotonic map; a model without the flag has turn_quantile 0.
"$K" classifier train "${A[@]}" --test-share 0.3 --validation-share 0.3 --epochs 2 \
  --out platt.bin --json platt.json > /dev/null 2>&1 || fail "train (platt)"
grep -q '"turn_quantile":0,"calibration":"platt"' platt.json || fail "platt JSON: $(cat platt.json)"
grep -q '"isotonic_points":0' platt.json || fail "a Platt model has an isotonic map"

expect_error "needs --validation-share" classifier train "${A[@]}" --calibration isotonic --out x.bin
expect_error "calibration" classifier train "${A[@]}" --validation-share 0.2 --calibration spline \
  --out x.bin
expect_error "calibration" classifier eval "${A[@]}" --model iso.bin --calibration platt
[[ -e x.bin ]] && fail "a failed train wrote its model"
no_temporaries "lpc feature commands"
finish "classifier --turn-quantile, --calibration isotonic, eval and trace build with them: ok"
