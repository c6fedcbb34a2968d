// The reuse predictor (`predictor=reuse`, issue 21 item 5): a classifier of "is this block's key
// accessed again within horizon H", trained online with uncensored labels (an access not reused
// within H is a negative once the clock passes it), on features kept per block key and per
// session in bounded tables, so evicted blocks keep their history. Its probability becomes a
// predicted next access under a constant hazard, which LARU, FPB and HF rank.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/core/types.h"
#include "kvpolicy/predict/predictor.h"

namespace kvpolicy {

// A map from 64-bit keys to V holding at most `bound` entries: two generations, a lookup moves
// a hit from the old one into the current one, and when the current one holds bound / 2 the old
// one is dropped. Entries untouched for a whole generation are forgotten, at O(1) per access.
// Each generation is an open-addressing table at most half full.
template <typename V>
class GenerationalMap {
 public:
  explicit GenerationalMap(size_t bound)
      : half_(std::max<size_t>(1, bound / 2)),
        slots_(std::bit_ceil(std::max<size_t>(16, half_ * 2))) {
    cur_.resize(slots_);
    old_.resize(slots_);
  }
  // The entry of key, created (value-initialised) if absent; *found says whether it existed.
  V& get(uint64_t key, bool* found) {
    Slot& c = cur_[probe(cur_, key)];
    if (c.used) {
      *found = true;
      return c.value;
    }
    if (cur_size_ >= half_) {
      old_.swap(cur_);
      std::fill(cur_.begin(), cur_.end(), Slot{});
      old_size_ = cur_size_;
      cur_size_ = 0;
      ++generations_;
      return get(key, found);
    }
    Slot& o = old_[probe(old_, key)];
    *found = o.used;
    c = Slot{key, true, o.used ? o.value : V{}};
    ++cur_size_;
    if (o.used) erase_old(o);
    return c.value;
  }
  const V* find(uint64_t key) const {
    const Slot& c = cur_[probe(cur_, key)];
    if (c.used) return &c.value;
    const Slot& o = old_[probe(old_, key)];
    return o.used ? &o.value : nullptr;
  }
  size_t size() const { return cur_size_ + old_size_; }
  size_t bound() const { return 2 * half_; }
  uint64_t generations() const { return generations_; }

 private:
  struct Slot {
    uint64_t key = 0;
    bool used = false;
    V value{};
  };
  size_t probe(const std::vector<Slot>& t, uint64_t key) const {
    size_t mask = slots_ - 1, i = mix64(key) & mask;
    while (t[i].used && t[i].key != key) i = (i + 1) & mask;
    return i;
  }
  // Backward-shift deletion keeps every probe chain of the old table unbroken.
  void erase_old(Slot& gone) {
    size_t mask = slots_ - 1, hole = size_t(&gone - old_.data()), i = hole;
    for (;;) {
      i = (i + 1) & mask;
      if (!old_[i].used) break;
      size_t home = mix64(old_[i].key) & mask;
      // Move i into the hole when its home is not in (hole, i] cyclically.
      if (((i - home) & mask) >= ((i - hole) & mask)) {
        old_[hole] = old_[i];
        hole = i;
      }
    }
    old_[hole] = Slot{};
    --old_size_;
  }

  size_t half_, slots_;
  std::vector<Slot> cur_, old_;
  size_t cur_size_ = 0, old_size_ = 0;
  uint64_t generations_ = 0;
};

// The features of one block access (ReuseFeatures::kCount floats), in this order.
struct ReuseFeatures {
  enum : int {
    kDepthTokens,     // (position + 1) * block tokens
    kBlocksToEnd,     // prompt blocks after this one (0: it ends the latest turn)
    kEndsPrompt,      // 1 when it is the prompt's last block
    kKeyAccesses,     // accesses of the key so far, this one included
    kSincePrevious,   // seconds since the key's previous access (missing: first)
    kPreviousGap,     // the gap before that
    kKeyAge,          // seconds since the key's first access
    kKeySessions,     // session changes between consecutive accesses of the key, + 1
    kSessionTurns,    // requests of this session seen so far, this one included
    kTraceTurn,       // the trace's turn number
    kSessionLastGap,  // seconds since the session's previous request (missing: first)
    kSessionMeanGap,  // mean seconds between the session's requests
    kSessionAge,      // seconds since the session's first request
    kSessionGrowth,   // prompt blocks minus the session's previous prompt's (missing: first)
    kPromptTokens,    // the request's prompt length
    kOutputTokens,    // the request's output length
    kPromptBlocks,    // the request's prompt blocks
    kCategory,        // the request's category
    kHorizon,         // H (seconds) when the access was made: the label's meaning
    kCount
  };
  static const char* name(int f);
  // A value never seen: larger than any real one (XGBoost rejects +inf).
  static constexpr float kMissing = 1e9f;
};

// Gradient-boosted trees flattened into arrays: the margin of a row is base + the leaves its
// path reaches in each tree. Built from XGBoost's text dump; predictions equal XGBoost's own.
class CompiledForest {
 public:
  // dump: one text dump per tree ("0:[f3<1.5] yes=1,no=2,missing=1" / "1:leaf=0.2" lines).
  // Throws Error on a malformed dump.
  CompiledForest(std::span<const std::string> dump, float base_margin);
  CompiledForest() = default;
  float margin(const float* row) const;
  size_t trees() const { return roots_.size(); }
  size_t nodes() const { return nodes_.size(); }

 private:
  struct Node {
    int32_t feature;  // -1: leaf
    float value;      // threshold (go to yes when x < value) or leaf value
    int32_t yes, no, missing;
  };
  std::vector<Node> nodes_;
  std::vector<int32_t> roots_;
  float base_ = 0;
};

// NextAccessPredictor over ReuseFeatures. Sync and deterministic: fits run inline. Before the
// first model every answer is kNever, so the policies rank by recency alone (LRU).
class ReusePredictor : public NextAccessPredictor {
 public:
  ReusePredictor(const ReuseConfig& config, uint32_t block_tokens);
  ~ReusePredictor() override;
  void on_request_begin(const RequestView& r) override;
  void on_access(NodeId n, const AccessInfo& info) override;
  void on_removed(NodeId n) override;
  uint64_t version() const override;
  PolicyStats stats() const override;

  // P(reused within the row's horizon) for raw feature rows, by the compiled model; NaN
  // without a model. xgboost_probabilities: the same through XGBoost itself (tests).
  void probabilities(const float* rows, size_t n, float* out) const;
  void xgboost_probabilities(const float* rows, size_t n, float* out) const;
  // Features of n's last access (ReuseFeatures::kCount floats).
  const float* row(NodeId n) const;
  double horizon_s() const;
  uint64_t positives() const;
  uint64_t negatives_by_timeout() const;  // the censored class: not reused within H
  size_t keys_tracked() const;
  size_t key_table_bound() const;
  // Share of the last model's total gain per feature (empty without a model).
  std::vector<std::pair<std::string, double>> feature_gain() const;

 protected:
  void do_predict(std::span<const NodeId> nodes, std::span<Time> out) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvpolicy
