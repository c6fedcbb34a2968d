// Replay's result fields are declared once (result_schema.h): the JSON writer, the reader and
// docs/formats.md's "Result JSON" table must agree with that declaration.
#include "kvpolicy/sim/result_schema.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "kvpolicy/app/leaderboard.h"
#include "kvpolicy/app/mrc.h"
#include "kvpolicy/app/recommend.h"
#include "kvpolicy/app/size.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/serve/result_schema.h"
#include "kvpolicy/sim/sweep.h"
#include "support/doc_check.h"

namespace kvpolicy {
namespace {

ReplayResult every_field_set() {
  ReplayResult r;
  r.trace = "t \"quoted\".jsonl";
  r.trace_fingerprint = "3/9/00ff";
  r.assumptions = "system=512,system_prompts=4,turns=3,reply=output,idle=600,seed=1";
  r.policy = "laru";
  r.params = "predictor=gbm";
  r.offline = true;
  r.capacity_blocks = 4096;
  r.capacity_fraction = 0.05;
  r.capacity_gb = 12.3456;
  r.seed = 7;
  r.requests = 3;
  r.block_accesses = 9;
  r.block_hits = 4;
  r.block_hit_rate = 4.0 / 9;
  r.prompt_tokens = 140;
  r.token_hits = 64;
  r.token_hit_rate = 64.0 / 140;
  r.infinite_hit_rate = 0.5;
  r.evictions = 11;
  r.uncached_blocks = 1;
  r.replay_seconds = 0.25;
  r.replay_cpu_seconds = 0.125;
  r.ns_per_access = 12.5;
  r.bytes_per_block = 48;
  r.dram_capacity_blocks = 8192;
  r.dram_policy = "lru";
  r.dram_hits = 2;
  r.demotions = 5;
  r.offload_min_priority = 30;
  r.offload_skipped_priority = 4;
  r.hbm_hit_rate = 2.0 / 9;
  r.dram_hit_rate = 2.0 / 9;
  r.cost_model = "llama-3.1-8b@a100-80gb";
  r.ttft_p50_ms = 1.5;
  r.ttft_p90_ms = 2.5;
  r.ttft_p95_ms = 3.5;
  r.ttft_p99_ms = 4.5;
  r.ttft_mean_ms = 2.25;
  r.tel_ms = 0.75;
  r.xi_ms = 200;
  r.slo_ms = 150;
  r.slo_violation_rate = 1.0 / 3;
  r.policy_stats = {{"model_fitted", 1}, {"predictor_calls", 42}};
  return r;
}

TEST(ResultSchema, JsonWritesEveryFieldInDeclarationOrderAndReadsBackTheSameRow) {
  ReplayResult r = every_field_set();
  std::string json = r.to_json();
  std::vector<std::string> keys;
  std::regex key("\"([a-z_0-9]+)\":");
  // Top-level keys only: policy_stats' counters follow its own key.
  std::string top = json.substr(0, json.find("\"policy_stats\":") + 15);
  for (std::sregex_iterator it(top.begin(), top.end(), key), end; it != end; ++it)
    keys.push_back((*it)[1]);
  std::vector<std::string> declared;
  for (const ResultField& f : replay_result_fields()) declared.push_back(f.name);
  EXPECT_EQ(keys, declared);
  ReplayResult back = parse_result_json(json, "rows.jsonl", 1);
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(result_key(back), result_key(r));
}

TEST(ResultSchema, OptionalFieldsAreLeftOutOrNull) {
  ReplayResult r;
  r.capacity_fraction = -1;
  std::string json = r.to_json();
  EXPECT_NE(json.find("\"capacity_fraction\":null"), std::string::npos);
  EXPECT_EQ(json.find("model_fitted"), std::string::npos);
  EXPECT_EQ(json.find("policy_stats"), std::string::npos);
  EXPECT_EQ(json.find("assumptions"), std::string::npos);
  EXPECT_EQ(json.find("offload_"), std::string::npos);  // the minimum for offload is off
  EXPECT_EQ(parse_result_json(json, "rows.jsonl", 1).to_json(), json);
}

TEST(ResultSchema, EveryCsvColumnIsAFieldWithACsvCell) {
  for (const std::string& name : replay_csv_columns()) {
    const ResultField& f = replay_result_field(name);
    EXPECT_TRUE(bool(f.csv)) << name;
  }
  EXPECT_EQ(replay_result_field("capacity_gb").csv(every_field_set()), "12.3456");
  EXPECT_EQ(replay_result_field("offline").csv(every_field_set()), "1");
  EXPECT_THROW(replay_result_field("nope"), Error);
}

// The rows of the field tables (headed "| field | type | ...") between `heading` and `stop`:
// each row's backticked names and their types (one type for all, or one per name).
std::map<std::string, std::string> documented_fields(const std::string& doc,
                                                     const std::string& heading,
                                                     const std::string& stop) {
  std::map<std::string, std::string> out;
  size_t from = doc.find("\n" + heading + "\n");
  EXPECT_NE(from, std::string::npos) << "docs/formats.md has no '" << heading << "' section";
  if (from == std::string::npos) return out;
  size_t to = doc.find(stop, from + 1);
  std::istringstream lines(doc.substr(from, to == std::string::npos ? to : to - from));
  std::regex name("`([a-z_0-9]+)`");
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| field | type |", 0) == 0) {
      in_table = true;
      std::getline(lines, line);  // |---|
      continue;
    }
    if (line.rfind("| ", 0) != 0) {
      in_table = false;
      continue;
    }
    if (!in_table) continue;
    size_t c1 = line.find(" | "), c2 = line.find(" | ", c1 + 3);
    std::string names_cell = line.substr(2, c1 - 2), type_cell = line.substr(c1 + 3, c2 - c1 - 3);
    std::vector<std::string> names, types;
    for (std::sregex_iterator it(names_cell.begin(), names_cell.end(), name), end; it != end; ++it)
      names.push_back((*it)[1]);
    std::istringstream split(type_cell);
    for (std::string t; std::getline(split, t, ',');) types.push_back(t.substr(t[0] == ' '));
    for (size_t i = 0; i < names.size(); ++i)
      out[names[i]] = types.size() == names.size() ? types[i] : type_cell;
  }
  EXPECT_FALSE(out.empty()) << "no field table under '" << heading << "'";
  return out;
}

