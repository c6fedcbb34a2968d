// Serve mode's result fields, each declared once (trace/result_field.h): ServeResult's to_json
// and parse_serve_result go through them, and docs/formats.md's serve tables are checked against
// them by a test.
#pragma once

#include <vector>

#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/result_field.h"

namespace kvpolicy {

using ServeResultField = ResultFieldOf<ServeResult>;

// Every field, in the order the JSON writes them.
const std::vector<ServeResultField>& serve_result_fields();

}  // namespace kvpolicy
