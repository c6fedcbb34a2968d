// The one list splitter of the command line and of parameter strings, the one trim of text
// fields, and the one escaping of markdown table cells.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvpolicy {

// Splits "a,b,,c" at `sep` into {"a", "b", "c"}: empty items (doubled or trailing separators) are
// dropped, so every list the CLI takes tolerates them alike.
std::vector<std::string> split_list(std::string_view text, char sep = ',');

// `s` without the blanks (spaces, tabs, carriage returns) at its ends: a CSV cell or a line of a
// text file as written on any platform.
std::string_view trim(std::string_view s);

// `text` as one cell of a markdown table: a '|' inside a cell would end it, so it is escaped.
std::string markdown_cell(std::string_view text);

}  // namespace kvpolicy
