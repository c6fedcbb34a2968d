"""Parity runs for kvpolicy.integrations.lmcache (tests and bench): a real trace's requests as
LMCache ObjectKeys, served once through the REAL L1 eviction controller and listener bridges with
a KvpolicyEvictionPolicy deciding, and once as kvpolicy's own run of the same access stream
(lmcache_fakes.Reference). Traces come from KVPOLICY_DATA (default ../shared/traces); the
conversation trace is built from Chatbot Arena with `kvpolicy trace build` once and kept in the
build directory. Import after engines.use_engine("lmcache").
"""
import os
import shutil
import subprocess

import kvpolicy
from kvpolicy.integrations.lmcache import KvpolicyEvictionPolicy
from lmcache_fakes import Engine, FakeL1, Reference, l1_controller, object_keys

MOONCAKE = "mooncake-conversation/conversation_trace.jsonl"
ARENA = "chatbot-arena/chatbot_arena_conversations_raw.jsonl"


def data_dir():
    """KVPOLICY_DATA, or ../shared/traces beside the source tree; None when absent."""
    path = os.environ.get("KVPOLICY_DATA")
    if not path:
        source = os.environ.get("KVPOLICY_SOURCE_DIR",
                                os.path.join(os.path.dirname(__file__), "..", ".."))
        path = os.path.join(source, "..", "shared", "traces")
    return path if os.path.isdir(path) else None


def kvpolicy_binary():
    """The kvpolicy command line (KVPOLICY_BINARY, ./kvpolicy in the build directory ctest runs
    in, or on PATH), or None."""
    for path in (os.environ.get("KVPOLICY_BINARY"), os.path.join(os.getcwd(), "kvpolicy"),
                 shutil.which("kvpolicy")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def arena_trace(cache_dir):
    """Chatbot Arena built into a kvpolicy trace (16-token blocks) by `kvpolicy trace build`,
    kept in cache_dir; None without the data or the binary."""
    data, binary = data_dir(), kvpolicy_binary()
    if data is None or binary is None or not os.path.isfile(os.path.join(data, ARENA)):
        return None
    out = os.path.join(cache_dir, "arena.kvtrace")
    if not os.path.isfile(out):
        os.makedirs(cache_dir, exist_ok=True)
        partial = os.path.join(cache_dir, f"arena.{os.getpid()}.kvtrace")  # the suffix says the format
        subprocess.run([binary, "trace", "build", "--source", "chatbot-arena", "--input",
                        os.path.join(data, ARENA), "--out", partial], check=True,
                       capture_output=True)
        os.replace(partial, out)
    return out


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
