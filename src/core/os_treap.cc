#include "kvpolicy/core/order/os_treap.h"

#include <algorithm>
#include <string>
#include <utility>

namespace kvpolicy {

void OsTreap::resize(size_t ids) {
  if (ids > nodes_.size()) nodes_.resize(ids);
}

void OsTreap::split(NodeId t, uint64_t key, NodeId* l, NodeId* r) {
  if (t == kNoNode) {
    *l = *r = kNoNode;
    return;
  }
  Node& x = nodes_[t];
  if (x.key < key) {
    split(x.right, key, &x.right, r);
    *l = t;
  } else {
    split(x.left, key, l, &x.left);
    *r = t;
  }
  pull(t);
}

NodeId OsTreap::merge(NodeId a, NodeId b) {
  if (a == kNoNode) return b;
  if (b == kNoNode) return a;
  if (prio(a) > prio(b)) {
    nodes_[a].right = merge(nodes_[a].right, b);
    pull(a);
    return a;
  }
  nodes_[b].left = merge(a, nodes_[b].left);
  pull(b);
  return b;
}

// Insert and erase walk the path iteratively and update the ancestors' sizes and maxima
// incrementally: an ancestor gaining n only compares n with its maximum, and one losing n
// recomputes only if n was its maximum. Only the O(1)-expected split or merge at n's position
// reads both children of a node.
void OsTreap::insert(NodeId n) {
  Node& x = nodes_[n];
  x.left = x.right = kNoNode;
  pull(n);
  uint32_t pn = prio(n);
  NodeId* link = &root_;
  for (NodeId t = root_; t != kNoNode && prio(t) >= pn; t = *link) {
    Node& y = nodes_[t];
    ++y.size;
    if (beats(x.p, x.key, y.best_p, y.best_key)) {
      y.best = n;
      y.best_p = x.p;
      y.best_key = x.key;
    }
    link = x.key < y.key ? &y.left : &y.right;
  }
  split(*link, x.key, &x.left, &x.right);
  pull(n);
  *link = n;
}

void OsTreap::erase(NodeId n) {
  find_path(n);
  Node& x = nodes_[n];
  NodeId m = merge(x.left, x.right);
  size_t depth = path_.size();
  if (depth == 1) {
    root_ = m;
  } else {
    Node& parent = nodes_[path_[depth - 2]];
    (parent.left == n ? parent.left : parent.right) = m;
  }
  size_t i = depth - 1;
  for (; i-- > 0 && nodes_[path_[i]].best == n;) pull(path_[i]);
  for (; i + 1 > 0; --i) --nodes_[path_[i]].size;  // n was not their maximum: only the size
  x.left = x.right = kNoNode;
  x.size = 0;
}

void OsTreap::clear() {
  for (Node& x : nodes_) x.size = 0;
  root_ = kNoNode;
}

void OsTreap::find_path(NodeId n) {
  path_.clear();
  uint64_t key = nodes_[n].key;
  for (NodeId t = root_; t != kNoNode;) {
    path_.push_back(t);
    if (t == n) break;
    t = key < nodes_[t].key ? nodes_[t].left : nodes_[t].right;
  }
}

void OsTreap::set_p(NodeId n, Time p) {
  nodes_[n].p = p;
  if (!contains(n)) return;
  find_path(n);
  for (size_t i = path_.size(); i-- > 0;) pull(path_[i]);
}

NodeId OsTreap::oldest() const {
  NodeId t = root_;
  if (t == kNoNode) return kNoNode;
  while (nodes_[t].left != kNoNode) t = nodes_[t].left;
  return t;
}

NodeId OsTreap::max_among_oldest(size_t l) const {
  if (l >= size()) return max_p();
  NodeId res = kNoNode;
  Time res_p = 0;
  uint64_t res_key = 0;
  auto offer = [&](NodeId id, Time p, uint64_t key) {
    if (res == kNoNode || beats(p, key, res_p, res_key)) {
      res = id;
      res_p = p;
      res_key = key;
    }
  };
  NodeId t = root_;
  while (t != kNoNode && l > 0) {
    const Node& x = nodes_[t];
    size_t left = sz(x.left);
    if (l <= left) {
      t = x.left;
      continue;
    }
    // The whole left subtree and t are among the l oldest; the rest lies to the right.
    if (x.left != kNoNode) {
      const Node& y = nodes_[x.left];
      offer(y.best, y.best_p, y.best_key);
    }
    offer(t, x.p, x.key);
    l -= left + 1;
    t = x.right;
  }
  return res;
}

NodeId OsTreap::select(size_t r) const {
  NodeId t = root_;
  while (t != kNoNode) {
    size_t left = sz(nodes_[t].left);
    if (r < left) {
      t = nodes_[t].left;
    } else if (r == left) {
      return t;
    } else {
      r -= left + 1;
      t = nodes_[t].right;
    }
  }
  return kNoNode;
}

size_t OsTreap::height() const {
  std::vector<std::pair<NodeId, size_t>> stack;
  if (root_ != kNoNode) stack.push_back({root_, 1});
  size_t h = 0;
  while (!stack.empty()) {
    auto [t, d] = stack.back();
    stack.pop_back();
    h = std::max(h, d);
    if (nodes_[t].left != kNoNode) stack.push_back({nodes_[t].left, d + 1});
    if (nodes_[t].right != kNoNode) stack.push_back({nodes_[t].right, d + 1});
  }
  return h;
}

std::string OsTreap::check_invariants() const {
  size_t members = 0;
  for (const Node& x : nodes_) members += x.size != 0;
  if (members != size()) return "member count " + std::to_string(members) + " != root size";
  struct Frame {
    NodeId t;
    uint64_t lo, hi;  // exclusive key bounds, valid when has_lo / has_hi
    bool has_lo, has_hi;
  };
  std::vector<Frame> stack;
  if (root_ != kNoNode) stack.push_back({root_, 0, 0, false, false});
  size_t seen = 0;
  while (!stack.empty()) {
    Frame f = stack.back();
    stack.pop_back();
    NodeId t = f.t;
    const Node& x = nodes_[t];
    ++seen;
    if (x.size == 0) return "node " + std::to_string(t) + " linked but not a member";
    if ((f.has_lo && x.key <= f.lo) || (f.has_hi && x.key >= f.hi))
      return "key order broken at " + std::to_string(t);
    for (NodeId c : {x.left, x.right})
      if (c != kNoNode && prio(c) > prio(t)) return "heap order broken at " + std::to_string(t);
    if (x.size != 1 + sz(x.left) + sz(x.right)) return "size wrong at " + std::to_string(t);
    // The maximum by brute force over the subtree's stored maxima.
    NodeId b = t;
    for (NodeId c : {x.left, x.right})
      if (c != kNoNode) {
        NodeId cb = nodes_[c].best;
        if (beats(nodes_[cb].p, nodes_[cb].key, nodes_[b].p, nodes_[b].key)) b = cb;
      }
    if (x.best != b) return "maximum wrong at " + std::to_string(t);
    if (x.best_p != nodes_[b].p || x.best_key != nodes_[b].key)
      return "stale maximum copy at " + std::to_string(t);
    if (x.left != kNoNode) stack.push_back({x.left, f.lo, x.key, f.has_lo, true});
    if (x.right != kNoNode) stack.push_back({x.right, x.key, f.hi, true, f.has_hi});
  }
  if (seen != members) return "reachable " + std::to_string(seen) + " != members";
  return {};
}

}  // namespace kvpolicy
