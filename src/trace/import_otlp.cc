#include "import_otlp.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <string_view>
#include <unordered_set>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"

namespace kvpolicy {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Nanoseconds since the epoch as ISO 8601 (UTC, microseconds): the civil date of a day count.
std::string iso_from_nanos(int64_t ns) {
  int64_t s = ns / 1'000'000'000, us = (ns % 1'000'000'000) / 1000;
  if (us < 0) us += 1'000'000, --s;
  int64_t days = s / 86400, rem = s % 86400;
  if (rem < 0) rem += 86400, --days;
  // Days since 1970-01-01 into year, month, day (eras of 400 years, March-based years).
  int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", y, m, d, rem / 3600,
                     rem / 60 % 60, rem % 60, us);
}

// An OTLP AnyValue ({"stringValue": ...}, {"intValue": "42"}, ...) as plain JSON.
std::string any_value(element v) {
  object o;
  if (v.get_object().get(o)) return "null";
  std::string_view s;
  element e;
  if (!o.at_key("stringValue").get_string().get(s)) return json_string(s);
  if (!o.at_key("intValue").get(e)) {
    int64_t i;
    if (!e.get_string().get(s)) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
      if (ec == std::errc() && p == s.data() + s.size()) return std::to_string(i);
      return "null";
    }
    return e.is_number() ? simdjson::minify(e) : "null";
  }
  if (!o.at_key("doubleValue").get(e) && e.is_number()) return simdjson::minify(e);
  bool b;
  if (!o.at_key("boolValue").get_bool().get(b)) return b ? "true" : "false";
  object inner;
  array values;
  if (!o.at_key("arrayValue").get_object().get(inner)) {
    std::string out = "[";
    if (!inner.at_key("values").get_array().get(values))
      for (element x : values) out += (out.size() > 1 ? "," : "") + any_value(x);
    return out + "]";
  }
  if (!o.at_key("kvlistValue").get_object().get(inner)) {
    std::string out = "{";
    if (!inner.at_key("values").get_array().get(values))
      for (element kv : values) {
        std::string_view key;
        element val;
        if (kv.at_key("key").get_string().get(key) || kv.at_key("value").get(val)) continue;
        out += (out.size() > 1 ? "," : "") + json_string(key) + ":" + any_value(val);
      }
    return out + "}";
  }
  return "null";
}

// The GenAI spans of one line, each as a JSON object; false if the line is not OTLP/JSON.
bool spans_of(element doc, std::vector<std::string>& out, std::string& why) {
  array resource_spans;
  if (doc.at_key("resourceSpans").get_array().get(resource_spans)) {
    why = "no 'resourceSpans' array: not an OTLP/JSON trace export";
    return false;
  }
  for (element rs : resource_spans) {
    array scope_spans;
    if (rs.at_key("scopeSpans").get_array().get(scope_spans)) continue;
    for (element ss : scope_spans) {
      array spans;
      if (ss.at_key("spans").get_array().get(spans)) continue;
      for (element span : spans) {
        // The span's attributes, then those of its events that it lacks (GenAI conventions
        // from 1.37 may put gen_ai.input.messages on a gen_ai.client.inference.operation.details
        // event rather than on the span).
        std::string fields;
        std::unordered_set<std::string_view> seen;
        bool genai = false;
        auto take = [&](element holder) {
          array attributes;
          if (holder.at_key("attributes").get_array().get(attributes)) return;
          for (element kv : attributes) {
            std::string_view key;
            element val;
            if (kv.at_key("key").get_string().get(key) || kv.at_key("value").get(val)) continue;
            if (!seen.insert(key).second) continue;
            genai |= key.substr(0, 7) == "gen_ai.";
            fields += ", " + json_string(key) + ": " + any_value(val);
          }
        };
        take(span);
        array events;
        if (!span.at_key("events").get_array().get(events))
          for (element event : events) take(event);
        if (!genai) continue;
        std::string_view start, id, trace, name;
        int64_t ns = 0;
        if (span.at_key("startTimeUnixNano").get_string().get(start) ||
            std::from_chars(start.data(), start.data() + start.size(), ns).ec != std::errc()) {
          uint64_t n;
          if (span.at_key("startTimeUnixNano").get_uint64().get(n)) {
            why = "a GenAI span without startTimeUnixNano";
            return false;
          }
          ns = static_cast<int64_t>(n);
        }
        // Absent ids and names stay empty: the span's attributes carry what the import reads.
        if (span.at_key("spanId").get_string().get(id)) id = "";
        if (span.at_key("traceId").get_string().get(trace)) trace = "";
        if (span.at_key("name").get_string().get(name)) name = "";
        out.push_back(fmt::format(
            "{{\"time\": \"{}\", \"trace_id\": {}, \"span_id\": {}, "
            "\"name\": {}{}}}",
            iso_from_nanos(ns), json_string(trace), json_string(id), json_string(name), fields));
      }
    }
  }
  return true;
}

}  // namespace

std::string otlp_spans_to_jsonl(const std::string& path, const std::string& data, bool skip,
                                uint64_t& skipped, std::string& first_skipped,
                                std::vector<uint64_t>& source_lines) {
  simdjson::dom::parser parser;
  std::string out;
  std::vector<std::string> spans;
  uint64_t line_no = 0;
  for (size_t p = 0; p < data.size();) {
    size_t nl = data.find('\n', p);
    if (nl == std::string::npos) nl = data.size();
    std::string_view line(data.data() + p, nl - p);
    p = nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    element doc;
    std::string why;
    spans.clear();
    if (parser.parse(line.data(), line.size()).get(doc))
      why = "not JSON";
    else
      spans_of(doc, spans, why);
    if (!why.empty()) {
      InputError e(path, line_no, "", "OTLP/JSON: " + why);
      if (!skip) throw e;
      if (skipped++ == 0) first_skipped = e.what();
      continue;
    }
    for (const std::string& s : spans) {
      out += s;
      out += '\n';
      source_lines.push_back(line_no);
    }
  }
  if (source_lines.empty())
    throw InputError(path, 0, "",
                     "no span with gen_ai.* attributes (OpenTelemetry's GenAI conventions) in "
                     "this OTLP/JSON");
  return out;
}

}  // namespace kvpolicy
