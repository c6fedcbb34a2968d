// T-LRU family: evicts TEL-safe blocks first (blocks a conversation's next turn does not need to
// meet the latency threshold xi), then by LRU (tlru, tlru_end, tlru_length, threshold_lru) or
// Belady (tail_belady).
// Source: "Tail-Optimized Caching for LLM Inference" (docs/policies.md).
// Cost: O(1) per access; O(1) per eviction (LRU variants), O(log n) (tail_belady); marking is
// O(marked blocks) per request.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "belady.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "marked_lru.h"

namespace kvpolicy {
namespace {

// How a policy learns the length of a conversation's next prompt.
enum class NextTurn {
  kEstimate,  // history + Q-hat (tlru)
  kEndAware,  // as kEstimate, but a session with no next turn keeps nothing (tlru_end)
  kExact,     // the true next prompt; no next turn keeps nothing (tlru_length, tail_belady)
};

// The TEL-safe budget of a finished turn: the cached blocks the next turn needs to meet xi;
// blocks at path positions >= the budget are TEL-safe. The next prompt is this prompt + this
// answer + Q-hat tokens (kEstimate), or the true next prompt of the session (kExact). Two ways to
// turn xi into blocks:
//  - model (default): the fewest c blocks such that the cost model's prefill time of the next
//    prompt with c x B tokens cached is <= xi, the very function replay's TTFT uses (it includes
//    the attention over the cached context); if even the whole prompt cached misses xi, keep all.
//  - linear (calibration=linear, or alpha or base_ms given): TTFT ~ base + alpha x uncached
//    tokens, so at most U = (xi - base) / alpha tokens may be uncached and the budget is
//    ceil((next prompt tokens - U) / B). alpha and base default to the cost model's fit with
//    nothing cached, which underestimates TTFT with a long cached context.
// The budget counts from the root, so it covers the full blocks the next turn reuses; this
// prompt's partial last block is never reused by it (the answer's tokens follow it there), and
// like any block it is marked only beyond the budget.
class TailBudget {
 public:
  TailBudget(const PolicyContext& ctx, const Params& p, NextTurn mode)
      : mode_(mode), block_tokens_(std::max<uint32_t>(ctx.block_tokens, 1)) {
    xi_ms_ = p.get_double("xi_ms");
    double alpha = p.get_double("alpha");
    double base = p.get_double("base_ms");
    qhat_blocks_ = p.get_double("qhat");
    // A policy built without a cost model (unit tests, tools) prices TTFT with the default one.
    cost_ = ctx.cost_model ? *ctx.cost_model : CostModel();
    linear_ = p.get_string("calibration") == "linear" || alpha != -1 || base != -1;
    if (linear_) {
      LinearFit fit = cost_.linear_fit();
      if (alpha == -1) alpha = fit.slope_ms_per_token;
      if (base == -1) base = std::max(0.0, fit.intercept_ms);
      // The declaration excludes 0; a cost model's fit can still give it.
      if (alpha == 0) throw ConfigError("T-LRU: alpha must be > 0");
      safe_tokens_ = std::max(0.0, (xi_ms_ - base) / alpha);
    }
    if (mode_ != NextTurn::kEstimate) {
      if (!ctx.future) throw ConfigError("T-LRU oracle variants need the trace's future (oracle)");
      future_ = *ctx.future;
    }
  }

  // Leading blocks of `r`'s path to keep; the rest of the path is TEL-safe.
  uint32_t budget(const RequestView& r) {
    double history = double(r.prompt_tokens) + r.output_tokens;
    learn(r);
    double next_tokens;
    if (mode_ == NextTurn::kEstimate) {
      next_tokens = history + qhat_tokens();
    } else {
      uint32_t next = future_.next_in_session[r.index];
      if (next == OracleView::kNoNext) return 0;
      next_tokens =
          mode_ == NextTurn::kExact ? double(future_.prompt_tokens[next]) : history + qhat_tokens();
    }
    return linear_ ? linear_budget(next_tokens) : model_budget(next_tokens);
  }

