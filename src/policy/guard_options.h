// The guard's rules (guarded and auto's selector): docs/policies.md, "guarded".
#pragma once

#include <cstdint>

#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

// The guard's rules, as guarded's parameters of the same names set them (docs/policies.md).
struct GuardOptions {
  double b = 2;
  int64_t halve_every = 0;  // 0 = k/32
  bool trust = false, budget = true;
  double ratio = 1, slack = 0.1;
  // Misses allowed above LRU's per block requested: the budget grows with the trace, so a hit
  // rate is never more than `allowance` (plus slack x k over the accesses) below LRU's.
  double allowance = 0;
  // Rule 2 (a detected score-induced miss takes LRU's victim); the bound needs only rule 4.
  bool induced = true;
  // Keep the order in the treap even without trust (tests: the list path's victims equal it).
  bool treap = false;
  // Tests: check the kept shadow-membership bits against lookups at each use.
  bool check = false;
  static GuardOptions of(const Params& p) {
    GuardOptions o{p.get_double("b"),    p.get_int("halve_every"), p.get_bool("trust"),
                   p.get_bool("budget"), p.get_double("ratio"),    p.get_double("slack")};
    o.allowance = p.get_double("allowance");
    return o;
  }
};

}  // namespace kvpolicy
