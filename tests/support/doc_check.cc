#include "support/doc_check.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace kvpolicy::testing {

std::string read_source_file(const std::string& relative) {
  std::string path = std::string(KVPOLICY_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::string> readme_block(const std::string& begin, const std::string& end) {
  std::string readme = read_source_file("README.md");
  size_t b = readme.find(begin), e = readme.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) {
    ADD_FAILURE() << "README.md needs the markers '" << begin << "' and then '" << end << "'";
    return std::nullopt;
  }
  b = readme.find('\n', b) + 1;  // the block starts on the line after the begin marker
  return readme.substr(b, e - b);
}

std::map<std::string, int> named_sections(const std::string& doc, int max_level) {
  const std::regex heading("^#{2," + std::to_string(max_level) +
                           R"(} `?([a-z][a-z0-9_]*)`?( .*)?$)");
  std::map<std::string, int> sections;
  std::istringstream in(doc);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, heading)) ++sections[m[1]];
  }
  return sections;
}

}  // namespace kvpolicy::testing
