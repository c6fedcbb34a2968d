#!/usr/bin/env python3
"""The cost of kvpolicy's adapter in vLLM's CPU offload tier: vLLM's real CPUOffloadingManager
driven over a real trace (the offloading scheduler's call order, python/engine_tests/
vllm_drive.py) with each policy, in alternating rounds within one process; prints the median
time per run and its ratio to vLLM's own lru.

    PYTHONPATH=build/python python3 bench/engines/bench_vllm.py \
        --trace ../shared/traces/mooncake-conversation/conversation_trace.jsonl \
        --requests 2000 --blocks 256 --rounds 7

The engines' files come from --engines (default ../shared/engines beside the source tree).
--profile prints cProfile's top functions for one run of the first kvp: policy.
"""
import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def setup_paths(engines, real_torch):
    paths = [os.path.join(engines, "engines", "vllm"), os.path.join(engines, "stubs", "vllm"),
             os.path.join(SOURCE, "python", "engine_tests")]
    if not real_torch:
        paths.append(os.path.join(engines, "stubs", "torch_shim"))
    for p in reversed(paths):
        if not os.path.isdir(p):
            sys.exit(f"bench_vllm: {p} is missing (--engines names the engines' folder)")
        sys.path.insert(0, p)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=os.path.join(
        SOURCE, "..", "shared", "traces", "mooncake-conversation", "conversation_trace.jsonl"))
    ap.add_argument("--format", default="auto", help="the trace's format (load_trace's)")
    ap.add_argument("--requests", type=int, default=2000, help="first N requests (0 = all)")
    ap.add_argument("--blocks", type=int, default=256, help="CPU tier size in blocks")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--policies", default="lru,kvp:lru,kvp:s3fifo,arc",
                    help="vLLM policy names: lru, arc, kvp:<kvpolicy spec>")
    ap.add_argument("--events", action="store_true", help="the manager records its events")
    ap.add_argument("--engines", default=os.path.join(SOURCE, "..", "shared", "engines"))
    ap.add_argument("--real-torch", action="store_true", help="Debian's torch, not the shim")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--parity", action="store_true",
                    help="instead of timing: each policy once through the manager and, for "
                         "kvp: policies, through vllm_drive.Reference (every online policy "
                         "with --policies online); prints whether they agree")
    ap.add_argument("--fail-every", type=int, default=0,
                    help="every Nth store completes as failed (vLLM then calls remove)")
    a = ap.parse_args()
    if a.rounds < 1 or a.blocks < 1 or a.requests < 0:
        sys.exit("bench_vllm: --rounds and --blocks must be >= 1, --requests >= 0")
    setup_paths(os.path.abspath(a.engines), a.real_torch)

    import kvpolicy
    from vllm_drive import drive, manager, trace_requests

    trace = kvpolicy.load_trace(a.trace, format=a.format, max_requests=a.requests)
    reqs = trace_requests(trace)
    policies = [p.strip() for p in a.policies.split(",") if p.strip()]
    if a.parity:
        if policies == ["online"]:
            policies = ["lru"] + ["kvp:" + ("lpc:predictor=constant" if p == "lpc" else p)
                                  for p in kvpolicy.policy_names() if not kvpolicy.is_offline(p)]
        return parity(a, reqs, policies)
    times = {p: [] for p in policies}
    runs = {}
    for r in range(a.rounds):
        order = policies[r % len(policies):] + policies[:r % len(policies)]  # alternate
        for p in order:
            m = manager(p, a.blocks, events=a.events)
            t0 = time.perf_counter()
            runs[p] = drive(m, reqs)
            times[p].append(time.perf_counter() - t0)
    lookups = sum(len(k) for k, _ in reqs)
    print(f"vLLM CPUOffloadingManager, {len(reqs)} requests of {os.path.basename(a.trace)} "
          f"({lookups} block keys), {a.blocks} blocks, {a.rounds} alternating rounds, "
          f"kvpolicy {kvpolicy.__version__}")
    # "x base": median time over the base's; "by round": the median of the per-round ratios,
    # which the machine's drift moves less; "hit %": blocks loaded from the tier over all the
    # requests' blocks (docs/results/engines-vllm.md).
    base = policies[0]
    print(f"{'policy':<16} {'median ms':>10} {'min ms':>8} {'x ' + base:>9} {'by round':>9} "
          f"{'hits':>7} {'hit %':>6} {'evicted':>8} {'failures':>8}")
    for p in policies:
        med = statistics.median(times[p])
        by_round = statistics.median(t / b for t, b in zip(times[p], times[base]))
        s = runs[p].summary()
        print(f"{p:<16} {med * 1e3:>10.1f} {min(times[p]) * 1e3:>8.1f} "
              f"{med / statistics.median(times[base]):>9.2f} {by_round:>9.2f} "
              f"{s['hits']:>7} {100 * s['hits'] / max(lookups, 1):>6.2f} {s['evicted']:>8} "
              f"{s['failures']:>8}")
    if a.profile:
        kvp = next((p for p in policies if p.startswith("kvp:")), None)
        if kvp is None:
            sys.exit("bench_vllm: --profile needs a kvp: policy in --policies")
        prof = cProfile.Profile()
        m = manager(kvp, a.blocks, events=a.events)
        prof.runcall(drive, m, reqs)
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)


def parity(a, reqs, policies):
    import kvpolicy
    from kvpolicy.integrations.vllm import _node_id
    from vllm_drive import Reference, drive, manager

    blocks = sum(len(k) for k, _ in reqs)
    print(f"{len(reqs)} requests ({blocks} block keys), {a.blocks} blocks, every "
          f"{a.fail_every or 'no'} store failed; hit % = blocks loaded / block keys")
    print("| policy | hit % | hits | evicted | store failures | = kvpolicy told directly |")
    print("|---|---|---|---|---|---|")
    for p in policies:
        run = drive(manager(p, a.blocks, events=a.events), reqs, fail_every=a.fail_every)
        same = "(vLLM's own)"
        if p.startswith("kvp:"):
            try:
                ref = Reference(p[4:], a.blocks).run(reqs, fail_every=a.fail_every)
                same = "yes" if (ref.summary() == run.summary() and
                                 ref.evicted == [_node_id(k) for k in run.evicted]) else "**no**"
            except kvpolicy.Error as e:  # the policy broke the library's contract
                same = f"**no** (told directly: {e})"
        s = run.summary()
        print(f"| {p} | {100 * s['hits'] / max(blocks, 1):.2f} | {s['hits']} | {s['evicted']} "
              f"| {s['failures']} | {same} |")


if __name__ == "__main__":
    main()
