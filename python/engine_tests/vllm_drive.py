"""Drives vLLM's real CPUOffloadingManager over a request stream, in the call order of vLLM's
offloading scheduler, and replays the same stream straight through a kvpolicy EvictionPolicy
with the calls kvpolicy.integrations.vllm maps vLLM's onto (the reference of the parity tests,
and of bench/engines/bench_vllm.py).

Order per request (scheduler.py in ../shared/engines/engines/vllm/reference): lookup each key
until the first miss, touch every key, prepare_load the hits, prepare_store every key (touch
again if anything is stored), complete_load the hits, complete_store the previous request's
store (one request late, so transfers overlap: blocks being written are locked and
HIT_PENDING), on_request_finished. Every `fail_every`-th store completes as failed (vLLM then
calls CachePolicy.remove).

Requires the vLLM files on sys.path (engines.use_engine("vllm")) before import.
"""
import hashlib
from dataclasses import dataclass, field

import kvpolicy
from kvpolicy.integrations.vllm import _node_id
from engines import data_dir  # noqa: F401  (vllm_parity imports it from here)
from vllm.v1.kv_offload.base import LookupResult, ReqContext, make_offload_key
from vllm.v1.kv_offload.cpu.manager import CPUOffloadingManager


def trace_requests(trace, limit=0):
    """[(keys, kv_transfer_params)] of a kvpolicy Trace: each block key as the OffloadKey vLLM
    would make of it (a SHA-256 block hash, as vLLM's default, and group 0) and the request's
    time, session and turn under kvpolicy's parameter names."""
    out = []
    n = len(trace) if not limit else min(limit, len(trace))
    digests = {}
    for i in range(n):
        r = trace.request(i)
        keys = []
        for b in trace.blocks(i):
            k = digests.get(b)
            if k is None:
                digest = hashlib.sha256(b.to_bytes(8, "little")).digest()
                k = digests[b] = make_offload_key(digest, 0)
            keys.append(k)
        params = {"kvpolicy_time": r["time"]}
        if r.get("session") is not None:
            params["kvpolicy_session"] = r["session"]
            params["kvpolicy_turn"] = max(1, r.get("turn") or 1)
        out.append((keys, params))
    return out


@dataclass
class Run:
    lookups: int = 0
    hits: int = 0
    stored: int = 0
    failures: int = 0  # prepare_store returned None (all or nothing)
    failed_writes: int = 0  # stores completed with success=False
    evicted: list = field(default_factory=list)  # keys, in order

    def summary(self):
        return dict(lookups=self.lookups, hits=self.hits, stored=self.stored,
                    failures=self.failures, failed_writes=self.failed_writes,
                    evicted=len(self.evicted))


def manager(policy, num_blocks, module_path=None, events=True):
    """vLLM's real CPUOffloadingManager with `policy` ("lru", "arc" or "kvp:<spec>")."""
    if policy.startswith("kvp:") and module_path is None:
        module_path = "kvpolicy.integrations.vllm"
    return CPUOffloadingManager(num_blocks=num_blocks, cache_policy=policy,
                                cache_policy_module_path=module_path, enable_events=events)


def drive(m, requests, fail_every=0, check=None):
    """Runs `requests` ([(keys, params)]) through manager `m`; returns a Run. `check(m, keys)`
    runs after every request (invariants)."""
    run = Run()
    pending = None
    stores = 0
    for i, (keys, params) in enumerate(requests):
        ctx = ReqContext(req_id=str(i), kv_transfer_params=params)
        m.on_new_request(ctx)
        n_hit = 0
        for k in keys:
            run.lookups += 1
            if m.lookup(k, ctx) is not LookupResult.HIT:
                break  # MISS, or HIT_PENDING (being written): the scheduler stops
            n_hit += 1
        run.hits += n_hit
        m.touch(keys, ctx)
        if n_hit:
            m.prepare_load(keys[:n_hit], ctx)
        out = m.prepare_store(keys, ctx)
        if out is None:
            run.failures += 1
        else:
            run.evicted.extend(out.evicted_keys)
            run.stored += len(out.keys_to_store)
            if out.keys_to_store:
                m.touch(keys, ctx)
        if n_hit:
            m.complete_load(keys[:n_hit], ctx)
        if pending is not None:
            pending_keys, pending_ctx = pending
            stores += 1
            ok = not (fail_every and stores % fail_every == 0)
            run.failed_writes += not ok
            m.complete_store(pending_keys, pending_ctx, success=ok)
        pending = (out.keys_to_store, ctx) if out is not None and out.keys_to_store else None
        m.on_request_finished(ctx)
        if check is not None:
            check(m, keys)
    if pending is not None:
        m.complete_store(*pending)
    return run


