"""kvpolicy.integrations.sglang against SGLang's real RadixCache (../shared/engines): the
smoke's invariants for every online policy, locks, page-exact eviction, parity with kvpolicy's
own run of the same block stream on real traces, kvp:lru against SGLang's lru where they
coincide, SGLang's own evict-policy tests, the score strategies and register()."""
from engines import use_engine

ROOT = use_engine("sglang")

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from array import array  # noqa: E402

import pytest  # noqa: E402

import kvpolicy  # noqa: E402
import sglang_drive as drive  # noqa: E402
from kvpolicy.integrations import sglang as kvp_sglang  # noqa: E402
from sglang.srt.mem_cache.base_prefix_cache import (  # noqa: E402
    EvictParams, InsertParams, MatchPrefixParams)
from sglang.srt.mem_cache.radix_cache import RadixKey  # noqa: E402
from workload import make_requests  # noqa: E402  (the engines' smoke workload)


# Policies that need a request field this adapter cannot supply get a parameter that does not.
_NEEDS = {"lpc": "lpc:predictor=constant"}


# The learned policies are offline with their default (oracle) predictor; online with reuse.
_LEARNED = ["laru:predictor=reuse", "hf:predictor=reuse", "fpb:predictor=reuse"]


def online_policies():
    names = [_NEEDS.get(p["name"], p["name"]) for p in kvpolicy.policies() if not p["offline"]]
    return names + [s for s in _LEARNED if not kvpolicy.is_offline(s)]


def smoke_requests():
    return [(r.tokens, r.output) for r in make_requests()]


def key(tokens):
    return RadixKey(array("q", tokens))


# ----- invariants -----

@pytest.mark.parametrize("spec", online_policies())
def test_invariants_every_online_policy(spec):
    cache, alloc = drive.make_cache(900, spec=spec)
    hits, evicted = drive.run(cache, alloc, smoke_requests())
    assert evicted > 0 and sum(h or 0 for h in hits) > 0
    assert None not in hits


@pytest.mark.parametrize("page,block", [(1, 4), (4, 4), (4, 16), (16, 16), (2, 6)])
def test_invariants_block_sizes(page, block):
    for spec in ("lru", "s3fifo"):
        cache, alloc = drive.make_cache(900, page=page, spec=spec, block=block)
        hits, evicted = drive.run(cache, alloc, smoke_requests())
        assert evicted > 0 and None not in hits


def test_bad_config_is_a_clear_error():
    with pytest.raises(kvpolicy.ConfigError, match="multiple of SGLang's page size"):
        drive.make_cache(64, page=4, spec="lru", block=6)
    with pytest.raises(kvpolicy.ConfigError):
        drive.make_cache(64, spec="no_such_policy")
    with pytest.raises(kvpolicy.ConfigError):
        drive.make_cache(64, spec="belady")  # offline: reads the future


def test_locked_nodes_are_never_evicted():
    cache, alloc = drive.make_cache(64, spec="lru")
    a = alloc.alloc(20)
    cache.insert(InsertParams(key=key(list(range(20))), value=a))
    m = cache.match_prefix(MatchPrefixParams(key=key(list(range(12)))))
    cache.inc_lock_ref(m.last_device_node)
    b = alloc.alloc(20)
    cache.insert(InsertParams(key=key(list(range(100, 120))), value=b))
    got = cache.evict(EvictParams(num_tokens=1000)).num_tokens_evicted
    assert got == 28  # everything but the 12 locked tokens
    assert len(cache.match_prefix(MatchPrefixParams(key=key(list(range(20))))).device_indices) == 12
    cache.dec_lock_ref(m.last_device_node)
    assert cache.evict(EvictParams(num_tokens=1000)).num_tokens_evicted == 12
    assert len(cache.kvp) == 0 and alloc.available_size() == 64


