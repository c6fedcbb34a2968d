// The memory tiers below a serve-mode worker's HBM (docs/serve.md, "Memory tiers"): its own
// host DRAM and local SSD, then the cluster's shared remote pool, each a TierStore with its own
// policy and admission filter. ServingCache asks them for the blocks after its HBM prefix and
// hands them its victims (write-back) or its newly computed blocks (write-through).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvpolicy/cache/tier_store.h"
#include "kvpolicy/core/links.h"
#include "kvpolicy/core/tree.h"

namespace kvpolicy {

// exclusive: a block is in one of a worker's tiers (HBM, DRAM, SSD) at a time, a hit moves it
// up; inclusive: a hit copies it up and a lower tier keeps (holds) every block it admitted
// while a tier above has it. The remote pool is shared: a read never takes a block out of it.
enum class Placement : uint8_t { kExclusive, kInclusive };
// write-back: a block is written down when its tier evicts it (demotion); write-through: when
// HBM computes it, to every lower tier at once (their victims are then dropped).
enum class WriteMode : uint8_t { kWriteBack, kWriteThrough };

std::string placement_name(Placement p);
std::string write_mode_name(WriteMode w);
Placement parse_placement(const std::string& text);  // throws ConfigError
WriteMode parse_write_mode(const std::string& text);

// One lower tier as configured.
struct TierSpec {
  std::string name;  // "dram", "ssd", "remote"
  size_t capacity_blocks = 0;
  PolicySpec policy{"lru", ""};
  AdmissionFilter admission;
  LinkSpec link;
};

class LowerTiers {
 public:
  static constexpr size_t kMaxTiers = 3;
  // `local`: the worker's own tiers in order; `remote`: the shared pool (may be null), which
  // must outlive this. Throws ConfigError for exclusive write-through.
  LowerTiers(Placement placement, WriteMode write, std::vector<std::unique_ptr<TierStore>> local,
             std::vector<LinkSpec> local_links, TierStore* remote, LinkSpec remote_link);

  // HBM's tree, for the presence filter and inclusive holds; set by ServingCache.
  void attach(const PrefixTree* hbm) { hbm_ = hbm; }
  size_t count() const { return tiers_.size(); }
  TierStore& tier(size_t t) { return *tiers_[t]; }
  const TierStore& tier(size_t t) const { return *tiers_[t]; }
  const LinkSpec& link(size_t t) const { return links_[t]; }
  bool is_remote(size_t t) const { return remote_ && t + 1 == tiers_.size(); }
  Placement placement() const { return placement_; }
  WriteMode write_mode() const { return write_; }

  // For keys[from..]: the tier holding each (found[j] for keys[from + j]), until the first key
  // no tier holds.
  void lookup(std::span<const BlockKey> keys, size_t from, std::vector<uint8_t>& found) const;
  // A hit read from tier t into HBM: taken out (exclusive, a local tier) or touched.
  void read(size_t t, BlockKey key, const AccessInfo& info);
  // HBM dropped a computed block (write-back: it goes down; `swap`: a hit is moving up out of
  // the first tier, whose place it may take).
  void demote(const TierStore::Block& b, const AccessInfo& info, bool swap);
  // HBM computed b (write-through: written to every lower tier that admits it).
  void computed(const TierStore::Block& b, const AccessInfo& info);
  // HBM gained / lost `key`: exclusive placement drops a stale lower copy of a block HBM now
  // holds; inclusive placement holds lower copies while a tier above has the block.
  void hbm_added(BlockKey key);
  void hbm_removed(BlockKey key);

  // TensorRT-LLM's minimum priority for offload (docs/serve.md, "Memory tiers"): a computed HBM
  // victim whose retention priority is below it is dropped, not demoted (write-back only).
  // -1: off, every victim may be demoted.
  void set_offload_min_priority(int32_t p) { offload_min_priority_ = p; }
  int32_t offload_min_priority() const { return offload_min_priority_; }
  // HBM dropped a computed block below the minimum: counted, nothing written down.
  void skip_offload(BlockKey key) {
    ++offload_skipped_;
    hbm_removed(key);
  }
  uint64_t offload_skipped() const { return offload_skipped_; }

  void begin(const RequestView& r);
  void end(const RequestView& r);
  // Seconds to read hits[t] blocks from each tier t into a worker of `gpus` GPUs, one tier
  // after another (docs/serve.md).
  double read_seconds(std::span<const uint32_t> hits, double block_bytes, uint32_t gpus) const;
  // Link queueing (docs/serve.md, "Memory tiers"): each tier's link becomes a FIFO server of
  // this worker's blocks of `block_bytes` over `gpus` GPUs; from then on writes into a tier
  // (demotions, write-through) hold its link at the time they happen.
  void set_transfer(double block_bytes, uint32_t gpus);
  // Queues the reads of hits[t] blocks from each tier t, one tier after another, the first ready
  // at `now` seconds; returns when the last has arrived (needs set_transfer).
  double load(std::span<const uint32_t> hits, double now);
  // Tier t's link (empty before set_transfer).
  const LinkQueue* queue(size_t t) const { return t < queues_.size() ? &queues_[t] : nullptr; }
  void set_checking(bool on);

 private:
  // Offers b to tier t and below (write-back cascades a victim to the next tier).
  // `over_link`: the block comes from HBM or a tier above over t's link (false: an inclusive
  // copy moving up, which passes through tier t on its way to HBM).
  void place(size_t t, const TierStore::Block& b, AccessInfo info, bool swap,
             bool over_link = true);
  bool present_above(size_t t, BlockKey key) const;
  void refresh_holds(BlockKey key);

  Placement placement_;
  WriteMode write_;
  std::vector<std::unique_ptr<TierStore>> owned_;
  std::vector<TierStore*> tiers_;  // local tiers, then the remote pool
  std::vector<LinkSpec> links_;
  TierStore* remote_ = nullptr;
  const PrefixTree* hbm_ = nullptr;
  std::vector<LinkQueue> queues_;  // per tier, after set_transfer
  int32_t offload_min_priority_ = -1;
  uint64_t offload_skipped_ = 0;
};

}  // namespace kvpolicy
