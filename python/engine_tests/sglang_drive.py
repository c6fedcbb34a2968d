"""Drives SGLang's real RadixCache (native or KvpolicyRadixCache) in the scheduler's call order,
and replays the same block stream on a bare kvpolicy.EvictionPolicy, for test_sglang.py and
bench/engines/bench_sglang.py. Import after engines.use_engine("sglang").

Scheduler order per request (managers/schedule_policy.py, mem_cache/common.py,
RadixCache.cache_finished_req): match_prefix(prompt) -> inc_lock_ref(last node) -> evict(short)
if the pool is short -> allocate -> insert(prompt + output, page-aligned) -> free the duplicate
indices insert reports and the unaligned tail -> dec_lock_ref(last node).
"""
import itertools
import json
import os
import random
import zlib
from array import array

import torch

import kvpolicy
from kvpolicy.integrations import sglang as kvp_sglang
from engines import data_dir  # noqa: F401  (test_sglang reads it from here)
from sglang.srt.mem_cache.base_prefix_cache import EvictParams, InsertParams, MatchPrefixParams
from sglang.srt.mem_cache.cache_init_params import CacheInitParams
from sglang.srt.mem_cache.radix_cache import RadixCache, RadixKey


class Allocator:
    """The allocator surface RadixCache uses (device, size, free_segment(s)), plus alloc()."""

    def __init__(self, size):
        self.device = torch.device("cpu")
        self.size = size
        self.free = list(range(size - 1, -1, -1))

    def available_size(self):
        return len(self.free)

    def alloc(self, n):
        if n > len(self.free):
            return None
        out = self.free[len(self.free) - n:]
        del self.free[len(self.free) - n:]
        out.reverse()
        return torch.tensor(out, dtype=torch.int64)

    def free_segment(self, indices, start_pos=0):
        self.free.extend(int(i) for i in indices)

    def free_segments(self, segments):
        for indices, start in segments:
            self.free_segment(indices, start)


def make_cache(pool, page=1, spec=None, block=None, eviction_policy="lru"):
    """(cache, allocator): native RadixCache (spec None) or KvpolicyRadixCache."""
    alloc = Allocator(pool)
    params = CacheInitParams(disable=False, req_to_token_pool=None,
                             token_to_kv_pool_allocator=alloc, page_size=page,
                             eviction_policy=eviction_policy)
    if spec is None:
        return RadixCache(params), alloc
    cache = kvp_sglang.KvpolicyRadixCache(params, spec=spec, block_tokens=block)
    clock = itertools.count()
    cache.kvp_clock = lambda: float(next(clock))  # deterministic request times
    return cache, alloc


def tree_blocks(cache):
    """Every whole block id of the tree (KvpolicyRadixCache), and the tree's tokens."""
    ids, tokens, stack = [], 0, [cache.root_node]
    while stack:
        node = stack.pop()
        ids.extend(node.kvp_ids)
        tokens += len(node.value)
        stack.extend(node.children.values())
    return ids, tokens


def check(cache, alloc, pool):
    """The invariants of the engines' smoke, and the mapping's: the policy tracks exactly the
    tree's whole blocks."""
    used = pool - alloc.available_size()
    assert used == cache.total_size() == cache.evictable_size(), (
        used, cache.total_size(), cache.evictable_size())
    assert cache.protected_size() == 0
    if hasattr(cache, "kvp"):
        ids, _ = tree_blocks(cache)
        assert len(ids) == len(set(ids)) == len(cache.kvp), (len(ids), len(cache.kvp))
        assert all(i in cache.kvp for i in ids)
        if cache.kvp_block == cache.page_size:
            assert len(cache.kvp) == used // cache.page_size


def run(cache, alloc, requests, *, checks=1, victims=None):
    """Replays requests [(prompt, output)]; returns (hit tokens per request (None: rejected),
    tokens evicted). checks: check() after every this many requests (0: never) and at the end;
    victims: a list that receives each evict() call's kvpolicy victims."""
    pool, page = alloc.size, cache.page_size
    if victims is not None and hasattr(cache, "kvp"):
        evict = cache.kvp.evict

        def recording(n, **kw):
            out = evict(n, **kw)
            victims.append(list(out))
            return out
        cache.kvp.evict = recording
    hits, evicted = [], 0
    for prompt, output in requests:
        m = cache.match_prefix(MatchPrefixParams(key=RadixKey(array("q", prompt))))
        prefix, last = m.device_indices, m.last_device_node
        cache.inc_lock_ref(last)
        need = len(prompt) - len(prefix) + len(output)
        if alloc.available_size() < need:
            evicted += cache.evict(
                EvictParams(num_tokens=need - alloc.available_size())).num_tokens_evicted
        new = alloc.alloc(need)
        if new is None:
            hits.append(None)
            cache.dec_lock_ref(last)
            continue
        hits.append(len(prefix))
        full = prompt + output
        values = torch.cat([prefix, new])
        aligned = len(full) // page * page
        res = cache.insert(InsertParams(key=RadixKey(array("q", full)), value=values))
        if res.prefix_len > len(prefix):  # inserted meanwhile by someone else: free ours
            alloc.free_segment(values[len(prefix):res.prefix_len])
        if aligned < len(values):  # the unaligned tail is not cached (cache_finished_req)
            alloc.free_segment(values[aligned:])
        cache.dec_lock_ref(last)
        if checks and len(hits) % checks == 0:
            check(cache, alloc, pool)
    if checks:
        check(cache, alloc, pool)
    return hits, evicted


