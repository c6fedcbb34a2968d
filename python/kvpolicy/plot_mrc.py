#!/usr/bin/python3
"""Hit rate and TTFT against capacity in GB of KV, from `kvpolicy mrc --json FILE`: block hit
rate (solid) and token hit rate (dashed) in the first panel, TTFT mean (solid) and P99 (dashed)
in the second, one colour per policy. `kvpolicy mrc --plot F.png` calls it.

  kvpolicy mrc --trace T --policy lru,s3fifo --json mrc.jsonl
  python3 -m kvpolicy.plot_mrc mrc.jsonl mrc.png     # or: python3 plot_mrc.py mrc.jsonl mrc.png

Part of the Python package kvpolicy (and installed as share/kvpolicy/plot_mrc.py beside the
command line, which runs it as a script). Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import os
import sys

try:
    import matplotlib
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)  # the system's has it
    sys.exit("plot_mrc.py needs matplotlib: apt-get install python3-matplotlib (Debian), "
             "or pip install matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, out):
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
    fig, (hit_ax, ttft_ax) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, (label, rows) in enumerate(curves.items()):
        rows.sort(key=lambda r: r["capacity_gb"])
        gb = [r["capacity_gb"] for r in rows]
        colour = f"C{i}"
        hit_ax.plot(gb, [r["block_hit_rate"] * 100 for r in rows], color=colour,
                    label=f"{label} (block)")
        hit_ax.plot(gb, [r["token_hit_rate"] * 100 for r in rows], color=colour, ls="--",
                    label=f"{label} (token)")
        ttft_ax.plot(gb, [r["ttft_mean_ms"] for r in rows], color=colour, label=f"{label} mean")
        ttft_ax.plot(gb, [r["ttft_p99_ms"] for r in rows], color=colour, ls="--",
                     label=f"{label} P99")
    for label, gb, hit in targets:
        hit_ax.plot([gb], [hit], marker="o", color="black", ms=4)
    all_gb = [r["capacity_gb"] for rows in curves.values() for r in rows]
    for ax in (hit_ax, ttft_ax):
        ax.set_xlabel("KV cache capacity (GB)")
        if max(all_gb) > 20 * min(all_gb):  # a geometric sweep reads best on a log axis
            ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    hit_ax.set_ylabel("hit rate (%)")
    ttft_ax.set_ylabel("replay TTFT (ms, no queueing)")
    # A built trace is named "source:path"; the file name is enough.
    source, _, path = trace.partition(":")
    name = f"{source} ({path.rsplit('/', 1)[-1]})" if path else trace.rsplit("/", 1)[-1]
    fig.suptitle(f"hit rate and TTFT vs capacity: {name}, {cost}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
