#!/usr/bin/env bash
# `kvpolicy serve` with chunked/whole allocation and prefill/decode pools (ctest: CliServePd):
# the JSON rows carry the allocation and the pools' fields, the table says the link's totals,
# --resume keeps a P/D row apart from a colocated one, and a half-given P/D configuration is one
# clear error with nothing written.
# Usage: check_serve_pd_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_serve_pd_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=60 --out t.kvtrace > /dev/null || exit 1

"$K" serve -t t.kvtrace -c 2000 --allocation whole,chunked --jobs 1 > /dev/null 2> err.txt &&
  fail "a list of allocations was accepted"
for a in whole chunked; do
  "$K" serve -t t.kvtrace -w 4 -c 400 --allocation $a --jobs 1 --json "alloc-$a.jsonl" \
    > /dev/null 2> err.txt || fail "serve --allocation $a exited $?: $(cat err.txt)"
done
"$K" serve -t t.kvtrace -w 4 -c 400 --prefill-workers 1 --decode-workers 3 \
  --decode-router round_robin --kv-link-bandwidth 25 --kv-link-latency 20 --jobs 1 \
  --json pd.jsonl > pd.txt 2> err.txt || fail "serve with P/D exited $?: $(cat err.txt)"
grep -Eq '^  P/D 1P\+3D \(decode router round_robin\): [0-9]+ KV transfers, [0-9.]+ GB' pd.txt ||
  fail "no P/D line in the table: $(cat pd.txt)"
python3 - alloc-whole.jsonl alloc-chunked.jsonl pd.jsonl << 'PY' || fail "JSON rows inconsistent"
import json, sys
whole, chunked, pd = ([json.loads(l) for l in open(p)] for p in sys.argv[1:])
assert whole[0]["allocation"] == "whole" and chunked[0]["allocation"] == "chunked", (whole, chunked)
assert whole[0]["prefill_workers"] == 0 and whole[0]["kv_transfers"] == 0
r = pd[0]
assert r["allocation"] == "chunked" and r["workers"] == 4, r
assert (r["prefill_workers"], r["decode_workers"], r["decode_router"]) == (1, 3, "round_robin"), r
assert r["kv_link_bytes_per_s"] == 25e9 and abs(r["kv_link_latency_s"] - 20e-6) < 1e-12, r
assert r["kv_transfers"] > 0 and r["kv_bytes_transferred"] > 0 and r["kv_transfer_seconds"] > 0, r
assert 0 < r["prefill_utilisation"] <= 1 and 0 < r["decode_utilisation"] <= 1, r
assert len(r["per_worker"]) == 4 and r["requests"] + r["rejected"] > 0, r
PY
# --resume: the colocated row of the same file does not stand in for the P/D one.
cp alloc-chunked.jsonl both.jsonl
"$K" serve -t t.kvtrace -w 4 -c 400 --prefill-workers 1 --decode-workers 3 --jobs 1 \
  --json both.jsonl --resume > /dev/null 2> err.txt || fail "--resume exited $?: $(cat err.txt)"
[[ $(wc -l < both.jsonl) == 2 ]] || fail "--resume did not add the P/D row: $(wc -l < both.jsonl) rows"

"$K" serve -t t.kvtrace -c 400 --decode-router random --jobs 1 > /dev/null 2> err.txt ||
  fail "--decode-router alone exited $?"
grep -q -- "--decode-router has no effect without --prefill-workers and --decode-workers" err.txt ||
  fail "--decode-router without pools was silent: $(cat err.txt)"
expect_error "--decode-workers" serve -t t.kvtrace -c 400 --prefill-workers 2 --json bad.jsonl
[[ -e bad.jsonl ]] && fail "a refused configuration wrote bad.jsonl"
expect_error "must equal" serve -t t.kvtrace -w 3 -c 400 --prefill-workers 2 --decode-workers 2
expect_error "give one worker count" serve -t t.kvtrace -w 1,4 -c 400 --prefill-workers 1 \
  --decode-workers 3
# --kv-link: a preset of the tiers' links sets both numbers; with either number it is refused.
"$K" serve -t t.kvtrace -w 4 -c 400 --prefill-workers 1 --decode-workers 3 --kv-link rdma-200 \
  --jobs 1 --json preset.jsonl > /dev/null 2> err.txt || fail "--kv-link exited $?: $(cat err.txt)"
python3 -c 'import json,sys; r=json.loads(open("preset.jsonl").readline()); sys.exit(not (r["kv_link_bytes_per_s"] == 22.5e9 and abs(r["kv_link_latency_s"] - 20e-6) < 1e-12))' ||
  fail "--kv-link rdma-200 did not set the link: $(head -c 300 preset.jsonl)"
expect_error "excludes" serve -t t.kvtrace -w 4 -c 400 --prefill-workers 1 --decode-workers 3 \
  --kv-link rdma-200 --kv-link-bandwidth 10
expect_error "unknown router" serve -t t.kvtrace -c 400 --prefill-workers 1 --decode-workers 1 \
  --decode-router nope
finish "serve allocation and P/D CLI: ok"
