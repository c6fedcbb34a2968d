#!/usr/bin/env bash
# `kvpolicy serve --request-log` end to end (ctest: CliRequestLog): one row per trace request in
# CSV and JSON Lines; its TTFTs give the result's percentiles and its cached tokens the result's
# token hits; a rejected request has no times; more than one run, --resume and a failing run are
# refused and write nothing.
# Usage: check_request_log_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_request_log_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=40 --out t.kvtrace > /dev/null ||
  exit 1
serve=(serve -t t.kvtrace -w 3 -c 0.2 --rate 20)

"$K" "${serve[@]}" -r lbgr --request-log r.csv --json r.jsonl > /dev/null ||
  fail "serve --request-log r.csv failed"
head -1 r.csv | grep -qx \
  'request,session,worker,completed,arrival_s,admitted_s,first_token_s,finish_s,ttft_ms,e2e_ms,prompt_tokens,cached_tokens,output_tokens' ||
  fail "r.csv header: $(head -1 r.csv)"
python3 - r.csv r.jsonl <<'PY' || fail "r.csv does not match the result"
import csv, json, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
res = json.loads(open(sys.argv[2]).readline())
assert [int(r["request"]) for r in rows] == list(range(len(rows))), "not one row per request"
done = [r for r in rows if r["completed"] == "true"]
assert len(done) == res["requests"] and len(rows) == res["requests"] + res["rejected"]
ttft = sorted(float(r["ttft_ms"]) for r in done)
for p in (50, 99):  # nearest rank, as the result's
    got = ttft[math.ceil(p / 100 * len(ttft) - 1e-9) - 1]
    assert abs(got - res[f"ttft_p{p}_ms"]) < 1e-3, (p, got, res[f"ttft_p{p}_ms"])
assert sum(int(r["cached_tokens"]) for r in done) == res["token_hits"]
for r in done:
    a, f = float(r["arrival_s"]), float(r["finish_s"])
    assert a <= float(r["admitted_s"]) <= float(r["first_token_s"]) <= f, r
    assert abs(float(r["e2e_ms"]) - (f - a) * 1e3) < 1e-6 * f * 1e3 + 1e-9, r
    assert 0 <= int(r["worker"]) < 3
PY
"$K" "${serve[@]}" -r round_robin --request-log r2.jsonl > /dev/null ||
  fail "serve --request-log r2.jsonl failed"
python3 -c 'import json; rows=[json.loads(l) for l in open("r2.jsonl")]; assert rows and rows[0]["request"] == 0 and rows[0]["completed"] is True and isinstance(rows[0]["ttft_ms"], float), rows[0]' ||
  fail "r2.jsonl rows: $(head -1 r2.jsonl)"

# A prompt larger than a worker's memory is rejected: completed false, no times after arrival.
"$K" serve -t t.kvtrace -w 3 -c 64 --rate 20 -r round_robin --request-log small.csv --json small.jsonl \
  > /dev/null ||
  fail "serve --request-log with rejections failed"
python3 - small.csv small.jsonl <<'PY' || fail "small.csv: rejected rows"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
res = json.loads(open(sys.argv[2]).readline())
rejected = [r for r in rows if r["completed"] == "false"]
assert res["rejected"] > 0 and len(rejected) == res["rejected"], (res["rejected"], len(rejected))
assert all(r["first_token_s"] == r["ttft_ms"] == r["finish_s"] == "" for r in rejected)
PY

expect_error "one run" "${serve[@]}" -r lbgr,round_robin --request-log bad.csv
expect_error "--resume" "${serve[@]}" --request-log bad.csv --json r.jsonl --resume
expect_error "lbgr" "${serve[@]}" -r lbgr:variant=nope --request-log bad.csv
[[ -e bad.csv ]] && fail "a refused run wrote bad.csv"
no_temporaries "serve --request-log"
finish "request log: CSV and JSONL rows per request, percentiles and hits agree, bad input refused"
