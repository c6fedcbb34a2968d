"""Cost of kvpolicy inside SGLang's real RadixCache against the native one, in the same run
(docs/results/engines-sglang.md):

1. a replay in the scheduler's call order (python/engine_tests/sglang_drive.py) of Mooncake's
   conversation trace as token lists: native RadixCache (lru) vs KvpolicyRadixCache (lru,
   s3fifo) at page size 1 and 16, and kvpolicy blocks of 16 tokens at page size 1; median of
   --rounds alternating rounds;
2. the cost of one evict() with 10k / 40k / 160k evictable leaves: native (it rebuilds a heap of
   every leaf on each call) vs the kvpolicy backend;
3. --parity: the parity table: per online policy, hits and evictions of KvpolicyRadixCache and
   of a bare EvictionPolicy driven by the same block stream (sglang_drive.reference), on
   Mooncake and ShareGPT (what test_sglang.py asserts, at the tests' sizes).

  PYTHONPATH=build/python python3 bench/engines/bench_sglang.py [--requests 1500] [--rounds 5]
  PYTHONPATH=build/python python3 bench/engines/bench_sglang.py --parity
"""
import argparse
import os
import statistics
import sys
import time
from array import array

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "engine_tests"))

from engines import engines_dir, use_engine  # noqa: E402

if engines_dir() is None:
    sys.exit("the engines' files are absent: set KVPOLICY_ENGINES or put them in ../shared/engines")
use_engine("sglang")

import sglang_drive as drive  # noqa: E402
from sglang.srt.mem_cache.base_prefix_cache import EvictParams, InsertParams  # noqa: E402
from sglang.srt.mem_cache.radix_cache import RadixKey  # noqa: E402


def replay(args):
    rows = []
    for page, tokens_per_hash, configs in (
            (1, 8, [("native lru", None, None), ("kvp:lru", "lru", None),
                    ("kvp:s3fifo", "s3fifo", None), ("kvp:lru block 16", "lru", 16)]),
            (16, 32, [("native lru", None, None), ("kvp:lru", "lru", None),
                      ("kvp:s3fifo", "s3fifo", None)])):
        reqs = drive.mooncake_requests(args.requests, tokens_per_hash=tokens_per_hash,
                                       output_tokens=tokens_per_hash)
        pool = args.pool_hashes * tokens_per_hash
        times = {label: [] for label, _, _ in configs}
        result = {}
        for _ in range(args.rounds):
            for label, spec, block in configs:
                cache, alloc = drive.make_cache(pool, page=page, spec=spec, block=block)
                t = time.perf_counter()
                hits, evicted = drive.run(cache, alloc, reqs, checks=0)
                times[label].append(time.perf_counter() - t)
                result[label] = (sum(h or 0 for h in hits), evicted)
        total = sum(len(p) for p, _ in reqs)
        base = statistics.median(times["native lru"])
        for label, _, _ in configs:
            med = statistics.median(times[label])
            hit, evicted = result[label]
            rows.append((page, label, len(reqs), total, f"{hit / total:.1%}", evicted,
                         f"{med * 1e3:.1f}", f"{med / base:.2f}x"))
    print(f"## replay: Mooncake, first {args.requests} requests, pool {args.pool_hashes} "
          f"hash blocks, median of {args.rounds} rounds\n")
    print("| page | cache | requests | prompt tokens | hit rate | tokens evicted | ms "
          "| vs native |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


def leaves_cache(n, spec):
    """A cache whose tree is n evictable 2-token leaves under the root (page size 1)."""
    cache, alloc = drive.make_cache(2 * n + 64, spec=spec)
    for i in range(n):
        v = alloc.alloc(2)
        cache.insert(InsertParams(key=RadixKey(array("q", [2 * i, 2 * i + 1])), value=v))
    return cache


def evict_cost(args):
    print(f"\n## evict(2 tokens) with n evictable leaves: mean of {args.evicts} calls\n")
    print("| leaves | native ms/evict | kvp:lru ms/evict | kvp:s3fifo ms/evict "
          "| native / kvp:lru |")
    print("|---|---|---|---|---|")
    for n in (10_000, 40_000, 160_000):
        cost = {}
        for label, spec in (("native", None), ("lru", "lru"), ("s3fifo", "s3fifo")):
            cache = leaves_cache(n, spec)
            t = time.perf_counter()
            for _ in range(args.evicts):
                assert cache.evict(EvictParams(num_tokens=2)).num_tokens_evicted == 2
            cost[label] = (time.perf_counter() - t) / args.evicts * 1e3
            del cache
        print(f"| {n:,} | {cost['native']:.3f} | {cost['lru']:.4f} | {cost['s3fifo']:.4f} | "
              f"{cost['native'] / cost['lru']:.0f}x |")


def parity(args):
    import kvpolicy
    names = [p["name"] for p in kvpolicy.policies() if not p["offline"]]
    specs = [{"lpc": "lpc:predictor=constant"}.get(n, n) for n in names]
    specs += ["laru:predictor=reuse", "hf:predictor=reuse", "fpb:predictor=reuse"]
    traces = [("Mooncake 400 req, page 1", drive.mooncake_requests(400, 4, 4), 2400, 1),
              ("Mooncake 400 req, page 16", drive.mooncake_requests(400, 16, 16), 9600, 16),
              ("ShareGPT 300 turns, page 1", drive.sharegpt_requests(300), 3000, 1)]
    print("\n## parity: KvpolicyRadixCache vs a bare EvictionPolicy on the same block stream\n")
    print("| trace | policy | prompt tokens | hit tokens (adapter = reference) | tokens evicted "
          "| victims equal |")
    print("|---|---|---|---|---|---|")
    for label, reqs, pool, page in traces:
        total = sum(len(p) for p, _ in reqs)
        for spec in specs:
            cache, alloc = drive.make_cache(pool, page=page, spec=spec)
            victims = []
            hits, evicted = drive.run(cache, alloc, reqs, checks=0, victims=victims)
            ref_hits, ref_evicted, ref_victims = drive.reference(reqs, spec, pool, page)
            same = ([v for c in victims for v in c] == [v for c in ref_victims for v in c])
            hit = sum(h or 0 for h in hits)
            ref = sum(h or 0 for h in ref_hits)
            print(f"| {label} | {spec} | {total} | {hit} = {ref} ({hit / total:.1%}) | "
                  f"{evicted} = {ref_evicted} | {'yes' if same and hits == ref_hits else 'NO'} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=1500, help="Mooncake requests replayed")
    ap.add_argument("--pool-hashes", type=int, default=1500,
                    help="KV pool size in Mooncake hash blocks")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (median)")
    ap.add_argument("--evicts", type=int, default=20, help="evict calls timed per size")
    ap.add_argument("--skip-replay", action="store_true")
    ap.add_argument("--skip-evict", action="store_true")
    ap.add_argument("--parity", action="store_true", help="print the parity table only")
    args = ap.parse_args()
    if args.parity:
        return parity(args)
    if drive.data_dir() is None and not args.skip_replay:
        sys.exit("KVPOLICY_DATA (the traces) is absent: pass --skip-replay")
    if not args.skip_replay:
        replay(args)
    if not args.skip_evict:
        evict_cost(args)


if __name__ == "__main__":
    main()
