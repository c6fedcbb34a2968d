#!/usr/bin/env bash
# LPC across datasets (docs/results/lpc.md): `classifier train --validation-share` (Platt
# scaling stored with the model) and `--also` (a mixture), `classifier eval`'s per-turn table
# and --uncalibrated, `trace build --split validation`, and `study lpc-decay` (the decay chosen
# on the validation trace), with their bad-input errors (ctest: CliLpcCrossDataset).
# Usage: check_lpc_cross_cli.sh KVPOLICY_BINARY. A small made-up Chatbot Arena file: no data.
set -uo pipefail
K=${1:?usage: check_lpc_cross_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" classifier --help > /dev/null 2>&1 || skip "no classifier command"
[[ $("$K" classifier train --help 2>&1) == *--validation-share* ]] ||
  fail "train --help lacks --validation-share"

# 400 conversations of 1 to 6 turns (lib.sh).
chat_conversations 400 6 > arena.jsonl
A=(--source chatbot-arena --input arena.jsonl)

"$K" classifier train "${A[@]}" --test-share 0.3 --validation-share 0.3 --epochs 5 \
  --out cal.bin --json train.json > train.txt 2>&1 || fail_now "train --validation-share: $(cat train.txt)"
grep -q "Platt scaling on the validation split: a " train.txt || fail "train printed no Platt fit"
grep -q '"platt_a":' train.json || fail "train JSON lacks platt_a"
grep -q '"validation_share":0.3' train.json || fail "train JSON lacks validation_share"
grep -q '"per_turn":\[{"turns":"1"' train.json || fail "train JSON lacks the per-turn rows"
"$K" classifier eval "${A[@]}" --test-share 0.3 --model cal.bin --json eval.json > eval.txt 2>&1 ||
  fail "eval: $(cat eval.txt)"
grep -q "^ *5+ " eval.txt || fail "eval printed no 5+ row: $(cat eval.txt)"
grep -q '"calibrated":true' eval.json || fail "eval JSON does not say calibrated"
"$K" classifier eval "${A[@]}" --test-share 0.3 --model cal.bin --uncalibrated --json raw.json \
  > /dev/null 2>&1 || fail "eval --uncalibrated"
grep -q '"calibrated":false' raw.json || fail "--uncalibrated JSON does not say so"
cmp -s eval.json raw.json && fail "calibrated and uncalibrated evaluations are identical"
# A mixture: the same data twice is twice the training turns.
"$K" classifier train "${A[@]}" --test-share 0.3 --also chatbot-arena=arena.jsonl --epochs 2 \
  --out mix.bin > mix.txt 2>&1 || fail "train --also: $(cat mix.txt)"
grep -q "and 1 more: 800 conversations" mix.txt || fail "--also did not add the dataset: $(head -1 mix.txt)"

# The transfer features are stored with the model and used again when it scores.
"$K" classifier train "${A[@]}" --test-share 0.3 --no-turn-token --answer-length --epochs 2 \
  --out feat.bin --json feat.json > /dev/null 2>&1 || fail "train --no-turn-token --answer-length"
grep -q '"turn_token":0,"answer_length":1' feat.json || fail "train JSON lacks the feature flags"
"$K" classifier eval "${A[@]}" --test-share 0.3 --model feat.bin --json feat-eval.json > /dev/null 2>&1 ||
  fail "eval of a model with feature flags"
grep -q '"per_turn"' feat-eval.json || fail "eval with feature flags wrote no per-turn rows"

expect_error "overlap" classifier train "${A[@]}" --test-share 0.5 --validation-share 0.6 --out x.bin
expect_error "validation-share" classifier train "${A[@]}" --validation-share 1.5 --out x.bin
expect_error "expected SOURCE=FILE" classifier train "${A[@]}" --also arena.jsonl --out x.bin
expect_error "nothere.jsonl" classifier train "${A[@]}" --also sharegpt=nothere.jsonl --out x.bin
[[ -e x.bin ]] && fail "a failed train wrote its model"

# The validation split's trace, and the decay chosen on it.
expect_error "needs --validation-share" trace build "${A[@]}" --split validation --out v.kvtrace
expect_error "overlap" trace build "${A[@]}" --split validation --test-share 0.8 \
  --validation-share 0.3 --out v.kvtrace
"$K" trace build "${A[@]}" --tokenizer approx --classifier cal.bin --split validation \
  --test-share 0.3 --validation-share 0.3 --out val.kvtrace > build.txt 2>&1 ||
  fail_now "trace build --split validation: $(cat build.txt)"
grep -q "kept the validation split" build.txt || fail "trace build did not keep the validation split"
"$K" trace build "${A[@]}" --tokenizer approx --out plain.kvtrace > /dev/null 2>&1 || fail "plain build"
"$K" study lpc-decay -t val.kvtrace --scales 0.01,0.1 -c 10%,20% --jobs 1 --json decay.json \
  > decay.txt 2>&1 || fail "lpc-decay: $(cat decay.txt)"
grep -q "^chosen: scale_s=0\.1$\|^chosen: scale_s=0\.01$" decay.txt || fail "no choice: $(cat decay.txt)"
grep -q '"chosen_scale_s":0\.[01]' decay.json || fail "decay JSON lacks the choice"
grep -q '"scale_s":0.1' decay.json || fail "decay JSON lacks a scale's row"
expect_error "not positive" study lpc-decay -t val.kvtrace --scales 0.01,0 --json d2.json
expect_error "no continuation scores" study lpc-decay -t plain.kvtrace --json d2.json
expect_error "drift_window" study lpc-decay -t val.kvtrace --lpc-params drift_window=0 --json d2.json
[[ -e d2.json ]] && fail "a failed lpc-decay wrote its JSON"
# The drift rule's parameters, and their errors.
"$K" simulate -t val.kvtrace -c 20% -p lpc,lpc:drift=false,lpc:drift_tolerance=0.05 > sim.txt 2>&1 ||
  fail "simulate lpc with drift parameters: $(cat sim.txt)"
expect_error "drift_tolerance" simulate -t val.kvtrace -c 20% -p lpc:drift_tolerance=-1
no_temporaries "lpc cross-dataset commands"
finish "classifier calibration, mixture, per-turn eval, validation trace and lpc-decay: ok"
