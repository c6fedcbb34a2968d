"""kvpolicy's policies deciding LMCache's L1/L2 evictions in multiprocess mode.

LMCache's MP-mode storage manager keeps one ``EvictionPolicy`` per tier
(lmcache/v1/distributed/eviction.py): listener bridges tell it which keys were created, touched
and removed, and an eviction controller thread asks it, once a second while the tier is above
its watermark, for a share of the keys to delete. KvpolicyEvictionPolicy is that policy with any
online kvpolicy policy deciding:

    import kvpolicy.integrations.lmcache as k; k.install()
    # then, in LMCache's eviction config:  eviction_policy: "kvp:s3fifo"

install() patches LMCache's closed factory (CreateEvictionPolicy); it is a patch until LMCache
has a registry of policies. Importing this module imports LMCache's eviction module. See
docs/engines/lmcache.md.
"""

import hashlib
import logging
import threading

import kvpolicy

try:
    from lmcache.v1.distributed.eviction import EvictionPolicy as _LMCachePolicy
    from lmcache.v1.distributed.internal_api import EvictionAction, EvictionDestination
except ImportError as _error:  # pragma: no cover - the message is the point
    raise ImportError(
        "kvpolicy.integrations.lmcache needs LMCache's multiprocess-mode eviction module "
        f"(lmcache.v1.distributed.eviction): {_error}") from _error

from ._lmcache_install import (  # noqa: F401  (re-exported)
    install,
    installed,
    parse_name,
    uninstall,
)

__all__ = ["KvpolicyEvictionPolicy", "install", "installed", "key_id", "key_ids", "parse_name",
           "uninstall"]

_log = logging.getLogger(__name__)


_MASK = (1 << 64) - 1
_namespaces = {}


def key_id(key):
    """The 64-bit id kvpolicy knows an LMCache ObjectKey by, the same in every process, so that
    a chunk evicted and stored again has the same id and policies that remember evicted blocks
    (S3-FIFO's ghost queue) recognise it: 64 bits of the chunk's own content hash (LMCache's
    chunk_hash) mixed with a hash of the other fields (model, rank, group, cache salt); a key
    of another layout is hashed whole."""
    try:
        chunk, ns = key.chunk_hash, (key.model_name, key.kv_rank, key.object_group_id,
                                     key.cache_salt)
    except AttributeError:
        return _blake(repr(key))
    mix = _namespaces.get(ns)
    if mix is None:
        mix = _namespaces[ns] = _blake(repr(ns))
    if chunk.__class__ is bytes:
        return int.from_bytes(chunk[:8], "little") ^ mix
    if chunk.__class__ is int:
        return (chunk & _MASK) ^ mix
    return _blake(repr(key))


def key_ids(keys):
    """[key_id(k) for k in keys], in one pass for the usual layout (creation's hot path)."""
    get, from_bytes = _namespaces.get, int.from_bytes
    try:
        return [from_bytes(k.chunk_hash[:8], "little")
                ^ get((k.model_name, k.kv_rank, k.object_group_id, k.cache_salt))
                for k in keys]
    except (AttributeError, TypeError):  # a new namespace, an int or another layout
        return [key_id(k) for k in keys]


def _blake(text):
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


class _Tier:
    """One kvpolicy.EvictionPolicy and the keys it tracks: the whole tier, or one cache salt.

    keys maps each tracked id to its ObjectKey, pending ids the policy chose as victims that
    LMCache has not confirmed deleting yet (in selection order), overflow the keys LMCache holds
    that the policy had no room for (evicted first)."""

    def __init__(self, spec, capacity, chunk_tokens, seed):
        self.policy = kvpolicy.EvictionPolicy(spec, capacity_blocks=capacity,
                                              block_tokens=chunk_tokens, seed=seed, flat=True)
        self.keys = {}
        self.ids = {}
        self.pending = {}
        self.overflow = {}

    def tracked(self):
        return len(self.keys) + len(self.overflow)


