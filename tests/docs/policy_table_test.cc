// The registry is the one source of the policy list: README.md's table must be what
// `kvpolicy policies --markdown` prints, and docs/policies.md must describe each policy once.
#include <gtest/gtest.h>

#include "kvpolicy/policy/policy.h"
#include "support/doc_check.h"

namespace kvpolicy {
namespace {

TEST(PolicyTable, ReadmeMatchesRegistry) {
  auto table = testing::readme_block("<!-- policies:begin", "<!-- policies:end -->");
  ASSERT_TRUE(table);
  EXPECT_EQ(*table, policy_table_markdown())
      << "README.md's policy table differs from the registry (the .summary and .paper of each "
         "src/policy/*.cc). Regenerate it: replace the lines between the policies:begin and "
         "policies:end markers with the output of `build/kvpolicy policies --markdown`.";
}

// A policy's section is a heading (## or ###) whose first word is its registered name, e.g.
// "## lru" or "### tlru_end — End-Aware T-LRU".
TEST(PolicyTable, PoliciesDocHasOneSectionPerPolicy) {
  auto sections =
      testing::named_sections(testing::read_source_file("docs/policies.md"), /*max_level=*/3);
  for (const auto& name : PolicyRegistry::instance().names())
    EXPECT_EQ(sections[name], 1) << "docs/policies.md needs exactly one section '## " << name
                                 << "' (or '### " << name << " — ...')";
  for (const auto& [name, count] : sections)
    EXPECT_NO_THROW(PolicyRegistry::instance().get(name))
        << "docs/policies.md has a section for '" << name << "', which is not a registered policy";
}

}  // namespace
}  // namespace kvpolicy
