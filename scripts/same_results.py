#!/usr/bin/env python3
"""Whether two results files (simulate or serve --json) hold the same rows in the same order,
ignoring the fields that time the run: replay_seconds, replay_cpu_seconds, ns_per_access,
sim_seconds and every *_seconds of policy_stats / router_stats. Usage:
same_results.py EXPECTED ACTUAL [--subset]; --subset: ACTUAL's rows are some of EXPECTED's (by
configuration), each equal to its counterpart. Exit 0 when equal, 1 with the first difference."""
import json
import sys

TIMING = {"replay_seconds", "replay_cpu_seconds", "ns_per_access", "sim_seconds"}


def rows(path):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            if not line.endswith("\n"):
                sys.exit(f"{path}:{n}: last line cut short")
            row = json.loads(line)
            for k in TIMING:
                row.pop(k, None)
            for stats in ("policy_stats", "router_stats"):
                for k in [k for k in row.get(stats, {}) if k.endswith("_seconds")]:
                    del row[stats][k]
            out.append(row)
    return out


def key(row):
    fields = ("mode", "trace", "policy", "params", "capacity_blocks", "dram_capacity_blocks",
              "dram_policy", "seed", "cost_model", "router", "router_params", "workers")
    return tuple(str(row.get(f)) for f in fields)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    expected, actual = rows(args[0]), rows(args[1])
    if "--subset" in sys.argv:
        by_key = {key(r): r for r in expected}
        for i, r in enumerate(actual, 1):
            if by_key.get(key(r)) != r:
                sys.exit(f"{args[1]} row {i} is not a row of {args[0]}: {key(r)}")
        return
    if len(expected) != len(actual):
        sys.exit(f"{args[0]} has {len(expected)} rows, {args[1]} {len(actual)}")
    for i, (e, a) in enumerate(zip(expected, actual), 1):
        if e != a:
            diff = sorted(k for k in set(e) | set(a) if e.get(k) != a.get(k))
            sys.exit(f"row {i} differs in {diff}: {key(e)} vs {key(a)}")


main()
