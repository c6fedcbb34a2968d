#!/usr/bin/env python3
"""Merge Alibaba-schema JSONL traces (e.g. several `kvpolicy trace build --out X.jsonl`) into one,
keeping chat ids unique per input and ordering requests by timestamp.

  python3 studies/merge_bailian.py OUT.jsonl IN1.jsonl IN2.jsonl ...
"""
import json
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, inputs = sys.argv[1], sys.argv[2:]
    rows, offset = [], 0
    for path in inputs:
        top = 0
        with open(path) as f:
            for line_no, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    top = max(top, r["chat_id"])
                    r["chat_id"] += offset
                    if r["parent_chat_id"] >= 0:
                        r["parent_chat_id"] += offset
                except (ValueError, KeyError, TypeError) as e:
                    sys.exit(f"{path}:{line_no}: {e}")
                r.pop("session", None)
                r.pop("continues", None)
                rows.append(r)
        offset += top + 1
    rows.sort(key=lambda r: (r["timestamp"], r["chat_id"]))
    with open(out, "w") as f:
        for r in rows:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
