#!/usr/bin/env bash
# `kvpolicy doctor` and the import's sanity report end to end (ctest: CliDoctor; docs/doctor.md):
# a log with a timestamp planted in its system prompt is diagnosed (cause, remedy first, JSON), a
# log of one-block prompts warns after `trace import`, a trace of block keys gives positions
# without causes, bad options fail before any output; on the real traces (KVPOLICY_DATA) it runs
# within a minute. Usage: check_doctor_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=$(realpath "${1:?usage: check_doctor_cli.sh KVPOLICY_BINARY}")
source "$(dirname "$0")/lib.sh"

# A planted log: 16 conversations of 4 turns; the shared system prompt starts with the time.
python3 - > ts.jsonl << 'PY'
import json, random
rng = random.Random(5)
syl = ["ka", "lo", "mi", "ru", "ten", "vos", "gil", "pran", "zu", "qor"]
sent = lambda n: " ".join("".join(rng.choice(syl) for _ in range(3)) for _ in range(n)) + "."
rules = " ".join(sent(12) for _ in range(10))
rows = []
for s in range(16):
    hist = []
    for k in range(4):
        hist.append("user: " + sent(20))
        head = f"Current time: 2024-05-01 12:{(s + k) % 60:02d}:{(3 * s + 7 * k) % 60:02d}. "
        rows.append({"t": k * 60 + s, "s": f"s{s}",
                     "text": "system: " + head + rules + "\n" + "".join(m + "\n" for m in hist)})
        hist.append("assistant: " + sent(20))
for r in sorted(rows, key=lambda r: r["t"]):
    print(json.dumps(r))
PY
map=time=t,session=s,text=text
"$K" doctor -i ts.jsonl --map $map --tokenizer approx -c 30% --workers 2 --json d.json \
  > d.txt 2> d.err || fail_now "doctor exited $?: $(cat d.err)"
grep -q "x timestamp_or_id — a timestamp or id" d.txt || fail "no timestamp cause: $(cat d.txt)"
grep -q "^   1\. +[0-9.]* points of tokens .*: mask the volatile span" d.txt ||
  fail "masking the timestamp is not the first remedy: $(sed -n '/^6\./,$p' d.txt)"
for section in "1. The finite cache" "2. Prefix breaks within sessions" "3. Across sessions" \
  "4. Block size" "5. Routing: 2 workers" "6. What to change"; do
  grep -qF "$section" d.txt || fail "no section '$section'"
done
python3 - d.json d.txt << 'PY' || fail "the JSON disagrees with the text"
import json, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
w = d["within_sessions"]
assert w["causes"][0]["cause"] == "timestamp_or_id", w["causes"]
assert f"{w['breaks']} of {w['pairs']} turns" in text
assert [r["router"] for r in d["routers"]] == ["random", "session_affinity", "cache_aware"]
first = d["remedies"][0]
assert f"{first['gain_token_points']:+.1f} points of tokens" in text
gains = [r["gain_token_points"] for r in d["remedies"]]
assert gains == sorted(gains, reverse=True), gains
PY

# `trace import` prints the sanity report; one-block prompts warn.
{
  echo "t,s,toks"
  for i in $(seq 1 20); do echo "$i,s$((i % 4)),\"1 2 3 $i\""; done
} > short.csv
"$K" trace import -i short.csv --map time=t,session=s,tokens=toks --block-tokens 16 \
  -o short.kvtrace > imp.txt 2>&1 || fail "import exited $?: $(cat imp.txt)"
grep -q "^sanity: 20 prompts; tokens per prompt median 4, p99 4" imp.txt || fail "$(cat imp.txt)"
grep -q "^warning: one_block_prompts: 20 of 20 prompts (100.0%)" imp.txt || fail "$(cat imp.txt)"

# A trace of block keys: positions, no causes, and why.
"$K" trace import -i ts.jsonl --map $map --tokenizer approx -o ts.kvtrace > /dev/null 2>&1 ||
  fail "importing the planted log failed"
"$K" doctor -t ts.kvtrace -c 30% --no-routing > k.txt 2>&1 || fail "doctor -t: $(cat k.txt)"
grep -q "causes cannot be told" k.txt || fail "doctor -t names no reason: $(cat k.txt)"
grep -q "5. Routing: not measured" k.txt || fail "--no-routing: $(cat k.txt)"

# Bad options: one error each, no output written.
expect_error "give either a trace (-t) or a log (--input)" doctor -c 10%
expect_error "--input needs --map" doctor -i ts.jsonl --json bad.json
expect_error "--map goes with --input" doctor -t ts.kvtrace --map $map
expect_error "unknown target" doctor -i ts.jsonl --map time=t,prompt=text --json bad.json
[[ -e bad.json ]] && fail "a failed doctor wrote its --json"

# The real traces, each within a minute on 2 cores.
if [[ -n $data && -f $data/mooncake-conversation/conversation_trace.jsonl ]]; then
  start=$SECONDS
  "$K" doctor -t "$data/mooncake-conversation/conversation_trace.jsonl" -j 2 > mc.txt 2>&1 ||
    fail "doctor on Mooncake: $(tail -3 mc.txt)"
  echo "doctor on Mooncake: $((SECONDS - start)) s"
  ((SECONDS - start < 60)) || fail "doctor on Mooncake took $((SECONDS - start)) s"
  grep -q "6. What to change" mc.txt || fail "Mooncake: $(cat mc.txt)"
fi
arena=$data/chatbot-arena/chatbot_arena_conversations_raw.jsonl
if [[ -n $data && -f $arena ]]; then
  # Each conversation as a log: one row per user turn, every message so far as "role: content".
  python3 - "$arena" > arena.jsonl << 'PY'
import json, sys
rows = []
for i, line in enumerate(open(sys.argv[1])):
    c = json.loads(line)
    text, k = "", 0
    for m in c["messages"]:
        text += f"{m['role']}: {m['content']}\n"
        if m["role"] == "user":
            rows.append({"t": i * 10 + k * 30, "s": c["id"], "text": text})
            k += 1
for r in sorted(rows, key=lambda r: r["t"]):
    print(json.dumps(r))
PY
  start=$SECONDS
  "$K" doctor -i arena.jsonl --map $map -j 2 > arena.txt 2>&1 ||
    fail "doctor on Chatbot Arena: $(tail -3 arena.txt)"
  echo "doctor on Chatbot Arena: $((SECONDS - start)) s"
  ((SECONDS - start < 60)) || fail "doctor on Chatbot Arena took $((SECONDS - start)) s"
  grep -q "6. What to change" arena.txt || fail "Chatbot Arena: $(cat arena.txt)"
fi

finish "doctor: the planted timestamp named and masked first, the sanity report, keys-only traces"
