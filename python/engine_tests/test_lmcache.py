"""kvpolicy.integrations.lmcache against LMCache's REAL MP-mode eviction files (../shared/engines):
the contract with the real L1/L2 eviction controllers and listener bridges, install(), and
parity with kvpolicy's own run of the same access stream (test_lmcache_parity.py's helpers)."""
import importlib.util
import os

from engines import use_engine

use_engine("lmcache")

import pytest  # noqa: E402

import kvpolicy  # noqa: E402
from lmcache.v1.distributed.config import EvictionConfig  # noqa: E402
from lmcache.v1.distributed.eviction_policy.noop import NoOpEvictionPolicy  # noqa: E402
from lmcache.v1.distributed.internal_api import EvictionDestination  # noqa: E402
from lmcache.v1.distributed.storage_controllers import eviction_controller as ec  # noqa: E402

import kvpolicy.integrations.lmcache as kl  # noqa: E402
from kvpolicy.integrations.lmcache import KvpolicyEvictionPolicy  # noqa: E402
from lmcache_fakes import (  # noqa: E402
    Engine, FakeL1, FakeL2, factory, l1_controller, l1_round, locked, object_keys)
from lmcache_parity import (  # noqa: E402
    load_requests, online_policies, run_adapter, run_reference)
from workload import chained_block_hashes, make_requests  # noqa: E402  (the smoke's workload)


def _workload(salt=""):
    """The smoke's synthetic multi-turn workload as ObjectKeys of 16-token chunks."""
    out = []
    for r in make_requests():
        hashes = chained_block_hashes(r.tokens, 16)
        out.append(object_keys([int.from_bytes(h[:8], "little") for h in hashes], salt))
    return out


def _keys(n, salt=""):
    """n distinct ObjectKeys, as one request's chunks."""
    return object_keys(range(1000, 1000 + n), salt)


def _assert_tracks_l1(policy, l1):
    """The invariant after every controller round: the keys the policy tracks (pending victims
    and overflow included) are exactly the keys L1 holds, and kvpolicy's own count agrees."""
    tracked = policy.tracked_keys()
    assert tracked == set(l1.objs), (len(tracked - set(l1.objs)), len(set(l1.objs) - tracked))
    stats = policy.stats()
    assert stats["size"] + stats["overflow"] == len(tracked)


# -- install() -------------------------------------------------------------------------------


@pytest.fixture
def installed():
    kl.install(capacity_chunks=64, chunk_tokens=16)
    yield
    kl.uninstall()


def test_install_selects_kvpolicy_and_leaves_other_names(installed):
    l1 = FakeL1(40)
    ctl = ec.L1EvictionController(l1, EvictionConfig(eviction_policy="kvp:s3fifo"))
    assert isinstance(ctl._eviction_policy, KvpolicyEvictionPolicy)
    assert ctl._eviction_policy.spec == "s3fifo"
    assert ctl._eviction_policy.stats()["capacity"] == 64
    # the listener bridge the controller registered reaches the kvpolicy policy
    assert l1.listeners[0].policy is ctl._eviction_policy
    noop = ec.L1EvictionController(FakeL1(4), EvictionConfig(eviction_policy="noop"))
    assert isinstance(noop._eviction_policy, NoOpEvictionPolicy)
    with pytest.raises(ValueError, match="Unsupported eviction policy: ARC"):
        ec.CreateEvictionPolicy(EvictionConfig(eviction_policy="ARC"))
    # per-tier capacity, parameters, an L2 state through the same factory
    sized = ec.CreateEvictionPolicy(EvictionConfig(eviction_policy="kvp:laru:predictor=reuse@99"))
    assert sized.spec == "laru:predictor=reuse" and sized.stats()["capacity"] == 99
    state = ec.L2AdapterEvictionState(FakeL2(10), EvictionConfig(eviction_policy="kvp:lru"))
    assert isinstance(state.eviction_policy, KvpolicyEvictionPolicy)


