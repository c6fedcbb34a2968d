// The libFuzzer executable: KVPOLICY_FUZZ_TARGET names the target it fuzzes (`make fuzz` runs
// each in turn; `kvpolicy_fuzz_seeds --list` names them), so one link serves them all.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "fuzz_targets.h"

namespace {
const kvpolicy::fuzz::FuzzTarget* target = nullptr;
// Verdicts, printed at exit for tools/fuzz.sh's table: how many inputs read, how many were
// rejected with a message.
size_t accepted = 0, rejected = 0;
void print_verdicts() {
  std::fprintf(stderr, "kvpolicy-fuzz: accepted %zu rejected %zu\n", accepted, rejected);
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("KVPOLICY_FUZZ_TARGET");
  try {
    target = &kvpolicy::fuzz::fuzz_target(name ? name : "");
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "set KVPOLICY_FUZZ_TARGET to a target (kvpolicy_fuzz_seeds --list): %s\n",
                 e.what());
    std::exit(2);
  }
  std::atexit(print_verdicts);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto verdict = target->run({reinterpret_cast<const char*>(data), size});
  ++(verdict == kvpolicy::fuzz::Verdict::kAccepted ? accepted : rejected);
  return 0;
}
