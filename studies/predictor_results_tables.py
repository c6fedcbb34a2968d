#!/usr/bin/env python3
"""Markdown tables of studies/predictor_results.sh from its JSON (one object per replay)."""
import glob
import json
import os
import sys

out = sys.argv[1]


def rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def stats(r):
    return dict(r.get("policy_stats") or [])


print("| trace | cap | LRU % | Belady % | policy | hit % | gap closed | bound hit % | bound gap | "
      "AUC | µs/access | train s | fits | H s | top gains |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in ("mooncake", "arena", "sharegpt"):
    main = rows(os.path.join(out, name + ".json"))
    bound = [r for f in sorted(glob.glob(os.path.join(out, name + "-bound-*.json")))
             for r in rows(f)]
    for cap in sorted({r["capacity_blocks"] for r in main}):
        at = [r for r in main if r["capacity_blocks"] == cap]
        ref = {r["policy"]: r for r in at if r["policy"] in ("lru", "belady")}
        lru, bel = ref["lru"]["block_hit_rate"] * 100, ref["belady"]["block_hit_rate"] * 100
        first = True
        for r in at:
            if r["policy"] in ("lru", "belady"):
                continue
            s = stats(r)
            hit = r["block_hit_rate"] * 100
            b = [x for x in bound if x["capacity_blocks"] == cap and x["policy"] == r["policy"]
                 and "load_model" in x["params"]]
            bhit = b[0]["block_hit_rate"] * 100 if b else float("nan")
            # Cost per block access over LRU's, end to end (replay time, one thread).
            extra_us = (r["ns_per_access"] - ref["lru"]["ns_per_access"]) / 1000
            gains = sorted(((v, k[5:]) for k, v in s.items() if k.startswith("gain_")),
                           reverse=True)[:3]
            print(f"| {name if first else ''} | {r['capacity_fraction'] * 100:.0f} % | "
                  f"{lru:.2f} | {bel:.2f} | {r['policy']} | {hit:.2f} | "
                  f"{100 * (hit - lru) / (bel - lru):+.1f} % | {bhit:.2f} | "
                  f"{100 * (bhit - lru) / (bel - lru):+.1f} % | {s.get('reuse_auc', 0):.3f} | "
                  f"{extra_us:.2f} | {s.get('train_seconds', 0):.2f} | "
                  f"{s.get('retrains', 0):.0f} | {s.get('horizon_s', 0):.0f} | "
                  + ", ".join(f"{k} {v:.2f}" for v, k in gains) + " |")
            first = False
