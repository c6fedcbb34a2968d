#!/usr/bin/env python3
"""Prints the throughput, memory and latency tables of docs/results.md from `kvpolicy bench
--json FILE` output, so the figures there are pasted from one run, never typed."""
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench_tables.py bench.json")
    with open(sys.argv[1]) as f:
        bench = json.load(f)
    workloads = bench["workloads"]
    if len(workloads) != 2:
        sys.exit("expected the two workloads of a full run (Mooncake x18 and Zipf)")
    rows = [{p["policy"]: p for p in w["policies"]} for w in workloads]
    names = [p["policy"] for p in workloads[0]["policies"]]

    def cell(w, name, fmt):
        p = rows[w].get(name)
        return "failed" if p is None or "error" in p else fmt(p)

    def bold(name):
        return f"**{name}**" if name == "lru" else name

    print("| policy | (a) M acc/s | (a) × LRU time | (b) M acc/s | (b) × LRU time |")
    print("|---|---|---|---|---|")
    for n in names:
        rate = lambda p: f"{p['accesses_per_second'] / 1e6:.2f}"
        ratio = lambda p: f"{p['ratio_to_lru']:.2f}"
        print(f"| {bold(n)} | {cell(0, n, rate)} | {cell(0, n, ratio)} | "
              f"{cell(1, n, rate)} | {cell(1, n, ratio)} |")
    print()
    print("| policy | (a) Mooncake ×18 | (b) Zipf |")
    print("|---|---|---|")
    for n in names:
        mem = lambda p: f"{p['bytes_per_block']:.1f}"
        print(f"| {n} | {cell(0, n, mem)} | {cell(1, n, mem)} |")
    print()
    print("| policy | (a) p50 / p99 ns | (b) p50 / p99 ns |")
    print("|---|---|---|")
    for n in names:
        lat = lambda p: f"{p['victim_p50_ns']:.0f} / {p['victim_p99_ns']:.0f}"
        print(f"| {n} | {cell(0, n, lat)} | {cell(1, n, lat)} |")
    load = bench.get("load")
    if load:
        print()
        print("| what | CPU time | MB/s (CPU) | MB/s (wall) |")
        print("|---|---|---|---|")
        for what, key in (("Mooncake JSONL", "jsonl"), ("native cache (.kvtrace)", "native")):
            mb = load[f"{key}_bytes"] / 1e6
            cpu, wall = load[f"{key}_cpu_seconds"], load[f"{key}_wall_seconds"]
            print(f"| {what} | {cpu:.4f} s | {mb / cpu:.0f} | {mb / wall:.0f} |")


if __name__ == "__main__":
    main()