def reference(requests, spec, pool, page):
    """kvpolicy's own run of the stream the mapping produces at block = page: a bare
    EvictionPolicy told each request's hits, evictions and inserts in the scheduler's order,
    with the tree's contents modelled as the set of tracked block ids. Returns what run()
    does, plus the victims of every evict call."""
    kvp = kvpolicy.EvictionPolicy(spec, pool // page, page, 1)
    clock = itertools.count()
    hits, evicted, victims = [], 0, []
    for prompt, output in requests:
        full = prompt + output
        ids = kvp_sglang.block_ids(full, 0, len(full) // page, page)
        matched = 0
        for i in ids[:len(prompt) // page]:
            if i not in kvp:
                break
            matched += 1
        if matched:
            kvp.on_lock(ids[matched - 1])
        free = pool - len(kvp) * page
        need = len(prompt) - matched * page + len(output)
        if free < need:
            out = []
            while free < need:
                got = kvp.evict(-(-(need - free) // page))
                out += got
                free += len(got) * page
                if not got:
                    break
            victims.append(out)
            evicted += len(out) * page
        if free < need:
            hits.append(None)
        else:
            hits.append(matched * page)
            cached = list(itertools.takewhile(lambda i: i in kvp, ids))
            added = ids[len(cached):]
            kvp.begin_request(time=float(next(clock)), blocks=cached + added)
            if cached:
                kvp.on_hits(cached)
            if added:
                assert kvp.on_insert_chain(added, cached[-1] if cached else None) == len(added)
            kvp.end_request()
        if matched:
            kvp.on_unlock(ids[matched - 1])
    return hits, evicted, victims


# ----- traces -----

def mooncake_requests(limit, tokens_per_hash=4, output_tokens=0):
    """Mooncake's conversation trace as token lists: hash id h becomes tokens_per_hash tokens
    (h * tokens_per_hash + i), so shared hash ids are shared prefixes; outputs are fresh
    tokens (never shared)."""
    path = os.path.join(data_dir(), "mooncake-conversation", "conversation_trace.jsonl")
    out, fresh = [], itertools.count(1 << 31)
    with open(path) as f:
        for line in itertools.islice(f, limit):
            rec = json.loads(line)
            prompt = [h * tokens_per_hash + i for h in rec["hash_ids"]
                      for i in range(tokens_per_hash)]
            out.append((prompt, [next(fresh) for _ in range(output_tokens)]))
    return out


def _tokens(text, cap):
    return [zlib.crc32(w.encode()) & 0xFFFFF for w in text.split()[:cap]]


def sharegpt_requests(limit, cap=48, seed=3, isolate=False):
    """ShareGPT conversations as token lists: each human turn's prompt is the conversation so
    far (a growing shared prefix), its output the gpt answer; words become token ids; turns of
    different conversations interleave at random (one seeded RNG). isolate: each conversation
    gets token ids of its own (no prefix shared across conversations)."""
    path = os.path.join(data_dir(), "sharegpt-sample", "sharegpt_sample_slim.jsonl")
    convs = []
    with open(path) as f:
        for line in f:
            msgs = json.loads(line)["conversations"]
            turns, history = [], []
            base = (len(convs) + 1) << 20 if isolate else 0
            for i, m in enumerate(msgs):
                if m["from"] != "human":
                    continue
                history = history + [base + t for t in _tokens(m["value"], cap)]
                answer = msgs[i + 1]["value"] if i + 1 < len(msgs) else ""
                out = [base + t for t in _tokens(answer, cap)]
                turns.append((list(history), out))
                history = history + out
            if turns:
                convs.append(turns)
    rng, live, out = random.Random(seed), [], []
    pending = iter(convs)
    while len(out) < limit:
        while len(live) < 16:
            nxt = next(pending, None)
            if nxt is None:
                break
            live.append(list(nxt))
        if not live:
            break
        conv = live[rng.randrange(len(live))]
        out.append(conv.pop(0))
        if not conv:
            live.remove(conv)
    return out
