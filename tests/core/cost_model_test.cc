#include "kvpolicy/core/cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

// Llama-3.1-8B (32 layers, hidden 4096, 32 query / 8 KV heads of 128, MLP 14336, vocab 128256)
// worked out by hand.
constexpr double kLayer = 4096.0 * 32 * 128       // q
                          + 2.0 * 4096 * 8 * 128  // k, v
                          + 32.0 * 128 * 4096     // o
                          + 3.0 * 4096 * 14336;   // gate, up, down
static_assert(kLayer == 218103808.0);
constexpr double kLmHead = 128256.0 * 4096;

TEST(CostModel, Llama8bShapeMatchesHandCount) {
  const ModelShape& m = find_model("Llama-3.1-8B");
  EXPECT_DOUBLE_EQ(m.layer_matmul_params(), kLayer);
  // 32 layers + embedding + untied LM head = 8,030,261,248, the published "8.03B".
  EXPECT_DOUBLE_EQ(m.derived_params(), 32 * kLayer + 2 * kLmHead);
  EXPECT_NEAR(m.derived_params() / m.params, 1.0, 0.001);
  // K and V, 32 layers, 8 KV heads of 128, 2 bytes: 131,072 bytes = 128 KiB per token.
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(), 131072.0);
}

TEST(CostModel, EveryPresetShapeMatchesItsPublishedParameterCount) {
  for (const ModelShape& m : model_presets()) {
    SCOPED_TRACE(m.name);
    // Biases and norms are left out of the shape count, so allow 1.5 %.
    EXPECT_NEAR(m.derived_params() / m.params, 1.0, 0.015);
  }
}

TEST(CostModel, VicunaKvBytesMatchThePaper) {
  // 2 x 32 layers x 32 KV heads x 128 x 2 bytes = 524,288 bytes (0.5 MiB, 0.524 MB) per token;
  // the T-LRU paper's appendix E: 10,000 tokens = 4.88 GB, which is GiB (5.24e9 bytes).
  const ModelShape& m = find_model("vicuna-7b");
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token(), 524288.0);
  EXPECT_NEAR(m.kv_bytes_per_token() * 10000 / double(1ull << 30), 4.88, 0.005);
  CostModel cost(m, find_gpu("a100-80gb"), CostModel::Options{});
  EXPECT_EQ(cost.blocks_for_bytes(10000 * 524288.0), 625u);  // 16-token blocks
  EXPECT_EQ(cost.blocks_for_bytes(10000 * 524288.0 - 1), 624u);
}

TEST(CostModel, PrefillFlopsAndTimeMatchHandComputation) {
  CostModel cost;  // the default: Llama-3.1-8B on A100-80GB, MFU 0.5, MBU 0.7
  EXPECT_EQ(cost.label(), "llama-3.1-8b@a100-80gb");
  // 1000 new tokens after 500 cached ones.
  double linear = 2 * 32 * kLayer * 1000 + 2 * kLmHead;  // LM head for the last token only
  double positions = 1000.0 * 500 + 1000.0 * 1001 / 2;   // causal: token i sees 500 + i + 1
  double attention = 4.0 * 32 * 32 * 128 * positions;
  EXPECT_DOUBLE_EQ(cost.prefill_flops(1000, 500), linear + attention);
  EXPECT_DOUBLE_EQ(linear + attention, 14484244529152.0);
  // Compute-bound: 14.48 TFLOP at 0.5 x 312 TFLOP/s = 92.8 ms; memory: 15.0 GB of weights and
  // 1500 x 128 KiB of KV at 0.7 x 2.039 TB/s = 10.7 ms.
  double compute = 14484244529152.0 / (0.5 * 312e12);
  double memory = ((32 * kLayer + kLmHead) * 2 + 131072.0 * 1500) / (0.7 * 2.039e12);
  EXPECT_NEAR(memory, 0.010653, 1e-6);
  EXPECT_DOUBLE_EQ(cost.prefill_time(1000, 500), std::max(compute, memory));
  EXPECT_NEAR(cost.prefill_time(1000, 500), 0.092848, 1e-6);
  // A short prompt is memory-bound; a fully cached one still computes one token.
  EXPECT_DOUBLE_EQ(cost.prefill_time(0, 4000), cost.prefill_time(1, 4000));
  double short_memory = ((32 * kLayer + kLmHead) * 2 + 131072.0 * 17) / (0.7 * 2.039e12);
  EXPECT_DOUBLE_EQ(cost.prefill_time(1, 16), short_memory);
  // More cached context makes the same new tokens slower (attention), never faster.
  EXPECT_GT(cost.prefill_time(1000, 8000), cost.prefill_time(1000, 0));
}

