#!/usr/bin/env python3
"""Markdown tables of studies/serve_results.sh's JSON. Usage: serve_results_tables.py OUT_DIR [COMMIT]"""
import glob
import json
import os
import sys

out = sys.argv[1]
commit = sys.argv[2] if len(sys.argv) > 2 else "unknown"


def rows(pattern):
    res = []
    for path in sorted(glob.glob(os.path.join(out, pattern))):
        with open(path) as f:
            res += [json.loads(line) for line in f if line.strip()]
    return res


def pct(x):
    return f"{100 * x:.2f}"


def ms(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def change(new, old):
    return "n/a" if old == 0 else f"{100 * (new - old) / old:+.1f} %"


def label(d):
    return d["policy"] + (":" + d["params"] if d["params"] else "")


# ---- (a) ----
stats = json.load(open(os.path.join(out, "a-gsp-stats.json")))
per_group = stats["requests"] // stats["sessions"]
F = stats["block_accesses"] // per_group
rep = rows("a-replay.json")
rlt = rows("a-replay-rlt-seed*.json")
caps = sorted({d["capacity_blocks"] for d in rep})
print(f"### (a) RLT vs LRU on GSP, round-robin order, one worker (commit {commit})\n")
print(f"Trace {rep[0]['trace']}: {stats['requests']} requests, {stats['block_accesses']:,} block "
      f"accesses, {stats['unique_blocks']:,} unique blocks; cycle footprint F = "
      f"{stats['block_accesses']:,} / {per_group} = {F:,} blocks.\n")
print("| capacity / F | blocks | LRU % | RLT % mean (min–max), seeds 1–3 | RLT / LRU | Belady % |")
print("|---|---|---|---|---|---|")
for c in caps:
    lru = next(d for d in rep if d["policy"] == "lru" and d["capacity_blocks"] == c)
    bel = next(d for d in rep if d["policy"] == "belady" and d["capacity_blocks"] == c)
    r = [d["block_hit_rate"] for d in rlt if d["capacity_blocks"] == c]
    m = sum(r) / len(r)
    lr = lru["block_hit_rate"]
    ratio = f"{m / lr:.2f}" if lr > 0 else ("∞ (LRU 0)" if m > 0 else "– (both 0)")
    print(f"| {c / F:.3f} | {c:,} | {pct(lr)} | {pct(m)} ({pct(min(r))}–{pct(max(r))}) | {ratio} "
          f"| {pct(bel['block_hit_rate'])} |")

print("\nServe-mode check (one worker, seed 1):\n")
print("| capacity / F | blocks | run | LRU % | RLT % | LRU TTFT mean / P99 ms | RLT TTFT mean / P99 ms | LRU / RLT req/s |")
print("|---|---|---|---|---|---|---|---|")
for c in sorted({d["capacity_blocks"] for d in rows("a-serve-rate12.json")}):
    for name, pattern in (("serve, 12 req/s (as generated)", "a-serve-rate12.json"),
                          ("serve, --rate 0.05", "a-serve-rate0.05.json")):
        s = {d["policy"]: d for d in rows(pattern) if d["capacity_blocks"] == c}
        print(f"| {c / F:.3f} | {c:,} | {name} | {pct(s['lru']['block_hit_rate'])} | "
              f"{pct(s['rlt']['block_hit_rate'])} | {ms(s['lru']['ttft_mean_ms'])} / "
              f"{ms(s['lru']['ttft_p99_ms'])} | {ms(s['rlt']['ttft_mean_ms'])} / "
              f"{ms(s['rlt']['ttft_p99_ms'])} | {s['lru']['throughput_rps']:.2f} / "
              f"{s['rlt']['throughput_rps']:.2f} |")
    for name, cc in (("replay", c), ("replay, one block less", c - 1)):
        s = {d["policy"]: d for d in rows("a-check-replay.json") if d["capacity_blocks"] == cc}
        print(f"| {c / F:.3f} | {cc:,} | {name} | {pct(s['lru']['block_hit_rate'])} | "
              f"{pct(s['rlt']['block_hit_rate'])} | | | |")

# ---- (c) ----
print(f"\n### (c) WA vs LRU, queued TTFT on Mooncake (commit {commit})\n")
crep = rows("c-replay.json")
print("Replay mode (no queueing), block hit rate %: " + "; ".join(
    f"{c:,} blocks: lru {pct(next(d for d in crep if d['policy'] == 'lru' and d['capacity_blocks'] == c)['block_hit_rate'])}, "
    f"wa {pct(next(d for d in crep if d['policy'] == 'wa' and d['capacity_blocks'] == c)['block_hit_rate'])}"
    for c in sorted({d["capacity_blocks"] for d in crep})) + "\n")
print("| workers, router | rate req/s | blocks/worker | policy | hit % | util (Δ busy s) | TTFT mean | P50 | P90 | P99 ms | preempt |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
serve_c = [d for d in rows("c-serve-w*.json")]
keys = sorted({(d["workers"], d["router"], d["rate"], d["capacity_blocks"]) for d in serve_c},
              key=lambda k: (k[0], k[1] != "cache_aware", k[1], k[3], k[2]))
for w, router, rate, c in keys:
    s = {d["policy"]: d for d in serve_c
         if (d["workers"], d["router"], d["rate"], d["capacity_blocks"]) == (w, router, rate, c)}
    lru, wa = s["lru"], s["wa"]
    for d in (lru, wa):
        util = sum(p["utilisation"] for p in d["per_worker"]) / len(d["per_worker"])
        lab = "wa (window scaled)" if d is wa else "lru"
        print(f"| {w}, {router} | {rate:g} | {c:,} | {lab} | {pct(d['block_hit_rate'])} | {util:.2f} | "
              f"{ms(d['ttft_mean_ms'])} | {ms(d['ttft_p50_ms'])} | {ms(d['ttft_p90_ms'])} | "
              f"{ms(d['ttft_p99_ms'])} | {d['preemptions']} |")
    busy = [sum(p["busy_seconds"] for p in d["per_worker"]) for d in (lru, wa)]
    print(f"| | | | **wa vs lru** | {100 * (wa['block_hit_rate'] - lru['block_hit_rate']):+.2f} pt | "
          f"busy {change(busy[1], busy[0])} | "
          f"**{change(wa['ttft_mean_ms'], lru['ttft_mean_ms'])}** | {change(wa['ttft_p50_ms'], lru['ttft_p50_ms'])} | "
          f"{change(wa['ttft_p90_ms'], lru['ttft_p90_ms'])} | {change(wa['ttft_p99_ms'], lru['ttft_p99_ms'])} | |")
un = rows("c-wa-unscaled.json")
print("\nWA with its default window (1,800 s, refit 60 s of simulated time) at rate 0.2, one worker: " +
      "; ".join(f"{d['capacity_blocks']:,} blocks hit {pct(d['block_hit_rate'])} %, TTFT mean "
                f"{ms(d['ttft_mean_ms'])} ms" for d in un))

# ---- (d) ----
print(f"\n### (d) LARU (oracle) vs LRU and Belady, TTFT percentiles (commit {commit})\n")
print("| trace | rate req/s | blocks (share) | policy | hit % | P50 | P90 | P99 ms | P99 vs LRU | mean ms | preempt |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for pattern in ("d-arena-rate0.json", "d-arena-rate3.json", "d-loogle.json"):
    ds = rows(pattern)
    for c in sorted({d["capacity_blocks"] for d in ds}):
        s = [d for d in ds if d["capacity_blocks"] == c]
        lru = next(d for d in s if d["policy"] == "lru")
        for d in s:
            tr = "Chatbot Arena" if "arena" in pattern else "LooGLE shortdep_qa"
            rate = f"{d['rate']:g}" if d["rate"] else f"as traced ({d['requests'] / d['makespan_s']:.2f})"
            share = f" ({100 * d['capacity_fraction']:g} %)" if d.get("capacity_fraction") else ""
            p99 = "" if d is lru else change(d["ttft_p99_ms"], lru["ttft_p99_ms"])
            print(f"| {tr} | {rate} | {c:,}{share} | {label(d)} | {pct(d['block_hit_rate'])} | "
                  f"{ms(d['ttft_p50_ms'])} | {ms(d['ttft_p90_ms'])} | {ms(d['ttft_p99_ms'])} | {p99} | "
                  f"{ms(d['ttft_mean_ms'])} | {d['preemptions']} |")
