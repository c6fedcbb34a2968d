#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <exception>
#include <vector>

#include "command.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/numbers.h"
#include "kvpolicy_version.h"
#include "mpi_comm.h"

namespace kvpolicy::cli {
std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}

CLI::App* trace_command(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == "trace") return sub;
  CLI::App* trace =
      app.add_subcommand("trace", "trace tools: stats, convert, build, import, generate");
  trace->require_subcommand(1);
  return trace;
}

CLI::App* study_command(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == "study") return sub;
  CLI::App* study = app.add_subcommand(
      "study", "paper reproductions: robustness, tail, wa, lpc, route (`kvpolicy study --help`)");
  study->require_subcommand(1);
  return study;
}

StudyRegistrar::StudyRegistrar(int order, const std::string& name, const std::string& old_name,
                               AddStudy add) {
  commands().push_back({order, [=](CLI::App& app) {
                          add(*study_command(app), name);
                          if (old_name.empty()) return;  // a study born under `study`
                          CLI::App* old = add(app, old_name);
                          old->group("");  // hidden from --help
                          old->preparse_callback([=](size_t) {
                            fmt::print(stderr, "kvpolicy: `{}` is now `kvpolicy study {}`\n",
                                       old_name, name);
                          });
                        }});
}

namespace {

// Every numeric option of every command, by its type: the one reading of numbers
// (core/numbers.h), before CLI11's own, which takes "-1" as 2^64 - 1, "0x10" as 16, "nan" and
// an out-of-range integer as its largest value.
void check_numbers(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    std::string type = opt->get_type_name();
    bool is_uint = type.rfind("UINT", 0) == 0, is_int = !is_uint && type.rfind("INT", 0) == 0;
    bool is_float = type.rfind("FLOAT", 0) == 0;
    if (!is_uint && !is_int && !is_float) continue;
    opt->check(CLI::Validator(
        [=](std::string& text) -> std::string {
          bool ok = is_uint  ? read_uint(text).has_value()
                    : is_int ? read_int(text).has_value()
                             : read_number(text).has_value();
          if (ok) return "";
          return fmt::format("'{}' is not {}", text,
                             is_uint  ? "a whole number (decimal digits, at most 2^64 - 1)"
                             : is_int ? "a whole number (decimal digits, an optional '-')"
                                      : "a finite decimal number");
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) check_numbers(*sub);
}

// Ctrl-C or a kill leaves no half-written output's temporary behind; then the signal's own
// ending, so the exit status still says how the run ended.
void remove_temporaries_and_exit(int sig) {
  remove_temporary_outputs();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace
}  // namespace kvpolicy::cli

int main(int argc, char** argv) {
  using namespace kvpolicy;
  CLI::App app{
      "kvpolicy: eviction policies for the KV prefix cache of LLM serving, on real traces"};
  app.set_version_flag("--version,-V", KVPOLICY_VERSION);
  for (int sig : {SIGINT, SIGTERM}) ::signal(sig, cli::remove_temporaries_and_exit);
  app.require_subcommand(1);
  auto& cmds = cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& c : cmds) c.add(app);
  cli::check_numbers(app);
  // After parsing, before the command runs: an output onto an input would destroy the input.
  app.parse_complete_callback([&app] { cli::refuse_outputs_onto_inputs(app); });
  // CLI11 takes an unknown first word for a stray argument and says "A subcommand is required",
  // which hides the typo.
  auto subs = app.get_subcommands({});
  if (argc > 1 && argv[1][0] != '-' && std::none_of(subs.begin(), subs.end(), [&](CLI::App* sub) {
        return sub->check_name(argv[1]);
      })) {
    std::string names;
    for (CLI::App* sub : subs)  // the shown ones, not the old names kept for a release
      if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();
    fmt::print(stderr, "kvpolicy: error: unknown command '{}'; the commands are: {}\n", argv[1],
               names);
    return 2;
  }
  // Several ranks of any other command would each run all of it into the same files.
  std::string command = argc > 1 ? argv[1] : "";
  if (cli::mpi_launched_size() > 1 && command != "simulate" && command != "serve" &&
      command != "mrc") {
    fmt::print(stderr,
               "kvpolicy: error: under mpirun only simulate, serve and mrc share their work "
               "between ranks; run `{}` as one process\n",
               command);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const Error& e) {
    fmt::print(stderr, "kvpolicy: error: {}\n", e.what());
    cli::mpi_abort_on_error(2);  // the other ranks of an mpirun would wait forever
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kvpolicy: internal error: {}\n", e.what());
    cli::mpi_abort_on_error(3);
    return 3;
  }
  return 0;
}
