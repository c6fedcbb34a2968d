// Typed parameter declarations: each kind parses, every rejection has one message shape, and the
// declared defaults of every owner (policies, generators, cost model) are values they accept.
#include "kvpolicy/core/params.h"

#include <gtest/gtest.h>

#include "kvpolicy/core/cost_model.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/trace/generators.h"

namespace kvpolicy {
namespace {

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> s = {
      param_int("c", 4, {.min = 1}, "candidates"),
      param_int("buckets", 5, {.min = 1, .max = 64}, "buckets"),
      param_double("ratio", 0.1, {.min = 0, .max = 1, .min_exclusive = true, .max_exclusive = true},
                   "share"),
      param_double("alpha", -1, {.min = 0, .min_exclusive = true, .special = {-1}}, "slope"),
      param_bool("audit", false, "audit"),
      param_string("lengths", "1/2", "lengths"),
      param_choice("cost", "model", {"model", "depth", "uniform"}, "cost"),
      param_choice("life", "p90", {"p90", "none"}, "life",
                   ParamRange{.min = 0, .min_exclusive = true}),
  };
  return s;
}

// The message parse throws for `text`, or "" if it accepts it.
std::string error_of(const std::string& text) {
  try {
    Params::parse(text, specs(), "policy test");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Params, EachKindParses) {
  Params p = Params::parse("c=7,buckets=64,ratio=0.5,alpha=-1,audit=yes,lengths=3/4,cost=depth",
                           specs(), "policy test");
  EXPECT_EQ(p.get_int("c"), 7);
  EXPECT_EQ(p.get_int("buckets"), 64);
  EXPECT_EQ(p.get_double("ratio"), 0.5);
  EXPECT_EQ(p.get_double("alpha"), -1);
  EXPECT_TRUE(p.get_bool("audit"));
  EXPECT_EQ(p.get_string("lengths"), "3/4");
  EXPECT_EQ(p.get_string("cost"), "depth");
  EXPECT_EQ(Params::parse("alpha=0.25,life=120.5", specs(), "t").get_double("alpha"), 0.25);
  EXPECT_EQ(Params::parse("life=120.5", specs(), "t").get_string("life"), "120.5");
  EXPECT_EQ(Params::parse("life=none", specs(), "t").get_string("life"), "none");
}

TEST(Params, RejectionsHaveOneShape) {
  EXPECT_EQ(error_of("c=0"), "policy test: parameter c = '0' must be an integer >= 1");
  EXPECT_EQ(error_of("c=2.5"), "policy test: parameter c = '2.5' must be an integer >= 1");
  EXPECT_EQ(error_of("buckets=65"),
            "policy test: parameter buckets = '65' must be an integer in [1, 64]");
  EXPECT_EQ(error_of("ratio=1"), "policy test: parameter ratio = '1' must be a number in (0, 1)");
  EXPECT_EQ(error_of("ratio=x"), "policy test: parameter ratio = 'x' must be a number in (0, 1)");
  EXPECT_EQ(error_of("ratio=inf"),
            "policy test: parameter ratio = 'inf' must be a number in (0, 1)");
  EXPECT_EQ(error_of("alpha=0"), "policy test: parameter alpha = '0' must be a number > 0, or -1");
  EXPECT_EQ(error_of("alpha=-2"),
            "policy test: parameter alpha = '-2' must be a number > 0, or -1");
  EXPECT_EQ(error_of("audit=maybe"),
            "policy test: parameter audit = 'maybe' must be a boolean (1, 0, true, false, yes, "
            "no, on, off)");
  EXPECT_EQ(error_of("cost=tokens"),
            "policy test: parameter cost = 'tokens' must be one of model, depth, uniform");
  EXPECT_EQ(error_of("life=-3"),
            "policy test: parameter life = '-3' must be one of p90, none, or a number > 0");
  EXPECT_EQ(error_of("life=p50"),
            "policy test: parameter life = 'p50' must be one of p90, none, or a number > 0");
  EXPECT_EQ(error_of("colour=red"),
            "policy test: parameter colour = 'red' is unknown (known: c, buckets, ratio, alpha, "
            "audit, lengths, cost, life)");
  EXPECT_EQ(error_of("c"), "policy test: parameter 'c' is not key=value");
  // Parsed at parse time, whichever value comes first.
  EXPECT_NE(error_of("cost=depth,c=-1"), "");
}

TEST(Params, DefaultsAreCanonical) {
  Params p = Params::parse("", specs(), "t");
  // Every parameter, sorted by name, in the builders' canonical form (shortest round trip).
  EXPECT_EQ(p.canonical(),
            "alpha=-1,audit=0,buckets=5,c=4,cost=model,lengths=1/2,life=p90,ratio=0.1");
  EXPECT_EQ(Params::parse("c=9", specs(), "t").canonical(),
            "alpha=-1,audit=0,buckets=5,c=9,cost=model,lengths=1/2,life=p90,ratio=0.1");
}

// Every declaration in the engine accepts its own default.
TEST(Params, EveryDeclaredDefaultIsAccepted) {
  std::vector<std::pair<std::string, std::vector<ParamSpec>>> owners = {
      {"cost model", CostModel::param_specs()},
      {"gsp", gsp_param_specs()},
      {"zipf", zipf_param_specs()},
      {"conversation", conversation_param_specs()}};
  for (auto& p : PolicyRegistry::instance().all()) owners.push_back({p.name, p.params});
  for (auto& [owner, spec] : owners)
    for (auto& s : spec) EXPECT_TRUE(s.accepts(s.default_value)) << owner << ": " << s.name;
}

TEST(SplitList, DropsEmptyItems) {
  EXPECT_EQ(split_list("a,b,,c,"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split_list(""), std::vector<std::string>{});
  EXPECT_EQ(split_list("512/1024", '/'), (std::vector<std::string>{"512", "1024"}));
}

TEST(SplitList, PolicyListKeepsParametersWithTheirSpec) {
  std::vector<PolicySpec> specs = parse_policy_list("lru,hf:c=2,list_max=0,,fifo");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[1].label(), "hf:c=2,list_max=0");
  EXPECT_EQ(specs[2].name, "fifo");
}

TEST(MarkdownCell, EscapesTheCellSeparator) {
  EXPECT_EQ(markdown_cell("a|b|"), "a\\|b\\|");
  EXPECT_EQ(markdown_cell("plain"), "plain");
}

}  // namespace
}  // namespace kvpolicy
