#!/usr/bin/env python3
"""Markdown tables of docs/results/ from the JSON lines kvpolicy writes, so that every figure
there is printed from a run, never typed. studies/rerun_results.sh calls it.

  results_tables.py hitrates FILE [--gap]      policy x capacity block hit rates (compare/simulate)
  results_tables.py gsp ORDER=FILE ...         LRU, RLT, Belady per GSP order (compare)
  results_tables.py predictor-report FILE      the GBM predictor's quality and cost in the cache
  results_tables.py wa-study LABEL=FILE ...    WA study: hit rates at the first file's HBM, and
                                               WA minus the best baseline for every file
  results_tables.py characterization NAME=FILE ...   `trace stats --deep --json` summaries
  results_tables.py microbench FILE            kvpolicy_microbench's JSON
"""
import argparse
import json
import sys


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def label(row):
    return row["policy"] + (":" + row["params"] if row.get("params") else "")


def capacity_header(row):
    frac = row.get("capacity_fraction")
    if frac is not None:
        return f"{frac * 100:g} %"
    return f"{row['capacity_blocks']:,} blocks"


def pct(x):
    return f"{x * 100:.2f}"


def hitrates(args):
    rows = read_lines(args.file)
    caps = sorted({r["capacity_blocks"] for r in rows})
    by = {(label(r), r["capacity_blocks"]): r for r in rows}
    first = {r["capacity_blocks"]: r for r in rows}
    names = list(dict.fromkeys(label(r) for r in rows))
    for ref in ("lru", "belady"):
        if not any((ref, c) in by for c in caps):
            sys.exit(f"{args.file}: no {ref} rows (the gap needs LRU and Belady)")

    def mean_rate(n):
        rates = [by[(n, c)]["block_hit_rate"] for c in caps if (n, c) in by]
        return sum(rates) / len(rates)

    def gap(n, c):
        lru, opt = by[("lru", c)]["block_hit_rate"], by[("belady", c)]["block_hit_rate"]
        if opt - lru < 0.001:
            return "–"
        g = (by[(n, c)]["block_hit_rate"] - lru) / (opt - lru) * 100
        return f"{g:.1f}".replace("-", "−") if round(g, 1) != 0 else "0.0"

    online = sorted((n for n in names if not by_any(by, n, caps).get("offline")),
                    key=lambda n: -mean_rate(n))
    offline = sorted((n for n in names if by_any(by, n, caps).get("offline") and n != "belady"),
                     key=lambda n: -mean_rate(n))
    head = "| policy | " + " | ".join(
        f"{capacity_header(first[c])} ({c:,})" for c in caps) + " |"
    if args.gap:
        head += " gap closed, % |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")

    def line(n, shown):
        cells = [pct(by[(n, c)]["block_hit_rate"]) if (n, c) in by else "" for c in caps]
        if args.gap:
            cells.append(" / ".join(gap(n, c) for c in caps)
                         if n not in ("lru", "belady") else "(reference)")
        print(f"| {shown} | " + " | ".join(cells) + " |")

    for n in online:
        line(n, "**lru**" if n == "lru" else n)
    print("| *offline references (read the trace's future)* |" + " |" * (
        len(caps) + (1 if args.gap else 0)))
    for n in offline:
        line(n, n)
    line("belady", "**belady**")
    print("| infinite cache | " + " | ".join(pct(first[c]["infinite_hit_rate"]) for c in caps)
          + (" |" if not args.gap else " | |"))


def by_any(by, n, caps):
    return next(by[(n, c)] for c in caps if (n, c) in by)


def gsp(args):
    tables = []
    for spec in args.files:
        order, path = spec.split("=", 1)
        tables.append((order, read_lines(path)))
    caps = sorted({r["capacity_blocks"] for r in tables[0][1]})
    first = {r["capacity_blocks"]: r for r in tables[0][1]}
    print("| order | policy | " + " | ".join(capacity_header(first[c]) for c in caps) + " |")
    print("|---" * (len(caps) + 2) + "|")
    for order, rows in tables:
        by = {(r["policy"], r["capacity_blocks"]): r for r in rows}
        for p in dict.fromkeys(r["policy"] for r in rows):
            print(f"| {order} | {p} | " + " | ".join(
                pct(by[(p, c)]["block_hit_rate"]) for c in caps) + " |")


