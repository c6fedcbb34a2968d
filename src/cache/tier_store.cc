#include "kvpolicy/cache/tier_store.h"

#include <algorithm>

#include "key_counts.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"

namespace kvpolicy {

std::string AdmissionFilter::label() const {
  switch (kind) {
    case Kind::kAll:
      return "all";
    case Kind::kPresence:
      return "presence";
    case Kind::kSeen:
      return "seen>=" + std::to_string(k) + (window ? "@" + std::to_string(window) : "");
  }
  return "all";
}

AdmissionFilter parse_admission(const std::string& text, const std::string& what) {
  AdmissionFilter f;
  if (text == "all") return f;
  if (text == "presence") {
    f.kind = AdmissionFilter::Kind::kPresence;
    return f;
  }
  if (text.rfind("seen>=", 0) == 0) {
    std::string rest = text.substr(6);
    size_t at = rest.find('@');
    auto k = read_uint(rest.substr(0, at));
    std::optional<uint64_t> w = at == std::string::npos ? 0 : read_uint(rest.substr(at + 1));
    if (k && *k >= 1 && *k <= 1000 && w && (at == std::string::npos || *w >= 1)) {
      f.kind = AdmissionFilter::Kind::kSeen;
      f.k = static_cast<uint32_t>(*k);
      f.window = *w;
      return f;
    }
  }
  throw ConfigError(what + ": admission filter '" + text +
                    "' is not one of all, presence, seen>=K or seen>=K@W (K in 1..1000 offers, "
                    "W >= 1 offers)");
}

SeenCounter::SeenCounter(uint64_t window) : ring_(std::max<uint64_t>(window, 1)) {}

uint32_t SeenCounter::offer(BlockKey key) {
  if (full_) {
    auto it = counts_.find(ring_[next_]);
    if (--it->second == 0) counts_.erase(it);
  }
  ring_[next_] = key;
  if (++next_ == ring_.size()) {
    next_ = 0;
    full_ = true;
  }
  return ++counts_[key];
}

TierStore::TierStore(std::string name, size_t capacity_blocks, const PolicySpec& spec,
                     PolicyContext ctx, AdmissionFilter admission)
    : name_(std::move(name)), capacity_(capacity_blocks), admission_(admission) {
  if (capacity_blocks == 0) throw ConfigError("the " + name_ + " tier needs at least one block");
  driver_ = std::make_unique<PolicyDriver>(capacity_blocks, spec, ctx);
  // At most one parent key per block present (capacity + 1 while a hit swaps places).
  children_ = std::make_unique<cache_detail::KeyCounts>(capacity_blocks + 2);
  if (admission_.kind == AdmissionFilter::Kind::kSeen)
    seen_ = std::make_unique<SeenCounter>(admission_.window ? admission_.window : capacity_);
  reserve();
}

TierStore::~TierStore() = default;

void TierStore::reserve() {
  if (block_.size() < driver_->ids()) {
    block_.resize(driver_->ids());
    held_above_.resize(driver_->ids(), 0);
  }
}

bool TierStore::admits(const Block& b, bool parent_above) {
  bool ok = true;
  switch (admission_.kind) {
    case AdmissionFilter::Kind::kAll:
      break;
    case AdmissionFilter::Kind::kPresence:
      ok = !b.has_parent || parent_above;
      break;
    case AdmissionFilter::Kind::kSeen:
      ok = seen_->offer(b.key) >= admission_.k;
      break;
  }
  if (!ok) ++counters.rejected;
  return ok;
}

void TierStore::forget(NodeId n) {
  const Block& b = block_[n];
  held_above_[n] = 0;
  if (!b.has_parent) return;
  children_->decrement(b.parent);
  NodeId p = driver_->tree().find(b.parent);
  if (p != kNoNode) driver_->release(p);
}

std::optional<TierStore::Block> TierStore::evict(Time now) {
  PolicyDriver::Evicted e = driver_->evict(now, checking_, /*ask_twice=*/true);
  if (e.node == kNoNode) return std::nullopt;
  Block b = block_[e.node];
  forget(e.node);
  ++counters.evictions;
  return b;
}

void TierStore::insert(const Block& b, AccessInfo info) {
  NodeId n = driver_->insert_held(b.key, kNoNode);
  // Its depth in its prompt, as replay's DRAM tier has it (FIFO's and LFU's tie-breaks, GDSF).
  driver_->tree().set_root_depth(n, b.position);
  reserve();
  block_[n] = b;
  held_above_[n] = 0;
  info.access = b.last_access;
  info.position = b.position;
  driver_->policy().on_access(n, info);
  // Its children already here hold it; it holds its parent if that is here.
  for (uint32_t c = 0, k = children_->get(b.key); c < k; ++c) driver_->hold(n);
  if (b.has_parent) {
    children_->increment(b.parent);
    NodeId p = driver_->tree().find(b.parent);
    if (p != kNoNode) driver_->hold(p);
  }
  driver_->release(n);
  ++counters.blocks_written;
}

void TierStore::touch(BlockKey key, AccessInfo info) {
  NodeId n = driver_->tree().find(key);
  info.kind = AccessKind::kReused;
  driver_->policy().on_access(n, info);
  block_[n].last_access = info.access;
}

void TierStore::pin(BlockKey key) { driver_->hold(driver_->tree().find(key)); }

void TierStore::unpin(BlockKey key) { driver_->release(driver_->tree().find(key)); }

void TierStore::remove(BlockKey key, Removal why) {
  NodeId n = driver_->tree().find(key);
  driver_->hold(n);  // not a candidate when told (policy.h)
  driver_->policy().on_removed(n, why);
  forget(n);
  driver_->remove_quietly(n);
  ++counters.removed;
}

void TierStore::set_held_above(BlockKey key, bool above) {
  NodeId n = driver_->tree().find(key);
  if (n == kNoNode || held_above_[n] == uint8_t(above)) return;
  held_above_[n] = above;
  if (above) {
    driver_->hold(n);
  } else {
    driver_->release(n);
  }
}

std::vector<BlockKey> TierStore::keys() const {
  std::vector<BlockKey> out;
  for (NodeId n = 0; n < block_.size(); ++n)
    if (driver_->tree().contains(n)) out.push_back(driver_->tree().key(n));
  return out;
}

}  // namespace kvpolicy
