// The predictor registry (include/kvpolicy/predict/registry.h) and the learned policies' nested
// predictor parameters, `laru:predictor=reuse(window=500,trees=3)`, with their flat spellings
// kept as deprecated aliases (docs/policies.md, "Learned policies").
#include <gtest/gtest.h>

#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/policy/listing.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/predict/registry.h"

namespace kvpolicy {
namespace {

PredictorConfig config_of(const std::string& text) {
  return predictor_config(Params::parse(text, predictor_param_specs(), "policy laru"));
}

// A build with -DKVPOLICY_LEARNED=OFF has no gbm or reuse: the tests of their parameters skip.
bool have_learned() { return PredictorRegistry::instance().find("gbm") != nullptr; }

std::string error_of(const std::string& text) {
  try {
    config_of(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(PredictorRegistry, EveryPredictorRegistersFromItsFile) {
  if (!have_learned()) GTEST_SKIP() << "built without XGBoost";
  auto& r = PredictorRegistry::instance();
  for (const char* name : {"oracle", "noisy", "gbm", "reuse"}) {
    const PredictorInfo* info = r.find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_FALSE(info->summary.empty()) << name;
    EXPECT_TRUE(info->make) << name;
  }
  EXPECT_TRUE(r.get("oracle").reads_future);
  EXPECT_TRUE(r.get("noisy").reads_future);
  EXPECT_FALSE(r.get("gbm").reads_future);
  EXPECT_FALSE(r.get("reuse").reads_future);
  try {
    r.get("tea-leaves");
    FAIL() << "an unknown predictor was found";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("known: gbm, noisy, oracle, reuse"), std::string::npos)
        << e.what();
  }
}

// A build without XGBoost has no gbm or reuse: a registry without them (the state such a build
// starts in) names the option instead of calling them unknown.
TEST(PredictorRegistry, AbsentLearnedPredictorNamesTheBuildOption) {
  PredictorRegistry without_learned;
  for (auto& p : PredictorRegistry::instance().all())
    if (learned_predictor_absent(p.name).empty()) without_learned.add(p);
  EXPECT_NE(without_learned.find("oracle"), nullptr);
  EXPECT_EQ(without_learned.find("gbm"), nullptr);
  for (const std::string& name : learned_only_predictors()) {
    try {
      without_learned.get(name);
      FAIL() << name << " was found";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), "predictor '" + name +
                                           "' needs XGBoost: this kvpolicy was built with "
                                           "-DKVPOLICY_LEARNED=OFF");
    }
  }
  EXPECT_TRUE(learned_predictor_absent("oracle").empty());
  // The nested parameter reports an unavailable choice with that message.
  ParamSpec spec = param_nested(
      "predictor", "oracle",
      [] {
        return std::vector<NestedChoice>{{"gbm", "", {}, learned_predictor_absent("gbm")}};
      },
      "");
  EXPECT_NE(spec.problem("gbm(trees=3)").find("-DKVPOLICY_LEARNED=OFF"), std::string::npos);
}

TEST(PredictorParams, NestedEqualsTheFlatSpelling) {
  if (!have_learned()) GTEST_SKIP() << "built without XGBoost";
  PredictorConfig nested = config_of("predictor=reuse(window=500,trees=3,eta=0.5,first_fit=20)");
  PredictorConfig flat =
      config_of("predictor=reuse,reuse_window=500,reuse_trees=3,reuse_eta=0.5,first_fit=20");
  EXPECT_EQ(nested.kind, "reuse");
  EXPECT_EQ(nested.reuse.window, 500u);
  EXPECT_EQ(nested.reuse.max_rounds, 3);
  EXPECT_EQ(nested.reuse.eta, 0.5);
  EXPECT_EQ(nested.reuse.first_fit, 20u);
  EXPECT_EQ(flat.reuse.window, nested.reuse.window);
  EXPECT_EQ(flat.reuse.max_rounds, nested.reuse.max_rounds);
  EXPECT_EQ(flat.reuse.eta, nested.reuse.eta);
  EXPECT_EQ(flat.reuse.first_fit, nested.reuse.first_fit);
  // Defaults are each predictor's own: reuse's window is 40000, the GBM's 30000.
  EXPECT_EQ(config_of("predictor=reuse").reuse.window, 40000u);
  PredictorConfig gbm = config_of("predictor=gbm(window=400,retrain=200,mode=async,max_lag=2)");
  EXPECT_EQ(gbm.gbm.window, 400u);
  EXPECT_EQ(gbm.gbm.retrain_every, 200u);
  EXPECT_TRUE(gbm.gbm.async);
  EXPECT_EQ(gbm.gbm.max_lag, 2u);
  EXPECT_EQ(config_of("predictor=gbm").gbm.window, 30000u);
  EXPECT_EQ(config_of("predictor=gbm,window=400").gbm.window, 400u);
  PredictorConfig noisy = config_of("predictor=noisy(p=0.3,noise=lognormal,sigma=2),audit=1");
  EXPECT_EQ(noisy.p, 0.3);
  EXPECT_EQ(noisy.noise, NoiseKind::kLogNormal);
  EXPECT_EQ(noisy.sigma, 2);
  EXPECT_TRUE(noisy.audit);
  // A nested value wins over a flat one.
  EXPECT_EQ(config_of("predictor=gbm(trees=7),trees=9").gbm.max_rounds, 7);
}

TEST(PredictorParams, BadNestedValuesNameTheParameter) {
  if (!have_learned()) GTEST_SKIP() << "built without XGBoost";
  std::string e = error_of("predictor=reuse(trees=0)");
  EXPECT_NE(e.find("predictor reuse: parameter trees = '0' must be an integer >= 1"),
            std::string::npos)
      << e;
  e = error_of("predictor=gbm(horizon=5)");  // a reuse parameter under the GBM
  EXPECT_NE(e.find("parameter horizon = '5' is unknown (known: mode, max_lag"), std::string::npos)
      << e;
  e = error_of("predictor=tea(x=1)");
  EXPECT_NE(e.find("must be one of"), std::string::npos) << e;
  e = error_of("predictor=reuse(trees=3");
  EXPECT_NE(e.find("one pair of parentheses"), std::string::npos) << e;
  e = error_of("predictor=noisy,reuse_trees=3");  // another predictor's flat parameter
  EXPECT_NE(e.find("reuse_trees applies to predictor=reuse only"), std::string::npos) << e;
}

TEST(PredictorParams, PolicyListsKeepNestedParametersTogether) {
  if (!have_learned()) GTEST_SKIP() << "built without XGBoost";
  std::vector<PolicySpec> specs =
      parse_policy_list("lru,laru:predictor=reuse(window=500,trees=3),halve_every=0,fpb");
  ASSERT_EQ(specs.size(), 3u);
  // The label (result rows, resume keys) is the spec as written.
  EXPECT_EQ(specs[1].label(), "laru:predictor=reuse(window=500,trees=3),halve_every=0");
  EXPECT_FALSE(needs_future(specs[1]));
  EXPECT_TRUE(needs_future({"laru", "predictor=noisy(p=0.3)"}));
  EXPECT_EQ(split_top_level("a=1,p=r(x=1,y=2),b=2"),
            (std::vector<std::string>{"a=1", "p=r(x=1,y=2)", "b=2"}));
}

TEST(PredictorParams, PoliciesListsThemUnderThePredictor) {
  if (!have_learned()) GTEST_SKIP() << "built without XGBoost";
  std::string listing = policy_listing();
  size_t laru = listing.find("\nlaru\n");
  ASSERT_NE(laru, std::string::npos);
  std::string section = listing.substr(laru, listing.find("\n\n", laru + 1) - laru);
  EXPECT_NE(section.find("    predictor=reuse(...): "), std::string::npos) << section;
  EXPECT_NE(section.find("      window (int, default 40000)"), std::string::npos) << section;
  EXPECT_NE(section.find("      window (int, default 30000)"), std::string::npos) << section;
  EXPECT_NE(section.find("deprecated flat spellings"), std::string::npos) << section;
  EXPECT_EQ(section.find("\n  reuse_window ("), std::string::npos) << section;
}

}  // namespace
}  // namespace kvpolicy
