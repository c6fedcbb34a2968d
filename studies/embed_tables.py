#!/usr/bin/env python3
"""docs/results/embed.md's embedding-cache tables from studies/embed_results.sh's OUT directory: per
run, hit rate and mean / P99 SLS latency per (cache ratio, batch, policy), and each learned
policy's mean latency against LRU's in the same cell."""
import json
import os
import sys


def table(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    cells = sorted({(r["cache_ratio"], r["batch"]) for r in rows})
    head = "| cache | batch | " + " | ".join(
        f"{p} hit % | {p} mean ms | {p} P99 ms" + ("" if p == "lru" else f" | {p} vs LRU")
        for p in policies) + " |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for ratio, batch in cells:
        by = {r["policy"]: r for r in rows if r["cache_ratio"] == ratio and r["batch"] == batch}
        lru = by.get("lru")
        cols = []
        for p in policies:
            r = by[p]
            cols += [f"{100 * r['hit_rate']:.2f}", f"{r['mean_latency_ms']:.2f}",
                     f"{r['p99_latency_ms']:.2f}"]
            if p != "lru":
                cols.append(f"{100 * (r['mean_latency_ms'] / lru['mean_latency_ms'] - 1):+.1f} %"
                            if lru else "-")
        lines.append(f"| {ratio:.1%} | {batch} | " + " | ".join(cols) + " |")
    return rows[0]["store"], rows[0]["predictor"] if len(rows) else "", "\n".join(lines)


def main(out):
    for name in ["gbm-memory", "gbm-redis", "weak-memory", "weak-redis", "oracle-memory"]:
        path = os.path.join(out, name + ".jsonl")
        if not os.path.exists(path):
            continue
        rows = [json.loads(line) for line in open(path) if line.strip()]
        predictor = next((r["predictor"] for r in rows if r["predictor"] != "-"), "-")
        store, _, text = table(path)
        conc = [r["rank_concordance"] for r in rows if "rank_concordance" in r]
        extra = (f"; the GBM's rank concordance {min(conc):.3f}-{max(conc):.3f}" if conc else "")
        print(f"#### {name}: store {store.split(' ')[0]}, predictor {predictor}{extra}\n")
        print(text + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
