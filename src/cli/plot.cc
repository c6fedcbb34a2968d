#include "plot.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"

extern char** environ;

namespace kvpolicy::cli {
namespace {

// Where a script of the Python package is: $KVPOLICY_SCRIPTS, else beside this executable, in
// its build tree (python/kvpolicy/) or where `cmake --install` put it (the directory of
// KVPOLICY_PLOT_SCRIPT, relative to the binary's directory). Never the source tree.
std::string script_path(const std::string& name) {
  if (const char* dir = std::getenv("KVPOLICY_SCRIPTS")) return std::string(dir) + "/" + name;
  std::error_code ec;
  const std::filesystem::path bin =
      std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  const std::filesystem::path built = bin / "python/kvpolicy" / name;
  if (!ec && std::filesystem::exists(built)) return built.string();
  return (bin / std::filesystem::path(KVPOLICY_PLOT_SCRIPT).parent_path() / name)
      .lexically_normal()
      .string();
}

}  // namespace

void run_plot_script(const std::string& name, const std::string& json, const std::string& png) {
  const std::string python = "/usr/bin/python3", script = script_path(name);
  if (access(python.c_str(), X_OK) != 0)
    throw ConfigError(
        "--plot needs /usr/bin/python3 with matplotlib (Debian: apt-get install "
        "python3-matplotlib)");
  if (!std::filesystem::exists(script))
    throw ConfigError("--plot: " + script + " is absent (set KVPOLICY_SCRIPTS to a directory " +
                      "holding " + name + ", such as python/kvpolicy/ of kvpolicy's sources)");
  std::vector<std::string> args = {python, script, json, png};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The table printed so far goes out before the script's own line, not after it.
  std::fflush(stdout);
  pid_t pid = 0;
  if (posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
    throw Error("--plot: cannot run " + python);
  int status = 0;
  waitpid(pid, &status, 0);
  // The script names the package to install when matplotlib is missing (on its stderr).
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("--plot: " + script + " failed (see its message above)");
}

void write_rows_and_plot(const std::vector<std::string>& rows, const std::string& json_path,
                         const std::string& plot_path, const std::string& script_name) {
  std::string json = json_path;
  if (json.empty() && !plot_path.empty())
    json = (std::filesystem::temp_directory_path() /
            fmt::format("kvpolicy-{}-{}.jsonl", std::filesystem::path(script_name).stem().string(),
                        getpid()))
               .string();
  if (json.empty()) return;
  std::string out;
  for (const std::string& row : rows) out += row + '\n';
  write_file_atomically(json, out);
  if (plot_path.empty()) return;
  run_plot_script(script_name, json, plot_path);
  if (json_path.empty()) std::filesystem::remove(json);
}

}  // namespace kvpolicy::cli
