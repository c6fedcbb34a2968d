"""kvpolicy.integrations.vllm against vLLM's real offload-tier files (../shared/engines): the
CachePolicy contract as the real CPUOffloadingManager exercises it, vLLM's own unit tests run
with the adapter in place of vLLM's LRU, and (vllm_parity.py) parity on real traces."""
from engines import use_engine

root = use_engine("vllm")

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

import kvpolicy.integrations.vllm as adapter  # noqa: E402
from vllm.v1.kv_offload.base import LookupResult, ReqContext, make_offload_key  # noqa: E402
from vllm.v1.kv_offload.cpu.policies.base import CachePolicy  # noqa: E402
from vllm.v1.kv_offload.cpu.policies.factory import CachePolicyFactory  # noqa: E402

from vllm_drive import drive, manager  # noqa: E402
from vllm_parity import (  # noqa: E402,F401  (the parity tests and their traces)
    arena_requests, mooncake_requests, test_kvp_lru_equals_vllms_lru,
    test_manager_with_kvp_policy_matches_kvpolicy)

CTX = ReqContext(req_id="t")
SPECS = ["lru", "s3fifo", "sieve", "fifo", "lfu", "wa", "tlru"]


def key(i):
    return make_offload_key(str(i).encode(), 0)


def keys(*ids):
    return [key(i) for i in ids]


def store(m, *ids, ok=True):
    out = m.prepare_store(keys(*ids), CTX)
    if out is not None:
        m.complete_store(out.keys_to_store, CTX, success=ok)
    return out


def state(m):
    """What a store failure must leave unchanged: the manager's counters and blocks, and the
    policy's own counters."""
    p = m._policy
    blocks = sorted((k, b.ref_cnt, b.block_id) for k, b in p._blocks.items())
    return (m._num_allocated_blocks, list(m._free_list), m._num_evictable_cache_blocks,
            m._num_write_pending_blocks, blocks, p.stats())


# --- loading by name ------------------------------------------------------------------------

def test_names_resolve_through_vllms_factory():
    cls = CachePolicyFactory.get_cache_policy_cls("kvp:s3fifo", "kvpolicy.integrations.vllm")
    assert issubclass(cls, CachePolicy) and cls.spec == "s3fifo"
    assert getattr(adapter, "kvp:s3fifo") is cls  # one class per spec string
    cls = getattr(adapter, "kvp:s3fifo:small_ratio=0.2")
    assert cls.spec == "s3fifo:small_ratio=0.2" and cls(8)._policy.policy.startswith("s3fifo")


@pytest.mark.parametrize("name,words", [
    ("kvp:nosuch", ["kvp:nosuch", "nosuch"]),
    ("kvp:belady", ["kvp:belady", "offline"]),
    ("kvp:s3fifo:small_ratio=7", ["kvp:s3fifo:small_ratio=7", "small_ratio"]),
    ("kvp:", ["no kvpolicy spec"]),
    ("kvp:lpc", ["kvp:lpc", "continuation"]),  # vLLM's requests carry no continuation score
])
def test_bad_names_say_what_is_wrong(name, words):
    with pytest.raises(ValueError) as e:
        CachePolicyFactory.get_cache_policy_cls(name, "kvpolicy.integrations.vllm")
    for w in words:
        assert w in str(e.value)
    with pytest.raises(AttributeError, match="kvp:<kvpolicy spec>"):
        adapter.lru  # noqa: B018  (not a kvp: name)


# --- the contract, through the real manager ---------------------------------------------------

@pytest.mark.parametrize("spec", SPECS)
def test_store_failure_is_atomic(spec):
    """A store that cannot evict enough outside `protected` returns None and changes nothing:
    the manager and the policy go on exactly as a twin that never tried it."""
    a, b = manager("kvp:" + spec, 4), manager("kvp:" + spec, 4)
    for m in (a, b):
        store(m, 1, 2, 3, 4)
        m.touch(keys(2, 1), CTX)
    before = state(a)
    # 2 new blocks, 4 evictable, but 3 of them are the call's own (protected): impossible.
    assert a.prepare_store(keys(1, 2, 3, 5, 6), CTX) is None
    assert state(a) == before
    for m in (a, b):  # both now evict the same victims
        m.prepare_load(keys(1), CTX)
        assert m.prepare_store(keys(9, 8, 7, 6, 5), CTX) is None  # only 3 evictable
    out_a, out_b = a.prepare_store(keys(7, 8), CTX), b.prepare_store(keys(7, 8), CTX)
    assert out_a.evicted_keys == out_b.evicted_keys and len(out_a.evicted_keys) == 2
    assert key(1) not in out_a.evicted_keys  # being loaded


