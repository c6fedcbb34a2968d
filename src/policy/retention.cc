// hinted: the Retention wrapper (retention.h, where its rule is stated) registered with the inner
// policy named by its parameters. Replay and serve put every policy behind it when requests carry
// retention hints; naming it is for tests and for a default priority other than 35.
#include "retention.h"

#include "kvpolicy/policy/policy.h"

namespace kvpolicy {
namespace {

const bool registered = register_policy<Retention>({
    .name = "hinted",
    .summary = "retention hints first (strict priority levels 0-100, a duration from release; "
               "TensorRT-LLM's semantics), the inner policy's victim (inner=...) within the "
               "default level",
    .paper = "TensorRT-LLM KvCacheRetentionConfig",
    .params = {param_string("inner", "lru", "the policy that orders the default level"),
               param_string("inner_params", "",
                            "its parameters, ';' between them: predictor=noisy;p=0.5"),
               param_int("default_priority", 35, {.min = 0, .max = 100},
                         "the priority of a block without a hint"),
               param_double("synthetic", 0, {.min = 0, .max = 1},
                            "tests: hint this share of blocks (by key hash) whatever the "
                            "requests say, with priorities and durations from the hash")},
    .variants = {"synthetic=0.5", "inner=s3fifo,synthetic=0.5", "inner=wa,synthetic=0.5",
                 "inner=sieve,synthetic=0.3", "inner=guarded,synthetic=0.5",
                 "inner=belady,synthetic=0.4"},
    .needs_future = true,  // when the inner policy does
    .needs_future_with =
        [](const Params& p) {
          return needs_future(PolicySpec{p.get_string("inner"),
                                         semicolons_to_commas(p.get_string("inner_params"))});
        },
    .in_sets = false,  // without hints it is its inner policy: lru by default
});

}  // namespace
}  // namespace kvpolicy