TEST(CostModel, DecodeAndTransfer) {
  CostModel cost;
  // One sequence of 1000 tokens: memory-bound, weights + its KV.
  double bytes = (32 * kLayer + kLmHead) * 2 + 131072.0 * 1000;
  EXPECT_DOUBLE_EQ(cost.decode_step_time(1, 1000), bytes / (0.7 * 2.039e12));
  EXPECT_EQ(cost.decode_step_time(0, 0), 0);
  // 10 blocks of 16 tokens x 128 KiB over 32 GB/s PCIe.
  EXPECT_DOUBLE_EQ(cost.transfer_time(10, Tier::kDram), 10 * 16 * 131072.0 / 32e9);
  EXPECT_EQ(cost.transfer_time(10, Tier::kHbm), 0);
  EXPECT_DOUBLE_EQ(cost.with_block_tokens(512).transfer_time(1, Tier::kDram),
                   512 * 131072.0 / 32e9);
}

TEST(CostModel, LinearModeAndItsFit) {
  CostModel lin = CostModel::make("linear", "", "a_ms=20,b_ms=0.1,c_ms=0.00001");
  // 20 + 0.1 x 100 + 1e-5 x 100 x (50 + 100) ms.
  EXPECT_NEAR(lin.prefill_time(100, 50), (20 + 10 + 0.15) * 1e-3, 1e-12);
  CostModel plain = CostModel::make("linear", "", "a_ms=20,b_ms=0.1");
  LinearFit fit = plain.linear_fit();
  EXPECT_NEAR(fit.intercept_ms, 20, 1e-9);
  EXPECT_NEAR(fit.slope_ms_per_token, 0.1, 1e-12);
  EXPECT_EQ(plain.kv_bytes_per_token(), 131072.0);
  EXPECT_TRUE(plain.is_linear());
}

TEST(CostModel, PresetFitSlopeIsTheComputeSlope) {
  CostModel cost;
  LinearFit fit = cost.linear_fit(8192);
  double per_token_ms = 2 * 32 * kLayer / (0.5 * 312e12) * 1e3;  // 0.0895 ms per token
  // Attention adds to the slope as prompts grow (at most a few tens of percent by 8k tokens).
  EXPECT_GT(fit.slope_ms_per_token, per_token_ms);
  EXPECT_LT(fit.slope_ms_per_token, 1.3 * per_token_ms);
}

// Replay's TTFT (ms) of a `prompt`-token request with its first `blocks` blocks cached.
double ttft_with(const CostModel& cost, uint64_t prompt, uint64_t blocks, uint32_t block_tokens) {
  uint64_t cached = std::min(blocks * block_tokens, prompt);
  return cost.prefill_time(prompt - cached, cached) * 1e3;
}

TEST(CostModel, PrefillTimeNeverRisesWithMoreOfTheSamePromptCached) {
  // T-LRU's budget inverts this by binary search, which needs it monotone in the cached blocks.
  std::vector<CostModel> models = {CostModel(), CostModel::make("qwen2.5-32b", "a100-80gb"),
                                   CostModel::make("llama-3.1-70b", "h100", "tp=4,overhead_ms=3"),
                                   CostModel::make("linear", "", "a_ms=2,b_ms=0.5,c_ms=0.001")};
  for (const CostModel& cost : models) {
    for (uint32_t block_tokens : {1u, 16u, 512u}) {
      for (uint64_t prompt : {1ull, 15ull, 16ull, 17ull, 120ull, 2000ull, 12000ull, 60000ull}) {
        SCOPED_TRACE(cost.label() + ", B " + std::to_string(block_tokens) + ", prompt " +
                     std::to_string(prompt));
        uint64_t all = (prompt + block_tokens - 1) / block_tokens;
        uint64_t step = std::max<uint64_t>(1, all / 400);  // at most ~400 points per prompt
        double before = ttft_with(cost, prompt, 0, block_tokens);
        for (uint64_t c = 1; c < all; c += (c + step < all ? step : 1)) {
          double now = ttft_with(cost, prompt, c, block_tokens);
          ASSERT_LE(now, before) << "cached blocks " << c;
          before = now;
        }
        // The whole prompt cached recomputes its last token after all of it: one attention
        // position and one token's KV more than all but that token cached (a rise only at
        // B = 1), never more than 10 microseconds here.
        if (all > 0)
          EXPECT_LE(ttft_with(cost, prompt, all, block_tokens),
                    ttft_with(cost, prompt, all - 1, block_tokens) + 1e-2);
        EXPECT_EQ(ttft_with(cost, prompt, all + 1, block_tokens),
                  ttft_with(cost, prompt, all, block_tokens));
      }
    }
  }
}

