#!/usr/bin/env python3
"""The bad-input and fault campaign (ctest CliFaultCampaign; docs/results.md, "Faults").

Runs the kvpolicy binary on classes of crafted inputs and faults and sorts every run by outcome:
a clear error (a failing exit whose message names the file, and no "internal error"), skipped and
counted (--skip-bad-lines: exit 0 and the bad records counted), or accepted correctly (exit 0 with
the statistics of the clean input the variant means the same as). Anything else (a crash, a hang,
an unclear error, a bad input accepted, a wrong number) is a failure, and the script exits 1.

Usage: fault_campaign.py KVPOLICY [--table OUT.md]
"""
import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 60
# Fields of `trace stats --json` that describe the run, not the trace.
RUN_FIELDS = {"load_seconds", "file_bytes"}

JSONL_GOOD = {
    "mooncake": [
        {"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]},
        {"timestamp": 10, "input_length": 1500, "output_length": 7, "hash_ids": [0, 1, 2]},
        {"timestamp": 25, "input_length": 600, "output_length": 9, "hash_ids": [0, 3]},
    ],
    "bailian": [
        {"chat_id": 1, "parent_chat_id": -1, "timestamp": 0.5, "input_length": 20,
         "output_length": 4, "type": "text", "turn": 1, "hash_ids": [0, 1]},
        {"chat_id": 2, "parent_chat_id": 1, "timestamp": 3, "input_length": 30,
         "output_length": 4, "type": "text", "turn": 2, "hash_ids": [0, 1]},
        {"chat_id": 3, "parent_chat_id": -1, "timestamp": 4, "input_length": 20,
         "output_length": 2, "type": "image", "turn": 1, "hash_ids": [5, 6]},
    ],
    "lmbench": [
        {"timestamp": "1000", "input_length": 300, "output_length": 3, "hash_ids": [0, 1]},
        {"timestamp": "2000", "input_length": 300, "output_length": 4, "hash_ids": [0, 2]},
        {"timestamp": "5000", "input_length": 300, "output_length": 5, "hash_ids": [0, 3]},
    ],
}
# Values no field of these formats takes, and what each should be rejected as.
BAD_VALUES = [
    ("string", '"x"'), ("null", "null"), ("negative", "-7"), ("fraction", "1.5"),
    ("huge", "1e300"), ("2^64", "18446744073709551616"), ("array", "[1]"), ("object", "{}"),
    ("true", "true"),
]
BAD_NUMBERS = ["nan", "inf", "-inf", "-1", "1e300", "", "abc", "0x10", "1e19"]


class Campaign:
    def __init__(self, kvpolicy, work):
        self.k = kvpolicy
        self.work = work
        self.rows = collections.OrderedDict()  # class -> Counter of outcomes
        self.failures = []
        self.n = 0

    def path(self, name, data):
        self.n += 1
        p = os.path.join(self.work, f"{self.n:05d}-{name}")
        with open(p, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return p

    def run(self, args, **kw):
        try:
            p = subprocess.run([self.k] + args, capture_output=True, timeout=TIMEOUT_S,
                               cwd=self.work, **kw)
            return p.returncode, p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            return "hang", ""

    def stats(self, file, fmt, skip=False):
        out = os.path.join(self.work, "stats.json")
        if os.path.exists(out):
            os.remove(out)
        args = ["trace", "stats", "-t", file, "-f", fmt, "--json", out]
        rc, err = self.run(args + (["--skip-bad-lines"] if skip else []))
        data = None
        if rc == 0:
            with open(out) as f:
                data = {k: v for k, v in json.load(f).items() if k not in RUN_FIELDS}
        return rc, err, data

    def record(self, cls, outcome, case, detail=""):
        self.rows.setdefault(cls, collections.Counter())[outcome] += 1
        if outcome.startswith("FAIL"):
            self.failures.append(f"{cls}: {case}: {outcome} {detail}".strip())

    def judge_error(self, cls, case, rc, err, file):
        """A bad input: a failing exit whose message names the file."""
        if rc == "hang":
            self.record(cls, "FAIL hang", case)
        elif rc < 0 or rc >= 128:
            self.record(cls, "FAIL crash", case, f"(exit {rc})")
        elif rc == 0:
            self.record(cls, "FAIL accepted a bad input", case)
        elif "internal error" in err or os.path.basename(file) not in err:
            self.record(cls, "FAIL unclear error", case, err.strip()[:200])
        else:
            self.record(cls, "clear error", case)

    # --- JSONL formats -------------------------------------------------------------------
    def jsonl(self, fmt):
        good = JSONL_GOOD[fmt]
        text = "".join(json.dumps(r) + "\n" for r in good)
        ref = self.stats(self.path(f"{fmt}.jsonl", text), fmt)[2]
        assert ref, f"the clean {fmt} file does not read"
        cls = f"{fmt}: a bad field in one record"
        for field in good[1]:
            variants = [("missing", None)] + BAD_VALUES + [("duplicate", "dup")]
            for name, value in variants:
                rec = dict(good[1])
                if value is None:
                    del rec[field]
                    line = json.dumps(rec)
                elif value == "dup":
                    line = json.dumps(rec)[:-1] + f', "{field}": {json.dumps(rec[field])}}}'
                else:
                    line = json.dumps(rec).replace(
                        f'"{field}": {json.dumps(rec[field])}', f'"{field}": {value}')
                if line == json.dumps(rec) or self.acceptable(fmt, field, name):
                    continue
                lines = [json.dumps(good[0]), line, json.dumps(good[2])]
                self.bad_line(cls, fmt, f"{field}={name}", lines, ref)
        cls = f"{fmt}: a malformed line"
        malformed = {
            "truncated": json.dumps(good[1])[:25], "trailing comma": json.dumps(good[1])[:-1] + ",}",
            "single quotes": json.dumps(good[1]).replace('"', "'"), "not an object": "[1, 2]",
            "binary": "\x00\x01\xff garbage", "NaN literal": json.dumps(good[1]).replace(
                json.dumps(good[1]["output_length"]), "NaN", 1),
        }
        for name, line in malformed.items():
            self.bad_line(cls, fmt, name, [json.dumps(good[0]), line, json.dumps(good[2])], ref)
        cls = f"{fmt}: the same trace written differently"
        same = {
            "CRLF": text.replace("\n", "\r\n"), "BOM": "\ufeff" + text,
            "no final newline": text.rstrip("\n"),
            "keys reordered": "".join(json.dumps(dict(reversed(list(r.items())))) + "\n"
                                      for r in good),
            "unknown field": "".join(json.dumps({**r, "extra": [1, {"a": None}]}) + "\n"
                                     for r in good),
            "spaces": "".join(json.dumps(r, indent=None, separators=(" , ", " : ")) + "\n"
                              for r in good),
        }
        for name, variant in same.items():
            rc, err, data = self.stats(self.path(f"{fmt}-same.jsonl", variant), fmt)
            if rc != 0:
                self.record(cls, "FAIL rejected a good input", name, err.strip()[:200])
            elif data != ref:
                self.record(cls, "FAIL wrong statistics", name)
            else:
                self.record(cls, "accepted correctly", name)

    @staticmethod
    def acceptable(fmt, field, name):
        # Values that are right for their field, so not bad inputs.
        if field == "timestamp" and name in ("fraction",):
            return True
        if fmt == "lmbench" and field == "hash_ids" and name == "array":
            return True  # the file does not state its block size, so any count of blocks fits
        if field == "type" and name == "string":
            return True
        return False

    def bad_line(self, cls, fmt, case, lines, ref):
        file = self.path(f"{fmt}-bad.jsonl", "\n".join(lines) + "\n")
        rc, err, _ = self.stats(file, fmt)
        self.judge_error(cls, case, rc, err, file)
        rc, err, data = self.stats(file, fmt, skip=True)
        skip_cls = cls + " (--skip-bad-lines)"
        if rc != 0:
            self.record(skip_cls, "FAIL not skipped", case, err.strip()[:200])
        elif "skipped 1 bad line" not in err or data["requests"] != ref["requests"] - 1:
            self.record(skip_cls, "FAIL skipped but not counted", case, err.strip()[:200])
        else:
            self.record(skip_cls, "skipped and counted", case)

    # --- binary formats ------------------------------------------------------------------
    def binary(self):
        base = self.path("base.kvtrace", b"")
        self.run(["trace", "generate", "--kind", "conversation", "--params", "sessions=20",
                  "--out", base])
        og = os.path.join(self.work, "base.og")
        self.run(["trace", "convert", "-t", base, "--to", "oracle-general", "-o", og])
        for fmt, file in (("native", base), ("oracle-general", og)):
            data = open(file, "rb").read()
            cls = f"{fmt}: truncated"
            for cut in sorted({1, 7, 24, 47, 48, 49, 100, len(data) // 2, len(data) - 8,
                               len(data) - 1}):
                if fmt == "oracle-general" and cut % 24 == 0:
                    continue  # a whole number of records is a shorter, valid trace
                f = self.path(f"cut-{fmt}", data[:cut])
                self.judge_error(cls, f"{cut} bytes", *self.stats(f, fmt)[:2], f)
            cls = f"{fmt}: one byte changed"
            for at in range(0, len(data), max(1, len(data) // 40)):
                if fmt == "oracle-general" and at % 24 < 12:
                    continue  # time and id bytes: any value is a valid record
                mutated = bytearray(data)
                mutated[at] ^= 0xA5
                f = self.path(f"flip-{fmt}", bytes(mutated))
                rc, err, _ = self.stats(f, fmt)
                if fmt == "oracle-general" and rc == 0:
                    self.record(cls, "accepted correctly", f"byte {at}")  # a size or next use
                else:
                    self.judge_error(cls, f"byte {at}", rc, err, f)
        for name, path in (("a directory", self.work), ("an empty file", self.path("empty", ""))):
            for fmt in ("auto", "native", "mooncake", "oracle-general"):
                rc, err, _ = self.stats(path, fmt)
                self.judge_error("not a trace file", f"{name} as {fmt}", rc, err, path)

    # --- text sources --------------------------------------------------------------------
    def text(self):
        cases = {
            "chatbot-arena": ['{"id": "a", "messages": "not a list"}',
                              '{"id": "a", "messages": [{"role": "wizard", "content": "x"}]}',
                              '{"id": "a", "messages": [{"role": "user", "content": 5}]}',
                              '{"id": "a"}'],
            "sharegpt": ['{"id": "s", "conversations": [{"from": "human"}]}',
                         '{"id": "s", "conversations": {}}'],
            "loogle": ['{"input": "d", "qa_pairs": "' + "[" * 40000 + '"}',
                       '{"input": "d", "qa_pairs": "[{\'Q\': \'unterminated}]"}',
                       '{"input": 5, "qa_pairs": "none", "output": "x"}'],
        }
        good = {
            "chatbot-arena": '{"id": "g", "messages": [{"role": "user", "content": "hi"}, '
                             '{"role": "assistant", "content": "hello"}]}',
            "sharegpt": '{"id": "g", "conversations": [{"from": "human", "value": "hi"}, '
                        '{"from": "gpt", "value": "hello"}]}',
            "loogle": '{"input": "doc", "qa_pairs": "[{\'Q\': \'q?\', \'A\': \'a\'}]", '
                      '"output": "None"}',
        }
        for source, bad in cases.items():
            cls = f"{source}: a bad record"
            for i, rec in enumerate(bad):
                f = self.path(f"{source}.jsonl", good[source] + "\n" + rec + "\n")
                out = os.path.join(self.work, "built.kvtrace")
                args = ["trace", "build", "--source", source, "-i", f, "-o", out,
                        "--tokenizer", "approx"]
                self.judge_error(cls, f"record {i}", *self.run(args), f)
                rc, err = self.run(args + ["--skip-bad-lines"])
                ok = rc == 0 and ("skipped" in err or "bad record" in err)
                self.record(cls + " (--skip-bad-lines)",
                            "skipped and counted" if ok else "FAIL not skipped", f"record {i}",
                            err.strip()[:200])
        # One unbroken word of 2 MB: the tokenizer must stay linear (it took minutes at 200 kB).
        word = "x" * 2_000_000
        f = self.path("word.jsonl", '{"id": "w", "messages": [{"role": "user", "content": "'
                      + word + '"}, {"role": "assistant", "content": "ok"}]}\n')
        start = time.monotonic()
        rc, err = self.run(["trace", "build", "--source", "chatbot-arena", "-i", f, "-o",
                            os.path.join(self.work, "w.kvtrace"), "--tokenizer", "approx"])
        secs = time.monotonic() - start
        self.record("text: one 2 MB word", "accepted correctly" if rc == 0 and secs < 30
                    else "FAIL hang or error", "2 MB", f"exit {rc} in {secs:.1f} s {err[:200]}")

    # --- command-line numbers ------------------------------------------------------------
    def numbers(self):
        t = self.path("n.kvtrace", b"")
        self.run(["trace", "generate", "--kind", "zipf", "--params", "requests=200,prefixes=10",
                  "--out", t])
        options = [
            ("simulate -c", ["simulate", "-t", t, "-p", "lru", "-c"]),
            ("simulate --dram", ["simulate", "-t", t, "-p", "lru", "-c", "10%", "--dram"]),
            ("simulate --xi", ["simulate", "-t", t, "-p", "lru", "-c", "10%", "--xi"]),
            ("simulate --seed", ["simulate", "-t", t, "-p", "lru", "-c", "10%", "--seed"]),
            ("policy parameter", ["simulate", "-t", t, "-c", "10%", "-p", "laru:p="]),
            ("robustness --noise", ["robustness", "-t", t, "-c", "10%", "--noise"]),
        ]
        for name, args in options:
            for value in BAD_NUMBERS:
                if name == "simulate --seed" and value in ("1e19",):
                    continue
                a = args[:-1] + [args[-1] + value] if args[-1].endswith("=") else args + [value]
                rc, err = self.run(a)
                cls = "command-line numbers"
                if rc == "hang" or (isinstance(rc, int) and (rc < 0 or rc >= 128)):
                    self.record(cls, "FAIL crash or hang", f"{name} {value!r}")
                elif rc == 0:
                    self.record(cls, "FAIL accepted a bad number", f"{name} {value!r}")
                elif "internal error" in err or not err.strip():
                    self.record(cls, "FAIL unclear error", f"{name} {value!r}", err[:200])
                else:
                    self.record(cls, "clear error", f"{name} {value!r}")

    # --- outputs: full disk, file-size limit, kill and resume ----------------------------
    def outputs(self):
        t = self.path("o.kvtrace", b"")
        self.run(["trace", "generate", "--kind", "zipf", "--params", "requests=3000,prefixes=40",
                  "--out", t])
        cls = "writing to a full disk (/dev/full)"
        for name, args in (
                ("simulate --json", ["simulate", "-t", t, "-p", "lru,fifo", "-c", "5%,10%",
                                     "--json", "/dev/full"]),
                ("simulate --csv", ["simulate", "-t", t, "-p", "lru", "-c", "5%", "--csv",
                                    "/dev/full"]),
                ("trace stats --json", ["trace", "stats", "-t", t, "--json", "/dev/full"]),
                ("trace convert", ["trace", "convert", "-t", t, "--to", "oracle-general", "-o",
                                   "/dev/full"]),
                ("mrc --json", ["mrc", "-t", t, "-p", "lru", "--json", "/dev/full"])):
            self.judge_error(cls, name, *self.run(args), "/dev/full")
        # A disk that fills mid-sweep (a 4 KB file-size limit: EFBIG): a failing exit naming the
        # file, and only whole rows in it.
        cls = "a disk that fills mid-sweep (file-size limit)"
        for name, args in (("simulate --json", ["simulate", "-t", t, "-p", "lru,fifo,sieve,lfu",
                                                "-c", "1%,2%,5%,10%,20%", "--json"]),
                           ("serve --json", ["serve", "-t", t, "-p", "lru,fifo", "--workers",
                                             "1,2", "-c", "5%,10%", "--json"])):
            out = os.path.join(self.work, "limited.jsonl")
            if os.path.exists(out):
                os.remove(out)
            cmd = " ".join(["ulimit -f 4; trap '' XFSZ; exec", self.k] + args + [out])
            p = subprocess.run(["bash", "-c", cmd], capture_output=True, timeout=TIMEOUT_S,
                               cwd=self.work)
            err = p.stderr.decode(errors="replace")
            torn = False
            if os.path.exists(out):
                for line in open(out, errors="replace"):
                    try:
                        json.loads(line)
                    except ValueError:
                        torn = True
            if torn:
                self.record(cls, "FAIL torn row", name)
            else:
                self.judge_error(cls, name, p.returncode, err, out)
        cls = "a sweep killed mid-run, then --resume"
        ref = os.path.join(self.work, "ref.jsonl")
        sweep = ["simulate", "-t", t, "-p", "lru,fifo,s3fifo,sieve,lfu,belady", "-c",
                 "1%,2%,5%,10%,20%", "--jobs", "1"]
        self.run(sweep + ["--json", ref])
        for trial in range(3):
            out = os.path.join(self.work, f"killed-{trial}.jsonl")
            proc = subprocess.Popen([self.k] + sweep + ["--json", out], cwd=self.work,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and proc.poll() is None:
                if os.path.exists(out) and open(out).read().count("\n") >= 2 + 3 * trial:
                    break
                time.sleep(0.005)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            rc, err = self.run(sweep + ["--json", out, "--resume"])
            same = rc == 0 and rows(out) == rows(ref)
            self.record(cls, "accepted correctly" if same else "FAIL rows lost or changed",
                        f"trial {trial}", err[:200])

    def table(self):
        outcomes = ["clear error", "skipped and counted", "accepted correctly"]
        lines = ["| input class | tried | " + " | ".join(outcomes) + " | failures |",
                 "|---|---:|" + "---:|" * len(outcomes) + "---:|"]
        for cls, counts in self.rows.items():
            bad = sum(v for k, v in counts.items() if k.startswith("FAIL"))
            lines.append(f"| {cls} | {sum(counts.values())} | "
                         + " | ".join(str(counts.get(o, 0)) for o in outcomes) + f" | {bad} |")
        total = collections.Counter()
        for counts in self.rows.values():
            total.update(counts)
        bad = sum(v for k, v in total.items() if k.startswith("FAIL"))
        lines.append(f"| **all** | **{sum(total.values())}** | "
                     + " | ".join(f"**{total.get(o, 0)}**" for o in outcomes) + f" | **{bad}** |")
        return "\n".join(lines)


def rows(path):
    """A results file's rows without their timing fields, as a sorted list."""
    drop = {"replay_seconds", "replay_cpu_seconds", "ns_per_access"}
    out = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            out.append(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kvpolicy")
    ap.add_argument("--table")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        c = Campaign(os.path.abspath(args.kvpolicy), work)
        for fmt in JSONL_GOOD:
            c.jsonl(fmt)
        c.binary()
        c.text()
        c.numbers()
        c.outputs()
    table = c.table()
    print(table)
    if args.table:
        with open(args.table, "w") as f:
            f.write(table + "\n")
    for failure in c.failures:
        print("FAILED:", failure, file=sys.stderr)
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
