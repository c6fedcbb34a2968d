"""kvpolicy.doctor and import_trace's sanity report against the command line (docs/doctor.md):
the same findings, field by field, on a log with a planted timestamp in its system prompt. Run by
ctest PythonTests with KVPOLICY_BINARY set; without it the parity checks are skipped."""

import json
import os
import random
import subprocess

import pytest

import kvpolicy

BINARY = os.environ.get("KVPOLICY_BINARY")
needs_cli = pytest.mark.skipif(not BINARY, reason="KVPOLICY_BINARY (the kvpolicy CLI) not set")
MAP = "time=t,session=s,text=text"


def write_timestamp_log(path, sessions=12, turns=4):
    """Conversations whose shared system prompt starts with the request's time."""
    rng = random.Random(3)
    syllables = ["ka", "lo", "mi", "ru", "ten", "vos", "gil", "pran", "zu", "qor"]

    def sentence(n):
        return " ".join("".join(rng.choice(syllables) for _ in range(3)) for _ in range(n)) + "."

    instructions = " ".join(sentence(12) for _ in range(10))
    rows = []
    for s in range(sessions):
        history = []
        for k in range(turns):
            t = k * 60 + s * 2
            system = f"Current time: 2024-05-01 12:{(s + k) % 60:02d}:{(s * 7 + k) % 60:02d}. "
            history.append("user: " + sentence(20))
            text = "system: " + system + instructions + "\n" + "".join(m + "\n" for m in history)
            rows.append({"t": t, "s": f"s{s}", "text": text})
            history.append("assistant: " + sentence(20))
    rows.sort(key=lambda r: r["t"])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@needs_cli
def test_doctor_returns_what_the_cli_writes(tmp_path):
    log = write_timestamp_log(tmp_path / "log.jsonl")
    out = tmp_path / "cli.json"
    printed = subprocess.run(
        [BINARY, "doctor", "-i", log, "--map", MAP, "--tokenizer", "approx", "-c", "30%",
         "--workers", "2", "--json", out], check=True, capture_output=True, text=True).stdout
    cli = json.loads(out.read_text())
    got = kvpolicy.doctor(input=log, map=MAP, tokenizer="approx", capacity="30%", workers=2)
    assert got == cli
    assert got["within_sessions"]["causes"][0]["cause"] == "timestamp_or_id"
    assert "mask" in got["remedies"][0]["what"]
    assert f"{got['within_sessions']['causes'][0]['count']} x timestamp_or_id" in printed
    assert [r["router"] for r in got["routers"]] == ["random", "session_affinity", "cache_aware"]


def test_doctor_needs_one_input(tmp_path):
    with pytest.raises(kvpolicy.ConfigError):
        kvpolicy.doctor()
    with pytest.raises(kvpolicy.ConfigError):
        kvpolicy.doctor(str(tmp_path / "a.kvtrace"), input=str(tmp_path / "b.jsonl"))


@needs_cli
def test_import_trace_returns_the_sanity_report_the_cli_prints(tmp_path):
    log = write_timestamp_log(tmp_path / "log.jsonl")
    printed = subprocess.run(
        [BINARY, "trace", "import", "-i", log, "--map", MAP, "--tokenizer", "approx", "-o",
         tmp_path / "cli.kvtrace"], check=True, capture_output=True, text=True).stdout
    got = kvpolicy.import_trace(log, MAP, tmp_path / "py.kvtrace", tokenizer="approx")
    s = got["sanity"]
    assert s["prompts"] == got["requests"]
    assert (f"sanity: {s['prompts']} prompts; tokens per prompt median {s['tokens_median']}, "
            f"p99 {s['tokens_p99']}") in printed
    assert (f"ideal (infinite-cache) hit rate {100 * s['ideal_block_hit_rate']:.1f}% of blocks, "
            f"{100 * s['ideal_token_hit_rate']:.1f}% of tokens") in printed
    # The time at the prompt's very start: no turn shares even its first block with the last.
    assert [w["code"] for w in s["warnings"]] == ["no_session_reuse"]
    assert f"warning: no_session_reuse: {s['warnings'][0]['text']}" in printed
