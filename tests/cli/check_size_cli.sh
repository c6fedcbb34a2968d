#!/usr/bin/env bash
# `kvpolicy size` end to end (ctest: CliSize): on a small generated trace, the table at the GPU's
# memory, one answer per worker count measured to meet the target, the replay cache's answer
# beside it, JSON rows consistent with the GPU arithmetic, bad flags refused before any work, and
# --plot; then, when KVPOLICY_DATA holds it, the Mooncake trace with llama-3.1-8b on an H100.
# Usage: check_size_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_size_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=120 --out t.kvtrace > /dev/null || exit 1
"$K" size -t t.kvtrace --model llama-3.1-8b --gpu h100 --workers 1,2 --router round_robin \
  --target-hit 20% --jobs 2 --json s.jsonl > out.txt 2> err.txt ||
  fail "size exited $?: $(cat err.txt)"
grep -Eq "^a replica's KV memory: 1 x 80 GB x 0.9 utilisation - [0-9.]+ GB weights - 2 GB reserve" \
  out.txt || fail "no GPU arithmetic line: $(head -5 out.txt)"
grep -q "at the GPU's full KV memory" out.txt || fail "no table at the GPU's memory"
grep -Eq '^  1 worker: [0-9.]+ GB of KV per replica .*measured [0-9.]+ % blocks' out.txt ||
  fail "no answer for 1 worker"
grep -Eq '^      fits in 1 H100 at 0.9 memory utilisation: [0-9.]+ of [0-9.]+ GB of KV' out.txt ||
  fail "no 'fits in 1 H100' line"
grep -Eq '^answer \(serve mode, round_robin router, per replica\): 1 worker x 1 H100 = 1 GPU, ' \
  out.txt || fail "no answer line"
grep -Eq '^replay cache \(what mrc --target-hit answers\): [0-9.]+ GB of KV in one LRU cache' \
  out.txt || fail "no replay answer"
grep -q "they differ: replay is one cache" out.txt || fail "no explanation of the difference"
python3 - s.jsonl << 'PY' || fail "JSON rows inconsistent"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
kinds = [r["kind"] for r in rows]
assert kinds.count("gpu") == 2 and kinds.count("answer") == 2 and kinds.count("replay") == 1, kinds
for r in rows:
    assert r["target_block_hit_rate"] == 0.2 and r["target_token_hit_rate"] is None, r
    assert r["gpu_kv_gb"] > 50, r  # 0.9 x 80 GB - 16 GB of weights - 2 GB
for a in (r for r in rows if r["kind"] == "answer"):
    assert a["meets"] and a["block_hit_rate"] >= 0.2 and a["fits_gpu"] and a["gpus"] == a["workers"], a
    probes = [p for p in rows if p["kind"] == "probe" and p["workers"] == a["workers"]]
    assert len(probes) == a["runs"], a
    # The answer is a probe that met, and no smaller probe met (unless reported non-monotone).
    assert any(p["capacity_blocks"] == a["capacity_blocks"] and p["meets"] for p in probes)
    smaller = [p for p in probes if p["capacity_blocks"] < a["capacity_blocks"]]
    assert a["non_monotone"] or not any(p["meets"] for p in smaller), a
PY
# The GPU arithmetic is cost-model's: at utilisation 1 and no reserve, its "memory left for KV".
left=$("$K" cost-model --model llama-3.1-8b --gpu h100 --cost-params tp=2 |
  sed -n 's/.*memory left for KV after the weights on the 2 GPUs: \([0-9.]*\) GB.*/\1/p')
[[ -n $left ]] || fail "cost-model printed no memory left for KV"
"$K" size -t t.kvtrace --gpu h100 --tp 2 --workers 1 --target-hit 20% --gpu-memory-utilization 1 \
  --reserve-gb 0 --json g.jsonl > /dev/null 2>&1 || fail "size --tp 2 exited $?"
python3 -c "
import json, sys
r = json.loads(open('g.jsonl').readline())
sys.exit(0 if r['tp'] == 2 and f\"{r['gpu_kv_gb']:.1f}\" == '$left' else 1)" ||
  fail "size's KV memory at tp=2 is not cost-model's $left GB: $(head -c 300 g.jsonl)"
# A target out of reach: said, with the best measured; the rows say null.
"$K" size -t t.kvtrace --gpu h100 --workers 2 --target-hit 99% --json u.jsonl > u.txt 2>&1 ||
  fail "unreachable target exited $?"
grep -q "2 workers: not met up to" u.txt || fail "unreachable not said: $(cat u.txt)"
grep -q "answer: no worker count in the range meets block hit >= 99 %" u.txt ||
  fail "no 'no worker count' line"
grep -q '"kind":"answer".*"capacity_blocks":null' u.jsonl || fail "answer not null"
# Bad flags: refused before any work, naming the flag.
expect_error "give a target" size -t t.kvtrace
expect_error "--target-hit" size -t t.kvtrace --target-hit 150%
expect_error "--workers" size -t t.kvtrace --target-hit 20% --workers 4-2
expect_error "one router" size -t t.kvtrace --target-hit 20% --router round_robin,cache_aware
expect_error "--max-tp" size -t t.kvtrace --target-hit 20% --tp 4 --max-tp 2
expect_error "--gpu-memory-utilization" size -t t.kvtrace --target-hit 20% --gpu-memory-utilization 2
expect_error "unknown GPU" size -t t.kvtrace --target-hit 20% --gpu nope
expect_error "is the input" size -t t.kvtrace --target-hit 20% --json t.kvtrace
"$K" size -t t.kvtrace --target-hit 150% --json nothing.jsonl > /dev/null 2>&1
[[ -e nothing.jsonl ]] && fail "an output was written before an error"
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
  "$K" size -t t.kvtrace --gpu h100 --workers 1,2 --target-hit 20% --slo-ttft-p90 5000 \
    --plot p.png > /dev/null 2>&1 || fail "--plot exited $?"
  [[ -s p.png ]] || fail "--plot wrote no PNG"
fi
# The Mooncake trace, llama-3.1-8b on an H100: the answers meet the target and are measured.
if [[ -n $data && -f $data/mooncake-conversation/conversation_trace.jsonl ]]; then
  "$K" size -t "$data/mooncake-conversation/conversation_trace.jsonl" --model llama-3.1-8b \
    --gpu h100 --workers 1,4 --router cache_aware --target-hit 30% --jobs 2 --json m.jsonl \
    > m.txt 2> m-err.txt || fail "size on Mooncake exited $?: $(cat m-err.txt)"
  grep -q "replay cache (what mrc --target-hit answers)" m.txt || fail "Mooncake: no replay answer"
  python3 - m.jsonl << 'PY' || fail "Mooncake rows inconsistent"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
answers = [r for r in rows if r["kind"] == "answer"]
assert {a["workers"] for a in answers} == {1, 4}, answers
for a in answers:
    if a["meets"]:
        assert a["block_hit_rate"] >= 0.3, a
    # An answer the GPUs of its tp cannot hold, that a larger tp (<= 8) can: searched there too.
    if a["meets"] and not a["fits_gpu"] and a["tp_needed"] > a["tp"]:
        assert any(b["workers"] == a["workers"] and b["tp"] == a["tp_needed"] for b in answers), a
    assert a["tp_needed"] <= 8, a
PY
else
  echo "$check: Mooncake part skipped: KVPOLICY_DATA does not hold it"
fi
finish "size: answers measured, GPU arithmetic, replay beside it, errors and plot checked"
