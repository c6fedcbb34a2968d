// The RLT paper's routing study (docs/routers.md): routers x eviction policies
// on a cluster, over GSP in its three orders, multi-turn conversations and long-document QA.
#pragma once

#include <string>
#include <vector>

#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

struct StudyWorkload {
  std::string name;  // gsp-random, gsp-round_robin, gsp-grouped, sharegpt, chatbot-arena, loogle
  Trace trace;
};

struct RouteStudyWorkloadOptions {
  std::string data_dir;    // KVPOLICY_DATA's layout; text workloads are skipped without it
  std::string gsp_params;  // extra "key=value,..." for the GSP generator
  std::string tokenizer = "auto";
  uint64_t seed = 1;
  uint64_t max_conversations = 0;  // 0 = all
};

// The workloads a study names ("all" = every one available). A text workload whose dataset is
// missing is left out with a line in *skipped. Throws ConfigError for an unknown name.
std::vector<StudyWorkload> route_study_workloads(const std::vector<std::string>& names,
                                                 const RouteStudyWorkloadOptions& options,
                                                 std::vector<std::string>* skipped);
std::vector<std::string> route_study_workload_names();

}  // namespace kvpolicy
