#include "kvpolicy/core/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/links.h"

namespace kvpolicy {

double ModelShape::layer_matmul_params() const {
  double q = double(hidden) * heads * head_dim;
  double kv = 2.0 * hidden * kv_heads * head_dim;
  double o = double(heads) * head_dim * hidden;
  double mlp = 3.0 * hidden * intermediate;
  return q + kv + o + mlp;
}

double ModelShape::derived_params() const {
  double embed = double(vocab) * hidden;
  return layers * layer_matmul_params() + embed * (tied_embeddings ? 1 : 2);
}

double ModelShape::kv_bytes_per_token() const {
  return 2.0 * layers * kv_heads * head_dim * dtype_bytes;
}

// Shapes from each model's published config.json; parameter counts from the model cards.
const std::vector<ModelShape>& model_presets() {
  static const std::vector<ModelShape> presets = {
      {"llama-3.1-8b", 32, 4096, 32, 8, 128, 14336, 128256, 8.03e9, 2, false},
      {"llama-3.1-70b", 80, 8192, 64, 8, 128, 28672, 128256, 70.6e9, 2, false},
      {"qwen2.5-32b", 64, 5120, 40, 8, 128, 27648, 152064, 32.5e9, 2, false},
      {"qwen2-7b", 28, 3584, 28, 4, 128, 18944, 152064, 7.62e9, 2, false},
      {"vicuna-7b", 32, 4096, 32, 32, 128, 11008, 32000, 6.74e9, 2, false},
  };
  return presets;
}

// Datasheet numbers: dense (not sparse) fp16/bf16 tensor throughput, memory bandwidth, memory.
// NVIDIA quotes tensor throughput with 2:4 sparsity; the dense figure is half of it.
const std::vector<GpuSpec>& gpu_presets() {
  static const std::vector<GpuSpec> presets = {
      {"a100-80gb", 312e12, 2.039e12, 80e9},  // A100 80GB SXM
      {"h100", 989e12, 3.35e12, 80e9},        // H100 SXM5
      {"l40", 181.05e12, 864e9, 48e9},        // L40 (PCIe, GDDR6)
      // H200 SXM: the H100's GH100 compute (1,979 TFLOP/s bf16 with sparsity = 989 dense),
      // 141 GB HBM3e at 4.8 TB/s (NVIDIA H200 datasheet).
      {"h200", 989e12, 4.8e12, 141e9},
      // L40S (PCIe, GDDR6): 362.05 TFLOP/s fp16/bf16 tensor dense (733 with sparsity), 864 GB/s,
      // 48 GB (NVIDIA L40S datasheet; about twice the L40's tensor rate).
      {"l40s", 362.05e12, 864e9, 48e9},
  };
  return presets;
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <typename T>
const T& find_named(const std::vector<T>& all, const std::string& name, const char* what) {
  std::string want = lower(name);
  for (auto& x : all)
    if (x.name == want) return x;
  std::string known;
  for (auto& x : all) known += (known.empty() ? "" : ", ") + x.name;
  throw ConfigError(fmt::format("unknown {} '{}' (known: {})", what, name, known));
}

}  // namespace

const ModelShape& find_model(const std::string& name) {
  return find_named(model_presets(), name, "model");
}
const GpuSpec& find_gpu(const std::string& name) { return find_named(gpu_presets(), name, "GPU"); }

CostModel::CostModel() : CostModel(find_model(kDefaultModel), find_gpu(kDefaultGpu), Options{}) {}

namespace {

void check_options(const CostModel::Options& options) {
  if (options.mfu <= 0 || options.mfu > 1 || options.mbu <= 0 || options.mbu > 1)
    throw ConfigError("cost model: mfu and mbu must be in (0, 1]");
  if (options.pcie_bytes_per_s <= 0 || options.overhead_s < 0 || options.block_tokens == 0)
    throw ConfigError("cost model: pcie bandwidth and block tokens must be positive");
  if (!(options.kv_dtype_bytes >= 0))
    throw ConfigError("cost model: kv dtype bytes must be >= 0 (0 = the model's dtype)");
  if (options.tensor_parallel == 0)
    throw ConfigError("cost model: tensor parallelism must be at least 1");
}

// The model's KV bytes per token with the KV stored in `kv_dtype_bytes` per value (0 = the
// model's dtype, exactly ModelShape::kv_bytes_per_token).
double kv_bytes_for(const ModelShape& model, double kv_dtype_bytes) {
  if (kv_dtype_bytes == 0) return model.kv_bytes_per_token();
  ModelShape kv = model;
  kv.dtype_bytes = kv_dtype_bytes;
  return kv.kv_bytes_per_token();
}

}  // namespace

CostModel::CostModel(const ModelShape& model, const GpuSpec& gpu, const Options& options)
    : model_(model),
      gpu_(gpu),
      options_(options),
      kv_bytes_per_token_(kv_bytes_for(model, options.kv_dtype_bytes)) {
  check_options(options);
  derive_constants();
}

void CostModel::derive_constants() {
  // Each product keeps the association of the formula it replaces, so every time is the same
  // double as when it was derived per call (docs/cost-model.md).
  const ModelShape& m = model_;
  double dense = m.layers * m.layer_matmul_params() + double(m.vocab) * m.hidden;
  k_.weight_bytes = dense * m.dtype_bytes;
  k_.decode_flops_per_sequence = 2.0 * dense;
  k_.prefill_flops_per_token = 2.0 * m.layers * m.layer_matmul_params();
  k_.lm_head_flops = 2.0 * m.vocab * m.hidden;
  k_.attention_flops_per_position = 4.0 * m.layers * m.heads * m.head_dim;
  k_.flop_rate = options_.mfu * gpu_.peak_flops;
  k_.byte_rate = options_.mbu * gpu_.mem_bandwidth;
}

CostModel CostModel::linear(double a_ms, double b_ms, double c_ms, double decode_a_ms,
                            double decode_b_ms, double kv_bytes_per_token, const Options& options) {
  if (a_ms < 0 || b_ms < 0 || c_ms < 0 || decode_a_ms < 0 || decode_b_ms < 0 ||
      kv_bytes_per_token <= 0)
    throw ConfigError("cost model: linear coefficients must be >= 0 and kv bytes > 0");
  if (a_ms == 0 && b_ms == 0 && c_ms == 0)
    throw ConfigError("cost model: linear mode needs a non-zero coefficient");
  check_options(options);
  CostModel m;
  m.model_ = ModelShape{};
  m.model_.name = "linear";
  m.gpu_ = GpuSpec{};
  m.options_ = options;
  m.linear_ = true;
  m.a_ms_ = a_ms;
  m.b_ms_ = b_ms;
  m.c_ms_ = c_ms;
  m.decode_a_ms_ = decode_a_ms;
  m.decode_b_ms_ = decode_b_ms;
  m.derive_constants();
  // kv_bytes is per token in a 2-byte dtype; another KV dtype scales it (fp8 halves it).
  m.kv_bytes_per_token_ = options.kv_dtype_bytes == 0
                              ? kv_bytes_per_token
                              : kv_bytes_per_token * (options.kv_dtype_bytes / 2);
  return m;
}

std::vector<ParamSpec> CostModel::param_specs() {
  // The constructors check these too: they also take Options built in code.
  const ParamRange kShare{.min = 0, .max = 1, .min_exclusive = true},
      kPositive{.min = 0, .min_exclusive = true}, kNonNegative{.min = 0};
  return {
      param_double("mfu", 0.5, kShare, "model FLOP utilisation in prefill"),
      param_double("mbu", 0.7, kShare, "memory-bandwidth utilisation"),
      param_double("pcie_gbps", 32, kPositive, "host-to-GPU bandwidth for DRAM hits, GB/s"),
      param_double("overhead_ms", 0, kNonNegative, "fixed time per forward pass, ms"),
      param_int("block_tokens", 16, {.min = 1, .max = 1 << 20}, "tokens per KV block"),
      param_choice("kv_dtype", "auto", {"auto", "fp16", "bf16", "fp8"},
                   "KV cache dtype (auto = the model's; fp8 halves the KV bytes)"),
      param_int("tp", 1, {.min = 1, .max = 64},
                "tensor-parallel GPUs per worker: compute and memory time / tp"),
      param_double("a_ms", 0, kNonNegative, "linear mode: TTFT intercept, ms"),
      param_double("b_ms", 0.1, kNonNegative, "linear mode: ms per uncached token"),
      param_double("c_ms", 0, kNonNegative, "linear mode: ms per uncached token per context token"),
      param_double("decode_a_ms", 10, kNonNegative, "linear mode: decode step intercept, ms"),
      param_double("decode_b_ms", 0, kNonNegative, "linear mode: decode step ms per context token"),
      param_double("kv_bytes", 131072, kPositive,
                   "linear mode: KV bytes per token (Llama-3.1-8B's)"),
  };
}

CostModel CostModel::make(const std::string& model, const std::string& gpu,
                          const std::string& params) {
  Params p = Params::parse(params, param_specs(), "cost model");
  Options o;
  o.mfu = p.get_double("mfu");
  o.mbu = p.get_double("mbu");
  o.pcie_bytes_per_s = p.get_double("pcie_gbps") * 1e9;
  o.overhead_s = p.get_double("overhead_ms") * 1e-3;
  o.block_tokens = static_cast<uint32_t>(p.get_int("block_tokens"));
  std::string kv_dtype = p.get_string("kv_dtype");
  o.kv_dtype_bytes = kv_dtype == "fp8" ? 1 : kv_dtype == "auto" ? 0 : 2;
  o.tensor_parallel = static_cast<uint32_t>(p.get_int("tp"));
  if (lower(model) == "linear")
    return linear(p.get_double("a_ms"), p.get_double("b_ms"), p.get_double("c_ms"),
                  p.get_double("decode_a_ms"), p.get_double("decode_b_ms"),
                  p.get_double("kv_bytes"), o);
  return CostModel(find_model(model), find_gpu(gpu), o);
}

double CostModel::prefill_flops(uint64_t uncached, uint64_t cached) const {
  double u = double(std::max<uint64_t>(uncached, 1)), c = double(cached);
  // Projections and MLP for every new token; the LM head only for the last one.
  double linear = k_.prefill_flops_per_token * u + k_.lm_head_flops;
  // Causal attention: new token i attends to c + i + 1 positions; QK^T and AV each cost
  // 2 x heads x head_dim FLOPs per position and layer.
  double positions = u * c + u * (u + 1) / 2;
  double attention = k_.attention_flops_per_position * positions;
  return linear + attention;
}

double CostModel::weight_bytes() const {
  // Every layer's matrices and the LM head; the input embedding is a lookup of a few rows.
  return k_.weight_bytes;
}

double CostModel::prefill_time(uint64_t uncached, uint64_t cached) const {
  if (linear_) {
    double u = double(std::max<uint64_t>(uncached, 1)), ctx = double(cached) + u;
    return (a_ms_ + b_ms_ * u + c_ms_ * u * ctx) * 1e-3 / options_.tensor_parallel +
           options_.overhead_s;
  }
  double compute = prefill_flops(uncached, cached) / k_.flop_rate;
  // Weights once, the cached KV read, the new KV written.
  double bytes =
      weight_bytes() + kv_bytes_per_token_ * double(cached + std::max<uint64_t>(uncached, 1));
  double memory = bytes / k_.byte_rate;
  return std::max(compute, memory) / options_.tensor_parallel + options_.overhead_s;
}

std::optional<uint64_t> CostModel::cached_blocks_to_meet(uint64_t prompt_tokens,
                                                         uint32_t block_tokens,
                                                         double ttft_ms) const {
  if (block_tokens == 0) throw ConfigError("cost model: block tokens must be positive");
  auto ms_with = [&](uint64_t blocks) {
    uint64_t cached = std::min(blocks * block_tokens, prompt_tokens);
    return prefill_time(prompt_tokens - cached, cached) * 1e3;
  };
  // Past `all` blocks the whole prompt is cached and nothing changes. Up to all - 1 blocks at
  // least one token is uncached and the time falls as blocks are added (the new tokens' FLOPs
  // fall, the KV bytes are the whole prompt's either way); the whole prompt cached recomputes
  // its last token after all of it, one attention position and one token's KV more than all but
  // that token cached, so it can be a hair slower than all - 1 blocks when B = 1.
  uint64_t all = prompt_tokens / block_tokens + (prompt_tokens % block_tokens != 0);
  if (all == 0 || ms_with(all - 1) > ttft_ms) {
    if (ms_with(all) <= ttft_ms) return all;
    return std::nullopt;
  }
  uint64_t lo = 0, hi = all - 1;  // the answer is in [lo, hi]; hi meets the target
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (ms_with(mid) <= ttft_ms) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

double CostModel::decode_step_time(uint32_t batch, uint64_t context_tokens) const {
  if (batch == 0) return 0;
  if (linear_)
    return (decode_a_ms_ + decode_b_ms_ * double(context_tokens)) * 1e-3 /
               options_.tensor_parallel +
           options_.overhead_s;
  double compute = decode_flops(batch, context_tokens) / k_.flop_rate;
  double memory = (weight_bytes() + kv_bytes_per_token_ * double(context_tokens)) / k_.byte_rate;
  return std::max(compute, memory) / options_.tensor_parallel + options_.overhead_s;
}

double CostModel::decode_flops(uint32_t batch, uint64_t context_tokens) const {
  // Every projection, MLP and the LM head for each sequence's one new token; attention over the
  // batch's KV.
  return k_.decode_flops_per_sequence * batch +
         k_.attention_flops_per_position * double(context_tokens);
}

void CostModel::add_prefill_chunk(IterationWork& w, uint64_t uncached, uint64_t cached) const {
  uint64_t computed = std::max<uint64_t>(uncached, 1);  // as prefill_time
  if (linear_) {
    // The same expression as prefill_time's, so that one chunk costs exactly prefill_time; the
    // intercept a comes with the first chunk only.
    double u = double(computed), ctx = double(cached) + u;
    w.prefill_linear_ms +=
        w.prefill_chunks == 0 ? a_ms_ + b_ms_ * u + c_ms_ * u * ctx : b_ms_ * u + c_ms_ * u * ctx;
  } else {
    w.prefill_flops += prefill_flops(uncached, cached);  // with the LM head of its last token
  }
  w.prefill_chunks += 1;
  w.kv_read_tokens += cached;
  w.kv_written_tokens += computed;
}

void CostModel::add_decode(IterationWork& w, uint32_t sequences, uint64_t context_tokens) const {
  if (sequences == 0) return;
  w.decode_batch += sequences;
  w.decode_context += context_tokens;
}

double CostModel::iteration_time(const IterationWork& w) const {
  bool prefill = w.prefill_chunks > 0, decode = w.decode_batch > 0;
  if (!prefill && !decode) return 0;
  // Each sum starts at 0 and adds a part only if present, so that an iteration of one part is
  // bit-identical to prefill_time or decode_step_time.
  if (linear_) {
    double ms = 0;
    if (prefill) ms += w.prefill_linear_ms;
    if (decode) ms += decode_a_ms_ + decode_b_ms_ * double(w.decode_context);
    return ms * 1e-3 / options_.tensor_parallel + options_.overhead_s;
  }
  double flops = 0;
  if (prefill) flops += w.prefill_flops;
  if (decode) flops += decode_flops(w.decode_batch, w.decode_context);
  double compute = flops / k_.flop_rate;
  // The weights once for the whole pass; the chunks' cached KV read and new KV written; the
  // decodes' KV read.
  uint64_t kv_tokens =
      (prefill ? w.kv_read_tokens + w.kv_written_tokens : 0) + (decode ? w.decode_context : 0);
  double memory = (weight_bytes() + kv_bytes_per_token_ * double(kv_tokens)) / k_.byte_rate;
  // x / 1 is x: one division fewer per iteration on one GPU (serve mode prices every iteration).
  double seconds = std::max(compute, memory);
  if (options_.tensor_parallel != 1) seconds /= options_.tensor_parallel;
  return seconds + options_.overhead_s;
}

double CostModel::transfer_time(uint64_t blocks, Tier from) const {
  if (from == Tier::kHbm || blocks == 0) return 0;
  return double(blocks) * kv_bytes_per_block() / options_.pcie_bytes_per_s;
}

double CostModel::transfer_time(uint64_t blocks, const LinkSpec& link) const {
  return link_read_time(link, blocks, kv_bytes_per_block(), options_.tensor_parallel);
}

size_t CostModel::blocks_for_bytes(double bytes) const {
  if (bytes <= 0) return 0;
  return static_cast<size_t>(std::floor(bytes / kv_bytes_per_block()));
}

LinearFit CostModel::linear_fit(uint32_t max_tokens) const {
  // Ordinary least squares over an even grid of prompt lengths, nothing cached.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (uint32_t u = 16; u <= std::max<uint32_t>(max_tokens, 32); u += 16) {
    double y = prefill_time(u, 0) * 1e3;
    n += 1;
    sx += u;
    sy += y;
    sxx += double(u) * u;
    sxy += u * y;
  }
  LinearFit fit;
  fit.slope_ms_per_token = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  fit.intercept_ms = (sy - fit.slope_ms_per_token * sx) / n;
  return fit;
}

CostModel CostModel::with_block_tokens(uint32_t block_tokens) const {
  if (block_tokens == 0) throw ConfigError("cost model: block tokens must be positive");
  CostModel m = *this;
  m.options_.block_tokens = block_tokens;
  return m;
}

std::string CostModel::label() const {
  // Tensor parallelism and a KV dtype other than the weights' change every time and capacity in
  // GB, so they name a different model (results with another label are not resumed as these).
  std::string extra;
  if (options_.tensor_parallel > 1) extra += fmt::format("/tp{}", options_.tensor_parallel);
  double weights = linear_ ? 2 : model_.dtype_bytes;
  if (options_.kv_dtype_bytes != 0 && options_.kv_dtype_bytes != weights)
    extra += options_.kv_dtype_bytes == 1 ? "/kv-fp8"
                                          : fmt::format("/kv-{:g}B", options_.kv_dtype_bytes);
  if (linear_)
    return fmt::format("linear(a={:g}ms,b={:g}ms,c={:g}ms){}", a_ms_, b_ms_, c_ms_, extra);
  return model_.name + "@" + gpu_.name + extra;
}

}  // namespace kvpolicy
