// LCR's per-block features: recent gaps, exponentially decayed counters, depth, category.
#include <algorithm>
#include <cmath>

#include "kvpolicy/predict/predictor.h"

namespace kvpolicy {

void FeatureTracker::resize(size_t ids) {
  if (ids > state_.size()) state_.resize(std::max(ids, state_.size() * 2));
}

void FeatureTracker::row(NodeId n, float* out) const {
  const State& s = state_[n];
  std::copy(s.gaps, s.gaps + kGaps, out);
  std::copy(s.edc, s.edc + kEdcs, out + kGaps);
  out[kGaps + kEdcs] = s.depth;
  out[kGaps + kEdcs + 1] = s.category;
}

bool FeatureTracker::on_access(NodeId n, Time now, uint32_t depth_tokens, CategoryId category,
                               bool fresh, float* row_out, float* label) {
  resize(size_t{n} + 1);
  State& s = state_[n];
  if (fresh || s.count == 0) {
    s.last = now;
    s.count = 1;
    s.depth = float(depth_tokens);
    s.category = float(category);
    std::fill(s.gaps, s.gaps + kGaps, kMissingGap);
    std::fill(s.edc, s.edc + kEdcs, 1.0f);
    return false;
  }
  double gap = std::max<double>(0, double(now - s.last)) * 1e-6;
  bool sample = s.count >= 2;
  if (sample) {
    row(n, row_out);
    *label = float(std::log1p(gap));
  }
  std::copy_backward(s.gaps, s.gaps + kGaps - 1, s.gaps + kGaps);
  s.gaps[0] = float(gap);
  for (int i = 0; i < kEdcs; ++i)
    s.edc[i] = float(1.0 + s.edc[i] * std::exp2(-gap / std::exp2(9 + i)));
  s.last = now;
  s.category = float(category);  // the latest request's category
  ++s.count;
  return sample;
}

}  // namespace kvpolicy
