"""kvpolicy from Python: the prefix-cache simulator, an online KV cache, and an eviction-policy
adapter that lets any kvpolicy policy decide evictions in a Python engine's radix cache.

    import kvpolicy
    trace = kvpolicy.load_trace("conversation_trace.jsonl")
    rows = kvpolicy.simulate(trace, ["lru", "s3fifo", "belady"], ["2%", "40GB"])

See docs/api.md for the whole API, its thread-safety and the cost of a call.
"""

import contextlib
import json

from ._kvpolicy import (  # noqa: F401  (re-exported)
    ConfigError,
    Error,
    InputError,
    Trace,
    is_offline,
    load_trace,
    policy_names,
    _KvCache,
    _PolicyTree,
    _simulate,
    __version__,
)

__all__ = [
    "Cache",
    "ConfigError",
    "Error",
    "EvictionPolicy",
    "InputError",
    "Trace",
    "is_offline",
    "load_trace",
    "policy_names",
    "simulate",
]


def _as_list(value):
    return [value] if isinstance(value, (str, int, float)) else list(value)


def simulate(trace, policies=("lru",), capacities=("5%",), *, seed=1, jobs=0, dram=0.0,
             dram_policy="lru", model="llama-3.1-8b", gpu="a100-80gb", kv_dtype="auto",
             xi_ms=200.0, slo_ms=200.0):
    """Replays `trace` (a Trace, or a path for load_trace) through every policy at every
    capacity, on `jobs` threads (0 = every core), with the GIL released.

    Policies are specs as on the command line ("lru", "laru:predictor=noisy,p=0.2"); capacities
    are blocks (4096), shares of the trace's unique blocks (0.05 or "5%"), tokens ("10000t") or KV
    memory ("40GB", through model and kv_dtype). Returns one dict per (policy, capacity), with the
    fields of `kvpolicy simulate --json` (docs/formats.md): a list of records pandas takes as is.
    """
    if isinstance(trace, str):
        trace = load_trace(trace)
    lines = _simulate(trace, [str(p) for p in _as_list(policies)],
                      [str(c) for c in _as_list(capacities)], seed, jobs, float(dram),
                      dram_policy, model, gpu, kv_dtype, float(xi_ms), float(slo_ms))
    return [json.loads(line) for line in lines]


class Cache:
    """A prefix cache of KV blocks run by a kvpolicy policy, as an engine calls it.

    Sequences are token ids (only full blocks of `block_tokens` are cached), or the engine's own
    chained block hashes through the `keys=` keyword. Request fields a policy may read (time in
    seconds, session, turn, category, prompt_tokens, output_tokens, continuation) are keywords of
    lookup() and insert(). Threads may share a Cache: each call holds its lock (insert_many
    with the GIL released).
    """

    def __init__(self, policy="lru", capacity_blocks=1024, block_tokens=16, seed=1):
        """An empty cache of capacity_blocks blocks of block_tokens tokens, evicted by the
        online policy spec `policy` ("lru", "s3fifo", "laru:predictor=noisy,p=0.2"); seed
        drives randomized policies. ConfigError for an unknown or offline policy."""
        self._c = _KvCache(policy, capacity_blocks, block_tokens, seed)

    def _keys(self, tokens, keys):
        if (tokens is None) == (keys is None):
            raise TypeError("give either tokens or keys=")
        return list(keys) if keys is not None else self._c.block_keys(tokens)

    def block_keys(self, tokens):
        """The chained keys of the full blocks of `tokens` (trace import's keys)."""
        return self._c.block_keys(tokens)

    def match(self, tokens=None, *, keys=None):
        """Cached prefix length in tokens (in blocks with keys=). No side effects."""
        n = self._c.match(self._keys(tokens, keys))
        return n if keys is not None else n * self._c.block_tokens

    def lookup(self, tokens=None, *, keys=None, **request):
        """As match(), and the policy is told the cached prefix was used."""
        n = self._c.lookup(self._keys(tokens, keys), **request)
        return n if keys is not None else n * self._c.block_tokens

    def insert(self, tokens=None, *, keys=None, **request):
        """One request as replay runs it: the cached prefix counts as hits, the missing blocks
        are inserted, evicting as the policy chooses. Returns (hit, inserted, evicted) blocks."""
        return self._c.insert(self._keys(tokens, keys), **request)

    def insert_many(self, requests):
        """insert() for many key sequences in one call, the GIL released; hit blocks each."""
        return self._c.insert_many([list(k) for k in requests])

    def pin(self, tokens=None, *, keys=None):
        """Pins every full block of the sequence (all must be cached): never evicted."""
        self._c.pin(self._keys(tokens, keys))

    def unpin(self, tokens=None, *, keys=None):
        """Releases one pin() of every full block of the sequence."""
        self._c.unpin(self._keys(tokens, keys))

    def evict(self, num_blocks):
        """Frees up to num_blocks unpinned blocks in the policy's order; returns their keys."""
        return self._c.evict(num_blocks)

    def stats(self):
        """Counters as a dict: requests, hits, inserted, evictions, size, pinned, and the
        policy's own (a learned policy's model state, for instance)."""
        return self._c.stats()

    def __len__(self):
        """The number of blocks cached."""
        return len(self._c)

    @property
    def capacity(self):
        """Capacity in blocks."""
        return self._c.capacity

    @property
    def block_tokens(self):
        """Tokens per block."""
        return self._c.block_tokens

    @property
    def policy(self):
        """The policy's label, its parameters included ("lru", "s3fifo:small=0.1")."""
        return self._c.policy


class EvictionPolicy(_PolicyTree):
    """A kvpolicy policy deciding evictions for a radix cache that lives elsewhere (SGLang's
    shape: one node per KV block, lock references, evict(n)).

    The cache tells it its events with its own node ids: distinct 64-bit ints, best a hash of
    the node's whole prefix (as vLLM's block hashes), so that a page evicted and brought back has
    the same id and policies that remember evicted blocks (S3-FIFO's ghost queue, WA) see it:
      on_insert(node, parent=None)  a node was added (False: every node is locked, nothing added)
      on_hit(node)                  a cached node was matched by a request
      on_lock(node) / on_unlock(node)   a running request holds / releases it
      evict(n) -> [node, ...]       which nodes to delete now, leaves first, in the policy's order
    Group one request's calls with `with policy.request(time=..., session=..., blocks=[...])`
    (or begin_request()/end_request()), where blocks are the ids of the prompt's pages in order,
    cached or not (WA, the guard and the learned policies read the whole prompt); calls outside
    a request are a request of their own, and a
    request holds the nodes it hit or inserted until it ends, so evict() never takes them. The
    cache evicts before it inserts: on_insert into a full policy (len == capacity) adds nothing
    and returns False.
    """

    def __init__(self, policy="lru", capacity_blocks=1024, block_tokens=16, seed=1):
        """A policy tracking up to capacity_blocks nodes of block_tokens tokens; seed drives
        randomized policies. ConfigError for an unknown or offline policy."""
        super().__init__(policy, capacity_blocks, block_tokens, seed)

    @contextlib.contextmanager
    def request(self, **request):
        """`with policy.request(time=..., blocks=[...]):` begin_request() ... end_request()."""
        self.begin_request(**request)
        try:
            yield self
        finally:
            self.end_request()
