// What the docs tests share: a source file's text, the README block between two markers, and
// the registered names a doc has a section for.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace kvpolicy::testing {

// The text of a file of the source tree (path relative to its root); fails the test if absent.
std::string read_source_file(const std::string& relative);

// The lines of README.md between the line holding `begin` and the line starting with `end`;
// nullopt (and a test failure) if a marker is missing or out of order.
std::optional<std::string> readme_block(const std::string& begin, const std::string& end);

// How many headings name each lowercase identifier: "## name", "### name — ...", with or
// without backquotes, at levels 2 to max_level. Other headings start with a capital letter.
std::map<std::string, int> named_sections(const std::string& doc, int max_level = 2);

}  // namespace kvpolicy::testing
