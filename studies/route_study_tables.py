#!/usr/bin/env python3
"""Markdown tables of a route-study (or serve) JSONL file, one per trace, as in
docs/results/routers.md.

Usage: route_study_tables.py [--summary] RESULTS.jsonl
Each table has a row per (router, policy) with the hit rate, TTFT (mean, P50, P99), end-to-end
P50 and throughput, then the headline ratios of the RLT paper against Cache-Aware+LRU. With
--summary, one row per trace: Cache-Aware+LRU, LBGR+RLT and the best (router, policy) by median
TTFT.
"""
import json
import sys


def label(name, params):
    return name if not params else f"{name}:{params}"


def find(rows, router, policy):
    for r in rows:
        if (r["router"], r["policy"], r["router_params"], r["params"]) == (router, policy, "", ""):
            return r
    return None


def summary(by_trace):
    print("| workload | cache_aware+lru P50 TTFT ms (hit %) | lbgr+rlt P50 TTFT ms (hit %) | "
          "ratio | best by P50 TTFT | its P50 TTFT ms (hit %) |")
    print("|---|---:|---:|---:|---|---:|")
    for trace, rows in by_trace.items():
        base, ours = find(rows, "cache_aware", "lru"), find(rows, "lbgr", "rlt")
        best = min(rows, key=lambda r: r["ttft_p50_ms"])
        cell = lambda r: f"{r['ttft_p50_ms']:.1f} ({100 * r['block_hit_rate']:.1f})" if r else "-"
        ratio = (f"{base['ttft_p50_ms'] / ours['ttft_p50_ms']:.2f}x"
                 if base and ours and ours["ttft_p50_ms"] > 0 else "-")
        print(f"| {trace} | {cell(base)} | {cell(ours)} | {ratio} | "
              f"{label(best['router'], best['router_params'])}+{label(best['policy'], best['params'])} "
              f"| {cell(best)} |")


def main(path, compact):
    by_trace = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                by_trace.setdefault(r["trace"], []).append(r)
    if compact:
        summary(by_trace)
        return
    for trace, rows in by_trace.items():
        first = rows[0]
        print(f"\n#### {trace} ({first['workers']} workers, {first['capacity_blocks']} blocks each, "
              f"{first['cost_model']}, rate {first['rate']:g}/s)\n")
        print("| router | policy | hit % | TTFT mean ms | TTFT P50 ms | TTFT P99 ms | "
              "e2e P50 ms | req/s | preemptions |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in sorted(rows, key=lambda r: (r["router"], r["router_params"], r["policy"])):
            print(f"| {label(r['router'], r['router_params'])} | {label(r['policy'], r['params'])} "
                  f"| {100 * r['block_hit_rate']:.2f} | {r['ttft_mean_ms']:.1f} "
                  f"| {r['ttft_p50_ms']:.1f} | {r['ttft_p99_ms']:.1f} | {r['e2e_p50_ms']:.1f} "
                  f"| {r['throughput_rps']:.2f} | {r['preemptions']} |")
        base = find(rows, "cache_aware", "lru")
        if not base:
            continue
        print()
        for router, policy in [("cache_aware", "rlt"), ("lbgr", "lru"), ("lbgr", "rlt")]:
            r = find(rows, router, policy)
            if not r:
                continue
            ratio = lambda a, b: a / b if b > 0 else float("nan")
            print(f"- {router}+{policy} vs cache_aware+lru: median TTFT "
                  f"{ratio(base['ttft_p50_ms'], r['ttft_p50_ms']):.2f}x lower, median e2e "
                  f"{ratio(base['e2e_p50_ms'], r['e2e_p50_ms']):.2f}x lower, hit rate "
                  f"{100 * (r['block_hit_rate'] - base['block_hit_rate']):+.1f} points, throughput "
                  f"{100 * (ratio(r['throughput_rps'], base['throughput_rps']) - 1):+.1f} %")


if __name__ == "__main__":
    args = sys.argv[1:]
    compact = "--summary" in args
    args = [a for a in args if a != "--summary"]
    if len(args) != 1:
        sys.exit(__doc__)
    main(args[0], compact)