@pytest.mark.parametrize("page", [1, 4])
def test_evict_is_page_exact(page):
    """evict(n) frees at least n when it can, and no more than the pages n needs, whereas
    SGLang's evict frees whole leaves."""
    for spec in (None, "lru"):
        cache, alloc = drive.make_cache(256, page=page, spec=spec)
        values = alloc.alloc(64)
        cache.insert(InsertParams(key=key(list(range(64))), value=values))
        got = cache.evict(EvictParams(num_tokens=3)).num_tokens_evicted
        if spec is None:
            assert got == 64  # native: the whole leaf
        else:
            assert got == -(-3 // page) * page  # kvpolicy: whole pages, no more than needed
            assert cache.total_size() == 64 - got
            drive.check(cache, alloc, 256)


def test_block_larger_than_page_frees_tails_with_their_block():
    cache, alloc = drive.make_cache(256, page=1, spec="lru", block=8)
    for tokens in (list(range(20)), list(range(12)) + [99, 98, 97], [5, 6, 7]):
        v = alloc.alloc(len(tokens))
        res = cache.insert(InsertParams(key=key(tokens), value=v))
        alloc.free_segment(v[:res.prefix_len])  # duplicates of what the tree holds
        drive.check(cache, alloc, 256)
    # blocks: [0,8) [8,16) of the first path; tails: 16..19, the branch 12..14, and [5,6,7]
    assert len(cache.kvp) == 2
    freed = cache.evict(EvictParams(num_tokens=1)).num_tokens_evicted
    assert freed == 3  # the root tail [5, 6, 7] goes first
    # block [8,16) of the first path: its tokens 12..19 (node [12,20)); 8..11 stay, shared with
    # the second path's tail 8..14, which now hangs off block [0,8)
    assert cache.evict(EvictParams(num_tokens=1)).num_tokens_evicted == 8
    assert len(cache.kvp) == 1
    drive.check(cache, alloc, 256)
    # block [0,8) and everything hanging below it: 0..11 and 12..14
    assert cache.evict(EvictParams(num_tokens=1)).num_tokens_evicted == 15
    assert len(cache.kvp) == 0 and cache.total_size() == 0
    drive.check(cache, alloc, 256)


def test_hits_told_once_per_request():
    """match_prefix (repeated by the scheduler for waiting requests) tells the policy nothing;
    a Req's hits are told at its first cache_*_req insert only."""
    cache, alloc = drive.make_cache(128, spec="lfu")
    v = alloc.alloc(16)
    cache.insert(InsertParams(key=key(list(range(16))), value=v))
    before = cache.kvp.stats()["hits"]
    for _ in range(5):
        cache.match_prefix(MatchPrefixParams(key=key(list(range(16)))))
    assert cache.kvp.stats()["hits"] == before

    class Req:
        pass
    req = Req()
    for _ in range(3):
        cache._kvp_req = req  # as cache_unfinished_req / cache_finished_req set it
        dup = alloc.alloc(16)
        res = cache.insert(InsertParams(key=key(list(range(16))), value=dup))
        alloc.free_segment(dup[:res.prefix_len])
        cache._kvp_req = None
    assert cache.kvp.stats()["hits"] == before + 16


# ----- parity -----

def _parity(requests, spec, pool, page):
    cache, alloc = drive.make_cache(pool, page=page, spec=spec)
    victims = []
    hits, evicted = drive.run(cache, alloc, requests, checks=50, victims=victims)
    ref_hits, ref_evicted, ref_victims = drive.reference(requests, spec, pool, page)
    assert hits == ref_hits, spec
    assert evicted == ref_evicted, spec
    flat = [v for call in victims for v in call]
    assert flat == [v for call in ref_victims for v in call], spec
    return sum(h or 0 for h in hits), evicted


needs_data = pytest.mark.skipif(drive.data_dir() is None, reason="KVPOLICY_DATA absent")


@needs_data
@pytest.mark.parametrize("page", [1, 16])
def test_parity_mooncake_every_online_policy(page):
    tokens_per_hash = 4 if page == 1 else 16
    requests = drive.mooncake_requests(400, tokens_per_hash=tokens_per_hash,
                                       output_tokens=tokens_per_hash)
    pool = 600 * tokens_per_hash
    for spec in online_policies():
        hit, evicted = _parity(requests, spec, pool, page)
        assert evicted > 0


@needs_data
def test_parity_sharegpt_every_online_policy():
    requests = drive.sharegpt_requests(300)
    for spec in online_policies():
        hit, evicted = _parity(requests, spec, 3000, 1)
        assert hit > 0 and evicted > 0


@needs_data
def test_kvp_lru_equals_sglang_lru_leaf_by_leaf(monkeypatch):
    """Where the semantics coincide, kvp:lru and SGLang's lru evict the same tokens: asked for
    exactly the size of SGLang's least recently used leaf (SGLang frees whole leaves), both free
    that leaf. With a deterministic clock, ties cannot reorder them. They coincide when no match
    ends inside a node: SGLang's lru refreshes a node's unmatched rest when a match splits it,
    kvp:lru refreshes only the blocks a request used. So each conversation here has tokens of
    its own (conversation turns extend whole earlier paths)."""
    import sglang.srt.mem_cache.radix_cache as rc
    import types
    import time as _time
    ticks = iter(range(1, 10**9))
    monkeypatch.setattr(rc, "time", types.SimpleNamespace(
        monotonic=lambda: float(next(ticks)), perf_counter=_time.perf_counter))
    requests = drive.sharegpt_requests(120, isolate=True)
    native, nalloc = drive.make_cache(1 << 20)
    kvp, kalloc = drive.make_cache(1 << 20, spec="lru")
    drive.run(native, nalloc, requests, checks=0)
    drive.run(kvp, kalloc, requests, checks=0)
    steps = 0
    while native.evictable_leaves:
        leaf = min(native.evictable_leaves, key=lambda n: n.last_access_time)
        n = len(leaf.key)
        assert native.evict(EvictParams(num_tokens=n)).num_tokens_evicted == n
        assert kvp.evict(EvictParams(num_tokens=n)).num_tokens_evicted == n
        steps += 1
        if steps % 10 == 0:
            assert sorted(nalloc.free) == sorted(kalloc.free)
    assert sorted(nalloc.free) == sorted(kalloc.free)
    assert steps > 50 and kvp.total_size() == 0


# ----- SGLang's own tests, the score strategies, register() -----

def test_sglang_evict_policy_tests_pass():
    sg = os.path.join(ROOT, "engines", "sglang")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(sg, "python"), os.path.join(ROOT, "stubs", "sglang"),
         os.path.join(ROOT, "stubs", "torch_shim")]))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "test/registered/unit/mem_cache/test_evict_policy.py"],
                         cwd=sg, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "23 passed" in out.stdout


