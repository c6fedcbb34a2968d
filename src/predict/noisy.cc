// The noisy oracle: true next use, corrupted with probability p per draw (per request or per
// block access).
#include <algorithm>
#include <cmath>

#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/predictor.h"
#include "kvpolicy/predict/registry.h"

namespace kvpolicy {

namespace {
double unit(uint64_t x) { return double(mix64(x) >> 11) * 0x1.0p-53; }  // [0, 1)
}  // namespace

NoisyPredictor::NoisyPredictor(const OracleView& future, double p, NoiseKind kind, double sigma,
                               uint64_t seed, NoiseRedraw redraw)
    : OraclePredictor(future),
      p_(p),
      sigma_(sigma),
      kind_(kind),
      seed_(mix64(seed)),
      // At p = 0 every draw is clean, at p = 1 every adversarial draw is the same negation: a
      // redraw would change nothing, and skipping it spares the callers a full re-prediction.
      redraws_(redraw == NoiseRedraw::kPerRequest && p > 0 &&
               (p < 1 || kind == NoiseKind::kLogNormal)) {}

void NoisyPredictor::on_request_begin(const RequestView& r) {
  if (!redraws_ || r.index == request_) return;
  request_ = r.index;
  ++version_;
}

void NoisyPredictor::do_predict(std::span<const NodeId> nodes, std::span<Time> out) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    Time t = true_next(nodes[i]);
    // The coin and the noise are functions of (seed, access[, request]): the same draw gets the
    // same answer however often and by whichever policy it is asked.
    uint64_t a = mix64(seed_ ^ (last_access(nodes[i]) * 0x9e3779b97f4a7c15ULL));
    if (redraws_) a = mix64(a ^ ((uint64_t(request_) + 1) * 0xc2b2ae3d27d4eb4fULL));
    if (unit(a) >= p_) {
      out[i] = t;
      continue;
    }
    ++corrupted_;
    if (kind_ == NoiseKind::kAdversarial) {
      out[i] = -t;  // kNever becomes -kNever: never-used blocks look needed first
    } else if (t == kNever) {
      out[i] = t;
    } else {
      // Box-Muller from two further hashes of the access.
      double u1 = 1.0 - unit(a + 1), u2 = unit(a + 2);
      double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
      double noise_us = std::min(std::exp(sigma_ * z) * 1e6, 1e17);  // no overflow for huge sigma
      out[i] = t + static_cast<Time>(std::llround(noise_us));
    }
  }
}

PolicyStats NoisyPredictor::stats() const {
  PolicyStats s = NextAccessPredictor::stats();
  s.push_back({"corrupted_predictions", double(corrupted_)});
  return s;
}

namespace {

const bool registered = register_predictor({
    .name = "noisy",
    .summary = "the oracle, corrupted with probability p per draw (offline: reads the future)",
    .params =
        {
            param_double("p", 0, {.min = 0, .max = 1},
                         "probability that a prediction is corrupted (per draw, see redraw)"),
            param_choice("noise", "adversarial", {"adversarial", "lognormal"},
                         "adversarial = negated true next time, lognormal = next + noise"),
            param_choice("redraw", "request", {"request", "access"},
                         "draw the corruption afresh at every request (the paper's sync mode: "
                         "each eviction call predicts anew) or only at each access of the block "
                         "(a persistent adversary: a corrupted prediction stays until the block "
                         "is used)"),
            param_double("sigma", 1, {.min = 0}, "lognormal: next + LogNormal(0, sigma) seconds"),
        },
    .flat_aliases = {{"p", "p"}, {"noise", "noise"}, {"redraw", "redraw"}, {"sigma", "sigma"}},
    .reads_future = true,
    .configure =
        [](const Params& p, PredictorConfig& c) {
          c.p = p.get_double("p");
          c.noise = p.get_string("noise") == "lognormal" ? NoiseKind::kLogNormal
                                                         : NoiseKind::kAdversarial;
          c.redraw = p.get_string("redraw") == "access" ? NoiseRedraw::kPerAccess
                                                        : NoiseRedraw::kPerRequest;
          c.sigma = p.get_double("sigma");
        },
    .make = [](const PredictorConfig& c,
               const PredictorContext& ctx) -> std::unique_ptr<NextAccessPredictor> {
      if (!(c.p >= 0 && c.p <= 1)) throw ConfigError("noise probability p must be in [0, 1]");
      if (!(c.sigma >= 0)) throw ConfigError("sigma must be >= 0");
      return std::make_unique<NoisyPredictor>(*ctx.future, c.p, c.noise, c.sigma, ctx.seed,
                                              c.redraw);
    },
});

}  // namespace

}  // namespace kvpolicy
