// What `kvpolicy policies` prints, from the registry (apart from policy.h, which nearly every
// source includes).
#pragma once

#include <string>

namespace kvpolicy {

// Per policy: its summary, source, whether it is offline (as needs_future() answers for its
// defaults, with a registered variant of the other kind) and its parameters' declarations.
std::string policy_listing();

}  // namespace kvpolicy
