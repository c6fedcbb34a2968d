"""Parity of kvpolicy.integrations.vllm on real traces (imported by test_vllm.py, which puts
vLLM's files on sys.path first).

1. For every online policy of kvpolicy's registry, vLLM's real CPUOffloadingManager with
   kvp:<policy> gives the same hits, evictions (the same blocks, in order) and store failures
   as vllm_drive.Reference, the same stream told straight to an EvictionPolicy(flat=True) by the
   mapping's calls. That tests the mapping, not replay: vLLM's tier is flat, a lookup stops at
   the first block not readable, a store is all or nothing and blocks being written are locked,
   so the access stream differs from kvpolicy's prefix replay (docs/engines/vllm.md).
2. kvp:lru and vLLM's own lru give the same hits, evictions and store failures.
Traces: the first MOONCAKE_REQUESTS requests of Mooncake's conversation trace and the first
ARENA_REQUESTS turns of Chatbot Arena built by `kvpolicy trace build` (KVPOLICY_DATA; skipped
without it), at a capacity where both evictions and store failures happen.
"""
import os

import pytest

import kvpolicy
from kvpolicy.integrations.vllm import _node_id
from engines import ARENA, arena_trace
from vllm_drive import Reference, data_dir, drive, manager, trace_requests

MOONCAKE_REQUESTS = 2000
MOONCAKE_BLOCKS = 256  # 512-token blocks
ARENA_REQUESTS = 3000
ARENA_BLOCKS = 96  # 16-token blocks

# A spec per online policy: the registry's defaults, except LPC, whose default predictor reads a
# continuation score that these traces do not carry.
_SPEC_OVERRIDES = {"lpc": "lpc:predictor=constant"}


def online_specs():
    return [_SPEC_OVERRIDES.get(p, p) for p in kvpolicy.policy_names()
            if not kvpolicy.is_offline(p)]


def _trace_file(name):
    d = data_dir()
    path = d and os.path.join(d, name)
    if not path or not os.path.exists(path):
        pytest.skip(f"trace {name} absent (set KVPOLICY_DATA)")
    return path


@pytest.fixture(scope="session")
def mooncake_requests():
    path = _trace_file("mooncake-conversation/conversation_trace.jsonl")
    return trace_requests(kvpolicy.load_trace(path, max_requests=MOONCAKE_REQUESTS))


@pytest.fixture(scope="session")
def arena_requests(tmp_path_factory):
    _trace_file(ARENA)
    out = arena_trace(str(tmp_path_factory.mktemp("arena")))
    if out is None:
        pytest.skip("the kvpolicy command is needed to build the Arena trace (KVPOLICY_BINARY)")
    return trace_requests(kvpolicy.load_trace(out, max_requests=ARENA_REQUESTS))


def _traces(request):
    return [("mooncake", request.getfixturevalue("mooncake_requests"), MOONCAKE_BLOCKS),
            ("arena", request.getfixturevalue("arena_requests"), ARENA_BLOCKS)]


@pytest.mark.parametrize("trace", ["mooncake", "arena"])
def test_kvp_lru_equals_vllms_lru(trace, request):
    reqs = request.getfixturevalue(f"{trace}_requests")
    blocks = MOONCAKE_BLOCKS if trace == "mooncake" else ARENA_BLOCKS
    native = drive(manager("lru", blocks), reqs, fail_every=11)
    ours = drive(manager("kvp:lru", blocks), reqs, fail_every=11)
    assert native.evicted and native.failures and native.failed_writes  # all paths taken
    assert ours.summary() == native.summary()
    assert ours.evicted == native.evicted


@pytest.mark.parametrize("spec", online_specs())
def test_manager_with_kvp_policy_matches_kvpolicy(spec, request):
    for name, reqs, blocks in _traces(request):
        m = manager("kvp:" + spec, blocks)
        ours = drive(m, reqs, fail_every=11)
        reference = Reference(spec, blocks)
        ref = reference.run(reqs, fail_every=11)
        assert ours.evicted and ours.failures, (name, ours.summary())
        assert ours.summary() == ref.summary(), name
        assert [_node_id(k) for k in ours.evicted] == ref.evicted, name
        got, want = m._policy.stats(), reference.policy.stats()
        for field in ("hits", "inserted", "evictions", "size", "requests"):
            assert got[field] == want[field], (name, field)
