#!/usr/bin/env python3
"""Tables of studies/lpc_features.sh (docs/results/lpc.md, "features that might transfer").

  lpc_features_table.py DIR                 one row per model (training data, features,
                                            calibration): validation AUC and cross-fitted Brier,
                                            then AUC / MCC / Brier and per-turn AUC on each
                                            dataset's held-out half
  lpc_features_table.py --hit NAME hit-M-on-D.jsonl ...
                                            block hit % per capacity and the margin over lru,
                                            one row per model (M) and policy
"""
import json
import os
import sys

from lpc_cross_table import print_hit_table

TRAINERS = ["arena", "sharegpt", "mix"]
VARIANTS = ["base", "no-turn", "answer", "tq", "tq-no-turn", "all", "all-no-turn"]


def f(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def main(d):
    print("| trained on | features | calibration | val AUC | val Brier platt / iso (cross-fitted) "
          "| Arena test AUC / MCC / Brier | ShareGPT test AUC / MCC / Brier "
          "| other dataset's per-turn AUC: 2, 3, 4, 5+ |")
    print("|---|---|---|---|---|---|---|---|")
    for t in TRAINERS:
        for v in VARIANTS:
            for cal in ["platt", "isotonic"]:
                m = f"{t}-{v}-{cal}"
                tp = os.path.join(d, f"train-{m}.json")
                if not os.path.exists(tp):
                    continue
                tr = json.load(open(tp))
                ev = {x: json.load(open(os.path.join(d, f"eval-{m}-on-{x}.json")))
                      for x in ["arena", "sharegpt"]}
                cells = []
                for x in ["arena", "sharegpt"]:
                    mm = ev[x]["metrics"]
                    cells.append(f"{f(mm['auc'])} / {f(mm['mcc'])} / {f(mm['brier'], '.4f')}")
                other = "sharegpt" if t == "arena" else "arena"
                per = {p["turns"]: p["auc"] for p in ev[other]["per_turn"]}
                turns = ", ".join(f(per.get(k), ".2f") for k in ["2", "3", "4", "5+"])
                if t == "mix":
                    turns = "(both seen)"
                print(f"| {t} | {v} | {cal} | {f(tr.get('validation_auc'))} | "
                      f"{f(tr.get('validation_brier_platt_cv'), '.4f')} / "
                      f"{f(tr.get('validation_brier_isotonic_cv'), '.4f')} | "
                      + " | ".join(cells) + f" | {turns} |")


def hit_table(name, paths):
    hit, rows, caps = {}, [], []
    for p in paths:
        model = os.path.basename(p)[len("hit-"):].rsplit("-on-", 1)[0]
        for line in open(p):
            if not line.strip():
                continue
            r = json.loads(line)
            pol = r["policy"] + (":" + r["params"] if r["params"] else "")
            label = "lru" if pol == "lru" else f"{model}: {pol}"
            cap = r["capacity_fraction"]
            if label not in rows:
                rows.append(label)
            if cap not in caps:
                caps.append(cap)
            hit[(label, cap)] = r["block_hit_rate"] * 100
    print_hit_table(name, rows, caps, hit)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--hit":
        hit_table(sys.argv[2], sys.argv[3:])
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else ".")
