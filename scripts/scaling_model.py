#!/usr/bin/env python3
"""The scaling model of docs/results.md's "Distributed sweeps (MPI)" section, fitted to what
scripts/scaling_results.sh measured in DIR, and its projection to more ranks (a projection, not
a measurement). Usage: scaling_model.py DIR

Model: rank 0 spends A seconds outside cells (MPI start, loading the trace, planning, the final
rewrite): A = wall(-np 1) - rank 0's busy seconds at -np 1. A worker rank starts its first cell
L seconds late (it loads the trace when handed it): L = the trace's load time (`trace stats`).
Cell i takes d_i seconds: its replay_seconds in the one-thread run, scaled so they sum to rank
0's busy seconds at -np 1 (what a cell costs besides its replay loop, e.g. the oracle, spread
in proportion). A worker pays c per cell for the round trip: rank 0's measured handling time
per message plus the two 0.5 ms polls of mpi_comm.cc. Cells go out heaviest first (a policy
that reads the future weighs 2), each to the runner free first: wall(N) = A + that makespan."""
import json
import re
import sys

d = sys.argv[1]


def time_file(name):
    text = open(f"{d}/{name}").read()
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", text)}


def summary(name):
    line = next(l for l in open(f"{d}/{name}") if "configurations on" in l)
    busy = [(int(r), int(c), float(b)) for r, c, b in re.findall(r"(\d+): (\d+) \(([0-9.]+) s\)", line)]
    us = float(re.search(r"messages, ([0-9.]+) us each", line).group(1))
    return busy, us


rows = [json.loads(l) for l in open(f"{d}/plain-j1.jsonl")]
load = float(re.search(r"^load: ([0-9.]+) s", open(f"{d}/stats.txt").read(), re.M).group(1))
wall1 = time_file("np1.time")["wall_s"]
busy1, _ = summary("np1.err")
busy2, us2 = summary("np2.err")
A = wall1 - busy1[0][2]
replay = [r["replay_seconds"] for r in rows]
scale = busy1[0][2] / sum(replay)
cells = [x * scale for x in replay]
weights = [2 if r.get("offline") else 1 for r in rows]
order = sorted(range(len(cells)), key=lambda i: (-weights[i], i))
c = us2 * 1e-6 + 2 * 0.5e-3


def makespan(n, cells, order):
    free = [0.0] + [load] * (n - 1)
    for i in order:
        r = min(range(n), key=lambda k: (free[k], k))
        free[r] += cells[i] + (c if r else 0)
    return max(free)


def wall(n, cells=cells, order=order):
    return A + makespan(n, cells, order)


n_cells = len(cells)
print(f"fitted: A = {A:.2f} s, L = {load:.3f} s, c = {c * 1e3:.2f} ms, cells: {n_cells}, "
      f"sum {sum(cells):.2f} s, largest {max(cells):.2f} s, smallest {min(cells):.2f} s")
wall2 = time_file("np2.time")["wall_s"]
print(f"check at -np 2: model {wall(2):.2f} s, measured {wall2:.2f} s")
big = cells * 16  # the same cells 16 times: a 384-cell sweep
big_order = sorted(range(len(big)), key=lambda i: (-weights[i % n_cells], i))
print("| ranks | 24 cells: wall s | cells/s | speed-up | 384 cells: wall s | cells/s | speed-up |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for n in (1, 2, 4, 8, 16, 32, 64):
    w, wb = wall(n), wall(n, big, big_order)
    print(f"| {n} | {w:.1f} | {n_cells / w:.2f} | {wall(1) / w:.1f} | {wb:.1f} | "
          f"{len(big) / wb:.2f} | {wall(1, big, big_order) / wb:.1f} |")
