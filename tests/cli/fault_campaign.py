#!/usr/bin/env python3
"""The bad-input and fault campaign (ctest CliFaultCampaign; docs/results/faults.md, "Faults").

Runs the kvpolicy binary on classes of crafted inputs and faults and sorts every run by outcome:
a clear error (a failing exit whose message names the file, and no "internal error"), skipped and
counted (--skip-bad-lines: exit 0 and the bad records counted), or accepted correctly (exit 0 with
the statistics of the clean input the variant means the same as). Anything else (a crash, a hang,
an unclear error, a bad input accepted, a wrong number) is a failure, and the script exits 1.

Usage: fault_campaign.py KVPOLICY [--table OUT.md]
"""
import argparse
import collections
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
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
        p = self.fresh(name)
        with open(p, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return p

    def fresh(self, name):
        """A path no file has yet, in the work directory."""
        self.n += 1
        return os.path.join(self.work, f"{self.n:05d}-{name}")

    def run(self, args, timeout_s=TIMEOUT_S, **kw):
        try:
            p = subprocess.run([self.k] + args, capture_output=True, timeout=timeout_s,
                               cwd=self.work, stdin=subprocess.DEVNULL, **kw)
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
        """A bad input: a failing exit whose message names the file (any message, for None)."""
        if rc == "hang":
            self.record(cls, "FAIL hang", case)
        elif rc < 0 or rc >= 128:
            self.record(cls, "FAIL crash", case, f"(exit {rc})")
        elif rc == 0:
            self.record(cls, "FAIL accepted a bad input", case)
        elif "internal error" in err or not err.strip() or (
                file is not None and os.path.basename(file) not in err):
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

    # --- outputs that alias inputs, a command run twice, a failed rerun ------------------
    def digest(self, path):
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    def judge_kept(self, cls, case, rc, err, kept):
        """A refused command: a failing exit with a message, and every input byte kept."""
        if not kept:
            self.record(cls, "FAIL input destroyed", case, err.strip()[:200])
        else:
            self.judge_error(cls, case, rc, err, None)

    def aliasing(self):
        """Every output flag pointed at an input file by another spelling: a short option glued
        to its value, ./X, dir/../X, a symbolic link and a hard link. The input must survive."""
        cls = "an output naming an input by another spelling"
        d = os.path.join(self.work, "alias")
        os.makedirs(os.path.join(d, "sub"), exist_ok=True)
        t = os.path.join(d, "t.kvtrace")
        self.run(["trace", "generate", "--kind", "zipf", "--params", "requests=300,prefixes=20",
                  "--out", t])
        log = os.path.join(d, "log.csv")
        with open(log, "w") as f:
            f.write("ts,session,prompt,out\n")
            for i in range(30):
                f.write(f"{i},{i % 4},system prompt words shared by all turn {i},5\n")
        stats = os.path.join(d, "stats.csv")
        self.run(["embed", "generate", "--kind", "zipf", "--samples", "50", "-o", stats])
        shard = os.path.join(d, "shard.jsonl")
        self.run(["simulate", "-t", t, "-p", "lru", "-c", "10%", "--json", shard])
        spellings = {
            "same path": lambda p: p,
            "./X": lambda p: os.path.join(os.path.dirname(p), ".", os.path.basename(p)),
            "dir/../X": lambda p: os.path.join(os.path.dirname(p), "sub", "..",
                                               os.path.basename(p)),
            "symbolic link": lambda p: self.link(p, os.symlink),
            "hard link": lambda p: self.link(p, os.link),
        }
        # (name, the input file, argv with {out} for the output and {in} for the input)
        commands = [
            ("simulate --json", t, ["simulate", "-t{in}", "-p", "lru", "-c", "10%", "--json",
                                    "{out}"]),
            ("simulate --csv", t, ["simulate", "-t", "{in}", "-p", "lru", "-c", "10%", "--csv",
                                   "{out}"]),
            ("compare --json", t, ["compare", "-t", "{in}", "-c", "10%", "-p", "lru,fifo",
                                   "--json", "{out}"]),
            ("mrc --csv", t, ["mrc", "-t", "{in}", "-p", "lru", "--points", "3", "--csv",
                              "{out}"]),
            ("serve --json", t, ["serve", "-t", "{in}", "-p", "lru", "-c", "10%", "--json",
                                 "{out}"]),
            ("trace stats --json", t, ["trace", "stats", "-t", "{in}", "--json", "{out}"]),
            ("trace convert -o", t, ["trace", "convert", "-t", "{in}", "--to", "native", "-o",
                                     "{out}"]),
            ("trace import -o", log, ["trace", "import", "-i{in}", "-o", "{out}", "--map",
                                      "time=ts,session=session,text=prompt,output=out"]),
            ("embed generate --out", stats, ["embed", "generate", "--stats", "{in}", "--samples",
                                             "20", "--out", "{out}"]),
            ("merge OUT", shard, ["merge", "{out}", "{in}"]),
        ]
        for name, source, argv in commands:
            for spelling, spell in spellings.items():
                before = self.digest(source)
                out = spell(source)
                args = [a.replace("{in}", source).replace("{out}", out) for a in argv]
                rc, err = self.run(args)
                self.judge_kept(cls, f"{name} ({spelling})", rc, err,
                                os.path.exists(source) and self.digest(source) == before)

    def link(self, target, make):
        self.n += 1
        p = os.path.join(os.path.dirname(target), f"link-{self.n}")
        make(target, p)
        return p

    def reruns(self):
        """A finished results file survives a rerun that fails before it starts (a typo in
        -t), and a command run twice on one output leaves exactly one run's rows."""
        t = self.path("r.kvtrace", b"")
        self.run(["trace", "generate", "--kind", "zipf", "--params", "requests=500,prefixes=30",
                  "--out", t])
        missing = os.path.join(self.work, "no-such-trace.kvtrace")
        cls = "a failed rerun onto a finished output"
        for name, argv in (
                ("simulate --json", ["simulate", "-p", "lru", "-c", "5%", "--json"]),
                ("compare --json", ["compare", "-p", "lru", "-c", "5%", "--json"]),
                ("mrc --json", ["mrc", "-p", "lru", "--points", "3", "--json"]),
                ("lpc-study --json", ["lpc-study", "-p", "lru", "-c", "5%", "--json"]),
                ("serve --json", ["serve", "-p", "lru", "-c", "5%", "--json"])):
            out = self.fresh("done.jsonl")
            rc, err = self.run(argv[:1] + ["-t", t] + argv[1:] + [out])
            if rc != 0 or not os.path.exists(out):
                self.record(cls, "FAIL the first run failed", name, err.strip()[:200])
                continue
            before = self.digest(out)
            rc, err = self.run(argv[:1] + ["-t", missing] + argv[1:] + [out])
            self.judge_kept(cls, name, rc, err, self.digest(out) == before)
        cls = "a command run twice on one output"
        for name, argv in (("simulate --json", ["simulate", "-t", t, "-p", "lru,fifo", "-c",
                                                "5%,10%", "--json"]),
                           ("serve --json", ["serve", "-t", t, "-p", "lru", "-c", "5%",
                                             "--json"])):
            out = os.path.join(self.work, f"twice-{name.split()[0]}.jsonl")
            self.run(argv + [out])
            first = rows(out)
            rc, err = self.run(argv + [out])
            same = rc == 0 and rows(out) == first
            self.record(cls, "accepted correctly" if same else "FAIL rows doubled or lost", name,
                        err[:200])
        cls = "--resume onto a file that is not a results file"
        for name, content in (("a CSV", "a,b\n1,2\n3,4"), ("prose", "notes\nkeep this line"),
                              ("JSON of another tool", '{"x": 1}\n{"y": 2}')):
            out = self.path("notes.txt", content)
            before = self.digest(out)
            rc, err = self.run(["simulate", "-t", t, "-p", "lru", "-c", "5%", "--json", out,
                                "--resume"])
            self.judge_kept(cls, name, rc, err, self.digest(out) == before)
        cls = "--resume after the trace changed"
        # A JSONL trace is named by its path: the content fingerprint must tell the change.
        moon = JSONL_GOOD["mooncake"]
        longer = [dict(r, timestamp=r["timestamp"] + 100 * k) for k in range(10) for r in moon]
        other = [dict(r, hash_ids=[h + 50 for h in r["hash_ids"]]) for r in moon]
        for name, records in (("a JSONL trace ten times longer", longer),
                              ("a JSONL trace of other content", other)):
            t2 = os.path.join(self.work, "changing.jsonl")
            with open(t2, "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in moon))
            out = self.fresh("resume.jsonl")
            sweep = ["simulate", "-t", t2, "-p", "lru,fifo", "-c", "1,2", "--jobs", "1"]
            self.run(sweep + ["--json", out])
            before = self.digest(out)
            with open(t2, "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in records))
            rc, err = self.run(sweep + ["--json", out, "--resume"])
            self.judge_kept(cls, name, rc, err, self.digest(out) == before)
        # A native trace carries its generator's name: rows of the new one must be its own.
        t2 = self.path("changing.kvtrace", b"")
        self.run(["trace", "generate", "--kind", "zipf", "--params", "requests=500,prefixes=30",
                  "--out", t2])
        out = self.fresh("resume.jsonl")
        sweep = ["simulate", "-t", t2, "-p", "lru,fifo", "-c", "5%,10%", "--jobs", "1"]
        self.run(sweep + ["--json", out])
        self.run(["trace", "generate", "--kind", "zipf", "--params", "requests=5000,prefixes=30",
                  "--seed", "7", "--out", t2 + ".new.kvtrace"])
        os.replace(t2 + ".new.kvtrace", t2)
        fresh = self.fresh("fresh.jsonl")
        self.run(sweep + ["--json", fresh])
        rc, err = self.run(sweep + ["--json", out, "--resume"])
        names = {json.loads(r)["trace"] for r in rows(fresh)}
        mine = [r for r in rows(out) if json.loads(r)["trace"] in names] if rc == 0 else None
        self.record(cls, "accepted correctly" if mine == rows(fresh) else "FAIL stale rows kept",
                    "a native trace regenerated", err[:200])

    # --- values of results -----------------------------------------------------------------
    def values(self):
        """Numbers a user can check by hand: a cache of every unique block (100 % or more)
        reaches the ideal hit rate in every command; one share is one block count everywhere."""
        t = self.path("v.kvtrace", b"")
        self.run(["trace", "generate", "--kind", "conversation", "--params", "sessions=40",
                  "--out", t])
        rc, err, st = self.stats(t, "native")
        ideal = st["infinite_hit_rate"] if st else None
        cls = "a cache of every unique block reaches the ideal hit rate"
        unique = st["unique_blocks"] if st else None
        for name, argv in (
                ("simulate", ["simulate", "-t", t, "-p", "lru"]),
                ("compare", ["compare", "-t", t, "-p", "lru"]),
                ("lpc-study", ["lpc-study", "-t", t, "-p", "lru"]),
                ("tail", ["tail", "-t", t]),
                ("robustness", ["robustness", "-t", t, "--noise", "0"]),
                ("serve (1 worker)", ["serve", "-t", t, "-p", "lru", "--workers", "1"])):
            for share, scale in (("100%", 1.0), ("150%", 1.5)):
                out = self.fresh("v.jsonl")
                rc, err = self.run(argv + ["-c", share, "--json", out])
                records = []
                if rc == 0 and os.path.exists(out):
                    records = [json.loads(line) for line in open(out)]
                blocks = set(field_values(records, "capacity_blocks"))
                hits = [r.get("block_hit_rate") for r in records
                        if r.get("policy", "").split(":")[0] == "lru"
                        and r.get("block_hit_rate") is not None and "workers" not in r]
                case = f"{name} -c {share}"
                if rc != 0 or not blocks:
                    self.record(cls, "FAIL refused or no row", case, err.strip()[:200])
                elif blocks != {round(scale * unique)}:
                    self.record(cls, "FAIL wrong capacity", case, f"{blocks} vs {unique} unique")
                elif any(abs(h - ideal) > 1e-9 for h in hits):
                    self.record(cls, "FAIL wrong hit rate", case, f"{hits} vs ideal {ideal}")
                else:
                    self.record(cls, "accepted correctly", case)
        cls = "one share, one block count in every command"
        shares = "1%,1.5%,2%,3%,5%,7.5%,10%"
        counts = {}
        for name, argv in (("simulate", ["simulate", "-t", t, "-p", "lru"]),
                           ("lpc-study", ["lpc-study", "-t", t, "-p", "lru"]),
                           ("tail", ["tail", "-t", t])):
            out = self.fresh("b.jsonl")
            self.run(argv + ["-c", shares, "--json", out])
            if os.path.exists(out):
                counts[name] = sorted(set(field_values([json.loads(line) for line in open(out)],
                                                       "capacity_blocks")))
        ok = len(counts) == 3 and len(set(map(tuple, counts.values()))) == 1
        self.record(cls, "accepted correctly" if ok else "FAIL two block counts", shares,
                    str(counts))

    # --- importing users' logs -------------------------------------------------------------
    def imports(self):
        cls = "trace import: a log that cannot make a prefix trace"
        d = self.fresh("imp")
        os.makedirs(d)
        length_only = os.path.join(d, "azure.csv")
        with open(length_only, "w") as f:
            f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
            for i in range(50):
                f.write(f"2023-11-16 18:15:{i:02d}.0,{200 + 37 * i},{20 + i}\n")
        out = os.path.join(d, "out.kvtrace")
        rc, err = self.run(["trace", "import", "-i", length_only, "-o", out, "--map",
                            "time=TIMESTAMP,tokens=ContextTokens,output=GeneratedTokens"])
        self.judge_error(cls, "token counts only", rc, err, length_only)
        dup = os.path.join(d, "dup.jsonl")
        with open(dup, "w") as f:
            f.write('{"t": 1, "s": 1, "p": "hello world", "o": 3}\n')
            f.write('{"t": 2, "s": 1, "p": "hello there", "p": "other", "o": 3}\n')
        rc, err = self.run(["trace", "import", "-i", dup, "-o", out, "--map",
                            "time=t,session=s,text=p,output=o"])
        self.judge_error(cls, "a duplicate key", rc, err, dup)
        # An engine's block hashes name a block with its whole prefix: one repeated at other
        # positions is no such hash, and its ideal hit rate would be one no replay reaches.
        rep = os.path.join(d, "hashes.jsonl")
        with open(rep, "w") as f:
            f.write("".join(json.dumps({"t": i, "h": [7, 7, 7], "o": 1}) + "\n"
                            for i in range(4)))
        rc, err = self.run(["trace", "import", "-i", rep, "-o", out, "--map",
                            "time=t,hashes=h,output=o"])
        self.judge_error(cls, "hashes repeated within a prompt", rc, err, rep)
        cls = "trace import: what it writes, its own reader reads"
        for name, rows_ in (("one prompt", [{"t": 1, "s": 1, "p": "x " * 40, "o": 3}]),
                            ("empty prompts", [{"t": 1, "s": 1, "p": "", "o": 3},
                                               {"t": 2, "s": 2, "p": "word " * 30, "o": 1}]),
                            ("equal times", [{"t": 5, "s": i, "p": "y " * 50, "o": 2}
                                             for i in range(4)])):
            src = os.path.join(d, "ok.jsonl")
            with open(src, "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in rows_))
            if os.path.exists(out):
                os.remove(out)
            rc, err = self.run(["trace", "import", "-i", src, "-o", out, "--map",
                                "time=t,session=s,text=p,output=o"])
            if rc != 0:
                self.judge_error(cls, name, rc, err, src)
                continue
            rc, err, st = self.stats(out, "native")
            self.record(cls, "accepted correctly" if rc == 0 else "FAIL unreadable output", name,
                        err.strip()[:200])
        cls = "Mooncake hash ids repeated within a prompt reach their ceiling"
        # The Mooncake reader chains hash_ids itself, so [7, 7, 7] is three blocks of one path:
        # an LRU cache of every unique block must reach the ideal hit rate.
        f = self.path("unchained.jsonl", "".join(
            json.dumps({"timestamp": i, "input_length": 3 * 512, "output_length": 1,
                        "hash_ids": [7, 7, 7]}) + "\n" for i in range(4)))
        rc, err, st = self.stats(f, "mooncake")
        if rc != 0:
            self.judge_error(cls, "[7, 7, 7]", rc, err, f)
        else:
            sim = self.fresh("unchained.out.jsonl")
            self.run(["simulate", "-t", f, "-p", "lru", "-c", "100%", "--json", sim])
            hit = None
            if os.path.exists(sim):
                hit = json.loads(open(sim).readline())["block_hit_rate"]
            ok = hit is not None and abs(hit - st["infinite_hit_rate"]) < 1e-9
            self.record(cls, "accepted correctly" if ok else "FAIL ceiling no replay reaches",
                        "[7, 7, 7]", f"ceiling {st['infinite_hit_rate']} replay {hit}")

    # --- one file read whole and streamed ------------------------------------------------
    def streamed(self):
        """--stream reads a file a chunk at a time: it must refuse what the whole read refuses
        and agree with it on what it accepts."""
        cls = "one file read whole and streamed"
        good = JSONL_GOOD["mooncake"]
        cases = {
            "times near 2^63 us": [dict(r, timestamp=9223372036854 + i) for i, r in
                                   enumerate(good)],
            "times going back": [dict(good[0], timestamp=50), good[1], good[2]],
            "a time of 2^62 ms": [good[0], dict(good[1], timestamp=2 ** 62), good[2]],
        }
        for name, records in cases.items():
            f = self.path("stream.jsonl", "".join(json.dumps(r) + "\n" for r in records))
            outs = []
            for mode in ("--no-stream", "--stream"):
                out = os.path.join(self.work, f"stream{mode}.jsonl")
                if os.path.exists(out):
                    os.remove(out)
                rc, err = self.run(["simulate", "-t", f, "-f", "mooncake", "-p", "lru,wa",
                                    "-c", "50%", mode, "--json", out])
                outs.append((rc, rows(out) if rc == 0 else None, err))
            (rc1, rows1, err1), (rc2, rows2, err2) = outs
            if "runtime error" in err1 + err2 or any(isinstance(r, str) or r < 0 or r >= 128
                                                     for r in (rc1, rc2)):
                self.record(cls, "FAIL crash or undefined behaviour", name, (err1 + err2)[:200])
            elif rc1 == 0 and rc2 != 0 and "internal error" not in err2 and f in err2:
                # A stream cannot sort what the whole read can: a clear refusal is right.
                self.record(cls, "clear error", name)
            elif (rc1 == 0) != (rc2 == 0) or rows1 != rows2:
                self.record(cls, "FAIL whole and streamed disagree", name,
                            f"exit {rc1} vs {rc2}: {(err1 + err2).strip()[:200]}")
            elif rc1 != 0:
                self.judge_error(cls, name, rc2, err2, f)
            else:
                self.record(cls, "accepted correctly", name)

    # --- special files ---------------------------------------------------------------------
    def special_files(self):
        cls = "special and huge inputs"
        fifo = os.path.join(self.work, "fifo")
        os.mkfifo(fifo)
        sparse = self.path("sparse.jsonl", b"")
        with open(sparse, "wb") as f:
            f.truncate(1 << 40)
        out = os.path.join(self.work, "special.kvtrace")
        for name, args, file in (
                ("trace import from a FIFO", ["trace", "import", "-i", fifo, "-o", out, "--map",
                                              "time=t,text=p"], fifo),
                ("merge of a FIFO", ["merge", out + ".jsonl", fifo], fifo),
                ("embed bench from a FIFO", ["embed", "bench", "--trace", fifo], fifo),
                ("trace stats /dev/zero", ["trace", "stats", "-t", "/dev/zero", "-f",
                                           "native"], "/dev/zero"),
                ("trace stats of a 1 TB sparse file", ["trace", "stats", "-t", sparse, "-f",
                                                       "mooncake"], sparse),
                ("generate 10^15 requests", ["trace", "generate", "--kind", "zipf", "--params",
                                             "requests=1000000000000000", "--out", out],
                 "requests")):
            rc, err = self.run(args, timeout_s=20)
            self.judge_error(cls, name, rc, err, file)

    # --- the Python API: threads and misuse ------------------------------------------------
    def python(self, module_dir):
        if not os.path.exists(os.path.join(module_dir, "kvpolicy", "__init__.py")):
            print(f"fault_campaign: no Python module in {module_dir}; its classes skipped",
                  file=sys.stderr)
            return
        env = dict(os.environ, PYTHONPATH=module_dir)
        cls = "Python: one Cache shared by threads"
        threads = textwrap.dedent("""
            import random, threading, kvpolicy
            c = kvpolicy.Cache("lru", capacity_blocks=300, block_tokens=4, seed=1)
            errors = []
            def work(seed):
                r = random.Random(seed)
                try:
                    for _ in range(100):
                        c.insert_many([[r.randrange(1 << 20) for _ in range(r.randint(1, 40))]
                                       for _ in range(200)])
                        assert len(c) <= 300, "size %d above capacity 300" % len(c)
                        keys = c.block_keys([r.randrange(9) for _ in range(16)])
                        c.insert(keys=keys)
                except Exception as e:
                    errors.append(repr(e))
            ts = [threading.Thread(target=work, args=(s,)) for s in range(6)]
            [t.start() for t in ts]
            [t.join() for t in ts]
            assert not errors, errors[0]
            c.evict(len(c))
            assert len(c) == 0, "pins leaked: %d blocks left after evicting all" % len(c)
            """)
        for trial in range(3):
            rc, err = self.run_python(threads, env)
            if rc == 0:
                self.record(cls, "accepted correctly", f"run {trial}")
            else:
                self.record(cls, f"FAIL {'hang' if rc == 'hang' else 'crash or wrong'}",
                            f"run {trial}", str(rc) + " " + err.strip()[-200:])
        cls = "Python: API misuse gets an exception, and the object still works"
        cases = {
            "a policy error inside a request": """
                c = kvpolicy.Cache("lpc", capacity_blocks=8, block_tokens=2)
                try:
                    c.insert(keys=[1, 2, 3])
                except kvpolicy.Error:
                    pass
                c2 = kvpolicy.Cache("lru", capacity_blocks=8, block_tokens=2)
                c2.insert(keys=[1, 2, 3])
                try:
                    c.insert(keys=[1, 2, 3], continuation=0.5)
                except kvpolicy.Error as e:
                    raise SystemExit("the Cache refuses calls after an error: %s" % e)
                """,
            "a session id above 2^32": """
                c = kvpolicy.Cache("lru", capacity_blocks=8, block_tokens=2)
                try:
                    c.insert(keys=[1, 2], session=2**32 + 5)
                except (ValueError, OverflowError, TypeError):
                    raise SystemExit(0)
                raise SystemExit("accepted and truncated a 33-bit session id")
                """,
            "a category id above 2^32": """
                c = kvpolicy.Cache("lru", capacity_blocks=8, block_tokens=2)
                try:
                    c.insert(keys=[1, 2], category=2**40)
                except (ValueError, OverflowError, TypeError):
                    raise SystemExit(0)
                raise SystemExit("accepted and truncated a 41-bit category id")
                """,
            "a capacity of 100 % in simulate": """
                import json, os
                t = kvpolicy.load_trace(os.environ["TRACE"])
                rows = kvpolicy.simulate(t, ["lru"], ["100%"])
                st = json.load(open(os.environ["STATS"]))
                if abs(rows[0]["block_hit_rate"] - st["infinite_hit_rate"]) > 1e-9:
                    raise SystemExit("100%% gave %s, ideal %s" % (rows[0]["block_hit_rate"],
                                                                  st["infinite_hit_rate"]))
                """,
        }
        t = self.path("py.kvtrace", b"")
        self.run(["trace", "generate", "--kind", "conversation", "--params", "sessions=30",
                  "--out", t])
        st = os.path.join(self.work, "py-stats.json")
        self.run(["trace", "stats", "-t", t, "--json", st])
        env = dict(env, TRACE=t, STATS=st)
        for name, body in cases.items():
            rc, err = self.run_python("import kvpolicy\n" + textwrap.dedent(body), env)
            self.record(cls, "accepted correctly" if rc == 0 else "FAIL", name,
                        f"{rc} {err.strip()[-200:]}")

    def run_python(self, code, env):
        try:
            p = subprocess.run([sys.executable, "-c", code], capture_output=True,
                               timeout=TIMEOUT_S, cwd=self.work, env=env)
            return p.returncode, p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            return "hang", ""

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


def field_values(value, name):
    """Every value of field `name` anywhere in a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == name:
                yield v
            else:
                yield from field_values(v, name)
    elif isinstance(value, list):
        for v in value:
            yield from field_values(v, name)


def rows(path):
    """A results file's rows without their timing fields, as a sorted list."""
    drop = {"replay_seconds", "replay_cpu_seconds", "ns_per_access", "sim_seconds"}
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
        c.aliasing()
        c.reruns()
        c.values()
        c.imports()
        c.streamed()
        c.special_files()
        c.python(os.path.join(os.path.dirname(os.path.abspath(args.kvpolicy)), "python"))
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
