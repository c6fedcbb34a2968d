// Limits every generator checks before it allocates or writes (internal to the generators).
#pragma once

#include <string>
#include <string_view>

#include "kvpolicy/core/types.h"

namespace kvpolicy {

// An arrival `seconds` after the start as a trace time; a ConfigError naming the generator when
// it passes 2^62 us (a rate so low that the times would overflow).
Time generated_time(double seconds, std::string_view generator);

// A ConfigError naming the generator and `params` when making `requests` requests of
// `blocks_per_request` blocks on average, plus `extra_bytes` of working memory, would pass the
// machine's memory or a trace's 2^32 - 1 requests.
void check_generator_size(std::string_view generator, const std::string& params, double requests,
                          double blocks_per_request, double extra_bytes);

}  // namespace kvpolicy