def test_install_is_idempotent_and_undone():
    real = ec.CreateEvictionPolicy
    try:
        assert kl.install() >= 1 and kl.installed()
        patched = ec.CreateEvictionPolicy
        assert patched is not real
        # the package too, so that a module importing the name later gets the patch
        package = importlib.import_module("lmcache.v1.distributed.eviction_policy")
        assert package.CreateEvictionPolicy is patched
        assert kl.install(capacity_chunks=7) == 0  # nothing left to patch: options only
        assert ec.CreateEvictionPolicy is patched
        assert ec.CreateEvictionPolicy(EvictionConfig("kvp:lru")).stats()["capacity"] == 7
    finally:
        assert kl.uninstall() >= 1
    assert ec.CreateEvictionPolicy is real and not kl.installed()
    assert importlib.import_module("lmcache.v1.distributed.eviction_policy") \
        .CreateEvictionPolicy is real
    with pytest.raises(ValueError, match="Unsupported eviction policy: kvp:lru"):
        ec.CreateEvictionPolicy(EvictionConfig("kvp:lru"))
    assert kl.uninstall() == 0


def test_install_replace_routes_lmcache_names():
    try:
        kl.install(capacity_chunks=32, replace={"LRU": "sieve"})
        policy = ec.CreateEvictionPolicy(EvictionConfig("LRU"))
        assert isinstance(policy, KvpolicyEvictionPolicy) and policy.spec == "sieve"
        assert isinstance(ec.CreateEvictionPolicy(EvictionConfig("noop")), NoOpEvictionPolicy)
    finally:
        kl.uninstall()


@pytest.mark.parametrize("name, message", [
    ("kvp:", "give a kvpolicy spec"),
    ("kvp:lru@0", "positive number of chunks"),
    ("kvp:lru@x", "positive number of chunks"),
    ("kvp:no_such_policy", "no_such_policy"),
    ("kvp:belady", "belady"),
])
def test_install_bad_names_are_clear_errors(installed, name, message):
    with pytest.raises(kvpolicy.ConfigError, match=message):
        ec.CreateEvictionPolicy(EvictionConfig(name))


def test_policies_reading_request_fields_are_refused_at_construction():
    """LMCache gives a policy no request: one that needs a request field fails when LMCache
    builds its controllers, naming the field, not later in a listener thread."""
    with pytest.raises(kvpolicy.ConfigError, match="continuation"):
        KvpolicyEvictionPolicy("lpc", 64, 16)
    KvpolicyEvictionPolicy(NO_REQUEST_FIELDS["lpc"], 64, 16)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(kvpolicy.ConfigError, match="capacity_chunks"):
        KvpolicyEvictionPolicy("lru", 0, 16)
    with pytest.raises(kvpolicy.ConfigError, match="capacity_chunks"):
        kl.install(capacity_chunks=-3)
    with pytest.raises(kvpolicy.ConfigError, match="replace"):
        kl.install(replace={"LRU": ""})
    assert not kl.installed()


# -- the contract, through the real controllers and bridges -------------------------------------


def test_key_ids_are_stable_and_distinct():
    """Ids depend on every field (rank, group and salt too) and not on the process."""
    from lmcache.v1.distributed.api import ObjectKey

    base = ObjectKey(b"\x01" * 32, "m", 0, 0, "")
    variants = [base, ObjectKey(b"\x02" * 32, "m", 0, 0, ""),
                ObjectKey(b"\x01" * 32, "n", 0, 0, ""),
                ObjectKey(b"\x01" * 32, "m", 1, 0, ""), ObjectKey(b"\x01" * 32, "m", 0, 1, ""),
                ObjectKey(b"\x01" * 32, "m", 0, 0, "s"), ObjectKey(12345, "m", 0, 0, ""),
                ObjectKey("text-hash", "m", 0, 0, "")]
    ids = [kl.key_id(k) for k in variants]
    assert len(set(ids)) == len(ids) and all(0 <= n < 1 << 64 for n in ids)
    assert kl.key_ids(variants) == ids and kl.key_ids(variants[:2]) == ids[:2]
    assert kl.key_id(ObjectKey(b"\x01" * 32, "m", 0, 0, "")) == ids[0]
    # a function of the fields alone (not of hash(), which PYTHONHASHSEED changes)
    assert ids[0] == 0x0101010101010101 ^ kl._blake(repr(("m", 0, 0, "")))


