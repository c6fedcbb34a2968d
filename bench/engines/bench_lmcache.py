#!/usr/bin/env python3
"""Cost of kvpolicy.integrations.lmcache against LMCache's own policies, in the same run.

A real trace's requests (Mooncake by default) are served through LMCache's REAL L1 eviction
controller and listener bridges (python/engine_tests/lmcache_fakes.py: a fake L1 firing the
callbacks in the real L1Manager's order), once per policy and repetition, policies alternating.
The policies run in lockstep, request by request, so that the load of the shared machine falls
on all of them alike. Every policy method the bridges and the controller call is timed (one
perf_counter pair a call, the same wrapper for every policy), and so is each controller round
that evicted (the real loop body: get_eviction_actions, L1's delete, the removals reported
back). LMCache's native LRU is not
among the engines' files (../shared/engines/SEAMS.md, 3(b)); pass --native-lru PATH to a copy of
it kept outside the project to measure against it, else the comparison is with noop only.

    PYTHONPATH=build/python python3 bench/engines/bench_lmcache.py \\
        --native-lru /tmp/lmcache-native/lmcache_lru.py --policies lru,s3fifo,sieve
    PYTHONPATH=build/python python3 bench/engines/bench_lmcache.py --parity   # the parity table

--parity prints, per online policy of the registry and trace, the hits of the adapter inside
the real controller against kvpolicy's own run of the same stream (lmcache_fakes.Reference),
whether every round's victims agree, and kvpolicy's prefix replay (simulate) of the same
requests at the tier's capacity and at its watermark, where LMCache's semantics part ways.
"""
import argparse
import gc
import importlib.util
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "engine_tests"))

from engines import use_engine  # noqa: E402

use_engine("lmcache")

from lmcache.v1.distributed.eviction_policy.noop import NoOpEvictionPolicy  # noqa: E402

from kvpolicy.integrations.lmcache import KvpolicyEvictionPolicy  # noqa: E402
from lmcache_fakes import Engine, FakeL1, l1_controller  # noqa: E402
from lmcache_parity import (  # noqa: E402
    load_requests, online_policies, run_adapter, run_reference)

METHODS = ("on_keys_created", "on_keys_touched", "on_keys_removed", "get_eviction_actions")


class Timed:
    """Forwards the policy calls to `inner`, adding each call's wall time to `ns`."""

    def __init__(self, inner):
        self.inner = inner
        self.ns = {m: 0 for m in METHODS}
        self.calls = {m: 0 for m in METHODS}
        self.keys = {m: 0 for m in METHODS}
        for m in METHODS:
            setattr(self, m, self._wrap(m, getattr(inner, m)))

    def _wrap(self, name, fn):
        clock = time.perf_counter_ns

        def call(*args, **kwargs):
            t = clock()
            out = fn(*args, **kwargs)
            self.ns[name] += clock() - t
            self.calls[name] += 1
            if name != "get_eviction_actions":
                self.keys[name] += len(args[0])
            return out
        return call

    def __getattr__(self, name):
        return getattr(self.inner, name)


