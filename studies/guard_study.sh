#!/usr/bin/env bash
# The guard's robustness study (docs/policies.md, "guarded", where its table is): hit rate over the
# noisy oracle's corruption probability p = 0, 0.1, ..., 1 on the Mooncake conversation trace at
# 2 % and 5 % of its unique blocks, for LRU, the unguarded and guarded policies, then the check
# of the issue's targets (studies/guard_study.py). Any policy list works: a spec holding {p} gets
# the noise level there, so a guarded policy passes it to its inner one, e.g.
#   POLICIES='lru,lpc:predictor=noisy,p={p},guarded:inner=lpc,inner_params=predictor=noisy;p={p}'
#   studies/guard_study.sh
# Env: KVPOLICY (binary, default build/kvpolicy), TRACE, FORMAT, CAPACITY, NOISE, POLICIES, OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
KVPOLICY=${KVPOLICY:-build/kvpolicy}
export KVPOLICY_DATA=${KVPOLICY_DATA:-/work/shared/traces}
TRACE=${TRACE:-$KVPOLICY_DATA/mooncake-conversation/conversation_trace.jsonl}
FORMAT=${FORMAT:-mooncake}
CAPACITY=${CAPACITY:-0.02,0.05}
NOISE=${NOISE:-0:1:0.1}
NOISY='predictor=noisy;p={p};noise=adversarial'
POLICIES=${POLICIES:-"lru,fpb,guarded:inner=fpb,inner_params=$NOISY,laru,wa,guarded:inner=wa"}
OUT=${OUT:-guard_study.csv}
"$KVPOLICY" study robustness -t "$TRACE" -f "$FORMAT" -c "$CAPACITY" -n "$NOISE" -p "$POLICIES" --csv "$OUT"
python3 studies/guard_study.py "$OUT"
