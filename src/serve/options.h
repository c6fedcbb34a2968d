// Serve mode's options as a run checks them and as its result echoes them.
#pragma once

#include "kvpolicy/serve/serve.h"

namespace kvpolicy::serve_detail {

// Throws ConfigError naming the option that is out of range.
void check_options(const Trace& trace, const ServeOptions& o);

}  // namespace kvpolicy::serve_detail
