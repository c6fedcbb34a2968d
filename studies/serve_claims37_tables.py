#!/usr/bin/env python3
"""Tables of studies/serve_claims37.sh: sections (g)-(i) of docs/results/serve.md."""
import glob
import json
import os
import sys


def rows(pattern):
    out = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def pct(new, old):
    return f"{(new / old - 1) * 100:+.1f} %" if old else "–"


def ttft(r):
    return {k: r[f"ttft_{k}_ms"] for k in ("mean", "p50", "p90", "p95", "p99")}


def label(r):
    return r["policy"] + (":" + r["params"] if r["params"] else "")


def main(out):
    os.chdir(out)
    print("### (g) WA with a DRAM tier, one worker, Mooncake, 894 HBM blocks + 256 GB DRAM\n")
    print("| rate req/s | tiers | policy (both tiers) | hit % | DRAM hit % | TTFT mean ms | P50 | P90 | P99 | "
          "wait mean ms | WA vs LRU (TTFT mean) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for rate in ("0.2", "0.3", "0.4"):
        for tier in ("hbm", "dram"):
            base = None
            for tag in ("lru", "wa") if tier == "hbm" else ("lru", "wa", "walru"):
                (r,) = rows(f"g-{tier}-{tag}-rate{rate}.json")
                d = r.get("tiers", [{}])[0].get("hit_rate", 0) * 100 if tier == "dram" else None
                t = ttft(r)
                vs = "" if tag == "lru" else pct(t["mean"], ttft(base)["mean"])
                name = {"lru": "lru", "wa": "wa", "walru": "wa, DRAM lru"}[tag]
                print(f"| {rate} | {'HBM' if tier == 'hbm' else 'HBM + DRAM'} | {name} | "
                      f"{r['block_hit_rate'] * 100:.2f} | {'–' if d is None else f'{d:.2f}'} | "
                      f"{t['mean']:,.0f} | {t['p50']:,.0f} | {t['p90']:,.0f} | {t['p99']:,.0f} | "
                      f"{r['queue_wait_mean_ms']:,.0f} | {vs} |")
                base = base or r
    print("\n### (h) LARU with realistic predictors, Chatbot Arena, one worker, Qwen2.5-32B\n")
    print("| rate | blocks | policy | hit % | P50 | P90 | P99 ms | P99 vs LRU | mean ms | preempt |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rate in ("0", "3"):
        rs = rows(f"h-arena-rate{rate}.json")
        for cap in sorted({r["capacity_blocks"] for r in rs}):
            lru = next(r for r in rs if r["capacity_blocks"] == cap and r["policy"] == "lru")
            for r in (r for r in rs if r["capacity_blocks"] == cap):
                t = ttft(r)
                vs = "" if r is lru else pct(t["p99"], ttft(lru)["p99"])
                print(f"| {'as traced' if rate == '0' else rate} | {cap:,} | {label(r)} | "
                      f"{r['block_hit_rate'] * 100:.2f} | {t['p50']:,.1f} | {t['p90']:,.0f} | "
                      f"{t['p99']:,.0f} | {vs} | {t['mean']:,.0f} | {r['preemptions']} |")
    print("\n### (i) T-LRU in serve mode, Chatbot Arena, one worker, Qwen2.5-32B, SLO 200 ms\n")
    print("| rate | blocks | policy | hit % | P90 ms | P95 ms | SLO viol. % | P90 vs thr. | "
          "P95 vs thr. | SLO vs thr. |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rate in ("0", "3"):
        rs = rows(f"i-arena-rate{rate}.json")
        for cap in sorted({r["capacity_blocks"] for r in rs}):
            thr = next(r for r in rs
                       if r["capacity_blocks"] == cap and r["policy"] == "threshold_lru")
            for r in (r for r in rs if r["capacity_blocks"] == cap):
                t, bt = ttft(r), ttft(thr)
                same = r is thr
                print(f"| {'as traced' if rate == '0' else rate} | {cap:,} | {label(r)} | "
                      f"{r['block_hit_rate'] * 100:.2f} | {t['p90']:,.0f} | {t['p95']:,.0f} | "
                      f"{r['slo_violation_rate'] * 100:.1f} | "
                      f"{'' if same else pct(t['p90'], bt['p90'])} | "
                      f"{'' if same else pct(t['p95'], bt['p95'])} | "
                      f"{'' if same else pct(r['slo_violation_rate'], thr['slo_violation_rate'])} |")


if __name__ == "__main__":
    main(sys.argv[1])
