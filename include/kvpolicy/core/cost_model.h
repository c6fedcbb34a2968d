// The serving cost model: prefill, decode step, continuous-batching iteration and tier-transfer
// times, and KV bytes per token, derived from a model's shape and a GPU's datasheet with stated
// utilisations (or given as a linear fit of measured TTFT). docs/cost-model.md states every
// formula and its sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/core/params.h"
#include "kvpolicy/core/types.h"

namespace kvpolicy {

struct LinkSpec;  // links.h

// A decoder-only transformer with grouped-query attention and a gated (SwiGLU) MLP.
struct ModelShape {
  std::string name;
  uint32_t layers = 0;
  uint32_t hidden = 0;
  uint32_t heads = 0;     // query heads
  uint32_t kv_heads = 0;  // key/value heads (GQA)
  uint32_t head_dim = 0;
  uint32_t intermediate = 0;  // MLP width
  uint32_t vocab = 0;
  double params = 0;       // the published parameter count (a check on the shape)
  double dtype_bytes = 2;  // weights and KV (fp16/bf16 = 2)
  bool tied_embeddings = false;

  // Weights multiplied per token in one layer (q, k, v, o projections and the three MLP
  // matrices); biases and norms are negligible and left out.
  double layer_matmul_params() const;
  // Parameters implied by the shape: layers + input embedding + LM head (unless tied).
  double derived_params() const;
  // K and V of every layer: 2 x layers x kv_heads x head_dim x dtype_bytes.
  double kv_bytes_per_token() const;
};

// The work of one forward pass of continuous batching: prefill chunks and a decode batch. Build
// it with CostModel::add_prefill_chunk and add_decode, price it with CostModel::iteration_time.
struct IterationWork {
  double prefill_flops = 0;  // summed over the iteration's prefill chunks
  // Linear mode: a + sum over the chunks of (b x u + c x u x ctx), in ms; the intercept a is
  // counted once per iteration (added with the first chunk), not once per chunk.
  double prefill_linear_ms = 0;
  uint64_t prefill_chunks = 0;
  uint64_t kv_read_tokens = 0;     // cached context the chunks attend to
  uint64_t kv_written_tokens = 0;  // new tokens whose KV the chunks write
  uint32_t decode_batch = 0;
  uint64_t decode_context = 0;  // KV tokens the decodes read
};

struct GpuSpec {
  std::string name;
  double peak_flops = 0;     // dense fp16/bf16 tensor FLOP/s (no sparsity)
  double mem_bandwidth = 0;  // bytes/s
  double mem_bytes = 0;      // HBM capacity
};

const std::vector<ModelShape>& model_presets();
const std::vector<GpuSpec>& gpu_presets();
// Case-insensitive lookup; throws ConfigError naming the known presets.
const ModelShape& find_model(const std::string& name);
const GpuSpec& find_gpu(const std::string& name);

// TTFT ~ intercept + slope x uncached tokens: the least-squares line through prefill_time(u, 0)
// for u = 16, 32, ..., max_tokens (T-LRU's alpha is the slope). The default range covers chat
// turns: for the presets the line is within 2 % of the model from 500 to 2,500 tokens.
struct LinearFit {
  double intercept_ms = 0;
  double slope_ms_per_token = 0;
};

class CostModel {
 public:
  struct Options {
    double mfu = 0.5;  // model FLOP utilisation in prefill
    double mbu = 0.7;  // memory-bandwidth utilisation
    double pcie_bytes_per_s = 32e9;
    double overhead_s = 0;  // fixed time added to every forward pass (scheduling, sampling)
    uint32_t block_tokens = 16;
    // Bytes per KV value, independent of the weights' dtype (fp8 = 1); 0 = the model's dtype.
    // Linear mode: kv_bytes is taken as 2-byte values and scaled by kv_dtype_bytes / 2.
    double kv_dtype_bytes = 0;
    // GPUs of a tensor-parallel group: weights and KV are sharded across them, so the compute and
    // memory terms of a forward pass are divided by it (overhead_s is not; no communication cost
    // is modelled). A serve-mode worker's KV capacity is tensor_parallel x one GPU's.
    uint32_t tensor_parallel = 1;
  };

  // The default of the simulator: Llama-3.1-8B on one A100-80GB, default options.
  CostModel();
  CostModel(const ModelShape& model, const GpuSpec& gpu, const Options& options);
  // Linear mode: prefill = a + b x uncached + c x uncached x (cached + uncached), in ms;
  // decode step = decode_a + decode_b x context tokens, in ms.
  static CostModel linear(double a_ms, double b_ms, double c_ms, double decode_a_ms,
                          double decode_b_ms, double kv_bytes_per_token, const Options& options);
  // From names and "key=value,..." options (see param_specs()); model "linear" takes the
  // linear coefficients and ignores the GPU. Throws ConfigError.
  static CostModel make(const std::string& model, const std::string& gpu,
                        const std::string& params = "");
  static std::vector<ParamSpec> param_specs();
  static constexpr const char* kDefaultModel = "llama-3.1-8b";
  static constexpr const char* kDefaultGpu = "a100-80gb";