def _nodes(n, seed=5):
    import random
    from types import SimpleNamespace
    rng = random.Random(seed)
    root = SimpleNamespace(parent=None, key=[])
    out = []
    for _ in range(n):
        parent = rng.choice([root] + out[-5:]) if out else root
        out.append(SimpleNamespace(
            parent=parent, key=[0] * rng.randint(1, 40), hit_count=rng.randint(0, 4),
            priority=rng.randint(0, 3), last_access_time=rng.random(),
            creation_time=rng.random()))
    return out


def test_score_strategies_match_sglang_where_they_claim_to():
    from kvpolicy.integrations import sglang_strategies as ks
    from sglang.srt.mem_cache import evict_policy as ep
    nodes = _nodes(300)
    for ours, theirs in ((ks.LRUScore(), ep.LRUStrategy()), (ks.LFUScore(), ep.LFUStrategy()),
                         (ks.SLRUScore(), ep.SLRUStrategy()),
                         (ks.PriorityScore(), ep.PriorityStrategy())):
        assert isinstance(ours, ep.EvictionStrategy)
        assert ([id(n) for n in sorted(nodes, key=ours.get_priority)]
                == [id(n) for n in sorted(nodes, key=theirs.get_priority)]), type(ours)
    assert ks.SLRUScore(3).protected_threshold == 3


def test_gdsf_and_hpt_order_what_they_claim():
    from types import SimpleNamespace as N
    from kvpolicy.integrations import sglang_strategies as ks
    root = N(parent=None, key=[])
    shallow = N(parent=root, key=[0] * 16, hit_count=2, last_access_time=5.0)
    deep_parent = N(parent=root, key=[0] * 4000, hit_count=9, last_access_time=1.0)
    deep = N(parent=deep_parent, key=[0] * 16, hit_count=2, last_access_time=1.0)
    cold = N(parent=root, key=[0] * 16, hit_count=1, last_access_time=9.0)
    g = ks.GDSFScore()
    # fewer hits first; at equal hits the cheaper (shallower) node first, despite recency
    assert sorted([deep, shallow, cold], key=g.get_priority) == [cold, shallow, deep]
    assert g.cost_per_token(deep) > g.cost_per_token(shallow) > 1.0
    flat = ks.GDSFScore(attention_ratio=0)  # no attention cost: frequency, then recency
    assert sorted([deep, shallow], key=flat.get_priority) == [deep, shallow]
    h = ks.HitsPerTokenScore()
    long_hot = N(key=[0] * 100, hit_count=10, last_access_time=9.0)
    short_warm = N(key=[0] * 2, hit_count=1, last_access_time=1.0)
    assert sorted([short_warm, long_hot], key=h.get_priority) == [long_hot, short_warm]


