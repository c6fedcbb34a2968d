// Replay's result fields, each declared once: name, type, unit and meaning, and how it is written
// to JSON, read back (resume, merge, distributed runs) and put in a CSV column. ReplayResult's
// to_json, parse_result_json and the commands' CSV all go through it; docs/formats.md's
// "Result JSON" table is checked against it by a test, and Python's dicts are the JSON's.
#pragma once

#include <string>
#include <vector>

#include "kvpolicy/sim/sim.h"
#include "kvpolicy/trace/result_field.h"

namespace kvpolicy {

using ResultField = ResultFieldOf<ReplayResult>;

// Every field, in the order the JSON writes them.
const std::vector<ResultField>& replay_result_fields();
// The field named `name`; throws Error for an unknown one.
const ResultField& replay_result_field(const std::string& name);
// The CSV columns, in their order (the JSON's main fields).
const std::vector<std::string>& replay_csv_columns();

}  // namespace kvpolicy
