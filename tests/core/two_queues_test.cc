// TwoQueues (include/kvpolicy/core/order/two_queues.h) against a reference of one std::list per
// queue, a frequency per id and a set of candidates (whose order is queue 1's order from its
// head), over random operation sequences that respect the header's preconditions, as S3-FIFO
// (src/policy/s3fifo.cc) does.
#include "kvpolicy/core/order/two_queues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <list>
#include <random>
#include <set>
#include <vector>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

constexpr int kCand = TwoQueues::kWithCandidates, kOther = 1 - kCand;

class Reference {
 public:
  explicit Reference(size_t ids) { resize(ids); }
  void resize(size_t ids) {
    if (ids > freq_.size()) freq_.resize(ids, 0);
  }
  size_t ids() const { return freq_.size(); }

  uint8_t which(NodeId n) const {
    for (int q : {0, 1})
      if (std::find(queue_[q].begin(), queue_[q].end(), n) != queue_[q].end()) return q;
    return TwoQueues::kNone;
  }
  const std::list<NodeId>& queue(int q) const { return queue_[q]; }
  int freq(NodeId n) const { return freq_[n]; }
  void set_freq(NodeId n, int f) { freq_[n] = f; }
  bool is_candidate(NodeId n) const { return candidates_.count(n) == 1; }
  size_t candidates() const { return candidates_.size(); }
  // Queue 1's members that are candidates, from its head.
  std::vector<NodeId> candidate_order() const {
    std::vector<NodeId> out;
    for (NodeId n : queue_[kCand])
      if (is_candidate(n)) out.push_back(n);
    return out;
  }

  void push_back(int q, NodeId n) {
    queue_[q].push_back(n);
    freq_[n] = 0;
  }
  void insert_before(NodeId n, NodeId pos) {
    auto& l = queue_[which(pos)];
    l.insert(std::find(l.begin(), l.end(), pos), n);
    freq_[n] = 0;
  }
  void erase(NodeId n) {  // the frequency stays
    queue_[which(n)].remove(n);
    candidates_.erase(n);
  }
  void move_to_back(int q, NodeId n) {
    int f = freq_[n];
    erase(n);
    push_back(q, n);
    freq_[n] = f;
  }
  void rotate(int q) { queue_[q].splice(queue_[q].end(), queue_[q], queue_[q].begin()); }
  void add_candidate(NodeId n) { candidates_.insert(n); }
  void replace_candidate(NodeId c, NodeId n) {
    candidates_.erase(c);
    candidates_.insert(n);
  }
  // The hand passes queue 1's members up to its first candidate to the tail.
  NodeId reach_first_candidate() {
    if (candidates_.empty()) return kNoNode;
    while (!is_candidate(queue_[kCand].front())) rotate(kCand);
    return queue_[kCand].front();
  }
  void pass_candidate() {
    reach_first_candidate();
    rotate(kCand);
  }
  void drop_candidate() {
    candidates_.erase(reach_first_candidate());
    rotate(kCand);
  }

 private:
  std::list<NodeId> queue_[2];
  std::vector<int> freq_;
  std::set<NodeId> candidates_;
};

// Everything observable: sizes, fronts, each id's queue, frequency and candidacy, and next():
// the following member for a non-candidate, the following candidate for a candidate, kNoNode
// at the end of either. With the fronts this pins queue 0's order, queue 1's order among its
// non-candidates and the candidates' order (the hand's next step from any entry).
void expect_same(const TwoQueues& t, const Reference& ref, int step) {
  SCOPED_TRACE("step " + std::to_string(step));
  ASSERT_EQ(t.ids(), ref.ids());
  for (int q : {0, 1}) {
    const std::list<NodeId>& l = ref.queue(q);
    ASSERT_EQ(t.size(q), l.size()) << "queue " << q;
    ASSERT_EQ(t.front(q), l.empty() ? kNoNode : l.front()) << "queue " << q;
    for (auto it = l.begin(); it != l.end(); ++it) {
      if (t.is_candidate(*it)) continue;
      auto nx = std::next(it);
      ASSERT_EQ(t.next(*it), nx == l.end() ? kNoNode : *nx) << "queue " << q << " id " << *it;
    }
  }
  std::vector<NodeId> cands = ref.candidate_order();
  for (size_t i = 0; i < cands.size(); ++i)
    ASSERT_EQ(t.next(cands[i]), i + 1 < cands.size() ? cands[i + 1] : kNoNode)
        << "candidate " << cands[i];
  for (NodeId n = 0; n < ref.ids(); ++n) {
    ASSERT_EQ(t.which(n), ref.which(n)) << "id " << n;
    ASSERT_EQ(t.freq(n), ref.freq(n)) << "id " << n;
    ASSERT_EQ(t.is_candidate(n), ref.is_candidate(n)) << "id " << n;
    if (ref.which(n) == TwoQueues::kNone) ASSERT_EQ(t.next(n), kNoNode) << "id " << n;
  }
}

