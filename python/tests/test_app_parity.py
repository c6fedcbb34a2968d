"""Python's simulate, serve, route_tune, mrc, import_trace, policies() and routers() against the
command line with the same arguments: the same records, field by field (timings aside). Run by ctest
PythonTests with KVPOLICY_BINARY set; without it the parity checks are skipped."""

import json
import os
import re
import subprocess

import pytest

import kvpolicy
from test_kvpolicy import write_mooncake

BINARY = os.environ.get("KVPOLICY_BINARY")
needs_cli = pytest.mark.skipif(not BINARY, reason="KVPOLICY_BINARY (the kvpolicy CLI) not set")
TIMING = {"replay_seconds", "replay_cpu_seconds", "ns_per_access", "sim_seconds"}


def cli(*args):
    return subprocess.run([BINARY, *[str(a) for a in args]], check=True, capture_output=True,
                          text=True)


def cli_rows(tmp_path, *args):
    out = tmp_path / "cli.jsonl"
    cli(*args, "--json", out)
    return [json.loads(line) for line in out.read_text().splitlines()]


def untimed(rows):
    """Rows without their timings, in a fixed order (the CLI writes rows as they finish)."""
    rows = [{k: v for k, v in r.items() if k not in TIMING} for r in rows]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("parity") / "small.jsonl"
    write_mooncake(path, requests=300, seed=5)
    return path


@needs_cli
def test_serve_rows_equal_the_cli(trace_path, tmp_path):
    args = dict(policies=["lru", "s3fifo"], routers=["round_robin", "cache_aware"],
                workers=[1, 2], capacities=["10%", "2GB"], rate=2.0, seed=3)
    want = cli_rows(tmp_path, "serve", "-t", trace_path, "-p", "lru,s3fifo",
                    "-r", "round_robin,cache_aware", "-w", "1,2", "-c", "10%,2GB", "--rate", 2,
                    "--seed", 3)
    got = kvpolicy.serve(str(trace_path), **args)
    assert len(want) == 16
    assert untimed(got) == untimed(want)
    # Closed loop, tensor parallel, no cached outputs: the flags map one to one.
    want = cli_rows(tmp_path, "serve", "-t", trace_path, "--clients", 4, "--think-time", 2,
                    "--tp", 2, "--no-cache-outputs", "-c", 50)
    got = kvpolicy.serve(str(trace_path), capacities=[50], clients=4, think_time_s=2, tp=2,
                         cache_outputs=False)
    assert untimed(got) == untimed(want) and len(got) == 1


@needs_cli
def test_route_tune_equals_the_cli(trace_path, tmp_path):
    out = tmp_path / "tune.json"
    cli("route-tune", "-t", trace_path, "-r", "cache_aware", "-w", 2, "-c", "10%", "--rate", 2,
        "--budget", 4, "--search", "random", "--seed", 3, "--replicates", 2,
        "--arrival-jitter", 0.001, "--json", out)
    want = json.loads(out.read_text())
    got = kvpolicy.route_tune(str(trace_path), "cache_aware", workers=2, capacity="10%", rate=2.0,
                              budget=4, search="random", seed=3, replicates=2,
                              arrival_jitter_s=0.001)
    assert got == want
    assert len(got["runs"]) == 5 and "--router cache_aware:" in got["export"]
    assert got["replicates"] == 2 and got["arrival_jitter_s"] == 0.001


@needs_cli
def test_serve_allocation_and_pd_equal_the_cli(trace_path, tmp_path):
    want = cli_rows(tmp_path, "serve", "-t", trace_path, "-w", 3, "-c", "10%",
                    "--allocation", "whole", "--prefill-workers", 1, "--decode-workers", 2,
                    "--decode-router", "round_robin", "--kv-link-bandwidth", 25,
                    "--kv-link-latency", 20)
    got = kvpolicy.serve(str(trace_path), capacities=["10%"], workers=3, allocation="whole",
                         prefill_workers=1, decode_workers=2, decode_router="round_robin",
                         kv_link_gb_per_s=25, kv_link_latency_us=20)
    assert len(got) == 1 and untimed(got) == untimed(want)
    assert got[0]["kv_transfers"] > 0 and got[0]["allocation"] == "whole"


