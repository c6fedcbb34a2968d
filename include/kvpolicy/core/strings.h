// The one list splitter of the command line and of parameter strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvpolicy {

// Splits "a,b,,c" at `sep` into {"a", "b", "c"}: empty items (doubled or trailing separators) are
// dropped, so every list the CLI takes tolerates them alike.
std::vector<std::string> split_list(std::string_view text, char sep = ',');

}  // namespace kvpolicy
