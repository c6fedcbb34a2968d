// Options that name files a command reads or writes, so that no output is ever written over an
// input (docs/formats.md, "Outputs").
#pragma once

#include <CLI/CLI.hpp>

namespace kvpolicy::cli {

// Marks an option (or positional) whose values are files the command reads / writes; returns it.
CLI::Option* input_file(CLI::Option* opt);
CLI::Option* output_file(CLI::Option* opt);

// After parsing, before the command runs: throws ConfigError when an output of the command given
// is one of its inputs or another of its outputs, compared as files, not spellings (./x,
// dir/../x, a symlink, a hard link; an output not created yet by its directory and name).
void refuse_outputs_onto_inputs(CLI::App& app);

}  // namespace kvpolicy::cli
