// The continuation classifier on the real conversation datasets (KVPOLICY_DATA): trained on the
// train split, evaluated on the test split (by conversation), as `kvpolicy classifier train`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "kvpolicy/predict/binary_metrics.h"
#include "kvpolicy/predict/continuation.h"
#include "kvpolicy/trace/continuation_examples.h"

namespace kvpolicy {
namespace {

struct Result {
  BinaryMetrics model, turns;
};

Result train_and_test(const std::string& path, const std::string& source) {
  TextReadReport rep;
  auto convs = read_conversations(path, source, true, rep);
  auto ex = continuation_examples(convs, 0.2);
  std::vector<ContinuationExample> train;
  std::vector<uint32_t> train_turns;
  std::vector<uint8_t> train_labels;
  for (auto& e : ex)
    if (!e.test) {
      train.push_back({continuation_features(e.prompts, e.turn), e.continues});
      train_turns.push_back(e.turn);
      train_labels.push_back(e.continues);
    }
  ContinuationClassifier c = ContinuationClassifier::train(train, {}, 1);
  TurnBucketBaseline b = TurnBucketBaseline::fit(train_turns, train_labels);
  std::vector<double> p, pb;
  std::vector<uint8_t> y;
  for (auto& e : ex)
    if (e.test) {
      p.push_back(c.predict(e.prompts, e.turn));
      pb.push_back(b.predict(e.turn));
      y.push_back(e.continues);
    }
  Result r{evaluate_binary(p, y), evaluate_binary(pb, y)};
  std::cout << source << " test split:\n"
            << format_metrics(r.model) << "turn baseline MCC " << r.turns.mcc << " AUC "
            << r.turns.auc << "\n";
  return r;
}

TEST(ContinuationRealData, ChatbotArenaAndShareGpt) {
  const char* dir = std::getenv("KVPOLICY_DATA");
  std::string arena =
      dir ? std::string(dir) + "/chatbot-arena/chatbot_arena_conversations_raw.jsonl" : "";
  std::string share = dir ? std::string(dir) + "/sharegpt-sample/sharegpt_sample_slim.jsonl" : "";
  if (!dir || !std::filesystem::exists(arena) || !std::filesystem::exists(share))
    GTEST_SKIP() << "KVPOLICY_DATA unset or the conversation datasets are absent";

  // Chatbot Arena keeps only conversations of >= 2 turns: turn 1 always continues, so the turn
  // count alone is informative; the text must add to it.
  Result a = train_and_test(arena, "chatbot-arena");
  EXPECT_GT(a.model.mcc, 0.1);
  EXPECT_GT(a.model.auc, a.turns.auc + 0.02);
  EXPECT_NEAR(a.model.base_rate, 0.65, 0.05);

  // ShareGPT (all lengths, ~650 test turns): no signal beyond noise on this sample (MCC 0.03,
  // AUC 0.53 measured), so only the pipeline is checked here; see docs/results/lpc.md.
  Result s = train_and_test(share, "sharegpt");
  EXPECT_GT(s.model.n, 500u);
  EXPECT_NEAR(s.model.base_rate, 0.69, 0.05);
  EXPECT_FALSE(std::isnan(s.model.auc));
}

}  // namespace
}  // namespace kvpolicy
