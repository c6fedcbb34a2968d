// The contract every registered router must keep, run over every name in the registry with its
// defaults and with each parameter variant it declares, against a fake cluster: a valid worker
// for every request, on clusters of 1 to 64 workers; the same decisions for the same seed (and
// for any seed unless it declares itself randomized); nothing left of a request once it has
// completed; empty prompts. An offline router is given the workload as its future.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <ostream>
#include <string>

#include "kvpolicy/core/error.h"
#include "kvpolicy/route/router.h"
#include "support/fake_cluster.h"
#include "support/random_workload.h"

namespace kvpolicy {

void PrintTo(const RouterSpec& spec, std::ostream* os) { *os << spec.label(); }

namespace {

using testing::drive;
using testing::FakeCluster;
using testing::random_workload;

std::vector<RouterSpec> routers_and_variants() {
  std::vector<RouterSpec> out;
  for (auto& r : RouterRegistry::instance().all()) {
    out.push_back({r.name, ""});
    for (auto& v : r.variants) out.push_back({r.name, v});
  }
  return out;
}

class RouterContract : public ::testing::TestWithParam<RouterSpec> {
 protected:
  const RouterInfo& info() const { return RouterRegistry::instance().get(GetParam().name); }

  // An offline router (RouterInfo::needs_future) is given `trace` as its future: each request's
  // prompt, no answers.
  std::unique_ptr<Router> make(uint32_t workers, uint32_t block_tokens, uint64_t seed,
                               const Trace* trace = nullptr) {
    RouterContext ctx{.workers = workers, .block_tokens = block_tokens, .seed = seed};
    if (info().needs_future) ctx.future = &future_of(trace);
    return make_router(GetParam(), ctx);
  }

  const std::vector<FutureRequest>& future_of(const Trace* trace) {
    future_.clear();
    for (size_t r = 0; trace && r < trace->size(); ++r) {
      RequestView v = request_view(*trace, r);
      future_.push_back({v, v.blocks});
    }
    return future_;
  }

  std::vector<FutureRequest> future_;

  // Routes `trace` on a fresh cluster of `workers`, checking validity and that a drained
  // cluster leaves no trace in the router; returns the decisions.
  std::vector<WorkerId> run(const Trace& trace, uint32_t workers, uint64_t seed,
                            uint32_t empty_prompts = 0) {
    auto router = make(workers, trace.block_tokens, seed, &trace);
    FakeCluster cluster(workers, trace.block_tokens);
    std::vector<WorkerId> chosen = drive(*router, cluster, trace, seed, empty_prompts);
    EXPECT_EQ(chosen.size(), trace.size() + empty_prompts);
    for (WorkerId w = 0; w < workers; ++w) {
      const WorkerLoad& l = cluster.load(w);
      EXPECT_EQ(l.in_flight + l.waiting + l.running + l.queued_prefill_tokens + l.active_blocks, 0u)
          << "worker " << w << " still loaded after every request completed";
    }
    EXPECT_NEAR(router->in_flight_state(), 0.0, 1e-9)
        << "the router still holds state for completed requests";
    return chosen;
  }
};

TEST_P(RouterContract, ChoosesAValidWorkerOnClustersOfOneToSixtyFour) {
  for (uint32_t workers : {1u, 2u, 3u, 7u, 64u}) {
    if (info().max_workers != 0 && workers > info().max_workers) continue;
    for (uint64_t w = 1; w <= 2; ++w) {
      SCOPED_TRACE(std::to_string(workers) + " workers, workload " + std::to_string(w));
      Trace trace = random_workload({.seed = w, .requests = 300});
      std::vector<WorkerId> chosen = run(trace, workers, w, /*empty_prompts=*/10);
      if (workers == 1)
        for (WorkerId c : chosen) ASSERT_EQ(c, 0u);
      if (HasFailure()) return;
    }
  }
}

TEST_P(RouterContract, RoutesEmptyPrompts) {
  Trace none = random_workload({.seed = 3, .requests = 0});
  for (uint32_t workers : {1u, 3u}) run(none, workers, 1, /*empty_prompts=*/40);
}

TEST_P(RouterContract, SameSeedGivesIdenticalDecisions) {
  Trace trace = random_workload({.seed = 11, .requests = 300});
  EXPECT_EQ(run(trace, 5, 7, 5), run(trace, 5, 7, 5));
}

// A router that does not declare itself randomized must not depend on the seed; one that does
// must use it.
TEST_P(RouterContract, SeedChangesDecisionsOnlyIfRandomized) {
  Trace trace = random_workload({.seed = 12, .requests = 300});
  auto decisions = [&](uint64_t seed) {
    auto router = make(4, trace.block_tokens, seed, &trace);
    FakeCluster cluster(4, trace.block_tokens);
    return drive(*router, cluster, trace, /*driver seed=*/5);
  };
  bool randomized = info().randomized;
  if (info().randomized_with)
    randomized = info().randomized_with(
        Params::parse(GetParam().params, info().params, "router " + GetParam().name));
  if (randomized) {
    EXPECT_NE(decisions(1), decisions(2));
  } else {
    EXPECT_EQ(decisions(1), decisions(2));
  }
}

// A router states its limit (RouterInfo::max_workers) and rejects clusters beyond it; one
// without a limit routes over a cluster far larger than the suite's 64 workers.
TEST_P(RouterContract, RoutesAnyWorkerCountOrRejectsBeyondItsLimit) {
  if (info().max_workers > 0) {
    EXPECT_THROW(make(info().max_workers + 1, 16, 1), ConfigError);
    return;
  }
  try {
    make(1000, 16, 1);
  } catch (const ConfigError& e) {
    // A limit that comes with a parameter (dynamo:events=approx keeps an approximate tree): a
    // clear error naming the workers; 64 work (ChoosesAValidWorkerOnClustersOfOneToSixtyFour).
    EXPECT_NE(std::string(e.what()).find("workers"), std::string::npos) << e.what();
    return;
  }
  run(random_workload({.requests = 50}), 1000, 1);  // checks every choice is a valid worker
}

TEST_P(RouterContract, DeclaredParametersParseWithDefaults) {
  std::string params;
  for (auto& p : info().params)
    params += (params.empty() ? "" : ",") + p.name + "=" + p.default_value;
  if (!GetParam().params.empty()) params += "," + GetParam().params;
  RouterContext ctx{.workers = 3};
  Trace trace = random_workload({.requests = 50});
  if (info().needs_future) ctx.future = &future_of(&trace);
  auto router = make_router(RouterSpec{GetParam().name, params}, ctx);
  FakeCluster cluster(3);
  for (WorkerId w : drive(*router, cluster, trace, 1)) EXPECT_LT(w, 3u);
}

std::string test_name(const ::testing::TestParamInfo<RouterSpec>& p) {
  std::string s = p.param.params.empty() ? p.param.name : p.param.name + "_" + p.param.params;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(AllRouters, RouterContract, ::testing::ValuesIn(routers_and_variants()),
                         test_name);

TEST(RouterVariants, EveryDeclaredVariantParses) {
  for (auto& r : RouterRegistry::instance().all()) {
    for (auto& v : r.variants) {
      SCOPED_TRACE(r.name + ":" + v);
      Params params;
      EXPECT_NO_THROW(params = Params::parse(v, r.params, "router " + r.name));
      EXPECT_NE(params.canonical(), Params::parse("", r.params, "").canonical());
    }
  }
}

}  // namespace
}  // namespace kvpolicy