TEST(TwoQueues, FifoOrderFrequenciesAndRotation) {
  TwoQueues t;
  t.resize(8);
  EXPECT_EQ(t.ids(), 8u);
  for (NodeId n = 0; n < 8; ++n) EXPECT_EQ(t.which(n), TwoQueues::kNone);
  EXPECT_EQ(t.front(0), kNoNode);
  t.push_back(0, 3);
  t.push_back(0, 5);
  t.insert_before(1, 3);  // before the head: the new head
  EXPECT_EQ(t.front(0), 1u);
  EXPECT_EQ(t.next(1), 3u);
  EXPECT_EQ(t.next(3), 5u);
  EXPECT_EQ(t.next(5), kNoNode);
  t.set_freq(3, 3);
  t.rotate(0);  // 3 5 1
  EXPECT_EQ(t.front(0), 3u);
  EXPECT_EQ(t.next(1), kNoNode);
  t.move_to_back(1, 3);  // to the other queue, frequency kept
  EXPECT_EQ(t.which(3), 1);
  EXPECT_EQ(t.freq(3), 3);
  EXPECT_EQ(t.size(0), 2u);
  t.erase(3);
  EXPECT_EQ(t.which(3), TwoQueues::kNone);
  EXPECT_EQ(t.freq(3), 3);  // kept until the block joins a queue again
  t.push_back(1, 3);
  EXPECT_EQ(t.freq(3), 0);
  t.resize(4);  // never shrinks
  EXPECT_EQ(t.ids(), 8u);
  EXPECT_THROW(t.resize(TwoQueues::kMaxIds + 1), ConfigError);
}

TEST(TwoQueues, TheHandVisitsOnlyCandidates) {
  // Queue 1: 0 1 2 3 4, candidates 1 and 3; the hand passes 0, stops at 1, then at 3.
  TwoQueues t;
  t.resize(6);
  for (NodeId n = 0; n < 5; ++n) t.push_back(kCand, n);
  t.add_candidate(3);
  t.add_candidate(1);  // found walking back from 1 to the head: first
  EXPECT_EQ(t.next(1), 3u);
  EXPECT_EQ(t.next(3), kNoNode);
  EXPECT_EQ(t.reach_first_candidate(), 1u);
  EXPECT_EQ(t.front(kCand), 1u);
  t.pass_candidate();  // 2 3 4 0 1; candidates 3, 1
  EXPECT_EQ(t.front(kCand), 2u);
  EXPECT_EQ(t.reach_first_candidate(), 3u);
  t.drop_candidate();  // 4 0 1 2 3; candidate 1
  EXPECT_FALSE(t.is_candidate(3));
  EXPECT_EQ(t.front(kCand), 4u);
  t.push_back(kCand, 5);
  t.push_candidate(5);  // 4 0 1 2 3 5; candidates 1, 5
  EXPECT_EQ(t.next(1), 5u);
  EXPECT_EQ(t.next(5), kNoNode);
  t.erase(1);
  EXPECT_EQ(t.reach_first_candidate(), 5u);
}

