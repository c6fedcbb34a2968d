#!/usr/bin/env python3
"""Prints the throughput, memory, latency and load tables of docs/results/bench.md from
`kvpolicy bench --json FILE` output, so the figures there are pasted from one run, never typed.
Works for any number of workloads (a full run has two, Mooncake x18 and Zipf; without --data
only Zipf). The serve-mode table is printed when the file has one.

  bench_tables.py bench.json [--only throughput|memory|latency|load|serve]
"""
import argparse
import json
import sys

TABLES = ("throughput", "memory", "latency", "load", "serve")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_json")
    ap.add_argument("--only", choices=TABLES, help="print this table only")
    args = ap.parse_args()
    try:
        with open(args.bench_json) as f:
            bench = json.load(f)
        workloads = bench["workloads"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"bench_tables.py: {args.bench_json}: not `kvpolicy bench --json` output ({e})")
    if not workloads:
        sys.exit(f"bench_tables.py: {args.bench_json}: no workloads")
    rows = [{p["policy"]: p for p in w["policies"]} for w in workloads]
    names = list(dict.fromkeys(p["policy"] for w in workloads for p in w["policies"]))
    tags = [f"({chr(ord('a') + i)})" for i in range(len(workloads))]
    wanted = lambda t: args.only in (None, t)

    def cell(w, name, fmt):
        p = rows[w].get(name)
        return "failed" if p is None or "error" in p else fmt(p)

    def bold(name):
        return f"**{name}**" if name == "lru" else name

    def table(titles, *columns):
        head = "| policy | " + " | ".join(f"{t} {title}" for t in tags for title in titles) + " |"
        print(head)
        print("|---" * (head.count("|") - 1) + "|")
        for n in names:
            cells = [cell(w, n, fmt) for w in range(len(workloads)) for fmt in columns]
            print(f"| {bold(n)} | " + " | ".join(cells) + " |")
        print()

    if args.only is None:
        for t, w in zip(tags, workloads):
            print(f"{t} = {w.get('name', w.get('workload', '?'))}")
        print()
    # Headlines: the median round's rate and the by-round median ratio; the fastest apart (files
    # before the median was reported have the fastest as accesses_per_second).
    rate = lambda p: f"{p['accesses_per_second'] / 1e6:.2f}"
    fastest = lambda p: f"{p.get('fastest_accesses_per_second', p['accesses_per_second']) / 1e6:.2f}"
    rounds = lambda p: (f"{p['round_ratio_median']:.2f} "
                        f"({p['round_ratio_min']:.2f}–{p['round_ratio_max']:.2f})")
    if wanted("throughput"):
        table(("M acc/s (median)", "× LRU by round", "fastest M acc/s"), rate, rounds, fastest)
    if wanted("memory"):
        table(("bytes/block",), lambda p: f"{p['bytes_per_block']:.1f}")
    if wanted("latency"):
        table(("p50 / p99 ns",), lambda p: f"{p['victim_p50_ns']:.0f} / {p['victim_p99_ns']:.0f}")
    load = bench.get("load")
    if load and wanted("load"):
        print("| what | CPU time | MB/s (CPU) | MB/s (wall) |")
        print("|---|---|---|---|")
        for what, key in (("Mooncake JSONL", "jsonl"), ("native cache (.kvtrace)", "native")):
            mb = load[f"{key}_bytes"] / 1e6
            cpu, wall = load[f"{key}_cpu_seconds"], load[f"{key}_wall_seconds"]
            print(f"| {what} | {cpu:.4f} s | {mb / cpu:.0f} | {mb / wall:.0f} |")
        print()
    serve = bench.get("serve")
    if serve and wanted("serve"):
        print_serve(serve)


def print_serve(serve):
    gb = serve["gpu_bytes"] / 1e9
    print(f"Serve mode: {serve['requests']:,} requests ({serve['copies']} copies of the Mooncake "
          f"trace), {serve['workers']} workers × {serve['capacity_blocks']} blocks ({gb:.0f} GB "
          f"of KV each), {serve['cost_model']}; budget {serve['budget_seconds']:g} s of CPU per "
          f"(router, policy).")
    print()
    print("| router | policy | workers | wall s | CPU s | µs/request | events | M events/s | "
          "iterations | requests | hit % | TTFT mean ms | TTFT p99 ms | within budget |")
    print("|---" * 14 + "|")
    for r in serve["rows"]:
        workers = r.get("workers", serve["workers"])  # rows before issue 37 have none
        if "error" in r:
            print(f"| {r['router']} | {r['policy']} | {workers} | failed: {r['error']} |" + " |" * 10)
            continue
        us = r["cpu_seconds"] / max(r["requests"], 1) * 1e6
        print(f"| {r['router']} | {r['policy']} | {workers} | {r['wall_seconds']:.2f} | "
              f"{r['cpu_seconds']:.2f} | {us:.2f} | {r['events']:,} | "
              f"{r['events_per_second'] / 1e6:.2f} | "
              f"{r['iterations']:,} | {r['requests']:,} | {r['block_hit_rate'] * 100:.2f} | "
              f"{r['ttft_mean_ms']:.1f} | {r['ttft_p99_ms']:.1f} | "
              f"{'yes' if r['within_budget'] else 'no'} |")


if __name__ == "__main__":
    main()