TEST(CostModel, CachedBlocksToMeetMatchesHandComputation) {
  // Linear mode, TTFT = 2 + 0.5 u + 0.001 u (c + u) ms with c + u = the prompt, 1000 tokens:
  // TTFT = 2 + 1.5 u, so 200 ms allows u <= 132, i.e. >= 868 cached tokens = 54.25 blocks of 16:
  // 55 blocks (880 cached: 2 + 1.5 x 120 = 182 ms; 54 blocks: 2 + 1.5 x 136 = 206 ms).
  CostModel lin = CostModel::make("linear", "", "a_ms=2,b_ms=0.5,c_ms=0.001");
  EXPECT_EQ(lin.cached_blocks_to_meet(1000, 16, 200), 55u);
  EXPECT_NEAR(ttft_with(lin, 1000, 55, 16), 182, 1e-9);
  EXPECT_NEAR(ttft_with(lin, 1000, 54, 16), 206, 1e-9);
  // The line without the context term (alpha = 0.5, base = 2) allows 396 uncached tokens and
  // asks for ceil(604 / 16) = 38 blocks, which take 2 + 1.5 x 392 = 590 ms.
  EXPECT_NEAR(ttft_with(lin, 1000, 38, 16), 590, 1e-9);
  // Nothing needs caching when the whole prompt fits (1502 ms); the whole prompt cached still
  // computes one token (2 + 0.5 + 1 = 3.5 ms), so below that it is out of reach.
  EXPECT_EQ(lin.cached_blocks_to_meet(1000, 16, 1502.5), 0u);
  EXPECT_EQ(lin.cached_blocks_to_meet(1000, 16, 3.6), 63u);  // ceil(1000 / 16)
  EXPECT_EQ(lin.cached_blocks_to_meet(1000, 16, 3.4), std::nullopt);
  EXPECT_EQ(lin.cached_blocks_to_meet(1000, 1, 200), 868u);  // token granularity
  EXPECT_EQ(lin.cached_blocks_to_meet(0, 16, 3.6), 0u);

  // Llama-3.1-8B on an A100 (the default), a 2000-token prompt, 100 ms. With u uncached after
  // c = 2000 - u cached: 0.0894785 ms per token (2 x 32 x kLayer FLOPs at 156 TFLOP/s),
  // + 0.0067351 ms of LM head, + 3.36082e-6 ms per attention position (u c + u (u + 1) / 2).
  // 59 blocks (944 cached, u = 1056): 94.4893 + 0.0067 + 3.3502 + 1.8758 = 99.722 ms;
  // 58 blocks (928 cached, u = 1072): 101.204 ms. The linear fit (0.0922 ms a token, base 0)
  // allows 1084 uncached tokens: ceil(916 / 16) = 58 blocks, 1.2 ms over.
  CostModel cost;
  EXPECT_EQ(cost.cached_blocks_to_meet(2000, 16, 100), 59u);
  EXPECT_NEAR(ttft_with(cost, 2000, 59, 16), 99.722, 0.001);
  EXPECT_NEAR(ttft_with(cost, 2000, 58, 16), 101.204, 0.001);
  LinearFit fit = cost.linear_fit();
  double linear_blocks =
      std::ceil((2000 - (100 - std::max(0.0, fit.intercept_ms)) / fit.slope_ms_per_token) / 16);
  EXPECT_EQ(linear_blocks, 58);
  // Below the weights' read (10.5 ms), no cache helps.
  EXPECT_EQ(cost.cached_blocks_to_meet(2000, 16, 10), std::nullopt);
  EXPECT_THROW(cost.cached_blocks_to_meet(2000, 0, 100), ConfigError);
}

