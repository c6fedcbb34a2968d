// Where LPC (docs/policies.md) gets p = P(this request's conversation has a later turn):
// the trace's classifier column, the trace's future (the oracle), the oracle with its answer
// flipped at random (the robustness study's noise), or a constant (tests). The classifier that
// fills the trace's column is apart (predict/continuation.h, run by `kvpolicy trace build
// --classifier`); a policy reads scores only through this interface.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/core/access.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/oracle_view.h"
#include "kvpolicy/core/params.h"

namespace kvpolicy {

// The trace source's refusal of a request without a score: its own type, so that a caller who
// is not replaying a trace (PolicyTree) can say what to pass instead of how to build a trace.
class MissingContinuation : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

class ContinuationSource {
 public:
  virtual ~ContinuationSource() = default;
  // P(r's conversation has a later turn), in [0, 1]. Asked once per request, in trace order.
  // Throws ConfigError when the source cannot answer (MissingContinuation: the trace source on
  // a request without a score): a configuration mistake found at the first request.
  virtual double p(const RequestView& r) = 0;
  // Counters for reports: continuation_calls, continuation_mean, and the source's own.
  virtual PolicyStats stats() const;

 protected:
  // Every implementation's answer passes through here (the common counters).
  double count(double p) {
    ++calls_;
    sum_ += p;
    return p;
  }

 private:
  uint64_t calls_ = 0;
  double sum_ = 0;
};

struct ContinuationConfig {
  std::string kind = "trace";  // trace | oracle | noisy | constant
  double p = 0;                // noisy: probability that a request's oracle answer is flipped
  double value = 0.5;          // constant: the answer for every request
};

// What a source may read when built: only oracle and noisy read the future.
struct ContinuationContext {
  uint64_t seed = 1;
  std::optional<OracleView> future;
};

// Why a trace cannot feed predictor=trace: the one wording of the replay's error and of the
// commands that leave LPC out.
extern const char* const kNoContinuationScores;

// The parameters a policy takes for its continuation source (predictor, p, value), and their
// parsing into a config.
std::vector<ParamSpec> continuation_param_specs();
ContinuationConfig continuation_config(const Params& params);

// Builds a source; throws ConfigError on an unknown kind, a value out of [0, 1], or an oracle
// kind without the future.
std::unique_ptr<ContinuationSource> make_continuation_source(const ContinuationConfig& config,
                                                             const ContinuationContext& ctx);

// LPC's decay (paper section 3.4.2): the score of a block set to p `age_s` seconds ago,
// p' = p·d / (p·d + 1 − p) with d = exp(−age_s·scale_per_s). In logit terms
// logit p' = logit p − age_s·scale_per_s, so the order of two scores never changes with time.
double decayed_continuation(double p, double age_s, double scale_per_s);

}  // namespace kvpolicy
