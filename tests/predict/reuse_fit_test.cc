// The reuse-time fits (include/kvpolicy/predict/reuse_fit.h): ReuseQuantiles against exact
// sorting, ReuseFitter against the fits recomputed from the whole access history.
#include "kvpolicy/predict/reuse_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvpolicy {
namespace {

// ---- ReuseQuantiles ------------------------------------------------------------------------

// Every reuse time added and not yet expired; the k-th smallest by sorting.
class SortedReference {
 public:
  void add(uint32_t seq, size_t h, Time value) { events_.push_back({seq, h, kept(value)}); }
  void expire(uint32_t first) {
    std::erase_if(events_, [&](const Ev& e) { return e.seq < first; });
  }
  size_t count(size_t h) const {
    return std::count_if(events_.begin(), events_.end(), [&](const Ev& e) { return in(e, h); });
  }
  Time select(size_t h, uint64_t k) const {
    std::vector<Time> v;
    for (const Ev& e : events_)
      if (in(e, h)) v.push_back(e.value);
    std::sort(v.begin(), v.end());
    return v[k];
  }

 private:
  struct Ev {
    uint32_t seq;
    size_t h;
    Time value;
  };
  static bool in(const Ev& e, size_t h) { return h == ReuseQuantiles::kAll || e.h == h; }
  // The documented precision: 39 significant bits (exact below 2^39 us).
  static Time kept(Time v) {
    int drop = std::max(0, static_cast<int>(std::bit_width(static_cast<uint64_t>(v))) - 39);
    return v >> drop << drop;
  }
  std::vector<Ev> events_;
};

// A reuse time: ties (a few repeated values), microseconds below one bin per us, and larger
// magnitudes up to and past the exact range.
Time random_reuse_time(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      return Time{1000} * static_cast<Time>(rng() % 4);  // ties
    case 1:
      return static_cast<Time>(rng() % 64);
    case 2:
      return static_cast<Time>(rng() % (uint64_t{1} << 24));
    case 3:
      return static_cast<Time>(rng() % (uint64_t{1} << 40));
    default:
      return static_cast<Time>(rng() >> (1 + rng() % 40));  // up to 2^63 - 1
  }
}

TEST(ReuseQuantiles, SelectEqualsSortingThroughExpiry) {
  // Requests in refit epochs (some epochs without requests), reuses of requests still in the
  // window, a window that moves on in uneven steps (sometimes emptying it), and queries at every
  // rank of interest of every histogram.
  constexpr size_t kCategories = 3;
  ReuseQuantiles q;
  q.ensure_hists(kCategories + 1);
  SortedReference ref;
  std::mt19937_64 rng(11);
  std::vector<uint32_t> epoch_of{0};  // [seq]; seq 0 is none
  uint32_t epoch = 0, first = 1;
  for (int step = 0; step < 40000; ++step) {
    uint64_t op = rng() % 1000;
    if (op < 30) {
      epoch += op < 3 ? 3 : 1;  // a refit, or several with no request between
    } else if (op < 300 || epoch_of.size() == first) {
      epoch_of.push_back(epoch);  // a request
    } else if (op < 990) {
      uint32_t seq = first + static_cast<uint32_t>(rng() % (epoch_of.size() - first));
      size_t h = rng() % (kCategories + 1);  // kAll: a reuse counted only over all
      Time v = random_reuse_time(rng);
      q.add(seq, epoch_of[seq], h, v);
      ref.add(seq, h, v);
    } else {
      uint32_t end = static_cast<uint32_t>(epoch_of.size());
      first += static_cast<uint32_t>(rng() % (end - first + 1));  // may empty the window
      q.expire(first, first < end ? epoch_of[first] : epoch);
      ref.expire(first);
    }
    if (step % 200 != 0) continue;
    for (size_t h = 0; h <= kCategories; ++h) {
      size_t n = ref.count(h);
      if (n == 0) continue;
      uint64_t p90 = static_cast<uint64_t>(std::ceil(0.9 * double(n))) - 1;
      for (uint64_t k : {uint64_t{0}, p90, n - 1, rng() % n}) {
        ASSERT_EQ(q.select(h, k), ref.select(h, k))
            << "step " << step << " hist " << h << " rank " << k << " of " << n;
      }
    }
  }
  EXPECT_GT(q.gathers(), 0u);
}

