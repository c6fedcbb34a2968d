#!/usr/bin/env bash
# `kvpolicy serve --worker-trace` end to end (ctest: CliWorkerTrace): CSV and JSON Lines with one
# complete row per worker per interval and LBGR's state columns; bad flag values, more than one
# run, --resume and a failing run are refused and write nothing.
# Usage: check_worker_trace_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_worker_trace_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=40 --out t.kvtrace > /dev/null ||
  exit 1
serve=(serve -t t.kvtrace -w 3 -c 0.2 --rate 20)

"$K" "${serve[@]}" -r lbgr --worker-trace w.csv --worker-trace-interval 0.5 --json r.jsonl \
  > /dev/null || fail "serve --worker-trace w.csv failed"
head -1 w.csv | grep -qx \
  'time_s,interval_s,worker,waiting,running,queued_prefill_tokens,kv_blocks,busy_share,lbgr_queue_s,lbgr_bias_s,lbgr_bias_used_s' ||
  fail "w.csv header: $(head -1 w.csv)"
# Rows: a multiple of 3 workers, 11 fields each, workers 0,1,2 in turn; busy shares integrate to
# each worker's busy_seconds in the result.
python3 - w.csv r.jsonl <<'PY' || fail "w.csv does not match the result"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
res = json.loads(open(sys.argv[2]).readline())
assert rows and len(rows) % 3 == 0, len(rows)
for i, r in enumerate(rows):
    assert int(r["worker"]) == i % 3 and len(r) == 11 and None not in r.values(), r
for w in range(3):
    busy = sum(float(r["busy_share"]) * float(r["interval_s"]) for r in rows if int(r["worker"]) == w)
    want = res["per_worker"][w]["busy_seconds"]
    assert abs(busy - want) <= 1e-6 * want + 1e-6, (w, busy, want)
PY
"$K" "${serve[@]}" -r round_robin --worker-trace w.jsonl > /dev/null ||
  fail "serve --worker-trace w.jsonl failed"
python3 -c 'import json,sys; rows=[json.loads(l) for l in open("w.jsonl")]; assert rows and set(rows[0])=={"time_s","interval_s","worker","waiting","running","queued_prefill_tokens","kv_blocks","busy_share"}, rows[0]' ||
  fail "w.jsonl rows: $(head -1 w.jsonl)"

# P/D: the decode workers' rows leave the prefill router's columns empty (least_loaded has none).
"$K" "${serve[@]}" -r lbgr --prefill-workers 2 --decode-workers 1 --worker-trace pd.csv \
  > /dev/null || fail "serve --worker-trace pd.csv (P/D) failed"
python3 - pd.csv <<'PY' || fail "pd.csv rows: $(head -4 pd.csv)"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0][-1] == "lbgr_bias_used_s" and all(len(r) == 11 for r in rows), rows[:4]
assert all(r[8] != "" for r in rows[1:] if r[2] != "2") and all(r[8] == "" for r in rows[1:] if r[2] == "2")
PY

for bad in 0 -1 nan abc; do
  expect_error "--worker-trace-interval" "${serve[@]}" --worker-trace bad.csv --worker-trace-interval "$bad"
done
expect_error "one run" "${serve[@]}" -r lbgr,round_robin --worker-trace bad.csv
expect_error "--resume" "${serve[@]}" --worker-trace bad.csv --json r.jsonl --resume
expect_error "lbgr" "${serve[@]}" -r lbgr:variant=nope --worker-trace bad.csv
[[ -e bad.csv ]] && fail "a refused run wrote bad.csv"
no_temporaries "serve --worker-trace"
finish "worker trace: CSV and JSONL rows complete, busy shares integrate, bad input refused"
