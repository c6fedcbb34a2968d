#!/usr/bin/env python3
"""The scaling model of docs/results/mpi.md's "Distributed sweeps (MPI)" section, fitted to what
studies/scaling_results.sh measured in DIR, and its projection to more ranks (a projection, not
a measurement). Usage: scaling_model.py DIR

The build machine's 2 cores are shared, so wall times there mix in other jobs; the model counts
CPU seconds, i.e. it describes ranks that each have a core of their own:
- cell i costs d_i = its replay_cpu_seconds (thread CPU time of the replay loop, one-thread run);
- rank 0 spends A outside cells: its CPU seconds at -np 1 (user + sys) minus the sum of d_i
  (MPI start, loading the trace, planning, the oracle, the final rewrite);
- each further rank costs L more before its first cell: the CPU seconds of the -np 2 job minus
  those of the -np 1 job (its MPI start, trace load, its own oracle, polling);
- a worker pays c per cell for the round trip: rank 0's measured handling time per message plus
  the two 0.5 ms polls of mpi_comm.cc;
- cells go out heaviest first (a policy that reads the future weighs 2), each to the runner
  free first; wall(N) = A + that makespan."""
import json
import re
import sys

d = sys.argv[1]


def time_file(name):
    text = open(f"{d}/{name}").read()
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", text)}


def cpu(name):
    t = time_file(name)
    return t["user_s"] + t["sys_s"]


def summary(name):
    line = next(l for l in open(f"{d}/{name}") if "configurations on" in l)
    busy = [(int(r), int(c), float(b))
            for r, c, b in re.findall(r"(\d+): (\d+) \(([0-9.]+) s\)", line)]
    us = float(re.search(r"messages, ([0-9.]+) us each", line).group(1))
    return busy, us


rows = [json.loads(l) for l in open(f"{d}/plain-j1.jsonl")]
cells = [r["replay_cpu_seconds"] for r in rows]
weights = [2 if r.get("offline") else 1 for r in rows]
order = sorted(range(len(cells)), key=lambda i: (-weights[i], i))
A = cpu("np1.rank0.time") - sum(cells)
L = cpu("np2.time") - cpu("np1.time")
_, us2 = summary("np2.err")
c = us2 * 1e-6 + 2 * 0.5e-3


def makespan(n, cells, order):
    free = [0.0] + [L] * (n - 1)
    for i in order:
        r = min(range(n), key=lambda k: (free[k], k))
        free[r] += cells[i] + (c if r else 0)
    return max(free)


def wall(n, cells=cells, order=order):
    return A + makespan(n, cells, order)


n = len(cells)
by_policy = {}
for r, x in zip(rows, cells):
    by_policy.setdefault(r["policy"], []).append(x)
print(f"fitted: A = {A:.2f} s, L = {L:.2f} s, c = {c * 1e3:.2f} ms; {n} cells, CPU "
      f"{sum(cells):.2f} s in all, {min(cells):.2f} to {max(cells):.2f} s each; per policy: " +
      ", ".join(f"{p} {sum(v):.2f} s" for p, v in by_policy.items()))
for name in ("plain-j1", "plain-j2", "np1", "np2"):
    t = time_file(f"{name}.time")
    print(f"measured {name}: wall {t['wall_s']:.2f} s, CPU {cpu(name + '.time'):.2f} s, "
          f"{n / t['wall_s']:.2f} cells/s on the shared machine")
mean = sum(cells) / n
print(f"rank 0 answers a message in {us2:.0f} us: at 64 ranks, cells of {mean:.2f} s on average "
      f"bring {64 / mean:.0f} messages/s, {64 / mean * us2 * 1e-6 * 100:.2f} % of its main thread")
big = cells * 16  # the same cells 16 times over: a 384-cell sweep
big_order = sorted(range(len(big)), key=lambda i: (-weights[i % n], i))
print("| ranks | 24 cells: wall s | cells/s | speed-up | 384 cells: wall s | cells/s | speed-up |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for k in (1, 2, 4, 8, 16, 32, 64):
    w, wb = wall(k), wall(k, big, big_order)
    print(f"| {k} | {w:.1f} | {n / w:.2f} | {wall(1) / w:.1f} | {wb:.1f} | "
          f"{len(big) / wb:.2f} | {wall(1, big, big_order) / wb:.1f} |")