  // Q-hat in tokens: the parameter, else the running mean of the prompt increments seen so far
  // (a turn-k prompt minus the turn-(k-1) prompt and answer of the same session, at least 0);
  // before the first increment, the running mean of first-turn prompts.
  double qhat_tokens() const {
    if (qhat_blocks_ >= 0) return qhat_blocks_ * block_tokens_;
    if (increments_ > 0) return increment_sum_ / increments_;
    return firsts_ > 0 ? first_sum_ / firsts_ : 0;
  }
  size_t memory_bytes() const {
    return last_history_.size() * (sizeof(SessionId) + sizeof(double) + 2 * sizeof(void*));
  }

 private:
  static uint32_t clamp_blocks(double blocks) {
    return blocks >= double(UINT32_MAX) ? UINT32_MAX : static_cast<uint32_t>(blocks);
  }
  uint32_t linear_budget(double next_tokens) const {
    double needed = next_tokens - safe_tokens_;
    if (needed <= 0) return 0;
    return clamp_blocks(std::ceil(needed / block_tokens_));
  }
  // A fractional estimate (a mean Q-hat) is rounded up: more tokens never need fewer blocks.
  uint32_t model_budget(double next_tokens) const {
    double tokens = std::min(std::ceil(std::max(0.0, next_tokens)), double(UINT32_MAX));
    auto prompt = static_cast<uint64_t>(tokens);
    std::optional<uint64_t> blocks = cost_.cached_blocks_to_meet(prompt, block_tokens_, xi_ms_);
    // Out of reach: every block the next turn can reuse lowers its excess, so none is safe (the
    // whole next prompt, as the linear rule keeps when xi <= base).
    uint64_t keep = blocks ? *blocks : prompt / block_tokens_ + (prompt % block_tokens_ != 0);
    return clamp_blocks(double(keep));
  }

  void learn(const RequestView& r) {
    if (r.session == kNoSession) {
      first_sum_ += r.prompt_tokens;
      ++firsts_;
      return;
    }
    double& last = last_history_.try_emplace(r.session, -1.0).first->second;
    if (last < 0) {
      first_sum_ += r.prompt_tokens;
      ++firsts_;
    } else {
      increment_sum_ += std::max(0.0, double(r.prompt_tokens) - last);
      ++increments_;
    }
    last = double(r.prompt_tokens) + r.output_tokens;
  }

  NextTurn mode_;
  uint32_t block_tokens_;
  double xi_ms_ = 0;
  double qhat_blocks_ = -1;
  CostModel cost_;
  bool linear_ = false;
  double safe_tokens_ = 0;  // linear rule: U
  OracleView future_;
  // Per session: prompt + answer tokens of its last turn. A map, not an array indexed by the id:
  // an engine's session ids (KvCache) need not be small.
  std::unordered_map<SessionId, double> last_history_;
  double increment_sum_ = 0, first_sum_ = 0;
  uint64_t increments_ = 0, firsts_ = 0;
};

template <NextTurn kMode>
class TLru final : public InlinedPolicy<TLru<kMode>, MarkedLru> {
 public:
  static constexpr PolicyHooks kHooks{};
  TLru(const PolicyContext& ctx, const Params& p)
      : InlinedPolicy<TLru<kMode>, MarkedLru>(ctx), budget_(ctx, p, kMode) {}
  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    uint32_t keep = budget_.budget(r);
    if (keep < path.size()) this->mark_from(path, keep);
  }
  size_t memory_bytes() const override {
    return MarkedLru::memory_bytes() + budget_.memory_bytes();
  }

 private:
  TailBudget budget_;
};

// Caches a turn only when its conversation history (prompt + answer tokens) reaches the
// threshold: a shorter turn's newly inserted blocks go to the first-to-evict list, as if not
// cached, while the blocks it hit are refreshed as in LRU. Longer turns are plain LRU.
class ThresholdLru final : public InlinedPolicy<ThresholdLru, MarkedLru> {
 public:
  static constexpr PolicyHooks kHooks{};
  ThresholdLru(const PolicyContext& ctx, const Params& p) : InlinedPolicy(ctx) {
    threshold_ = static_cast<uint64_t>(p.get_int("threshold_tokens"));
  }
  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    if (uint64_t{r.prompt_tokens} + r.output_tokens < threshold_) mark_from(path, hits_);
  }