def test_duplicate_creations_are_not_hits():
    policy = KvpolicyEvictionPolicy("lfu", 64, 16)
    l1 = FakeL1(64)
    ctl = l1_controller(l1, policy)
    keys = _keys(10)
    l1.reserve_write(keys)  # the bridge reports each key at reserve ...
    l1.finish_write(keys)  # ... and again when written
    l1.finish_write(keys)  # (a rewrite reports them a third time)
    stats = policy.stats()
    assert stats["inserted"] == len(keys) and stats["hits"] == 0
    l1.touch_keys(keys[:2])
    assert policy.stats()["hits"] == 2
    l1_round(ctl)
    _assert_tracks_l1(policy, l1)


@pytest.mark.parametrize("spec", ["lru", "s3fifo", "lfu"])
def test_filter_respected_and_tracking_follows_l1(spec):
    """Requests in flight hold read and write locks while the real controller runs: no key the
    filter refuses is ever named, and after every round the policy tracks exactly L1's keys."""
    policy = KvpolicyEvictionPolicy(spec, 40, 16)
    l1 = FakeL1(40)
    named = []
    real_delete = l1.delete

    def delete(keys, force=False):
        assert all(l1.is_key_evictable(k) for k in keys), "a key the filter refuses was named"
        assert len(set(keys)) == len(keys)
        named.extend(keys)
        return real_delete(keys, force)

    l1.delete = delete
    engine = Engine(l1, l1_controller(l1, policy), hold=3)
    engine.after_round = lambda: _assert_tracks_l1(policy, l1)
    for keys in _workload():
        engine.request(keys)
    engine.drain()
    l1_round(engine.ctl)
    _assert_tracks_l1(policy, l1)
    assert named and l1.rejected < len(named)
    assert policy.stats()["evictions"] >= len(named)


def test_real_controller_thread_runs_beside_the_listeners():
    """The real L1EvictionController thread (its sleep shortened) evicts while the requests'
    listener calls arrive from this thread: no error, and once both stop the policy tracks
    exactly L1's keys. The fake L1 takes a lock as the real one does, and fires its listeners
    outside it."""
    from types import SimpleNamespace
    import time as real_time

    l1 = locked(FakeL1(60))
    policy = KvpolicyEvictionPolicy("s3fifo", 60, 16)
    ctl = l1_controller(l1, policy)
    real = ec.time
    ec.time = SimpleNamespace(sleep=lambda s: real_time.sleep(0.0005))
    try:
        ctl.start()
        engine = Engine(l1, ctl, hold=2)
        for _ in range(3):
            for keys in _workload():
                engine.request(keys, controller=False)
        engine.drain()
        real_time.sleep(0.05)
    finally:
        ctl.stop()
        ec.time = real
    assert policy.stats()["evictions"] > 0 and l1.deleted
    l1_round(ctl)  # one more round, now alone: settles victims named just before the stop
    _assert_tracks_l1(policy, l1)


def test_removals_are_learned_only_through_on_keys_removed():
    policy = KvpolicyEvictionPolicy("lru", 16, 16)
    keys = _keys(10)
    policy.on_keys_created(keys)
    (action,) = policy.get_eviction_actions(0.3)
    assert action.destination == EvictionDestination.DISCARD
    victims = action.keys
    # LMCache's LRU order: the request's last chunk is evicted first
    assert victims == list(reversed(keys))[:3]
    assert policy.tracked_keys() == set(keys)  # nothing dropped before LMCache confirms
    assert policy.pending_keys() == victims
    policy.on_keys_removed(victims[:2])
    assert policy.tracked_keys() == set(keys) - set(victims[:2])
    assert policy.pending_keys() == victims[2:]
    # a deletion the policy did not choose: removed, not a victim (no eviction counted)
    before = policy.stats()
    policy.on_keys_removed([keys[0]])
    after = policy.stats()
    assert after["removed"] == before["removed"] + 1
    assert after["evictions"] == before["evictions"]
    assert keys[0] not in policy.tracked_keys()
    policy.on_keys_removed([keys[0]])  # twice, or a key never tracked: ignored
    policy.on_keys_touched([keys[0]])


