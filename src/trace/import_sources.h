// `trace import`'s readers of the two file formats, each handing its rows to the importer.
// Internal to src/trace (import.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "import_rows.h"
#include "kvpolicy/trace/import.h"

namespace kvpolicy {

using OnRow = std::function<void(const RowSource&)>;
// Each mapped (target name, column).
using MappedColumns = std::vector<std::pair<std::string, std::string>>;
// The mapped columns of `map` as (target, column) pairs, in the targets' order
// (import_mapping.cc).
MappedColumns mapped_columns(const ImportMapping& map);

// CSV (RFC 4180) rows of `data`, the whole of `path` decompressed; bad rows skipped and counted
// with opts.skip_bad_lines.
void import_csv(const std::string& path, std::string data, const MappedColumns& columns,
                const ImportOptions& opts, const OnRow& on_row, ImportReport& report);

// JSONL records of `data`: one per line, or with map.id, the lines of each request id joined
// (import_join.h).
// `source_lines` (optional): the log's line of each line of `data`, when `data` was converted
// from another format (import_otlp.h), so errors name the log's lines.
void import_jsonl(const std::string& path, const std::string& data, const MappedColumns& columns,
                  const ImportOptions& opts, const OnRow& on_row, ImportReport& report,
                  const std::vector<uint64_t>* source_lines = nullptr);

}  // namespace kvpolicy
