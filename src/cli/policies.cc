// `kvpolicy policies`: every registered policy with its parameters and paper.
#include <fmt/format.h>

#include <memory>

#include "command.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy::cli {
namespace {

void add(CLI::App& app) {
  auto* cmd = app.add_subcommand("policies", "list eviction policies, parameters and papers");
  auto markdown = std::make_shared<bool>(false);
  cmd->add_flag("--markdown", *markdown, "print README.md's policy table (name, evicts, source)");
  cmd->callback([markdown] {
    if (*markdown) {
      fmt::print("{}", policy_table_markdown());
      return;
    }
    for (auto& p : PolicyRegistry::instance().all()) {
      fmt::print("{}\n  {}\n  source: {}{}{}\n", p.name, p.summary, p.paper,
                 p.needs_future ? "\n  offline: reads the trace's future" : "",
                 p.randomized ? "\n  randomized: --seed sets its choices" : "");
      // From each declaration: name, type, default, what it accepts, then the help.
      for (auto& s : p.params)
        fmt::print("  {} ({}, default {}): {}\n      {}\n", s.name, s.type_name(), s.default_value,
                   s.allowed(), s.help);
      fmt::print("\n");
    }
  });
}

CommandRegistrar registrar(60, add);

}  // namespace
}  // namespace kvpolicy::cli
