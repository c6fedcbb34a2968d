#!/usr/bin/env bash
# Regenerates the tables of docs/results/serve.md, section "Chunked allocation and
# prefill/decode disaggregation" (issue 37):
#   (e) chunked vs whole allocation on Mooncake, 8 workers, small KV memories
#   (f) P/D pools (2P+6D, 4P+4D, 6P+2D) against 8 colocated workers, at two loads
# Usage: studies/serve_pd_results.sh OUT_DIR
# Writes every run's JSON to OUT_DIR and prints the markdown tables
# (studies/serve_pd_tables.py). Every run uses --jobs 1; a few seconds a run.
# Environment: KVPOLICY (the binary, default build/kvpolicy), KVPOLICY_DATA (default
# ../shared/traces beside the source tree).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: serve_pd_results.sh OUT_DIR}
REQUIRE=()
source "$src/studies/serve_env.sh"
common=(-t "$M" -f mooncake --gpu h100 -p lru --jobs 1)

# (e) allocation: 8 workers, 10 and 20 GB of KV a GPU, two routers.
for a in whole chunked; do
  for r in least_loaded cache_aware; do
    log "$K" serve "${common[@]}" -w 8 -r $r -c 10GB,20GB --allocation $a --json "e-$a-$r.json"
  done
done

# (f) P/D with the same 8 GPUs (40 GB of KV each), least_loaded or cache_aware in front of the
# prefill pool (least_loaded in front of the decode pool), at the trace's rate and at half of it.
for r in least_loaded cache_aware; do
  for ts in 1 2; do
    log "$K" serve "${common[@]}" -w 8 -r $r -c 40GB --time-scale $ts --json "f-$r-ts$ts-8.json"
    for pd in 2:6 4:4 6:2; do
      p=${pd%:*} d=${pd#*:}
      log "$K" serve "${common[@]}" -w 8 -r $r -c 40GB --time-scale $ts \
        --prefill-workers "$p" --decode-workers "$d" --json "f-$r-ts$ts-${p}p${d}d.json"
    done
  done
done

python3 "$src/studies/serve_pd_tables.py" "$out"