@pytest.mark.parametrize("spec", SPECS)
def test_protected_and_loading_blocks_are_never_evicted(spec, mooncake_requests):
    def check(m, ks):
        p = m._policy
        assert m._num_evictable_cache_blocks == p.kvpolicy.evictable()
        assert p.stats()["size"] == len(p._blocks) - len(p._writing)
        assert len(p._blocks) == m._num_allocated_blocks - len(m._free_list)
        assert len({b.block_id for b in p._blocks.values()}) == len(p._blocks)

    m = manager("kvp:" + spec, 48)
    own = []
    real_evict = m._policy.evict

    def spy(n, protected, *args, **kwargs):
        out = real_evict(n, protected)
        if out is not None:
            assert len(out) == n and not {k for k, _ in out} & protected
            assert all(b.ref_cnt == 0 for _, b in out)
            own.append(len(out))
        return out

    m._policy.evict = spy
    run = drive(m, mooncake_requests[:300], fail_every=7, check=check)
    assert own and run.failures and run.failed_writes
    events = list(m.take_events())
    assert sum(len(e.keys) for e in events if e.removed) == len(run.evicted) == sum(own)


@pytest.mark.parametrize("spec", SPECS)
def test_failed_store_leaves_no_trace(spec):
    """remove() after a failed store frees the slot, and the policy keeps no ghost: the run
    goes on exactly as a twin's that never stored the block."""
    a, b = manager("kvp:" + spec, 4), manager("kvp:" + spec, 4)
    for m in (a, b):
        store(m, 1, 2, 3)
    store(a, 9, ok=False)
    assert a.lookup(key(9), CTX) is LookupResult.MISS
    for m in (a, b):  # (stats() tells the queued stores to both alike)
        assert m._policy.stats()["size"] == 3 and len(m._policy) == 3
        assert m._get_num_free_blocks() == 1
    for m in (a, b):
        assert store(m, 4).evicted_keys == []  # the failed store's slot is free again
    for i in (9, 5, 6, 9, 1, 7):
        out_a, out_b = store(a, i), store(b, i)
        assert out_a.evicted_keys == out_b.evicted_keys
        a.touch(keys(i), CTX)
        b.touch(keys(i), CTX)
    assert a._policy.stats()["evictions"] == b._policy.stats()["evictions"]


def test_remove_of_a_stored_block_goes_to_the_policy():
    p = adapter.policy_class("s3fifo")(4)
    m = manager("kvp:s3fifo", 4)
    store(m, 1, 2)
    m._policy.remove(key(1))  # outside the manager's use, still honoured
    assert m._policy.get(key(1)) is None and m._policy.stats()["size"] == 1
    with pytest.raises(KeyError):
        p.remove(key(3))


@pytest.mark.parametrize("spec", SPECS)
def test_clear_drops_everything(spec):
    m = manager("kvp:" + spec, 4)
    store(m, 1, 2, 3)
    m.prepare_load(keys(1), CTX)
    m.prepare_store(keys(4), CTX)  # being written
    m.reset_cache()
    assert all(m.lookup(k, CTX) is LookupResult.MISS for k in keys(1, 2, 3, 4))
    assert m._policy.stats()["size"] == 0 and len(m._policy) == 0
    out = store(m, 5, 6, 7, 8)
    assert out.evicted_keys == [] and list(out.store_spec.block_ids) == [0, 1, 2, 3]
    assert store(m, 1).evicted_keys == [key(5)] or spec != "lru"


def test_touches_of_uncached_and_writing_keys_are_ignored():
    """As vLLM's LRU: the same evictions after touches of keys never stored and keys still being
    written (kvp:lru against lru, and no error from any policy)."""
    runs = {}
    for policy in ["lru", "kvp:lru"] + ["kvp:" + s for s in SPECS[1:]]:
        m = manager(policy, 4)
        store(m, 1, 2)
        pending = m.prepare_store(keys(3), CTX)
        m.touch(keys(3, 40, 41, 2), CTX)  # 3 is being written, 40 and 41 were never stored
        m.complete_store(pending.keys_to_store, CTX)
        m.touch(keys(1), CTX)
        runs[policy] = [store(m, i).evicted_keys for i in (5, 6, 7, 8)]
    assert runs["kvp:lru"] == runs["lru"] == [[], keys(2), keys(3), keys(1)]


