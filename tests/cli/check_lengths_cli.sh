#!/usr/bin/env bash
# A log of lengths only (ctest: CliLengthOnlyLogs; docs/formats.md, "Length-only logs"): without
# --assume the import is refused saying what is missing and what would supply it, and mapped as
# tokens it never becomes one-token prompts; with --assume the trace carries the model, and
# simulate, serve and mrc print it above their tables and in every --json row. A small log the
# check writes, then the real Azure traces (skipped without KVPOLICY_DATA).
# Usage: check_lengths_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=$(realpath "${1:?usage: check_lengths_cli.sh KVPOLICY_BINARY}")
source "$(dirname "$0")/lib.sh"

lengths_map=time=TIMESTAMP,prompt_tokens=ContextTokens,output=GeneratedTokens

# The refusal and its parts: what is missing, what would supply it, how to assume it.
refused() {  # refused LOG MAP
  local err rc
  err=$("$K" trace import --input "$1" --map "$2" --out r.kvtrace 2>&1 > /dev/null)
  rc=$?
  ((rc != 0)) || fail "trace import --map $2 on $1 succeeded"
  local part
  for part in "Missing: the prompts' content or the engine's block hashes" "text=COLUMN" \
    "tokens=COLUMN" "hashes=COLUMN" "block-hash log" "--assume MODEL"; do
    [[ $err == *"$part"* ]] || fail "the refusal of --map $2 on $1 lacks '$part': $err"
  done
  [[ ! -e r.kvtrace ]] || fail "a refused import wrote r.kvtrace"
}

# The assumption line above each table and the model in each JSON row.
check_assumed() {  # check_assumed TRACE MODEL
  local trace=$1 model=$2 out
  out=$("$K" simulate -t "$trace" -p lru,belady -c 5%,10% --json sim.jsonl 2>/dev/null) ||
    fail "simulate on $trace"
  [[ $(head -1 <<< "$out") == "assumed prompts: lengths from the log;"*"(kvpolicy trace import --assume \"$model\")" ]] ||
    fail "simulate's first line is not the assumptions: $(head -1 <<< "$out")"
  out=$("$K" serve -t "$trace" -p lru -c 10% --workers 2 --max-requests 400 \
    --json serve.jsonl 2>/dev/null) || fail "serve on $trace"
  [[ $(head -1 <<< "$out") == "assumed prompts: "* ]] ||
    fail "serve's first line is not the assumptions: $(head -1 <<< "$out")"
  out=$("$K" mrc -t "$trace" -p lru --json mrc.jsonl 2>/dev/null) || fail "mrc on $trace"
  grep -q '^assumed prompts: ' <<< "$out" || fail "mrc printed no assumptions"
  python3 - "$model" sim.jsonl serve.jsonl mrc.jsonl << 'PY' || fail "JSON rows of $trace"
import json, sys
model = sys.argv[1]
for path in sys.argv[2:]:
    rows = [json.loads(line) for line in open(path)]
    assert rows, path
    for row in rows:
        assert row.get("assumptions") == model, (path, row.get("assumptions"), model)
PY
}

# --- A small log written here ---------------------------------------------------------------
{
  echo "TIMESTAMP,ContextTokens,GeneratedTokens"
  for i in $(seq 0 299); do
    printf '2023-11-16 18:%02d:%02d.%07d,%d,%d\n' $((i / 60)) $((i % 60)) $((i * 7 % 10000000)) \
      $((100 + (i * 397) % 3000)) $((1 + (i * 31) % 300))
  done
} > small.csv
refused small.csv "$lengths_map"
refused small.csv time=TIMESTAMP,tokens=ContextTokens
expect_error "is for a log of lengths only" trace import --input small.csv \
  --map time=TIMESTAMP,tokens=ContextTokens --assume "" --out x.kvtrace
expect_error "--assume: parameter turns" trace import --input small.csv --map "$lengths_map" \
  --assume turns=0 --out x.kvtrace

out=$("$K" trace import --input small.csv --map "$lengths_map" --out small.kvtrace \
  --assume "system=256,turns=4" 2>&1) || fail "trace import --assume: $out"
model="system=256,system_prompts=4,turns=4,reply=output,idle=600,seed=1"
[[ $out == *"assumed prompts: lengths from the log; 4 shared system prompts of 256 tokens"* ]] ||
  fail "trace import did not state the assumptions: $out"
[[ $out == *"--assume \"$model\")"* ]] || fail "trace import's model is not '$model': $out"
check_assumed small.kvtrace "$model"
"$K" trace stats -t small.kvtrace --json stats.json > /dev/null 2>&1 || fail "trace stats"
python3 -c 'import json, sys; assert json.load(open("stats.json"))["assumptions"] == sys.argv[1]' \
  "$model" || fail "trace stats --json has not the assumptions"
# A trace with the content logged prints nothing of the kind.
"$K" trace generate --kind zipf --params requests=200,prefixes=20 --out g.kvtrace > /dev/null 2>&1 ||
  fail "trace generate"
"$K" simulate -t g.kvtrace -p lru -c 10% 2>/dev/null | grep -q "assumed prompts" &&
  fail "simulate printed assumptions for a trace without any"

# --- The real Azure traces ------------------------------------------------------------------
azure="azure-2023/AzureLLMInferenceTrace"
if [[ -n $data && -f $data/${azure}_conv.csv && -f $data/${azure}_code.csv ]]; then
  for kind in conv code; do
    refused "$data/${azure}_$kind.csv" "$lengths_map"
    refused "$data/${azure}_$kind.csv" time=TIMESTAMP,tokens=ContextTokens
  done
  "$K" trace import --input "$data/${azure}_conv.csv" --map "$lengths_map" --assume "" \
    --out conv.kvtrace > /dev/null 2>&1 || fail "importing the Azure conv trace with --assume"
  check_assumed conv.kvtrace "system=512,system_prompts=4,turns=3,reply=output,idle=600,seed=1"
  # Every prompt length as the log has it.
  stats=$("$K" trace stats -t conv.kvtrace 2>/dev/null)
  [[ $(head -1 <<< "$stats") == "assumed prompts: "* ]] || fail "trace stats: no assumptions"
  rows=$(awk 'END { print NR - 1 }' "$data/${azure}_conv.csv")  # its last line has no newline
  [[ $stats == *"$rows requests"* ]] || fail "the conv trace has not $rows requests: $stats"
else
  echo "$check: the Azure traces are absent; checked the small log only"
fi

no_temporaries "the length-only checks"
finish "$check: refusals, --assume import, tables and JSON rows checked"
