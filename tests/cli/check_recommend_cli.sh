#!/usr/bin/env bash
# `kvpolicy recommend` end to end (ctest: CliRecommend; docs/engines.md): on a generated trace it
# chooses a policy whose vLLM configuration is JSON naming it, and the same policy as compare's
# best online row when given compare's rows; mrc's rows (which carry their block size) work
# without --block-tokens; a forced offline policy is refused saying why; a bad result file is
# rejected naming the file, line and field. Usage: check_recommend_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=$(realpath "${1:?usage: check_recommend_cli.sh KVPOLICY_BINARY}")
source "$(dirname "$0")/lib.sh"

"$K" trace generate --kind conversation --params sessions=150 --out t.kvtrace > /dev/null 2>&1 ||
  fail_now "trace generate failed"

# A trace in: a configuration per engine, the vLLM one JSON that names the chosen policy.
"$K" recommend -t t.kvtrace -c 5% --among lru,fifo,sieve,s3fifo --json r.json > r.txt 2> r.err ||
  fail_now "recommend -t exited $?: $(cat r.err)"
python3 - r.json r.txt << 'PY' || fail "the trace's recommendation is not what it should be"
import json, sys
r = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
policy = r["policy"]
assert policy in {"lru", "fifo", "sieve", "s3fifo"}, policy
best = max(c["block_hit_rate"] for c in r["candidates"])
assert r["block_hit_rate"] == best, (r["block_hit_rate"], best)
assert abs(r["margin_points"] - 100 * (r["block_hit_rate"] - r["lru_hit_rate"])) < 1e-3
assert r["within_noise"] == (abs(r["margin_points"]) < r["noise_points"])
assert set(r["engines"]) == {"vllm", "sglang", "lmcache"}, r["engines"].keys()
vllm = json.loads(r["engines"]["vllm"]["config"])  # the --kv-transfer-config JSON
extra = vllm["kv_connector_extra_config"]
assert vllm["kv_connector"] == "OffloadingConnector"
want = "lru" if policy == "lru" else "kvp:" + policy
assert extra["eviction_policy"] == want, extra
if policy != "lru":
    assert extra["cache_policy_module_path"] == "kvpolicy.integrations.vllm", extra
assert extra["block_size"] == r["block_tokens"] == 16, extra
assert extra["cpu_bytes_to_use"] == r["kv_bytes_per_block"] * r["capacity_blocks"], extra
for name, e in r["engines"].items():
    assert e["policy"] == policy and e["support"] in {"native", "score", "kvpolicy"}, e
    assert e["block_hit_rate"] == r["block_hit_rate"], e
assert policy in r["engines"]["sglang"]["config"], r["engines"]["sglang"]
assert policy in r["engines"]["lmcache"]["config"] or \
    r["engines"]["lmcache"]["config"].count("LRU"), r["engines"]["lmcache"]
assert f"chosen {policy}:" in text and "--kv-transfer-config" in text, text
PY

# A result file in: compare's rows give the same choice as their best online row, and as the
# replay above (the same replays).
"$K" compare -t t.kvtrace -c 5% -p lru,fifo,sieve,s3fifo --json c.jsonl > /dev/null 2>&1 ||
  fail_now "compare failed"
"$K" recommend --from c.jsonl --block-tokens 16 --json rc.json > rc.txt 2> rc.err ||
  fail_now "recommend --from exited $?: $(cat rc.err)"
python3 - c.jsonl rc.json r.json << 'PY' || fail "the result file's recommendation is not its best row"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
online = [r for r in rows if not r["offline"]]
best = max(r["block_hit_rate"] for r in online)
tied = [r["policy"] for r in online if r["block_hit_rate"] == best]
want = "lru" if "lru" in tied else tied[0]
got = json.load(open(sys.argv[2]))
assert got["policy"] == want, (got["policy"], want)
assert got["source"] == "results" and got["capacity_blocks"] == rows[0]["capacity_blocks"]
assert got["policy"] == json.load(open(sys.argv[3]))["policy"]
PY

# mrc's rows carry their block size; several capacities need -c to pick one.
"$K" mrc -t t.kvtrace -p lru,s3fifo --points 3 --min 2% --max 20% --json m.jsonl > /dev/null 2>&1 ||
  fail_now "mrc failed"
expect_error "capacities" recommend --from m.jsonl
cap=$(python3 -c 'import json,sys; print(json.loads(open("m.jsonl").readline())["capacity_blocks"])')
"$K" recommend --from m.jsonl -c "$cap" --json rm.json > /dev/null 2> rm.err ||
  fail "recommend --from an mrc file exited $?: $(cat rm.err)"
python3 -c 'import json; r = json.load(open("rm.json")); assert r["block_tokens"] == 16, r' ||
  fail "the mrc rows' block size was not read"

# A forced offline policy is refused, from a trace and from rows.
expect_error "reads the trace's future" recommend -t t.kvtrace -c 5% --policy belady
expect_error "no engine can run" recommend --from c.jsonl --block-tokens 16 --policy belady
# A forced online policy is kept, its margin measured.
"$K" recommend -t t.kvtrace -c 5% --policy sieve --json f.json > /dev/null 2>&1 ||
  fail "a forced sieve failed"
python3 -c 'import json; r = json.load(open("f.json")); assert r["policy"] == "sieve" and r["forced"]' ||
  fail "the forced policy was not the one recommended"

# A policy an engine cannot run in full: that engine runs the best candidate it can, and says so.
"$K" recommend -t t.kvtrace -c 5% --policy wa --json w.json > w.txt 2>&1 || fail "a forced wa failed"
python3 - w.json << 'PY' || fail "the engines that cannot run wa in full do not fall back to lru"
import json, sys
e = json.load(open(sys.argv[1]))["engines"]
assert e["vllm"]["policy"] == "wa" and e["vllm"]["support"] == "kvpolicy", e["vllm"]
assert "kvpolicy_session" in e["vllm"]["why"], e["vllm"]["why"]
assert (e["lmcache"]["policy"], e["lmcache"]["support"], e["lmcache"]["chosen_support"]) == \
    ("lru", "native", "cannot"), e["lmcache"]
assert (e["sglang"]["policy"], e["sglang"]["chosen_support"]) == ("lru", "partial"), e["sglang"]
assert "KVPOLICY_SGLANG_SPEC='wa'" in e["sglang"]["alternative"], e["sglang"]
assert e["lmcache"]["why"].startswith("runs lru instead"), e["lmcache"]["why"]
PY

# A bad result file: the file, the line and the field named.
python3 - c.jsonl << 'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows[1]["block_hit_rate"] = "high"
open("bad.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in rows))
open("torn.jsonl", "w").write(json.dumps(rows[0]) + "\n" + '{"policy": "lru", "capac\n')
rows[0]["block_hit_rate"] = 1.5
open("range.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in rows))
PY
expect_error "bad.jsonl:2: field 'block_hit_rate'" recommend --from bad.jsonl --block-tokens 16
expect_error "torn.jsonl:2: not a JSON object" recommend --from torn.jsonl --block-tokens 16
expect_error "range.jsonl:1: field 'block_hit_rate': not a share" recommend --from range.jsonl \
  --block-tokens 16
expect_error "either a trace (-t) or a result file" recommend -c 5%
expect_error "needs -c CAPACITY" recommend -t t.kvtrace

finish "recommend: trace and result file agree, configurations parse, bad input named"