@needs_cli
def test_serve_decode_cache_and_layerwise_equal_the_cli(trace_path, tmp_path):
    want = cli_rows(tmp_path, "serve", "-t", trace_path, "-c", "10%", "--prefill-workers", 1,
                    "--decode-workers", 2, "--decode-router", "cache_aware", "--decode-cache",
                    "off", "--kv-transfer", "layerwise")
    got = kvpolicy.serve(str(trace_path), capacities=["10%"], prefill_workers=1,
                         decode_workers=2, decode_router="cache_aware", decode_cache=False,
                         kv_transfer="layerwise")
    assert len(got) == 1 and untimed(got) == untimed(want)
    assert got[0]["decode_cache"] is False and got[0]["kv_transfer"] == "layerwise"
    on = kvpolicy.serve(str(trace_path), capacities=["10%"], prefill_workers=1,
                        decode_workers=2, decode_router="cache_aware")
    assert on[0]["decode_cache"] is True
    assert on[0]["kv_blocks_transferred"] + on[0]["decode_hit_blocks"] >= \
        got[0]["kv_blocks_transferred"]


@needs_cli
def test_serve_with_tiers_equals_the_cli(trace_path, tmp_path):
    want = cli_rows(tmp_path, "serve", "-t", trace_path, "-c", "5%", "-w", 2, "--dram", 2,
                    "--dram-policy", "s3fifo", "--ssd", "4GB", "--ssd-admit", "seen>=2",
                    "--remote", 1, "--remote-link", "rdma-400", "--overlap-transfers")
    got = kvpolicy.serve(str(trace_path), capacities=["5%"], workers=2, tiers=dict(
        dram="2", dram_policy="s3fifo", ssd="4GB", ssd_admit="seen>=2", remote=1,
        remote_link="rdma-400", overlap_transfers=True))
    assert len(got) == 1 and [t["tier"] for t in got[0]["tiers"]] == ["dram", "ssd", "remote"]
    assert untimed(got) == untimed(want)
    with pytest.raises(Exception, match="unknown key"):
        kvpolicy.serve(str(trace_path), capacities=["5%"], tiers=dict(hdd="2"))


@needs_cli
def test_serve_offload_min_priority_equals_the_cli(tmp_path):
    # System prompts hinted at 90, the rest at 35: a minimum of 36 demotes only the prompts.
    want = cli_rows(tmp_path, "serve", "--generate", "gsp:groups=4,prompts=8", "--generate-seed",
                    2, "--hint", "system-prompt=90:600s", "-c", "5%", "--dram", 2,
                    "--offload-min-priority", 36)
    trace = kvpolicy.generate_trace("gsp", "groups=4,prompts=8", seed=2,
                                    hints=["system-prompt=90:600s"])
    got = kvpolicy.serve(trace, capacities=["5%"], tiers=dict(dram="2", offload_min_priority=36))
    assert len(got) == 1 and untimed(got) == untimed(want)
    assert got[0]["offload_min_priority"] == 36
    off = kvpolicy.serve(trace, capacities=["5%"], tiers=dict(dram="2"))
    assert "offload_min_priority" not in off[0]
    with pytest.raises(Exception, match="--offload-min-priority"):
        kvpolicy.serve(trace, capacities=["5%"], tiers=dict(dram="2", offload_min_priority=101))


@needs_cli
def test_serve_stepped_equals_the_cli_and_the_skipping_loop(trace_path, tmp_path):
    # --stepped runs every decode-only iteration through the event queue: the same rows.
    want = cli_rows(tmp_path, "serve", "-t", trace_path, "-r", "cache_aware", "-w", 2, "-c",
                    "20%", "--stepped")
    got = kvpolicy.serve(str(trace_path), routers="cache_aware", workers=2, capacities=["20%"],
                         stepped=True)
    assert untimed(got) == untimed(want) and len(got) == 1
    fast = kvpolicy.serve(str(trace_path), routers="cache_aware", workers=2, capacities=["20%"])
    assert untimed(fast) == untimed(got)


@needs_cli
def test_serve_on_a_generated_workload_equals_the_cli(tmp_path):
    want = cli_rows(tmp_path, "serve", "--generate", "gsp:groups=4,prompts=8", "--generate-seed", 2,
                    "-r", "cache_aware", "-w", 2, "-c", "20%")
    trace = kvpolicy.generate_trace("gsp", "groups=4,prompts=8", seed=2)
    got = kvpolicy.serve(trace, capacities=["20%"], routers="cache_aware", workers=2)
    assert len(got) == 1 and untimed(got) == untimed(want)


