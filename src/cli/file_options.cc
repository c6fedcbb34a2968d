#include "file_options.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/file_identity.h"

namespace kvpolicy::cli {
namespace {

enum class Role { kInput, kOutput };

// Options are created once, at start-up, on the main thread.
std::map<const CLI::Option*, Role>& roles() {
  static std::map<const CLI::Option*, Role> all;
  return all;
}

struct NamedFile {
  std::string flag, path;
  FileIdentity id;
};

// The files the options of `app` and of its subcommands given name, by role: a value given, or
// the option's default when it was not.
void collect(CLI::App& app, std::vector<NamedFile>& inputs, std::vector<NamedFile>& outputs) {
  for (const CLI::Option* opt : app.get_options()) {
    auto it = roles().find(opt);
    if (it == roles().end()) continue;
    std::vector<std::string> values = opt->results();
    if (opt->count() == 0 && !opt->get_default_str().empty()) values = {opt->get_default_str()};
    for (const std::string& value : values)
      if (std::optional<FileIdentity> id = file_identity(value))
        (it->second == Role::kInput ? inputs : outputs).push_back({opt->get_name(), value, *id});
  }
  for (CLI::App* sub : app.get_subcommands()) collect(*sub, inputs, outputs);
}

}  // namespace

CLI::Option* input_file(CLI::Option* opt) {
  roles()[opt] = Role::kInput;
  return opt;
}

CLI::Option* output_file(CLI::Option* opt) {
  roles()[opt] = Role::kOutput;
  return opt;
}

void refuse_outputs_onto_inputs(CLI::App& app) {
  std::vector<NamedFile> inputs, outputs;
  collect(app, inputs, outputs);
  for (size_t o = 0; o < outputs.size(); ++o) {
    const NamedFile& out = outputs[o];
    for (const NamedFile& in : inputs)
      if (out.id == in.id)
        throw ConfigError("the output '" + out.path + "' (" + out.flag + ") is the input '" +
                          in.path + "' (" + in.flag + "); write to another file");
    for (size_t other = 0; other < o; ++other)
      if (out.id == outputs[other].id)
        throw ConfigError("the outputs '" + outputs[other].path + "' (" + outputs[other].flag +
                          ") and '" + out.path + "' (" + out.flag +
                          ") are one file; give each its own");
  }
}

}  // namespace kvpolicy::cli
