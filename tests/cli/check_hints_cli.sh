#!/usr/bin/env bash
# Retention hints end to end (ctest: CliHints): `trace generate -k agent`, `--hint` rules on
# simulate and serve, the oracle's gain, the adversarial hint's cost and the guard bounding it,
# and the errors of a bad rule and of a bad `hints` field. Usage: check_hints_cli.sh KVPOLICY
set -uo pipefail
K=${1:?usage: check_hints_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate -k agent --params sessions=150,session_rate=2,prefixes=4,prefix_tokens=800 \
  --seed 3 --out agent.kvtrace > /dev/null || fail_now "trace generate -k agent exited $?"

hit() {  # hit FILE POLICY: the block hit rate of POLICY's row in FILE
  python3 -c "import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r['policy'] == sys.argv[2]: print(r['block_hit_rate'])" "$1" "$2"
}
sim() {  # sim NAME ARGS...: lru and guarded:inner=lru at 10 %, rows in NAME.jsonl
  local name=$1
  shift
  "$K" simulate -t agent.kvtrace -p lru,guarded:inner=lru -c 0.1 --json "$name.jsonl" "$@" \
    > "$name.txt" 2> /dev/null || fail "simulate $* exited $?"
}
sim none
sim oracle --hint oracle=90:60s
sim adversarial --hint adversarial=100:inf
sim rules --hint system-prompt=90:600s --hint session-pin=60s
python3 - "$(hit none.jsonl lru)" "$(hit oracle.jsonl lru)" "$(hit adversarial.jsonl lru)" \
  "$(hit adversarial.jsonl guarded)" "$(hit rules.jsonl lru)" <<'PY' || fail "hit rates out of order"
import sys
none, oracle, adv, adv_guarded, rules = map(float, sys.argv[1:])
assert oracle > none, (oracle, none)            # the oracle's hints are worth something
assert adv < none, (adv, none)                  # the adversarial ones cost
assert adv_guarded > adv, (adv_guarded, adv)    # the guard bounds the cost
assert rules != none, (rules, none)             # the rules reach the policy
PY

expect_error "--hint 'keep=90:1s'" simulate -t agent.kvtrace -p lru -c 0.1 --hint keep=90:1s
expect_error "priority '200'" simulate -t agent.kvtrace -p lru -c 0.1 --hint system-prompt=200:1s
expect_error "without --stream" simulate -t agent.kvtrace -p lru -c 0.1 --stream --hint session-pin=1s

# A bad hints field names file, line and field.
printf '%s\n' \
  '{"timestamp": 0, "input_length": 512, "output_length": 1, "hash_ids": [1]}' \
  '{"timestamp": 1, "input_length": 512, "output_length": 1, "hash_ids": [2], "hints": [{"first_token": 0, "priority": 101}]}' \
  > bad.jsonl
expect_error "bad.jsonl:2" simulate -t bad.jsonl -f mooncake -p lru -c 1
expect_error "hints[0].priority" simulate -t bad.jsonl -f mooncake -p lru -c 1

# Serve mode takes the rules too.
"$K" serve -t agent.kvtrace -p lru -c 0.05 --json serve.jsonl --hint session-pin=60s \
  > /dev/null 2>&1 || fail "serve --hint exited $?"
grep -q '"block_hit_rate"' serve.jsonl || fail "serve --hint wrote no result"
finish "hints: agent generator, rules on simulate and serve, oracle > none > adversarial < guarded"
