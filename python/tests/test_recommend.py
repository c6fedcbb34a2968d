"""Python's recommend against `kvpolicy recommend --json` with the same arguments (the same
object, field by field), from a trace and from a result file; a forced offline policy and a bad
result file fail the same way. Run by ctest PythonTests with KVPOLICY_BINARY set; without it the
parity checks are skipped."""

import json
import os
import subprocess

import pytest

import kvpolicy
from test_kvpolicy import write_mooncake

BINARY = os.environ.get("KVPOLICY_BINARY")
needs_cli = pytest.mark.skipif(not BINARY, reason="KVPOLICY_BINARY (the kvpolicy CLI) not set")


def cli_object(tmp_path, *args):
    out = tmp_path / "rec.json"
    subprocess.run([BINARY, *[str(a) for a in args], "--json", str(out)], check=True,
                   capture_output=True, text=True)
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("recommend") / "small.jsonl"
    write_mooncake(path, requests=300, seed=5)
    return path


@needs_cli
def test_recommend_from_a_trace_equals_the_cli(trace_path, tmp_path):
    want = cli_object(tmp_path, "recommend", "-t", trace_path, "-c", "10%",
                      "--among", "lru,fifo,sieve,s3fifo")
    got = kvpolicy.recommend(str(trace_path), capacity="10%",
                             among=["lru", "fifo", "sieve", "s3fifo"])
    assert got == want
    assert got["policy"] == got["candidates"][0]["policy"]
    assert set(got["engines"]) == {"vllm", "sglang", "lmcache"}
    # Forced: the same policy in both, its margin measured against LRU.
    want = cli_object(tmp_path, "recommend", "-t", trace_path, "-c", 40, "--policy", "fifo")
    got = kvpolicy.recommend(str(trace_path), capacity=40, policy="fifo")
    assert got == want and got["policy"] == "fifo" and got["forced"]


@needs_cli
def test_recommend_from_rows_equals_the_cli(trace_path, tmp_path):
    rows = tmp_path / "rows.jsonl"
    subprocess.run([BINARY, "simulate", "-t", str(trace_path), "-p", "lru,sieve,belady",
                    "-c", "5%,10%", "--json", str(rows)], check=True, capture_output=True)
    want = cli_object(tmp_path, "recommend", "--from", rows, "-c", "10%", "--block-tokens", 512)
    got = kvpolicy.recommend(results=str(rows), capacity="10%", block_tokens=512)
    assert got == want
    best = max((json.loads(line) for line in rows.read_text().splitlines()),
               key=lambda r: (r["capacity_fraction"] == 0.1 and not r["offline"],
                              r["block_hit_rate"], r["policy"] == "lru"))
    assert got["policy"] == best["policy"] and got["source"] == "results"


def test_a_forced_offline_policy_is_refused(trace_path):
    with pytest.raises(kvpolicy.ConfigError, match="reads the trace's future.*no engine"):
        kvpolicy.recommend(str(trace_path), capacity="10%", policy="belady")
    with pytest.raises(kvpolicy.ConfigError, match="either a trace or results"):
        kvpolicy.recommend(capacity="10%")


def test_a_bad_result_file_names_file_line_and_field(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "point", "trace": "t", "policy": "lru"}\n')
    with pytest.raises(kvpolicy.InputError, match=r"bad.jsonl:1: field '"):
        kvpolicy.recommend(results=str(bad))
