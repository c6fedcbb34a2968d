// Replay's result fields, each declared once: name, type, unit and meaning, and how it is written
// to JSON, read back (resume, merge, distributed runs) and put in a CSV column. ReplayResult's
// to_json, parse_result_json and the commands' CSV all go through it; docs/formats.md's
// "Result JSON" table is checked against it by a test, and Python's dicts are the JSON's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/json_record.h"

namespace kvpolicy {

struct ResultField {
  std::string name;
  std::string type;  // as docs/formats.md writes it: string, int, number, bool, number or null, ...
  std::string unit;  // "ms", "s", "GB", "blocks", ... or "" (a count, a share, a name)
  std::string description;
  // Adds the field to a JSON object (nothing when it is optional and absent).
  std::function<void(const ReplayResult&, JsonObject&)> write;
  // Reads it back; empty for a field derived from others (model_fitted).
  std::function<void(const JsonRecord&, ReplayResult&)> read;
  // Its CSV cell, unquoted; empty when it is not a CSV column.
  std::function<std::string(const ReplayResult&)> csv;
};

// Every field, in the order the JSON writes them.
const std::vector<ResultField>& replay_result_fields();
// The field named `name`; throws Error for an unknown one.
const ResultField& replay_result_field(const std::string& name);
// The CSV columns, in their order (the JSON's main fields).
const std::vector<std::string>& replay_csv_columns();

}  // namespace kvpolicy
