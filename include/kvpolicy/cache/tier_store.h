// A lower memory tier of serve mode (host DRAM, local SSD, a cluster's remote pool): a keyed
// block store run by its own eviction policy (docs/serve.md, "Memory tiers"). Engines' CPU,
// disk and remote stores are keyed by the chained block hash, so the store is flat: each block
// is a root of the store's own tree. A block is held once per child present in the same store
// (a block whose parent key is its key), so the policy sees a chain's tail as its only
// candidates and evicts tails first, as replay's DRAM tier evicts DRAM leaves only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvpolicy/cache/policy_driver.h"
#include "kvpolicy/core/access.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

namespace cache_detail {
class KeyCounts;
}

// Which blocks a tier admits when one is offered to it (written through or demoted into it).
struct AdmissionFilter {
  enum class Kind { kAll, kPresence, kSeen };
  Kind kind = Kind::kAll;
  uint32_t k = 2;       // kSeen: offers needed
  uint64_t window = 0;  // kSeen: the last `window` offers to this tier count (0: its capacity)
  // "all", "presence", "seen>=2" or "seen>=2@100000".
  std::string label() const;
};
// Parses `all`, `presence`, `seen>=K` or `seen>=K@W`; throws ConfigError naming `what`.
AdmissionFilter parse_admission(const std::string& text, const std::string& what);

// Counts each key's offers among the last `window` offers (a ring of keys and a count per key):
// KVBM's "stored twice before it goes to disk" with a stated window.
class SeenCounter {
 public:
  explicit SeenCounter(uint64_t window);
  // Records an offer of `key`; returns its offers within the window, this one included.
  uint32_t offer(BlockKey key);

 private:
  std::vector<BlockKey> ring_;
  size_t next_ = 0;
  bool full_ = false;
  std::unordered_map<BlockKey, uint32_t> counts_;
};

struct TierCounters {
  uint64_t blocks_read = 0;     // blocks promoted into HBM from this tier
  uint64_t blocks_written = 0;  // blocks stored into this tier
  uint64_t evictions = 0;       // blocks this tier's policy evicted
  uint64_t rejected = 0;        // blocks offered and refused by the admission filter
  uint64_t full = 0;            // blocks admitted but dropped: every block of the tier was held
  uint64_t removed = 0;         // blocks taken out by the owner (exclusive promotion, a stale copy)
};

class TierStore {
 public:
  TierStore(std::string name, size_t capacity_blocks, const PolicySpec& spec, PolicyContext ctx,
            AdmissionFilter admission);
  ~TierStore();

  // What an evicted block carries down to the next tier.
  struct Block {
    BlockKey key = 0;
    BlockKey parent = 0;  // its parent's key (has_parent false: a first block)
    bool has_parent = false;
    uint32_t position = 0;     // its index in the prompt
    uint64_t last_access = 0;  // its last access index (for the next tier's policy)
  };

  bool contains(BlockKey key) const { return driver_->tree().find(key) != kNoNode; }
  // A present block as stored (its parent, position and last access).
  const Block& block(BlockKey key) const { return block_[driver_->tree().find(key)]; }
  // Whether the filter admits `b` (records the offer); `parent_above` is whether b's parent is
  // present in this tier or a tier above it (the presence filter).
  bool admits(const Block& b, bool parent_above);
  bool full(bool swap) const { return size() >= capacity_ + (swap ? 1 : 0); }
  // The policy's victim, removed; nullopt when every block is held.
  std::optional<Block> evict(Time now);
  // Stores b (absent, with room), told to the policy as `info` (its access and position are
  // b's).
  void insert(const Block& b, AccessInfo info);
  // A hit that stays in the tier (inclusive placement, the remote pool).
  void touch(BlockKey key, AccessInfo info);
  // Holds a present block (a request reading it) / releases that hold.
  void pin(BlockKey key);
  void unpin(BlockKey key);
  // Takes a present block out whatever its holds (`why`: kPromoted or kDropped).
  void remove(BlockKey key, Removal why);
  // Inclusive placement: held while the block is present in a tier above (idempotent).
  void set_held_above(BlockKey key, bool above);

  void begin(const RequestView& r) { driver_->policy().on_request_begin(r); }
  void end(const RequestView& r) { driver_->policy().on_request_end(r, {}); }

  const std::string& name() const { return name_; }
  size_t size() const { return driver_->tree().size(); }
  size_t capacity() const { return capacity_; }
  const AdmissionFilter& admission() const { return admission_; }
  const std::string& policy_label() const { return driver_->label(); }
  Policy& policy() { return driver_->policy(); }
  TierCounters counters;
  uint64_t hits = 0;  // blocks found here by requests that completed (the worker counts them)
  void set_checking(bool on) { checking_ = on; }
  // Every block present (tests).
  std::vector<BlockKey> keys() const;

 private:
  void reserve();
  // Bookkeeping of a block leaving: its parent loses a child hold.
  void forget(NodeId n);

  std::string name_;
  size_t capacity_;
  AdmissionFilter admission_;
  std::unique_ptr<PolicyDriver> driver_;
  std::unique_ptr<SeenCounter> seen_;
  std::vector<Block> block_;         // per node
  std::vector<uint8_t> held_above_;  // per node: holds one hold for a copy above
  // Per key: blocks present with it as parent.
  std::unique_ptr<cache_detail::KeyCounts> children_;
  bool checking_ = false;
};

}  // namespace kvpolicy