def predictor_report(args):
    rows = read_lines(args.file)
    print("| cap | policy | params | hit % | MALE | rank | far % | fits | s/fit "
          "| µs/access (replay) | predictor share of replay |")
    print("|---" * 11 + "|")
    for r in rows:
        s = r.get("policy_stats", {})
        learned = "audit_ranking_accuracy" in s

        # No model answered (async before its first fit): no quality to report.
        answered = s.get("audit_log_error_count", 0) > 0

        def stat(key, fmt):
            v = s.get(key)
            return "–" if v is None or not learned or not answered else fmt(v)

        fits = s.get("retrains", 0)
        per_fit = f"{s['train_seconds'] / fits:.3f}" if learned and fits else "–"
        # Sync training runs inside the replay loop, so it counts, as predictor-report counts it.
        busy = s.get("predict_seconds", 0) + (s.get("train_seconds", 0)
                                              if "mode=async" not in r.get("params", "") else 0)
        share = (f"{busy / r['replay_seconds'] * 100:.0f} %"
                 if learned and r["replay_seconds"] > 0 else "–")
        fit_cells = f"{s.get('retrains', 0):.0f} | {per_fit}" if learned else "– | –"
        print(f"| {capacity_header(r)} | {r['policy']} | {r.get('params', '')} | "
              f"{pct(r['block_hit_rate'])} | {stat('audit_mean_abs_log_error', lambda v: f'{v:.3f}')} | "
              f"{stat('audit_ranking_accuracy', lambda v: f'{v:.3f}')} | "
              f"{stat('audit_far_future_share', lambda v: f'{v * 100:.1f}')} | {fit_cells} | "
              f"{r['ns_per_access'] / 1000:.2f} | {share} |")


def wa_study(args):
    studies = []
    for spec in args.files:
        name, path = spec.split("=", 1)
        studies.append((name, read_lines(path)))

    def ratio(r):
        hbm = r["capacity_blocks"]
        return round(r["dram_capacity_blocks"] / hbm) if hbm else 0

    name, rows = studies[0]
    policies = list(dict.fromkeys(label(r) for r in rows))
    ratios = sorted({ratio(r) for r in rows})
    by = {(label(r), ratio(r)): r for r in rows}
    print(f"Block hit rate (%), HBM {name} = {rows[0]['capacity_blocks']:,} blocks:\n")
    print("| DRAM/HBM | " + " | ".join(f"**{p}**" if p == "wa" else p for p in policies) + " |")
    print("|---" * (len(policies) + 1) + "|")
    for d in ratios:
        cells = [pct(by[(p, d)]["block_hit_rate"]) for p in policies]
        cells = [f"**{c}**" if p == "wa" else c for c, p in zip(cells, policies)]
        print(f"| {d} | " + " | ".join(cells) + " |")
    print("\nWA minus the best baseline (points of block hit rate; WA's mean-TTFT change "
          "against that baseline in brackets):\n")
    print("| HBM | " + " | ".join(f"DRAM/HBM {d}" for d in ratios) + " |")
    print("|---" * (len(ratios) + 1) + "|")
    for name, rows in studies:
        by = {(label(r), ratio(r)): r for r in rows}
        cells = []
        for d in ratios:
            wa = by[("wa", d)]
            base = max((r for (p, dd), r in by.items()
                        if dd == d and not p.startswith("wa")),
                       key=lambda r: r["block_hit_rate"])
            diff = (wa["block_hit_rate"] - base["block_hit_rate"]) * 100
            ttft = (wa["ttft_mean_ms"] / base["ttft_mean_ms"] - 1) * 100
            cells.append(f"{diff:+.2f} ({ttft:+.1f} %, vs {label(base)})".replace("-", "−", 2))
        print(f"| {name} ({rows[0]['capacity_blocks']:,} blocks) | " + " | ".join(cells) + " |")


