// `kvpolicy study route`: the RLT paper's comparison of routers x eviction policies on a cluster
// of workers, over GSP in its three orders, conversations and long-document QA.
#include "kvpolicy/serve/route_study.h"

#include <fmt/format.h>

#include <cstdlib>

#include "command.h"
#include "common.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"
#include "serve_args.h"

namespace kvpolicy::cli {
namespace {

const ServeResult* find(const std::vector<ServeResult>& results, const std::string& router,
                        const std::string& policy) {
  for (auto& r : results)
    if (r.router == router && r.policy == policy && r.router_params.empty() && r.params.empty())
      return &r;
  return nullptr;
}

// The paper's headline comparisons against Cache-Aware+LRU (SGLang's router), where present.
void print_against_baseline(const std::vector<ServeResult>& results) {
  const ServeResult* base = find(results, "cache_aware", "lru");
  if (!base) return;
  for (auto [router, policy] :
       {std::pair{"cache_aware", "rlt"}, std::pair{"lbgr", "lru"}, std::pair{"lbgr", "rlt"}}) {
    const ServeResult* r = find(results, router, policy);
    if (!r) continue;
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    fmt::print(
        "  {}+{} vs cache_aware+lru: median TTFT {:.2f}x lower, median e2e {:.2f}x lower, P95 "
        "TTFT {:.2f}x lower, hit rate {:+.1f} points, throughput {:+.1f} %\n",
        router, policy, ratio(base->ttft_ms.p50, r->ttft_ms.p50),
        ratio(base->e2e_ms.p50, r->e2e_ms.p50), ratio(base->ttft_ms.p95, r->ttft_ms.p95),
        (r->block_hit_rate - base->block_hit_rate) * 100,
        (ratio(r->throughput_rps, base->throughput_rps) - 1) * 100);
  }
}

CLI::App* add(CLI::App& parent, const std::string& name) {
  auto args = std::make_shared<ServeArgs>();
  args->routers = "";  // every registered router
  args->policies = "lru,rlt";
  args->workers = "4";
  args->capacities = "200000t";  // the paper's KV cache per worker
  args->cost.gpu = "l40";
  args->base.rate = 12;
  auto workloads = std::make_shared<std::string>("gsp-random,gsp-round_robin,gsp-grouped");
  auto wopts = std::make_shared<RouteStudyWorkloadOptions>();
  auto* cmd = parent.add_subcommand(
      name,
      "routers x eviction policies on a cluster (the RLT paper's study): GSP in three orders, "
      "conversations, long-document QA");
  cmd->add_option("--workloads", *workloads,
                  "comma-separated: gsp-random, gsp-round_robin, gsp-grouped, sharegpt, "
                  "chatbot-arena, loogle, or all")
      ->capture_default_str();
  cmd->add_option("--data", wopts->data_dir,
                  "the traces directory (default $KVPOLICY_DATA) for the text workloads");
  cmd->add_option("--gsp", wopts->gsp_params,
                  "GSP generator options, key=value,... (see `kvpolicy generate --help`)");
  cmd->add_option("--tokenizer", wopts->tokenizer, "tokenizer of the text workloads")
      ->capture_default_str();
  cmd->add_option("--max-conversations", wopts->max_conversations,
                  "text workloads: at most this many conversations (0 = all)");
  args->add(cmd);
  cmd->get_option("--router")
      ->description("routers, comma-separated (default: every online router)");
  cmd->callback([cmd, args, workloads, wopts] {
    if (args->routers.empty()) {
      for (const std::string& name : online_router_names())  // offline ones are references
        args->routers += (args->routers.empty() ? "" : ",") + name;
    }
    args->validate();
    args->say_ignored(*cmd);
    if (args->resume && args->json_path.empty()) throw ConfigError("--resume needs --json FILE");
    if (wopts->data_dir.empty() && std::getenv("KVPOLICY_DATA"))
      wopts->data_dir = std::getenv("KVPOLICY_DATA");
    wopts->seed = args->base.seed;
    std::vector<std::string> skipped;
    auto studies = route_study_workloads(split_list(*workloads), *wopts, &skipped);
    for (auto& s : skipped) fmt::print(stderr, "kvpolicy study route: skipped {}\n", s);
    CostModel cost = args->cost_model();
    ServeArgs each = *args;
    for (auto& study : studies) {
      auto results = app::serve_sweep(study.trace, each, "route-study " + study.name);
      each.resume = !each.json_path.empty();  // later workloads append to the same file
      fmt::print("\n== {} ==\n", study.name);
      print_serve_table(study.trace, results, cost);
      print_against_baseline(results);
    }
  });
  return cmd;
}

StudyRegistrar registrar(66, "route", "route-study", add);

}  // namespace
}  // namespace kvpolicy::cli
