#!/usr/bin/env bash
# `kvpolicy trace import` of logs as engines and gateways write them (ctest: CliTraceImportLogs):
# the sample OpenAI chat log, gzip'd, read from standard input with --preset openai-chat gives
# the trace of the plain file (and of zstd, and of an explicit --map); a gzip'd JSONL trace
# replays with `simulate -t`; a truncated gzip is one error naming the file.
# Usage: check_import_logs_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=$(realpath "${1:?usage: check_import_logs_cli.sh KVPOLICY_BINARY}")
source "$(dirname "$0")/lib.sh"

stats() { "$K" trace stats -t "$1" --sessions keep 2> /dev/null | grep -v -e '^trace ' -e '^load:'; }

python3 "$src/scripts/sample_request_log.py" --format openai-chat --out log.jsonl \
  --conversations 60 > /dev/null || fail_now "sample_request_log.py --format openai-chat failed"
cp log.jsonl plain.jsonl
zstd -q -c plain.jsonl > log.zst 2> /dev/null || fail_now "zstd is not installed"
gzip log.jsonl || fail_now "gzip failed"

# The brief's command, as a user types it.
"$K" trace import --input - --preset openai-chat --out log.kvtrace < log.jsonl.gz > out.txt 2>&1 ||
  fail_now "import from stdin exited $?: $(cat out.txt)"
grep -q "^<stdin> (jsonl, gzip): " out.txt || fail "stdin import printed: $(cat out.txt)"
"$K" trace import --input plain.jsonl --preset openai-chat --out plain.kvtrace > plain.txt 2>&1 ||
  fail_now "import of the plain file exited $?: $(cat plain.txt)"
"$K" trace import --input log.zst --preset openai-chat --out zst.kvtrace > zst.txt 2>&1 ||
  fail "import of zstd exited $?: $(cat zst.txt)"
grep -q "(jsonl, zstd)" zst.txt || fail "zstd import printed: $(cat zst.txt)"
"$K" trace import --input plain.jsonl --out map.kvtrace \
  --map id=id,time=created,messages=messages,output=usage.completion_tokens > map.txt 2>&1 ||
  fail "import with --map exited $?: $(cat map.txt)"
want=$(stats plain.kvtrace)
[[ -n $want ]] || fail_now "trace stats printed nothing for plain.kvtrace"
for t in log.kvtrace zst.kvtrace map.kvtrace; do
  [[ $(stats $t) == "$want" ]] || fail "$t differs from the plain file's trace"
done
# The requests: as many as the log has lines, every one with its completion tokens.
lines=$(wc -l < plain.jsonl)
grep -q ": $lines requests, " plain.txt || fail "expected $lines requests: $(cat plain.txt)"
sum_outputs='import json, sys
print(sum(json.loads(l)["usage"]["completion_tokens"] for l in open(sys.argv[1])))'
outputs=$(python3 -c "$sum_outputs" plain.jsonl)
grep -q " $outputs output tokens" plain.txt || fail "expected $outputs output tokens: $(cat plain.txt)"
# With the conversation id as the session, every conversation is one session.
"$K" trace import -i - --preset openai-chat --map session=conversation_id --out s.kvtrace \
  < log.jsonl.gz > s.txt 2>&1 || fail "import with sessions exited $?: $(cat s.txt)"
grep -q " 60 sessions, " s.txt || fail "expected 60 sessions: $(cat s.txt)"
"$K" simulate -t log.kvtrace -p lru -c 10% > sim.txt 2>&1 || fail "simulate exited $?: $(cat sim.txt)"
grep -q "hit" sim.txt || fail "simulate printed no hit rate: $(cat sim.txt)"

# A generic JSONL trace (Mooncake's fields) replays gzip'd as it does plain.
for i in $(seq 0 19); do
  echo "{\"timestamp\": $((i * 100)), \"input_length\": 1024, \"output_length\": 5, \"hash_ids\": [1, $((2 + i % 3))]}"
done > mooncake.jsonl
gzip -c mooncake.jsonl > mooncake.jsonl.gz
"$K" simulate -t mooncake.jsonl -p lru -c 2 --json a.json > /dev/null 2>&1 ||
  fail "simulate of the plain trace failed"
"$K" simulate -t mooncake.jsonl.gz -p lru -c 2 --json b.json > /dev/null 2> err.txt ||
  fail "simulate -t trace.jsonl.gz exited $?: $(cat err.txt)"
read_hits='import json, sys
print([json.loads(l)["block_hit_rate"] for l in open(sys.argv[1]) if l.strip()])'
hits() { python3 -c "$read_hits" "$1"; }
[[ $(hits a.json) == "$(hits b.json)" && $(hits a.json) != "[]" ]] ||
  fail "the gzip'd trace replays otherwise: $(hits a.json) vs $(hits b.json)"

# A truncated gzip: exit 2, one error naming the file; nothing written.
head -c 200 log.jsonl.gz > cut.jsonl.gz
err=$("$K" trace import -i cut.jsonl.gz --preset openai-chat --out cut.kvtrace 2>&1 > /dev/null)
rc=$?
[[ $rc -eq 2 && $err == *"cut.jsonl.gz: truncated gzip data"* ]] || fail "a truncated gzip gave exit $rc and: $err"
[[ ! -e cut.kvtrace ]] || fail "a failed import wrote cut.kvtrace"
err=$("$K" trace import -i plain.jsonl --map time=created,text=usage.completion --out x.kvtrace 2>&1 > /dev/null)
[[ $? -eq 2 && $err == *"plain.jsonl:1: field 'usage.completion': 'usage' has no 'completion'"* ]] ||
  fail "a bad path: $err"

finish "trace import of logs: stdin, gzip, zstd, the openai-chat preset, paths and errors check"
