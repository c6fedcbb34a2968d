#!/usr/bin/python3
"""The leaderboard as a heat map, from `kvpolicy leaderboard --board-json FILE`: one row per
policy (ranked as the summary ranks them), one column per (trace, capacity), the colour the
margin over the best seed policy in that cell (points; red below, blue above), each cell
annotated with it, a dot where the policy also beats LRU there ("win"), and the rows' right-hand
label "N/T" (traces where it wins at >= 3 of 4 sizes). `kvpolicy leaderboard --plot F.png`
calls it.

  kvpolicy leaderboard --traces a=A,b=B --board-json board.jsonl
  python3 -m kvpolicy.plot_leaderboard board.jsonl board.png

Part of the Python package kvpolicy (installed beside the command line as share/kvpolicy/).
Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import sys

try:
    from . import figures
except ImportError:  # run as a script: figures.py is beside it
    import figures


def read(src):
    cells, summary = [], []
    with open(src) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r["kind"] == "cell":
                cells.append(r)
            elif r["kind"] == "summary":
                summary.append(r)
    if not cells:
        sys.exit(f"plot_leaderboard.py: no cells in {src}")
    return cells, summary


def figure(src):
    """The heat map of the leaderboard rows in `src`."""
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm
    cells, summary = read(src)
    policies = [s["policy"] for s in summary] or sorted({c["policy"] for c in cells})
    columns = []
    for c in cells:
        if (c["trace"], c["capacity"]) not in columns:
            columns.append((c["trace"], c["capacity"]))
    grid = np.full((len(policies), len(columns)), np.nan)
    wins = np.zeros_like(grid, dtype=bool)
    for c in cells:
        if c["policy"] not in policies:
            continue
        i, j = policies.index(c["policy"]), columns.index((c["trace"], c["capacity"]))
        grid[i, j] = c["margin_seed_pt"]
        wins[i, j] = c["win"]
    finite = grid[np.isfinite(grid)]
    # Colours saturate at 3 points, so that the margins near 0 (where wins are decided) show;
    # every cell carries its number.
    span = min(3.0, max(0.05, float(np.max(np.abs(finite))))) if len(finite) else 1.0
    fig, ax = figures.plt.subplots(
        figsize=(max(6.0, 0.55 * len(columns) + 3.5), max(3.0, 0.36 * len(policies) + 1.8)))
    ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu", aspect="auto",
                      norm=TwoSlopeNorm(vcenter=0.0, vmin=-span, vmax=span))
    for i in range(len(policies)):
        for j in range(len(columns)):
            if np.isnan(grid[i, j]):
                continue
            v = grid[i, j]
            ax.text(j, i, f"{v:+.1f}" + ("*" if wins[i, j] else ""), ha="center", va="center",
                    fontsize=6, color="white" if abs(v) > 0.6 * span else "black")
    ax.set_xticks(range(len(columns)))
    ax.set_xticklabels([f"{t}\n{c}" for t, c in columns], fontsize=7, rotation=90)
    won = {s["policy"]: f"{s['traces_won']}/{s['traces']}" for s in summary}
    ax.set_yticks(range(len(policies)))
    ax.set_yticklabels([f"{p} ({won[p]})" if p in won else p for p in policies], fontsize=7)
    # Lines between traces.
    for j in range(1, len(columns)):
        if columns[j][0] != columns[j - 1][0]:
            ax.axvline(j - 0.5, color="black", lw=0.8)
    ax.set_xlabel("trace, capacity (share of its unique blocks)")
    ax.set_ylabel("policy (traces won / traces)")
    # No colour bar: every cell carries its number (and a colour bar's axes would read as a panel).
    ax.set_title("leaderboard: block hit rate margin over the best seed policy, points (blue "
                 "above, red below, saturating at 3; * = beats LRU and every seed policy)", fontsize=9)
    return fig


def main(src, out):
    figures.save(figure(src), out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
