"""`kvpolicy recommend`'s configurations against the engines' real files (docs/engines.md): the
keys it writes are those the engine reads, the names it gives resolve in the engine's own
registries, and (once kvpolicy's adapter for the engine is installed) its kvpolicy forms build a
policy. One engine per process, named by KVPOLICY_RECOMMEND_ENGINE (ctest EngineRecommend_<e>);
skips without the engines' files, and skips a form whose adapter this build lacks.
"""
import importlib
import json
import os
import random
import re

import pytest

from engines import engines_dir, use_engine

ENGINE = os.environ.get("KVPOLICY_RECOMMEND_ENGINE", "vllm")
INDEX = {"vllm": 0, "sglang": 1, "lmcache": 2}[ENGINE]
use_engine(ENGINE)

import kvpolicy  # noqa: E402  (after the engine's files are on sys.path)


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    """A small Mooncake-format trace with shared prefixes (512-token blocks)."""
    rng = random.Random(7)
    path = tmp_path_factory.mktemp("rec") / "t.jsonl"
    convs, fresh, t = [], 1 << 30, 0
    with open(path, "w") as f:
        for _ in range(240):
            t += rng.randint(0, 3000)
            if convs and rng.random() < 0.6:
                conv = rng.choice(convs)
            else:
                conv = [0, 1] if rng.random() < 0.8 else []
                convs.append(conv)
            for _ in range(rng.randint(1, 3)):
                fresh += 1
                conv.append(fresh)
            f.write(json.dumps({"timestamp": t, "input_length": 512 * len(conv),
                                "output_length": 100, "hash_ids": list(conv)}) + "\n")
    return path


def registered(spec):
    return spec.split(":")[0] in kvpolicy.policy_names()


def engine_of(trace_path, policy):
    rec = kvpolicy.recommend(str(trace_path), capacity="20%", policy=policy)
    e = rec["engines"][ENGINE]
    assert e["policy"] == policy, e  # every policy below runs in full in every engine
    return rec, e


def adapter(module):
    """kvpolicy's adapter module for the engine, or a skip when this build lacks it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        pytest.skip(f"{module} is not in this build ({err})")


POLICIES = ["lru", "s3fifo", "sieve", "gdsf", "hpt", "slru:protected_threshold=4"]


@pytest.mark.skipif(ENGINE != "vllm", reason="vLLM's checks")
@pytest.mark.parametrize("policy", ["lru", "s3fifo", "sieve"])
def test_vllm_keys_are_the_cpu_specs_and_the_name_resolves(trace_path, policy):
    spec_src = open(os.path.join(engines_dir(), "engines/vllm/reference/vllm/v1/kv_offload/cpu/"
                                 "spec.py")).read()
    tiering = open(os.path.join(engines_dir(), "engines/vllm/reference/vllm/v1/kv_offload/"
                                "tiering/spec.py")).read()
    read = set(re.findall(r'extra_config\.get\(\s*"([a-z_]+)"', spec_src))
    assert {"cpu_bytes_to_use", "eviction_policy", "cache_policy_module_path"} <= read
    from vllm.v1.kv_offload.cpu.policies.base import CachePolicy
    from vllm.v1.kv_offload.cpu.policies.factory import CachePolicyFactory
    rec, e = engine_of(trace_path, policy)
    config = json.loads(e["config"])
    assert config["kv_connector"] == "OffloadingConnector"
    extra = config["kv_connector_extra_config"]
    # block_size is the tiering spec's documented key; the others cpu/spec.py reads.
    assert set(extra) - read == {"block_size"} and '"block_size"' in tiering, extra
    assert extra["cpu_bytes_to_use"] == round(rec["kv_bytes_per_block"] * rec["capacity_blocks"])
    if "cache_policy_module_path" in extra:
        adapter(extra["cache_policy_module_path"])
    cls = CachePolicyFactory.get_cache_policy_cls(extra["eviction_policy"],
                                                  extra.get("cache_policy_module_path"))
    assert issubclass(cls, CachePolicy)
    cls(cache_capacity=rec["capacity_blocks"])


@pytest.mark.skipif(ENGINE != "sglang", reason="SGLang's checks")
@pytest.mark.parametrize("policy", POLICIES)
def test_sglang_names_resolve_in_its_registry(trace_path, policy):
    if not registered(policy):
        pytest.skip(f"{policy} is not registered in this build")
    from sglang.srt.mem_cache.utils import get_eviction_strategy
    _, e = engine_of(trace_path, policy)
    flags = e["config"]
    name = re.search(r"--radix-eviction-policy (\S+)", flags)
    if e["support"] == "native":
        config = re.search(r"--radix-eviction-policy-config '([^']*)'", flags)
        if config:  # SGLang with #37795 passes it as keyword arguments; the fixture predates it
            strategy = type(get_eviction_strategy(name.group(1)))
            strategy(**json.loads(config.group(1)))
        else:
            get_eviction_strategy(name.group(1))
    elif e["support"] == "score":
        module = adapter("kvpolicy.integrations.sglang")
        module.register()
        get_eviction_strategy(name.group(1))
    else:
        assert "--radix-cache-backend kvpolicy" in flags and "SGLANG_PLUGINS=kvpolicy" in flags
        spec = re.search(r"KVPOLICY_SGLANG_SPEC='([^']*)'", flags).group(1)
        assert spec == policy
        adapter("kvpolicy.integrations.sglang").register


@pytest.mark.skipif(ENGINE != "lmcache", reason="LMCache's checks")
@pytest.mark.parametrize("policy", ["lru", "s3fifo", "sieve"])
def test_lmcache_keys_are_eviction_configs(trace_path, policy):
    from lmcache.v1.distributed.config import EvictionConfig
    _, e = engine_of(trace_path, policy)
    fields = {}
    for line in e["config"].splitlines():
        if line.startswith("#") or not line.strip():
            continue
        key, _, value = line.partition(":")
        fields[key.strip()] = json.loads(value.strip())
    config = EvictionConfig(**fields)  # the real field names, or a TypeError
    assert config.eviction_policy == ("LRU" if policy == "lru" else "kvp:" + policy)
    if e["support"] == "kvpolicy":
        k = adapter("kvpolicy.integrations.lmcache")
        call = re.search(r"k\.install\((.*)\)$", e["install"]).group(1)
        eval(f"k.install({call})", {"k": k})
        try:
            from lmcache.v1.distributed import eviction_policy
            built = eviction_policy.CreateEvictionPolicy(config)
            assert type(built).__module__.startswith("kvpolicy"), type(built)
        finally:
            k.uninstall()