def load_native_lru(path):
    spec = importlib.util.spec_from_file_location("lmcache_native_lru", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LRUEvictionPolicy


def time_lockstep(makers, requests, capacity):
    """Every policy serves the same requests in lockstep (request i goes to every policy before
    request i + 1, in an order rotating with i), so that the shared machine's load falls on
    all of them alike; the garbage collector is off while they run. Returns, per policy, the
    per-call times of its methods and the wall time of every evicting controller round (the
    loop body: the policy's choice, L1's delete and the removals reported back)."""
    clock = time.perf_counter_ns
    states = []
    for label, make in makers:
        policy = Timed(make())
        l1 = FakeL1(capacity)
        ctl = l1_controller(l1, policy)
        state = dict(label=label, policy=policy, engine=Engine(l1, ctl), round_ns=[],
                     total_ns=0)
        ctl.eviction_loop = _timed_round(ctl.eviction_loop, policy, state["round_ns"], clock)
        states.append(state)
    gc.collect()
    gc.disable()
    try:
        for i, keys in enumerate(requests):
            for j in range(len(states)):
                state = states[(i + j) % len(states)]
                t = clock()
                state["engine"].request(keys)
                state["total_ns"] += clock() - t
    finally:
        gc.enable()
    out = {}
    for state in states:
        policy, engine, round_ns = state["policy"], state["engine"], state["round_ns"]
        out[state["label"]] = dict(
            total_ms=state["total_ns"] / 1e6, hits=engine.hits, looked=engine.looked,
            round_us=statistics.median(round_ns) / 1e3 if round_ns else 0.0,
            rounds=len(round_ns), ns=dict(policy.ns), calls=dict(policy.calls),
            keys=dict(policy.keys))
    return out


def _timed_round(real, policy, round_ns, clock):
    def loop():
        before = policy.calls["get_eviction_actions"]
        t = clock()
        real()
        if policy.calls["get_eviction_actions"] > before:
            round_ns.append(clock() - t)
    return loop


# LMCache passes a policy no request fields (docs/engines/lmcache.md, "Gaps").
NO_REQUEST_FIELDS = {"lpc": "lpc:predictor=constant,value=0.5"}


def parity_table(traces):
    import kvpolicy

    print("| trace | policy | LMCache L1 hits (adapter) | kvpolicy's run of the stream | "
          "victims agree | evicting rounds | replay at capacity | replay at 0.8 x capacity |")
    print("|---|---|---|---|---|---|---|---|")
    for name, count, capacity in traces:
        requests, chunk_tokens = load_requests(name, count, cache_dir="engine_tests_data")
        looked = sum(map(len, requests))
        trace = kvpolicy.load_trace(_trace_path(name), max_requests=count)
        for policy in online_policies() + ["laru:predictor=reuse"]:
            spec = NO_REQUEST_FIELDS.get(policy, policy)
            hits, victims, _ = run_adapter(spec, requests, capacity, chunk_tokens)
            ref_hits, ref_victims, _ = run_reference(spec, requests, capacity, chunk_tokens)
            replay = kvpolicy.simulate(trace, [spec], [capacity, int(0.8 * capacity)], jobs=1)
            rates = [r["block_hit_rate"] for r in replay]
            print(f"| {name} ({count} req, {capacity} chunks) | {spec} | "
                  f"{sum(hits) / looked:.2%} | {sum(ref_hits) / looked:.2%} | "
                  f"{'yes' if victims == ref_victims and hits == ref_hits else 'NO'} | "
                  f"{len(victims)} | {rates[0]:.2%} | {rates[1]:.2%} |")


def _trace_path(name):
    import os as _os
    from lmcache_parity import MOONCAKE, data_dir

    if name == "mooncake":
        return _os.path.join(data_dir(), MOONCAKE)
    return _os.path.join("engine_tests_data", "arena.kvtrace")


def _row(label, results):
    med = lambda f: statistics.median(f(r) for r in results)  # noqa: E731
    row = dict(policy=label, hit_rate=results[0]["hits"] / max(results[0]["looked"], 1),
               rounds=results[0]["rounds"], total_ms=med(lambda r: r["total_ms"]),
               round_us=med(lambda r: r["round_us"]))
    for m in METHODS:
        calls = results[0]["calls"][m]
        row[m + "_us"] = med(lambda r: r["ns"][m] / max(r["calls"][m], 1) / 1e3) \
            if calls else 0.0
    row["listener_us_per_key"] = med(lambda r: sum(r["ns"][m] for m in METHODS[:3])
                                     / max(sum(r["keys"][m] for m in METHODS[:3]), 1) / 1e3)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parity", action="store_true", help="print the parity table instead")
    ap.add_argument("--trace", default="mooncake", choices=["mooncake", "arena"])
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--capacity", type=int, default=4000, help="L1 capacity in chunks")
    ap.add_argument("--policies", default="lru,s3fifo,sieve", help="kvpolicy specs")
    ap.add_argument("--native-lru", default="", help="path of LMCache's lru.py (outside the "
                    "project); without it the baseline is noop")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="one JSON object per policy")
    a = ap.parse_args()
    if a.parity:
        parity_table([("mooncake", a.requests, a.capacity), ("arena", 3000, 4000)])
        return
    loaded = load_requests(a.trace, a.requests, cache_dir="engine_tests_data")
    if loaded is None:
        sys.exit(f"trace {a.trace} absent (KVPOLICY_DATA)")
    requests, chunk_tokens = loaded
    natives = [("noop", NoOpEvictionPolicy)]
    if a.native_lru:
        natives.append(("LRU (LMCache)", load_native_lru(a.native_lru)))
    # One kvpolicy policy at a time with the native ones, as one LMCache tier has one policy
    # (several policies' structures side by side would crowd the CPU caches).
    groups = [natives + [(f"kvp:{spec}", lambda s=spec: KvpolicyEvictionPolicy(
        s, a.capacity, chunk_tokens))] for spec in a.policies.split(",")]
    rows = []
    for group in groups:
        runs = {label: [] for label, _ in group}
        for _ in range(a.repeat):
            for label, result in time_lockstep(group, requests, a.capacity).items():
                runs[label].append(result)
        group_rows = [_row(label, runs[label]) for label, _ in group]
        base = group_rows[len(natives) - 1]  # LMCache's LRU when given, else noop
        for row in group_rows:
            row["base"] = base
        rows.extend(group_rows if group is groups[0] else group_rows[len(natives):])
    print(f"# {a.trace}: {len(requests)} requests, {sum(map(len, requests))} chunk lookups, "
          f"L1 {a.capacity} chunks of {chunk_tokens} tokens, watermark 0.8, ratio 0.2; "
          f"median of {a.repeat}; x = against {natives[-1][0]} in the same lockstep run")
    print("| policy | L1 hit rate | evicting rounds | round (µs) | x | created (µs/call) | "
          "touched (µs/call) | removed (µs/call) | listener µs/key | x | run (ms) | "
          "baseline in that run: round (µs), µs/key |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        base = r.pop("base")
        rx = r["round_us"] / base["round_us"] if base["round_us"] else float("nan")
        lx = r["listener_us_per_key"] / base["listener_us_per_key"] \
            if base["listener_us_per_key"] else float("nan")
        print(f"| {r['policy']} | {r['hit_rate']:.1%} | {r['rounds']} | {r['round_us']:.0f} | "
              f"{rx:.2f} | {r['on_keys_created_us']:.1f} | {r['on_keys_touched_us']:.1f} | "
              f"{r['on_keys_removed_us']:.1f} | {r['listener_us_per_key']:.2f} | {lx:.2f} | "
              f"{r['total_ms']:.0f} | {base['round_us']:.0f}, {base['listener_us_per_key']:.2f} |")
        if a.json:
            print(json.dumps(r))


if __name__ == "__main__":
    main()
