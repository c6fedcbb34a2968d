"""Drives LMCache's REAL MP-mode eviction seam for the tests and the bench of
kvpolicy.integrations.lmcache: the real L1EvictionController / L2EvictionController and the real
listener bridges (lmcache/v1/distributed/eviction.py), with a fake L1 manager and L2 adapter that
fire the listener callbacks in the real L1Manager's order (as ../shared/engines/smoke/
lmcache_smoke.py does), plus held locks (requests in flight while the controller runs), refused
and deferred deletions. Also the reference: the same access stream told to a
kvpolicy.EvictionPolicy directly, by the calls the adapter's mapping makes
(docs/engines/lmcache.md, "Parity"). Import after engines.use_engine("lmcache").
"""
import contextlib
import threading
from collections import deque
from types import SimpleNamespace

import kvpolicy
from lmcache.v1.distributed.api import ObjectKey
from lmcache.v1.distributed.config import EvictionConfig
from lmcache.v1.distributed.storage_controllers import eviction_controller as ec

CHUNK_BYTES = 1 << 20
MODEL = "kvp-test-model"


def object_keys(blocks, salt=""):
    """ObjectKeys of a request's chained block keys (64-bit ints, as a kvpolicy Trace gives)."""
    return [ObjectKey(b.to_bytes(8, "little"), MODEL, 0, 0, salt) for b in blocks]


class FakeL1:
    """The L1Manager surface the controller and the bridges use. objs maps each key to its
    lock state: 0 free, > 0 read locks, -1 write-locked (reserved, not written)."""

    def __init__(self, capacity_chunks):
        self.capacity = capacity_chunks
        self.objs = {}
        self.listeners = []
        self.rejected = 0
        self.refuse = set()  # keys delete() leaves in place (a deletion LMCache refuses)
        self.deleted = []  # every delete() call's key list, as the controller passed it

    def register_listener(self, listener):
        self.listeners.append(listener)

    def _fire(self, name, keys):
        for listener in self.listeners:
            getattr(listener, name)(keys)

    def get_memory_usage(self):
        return len(self.objs) * CHUNK_BYTES, self.capacity * CHUNK_BYTES

    def is_key_evictable(self, key):
        return self.objs.get(key, 1) == 0

    def lookup_prefix(self, keys):
        """The leading keys held and written (a chunk still being written is not readable)."""
        n = 0
        while n < len(keys) and self.objs.get(keys[n], -1) >= 0:
            n += 1
        return keys[:n]

    def reserve_read(self, keys):
        for k in keys:
            self.objs[k] += 1
        self._fire("on_l1_keys_reserved_read", keys)

    def touch_keys(self, keys):
        self._fire("on_l1_keys_accessed", keys)

    def finish_read(self, keys):
        for k in keys:
            self.objs[k] -= 1
        self._fire("on_l1_keys_read_finished", keys)

    def reserve_write(self, keys):
        """Reserves the keys L1 does not hold, in order, while there is room."""
        new = [k for k in keys if k not in self.objs]
        room = max(self.capacity - len(self.objs), 0)
        self.rejected += max(len(new) - room, 0)
        new = new[:room]
        for k in new:
            self.objs[k] = -1
        if new:
            self._fire("on_l1_keys_reserved_write", new)
        return new

    def finish_write(self, keys):
        for k in keys:
            self.objs[k] = 0
        if keys:
            self._fire("on_l1_keys_write_finished", keys)

    def delete(self, keys, force=False):
        self.deleted.append(list(keys))
        gone = [k for k in keys if k in self.objs and k not in self.refuse
                and (force or self.objs[k] == 0)]
        for k in gone:
            del self.objs[k]
        if gone:
            self._fire("on_l1_keys_deleted_by_manager", gone)
        return {k: None for k in gone}


def locked(l1):
    """l1 with a lock taken by every call, as the real L1Manager's are; the listeners are
    fired once it is released (the policy's lock is taken inside the filter's, never around
    it)."""
    l1.lock = threading.RLock()
    for name in ("get_memory_usage", "is_key_evictable", "lookup_prefix"):
        def call(*args, _fn=getattr(l1, name)):
            with l1.lock:
                return _fn(*args)
        setattr(l1, name, call)
    for name in ("reserve_read", "finish_read", "reserve_write", "finish_write", "delete"):
        def call_then_fire(*args, _fn=getattr(FakeL1, name)):
            fired = []
            with l1.lock:
                l1._fire = lambda n, k: fired.append((n, list(k)))
                try:
                    out = _fn(l1, *args)
                finally:
                    del l1._fire
            for n, k in fired:
                FakeL1._fire(l1, n, k)
            return out
        setattr(l1, name, call_then_fire)
    return l1


class FakeL2:
    """An L2 adapter; with defer, delete() only queues and flush() deletes and notifies (an
    asynchronous store)."""

    def __init__(self, capacity_chunks, defer=False):
        self.capacity = capacity_chunks
        self.keys = set()
        self.listener = None
        self.defer = defer
        self.queued = []
        self.by_salt = {}

    def register_listener(self, listener):
        self.listener = listener

    def get_usage(self):
        return SimpleNamespace(usage_fraction=len(self.keys) / self.capacity,
                               total_bytes_used=len(self.keys) * CHUNK_BYTES,
                               total_capacity_bytes=self.capacity * CHUNK_BYTES,
                               bytes_by_cache_salt={s: n * CHUNK_BYTES
                                                    for s, n in self.by_salt.items()})

    def store(self, keys):
        new = [k for k in keys if k not in self.keys]
        self.keys.update(new)
        for k in new:
            self.by_salt[k.cache_salt] = self.by_salt.get(k.cache_salt, 0) + 1
        if new:
            self.listener.on_l2_keys_stored(new, [CHUNK_BYTES] * len(new))

    def delete(self, keys):
        self.queued.extend(keys)
        if not self.defer:
            self.flush()

    def flush(self):
        gone = [k for k in dict.fromkeys(self.queued) if k in self.keys]
        self.queued = []
        self.keys.difference_update(gone)
        for k in gone:
            self.by_salt[k.cache_salt] -= 1
        if gone:
            self.listener.on_l2_keys_deleted(gone)