class KvpolicyEvictionPolicy(_LMCachePolicy):
    """An LMCache EvictionPolicy run by the kvpolicy policy `spec` ("lru", "s3fifo",
    "laru:predictor=reuse", ...; online policies only) over up to `capacity_chunks` chunks of
    `chunk_tokens` tokens: give the tier's capacity in chunks (its bytes over a chunk's bytes),
    as policies size their queues from it.

    The mapping (docs/engines/lmcache.md, "The contract"):
      on_keys_created   new keys only, inserted flat (any chunk may be evicted), the request's
                        last chunk first as LMCache's LRU does; L1 reports every key twice
                        (reserve, then write), the second report is no event and no hit
      on_keys_touched   hits for the keys tracked, last chunk first; a pending victim touched
                        was not deleted: it goes back to the policy (cancel) and is hit
      on_keys_removed   a pending victim is committed (it leaves); any other tracked key was
                        deleted by LMCache itself and is removed (no victim, no ghost)
      get_eviction_actions(ratio, key_eligible_filter, cache_salt)
                        int(ratio x tracked) keys (at least 1), as LMCache's LRU counts:
                        pending victims still unconfirmed first, then the overflow, then new
                        victims of the policy; a victim the filter refuses stays pending (not
                        named) until it is eligible, touched, created again or removed.
    isolation=True keeps one policy per ObjectKey.cache_salt (support_isolation): eviction
    with a cache_salt takes from that salt's policy, without one each salt gives its share.
    Thread-safe: LMCache calls listeners and the controller from different threads.
    """

    def __init__(self, spec="lru", capacity_chunks=4096, chunk_tokens=256, *, seed=1,
                 isolation=False, destination=None):
        if isinstance(capacity_chunks, bool) or not isinstance(capacity_chunks, int) \
                or capacity_chunks < 1:
            raise kvpolicy.ConfigError(
                f"KvpolicyEvictionPolicy: capacity_chunks must be a positive int, got "
                f"{capacity_chunks!r}")
        self._spec = str(spec)
        self._capacity = capacity_chunks
        self._chunk_tokens = int(chunk_tokens)
        self._seed = int(seed)
        self._isolation = bool(isolation)
        self._lock = threading.Lock()
        self._destinations = []
        self._default_destination = destination or EvictionDestination.DISCARD
        _probe(self._spec, self._chunk_tokens, self._seed)
        # One tier per cache salt with isolation, else the single tier under None.
        self._tiers = {None: self._new_tier()} if not isolation else {}
        self._refused = 0

    def _new_tier(self):
        return _Tier(self._spec, self._capacity, self._chunk_tokens, self._seed)

    # -- EvictionPolicy --------------------------------------------------------------------

    @property
    def support_isolation(self):
        return self._isolation

    @property
    def name(self):
        return "kvpolicy_eviction_policy"

    def register_eviction_destination(self, destination):
        with self._lock:
            if destination not in self._destinations:
                self._destinations.append(destination)

    def on_keys_created(self, keys):
        if keys:
            self._each(keys, self._created, create=True)

    def on_keys_created_with_sizes(self, keys, sizes):
        """LMCache's sized creation (newer L2 bridges): kvpolicy counts chunks, not bytes."""
        self.on_keys_created(keys)

    def on_keys_touched(self, keys):
        if keys:
            self._each(keys, self._touched, create=False)

    def on_keys_removed(self, keys):
        if keys:
            self._each(keys, self._removed, create=False)

    def get_eviction_actions(self, expected_ratio, key_eligible_filter=None, cache_salt=None):
        ratio = max(0.0, min(1.0, float(expected_ratio)))
        with self._lock:
            if self._isolation and cache_salt is not None:
                tiers = [self._tiers[cache_salt]] if cache_salt in self._tiers else []
            else:
                tiers = list(self._tiers.values())
            victims = []
            for tier in tiers:
                victims.extend(self._select(tier, ratio, key_eligible_filter))
            if not victims:
                return []
            destination = self._destinations[0] if self._destinations \
                else self._default_destination
            return [EvictionAction(keys=victims, destination=destination)]

    def capture(self):
        """The tracked keys of every tier, pending victims included, in the order they were
        created: kvpolicy has no export of a policy's state, so this is all a checkpoint can
        carry (docs/engines/lmcache.md, "Gaps"). Plain data: each key as its dataclass fields."""
        with self._lock:
            keys = []
            for tier in self._tiers.values():
                keys.extend(tier.ids)
                keys.extend(tier.overflow)
            return {"spec": self._spec, "capacity_chunks": self._capacity,
                    "keys": [_key_fields(k) for k in keys]}

    def restore(self, state):
        """Replaces the tracked keys with those of a capture() value, created in its order; a
        capture of another spec is ignored (its keys come back through LMCache's events)."""
        if not state or state.get("spec") != self._spec:
            return
        from lmcache.v1.distributed.api import ObjectKey

        try:
            keys = [ObjectKey(**fields) for fields in state.get("keys", ())]
        except TypeError as error:
            raise kvpolicy.Error(f"KvpolicyEvictionPolicy.restore: a key of the checkpoint "
                                 f"does not fit this LMCache's ObjectKey: {error}") from error
        with self._lock:
            self._tiers = {None: self._new_tier()} if not self._isolation else {}
            for tier, group in self._by_tier(keys, create=True):
                self._created(tier, group, reverse=False)

    # -- beyond the interface ----------------------------------------------------------------

    @property
    def spec(self):
        """The kvpolicy policy spec deciding."""
        return self._spec

    def tracked_keys(self):
        """Every ObjectKey the policy tracks (pending victims and overflow included)."""
        with self._lock:
            out = set()
            for tier in self._tiers.values():
                out.update(tier.ids)
                out.update(tier.overflow)
            return out

    def pending_keys(self):
        """The victims named to LMCache that it has not confirmed deleting."""
        with self._lock:
            return [t.keys[n] for t in self._tiers.values() for n in t.pending]

    def stats(self):
        """The kvpolicy policy's counters (summed over the salts with isolation), with
        tracked, pending, overflow and refused (created keys the policy had no room for)."""
        with self._lock:
            out = {}
            for tier in self._tiers.values():
                for name, value in tier.policy.stats().items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        out[name] = out.get(name, 0) + value
                out["tracked"] = out.get("tracked", 0) + tier.tracked()
                out["pending"] = out.get("pending", 0) + len(tier.pending)
                out["overflow"] = out.get("overflow", 0) + len(tier.overflow)
            out["refused"] = self._refused
            out.setdefault("tracked", 0)
            return out

    # -- internals (the caller holds self._lock) -----------------------------------------------

    def _each(self, keys, handle, create):
        with self._lock:
            if not self._isolation:  # the usual case, without grouping
                handle(self._tiers[None], keys)
                return
            for tier, group in self._by_tier(keys, create):
                handle(tier, group)

    def _touched(self, tier, keys):
        hit = [n for n in map(tier.ids.get, reversed(keys)) if n is not None]
        if not hit:
            return
        pending = tier.pending
        if pending:
            back = list(dict.fromkeys(n for n in hit if n in pending))
            if back:
                self._cancel(tier, back)
        tier.policy.on_hits(hit)

    def _removed(self, tier, keys):
        ids, nodes, pending = tier.ids, tier.keys, tier.pending
        committed, removed = [], []
        for k in keys:
            n = ids.pop(k, None)
            if n is None:
                if tier.overflow:
                    tier.overflow.pop(k, None)
                continue
            del nodes[n]
            if pending and pending.pop(n, None) is not None:
                committed.append(n)
            else:
                removed.append(n)
        if committed:
            tier.policy.commit(committed)
        if removed:
            tier.policy.on_removes(removed, ignore_missing=True)

    def _by_tier(self, keys, create):
        if not self._isolation:
            yield self._tiers[None], keys
            return
        groups = {}
        for k in keys:
            groups.setdefault(getattr(k, "cache_salt", ""), []).append(k)
        for salt, group in groups.items():
            tier = self._tiers.get(salt)
            if tier is None and create:
                tier = self._tiers[salt] = self._new_tier()
            if tier is not None:
                yield tier, group

    def _created(self, tier, keys, reverse=True):
        ids, pending, overflow = tier.ids, tier.pending, tier.overflow
        ordered = reversed(keys) if reverse else keys
        if not pending and not overflow:  # the usual case: one lookup a key
            self._insert(tier, [k for k in ordered if k not in ids])
            return
        new = []
        for k in ordered:
            n = ids.get(k)
            if n is not None:
                if pending and n in pending:
                    # Stored again while chosen: it lives on, back in its place among the keys
                    # of this report (a rare case, so one call each).
                    self._insert(tier, new)
                    new = []
                    self._cancel(tier, [n])
                continue
            if overflow and k in overflow:
                continue
            new.append(k)
        self._insert(tier, new)

    def _insert(self, tier, new):
        if not new:
            return
        ids = tier.ids
        nodes = key_ids(new)
        if any(n in tier.keys for n in nodes) or len(set(nodes)) < len(nodes):
            new, nodes = self._without_collisions(tier, new, nodes)
        done = tier.policy.on_insert_chain(nodes)
        if done == len(new):
            ids.update(zip(new, nodes))
            tier.keys.update(zip(nodes, new))
        else:
            ids.update(zip(new[:done], nodes[:done]))
            tier.keys.update(zip(nodes[:done], new[:done]))
        if done < len(new):
            # The policy is full (capacity_chunks is below what the tier holds): LMCache still
            # holds these keys, so they are named first at the next eviction.
            self._refused += len(new) - done
            for k in new[done:]:
                tier.overflow[k] = None

    def _without_collisions(self, tier, keys, nodes):
        # Two keys with one 64-bit id (about 2^-64 per pair): the later one stays out of the
        # policy, in the overflow, so that it is still evicted.
        kept_keys, kept_nodes, taken = [], [], dict(tier.keys)
        for k, n in zip(keys, nodes):
            if n in taken and taken[n] == k:  # reported twice in one call
                continue
            if n in taken:
                _log.warning("kvpolicy: id collision for %r; it is evicted first", k)
                tier.overflow[k] = None
                continue
            taken[n] = k
            kept_keys.append(k)
            kept_nodes.append(n)
        return kept_keys, kept_nodes

    def _cancel(self, tier, nodes):
        for n in nodes:
            del tier.pending[n]
        tier.policy.cancel(nodes)

    def _select(self, tier, ratio, eligible):
        total = tier.tracked()
        if total == 0 or ratio <= 0.0:
            return []
        target = max(1, int(total * ratio))
        out = []
        # Victims already chosen that LMCache did not delete (refused or still deleting): the
        # policy's choice stands, LMCache's LRU would name them first too.
        for n in tier.pending:
            if len(out) >= target:
                return out
            k = tier.keys[n]
            if eligible is None or eligible(k):
                out.append(k)
        for k in list(tier.overflow):
            if len(out) >= target:
                return out
            if eligible is None or eligible(k):
                out.append(k)
        # The filter is asked only about the policy's victims (as LMCache's LRU asks only about
        # the keys it walks past); one it refuses stays chosen, pending, and another is taken,
        # up to twice the target a round so that a tier of locked keys is not drained.
        pulled = 0
        while len(out) < target and pulled < 2 * target:
            chosen = tier.policy.victims(min(target - len(out), 2 * target - pulled))
            if not chosen:
                break
            pulled += len(chosen)
            for n in chosen:
                tier.pending[n] = True
                k = tier.keys[n]
                if eligible is None or eligible(k):
                    out.append(k)
        return out


def _probe(spec, chunk_tokens, seed):
    """Fails now, where LMCache builds its controllers, rather than in a listener thread, for a
    spec LMCache cannot run: unknown, offline, or reading request fields (a continuation score,
    ...) that LMCache does not pass to an eviction policy."""
    probe = kvpolicy.EvictionPolicy(spec, capacity_blocks=16, block_tokens=chunk_tokens,
                                    seed=seed, flat=True)
    try:
        probe.on_insert_chain([1, 2])
        probe.on_hits([1])
        probe.victims(1)
    except kvpolicy.ConfigError as error:
        raise kvpolicy.ConfigError(
            f"KvpolicyEvictionPolicy: policy {spec!r} cannot run in LMCache, which passes no "
            f"request fields to an eviction policy: {error}") from error


def _key_fields(key):
    import dataclasses

    if dataclasses.is_dataclass(key):
        return {f.name: getattr(key, f.name) for f in dataclasses.fields(key)}
    raise kvpolicy.Error(f"KvpolicyEvictionPolicy.capture: cannot serialize key {key!r}")
