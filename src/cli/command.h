// Subcommands register themselves; main.cc only parses and dispatches.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace kvpolicy::cli {

struct Command {
  int order;  // position in --help
  std::function<void(CLI::App&)> add;
};

std::vector<Command>& commands();

// The `trace` command, which several files add subcommands to; created by whichever comes first.
CLI::App* trace_command(CLI::App& app);

struct CommandRegistrar {
  CommandRegistrar(int order, std::function<void(CLI::App&)> add) {
    commands().push_back({order, std::move(add)});
  }
};

}  // namespace kvpolicy::cli
