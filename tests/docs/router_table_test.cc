// The registry is the one source of the router list: README.md's table must be what
// `kvpolicy routers --markdown` prints, and docs/routers.md must describe each router once.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "kvpolicy/route/router.h"

namespace kvpolicy {
namespace {

std::string read_source_file(const std::string& relative) {
  std::string path = std::string(KVPOLICY_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RouterTable, ReadmeMatchesRegistry) {
  const std::string begin = "<!-- routers:begin", end = "<!-- routers:end -->";
  std::string readme = read_source_file("README.md");
  size_t b = readme.find(begin), e = readme.find(end);
  ASSERT_NE(b, std::string::npos) << "README.md has no '" << begin << "' marker";
  ASSERT_NE(e, std::string::npos) << "README.md has no '" << end << "' marker";
  ASSERT_LT(b, e);
  b = readme.find('\n', b) + 1;  // the table starts on the line after the begin marker
  EXPECT_EQ(readme.substr(b, e - b), router_table_markdown())
      << "README.md's router table differs from the registry (the .summary and .source of each "
         "src/route/*.cc). Regenerate it: replace the lines between the routers:begin and "
         "routers:end markers with the output of `build/kvpolicy routers --markdown`.";
}

// A router's section is a heading "## name"; other headings start with a capital letter.
TEST(RouterTable, RoutersDocHasOneSectionPerRouter) {
  std::istringstream doc(read_source_file("docs/routers.md"));
  const std::regex heading(R"(^## `?([a-z][a-z0-9_]*)`?( .*)?$)");
  std::map<std::string, int> sections;
  std::string line;
  while (std::getline(doc, line)) {
    std::smatch m;
    if (std::regex_match(line, m, heading)) ++sections[m[1]];
  }
  for (const auto& r : RouterRegistry::instance().all())
    EXPECT_EQ(sections[r.name], 1)
        << "docs/routers.md needs exactly one section '## " << r.name << "'";
  for (const auto& [name, count] : sections)
    EXPECT_NO_THROW(RouterRegistry::instance().get(name))
        << "docs/routers.md has a section for '" << name << "', which is not a registered router";
}

}  // namespace
}  // namespace kvpolicy
