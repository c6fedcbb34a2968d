"""kvpolicy's eviction policies in vLLM's CPU offload tier, with no vLLM patch.

vLLM's `CPUOffloadingManager` loads a `CachePolicy` by name from a module path; this module
answers any name `kvp:<spec>` (a kvpolicy spec with its parameters: `kvp:s3fifo`,
`kvp:laru:predictor=reuse`) with a `CachePolicy` subclass running that policy:

    --kv-transfer-config '{"kv_connector": "OffloadingConnector", "kv_role": "kv_both",
      "kv_connector_extra_config": {"eviction_policy": "kvp:s3fifo",
                                    "cache_policy_module_path": "kvpolicy.integrations.vllm"}}'

How vLLM's calls map onto kvpolicy's (docs/engines/vllm.md, "The contract"):
  - the tier is flat: every block stands alone and any unlocked block may be evicted
    (EvictionPolicy(flat=True)); an OffloadKey is the policy's node through a stable 64-bit id;
  - a block is told to the policy when its store completes (its first mark_evictable), which is
    when vLLM's own LRU first orders it; while being written it exists only here, so it cannot be
    evicted, and a failed store's remove() leaves the policy untouched (no ghost, no leak);
  - touch() is one request cycle (its time, session and turn from the request's
    kv_transfer_params keys kvpolicy_time, kvpolicy_session, kvpolicy_turn) that hits the idle
    cached keys last first, as vLLM's LRU orders them; keys not cached, being written or being
    loaded are ignored, as vLLM's LRU ignores them;
  - mark_non_evictable / mark_evictable lock / unlock a block, and a block released by its last
    load is used again (vLLM's LRU moves it to the most recent end then), so kvp:lru evicts
    exactly what vLLM's lru evicts;
  - evict(n, protected) is atomic: exactly n victims outside `protected`, or None and no change.
The per-key events arrive one call at a time; they are queued and told to the policy in order,
in batches, before the next call that reads or changes its order (touch, evict, remove, clear).
"""

import hashlib
import struct

import kvpolicy

__all__ = ["policy_class"]

PREFIX = "kvp:"
_classes = {}  # name -> CachePolicy subclass, one per spec string
_base = None  # the adapter class, built on first use (vLLM is imported then)

# Kinds of the queued events (KvpolicyCachePolicy._runs).
_STORED, _LOCKED, _RELEASED, _TOUCHED = 0, 1, 2, 3
# What the policy is told a block holds: vLLM does not say (docs/engines/vllm.md, Gaps).
_BLOCK_TOKENS = 16
# Policies whose decisions read no prompt block ids (src/policy/*.cc: RequestView::blocks is
# read by WA, the guard and the learned ones; S3-FIFO reads it to prefetch only): a touch tells
# them the prompt's length, not its ids, which saves an id per key. Any other policy gets both.
_PROMPT_BLIND = {"lru", "fifo", "lfu", "sieve", "s3fifo", "gdsf", "rlt", "threshold_lru", "tlru",
                 "lpc"}
# Policies that read none of a request's fields (time, session, turn, prompt: src/policy/*.cc),
# for which a call's own request cycle equals an explicit one: the adapter saves the
# begin_request/end_request pair (about 5 us of keyword parsing: docs/results/engines-vllm.md).
_FIELD_BLIND = {"lru", "fifo", "lfu", "sieve", "s3fifo", "gdsf", "rlt"}
_MASK = (1 << 64) - 1
_SESSIONS = (1 << 32) - 1  # kvpolicy's session ids: [0, 2^32 - 2]


_tail = struct.Struct("<QI").unpack_from  # a key's last 8 hash bytes and its group index


def _node_ids(keys):
    """_node_id of each key; keys of one length (vLLM's are) parsed in one C pass."""
    if not keys:
        return []
    size = len(keys[0])
    joined = b"".join(keys)
    if size < 20 or len(joined) != size * len(keys):
        return [_node_id(k) for k in keys]
    fields = _tails.get(size)
    if fields is None:
        fields = _tails[size] = struct.Struct(f"<{size - 12}xQI").iter_unpack
    return [((h ^ (g * 0x9E3779B97F4A7C15)) & _MASK if g else h) or 1 for h, g in fields(joined)]


