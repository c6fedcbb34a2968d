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
  // The first kFirst blocks' index slots, then (up to the first key nobody holds, where every
  // match ends) their nodes, fetched together rather than one slot and node after another;
  // beyond them, keys prefetched kAhead ahead of the lookup.
  constexpr size_t kAhead = 4, kFirst = 32;
  const size_t first = std::min(blocks.size(), kFirst);
  for (size_t i = 0; i < first; ++i) index_.prefetch(blocks[i]);
  for (size_t i = 0; i < first; ++i) {
    uint32_t n = index_.find(blocks[i]);
    if (n == KeyIndex::kNone) break;
    __builtin_prefetch(&nodes_[n]);
  }
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
  WorkerList& list = lists_[w];
  // Deepest first, so that within this touch a child sits before its parent in w's log; in
  // batches of kBatch blocks whose loads are started together.
  constexpr size_t kBatch = 32;
  for (size_t i = blocks.size(); i-- > 0;) {
    if ((blocks.size() - 1 - i) % kBatch == 0)
      prefetch_insert(w, blocks.subspan(i + 1 - std::min(i + 1, kBatch), std::min(i + 1, kBatch)));
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
      nodes_[slot] = Node{};
    }
    uint32_t n = slot;
    uint32_t e = find_entry(nodes_[n], w);
    if (e != kNil) {
      list.log[static_cast<uint32_t>(entries_[e].record - list.base)].entry = kNil;
      ++list.dead;
    } else {
      if (free_entries_.empty()) {
        e = static_cast<uint32_t>(entries_.size());
        entries_.emplace_back();
      } else {
        e = free_entries_.back();
        free_entries_.pop_back();
      }
      entries_[e] = Entry{.node = n, .worker = w, .next_in_node = nodes_[n].first_entry};
      nodes_[n].first_entry = e;
      nodes_[n].holders |= uint64_t{1} << w;
      ++list.blocks;
    }
    append(w, e, n, blocks[i], last_now_);
  }
  skip_dead(w);
  shrink(w);
}

void ApproxTree::prefetch_insert(WorkerId w, std::span<const BlockKey> keys) {
  // The index, the nodes, the entries and the logs are larger than the caches, and a block's
  // loads depend on each other (slot -> node -> entry -> record): fetch each kind for the
  // whole batch before the next kind, so that a batch waits about four misses, not four per
  // block. Hints only: insert reads everything again.
  for (BlockKey key : keys) index_.prefetch(key);
  // The free nodes and entries the batch's new blocks will take (written, not read).
  for (size_t j = 0; j < std::min(keys.size(), free_nodes_.size()); ++j)
    __builtin_prefetch(&nodes_[free_nodes_[free_nodes_.size() - 1 - j]], 1);
  for (size_t j = 0; j < std::min(keys.size(), free_entries_.size()); ++j)
    __builtin_prefetch(&entries_[free_entries_[free_entries_.size() - 1 - j]], 1);
  ahead_.clear();
  for (BlockKey key : keys) {
    uint32_t n = index_.find(key);
    if (n == KeyIndex::kNone) continue;
    __builtin_prefetch(&nodes_[n]);
    ahead_.push_back(n);
  }
  size_t held = 0;
  for (uint32_t n : ahead_)
    if (nodes_[n].holders >> w & 1) {
      __builtin_prefetch(&entries_[nodes_[n].first_entry]);
      ahead_[held++] = n;
    }
  ahead_.resize(held);
  const WorkerList& list = lists_[w];
  for (uint32_t n : ahead_)
    __builtin_prefetch(
        &list.log[static_cast<uint32_t>(entries_[find_entry(nodes_[n], w)].record - list.base)]);
}

void ApproxTree::append(WorkerId w, uint32_t e, uint32_t n, BlockKey key, Time now) {
  // Only stores into the entry: it is often not in the caches, and nothing here needs to wait.
  compact(w);
  WorkerList& list = lists_[w];
  entries_[e].record = list.base + static_cast<uint32_t>(list.log.size());
  list.log.push_back(Record{.entry = e, .node = n, .key = key, .touched = now});
}

void ApproxTree::compact(WorkerId w) {
  WorkerList& list = lists_[w];
  // Removed records go once they are half the log: an O(1) amortized move that keeps every
  // sequence number.
  if (list.head >= 1024 && list.head * 2 >= list.log.size()) {
    list.log.erase(list.log.begin(), list.log.begin() + static_cast<ptrdiff_t>(list.head));
    list.base += static_cast<uint32_t>(list.head);
    list.head = 0;
  }
  // Dead records go once they outnumber the live ones by a margin: this renumbers the live
  // entries, paid for by the touches that killed the records.
  if (list.dead <= list.blocks + 4096) return;
  size_t kept = 0;
  for (size_t i = list.head; i < list.log.size(); ++i) {
    const Record& r = list.log[i];
    if (r.entry == kNil) continue;
    entries_[r.entry].record = list.base + static_cast<uint32_t>(kept);
    list.log[kept++] = r;
  }
  list.log.resize(kept);
  list.head = 0;
  list.dead = 0;
}

