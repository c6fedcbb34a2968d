#!/usr/bin/env python3
"""What a block access costs through the Python bindings, unbatched and batched, next to the C++
replay (docs/api.md, "Cost of a call"). One run, one thread, wall time; ratios within the run.

    PYTHONPATH=build/python python3 tools/bench_python.py [TRACE] [--policy lru] [--json F]

Without TRACE it generates a Mooncake-like trace of 3,000 requests (the tests' generator).
"""

import argparse
import json
import os
import sys
import tempfile
import time

import kvpolicy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
import radix_cache  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--policy", default="lru")
    ap.add_argument("--capacity", default="5%", help="as kvpolicy simulate takes it")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    if args.trace:
        trace = kvpolicy.load_trace(args.trace)
    else:
        from test_kvpolicy import write_mooncake
        path = os.path.join(tempfile.mkdtemp(), "bench.jsonl")
        write_mooncake(path, requests=3000)
        trace = kvpolicy.load_trace(path)
    (row,) = kvpolicy.simulate(trace, [args.policy], [args.capacity], jobs=1)
    capacity = row["capacity_blocks"]
    accesses = trace.block_accesses
    requests = [trace.blocks(r) for r in range(len(trace))]
    infos = [trace.request(r) for r in range(len(trace))]

    def adapter_per_node():  # one Python call per hit, insert and request: SGLang's shape
        return radix_cache.replay(trace, args.policy, capacity)

    def cache_per_request():  # one call per request (keys in a list)
        c = kvpolicy.Cache(args.policy, capacity, trace.block_tokens)
        return sum(c.insert(keys=k, time=i["time"])[0] for k, i in zip(requests, infos))

    def cache_all_at_once():  # one call for every request, the GIL released
        c = kvpolicy.Cache(args.policy, capacity, trace.block_tokens)
        return sum(c.insert_many(requests))

    def bare_calls(batched):  # the binding alone: hits on one cached path, no tree work
        p = kvpolicy.EvictionPolicy(args.policy, 64)
        path = list(range(1, 17))
        with p.request():
            for i, node in enumerate(path):
                p.on_insert(node, path[i - 1] if i else None)
        rounds = accesses // len(path) + 1
        start = time.perf_counter()
        for _ in range(rounds):
            with p.request():
                if batched:
                    p.on_hits(path)
                else:
                    for node in path:
                        p.on_hit(node)
        return (time.perf_counter() - start) / (rounds * len(path)) * 1e9

    rows = []
    for name, fn in [("radix cache + EvictionPolicy, a call per node", adapter_per_node),
                     ("Cache.insert, a call per request", cache_per_request),
                     ("Cache.insert_many, one call", cache_all_at_once)]:
        seconds, hits = timed(fn)
        rows.append({"path": name, "ns_per_access": seconds / accesses * 1e9, "hits": hits})
    rows.append({"path": "EvictionPolicy.on_hit alone, a call per node (+ a request per 16)",
                 "ns_per_access": bare_calls(False), "hits": None})
    rows.append({"path": "EvictionPolicy.on_hits alone, a call per 16 nodes",
                 "ns_per_access": bare_calls(True), "hits": None})
    rows.append({"path": "C++ replay (kvpolicy.simulate)", "ns_per_access": row["ns_per_access"],
                 "hits": row["block_hits"]})
    print(f"{trace.name}: {len(trace)} requests, {accesses} block accesses, policy "
          f"{args.policy} at {capacity} blocks")
    print(f"| path | ns per block access | x C++ replay | block hits |")
    print(f"|---|---|---|---|")
    for r in rows:
        hits = "-" if r["hits"] is None else r["hits"]
        print(f"| {r['path']} | {r['ns_per_access']:,.0f} | "
              f"{r['ns_per_access'] / row['ns_per_access']:,.1f} | {hits} |")
    # insert_many passes no request fields: it agrees with the others for policies that read none.
    checked = [r for r in rows if r["hits"] is not None and
               ("insert_many" not in r["path"] or args.policy == "lru")]
    if len({r["hits"] for r in checked}) != 1:
        print("bench_python: the paths disagree on hits", file=sys.stderr)
        return 1
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
