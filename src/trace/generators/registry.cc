// The workload generators by name, for `kvpolicy trace generate`.
#include <fmt/format.h>

#include <cmath>

#include "generator_limits.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/input_file.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/trace_stream.h"

namespace kvpolicy {

const std::vector<GeneratorInfo>& workload_generators() {
  static const std::vector<GeneratorInfo> all = {
      {"gsp", "groups of prompts sharing a prefix (SGLang generated-shared-prefix)",
       gsp_param_specs(),
       [](const Params& p, uint64_t seed) { return generate_gsp(gsp_params(p), seed); }},
      {"conversation", "multi-turn chat sessions whose turns extend the previous context",
       conversation_param_specs(),
       [](const Params& p, uint64_t seed) {
         return generate_conversation(conversation_params(p), seed);
       }},
      {"agent",
       "tool-using agent sessions: long shared system+tool prefixes, each turn appending a "
       "tool's output after a log-normal tool-call pause (some long)",
       agent_param_specs(),
       [](const Params& p, uint64_t seed) { return generate_agent(agent_params(p), seed); }},
      {"zipf", "Zipf-popular shared prefixes plus unique suffixes (speed tests)",
       zipf_param_specs(),
       [](const Params& p, uint64_t seed) { return generate_zipf(zipf_params(p), seed); }},
  };
  return all;
}

Time generated_time(double seconds, std::string_view generator) {
  double micros = seconds * kMicrosPerSecond;
  if (!(micros < double(kMaxTime)))
    throw ConfigError(
        fmt::format("{}: arrival times pass 2^62 microseconds (146,000 years): "
                    "raise the rate",
                    generator));
  return static_cast<Time>(std::llround(micros));
}

void check_generator_size(std::string_view generator, const std::string& params, double requests,
                          double blocks_per_request, double extra_bytes) {
  if (requests >= double(UINT32_MAX))
    throw ConfigError(fmt::format("{}: {} make {:.3g} requests; a trace holds at most 2^32 - 1",
                                  generator, params, requests));
  double bytes =
      requests * (kTraceBytesPerRequest + blocks_per_request * kTraceBytesPerBlock) + extra_bytes;
  require_memory(bytes >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes),
                 fmt::format("{}: {}", generator, params));
}

Trace generate_workload(const std::string& kind, const std::string& params, uint64_t seed) {
  for (auto& g : workload_generators())
    if (g.name == kind) return g.make(Params::parse(params, g.params, "generator " + kind), seed);
  std::string known;
  for (auto& g : workload_generators()) known += (known.empty() ? "" : ", ") + g.name;
  throw ConfigError("unknown workload kind '" + kind + "' (known: " + known + ")");
}

}  // namespace kvpolicy
