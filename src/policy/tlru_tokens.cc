// tlru_tokens: SGLang's upstream T-LRU, with the threshold and the next prompt in tokens. A
// conversation of history L tokens keeps its first max(0, L + next_prompt_estimate - threshold)
// tokens; the blocks past them are evicted first (LRU among them), then plain LRU.
// Source: SGLang PR #34012, `--radix-eviction-policy tlru --tlru-threshold N
// --tlru-next-prompt-estimate M` (docs/policies.md, "tlru_tokens"). Cost: O(1) per access and
// eviction, O(path) per request end.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "kvpolicy/policy/policy.h"
#include "kvpolicy/policy/walk.h"
#include "marked_lru.h"

namespace kvpolicy {
namespace {

// What differs from tlru (docs/policies.md): xi is a token count, not a TTFT in ms turned into
// blocks through the cost model; Q-hat is a fixed token count, not a running mean; and L is
// SGLang's convo_length, a per-block high-water mark: the longest history (prompt + answer
// tokens) of any request whose path reached the block while it stayed cached, so a block
// shared with a longer conversation is judged by the longer one. Block j (tokens [jB, (j+1)B))
// is TEL-safe when jB >= max(0, L + Q-hat - xi): all its tokens lie past the kept budget. Along
// a path L never grows with depth, so the TEL-safe blocks of a path are a suffix of it.
class TLruTokens final : public InlinedPolicy<TLruTokens, MarkedLru> {
 public:
  static constexpr PolicyHooks kHooks{};
  TLruTokens(const PolicyContext& ctx, const Params& p)
      : InlinedPolicy(ctx), block_tokens_(std::max<uint32_t>(ctx.block_tokens, 1)) {
    threshold_ = p.get_int("threshold");
    next_prompt_ = p.get_int("next_prompt_estimate");
  }
  void reserve_ids(size_t ids) override {
    MarkedLru::reserve_ids(ids);
    if (ids > high_water_.size()) high_water_.resize(ids, 0);
  }
  void on_request_begin(const RequestView& r) override {
    MarkedLru::on_request_begin(r);
    history_ = uint64_t{r.prompt_tokens} + r.output_tokens;
  }
  void on_access(NodeId n, const AccessInfo& info) override {
    MarkedLru::on_access(n, info);
    high_water_[n] = info.reused() ? std::max(high_water_[n], history_) : history_;
  }
  void on_request_end(const RequestView&, std::span<const NodeId> path) override {
    // The path may hold blocks of the other tier, whose high-water marks this policy never set.
    for (size_t j = 0; j < path.size(); ++j) {
      if (holds(path[j]) && tel_safe(path[j], j)) return mark_from(path, j);
    }
  }
  size_t memory_bytes() const override {
    return MarkedLru::memory_bytes() + high_water_.capacity() * sizeof(uint64_t);
  }

 private:
  bool tel_safe(NodeId n, size_t position) const {
    int64_t budget = std::max<int64_t>(0, int64_t(high_water_[n]) + next_prompt_ - threshold_);
    return int64_t(position) * block_tokens_ >= budget;
  }

  uint32_t block_tokens_;
  int64_t threshold_ = 0, next_prompt_ = 0;
  uint64_t history_ = 0;              // the current request's prompt + answer tokens
  std::vector<uint64_t> high_water_;  // per block: SGLang's convo_length, tokens
};

const bool registered = register_policy<TLruTokens>({
    .name = "tlru_tokens",
    .summary = "SGLang's upstream T-LRU: first the blocks past max(0, L + next_prompt_estimate - "
               "threshold) tokens of their conversation, then LRU",
    .paper = "SGLang PR #34012 (tlru, --tlru-threshold, --tlru-next-prompt-estimate), after "
             "Tail-Optimized Caching for LLM Inference",
    .params = {param_int("threshold", 1500, {.min = 0, .max = 1e12},
                         "xi in tokens: how many uncached tokens the next turn may prefill"),
               param_int("next_prompt_estimate", 300, {.min = 0, .max = 1e12},
                         "Q-hat in tokens: the expected new prompt of the next turn")},
    .variants = {"threshold=0", "threshold=64,next_prompt_estimate=16"},
});

}  // namespace
}  // namespace kvpolicy
