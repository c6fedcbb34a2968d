#!/usr/bin/python3
"""Hit rate and TTFT against capacity in GB of KV, from `kvpolicy mrc --json FILE`: block and
token hit rate, mean and P99 replay TTFT, one panel each and one colour per policy; offline
references dashed; each target answer marked, with the target as a line. `kvpolicy mrc --plot
F.png` calls it.

  kvpolicy mrc --trace T --policy lru,s3fifo --json mrc.jsonl
  python3 -m kvpolicy.plot_mrc mrc.jsonl mrc.png     # or: python3 plot_mrc.py mrc.jsonl mrc.png

Part of the Python package kvpolicy (and installed as share/kvpolicy/plot_mrc.py beside the
command line, which runs it as a script). Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import sys

try:
    from . import figures
except ImportError:  # run as a script: figures.py is beside it
    import figures


def read(src):
    curves, targets = {}, []
    trace = cost = None
    with open(src) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            label = r["policy"] + (":" + r["params"] if r["params"] else "")
            if r["kind"] == "target":
                if r["capacity_gb"] is not None:
                    targets.append((label, r["capacity_gb"], r["target_hit_rate"] * 100))
                continue
            trace, cost = r["trace"], r["cost_model"]
            curves.setdefault(label, []).append(r)
    if not curves:
        sys.exit(f"plot_mrc.py: no points in {src}")
    return curves, targets, trace, cost


def figure(src):
    """The figure of `kvpolicy mrc --json` rows in `src`."""
    curves, targets, trace, cost = read(src)
    fig, axes = figures.plt.subplots(2, 2, figsize=(11, 7.5))
    panels = [(axes[0][0], "block_hit_rate", 100, "block hit rate (%)"),
              (axes[0][1], "token_hit_rate", 100, "token hit rate (%)"),
              (axes[1][0], "ttft_mean_ms", 1, "mean replay TTFT (ms)"),
              (axes[1][1], "ttft_p99_ms", 1, "P99 replay TTFT (ms)")]
    all_gb = [r["capacity_gb"] for rows in curves.values() for r in rows]
    for i, (label, rows) in enumerate(curves.items()):
        rows.sort(key=lambda r: r["capacity_gb"])
        gb = [r["capacity_gb"] for r in rows]
        for ax, key, scale, _ in panels:
            ax.plot(gb, [r[key] * scale for r in rows], color=f"C{i}",
                    **figures.offline_style(label, rows[0]))
    hit_ax = axes[0][0]
    for hit in sorted({t[2] for t in targets}):
        hit_ax.axhline(hit, color="grey", lw=0.8, ls=":")
        hit_ax.annotate(f"target {hit:g} %", (1, hit), xycoords=("axes fraction", "data"),
                        xytext=(-2, -10), textcoords="offset points", fontsize=7, color="grey",
                        ha="right")
    labelled = set()  # two policies reaching a target at one size share its label
    for label, gb, hit in targets:
        hit_ax.plot([gb], [hit], marker="o", color="black", ms=4)
        if (figures.gb_text(gb), hit) in labelled:
            continue
        labelled.add((figures.gb_text(gb), hit))
        hit_ax.annotate(f"{figures.gb_text(gb)} GB", (gb, hit), xytext=(-4, 4),
                        textcoords="offset points", fontsize=7, ha="right")
    for ax, _, _, ylabel in panels:
        figures.gb_axis(ax, "KV cache capacity (GB, one cache in replay mode)", all_gb)
        if "TTFT" in ylabel:
            figures.latency_axis(ax, ylabel)
        else:
            ax.set_ylabel(ylabel)
            ax.set_ylim(bottom=0)
        figures.style(ax)
    figures.legend_beside(axes[0][1])
    fig.suptitle("hit rate and replay TTFT (no queueing) vs KV capacity: "
                 f"{figures.trace_name(trace)}, {cost}", fontsize=10)
    return fig


def main(src, out):
    figures.save(figure(src), out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
