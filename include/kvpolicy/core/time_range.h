// The times a trace may hold, for the boundaries that take times from outside the readers.
#pragma once

#include "kvpolicy/core/types.h"

namespace kvpolicy {

// In [0, kMaxTime): every reader keeps times so (types.h), and policies add intervals to them;
// the C++ API (PolicyTree::begin_request, an OracleView) checks a caller's times against it.
constexpr bool valid_time(Time t) { return t >= 0 && t < kMaxTime; }

}  // namespace kvpolicy
