#!/usr/bin/env python3
"""Tables of studies/route_grid.sh OUT (issue 38, item 5).

`python3 studies/route_grid_tables.py OUT summary`: the capacities, the best router per cell,
each router's standing over the grid, what rlt and auto change, and LBGR+RLT against
cache_aware (docs/results/routers.md, section (f)).
`python3 studies/route_grid_tables.py OUT full`: every router x policy per trace, workers and
load: P50 / P99 TTFT, hit rate, gap closed on mean TTFT (docs/results/route_grid.md).
"""
import glob
import json
import math
import os
import sys
from collections import defaultdict

TRACES = ["mooncake", "arena", "sharegpt", "loogle", "gsp"]
POLICIES = ["lru", "rlt", "auto"]


def mean_rows(rows):
    """One row from a router's replicates (route_grid.sh's SEEDS): each number averaged, each gap
    over the seeds where it is defined; the rest (names, flags, the nested serve result) from the
    first."""
    if len(rows) == 1:
        return rows[0]
    out = dict(rows[0])
    for k, v in rows[0].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            xs = [r[k] for r in rows if isinstance(r.get(k), (int, float)) and not math.isnan(r[k])]
            out[k] = sum(xs) / len(xs) if xs else float("nan")
    out["seeds"] = len(rows)
    return out


def load(out):
    """{(trace, workers, load, policy): {router: row}} and {(trace, workers): capacity}; a cell
    run with several seeds (grid-...-sN.jsonl) has each router's row averaged over them."""
    runs = defaultdict(lambda: defaultdict(list))
    for path in glob.glob(os.path.join(out, "grid-*.jsonl")):
        tr, w, l, p, *_ = os.path.basename(path)[5:-6].split("-")  # *_: the seed, if any
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    runs[(tr, int(w[1:]), int(l[1:]), p)][r["router"]].append(r)
    cells = {k: {r: mean_rows(rows) for r, rows in by.items()} for k, by in runs.items()}
    caps = {}
    for path in glob.glob(os.path.join(out, "cap-*.jsonl")):
        tr, w = os.path.basename(path)[4:-6].split("-")
        with open(path) as f:
            caps[(tr, int(w[1:]))] = max(json.loads(x)["throughput_rps"] for x in f if x.strip())
    return cells, caps


def keys(cells):
    order = {t: i for i, t in enumerate(TRACES)}
    return sorted({k[:3] for k in cells}, key=lambda k: (order.get(k[0], 99), k[0], k[1], k[2]))


