#!/usr/bin/env python3
"""Writes a synthetic request log, shaped like a chat service's: a stand-in for your own log in
the README's sizing example (`kvpolicy trace import`, then `kvpolicy mrc`).

--format csv (default): columns ts_ms (arrival, ms), conversation (id), prompt (the whole prompt
text: a shared system prompt, every earlier turn and answer, the new message), output_tokens.

--format openai-chat: one JSON line per request as a gateway logs OpenAI chat completions
(docs/formats.md, "Presets"): id (request id), created (ISO 8601, UTC), conversation_id, model,
messages (system, then every earlier user and assistant turn, then the new user message) and
usage {prompt_tokens: 0 (not counted here), completion_tokens}. Import it with
`kvpolicy trace import --preset openai-chat`.

Conversations start as a Poisson process, have geometric turn counts and exponential think
times; words are drawn from a small vocabulary, so the text tokenizes to a few tokens a word.
Deterministic for a seed.

  scripts/sample_request_log.py --out log.csv [--format csv|openai-chat] [--conversations 300]
                                [--seed 1]
"""
import argparse
import csv
import datetime
import json
import random

WORDS = ("the model cache prefix token request answer user system prompt serving latency memory "
         "block policy engine batch query context window document summary question result data "
         "service cluster worker router queue time rate first last next over under about with").split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def conversations(rng, count):
    """Each request as (time_s, conversation, system, [(user, answer), ...] so far, output)."""
    systems = [sentence(rng, rng.randint(150, 400)) for _ in range(4)]
    rows, start = [], 0.0
    for c in range(count):
        start += rng.expovariate(1 / 2.0)  # a new conversation every 2 s on average
        t, system = start, systems[min(int(rng.expovariate(1.0)), len(systems) - 1)]
        turns = min(1 + int(rng.expovariate(1 / 2.5)), 12)
        history = []
        for _ in range(turns):
            user = sentence(rng, rng.randint(10, 120))
            output = rng.randint(20, 400)
            answer = sentence(rng, output // 2)
            rows.append((t, c, system, history + [(user, None)], output))
            history = history + [(user, answer)]
            t += output * 0.02 + rng.expovariate(1 / 60.0)  # decode, then think (mean 60 s)
    rows.sort(key=lambda r: r[0])
    return rows


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("ts_ms", "conversation", "prompt", "output_tokens"))
        for t, c, system, turns, output in rows:
            text = system
            for user, answer in turns:
                text += "\nUser: " + user
                if answer is not None:
                    text += "\nAssistant: " + answer
            w.writerow((round(t * 1000), f"conv-{c}", text, output))


def write_openai_chat(path, rows):
    epoch = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    with open(path, "w") as f:
        for n, (t, c, system, turns, output) in enumerate(rows):
            messages = [{"role": "system", "content": system}]
            for user, answer in turns:
                messages.append({"role": "user", "content": user})
                if answer is not None:
                    messages.append({"role": "assistant", "content": answer})
            created = epoch + datetime.timedelta(milliseconds=round(t * 1000))
            line = {
                "id": f"chatcmpl-{n:06d}",
                "created": created.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "conversation_id": f"conv-{c}",
                "model": "sample-model",
                "messages": messages,
                "usage": {"prompt_tokens": 0, "completion_tokens": output},
            }
            f.write(json.dumps(line) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--format", choices=("csv", "openai-chat"), default="csv")
    ap.add_argument("--conversations", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rows = conversations(random.Random(a.seed), a.conversations)
    (write_csv if a.format == "csv" else write_openai_chat)(a.out, rows)
    print(f"wrote {a.out}: {len(rows)} requests in {a.conversations} conversations")


if __name__ == "__main__":
    main()