class _OnceFlag:
    """Lets the real `while not self._stop_flag.is_set()` loop body run exactly once."""

    def __init__(self):
        self.calls = 0

    def is_set(self):
        self.calls += 1
        return self.calls > 1


@contextlib.contextmanager
def no_sleep():
    """The controllers' 1 s sleep skipped (their module's `time`, not the process's)."""
    real = ec.time
    ec.time = SimpleNamespace(sleep=lambda s: None)
    try:
        yield
    finally:
        ec.time = real


@contextlib.contextmanager
def factory(make):
    """ec.CreateEvictionPolicy replaced by make(config) for the block (the smoke's way in)."""
    real = ec.CreateEvictionPolicy
    ec.CreateEvictionPolicy = make
    try:
        yield
    finally:
        ec.CreateEvictionPolicy = real


def l1_round(ctl):
    """One iteration of the REAL L1EvictionController.eviction_loop."""
    ctl._stop_flag = _OnceFlag()
    with no_sleep():
        ctl.eviction_loop()


def l1_controller(l1, policy, watermark=0.8, ratio=0.2):
    """The real L1EvictionController over l1, its policy `policy` (through the factory)."""
    cfg = EvictionConfig(eviction_policy="kvpolicy", trigger_watermark=watermark,
                         eviction_ratio=ratio)
    with factory(lambda config: policy):
        return ec.L1EvictionController(l1, cfg)


class Engine:
    """L1 (and optionally an L2 behind it) serving requests of ObjectKeys: per request, the
    L1 prefix is read (reserve_read, touch) and the rest written (reserve_write,
    finish_write), then the controller runs once. hold > 0 keeps the last `hold` requests'
    locks while the controller runs (requests in flight)."""

    def __init__(self, l1, ctl, hold=0, l2=None, l2_controller=None, l2_state=None):
        self.l1, self.ctl, self.hold = l1, ctl, hold
        self.l2, self.l2_controller, self.l2_state = l2, l2_controller, l2_state
        self.inflight = deque()
        self.looked = self.hits = 0
        self.after_round = None

    def request(self, keys, controller=True):
        """One request; controller=False leaves the rounds to the controller's own thread."""
        l1 = self.l1
        with getattr(l1, "lock", contextlib.nullcontext()):  # found and read-locked at once
            hits = l1.lookup_prefix(keys)
            if hits:
                l1.reserve_read(hits)  # (the bridge ignores reserved_read)
        self.looked += len(keys)
        self.hits += len(hits)
        if hits:
            l1.touch_keys(hits)
        new = l1.reserve_write(keys[len(hits):])
        self.inflight.append((hits, new))
        while len(self.inflight) > self.hold:
            self._release(*self.inflight.popleft())
        if self.l2 is not None:
            self.l2.store(keys[len(hits):])
        if not controller:
            return len(hits)
        l1_round(self.ctl)
        if self.l2_controller is not None:
            self.l2_controller._check_and_evict_global(self.l2_state)
        if self.after_round is not None:
            self.after_round()
        return len(hits)

    def drain(self):
        while self.inflight:
            self._release(*self.inflight.popleft())

    def _release(self, hits, new):
        if hits:
            self.l1.finish_read(hits)
        self.l1.finish_write(new)


class Reference:
    """kvpolicy's own run of the access stream the adapter sees with hold=0: the same calls its
    mapping makes, told directly to a kvpolicy.EvictionPolicy, with LMCache's semantics kept
    (prefix lookup, writes refused when full, watermark-triggered ratio eviction)."""

    def __init__(self, spec, capacity_chunks, watermark=0.8, ratio=0.2, chunk_tokens=16,
                 seed=1):
        self.policy = kvpolicy.EvictionPolicy(spec, capacity_blocks=capacity_chunks,
                                              block_tokens=chunk_tokens, seed=seed, flat=True)
        self.capacity, self.watermark, self.ratio = capacity_chunks, watermark, ratio
        self.ids = {}  # ObjectKey -> id, the keys L1 would hold
        self.keys = {}
        self.looked = self.hits = 0
        self.victims = []  # every round's victims, as ObjectKeys

    def request(self, keys):
        from kvpolicy.integrations.lmcache import key_id

        n = 0
        while n < len(keys) and keys[n] in self.ids:
            n += 1
        self.looked += len(keys)
        self.hits += n
        if n:
            self.policy.on_hits([self.ids[k] for k in reversed(keys[:n])])
        new = [k for k in keys[n:] if k not in self.ids]
        new = new[:max(self.capacity - len(self.ids), 0)]
        if new:
            nodes = [key_id(k) for k in reversed(new)]
            assert self.policy.on_insert_chain(nodes) == len(nodes)
            for k, node in zip(reversed(new), nodes):
                self.ids[k] = node
                self.keys[node] = k
        if len(self.ids) / self.capacity >= self.watermark:
            target = max(1, int(len(self.ids) * self.ratio))
            out = [self.keys.pop(node) for node in self.policy.evict(target)]
            for k in out:
                del self.ids[k]
            self.victims.append(out)
        return n
