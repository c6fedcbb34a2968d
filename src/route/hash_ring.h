// A consistent-hash ring of virtual nodes, shared by session_affinity and prefix_hash: each
// worker has `vnodes` points, and a key's home is the first point clockwise from it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kvpolicy/core/types.h"
#include "kvpolicy/route/router.h"

namespace kvpolicy {

class HashRing {
 public:
  // Worker w's v-th point is chain_key(chain_key(salt, w), v): a router keeps its own salt so
  // that two routers' rings are independent.
  HashRing(uint32_t workers, uint32_t vnodes, uint64_t salt) {
    ring_.reserve(size_t{workers} * vnodes);
    for (WorkerId w = 0; w < workers; ++w)
      for (uint32_t v = 0; v < vnodes; ++v) ring_.emplace_back(chain_key(chain_key(salt, w), v), w);
    std::sort(ring_.begin(), ring_.end());
  }

  size_t size() const { return ring_.size(); }
  // The position of the first point at or after `key`, wrapping past the end to 0.
  size_t home(uint64_t key) const {
    auto it = std::lower_bound(ring_.begin(), ring_.end(), std::pair{key, WorkerId{0}});
    return it == ring_.end() ? 0 : static_cast<size_t>(it - ring_.begin());
  }
  // The worker of the point `step` positions clockwise from `position`.
  WorkerId worker_at(size_t position, size_t step = 0) const {
    return ring_[(position + step) % ring_.size()].second;
  }

 private:
  std::vector<std::pair<uint64_t, WorkerId>> ring_;  // (point, worker), sorted by point
};

}  // namespace kvpolicy
