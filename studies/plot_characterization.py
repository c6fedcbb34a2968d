#!/usr/bin/python3
"""Figures of the workload analysis of "KVCache Cache in the Wild" (section 3) and of its WA
policy study (Figures 25-27), from kvpolicy's JSON output.

  kvpolicy trace stats --deep --trace T --json c.json
  kvpolicy study wa --trace T --json study.jsonl
  /usr/bin/python3 studies/plot_characterization.py --json c.json [--study study.jsonl] \
      --out-dir docs/figures --prefix mooncake

Writes PREFIX-overview.png (ideal hit rate, single/multi-turn hits, request types),
PREFIX-skew.png (Fig. 7), PREFIX-reuse-time.png (Fig. 12), PREFIX-reuse-fits.png (Fig. 15),
PREFIX-lifespan.png (Fig. 19), PREFIX-capacity.png (Fig. 22) and, with --study,
PREFIX-wa-study.png (Figs. 25-27). Needs matplotlib (Debian: python3-matplotlib).
"""

import argparse
import json
import math
import os
import sys

import plotting
from plotting import latency_axis, legend_beside, offline_style, plt


def save(fig, out_dir, prefix, name):
    plotting.save(fig, os.path.join(out_dir, f"{prefix}-{name}.png"))


def overview(c, out_dir, prefix):
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    ax = axes[0]
    ax.bar(["blocks", "tokens"], [c["ideal_hit_rate"] * 100, c["ideal_token_hit_rate"] * 100],
           color=["tab:blue", "tab:cyan"])
    ax.set_xlabel("hits counted in")
    ax.set_ylabel("hit rate of an infinite cache (%)")
    ax.set_title("ideal hit rate (KVCache in the Wild, Fig. 4)")
    for i, v in enumerate([c["ideal_hit_rate"], c["ideal_token_hit_rate"]]):
        ax.text(i, v * 100, f"{v * 100:.1f}%", ha="center", va="bottom")
    ax.set_ylim(0, max(c["ideal_hit_rate"], c["ideal_token_hit_rate"]) * 112 + 1)  # room for them

    ax = axes[1]
    hits = [c["single_turn_hits"], c["multi_turn_hits"]]
    reqs = [c["single_turn_requests"], c["multi_turn_requests"]]
    total_h, total_r = max(sum(hits), 1), max(sum(reqs), 1)
    x = [0, 1]
    ax.bar([i - 0.2 for i in x], [100 * r / total_r for r in reqs], 0.4, label="requests")
    ax.bar([i + 0.2 for i in x], [100 * h / total_h for h in hits], 0.4, label="block hits")
    ax.set_xticks(x, ["single-turn", "multi-turn"])
    ax.set_xlabel("requests")
    ax.set_ylabel("share (%)")
    ax.set_title("hits by single- vs multi-turn requests")
    ax.legend(fontsize=8)

    ax = axes[2]
    types = c.get("types", [])
    names = [t["name"] for t in types]
    xs = range(len(types))
    ax.bar([i - 0.27 for i in xs], [t["request_share"] * 100 for t in types], 0.27,
           label="requests")
    ax.bar([i for i in xs], [t["multi_turn_share"] * 100 for t in types], 0.27,
           label="multi-turn share")
    ax.bar([i + 0.27 for i in xs], [t["hit_share"] * 100 for t in types], 0.27, label="hits")
    ax.set_xticks(list(xs), names)
    ax.set_xlabel("request type")
    ax.set_ylabel("%")
    ax.set_title("request types (KVCache in the Wild, Fig. 5)")
    legend_beside(ax)
    fig.suptitle(f"what an infinite cache hits, and where: {os.path.basename(c['trace'])}",
                 fontsize=9)
    save(fig, out_dir, prefix, "overview")


def skew(c, out_dir, prefix):
    fig, ax = plt.subplots(figsize=(5, 4))
    xs = [p[0] * 100 for p in c["skew_curve"]]
    ys = [p[1] * 100 for p in c["skew_curve"]]
    ax.plot(xs, ys, label="cumulative reuses")
    ax.axvline(10, color="grey", ls=":")
    ax.annotate(f"top 10%: {c['top10_reuse_share'] * 100:.1f}% of reuses",
                (10, c["top10_reuse_share"] * 100), xytext=(25, 40),
                arrowprops=dict(arrowstyle="->"))
    ax.set_xlabel("blocks, most reused first (%)")
    ax.set_ylabel("reuses (%)")
    ax.set_title("skew of block reuse (KVCache in the Wild, Fig. 7, per block)")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 101)
    save(fig, out_dir, prefix, "skew")


def cdf_xy(points, skip_zero=True):
    pts = [p for p in points if not (skip_zero and p[0] <= 0)]
    return [p[0] for p in pts], [p[1] for p in pts], [p[2] if len(p) > 2 else None for p in pts]