_tails = {}  # key length -> the iter_unpack of (last 8 hash bytes, group) per key


def _node_id(key):
    """The policy's id of an OffloadKey, the same in every process and every time the block
    comes back (so ghost entries and learned state recognise it). vLLM's key is a block hash of
    16 or 32 bytes (xxHash-128, SHA-256) followed by a 4-byte group index: its last 8 hash bytes
    mixed with the group are already uniform, and cost a fraction of a digest (the adapter's
    share of a call, docs/results/engines-vllm.md). Shorter keys are hashed (BLAKE2b-8)."""
    if len(key) >= 20:
        h, group = _tail(key, len(key) - 12)
        node = (h ^ (group * 0x9E3779B97F4A7C15)) & _MASK
    else:
        node = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")
    return node or 1


class _RequestFields:
    """The kvpolicy request fields of one vLLM request, parsed once (kept in its ReqContext)."""

    __slots__ = ("time", "session", "turn")

    def __init__(self, params):
        params = params or {}
        self.time = _number(params, "kvpolicy_time")
        self.session = _session(params.get("kvpolicy_session"))
        turn = params.get("kvpolicy_turn", 1)
        if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
            raise kvpolicy.ConfigError(
                f"kv_transfer_params['kvpolicy_turn'] = {turn!r}: expected an int >= 1")
        self.turn = turn


def _number(params, name):
    value = params.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise kvpolicy.ConfigError(
            f"kv_transfer_params[{name!r}] = {value!r}: expected seconds, a number >= 0")
    return float(value)


def _session(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str, bytes)):
        raise kvpolicy.ConfigError(
            f"kv_transfer_params['kvpolicy_session'] = {value!r}: expected an int or a str")
    if isinstance(value, int) and 0 <= value < _SESSIONS:
        return value
    raw = value if isinstance(value, bytes) else str(value).encode()
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little") % _SESSIONS


