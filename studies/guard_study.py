#!/usr/bin/env python3
"""The guard's study (docs/policies.md, "guarded"): reads the CSV of `kvpolicy study robustness` and,
for each guarded policy, checks the issue's two targets against LRU and its unguarded policy:
  - at every noise level, guarded's hit rate is at most 0.5 points below LRU's;
  - at noise 0, guarded keeps at least 80 % of the unguarded policy's gain over LRU.
Pairs: a column `guarded:inner=X[,inner_params=A;B][,...]` is compared with the column whose label
is `X` or `X:A,B` with the noise level substituted, or, failing that, any column named X (the
robustness tool's automatic noisy-oracle columns, e.g. `fpb`).

  studies/guard_study.py results.csv [--margin 0.5] [--keep 0.8]

studies/guard_study.sh runs the study and this summary in one go.
"""
import argparse
import csv
import sys
from collections import defaultdict


def parse_guarded(label):
    """('fpb', 'predictor=noisy,p={p}') from 'guarded:inner=fpb,inner_params=predictor=noisy;p={p},...'"""
    params = label.split(":", 1)[1] if ":" in label else ""
    inner, inner_params = "lru", ""
    for item in params.split(","):
        if item.startswith("inner="):
            inner = item[len("inner="):]
        elif item.startswith("inner_params="):
            inner_params = item[len("inner_params="):].replace(";", ",")
    return inner, inner_params


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--margin", type=float, default=0.5, help="points below LRU allowed")
    ap.add_argument("--keep", type=float, default=0.8, help="share of the gain at noise 0 to keep")
    a = ap.parse_args()
    # (capacity label, policy) -> {noise: hit %}
    hit = defaultdict(dict)
    caps, policies = [], []
    for row in csv.DictReader(open(a.csv)):
        cap = row["capacity_fraction"] or row["capacity_blocks"]
        if cap not in caps:
            caps.append(cap)
        if row["policy"] not in policies:
            policies.append(row["policy"])
        hit[(cap, row["policy"])][float(row["noise"])] = 100 * float(row["block_hit_rate"])
    ok_all = True
    for cap in caps:
        lru = hit.get((cap, "lru"))
        if not lru:
            sys.exit("guard_study: the study needs an `lru` column")
        print(f"capacity {cap}:")
        for g in policies:
            if not g.startswith("guarded"):
                continue
            inner, params = parse_guarded(g)
            candidates = [inner + (":" + params if params else ""), inner]
            raw = next((hit[(cap, c)] for c in candidates if (cap, c) in hit), None)
            gh = hit[(cap, g)]
            worst = min(gh[p] - lru[p] for p in gh)
            worst_p = min(gh, key=lambda p: gh[p] - lru[p])
            below_ok = worst >= -a.margin
            line = (f"  {g}\n    worst vs LRU {worst:+.2f} points (p={worst_p:g}): "
                    f"{'ok' if below_ok else 'FAILS'} (>= -{a.margin})")
            ok = below_ok
            if raw is not None and 0.0 in raw and 0.0 in gh:
                gain_raw, gain_g = raw[0.0] - lru[0.0], gh[0.0] - lru[0.0]
                if gain_raw > 0:
                    share = gain_g / gain_raw
                    keep_ok = share >= a.keep
                    ok = ok and keep_ok
                    line += (f"\n    at p=0: {gh[0.0]:.2f} vs unguarded {raw[0.0]:.2f}, LRU {lru[0.0]:.2f}: "
                             f"{100 * share:.0f} % of the gain: {'ok' if keep_ok else 'FAILS'} (>= {100 * a.keep:.0f} %)")
                else:
                    line += f"\n    at p=0: unguarded {raw[0.0]:.2f} gains nothing over LRU {lru[0.0]:.2f}"
            print(line)
            ok_all = ok_all and ok
    print("all targets met" if ok_all else "some target missed")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
