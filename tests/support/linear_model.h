// A linear cost model for hand-computed serve timings: prefill b_ms per token, a decode step
// decode_a_ms, nothing else; 16-token blocks, 128 KiB of KV a token.
#pragma once

#include "kvpolicy/core/cost_model.h"

namespace kvpolicy::testing {

inline CostModel linear_model(double b_ms, double decode_a_ms) {
  CostModel::Options o;
  o.block_tokens = 16;
  return CostModel::linear(0, b_ms, 0, decode_a_ms, 0, 131072, o);
}

}  // namespace kvpolicy::testing
