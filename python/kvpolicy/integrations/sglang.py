"""kvpolicy inside SGLang's radix cache (docs/engines/sglang.md).

Two forms, both installed by register(), which SGLang's plugin loader calls through the entry
point `sglang.srt.plugins` / `kvpolicy` (pyproject.toml; select it with SGLANG_PLUGINS=kvpolicy):

- the radix cache backend "kvpolicy" (`--radix-cache-backend kvpolicy`): KvpolicyRadixCache, a
  subclass of SGLang's RadixCache whose evictions any online kvpolicy policy decides (stateful
  ones included: S3-FIFO, SIEVE, LARU, WA). The policy spec comes from KVPOLICY_SGLANG_SPEC
  (default "lru"), kvpolicy's block size in tokens from KVPOLICY_SGLANG_BLOCK_TOKENS (default:
  SGLang's page size);
- score-only EvictionStrategy classes (`--radix-eviction-policy kvp_gdsf`, ...) for the policies
  that are a per-node score (kvpolicy.integrations.sglang_strategies).

How the radix tree maps onto kvpolicy's blocks (block = B tokens, a multiple of the page size):
- block j of a path is its tokens [jB, (j+1)B); its id is a chained hash of the path's tokens
  up to (j+1)B and the key's extra_key/cache_salt (block_ids), so a page evicted and
  re-inserted keeps its id and a node split changes nothing in the policy. A node
  owns the blocks that END inside it (node.kvp_ids); kvpolicy's parent of block j is block j-1
  of the same path.
- partial tail blocks: tokens after the last whole block of a path (a node ending mid-block, B > P
  only) are in no block. They hang off the path's last whole block and are freed with it (when
  that block is evicted, everything below its end goes too); those hanging off the root (paths
  shorter than B) are evicted first by evict(), before the policy is asked. Hits count whole
  blocks only.
- hits are told once per request, at its first insert (cache_unfinished_req or
  cache_finished_req): the whole blocks of its prefix already cached; match_prefix, which the
  scheduler repeats for waiting requests, tells the policy nothing.
- inc_lock_ref/dec_lock_ref lock/unlock the deepest whole block at or above the node (a locked
  block protects its ancestors); evict(num_tokens) frees the policy's victims page-exactly,
  splitting a node at a block boundary when a block ends inside it.
"""

import itertools
import logging
import os
import time
from array import array

import kvpolicy

SPEC_ENV = "KVPOLICY_SGLANG_SPEC"
BLOCK_TOKENS_ENV = "KVPOLICY_SGLANG_BLOCK_TOKENS"
BACKEND_NAME = "kvpolicy"
_MASK = (1 << 64) - 1

logger = logging.getLogger(__name__)
_classes = {}


