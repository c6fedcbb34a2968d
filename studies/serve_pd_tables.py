#!/usr/bin/env python3
"""Markdown tables of studies/serve_pd_results.sh's runs (docs/results/serve.md, issue 37)."""
import glob
import json
import os
import sys


def rows(pattern):
    out = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def allocation_table(out):
    runs = rows(os.path.join(out, "e-*.json"))
    order = {"whole": 0, "chunked": 1}
    runs.sort(key=lambda r: (r["router"], r["capacity_blocks"], order[r["allocation"]]))
    print("| router | KV GB/GPU | allocation | preemptions | hit % | TTFT mean ms | TTFT p50 | "
          "TTFT p99 | wait mean ms | TPOT mean ms | e2e p99 ms | rejected |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['router']} | {r['capacity_gb']:.0f} | {r['allocation']} | {r['preemptions']} | "
              f"{100 * r['block_hit_rate']:.2f} | {r['ttft_mean_ms']:.1f} | {r['ttft_p50_ms']:.1f} | "
              f"{r['ttft_p99_ms']:.1f} | {r['queue_wait_mean_ms']:.1f} | {r['tpot_mean_ms']:.2f} | "
              f"{r['e2e_p99_ms']:.1f} | {r['rejected']} |")


def pd_table(out):
    runs = rows(os.path.join(out, "f-*.json"))
    runs.sort(key=lambda r: (r["router"] != "least_loaded", r["time_scale"], r["prefill_workers"]))
    print("| router | load (time scale) | deployment | hit % | TTFT mean ms | TTFT p50 | TTFT p99 | "
          "TPOT mean ms | TPOT p99 | e2e p99 ms | req/s | output tok/s | prefill / decode busy % | "
          "KV GB sent | mean transfer ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        if r["prefill_workers"]:
            dep = f"{r['prefill_workers']}P+{r['decode_workers']}D"
            busy = f"{100 * r['prefill_utilisation']:.1f} / {100 * r['decode_utilisation']:.1f}"
            sent = f"{r['kv_bytes_transferred'] / 1e9:.0f}"
            ms = f"{1e3 * r['kv_transfer_seconds'] / max(1, r['kv_transfers']):.1f}"
        else:
            dep = f"{r['workers']} colocated"
            util = [w["utilisation"] for w in r["per_worker"]]
            busy = f"{100 * sum(util) / len(util):.1f} (both)"
            sent, ms = "–", "–"
        print(f"| {r['router']} | {r['time_scale']:g} | {dep} | {100 * r['block_hit_rate']:.2f} | "
              f"{r['ttft_mean_ms']:.1f} | {r['ttft_p50_ms']:.1f} | {r['ttft_p99_ms']:.1f} | "
              f"{r['tpot_mean_ms']:.2f} | {r['tpot_p99_ms']:.2f} | {r['e2e_p99_ms']:.1f} | "
              f"{r['throughput_rps']:.3f} | {r['output_tokens_per_s']:.0f} | {busy} | {sent} | {ms} |")


def main():
    out = sys.argv[1]
    print("(e) allocation\n")
    allocation_table(out)
    print("\n(f) prefill/decode disaggregation\n")
    pd_table(out)


if __name__ == "__main__":
    main()