TEST(ReuseQuantiles, EpochsLargerThanAChunk) {
  // Over 4096 reuses in one epoch: the boundary epoch is repacked across chunks on expiry.
  ReuseQuantiles q;
  SortedReference ref;
  for (uint32_t seq = 1; seq <= 10000; ++seq) {
    Time v = static_cast<Time>((seq * 7919) % 10007);
    q.add(seq, 0, ReuseQuantiles::kAll, v);
    ref.add(seq, ReuseQuantiles::kAll, v);
  }
  for (uint32_t first : {2u, 4097u, 5000u, 9999u}) {
    q.expire(first, 0);
    ref.expire(first);
    size_t n = ref.count(ReuseQuantiles::kAll);
    for (uint64_t k : {uint64_t{0}, n / 2, n - 1})
      ASSERT_EQ(q.select(ReuseQuantiles::kAll, k), ref.select(ReuseQuantiles::kAll, k)) << first;
  }
}

TEST(ReuseQuantiles, SingleValuesRoundTripAtEveryMagnitude) {
  for (int e = 0; e < 63; ++e) {
    for (Time v : {Time{1} << e, (Time{1} << e) + 1, (Time{1} << e) - 1 + (Time{1} << e)}) {
      ReuseQuantiles q;
      SortedReference ref;
      q.add(1, 0, ReuseQuantiles::kAll, v);
      ref.add(1, ReuseQuantiles::kAll, v);
      ASSERT_EQ(q.select(ReuseQuantiles::kAll, 0), ref.select(ReuseQuantiles::kAll, 0)) << v;
      if (v < (Time{1} << 39)) ASSERT_EQ(q.select(ReuseQuantiles::kAll, 0), v);
    }
  }
}

// ---- ReuseFitter ---------------------------------------------------------------------------

struct Access {
  uint32_t seq;
  Time time;
  uint16_t category;
  BlockKey key;
};

// The fits by definition, from the whole history at time `now`: every access of a request in
// the window, reused if its key was accessed again since.
std::vector<ReuseFit> fits_from_history(const std::vector<Access>& history, Time now,
                                        const ReuseFitter::Options& o, size_t categories) {
  struct Acc {
    uint64_t n = 0, reused = 0;
    int64_t sum = 0;
    std::vector<Time> times;
  };
  std::vector<Acc> acc(categories);
  Acc all;
  std::unordered_map<BlockKey, Time> next;  // key -> its next access's time
  for (size_t i = history.size(); i-- > 0;) {
    const Access& a = history[i];
    auto it = next.find(a.key);
    if (a.time > now - o.window) {
      for (Acc* x : {&acc[a.category], &all}) {
        ++x->n;
        if (it == next.end()) continue;
        ++x->reused;
        x->sum += it->second - a.time;
        x->times.push_back(it->second - a.time);
      }
    }
    next[a.key] = a.time;
  }
  auto p90_s = [](std::vector<Time> v) {
    std::sort(v.begin(), v.end());
    return double(v[static_cast<size_t>(std::ceil(0.9 * double(v.size()))) - 1]) / 1e6;
  };
  auto fit = [&](const Acc& x) {
    ReuseFit f;
    if (x.n == 0) return f;
    f.valid = true;
    f.samples = x.n;
    f.pi = double(x.reused) / double(x.n);
    if (x.reused == 0) {
      f.log_const = -INFINITY;
      return f;
    }
    f.lambda = 1.0 / (std::max(double(x.sum) / double(x.reused), 1.0) / 1e6);
    switch (o.life) {
      case ReuseFitter::Life::kNone:
        f.life_s = INFINITY;
        f.log_const = std::log(f.pi);
        return f;
      case ReuseFitter::Life::kFixed:
        f.life_s = o.life_fixed_s;
        break;
      case ReuseFitter::Life::kP90All:
        f.life_s = p90_s(all.times);
        break;
      case ReuseFitter::Life::kP90:
        f.life_s = p90_s(x.times);
        break;
    }
    f.log_const = std::log(f.pi) + std::log1p(-std::exp(-f.lambda * f.life_s));
    return f;
  };
  size_t with_data = 0, last = 0;
  for (size_t c = 0; c < categories; ++c)
    if (acc[c].n > 0) ++with_data, last = c;
  ReuseFit pooled = with_data == 1 && acc[last].n >= o.min_samples ? fit(acc[last]) : fit(all);
  std::vector<ReuseFit> out(categories, pooled);
  for (size_t c = 0; c < categories; ++c)
    if (acc[c].n >= o.min_samples) out[c] = fit(acc[c]);
  return out;
}

