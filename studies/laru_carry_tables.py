#!/usr/bin/env python3
"""Tables and figure of LARU with carry=evidence against Algorithm 1's reset (docs/results/
robustness.md, "LARU that keeps its robustness"), from the JSON of studies/laru_carry_results.sh
(one file NAME-REDRAW.jsonl per trace and noise model, rows of `kvpolicy study robustness`).

Prints markdown: per trace, noise model and capacity, each LARU's worst margin over LRU across
p = 0..1, the target check (at or above LRU - 0.5 points everywhere) and the share of old LARU's
gain over LRU (summed over p = 0..0.3, and over p = 0.1..0.3 without the equal p = 0) that the
variant keeps ("—" where old LARU has no gain there); then the per-request curves on every trace.
Writes OUT_DIR/laru_carry.png (per-request noise) and OUT_DIR/laru_carry_access.png.

  studies/laru_carry_tables.py OUT_DIR [--margin 0.5]
"""
import argparse
import glob
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plotting import legend_beside, plt, save, style  # noqa: E402

ORDER = ["generated", "mooncake", "arena", "sharegpt", "synthetic"]
NAME = {"generated": "generated (tuning)", "mooncake": "Mooncake", "arena": "Chatbot Arena",
        "sharegpt": "ShareGPT", "synthetic": "Mooncake synthetic"}
POLICIES = ["lru", "fpb", "laru", "laru:carry=evidence"]
LABEL = {"laru": "laru (reset)", "laru:carry=evidence": "laru carry"}
LOW = (0.0, 0.1, 0.2, 0.3)


def pct(x):
    return "—" if x != x else f"{x * 100:.0f} %"  # NaN: old LARU has no gain to keep


def load(out):
    # (trace, redraw) -> capacity -> policy -> {p: hit %}
    hit = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    for path in glob.glob(os.path.join(out, "*-*.jsonl")):
        trace, redraw = os.path.basename(path)[:-len(".jsonl")].rsplit("-", 1)
        for line in open(path):
            r = json.loads(line)
            pol = r["policy"].replace("predictor=noisy,", "").replace(",predictor=noisy", "")
            pol = pol.split(",p=")[0]
            hit[(trace, redraw)][r["capacity_fraction"]][pol][round(r["noise"], 2)] = \
                100 * r["block_hit_rate"]
    return hit


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--margin", type=float, default=0.5)
    a = ap.parse_args()
    hit = load(a.out)
    traces = [t for t in ORDER if any(k[0] == t for k in hit)]
    if not traces:
        sys.exit(f"laru_carry_tables.py: no NAME-REDRAW.jsonl in {a.out}")

    print("| trace | noise | capacity | lru hit % | laru worst vs lru | carry worst vs lru | "
          "laru gain p=0..0.3 | carry gain p=0..0.3 | kept | kept p=0.1..0.3 | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    misses = []
    for t in traces:
        for redraw in ("request", "access"):
            caps = hit.get((t, redraw))
            if not caps:
                continue
            for cap in sorted(caps):
                c = caps[cap]
                lru = c["lru"][0.0]
                worst = {p: min(v - lru for v in c[p].values()) for p in POLICIES[2:]}
                gain = {p: sum(c[p][n] - lru for n in LOW) for p in POLICIES[2:]}
                kept = gain["laru:carry=evidence"] / gain["laru"] if gain["laru"] > 0 else float("nan")
                g1 = {p: sum(c[p][n] - lru for n in LOW[1:]) for p in POLICIES[2:]}
                kept1 = (g1["laru:carry=evidence"] / g1["laru"] if g1["laru"] > 0
                         else float("nan"))
                ok = worst["laru:carry=evidence"] >= -a.margin
                if not ok:
                    misses.append(f"{t} {redraw} {cap * 100:g} %")
                print(f"| {NAME[t]} | {redraw} | {cap * 100:g} % | {lru:.2f} | "
                      f"{worst['laru']:+.2f} | {worst['laru:carry=evidence']:+.2f} | "
                      f"{gain['laru']:+.2f} | {gain['laru:carry=evidence']:+.2f} | "
                      f"{pct(kept)} | {pct(kept1)} | "
                      f"{'yes' if ok else 'NO'} |")
    print(f"\nTarget (carry at or above LRU - {a.margin} points at every p): "
          + ("met in every cell" if not misses else "missed in " + ", ".join(misses)))

    for t in traces:
        caps = hit.get((t, "request"))
        if not caps:
            continue
        print(f"\n#### {NAME[t]}, per-request noise, block hit %\n")
        head = ["p"] + [f"{cap * 100:g} %: {LABEL.get(p, p)}" for cap in sorted(caps)
                        for p in POLICIES]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for n in sorted(caps[min(caps)]["lru"]):
            print(f"| {n:.1f} | " + " | ".join(f"{caps[cap][p][n]:.2f}" for cap in sorted(caps)
                                               for p in POLICIES) + " |")

    for redraw, suffix in (("request", ""), ("access", "_access")):
        rows = [t for t in traces if (t, redraw) in hit]
        if not rows:
            continue
        caps = sorted({cap for t in rows for cap in hit[(t, redraw)]})
        fig, axes = plt.subplots(len(rows), len(caps), figsize=(3.2 * len(caps) + 1.6,
                                                                 2.4 * len(rows)), squeeze=False)
        for i, t in enumerate(rows):
            for j, cap in enumerate(caps):
                ax = axes[i][j]
                c = hit[(t, redraw)].get(cap)
                if not c:
                    ax.set_axis_off()
                    continue
                for p, sty in zip(POLICIES, ("k-", "C3--", "C0-o", "C2-s")):
                    xs = sorted(c[p])
                    ax.plot(xs, [c[p][x] for x in xs], sty, markersize=3, label=LABEL.get(p, p))
                ax.set_title(f"{NAME[t]}, {cap * 100:g} %", fontsize=9)
                ax.set_xlabel("corruption probability p")
                ax.set_ylabel("block hit %")
                style(ax)
        legend_beside(axes[0][-1])
        fig.suptitle(f"LARU reset vs carry=evidence, adversarial noise redrawn per {redraw}")
        save(fig, os.path.join(a.out, f"laru_carry{suffix}.png"))


if __name__ == "__main__":
    main()
