#!/usr/bin/env python3
"""Tables of studies/lpc_cross.sh (docs/results/lpc.md, "LPC across datasets").

  lpc_cross_table.py eval-*.json            per-turn MCC / AUC of `classifier eval` JSON files
  lpc_cross_table.py --hit NAME A.jsonl ... block hit % per capacity of `simulate --json` rows,
                                            and each policy's margin over lru (points)
"""
import json
import sys


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def eval_tables(paths):
    print("| model | test data | split | calibrated | n | MCC | AUC | per turn: MCC / AUC (n, base rate) |")
    print("|---|---|---|---|---|---|---|---|")
    for p in sorted(paths):
        with open(p) as f:
            o = json.load(f)
        name = p[len("eval-"):-len(".json")]
        model, rest = name.split("-on-")
        data, split = rest.rsplit("-", 1)
        m = o["metrics"]
        turns = "; ".join(
            f"{t['turns']}: {fmt(t['mcc'], '.2f')} / {fmt(t['auc'], '.2f')} ({t['n']}, {t['base_rate']:.2f})"
            for t in o["per_turn"])
        print(f"| {model} | {data} | {split} | {'yes' if o.get('calibrated') and o.get('platt_a', 1) != 1 else 'no'} "
              f"| {m['n']} | {fmt(m['mcc'])} | {fmt(m['auc'])} | {turns} |")


def print_hit_table(name, labels, caps, hit):
    """Block hit % per (label, capacity fraction), each with its margin over the "lru" row."""
    caps = sorted(caps)
    print(f"\n{name}: block hit % (margin over lru, points)")
    print("| policy | " + " | ".join(f"{c * 100:g} %" for c in caps) + " |")
    print("|---|" + "---|" * len(caps))
    for label in labels:
        cells = []
        for c in caps:
            h, l = hit.get((label, c)), hit.get(("lru", c))
            if h is None:
                cells.append("-")
            elif label == "lru" or l is None:
                cells.append(f"{h:.2f}")
            else:
                cells.append(f"{h:.2f} ({h - l:+.2f})")
        print(f"| {label} | " + " | ".join(cells) + " |")


def hit_tables(name, paths):
    rows = []
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append((p, json.loads(line)))
    policies, caps, hit, trust = [], [], {}, {}
    for p, r in rows:
        label = r["policy"] + (":" + r["params"] if r["params"] else "")
        tag = "before" if p.endswith("before.jsonl") else "after"
        if label not in ("lru", "lpc:predictor=oracle"):
            label = f"{tag}: {label}"
        stats = r.get("policy_stats", {})
        if "drift_min_trust" in stats:
            trust.setdefault(label, []).append(stats["drift_trust"])
        cap = r["capacity_fraction"]
        if label not in policies:
            policies.append(label)
        if cap not in caps:
            caps.append(cap)
        hit[(label, cap)] = r["block_hit_rate"] * 100
    print_hit_table(name, policies, caps, hit)
    for pol, t in trust.items():
        print(f"{pol}: drift trust at the end {min(t):.2f}-{max(t):.2f}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--hit":
        hit_tables(sys.argv[2], sys.argv[3:])
    else:
        eval_tables(sys.argv[1:])
