"""Score-only eviction strategies for SGLang's RadixCache (`--radix-eviction-policy kvp_<name>`),
registered by kvpolicy.integrations.sglang.register() (docs/engines/sglang.md).

SGLang's EvictionStrategy is a stateless score: RadixCache.evict() computes get_priority(leaf)
for every evictable leaf and evicts the lowest first, whole leaves at a time. Only policies that
are a function of a node's own fields fit this form; stateful ones (S3-FIFO, SIEVE, LARU, WA)
need the "kvpolicy" radix cache backend instead. kvp_lru, kvp_slru and kvp_priority order leaves
as SGLang's lru, slru and priority do; kvp_lfu as kvpolicy's lfu (hits, then recency);
kvp_gdsf and kvp_hpt add what SGLang lacks.

The classes import nothing from SGLang at module level: they subclass SGLang's EvictionStrategy
when it is importable (isinstance checks then hold) and `object` otherwise.
"""

import os

try:
    from sglang.srt.mem_cache.evict_policy import EvictionStrategy as _Base
except ImportError:  # SGLang absent: the scores still work on any node-like object
    _Base = object

SLRU_THRESHOLD_ENV = "KVPOLICY_SGLANG_SLRU_THRESHOLD"
GDSF_ATTENTION_ENV = "KVPOLICY_SGLANG_GDSF_ATTENTION_RATIO"


def _env_number(name, default, kind):
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = kind(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a {kind.__name__}") from None
    if number < 0:
        raise ValueError(f"{name}={value!r} must be >= 0")
    return number


class LRUScore(_Base):
    """kvp_lru: least recently accessed first (SGLang's lru)."""

    def get_priority(self, node):
        return node.last_access_time


class LFUScore(_Base):
    """kvp_lfu: fewest hits first, ties by least recent access (kvpolicy's and SGLang's lfu)."""

    def get_priority(self, node):
        return (node.hit_count, node.last_access_time)


class SLRUScore(_Base):
    """kvp_slru: segmented LRU. A node with hit_count >= protected_threshold is in the protected
    segment, evicted only after every probationary one; LRU inside a segment. The threshold
    defaults to SGLang's 2, or KVPOLICY_SGLANG_SLRU_THRESHOLD."""

    def __init__(self, protected_threshold=None):
        if protected_threshold is None:
            protected_threshold = _env_number(SLRU_THRESHOLD_ENV, 2, int)
        self.protected_threshold = int(protected_threshold)

    def get_priority(self, node):
        return (1 if node.hit_count >= self.protected_threshold else 0, node.last_access_time)


class PriorityScore(_Base):
    """kvp_priority: lowest request priority first, then LRU (SGLang's and TRT-LLM's order)."""

    def get_priority(self, node):
        return (node.priority, node.last_access_time)


class HitsPerTokenScore(_Base):
    """kvp_hpt: fewest hits per cached token first, then LRU: a long node must earn its space."""

    def get_priority(self, node):
        return (node.hit_count / max(len(node.key), 1), node.last_access_time)


def _depth(node):
    """Tokens on the path above node (its first token's position)."""
    depth, node = 0, node.parent
    while node is not None and node.parent is not None:
        depth += len(node.key)
        node = node.parent
    return depth


class GDSFScore(_Base):
    """kvp_gdsf: Greedy-Dual-Size-Frequency without the clock: hits x cost / size, lowest first,
    then LRU. Size is the node's tokens; cost its recompute cost, 1 + attention_ratio x (context
    before the token in 16-token blocks) per token, as kvpolicy's gdsf cost=depth
    (attention_ratio 0.05, or KVPOLICY_SGLANG_GDSF_ATTENTION_RATIO). A score cannot see which
    leaf was evicted, so GDSF's aging clock L (the last victim's priority) is absent; recency
    breaks ties instead."""

    def __init__(self, attention_ratio=None):
        if attention_ratio is None:
            attention_ratio = _env_number(GDSF_ATTENTION_ENV, 0.05, float)
        self.attention_ratio = float(attention_ratio)

    def cost_per_token(self, node):
        """Mean recompute cost of node's tokens relative to a token with no context."""
        mid = _depth(node) + (len(node.key) - 1) / 2.0
        return 1.0 + self.attention_ratio * mid / 16.0

    def get_priority(self, node):
        return (node.hit_count * self.cost_per_token(node), node.last_access_time)


STRATEGIES = {
    "kvp_lru": LRUScore,
    "kvp_lfu": LFUScore,
    "kvp_slru": SLRUScore,
    "kvp_priority": PriorityScore,
    "kvp_gdsf": GDSFScore,
    "kvp_hpt": HitsPerTokenScore,
}