@needs_cli
def test_mrc_rows_equal_the_cli(trace_path, tmp_path):
    want = cli_rows(tmp_path, "mrc", "-t", trace_path, "-p", "lru,s3fifo,belady", "--points", 6,
                    "--target-hit", "20%", "--kv-dtype", "fp8")
    trace = kvpolicy.load_trace(str(trace_path))
    got = kvpolicy.mrc(trace, ["lru", "s3fifo", "belady"], points=6, target_hit="20%",
                       kv_dtype="fp8")
    assert [r["kind"] for r in got].count("target") == 3
    assert got == want  # mrc rows carry no timings
    assert kvpolicy.mrc(str(trace_path), "lru", points=3, min=10, max="50%", linear=True) == \
        cli_rows(tmp_path, "mrc", "-t", trace_path, "--points", 3, "--min", 10, "--max", "50%",
                 "--linear")


@needs_cli
def test_simulate_rows_equal_the_cli(trace_path, tmp_path):
    want = cli_rows(tmp_path, "simulate", "-t", trace_path, "-p", "lru,sieve,belady",
                    "-c", "2%,100,1GB", "--dram", 2, "--jobs", 1)
    got = kvpolicy.simulate(str(trace_path), ["lru", "sieve", "belady"], ["2%", 100, "1GB"],
                            dram=2, jobs=1)
    assert untimed(got) == untimed(want) and len(got) == 9


@needs_cli
def test_hinted_rows_equal_the_cli(trace_path, tmp_path):
    # Retention hints from rules: load_trace(hints=...) is --hint, for simulate and serve alike.
    rules = ["oracle=90:60s", "random=80:10s:0.2"]
    flags = [a for r in rules for a in ("--hint", r)]
    trace = kvpolicy.load_trace(str(trace_path), hints=rules)
    want = cli_rows(tmp_path, "simulate", "-t", trace_path, "-p", "lru,s3fifo", "-c", "5%",
                    "--jobs", 1, *flags)
    got = kvpolicy.simulate(trace, ["lru", "s3fifo"], ["5%"], jobs=1)
    assert untimed(got) == untimed(want) and len(got) == 2
    plain = kvpolicy.simulate(str(trace_path), ["lru", "s3fifo"], ["5%"], jobs=1)
    assert [r["block_hits"] for r in untimed(plain)] != [r["block_hits"] for r in untimed(got)]
    want = cli_rows(tmp_path, "serve", "-t", trace_path, "-p", "lru", "-c", "10%", *flags)
    got = kvpolicy.serve(trace, ["lru"], ["10%"])
    assert untimed(got) == untimed(want) and len(got) == 1


@needs_cli
@pytest.mark.parametrize("command", ["simulate", "compare", "mrc", "serve"])
def test_a_named_lpc_without_scores_is_the_same_error_everywhere(trace_path, command):
    # One rule (app::policies_the_trace_feeds): named, it is an error; a set skips it.
    run = subprocess.run([BINARY, command, "-t", str(trace_path), "-p", "lru,lpc"],
                         capture_output=True, text=True)
    assert run.returncode != 0 and "policy lpc: this trace carries no continuation scores" in \
        run.stderr
    call = {"simulate": lambda: kvpolicy.simulate(str(trace_path), ["lru", "lpc"], [30]),
            "compare": lambda: kvpolicy.simulate(str(trace_path), ["lru", "lpc"], [30]),
            "mrc": lambda: kvpolicy.mrc(str(trace_path), ["lru", "lpc"], points=2),
            "serve": lambda: kvpolicy.serve(str(trace_path), ["lru", "lpc"], [30])}[command]
    with pytest.raises(kvpolicy.ConfigError, match="policy lpc: this trace carries no"):
        call()


def test_policy_sets_skip_lpc_in_serve_and_mrc(trace_path, capfd):
    rows = kvpolicy.serve(str(trace_path), ["online"], [30])
    assert "lpc" not in {r["policy"] for r in rows} and "lru" in {r["policy"] for r in rows}
    assert "skipped lpc" in capfd.readouterr().err
    rows = kvpolicy.mrc(str(trace_path), ["online"], points=2)
    assert "lpc" not in {r["policy"] for r in rows}
    assert "skipped lpc" in capfd.readouterr().err


