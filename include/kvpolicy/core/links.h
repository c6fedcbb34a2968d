// Interconnect presets for serve mode's memory tiers (docs/cost-model.md, "Links"): the
// bandwidth and latency of one GPU's path to host DRAM (PCIe), to a local NVMe SSD and to a
// remote KV pool (RDMA), and the closed-form time to move blocks over them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kvpolicy {

struct LinkSpec {
  std::string name;
  double read_bytes_per_s = 0;   // into HBM (a lower-tier hit), per GPU
  double write_bytes_per_s = 0;  // out of HBM (a demotion or a write-through), per GPU
  double latency_s = 0;          // once per transfer (one request's blocks from one tier)
};

const std::vector<LinkSpec>& link_presets();
// Case-insensitive lookup of a preset ("pcie4", "pcie5", "nvme", "rdma-200", "rdma-400"), or
// "custom:GBps[:latency_us]" for a link of that read and write bandwidth. Throws ConfigError
// naming the presets.
LinkSpec find_link(const std::string& name);

// Seconds to read `blocks` of `block_bytes` each into a worker of `gpus` GPUs, each GPU moving
// its shard of the KV over its own link at once: latency + blocks x block_bytes / (gpus x
// read bandwidth); 0 for no block.
double link_read_time(const LinkSpec& link, uint64_t blocks, double block_bytes, uint32_t gpus);
// The same for writing blocks out of HBM (write bandwidth).
double link_write_time(const LinkSpec& link, uint64_t blocks, double block_bytes, uint32_t gpus);

// One link as a FIFO server (docs/serve.md, "Memory tiers"): a transfer starts at max(ready,
// the link's free time), occupies the link for its bytes over the bandwidth and its data lands
// a latency later; reads (loads into HBM) and writes (demotions, write-through) share it.
class LinkQueue {
 public:
  LinkQueue() = default;
  LinkQueue(LinkSpec link, double block_bytes, uint32_t gpus)
      : link_(std::move(link)), block_bytes_(block_bytes), gpus_(gpus) {}
  // Reads `blocks` ready at `ready` seconds; returns when their data has arrived (`ready` for
  // no block).
  double read(double ready, uint64_t blocks);
  // Writes `blocks` handed over at `at` seconds (asynchronous: nobody waits for it, but it
  // holds the link).
  void write(double at, uint64_t blocks);

  double busy_seconds() const { return busy_s_; }            // occupied, reads and writes
  double write_seconds() const { return write_busy_s_; }     // occupied by writes
  double read_wait_seconds() const { return read_wait_s_; }  // reads' waits for the link
  double free_at() const { return free_at_; }

 private:
  double occupancy(uint64_t blocks, double bytes_per_s) const;
  LinkSpec link_;
  double block_bytes_ = 0;
  uint32_t gpus_ = 1;
  double free_at_ = 0, busy_s_ = 0, write_busy_s_ = 0, read_wait_s_ = 0;
};

}  // namespace kvpolicy
