#!/usr/bin/python3
"""The embedding-cache figures, from `kvpolicy embed bench --json FILE`: mean SLS latency against
batch size, one panel per cache ratio, one line per policy (the LCR paper's Figures 9 and 10).

  /usr/bin/python3 studies/plot_embed.py sls.jsonl sls.png "title"

Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import sys

from plotting import latency_axis, legend_beside, plt, save, style


def main(src, out, title):
    rows = [json.loads(line) for line in open(src) if line.strip()]
    ratios = sorted({r["cache_ratio"] for r in rows})
    fig, axes = plt.subplots(1, len(ratios), figsize=(4.2 * len(ratios), 3.6), squeeze=False)
    for ax, ratio in zip(axes[0], ratios):
        for policy in dict.fromkeys(r["policy"] for r in rows):
            pts = sorted((r["batch"], r["mean_latency_ms"]) for r in rows
                         if r["policy"] == policy and r["cache_ratio"] == ratio)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=policy)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch (samples per SLS query)")
        latency_axis(ax, "mean SLS latency, ms")
        ax.set_title(f"cache {ratio:.1%} of distinct keys")
        style(ax)
    legend_beside(axes[0][-1])
    fig.suptitle(title, fontsize=10)
    save(fig, out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