def _load_real_registry(monkeypatch):
    """SGLang's real mem_cache/registry.py (reference/, not importable offline: it imports
    sglang.srt.utils.tensor_bridge, which pulls the engine) with that one import stubbed."""
    import importlib.util
    import types
    utils = types.ModuleType("sglang.srt.utils")
    utils.__path__ = []
    bridge = types.ModuleType("sglang.srt.utils.tensor_bridge")
    bridge.use_mlx = lambda: False
    monkeypatch.setitem(sys.modules, "sglang.srt.utils", utils)
    monkeypatch.setitem(sys.modules, "sglang.srt.utils.tensor_bridge", bridge)
    path = os.path.join(ROOT, "engines", "sglang", "reference", "python", "sglang", "srt",
                        "mem_cache", "registry.py")
    spec = importlib.util.spec_from_file_location("sglang.srt.mem_cache.registry", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_register_without_registry_says_what_it_skipped(monkeypatch):
    monkeypatch.setitem(sys.modules, "sglang.srt.mem_cache.registry", None)
    out = kvp_sglang.register()
    assert any("radix cache backend" in s for s in out["skipped"])
    assert any("server_args" in s for s in out["skipped"])  # absent offline
    from sglang.srt.mem_cache import utils
    assert "kvp_gdsf" in utils._EVICTION_POLICY_FACTORIES
    assert type(utils.get_eviction_strategy("kvp_gdsf")).__name__ == "GDSFScore"


def test_register_backend_through_sglangs_registry(monkeypatch):
    from types import SimpleNamespace
    from sglang.srt.mem_cache.cache_init_params import CacheInitParams
    registry = _load_real_registry(monkeypatch)
    choices = ["lru", "lfu", "slru", "priority"]
    server_args = SimpleNamespace(  # its two names register() uses, as server_args.py has them
        RADIX_EVICTION_POLICY_CHOICES=choices, add_radix_eviction_policy_choices=choices.extend)
    monkeypatch.setitem(sys.modules, "sglang.srt.server_args", server_args)
    out = kvp_sglang.register()
    assert out["skipped"] == [] and len(out["registered"]) == 3
    assert kvp_sglang.register()["skipped"] == []  # again: no duplicate registration error
    assert "kvpolicy" in registry.registered_radix_cache_backends()
    assert [c for c in choices if c.startswith("kvp_")] == [
        "kvp_lru", "kvp_lfu", "kvp_slru", "kvp_priority", "kvp_gdsf", "kvp_hpt"]
    monkeypatch.setenv("KVPOLICY_SGLANG_SPEC", "s3fifo")
    monkeypatch.setenv("KVPOLICY_SGLANG_BLOCK_TOKENS", "8")
    alloc = drive.Allocator(512)
    args = SimpleNamespace(radix_cache_backend="kvpolicy", enable_hierarchical_cache=False,
                           hicache_host_memory_mode="", enable_session_radix_cache=False,
                           enable_streaming_session=False)
    ctx = registry.TreeCacheBuildContext(
        server_args=args, params=CacheInitParams(disable=False, req_to_token_pool=None,
                                                 token_to_kv_pool_allocator=alloc, page_size=4),
        is_hybrid_swa=False, is_hybrid_ssm=False, enable_hierarchical_cache=False,
        disable_radix_cache=False, effective_chunked_prefill_size=None, tp_worker=None,
        model_config=None, tp_size=1, tp_rank=0, tp_group=None)
    cache = registry.create_tree_cache(ctx)
    assert type(cache).__name__ == "KvpolicyRadixCache"
    assert cache.kvp.policy.startswith("s3fifo") and cache.kvp_block == 8
    assert cache.kvp.capacity == 512 // 4  # pages
    monkeypatch.setenv("KVPOLICY_SGLANG_BLOCK_TOKENS", "six")
    with pytest.raises(kvpolicy.ConfigError, match="KVPOLICY_SGLANG_BLOCK_TOKENS"):
        registry.create_tree_cache(ctx)


@pytest.mark.parametrize("name", ["kvp_lru", "kvp_lfu", "kvp_slru", "kvp_priority", "kvp_gdsf",
                                  "kvp_hpt"])
def test_score_strategies_run_in_radix_cache(name, monkeypatch):
    monkeypatch.setitem(sys.modules, "sglang.srt.mem_cache.registry", None)
    kvp_sglang.register()
    cache, alloc = drive.make_cache(900, eviction_policy=name)
    hits, evicted = drive.run(cache, alloc, smoke_requests())
    assert evicted > 0 and sum(h or 0 for h in hits) > 0
    if name == "kvp_lru":  # the same order as SGLang's lru: the same run
        native, nalloc = drive.make_cache(900, eviction_policy="lru")
        assert drive.run(native, nalloc, smoke_requests()) == (hits, evicted)


def test_entry_point_in_pyproject_resolves_to_register():
    """SGLang's loader does ep.load() on the `sglang.srt.plugins` entry point, then calls it."""
    import importlib
    import tomllib
    source = os.environ.get("KVPOLICY_SOURCE_DIR",
                            os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(source, "pyproject.toml"), "rb") as f:
        eps = tomllib.load(f)["project"]["entry-points"]["sglang.srt.plugins"]
    module, attr = eps["kvpolicy"].split(":")
    assert getattr(importlib.import_module(module), attr) is kvp_sglang.register


class _ReqToTokenPool:
    """The req_to_token_pool surface RadixCache's cache_*_req use: req_to_token[row, a:b] and
    write((row, slice), values)."""

    def __init__(self):
        self.rows = {}
        self.req_to_token = self

    def __getitem__(self, index):
        import torch
        row, part = index
        return torch.tensor(self.rows[row][part], dtype=torch.int64)

    def write(self, index, values):
        row, part = index
        self.rows[row][part] = [int(v) for v in values]


def test_real_cache_req_calls_tell_hits_once():
    """SGLang's own cache_unfinished_req (after prefill) then cache_finished_req: the request's
    cached prefix is told as hits once, and the allocator and tree stay consistent."""
    from types import SimpleNamespace
    from sglang.srt.mem_cache.cache_init_params import CacheInitParams
    alloc, pool = drive.Allocator(256), _ReqToTokenPool()
    params = CacheInitParams(disable=False, req_to_token_pool=pool,
                             token_to_kv_pool_allocator=alloc, page_size=1)
    cache = kvp_sglang.KvpolicyRadixCache(params, spec="lfu")

    def serve(idx, prompt, output):
        m = cache.match_prefix(MatchPrefixParams(key=key(prompt)))
        req = SimpleNamespace(origin_input_ids=array("q", prompt), output_ids=array("q"),
                              req_pool_idx=idx,
                              cache_protected_len=len(m.device_indices), extra_key=None,
                              cache_salt=None, last_node=m.last_device_node, priority=0,
                              prefix_indices=m.device_indices)
        cache.inc_lock_ref(req.last_node)
        new = alloc.alloc(len(prompt) - len(m.device_indices))
        pool.rows[idx] = [int(i) for i in m.device_indices] + [int(i) for i in new]
        req.get_fill_ids = lambda: req.origin_input_ids + req.output_ids
        cache.cache_unfinished_req(req)  # after prefill: the prompt becomes reusable
        for t in output:  # decode
            pool.rows[idx] += [int(i) for i in alloc.alloc(1)]
            req.output_ids.append(t)
        cache.cache_finished_req(req, kv_len_to_handle=len(prompt) + len(output))
        drive.check(cache, alloc, 256)

    serve(0, list(range(40)), [500, 501, 502])
    hits = cache.kvp.stats()["hits"]
    serve(1, list(range(30)) + [900, 901], [600, 601])
    assert cache.kvp.stats()["hits"] == hits + 30  # once, not at both inserts
    serve(2, list(range(40)) + [500, 501, 502, 7], [8])
    assert cache.kvp.stats()["hits"] == hits + 30 + 43
