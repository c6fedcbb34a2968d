#include "kvpolicy/embed/set_cache.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "kvpolicy/core/error.h"

namespace kvpolicy::embed {

SetPolicy parse_set_policy(const std::string& name) {
  for (SetPolicy p : {SetPolicy::kLru, SetPolicy::kFpb, SetPolicy::kHf, SetPolicy::kLaru})
    if (name == set_policy_name(p)) return p;
  throw ConfigError("embedding cache policy '" + name + "': expected lru, fpb, hf or laru");
}

const char* set_policy_name(SetPolicy p) {
  switch (p) {
    case SetPolicy::kLru:
      return "lru";
    case SetPolicy::kFpb:
      return "fpb";
    case SetPolicy::kHf:
      return "hf";
    case SetPolicy::kLaru:
      return "laru";
  }
  return "?";
}

PolicyStats SetCacheStats::as_policy_stats() const {
  return {{"prediction_evictions", double(prediction_evictions)},
          {"prediction_misses", double(prediction_misses)},
          {"phases", double(phases)}};
}

SetAssociativeCache::SetAssociativeCache(const SetCacheOptions& o)
    : sets_((o.capacity + kSlotsPerSet - 1) / kSlotsPerSet),
      dim_(o.dim),
      policy_(o.policy),
      hf_candidates_(o.hf_candidates),
      laru_b_(o.laru_b) {
  if (o.capacity == 0) throw ConfigError("embedding cache: capacity must be at least one row");
  if (o.dim == 0) throw ConfigError("embedding cache: dim must be at least 1");
  if (o.hf_candidates == 0 || o.hf_candidates > kSlotsPerSet)
    throw ConfigError("embedding cache: hf candidates must be in [1, 64]");
  if (!(o.laru_b > 1) || !std::isfinite(o.laru_b))
    throw ConfigError("embedding cache: LARU's b must be a finite number above 1");
  if (o.laru_filter_bits < 64 || !std::has_single_bit(o.laru_filter_bits))
    throw ConfigError("embedding cache: LARU's filter bits must be a power of two >= 64");
  size_t slots = sets_ * kSlotsPerSet;
  keys_.assign(slots, 0);
  last_access_.assign(slots, 0);
  predicted_.assign(slots, std::numeric_limits<double>::quiet_NaN());
  rows_.assign(slots * dim_, 0.0f);
  state_.assign(sets_, {});
  if (policy_ == SetPolicy::kLaru) {
    filter_words_ = o.laru_filter_bits / 64;
    filter_.assign(sets_ * filter_words_, 0);
  }
}

size_t SetAssociativeCache::set_of(EmbKey key) const {
  return (uint64_t(uint32_t(mix64(key) >> 32)) * sets_) >> 32;
}

uint32_t SetAssociativeCache::slot_of(EmbKey key) const {
  size_t set = set_of(key);
  const EmbKey* keys = &keys_[set * kSlotsPerSet];
  for (uint64_t used = state_[set].used; used; used &= used - 1) {
    uint32_t i = static_cast<uint32_t>(std::countr_zero(used));
    if (keys[i] == key) return static_cast<uint32_t>(set * kSlotsPerSet + i);
  }
  return kNone;
}

const float* SetAssociativeCache::find(EmbKey key, double now) {
  ++stats_.lookups;
  uint32_t s = slot_of(key);
  if (s == kNone) return nullptr;
  ++stats_.hits;
  last_access_[s] = now;
  state_[s / kSlotsPerSet].old &= ~(uint64_t{1} << (s % kSlotsPerSet));
  return &rows_[size_t(s) * dim_];
}

void SetAssociativeCache::set_prediction(EmbKey key, double predicted) {
  uint32_t s = slot_of(key);
  if (s != kNone) predicted_[s] = predicted;
}

double SetAssociativeCache::rank(uint32_t s, double now) const {
  // No prediction yet: LRU's own guess, as long until the next use as since the last.
  return std::isnan(predicted_[s]) ? 2 * now - last_access_[s] : predicted_[s];
}

uint32_t SetAssociativeCache::least_recent(size_t set) const {
  uint32_t best = kNone;
  for (uint64_t used = state_[set].used; used; used &= used - 1) {
    uint32_t s = static_cast<uint32_t>(set * kSlotsPerSet + std::countr_zero(used));
    if (best == kNone || last_access_[s] < last_access_[best]) best = s;
  }
  return best;
}

uint32_t SetAssociativeCache::furthest_among_least_recent(size_t set, uint32_t l,
                                                          double now) const {
  std::array<uint32_t, kSlotsPerSet> slots{};
  uint32_t n = 0;
  for (uint64_t used = state_[set].used; used; used &= used - 1)
    slots[n++] = static_cast<uint32_t>(set * kSlotsPerSet + std::countr_zero(used));
  // Older first, ties by slot: the order that makes every choice deterministic.
  auto older = [&](uint32_t a, uint32_t b) {
    return last_access_[a] != last_access_[b] ? last_access_[a] < last_access_[b] : a < b;
  };
  if (l < n) std::nth_element(slots.begin(), slots.begin() + (l - 1), slots.begin() + n, older);
  l = std::min(l, n);
  // The largest rank among the l least recent; equal ranks go to the least recent, in O(64).
  uint32_t best = slots[0];
  double best_rank = rank(best, now);
  for (uint32_t i = 1; i < l; ++i) {
    double r = rank(slots[i], now);
    if (r > best_rank || (r == best_rank && older(slots[i], best))) best = slots[i], best_rank = r;
  }
  return best;
}

bool SetAssociativeCache::filtered(size_t set, EmbKey key) const {
  uint64_t bit = mix64(key ^ 0x66696c746572ULL) & (uint64_t{filter_words_} * 64 - 1);
  return filter_[set * filter_words_ + bit / 64] >> (bit % 64) & 1;
}

void SetAssociativeCache::filter_add(size_t set, EmbKey key) {
  uint64_t bit = mix64(key ^ 0x66696c746572ULL) & (uint64_t{filter_words_} * 64 - 1);
  filter_[set * filter_words_ + bit / 64] |= uint64_t{1} << (bit % 64);
}

uint32_t SetAssociativeCache::victim(size_t set, EmbKey incoming, double now) {
  switch (policy_) {
    case SetPolicy::kLru:
      return least_recent(set);
    case SetPolicy::kFpb:
      ++stats_.prediction_evictions;
      return furthest_among_least_recent(set, kSlotsPerSet, now);
    case SetPolicy::kHf:
      ++stats_.prediction_evictions;
      return furthest_among_least_recent(set, hf_candidates_, now);
    case SetPolicy::kLaru: {
      SetState& st = state_[set];
      if (st.old == 0) {  // every old row was requested or evicted: a new phase
        st.old = st.used;
        st.halvings = 0;
        std::fill_n(&filter_[set * filter_words_], filter_words_, 0);
        ++stats_.phases;
      }
      if (filtered(set, incoming)) {  // a prediction-induced miss: LRU, and trust less
        ++stats_.prediction_misses;
        ++st.halvings;
        return least_recent(set);
      }
      uint32_t n = static_cast<uint32_t>(std::popcount(st.used));
      double lambda = std::pow(laru_b_, -double(st.halvings));
      uint32_t l = std::max<uint32_t>(static_cast<uint32_t>(std::floor(lambda * n)), 1);
      if (l == 1) return least_recent(set);
      uint32_t v = furthest_among_least_recent(set, l, now);
      ++stats_.prediction_evictions;
      filter_add(set, keys_[v]);
      return v;
    }
  }
  return kNone;
}

void SetAssociativeCache::insert(EmbKey key, std::span<const float> row, double now) {
  if (row.size() != dim_)
    throw Error("embedding cache: a row of " + std::to_string(row.size()) + " floats, expected " +
                std::to_string(dim_));
  size_t set = set_of(key);
  SetState& st = state_[set];
  uint32_t s;
  if (st.used != ~uint64_t{0}) {
    s = static_cast<uint32_t>(set * kSlotsPerSet + std::countr_one(st.used));
    ++size_;
  } else {
    s = victim(set, key, now);
    ++stats_.evictions;
  }
  uint64_t bit = uint64_t{1} << (s % kSlotsPerSet);
  st.used |= bit;
  st.old &= ~bit;  // a new row is not old: the phase counts the rows it began with
  keys_[s] = key;
  last_access_[s] = now;
  predicted_[s] = std::numeric_limits<double>::quiet_NaN();
  std::memcpy(&rows_[size_t(s) * dim_], row.data(), dim_ * sizeof(float));
  ++stats_.inserts;
}

size_t SetAssociativeCache::memory_bytes() const {
  return rows_.size() * sizeof(float) + keys_.size() * (sizeof(EmbKey) + 2 * sizeof(double)) +
         state_.size() * sizeof(SetState) + filter_.size() * sizeof(uint64_t);
}

}  // namespace kvpolicy::embed
