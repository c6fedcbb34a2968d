#include "kvpolicy/cache/lower_tiers.h"

#include "kvpolicy/core/error.h"

namespace kvpolicy {

std::string placement_name(Placement p) {
  return p == Placement::kExclusive ? "exclusive" : "inclusive";
}
std::string write_mode_name(WriteMode w) {
  return w == WriteMode::kWriteBack ? "write-back" : "write-through";
}
Placement parse_placement(const std::string& text) {
  if (text == "exclusive") return Placement::kExclusive;
  if (text == "inclusive") return Placement::kInclusive;
  throw ConfigError("--placement: '" + text + "' is neither exclusive nor inclusive");
}
WriteMode parse_write_mode(const std::string& text) {
  if (text == "write-back" || text == "back") return WriteMode::kWriteBack;
  if (text == "write-through" || text == "through") return WriteMode::kWriteThrough;
  throw ConfigError("--write: '" + text + "' is neither write-back nor write-through");
}

LowerTiers::LowerTiers(Placement placement, WriteMode write,
                       std::vector<std::unique_ptr<TierStore>> local,
                       std::vector<LinkSpec> local_links, TierStore* remote, LinkSpec remote_link)
    : placement_(placement), write_(write), owned_(std::move(local)), remote_(remote) {
  if (placement == Placement::kExclusive && write == WriteMode::kWriteThrough)
    throw ConfigError(
        "tiers: exclusive placement writes a block down only when it leaves HBM; write-through "
        "needs --placement inclusive");
  if (owned_.size() != local_links.size()) throw Error("tiers: one link per local tier");
  for (auto& t : owned_) tiers_.push_back(t.get());
  links_ = std::move(local_links);
  if (remote_) {
    tiers_.push_back(remote_);
    links_.push_back(remote_link);
  }
  if (tiers_.size() > kMaxTiers) throw ConfigError("tiers: at most DRAM, SSD and a remote pool");
}

void LowerTiers::lookup(std::span<const BlockKey> keys, size_t from,
                        std::vector<uint8_t>& found) const {
  found.clear();
  for (size_t j = from; j < keys.size(); ++j) {
    size_t t = 0;
    while (t < tiers_.size() && !tiers_[t]->contains(keys[j])) ++t;
    if (t == tiers_.size()) return;
    found.push_back(static_cast<uint8_t>(t));
  }
}

void LowerTiers::read(size_t t, BlockKey key, const AccessInfo& info) {
  TierStore& s = *tiers_[t];
  ++s.counters.blocks_read;
  if (placement_ == Placement::kExclusive && !is_remote(t)) {
    s.remove(key, Removal::kPromoted);
    return;
  }
  s.touch(key, info);
  if (placement_ != Placement::kInclusive) return;
  // Inclusive: the copy moving up passes through the local tiers above t (each through its
  // filter), so each keeps a superset of what is above it.
  TierStore::Block b = s.block(key);
  AccessInfo up = info;
  up.kind = AccessKind::kPromoted;
  size_t local = tiers_.size() - (remote_ ? 1 : 0);
  for (size_t u = 0; u < std::min(t, local); ++u) place(u, b, up, false, false);
}

bool LowerTiers::present_above(size_t t, BlockKey key) const {
  if (hbm_ && hbm_->find(key) != kNoNode) return true;
  size_t local = tiers_.size() - (remote_ ? 1 : 0);
  for (size_t u = 0; u < std::min(t, local); ++u)
    if (tiers_[u]->contains(key)) return true;
  return false;
}

void LowerTiers::refresh_holds(BlockKey key) {
  bool above = hbm_ && hbm_->find(key) != kNoNode;
  size_t local = tiers_.size() - (remote_ ? 1 : 0);
  for (size_t t = 0; t < local; ++t) {
    if (!tiers_[t]->contains(key)) continue;
    tiers_[t]->set_held_above(key, above);
    above = true;
  }
}

void LowerTiers::place(size_t t, const TierStore::Block& b, AccessInfo info, bool swap,
                       bool over_link) {
  if (t >= tiers_.size()) return;  // below the last tier: dropped
  TierStore& s = *tiers_[t];
  if (s.contains(b.key)) return;  // an inclusive copy, or the pool has it: nothing to write
  bool parent_here = b.has_parent && (s.contains(b.parent) || present_above(t, b.parent));
  if (!s.admits(b, parent_here)) return;
  while (s.full(swap)) {
    std::optional<TierStore::Block> v = s.evict(info.now);
    if (!v) {
      ++s.counters.full;
      return;
    }
    if (placement_ == Placement::kInclusive) refresh_holds(v->key);
    if (write_ == WriteMode::kWriteBack) place(t + 1, *v, info, false);
  }
  s.insert(b, info);
  if (over_link && t < queues_.size())
    queues_[t].write(double(info.now) / double(kMicrosPerSecond), 1);
  if (placement_ == Placement::kInclusive && !is_remote(t))
    s.set_held_above(b.key, present_above(t, b.key));
}

void LowerTiers::demote(const TierStore::Block& b, const AccessInfo& info, bool swap) {
  if (write_ == WriteMode::kWriteBack) {
    AccessInfo demoted = info;
    demoted.kind = AccessKind::kDemoted;
    place(0, b, demoted, swap);
  }
  hbm_removed(b.key);
}

void LowerTiers::computed(const TierStore::Block& b, const AccessInfo& info) {
  if (write_ != WriteMode::kWriteThrough) return;
  AccessInfo written = info;
  written.kind = AccessKind::kInserted;
  for (size_t t = 0; t < tiers_.size(); ++t) place(t, b, written, false);
}

void LowerTiers::hbm_added(BlockKey key) {
  if (placement_ == Placement::kInclusive) {
    refresh_holds(key);
    return;
  }
  size_t local = tiers_.size() - (remote_ ? 1 : 0);
  for (size_t t = 0; t < local; ++t)
    if (tiers_[t]->contains(key)) tiers_[t]->remove(key, Removal::kDropped);
}

void LowerTiers::hbm_removed(BlockKey key) {
  if (placement_ == Placement::kInclusive) refresh_holds(key);
}

void LowerTiers::begin(const RequestView& r) {
  for (TierStore* t : tiers_) t->begin(r);
}
void LowerTiers::end(const RequestView& r) {
  for (TierStore* t : tiers_) t->end(r);
}

double LowerTiers::read_seconds(std::span<const uint32_t> hits, double block_bytes,
                                uint32_t gpus) const {
  double s = 0;
  for (size_t t = 0; t < tiers_.size() && t < hits.size(); ++t)
    s += link_read_time(links_[t], hits[t], block_bytes, gpus);
  return s;
}

void LowerTiers::set_transfer(double block_bytes, uint32_t gpus) {
  queues_.clear();
  for (const LinkSpec& l : links_) queues_.emplace_back(l, block_bytes, gpus);
}

double LowerTiers::load(std::span<const uint32_t> hits, double now) {
  if (queues_.size() != tiers_.size()) throw Error("tiers: load() before set_transfer()");
  double ready = now;
  for (size_t t = 0; t < tiers_.size() && t < hits.size(); ++t)
    ready = queues_[t].read(ready, hits[t]);
  return ready;
}

void LowerTiers::set_checking(bool on) {
  for (TierStore* t : tiers_) t->set_checking(on);
}

}  // namespace kvpolicy
