#include "fuzz_targets.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace kvpolicy::fuzz {

const std::vector<FuzzTarget>& fuzz_targets() {
  static const std::vector<FuzzTarget> targets = [] {
    std::vector<FuzzTarget> t;
    add_trace_targets(t);
    add_parser_targets(t);
    return t;
  }();
  return targets;
}

const FuzzTarget& fuzz_target(std::string_view name) {
  for (const FuzzTarget& t : fuzz_targets())
    if (t.name == name) return t;
  throw std::invalid_argument("no fuzz target named '" + std::string(name) + "'");
}

void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

namespace {

struct ScratchFiles {
  std::map<std::string, std::string> paths;  // suffix -> path
  ~ScratchFiles() {
    for (auto& [suffix, path] : paths) std::remove(path.c_str());
  }
};

}  // namespace

const std::string& scratch_file(std::string_view bytes, const char* suffix) {
  static ScratchFiles files;
  std::string& path = files.paths[suffix];
  if (path.empty()) {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/kvpolicy-fuzz-" +
           std::to_string(::getpid()) + suffix;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) broken("cannot write the scratch file " + path);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) broken("cannot write the scratch file " + path);
  return path;
}

}  // namespace kvpolicy::fuzz
