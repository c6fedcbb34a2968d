#!/usr/bin/env python3
"""docs/results/leaderboard.md's tables from `kvpolicy leaderboard --board-json` rows.

Usage: leaderboard_tables.py BOARD.jsonl [MARGIN_BOARD.jsonl]
Prints the summary table (wins per trace, traces counted, worst and mean margins; with a second
board, its traces counted as "N of T, > margin") and the per-cell table (LRU / Belady, the best
seed, the best deployable policy, every winner), and the ceiling of choosing (per cell, the
best policy that is not a seed policy, picked with hindsight, and its margin over LRU and every
seed policy), in markdown.
"""
import json
import sys


def load(path):
    rows = [json.loads(line) for line in open(path)]
    kinds = {k: [r for r in rows if r["kind"] == k] for k in ("cell", "trace", "summary")}
    return kinds


def main():
    b = load(sys.argv[1])
    margin = load(sys.argv[2]) if len(sys.argv) > 2 else None
    traces = list(dict.fromkeys(r["trace"] for r in b["cell"]))
    per = {(r["policy"], r["trace"]): r for r in b["trace"]}
    counted = {r["policy"]: r for r in margin["summary"]} if margin else {}
    head = ["policy"] + traces + ["N of T"]
    if margin:
        head.append(f"N of T, > {margin['summary'][0]['min_margin_pt']:g} pt")
    head += ["worst vs LRU, pt (where)", "mean vs LRU", "mean vs best seed"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for s in b["summary"]:
        p = s["policy"]
        cells = []
        for t in traces:
            r = per.get((p, t))
            if r is None:
                cells.append("–")
            else:
                w = f"{r['wins']}/{r['sizes']}"
                cells.append(f"**{w}**" if r["counts"] else w)
        name = f"`{p}`" + (" (seed)" if s["seed_policy"] else "")
        row = [name] + cells + [f"{s['traces_won']} of {s['traces']}"]
        if margin:
            m = counted[p]
            row.append(f"{m['traces_won']} of {m['traces']}")
        row += [f"{s['worst_margin_lru_pt']:+.2f} ({s['worst_cell']})",
                f"{s['mean_margin_lru_pt']:+.2f}", f"{s['mean_margin_seed_pt']:+.2f}"]
        print("| " + " | ".join(row) + " |")
    print()
    caps = list(dict.fromkeys(r["capacity"] for r in b["cell"]))
    print("| trace | " + " | ".join(caps) + " |")
    print("|---|" + "---|" * len(caps))
    for t in traces:
        out = []
        for c in caps:
            rows = [r for r in b["cell"] if r["trace"] == t and r["capacity"] == c]
            r0 = rows[0]
            best = max(rows, key=lambda r: (r["block_hit_rate"], r["policy"] == "lru"))
            best_txt = ("LRU" if best["margin_lru_pt"] <= 0
                        else f"{best['policy']} {best['margin_lru_pt']:+.2f}")
            wins = [r["policy"] for r in rows if r["win"]] or ["none"]
            out.append(f"{100 * r0['lru_hit_rate']:.2f} / {100 * r0['belady_hit_rate']:.2f} · "
                       f"{r0['best_seed']} {100 * r0['best_seed_hit_rate']:.2f} · {best_txt} · "
                       f"wins: {', '.join(wins)}")
        print(f"| {t} | " + " | ".join(out) + " |")
    print()
    ceiling(b["cell"], traces, caps)


def ceiling(cells, traces, caps):
    """Per cell, the best non-seed policy (hindsight) against max(LRU, best seed); a trace counts
    at >= ceil(3/4) of its sizes, as the board's rule."""
    print("| trace | " + " | ".join(caps) + " | counts |")
    print("|---|" + "---|" * (len(caps) + 1))
    counted = 0
    for t in traces:
        out, wins = [], 0
        for c in caps:
            rows = [r for r in cells if r["trace"] == t and r["capacity"] == c
                    and not r["seed_policy"] and r["policy"] != "lru"]
            best = max(rows, key=lambda r: r["block_hit_rate"])
            margin = min(best["margin_lru_pt"], best["margin_seed_pt"])
            wins += best["win"]
            out.append(f"{best['policy']} {margin:+.2f}")
        counts = wins >= -(-3 * len(caps) // 4)
        counted += counts
        print(f"| {t} | " + " | ".join(out) + f" | {'yes' if counts else 'no'} ({wins}/{len(caps)}) |")
    print(f"\nThe ceiling counts on {counted} of {len(traces)} traces.")


if __name__ == "__main__":
    main()
