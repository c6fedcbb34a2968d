# Sourced by the LPC studies (lpc_results.sh, lpc_cross.sh, lpc_features.sh) once `src` is the
# repository: the binary K, the two chat datasets A and S, `run` (prints a command, then runs
# it), the flag sets they share, and `chosen` (the scale a `study lpc-decay` JSON chose).
K=${KVPOLICY:-$src/build/kvpolicy}
[[ $K = /* ]] || K=$src/$K
D=${KVPOLICY_DATA:-$src/../shared/traces}
A=$D/chatbot-arena/chatbot_arena_conversations_raw.jsonl
S=$D/sharegpt-sample/sharegpt_sample_slim.jsonl
run() { echo "\$ ${*/#$K/kvpolicy}"; "$@"; }
ARENA=(--source chatbot-arena --input "$A")
SHARE=(--source sharegpt --input "$S" --skip-bad-lines)
HALF=(--test-share 0.5)
VAL=(--validation-share 0.2)
JOBS=${JOBS:-1}
chosen() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['chosen_scale_s'])" "$1"; }
