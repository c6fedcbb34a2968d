#!/usr/bin/env python3
"""The retention-hint study's tables (docs/results/hints.md) from studies/hints_study.sh's rows.

Usage: hints_tables.py DIR. Prints one markdown table per trace and capacity (block hit rate in
%, per policy and hint configuration, and the change against no hints), then serve mode's, and
the minimum priority for offload's serve rows when present.
"""
import json
import os
import sys

HINTS = ["none", "system-prompt", "session-pin", "both", "oracle", "random", "adversarial"]
TRACES = ["mooncake", "arena", "agent"]


def rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def label(r):
    return r["policy"] + (":" + r["params"] if r.get("params") else "")


def main(out):
    for trace in TRACES:
        data = {}
        for h in HINTS:
            path = os.path.join(out, f"{trace}.{h}.jsonl")
            if not os.path.exists(path):
                continue
            for r in rows(path):
                data[(label(r), r["capacity_fraction"], h)] = r["block_hit_rate"] * 100
        if not data:
            continue
        caps = sorted({c for _, c, _ in data})
        policies = []
        for p, _, _ in data:
            if p not in policies:
                policies.append(p)
        for c in caps:
            print(f"\n**{trace}, capacity {c * 100:g} % of unique blocks** (block hit rate %; "
                  "in brackets the change against no hints, points)\n")
            print("| policy | " + " | ".join(HINTS) + " |")
            print("|---|" + "---|" * len(HINTS))
            for p in policies:
                base = data.get((p, c, "none"))
                cells = []
                for h in HINTS:
                    v = data.get((p, c, h))
                    if v is None:
                        cells.append("")
                    elif h == "none" or base is None:
                        cells.append(f"{v:.2f}")
                    else:
                        cells.append(f"{v:.2f} ({v - base:+.2f})")
                print(f"| `{p}` | " + " | ".join(cells) + " |")
    serve = []
    for h in ["none", "session-pin", "oracle", "adversarial"]:
        path = os.path.join(out, f"serve.{h}.jsonl")
        if os.path.exists(path):
            serve += [(h, r) for r in rows(path)]
    if serve:
        print("\n**serve mode, agent workload, 4 workers (cache_aware), 5 % each**\n")
        print("| hints | policy | block hit rate % | TTFT p50 ms | TTFT p99 ms |")
        print("|---|---|---|---|---|")
        for h, r in serve:
            print(f"| {h} | `{label(r)}` | {r['block_hit_rate'] * 100:.2f} | "
                  f"{r['ttft_p50_ms']:.1f} | {r['ttft_p99_ms']:.1f} |")
    offload = []
    for h, m in [("system-prompt", "off"), ("system-prompt", "36"), ("oracle", "off"),
                 ("oracle", "30")]:
        path = os.path.join(out, f"offload.{h}.{m}.jsonl")
        if os.path.exists(path):
            offload += [(h, m, r) for r in rows(path)]
    if offload:
        print("\n**serve mode, agent workload, lru, 4 workers (cache_aware), 5 % each, DRAM 2x**\n")
        print("| hints | --offload-min-priority | block hit % | HBM % | DRAM % | DRAM blocks "
              "written | DRAM GB written | DRAM GB read | skipped | TTFT p50 ms | TTFT p99 ms |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for h, m, r in offload:
            d = r["tiers"][0]
            skipped = r.get("offload_skipped_priority")
            print(f"| {h} | {m} | {r['block_hit_rate'] * 100:.2f} | {r['hbm_hit_rate'] * 100:.2f} "
                  f"| {d['hit_rate'] * 100:.2f} | {d['blocks_written']:,} | "
                  f"{d['bytes_written'] / 1e9:.1f} | {d['bytes_read'] / 1e9:.1f} | "
                  f"{'–' if skipped is None else f'{skipped:,}'} | {r['ttft_p50_ms']:.1f} | "
                  f"{r['ttft_p99_ms']:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
