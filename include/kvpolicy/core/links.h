// Interconnect presets for serve mode's memory tiers (docs/cost-model.md, "Links"): the
// bandwidth and latency of one GPU's path to host DRAM (PCIe), to a local NVMe SSD and to a
// remote KV pool (RDMA), and the closed-form time to move blocks over them.
#pragma once

#include <cstdint>
#include <string>
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

}  // namespace kvpolicy
