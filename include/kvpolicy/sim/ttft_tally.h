// Replay-mode TTFT metrics without a per-request array: TTFT is a function of (prompt tokens,
// matched blocks, DRAM blocks), so a count per distinct triple gives the exact percentiles, mean,
// TEL and SLO share that sorting every request's TTFT gives (same values, same summation order).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/sim/tail.h"

namespace kvpolicy {

class TtftTally {
 public:
  void add(uint32_t prompt_tokens, uint32_t hit_blocks, uint32_t dram_blocks) {
    Key k{prompt_tokens, hit_blocks, dram_blocks};
    // Consecutive requests often repeat a triple (one-block traces): skip the hash then.
    if (last_ && k == last_key_) {
      ++*last_;
    } else {
      last_ = &++counts_[k];
      last_key_ = k;
    }
    ++requests_;
  }
  uint64_t requests() const { return requests_; }
  size_t distinct() const { return counts_.size(); }
  // Equal to tail_metrics() over every added request's replay_ttft_ms.
  TailMetrics metrics(const CostModel& cost, uint32_t block_tokens, double xi_ms,
                      double slo_ms) const;

 private:
  struct Key {
    uint32_t prompt_tokens, hit_blocks, dram_blocks;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return mix64((uint64_t{k.prompt_tokens} << 32 | k.hit_blocks) ^ mix64(k.dram_blocks));
    }
  };
  std::unordered_map<Key, uint64_t, KeyHash> counts_;
  uint64_t* last_ = nullptr;  // node-based map: stays valid across inserts
  Key last_key_{};
  uint64_t requests_ = 0;
};

}  // namespace kvpolicy