def test_optional_calls_of_newer_vllm_are_accepted():
    p = adapter.policy_class("lru")(4)
    p.open_session("s", CTX, ttl=3)
    p.record_lookup(key(1), CTX, hit=True)
    p.on_request_finished(CTX)
    p.close_session("s")
    assert p.evict(0, set(), CTX, reason="test") == []
    assert p.evict(1, set(), CTX) is None  # nothing stored


def test_request_fields_reach_the_policy():
    p = adapter.policy_class("wa")(8)
    ctx = ReqContext("r", kv_transfer_params={"kvpolicy_time": 5.0, "kvpolicy_session": "chat-7",
                                              "kvpolicy_turn": 2})
    p.touch(keys(1, 2), ctx)
    f = ctx.get_state(adapter._RequestFields)
    assert (f.time, f.turn) == (5.0, 2) and isinstance(f.session, int)
    late = ReqContext("q", kv_transfer_params={"kvpolicy_time": 1.0})
    p.touch(keys(3), late)  # touched after a later request: the clock does not go back
    assert late.get_state(adapter._RequestFields).time == 5.0
    assert p.stats()["requests"] == 2
    for bad, word in [({"kvpolicy_time": -1}, "kvpolicy_time"),
                      ({"kvpolicy_turn": 0}, "kvpolicy_turn"),
                      ({"kvpolicy_session": 1.5}, "kvpolicy_session")]:
        with pytest.raises(ValueError, match=word):
            p.touch(keys(1), ReqContext("b", kv_transfer_params=bad))


# --- vLLM's own tests with the adapter installed ----------------------------------------------

# Policy-specific, so deselected (pytest -k): test_lru_and_arc_registered asserts the registry
# returns vLLM's own classes; test_cpu_manager asserts LRU's exact victims, so it runs with
# kvp:lru only (and passes: kvp:lru evicts what vLLM's LRU does). The ARC tests inspect ARC's
# T1/T2 lists: they run vLLM's ARC.
VLLM_POLICY_SPECIFIC = "not test_lru_and_arc_registered"
VLLM_LRU_SPECIFIC = "(not test_cpu_manager or test_cpu_manager_)"  # its name is a prefix


@pytest.mark.parametrize("spec", ["lru", "s3fifo", "sieve", "fifo", "wa"])
def test_vllms_own_offload_tests_pass_with_the_adapter(spec):
    """vLLM's tests/v1/kv_offload/cpu, unmodified, with "lru" resolving to kvp:<spec> (the
    plugin vllm_kvp_plugin.py)."""
    here = os.path.dirname(os.path.abspath(__file__))
    vllm_dir = os.path.join(root, "engines", "vllm")
    path = [vllm_dir, os.path.join(root, "stubs", "vllm"), here] + sys.path
    if os.environ.get("SEAMS_TORCH", "shim") != "real":
        path.insert(2, os.path.join(root, "stubs", "torch_shim"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p),
               KVPOLICY_VLLM_LRU=spec)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
           "vllm_kvp_plugin", "tests/v1/kv_offload/cpu"]
    deselected = 1 if spec == "lru" else 2
    cmd += ["-k", VLLM_POLICY_SPECIFIC + (" and " + VLLM_LRU_SPECIFIC if spec != "lru" else "")]
    r = subprocess.run(cmd, cwd=vllm_dir, env=env, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert f"{35 - deselected} passed, {deselected} deselected" in out, out
    built = int(out.split("kvpolicy adapter policies built: ")[1].split()[0])
    assert built >= 10, out  # the LRU tests really ran on the adapter


def test_ids_are_stable_and_a_shared_id_is_named():
    digest = bytes(range(32))
    k0, k1 = make_offload_key(digest, 0), make_offload_key(digest, 1)
    assert adapter._node_id(k0) == adapter._node_id(bytes(k0)) != adapter._node_id(k1)
    assert adapter._node_id(key(5)) == adapter._node_id(key(5))  # short keys: hashed
    # Keys that differ only before their last 8 hash bytes share an id (never for real hashes).
    twin = make_offload_key(b"\xff" * 8 + digest[8:], 0)
    m = manager("kvp:lru", 4)
    m.prepare_store([k0, twin], CTX)
    m.complete_store([k0, twin], CTX)
    with pytest.raises(RuntimeError, match="share the 64-bit id"):
        m.touch([k0], CTX)
