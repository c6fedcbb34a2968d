// `kvpolicy cost-model`: the numbers a cost-model preset derives (FLOPs, bytes, times).
#include <fmt/format.h>

#include "command.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy::cli {
namespace {

struct CostArgs {
  std::string model = CostModel::kDefaultModel;
  std::string gpu = CostModel::kDefaultGpu;
  std::string params;
  std::string tokens = "16,128,512,1024,2048,4096,8192,32768";
  uint64_t cached = 0;
  bool list = false;
};

std::vector<uint64_t> parse_tokens(const std::string& text) {
  std::vector<uint64_t> out;
  for (const std::string& item : split_list(text)) {
    std::optional<uint64_t> v = read_uint(item);
    if (!v) throw ConfigError("--tokens: '" + item + "' is not a token count");
    out.push_back(*v);
  }
  if (out.empty()) throw ConfigError("--tokens: no token count given");
  return out;
}

void print_presets() {
  fmt::print("models:\n");
  for (auto& m : model_presets())
    fmt::print(
        "  {:<14} {:>2} layers, hidden {:>5}, heads {:>2}/{:<2} (q/kv) x {}, MLP {:>5}, vocab "
        "{:>6}, {:.2f}B params\n",
        m.name, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.intermediate, m.vocab,
        m.params / 1e9);
  fmt::print("GPUs:\n");
  for (auto& g : gpu_presets())
    fmt::print("  {:<10} {:>7.1f} TFLOP/s dense fp16/bf16, {:>6.0f} GB/s, {:.0f} GB\n", g.name,
               g.peak_flops / 1e12, g.mem_bandwidth / 1e9, g.mem_bytes / 1e9);
  fmt::print("linear: --model linear --cost-params a_ms=..,b_ms=..,c_ms=..,kv_bytes=..\n");
  fmt::print("any: --cost-params kv_dtype=auto|fp16|bf16|fp8,tp=N (tensor-parallel GPUs)\n");
}

std::string kv_dtype_text(const CostModel& cost) {
  double bytes = cost.options().kv_dtype_bytes;
  if (bytes == 0) return "auto (the model's)";
  return bytes == 1 ? "fp8" : bytes == 2 ? "fp16/bf16" : fmt::format("{:g} bytes", bytes);
}

void run(const CostArgs& a) {
  if (a.list) return print_presets();
  CostModel cost = CostModel::make(a.model, a.gpu, a.params);
  auto tokens = parse_tokens(a.tokens);
  const auto& o = cost.options();
  uint32_t tp = cost.tensor_parallel();
  fmt::print(
      "cost model {}: MFU {:g}, MBU {:g}, PCIe {:g} GB/s, overhead {:g} ms, {} tokens a "
      "block, KV dtype {}, tensor parallel {}\n",
      cost.label(), o.mfu, o.mbu, o.pcie_bytes_per_s / 1e9, o.overhead_s * 1e3, cost.block_tokens(),
      kv_dtype_text(cost), tp);
  if (tp > 1)
    fmt::print(
        "  a worker is {} GPUs: compute and memory time / {}, KV capacity x {} (no communication "
        "cost modelled)\n",
        tp, tp, tp);
  double kv = cost.kv_bytes_per_token();
  if (!cost.is_linear()) {
    const ModelShape& m = cost.model();
    fmt::print("model: {} layers, hidden {}, {} query / {} KV heads of {}, MLP {}, vocab {}\n",
               m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.intermediate, m.vocab);
    fmt::print("  parameters: {:.3f}B from the shape, {:.3f}B published ({:+.2f}%)\n",
               m.derived_params() / 1e9, m.params / 1e9, (m.derived_params() / m.params - 1) * 100);
    fmt::print("  weights streamed per forward pass: {:.2f} GB\n", cost.weight_bytes() / 1e9);
    const GpuSpec& g = cost.gpu();
    fmt::print("GPU: {} TFLOP/s dense, {} GB/s, {} GB\n", g.peak_flops / 1e12,
               g.mem_bandwidth / 1e9, g.mem_bytes / 1e9);
    // The weights are sharded across the tp GPUs: the group's memory less one copy of them.
    double free = tp * g.mem_bytes - cost.weight_bytes();
    if (free > 0)
      fmt::print("  memory left for KV after the weights{}: {:.1f} GB = {} blocks ({} tokens)\n",
                 tp > 1 ? fmt::format(" on the {} GPUs", tp) : "", free / 1e9,
                 cost.blocks_for_bytes(free), cost.blocks_for_bytes(free) * cost.block_tokens());
    else
      fmt::print("  the weights do not fit in {} x {} GB\n", tp, g.mem_bytes / 1e9);
  }
  fmt::print(
      "KV cache: {:.0f} bytes a token ({:.1f} KiB, {:.3f} MB), {:.2f} MiB a block; 1 GB "
      "holds {} blocks\n",
      kv, kv / 1024, kv / 1e6, cost.kv_bytes_per_block() / (1 << 20), cost.blocks_for_bytes(1e9));
  LinearFit fit = cost.linear_fit();
  fmt::print(
      "linear fit of TTFT over 16..2048 uncached tokens: {:.3f} ms + {:.5f} ms a token "
      "(T-LRU's alpha)\n\n",
      fit.intercept_ms, fit.slope_ms_per_token);
  fmt::print("{:>9} {:>9} {:>12} {:>11} {:>10} {:>11} {:>12}\n", "uncached", "cached", "TFLOP",
             "compute ms", "memory ms", "prefill ms", "tokens/s");
  for (uint64_t u : tokens) {
    double t = cost.prefill_time(u, a.cached);
    double compute = 0, memory = 0;
    if (!cost.is_linear()) {
      compute = cost.prefill_flops(u, a.cached) / (o.mfu * cost.gpu().peak_flops) / tp;
      memory = (cost.weight_bytes() + kv * double(a.cached + std::max<uint64_t>(u, 1))) /
               (o.mbu * cost.gpu().mem_bandwidth) / tp;
    }
    fmt::print("{:>9} {:>9} {:>12.3f} {:>11.2f} {:>10.2f} {:>11.2f} {:>12.0f}\n", u, a.cached,
               cost.is_linear() ? 0.0 : cost.prefill_flops(u, a.cached) / 1e12, compute * 1e3,
               memory * 1e3, t * 1e3, double(std::max<uint64_t>(u, 1)) / t);
  }
  fmt::print("\ndecode step: batch 1 at 1k context {:.2f} ms; batch 32 at 32 x 1k {:.2f} ms\n",
             cost.decode_step_time(1, 1024) * 1e3, cost.decode_step_time(32, 32 * 1024) * 1e3);
  IterationWork mixed;
  cost.add_prefill_chunk(mixed, 2048, 0);
  cost.add_decode(mixed, 32, 32 * 1024);
  fmt::print(
      "continuous batching: one pass of a 2k prefill chunk + that batch of 32 {:.2f} ms (apart: "
      "{:.2f} + {:.2f} ms)\n",
      cost.iteration_time(mixed) * 1e3, cost.prefill_time(2048, 0) * 1e3,
      cost.decode_step_time(32, 32 * 1024) * 1e3);
  fmt::print("DRAM -> HBM transfer: {:.3f} ms a block, {:.3f} ms for 1000 tokens\n",
             cost.transfer_time(1, Tier::kDram) * 1e3,
             cost.transfer_time(1, Tier::kDram) * 1e3 * 1000 / cost.block_tokens());
}

void add(CLI::App& app) {
  auto args = std::make_shared<CostArgs>();
  auto* cmd = app.add_subcommand("cost-model", "print the serving cost model's derived numbers");
  cmd->add_option("--model", args->model, "model preset, or 'linear'")->capture_default_str();
  cmd->add_option("--gpu", args->gpu, "GPU preset")->capture_default_str();
  std::string keys;
  for (auto& p : CostModel::param_specs())
    keys += fmt::format("\n  {}={} {}", p.name, p.default_value, p.help);
  cmd->add_option("--cost-params", args->params, "options, key=value,...:" + keys);
  cmd->add_option("--tokens", args->tokens, "uncached prompt lengths to tabulate")
      ->capture_default_str();
  cmd->add_option("--cached", args->cached, "cached tokens before them")->capture_default_str();
  cmd->add_flag("--list", args->list, "list the model and GPU presets");
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(32, add);

}  // namespace
}  // namespace kvpolicy::cli