TEST(CostModel, CachedBlocksToMeetIsTheFewestThatMeetTheTarget) {
  std::vector<CostModel> models = {CostModel(), CostModel::make("qwen2.5-32b", "a100-80gb"),
                                   CostModel::make("linear", "", "a_ms=2,b_ms=0.5,c_ms=0.001")};
  for (const CostModel& cost : models)
    for (uint32_t block_tokens : {1u, 16u, 512u})
      for (uint64_t prompt : {1ull, 17ull, 700ull, 3000ull, 25000ull})
        for (double target : {0.0, 12.0, 50.0, 150.0, 200.0, 500.0, 2000.0}) {
          SCOPED_TRACE(cost.label() + ", B " + std::to_string(block_tokens) + ", prompt " +
                       std::to_string(prompt) + ", " + std::to_string(target) + " ms");
          std::optional<uint64_t> c = cost.cached_blocks_to_meet(prompt, block_tokens, target);
          uint64_t all = (prompt + block_tokens - 1) / block_tokens;
          if (!c) {
            EXPECT_GT(ttft_with(cost, prompt, all, block_tokens), target);
            continue;
          }
          EXPECT_LE(*c, all);
          EXPECT_LE(ttft_with(cost, prompt, *c, block_tokens), target);
          if (*c > 0) EXPECT_GT(ttft_with(cost, prompt, *c - 1, block_tokens), target);
        }
}

TEST(CostModel, OptionsAndErrors) {
  CostModel slow = CostModel::make("llama-3.1-8b", "a100-80gb", "mfu=0.25");
  CostModel fast = CostModel::make("llama-3.1-8b", "a100-80gb", "mfu=0.5");
  EXPECT_NEAR(slow.prefill_time(4000, 0), 2 * fast.prefill_time(4000, 0), 1e-12);
  CostModel h100 = CostModel::make("LLAMA-3.1-70B", "H100");
  EXPECT_EQ(h100.label(), "llama-3.1-70b@h100");
  EXPECT_THROW(CostModel::make("gpt-5", "a100-80gb"), ConfigError);
  EXPECT_THROW(CostModel::make("llama-3.1-8b", "tpu"), ConfigError);
  EXPECT_THROW(CostModel::make("llama-3.1-8b", "a100-80gb", "mfu=1.5"), ConfigError);
  EXPECT_THROW(CostModel::make("llama-3.1-8b", "a100-80gb", "nope=1"), ConfigError);
  EXPECT_THROW(CostModel::make("linear", "", "a_ms=0,b_ms=0"), ConfigError);
}

TEST(CostModel, GpuPresetsAreTheDatasheetNumbers) {
  const GpuSpec& h200 = find_gpu("H200");  // SXM: the H100's compute, HBM3e
  EXPECT_EQ(h200.peak_flops, 989e12);
  EXPECT_EQ(h200.mem_bandwidth, 4.8e12);
  EXPECT_EQ(h200.mem_bytes, 141e9);
  EXPECT_EQ(h200.peak_flops, find_gpu("h100").peak_flops);
  const GpuSpec& l40s = find_gpu("l40s");  // about twice the L40's tensor rate, the same memory
  EXPECT_EQ(l40s.peak_flops, 362.05e12);
  EXPECT_EQ(l40s.mem_bandwidth, 864e9);
  EXPECT_EQ(l40s.mem_bytes, 48e9);
  EXPECT_NEAR(l40s.peak_flops / find_gpu("l40").peak_flops, 2, 0.001);
  EXPECT_EQ(CostModel::make("llama-3.1-8b", "h200").label(), "llama-3.1-8b@h200");
}