@needs_cli
def test_import_trace_writes_what_the_cli_writes(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("ts,sess,toks,out\n"
                   "3.5,a,1 2 3 4 5 6 7 8,4\n"
                   "1.0,b,9 9 9 9 9 9 9 9 1 1,2\n"
                   "2.0,a,1 2 3 4 5 6 7 8 10 11 12 13,3\n"
                   "bad,a,1,1\n")
    common = ["--map", "time=ts,session=sess,tokens=toks,output=out", "--block-tokens", 4,
              "--skip-bad-lines"]
    printed = cli("trace", "import", "-i", log, "-o", tmp_path / "cli.kvtrace", *common).stdout
    got = kvpolicy.import_trace(log, "time=ts,session=sess,tokens=toks,output=out",
                                tmp_path / "py.kvtrace", block_tokens=4, skip_bad_lines=True)
    assert (tmp_path / "cli.kvtrace").read_bytes() == (tmp_path / "py.kvtrace").read_bytes()
    assert got["requests"] == 3 and got["sessions"] == 2 and got["skipped_rows"] == 1
    assert got["sorted"] and got["tokenizer"] is None and got["format"] == "csv"
    assert (f"{got['requests']} requests, {got['sessions']} sessions, "
            f"{got['skipped_rows']} skipped rows") in printed
    assert (f"{got['block_accesses']} block accesses of {got['block_tokens']} tokens, "
            f"{got['unique_blocks']} unique blocks; {got['prompt_tokens']} prompt tokens, "
            f"{got['output_tokens']} output tokens; {got['duration_s']:.3f} s") in printed
    assert len(kvpolicy.load_trace(str(tmp_path / "py.kvtrace"))) == 3
    with pytest.raises(kvpolicy.ConfigError, match="kvtrace"):
        kvpolicy.import_trace(log, "time=ts,tokens=toks", tmp_path / "x.csv")


@needs_cli
def test_import_trace_assumes_what_the_cli_assumes(tmp_path):
    log = tmp_path / "lengths.csv"
    log.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + "".join(
        f"{i * 0.5},{100 + (i * 397) % 2000},{1 + (i * 31) % 200}\n" for i in range(200)))
    lengths = "time=TIMESTAMP,prompt_tokens=ContextTokens,output=GeneratedTokens"
    # Without a model the log is refused, as on the command line.
    with pytest.raises(kvpolicy.ConfigError, match="--assume MODEL"):
        kvpolicy.import_trace(log, lengths, tmp_path / "x.kvtrace")
    printed = cli("trace", "import", "-i", log, "-o", tmp_path / "cli.kvtrace", "--map", lengths,
                  "--assume", "system=64,turns=4").stdout
    got = kvpolicy.import_trace(log, lengths, tmp_path / "py.kvtrace", assume="system=64,turns=4")
    assert (tmp_path / "cli.kvtrace").read_bytes() == (tmp_path / "py.kvtrace").read_bytes()
    assert got["assumptions"] == "system=64,system_prompts=4,turns=4,reply=output,idle=600,seed=1"
    assert f"assumed prompts: {got['assumptions_statement']}" in printed
    assert f"{got['continuations']} of {got['requests']} requests continue a session" in printed
    trace = kvpolicy.load_trace(str(tmp_path / "py.kvtrace"))
    assert trace.assumptions == got["assumptions"]
    assert trace.assumptions_statement == got["assumptions_statement"]
    rows = kvpolicy.simulate(str(tmp_path / "py.kvtrace"), policies=["lru"], capacities=["10%"])
    assert all(r["assumptions"] == got["assumptions"] for r in rows)
    assert kvpolicy.import_trace(log, lengths, tmp_path / "d.kvtrace", assume="")["assumptions"] \
        == "system=512,system_prompts=4,turns=3,reply=output,idle=600,seed=1"