// Every declared field is in the docs' tables with its type, and every documented one declared.
template <typename Field>
void expect_documented(const std::vector<Field>& fields,
                       std::map<std::string, std::string> documented, const std::string& where) {
  for (const Field& f : fields) {
    auto it = documented.find(f.name);
    if (it == documented.end()) {
      ADD_FAILURE() << "docs/formats.md's " << where << " lacks '" << f.name << "' (" << f.type
                    << ": " << f.description << ")";
      continue;
    }
    EXPECT_EQ(it->second, f.type) << "docs/formats.md gives '" << f.name << "' another type";
    documented.erase(it);
  }
  for (auto& [name, type] : documented)
    ADD_FAILURE() << "docs/formats.md's " << where << " has '" << name
                  << "', which the result schema does not declare";
}

TEST(ResultSchema, FormatsDocTableIsTheSchema) {
  expect_documented(
      replay_result_fields(),
      documented_fields(testing::read_source_file("docs/formats.md"), "## Result JSON", "\n### "),
      "Result JSON table");
}

TEST(ResultSchema, FormatsDocServeTablesAreTheServeSchema) {
  expect_documented(serve_result_fields(),
                    documented_fields(testing::read_source_file("docs/formats.md"),
                                      "### Serve mode's result JSON", "Each `per_worker` object"),
                    "serve result tables");
}

TEST(ResultSchema, FormatsDocMrcTablesAreTheMrcRows) {
  std::string doc = testing::read_source_file("docs/formats.md");
  expect_documented(app::mrc_point_fields(),
                    documented_fields(doc, "### `mrc --json`: points", "\n### "),
                    "mrc point table");
  expect_documented(app::mrc_target_fields(),
                    documented_fields(doc, "### `mrc --json`: targets", "\n### `size --json`"),
                    "mrc target table");
}

TEST(ResultSchema, FormatsDocSizeTableIsTheSizeRows) {
  expect_documented(app::size_fields(),
                    documented_fields(testing::read_source_file("docs/formats.md"),
                                      "### `size --json`", "\n`study robustness`"),
                    "size table");
}

TEST(ResultSchema, FormatsDocRecommendTablesAreTheRecommendFields) {
  std::string doc = testing::read_source_file("docs/formats.md");
  expect_documented(app::recommend_fields(),
                    documented_fields(doc, "### `recommend --json`", "Each engine's object:"),
                    "recommend table");
  expect_documented(app::engine_config_fields(),
                    documented_fields(doc, "Each engine's object:", "\n## Distributed"),
                    "recommend engine table");
}

TEST(ResultSchema, FormatsDocLeaderboardTablesAreTheBoardRows) {
  std::string doc = testing::read_source_file("docs/formats.md");
  expect_documented(app::board_cell_fields(),
                    documented_fields(doc, "### `leaderboard --board-json`: cells", "\n### "),
                    "leaderboard cell table");
  expect_documented(app::board_trace_fields(),
                    documented_fields(doc, "### `leaderboard --board-json`: per trace", "\n### "),
                    "leaderboard per-trace table");
  expect_documented(app::board_summary_fields(),
                    documented_fields(doc, "### `leaderboard --board-json`: summary", "\n## "),
                    "leaderboard summary table");
}

TEST(ResultSchema, ServeRowsReadBackAsWritten) {
  ServeResult r;
  r.trace = "t.jsonl";
  r.policy = "lru";
  r.router = "cache_aware";
  r.capacity_fraction = 0.1;
  r.ttft_ms.p99 = 12.3456;
  r.e2e_ms.max = 99;
  r.makespan_s = 10;
  r.per_worker.resize(2);
  r.per_worker[1].busy_seconds = 2.5;
  r.per_worker[1].block_accesses = 4;
  r.per_worker[1].block_hits = 1;
  r.policy_stats = {{"evictions", 3}};
  r.router_stats = {{"imbalanced", 2}};
  std::string json = r.to_json();
  EXPECT_EQ(json.rfind("{\"mode\":\"serve\",", 0), 0u);
  EXPECT_NE(json.find("\"utilisation\":0.250000"), std::string::npos);
  ServeResult back = parse_serve_result(json, "rows.jsonl", 1);
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.key(), r.key());
  std::string other = json;
  other.replace(other.find("\"serve\""), 7, "\"sim\"");
  EXPECT_THROW(parse_serve_result(other, "rows.jsonl", 1), InputError);
}

}  // namespace
}  // namespace kvpolicy
