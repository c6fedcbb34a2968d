// The sanity report after an import (app::import_sanity, docs/doctor.md): its numbers on a small
// hand-made trace, and each warning on a planted degenerate log.
#include "kvpolicy/app/import_sanity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kvpolicy/app/import.h"

namespace kvpolicy::app {
namespace {

bool warns(const SanityReport& s, const std::string& code) {
  for (const SanityWarning& w : s.warnings)
    if (w.code == code) return true;
  return false;
}

// Imports `csv` (columns t, s, toks) with 4-token blocks and returns the summary.
ImportSummary import_csv(const std::string& name, const std::string& csv) {
  auto dir =
      std::filesystem::temp_directory_path() / ("kvpolicy_sanity_test." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream((dir / (name + ".csv")).string()) << "t,s,toks\n" << csv;
  ImportSpec spec;
  spec.input = (dir / (name + ".csv")).string();
  spec.out = (dir / (name + ".kvtrace")).string();
  spec.map = "time=t,session=s,tokens=toks";
  spec.opts.block_tokens = 4;
  return import_to_native(spec);
}

TEST(ImportSanity, CountsLengthsSessionsAndTheIdealHitRate) {
  // Session a: turn 2 extends turn 1 (2 blocks shared); b: one request sharing a's first block.
  ImportSummary s = import_csv("counts",
                               "1,a,1 2 3 4 5 6 7 8\n"
                               "2,b,1 2 3 4 9 9\n"
                               "3,a,1 2 3 4 5 6 7 8 10 11 12 13\n");
  const SanityReport& r = s.sanity;
  EXPECT_EQ(r.prompts, 3u);
  EXPECT_EQ(r.tokens_median, 8u);
  EXPECT_EQ(r.tokens_p99, 12u);
  EXPECT_EQ(r.blocks_median, 2u);
  EXPECT_EQ(r.blocks_p99, 3u);
  EXPECT_EQ(r.sessions, 2u);
  EXPECT_EQ(r.turns_max, 2u);
  EXPECT_EQ(r.session_pairs, 1u);
  EXPECT_EQ(r.session_pairs_sharing, 1u);
  // 7 block accesses, 3 hits (b's first block, a's first two); tokens 4 + 8 of 26.
  EXPECT_DOUBLE_EQ(r.ideal_block_hit_rate, 3.0 / 7);
  EXPECT_DOUBLE_EQ(r.ideal_token_hit_rate, 12.0 / 26);
  EXPECT_TRUE(r.warnings.empty()) << r.text();
  EXPECT_NE(r.text().find("ideal (infinite-cache) hit rate 42.9% of blocks, 46.2% of tokens"),
            std::string::npos)
      << r.text();
}

TEST(ImportSanity, PromptsOfOneBlockWarn) {
  SanityReport r = import_csv("short", "1,a,1 2 3\n2,a,1 2 3 4\n3,b,1 2\n4,c,5 6 7 8 9\n").sanity;
  EXPECT_EQ(r.one_block_prompts, 3u);
  EXPECT_TRUE(warns(r, "one_block_prompts")) << r.text();
}

TEST(ImportSanity, SessionsThatNeverRepeatTheirPrefixWarn) {
  SanityReport r = import_csv("noreuse",
                              "1,a,1 2 3 4 5 6 7 8\n2,a,9 9 9 9 5 6 7 8\n"
                              "3,b,1 2 3 4 5 6 7 8\n4,b,8 8 8 8 1 1 1 1\n")
                       .sanity;
  EXPECT_EQ(r.session_pairs, 2u);
  EXPECT_EQ(r.session_pairs_sharing, 0u);
  EXPECT_TRUE(warns(r, "no_session_reuse")) << r.text();
  EXPECT_FALSE(warns(r, "no_shared_blocks"));  // b's first turn repeats a's
}

TEST(ImportSanity, NoSharedBlockWarns) {
  SanityReport r = import_csv("noshare", "1,a,1 2 3 4 5\n2,b,6 7 8 9 10\n3,c,11 12 13 14\n").sanity;
  EXPECT_EQ(r.ideal_block_hit_rate, 0);
  EXPECT_TRUE(warns(r, "no_shared_blocks")) << r.text();
}

TEST(ImportSanity, UnsortedAndEqualTimesWarn) {
  ImportSummary s = import_csv("unsorted", "2,a,1 2 3 4 5\n1,b,1 2 3 4 6\n");
  EXPECT_TRUE(s.sorted);
  EXPECT_TRUE(warns(s.sanity, "rows_sorted")) << s.sanity.text();
  EXPECT_FALSE(warns(s.sanity, "equal_times"));
  SanityReport same = import_csv("same", "5,a,1 2 3 4 5\n5,b,1 2 3 4 6\n").sanity;
  EXPECT_TRUE(warns(same, "equal_times")) << same.text();
  EXPECT_FALSE(warns(same, "rows_sorted"));
}

}  // namespace
}  // namespace kvpolicy::app
