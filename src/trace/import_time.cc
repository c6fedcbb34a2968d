// `trace import`'s times: units, cells into microseconds, ISO 8601 date-times (import_time.h).
#include "import_time.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/trace/import.h"

namespace kvpolicy {
namespace {

// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Reads exactly `n` digits at `s[i]`.
bool digits(std::string_view s, size_t& i, size_t n, unsigned& out) {
  if (i + n > s.size()) return false;
  out = 0;
  for (size_t k = 0; k < n; ++k) {
    char c = s[i + k];
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<unsigned>(c - '0');
  }
  i += n;
  return true;
}

}  // namespace

bool parse_iso8601_micros(std::string_view s, Time& micros) {
  s = trim(s);
  size_t i = 0;
  unsigned year, month, day, hour, minute, second = 0;
  if (!digits(s, i, 4, year) || i >= s.size() || s[i++] != '-' || !digits(s, i, 2, month) ||
      i >= s.size() || s[i++] != '-' || !digits(s, i, 2, day))
    return false;
  if (i >= s.size() || (s[i] != 'T' && s[i] != 't' && s[i] != ' ')) return false;
  ++i;
  if (!digits(s, i, 2, hour) || i >= s.size() || s[i++] != ':' || !digits(s, i, 2, minute))
    return false;
  if (i < s.size() && s[i] == ':') {
    ++i;
    if (!digits(s, i, 2, second)) return false;
  }
  int64_t frac_micros = 0;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    ++i;
    size_t start = i;
    int64_t scale = 100000;
    bool round_up = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (scale >= 1) {
        frac_micros += (s[i] - '0') * scale;
        scale /= 10;
      } else if (i - start == 6) {
        round_up = s[i] >= '5';  // the digit after the microseconds rounds
      }
    }
    if (i == start) return false;
    frac_micros += round_up;
  }
  int64_t offset_minutes = 0;
  if (i < s.size()) {
    if (s[i] == 'Z' || s[i] == 'z') {
      ++i;
    } else if (s[i] == '+' || s[i] == '-') {
      int sign = s[i++] == '-' ? -1 : 1;
      unsigned oh, om = 0;
      if (!digits(s, i, 2, oh)) return false;
      if (i < s.size() && s[i] == ':') ++i;
      if (i < s.size() && !digits(s, i, 2, om)) return false;
      if (oh > 23 || om > 59) return false;
      offset_minutes = sign * static_cast<int64_t>(oh * 60 + om);
    }
  }
  if (i != s.size()) return false;
  static constexpr unsigned kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1] ||
      (month == 2 && day == 29 && !leap) || hour > 23 || minute > 59 || second > 59)
    return false;
  int64_t secs = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second -
                 offset_minutes * 60;
  micros = secs * kMicrosPerSecond + frac_micros;
  return true;
}

namespace import_time {

Unit parse_unit(const std::string& unit) {
  if (unit == "s") return Unit::kSeconds;
  if (unit == "ms") return Unit::kMillis;
  if (unit == "us") return Unit::kMicros;
  if (unit == "ns") return Unit::kNanos;
  if (unit == "iso") return Unit::kIso;
  throw ConfigError("time unit '" + unit + "': expected s, ms, us, ns or iso");
}

std::string parse_time(std::string_view s, Unit unit, Time& out) {
  s = trim(s);
  const char* unit_name = unit == Unit::kSeconds  ? "seconds"
                          : unit == Unit::kMillis ? "milliseconds"
                          : unit == Unit::kMicros ? "microseconds"
                                                  : "nanoseconds";
  if (unit != Unit::kIso && !s.empty()) {
    const char* end = s.data() + s.size();
    int64_t whole;
    auto [p, ec] = std::from_chars(s.data(), end, whole);
    if (p == end && ec == std::errc()) {  // integers exactly: nanosecond clocks pass 2^53
      if (whole < 0) return "negative";
      constexpr int64_t kScale[] = {1'000'000, 1'000, 1};
      if (unit == Unit::kNanos) {
        out = whole / 1000 + (whole % 1000 >= 500);
      } else if (__builtin_mul_overflow(whole, kScale[static_cast<int>(unit)], &out) ||
                 out >= kMaxTime) {
        return "too large: times stay below 2^62 microseconds";
      }
      return "";
    }
    if (ec == std::errc::result_out_of_range && p == end)
      return "too large for a time in microseconds (int64)";
    double d;
    auto [q, ec2] = std::from_chars(s.data(), end, d);
    if (q == end && ec2 == std::errc() && std::isfinite(d)) {
      if (d < 0) return "negative";
      constexpr double kPerUnit[] = {1e6, 1e3, 1, 1e-3};
      double micros = d * kPerUnit[static_cast<int>(unit)];
      if (!(micros < double(kMaxTime))) return "too large: times stay below 2^62 microseconds";
      out = static_cast<Time>(std::llround(micros));
      return "";
    }
  }
  if (parse_iso8601_micros(s, out)) return "";
  if (unit == Unit::kIso) return "expected an ISO 8601 date-time, e.g. 2025-01-01T12:00:00.123Z";
  return fmt::format("expected a number of {} or an ISO 8601 date-time", unit_name);
}

}  // namespace import_time
}  // namespace kvpolicy
