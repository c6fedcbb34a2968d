// `kvpolicy doctor` on logs with planted causes (tests/app/doctor_logs.h): it must name each
// cause, measure the routers' difference on sprayed sessions, and find no cause in a clean log.
#include "kvpolicy/app/doctor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../../src/app/doctor_internal.h"
#include "doctor_logs.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy::app {
namespace {

using test_logs::Planted;

std::string temp_log(const char* name, Planted kind, int sessions = 24, int turns = 6) {
  auto dir =
      std::filesystem::temp_directory_path() / ("kvpolicy_doctor_test." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return test_logs::write_planted_log((dir / name).string(), kind, sessions, turns);
}

DoctorSpec log_spec(const std::string& path, uint32_t block_tokens = 16) {
  DoctorSpec s;
  s.log.input = path;
  s.log.map = "time=t,session=s,text=text,output_text=out";
  s.log.tokenizer = "approx";
  s.log.opts.block_tokens = block_tokens;
  s.capacity = "30%";
  s.jobs = 2;
  return s;
}

const BreakCause* top_cause(const BreakSection& s) {
  return s.causes.empty() ? nullptr : &s.causes.front();
}

TEST(Doctor, ATimestampInTheSystemPromptIsNamedAndMaskingItRanksFirst) {
  DoctorReport r = run_doctor(log_spec(temp_log("ts.jsonl", Planted::kTimestamp)));
  EXPECT_EQ(r.content, "text");
  ASSERT_GT(r.within.pairs, 0u);
  EXPECT_EQ(r.within.breaks, r.within.pairs);  // every turn carries a new time
  ASSERT_NE(top_cause(r.within), nullptr);
  EXPECT_EQ(top_cause(r.within)->code, "timestamp_or_id");
  EXPECT_FALSE(top_cause(r.within)->examples.empty());
  EXPECT_NE(top_cause(r.within)->examples[0].before.find("12:"), std::string::npos);
  EXPECT_GT(r.across.breaks, r.across.pairs / 2);  // the shared system prompt, broken for all
  ASSERT_FALSE(r.remedies.empty());
  EXPECT_NE(r.remedies[0].what.find("mask"), std::string::npos) << r.text();
  EXPECT_GT(r.remedies[0].gain_token_points(), 20) << r.text();
}

TEST(Doctor, AChangingSystemPromptIsNamedAndKeepingItRanksFirstWhenTheCacheIsAmple) {
  DoctorSpec s = log_spec(temp_log("sys.jsonl", Planted::kSystemChanges));
  s.capacity = "100%";  // nothing lost to the cache: the breaks dominate
  s.skip_routing = true;
  DoctorReport r = run_doctor(s);
  ASSERT_NE(top_cause(r.within), nullptr) << r.text();
  EXPECT_EQ(top_cause(r.within)->code, "system_prompt") << r.text();
  // Every second turn keeps its persona: those extend the previous prompt.
  EXPECT_LT(r.within.breaks, r.within.pairs);
  EXPECT_GT(r.within.breaks, 0u);
  ASSERT_FALSE(r.remedies.empty());
  EXPECT_NE(r.remedies[0].what.find("system prompt"), std::string::npos) << r.text();
  EXPECT_GT(r.remedies[0].gain_token_points(), 5) << r.text();
}

TEST(Doctor, ReorderedMessagesAreNamedAndAStableOrderRanksFirst) {
  DoctorReport r = run_doctor(log_spec(temp_log("reorder.jsonl", Planted::kReordered)));
  ASSERT_NE(top_cause(r.within), nullptr) << r.text();
  EXPECT_EQ(top_cause(r.within)->code, "reordered") << r.text();
  ASSERT_FALSE(r.remedies.empty());
  EXPECT_NE(r.remedies[0].what.find("order they first appeared"), std::string::npos) << r.text();
}

TEST(Doctor, AnAnswerTheClientAltersIsNamed) {
  DoctorSpec s = log_spec(temp_log("answer.jsonl", Planted::kAnswerEdited));
  s.skip_routing = true;
  DoctorReport r = run_doctor(s);
  EXPECT_EQ(r.within.breaks, 0u);  // every prompt extends the last
  EXPECT_EQ(r.answers.pairs, r.within.pairs);
  EXPECT_EQ(r.answers.breaks, r.answers.pairs) << r.text();
  ASSERT_NE(top_cause(r.answers), nullptr);
  EXPECT_EQ(top_cause(r.answers)->code, "answer_changed");
  EXPECT_NE(top_cause(r.answers)->examples.at(0).before.find("Sure.  "), std::string::npos);
}

TEST(Doctor, AChangedTemplateIsNamed) {
  DoctorSpec s = log_spec(temp_log("template.jsonl", Planted::kTemplate));
  s.skip_routing = true;
  DoctorReport r = run_doctor(s);
  ASSERT_NE(top_cause(r.within), nullptr) << r.text();
  EXPECT_EQ(top_cause(r.within)->code, "tokenizer_or_template") << r.text();
  EXPECT_EQ(top_cause(r.within)->examples.at(0).block, 0u);  // "system:" became "System:"
}

TEST(Doctor, BlocksLargerThanThePromptsAreNamedAndSmallerBlocksRankFirst) {
  DoctorSpec s = log_spec(temp_log("short.jsonl", Planted::kShortPrompts, 60, 3), 256);
  s.skip_routing = true;
  DoctorReport r = run_doctor(s);
  EXPECT_EQ(r.shorter_than_block, r.requests);
  bool warned = false;
  for (auto& w : r.sanity.warnings) warned |= w.code == "one_block_prompts";
  EXPECT_TRUE(warned) << r.sanity.text();
  EXPECT_EQ(r.small_block_tokens, 16u);
  EXPECT_GT(r.small_ideal.token, r.ideal.token + 0.2) << r.text();
  ASSERT_FALSE(r.remedies.empty());
  EXPECT_NE(r.remedies[0].what.find("blocks of 16 tokens"), std::string::npos) << r.text();
}

TEST(Doctor, SprayedSessionsShowTheRoutersDifference) {
  DoctorSpec s = log_spec(temp_log("spray.jsonl", Planted::kSprayed, 32, 8));
  s.workers = 4;
  DoctorReport r = run_doctor(s);
  ASSERT_EQ(r.routers.size(), 3u);
  auto hit = [&](const std::string& name) {
    for (auto& row : r.routers)
      if (row.router == name) return row.hit.token;
    ADD_FAILURE() << name;
    return 0.0;
  };
  EXPECT_GT(hit("session_affinity"), hit("random") + 0.10) << r.text();
  EXPECT_GT(hit("cache_aware"), hit("random") + 0.10) << r.text();
  ASSERT_FALSE(r.remedies.empty());  // the router dominates: it ranks first
  EXPECT_NE(r.remedies[0].what.find("instead of random"), std::string::npos) << r.text();
  EXPECT_TRUE(r.within.causes.empty()) << r.text();  // the sessions themselves are clean
}

TEST(Doctor, ACleanLogHasNoBreakCause) {
  DoctorSpec s = log_spec(temp_log("clean.jsonl", Planted::kClean));
  s.skip_routing = true;
  DoctorReport r = run_doctor(s);
  EXPECT_GT(r.within.pairs, 0u);
  EXPECT_EQ(r.within.breaks, 0u) << r.text();
  EXPECT_TRUE(r.within.causes.empty()) << r.text();
  EXPECT_EQ(r.answers.pairs, r.within.pairs);  // every answer carried as generated
  EXPECT_EQ(r.answers.breaks, 0u) << r.text();
  EXPECT_EQ(r.across.breaks, 0u) << r.text();
  EXPECT_TRUE(r.sanity.warnings.empty()) << r.sanity.text();
  EXPECT_GT(r.ideal.token, 0.5);
}

TEST(Doctor, AVolatileTokenInALogOfTokenIdsIsNamedAndMaskedFirst) {
  // Token ids only: a shared head whose 4th token changes on every request.
  auto path = std::filesystem::temp_directory_path() /
              ("kvpolicy_doctor_test." + std::to_string(getpid())) / "tokens.csv";
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  out << "t,s,toks\n";
  test_logs::Words w(3);
  std::vector<uint64_t> shared;
  for (int i = 0; i < 200; ++i) shared.push_back(1000 + w.next() % 40000);
  for (int s = 0; s < 10; ++s) {
    std::string history;
    for (int k = 0; k < 4; ++k) {
      for (int i = 0; i < 40; ++i) history += " " + std::to_string(1000 + w.next() % 40000);
      std::string head = fmt::format("1 2 3 {} 5", 100 + w.next() % 900);
      for (uint64_t x : shared) head += " " + std::to_string(x);
      out << k * 60 + s << ",s" << s << ",\"" << head << history << "\"\n";
    }
  }
  out.close();
  DoctorSpec s = log_spec(path.string());
  s.log.map = "time=t,session=s,tokens=toks";
  s.capacity = "50%";
  s.skip_routing = true;
  DoctorReport r = run_doctor(s);
  EXPECT_EQ(r.content, "tokens");
  ASSERT_NE(top_cause(r.within), nullptr);
  EXPECT_EQ(top_cause(r.within)->code, "timestamp_or_id");
  ASSERT_FALSE(r.remedies.empty());
  EXPECT_NE(r.remedies[0].what.find("mask the volatile span of token ids"), std::string::npos)
      << r.text();
  EXPECT_GT(r.remedies[0].gain_token_points(), 50) << r.text();
}

TEST(Doctor, ATraceOfBlockKeysReportsPositionsWithoutCauses) {
  // The timestamp log imported as a .kvtrace keeps no text: positions only, and why.
  std::string log = temp_log("ts_keys.jsonl", Planted::kTimestamp);
  ImportSpec imp = log_spec(log).log;
  imp.out = log + ".kvtrace";
  import_to_native(imp);
  DoctorSpec s;
  s.trace.path = imp.out;
  s.capacity = "30%";
  s.skip_routing = true;
  DoctorReport r = run_doctor(s);
  EXPECT_EQ(r.content, "blocks");
  EXPECT_EQ(r.within.breaks, r.within.pairs);
  EXPECT_TRUE(r.within.causes.empty());
  EXPECT_NE(r.within.basis.find("cannot be told"), std::string::npos);
  EXPECT_EQ(r.small_block_tokens, 0u);
}

TEST(Doctor, TheJsonHoldsTheReportedNumbers) {
  DoctorSpec s = log_spec(temp_log("json.jsonl", Planted::kTimestamp, 8, 3));
  s.skip_routing = true;
  DoctorReport r = run_doctor(s);
  std::string j = r.to_json();
  EXPECT_NE(j.find("\"within_sessions\":{\"pairs\":" + std::to_string(r.within.pairs)),
            std::string::npos);
  EXPECT_NE(j.find("\"cause\":\"timestamp_or_id\""), std::string::npos);
}

TEST(Doctor, ATinyLogRunsAtTheDefaultCapacityOfAtLeastOneBlock) {
  auto path = std::filesystem::path(temp_log("tiny.jsonl", Planted::kClean, 1, 1)).parent_path() /
              "tiny.csv";
  std::ofstream(path) << "t,s,toks\n1,a,1 2 3 4 5\n2,a,1 2 3 4 5 6 7\n";  // 3 unique blocks
  DoctorSpec s = log_spec(path.string(), 4);
  s.log.map = "time=t,session=s,tokens=toks";
  s.capacity = "";  // the GPU's free KV memory holds it all: 10 %, here under one block
  s.skip_routing = true;
  DoctorReport r = run_doctor(s);
  EXPECT_EQ(r.capacity_blocks, 1u);
  EXPECT_NE(r.capacity_label.find("would hold every block"), std::string::npos) << r.capacity_label;
}

TEST(Doctor, BadInputsAreConfigErrors) {
  DoctorSpec s;
  EXPECT_THROW(run_doctor(s), ConfigError);  // neither -t nor --input
  s = log_spec(temp_log("bad.jsonl", Planted::kClean, 2, 2));
  s.workers = 0;
  EXPECT_THROW(run_doctor(s), ConfigError);
}

TEST(DoctorContent, VolatileSpansAndTheirMask) {
  doctor::Diff d;
  std::string a = "Now: 2024-05-01 12:00:07. Be kind and brief.",
              b = "Now: 2024-05-01 12:31:59. Be kind and brief.";
  ASSERT_TRUE(doctor::volatile_span(a, b, d));
  EXPECT_EQ(d.anchor, "Now: ");
  EXPECT_EQ(doctor::mask_volatile(a, {d.anchor}), doctor::mask_volatile(b, {d.anchor}));
  EXPECT_EQ(doctor::mask_volatile(a, {d.anchor}), "Now: #. Be kind and brief.");
  // A difference at the number's first digit: the anchor still ends before the number.
  ASSERT_TRUE(doctor::volatile_span("At time: 12:00 be brief and kind to all.",
                                    "At time: 31:00 be brief and kind to all.", d));
  EXPECT_EQ(d.anchor, "At time: ");
  // Letters that differ are not a volatile span, nor is a long run.
  EXPECT_FALSE(doctor::volatile_span("Persona: gilmi. Be kind and brief today.",
                                     "Persona: kalo. Be kind and brief today.", d));
}

TEST(DoctorContent, MessagesTellReorderingFromAChangedSystemPrompt) {
  doctor::Content p{"system: S one\nuser: A doc\nuser: B doc\nuser: q1\n", nullptr};
  doctor::Content reordered{"system: S one\nuser: B doc\nuser: A doc\nuser: q1\nassistant: x\n",
                            nullptr};
  doctor::Content changed{"system: T two\nuser: A doc\nuser: B doc\nuser: q1\nassistant: x\n",
                          nullptr};
  doctor::Content templated{"System:  S one\nUser: A doc\nUser: B doc\nUser: q1\nassistant: x\n",
                            nullptr};
  EXPECT_EQ(doctor::classify(p, reordered).cause, "reordered");
  EXPECT_EQ(doctor::classify(p, changed).cause, "system_prompt");
  EXPECT_EQ(doctor::classify(p, templated).cause, "tokenizer_or_template");
}

}  // namespace
}  // namespace kvpolicy::app
