#!/usr/bin/python3
"""Hit rate against capacity from `kvpolicy study lpc --json FILE` (the LPC paper's Figure 8
style): one line per policy, offline references dashed.

  kvpolicy study lpc --trace arena.kvtrace --json lpc.jsonl
  /usr/bin/python3 studies/plot_lpc_study.py lpc.jsonl docs/figures/lpc-arena.png

Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import sys

from plotting import legend_beside, offline_style, plt, save, style, trace_name


def main(src, out):
    curves, rows_of = {}, {}
    trace = None
    with open(src) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            trace = r["trace"]
            label = r["policy"] + (":" + r["params"] if r["params"] else "")
            curves.setdefault(label, []).append((r["capacity_fraction"] * 100,
                                                 r["block_hit_rate"] * 100))
            rows_of.setdefault(label, r)
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    for label, points in curves.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                **offline_style(label, rows_of[label]))
    ax.set_xlabel("cache capacity (% of the trace's unique blocks)")
    ax.set_ylabel("block hit rate (%)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"block hit rate vs capacity (LPC paper, Fig. 8): {trace_name(trace)}",
                 fontsize=10)
    style(ax)
    legend_beside(ax)
    save(fig, out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
