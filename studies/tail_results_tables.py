#!/usr/bin/env python3
"""Markdown tables of one `kvpolicy study tail` run (docs/results/tail.md, "Tail latency").

Usage: tail_results_tables.py TITLE MODEL.json [--linear LINEAR.json] [--oracle-linear SIM.json]
                              [--tables baselines,t1,t2,slo,fig]

MODEL.json is `kvpolicy study tail --json` with the default calibration (the budget from the cost
model's prefill time); LINEAR.json the same study with `--tlru-params calibration=linear`;
SIM.json `kvpolicy simulate --json` of the oracle variants with calibration=linear, added to the
Figure 5 table. Changes are (T-LRU - baseline) / baseline in percent, negative = T-LRU lower.
"""
import argparse
import json
import math


def load(path):
    with open(path) as f:
        return json.load(f)


def pct(v):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v * 100:+.1f}"


def cap_label(run):
    frac = run.get("capacity_fraction")
    blocks = f"{run['capacity_blocks']:,}"
    return f"{frac * 100:g} % ({blocks})" if frac is not None else blocks


def xis(study):
    out = []
    for c in study["changes"]:
        if c["xi_ms"] not in out:
            out.append(c["xi_ms"])
    return out


def changes_by(study):
    return {(c["capacity_blocks"], c["xi_ms"]): c for c in study["changes"]}


def capacity_rows(study):
    """(capacity blocks, label) in the study's order, from the Figure 5 rows."""
    rows = []
    for row in study["figure"]:
        lru = next(r for r in study["runs"] if r["capacity_blocks"] == row["capacity_blocks"]
                   and r["policy"] == "lru")
        rows.append((row["capacity_blocks"], cap_label(lru)))
    return rows


def run_of(study, blocks, policy, params=None):
    for r in study["runs"]:
        if r["capacity_blocks"] == blocks and r["policy"] == policy and \
                (params is None or r["params"] == params):
            return r
    return None


def baselines(study):
    print(f"Baselines, TTFT ms P50 / P90 / P95 / P99 and share over {study['slo_ms']:g} ms:\n")
    print("| capacity (blocks) | LRU | Threshold-LRU |")
    print("|---|---|---|")
    for blocks, label in capacity_rows(study):
        cells = []
        for policy in ("lru", "threshold_lru"):
            r = run_of(study, blocks, policy)
            cells.append(f"{r['ttft_p50_ms']:,.0f} / {r['ttft_p90_ms']:,.0f} / "
                         f"{r['ttft_p95_ms']:,.0f} / {r['ttft_p99_ms']:,.0f}, "
                         f"{r['slo_violation_rate'] * 100:.2f} %")
        print(f"| {label} | {cells[0]} | {cells[1]} |")
    print()


def percentile_table(study, vs):
    name = "LRU" if vs == "lru" else "Threshold-LRU"
    print(f"T-LRU vs {name}, P90 / P95 / P99 change in %:\n")
    grid = xis(study)
    print("| capacity (blocks) | " + " | ".join(f"xi {x:g}" for x in grid) + " |")
    print("|---" * (len(grid) + 1) + "|")
    ch = changes_by(study)
    for blocks, label in capacity_rows(study):
        cells = [" / ".join(pct(ch[(blocks, x)][f"p{p}_vs_{vs}"]) for p in (90, 95, 99))
                 for x in grid]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()


def slo_table(study, linear):
    slo = study["slo_ms"]
    if linear:
        print(f"Requests over the {slo:g} ms SLO, T-LRU vs LRU in %: **calibration=model** "
              "(the default) / calibration=linear (the earlier rule); TEL(xi) vs LRU, model, "
              "in brackets:\n")
    else:
        print(f"Requests over the {slo:g} ms SLO, T-LRU vs LRU / vs Threshold-LRU in % "
              "(TEL(xi) vs LRU in brackets):\n")
    grid = xis(study)
    print("| capacity (blocks) | " + " | ".join(f"xi {x:g}" for x in grid) + " |")
    print("|---" * (len(grid) + 1) + "|")
    ch = changes_by(study)
    lch = changes_by(linear) if linear else None
    for blocks, label in capacity_rows(study):
        cells = []
        for x in grid:
            c = ch[(blocks, x)]
            if linear:
                cells.append(f"**{pct(c['slo_vs_lru'])}** / {pct(lch[(blocks, x)]['slo_vs_lru'])}"
                             f" ({pct(c['tel_vs_lru'])})")
            else:
                cells.append(f"{pct(c['slo_vs_lru'])} / {pct(c['slo_vs_threshold'])}"
                             f" ({pct(c['tel_vs_lru'])})")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()


def figure(study, linear, oracle_linear):
    print(f"Figure 5 (T-LRU variants at xi = {study['figure_xi_ms']:g} ms), TTFT ms P50 / P90 / "
          f"P95 / P99, share over {study['slo_ms']:g} ms, block hit rate:\n")
    print("| capacity (blocks) | policy | calibration | P50 / P90 / P95 / P99 | SLO % | hit % |")
    print("|---|---|---|---|---|---|")

    def line(label, r, calibration):
        print(f"| {label} | {r['policy']} | {calibration} | {r['ttft_p50_ms']:,.1f} / "
              f"{r['ttft_p90_ms']:,.1f} / {r['ttft_p95_ms']:,.1f} / {r['ttft_p99_ms']:,.1f} | "
              f"{r['slo_violation_rate'] * 100:.2f} | {r['block_hit_rate'] * 100:.2f} |")

    sims = load_lines(oracle_linear) if oracle_linear else []
    for row in study["figure"]:
        blocks = row["capacity_blocks"]
        first = True
        for p in row["policies"]:
            r = run_of(study, blocks, p["policy"], p["params"])
            tail_aware = "xi_ms" in r["params"]
            label = cap_label(r) if first else ""
            line(label, r, "model" if tail_aware else "–")
            first = False
            if p["policy"] == "tlru" and linear:
                lr = run_of(linear, blocks, "tlru",
                            f"xi_ms={study['figure_xi_ms']:g},calibration=linear")
                line("", lr, "linear")
            for s in sims:
                if s["capacity_blocks"] == blocks and s["policy"] == p["policy"] and \
                        "calibration=linear" in s["params"]:
                    line("", s, "linear")
    print()


def load_lines(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("title")
    ap.add_argument("model")
    ap.add_argument("--linear")
    ap.add_argument("--oracle-linear")
    ap.add_argument("--tables", default="baselines,t1,t2,slo,fig")
    a = ap.parse_args()
    study = load(a.model)
    linear = load(a.linear) if a.linear else None
    print(f"#### {a.title}\n")
    print(f"Trace {study['trace']}, cost model {study['cost_model']}.\n")
    for t in a.tables.split(","):
        if t == "baselines":
            baselines(study)
        elif t == "t1":
            percentile_table(study, "lru")
        elif t == "t2":
            percentile_table(study, "threshold")
        elif t == "slo":
            slo_table(study, linear)
        elif t == "fig":
            figure(study, linear, a.oracle_linear)
        else:
            raise SystemExit(f"unknown table {t}")


if __name__ == "__main__":
    main()
