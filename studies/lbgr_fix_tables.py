#!/usr/bin/env python3
"""Tables of studies/lbgr_fix.sh OUT (issue 38, item 1): per trace, workers and load, each router
x policy's median and P99 TTFT, hit rate, throughput and the spread of per-worker utilisation;
then LBGR+RLT (paper and robust) against cache_aware+lru and +rlt: ratio = LBGR / cache_aware
(<= 1.05 meets the target); and GSP's rows at 12 requests/s. With several seeds (SEEDS, files
run-...-sN.jsonl), each router x policy's numbers are their means over the seeds.
`--by-peak OUT [OUT ...]`: only the cells met, over every OUT given, split by whether the load in
the trace's busiest tenth of the span (load x 10 x its share of requests, burst.txt) stays within
the cluster's capacity.
`--paired OUT [OUT ...]`: the cells run with REQUEST_LOGS (lbgr_fix.sh): the first pair's
median and P99 TTFT over the second's, with 95 % intervals from a paired bootstrap over sessions
across the seeds (paired_percentile.py)."""
import json
import math
import os
import re
import sys


def rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def label(r):
    router = r["router"] + (":" + r["router_params"] if r.get("router_params") else "")
    return router, r["policy"]


def mean_over_seeds(rs):
    """One row per router x policy: TTFT, hit rate and throughput averaged over its seeds."""
    by = {}
    for r in rs:
        by.setdefault(label(r), []).append(r)
    out = []
    for group in by.values():
        row = dict(group[0])
        for k in ("ttft_p50_ms", "ttft_p99_ms", "block_hit_rate", "throughput_rps"):
            row[k] = sum(r[k] for r in group) / len(group)
        row["seeds"] = len(group)
        out.append(row)
    return out


def util(r):
    us = [w.get("utilisation", 0) for w in r.get("per_worker", [])]
    return (min(us), max(us)) if us else (0, 0)


def paired_p99(seeded, lb):
    """lbgr+rlt's P99 over cache_aware+lru's, seed by seed (a replicate's two runs share their
    arrivals): the mean and its standard error, or None with fewer than two seeds."""
    p99 = {}
    for r in seeded:
        p99[(label(r), r["seed"])] = r["ttft_p99_ms"]
    xs = [p99[((lb, "rlt"), s)] / p99[(("cache_aware", "lru"), s)]
          for (key, s) in p99 if key == (lb, "rlt") and p99.get((("cache_aware", "lru"), s))]
    if len(xs) < 2:
        return None
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))


def fmt(x):
    return f"{x:.1f}"


def cell_means(out):
    """Per (trace, workers, load), in order: its runs over every seed, and their means per
    router x policy (label -> row)."""
    cell_files = {}  # (trace, workers, load) -> its files, one per seed
    for f in os.listdir(out):
        m = re.fullmatch(r"run-(.+)-w(\d+)-l(\d+)(-s\d+)?\.jsonl", f)
        if m:
            cell_files.setdefault((m[1], int(m[2]), int(m[3])), []).append(f)
    for (tr, w, load), fs in sorted(cell_files.items()):
        seeded = [r for f in sorted(fs) for r in rows(os.path.join(out, f))]
        yield (tr, w, load), len(fs), seeded, {label(r): r for r in mean_over_seeds(seeded)}


def ratios(by, lb):
    """lbgr variant lb with rlt over cache_aware+lru and +rlt, P50 and P99 (<= 1.05 meets the
    target), or None when a row is missing."""
    x = by.get((lb, "rlt"))
    out = []
    for pol in ("lru", "rlt"):
        c = by.get(("cache_aware", pol))
        if not x or not c:
            return None
        for q in ("p50", "p99"):
            out.append(x[f"ttft_{q}_ms"] / c[f"ttft_{q}_ms"] if c[f"ttft_{q}_ms"] > 0 else float("inf"))
    return out


def by_peak(outs):
    """Cells met per lbgr variant over every OUT, split at a busiest tenth within capacity."""
    groups = {}  # (variant, within capacity) -> [(cell, worst)]
    for out in outs:
        share = {}
        with open(os.path.join(out, "burst.txt")) as f:
            for line in f:
                tr, s = line.split()
                share[tr] = float(s)
        for (tr, w, load), _, _, by in cell_means(out):
            for lb in sorted({router for router, _ in by if router.startswith("lbgr")}):
                r = ratios(by, lb)
                if r:
                    peak = load * 10 * share[tr]
                    groups.setdefault((lb, peak <= 100), []).append(
                        (f"{os.path.basename(out)} {tr} {w}w {load} % (peak {peak:.0f} %)", max(r)))
    print("| lbgr | busiest tenth's load | cells | met | missed (worst ratio) |\n|---|---|---:|---:|---|")
    for (lb, within), cs in sorted(groups.items(), key=lambda g: (g[0][0], not g[0][1])):
        missed = "; ".join(f"{c} {x:.2f}" for c, x in cs if x > 1.05) or "none"
        print(f"| {lb} | {'<= 100 %' if within else '> 100 %'} | {len(cs)} | "
              f"{sum(x <= 1.05 for _, x in cs)} | {missed} |")


