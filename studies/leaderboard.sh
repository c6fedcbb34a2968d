#!/usr/bin/env bash
# Regenerates docs/results/leaderboard.md: builds the traces (Chatbot Arena and ShareGPT held-out
# halves with and without continuation scores, Arena's half again with Azure's conversation
# trace's request times as its conversation starts, Azure's conversation trace itself under a
# stated assumption model, LooGLE's short-dependency QA), then runs `kvpolicy leaderboard` on
# them with the Mooncake conversation trace, the extra Mooncake synthetic trace (when present) and
# the built-in workload, and draws the heat map.
# Usage: studies/leaderboard.sh OUT_DIR [FIGURES_DIR]
# Env: KVPOLICY (default build/kvpolicy), KVPOLICY_DATA (default ../shared/traces),
#   EXTRA (default /work/extra-traces/mooncake-synthetic/synthetic_trace.jsonl; skipped if absent),
#   POLICIES (default online: every deployable policy; add more, e.g. POLICIES=online,auto),
#   SEEDS (default: the command's), CAPS (default 2%,5%,10%,20%), JOBS (default 2),
#   ARGS (more leaderboard flags, e.g. ARGS="--min-margin 0.1"), BOARD (default board: the name
#   of the rows, text and figure files).
# The classifier is trained on the *train* half of each dataset (`--test-share 0.5`); the traces
# are the other half, so nothing reported is tuned on. Resumable: rerun to finish an interrupted
# run (the replay rows in OUT_DIR/replays.jsonl are kept; delete them after changing POLICIES'
# members' code).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: leaderboard.sh OUT_DIR [FIGURES_DIR]}
mkdir -p "$out"
out=$(cd "$out" && pwd)
fig=${2:-$out}
mkdir -p "$fig"
fig=$(cd "$fig" && pwd)
K=${KVPOLICY:-$src/build/kvpolicy}
[[ $K = /* ]] || K=$src/$K
D=${KVPOLICY_DATA:-$src/../shared/traces}
D=$(cd "$D" && pwd)
EXTRA=${EXTRA:-/work/extra-traces/mooncake-synthetic/synthetic_trace.jsonl}
POLICIES=${POLICIES:-online}
CAPS=${CAPS:-2%,5%,10%,20%}
JOBS=${JOBS:-2}
A=$D/chatbot-arena/chatbot_arena_conversations_raw.jsonl
S=$D/sharegpt-sample/sharegpt_sample_slim.jsonl
M=$D/mooncake-conversation/conversation_trace.jsonl
Z=$D/azure-2023/AzureLLMInferenceTrace_conv.csv
cd "$out"
run() { echo "\$ ${*/#$K/kvpolicy}"; "$@"; }

# Held-out halves: the classifier sees the train half only; the trace is the test half, once
# with its scores (LPC runs) and once without (the same requests; LPC is left out).
for name in chatbot-arena sharegpt; do
  input=$A
  [[ $name = sharegpt ]] && input=$S
  if [[ ! -s $name-heldout-lpc.kvtrace ]]; then
    run "$K" classifier train --source "$name" --input "$input" --skip-bad-lines \
        --test-share 0.5 --out "$name-half.bin" > /dev/null
    run "$K" trace build --source "$name" --input "$input" --skip-bad-lines \
        --classifier "$name-half.bin" --split test --test-share 0.5 \
        --out "$name-heldout-lpc.kvtrace"
    run "$K" trace build --source "$name" --input "$input" --skip-bad-lines \
        --split test --test-share 0.5 --out "$name-heldout.kvtrace"
  fi
done
# Azure's conversation trace: its times and lengths, prompts from the assumption model's
# defaults (docs/formats.md, "Length-only logs"): its hit rates measure the assumptions.
if [[ ! -s azure-conv.kvtrace ]]; then
  run "$K" trace import -i "$Z" -o azure-conv.kvtrace --assume "" \
      --map time=TIMESTAMP,prompt_tokens=ContextTokens,output=GeneratedTokens > /dev/null
fi

# Azure-timed Arena: the same held-out conversations (and scores), each conversation starting at
# the next request time of Azure's conversation trace instead of a Poisson start.
if [[ ! -s chatbot-arena-heldout-azure-lpc.kvtrace ]]; then
  run "$K" trace build --source chatbot-arena --input "$A" --skip-bad-lines \
      --classifier chatbot-arena-half.bin --split test --test-share 0.5 \
      --arrivals azure-conv.kvtrace --out chatbot-arena-heldout-azure-lpc.kvtrace
fi
# LooGLE: the shipped sample's short-dependency QA (5 documents x 16 questions, 80 requests of
# about 17k tokens each): every question on a document shares it as a prefix.
if [[ ! -s loogle-shortdep-qa.kvtrace ]]; then
  run "$K" trace build --source loogle -i "$D/loogle/shortdep_qa.jsonl" \
      -o loogle-shortdep-qa.kvtrace > /dev/null
fi

traces="mooncake=$M@mooncake"
traces+=",arena-lpc=chatbot-arena-heldout-lpc.kvtrace,arena=chatbot-arena-heldout.kvtrace"
traces+=",sharegpt-lpc=sharegpt-heldout-lpc.kvtrace,sharegpt=sharegpt-heldout.kvtrace"
traces+=",arena-azure-lpc=chatbot-arena-heldout-azure-lpc.kvtrace"
traces+=",azure-conv=azure-conv.kvtrace,loogle=loogle-shortdep-qa.kvtrace"
[[ -f $EXTRA ]] && traces+=",mooncake-synth=$EXTRA@mooncake"
traces+=",builtin"

seeds=()
[[ -n ${SEEDS:-} ]] && seeds=(--seeds "$SEEDS")
BOARD=${BOARD:-board}
extra=()
[[ -n ${ARGS:-} ]] && read -r -a extra <<< "$ARGS"
plot=()
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
  plot=(--plot "$fig/leaderboard${BOARD#board}.png")
else
  echo "(no matplotlib: figure skipped; apt-get install python3-matplotlib)" >&2
fi
resume=()
[[ -s replays.jsonl ]] && resume=(--resume)
run "$K" leaderboard --traces "$traces" -c "$CAPS" -p "$POLICIES" "${seeds[@]+"${seeds[@]}"}" \
    "${extra[@]+"${extra[@]}"}" -j "$JOBS" --json replays.jsonl "${resume[@]+"${resume[@]}"}" \
    --board-json "$BOARD.jsonl" "${plot[@]+"${plot[@]}"}" | tee "$BOARD.txt"
