// The reuse predictor's feature names (reuse_predictor.h), for its reports: no model needed.
#include "kvpolicy/predict/reuse_predictor.h"

namespace kvpolicy {

const char* ReuseFeatures::name(int f) {
  static const char* names[kCount] = {
      "depth_tokens",     "blocks_to_end",    "ends_prompt",  "key_accesses",   "since_previous",
      "previous_gap",     "key_age",          "key_sessions", "session_turns",  "trace_turn",
      "session_last_gap", "session_mean_gap", "session_age",  "session_growth", "prompt_tokens",
      "output_tokens",    "prompt_blocks",    "category",     "horizon"};
  return f >= 0 && f < kCount ? names[f] : "?";
}

}  // namespace kvpolicy
