#!/usr/bin/env bash
# Regenerates the table of docs/results/serve.md, "P/D second pass: decode caches and layer-wise
# transfer" (issue 37): on Mooncake's conversation trace (4P+4D and 6P+2D, 40 GB of KV a GPU,
# least_loaded in front of the prefill pool) and on a generated conversation trace (800
# sessions, 2P+2D, 10 GB, cache_aware in front, rescaled to 8 req/s): --decode-cache off|on x
# --decode-router least_loaded|cache_aware x --kv-transfer after-prefill|layerwise.
# Usage: studies/serve_pd_cache37.sh OUT_DIR
# Writes every run's JSON to OUT_DIR and prints the markdown table. Every run uses --jobs 1.
# Environment: KVPOLICY (the binary, default build/kvpolicy), KVPOLICY_DATA (default
# ../shared/traces beside the source tree).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: serve_pd_cache37.sh OUT_DIR}
REQUIRE=()
source "$src/studies/serve_env.sh"
"$K" trace generate --kind conversation --params sessions=800 --out conv.kvtrace > /dev/null

for dc in off on; do
  for dr in least_loaded cache_aware; do
    for x in after-prefill layerwise; do
      for pd in 4:4 6:2; do
        p=${pd%:*} d=${pd#*:}
        log "$K" serve -t "$M" -f mooncake --gpu h100 -p lru -w 8 -r least_loaded -c 40GB \
          --prefill-workers $p --decode-workers $d --decode-router $dr --decode-cache $dc \
          --kv-transfer $x --jobs 1 --json "mooncake-${p}P${d}D-$dc-$dr-$x.json"
      done
      log "$K" serve -t conv.kvtrace --gpu h100 -p lru -w 4 -r cache_aware -c 10GB --rate 8 \
        --prefill-workers 2 --decode-workers 2 --decode-router $dr --decode-cache $dc \
        --kv-transfer $x --jobs 1 --json "conversation-2P2D-$dc-$dr-$x.json"
    done
  done
done

python3 - "$out" << 'PY'
import glob, json, os, sys
runs = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    with open(path) as f:
        runs += [(os.path.basename(path).split("-")[0], json.loads(l)) for l in f if l.strip()]
runs.sort(key=lambda t: (t[0], t[1]["prefill_workers"], t[1]["decode_cache"],
                         t[1]["decode_router"], t[1]["kv_transfer"]))
print("| trace | deployment | decode cache | decode router | transfer | hit % | TTFT mean ms | "
      "TTFT p99 | TPOT mean ms | TPOT p99 | e2e p99 ms | KV GB sent | decode-held blocks % | "
      "mean transfer ms | preemptions |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for trace, r in runs:
    blocks = r["kv_blocks_transferred"] + r["decode_hit_blocks"]
    held = 100 * r["decode_hit_blocks"] / blocks if blocks else 0
    mean_ms = 1e3 * r["kv_transfer_seconds"] / r["kv_transfers"] if r["kv_transfers"] else 0
    print(f"| {trace} | {r['prefill_workers']}P+{r['decode_workers']}D | "
          f"{'on' if r['decode_cache'] else 'off'} | {r['decode_router']} | {r['kv_transfer']} | "
          f"{100 * r['block_hit_rate']:.2f} | {r['ttft_mean_ms']:.1f} | {r['ttft_p99_ms']:.1f} | "
          f"{r['tpot_mean_ms']:.2f} | {r['tpot_p99_ms']:.2f} | {r['e2e_p99_ms']:.1f} | "
          f"{r['kv_bytes_transferred'] / 1e9:.0f} | {held:.1f} | {mean_ms:.2f} | "
          f"{r['preemptions']} |")
PY