 private:
  uint64_t threshold_ = 1024;
};

// Tail-optimized Belady: TEL-safe trimming with the true next prompts, then Belady. Evicts the
// evictable leaf with the largest (TEL-safe, next use, depth): marked blocks first, each group
// furthest next use first, deeper first on ties.
class TailBelady final : public InlinedPolicy<TailBelady, BeladyOrder> {
 public:
  static constexpr PolicyHooks kHooks{};
  TailBelady(const PolicyContext& ctx, const Params& p)
      : InlinedPolicy(ctx, "tail_belady", /*marks=*/true), budget_(ctx, p, NextTurn::kExact) {}

  void on_request_end(const RequestView& r, std::span<const NodeId> path) override {
    uint32_t keep = budget_.budget(r);
    for (size_t j = keep; j < path.size(); ++j) mark_first(path[j]);
  }
  size_t memory_bytes() const override {
    return BeladyOrder::memory_bytes() + budget_.memory_bytes();
  }

 private:
  TailBudget budget_;
};

std::vector<ParamSpec> tail_params() {
  return {
      param_double("xi_ms", 200, {.min = 0}, "latency threshold xi of TEL, ms"),
      param_choice("calibration", "model", {"model", "linear"},
                   "budget from the cost model's prefill time with the cached context (model), "
                   "or from TTFT ~ base + alpha x uncached tokens (linear)"),
      param_double("alpha", -1, {.min = 0, .min_exclusive = true, .special = {-1}},
                   "linear rule: ms per uncached token (-1 = the cost model's linear slope; "
                   "setting it selects the linear rule)"),
      param_double("base_ms", -1, {.min = 0, .special = {-1}},
                   "linear rule: TTFT of an all-cached prompt, ms (-1 = the cost model's "
                   "intercept; setting it selects the linear rule)"),
      param_double("qhat", -1, {.min = 0, .special = {-1}},
                   "next user prompt, blocks (-1 = running mean of prompt increments)"),
  };
}

constexpr const char* kPaper = "Tail-Optimized Caching for LLM Inference (T-LRU), arXiv 2025";

const bool tlru_registered = register_policy<TLru<NextTurn::kEstimate>>({
    .name = "tlru",
    .summary = "Tail-Optimized LRU: first the blocks the next turn does not need to meet the TTFT "
               "threshold xi (TEL-safe), then LRU",
    .paper = kPaper,
    .params = tail_params(),
    .variants = {"qhat=2"},
});

const bool tlru_end_registered = register_policy<TLru<NextTurn::kEndAware>>({
    .name = "tlru_end",
    .summary = "End-aware T-LRU (oracle): as tlru, and a conversation with no next turn keeps "
               "nothing",
    .paper = kPaper,
    .params = tail_params(),
    .needs_future = true,
});

const bool tlru_length_registered = register_policy<TLru<NextTurn::kExact>>({
    .name = "tlru_length",
    .summary = "Length-aware T-LRU (oracle): as tlru_end, with the true next prompt length "
               "instead of its estimate",
    .paper = kPaper,
    .params = tail_params(),
    .needs_future = true,
});

const bool tail_belady_registered = register_policy<TailBelady>({
    .name = "tail_belady",
    .summary = "Tail-Optimized Belady (oracle): TEL-safe trimming with true next prompts, then "
               "Belady",
    .paper = kPaper,
    .params = tail_params(),
    .needs_future = true,
});

const bool threshold_registered = register_policy<ThresholdLru>({
    .name = "threshold_lru",
    .summary = "first the new blocks of turns whose history (prompt + answer) is under "
               "threshold_tokens, then LRU",
    .paper = "OpenAI prompt caching (1024-token minimum), as the baseline of the T-LRU paper",
    .params = {param_int("threshold_tokens", 1024, {.min = 0}, "minimum history to cache, tokens")},
});

}  // namespace
}  // namespace kvpolicy
