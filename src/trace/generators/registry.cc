// The workload generators by name, for `kvpolicy trace generate`.
#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"

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
      {"zipf", "Zipf-popular shared prefixes plus unique suffixes (speed tests)",
       zipf_param_specs(),
       [](const Params& p, uint64_t seed) { return generate_zipf(zipf_params(p), seed); }},
  };
  return all;
}

Trace generate_workload(const std::string& kind, const std::string& params, uint64_t seed) {
  for (auto& g : workload_generators())
    if (g.name == kind) return g.make(Params::parse(params, g.params, "generator " + kind), seed);
  std::string known;
  for (auto& g : workload_generators()) known += (known.empty() ? "" : ", ") + g.name;
  throw ConfigError("unknown workload kind '" + kind + "' (known: " + known + ")");
}

}  // namespace kvpolicy