void ApproxTree::skip_dead(WorkerId w) {
  WorkerList& list = lists_[w];
  while (list.head < list.log.size() && list.log[list.head].entry == kNil) {
    ++list.head;
    --list.dead;
  }
}

void ApproxTree::shrink(WorkerId w) {
  // tokens > max_tokens, in whole blocks; each removal drops one block of w.
  const uint64_t limit = max_tokens_ / block_tokens_;
  WorkerList& list = lists_[w];
  if (list.blocks <= limit) return;
  // The leaves that go are the log's first `blocks - limit` live records, in memory order: fetch
  // the node and index slot of the one kAhead removals ahead (its entry is read only when
  // another worker holds the node too).
  constexpr size_t kAhead = 8;
  const uint64_t count = list.blocks - limit;
  size_t ahead = list.head;
  auto fetch_next = [&] {
    while (ahead < list.log.size() && list.log[ahead].entry == kNil) ++ahead;
    if (ahead == list.log.size()) return;
    const Record& r = list.log[ahead++];
    __builtin_prefetch(&nodes_[r.node]);
    index_.prefetch(r.key);
  };
  for (uint64_t i = 0; i < std::min<uint64_t>(count, kAhead); ++i) fetch_next();
  for (uint64_t i = 0; i < count; ++i) {
    if (i + kAhead < count) fetch_next();
    remove_front(w);
  }
}

void ApproxTree::expire(Time now) {
  last_now_ = std::max(last_now_, now);
  if (ttl_ == kNever) return;
  for (WorkerId w = 0; w < lists_.size(); ++w) {
    const WorkerList& list = lists_[w];
    while (list.head < list.log.size() && last_now_ - list.log[list.head].touched > ttl_)
      remove_front(w);
  }
}

uint32_t ApproxTree::find_entry(const Node& node, WorkerId w) const {
  if (!(node.holders >> w & 1)) return kNil;
  uint32_t e = node.first_entry;
  if (node.holders == uint64_t{1} << w) return e;  // w alone: its chain is this one entry
  while (entries_[e].worker != w) e = entries_[e].next_in_node;
  return e;
}

void ApproxTree::remove_front(WorkerId w) {
  WorkerList& list = lists_[w];
  const Record r = list.log[list.head++];  // live: skip_dead keeps the head on one
  --list.blocks;
  Node& node = nodes_[r.node];
  // Out of the node's chain of holders; when w is its only holder the chain is just this entry,
  // which then need not be read (most removals: the entries are larger than the caches).
  if (node.holders == uint64_t{1} << w) {
    node.first_entry = kNil;
  } else {
    uint32_t* link = &node.first_entry;
    while (*link != r.entry) link = &entries_[*link].next_in_node;
    *link = entries_[r.entry].next_in_node;
  }
  node.holders &= ~(uint64_t{1} << w);
  free_entries_.push_back(r.entry);
  if (node.holders == 0) {
    // No worker holds it, so (prefix closure) none holds a block below it either.
    free_nodes_.push_back(r.node);
    index_.erase(r.key);
  }
  skip_dead(w);
}

std::string ApproxTree::check_invariants() const {
  size_t held = 0;
  for (WorkerId w = 0; w < lists_.size(); ++w) {
    const WorkerList& list = lists_[w];
    const std::string who = "worker " + std::to_string(w) + ": ";
    if (list.head < list.log.size() && list.log[list.head].entry == kNil)
      return who + "dead record at the head";
    uint64_t count = 0;
    size_t dead = 0;
    Time last = 0;
    for (size_t i = list.head; i < list.log.size(); ++i) {
      const Record& r = list.log[i];
      if (r.entry == kNil) {
        ++dead;
        continue;
      }
      const Entry& x = entries_[r.entry];
      if (x.worker != w) return who + "foreign entry";
      if (x.record != list.base + static_cast<uint32_t>(i)) return who + "entry off its record";
      if (x.node != r.node || index_.find(r.key) != r.node) return who + "stale record";
      if (r.touched < last) return who + "log out of touch order";
      if (!(nodes_[x.node].holders >> w & 1)) return who + "entry of a node without its bit";
      last = r.touched;
      ++count;
    }
    if (count != list.blocks) return who + "size mismatch";
    if (dead != list.dead) return who + "dead count mismatch";
    if (tokens(w) > max_tokens_) return who + "over its limit";
    held += count;
  }
  size_t holders = 0;
  std::string broken;
  std::vector<bool> seen(nodes_.size());
  index_.for_each([&](BlockKey, uint32_t n) {
    if (n >= nodes_.size() || seen[n]) {
      broken = "index points at a node twice or out of range";
      return;
    }
    seen[n] = true;
    if (nodes_[n].holders == 0) broken = "a node nobody holds is kept";
    holders += std::popcount(nodes_[n].holders);
  });
  if (!broken.empty()) return broken;
  if (holders != held) return "holder bits and log records disagree";
  return "";
}

}  // namespace kvpolicy