TEST(CostModel, Fp8KvHalvesTheKvBytes) {
  CostModel bf16 = CostModel::make("llama-3.1-8b", "a100-80gb");
  CostModel fp8 = CostModel::make("llama-3.1-8b", "a100-80gb", "kv_dtype=fp8");
  EXPECT_EQ(fp8.kv_bytes_per_token(), 65536.0);  // 131,072 / 2
  EXPECT_EQ(fp8.kv_bytes_per_block(), bf16.kv_bytes_per_block() / 2);
  EXPECT_EQ(bf16.blocks_for_bytes(1e9), 476u);  // floor(1e9 / 2 MiB)
  EXPECT_EQ(fp8.blocks_for_bytes(1e9), 953u);   // floor(1e9 / 1 MiB): twice, plus the remainder
  EXPECT_EQ(fp8.blocks_for_bytes(64 * 1048576.0), 2 * bf16.blocks_for_bytes(64 * 1048576.0));
  // The weights stay 2-byte; only the KV terms shrink.
  EXPECT_EQ(fp8.weight_bytes(), bf16.weight_bytes());
  double kv_saved = 131072.0 / 2 * 100000;
  EXPECT_NEAR(bf16.decode_step_time(8, 100000) - fp8.decode_step_time(8, 100000),
              kv_saved / (0.7 * 2.039e12), 1e-12);
  EXPECT_LT(fp8.prefill_time(16, 30000), bf16.prefill_time(16, 30000));
  // fp16, bf16 and auto are the model's 2 bytes, bit-identical to the default.
  for (const char* dtype : {"kv_dtype=fp16", "kv_dtype=bf16", "kv_dtype=auto"}) {
    CostModel same = CostModel::make("llama-3.1-8b", "a100-80gb", dtype);
    EXPECT_EQ(same.kv_bytes_per_token(), bf16.kv_bytes_per_token());
    EXPECT_EQ(same.prefill_time(1000, 500), bf16.prefill_time(1000, 500));
  }
  // Linear mode: kv_bytes is 2-byte values, fp8 halves it.
  EXPECT_EQ(CostModel::make("linear", "", "kv_bytes=1000,kv_dtype=fp8").kv_bytes_per_token(),
            500.0);
  EXPECT_EQ(CostModel::make("linear", "", "kv_bytes=1000,kv_dtype=bf16").kv_bytes_per_token(),
            1000.0);
  // Options built in code: any byte width.
  CostModel::Options o;
  o.kv_dtype_bytes = 4;
  EXPECT_EQ(CostModel(find_model("llama-3.1-8b"), find_gpu("h100"), o).kv_bytes_per_token(),
            262144.0);
}

TEST(CostModel, TensorParallelDividesComputeAndMemoryNotOverhead) {
  CostModel one = CostModel::make("llama-3.1-70b", "h100", "overhead_ms=2");
  CostModel two = CostModel::make("llama-3.1-70b", "h100", "overhead_ms=2,tp=2");
  EXPECT_EQ(one.tensor_parallel(), 1u);
  EXPECT_EQ(two.tensor_parallel(), 2u);
  for (auto [u, c] : {std::pair<uint64_t, uint64_t>{1, 0}, {1000, 500}, {8192, 30000}})
    EXPECT_NEAR(two.prefill_time(u, c) - 0.002, (one.prefill_time(u, c) - 0.002) / 2, 1e-12);
  EXPECT_NEAR(two.decode_step_time(32, 32000) - 0.002,
              (one.decode_step_time(32, 32000) - 0.002) / 2, 1e-12);
  // KV per token and per block are the model's: serve mode multiplies the capacity by tp.
  EXPECT_EQ(two.kv_bytes_per_token(), one.kv_bytes_per_token());
  // Linear mode too.
  CostModel lin1 = CostModel::make("linear", "", "a_ms=20,b_ms=0.1,decode_a_ms=10");
  CostModel lin4 = CostModel::make("linear", "", "a_ms=20,b_ms=0.1,decode_a_ms=10,tp=4");
  EXPECT_NEAR(lin4.prefill_time(100, 0), lin1.prefill_time(100, 0) / 4, 1e-15);
  EXPECT_NEAR(lin4.decode_step_time(1, 100), lin1.decode_step_time(1, 100) / 4, 1e-15);
  // tp = 1 is bit-identical to the default.
  CostModel dflt;
  EXPECT_EQ(CostModel::make("llama-3.1-8b", "a100-80gb", "tp=1").prefill_time(1000, 500),
            dflt.prefill_time(1000, 500));
}

