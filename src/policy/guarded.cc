// guarded: the Guarded class (guarded.h, where its rule and bound are stated) registered with
// the inner policy named by its parameters.
#include "guarded.h"

#include "kvpolicy/policy/policy.h"

namespace kvpolicy {
namespace {

const bool registered = register_policy<Guarded>({
    .name = "guarded",
    .summary = "any policy's victim (inner=...) unless it caused a score-induced miss, lost "
               "trust, or would exceed a miss budget against a shadow LRU: then LRU's "
               "(misses <= ratio x LRU's + slack x k)",
    .paper = "made here, after LARU (LCR paper, Algorithm 1)",
    .params = {param_string("inner", "lru", "the guarded policy's name"),
               param_string("inner_params", "",
                            "its parameters, ';' between them: predictor=noisy;p=0.5"),
               param_double("b", 2, {.min = 1, .min_exclusive = true},
                            "trust lambda is divided by b on score-induced misses"),
               param_int("halve_every", 0, {.min = 0},
                         "divide lambda every this many such misses in a phase (0 = k/32)"),
               param_bool("trust", false,
                          "take the inner's victim only among the max(floor(lambda n), 1) least "
                          "recently used evictable leaves (false: lambda is not used)"),
               param_bool("budget", true,
                          "enforce misses + debt <= ratio x shadow LRU's misses + slack x k "
                          "(false: no bound against LRU)"),
               param_double("ratio", 1, {.min = 1}, "the budget's factor on LRU's misses"),
               param_double("slack", 0.1, {.min = 0},
                            "the budget's additive slack, in multiples of the capacity k"),
               param_double("allowance", 0, {.min = 0, .max = 1},
                            "the budget's misses allowed per block requested: hit rate at most "
                            "this (plus slack x k / accesses) below LRU's")},
    .variants = {"inner=fpb", "inner=fpb,inner_params=predictor=noisy;p=1", "inner=wa",
                 "inner=fpb,inner_params=predictor=noisy;p=0.5,trust=true,halve_every=1",
                 "inner=fpb,inner_params=predictor=noisy;p=0.5,ratio=1.5,slack=0"},
    .needs_future = true,  // when the inner policy does
    .needs_future_with =
        [](const Params& p) {
          return needs_future(PolicySpec{p.get_string("inner"),
                                         semicolons_to_commas(p.get_string("inner_params"))});
        },
});

}  // namespace
}  // namespace kvpolicy