def paired_logs(outs):
    """Per cell with request logs: the ratios of the first logged pair to the second."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from paired_percentile import Pair, paired_ratios
    print("| cell | requests (sessions) | P50 ratio [95 %] | P99 ratio [95 %] |\n|---|---:|---|---|")
    for out in outs:
        cells = {}
        for f in sorted(os.listdir(out)):
            m = re.fullmatch(r"log-(.+-w\d+-l\d+)-s(\d+)-1\.csv", f)
            if m and os.path.exists(os.path.join(out, f[:-6] + "-2.csv")):
                cells.setdefault(m[1], []).append(os.path.join(out, f))
        for cell, firsts in sorted(cells.items()):
            pairs = [Pair(a, a[:-6] + "-2.csv") for a in firsts]
            row = [f"{os.path.basename(out)} {cell} ({len(pairs)} seeds)",
                   f"{len(pairs[0].requests)} ({len(pairs[0].sessions)})"]
            for p in (50, 99):
                r, lo, hi = paired_ratios(pairs, p)[1]
                row.append(f"{r:.3f} [{lo:.3f}, {hi:.3f}]")
            print("| " + " | ".join(row) + " |")


def main():
    if sys.argv[1] == "--by-peak":
        return by_peak(sys.argv[2:])
    if sys.argv[1] == "--paired":
        return paired_logs(sys.argv[2:])
    out = sys.argv[1]
    caps = {}
    if os.path.exists(os.path.join(out, "capacity.txt")):
        for line in open(os.path.join(out, "capacity.txt")):
            tr, w, c = line.split()
            caps[(tr, int(w))] = float(c)
    print("Capacity (completed requests/s under overload, the better of least_loaded+lru and "
          "cache_aware+lru):\n")
    print("| trace | workers | capacity req/s |\n|---|---:|---:|")
    for (tr, w), c in sorted(caps.items()):
        print(f"| {tr} | {w} | {c:.3f} |")
    print()
    summary = []
    compact = []  # per cell: cache_aware+lru, +rlt, then the lbgr variants with rlt
    noise = {}  # trace -> per cell, cache_aware+rlt's P99 coefficient of variation over seeds
    for (tr, w, load), n_seeds, seeded, by in cell_means(out):
        p99 = [r["ttft_p99_ms"] for r in seeded if label(r) == ("cache_aware", "rlt")]
        if len(p99) > 1 and sum(p99) > 0:
            m = sum(p99) / len(p99)
            noise.setdefault(tr, []).append(math.sqrt(sum((x - m) ** 2 for x in p99) / len(p99)) / m)
        if not by:
            continue
        seeds = f", mean over {n_seeds} seeds" if n_seeds > 1 else ""
        rate = next(iter(by.values()))["rate"]
        print(f"#### {tr}, {w} workers, load {load} % ({rate:.3f} requests/s{seeds})\n")
        print("| router | policy | P50 TTFT ms | P99 TTFT ms | hit % | req/s | utilisation min-max % |")
        print("|---|---|---:|---:|---:|---:|---|")
        for (router, policy), r in by.items():
            lo, hi = util(r)
            print(f"| {router} | {policy} | {fmt(r['ttft_p50_ms'])} | {fmt(r['ttft_p99_ms'])} "
                  f"| {r['block_hit_rate']*100:.2f} | {r['throughput_rps']:.3f} | {lo*100:.0f}-{hi*100:.0f} |")
        print()
        for lb in sorted({router for router, _ in by if router.startswith("lbgr")}):
            r = ratios(by, lb)
            if r:
                summary.append((tr, w, load, lb, r, paired_p99(seeded, lb)))
        cells = [by.get(k) for k in (("cache_aware", "lru"), ("cache_aware", "rlt"))]
        cells += [by.get((lb, "rlt")) for lb in sorted({r for r, _ in by if r.startswith("lbgr")},
                                                       key=lambda x: (x != "lbgr:variant=paper", x))]
        if all(cells):
            compact.append((tr, w, load, cells))
    if compact:
        names = [label(c)[0] for c in compact[0][3][2:]]
        print("TTFT P50 / P99 in seconds, LBGR with rlt; worst = the largest of its four ratios "
              "to cache_aware+lru and +rlt (P50, P99; <= 1.05 meets the target):\n")
        print("| trace | W | load % | cache_aware+lru | cache_aware+rlt | " +
              " | ".join(f"{n}+rlt | worst" for n in names) + " |")
        print("|---|---:|---:|---:|---:|" + "---:|---:|" * len(names))
        for tr, w, load, cells in compact:
            line = f"| {tr} | {w} | {load} |"
            for c in cells[:2]:
                line += f" {c['ttft_p50_ms']/1e3:.2f} / {c['ttft_p99_ms']/1e3:.1f} |"
            for c in cells[2:]:
                worst = max(c[f"ttft_{q}_ms"] / b[f"ttft_{q}_ms"] for b in cells[:2] for q in ("p50", "p99"))
                line += f" {c['ttft_p50_ms']/1e3:.2f} / {c['ttft_p99_ms']/1e3:.1f} | {worst:.2f} |"
            print(line)
        print()
    if summary:
        print("LBGR+RLT / cache_aware, TTFT (<= 1.05 meets the target):\n")
        paired = any(s[5] for s in summary)
        print("| trace | workers | load % | lbgr | P50 vs +lru | P99 vs +lru | P50 vs +rlt | P99 vs +rlt | met |"
              + (" P99 vs +lru by seed, mean ± SE |" if paired else ""))
        print("|---|---:|---:|---|---:|---:|---:|---:|---|" + ("---:|" if paired else ""))
        for tr, w, load, lb, r, pr in summary:
            met = "yes" if max(r) <= 1.05 else "no"
            extra = (f" {pr[0]:.2f} ± {pr[1]:.2f} |" if pr else " |") if paired else ""
            print(f"| {tr} | {w} | {load} | {lb} | " + " | ".join(f"{x:.2f}" for x in r) + f" | {met} |" + extra)
        print()
        # Per variant: cells met, per trace, and geometric means over the cells of the worst
        # ratio and of P50 and P99 against cache_aware+lru (one met cell can flip on noise).
        geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
        for lb in sorted({s[3] for s in summary}):
            cells = [s for s in summary if s[3] == lb]
            met = sum(max(s[4]) <= 1.05 for s in cells)
            per = ", ".join(
                f"{t} {sum(max(s[4]) <= 1.05 for s in cells if s[0] == t)}/"
                f"{sum(s[0] == t for s in cells)}" for t in sorted({s[0] for s in cells}))
            print(f"- {lb}: target met in {met} of {len(cells)} cells ({per}); geometric mean "
                  f"of worst {geo([max(s[4]) for s in cells]):.3f}, P50 / +lru "
                  f"{geo([s[4][0] for s in cells]):.3f}, P99 / +lru {geo([s[4][1] for s in cells]):.3f}")
            for t in sorted({s[0] for s in cells}):
                ts = [s for s in cells if s[0] == t]
                print(f"  - {t}: P50 / +lru {geo([s[4][0] for s in ts]):.3f}, "
                      f"P99 / +lru {geo([s[4][1] for s in ts]):.3f}")
        print()
    if noise:
        med = lambda xs: sorted(xs)[len(xs) // 2]
        print("Seed noise: cache_aware+rlt's P99 TTFT over the seeds, coefficient of variation "
              "(median over the trace's cells, max): " +
              ", ".join(f"{t} {med(v):.3f} ({max(v):.3f})" for t, v in sorted(noise.items())) + "\n")
    gsp = os.path.join(out, "gsp-rate12.jsonl")
    if os.path.exists(gsp):
        rs = rows(gsp)
        print("GSP at 12 requests/s, 4 workers (route-study):\n")
        print("| workload | router | policy | P50 TTFT ms | P99 TTFT ms | hit % | vs cache_aware+lru P50 |")
        print("|---|---|---|---:|---:|---:|---:|")
        base = {r["trace"]: r for r in rs if label(r) == ("cache_aware", "lru")}
        for r in sorted(rs, key=lambda r: (r["trace"],) + label(r)):
            router, policy = label(r)
            b = base.get(r["trace"])
            speed = f"{b['ttft_p50_ms'] / r['ttft_p50_ms']:.2f}x" if b else ""
            print(f"| {r['trace']} | {router} | {policy} | {fmt(r['ttft_p50_ms'])} | "
                  f"{fmt(r['ttft_p99_ms'])} | {r['block_hit_rate']*100:.2f} | {speed} |")


if __name__ == "__main__":
    main()