TEST(CostModel, BadKvDtypeAndTpAreConfigErrorsNamingWhatIsAllowed) {
  auto message = [](const std::string& params) {
    try {
      CostModel::make("llama-3.1-8b", "a100-80gb", params);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("kv_dtype=fp4").find("one of auto, fp16, bf16, fp8"), std::string::npos)
      << message("kv_dtype=fp4");
  for (const char* tp : {"tp=0", "tp=65", "tp=1.5", "tp=-2"}) {
    std::string m = message(tp);
    EXPECT_NE(m.find("parameter tp"), std::string::npos) << m;
    EXPECT_NE(m.find("an integer in [1, 64]"), std::string::npos) << m;
  }
  CostModel::Options o;
  o.tensor_parallel = 0;
  EXPECT_THROW(CostModel(find_model("llama-3.1-8b"), find_gpu("h100"), o), ConfigError);
  o.tensor_parallel = 1;
  o.kv_dtype_bytes = -1;
  EXPECT_THROW(CostModel(find_model("llama-3.1-8b"), find_gpu("h100"), o), ConfigError);
}

// An iteration of one chunk, one decode batch, or both.
IterationWork work(const CostModel& cost, std::vector<std::pair<uint64_t, uint64_t>> chunks,
                   uint32_t batch = 0, uint64_t context = 0) {
  IterationWork w;
  for (auto [u, c] : chunks) cost.add_prefill_chunk(w, u, c);
  cost.add_decode(w, batch, context);
  return w;
}

std::vector<CostModel> iteration_models() {
  return {
      CostModel(), CostModel::make("qwen2.5-32b", "h200", "overhead_ms=1.5,tp=2,kv_dtype=fp8"),
      CostModel::make("llama-3.1-70b", "l40s", "tp=8,mfu=0.4,mbu=0.8"),
      CostModel::make("linear", "", "a_ms=20,b_ms=0.1,c_ms=0.00001,decode_a_ms=9"),
      CostModel::make("linear", "", "a_ms=3.3,b_ms=0.07,decode_b_ms=0.0001,overhead_ms=1,tp=4")};
}

TEST(CostModel, IterationOfOnePartIsExactlyPrefillOrDecodeTime) {
  for (const CostModel& cost : iteration_models()) {
    SCOPED_TRACE(cost.label());
    EXPECT_EQ(cost.iteration_time(IterationWork{}), 0);
    EXPECT_EQ(cost.iteration_time(work(cost, {}, 0, 5000)), 0);  // 0 sequences add nothing
    for (auto [u, c] : std::vector<std::pair<uint64_t, uint64_t>>{
             {0, 0}, {0, 4000}, {1, 16}, {100, 50}, {1000, 500}, {8192, 0}, {2048, 30000}})
      EXPECT_EQ(cost.iteration_time(work(cost, {{u, c}})), cost.prefill_time(u, c))
          << u << "," << c;
    for (auto [b, ctx] :
         std::vector<std::pair<uint32_t, uint64_t>>{{1, 0}, {1, 1000}, {32, 32768}, {256, 1000000}})
      EXPECT_EQ(cost.iteration_time(work(cost, {}, b, ctx)), cost.decode_step_time(b, ctx))
          << b << "," << ctx;
  }
}

TEST(CostModel, MixedIterationIsBetweenTheMaxAndTheSumOfItsParts) {
  for (const CostModel& cost : iteration_models()) {
    SCOPED_TRACE(cost.label());
    for (auto [u, c, b, ctx] : std::vector<std::tuple<uint64_t, uint64_t, uint32_t, uint64_t>>{
             {1, 0, 1, 100}, {512, 2000, 8, 8000}, {8000, 0, 200, 400000}, {64, 100000, 1, 1}}) {
      double prefill = cost.prefill_time(u, c), decode = cost.decode_step_time(b, ctx);
      double mixed = cost.iteration_time(work(cost, {{u, c}}, b, ctx));
      // Linear mode without overhead is the sum itself (up to rounding).
      EXPECT_LE(mixed, (prefill + decode) * (1 + 1e-12));
      EXPECT_GE(mixed, std::max(prefill, decode));
    }
  }
}

TEST(CostModel, MixedIterationMatchesHandComputation) {
  CostModel cost;  // Llama-3.1-8B on A100-80GB
  IterationWork w = work(cost, {{1000, 500}, {200, 0}}, 16, 20000);
  EXPECT_EQ(w.prefill_chunks, 2u);
  EXPECT_EQ(w.kv_read_tokens, 500u);
  EXPECT_EQ(w.kv_written_tokens, 1200u);
  EXPECT_EQ(w.decode_batch, 16u);
  EXPECT_EQ(w.decode_context, 20000u);
  // FLOPs: both chunks (each with its LM head) and 16 decodes (each with its LM head); bytes: the
  // weights once, 500 + 1200 + 20000 KV tokens.
  double flops = cost.prefill_flops(1000, 500) + cost.prefill_flops(200, 0) +
                 2 * (32 * kLayer + kLmHead) * 16 + 4.0 * 32 * 32 * 128 * 20000;
  EXPECT_DOUBLE_EQ(w.prefill_flops, cost.prefill_flops(1000, 500) + cost.prefill_flops(200, 0));
  double bytes = (32 * kLayer + kLmHead) * 2 + 131072.0 * 21700;
  EXPECT_DOUBLE_EQ(cost.iteration_time(w),
                   std::max(flops / (0.5 * 312e12), bytes / (0.7 * 2.039e12)));
  // Chunking costs one weight read per pass, not per chunk: two chunks in one pass are cheaper
  // than two passes when memory-bound.
  EXPECT_LT(cost.iteration_time(work(cost, {{8, 0}, {8, 0}})),
            cost.prefill_time(8, 0) + cost.prefill_time(8, 0));
}

TEST(CostModel, LinearIterationCountsTheInterceptOncePerPass) {
  CostModel lin = CostModel::make("linear", "",
                                  "a_ms=20,b_ms=0.1,c_ms=0.00001,decode_a_ms=9,decode_b_ms=0.001");
  IterationWork w = work(lin, {{100, 50}, {300, 0}}, 4, 1000);
  // 20 + (0.1 x 100 + 1e-5 x 100 x 150) + (0.1 x 300 + 1e-5 x 300 x 300) + 9 + 0.001 x 1000 ms.
  double ms = 20 + (10 + 0.15) + (30 + 0.9) + 9 + 1;
  EXPECT_NEAR(w.prefill_linear_ms, 20 + 10.15 + 30.9, 1e-12);
  EXPECT_NEAR(lin.iteration_time(w), ms * 1e-3, 1e-15);
}

TEST(CostModel, TensorParallelHalvesTheIterationButNotItsOverhead) {
  for (const char* model : {"llama-3.1-8b", "linear"}) {
    SCOPED_TRACE(model);
    CostModel one = CostModel::make(model, "h100", "overhead_ms=3");
    CostModel two = CostModel::make(model, "h100", "overhead_ms=3,tp=2");
    double t1 = one.iteration_time(work(one, {{2000, 1000}, {1, 7}}, 64, 64000));
    double t2 = two.iteration_time(work(two, {{2000, 1000}, {1, 7}}, 64, 64000));
    EXPECT_NEAR(t2 - 0.003, (t1 - 0.003) / 2, 1e-12);
  }
}

}  // namespace
}  // namespace kvpolicy

namespace kvpolicy {
namespace {

// Results are resumed by their cost model's label: a different tp or KV dtype is another model.
TEST(CostModel, LabelNamesTensorParallelismAndKvDtype) {
  EXPECT_EQ(CostModel::make("llama-3.1-8b", "h100", "tp=2").label(), "llama-3.1-8b@h100/tp2");
  EXPECT_EQ(CostModel::make("llama-3.1-8b", "h100", "kv_dtype=fp8").label(),
            "llama-3.1-8b@h100/kv-fp8");
  EXPECT_EQ(CostModel::make("llama-3.1-8b", "h100", "kv_dtype=bf16").label(), "llama-3.1-8b@h100");
}

}  // namespace
}  // namespace kvpolicy
