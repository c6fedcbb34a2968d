// `trace import` of a log of lengths only (Azure's LLM inference trace): refused with what is
// missing and what would supply it, never imported as one-token prompts, and imported under
// `--assume` with every logged length kept (docs/formats.md, "Length-only logs").
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/assumed_prompts.h"
#include "kvpolicy/trace/import.h"
#include "kvpolicy/trace/text_trace.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::input_error;
using testing::write_file;

const char* kLengthsMap = "time=TIMESTAMP,prompt_tokens=ContextTokens,output=GeneratedTokens";

const char* kAzureHead =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:15:46.6805900,374,44\n"
    "2023-11-16 18:15:50.9951690,396,109\n"
    "2023-11-16 18:15:51.2000000,879,12\n"
    "2023-11-16 18:15:49.0000000,91,16\n";

Trace import(const std::string& path, const std::string& map,
             std::optional<std::string> assume = std::nullopt, ImportReport* report = nullptr,
             const Tokenizer* tok = nullptr) {
  ImportOptions o;
  o.map = parse_import_mapping(map, "", assume.has_value());
  o.assume = assume;
  o.tokenizer = tok;
  ImportReport local;
  return import_trace(path, o, report ? *report : local);
}

// What the refusal must say: what is missing, what would supply it, and the way to assume it.
void expect_explained(const std::string& what) {
  for (const char* part :
       {"token counts cannot say which requests do",
        "Missing: the prompts' content or the engine's block hashes", "text=COLUMN",
        "tokens=COLUMN", "hashes=COLUMN", "block-hash log", "--assume MODEL"})
    EXPECT_NE(what.find(part), std::string::npos) << part << " not in: " << what;
}

TEST(ImportLengths, ALengthOnlyMappingWithoutAssumeIsRefusedAndExplained) {
  try {
    parse_import_mapping(kLengthsMap);
    ADD_FAILURE() << "a mapping of lengths only was accepted";
  } catch (const ConfigError& e) {
    expect_explained(e.what());
    EXPECT_NE(std::string(e.what()).find("no --assume"), std::string::npos) << e.what();
  }
  // Parsed for an import with a model, but imported without one: still refused.
  std::string path = write_file("azure.csv", kAzureHead);
  ImportOptions o;
  o.map = parse_import_mapping(kLengthsMap, "", true);
  ImportReport rep;
  try {
    import_trace(path, o, rep);
    ADD_FAILURE() << "a log of lengths only was imported without a model";
  } catch (const ConfigError& e) {
    expect_explained(e.what());
  }
}

TEST(ImportLengths, LengthsAsTokensOrTextAreRefusedEvenWhenOnlyMostRowsAreOneNumber) {
  std::string all = write_file("azure.csv", kAzureHead);
  std::string what =
      input_error([&] { import(all, "time=TIMESTAMP,tokens=ContextTokens"); }).what();
  EXPECT_NE(what.find("every row's prompt is one number"), std::string::npos) << what;
  expect_explained(what);
  auto tok = make_approx_tokenizer();
  what = input_error([&] {
           import(all, "time=TIMESTAMP,text=ContextTokens", std::nullopt, nullptr, tok.get());
         }).what();
  expect_explained(what);
  // Three of four rows a number: lengths with a stray prompt, still not 1-token prompts.
  std::string most = write_file("most.csv", "t,p\n0,374\n1,396\n2,5 6 7 8\n3,91\n");
  what = input_error([&] { import(most, "time=t,tokens=p"); }).what();
  EXPECT_NE(what.find("3 of 4 rows' prompts are one number"), std::string::npos) << what;
  std::string most_text = write_file("most_text.csv", "t,p\n0,374\n1,hello there\n2,12\n");
  what = input_error([&] {
           import(most_text, "time=t,text=p", std::nullopt, nullptr, tok.get());
         }).what();
  EXPECT_NE(what.find("2 of 3 rows' prompts are one number"), std::string::npos) << what;
}

TEST(ImportLengths, AssumeImportsEveryLengthAsLogged) {
  std::string path = write_file("azure.csv", kAzureHead);
  ImportReport rep;
  Trace t = import(path, kLengthsMap, "system=128,turns=2", &rep);
  // Sorted by time: the fourth row (18:15:49) comes second.
  EXPECT_EQ(t.prompt_tokens, (std::vector<uint32_t>{374, 91, 396, 879}));
  EXPECT_EQ(t.output_tokens, (std::vector<uint32_t>{44, 16, 109, 12}));
  EXPECT_TRUE(rep.sorted);
  for (size_t r = 0; r < t.size(); ++r)
    EXPECT_EQ(t.prompt_blocks(r), (t.prompt_tokens[r] + 15) / 16);
  AssumedPromptModel m = parse_assumed_prompt_model("system=128,turns=2");
  EXPECT_EQ(t.assumptions.model, m.canonical());
  EXPECT_EQ(t.assumptions.statement, m.statement());
  EXPECT_EQ(rep.assumed.sessions + rep.assumed.continuations, t.size());
  // "" is the defaults.
  EXPECT_EQ(import(path, kLengthsMap, "").assumptions.model, AssumedPromptModel{}.canonical());
}

TEST(ImportLengths, AssumeIsOnlyForLengthsAndMakesItsOwnSessions) {
  std::string path = write_file("log.csv", "t,ids,n,s\n0,1 2 3,3,a\n");
  EXPECT_THROW(import(path, "time=t,tokens=ids", ""), ConfigError);
  EXPECT_THROW(import(path, "time=t,prompt_tokens=n,session=s", ""), ConfigError);
  EXPECT_THROW(import(path, "time=t,prompt_tokens=n", "turns=0"), ConfigError);
  // A length that is not one: the row and column named.
  std::string bad = write_file("bad.csv", "t,n\n0,12\n1,0\n");
  std::string what = input_error([&] { import(bad, "time=t,prompt_tokens=n", ""); }).what();
  EXPECT_NE(what.find(bad + ":3: column 'n': expected a prompt length"), std::string::npos) << what;
}

// The real Azure traces: refused as tokens, imported under a model with every length kept.
TEST(ImportLengths, TheAzureTraces) {
  for (const char* name : {"conv", "code"}) {
    std::string path =
        testing::data_file(std::string("azure-2023/AzureLLMInferenceTrace_") + name + ".csv");
    if (path.empty()) GTEST_SKIP() << "KVPOLICY_DATA unset or the Azure traces are absent";
    std::string what =
        input_error([&] { import(path, "time=TIMESTAMP,tokens=ContextTokens"); }).what();
    expect_explained(what);
    Trace t = import(path, kLengthsMap, "");
    // Every length as the file has it (the file is in time order).
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    size_t r = 0;
    uint64_t prompt_sum = 0, logged_sum = 0;
    while (std::getline(in, line)) {
      std::stringstream ss(line);
      std::string time, prompt, output;
      std::getline(ss, time, ',');
      std::getline(ss, prompt, ',');
      std::getline(ss, output, ',');
      ASSERT_LT(r, t.size());
      logged_sum += std::stoull(prompt);
      prompt_sum += t.prompt_tokens[r];
      ++r;
    }
    EXPECT_EQ(r, t.size());
    EXPECT_EQ(prompt_sum, logged_sum);
    EXPECT_FALSE(t.assumptions.empty());
  }
}

}  // namespace
}  // namespace kvpolicy
