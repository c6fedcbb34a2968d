#!/usr/bin/env bash
# `kvpolicy embed` end to end (ctest CliEmbed): generate, bench on both stores with JSON rows
# whose outputs agree, load-redis into a server this script starts, and bad input named.
# Usage: check_embed_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_embed_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
server=""
at_exit '[[ -n $server ]] && kill "$server" 2> /dev/null && wait "$server" 2> /dev/null'

"$K" embed generate --kind zipf --keys 5000 --samples 2000 --pooling 20 --out z.csv > gen.txt ||
  fail "embed generate"
grep -q "wrote z.csv" gen.txt || fail "generate's summary: $(cat gen.txt)"
head -1 z.csv | grep -qx "timestamp_us,table,index,sample" || fail "the CSV header"

"$K" embed bench --trace z.csv --policy lru,laru --predictor oracle --ratio 2% --batch 256 \
  --store memory,redis --json sls.jsonl > bench.txt 2> bench.err || fail "bench: $(cat bench.err)"
[[ $(wc -l < sls.jsonl) -eq 4 ]] || fail "4 JSON rows expected, got $(wc -l < sls.jsonl)"
python3 - << 'PY' || fail "the rows"
import json
rows = [json.loads(l) for l in open("sls.jsonl")]
assert {r["store"].split()[0] for r in rows} == {"memory", "redis"}, rows
assert len({round(r["checksum"], 3) for r in rows}) == 1, "outputs differ across stores/policies"
lru = [r for r in rows if r["policy"] == "lru"]
assert lru[0]["hits"] == lru[1]["hits"], "the store changed what the cache holds"
assert all(r["unique_lookups"] >= r["hits"] > 0 for r in rows)
PY

# load-redis into a server of this script's own, then bench against it by address.
if [[ -x /usr/bin/redis-server ]]; then
  /usr/bin/redis-server --port 0 --unixsocket "$work/r.sock" --save "" --appendonly no \
    --dir "$work" > redis.log 2>&1 &
  server=$!
  for _ in $(seq 50); do [[ -S $work/r.sock ]] && break; sleep 0.1; done
  "$K" embed load-redis --trace z.csv --redis-socket "$work/r.sock" > load.txt ||
    fail "load-redis: $(cat load.txt)"
  grep -q "stored the rows of" load.txt || fail "load-redis's summary"
  "$K" embed bench --trace z.csv --policy lru --ratio 2% --batch 256 --store redis \
    --redis-socket "$work/r.sock" > byaddr.txt || fail "bench against a given server"
fi

printf 'timestamp_us,table,index,sample\n0,1,2,0\n0,1,x,0\n' > bad.csv
expect_error "bad.csv:3" embed bench --trace bad.csv --store memory
expect_error "index" embed bench --trace bad.csv --store memory
expect_error "mru" embed bench --trace z.csv --policy mru
expect_error "share of the distinct keys" embed bench --trace z.csv --ratio 4096
expect_error "needs --redis" embed load-redis --trace z.csv
expect_error "/nonexistent/r.sock" embed load-redis --trace z.csv --redis-socket /nonexistent/r.sock
finish "embed CLI checks passed"
