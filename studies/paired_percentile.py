#!/usr/bin/env python3
"""Paired comparison of two serve runs of the same trace, request by request (docs/serve.md,
"Per-request log").

  paired_percentile.py A.csv B.csv [A2.csv B2.csv ...] [--p 99] [--metric ttft_ms]

Each pair is two `serve --request-log` files (CSV or JSON Lines) of one trace, say router A and
router B on the same arrivals (one replicate). Prints, per pair, the ratio of A's to B's
percentile (nearest rank over the requests completed in both) with a 95 % interval from a paired
bootstrap over sessions (2,000 resamples, seed 1): a resample draws sessions with replacement
and takes each drawn session's requests from both runs, so the two percentiles see the same
traffic. With several pairs, the mean ratio and its interval, each resample drawing the sessions
of every pair. The interval is the traffic's sampling noise given what each request met in these
runs (the runs' own variation is what replicates show). With few sessions the bootstrap of a
tail percentile is unreliable; a ratio outside its own interval shows it.
"""
import csv
import json
import math
import random
import sys


def load(path, metric="ttft_ms"):
    """{request: (session, value)} over the completed requests of one log."""
    if path.endswith(".jsonl"):
        rows = [json.loads(line) for line in open(path) if line.strip()]
        done = [r for r in rows if r["completed"] is True]
    else:
        done = [r for r in csv.DictReader(open(path)) if r["completed"] == "true"]
    return {int(r["request"]): (int(r["session"]), float(r[metric])) for r in done}


def percentile(values, p):
    """Nearest rank, as serve computes it."""
    s = sorted(values)
    return s[max(1, math.ceil(p / 100 * len(s) - 1e-9)) - 1]


class Pair:
    """Two logs of one trace: the requests completed in both, grouped by session."""

    def __init__(self, a_path, b_path, metric="ttft_ms"):
        a, b = load(a_path, metric), load(b_path, metric)
        self.requests = sorted(set(a) & set(b))
        if not self.requests:
            raise SystemExit(f"{a_path}, {b_path}: no request completed in both")
        self.a = {r: v for r, (_, v) in a.items()}
        self.b = {r: v for r, (_, v) in b.items()}
        self.sessions = {}
        for r in self.requests:
            self.sessions.setdefault(a[r][0], []).append(r)

    def ratio(self, p, requests=None):
        rs = self.requests if requests is None else requests
        return percentile([self.a[r] for r in rs], p) / percentile([self.b[r] for r in rs], p)

    def resample(self, rng):
        keys = list(self.sessions)
        return [r for _ in keys for r in self.sessions[rng.choice(keys)]]


def paired_ratios(pairs, p, resamples=2000, seed=1):
    """Per pair (ratio, low, high), then (mean ratio, low, high) over the pairs."""
    rng = random.Random(seed)
    boot = [[pair.ratio(p, pair.resample(rng)) for pair in pairs] for _ in range(resamples)]
    per = [(pair.ratio(p), percentile([x[i] for x in boot], 2.5),
            percentile([x[i] for x in boot], 97.5)) for i, pair in enumerate(pairs)]
    means = [sum(x) / len(x) for x in boot]
    mean = (sum(r for r, _, _ in per) / len(per), percentile(means, 2.5), percentile(means, 97.5))
    return per, mean


def main(argv):
    args, p, metric = [], 99.0, "ttft_ms"
    it = iter(argv)
    for x in it:
        if x == "--p":
            p = float(next(it))
        elif x == "--metric":
            metric = next(it)
        else:
            args.append(x)
    if len(args) < 2 or len(args) % 2:
        sys.exit(__doc__)
    pairs = [Pair(a, b, metric) for a, b in zip(args[::2], args[1::2])]
    per, mean = paired_ratios(pairs, p)
    for i, (pair, (r, lo, hi)) in enumerate(zip(pairs, per)):
        print(f"{args[2 * i]} / {args[2 * i + 1]}: P{p:g} {metric} ratio {r:.3f} [{lo:.3f}, "
              f"{hi:.3f}] ({len(pair.requests)} requests, {len(pair.sessions)} sessions)")
    if len(pairs) > 1:
        print(f"mean over {len(pairs)} pairs: {mean[0]:.3f} [{mean[1]:.3f}, {mean[2]:.3f}]")


if __name__ == "__main__":
    main(sys.argv[1:])
