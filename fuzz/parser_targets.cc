// Fuzz targets for the parsers that are not trace readers: LooGLE's Python literals, the
// tokenizers, and a policy spec with its capacity, run on a small workload with every victim
// checked.
#include <optional>
#include <sstream>

#include "fuzz_targets.h"
#include "kvpolicy/cache/cache.h"
#include "kvpolicy/core/capacity.h"
#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/text_trace.h"
#include "python_literal.h"

namespace kvpolicy::fuzz {
namespace {

Verdict parse_literal(std::string_view input) {
  try {
    PyValue v = parse_python_literal(input);
    std::string all;
    v.collect(all);
  } catch (const std::runtime_error&) {
    return Verdict::kRejected;
  }
  return Verdict::kAccepted;
}

std::vector<Seed> literal_seeds() {
  return {
      {"qa", R"([{'Q': "What's in it?", 'A': 'Sentences.', 'S': ['x', 1.5e3, None]}, ('t', True)])",
       Verdict::kAccepted},
      {"escapes", R"({'a\'b': "c\n\x41\u00e9", 'n': -12})", Verdict::kAccepted},
      {"deep", std::string(40000, '['), Verdict::kRejected},
      {"unterminated", "['abc", Verdict::kRejected}};
}

// Every tokenizer on the same text: the pre-tokenizer's pieces tile it exactly, and a BPE
// encoding of non-empty text has between one token and one per byte.
Verdict tokenize(std::string_view text) {
  size_t at = 0;
  for (std::string_view piece : pretokenize(text)) {
    if (piece.data() != text.data() + at || piece.empty())
      broken("pre-tokenizer pieces do not tile the text");
    at += piece.size();
  }
  if (at != text.size()) broken("pre-tokenizer pieces do not cover the text");
  static const auto approx = make_approx_tokenizer();
  static const std::unique_ptr<Tokenizer> bpe = [] {
    std::string path = find_bpe_vocabulary();
    return path.empty() ? nullptr : load_bpe_tokenizer(path);
  }();
  std::vector<uint32_t> tokens;
  approx->encode(text, tokens);
  if (bpe) {
    tokens.clear();
    bpe->encode(text, tokens);
    if (text.empty() != tokens.empty() || tokens.size() > text.size())
      broken("BPE gave " + std::to_string(tokens.size()) + " tokens for " +
             std::to_string(text.size()) + " bytes");
  }
  return Verdict::kAccepted;
}

std::vector<Seed> tokenizer_seeds() {
  return {{"english", "Hello world! It's 2026, isn't it?\n  Numbers: 1234567 and 3.14.", {}},
          {"unicode", "Grüße, 世界 — ½ café\t\u00a0naïve \xF0\x9F\x98\x80 emoji", {}},
          {"invalid-utf8", "ab\xC3\x28 \xFF\xFE cd", {}},
          {"long-word", std::string(25000, 'a'), {}}};
}

// "POLICIES\nCAPACITY[\nDRAM POLICY]": the policies replay a small conversation workload with
// the oracle available and every victim checked; the DRAM tier, when named, is as large as HBM.
Verdict run_policy(std::string_view input) {
  static const Trace trace = [] {
    ConversationParams p;
    p.sessions = 12;
    p.system_tokens_mean = 60;
    return generate_conversation(p, 3);
  }();
  static const Oracle oracle = compute_oracle(trace);
  static const size_t unique = count_unique_blocks(trace);
  std::istringstream in{std::string(input)};
  std::string policies, capacity, dram;
  std::getline(in, policies);
  std::getline(in, capacity);
  std::getline(in, dram);
  std::vector<PolicySpec> specs;
  size_t blocks = 0;
  std::optional<PolicySpec> dram_spec;
  try {
    specs = parse_policy_list(policies);
    blocks = parse_capacity(capacity).blocks(unique, trace.block_tokens,
                                             CostModel().kv_bytes_per_block());
    if (!dram.empty()) dram_spec = parse_policy_spec(dram);
  } catch (const Error&) {
    return Verdict::kRejected;
  }
  // A capacity beyond the workload's blocks replays like one just at it, and must not be sized.
  blocks = std::min(blocks, unique + 1);
  PolicyContext ctx;
  ctx.future = oracle.view(trace);
  Verdict verdict = Verdict::kAccepted;
  for (const PolicySpec& spec : specs) {
    std::unique_ptr<PrefixCache> cache;
    try {
      cache = dram_spec ? std::make_unique<PrefixCache>(blocks, spec, ctx, blocks, *dram_spec)
                        : std::make_unique<PrefixCache>(blocks, spec, ctx);
    } catch (const Error&) {
      verdict = Verdict::kRejected;
      continue;
    }
    cache->set_checking(true);
    try {
      for (size_t r = 0; r < trace.size(); ++r) {
        RequestView request = request_view(trace, r);
        AccessResult a = cache->access(request);
        if (a.hit_blocks > request.blocks.size()) broken(spec.label() + " hits more than asked");
      }
    } catch (const ConfigError&) {
      // What the trace cannot give a policy shows at its first request (lpc's scores): a
      // configuration error with its message, not a finding. Anything else propagates.
      verdict = Verdict::kRejected;
    }
  }
  return verdict;
}

std::vector<Seed> policy_seeds() {
  return {{"classic", "lru,fifo,lfu,sieve,s3fifo,gdsf\n5%\n", Verdict::kAccepted},
          {"learned", "laru:predictor=oracle,fpb:predictor=oracle,belady,hf:c=2\n40\n",
           Verdict::kAccepted},
          {"tiers", "wa\n3%\ns3fifo", Verdict::kAccepted},
          {"tail", "tlru,rlt,lpc,guarded:base=lpc\n10%\n", std::nullopt},
          {"bad-param", "laru:p=2\n5%\n", Verdict::kRejected},
          {"bad-capacity", "lru\n1e300\n", Verdict::kRejected}};
}

}  // namespace

void add_parser_targets(std::vector<FuzzTarget>& targets) {
  targets.push_back(
      {"python-literal", "LooGLE's Python-literal parser", parse_literal, literal_seeds});
  targets.push_back({"tokenizer", "the cl100k pre-tokenizer, BPE (when installed) and approx",
                     tokenize, tokenizer_seeds});
  targets.push_back({"policy", "policy specs, parameters and capacities, replayed with checks",
                     run_policy, policy_seeds});
}

}  // namespace kvpolicy::fuzz