class Reference:
    """The same stream told straight to kvpolicy.EvictionPolicy(flat=True), call by call, as the
    adapter's mapping says (docs/engines/vllm.md): no vLLM, no adapter, no queueing. It keeps
    vLLM's rules itself: a flat tier of num_blocks slots, lookups stop at the first block not
    readable, a store is all or nothing and never evicts the request's own blocks."""

    def __init__(self, spec, num_blocks):
        self.policy = kvpolicy.EvictionPolicy(spec, max(1, num_blocks), flat=True)
        self.num_blocks = num_blocks
        self.ready = set()  # ids stored and readable
        self.writing = set()  # ids being stored
        self.loads = {}  # id -> loads in flight
        self.stored = []  # ids whose store completed since the last touch
        self.info = dict(time=None, session=None, turn=1)

    def touch(self, ids, params, loads=()):
        """A touch: the idle stored blocks, last first; `loads`, the blocks a load locks right
        after it, count at the load's end instead (the adapter's rule)."""
        self._told_stored()
        params = params or {}
        t = params.get("kvpolicy_time")
        last = self.info["time"]
        if t is not None and last is not None and t < last:
            t = last
        self.info = dict(time=t, session=params.get("kvpolicy_session"),
                         turn=params.get("kvpolicy_turn", 1))
        hits = [i for i in reversed(ids)
                if i in self.ready and i not in self.loads and i not in loads]
        self.policy.begin_request(blocks=ids, prompt_tokens=16 * len(ids), **self.info)
        self.policy.on_hits(hits)
        self.policy.end_request()

    def run(self, requests, fail_every=0):
        p, run = self.policy, Run()
        pending, stores = None, 0
        for keys, params in requests:
            ids = [_node_id(k) for k in keys]
            n_hit = 0
            for i in ids:
                run.lookups += 1
                if i not in self.ready:
                    break
                n_hit += 1
            run.hits += n_hit
            hits = ids[:n_hit]
            self.touch(ids, params, loads=set(hits))
            locked = []
            for i in hits:
                self.loads[i] = self.loads.get(i, 0) + 1
                if self.loads[i] == 1:
                    locked.append(i)
            if locked:
                p.on_locks(locked)
            new = [i for i in ids if i not in self.ready and i not in self.writing]
            stored = self._store(ids, new, run)
            if stored is None:
                run.failures += 1
            elif stored:
                run.stored += len(stored)
                self.touch(ids, params)
            released = []
            for i in hits:
                self.loads[i] -= 1
                if self.loads[i] == 0:
                    del self.loads[i]
                    released.append(i)
            if released:
                p.on_unlocks(released)
                p.on_hits(released)
            if pending is not None:
                stores += 1
                ok = not (fail_every and stores % fail_every == 0)
                run.failed_writes += not ok
                self._complete(pending, ok)
            pending = stored or None
        if pending is not None:
            self._complete(pending, True)
        self._told_stored()
        return run

    def _store(self, ids, new, run):
        if not new:
            return []
        free = self.num_blocks - len(self.ready) - len(self.writing)
        need = len(new) - free
        if need > 0:
            evictable = len(self.ready) - len(self.loads)
            if need > evictable:
                return None
            own = sorted(i for i in ids if i in self.ready)
            victims = self.policy.evict(need, exclude=own, all_or_nothing=True)
            if len(victims) < need:
                return None
            self.ready.difference_update(victims)
            run.evicted.extend(victims)
        self.writing.update(new)
        return new

    def _complete(self, ids, ok):
        done = [i for i in ids if i in self.writing]
        self.writing.difference_update(done)
        if ok and done:
            self.ready.update(done)
            self.stored.extend(done)

    def _told_stored(self):
        """Stores completed since the last touch: one request of the policy, the last touch's
        (the mapping's rule, docs/engines/vllm.md)."""
        if self.stored:
            self.policy.begin_request(**self.info)
            told = self.policy.on_insert_chain(self.stored)
            self.policy.end_request()
            assert told == len(self.stored), (told, len(self.stored))
            self.stored = []