def test_import_trace_reads_a_gzipped_chat_log_as_the_cli_does(tmp_path):
    import gzip
    import json
    system = {"role": "system", "content": "You answer questions about the cache."}
    turn1 = [system, {"role": "user", "content": "What is a block?"}]
    turn2 = turn1 + [{"role": "assistant", "content": "Sixteen tokens of KV."},
                     {"role": "user", "content": [{"type": "text", "text": "And a key?"}]}]
    lines = [
        {"id": "r1", "created": "2025-01-01T00:00:00Z", "messages": turn1},
        {"id": "r2", "created": "2025-01-01T00:00:05Z", "messages": turn2},
        {"id": "r1", "usage": {"completion_tokens": 7}},  # the response, later
        {"id": "r2", "usage": {"completion_tokens": 9}},
        {"id": "r3", "usage": {"completion_tokens": 1}},  # no request: skipped
    ]
    log = tmp_path / "chat.log.gz"
    log.write_bytes(gzip.compress("".join(json.dumps(x) + "\n" for x in lines).encode()))
    common = ["--preset", "openai-chat", "--chat-template", "plain", "--tokenizer", "approx",
              "--block-tokens", 4, "--skip-bad-lines"]
    printed = cli("trace", "import", "-i", log, "-o", tmp_path / "cli.kvtrace", *common).stdout
    got = kvpolicy.import_trace(log, out=tmp_path / "py.kvtrace", preset="openai-chat",
                                chat_template="plain", tokenizer="approx", block_tokens=4,
                                skip_bad_lines=True)
    assert (tmp_path / "cli.kvtrace").read_bytes() == (tmp_path / "py.kvtrace").read_bytes()
    assert got["requests"] == 2 and got["output_tokens"] == 16
    assert got["compression"] == "gzip" and got["format"] == "jsonl"
    assert got["joined_lines"] == 2 and got["responses_without_request"] == 1
    assert got["skipped_rows"] == 1
    assert f"{got['requests']} requests" in printed and "(jsonl, gzip)" in printed
    with pytest.raises(kvpolicy.ConfigError, match="unknown preset"):
        kvpolicy.import_trace(log, out=tmp_path / "x.kvtrace", preset="nope")


@needs_cli
def test_policies_and_routers_list_what_the_cli_lists():
    listing = cli("policies").stdout
    names = [p["name"] for p in kvpolicy.policies()]
    assert names == kvpolicy.policy_names()
    assert names == re.findall(r"^(\S+)", listing, re.M)[:len(names)]
    belady = next(p for p in kvpolicy.policies() if p["name"] == "belady")
    assert belady["offline"] and not next(
        p for p in kvpolicy.policies() if p["name"] == "lru")["offline"]
    # A learned policy's predictor: its choices nested with their own parameters, as printed; the
    # deprecated flat spellings (window=, reuse_trees=, ...) listed by neither.
    laru = next(p for p in kvpolicy.policies() if p["name"] == "laru")
    names = [p["name"] for p in laru["params"]]
    assert "reuse_trees" not in names and "window" not in names
    predictor = next(p for p in laru["params"] if p["name"] == "predictor")
    for choice in predictor["choices"]:
        assert f"predictor={choice['name']}" in listing
        for q in choice["params"]:
            assert f"{q['name']} ({q['type']}, default {q['default']}): {q['allowed']}" in listing
    assert any(q["name"] == "window" for c in predictor["choices"] for q in c["params"])
    routers = kvpolicy.routers()
    printed = re.findall(r"^(\S+)\n", cli("routers").stdout, re.M)
    assert [r["name"] for r in routers] == printed
    for r in routers:
        for p in r["params"]:
            assert f"  {p['name']} ({p['type']}, default {p['default']}): {p['allowed']}" in \
                cli("routers").stdout


def test_every_public_function_has_a_docstring():
    import inspect
    for name in kvpolicy.__all__:
        obj = getattr(kvpolicy, name)
        if inspect.isfunction(obj) or inspect.isbuiltin(obj):
            assert obj.__doc__ and len(obj.__doc__.strip()) > 20, name


@needs_cli
def test_size_rows_equal_the_cli(trace_path, tmp_path):
    want = cli_rows(tmp_path, "size", "-t", trace_path, "--gpu", "h100", "-w", "1-2",
                    "-r", "round_robin", "--target-hit", "20%", "--target-token-hit", 0.1,
                    "--slo-ttft-p90", 5000, "--rate", 2, "--tolerance", 0.05, "--seed", 3)
    got = kvpolicy.size(str(trace_path), gpu="h100", workers=[1, 2], router="round_robin",
                        target_hit="20%", target_token_hit=0.1, slo_ttft_p90_ms=5000, rate=2,
                        tolerance=0.05, seed=3)
    assert [r["kind"] for r in got].count("answer") == 2
    assert got == want  # size rows carry no timings
    # A string of worker counts, and an error named as on the command line.
    assert kvpolicy.size(str(trace_path), gpu="h100", workers="1", target_hit=0.2,
                         router="round_robin", seed=3, tolerance=0.05, rate=2,
                         target_token_hit=0.1, slo_ttft_p90_ms=5000) == \
        [r for r in want if r["workers"] in (0, 1)]
    with pytest.raises(kvpolicy.ConfigError, match="give a target"):
        kvpolicy.size(str(trace_path))
    # A reserve that leaves one H100 almost no KV: the answers are searched again at a larger tp.
    want = cli_rows(tmp_path, "size", "-t", trace_path, "--gpu", "h100", "-w", 2,
                    "--target-hit", "20%", "--reserve-gb", 56.9, "--max-tp", 4)
    got = kvpolicy.size(str(trace_path), gpu="h100", workers=2, target_hit="20%",
                        reserve_gb=56.9, max_tp=4)
    assert got == want and any(r["tp"] > 1 for r in got)