def _make_base(CachePolicy):
    class KvpolicyCachePolicy(CachePolicy):
        """A vLLM CachePolicy whose decisions are kvpolicy policy `spec`'s (class attribute)."""

        spec = "lru"

        def __init__(self, cache_capacity):
            super().__init__(cache_capacity)
            # A zero-block tier never stores anything (the manager refuses first).
            self._policy = kvpolicy.EvictionPolicy(self.spec, max(1, int(cache_capacity)),
                                                   _BLOCK_TOKENS, flat=True)
            name = self.spec.split(":")[0]
            self._reads_prompt = name not in _PROMPT_BLIND
            self._field_blind = name in _FIELD_BLIND
            self._ctx = None  # the ReqContext last touched
            self._blocks = {}  # key -> BlockStatus, every block the manager has
            self.get = self._blocks.get  # the hottest call: the dict's own lookup
            self._writing = set()  # inserted, store not complete: not told to the policy
            self._ids = {}  # key -> id, for the keys the policy tracks
            self._keys = {}  # id -> key, for the keys the policy tracks
            self._runs = []  # queued events in order: (kind, [keys]) or (_TOUCHED, ...)
            self._touched = None  # the queued touch's hits, key -> id
            self._fields = _RequestFields(None)  # the request last touched

        # --- the CachePolicy contract -------------------------------------------------------

        def get(self, key):
            return self._blocks.get(key)

        def insert(self, key, block):
            if key in self._blocks:
                raise kvpolicy.Error(f"insert: key {key!r} is already in the offload tier")
            self._blocks[key] = block
            if block.ref_cnt < 0:
                self._writing.add(key)
                return
            self._queue(_STORED, key)
            if block.ref_cnt > 0:
                self._queue(_LOCKED, key)

        def remove(self, key):
            del self._blocks[key]  # KeyError for an unknown key, as vLLM's LRU
            if key in self._writing:
                self._writing.discard(key)  # never told: the policy keeps no trace of it
                return
            self._flush()
            node = self._ids.pop(key)
            del self._keys[node]
            self._policy.on_remove(node)

        def touch(self, keys, req_context, *args, **kwargs):
            if self._runs:
                self._flush()
            fields = self._request_fields(req_context)
            keys = keys if isinstance(keys, (list, tuple)) else list(keys)
            ids = self._ids
            # The prompt's ids, for the policies that read them (the others get its length).
            nodes = _node_ids(keys) if self._reads_prompt else ()
            # The idle cached keys, last first: vLLM's LRU leaves a request's first block the
            # most recent, and ignores blocks being written or loaded. A key a load locks before
            # this touch is told drops out: the load's end counts that use (_flush).
            blocks = self._blocks
            hits = {k: i for k in reversed(keys)
                    if (i := ids.get(k)) is not None and blocks[k].ref_cnt == 0}
            self._runs.append((_TOUCHED, (fields, nodes, len(keys), hits)))
            self._touched = hits

        def evict(self, n, protected, *args, **kwargs):
            if self._runs:
                self._flush()
            if n <= 0:
                return []
            keys = self._keys
            # Sorted: excluded blocks are held for the call, which may reorder a policy's ties
            # (FIFO's, LFU's); `protected` is a set, whose order varies between processes.
            exclude = sorted(i for i in map(self._ids.get, protected) if i in keys)
            # All or nothing: the library returns n victims or none, changing nothing then.
            victims = self._policy.evict(n, exclude=exclude, all_or_nothing=True)
            if not victims:
                return None
            blocks, ids = self._blocks, self._ids
            out = []
            for node in victims:
                key = keys.pop(node)
                del ids[key]
                out.append((key, blocks.pop(key)))
            return out

        def clear(self):
            self._policy.clear()
            self._blocks.clear()
            self._writing.clear()
            self._ids.clear()
            self._keys.clear()
            self._runs.clear()
            self._touched = None
            self._ctx = None

        def mark_evictable(self, key):
            # Called per key, as often as blocks are stored: the queueing is inlined.
            writing, runs = self._writing, self._runs
            if key in writing:
                writing.remove(key)
                kind = _STORED
            else:
                kind = _RELEASED
            if runs:
                last = runs[-1]
                if last[0] == kind:
                    last[1].append(key)
                    return
            runs.append((kind, [key]))

        def mark_non_evictable(self, key):
            if self._touched is not None:
                self._touched.pop(key, None)
            self._queue(_LOCKED, key)

        # --- optional calls of newer vLLM versions: accepted, not needed ---------------------

        def open_session(self, *args, **kwargs):
            return None

        def close_session(self, *args, **kwargs):
            return None

        def record_lookup(self, *args, **kwargs):
            return None

        def on_request_finished(self, *args, **kwargs):
            return None

        # --- kvpolicy's view ------------------------------------------------------------------

        @property
        def kvpolicy(self):
            """The kvpolicy.EvictionPolicy deciding (queued events told first)."""
            self._flush()
            return self._policy

        def stats(self):
            """kvpolicy's counters (EvictionPolicy.stats()), queued events told first."""
            return self.kvpolicy.stats()

        def __len__(self):
            return len(self._blocks)

        # --- internals ----------------------------------------------------------------------

        def _queue(self, kind, key):
            runs = self._runs
            if runs and runs[-1][0] == kind:
                runs[-1][1].append(key)
            else:
                runs.append((kind, [key]))

        def _flush(self):
            runs, self._runs = self._runs, []
            self._touched = None
            policy, ids = self._policy, self._ids
            for kind, keys in runs:
                if kind == _TOUCHED:
                    fields, nodes, length, hits = keys
                    self._fields = fields
                    if self._field_blind:  # on_hits is then a request cycle of its own
                        policy.on_hits(list(hits.values()))
                        continue
                    policy.begin_request(time=fields.time, session=fields.session,
                                         turn=fields.turn, blocks=nodes,
                                         prompt_tokens=length * _BLOCK_TOKENS)
                    try:
                        policy.on_hits(list(hits.values()))
                    finally:
                        policy.end_request()
                elif kind == _STORED:
                    nodes = _node_ids(keys)
                    self._track(keys, nodes)
                    f = self._fields  # the request last touched
                    if self._field_blind:  # a request cycle of its own
                        told = policy.on_insert_chain(nodes)
                    else:
                        policy.begin_request(time=f.time, session=f.session, turn=f.turn)
                        try:
                            told = policy.on_insert_chain(nodes)
                        finally:
                            policy.end_request()
                    if told != len(nodes):
                        raise kvpolicy.Error(
                            f"kvp:{self.spec}: the policy took {told} of {len(nodes)} stored "
                            f"blocks ({len(self._keys)} tracked, capacity {self.cache_capacity})")
                elif kind == _LOCKED:
                    policy.on_locks([ids[k] for k in keys])
                else:
                    nodes = [ids[k] for k in keys]
                    policy.on_unlocks(nodes)
                    # Released by its last load: a use, and vLLM's LRU makes it the most recent.
                    policy.on_hits(nodes)

        def _track(self, keys, nodes):
            tracked = self._keys
            size = len(tracked)
            seen = dict(tracked) if any(map(tracked.__contains__, nodes)) else None
            tracked.update(zip(nodes, keys))
            if seen is None and len(tracked) - size == len(nodes):
                self._ids.update(zip(keys, nodes))
                return
            seen = seen or {}  # an id another stored key has: name both keys
            for key, node in zip(keys, nodes):
                other = seen.setdefault(node, key)
                if other != key:
                    raise kvpolicy.Error(f"kvp:{self.spec}: offload keys {other!r} and {key!r} "
                                         f"share the 64-bit id {node}")
            self._ids.update(zip(keys, nodes))

        def _request_fields(self, ctx):
            if ctx is self._ctx and ctx is not None:  # a request's second touch
                return self._fields
            self._ctx = ctx
            # Parsed once per request, kept in the ReqContext's per-request state (vLLM
            # versions without it parse at each touch).
            get_state = getattr(ctx, "get_state", None)
            fields = get_state(_RequestFields) if get_state is not None else None
            if fields is None:
                fields = _RequestFields(getattr(ctx, "kv_transfer_params", None))
                if get_state is not None:
                    ctx.set_state(fields)
            # kvpolicy's clock never goes back; requests touched out of arrival order keep it.
            last = self._fields.time
            if fields.time is not None and last is not None and fields.time < last:
                fields.time = last
            self._fields = fields
            return fields

    return KvpolicyCachePolicy