def gap(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def secs(ms):
    return f"{ms / 1e3:.2f}" if ms < 100e3 else f"{ms / 1e3:.0f}"


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def median(xs):
    """The upper median of the defined values (a gap is undefined where the bound ties round_robin)."""
    xs = sorted(x for x in xs if x is not None and not math.isnan(x))
    return xs[len(xs) // 2] if xs else float("nan")


def full(cells):
    routers = sorted({r for c in cells.values() for r in c}, key=lambda r: (r != "round_robin", r != "offline_bound", r))
    by_tw = defaultdict(list)
    for tr, w, l in keys(cells):
        by_tw[(tr, w)].append(l)
    for (tr, w), loads in by_tw.items():
        rate = {l: next(iter(cells[(tr, w, l, "lru")].values()))["rate"] for l in loads if (tr, w, l, "lru") in cells}
        print(f"#### {tr}, {w} workers\n")
        print("Per load (% of capacity, requests/s): TTFT P50 / P99 in s, block hit %, gap closed on mean TTFT.\n")
        head = "| router | policy |" + "".join(f" {l} % ({rate.get(l, 0):.3g}/s) | hit % | gap |" for l in loads)
        print(head)
        print("|---|---|" + "---:|---:|---:|" * len(loads))
        for r in routers:
            for p in POLICIES:
                if not any((tr, w, l, p) in cells for l in loads):
                    continue
                line = f"| {r} | {p} |"
                for l in loads:
                    x = cells.get((tr, w, l, p), {}).get(r)
                    if x is None:
                        line += " | | |"
                        continue
                    line += (f" {secs(x['ttft_p50_ms'])} / {secs(x['ttft_p99_ms'])} |"
                             f" {100 * x['hit_rate']:.1f} | {gap(x['gap_closed_ttft_mean'])} |")
                print(line)
        print()


def summary(cells, caps):
    print("Capacity (completed requests/s under overload, the better of least_loaded+lru and cache_aware+lru):\n")
    print("| trace | 4 workers | 16 workers |\n|---|---:|---:|")
    for tr in TRACES:
        if (tr, 4) in caps or (tr, 16) in caps:
            print(f"| {tr} | {caps.get((tr, 4), 0):.3f} | {caps.get((tr, 16), 0):.3f} |")
    print()

    # Best online router x policy per cell, by P50 and by P99, beside cache_aware+lru and lbgr+rlt.
    print("Per cell, the best online router x policy by P50 TTFT and by P99 TTFT (s), cache_aware+lru, "
          "lbgr+rlt and the offline router (with lru):\n")
    print("| trace | W | load % | best by P50 | P50 | best by P99 | P99 | cache_aware+lru P50 / P99 | "
          "lbgr+rlt P50 / P99 | offline_bound P50 / P99 |")
    print("|---|---:|---:|---|---:|---|---:|---:|---:|---:|")
    for tr, w, l in keys(cells):
        cand = [(x, r, p) for p in POLICIES for r, x in cells.get((tr, w, l, p), {}).items() if not x["offline"]]
        if not cand:
            continue
        b50 = min(cand, key=lambda c: c[0]["ttft_p50_ms"])
        b99 = min(cand, key=lambda c: c[0]["ttft_p99_ms"])
        ca = cells[(tr, w, l, "lru")]["cache_aware"]
        lb = cells.get((tr, w, l, "rlt"), {}).get("lbgr")
        ob = cells[(tr, w, l, "lru")]["offline_bound"]
        pair = lambda x: f"{secs(x['ttft_p50_ms'])} / {secs(x['ttft_p99_ms'])}" if x else "-"
        print(f"| {tr} | {w} | {l} | {b50[1]}+{b50[2]} | {secs(b50[0]['ttft_p50_ms'])} | {b99[1]}+{b99[2]} | "
              f"{secs(b99[0]['ttft_p99_ms'])} | {pair(ca)} | {pair(lb)} | {pair(ob)} |")
    print()

    # Each router's standing with lru: rank by P50 among online routers per cell, wins, gaps.
    ranks, wins, gaps, gap_hit, worst = (defaultdict(list) for _ in range(5))
    for tr, w, l in keys(cells):
        c = {r: x for r, x in cells.get((tr, w, l, "lru"), {}).items() if not x["offline"]}
        order = sorted(c, key=lambda r: c[r]["ttft_p50_ms"])
        best = c[order[0]]["ttft_p50_ms"]
        for i, r in enumerate(order):
            ranks[r].append(i + 1)
            wins[r].append(i == 0)
            gaps[r].append(c[r]["gap_closed_ttft_mean"])
            gap_hit[r].append(c[r]["gap_closed_hit"])
            worst[r].append(c[r]["ttft_p50_ms"] / best if best > 0 else 1.0)
    n = len(keys(cells))
    print(f"Each online router with lru over the {n} cells (5 traces x 2 cluster sizes x 3 loads): its mean rank "
          "by P50 TTFT among the online routers (1 = best), the cells it is best in, the median gap closed on "
          "mean TTFT and on hit rate (1 = the offline router), the geometric mean and the worst of its P50 / the "
          "cell's best P50:\n")
    print("| router | mean rank | best in | median gap, mean TTFT | median gap, hit | P50 / best, geo-mean | worst |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in sorted(ranks, key=lambda r: sum(ranks[r]) / len(ranks[r])):
        print(f"| {r} | {sum(ranks[r]) / len(ranks[r]):.1f} | {sum(wins[r])} | {gap(median(gaps[r]))} | "
              f"{gap(median(gap_hit[r]))} | {geomean(worst[r]):.2f} | {max(worst[r]):.1f} |")
    print()

    # What the eviction policy changes, per router: geo-mean over cells of P50 and P99 ratios to lru.
    print("What the workers' eviction policy changes: per router, the geometric mean over the cells of its "
          "P50 and P99 TTFT with rlt (auto) / with lru (< 1: better), and the mean hit-rate change in points:\n")
    print("| router | rlt P50 | rlt P99 | rlt hit pt | auto P50 | auto P99 | auto hit pt |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in sorted(ranks):
        vals = []
        for p in ("rlt", "auto"):
            p50, p99, dh = [], [], []
            for tr, w, l in keys(cells):
                a = cells.get((tr, w, l, "lru"), {}).get(r)
                b = cells.get((tr, w, l, p), {}).get(r)
                if a and b and a["ttft_p50_ms"] > 0 and a["ttft_p99_ms"] > 0:
                    p50.append(b["ttft_p50_ms"] / a["ttft_p50_ms"])
                    p99.append(b["ttft_p99_ms"] / a["ttft_p99_ms"])
                    dh.append(100 * (b["hit_rate"] - a["hit_rate"]))
            vals += [f"{geomean(p50):.3f}", f"{geomean(p99):.3f}", f"{sum(dh) / max(1, len(dh)):+.2f}"]
        print(f"| {r} | " + " | ".join(vals) + " |")
    print()

    # Where the policy can matter at all: the caches' pressure per trace and cluster size.
    print("Where the caches are under pressure: per trace and cluster size, over the online routers and the "
          "three loads, evictions per request with lru (median over routers), the mean hit-rate change of rlt "
          "and auto against lru in points, and the share of router x load pairs whose P50 TTFT moves by more "
          "than 2 % with rlt (auto):\n")
    print("| trace | W | evictions / request | rlt hit pt | auto hit pt | P50 moves, rlt | P50 moves, auto |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    tw = sorted({k[:2] for k in keys(cells)}, key=lambda k: (TRACES.index(k[0]) if k[0] in TRACES else 99, k[1]))
    for tr, w in tw:
        ev, dh, moves = [], defaultdict(list), defaultdict(list)
        for (t2, w2, l) in keys(cells):
            if (t2, w2) != (tr, w):
                continue
            for r, a in cells.get((tr, w, l, "lru"), {}).items():
                if a["offline"]:
                    continue
                ev.append(a["serve"]["evictions"] / max(1, a["serve"]["requests"]))
                for p in ("rlt", "auto"):
                    b = cells.get((tr, w, l, p), {}).get(r)
                    if b:
                        dh[p].append(100 * (b["hit_rate"] - a["hit_rate"]))
                        moves[p].append(abs(b["ttft_p50_ms"] / a["ttft_p50_ms"] - 1) > 0.02 if a["ttft_p50_ms"] > 0 else False)
        ev.sort()
        share = lambda xs: f"{100 * sum(xs) / len(xs):.0f} %" if xs else "-"
        print(f"| {tr} | {w} | {ev[len(ev) // 2]:.1f} | {sum(dh['rlt']) / max(1, len(dh['rlt'])):+.2f} | "
              f"{sum(dh['auto']) / max(1, len(dh['auto'])):+.2f} | {share(moves['rlt'])} | {share(moves['auto'])} |")
    print()

    # LBGR+RLT against cache_aware (the RLT paper's pairing) and round_robin with lru.
    print("LBGR+RLT against cache_aware+lru and round_robin+lru: P50 and P99 TTFT ratios (baseline / lbgr+rlt; "
          "> 1: lbgr+rlt faster), and whether lbgr+rlt is within 5 % of cache_aware+lru on both (issue 38's "
          "target for item 1):\n")
    print("| trace | W | load % | vs cache_aware P50 | P99 | within 5 % | vs round_robin P50 | P99 |")
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    met = total = 0
    for tr, w, l in keys(cells):
        lb = cells.get((tr, w, l, "rlt"), {}).get("lbgr")
        ca = cells.get((tr, w, l, "lru"), {}).get("cache_aware")
        rr = cells.get((tr, w, l, "lru"), {}).get("round_robin")
        if not (lb and ca and rr):
            continue
        r50 = ca["ttft_p50_ms"] / lb["ttft_p50_ms"]
        r99 = ca["ttft_p99_ms"] / lb["ttft_p99_ms"]
        ok = r50 >= 1 / 1.05 and r99 >= 1 / 1.05
        met += ok
        total += 1
        print(f"| {tr} | {w} | {l} | {r50:.2f}x | {r99:.2f}x | {'yes' if ok else 'no'} | "
              f"{rr['ttft_p50_ms'] / lb['ttft_p50_ms']:.2f}x | {rr['ttft_p99_ms'] / lb['ttft_p99_ms']:.2f}x |")
    print(f"\nlbgr+rlt within 5 % of cache_aware+lru (P50 and P99) in {met} of {total} cells.\n")


def main():
    out, what = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "summary"
    cells, caps = load(out)
    if what == "full":
        full(cells)
    else:
        summary(cells, caps)


if __name__ == "__main__":
    main()
