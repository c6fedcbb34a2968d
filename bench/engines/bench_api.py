"""The cost of one call of kvpolicy's engine-facing Python API (kvpolicy.EvictionPolicy), the
calls the engines' seams make (docs/api.md, "What an engine's seam needs"): per call, and per
block for the batch calls, in nanoseconds, median of --rounds rounds.

    PYTHONPATH=build/python python3 bench/engines/bench_api.py [--policy lru] [--blocks 20000]

Each round fills a policy of --blocks blocks with requests of 16-block chains, then times each
call over the whole cache. Numbers are for one thread of this machine; the engines' adapters
make these calls, so an adapter's cost against the engine's native policy is measured by the
engine benchmarks beside this file.
"""
import argparse
import statistics
import time

import kvpolicy

CHAIN = 16


def chains(blocks):
    return [list(range(base, base + CHAIN)) for base in range(1, blocks + 1, CHAIN)]


def timed(fn):
    start = time.perf_counter_ns()
    fn()
    return time.perf_counter_ns() - start


def one_round(policy, blocks, flat):
    runs = chains(blocks)
    keys = [k for c in runs for k in c]
    p = kvpolicy.EvictionPolicy(policy, capacity_blocks=2 * blocks, flat=flat)
    out = {}

    def insert_single():
        for c in runs:
            with p.request():
                parent = None
                for k in c:
                    p.on_insert(k, parent)
                    parent = k
    out["on_insert (per block)"] = timed(insert_single) / len(keys)
    p.clear()
    out["on_insert_chain (per block)"] = timed(
        lambda: [p.on_insert_chain(c) for c in runs]) / len(keys)
    out["on_insert of a duplicate"] = timed(lambda: [p.on_insert(k) for k in keys]) / len(keys)
    out["on_hits (per block)"] = timed(lambda: [p.on_hits(c) for c in runs]) / len(keys)
    missing = [k + 10 * blocks for k in keys]
    out["on_hits ignore_missing, untracked (per block)"] = timed(
        lambda: p.on_hits(missing, ignore_missing=True)) / len(keys)
    out["on_locks + on_unlocks (per block)"] = timed(
        lambda: [(p.on_locks(c), p.on_unlocks(c)) for c in runs]) / len(keys)
    protected = set(runs[-1])
    out["evict(16, exclude=16 keys, all_or_nothing) per block"] = timed(
        lambda: [p.evict(CHAIN, exclude=protected, all_or_nothing=True)
                 for _ in range(len(runs) // 4)]) / (CHAIN * (len(runs) // 4))
    out["victims(16) + commit (per block)"] = timed(
        lambda: [p.commit(p.victims(CHAIN)) for _ in range(len(runs) // 4)]) / (
            CHAIN * (len(runs) // 4))
    rest = [k for k in keys if k in p][: len(keys) // 4]
    out["on_remove of a leaf"] = timed(
        lambda: [p.on_remove(k) for k in reversed(rest)]) / max(len(rest), 1)
    out["evict(1)"] = timed(lambda: [p.evict(1) for _ in range(len(p) // 2)]) / max(len(p) // 2, 1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="lru")
    ap.add_argument("--blocks", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    print(f"kvpolicy {kvpolicy.__version__}: EvictionPolicy('{a.policy}'), {a.blocks} blocks, "
          f"chains of {CHAIN}, median of {a.rounds} rounds, ns per call (or per block)")
    print("| call | prefix tree | flat |\n|---|---:|---:|")
    rows = {}
    for flat in (False, True):
        rounds = [one_round(a.policy, a.blocks, flat) for _ in range(a.rounds)]
        for name in rounds[0]:
            rows.setdefault(name, []).append(statistics.median(r[name] for r in rounds))
    for name, (tree, flat) in rows.items():
        print(f"| {name} | {tree:,.0f} | {flat:,.0f} |")


if __name__ == "__main__":
    main()
