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

// The `study` command: the paper reproductions (docs/results/README.md), one file each; created
// by whichever comes first.
CLI::App* study_command(CLI::App& app);

// A study's file adds it under a parent with a name and returns it. It is added as
// `kvpolicy study NAME` and, for one release, as its old top-level OLD_NAME too: hidden from
// --help, the same options and output, and one notice on stderr saying the new spelling.
using AddStudy = std::function<CLI::App*(CLI::App& parent, const std::string& name)>;

struct StudyRegistrar {
  StudyRegistrar(int order, const std::string& name, const std::string& old_name, AddStudy add);
};

}  // namespace kvpolicy::cli
