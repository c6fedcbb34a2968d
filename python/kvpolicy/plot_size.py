#!/usr/bin/python3
"""Hit rate and TTFT against KV memory per replica, from `kvpolicy size --json FILE`: one colour
per worker count, block hit rate (solid) and token hit rate (dashed) in the first panel, serve
TTFT P90 (solid) and P99 (dashed) in the second; the target as a horizontal line, the GPU's KV
memory as a vertical line, each answer marked with its GB. `kvpolicy size --plot F.png` calls it.

  kvpolicy size --trace T --model llama-3.1-8b --gpu h100 --target-hit 30% --json size.jsonl
  python3 -m kvpolicy.plot_size size.jsonl size.png    # or: python3 plot_size.py size.jsonl size.png

Part of the Python package kvpolicy (and installed as share/kvpolicy/plot_size.py beside the
command line, which runs it as a script). Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import sys

try:
    from . import figures
except ImportError:  # run as a script: figures.py is beside it
    import figures

plt = figures.plt


def read(src):
    rows = []
    with open(src) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    probes = [r for r in rows if r["kind"] == "probe"]
    if not probes:
        sys.exit(f"plot_size.py: no serve runs in {src}")
    return rows, probes


def figure(rows, probes):
    """The figure of `kvpolicy size --json` rows (returned, for tests to inspect)."""
    first = probes[0]
    # One curve per (workers, tp): a worker count searched again at a larger tp has its own.
    curves = {}
    for r in probes:
        curves.setdefault((r["workers"], r["tp"]), []).append(r)
    answers = {(r["workers"], r["tp"]): r for r in rows if r["kind"] == "answer" and r["meets"]}
    # Below each panel a legend of 2 entries per curve and its lines, in columns: the figure
    # grows with its rows, so the legend never covers the curves or the axis label.
    ncol = 2 if len(curves) <= 4 else 3
    rows_of_legend = -(-(2 * len(curves) + 2) // ncol)
    fig, (hit_ax, ttft_ax) = plt.subplots(1, 2, figsize=(13, 4.2 + 0.2 * rows_of_legend))
    for i, ((w, tp), pts) in enumerate(sorted(curves.items())):
        pts.sort(key=lambda r: r["capacity_gb"])
        name = f"{w} workers" if tp == first["tp"] else f"{w} workers, tp={tp}"
        gb = [r["capacity_gb"] for r in pts]
        colour = plt.get_cmap("tab10" if len(curves) <= 10 else "tab20")(i % 20)
        hit_ax.plot(gb, [r["block_hit_rate"] * 100 for r in pts], color=colour, marker=".",
                    label=f"{name}: block hits")
        hit_ax.plot(gb, [r["token_hit_rate"] * 100 for r in pts], color=colour, ls="--",
                    label=f"{name}: token hits")
        ttft_ax.plot(gb, [r["ttft_p90_ms"] for r in pts], color=colour, marker=".",
                     label=f"{name}: TTFT P90")
        ttft_ax.plot(gb, [r["ttft_p99_ms"] for r in pts], color=colour, ls=":",
                     label=f"{name}: TTFT P99")
        a = answers.get((w, tp))
        if a is not None:
            hit_ax.plot([a["capacity_gb"]], [a["block_hit_rate"] * 100], marker="o", ms=7,
                        mfc="none", color=colour)
            hit_ax.annotate(f"{figures.gb_text(a['capacity_gb'])} GB", (a["capacity_gb"],
                            a["block_hit_rate"] * 100), textcoords="offset points",
                            xytext=(4, -12 - 9 * (i % 4)), fontsize=7, color=colour)
    # Each line labelled where it is drawn, and in the legend.
    marks = []
    if first.get("target_block_hit_rate") is not None:
        marks.append((hit_ax, first["target_block_hit_rate"] * 100, "-",
                      f"target: {first['target_block_hit_rate'] * 100:g} % block hits"))
    if first.get("target_token_hit_rate") is not None:
        marks.append((hit_ax, first["target_token_hit_rate"] * 100, "--",
                      f"target: {first['target_token_hit_rate'] * 100:g} % token hits"))
    for key, name in (("slo_ttft_p50_ms", "P50"), ("slo_ttft_p90_ms", "P90"),
                      ("slo_ttft_p99_ms", "P99")):
        if first.get(key) is not None:
            marks.append((ttft_ax, first[key], "-", f"SLO: TTFT {name} <= {first[key]:g} ms"))
    for ax, y, ls, label in marks:
        ax.axhline(y, color="black", lw=1, ls=ls, label=label)
        ax.annotate(label, (1, y), xycoords=("axes fraction", "data"), xytext=(-4, 3),
                    textcoords="offset points", ha="right", va="bottom", fontsize=7)
    gpu_gb = first["gpu_kv_gb"]
    all_gb = [r["capacity_gb"] for r in probes]
    for ax in (hit_ax, ttft_ax):
        if gpu_gb > 0:
            label = f"KV memory of {first['tp']} x {first['gpu']}: {figures.gb_text(gpu_gb)} GB"
            ax.axvline(gpu_gb, color="grey", lw=1.2, ls="-.", label=label)
            ax.annotate(label, (gpu_gb, 0.98), xycoords=("data", "axes fraction"),
                        xytext=(3, 0), textcoords="offset points", rotation=90, ha="left",
                        va="top", fontsize=7, color="dimgrey")
        figures.gb_axis(ax, "KV memory per replica (GB)", all_gb)
        figures.style(ax)
    hit_ax.set_ylim(bottom=0)
    ttft_ax.set_yscale("log")
    hit_ax.set_ylabel("hit rate (%)")
    ttft_ax.set_ylabel("serve-mode TTFT (ms)")
    name = figures.trace_name(first["trace"])
    fig.suptitle(f"hit rate and TTFT vs KV per replica (serve mode): {name}\n"
                 f"{first['cost_model']}, router {first['router']}, policy {first['policy']}; "
                 f"target {first['target']}", fontsize=10)
    # The legends below the panels: never over the curves.
    for ax in (hit_ax, ttft_ax):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=ncol, fontsize=7,
                  frameon=False, bbox_transform=ax.transAxes)
    fig.tight_layout()
    # The legends hang below the axis labels: anchored under each label's own box.
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in (hit_ax, ttft_ax):
        label = ax.xaxis.label.get_window_extent(renderer)
        top = ax.transAxes.inverted().transform((0, label.y0))[1]
        ax.get_legend().set_bbox_to_anchor((0.5, top - 0.02), transform=ax.transAxes)
    return fig


def main(src, out):
    rows, probes = read(src)
    figures.save(figure(rows, probes), out, layout=False)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