def policy_class(spec):
    """The vLLM CachePolicy subclass running kvpolicy policy `spec` ("s3fifo",
    "laru:predictor=reuse"), built once per spec. ConfigError for an unknown or offline policy
    or a bad parameter."""
    name = PREFIX + spec
    cls = _classes.get(name)
    if cls is not None:
        return cls
    global _base
    spec = spec.strip()
    if not spec:
        raise kvpolicy.ConfigError(f"vLLM eviction_policy {name!r}: no kvpolicy spec after "
                                   f"'{PREFIX}' (e.g. '{PREFIX}s3fifo')")
    try:
        # The spec, and a request with only what vLLM's requests carry (LPC's default predictor
        # wants a continuation score): refused at start-up rather than at the first touch.
        probe = kvpolicy.EvictionPolicy(spec, 1024, flat=True)
        probe.begin_request(time=0.0, session=1, turn=1)
        probe.end_request()
    except kvpolicy.Error as e:
        raise kvpolicy.ConfigError(f"vLLM eviction_policy {name!r}: {e}") from None
    if _base is None:
        try:
            from vllm.v1.kv_offload.cpu.policies.base import CachePolicy
        except ImportError as e:
            raise ImportError(f"kvpolicy.integrations.vllm needs vLLM's CPU offload tier "
                              f"(vllm.v1.kv_offload.cpu.policies.base): {e}") from None
        _base = _make_base(CachePolicy)
    cls = type(name, (_base,), {"spec": spec, "__module__": __name__,
                                "__qualname__": f"KvpolicyCachePolicy[{spec}]"})
    _classes[name] = cls
    return cls


def __getattr__(name):
    """vLLM's CachePolicyFactory resolves `eviction_policy` as getattr(module, name)."""
    if name.startswith(PREFIX):
        return policy_class(name[len(PREFIX):])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (policies are named "
                         f"'{PREFIX}<kvpolicy spec>', e.g. '{PREFIX}s3fifo')")
