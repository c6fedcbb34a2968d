"""Parity runs for kvpolicy.integrations.lmcache (tests and bench): a real trace's requests as
LMCache ObjectKeys, served once through the REAL L1 eviction controller and listener bridges with
a KvpolicyEvictionPolicy deciding, and once as kvpolicy's own run of the same access stream
(lmcache_fakes.Reference). Traces come from KVPOLICY_DATA (default ../shared/traces); the
conversation trace is built from Chatbot Arena with `kvpolicy trace build` once and kept in the
build directory. Import after engines.use_engine("lmcache").
"""
import os

import kvpolicy
from kvpolicy.integrations.lmcache import KvpolicyEvictionPolicy
from engines import arena_trace, data_dir
from lmcache_fakes import Engine, FakeL1, Reference, l1_controller, object_keys

MOONCAKE = "mooncake-conversation/conversation_trace.jsonl"


def load_requests(name, max_requests, cache_dir="."):
    """(requests as lists of ObjectKeys, chunk_tokens) of trace `name` ("mooncake" or
    "arena"), or None when its data is absent."""
    if name == "mooncake":
        data = data_dir()
        path = os.path.join(data, MOONCAKE) if data else None
        if not path or not os.path.isfile(path):
            return None
    else:
        path = arena_trace(cache_dir)
        if path is None:
            return None
    trace = kvpolicy.load_trace(path, max_requests=max_requests)
    return [object_keys(trace.blocks(i)) for i in range(len(trace))], trace.block_tokens


def online_policies():
    """Every online policy of kvpolicy's registry (the ones an engine can run)."""
    return [name for name in kvpolicy.policy_names() if not kvpolicy.is_offline(name)]


def run_adapter(spec, requests, capacity, chunk_tokens=16, watermark=0.8, ratio=0.2):
    """Serves the requests through the real L1 controller and bridges, kvpolicy deciding.
    Returns (per-request L1 prefix hits, per-round victims, the policy's stats)."""
    policy = KvpolicyEvictionPolicy(spec, capacity, chunk_tokens)
    l1 = FakeL1(capacity)
    engine = Engine(l1, l1_controller(l1, policy, watermark, ratio))
    hits = [engine.request(keys) for keys in requests]
    return hits, l1.deleted, policy.stats()


def run_reference(spec, requests, capacity, chunk_tokens=16, watermark=0.8, ratio=0.2):
    """kvpolicy's own run of the same stream. Returns what run_adapter returns."""
    ref = Reference(spec, capacity, watermark, ratio, chunk_tokens)
    hits = [ref.request(keys) for keys in requests]
    return hits, ref.victims, ref.policy.stats()
