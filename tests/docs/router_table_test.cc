// The registry is the one source of the router list: README.md's table must be what
// `kvpolicy routers --markdown` prints, and docs/routers.md must describe each router once.
#include <gtest/gtest.h>

#include "kvpolicy/route/router.h"
#include "support/doc_check.h"

namespace kvpolicy {
namespace {

TEST(RouterTable, ReadmeMatchesRegistry) {
  auto table = testing::readme_block("<!-- routers:begin", "<!-- routers:end -->");
  ASSERT_TRUE(table);
  EXPECT_EQ(*table, router_table_markdown())
      << "README.md's router table differs from the registry (the .summary and .source of each "
         "src/route/*.cc). Regenerate it: replace the lines between the routers:begin and "
         "routers:end markers with the output of `build/kvpolicy routers --markdown`.";
}

TEST(RouterTable, RoutersDocHasOneSectionPerRouter) {
  auto sections = testing::named_sections(testing::read_source_file("docs/routers.md"));
  for (const auto& r : RouterRegistry::instance().all())
    EXPECT_EQ(sections[r.name], 1)
        << "docs/routers.md needs exactly one section '## " << r.name << "'";
  for (const auto& [name, count] : sections)
    EXPECT_NO_THROW(RouterRegistry::instance().get(name))
        << "docs/routers.md has a section for '" << name << "', which is not a registered router";
}

}  // namespace
}  // namespace kvpolicy
