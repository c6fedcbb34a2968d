"""A small radix cache shaped like SGLang's (TreeNode with children, lock_ref, match_prefix,
insert, inc_lock_ref/dec_lock_ref, evict), one node per KV page, whose evictions a kvpolicy
policy decides through kvpolicy.EvictionPolicy. The cache keeps its own tree and its own
memory accounting; the policy only hears its events and names the nodes to delete.

    python3 examples/radix_cache.py TRACE [POLICY] [CAPACITY_BLOCKS]

replays a trace through it and through kvpolicy's C++ replay, and prints both hit rates (they
are equal: the same decisions). PYTHONPATH must hold build/python (docs/api.md).
"""

import sys
import time as wallclock

import kvpolicy


class TreeNode:
    def __init__(self, key=None, parent=None):
        self.key = key  # the page's key: a tuple of token ids, or a block hash
        self.parent = parent
        # The id the policy knows this node by: a hash of the whole prefix, so a page that is
        # evicted and comes back has the same id (as vLLM's block hashes do). Policies with a
        # memory of evicted blocks (S3-FIFO's ghost queue, WA's and the guard's statistics) need
        # that; a fresh counter would serve the others.
        self.id = 0 if parent is None else hash((parent.id, key)) & 0xFFFFFFFFFFFFFFFF
        self.children = {}
        self.lock_ref = 0


class RadixCache:
    """SGLang-style radix cache of pages; `policy` decides what to evict."""

    def __init__(self, policy: kvpolicy.EvictionPolicy, capacity_blocks: int):
        self.policy = policy
        self.capacity = capacity_blocks
        self.root_node = TreeNode()
        self.nodes = {}  # id -> node, for the ids evict() returns
        self.evictable_size = 0

    def size(self):
        return len(self.nodes)

    def match_prefix(self, pages):
        """The cached nodes of the longest cached prefix of `pages`, root first; each is told to
        the policy as a hit."""
        node, matched = self.root_node, []
        for page in pages:
            child = node.children.get(page)
            if child is None:
                break
            self.policy.on_hit(child.id)
            matched.append(child)
            node = child
        return matched

    def insert(self, pages, matched):
        """Adds the pages after the matched prefix, evicting first when memory is full, as
        SGLang's scheduler does before it allocates. Returns the new nodes."""
        parent = matched[-1] if matched else self.root_node
        added = []
        for page in pages[len(matched):]:
            if self.size() >= self.capacity and not self.evict(1):
                break  # every cached page is locked: the rest stays uncached
            node = TreeNode(page, parent)
            parent.children[page] = node
            self.nodes[node.id] = node
            self.policy.on_insert(node.id, parent.id if parent is not self.root_node else None)
            added.append(node)
            parent = node
        return added

    def inc_lock_ref(self, node):
        while node is not self.root_node:
            node.lock_ref += 1
            self.policy.on_lock(node.id)
            node = node.parent

    def dec_lock_ref(self, node):
        while node is not self.root_node:
            node.lock_ref -= 1
            self.policy.on_unlock(node.id)
            node = node.parent

    def evict(self, num_blocks):
        """Frees up to num_blocks pages, the policy's choice (unlocked leaves only)."""
        victims = self.policy.evict(num_blocks)
        for node_id in victims:
            node = self.nodes.pop(node_id)
            assert not node.children and node.lock_ref == 0, "the policy named a busy node"
            del node.parent.children[node.key]
        return len(victims)

    def page_ids(self, pages):
        """The ids the prompt's pages have, or will have, as nodes (TreeNode.id)."""
        ids, node_id = [], 0
        for page in pages:
            node_id = hash((node_id, page)) & 0xFFFFFFFFFFFFFFFF
            ids.append(node_id)
        return ids

    def serve(self, pages, **request):
        """One request: match, insert what is missing, as a prefill would. Returns hit pages.
        The policy is told the whole prompt up front (blocks=): WA, the guard and the learned
        policies read it."""
        with self.policy.request(blocks=self.page_ids(pages), **request):
            matched = self.match_prefix(pages)
            self.insert(pages, matched)
        return len(matched)


def replay(trace, policy="lru", capacity_blocks=1024, seed=1):
    """Block hits of `trace` through the Python radix cache run by `policy`."""
    cache = RadixCache(kvpolicy.EvictionPolicy(policy, capacity_blocks, trace.block_tokens, seed),
                       capacity_blocks)
    hits = 0
    for r in range(len(trace)):
        req = trace.request(r)
        hits += cache.serve(trace.blocks(r), time=req["time"], session=req["session"],
                            turn=req["turn"], category=req["category"],
                            prompt_tokens=req["prompt_tokens"],
                            output_tokens=req["output_tokens"], continuation=req["continuation"])
    return hits


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    trace = kvpolicy.load_trace(argv[1])
    policy = argv[2] if len(argv) > 2 else "lru"
    capacity = int(argv[3]) if len(argv) > 3 else max(1, trace.unique_blocks // 20)
    start = wallclock.perf_counter()
    hits = replay(trace, policy, capacity)
    seconds = wallclock.perf_counter() - start
    (row,) = kvpolicy.simulate(trace, [policy], [capacity])
    print(f"{policy} at {capacity} blocks: Python radix cache {hits} block hits "
          f"({hits / trace.block_accesses:.2%}, {seconds:.1f} s); "
          f"C++ replay {row['block_hits']} ({row['block_hit_rate']:.2%})")
    return 0 if hits == row["block_hits"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
