#!/usr/bin/env bash
# `kvpolicy route-bound` end to end (ctest: CliRouteBound): on a small generated conversation
# trace, round_robin's gap closed is 0 and offline_bound's 1 (or both undefined), regret >= 0, the
# JSON rows match the table; the offline router refused where no future exists (closed loop, the
# decode pool) and bad flags named. docs/routers.md, offline_bound.
# Usage: check_route_bound_cli.sh KVPOLICY_BINARY
set -uo pipefail
K=${1:?usage: check_route_bound_cli.sh KVPOLICY_BINARY}
source "$(dirname "$0")/lib.sh"
"$K" trace generate --kind conversation --params sessions=60 --out t.kvtrace > /dev/null || exit 1
"$K" route-bound -t t.kvtrace -w 3 -r least_loaded,cache_aware --rate 20 --regret-sample 40 \
  --regret-window 16 --json b.jsonl > out.txt 2> err.txt || fail "route-bound exited $?: $(cat err.txt)"
grep -Eq '^trace .*model hit ceiling [0-9.]+ %' out.txt || fail "no ceiling line: $(head -3 out.txt)"
grep -Eq '^offline_bound \(offline\) ' out.txt || fail "no offline_bound row: $(cat out.txt)"
python3 - b.jsonl << 'PY' || fail "JSON rows inconsistent"
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
names = [r["router"] for r in rows]
assert names == ["round_robin", "offline_bound", "least_loaded", "cache_aware"], names
rr, bound = rows[0], rows[1]
assert bound["offline"] is True and not any(r["offline"] for r in rows if r is not bound)
for key, metric in [("gap_closed_ttft_mean", "ttft_mean_ms"), ("gap_closed_ttft_p50", "ttft_p50_ms"),
                    ("gap_closed_hit", "hit_rate")]:
    if bound[metric] == rr[metric]:
        assert all(r[key] is None for r in rows), key
        continue
    assert rr[key] == 0 and abs(bound[key] - 1) < 1e-9, key
    for r in rows:
        den = bound[metric] - rr[metric]
        want = (r[metric] - rr[metric]) / den
        # JSON holds 6 decimals: the recomputed ratio is as good as that over the denominator.
        tol = 3e-6 / abs(den) * (1 + abs(want)) + 1e-6
        assert abs(r[key] - want) < tol, (r["router"], key, r[key], want)
for r in rows:
    assert r["regret_samples"] == 40 and r["regret_window"] == 16, r
    assert 0 <= r["regret_mean_tokens"] <= r["regret_p90_tokens"] or r["regret_p90_tokens"] == 0, r
    assert r["model_hit_rate"] <= r["model_hit_ceiling"] + 1e-12, r
    assert r["serve"]["router"] == r["router"] and r["workers"] == 3, r
PY
# Serve-mode regret beside the model's: the model's columns unchanged, the serve ones >= 0.
"$K" route-bound -t t.kvtrace -w 3 -r least_loaded,cache_aware --rate 20 --regret-sample 40 \
  --regret-window 16 --regret-mode both --serve-regret-sample 4 --json s.jsonl > sout.txt \
  2> err.txt || fail "route-bound --regret-mode both exited $?: $(cat err.txt)"
grep -q 's-regret ms' sout.txt || fail "no serve regret column: $(head -3 sout.txt)"
"$K" route-bound -t t.kvtrace -w 3 -r least_loaded --rate 20 --regret-window 16 \
  --regret-mode serve --serve-regret-sample 3 --json m.jsonl > /dev/null 2> err.txt ||
  fail "route-bound --regret-mode serve exited $?: $(cat err.txt)"
python3 - b.jsonl s.jsonl m.jsonl << 'PY' || fail "serve regret rows inconsistent"
import json, sys
model, both, serve = ([json.loads(l) for l in open(p)] for p in sys.argv[1:4])
assert len(model) == len(both), (len(model), len(both))
for m, b in zip(model, both):
    for k, v in m.items():
        if not k.startswith("serve") and k != "regret_mode":
            assert b[k] == v, (b["router"], k, b[k], v)
    assert m["regret_mode"] == "model" and m["serve_regret_samples"] == 0, m
    assert b["regret_mode"] == "both" and b["serve_regret_samples"] == 4, b
    # P90 of 4 decisions (nearest rank) is their largest.
    assert 0 <= b["serve_regret_mean_ms"] <= b["serve_regret_p90_ms"] + 1e-9, b
for r in serve:
    assert r["regret_mode"] == "serve" and r["regret_samples"] == 0, r
    assert r["serve_regret_samples"] == 3 and r["serve_regret_mean_ms"] >= 0, r
PY
expect_error "--regret-mode" route-bound -t t.kvtrace -w 2 --regret-mode replay
# The offline router needs the trace's future: not in a closed loop, not as the decode router.
expect_error "closed loop" serve -t t.kvtrace -w 2 -r offline_bound --clients 4
expect_error "decode router" serve -t t.kvtrace -r round_robin --prefill-workers 1 \
  --decode-workers 1 --decode-router offline_bound
expect_error "--clients" route-bound -t t.kvtrace -w 2 --clients 4
expect_error "--workers" route-bound -t t.kvtrace -w 2,4
expect_error "--capacity" route-bound -t t.kvtrace -w 2 -c 0.1,0.2
expect_error "--policy" route-bound -t t.kvtrace -w 2 --policy lru,fifo
expect_error "--regret-window" route-bound -t t.kvtrace -w 2 --regret-window -3
expect_error "--regret-sample" route-bound -t t.kvtrace -w 2 --regret-sample x
expect_error "window" route-bound -t t.kvtrace -w 2 -r offline_bound:window=-1
# A refused run writes nothing.
"$K" route-bound -t t.kvtrace -w 2 --policy lru,fifo --json never.jsonl > /dev/null 2>&1
[[ ! -e never.jsonl ]] || fail "a refused run wrote never.jsonl"
# Offline routers are not in the online set; `routers` says which is offline.
"$K" routers > routers.txt || fail "routers exited $?"
grep -q "offline: reads the trace's future" routers.txt || fail "routers does not mark it"
"$K" route-bound -t t.kvtrace -w 2 -r online --regret-sample 0 --json o.jsonl > /dev/null 2>&1 ||
  fail "route-bound -r online exited $?"
python3 - routers.txt o.jsonl << 'PY' || fail "-r online is not every online router once"
import json, re, sys
listing = open(sys.argv[1]).read()
blocks = re.split(r"\n(?=\S)", listing.strip())
online = [b.split("\n")[0] for b in blocks if "offline: reads" not in b]
offline = [b.split("\n")[0] for b in blocks if "offline: reads" in b]
assert offline == ["offline_bound"], offline
rows = [json.loads(l)["router"] for l in open(sys.argv[2])]
assert rows[:2] == ["round_robin", "offline_bound"], rows
assert sorted(rows[2:]) == sorted(n for n in online if n != "round_robin"), (rows, online)
PY
finish "route-bound: gap closed, regret and the offline router's refusals as documented"
