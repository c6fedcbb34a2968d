// ImportOptions::keep_prompts (for kvpolicy doctor): each row's line, text and token ids, moved
// with the rows when the import sorts them by time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kvpolicy/trace/import.h"

namespace kvpolicy {
namespace {

TEST(ImportKeepPrompts, KeepsLineTextAndTokensInTheTracesOrder) {
  auto path = (std::filesystem::temp_directory_path() /
               ("kvpolicy_keep_prompts." + std::to_string(getpid()) + ".jsonl"))
                  .string();
  std::ofstream(path) << "{\"t\": 3, \"text\": \"third\"}\n"
                         "{\"t\": 1, \"text\": \"first one\"}\n"
                         "\n"
                         "{\"t\": 2, \"text\": \"second\"}\n";
  auto tok = make_approx_tokenizer();
  ImportOptions opts;
  opts.map = parse_import_mapping("time=t,text=text");
  opts.tokenizer = tok.get();
  ImportReport rep;
  import_trace(path, opts, rep);
  EXPECT_TRUE(rep.prompts.empty());  // opt-in only
  opts.keep_prompts = true;
  Trace t = import_trace(path, opts, rep);
  ASSERT_EQ(rep.prompts.size(), 3u);
  EXPECT_EQ(rep.prompts[0].text, "first one");
  EXPECT_EQ(rep.prompts[0].line, 2u);
  EXPECT_EQ(rep.prompts[1].line, 4u);
  EXPECT_EQ(rep.prompts[2].text, "third");
  for (size_t r = 0; r < t.size(); ++r) EXPECT_EQ(rep.prompts[r].tokens.size(), t.prompt_tokens[r]);
}

}  // namespace
}  // namespace kvpolicy
