// `kvpolicy policies`: every registered policy with its parameters and paper.
#include <fmt/format.h>

#include <memory>

#include "command.h"
#include "kvpolicy/policy/listing.h"
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
    fmt::print("{}", policy_listing());
  });
}

CommandRegistrar registrar(60, add);

}  // namespace
}  // namespace kvpolicy::cli