  // Seconds to prefill `uncached` new tokens after `cached` reused ones. At least one token is
  // computed (an engine recomputes the last token of a fully cached prompt to get its logits).
  // This and decode_step_time divide their compute and memory terms by the tensor-parallel
  // degree (not the overhead).
  double prefill_time(uint64_t uncached_tokens, uint64_t cached_tokens) const;
  // The fewest leading blocks of `block_tokens` tokens a prompt of `prompt_tokens` needs cached
  // for prefill_time(uncached, cached) x 1e3 to be <= ttft_ms, with cached = min(c x
  // block_tokens, prompt_tokens) (replay's TTFT of an all-HBM hit); while a token is left
  // uncached, prefill time never rises with more of a fixed prompt cached, so this is a binary
  // search. nullopt when no number of blocks meets it.
  std::optional<uint64_t> cached_blocks_to_meet(uint64_t prompt_tokens, uint32_t block_tokens,
                                                double ttft_ms) const;
  // Seconds for one decode iteration of `batch` sequences holding `context_tokens` KV tokens in
  // total.
  double decode_step_time(uint32_t batch, uint64_t context_tokens) const;
  // One forward pass of continuous batching. add_prefill_chunk adds a chunk of `uncached` new
  // tokens after `cached` ones (at least one token computed, as in prefill_time); add_decode adds
  // `sequences` decoding one token each over `context_tokens` KV tokens in total (0 sequences:
  // nothing). iteration_time (seconds; 0 for empty work) streams the weights once:
  // max(compute, memory) / tp + overhead, with compute = (prefill + decode FLOPs) / (MFU x peak)
  // and memory = (weights + KV read and written) / (MBU x bandwidth). A single chunk costs
  // exactly prefill_time(u, c), a lone decode batch exactly decode_step_time(batch, context).
  // Linear mode: a + the chunks' b x u + c x u x ctx, plus decode_a + decode_b x context when
  // there are decodes, in ms, / tp, + overhead.
  void add_prefill_chunk(IterationWork& w, uint64_t uncached_tokens, uint64_t cached_tokens) const;
  void add_decode(IterationWork& w, uint32_t sequences, uint64_t context_tokens) const;
  double iteration_time(const IterationWork& w) const;
  // Seconds to bring `blocks` into HBM from `from` (0 from HBM; PCIe from DRAM).
  double transfer_time(uint64_t blocks, Tier from) const;
  // Seconds to read `blocks` into HBM over `link` (serve mode's memory tiers, links.h): its
  // latency + blocks x block bytes / (tp x its read bandwidth), each GPU reading its shard.
  double transfer_time(uint64_t blocks, const LinkSpec& link) const;

  double prefill_flops(uint64_t uncached_tokens, uint64_t cached_tokens) const;
  double weight_bytes() const;  // streamed once per forward pass
  double kv_bytes_per_token() const { return kv_bytes_per_token_; }  // in the KV dtype
  double kv_bytes_per_block() const { return kv_bytes_per_token_ * options_.block_tokens; }
  // Blocks that fit in `bytes` of KV memory (floor).
  size_t blocks_for_bytes(double bytes) const;
  LinearFit linear_fit(uint32_t max_tokens = 2048) const;

  bool is_linear() const { return linear_; }
  const ModelShape& model() const { return model_; }
  const GpuSpec& gpu() const { return gpu_; }
  const Options& options() const { return options_; }
  uint32_t block_tokens() const { return options_.block_tokens; }
  // GPUs per worker: serve mode multiplies a worker's KV capacity by it.
  uint32_t tensor_parallel() const { return options_.tensor_parallel; }
  CostModel with_block_tokens(uint32_t block_tokens) const;
  // "llama-3.1-8b@a100-80gb" or "linear(a=..,b=..,c=..)", then "/tp2" and "/kv-fp8" if so.
  std::string label() const;

 private:
  // FLOPs of one decode step (the decode_step_time and iteration_time share it).
  double decode_flops(uint32_t batch, uint64_t context_tokens) const;
  // What the formulas derive from the model, the GPU and the options alone: computed once by
  // the constructors (serve mode prices millions of iterations).
  void derive_constants();
  struct Constants {
    double weight_bytes = 0;
    double decode_flops_per_sequence = 0;  // 2 x (layers' matmul params + LM head)
    double prefill_flops_per_token = 0;    // 2 x layers' matmul params
    double lm_head_flops = 0;
    double attention_flops_per_position = 0;  // 4 x layers x heads x head_dim
    double flop_rate = 0;                     // MFU x peak FLOP/s
    double byte_rate = 0;                     // MBU x memory bandwidth
  };
  Constants k_;

  ModelShape model_;
  GpuSpec gpu_;
  Options options_;
  bool linear_ = false;
  double a_ms_ = 0, b_ms_ = 0, c_ms_ = 0, decode_a_ms_ = 0, decode_b_ms_ = 0;
  double kv_bytes_per_token_ = 0;
};

}  // namespace kvpolicy
