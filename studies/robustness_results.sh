#!/usr/bin/env bash
# Regenerates docs/results/robustness.md: block hit rate of LRU, FPB, HF, LARU,
# LARU induced=chain and Belady as the noisy oracle's adversarial corruption probability p goes
# 0:1:0.1, at 2, 5 and 10 % of the unique blocks, under both noise models (redraw=request, the
# paper's sync mode and the default; redraw=access, the persistent adversary), then LARU's
# counters at 2 % (why it falls below LRU). Writes JSON to OUT_DIR, prints markdown on stdout.
# Usage: studies/robustness_results.sh OUT_DIR. Env: K (binary, default build/kvpolicy),
# T (trace directory, default ../shared/traces). The redraw runs take about 10 minutes.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: robustness_results.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$src"
K=${K:-build/kvpolicy}
T=${T:-../shared/traces}
TRACE=$T/mooncake-conversation/conversation_trace.jsonl
POLICIES=lru,fpb,hf,laru,laru:induced=chain,belady
for redraw in request access; do
  echo "\$ kvpolicy study robustness -t $TRACE -c 0.02,0.05,0.1 -n 0:1:0.1 -p $POLICIES" \
    "--redraw $redraw --json robustness-$redraw.jsonl" >&2
  "$K" study robustness -t "$TRACE" -c 0.02,0.05,0.1 -n 0:1:0.1 -p "$POLICIES" --redraw "$redraw" \
    --json "$out/robustness-$redraw.jsonl" > "$out/robustness-$redraw.txt" 2> /dev/null
done
python3 - "$out" "$POLICIES" <<'PY'
import json, sys
out, policies = sys.argv[1], sys.argv[2].split(",")
label = {"laru:induced=chain": "laru chain"}
rows = {}
for redraw in ("request", "access"):
    for line in open(f"{out}/robustness-{redraw}.jsonl"):
        r = json.loads(line)
        rows[(redraw, r["capacity_fraction"], r["noise"], r["policy"])] = r
caps = sorted({k[1] for k in rows})
noise = sorted({k[2] for k in rows})
for cap in caps:
    blocks = next(r["capacity_blocks"] for k, r in rows.items() if k[1] == cap)
    print(f"\n#### {cap * 100:g} % of unique blocks ({blocks} blocks), block hit %\n")
    head = ["p"] + [f"{label.get(p, p)} ({m})" for m in ("request", "access") for p in policies
                    if not (m == "access" and p in ("lru", "belady"))]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for p in noise:
        cells = [f"{p:.1f}"]
        for m in ("request", "access"):
            for pol in policies:
                if m == "access" and pol in ("lru", "belady"):
                    continue
                cells.append(f"{rows[(m, cap, p, pol)]['block_hit_rate'] * 100:.2f}")
        print("| " + " | ".join(cells) + " |")
stats = ["phases", "prediction_evictions", "full_trust_evictions", "prediction_induced_misses",
         "induced_chains", "lambda_halvings", "lru_evictions"]
for redraw in ("request", "access"):
    print(f"\n#### LARU's counters at 2 %, redraw={redraw}\n")
    head = ["p", "policy", "hit %", "lru hit %"] + stats
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for p in noise:
        for pol in ("laru", "laru:induced=chain"):
            r = rows[(redraw, 0.02, p, pol)]
            s = r["policy_stats"]
            lru = rows[(redraw, 0.02, p, "lru")]["block_hit_rate"]
            print(f"| {p:.1f} | {label.get(pol, pol)} | {r['block_hit_rate'] * 100:.2f} | "
                  f"{lru * 100:.2f} | " + " | ".join(f"{s[k]:.0f}" for k in stats) + " |")
secs = {}
for k, r in rows.items():
    secs[(k[0], k[1])] = secs.get((k[0], k[1]), 0) + r["replay_seconds"]
print("\nReplay seconds per capacity (all policies and noise levels): " +
      ", ".join(f"{m} {c * 100:g} %: {s:.0f}" for (m, c), s in sorted(secs.items())))
PY
