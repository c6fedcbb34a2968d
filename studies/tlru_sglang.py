#!/usr/bin/env python3
"""SGLang's upstream T-LRU (tlru_tokens) against kvpolicy's T-LRU family on two traces.

Regenerates docs/results/tlru-sglang.md. Each trace is cut in two halves by arrival order
(half A tunes, half B reports). On half A the threshold of tlru_tokens (tokens, with its
next_prompt_estimate) and tlru's xi_ms are each chosen from a fixed grid for the lowest mean
SLO-violation share over the capacities; half B then reports every policy at its defaults and
at the values tuned on A. Usage (from the source tree):

    python3 studies/tlru_sglang.py OUT_DIR   # K=build/kvpolicy, T=../shared/traces by default

Writes the halves and every run's JSON to OUT_DIR, the markdown tables on stdout.
"""
import json
import os
import subprocess
import sys

K = os.path.realpath(os.environ.get("K", "build/kvpolicy"))
T = os.path.realpath(os.environ.get("T", "../shared/traces"))

TLRU_XI = [100, 200, 500, 1000, 2000, 4000]  # tlru xi_ms grid
TOKENS_THRESHOLD = [512, 1500, 4096, 8192, 16384, 32768]  # tlru_tokens threshold grid
TOKENS_QHAT = [300, 1000]  # tlru_tokens next_prompt_estimate grid

TRACES = {
    # name: (JSONL file (built if missing), capacities, SLO = TEL's xi in ms, cost-model flags)
    "mooncake": ("mooncake.jsonl", "0.02,0.05,0.1", 2000, []),
    "arena": ("arena.jsonl", "0.05,0.1,0.2", 200, ["--model", "qwen2.5-32b", "--gpu", "a100-80gb"]),
}


def run(cmd):
    print("+ " + " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def halves(out, name, src):
    lines = open(src).read().splitlines(keepends=True)
    cut = len(lines) // 2
    paths = []
    for half, part in (("a", lines[:cut]), ("b", lines[cut:])):
        path = os.path.join(out, f"{name}_{half}.jsonl")
        with open(path, "w") as f:
            f.writelines(part)
        paths.append(path)
    return paths


def simulate(out, trace, caps, slo, cost, specs, tag):
    path = os.path.join(out, f"{tag}.json")
    if os.path.exists(path):
        os.remove(path)
    run([K, "simulate", "-t", trace, "-c", caps, "-p", ",".join(specs), "--slo", str(slo),
         "--xi", str(slo), "--json", path, "-j", "2"] + cost)
    rows = [json.loads(line) for line in open(path)]
    by = {}
    for r in rows:
        label = r["policy"] + (":" + r["params"] if r["params"] else "")
        by.setdefault(label, []).append(r)
    return by


def mean_slo(rows):
    return sum(r["slo_violation_rate"] for r in rows) / len(rows)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
    os.makedirs(out, exist_ok=True)
    mooncake = os.path.join(T, "mooncake-conversation/conversation_trace.jsonl")
    arena = os.path.join(out, "arena.jsonl")
    if not os.path.exists(arena):
        run([K, "trace", "build", "--source", "chatbot-arena", "-i",
             os.path.join(T, "chatbot-arena/chatbot_arena_conversations_raw.jsonl"), "-o", arena])
    sources = {"mooncake": mooncake, "arena": arena}
    for name, (_, caps, slo, cost) in TRACES.items():
        a, b = halves(out, name, sources[name])
        grid = [f"tlru:xi_ms={x}" for x in TLRU_XI]
        grid += [f"tlru_tokens:threshold={t},next_prompt_estimate={q}"
                 for t in TOKENS_THRESHOLD for q in TOKENS_QHAT]
        tune = simulate(out, a, caps, slo, cost, grid, f"{name}_tune")
        best_tlru = min((k for k in tune if k.startswith("tlru:")), key=lambda k: mean_slo(tune[k]))
        best_tok = min((k for k in tune if k.startswith("tlru_tokens:")),
                       key=lambda k: mean_slo(tune[k]))
        xi = best_tlru.split("=")[1]
        print(f"\n#### {name}: tuning on half A ({a}), SLO {slo} ms, capacities {caps}\n")
        print("| spec | mean SLO violations, half A |\n|---|---|")
        for k in grid:
            mark = " **(chosen)**" if k in (best_tlru, best_tok) else ""
            print(f"| `{k}`{mark} | {100 * mean_slo(tune[k]):.2f} % |")
        specs = ["lru", "threshold_lru", "tlru", best_tlru, f"tlru_length:xi_ms={xi}",
                 "tlru_tokens", best_tok]
        rep = simulate(out, b, caps, slo, cost, specs, f"{name}_report")
        order = list(dict.fromkeys(r["capacity_fraction"] for rows in rep.values() for r in rows))
        print(f"\n#### {name}: half B ({b}), reported\n")
        head = " | ".join(f"{100 * c:g} %: hit / p90 / p99 / SLO" for c in order)
        print(f"| policy | {head} |\n|---|" + "---|" * len(order))
        for k in specs:
            key = k if k in rep else k.split(":")[0]
            cells = []
            for c in order:
                r = next(r for r in rep[key] if r["capacity_fraction"] == c)
                cells.append(f"{100 * r['block_hit_rate']:.2f} % / {r['ttft_p90_ms']:.0f} / "
                             f"{r['ttft_p99_ms']:.0f} / {100 * r['slo_violation_rate']:.2f} %")
            print(f"| `{k}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
