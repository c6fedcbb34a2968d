// The registry is the one source of the policy list: README.md's table must be what
// `kvpolicy policies --markdown` prints, and docs/policies.md must describe each policy once.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "kvpolicy/policy/policy.h"

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

TEST(PolicyTable, ReadmeMatchesRegistry) {
  const std::string begin = "<!-- policies:begin", end = "<!-- policies:end -->";
  std::string readme = read_source_file("README.md");
  size_t b = readme.find(begin), e = readme.find(end);
  ASSERT_NE(b, std::string::npos) << "README.md has no '" << begin << "' marker";
  ASSERT_NE(e, std::string::npos) << "README.md has no '" << end << "' marker";
  ASSERT_LT(b, e);
  b = readme.find('\n', b) + 1;  // the table starts on the line after the begin marker
  EXPECT_EQ(readme.substr(b, e - b), policy_table_markdown())
      << "README.md's policy table differs from the registry (the .summary and .paper of each "
         "src/policy/*.cc). Regenerate it: replace the lines between the policies:begin and "
         "policies:end markers with the output of `build/kvpolicy policies --markdown`.";
}

// A policy's section is a heading (## or ###) whose first word is its registered name, e.g.
// "## lru" or "### tlru_end — End-Aware T-LRU"; other headings start with a capital letter.
TEST(PolicyTable, PoliciesDocHasOneSectionPerPolicy) {
  std::istringstream doc(read_source_file("docs/policies.md"));
  const std::regex heading(R"(^#{2,3} `?([a-z][a-z0-9_]*)`?( .*)?$)");
  std::map<std::string, int> sections;
  std::string line;
  while (std::getline(doc, line)) {
    std::smatch m;
    if (std::regex_match(line, m, heading)) ++sections[m[1]];
  }
  for (const auto& name : PolicyRegistry::instance().names())
    EXPECT_EQ(sections[name], 1) << "docs/policies.md needs exactly one section '## " << name
                                 << "' (or '### " << name << " — ...')";
  for (const auto& [name, count] : sections)
    EXPECT_NO_THROW(PolicyRegistry::instance().get(name))
        << "docs/policies.md has a section for '" << name << "', which is not a registered policy";
}

}  // namespace
}  // namespace kvpolicy
