#!/usr/bin/env bash
# P/D's second pass on the command line (ctest: CliPdCacheSize): serve's --decode-cache and
# --kv-transfer reach the JSON rows (decode hits only with the cache on, the blocks adding up),
# --resume keeps their rows apart, a layer-wise transfer on a linear model is one clear error;
# `size` sizes a P/D deployment (its rows carry the pools and the allocation) and refuses a
# --workers list that is not P + D, writing nothing.
# Usage: check_pd_cache_size_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_pd_cache_size_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=60 --out t.kvtrace > /dev/null || exit 1

pd=(--prefill-workers 1 --decode-workers 2 --decode-router cache_aware --jobs 1)
"$K" serve -t t.kvtrace -c 2000 "${pd[@]}" --json on.jsonl > /dev/null 2> err.txt ||
  fail "serve with the decode cache exited $?: $(cat err.txt)"
"$K" serve -t t.kvtrace -c 2000 "${pd[@]}" --decode-cache off --kv-transfer layerwise \
  --json off.jsonl > /dev/null 2> err.txt || fail "serve --decode-cache off exited $?: $(cat err.txt)"
"$K" serve -t t.kvtrace -c 2000 "${pd[@]}" > on.txt 2> err.txt || fail "serve exited $?"
grep -Eq '^  KV transfer after-prefill, decode cache on: decode workers held [0-9.]+ % of the [0-9]+ context blocks' on.txt ||
  fail "no decode-cache line in the table: $(cat on.txt)"
python3 - on.jsonl off.jsonl << 'PY' || fail "JSON rows inconsistent"
import json, sys
on, off = (json.loads(open(p).readline()) for p in sys.argv[1:])
assert on["decode_cache"] is True and on["kv_transfer"] == "after-prefill", on
assert off["decode_cache"] is False and off["kv_transfer"] == "layerwise", off
assert off["decode_hit_blocks"] == 0 and on["decode_hit_blocks"] > 0, (on, off)
# The decode cache sends fewer blocks.
assert on["kv_blocks_transferred"] + on["decode_hit_blocks"] > 0, on
assert on["kv_blocks_transferred"] < off["kv_blocks_transferred"], (on, off)
PY
cp on.jsonl both.jsonl
"$K" serve -t t.kvtrace -c 2000 "${pd[@]}" --decode-cache off --json both.jsonl --resume \
  > /dev/null 2> err.txt || fail "--resume exited $?: $(cat err.txt)"
[[ $(wc -l < both.jsonl) == 2 ]] || fail "--resume took the decode-cache row for the other"
expect_error "layers" serve -t t.kvtrace -c 2000 "${pd[@]}" --kv-transfer layerwise \
  --model linear --json bad.jsonl
[[ -e bad.jsonl ]] && fail "a refused configuration wrote bad.jsonl"
expect_error "decode-cache" serve -t t.kvtrace -c 2000 "${pd[@]}" --decode-cache maybe

"$K" size -t t.kvtrace --gpu h100 --prefill-workers 1 --decode-workers 2 --allocation whole \
  --kv-transfer layerwise --target-hit 10% --tolerance 0.1 --jobs 1 --json size.jsonl \
  > size.txt 2> err.txt || fail "size with P/D exited $?: $(cat err.txt)"
grep -q "P/D: 1 prefill + 2 decode workers" size.txt || fail "no P/D line: $(head -5 size.txt)"
python3 - size.jsonl << 'PY' || fail "size rows inconsistent"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
answers = [r for r in rows if r["kind"] == "answer"]
assert len(answers) == 1 and answers[0]["workers"] == 3, answers
for r in rows:
    if r["kind"] != "replay":
        assert (r["prefill_workers"], r["decode_workers"], r["allocation"]) == (1, 2, "whole"), r
PY
expect_error "leave --workers out" size -t t.kvtrace -w 1,2 --prefill-workers 1 \
  --decode-workers 2 --target-hit 10% --json bad.jsonl
[[ -e bad.jsonl ]] && fail "a refused size wrote bad.jsonl"
expect_error "both --prefill-workers and --decode-workers" size -t t.kvtrace --prefill-workers 1 \
  --target-hit 10%
finish "P/D decode cache, layer-wise transfer and size with P/D CLI: ok"
