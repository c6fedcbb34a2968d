// `kvpolicy routers`: every registered router with its parameters and source.
#include <fmt/format.h>

#include <memory>

#include "command.h"
#include "kvpolicy/route/router.h"

namespace kvpolicy::cli {
namespace {

void add(CLI::App& app) {
  auto* cmd = app.add_subcommand("routers", "list serve-mode routers, parameters and sources");
  auto markdown = std::make_shared<bool>(false);
  cmd->add_flag("--markdown", *markdown,
                "print README.md's router table (name, routes to, source)");
  cmd->callback([markdown] {
    if (*markdown) {
      fmt::print("{}", router_table_markdown());
      return;
    }
    for (auto& r : RouterRegistry::instance().all()) {
      fmt::print("{}\n  {}\n  source: {}{}", r.name, r.summary, r.source,
                 r.randomized ? "\n  randomized: --seed sets its choices" : "");
      if (r.max_workers) fmt::print("\n  workers: at most {}", r.max_workers);
      if (r.needs_future)
        fmt::print("\n  offline: reads the trace's future (a reference, not deployable)");
      fmt::print("\n");
      for (auto& s : r.params)
        fmt::print("  {} ({}, default {}): {}\n      {}\n", s.name, s.type_name(), s.default_value,
                   s.allowed(), s.help);
      fmt::print("\n");
    }
  });
}

CommandRegistrar registrar(61, add);

}  // namespace
}  // namespace kvpolicy::cli
