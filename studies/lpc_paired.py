#!/usr/bin/env python3
"""Paired comparison of two continuation models on the same turns (docs/results/lpc.md, 4.5).

  lpc_paired.py BASE.jsonl VARIANT.jsonl [...]   traces written by `kvpolicy trace build
                                                 --classifier M --out X.jsonl` from the same
                                                 conversations (e.g. a validation split)

Prints, per variant, both AUCs (continuation score against the request's `continues` label) and
the difference with a 95 % interval from a paired bootstrap over conversations (2,000
resamples, seed 1): the interval covering 0 means the data cannot tell the two apart.
"""
import json
import random
import sys


def load(path):
    rows = []
    for line in open(path):
        if line.strip():
            o = json.loads(line)
            rows.append((o["session"], o["turn"], bool(o["continues"]), o["continuation"]))
    return rows


def auc(scores, labels):
    pairs = sorted(zip(scores, labels))
    pos = sum(labels)
    neg = len(labels) - pos
    if pos == 0 or neg == 0:
        return float("nan")
    rank_sum, i = 0.0, 0
    while i < len(pairs):  # mid-ranks for ties
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        mid = (i + j + 1) / 2
        rank_sum += mid * sum(1 for k in range(i, j) if pairs[k][1])
        i = j
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def main(base_path, variants):
    base = load(base_path)
    keys = [(s, t) for s, t, _, _ in base]
    by_session = {}
    for i, (s, _, _, _) in enumerate(base):
        by_session.setdefault(s, []).append(i)
    sessions = list(by_session)
    y = [c for _, _, c, _ in base]
    pb = [p for _, _, _, p in base]
    print(f"base {base_path}: {len(base)} turns of {len(sessions)} conversations, AUC {auc(pb, y):.4f}")
    for v in variants:
        rows = load(v)
        if [(s, t) for s, t, _, _ in rows] != keys:
            sys.exit(f"{v}: not the same requests as {base_path}")
        pv = [p for _, _, _, p in rows]
        d = auc(pv, y) - auc(pb, y)
        rng = random.Random(1)
        diffs = []
        for _ in range(2000):
            idx = [i for s in rng.choices(sessions, k=len(sessions)) for i in by_session[s]]
            yy = [y[i] for i in idx]
            diffs.append(auc([pv[i] for i in idx], yy) - auc([pb[i] for i in idx], yy))
        diffs.sort()
        lo, hi = diffs[49], diffs[1949]
        print(f"{v}: AUC {auc(pv, y):.4f}, minus base {d:+.4f} (95 % {lo:+.4f} to {hi:+.4f})")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