def characterization(args):
    stats = []
    for spec in args.files:
        name, path = spec.split("=", 1)
        with open(path) as f:
            stats.append((name, json.load(f)["deep"]))

    def p50_90(d):
        return f"{d['p50']:,.0f} s / {d['p90']:,.0f} s"

    rows = [
        ("ideal (infinite-cache) block hit rate",
         lambda d: f"{d['ideal_hit_rate'] * 100:.1f} % (tokens {d['ideal_token_hit_rate'] * 100:.1f} %)"),
        ("reuses from the top 10 % of blocks", lambda d: f"{d['top10_reuse_share'] * 100:.1f} %"),
        ("blocks ever reused", lambda d: f"{d['reused_block_share'] * 100:.1f} %"),
        ("hits from multi-turn requests", lambda d: f"{d['multi_turn_hit_share'] * 100:.1f} %"),
        ("reuse time p50 / p90", lambda d: p50_90(d["all"]["reuse_time_s"])),
        ("exponential fit, KS over all reuses", lambda d: f"{d['all']['fit']['ks']:.3f}"),
        ("lifespan of reused blocks p50 / p90", lambda d: p50_90(d["lifespan_s"])),
        ("ideal capacity, peak",
         lambda d: f"{d['peak_live_blocks']:,} blocks = {d['peak_live_gb']:.1f} GB"),
    ]
    print("| | " + " | ".join(n for n, _ in stats) + " |")
    print("|---" * (len(stats) + 1) + "|")
    for title, fmt in rows:
        print(f"| {title} | " + " | ".join(fmt(d) for _, d in stats) + " |")
    for name, d in stats:
        print(f"\n| {name} | requests | accesses | reused % | p50 s | p90 s | mean s | KS |")
        print("|---" * 8 + "|")
        for c in d["categories"]:
            t, fit = c["reuse_time_s"], c["fit"]
            print(f"| {c['name']} | {c['requests']} | {c['block_accesses']} | "
                  f"{c['reuse_share'] * 100:.1f} | {t['p50']:.0f} | {t['p90']:.0f} | "
                  f"{fit['mean_s']:.0f} | {fit['ks']:.3f} |")


MICRO = (("BM_TreeFindHit", "PrefixTree find, hit"), ("BM_TreeFindMiss", "PrefixTree find, miss"),
         ("BM_TreeInsertRemove", "PrefixTree remove + insert"),
         ("BM_HeapPopPush", "IndexedHeap pop + push"), ("BM_HeapUpdate", "IndexedHeap re-key"),
         ("BM_ListTouch", "IntrusiveList erase + push_back (LRU hit)"),
         ("BM_ListPopPush", "IntrusiveList pop_front + push_back"))


def microbench(args):
    with open(args.file) as f:
        runs = json.load(f)["benchmarks"]
    cpu = {}
    for b in runs:
        if b.get("run_type", "iteration") != "iteration":
            continue
        name, _, arg = b["name"].partition("/")
        cpu[(name, arg)] = (b["cpu_time"], b["time_unit"], b.get("items_per_second"))
    sizes = (("4 Ki", str(1 << 12)), ("64 Ki", str(1 << 16)), ("1 Mi", str(1 << 20)))
    print("| benchmark | " + " | ".join(s for s, _ in sizes) + " |")
    print("|---" * (len(sizes) + 1) + "|")
    for key, title in MICRO:
        cells = []
        for _, arg in sizes:
            t = cpu.get((key, arg))
            cells.append("–" if t is None else f"{t[0]:.3g} {t[1]}")
        print(f"| {title} | " + " | ".join(cells) + " |")
    for arg in ("10", "50"):
        t = cpu.get(("BM_CacheAccessLruZipf", arg))
        if t and t[2]:
            print(f"\n`PrefixCache::access` with LRU on Zipf at {arg} % capacity: "
                  f"{t[2] / 1e6:.1f} M block accesses/s.", end="")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("hitrates")
    p.add_argument("file")
    p.add_argument("--gap", action="store_true", help="add the share of the LRU-Belady gap")
    p.set_defaults(run=hitrates)
    for name, fn in (("gsp", gsp), ("wa-study", wa_study),
                     ("characterization", characterization)):
        p = sub.add_parser(name)
        p.add_argument("files", nargs="+", help="NAME=FILE")
        p.set_defaults(run=fn)
    p = sub.add_parser("microbench", help="kvpolicy_microbench --benchmark_format=json output")
    p.add_argument("file")
    p.set_defaults(run=microbench)
    p = sub.add_parser("predictor-report")
    p.add_argument("file")
    p.set_defaults(run=predictor_report)
    args = ap.parse_args()
    try:
        args.run(args)
    except (OSError, KeyError, ValueError, StopIteration) as e:
        sys.exit(f"results_tables.py {args.cmd}: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