@needs_cli
def test_size_with_pd_and_allocation_equals_the_cli(trace_path, tmp_path):
    want = cli_rows(tmp_path, "size", "-t", trace_path, "--gpu", "h100", "--prefill-workers", 1,
                    "--decode-workers", 2, "--allocation", "whole", "--decode-router",
                    "cache_aware", "--kv-link-bandwidth", 22.5, "--kv-link-latency", 20,
                    "--kv-transfer", "layerwise",
                    "--target-hit", "20%", "--tolerance", 0.05, "--rate", 2)
    got = kvpolicy.size(str(trace_path), gpu="h100", prefill_workers=1, decode_workers=2,
                        allocation="whole", decode_router="cache_aware", kv_link_gb_per_s=22.5,
                        kv_link_latency_us=20, kv_transfer="layerwise", target_hit="20%",
                        tolerance=0.05, rate=2)
    answers = [r for r in got if r["kind"] == "answer"]
    assert len(answers) == 1 and answers[0]["workers"] == 3
    assert all(r["prefill_workers"] == 1 and r["decode_workers"] == 2 and
               r["allocation"] == "whole" for r in got if r["kind"] != "replay")
    assert got == want
    with pytest.raises(kvpolicy.ConfigError, match="leave --workers out"):
        kvpolicy.size(str(trace_path), workers=4, prefill_workers=1, decode_workers=2,
                      target_hit=0.2)


@needs_cli
def test_leaderboard_rows_equal_the_cli(trace_path, tmp_path):
    traces = f"small={trace_path},g=builtin:gsp"
    board = tmp_path / "board.jsonl"
    out = cli("leaderboard", "--traces", traces, "-c", "5%,20%", "-p", "s3fifo", "--seeds",
              "wa,rlt", "--board-json", board, "--json", tmp_path / "replays.jsonl").stdout
    want = [json.loads(line) for line in board.read_text().splitlines()]
    replays = [json.loads(line) for line in (tmp_path / "replays.jsonl").read_text().splitlines()]
    got = kvpolicy.leaderboard(["small=" + str(trace_path), "g=builtin:gsp"], ["5%", "20%"],
                               "s3fifo", seeds="wa,rlt")
    assert got["rows"] == want
    assert untimed(got["results"]) == untimed(replays)
    assert got["text"] in out  # the command prints the same tables, then its timing line
    kinds = [r["kind"] for r in got["rows"]]
    # lru, s3fifo, wa, rlt ranked at 2 sizes on 2 traces; belady is the reference only.
    assert kinds.count("cell") == 16 and kinds.count("summary") == 4
    with pytest.raises(kvpolicy.ConfigError, match="the label 'x' is given twice"):
        kvpolicy.leaderboard(f"x={trace_path},x={trace_path}")


@needs_cli
def test_lpc_decay_equals_the_cli(trace_path, tmp_path):
    # The oracle needs no classifier scores, so any trace serves.
    out = tmp_path / "decay.json"
    cli("study", "lpc-decay", "-t", trace_path, "--scales", "0.01,0.1", "-c", "10%,20%",
        "--lpc-params", "predictor=oracle", "--jobs", 1, "--json", out)
    want = json.loads(out.read_text())
    got = kvpolicy.lpc_decay(kvpolicy.load_trace(str(trace_path)), scales=[0.01, 0.1],
                             capacities="10%,20%", lpc_params="predictor=oracle", jobs=1)
    assert got == want
    assert got["chosen_scale_s"] in (0.01, 0.1)
    with pytest.raises(kvpolicy.ConfigError, match="not positive"):
        kvpolicy.lpc_decay(kvpolicy.load_trace(str(trace_path)), scales=[0],
                           lpc_params="predictor=oracle")
