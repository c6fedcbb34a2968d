#include "kvpolicy/core/links.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy {

const std::vector<LinkSpec>& link_presets() {
  // Effective rates, below the line rates (docs/cost-model.md, "Links", gives the sources).
  static const std::vector<LinkSpec> presets = {
      // PCIe 4.0 x16: 32 GB/s per direction on the wire, ~25 GB/s measured host<->device copies.
      {"pcie4", 25e9, 25e9, 10e-6},
      // PCIe 5.0 x16: 64 GB/s per direction on the wire, ~50 GB/s measured.
      {"pcie5", 50e9, 50e9, 10e-6},
      // One PCIe 4.0 NVMe SSD (datacenter class): ~7 GB/s sequential read, ~5 GB/s write,
      // ~100 us to the first byte of a read through the file system.
      {"nvme", 7e9, 5e9, 100e-6},
      // One ConnectX-6/7 NIC per GPU, RDMA reads from a remote pool: 200 / 400 Gb/s line rate,
      // ~90 % of it as goodput, a few us per round trip plus the pool's lookup.
      {"rdma-200", 22.5e9, 22.5e9, 20e-6},
      {"rdma-400", 45e9, 45e9, 20e-6},
  };
  return presets;
}

LinkSpec find_link(const std::string& name) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const LinkSpec& l : link_presets())
    if (l.name == lower) return l;
  if (lower.rfind("custom:", 0) == 0) {
    auto parts = split_list(lower.substr(7), ':');
    double gbps = 0, latency_us = 0;
    bool ok = !parts.empty() && parts.size() <= 2;
    if (ok) {
      std::optional<double> g = read_number(parts[0]);
      ok = g.has_value() && *g > 0 && std::isfinite(*g);
      if (ok) gbps = *g;
    }
    if (ok && parts.size() == 2) {
      std::optional<double> l = read_number(parts[1]);
      ok = l.has_value() && *l >= 0 && std::isfinite(*l);
      if (ok) latency_us = *l;
    }
    if (!ok)
      throw ConfigError("link '" + name +
                        "': custom links are custom:GBps[:latency_us], e.g. custom:12.5:50");
    return {lower, gbps * 1e9, gbps * 1e9, latency_us * 1e-6};
  }
  std::string known;
  for (const LinkSpec& l : link_presets()) known += (known.empty() ? "" : ", ") + l.name;
  throw ConfigError("unknown link '" + name + "' (known: " + known + ", custom:GBps[:latency_us])");
}

namespace {
double move_time(double bytes_per_s, double latency_s, uint64_t blocks, double block_bytes,
                 uint32_t gpus) {
  if (blocks == 0) return 0;
  return latency_s + double(blocks) * block_bytes / (double(std::max(gpus, 1u)) * bytes_per_s);
}
}  // namespace

double link_read_time(const LinkSpec& link, uint64_t blocks, double block_bytes, uint32_t gpus) {
  return move_time(link.read_bytes_per_s, link.latency_s, blocks, block_bytes, gpus);
}

double link_write_time(const LinkSpec& link, uint64_t blocks, double block_bytes, uint32_t gpus) {
  return move_time(link.write_bytes_per_s, link.latency_s, blocks, block_bytes, gpus);
}

double LinkQueue::occupancy(uint64_t blocks, double bytes_per_s) const {
  if (blocks == 0 || bytes_per_s <= 0) return 0;
  return double(blocks) * block_bytes_ / (double(std::max(gpus_, 1u)) * bytes_per_s);
}

double LinkQueue::read(double ready, uint64_t blocks) {
  if (blocks == 0) return ready;
  const double start = std::max(ready, free_at_);
  const double busy = occupancy(blocks, link_.read_bytes_per_s);
  read_wait_s_ += start - ready;
  busy_s_ += busy;
  free_at_ = start + busy;
  return free_at_ + link_.latency_s;
}

void LinkQueue::write(double at, uint64_t blocks) {
  const double busy = occupancy(blocks, link_.write_bytes_per_s);
  if (busy == 0) return;
  free_at_ = std::max(at, free_at_) + busy;
  busy_s_ += busy;
  write_busy_s_ += busy;
}

}  // namespace kvpolicy