def test_refused_deletions_go_back():
    policy = KvpolicyEvictionPolicy("lru", 20, 16)
    l1 = FakeL1(20)
    ctl = l1_controller(l1, policy, watermark=0.5, ratio=0.25)
    keys = _keys(12)
    l1.reserve_write(keys)
    l1.finish_write(keys)
    first = keys[-1]  # the LRU victim (last chunk of the request)
    l1.refuse = {first}
    l1_round(ctl)
    assert first in l1.objs and policy.pending_keys() == [first]
    _assert_tracks_l1(policy, l1)
    # still chosen: the next round names it again (LMCache's LRU would too)
    l1.refuse = set()
    l1.deleted.clear()
    l1.reserve_write(_keys(13)[-1:])
    l1.refuse = {first}
    l1_round(ctl)
    assert first in l1.deleted[0]
    # used while pending: it goes back to the policy, as a hit, and is no victim any more
    hits = policy.stats()["hits"]
    l1.touch_keys([first, first])  # (twice in one call: one cancel, two hits)
    assert policy.pending_keys() == [] and first in policy.tracked_keys()
    assert policy.stats()["hits"] == hits + 2
    l1.refuse = set()
    _assert_tracks_l1(policy, l1)


def test_write_locked_victim_waits_then_lives_on():
    """A chunk reserved but not yet written (write-locked) that the policy chooses is not
    named; its write completing (a second creation) puts it back in the policy."""
    policy = KvpolicyEvictionPolicy("fifo", 8, 16)
    l1 = FakeL1(8)
    ctl = l1_controller(l1, policy, watermark=0.5, ratio=0.5)
    keys = _keys(6)
    l1.reserve_write(keys)  # all write-locked
    l1_round(ctl)
    assert l1.deleted == [] and policy.pending_keys()
    assert set(policy.pending_keys()) <= set(keys)
    l1.finish_write(keys)
    assert policy.pending_keys() == []
    _assert_tracks_l1(policy, l1)
    l1_round(ctl)
    assert len(l1.deleted) == 1 and len(l1.deleted[0]) == 3


def test_l2_asynchronous_deletions():
    """The real L2 controller's global path, with deletions confirmed only later: victims stay
    tracked (pending) until on_l2_keys_deleted, a round before then names them again (as
    LMCache's LRU would), and once confirmed the policy tracks exactly L2's keys."""
    policy = KvpolicyEvictionPolicy("s3fifo", 64, 16)
    l2 = FakeL2(24, defer=True)
    with factory(lambda config: policy):
        state = ec.L2AdapterEvictionState(l2, EvictionConfig("kvpolicy"))
    l2_ctl = ec.L2EvictionController([state])
    rounds = 0
    for i, keys in enumerate(_workload()[:30]):
        l2.store(keys)
        l2_ctl._check_and_evict_global(state)
        named = list(l2.queued)
        assert set(named) == set(policy.pending_keys())
        assert policy.tracked_keys() == l2.keys  # nothing dropped before the confirmation
        if named and i % 2:
            l2_ctl._check_and_evict_global(state)  # a second round before the deletion
            assert l2.queued[len(named):len(named) * 2] == named
        l2.flush()
        rounds += bool(named)
        assert policy.tracked_keys() == l2.keys and policy.pending_keys() == []
    assert rounds > 3 and policy.stats()["evictions"] > 0


