// OpenTelemetry traces in OTLP/JSON (one ExportTraceServiceRequest per line, as the collector's
// file exporter writes them) as JSONL for `trace import`: one object per span that carries GenAI
// attributes (gen_ai.*), docs/formats.md "Presets". Internal to src/trace (import).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvpolicy {

// One JSON line per GenAI span: "time" (its start, ISO 8601), "trace_id", "span_id", "name" and
// every attribute under its own key ("gen_ai.usage.output_tokens": 42; OTLP's int64 strings as
// numbers). `source_lines[i]` is the log line of output line i + 1. A line that is not OTLP/JSON
// throws an InputError naming path and line, or with `skip` is counted in `skipped` (the first
// error kept); no GenAI span at all throws.
std::string otlp_spans_to_jsonl(const std::string& path, const std::string& data, bool skip,
                                uint64_t& skipped, std::string& first_skipped,
                                std::vector<uint64_t>& source_lines);

}  // namespace kvpolicy