def reuse_time(c, out_dir, prefix):
    fig, ax = plt.subplots(figsize=(6, 4))
    x, y, _ = cdf_xy(c["all"]["reuse_cdf"])
    ax.plot(x, y, label="all", lw=2, color="black")
    single = [k for k in c["categories"] if k["name"].endswith("-1")]
    multi = [k for k in c["categories"] if not k["name"].endswith("-1")]
    for group, style in ((single, "-"), (multi, "--")):
        for k in group:
            x, y, _ = cdf_xy(k["reuse_cdf"])
            if x:
                ax.plot(x, y, style, label=k["name"], lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("reuse time (s)")
    ax.set_ylabel("CDF")
    ax.set_title("reuse time (KVCache in the Wild, Fig. 12-14)")
    legend_beside(ax, fontsize=7, ncol=2)
    plotting.style(ax)
    save(fig, out_dir, prefix, "reuse-time")


def reuse_fits(c, out_dir, prefix):
    cats = [k for k in c["categories"] if k["fit"]["samples"] > 0]
    if not cats:
        return
    n = len(cats)
    cols = min(5, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.8 * rows), squeeze=False)
    for ax, k in zip(axes.flat, cats):
        x, y, f = cdf_xy(k["reuse_cdf"])
        ax.plot(x, y, color="tab:red", label="trace")
        ax.plot(x, f, "--", color="tab:blue", label="exponential fit")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("reuse time (s)", fontsize=7)
        ax.set_ylabel("CDF", fontsize=7)
        ax.set_title(f"{k['name']}: mean {k['fit']['mean_s']:.0f}s KS {k['fit']['ks']:.2f}\n"
                     f"reused {k['reuse_share'] * 100:.0f}% of {k['block_accesses']}",
                     fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    legend_beside(axes.flat[cols - 1], fontsize=7)
    fig.suptitle("reuse-time CDF per category and its exponential fit (KVCache in the Wild, "
                 "Fig. 15)", fontsize=9)
    save(fig, out_dir, prefix, "reuse-fits")


def lifespan(c, out_dir, prefix):
    fig, ax = plt.subplots(figsize=(5, 4))
    x, y, _ = cdf_xy(c["lifespan_cdf"])
    ax.plot(x, y)
    ax.set_xscale("log")
    ax.axhline(0.9, color="grey", ls=":")
    ax.set_xlabel("lifespan: first access to last reuse (s)")
    ax.set_ylabel("CDF over reused blocks")
    ax.set_title("block lifespan (KVCache in the Wild, Fig. 19): p90 "
                 f"{c['lifespan_s']['p90']:.0f} s")
    plotting.style(ax)
    save(fig, out_dir, prefix, "lifespan")


def capacity(c, out_dir, prefix):
    fig, ax = plt.subplots(figsize=(6, 3.8))
    t = [p[0] / 60 for p in c["capacity"]]
    gb = [p[2] for p in c["capacity"]]
    ax.plot(t, gb)
    ax.set_xlabel("time (min)")
    ax.set_ylabel(f"GB of KV ({c['kv_bytes_per_token']:.0f} B/token)")
    ax2 = ax.twinx()
    ax2.plot(t, [p[1] for p in c["capacity"]], alpha=0)
    ax2.set_ylabel("blocks")
    ax.set_title("capacity an ideal policy needs (KVCache in the Wild, Fig. 22): peak "
                 f"{c['peak_live_gb']:.1f} GB")
    plotting.style(ax)
    save(fig, out_dir, prefix, "capacity")


def study(path, out_dir, prefix):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    if not rows:
        return
    series, series_rows = {}, {}
    for r in rows:
        label = r["policy"] + (":" + r["params"] if r["params"] else "")
        series_rows.setdefault(label, r)
        ratio = r["dram_capacity_blocks"] / r["capacity_blocks"]
        series.setdefault(label, []).append((ratio, r["block_hit_rate"] * 100,
                                             r["ttft_mean_ms"], r["ttft_p99_ms"]))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for label, pts in series.items():
        pts.sort()
        lw = 2 if label == "wa" else 1  # the policy the study is about
        for ax, i in zip(axes, (1, 2, 3)):
            ax.plot([p[0] for p in pts], [p[i] for p in pts], marker="o", lw=lw, ms=4,
                    **offline_style(label, series_rows[label]))
    for ax, title in zip(axes, ("block hit rate (%)", "mean TTFT (ms)", "P99 TTFT (ms)")):
        ax.set_xlabel("DRAM / HBM")
        ax.set_title(title)
        if "TTFT" in title:
            latency_axis(ax, title)
        else:
            ax.set_ylabel(title)
            ax.set_ylim(bottom=0)
        plotting.style(ax)
    legend_beside(axes[-1], fontsize=7)
    fig.suptitle(f"{os.path.basename(rows[0]['trace'])}: HBM {rows[0]['capacity_blocks']} blocks "
                 "(KVCache in the Wild, Figs. 25-27; replay mode, no queueing)", fontsize=9)
    save(fig, out_dir, prefix, "wa-study")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="output of `kvpolicy trace stats --deep --json`")
    ap.add_argument("--study", help="output of `kvpolicy study wa --json` (JSON lines)")
    ap.add_argument("--out-dir", default="docs/figures")
    ap.add_argument("--prefix", default="trace")
    a = ap.parse_args()
    if not a.json and not a.study:
        ap.error("give --json and/or --study")
    os.makedirs(a.out_dir, exist_ok=True)
    if a.json:
        with open(a.json) as f:
            c = json.load(f)
        c = c.get("deep", c)  # `trace stats --deep` nests the characterization
        overview(c, a.out_dir, a.prefix)
        skew(c, a.out_dir, a.prefix)
        reuse_time(c, a.out_dir, a.prefix)
        reuse_fits(c, a.out_dir, a.prefix)
        lifespan(c, a.out_dir, a.prefix)
        capacity(c, a.out_dir, a.prefix)
    if a.study:
        study(a.study, a.out_dir, a.prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