def test_isolation_one_policy_per_cache_salt():
    """support_isolation: the real L2 controller's per-salt path evicts only the salt over its
    quota, from that salt's own policy."""
    policy = KvpolicyEvictionPolicy("lru", 64, 16, isolation=True)
    assert policy.support_isolation
    l2 = FakeL2(1000)
    with factory(lambda config: policy):
        state = ec.L2AdapterEvictionState(l2, EvictionConfig("kvpolicy"))
    quotas = {"a": 1000 * (1 << 20), "b": 5 * (1 << 20)}
    quota = type("Quota", (), {"get_limit_bytes": lambda self, salt: quotas[salt]})()
    l2_ctl = ec.L2EvictionController([state], quota_manager=quota)
    l2.store(_keys(10, "a"))
    l2.store(_keys(12, "b"))
    n_a, n_b = l2.by_salt["a"], l2.by_salt["b"]
    l2_ctl._check_and_evict(state)
    assert l2.by_salt["a"] == n_a  # under quota: untouched
    assert l2.by_salt["b"] == n_b - max(1, int(n_b * 0.2))
    assert policy.tracked_keys() == l2.keys
    # without a salt (the L1 controller's call) every salt gives its share
    (action,) = policy.get_eviction_actions(0.5)
    salts = [k.cache_salt for k in action.keys]
    assert salts.count("a") == n_a // 2 and salts.count("b") == l2.by_salt["b"] // 2


def test_capture_and_restore():
    """A checkpoint carries the tracked keys in creation order (kvpolicy exports no policy
    state): a restored LRU evicts as the original did before any use, and the uses are lost."""
    keys = _keys(20)
    policy = KvpolicyEvictionPolicy("lru", 64, 16)
    policy.on_keys_created(keys[:12])
    policy.on_keys_created(keys[12:])
    state = policy.capture()
    assert state["spec"] == "lru" and len(state["keys"]) == len(keys)
    assert all(isinstance(v, (bytes, str, int)) for f in state["keys"] for v in f.values())
    other = KvpolicyEvictionPolicy("lru", 64, 16)
    other.restore(state)
    assert other.tracked_keys() == set(keys)
    assert other.stats()["hits"] == 0 and other.stats()["inserted"] == len(keys)
    expected = [list(reversed(keys[:12]))[:5]]
    assert [a.keys for a in other.get_eviction_actions(0.25)] == expected
    assert [a.keys for a in policy.get_eviction_actions(0.25)] == expected
    # what is lost: a use since creation
    used = KvpolicyEvictionPolicy("lru", 64, 16)
    used.on_keys_created(keys)
    used.on_keys_touched([keys[19]])
    restored = KvpolicyEvictionPolicy("lru", 64, 16)
    restored.restore(used.capture())
    assert keys[19] not in used.get_eviction_actions(0.05)[0].keys
    assert restored.get_eviction_actions(0.05)[0].keys == [keys[19]]
    mismatched = KvpolicyEvictionPolicy("fifo", 64, 16)
    mismatched.restore(state)  # another policy's section: ignored
    assert mismatched.tracked_keys() == set()
    with pytest.raises(kvpolicy.Error, match="does not fit"):
        other.restore({"spec": "lru", "keys": [{"chunk": b"x"}]})


def test_full_policy_overflow_is_evicted_first():
    """capacity_chunks below what L1 holds: the keys the policy cannot take are still tracked
    and named first, so L1 never holds a key no one will evict."""
    policy = KvpolicyEvictionPolicy("lru", 4, 16)
    keys = _keys(6)
    policy.on_keys_created(keys)
    stats = policy.stats()
    assert stats["refused"] == 2 and stats["overflow"] == 2 and stats["size"] == 4
    assert policy.tracked_keys() == set(keys)
    (action,) = policy.get_eviction_actions(0.34)
    assert set(action.keys) == set(keys[:2])  # the overflow (the request's first chunks)
    policy.on_keys_removed(action.keys)
    assert policy.stats()["overflow"] == 0


# -- parity with kvpolicy's own run of the same access stream ------------------------------------

