// `trace import`'s times: the --time-unit of a column, and a cell into microseconds. Internal to
// src/trace (import.cc); parse_iso8601_micros, which tests use too, is declared in import.h.
#pragma once

#include <string>
#include <string_view>

#include "kvpolicy/core/types.h"

namespace kvpolicy::import_time {

enum class Unit { kSeconds, kMillis, kMicros, kNanos, kIso };

// "s", "ms", "us", "ns" or "iso"; throws ConfigError naming the choices.
Unit parse_unit(const std::string& unit);
// A time cell into microseconds, or an error message (empty on success).
std::string parse_time(std::string_view s, Unit unit, Time& out);

}  // namespace kvpolicy::import_time
