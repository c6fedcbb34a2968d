#include "kvpolicy/cache/policy_tree.h"

#include <algorithm>

#include "implicit_request.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/time_range.h"
#include "kvpolicy/predict/continuation_source.h"

namespace kvpolicy {

PolicyTree::PolicyTree(const PolicySpec& spec, size_t capacity_blocks, uint32_t block_tokens,
                       uint64_t seed, TreeShape shape)
    : spec_(spec),
      seed_(seed),
      shape_(shape),
      label_(spec.label()),
      capacity_(capacity_blocks),
      block_tokens_(block_tokens) {
  if (capacity_blocks == 0) throw ConfigError("capacity must be at least one block");
  if (block_tokens == 0) throw ConfigError("block_tokens must be at least 1");
  if (needs_future(spec))
    throw ConfigError("policy '" + spec.label() +
                      "' reads the trace's future (offline): it can run only in replay");
  build();
}

PolicyTree::~PolicyTree() = default;

void PolicyTree::build() {
  PolicyContext ctx;
  ctx.block_tokens = block_tokens_;
  ctx.seed = seed_;
  driver_ = std::make_unique<PolicyDriver>(capacity_, spec_, ctx);
  tree_ = &driver_->tree();
  policy_ = &driver_->policy();
  external_.clear();
  pending_.clear();
  pending_count_ = 0;
  held_ = HeldBlocks{};
  reserve_ids();
}

void PolicyTree::reserve_ids() {
  if (driver_->ids() == external_.size()) return;
  external_.resize(driver_->ids(), 0);
  pending_.resize(driver_->ids(), 0);
  held_.resize(driver_->ids());
}

NodeId PolicyTree::find_live(BlockKey key) const {
  NodeId n = tree_->find(key);
  return n != kNoNode && !pending_[n] ? n : kNoNode;
}

NodeId PolicyTree::require(BlockKey key, const char* what) const {
  NodeId n = tree_->find(key);
  if (n == kNoNode)
    throw Error(std::string(what) + ": block " + std::to_string(key) + " is not cached");
  if (pending_[n])
    throw Error(std::string(what) + ": block " + std::to_string(key) +
                " is pending eviction (victims() named it: commit or cancel it first)");
  return n;
}

void PolicyTree::hold_for_request(NodeId n) {
  hold(n);
  held_.add(n);
}

void PolicyTree::hold(NodeId n) { driver_->hold(n); }

void PolicyTree::release(NodeId n) { driver_->release(n); }

// A caller's time outside [0, 2^62) us would overflow the intervals policies add to it (WA's
// refit period, T-LRU's lifetimes); the trace readers never give one.
static void check_request_time(Time t) {
  if (!valid_time(t))
    throw Error("begin_request: time " + std::to_string(t) +
                " us is outside [0, 2^62) microseconds");
}

void PolicyTree::begin_request(const RequestInfo& info) {
  if (open_) throw Error("begin_request: a request is already open (end_request first)");
  Time t = info.time.value_or(now_);
  check_request_time(t);
  if (t < now_)
    throw Error("begin_request: time " + std::to_string(t) + " is before the previous request's " +
                std::to_string(now_));
  info_ = info;
  view_ = RequestView{};
  view_.index = static_cast<RequestIndex>(counts_.requests);
  view_.time = t;
  view_.session = info.session;
  view_.turn = info.turn;
  view_.category = info.category;
  view_.prompt_tokens = info.prompt_tokens
                            ? info.prompt_tokens
                            : static_cast<uint32_t>(info.blocks.size() * block_tokens_);
  view_.output_tokens = info.output_tokens;
  view_.first_access = next_access_;
  view_.blocks = info_.blocks;
  view_.continuation = info.continuation;
  view_.priority = info.priority;
  // The request opens only once the policy has accepted it: a refusal (LPC without a score)
  // leaves the tree as it was, so the caller can correct the request and go on.
  try {
    policy_->on_request_begin(view_);
  } catch (const MissingContinuation&) {
    throw ConfigError("begin_request: policy '" + label_ +
                      "' reads each request's continuation score (the probability that the "
                      "conversation has a later turn) and this request has none: pass "
                      "RequestInfo::continuation (Python: continuation=) in [0, 1] with every "
                      "request, or choose a predictor that needs no score "
                      "(predictor=constant,value=P)");
  }
  now_ = t;
  path_.clear();
  held_.begin();
  open_ = true;
  ++counts_.requests;
}

void PolicyTree::end_request() {
  if (!open_) throw Error("end_request: no request is open");
  policy_->on_request_end(view_, path_);
  held_.release_all([this](NodeId n) { release(n); });
  next_access_ = view_.first_access + std::max<size_t>(info_.blocks.size(), path_.size());
  open_ = false;
}

AccessInfo PolicyTree::access_info(NodeId n, AccessKind kind) {
  AccessInfo info = AccessInfo::of_request(view_);
  info.position = tree_->depth(n);
  info.access = view_.first_access + path_.size();
  info.kind = kind;
  if (view_.blocks.empty()) info.prompt_blocks = info.position + 1;
  return info;
}

void PolicyTree::hit(BlockKey key) {
  NodeId n = require(key, "hit");
  ImplicitRequest cycle(*this);
  hold_for_request(n);
  policy_->on_access(n, access_info(n, AccessKind::kReused));
  path_.push_back(n);
  ++counts_.hits;
}

Inserted PolicyTree::insert(BlockKey key, std::optional<BlockKey> parent_key, bool make_room) {
  if (NodeId n = tree_->find(key); n != kNoNode) {
    if (pending_[n]) {
      cancel(std::span(&key, 1));
    } else if (open_ && !held_.holds(n)) {
      hold_for_request(n);
    }
    ++counts_.duplicates;
    return Inserted::kCached;
  }
  NodeId parent = kNoNode;
  if (parent_key && shape_ == TreeShape::kPrefix)
    parent = require(*parent_key, "insert (the parent)");
  ImplicitRequest cycle(*this);
  // The parent is held for the rest of the request, so the eviction below cannot take it.
  if (parent != kNoNode && !held_.holds(parent)) hold_for_request(parent);
  if (tree_->size() >= capacity_ && !(make_room && evict_one())) {
    ++counts_.refused;
    return Inserted::kRefused;
  }
  NodeId n = driver_->insert_held(key, parent);  // the request's hold
  reserve_ids();
  external_[n] = 0;
  held_.add(n);
  policy_->on_access(n, access_info(n, AccessKind::kInserted));
  path_.push_back(n);
  ++counts_.inserted;
  return Inserted::kAdded;
}

size_t PolicyTree::insert_chain(std::span<const BlockKey> keys, std::optional<BlockKey> parent,
                                bool make_room) {
  ImplicitRequest cycle(*this);
  size_t i = 0;
  for (; i < keys.size(); ++i) {
    if (insert(keys[i], parent, make_room) == Inserted::kRefused) break;
    parent = keys[i];
  }
  return i;
}

void PolicyTree::pin(BlockKey key) {
  NodeId n = require(key, "pin");
  ++external_[n];
  hold(n);
}

void PolicyTree::unpin(BlockKey key) {
  NodeId n = require(key, "unpin");
  if (external_[n] == 0) throw Error("unpin: block " + std::to_string(key) + " is not pinned");
  --external_[n];
  release(n);
}

size_t PolicyTree::hits(std::span<const BlockKey> keys, bool ignore_missing) {
  ImplicitRequest cycle(*this);
  size_t found = 0;
  for (BlockKey k : keys) {
    if (ignore_missing && find_live(k) == kNoNode) continue;
    hit(k);
    ++found;
  }
  return found;
}

size_t PolicyTree::pins(std::span<const BlockKey> keys, bool ignore_missing) {
  size_t found = 0;
  for (BlockKey k : keys) {
    if (ignore_missing && find_live(k) == kNoNode) continue;
    pin(k);
    ++found;
  }
  return found;
}

size_t PolicyTree::unpins(std::span<const BlockKey> keys, bool ignore_missing) {
  size_t found = 0;
  for (BlockKey k : keys) {
    if (ignore_missing && find_live(k) == kNoNode) continue;
    unpin(k);
    ++found;
  }
  return found;
}

std::optional<BlockKey> PolicyTree::evict_one() {
  PolicyDriver::Evicted e = driver_->evict(now_, /*check=*/true, /*ask_twice=*/false);
  if (e.node == kNoNode) return std::nullopt;
  ++counts_.evictions;
  return e.key;
}

PolicyTreeStats PolicyTree::stats() const {
  PolicyTreeStats s = counts_;
  s.size = tree_->size();
  s.capacity = capacity_;
  s.pinned = driver_->pinned();
  s.pending = pending_count_;
  return s;
}

}  // namespace kvpolicy
