#!/usr/bin/env bash
# Serve mode's speed flags (ctest CliServeSpeed): `serve --stepped` (every decode-only iteration
# through the event queue) writes the same rows as the default loop that skips them, timing
# apart; `bench --serve-only` runs the serve section alone, with its --serve-workers rows.
# The bench part skips without the Mooncake trace under KVPOLICY_DATA.
set -uo pipefail
K=${1:?usage: check_serve_speed_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=60,session_rate=4,think_s=2 \
  --out conv.kvtrace > /dev/null || fail_now "trace generate failed"
for mode in "" "--stepped"; do
  # shellcheck disable=SC2086
  "$K" serve -t conv.kvtrace -r least_loaded,cache_aware,lbgr -w 3 -c 0.05,0.5 -j 1 \
    $mode --json "rows$mode.jsonl" > /dev/null || fail_now "serve $mode failed"
done
python3 - rows.jsonl rows--stepped.jsonl <<'PY' || fail "serve --stepped rows differ"
import json
import sys

def rows(path):
    out = [json.loads(line) for line in open(path)]
    for r in out:
        r.pop("sim_seconds")
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))

fast, stepped = rows(sys.argv[1]), rows(sys.argv[2])
assert len(fast) == 6 and fast == stepped, "the rows differ"
assert all(r["iterations"] > r["requests"] for r in fast)
PY
grep -q -- "--stepped" <<<"$("$K" serve --help)" || fail "serve --help does not name --stepped"

if [[ -n "$data" && -f "$data/mooncake-conversation/conversation_trace.jsonl" ]]; then
  "$K" bench --quick --serve-only --serve-routers round_robin --serve-workers 2,4 \
    --data "$data" --json bench.json > bench.txt || fail_now "bench --serve-only failed"
  python3 - bench.json <<'PY' || fail "bench --serve-only: wrong rows"
import json
import sys

b = json.load(open(sys.argv[1]))
assert b["workloads"] == [] and b["load"] is None and b["serve"]["stepped"] is False
rows = b["serve"]["rows"]
assert [(r["router"], r["policy"], r["workers"]) for r in rows] == [
    ("round_robin", "lru", 8), ("round_robin", "lru", 2), ("round_robin", "lru", 4)], rows
assert len({r["requests"] for r in rows}) == 1
PY
  expect_error "--serve-workers" bench --quick --serve-only --serve-workers 0 --data "$data"
fi
finish "CliServeSpeed: ok"
