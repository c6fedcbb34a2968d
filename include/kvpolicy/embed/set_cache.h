// SetAssociativeCache: the GPU embedding cache of DLRM inference as HugeCTR builds it (SlabHash):
// rows of `dim` floats in sets of 64 slots (two slabs of 32); a key hashes to one set, and each
// set runs its own eviction policy over its 64 slots: LRU, FPB (the largest predicted next
// access), HF (the largest among the c least recent) or LARU (LCR paper, Algorithm 1, per set
// with b = 2 and an 8192-bit filter of the keys it evicted by prediction this phase).
// Cost: a lookup or insert probes its set's 64 keys; an eviction scans them (O(64)).
// Single-threaded, like a PrefixCache.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/embed/embedding.h"

namespace kvpolicy::embed {

enum class SetPolicy : uint8_t { kLru, kFpb, kHf, kLaru };
// "lru", "fpb", "hf", "laru"; throws ConfigError naming the choices.
SetPolicy parse_set_policy(const std::string& name);
const char* set_policy_name(SetPolicy p);
// Whether the policy reads predictions (the predictor need not run for LRU).
inline bool is_learned(SetPolicy p) { return p != SetPolicy::kLru; }

struct SetCacheOptions {
  size_t capacity = 0;  // rows; rounded up to whole sets
  uint32_t dim = 128;
  SetPolicy policy = SetPolicy::kLru;
  uint32_t hf_candidates = 4;  // HF's c, HALP's choice
  double laru_b = 2;           // LARU divides its confidence by b on a prediction-induced miss
  // LARU's filter of the keys it evicted by prediction this phase, bits per set (a power of
  // two). The paper's 8192 lets a key falsely look prediction-evicted now and then; a larger
  // filter makes that rarer (tests check 1-consistency with 2^20).
  uint32_t laru_filter_bits = 8192;
};

struct SetCacheStats {
  uint64_t lookups = 0, hits = 0, inserts = 0, evictions = 0;
  uint64_t prediction_evictions = 0;  // victims chosen by prediction (FPB, HF, LARU with l > 1)
  uint64_t prediction_misses = 0;     // LARU: misses on a key it evicted by prediction
  uint64_t phases = 0;                // LARU: phases begun, summed over sets
  PolicyStats as_policy_stats() const;
};

class SetAssociativeCache {
 public:
  static constexpr uint32_t kSlotsPerSet = 64;
  // A prediction of "never again".
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  explicit SetAssociativeCache(const SetCacheOptions& options);

  // The cached row of `key`, its access recorded at `now` (a hit), or null (a miss).
  const float* find(EmbKey key, double now);
  // Caches `key` (not cached) with `row`, evicting from its set if the set is full.
  void insert(EmbKey key, std::span<const float> row, double now);
  // Sets the predicted next-access time of a cached key (ignored if it is not cached). A row
  // with none yet (inserted, and its prediction not back from an async predictor) ranks as LRU
  // would guess: as long until its next use as since its last, so with no predictions at all a
  // learned policy evicts as LRU does.
  void set_prediction(EmbKey key, double predicted);
  bool contains(EmbKey key) const { return slot_of(key) != kNone; }

  size_t capacity() const { return sets_ * kSlotsPerSet; }
  size_t size() const { return size_; }
  uint32_t dim() const { return dim_; }
  SetPolicy policy() const { return policy_; }
  const SetCacheStats& stats() const { return stats_; }
  // Bytes of rows plus metadata (keys, recency, predictions, LARU's per-set state).
  size_t memory_bytes() const;

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

  struct SetState {
    uint64_t used = 0;      // occupied slots (bit i = slot i)
    uint64_t old = 0;       // LARU: slots not requested since the phase began
    uint32_t halvings = 0;  // LARU: lambda = b^-halvings
  };

  size_t set_of(EmbKey key) const;
  uint32_t slot_of(EmbKey key) const;  // global slot index, or kNone
  uint32_t victim(size_t set, EmbKey incoming, double now);
  uint32_t least_recent(size_t set) const;
  // The slot with the largest prediction among the `l` least recent of the set.
  uint32_t furthest_among_least_recent(size_t set, uint32_t l, double now) const;
  double rank(uint32_t slot, double now) const;  // the prediction eviction compares
  bool filtered(size_t set, EmbKey key) const;
  void filter_add(size_t set, EmbKey key);

  size_t sets_;
  uint32_t dim_;
  SetPolicy policy_;
  uint32_t hf_candidates_;
  double laru_b_;
  std::vector<EmbKey> keys_;
  std::vector<double> last_access_;
  std::vector<double> predicted_;
  std::vector<float> rows_;
  std::vector<SetState> state_;
  uint32_t filter_words_ = 0;     // per set
  std::vector<uint64_t> filter_;  // LARU only
  size_t size_ = 0;
  SetCacheStats stats_;
};

}  // namespace kvpolicy::embed
