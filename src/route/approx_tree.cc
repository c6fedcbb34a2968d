#include "approx_tree.h"

#include <algorithm>
#include <bit>

#include "kvpolicy/core/error.h"

namespace kvpolicy {

ApproxTree::ApproxTree(uint32_t workers, uint32_t block_tokens, uint64_t max_tokens_per_worker,
                       Time ttl)
    : block_tokens_(std::max<uint32_t>(block_tokens, 1)),
      max_tokens_(max_tokens_per_worker),
      ttl_(ttl),
      lists_(workers) {
  if (workers == 0 || workers > kMaxWorkers)
    throw ConfigError("an approximate prefix tree tracks 1 to " + std::to_string(kMaxWorkers) +
                      " workers, not " + std::to_string(workers));
}

void ApproxTree::match(std::span<const BlockKey> blocks, Time now, std::vector<uint32_t>& out) {
  expire(now);
  out.assign(lists_.size(), 0);
  uint64_t alive = lists_.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << lists_.size()) - 1;
  // Each worker's set is prefix-closed: its match ends where its bit first drops out.
  uint32_t depth = 0;
  constexpr size_t kAhead = 4;  // keys prefetched ahead of the lookup
  for (size_t i = 0; i < std::min(blocks.size(), kAhead); ++i) index_.prefetch(blocks[i]);
  for (; depth < blocks.size() && alive; ++depth) {
    if (depth + kAhead < blocks.size()) index_.prefetch(blocks[depth + kAhead]);
    uint32_t n = index_.find(blocks[depth]);
    uint64_t holders = n == KeyIndex::kNone ? 0 : nodes_[n].holders;
    for (uint64_t dropped = alive & ~holders; dropped; dropped &= dropped - 1)
      out[std::countr_zero(dropped)] = depth;
    alive &= holders;
  }
  for (; alive; alive &= alive - 1) out[std::countr_zero(alive)] = depth;
}

void ApproxTree::insert(WorkerId w, std::span<const BlockKey> blocks, Time now) {
  expire(now);
  // Deepest first, so that within this touch a child sits before its parent in w's list.
  for (size_t i = blocks.size(); i-- > 0;) {
    if (i >= 4) index_.prefetch(blocks[i - 4]);
    bool fresh;
    uint32_t& slot = index_.find_or_insert(blocks[i], fresh);
    if (fresh) {
      if (free_nodes_.empty()) {
        slot = static_cast<uint32_t>(nodes_.size());
        nodes_.emplace_back();
      } else {
        slot = free_nodes_.back();
        free_nodes_.pop_back();
      }
      nodes_[slot] = Node{.key = blocks[i]};
    }
    uint32_t n = slot;
    uint32_t e = find_entry(nodes_[n], w);
    if (e != kNil) {
      unlink(e);
    } else {
      if (free_entries_.empty()) {
        e = static_cast<uint32_t>(entries_.size());
        entries_.emplace_back();
      } else {
        e = free_entries_.back();
        free_entries_.pop_back();
      }
      entries_[e] =
          Entry{.node = n, .worker = w, .next_in_node = nodes_[n].first_entry, .key = blocks[i]};
      nodes_[n].first_entry = e;
      nodes_[n].holders |= uint64_t{1} << w;
      ++lists_[w].blocks;
    }
    entries_[e].touched = last_now_;
    append(e);
  }
  while (tokens(w) > max_tokens_) {
    remove_front(w);
    prefetch_front(w);
  }
}

void ApproxTree::prefetch_front(WorkerId w) const {
  // The list, the nodes and the index are all larger than the caches: start the next removal's
  // loads (its node, its index slot, the entry after it) while this one finishes.
  uint32_t e = lists_[w].head;
  if (e == kNil) return;
  const Entry& x = entries_[e];
  __builtin_prefetch(&nodes_[x.node]);
  index_.prefetch(x.key);
  if (x.next != kNil) __builtin_prefetch(&entries_[x.next]);
}

void ApproxTree::expire(Time now) {
  last_now_ = std::max(last_now_, now);
  if (ttl_ == kNever) return;
  for (WorkerId w = 0; w < lists_.size(); ++w)
    while (lists_[w].head != kNil && last_now_ - entries_[lists_[w].head].touched > ttl_)
      remove_front(w);
}

uint32_t ApproxTree::find_entry(const Node& node, WorkerId w) const {
  if (!(node.holders >> w & 1)) return kNil;
  uint32_t e = node.first_entry;
  while (entries_[e].worker != w) e = entries_[e].next_in_node;
  return e;
}

void ApproxTree::unlink(uint32_t e) {
  Entry& x = entries_[e];
  WorkerList& list = lists_[x.worker];
  (x.prev == kNil ? list.head : entries_[x.prev].next) = x.next;
  (x.next == kNil ? list.tail : entries_[x.next].prev) = x.prev;
  x.prev = x.next = kNil;
}

void ApproxTree::append(uint32_t e) {
  Entry& x = entries_[e];
  WorkerList& list = lists_[x.worker];
  x.prev = list.tail;
  x.next = kNil;
  (list.tail == kNil ? list.head : entries_[list.tail].next) = e;
  list.tail = e;
}

void ApproxTree::remove_front(WorkerId w) {
  uint32_t e = lists_[w].head;
  unlink(e);
  --lists_[w].blocks;
  Node& node = nodes_[entries_[e].node];
  // Out of the node's chain of holders.
  uint32_t* link = &node.first_entry;
  while (*link != e) link = &entries_[*link].next_in_node;
  *link = entries_[e].next_in_node;
  node.holders &= ~(uint64_t{1} << w);
  free_entries_.push_back(e);
  if (node.holders == 0) {
    // No worker holds it, so (prefix closure) none holds a block below it either.
    free_nodes_.push_back(entries_[e].node);
    index_.erase(node.key);
  }
}

std::string ApproxTree::check_invariants() const {
  size_t held = 0;
  for (WorkerId w = 0; w < lists_.size(); ++w) {
    uint64_t count = 0;
    Time last = 0;
    for (uint32_t e = lists_[w].head, prev = kNil; e != kNil; prev = e, e = entries_[e].next) {
      const Entry& x = entries_[e];
      if (x.prev != prev) return "worker " + std::to_string(w) + ": broken back link";
      if (x.worker != w) return "worker " + std::to_string(w) + ": foreign entry";
      if (x.key != nodes_[x.node].key) return "worker " + std::to_string(w) + ": stale entry key";
      if (x.touched < last) return "worker " + std::to_string(w) + ": list out of touch order";
      if (!(nodes_[x.node].holders >> w & 1))
        return "worker " + std::to_string(w) + ": entry of a node without its bit";
      last = x.touched;
      ++count;
    }
    if (count != lists_[w].blocks) return "worker " + std::to_string(w) + ": size mismatch";
    if (tokens(w) > max_tokens_) return "worker " + std::to_string(w) + ": over its limit";
    held += count;
  }
  size_t holders = 0;
  std::string broken;
  index_.for_each([&](BlockKey key, uint32_t n) {
    if (nodes_[n].key != key) broken = "index points at another node";
    if (nodes_[n].holders == 0) broken = "a node nobody holds is kept";
    holders += std::popcount(nodes_[n].holders);
  });
  if (!broken.empty()) return broken;
  if (holders != held) return "holder bits and list entries disagree";
  return "";
}

}  // namespace kvpolicy
