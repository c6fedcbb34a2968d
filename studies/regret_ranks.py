#!/usr/bin/env python3
"""Ranks and rank correlations of route-bound's two regrets (docs/results/routers.md, (e2)).

    python3 studies/regret_ranks.py ROUTE_BOUND.jsonl [--substitute ROUTER:hit,ttft,model,serve]

Reads the JSON of `route-bound ... --regret-mode both` and prints, per router, its hit rate, mean
TTFT, model and serve regret with their ranks (1 = least; ties averaged), then the Spearman rank
correlation of model regret, serve regret, mean TTFT and miss rate over all routers (over the
online ones in brackets). --substitute replaces one router's four numbers (to recompute an
earlier table)."""
import json
import sys


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb)


def main():
    args = sys.argv[1:]
    sub = {}
    if "--substitute" in args:
        i = args.index("--substitute")
        name, values = args[i + 1].split(":")
        sub[name] = [float(v) for v in values.split(",")]
        del args[i:i + 2]
    rows = []
    for line in open(args[0]):
        r = json.loads(line)
        v = [r["hit_rate"] * 100, r["ttft_mean_ms"], r["regret_mean_tokens"],
             r["serve_regret_mean_ms"]]
        v = sub.get(r["router"], v)
        rows.append((r["router"], r["offline"], v, r["regret_p90_tokens"], r["serve_regret_p90_ms"]))
        window = r["regret_window"]
    cols = list(zip(*[v for _, _, v, _, _ in rows]))
    model_rank, serve_rank, ttft_rank = ranks(cols[2]), ranks(cols[3]), ranks(cols[1])
    print("| router | hit % | TTFT mean ms | model regret mean (tokens) | model regret P90 | "
          "model rank | serve regret mean (ms) | serve regret P90 (ms) | serve rank | TTFT rank |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    fmt = lambda x: f"{x:g}"
    for i, (name, offline, v, p90, sp90) in enumerate(rows):
        label = name + (" (offline)" if offline else "")
        print(f"| {label} | {v[0]:.2f} | {v[1]:.1f} | {v[2]:.1f} | {p90:.1f} | {fmt(model_rank[i])} | "
              f"{v[3]:.1f} | {sp90:.1f} | {fmt(serve_rank[i])} | {fmt(ttft_rank[i])} |")
    online = [i for i, row in enumerate(rows) if not row[1]]
    miss = [100 - h for h in cols[0]]
    pairs = [("model regret vs serve regret", cols[2], cols[3]),
             ("serve regret vs mean TTFT", cols[3], cols[1]),
             ("model regret vs mean TTFT", cols[2], cols[1]),
             ("model regret vs miss rate", cols[2], miss),
             ("serve regret vs miss rate", cols[3], miss)]
    print()
    # Serve regret relative to the window's TTFT, regret / (window x mean TTFT), in %.
    relative = [100 * s / (window * t) for s, t in zip(cols[3], cols[1])]
    pairs.append(("serve regret / (window x mean TTFT) vs mean TTFT", relative, cols[1]))
    for name, a, b in pairs:
        on = spearman([a[i] for i in online], [b[i] for i in online])
        print(f"- {name}: {spearman(a, b):.2f} ({on:.2f})")
    print("- serve regret / (window x mean TTFT), %: " +
          ", ".join(f"{row[0]} {x:.2f}" for row, x in zip(rows, relative)))


if __name__ == "__main__":
    main()
