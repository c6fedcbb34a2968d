#!/usr/bin/env python3
"""Prints the throughput, memory and latency tables of docs/results.md from `kvpolicy bench
--json FILE` output, so the figures there are pasted from one run, never typed. The serve-mode
table is printed when the file has one (bench output from before serve mode has none)."""
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

    def table(header, *columns):
        print(header)
        print("|---" * (header.count("|") - 1) + "|")
        for n in names:
            cells = [cell(w, n, fmt) for w in (0, 1) for fmt in columns]
            print(f"| {bold(n)} | " + " | ".join(cells) + " |")
        print()

    rate = lambda p: f"{p['accesses_per_second'] / 1e6:.2f}"
    ratio = lambda p: f"{p['ratio_to_lru']:.2f}"
    rounds = lambda p: (f"{p['round_ratio_median']:.2f} "
                        f"({p['round_ratio_min']:.2f}–{p['round_ratio_max']:.2f})")
    table("| policy | (a) M acc/s | (a) × LRU time | (a) by round | (b) M acc/s | (b) × LRU time "
          "| (b) by round |", rate, ratio, rounds)
    table("| policy | (a) Mooncake ×18 | (b) Zipf |", lambda p: f"{p['bytes_per_block']:.1f}")
    table("| policy | (a) p50 / p99 ns | (b) p50 / p99 ns |",
          lambda p: f"{p['victim_p50_ns']:.0f} / {p['victim_p99_ns']:.0f}")
    load = bench.get("load")
    if load:
        print("| what | CPU time | MB/s (CPU) | MB/s (wall) |")
        print("|---|---|---|---|")
        for what, key in (("Mooncake JSONL", "jsonl"), ("native cache (.kvtrace)", "native")):
            mb = load[f"{key}_bytes"] / 1e6
            cpu, wall = load[f"{key}_cpu_seconds"], load[f"{key}_wall_seconds"]
            print(f"| {what} | {cpu:.4f} s | {mb / cpu:.0f} | {mb / wall:.0f} |")
    serve = bench.get("serve")
    if serve:
        print()
        print_serve(serve)


def print_serve(serve):
    gb = serve["gpu_bytes"] / 1e9
    print(f"Serve mode: {serve['requests']:,} requests ({serve['copies']} copies of the Mooncake "
          f"trace), {serve['workers']} workers × {serve['capacity_blocks']} blocks ({gb:.0f} GB "
          f"of KV each), {serve['cost_model']}; budget {serve['budget_seconds']:g} s of CPU per "
          f"(router, policy).")
    print()
    print("| router | policy | wall s | CPU s | events | M events/s | iterations | requests "
          "| hit % | TTFT mean ms | TTFT p99 ms | within budget |")
    print("|---" * 12 + "|")
    for r in serve["rows"]:
        if "error" in r:
            print(f"| {r['router']} | {r['policy']} | failed: {r['error']} |" + " |" * 9)
            continue
        print(f"| {r['router']} | {r['policy']} | {r['wall_seconds']:.2f} | "
              f"{r['cpu_seconds']:.2f} | {r['events']:,} | {r['events_per_second'] / 1e6:.2f} | "
              f"{r['iterations']:,} | {r['requests']:,} | {r['block_hit_rate'] * 100:.2f} | "
              f"{r['ttft_mean_ms']:.1f} | {r['ttft_p99_ms']:.1f} | "
              f"{'yes' if r['within_budget'] else 'no'} |")


if __name__ == "__main__":
    main()