def __getattr__(name):
    """KvpolicyRadixCache is built on first use: SGLang is imported only then."""
    if name == "KvpolicyRadixCache":
        if name not in _classes:
            _classes[name] = _build_class()
        return _classes[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _namespace_seed(key):
    """The hash a path's first block chains from: keys with another extra_key or cache_salt live
    in another namespace of the radix tree, so their ids must differ too."""
    if key.extra_key is None and key.cache_salt is None:
        return 0
    return hash((key.extra_key, key.cache_salt)) & _MASK


def block_ids(tokens, first, last, block_tokens, prior=0):
    """Ids of the blocks [first, last) of a path from the root whose tokens are `tokens`
    (array('q') or list), chained from `prior`: the id of block first-1, or the path's
    namespace seed (_namespace_seed) for block 0. Id j = hash(id j-1, block j's tokens), so an
    id depends on the path's content only, wherever the chain is resumed."""
    h, b = prior, block_tokens
    if b == 1:
        return [(h := hash((h, t)) & _MASK) for t in tokens[first:last]]
    part = tokens[first * b:last * b]
    if not isinstance(part, array) or part.typecode != "q":
        part = array("q", part)
    raw, width, out = part.tobytes(), 8 * b, []
    for o in range(0, len(raw), width):
        h = hash((h, raw[o:o + width])) & _MASK
        out.append(h)
    return out


def _build_class():
    from sglang.srt.mem_cache.base_prefix_cache import EvictResult
    from sglang.srt.mem_cache.radix_cache import RadixCache

    class KvpolicyRadixCache(RadixCache):
        """SGLang's RadixCache with evictions decided by a kvpolicy policy (module docstring).

        KvpolicyRadixCache(params, spec="lru", capacity_pages=None, block_tokens=None, seed=1):
        params is SGLang's CacheInitParams; capacity_pages defaults to the allocator's size in
        pages; block_tokens (kvpolicy's block) to the page size and must be a multiple of it.
        `kvp` is the kvpolicy.EvictionPolicy; `kvp_clock` the request clock in seconds
        (time.monotonic by default) that time-aware policies read.
        """

        def __init__(self, params, spec="lru", capacity_pages=None, block_tokens=None, seed=1):
            page = int(params.page_size)
            block = page if block_tokens in (None, 0, "") else int(block_tokens)
            if block <= 0 or block % page:
                raise kvpolicy.ConfigError(
                    f"block_tokens={block_tokens!r} must be a positive multiple of SGLang's "
                    f"page size {page}")
            if params.is_eagle:
                raise kvpolicy.ConfigError(
                    "KvpolicyRadixCache does not support EAGLE's bigram keys (is_eagle=True)")
            if capacity_pages is None:
                size = getattr(params.token_to_kv_pool_allocator, "size", None)
                if size is None:
                    raise kvpolicy.ConfigError(
                        "capacity_pages is required: the allocator has no `size` attribute")
                capacity_pages = int(size) // page
            if int(capacity_pages) <= 0:
                raise kvpolicy.ConfigError(f"capacity_pages={capacity_pages!r} must be > 0")
            self.kvp_block = block
            # Capacity in blocks = pages: blocks that share a prefix share its tokens, so a
            # tree of N pages holds up to N blocks (each has a last page of its own).
            self.kvp = kvpolicy.EvictionPolicy(spec, int(capacity_pages), block, seed)
            self.kvp_clock = time.monotonic
            self._kvp_owner = {}  # a node's last block id -> the node (victims are last blocks)
            self._kvp_tails = {}  # paths shorter than a block (B > P), oldest first
            self._kvp_req = None  # the Req of the cache_*_req call running
            super().__init__(params)

        # ----- the tree's mapping onto blocks -----

        def reset(self):
            super().reset()
            self.root_node.kvp_ids = []
            self.root_node.kvp_depth = 0
            if hasattr(self, "kvp"):
                self.kvp.clear()
                self._kvp_owner.clear()
                self._kvp_tails.clear()

        def _split_node(self, key, child, split_len):
            new = super()._split_node(key, child, split_len)
            a, ids, b = child.kvp_depth, child.kvp_ids, self.kvp_block
            cut = (a + split_len) // b - a // b
            new.kvp_depth, new.kvp_ids = a, ids[:cut]
            child.kvp_depth, child.kvp_ids = a + split_len, ids[cut:]
            if cut:
                self._kvp_owner[ids[cut - 1]] = new
            return new

        def _last_block(self, node):
            """The id of the deepest whole block ending at or above node's end, or None."""
            root = self.root_node
            while node is not root:
                if node.kvp_ids:
                    return node.kvp_ids[-1]
                node = node.parent
            return None

        def _path_blocks(self, node):
            """Ids of every whole block on the path from the root to node's end, in order."""
            parts, root = [], self.root_node
            while node is not root:
                if node.kvp_ids:
                    parts.append(node.kvp_ids)
                node = node.parent
            parts.reverse()
            return list(itertools.chain.from_iterable(parts))

        # ----- SGLang's calls -----

        def insert(self, params):
            res = super().insert(params)
            node = res.last_device_node
            if self.disable or node is None or node is self.root_node:
                return res
            new = getattr(node, "kvp_ids", None) is None
            parent = None
            if new:
                parent = self._annotate(node, res.prefix_len, params.key)
            req, hits = self._kvp_req, True
            if req is not None:  # a Req's hits are told at its first insert only
                hits = not getattr(req, "_kvp_hits_told", False)
                try:
                    req._kvp_hits_told = True
                except AttributeError:
                    pass
            added = node.kvp_ids if new else []
            if not added and not hits:
                return res
            cached = self._path_blocks(node.parent if new else node) if hits else []
            kvp = self.kvp
            kvp.begin_request(time=self.kvp_clock(), blocks=cached + added)
            try:
                if cached:
                    kvp.on_hits(cached)
                if added:
                    self._add_blocks(added, parent)
            finally:
                kvp.end_request()
            return res

        def _annotate(self, node, depth, key):
            """Gives the node an insert just created its depth and the ids of its blocks;
            returns the id of the block before them (None: they start the path)."""
            b = self.kvp_block
            end = depth + len(node.key)
            node.kvp_depth = depth
            first, last = depth // b, end // b
            parent = self._last_block(node.parent)
            if last > first:
                prior = _namespace_seed(key) if parent is None else parent
                ids = block_ids(key.token_ids, first, last, b, prior)
                self._kvp_owner[ids[-1]] = node
                node.kvp_ids = ids
            else:
                node.kvp_ids = []
            if end < b:
                self._kvp_tails[node] = None
            return parent

        def _add_blocks(self, ids, parent):
            kvp = self.kvp
            room = kvp.capacity - len(kvp)
            if room < len(ids):  # a capacity below the pool: make room in the tree first
                self._evict_blocks(len(ids) - room)
            n = kvp.on_insert_chain(ids, parent)
            if n < len(ids):
                raise kvpolicy.Error(
                    f"kvpolicy refused {len(ids) - n} of {len(ids)} new blocks (capacity "
                    f"{kvp.capacity} blocks, {len(kvp)} tracked, all others locked): raise "
                    "capacity_pages to the KV pool's size")

        def inc_lock_ref(self, node):
            res = super().inc_lock_ref(node)
            if not self.disable:
                block = self._last_block(node)
                if block is not None:
                    self.kvp.on_lock(block)
            return res

        def dec_lock_ref(self, node, params=None):
            res = super().dec_lock_ref(node, params)
            if not self.disable:
                block = self._last_block(node)
                if block is not None:
                    self.kvp.on_unlock(block)
            return res

        def cache_finished_req(self, req, is_insert=True, **kwargs):
            self._kvp_req = req
            try:
                return super().cache_finished_req(req, is_insert, **kwargs)
            finally:
                self._kvp_req = None

        def cache_unfinished_req(self, req, chunked=False):
            self._kvp_req = req
            try:
                return super().cache_unfinished_req(req, chunked)
            finally:
                self._kvp_req = None

        def evict(self, params):
            if self.disable:
                return EvictResult()
            start = time.perf_counter()
            need, freed = params.num_tokens, 0
            if self._kvp_tails:
                freed += self._evict_tails(need)
            b = self.kvp_block
            while freed < need:
                victims = self.kvp.evict(-(-(need - freed) // b))
                if not victims:
                    break
                freed += self._free_victims(victims)
            self.update_eviction_metrics(freed, start)
            return EvictResult(num_tokens_evicted=freed)

        # ----- freeing -----

        def _evict_blocks(self, n):
            return self._free_victims(self.kvp.evict(n))

        def _free_victims(self, victims):
            """Frees the policy's victims in their order, a run of a node's last blocks (the
            usual order: deeper first) at once."""
            freed, i = 0, 0
            while i < len(victims):
                node = self._owner(victims[i])
                ids = node.kvp_ids
                k = min(len(ids), len(victims) - i)
                if victims[i:i + k] != ids[:-k - 1:-1]:  # not all: find where the run stops
                    k = 1
                    while i + k < len(victims) and k < len(ids) and victims[i + k] == ids[-1 - k]:
                        k += 1
                freed += self._free_blocks(node, k)
                i += k
            return freed

        def _drop(self, node):
            """Frees an unlocked leaf's indices and deletes it, as RadixCache.evict does."""
            self.token_to_kv_pool_allocator.free_segment(node.value, start_pos=0)
            n = len(node.value)
            self._delete_leaf(node)
            self.kv_events.record_remove(node)
            node.kvp_dead = True
            self._kvp_tails.pop(node, None)
            return n

        def _trim(self, node, keep):
            """Frees an unlocked leaf's tokens after its first `keep` in place (no split: a
            split would copy both halves), or by a split when KV events need a removed node."""
            if self.kv_events.enabled:
                self._split_node(node.key, node, keep)
                return self._drop(node)
            value = node.value
            self.token_to_kv_pool_allocator.free_segment(value[keep:], start_pos=0)
            n = len(value) - keep
            node.key, node.value = node.key[:keep], value[:keep]
            if node.hash_value is not None:
                node.hash_value = node.hash_value[:keep // self.page_size]
            self.evictable_size_ -= n
            b, depth, ids = self.kvp_block, node.kvp_depth, node.kvp_ids
            del ids[(depth + keep) // b - depth // b:]
            if ids:
                self._kvp_owner[ids[-1]] = node
            return n

        def _drop_subtree(self, node):
            freed = 0
            for child in list(node.children.values()):
                freed += self._drop_subtree(child)
            if node.lock_ref > 0 or node.kvp_ids:
                raise kvpolicy.Error("kvpolicy: a locked node or a block hangs below a victim")
            return freed + self._drop(node)

        def _owner(self, block):
            """The node whose last block is `block` (a victim has no block below it)."""
            node = self._kvp_owner.pop(block, None)
            if node is None or not node.kvp_ids or node.kvp_ids[-1] != block:
                raise kvpolicy.Error(f"kvpolicy evicted block {block:#x}, which is not the "
                                     "last block of a node of the radix tree")
            return node

        def _free_blocks(self, node, k):
            """Frees node's last k blocks (victims, nothing tracked below them): everything
            below their end, then their tokens up to the first one's start that no other path
            or lock still uses."""
            b = self.kvp_block
            start = ((node.kvp_depth + len(node.key)) // b - k) * b
            freed = 0
            for child in list(node.children.values()):
                freed += self._drop_subtree(child)
            cur = node
            while cur is not self.root_node and not cur.children and cur.lock_ref == 0:
                depth = cur.kvp_depth
                if depth < start:  # the first block begins inside this node: cut it there
                    freed += self._trim(cur, start - depth)
                    break
                parent = cur.parent
                freed += self._drop(cur)
                if depth == start:
                    break
                cur = parent
            else:
                if start == 0 and cur is not self.root_node and not cur.children:
                    self._kvp_tails[cur] = None  # a locked rest of block 0 now hangs off the root
            return freed

        def _evict_tails(self, need):
            """Frees unlocked paths shorter than one block (they hang off the root)."""
            freed = 0
            for node in list(self._kvp_tails):
                if freed >= need:
                    break
                if getattr(node, "kvp_dead", False):
                    self._kvp_tails.pop(node, None)
                    continue
                while (node is not self.root_node and not node.children
                       and node.lock_ref == 0 and not node.kvp_ids):
                    parent = node.parent
                    freed += self._drop(node)
                    node = parent
            return freed

    return KvpolicyRadixCache


# ----- registration -----

def _env_block_tokens():
    value = os.environ.get(BLOCK_TOKENS_ENV, "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise kvpolicy.ConfigError(
            f"{BLOCK_TOKENS_ENV}={value!r} is not an integer number of tokens") from None


def radix_cache_factory(ctx):
    """SGLang's radix cache factory (mem_cache/registry.py): builds KvpolicyRadixCache from a
    TreeCacheBuildContext, the policy from KVPOLICY_SGLANG_SPEC and KVPOLICY_SGLANG_BLOCK_TOKENS."""
    unsupported = [name for name in ("is_hybrid_swa", "is_hybrid_ssm", "enable_hierarchical_cache",
                                     "disable_radix_cache") if getattr(ctx, name, False)]
    if unsupported:
        raise kvpolicy.ConfigError(
            f"--radix-cache-backend {BACKEND_NAME} replaces the plain RadixCache only; this "
            f"model/config needs another cache ({', '.join(unsupported)})")
    spec = os.environ.get(SPEC_ENV, "").strip() or "lru"
    cls = __getattr__("KvpolicyRadixCache")
    return cls(ctx.params, spec=spec, block_tokens=_env_block_tokens())


def register():
    """SGLang plugin entry point: registers the "kvpolicy" radix cache backend and the kvp_*
    eviction strategies. Registers what this SGLang has and logs what it skipped; returns
    {"registered": [...], "skipped": [...]}. Calling it again changes nothing."""
    from . import sglang_strategies

    done, skipped = [], []
    try:
        from sglang.srt.mem_cache import registry
    except ImportError as e:
        skipped.append(f"radix cache backend {BACKEND_NAME!r}: no mem_cache.registry ({e})")
    else:
        if registry.get_radix_cache_factory(BACKEND_NAME) is None:
            registry.register_radix_cache_backend(BACKEND_NAME, radix_cache_factory)
        done.append(f"radix cache backend {BACKEND_NAME!r}")
    names = list(sglang_strategies.STRATEGIES)
    try:
        from sglang.srt.mem_cache import utils
    except ImportError as e:
        skipped.append(f"eviction strategies {names}: no mem_cache.utils ({e})")
    else:
        for name, cls in sglang_strategies.STRATEGIES.items():
            utils._EVICTION_POLICY_FACTORIES.setdefault(name, cls)
        done.append(f"eviction strategies {names}")
    try:
        from sglang.srt.server_args import (RADIX_EVICTION_POLICY_CHOICES,
                                            add_radix_eviction_policy_choices)
    except ImportError as e:
        skipped.append(f"--radix-eviction-policy choices: no server_args ({e})")
    else:
        add_radix_eviction_policy_choices(
            [n for n in names if n not in RADIX_EVICTION_POLICY_CHOICES])
        done.append("--radix-eviction-policy choices")
    for what in skipped:
        logger.warning("kvpolicy SGLang plugin skipped %s", what)
    logger.info("kvpolicy SGLang plugin registered %s", "; ".join(done) or "nothing")
    return {"registered": done, "skipped": skipped}