// Random sequences: each step picks an operation whose preconditions hold and checks the whole
// state after it.
void random_run(uint64_t seed, size_t ids, int steps) {
  std::mt19937_64 rng(seed);
  auto below = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  TwoQueues t;
  t.resize(ids);
  Reference ref(ids);
  auto pick = [&](auto&& ok) {  // a random id with ok(id), or kNoNode
    std::vector<NodeId> c;
    for (NodeId n = 0; n < ref.ids(); ++n)
      if (ok(n)) c.push_back(n);
    return c.empty() ? kNoNode : c[below(c.size())];
  };
  auto outside = [&](NodeId n) { return ref.which(n) == TwoQueues::kNone; };
  auto member = [&](NodeId n) { return !outside(n); };
  for (int step = 0; step < steps; ++step) {
    switch (below(12)) {
      case 0:
      case 1: {  // a new block at a queue's tail, in queue 1 often a candidate
        NodeId n = pick(outside);
        if (n == kNoNode) break;
        int q = static_cast<int>(below(2));
        t.push_back(q, n);
        ref.push_back(q, n);
        if (q == kCand && below(2)) {
          t.push_candidate(n);
          ref.add_candidate(n);
        }
        break;
      }
      case 2: {  // a new block before its parent, taking its place as a candidate or not
        NodeId n = pick(outside), pos = pick(member);
        if (n == kNoNode || pos == kNoNode) break;
        bool replace = ref.which(pos) == kCand && below(2);
        t.insert_before(n, pos);
        ref.insert_before(n, pos);
        if (replace) {
          if (ref.is_candidate(pos)) {
            ref.replace_candidate(pos, n);
          } else {
            ref.add_candidate(n);
          }
          t.replace_candidate(pos, n);
        }
        break;
      }
      case 3: {
        NodeId n = pick(member);
        if (n == kNoNode) break;
        t.erase(n);
        ref.erase(n);
        break;
      }
      case 4: {  // to a queue's tail (its own or the other), a candidate again or not
        NodeId n = pick(member);
        if (n == kNoNode) break;
        int q = static_cast<int>(below(2));
        t.move_to_back(q, n);
        ref.move_to_back(q, n);
        if (q == kCand && below(2)) {
          t.push_candidate(n);
          ref.add_candidate(n);
        }
        break;
      }
      case 5: {  // queue 1 rotates only past a non-candidate: its hand moves by the candidates
        int q = static_cast<int>(below(2));
        if (ref.queue(q).empty()) break;
        if (q == kCand && ref.is_candidate(ref.queue(q).front())) q = kOther;
        if (ref.queue(q).empty()) break;
        t.rotate(q);
        ref.rotate(q);
        break;
      }
      case 6: {
        NodeId n = pick([&](NodeId) { return true; });
        int f = static_cast<int>(below(4));
        t.set_freq(n, f);
        ref.set_freq(n, f);
        break;
      }
      case 7: {
        NodeId n = pick([&](NodeId x) { return ref.which(x) == kCand && !ref.is_candidate(x); });
        if (n == kNoNode) break;
        t.add_candidate(n);
        ref.add_candidate(n);
        break;
      }
      case 8:
        ASSERT_EQ(t.reach_first_candidate(), ref.reach_first_candidate());
        break;
      case 9:
      case 10: {  // the hand passes or drops the first candidate, reached first or not
        if (ref.candidates() == 0) break;
        if (below(2)) ASSERT_EQ(t.reach_first_candidate(), ref.reach_first_candidate());
        if (below(2)) {
          t.pass_candidate();
          ref.pass_candidate();
        } else {
          t.drop_candidate();
          ref.drop_candidate();
        }
        break;
      }
      case 11:  // more ids, the others kept
        if (below(50) == 0) {
          size_t more = ref.ids() + below(4);
          t.resize(more);
          ref.resize(more);
        }
        break;
    }
    expect_same(t, ref, step);
    if (testing::Test::HasFatalFailure()) return;
  }
}

TEST(TwoQueues, MatchesListsAndACandidateSetOnRandomSequences) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    random_run(seed, seed % 4 == 0 ? 4 : 24, 3000);  // few ids: queues often empty or full
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace kvpolicy
