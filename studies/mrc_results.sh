#!/usr/bin/env bash
# Regenerates docs/results/mrc.md "Sizing: hit rate and TTFT against capacity": `kvpolicy mrc` on
# the Mooncake conversation trace for LRU (one stack-distance pass, checked against 4 replays)
# and S3-FIFO and WA (replays at the same 40 capacities), with the capacity each needs for a
# 30 % block hit rate, and the figure docs/figures/mrc-mooncake.png.
# Usage: studies/mrc_results.sh OUT_DIR [FIGURES_DIR]   (K=build/kvpolicy, T=../shared/traces
# by default). Writes JSON, CSV and the PNG (into FIGURES_DIR, default OUT_DIR) and prints the
# markdown on stdout. About a minute on 2 cores.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: mrc_results.sh OUT_DIR [FIGURES_DIR]}
K=${K:-build/kvpolicy}
T=${T:-../shared/traces}
K=$(realpath "$K")
T=$(realpath "$T")
M=$T/mooncake-conversation/conversation_trace.jsonl
for f in "$K" "$M"; do
  [[ -e $f ]] || { echo "missing: $f" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
fig=${2:-$out}
mkdir -p "$fig"
fig=$(cd "$fig" && pwd)
cd "$out"

plot=()
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
  plot=(--plot "$fig/mrc-mooncake.png")
else
  echo "(no matplotlib: figure skipped; apt-get install python3-matplotlib)" >&2
fi
cmd=(mrc -t "$M" -p lru,s3fifo,wa --points 40 --max 100% --target-hit 30% --check-lru 4
     --jobs 2 --json mrc-mooncake.jsonl --csv mrc-mooncake.csv)
echo "+ kvpolicy ${cmd[*]}" >&2
"$K" "${cmd[@]}" "${plot[@]+"${plot[@]}"}" > mrc-mooncake.txt

echo "    kvpolicy mrc -t \$T/mooncake-conversation/conversation_trace.jsonl -p lru,s3fifo,wa \\"
echo "        --points 40 --max 100% --target-hit 30% --check-lru 4 --plot mrc-mooncake.png"
echo
grep -E '^(KV per block|TTFT:|lru one-pass)' mrc-mooncake.txt | sed 's/^/    /'
echo
python3 - mrc-mooncake.jsonl << 'EOF'
import json, sys

points, targets = {}, []
for line in open(sys.argv[1]):
    r = json.loads(line)
    label = r["policy"] + (":" + r["params"] if r["params"] else "")
    if r["kind"] == "target":
        targets.append((label, r))
    else:
        points.setdefault(label, {})[r["capacity_blocks"]] = r
names = list(points)
def gb(x):  # as kvpolicy mrc prints it: about three significant digits, no exponent
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 1 else f"{x:.3g}"
caps = sorted(points[names[0]])
# Every 4th of the 40 capacities, and the largest.
shown = caps[::4] + ([caps[-1]] if (len(caps) - 1) % 4 else [])
print("| GB of KV | blocks | " + " | ".join(f"{n} block %" for n in names) +
      " | lru token % | lru TTFT mean ms | lru TTFT P99 ms | "
      + " | ".join(f"{n} TTFT P99 ms" for n in names[1:]) + " |")
print("|" + "---:|" * (5 + 2 * len(names) - 1))
for c in shown:
    lru = points["lru"][c]
    cells = [gb(lru['capacity_gb']), f"{c:,}"]
    cells += [f"{points[n][c]['block_hit_rate'] * 100:.2f}" for n in names]
    cells += [f"{lru['token_hit_rate'] * 100:.2f}", f"{lru['ttft_mean_ms']:.1f}",
              f"{lru['ttft_p99_ms']:.1f}"]
    cells += [f"{points[n][c]['ttft_p99_ms']:.1f}" for n in names[1:]]
    print("| " + " | ".join(cells) + " |")
print()
print("| policy | capacity for 30 % block hits | blocks | hit rate there | how |")
print("|---|---:|---:|---:|---|")
for label, t in targets:
    how = "exact (stack distances)" if t["method"] == "exact" else \
        f"bisection, {t['replays']} extra replays" + \
        ("; curve not monotone" if t["non_monotone"] else "")
    if t["capacity_blocks"] is None:
        print(f"| {label} | not reached | - | {t['block_hit_rate'] * 100:.2f} % (best) | {how} |")
    else:
        print(f"| {label} | {gb(t['capacity_gb'])} GB | {t['capacity_blocks']:,} | "
              f"{t['block_hit_rate'] * 100:.2f} % | {how} |")
EOF
echo
grep -E 'block hit rate (needs|not reached|is out of reach)' mrc-mooncake.txt | sed 's/^/    /'