void expect_fit_eq(const ReuseFit& got, const ReuseFit& want) {
  EXPECT_EQ(got.valid, want.valid);
  if (!got.valid || !want.valid) return;
  EXPECT_EQ(got.samples, want.samples);
  EXPECT_EQ(got.pi, want.pi);
  EXPECT_EQ(got.lambda, want.lambda);
  EXPECT_EQ(got.life_s, want.life_s);
  EXPECT_EQ(got.log_const, want.log_const);
}

// Replays prompts that are prefixes of a few chains (so that a key's last access is never later
// than its parent's, as in a prefix cache) through a caller that holds some keys (and gives
// their stamps) and hands the others over; checks every category's fit at every refit. Returns
// the number of refits checked.
int check_fitter_against_history(const ReuseFitter::Options& o, uint64_t seed) {
  constexpr size_t kCategories = 4, kChains = 12, kChainLength = 24, kHeld = 60;
  std::mt19937_64 rng(seed);
  std::vector<std::vector<BlockKey>> chains(kChains);
  for (auto& c : chains)
    for (size_t i = 0; i < kChainLength; ++i) c.push_back(rng());
  ReuseFitter fitter(o);
  fitter.ensure_categories(kCategories);
  std::unordered_map<BlockKey, uint32_t> held;  // key -> stamp
  std::vector<BlockKey> held_keys;
  std::vector<Access> history;
  Time now = 0;
  int checked = 0;
  for (uint32_t seq = 1; seq <= 3000; ++seq) {
    // Gaps: ties, short, and now and then longer than the window (it empties).
    uint64_t gap = rng() % 100;
    now += gap < 20 ? 0 : gap < 99 ? static_cast<Time>(rng() % 200'000) : 2 * o.window;
    if (fitter.advance(now)) {
      std::vector<ReuseFit> want = fits_from_history(history, now, o, kCategories);
      for (uint16_t c = 0; c < kCategories; ++c) {
        SCOPED_TRACE("request " + std::to_string(seq) + " category " + std::to_string(c));
        expect_fit_eq(fitter.fit(c), want[c]);
      }
      if (::testing::Test::HasFailure()) return checked;
      ++checked;
    }
    const auto& chain = chains[rng() % kChains];
    std::span<const BlockKey> blocks(chain.data(), 1 + rng() % kChainLength);
    auto category = static_cast<uint16_t>(rng() % kCategories);
    fitter.begin_request(seq, now, category, blocks);
    for (BlockKey key : blocks) {
      history.push_back({seq, now, category, key});
      auto it = held.find(key);
      if (it != held.end()) {
        fitter.reuse(key, it->second);
        it->second = seq;
      } else {
        fitter.reuse_departed(key);
        if (held.size() < kHeld && rng() % 2) {
          held[key] = seq;
          held_keys.push_back(key);
        } else {
          fitter.depart(key, seq);  // accessed, but stays out
        }
      }
    }
    while (held.size() > kHeld / 2 && rng() % 3 != 0) {  // evictions
      size_t i = rng() % held_keys.size();
      BlockKey key = held_keys[i];
      fitter.depart(key, held.at(key));
      held.erase(key);
      held_keys[i] = held_keys.back();
      held_keys.pop_back();
    }
  }
  return checked;
}

ReuseFitter::Options test_options(ReuseFitter::Life life) {
  ReuseFitter::Options o;
  o.window = 20'000'000;  // 20 s: about 200 requests
  o.refit_every = 2'000'000;
  o.life = life;
  o.life_fixed_s = 0.5;
  o.min_samples = 150;  // a category with a few requests in the window uses the pooled fit
  return o;
}

TEST(ReuseFitter, FitsEqualTheHistoryRecomputedForEveryLife) {
  for (auto life : {ReuseFitter::Life::kP90, ReuseFitter::Life::kP90All, ReuseFitter::Life::kNone,
                    ReuseFitter::Life::kFixed}) {
    SCOPED_TRACE("life " + std::to_string(static_cast<int>(life)));
    EXPECT_GT(check_fitter_against_history(test_options(life), 21), 50);
  }
}

TEST(ReuseFitter, RefitsOnSchedule) {
  ReuseFitter f(test_options(ReuseFitter::Life::kP90));
  f.ensure_categories(1);
  EXPECT_FALSE(f.advance(5'000'000));  // the first call starts the clock
  EXPECT_FALSE(f.advance(6'999'999));
  EXPECT_TRUE(f.advance(7'000'000));
  EXPECT_FALSE(f.advance(7'000'000));
  EXPECT_TRUE(f.advance(60'000'000));  // late: the next is 2 s after this one
  EXPECT_FALSE(f.advance(61'999'999));
  EXPECT_TRUE(f.advance(62'000'000));
  EXPECT_EQ(f.refits(), 3u);
  EXPECT_FALSE(f.fit(0).valid);  // an empty window fits nothing
}

TEST(ReuseFitter, EmptyWindowDropsTheFitAndRanksByAgeAlone) {
  ReuseFitter::Options o = test_options(ReuseFitter::Life::kNone);
  o.min_samples = 1;
  ReuseFitter f(o);
  f.ensure_categories(2);
  std::vector<BlockKey> keys{1, 2, 3};
  f.advance(0);
  f.begin_request(1, 0, 1, keys);
  f.advance(1'000'000);
  f.begin_request(2, 1'000'000, 1, std::span<const BlockKey>(keys).first(1));
  f.reuse(1, 1);
  ASSERT_TRUE(f.advance(2'000'000));
  // Category 1: 4 accesses, one reused after 1 s; category 0 has none and takes the pooled fit,
  // which with one category of data is category 1's.
  for (uint16_t c : {0, 1}) {
    const ReuseFit& fit = f.fit(c);
    ASSERT_TRUE(fit.valid);
    EXPECT_EQ(fit.pi, 0.25);
    EXPECT_EQ(fit.lambda, 1.0);
    EXPECT_EQ(fit.log_reuse_prob(3'000'000), std::log(0.25) - 3.0);
  }
  EXPECT_EQ(f.categories_in_window(), 1u);
  EXPECT_EQ(f.accesses_in_window(), 4u);
  ASSERT_TRUE(f.advance(100'000'000));  // past the window: nothing left to fit
  EXPECT_EQ(f.accesses_in_window(), 0u);
  EXPECT_FALSE(f.fit(1).valid);
  EXPECT_EQ(f.fit(1).log_reuse_prob(0), 0);
  EXPECT_EQ(f.fit(1).log_reuse_prob(1'000'000'000), 0);
}

}  // namespace
}  // namespace kvpolicy
