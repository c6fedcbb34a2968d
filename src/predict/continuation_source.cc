// Continuation sources for LPC: the trace's column, the oracle, the flipped oracle, a constant.
#include "kvpolicy/predict/continuation_source.h"

#include <algorithm>
#include <cmath>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {
namespace {

double unit(uint64_t x) { return double(mix64(x) >> 11) * 0x1.0p-53; }  // [0, 1)

class TraceSource final : public ContinuationSource {
 public:
  double p(const RequestView& r) override {
    if (r.continuation < 0)
      throw MissingContinuation(
          "this trace carries no continuation scores (build it with `kvpolicy trace build "
          "--classifier MODEL`); use lpc:predictor=oracle");
    return count(std::min(1.0, double(r.continuation)));
  }
};

class OracleSource : public ContinuationSource {
 public:
  explicit OracleSource(const OracleView& future) : future_(future) {}
  double p(const RequestView& r) override { return count(truth(r) ? 1 : 0); }

 protected:
  bool truth(const RequestView& r) const {
    if (r.index >= future_.next_in_session.size())
      throw ConfigError("continuation oracle: request " + std::to_string(r.index) +
                        " is not in the trace the oracle was computed for");
    return future_.next_in_session[r.index] != OracleView::kNoNext;
  }

 private:
  OracleView future_;
};

// The coin is a hash of (seed, request index): the same requests are flipped for every policy
// and every run with this seed, whatever order they are asked in.
class NoisySource final : public OracleSource {
 public:
  NoisySource(const OracleView& future, double p, uint64_t seed)
      : OracleSource(future), p_(p), seed_(mix64(seed ^ 0x1c0a7)) {}
  double p(const RequestView& r) override {
    bool answer = truth(r);
    if (unit(seed_ ^ (uint64_t{r.index} * 0x9e3779b97f4a7c15ULL)) < p_) {
      answer = !answer;
      ++flipped_;
    }
    return count(answer ? 1 : 0);
  }
  PolicyStats stats() const override {
    PolicyStats s = ContinuationSource::stats();
    s.emplace_back("continuation_flipped", double(flipped_));
    return s;
  }

 private:
  double p_;
  uint64_t seed_;
  uint64_t flipped_ = 0;
};

class ConstantSource final : public ContinuationSource {
 public:
  explicit ConstantSource(double value) : value_(value) {}
  double p(const RequestView&) override { return count(value_); }

 private:
  double value_;
};

}  // namespace

PolicyStats ContinuationSource::stats() const {
  return {{"continuation_calls", double(calls_)},
          {"continuation_mean", calls_ ? sum_ / double(calls_) : 0}};
}

std::vector<ParamSpec> continuation_param_specs() {
  return {
      param_choice("predictor", "trace", {"trace", "oracle", "noisy", "constant"},
                   "continuation probability: trace = the trace's classifier column, oracle = "
                   "1 if the session has a later turn (the future), noisy = the oracle flipped "
                   "with probability p, constant = value"),
      param_double("p", 0, {.min = 0, .max = 1},
                   "noisy: probability that a request's oracle answer is flipped (1 = always "
                   "wrong)"),
      param_double("value", 0.5, {.min = 0, .max = 1},
                   "constant: the probability of every request"),
  };
}

ContinuationConfig continuation_config(const Params& params) {
  ContinuationConfig c;
  c.kind = params.get_string("predictor");
  c.p = params.get_double("p");
  c.value = params.get_double("value");
  return c;
}

std::unique_ptr<ContinuationSource> make_continuation_source(const ContinuationConfig& c,
                                                             const ContinuationContext& ctx) {
  bool needs_future = c.kind == "oracle" || c.kind == "noisy";
  if (needs_future && !ctx.future)
    throw ConfigError("continuation predictor '" + c.kind + "' needs the trace's future (oracle)");
  if (c.kind == "trace") return std::make_unique<TraceSource>();
  if (c.kind == "oracle") return std::make_unique<OracleSource>(*ctx.future);
  if (c.kind == "noisy") {
    if (!(c.p >= 0 && c.p <= 1)) throw ConfigError("noise probability p must be in [0, 1]");
    return std::make_unique<NoisySource>(*ctx.future, c.p, ctx.seed);
  }
  if (c.kind == "constant") {
    if (!(c.value >= 0 && c.value <= 1))
      throw ConfigError("constant continuation value must be in [0, 1]");
    return std::make_unique<ConstantSource>(c.value);
  }
  throw ConfigError("unknown continuation predictor '" + c.kind +
                    "' (known: trace, oracle, noisy, constant)");
}

double decayed_continuation(double p, double age_s, double scale_per_s) {
  double pd = p * std::exp(-age_s * scale_per_s);
  double denominator = pd + (1 - p);
  return denominator > 0 ? pd / denominator : 1;  // p = 1 stays 1
}

}  // namespace kvpolicy
