"""The Python API: the simulator, the online cache, the radix-cache adapter (its decisions equal
the C++ replay's) and error translation. Run by ctest PythonTests with PYTHONPATH=build/python."""

import json
import os
import random
import subprocess
import sys
import threading

import pytest

import kvpolicy

SOURCE = os.environ.get("KVPOLICY_SOURCE_DIR",
                        os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
sys.path.insert(0, os.path.join(SOURCE, "examples"))
import radix_cache  # noqa: E402  (the example under test)


def write_mooncake(path, requests=400, seed=3):
    """A seeded Mooncake-format trace with shared system prompts and conversations."""
    rng = random.Random(seed)
    systems = [[rng.randrange(1 << 30) for _ in range(rng.randint(1, 4))] for _ in range(3)]
    convs, fresh, t = [], 1 << 31, 0
    with open(path, "w") as f:
        for _ in range(requests):
            t += rng.randint(0, 2000)
            kind = rng.random()
            if convs and kind < 0.6:
                conv = rng.choice(convs)
            else:
                conv = list(rng.choice(systems)) if kind < 0.9 else []
                convs.append(conv)
                if len(convs) > 12:
                    convs.pop(0)
            for _ in range(rng.randint(1, 5)):
                fresh += 1
                conv.append(fresh)
            f.write(json.dumps({"timestamp": t, "input_length": len(conv) * 512,
                                "output_length": rng.randint(1, 300), "hash_ids": conv}) + "\n")


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("traces") / "small.jsonl"
    write_mooncake(path)
    return kvpolicy.load_trace(str(path))


def test_load_trace_reads_requests(trace):
    assert len(trace) == 400
    assert trace.block_tokens == 512
    assert trace.block_accesses == sum(len(trace.blocks(r)) for r in range(len(trace)))
    req = trace.request(0)
    assert set(req) == {"time", "session", "turn", "category", "prompt_tokens", "output_tokens",
                        "continuation"}
    times = [trace.request(r)["time"] for r in range(len(trace))]
    assert times == sorted(times) and 0 <= times[0] <= 2.0  # the file's first timestamp, 0-2 s
    with pytest.raises(IndexError):
        trace.blocks(len(trace))


def test_simulate_gives_cli_records(trace, tmp_path):
    rows = kvpolicy.simulate(trace, ["lru", "belady"], ["5%", 30], jobs=2)
    assert [r["policy"] for r in rows] == ["lru", "belady", "lru", "belady"]
    assert rows[2]["capacity_blocks"] == 30 and rows[0]["capacity_fraction"] == 0.05
    for lru, belady in [(rows[0], rows[1]), (rows[2], rows[3])]:
        assert belady["offline"] and not lru["offline"]
        assert belady["block_hits"] >= lru["block_hits"]  # Belady is optimal
        assert 0 < lru["block_hit_rate"] < 1
    # The same record as `kvpolicy simulate --json`, field for field but for timings.
    binary = os.environ.get("KVPOLICY_BINARY")
    if binary:
        src = tmp_path / "t.jsonl"
        write_mooncake(src)
        out = tmp_path / "out.jsonl"
        subprocess.run([binary, "simulate", "-t", str(src), "-p", "lru", "-c", "30",
                        "--json", str(out)], check=True, capture_output=True)
        (cli,) = [json.loads(line) for line in out.read_text().splitlines()]
        (py,) = kvpolicy.simulate(str(src), "lru", 30)
        timing = {"replay_seconds", "replay_cpu_seconds", "ns_per_access", "trace"}
        assert {k: v for k, v in cli.items() if k not in timing} == \
               {k: v for k, v in py.items() if k not in timing}


def test_simulate_releases_the_gil(trace):
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    kvpolicy.simulate(trace, ["lru", "s3fifo", "wa", "lfu"] * 4, [10, 20, 40, 80], jobs=1)
    stop.set()
    thread.join()
    assert len(ticks) > 3


def test_cache_online_api():
    cache = kvpolicy.Cache("lru", capacity_blocks=4, block_tokens=4)
    a = list(range(100, 112))  # 3 full blocks
    assert cache.match(a) == 0
    assert cache.insert(a, time=1.0) == (0, 3, 0)
    assert cache.match(a) == 12
    assert cache.match(a + [1, 2]) == 12  # a partial block is never cached
    cache.pin(a)
    b = list(range(200, 212))
    hit, inserted, evicted = cache.insert(b, time=2.0)
    assert (hit, inserted, evicted) == (0, 1, 0)  # one free block, then everything is pinned
    assert cache.stats()["refused"] == 1
    cache.unpin(a)
    assert len(cache.evict(10)) == 4
    assert len(cache) == 0
    assert cache.lookup(keys=cache.block_keys(a)) == 0
    s = cache.stats()
    assert s["capacity"] == 4 and s["pinned"] == 0 and s["evictions"] == 4


def test_cache_equals_replay(trace):
    for policy in ["lru", "s3fifo", "wa"]:
        (row,) = kvpolicy.simulate(trace, [policy], [25])
        cache = kvpolicy.Cache(policy, 25, trace.block_tokens)
        hits = 0
        for r in range(len(trace)):
            req = trace.request(r)
            hits += cache.insert(keys=trace.blocks(r), time=req["time"], session=req["session"],
                                 turn=req["turn"], prompt_tokens=req["prompt_tokens"],
                                 output_tokens=req["output_tokens"])[0]
        assert hits == row["block_hits"], policy
        batched = kvpolicy.Cache(policy, 25, trace.block_tokens)
        if policy == "lru":  # no request fields: LRU reads none
            assert sum(batched.insert_many([trace.blocks(r) for r in range(len(trace))])) == hits


@pytest.mark.parametrize("policy", ["lru", "fifo", "lfu", "sieve", "s3fifo", "gdsf", "rlt",
                                    "wa", "tlru", "threshold_lru", "guarded:inner=lfu"])
def test_radix_cache_adapter_equals_cpp_replay(trace, policy):
    for capacity in [12, 40]:
        (row,) = kvpolicy.simulate(trace, [policy], [capacity], seed=5)
        assert radix_cache.replay(trace, policy, capacity, seed=5) == row["block_hits"]


def test_radix_cache_example_on_mooncake():
    data = os.environ.get("KVPOLICY_DATA")
    path = data and os.path.join(data, "mooncake-conversation", "conversation_trace.jsonl")
    if not path or not os.path.exists(path):
        pytest.skip("KVPOLICY_DATA's Mooncake trace is not here")
    trace = kvpolicy.load_trace(path)
    capacity = trace.unique_blocks // 20
    for policy in ["lru", "s3fifo"]:
        (row,) = kvpolicy.simulate(trace, [policy], [capacity])
        assert radix_cache.replay(trace, policy, capacity) == row["block_hits"], policy


def test_adapter_locks_and_requests():
    p = kvpolicy.EvictionPolicy("lru", capacity_blocks=3)
    with p.request(time=1.0):
        assert p.on_insert(1)
        assert p.on_insert(2, 1)
        assert p.on_insert(3, 2)
        assert not p.on_insert(4)  # full: the cache must evict first
    p.on_lock(3)
    assert p.evict(3) == []  # 3 is locked, so 1 and 2 are not leaves
    p.on_unlock(3)
    assert p.evict(1) == [3]
    assert 2 in p and 3 not in p
    with pytest.raises(kvpolicy.Error, match="not pinned"):
        p.on_unlock(2)
    with pytest.raises(kvpolicy.Error, match="not cached"):
        p.on_hit(99)
    with pytest.raises(kvpolicy.Error, match="before the previous"):
        p.begin_request(time=0.5)


def test_a_request_the_policy_refuses_is_not_left_open():
    """LPC reads each request's continuation score: a request without one is refused before it
    opens, with what to pass (not how to build a trace), and the next request goes through."""
    cache = kvpolicy.Cache("lpc", capacity_blocks=8, block_tokens=1)
    with pytest.raises(kvpolicy.ConfigError, match="continuation") as e:
        cache.insert(keys=[1, 2])
    assert "trace build" not in str(e.value) and "predictor=oracle" not in str(e.value)
    assert cache.insert(keys=[1, 2], continuation=0.7) == (0, 2, 0)
    assert cache.match(keys=[1, 2]) == 2
    p = kvpolicy.EvictionPolicy("lpc", capacity_blocks=8)
    with pytest.raises(kvpolicy.ConfigError, match="continuation"):
        with p.request(time=1.0):
            pass
    assert not p.in_request
    with p.request(time=2.0, continuation=0.3):
        assert p.on_insert(5)
    assert p.stats()["requests"] == 1


def test_errors_become_python_exceptions_with_the_same_messages(tmp_path):
    with pytest.raises(kvpolicy.ConfigError, match="nope") as e:
        kvpolicy.Cache("nope", 8)
    assert isinstance(e.value, ValueError)
    assert isinstance(e.value, kvpolicy.Error)  # one base catches every kvpolicy error, as in C++
    path = tmp_path / "t.jsonl"
    write_mooncake(path, requests=20)
    binary = os.environ.get("KVPOLICY_BINARY")
    if binary:  # the command line says the same
        cli = subprocess.run([binary, "simulate", "-t", str(path), "-p", "nope"],
                             capture_output=True, text=True)
        assert cli.returncode != 0 and str(e.value) in cli.stderr
    with pytest.raises(ValueError, match="lru"):
        kvpolicy.Cache("lru:bogus=1", 8)
    with pytest.raises(ValueError, match="at least one block"):
        kvpolicy.Cache("lru", 0)
    with pytest.raises(ValueError, match="future"):
        kvpolicy.EvictionPolicy("belady", 8)
    with pytest.raises(ValueError, match="p"):
        kvpolicy.Cache("laru:predictor=noisy,p=2", 8)
    with pytest.raises(kvpolicy.Error, match="no-such-file"):
        kvpolicy.load_trace("/no-such-file.jsonl")
    with pytest.raises(ValueError, match="5x"):
        kvpolicy.simulate(str(path), "lru", "5x")


def test_simulate_reads_every_capacity_unit(trace):
    # 100 % is every unique block (it was one block: the share became the bare number 1.0), and
    # a share may exceed the trace.
    rows = kvpolicy.simulate(trace, ["lru"], ["100%", "150%", "2%"])
    unique = trace.unique_blocks
    assert [r["capacity_blocks"] for r in rows] == [unique, (3 * unique + 1) // 2,
                                                    int(0.02 * unique + 0.5)]
    assert [r["capacity_fraction"] for r in rows] == [1.0, 1.5, 0.02]
    assert rows[0]["block_hit_rate"] == pytest.approx(rows[0]["infinite_hit_rate"])


def test_simulate_policy_sets_skip_what_the_trace_cannot_feed(trace, capfd):
    # The trace has no continuation scores: LPC is left out of a set with one line on stderr,
    # never replaced by its oracle variant; named on its own it is an error.
    rows = kvpolicy.simulate(trace, ["online"], [30])
    policies = {r["policy"] for r in rows}
    assert "lru" in policies and "lpc" not in policies
    assert not any(r["offline"] for r in rows)
    assert "skipped lpc" in capfd.readouterr().err
    with pytest.raises(kvpolicy.ConfigError, match="continuation scores"):
        kvpolicy.simulate(trace, ["lpc"], [30])


def test_cache_shared_between_threads():
    # insert_many releases the GIL; every call holds the cache's lock, so threads hammering one
    # Cache never see it above capacity, never crash, and leave no pin behind.
    capacity = 300
    cache = kvpolicy.Cache("lru", capacity_blocks=capacity, block_tokens=4)
    rng = random.Random(7)
    # Prompts sharing prefixes: a prefix of one of 60 documents of 40 blocks each.
    documents = [[rng.randrange(1000) for _ in range(160)] for _ in range(60)]
    prompts = [cache.block_keys(rng.choice(documents)[:4 * rng.randint(1, 40)])
               for _ in range(3000)]
    errors, sizes = [], []

    def batches(seed):
        local = random.Random(seed)
        try:
            for _ in range(30):
                cache.insert_many([local.choice(prompts) for _ in range(50)])
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    def singles(seed):
        local = random.Random(seed)
        try:
            for _ in range(1500):
                keys = local.choice(prompts)
                cache.insert(keys=keys)
                cache.lookup(keys=keys)
                try:
                    cache.pin(keys=keys)
                except kvpolicy.Error:
                    continue  # another thread evicted some in between: nothing pinned
                sizes.append(len(cache))
                cache.unpin(keys=keys)
                sizes.append(cache.stats()["size"])
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=batches, args=(s,)) for s in range(2)]
    threads += [threading.Thread(target=singles, args=(s,)) for s in range(2, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sizes and max(sizes) <= capacity
    s = cache.stats()
    assert s["size"] <= capacity and s["pinned"] == 0
    assert len(cache.evict(capacity)) == s["size"]  # every block unpinned, so evictable


def test_session_and_category_ids_are_range_checked():
    # A cast to the id's width kept the low bits: session 2^32 + 5 became session 5.
    cache = kvpolicy.Cache("lru", capacity_blocks=8, block_tokens=4)
    keys = [1, 2]
    cache.insert(keys=keys, session=2**32 - 2, category=65535)  # the largest ids
    for kwargs, name in [({"session": 2**32 + 5}, "session"), ({"session": 2**32 - 1}, "session"),
                         ({"session": -1}, "session"), ({"category": 65536}, "category"),
                         ({"category": -3}, "category"), ({"session": 2**70}, "session")]:
        with pytest.raises(ValueError, match=name):
            cache.insert(keys=keys, **kwargs)
        with pytest.raises(ValueError, match=name):
            cache.lookup(keys=keys, **kwargs)
    policy = kvpolicy.EvictionPolicy("lru", capacity_blocks=3)
    with pytest.raises(ValueError, match="session"):
        policy.begin_request(session=2**40)
    assert not policy.in_request
