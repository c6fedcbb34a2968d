// The project's fuzz targets: what each does with one input, and the seed inputs it starts from.
// The libFuzzer executables (fuzzer_main.cc, `make fuzz`) and the unit tests share them, so every
// target also runs over its seeds in `make test` and under the sanitizers.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvpolicy::fuzz {

// What became of an input. Rejected = a kvpolicy::Error (a clear message naming what is wrong);
// any other exception, a crash, a sanitizer report or a broken invariant is a finding.
enum class Verdict { kAccepted, kRejected };

struct Seed {
  std::string name;
  std::string bytes;
  std::optional<Verdict> expect;  // what a unit test checks it gets; none = either
};

struct FuzzTarget {
  std::string name;
  std::string covers;  // what it exercises, for `make fuzz`'s table
  std::function<Verdict(std::string_view input)> run;
  std::function<std::vector<Seed>()> seeds;
};

const std::vector<FuzzTarget>& fuzz_targets();
// Throws std::invalid_argument for an unknown name.
const FuzzTarget& fuzz_target(std::string_view name);

// An invariant an accepted input broke: aborts with `what`, which libFuzzer reports as a crash
// (and a unit test as a death).
[[noreturn]] void broken(const std::string& what);

// The input as a file, for readers that take a path: one scratch file per process, rewritten per
// input, removed at exit.
const std::string& scratch_file(std::string_view bytes, const char* suffix = "");

// Defined in trace_targets.cc and parser_targets.cc.
void add_trace_targets(std::vector<FuzzTarget>& targets);
void add_parser_targets(std::vector<FuzzTarget>& targets);

}  // namespace kvpolicy::fuzz
