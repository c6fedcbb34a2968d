#!/usr/bin/env bash
# RLT's hit-rate ratio over LRU as a curve of capacity / cycle footprint (docs/results/serve.md,
# "Serve mode", (a2)): GSP in round-robin (worst-case) order, the RLT paper's single-worker
# setting (64 groups x 32 prompts, KVRouting's other defaults), replayed at token granularity
# (block_tokens=1) and at 16-token blocks, RLT seeds 1, 2, 3; and, at 16-token blocks, the
# workload's seeds 2 and 3 with RLT seed 1 (round-robin GSP has the same shape for every seed).
# Usage: studies/rlt_curve.sh OUT_DIR   (run from the source tree; K=build/kvpolicy by default;
# T is not used). Writes the traces and every run's JSON to OUT_DIR and prints the markdown
# table on stdout. About 4 minutes on one core (the token-granularity trace has 6.3 M tokens).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: rlt_curve.sh OUT_DIR}
K=${K:-build/kvpolicy}
K=$(realpath "$K")
mkdir -p "$out"
cd "$out"
rm -f rlt-*.json
log() { echo "+ $*" >&2; "$@" > /dev/null; }
ratios=0.5,0.8,0.9,0.95,0.96,0.965,0.97,0.98,0.99,1.0,1.01,1.05,1.2,1.5
gsp=groups=64,prompts=32,order=round_robin

for B in 1 16; do
  log "$K" trace generate --kind gsp --params $gsp,block_tokens=$B --seed 1 -o gsp-rr-b$B.kvtrace
  log "$K" trace stats -t gsp-rr-b$B.kvtrace --json rlt-stats-b$B.json
  # Cycle footprint F = the blocks of one round-robin cycle (one prompt of every group): all
  # prompts of a group have the same length, so F = block accesses / prompts per group.
  caps=$(python3 - rlt-stats-b$B.json $ratios <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
F = s["block_accesses"] // (s["requests"] // s["sessions"])
print(",".join(str(round(float(r) * F)) for r in sys.argv[2].split(",")))
EOF
)
  for seed in 1 2 3; do
    log "$K" simulate -t gsp-rr-b$B.kvtrace -p lru,rlt -c "$caps" --seed $seed --jobs 1 \
        --json rlt-b$B-seed$seed.json
  done
done
for wseed in 2 3; do
  log "$K" trace generate --kind gsp --params $gsp --seed $wseed -o gsp-rr-b16-w$wseed.kvtrace
  log "$K" simulate -t gsp-rr-b16-w$wseed.kvtrace -p lru,rlt -c "$caps" --seed 1 --jobs 1 \
      --json rlt-b16-workload$wseed.json
done

python3 - "$ratios" <<'EOF'
import json, sys

ratios = [float(r) for r in sys.argv[1].split(",")]

def lines(path):
    return [json.loads(x) for x in open(path) if x.strip()]

def hits(rows, policy):
    return {r["capacity_blocks"]: r["block_hit_rate"] * 100 for r in rows if r["policy"] == policy}

def ratio_text(rlt, lru):
    if lru == 0:
        return "– (both 0)" if rlt == 0 else "∞ (LRU 0)"
    return f"{rlt / lru:.2f}"

for B in (1, 16):
    s = json.load(open(f"rlt-stats-b{B}.json"))
    F = s["block_accesses"] // (s["requests"] // s["sessions"])
    runs = {seed: lines(f"rlt-b{B}-seed{seed}.json") for seed in (1, 2, 3)}
    lru = [hits(runs[seed], "lru") for seed in (1, 2, 3)]
    rlt = [hits(runs[seed], "rlt") for seed in (1, 2, 3)]
    unit = "token" if B == 1 else f"{B}-token block"
    tokens = "" if B == 1 else f" ({F * B:,} tokens)"
    print(f"At {'token granularity' if B == 1 else f'{B}-token blocks'} (block_tokens={B}): "
          f"{s['requests']:,} requests, {s['block_accesses']:,} block accesses; cycle footprint "
          f"F = {s['block_accesses']:,} / {s['requests'] // s['sessions']} = {F:,} {unit}s"
          f"{tokens}. LRU is deterministic (the same for the three runs: "
          f"{'yes' if lru[0] == lru[1] == lru[2] else 'NO'}).\n")
    print("| C / F | capacity (tokens) | LRU % | RLT % mean (min–max), RLT seeds 1–3 "
          "| RLT / LRU mean (min–max) |")
    print("|---|---|---|---|---|")
    for r in ratios:
        c = round(r * F)
        l = lru[0][c]
        xs = [rlt[i][c] for i in range(3)]
        mean = sum(xs) / 3
        if l == 0:
            rt = ratio_text(mean, 0)
        else:
            q = [x / l for x in xs]
            rt = f"{sum(q) / 3:.2f} ({min(q):.2f}–{max(q):.2f})"
        print(f"| {r:g} | {c * B:,} | {l:.2f} | {mean:.2f} ({min(xs):.2f}–{max(xs):.2f}) | {rt} |")
    print()

# The workload's seed: the same trace shape, other token values and arrival times.
base = lines("rlt-b16-seed1.json")
diff = 0.0
for w in (2, 3):
    other = lines(f"rlt-b16-workload{w}.json")
    for a, b in zip(base, other):
        assert a["policy"] == b["policy"] and a["capacity_blocks"] == b["capacity_blocks"]
        diff = max(diff, abs(a["block_hit_rate"] - b["block_hit_rate"]) * 100)
print(f"Workload seeds 2 and 3 (16-token blocks, RLT seed 1) against workload seed 1: largest "
      f"hit-rate difference over every capacity and both policies {diff:.4f} points.")
EOF