# (trace, requests, L1 capacity in chunks): small enough for ctest, large enough for every
# policy to evict in many rounds.
PARITY_RUNS = {"mooncake": (600, 1200), "arena": (500, 800)}
# LMCache passes an eviction policy no request fields: a policy that reads one runs with the
# parameters that need none (KvpolicyEvictionPolicy refuses the others, tested below).
NO_REQUEST_FIELDS = {"lpc": "lpc:predictor=constant,value=0.5"}


@pytest.fixture(scope="module")
def traces():
    out = {}
    for name, (count, _) in PARITY_RUNS.items():
        out[name] = load_requests(name, count, cache_dir="engine_tests_data")
    return out


@pytest.mark.parametrize("trace", sorted(PARITY_RUNS))
@pytest.mark.parametrize("spec", online_policies() + ["laru:predictor=reuse"])
def test_parity_with_kvpolicy_run(traces, trace, spec):
    """The adapter inside the real controller and bridges (duplicate creations, asynchronous
    removals, victims committed on LMCache's word) gives exactly the hits and the victims of a
    kvpolicy.EvictionPolicy told the same stream directly: the plumbing changes nothing."""
    loaded = traces[trace]
    if loaded is None:
        pytest.skip(f"trace {trace} absent (KVPOLICY_DATA, or the kvpolicy binary to build it)")
    requests, chunk_tokens = loaded
    capacity = PARITY_RUNS[trace][1]
    spec = NO_REQUEST_FIELDS.get(spec, spec)
    try:
        KvpolicyEvictionPolicy(spec, capacity, chunk_tokens)
    except kvpolicy.ConfigError as error:
        # a policy reading request fields LMCache does not pass is refused with this message
        # (as lpc's default is, tested above); nothing to compare
        assert "cannot run in LMCache" in str(error)
        pytest.skip(str(error))
    hits, victims, stats = run_adapter(spec, requests, capacity, chunk_tokens)
    ref_hits, ref_victims, ref_stats = run_reference(spec, requests, capacity, chunk_tokens)
    assert len(victims) > 5, "too few eviction rounds to compare"
    assert hits == ref_hits
    assert victims == ref_victims
    for name in ("hits", "inserted", "evictions"):
        assert stats[name] == ref_stats[name], name


def _native_lru():
    """LMCache's own LRUEvictionPolicy from KVPOLICY_LMCACHE_LRU (a copy of its lru.py kept
    outside the project: the engines' files have none, ../shared/engines/SEAMS.md 3(b))."""
    path = os.environ.get("KVPOLICY_LMCACHE_LRU")
    if not path or not os.path.isfile(path):
        pytest.skip("set KVPOLICY_LMCACHE_LRU to LMCache's eviction_policy/lru.py")
    spec = importlib.util.spec_from_file_location("lmcache_native_lru", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LRUEvictionPolicy


@pytest.mark.parametrize("hold", [0, 3])
def test_kvp_lru_equals_lmcache_lru(traces, hold):
    """Where the semantics coincide, kvp:lru names the same victims as LMCache's own LRU round
    after round and gives the same hits. They coincide fully when each write completes before
    the next request (hold 0). With writes in flight (hold 3) LMCache's LRU takes a key's
    second creation report (its write completing) as a use and moves it to the recent end;
    kvpolicy takes only touches as uses, so the native side is compared with that one
    difference taken out (a wrapper passing on only new keys)."""
    native = _native_lru()

    class NewKeysOnly(native):
        def on_keys_created(self, keys):
            super().on_keys_created([k for k in keys if k not in self._order])

    workloads = [_workload()] + ([traces["mooncake"][0]] if traces["mooncake"] else [])
    for requests in workloads:
        results = []
        for make in (native if hold == 0 else NewKeysOnly,
                     lambda: KvpolicyEvictionPolicy("lru", 300, 16)):
            l1 = FakeL1(300 if len(requests) > 100 else 40)
            engine = Engine(l1, l1_controller(l1, make()), hold=hold)
            hits = [engine.request(keys) for keys in requests]
            results.append((hits, l1.deleted))
        assert len(results[0][1]) > 5
        assert results[0] == results[1]
