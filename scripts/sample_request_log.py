#!/usr/bin/env python3
"""Writes a synthetic request log as CSV, shaped like a chat service's: a stand-in for your own
log in the README's sizing example (`kvpolicy trace import`, then `kvpolicy mrc`).

Columns: ts_ms (arrival, ms), conversation (id), prompt (the whole prompt text: a shared system
prompt, every earlier turn and answer, the new message), output_tokens. Conversations start as a
Poisson process, have geometric turn counts and exponential think times; words are drawn from a
small vocabulary, so the text tokenizes to a few tokens a word. Deterministic for a seed.

  scripts/sample_request_log.py --out log.csv [--conversations 300] [--seed 1]
"""
import argparse
import csv
import random

WORDS = ("the model cache prefix token request answer user system prompt serving latency memory "
         "block policy engine batch query context window document summary question result data "
         "service cluster worker router queue time rate first last next over under about with").split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--conversations", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    systems = [sentence(rng, rng.randint(150, 400)) for _ in range(4)]
    rows, start = [], 0.0
    for c in range(a.conversations):
        start += rng.expovariate(1 / 2.0)  # a new conversation every 2 s on average
        t, history = start, systems[min(int(rng.expovariate(1.0)), len(systems) - 1)]
        turns = min(1 + int(rng.expovariate(1 / 2.5)), 12)
        for _ in range(turns):
            history += "\nUser: " + sentence(rng, rng.randint(10, 120))
            output = rng.randint(20, 400)
            rows.append((round(t * 1000), f"conv-{c}", history, output))
            history += "\nAssistant: " + sentence(rng, output // 2)
            t += output * 0.02 + rng.expovariate(1 / 60.0)  # decode, then think (mean 60 s)
    rows.sort(key=lambda r: r[0])
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("ts_ms", "conversation", "prompt", "output_tokens"))
        w.writerows(rows)
    print(f"wrote {a.out}: {len(rows)} requests in {a.conversations} conversations")


if __name__ == "__main__":
    main()
