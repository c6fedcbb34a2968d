// Serve's allocation and prefill/decode flags, for `serve` and for `size`, which runs serve mode
// on a deployment (docs/serve.md, "Prefill/decode disaggregation" and "Sizing").
#pragma once

#include <CLI/CLI.hpp>

#include "kvpolicy/serve/serve.h"

namespace kvpolicy::cli {

// --allocation, --prefill-workers, --decode-workers, --decode-router, --kv-link-bandwidth,
// --kv-link-latency, --kv-link, --decode-cache and --kv-transfer into `base`, as serve reads them.
void add_pd_options(CLI::App* cmd, ServeOptions& base);

}  // namespace kvpolicy::cli
