// docs/doctor.md names every field `kvpolicy doctor --json` writes and every warning code of the
// import's sanity report: a field added to the JSON without its line in the doc fails here.
#include <gtest/gtest.h>

#include <set>

#include "../support/doc_check.h"
#include "kvpolicy/app/doctor.h"

namespace kvpolicy {
namespace {

// Every key of a JSON text (nested objects and arrays included): a string followed by ':'.
// (No std::regex: GCC 12 warns falsely in it under the sanitizer build.)
std::set<std::string> json_keys(const std::string& json) {
  std::set<std::string> keys;
  for (size_t i = 0; (i = json.find('"', i)) != std::string::npos;) {
    size_t end = i + 1;
    while (end < json.size() && json[end] != '"') end += json[end] == '\\' ? 2 : 1;
    if (end + 1 < json.size() && json[end + 1] == ':') keys.insert(json.substr(i + 1, end - i - 1));
    i = end + 1;
  }
  return keys;
}

TEST(DoctorDoc, EveryJsonFieldIsDocumented) {
  std::string doc = testing::read_source_file("docs/doctor.md");
  app::DoctorReport r;
  r.routers.push_back({"random", {}, 0, 0});
  r.remedies.emplace_back();
  r.remedies.back().changes_prompts = true;
  r.within.histogram = {1};
  r.within.causes.push_back({"other", 1, {app::BreakExample{}}});
  r.sanity.warnings.push_back({"one_block_prompts", "x"});
  for (const std::string& k : json_keys(r.to_json()))
    EXPECT_NE(doc.find("`" + k + "`"), std::string::npos) << "docs/doctor.md lacks `" << k << "`";
  for (const char* code :
       {"one_block_prompts", "no_session_reuse", "no_shared_blocks", "rows_sorted", "equal_times",
        "timestamp_or_id", "system_prompt", "reordered", "tokenizer_or_template", "other",
        "answer_missing", "answer_changed"})
    EXPECT_NE(doc.find(std::string("`") + code + "`"), std::string::npos) << code;
}

}  // namespace
}  // namespace kvpolicy
