// Robustness of LPC's continuation scores across datasets (docs/policies.md, lpc): Platt scaling
// of a classifier's scores, fitted on a validation split of its training data, and the online
// drift tracker with which LPC lowers its trust in scores whose observed continuation rate
// departs from what they predict. Plain numbers: no trace, no model.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "kvpolicy/core/types.h"

namespace kvpolicy {

// p_cal = sigmoid(a · logit(p) + b), a >= 0: a monotone (non-decreasing) map of [0, 1] onto
// itself. a = 1, b = 0 is the identity.
struct PlattScaling {
  double a = 1, b = 0;

  double apply(double p) const;
  bool identity() const { return a == 1 && b == 0; }
  // The maximum-likelihood (a, b) on scores `p` with labels `y` (Newton's method on the
  // logistic log-loss of logit(p), a tiny ridge against separable data); a is clamped at 0 so
  // the map stays monotone. Scores are clamped to [1e-6, 1 - 1e-6] first. Throws Error if the
  // spans differ in length or are empty.
  static PlattScaling fit(std::span<const double> p, std::span<const uint8_t> y);
};

// Isotonic regression (pool-adjacent-violators) of labels on scores: the non-decreasing step
// function that minimises the squared error on the fitting data. Stored as breakpoints: each
// pooled block of scores [x_lo, x_hi] maps to its label mean; a score between two blocks is
// interpolated linearly, one below the first (above the last) block takes its value. Empty =
// the identity. An input already calibrated (label mean = score at every score) maps to itself.
struct IsotonicCalibration {
  std::vector<double> x, y;  // breakpoints, x strictly increasing, y non-decreasing in [0, 1]

  double apply(double p) const;
  bool identity() const { return x.empty(); }
  // Throws Error if the spans differ in length or are empty, or a score is not finite.
  static IsotonicCalibration fit(std::span<const double> p, std::span<const uint8_t> y);
  // Whether x, y are a valid map (as above), e.g. after reading them from a file.
  bool valid() const;
};

// The online quantile of a turn index among the turn indices seen so far (this one included):
// (turns seen with a lower index + half those with the same) / turns seen. Turn indices count
// every user turn, so their distribution is the conversation lengths' (a conversation of L turns
// gives 1..L) and, unlike a length, known when the turn arrives: no future is read.
class TurnQuantileTracker {
 public:
  double observe(uint32_t turn);         // counts the turn, then returns its quantile
  double quantile(uint32_t turn) const;  // without counting it (0.5 when nothing is seen)

 private:
  std::vector<uint64_t> count_;  // by turn index (1-based; index 0 unused)
  uint64_t n_ = 0;
};

// The online quantile of each example's turn on a trace: the requests (session, turn), in
// arrival order, counted by a TurnQuantileTracker as they arrive; example i (conversation
// example_conversation[i] = the session, turn example_turn[i]) gets the quantile its request had
// when it arrived, -1 if no request carries it. Throws Error if paired spans differ in length.
std::vector<double> online_turn_quantiles(std::span<const SessionId> session,
                                          std::span<const uint32_t> turn,
                                          std::span<const uint32_t> example_conversation,
                                          std::span<const uint32_t> example_turn);

struct DriftOptions {
  double timeout_s = 1000;       // a scored turn with no next turn of its session this long: ended
  double window = 500;           // resolved turns: exponential forgetting with weight 1 - 1/window
  double tolerance = 0.15;       // |observed - expected rate| at which trust reaches 0
  double min_correlation = 0.1;  // score-label correlation at and above which: full trust
  uint32_t min_resolved = 50;    // resolved turns before trust may move from 1
};

// Online: each scored turn of a session is resolved as "continued" when the session's next
// request arrives, or "ended" when none came within timeout_s. Resolved turns enter the
// statistics in arrival order (a continued turn waits for every older turn to be resolved), so
// the turns counted are always all turns up to some time: counting them as they resolve would
// over-weight ended turns whenever fewer conversations start than before (e.g. a trace's
// tail). Over the counted turns (exponentially forgotten) it keeps the observed rate r (continued /
// resolved), the expected rate q (their mean score) and the correlation c of score and label
// (Pearson's: it asks whether the scores rank turns, whatever their scale; 1 when every label is
// the same, 0 when every score is). Trust in the scores is
//   trust = clamp(1 - |r - q| / tolerance, 0, 1) · clamp(c / min_correlation, 0, 1)
// (1 until min_resolved turns are resolved), and a score's logit is shrunk toward 0 by it:
//   logit p_used = trust · logit p.
// Trust 0 gives every request p = 1/2: LPC's order is then LRU's (a fixed point, unlike the
// observed rate, which moves with time and would reorder blocks of equal scores).
class ContinuationDrift {
 public:
  explicit ContinuationDrift(const DriftOptions& o = {});

  // A request of `session` at `now` (seconds) scored `p`: expires the turns older than the
  // timeout, resolves the session's pending turn as continued, and makes this one pending.
  // A request without a session (kNoSession) only expires.
  void observe(SessionId session, double now_s, double p);

  double trust() const { return trust_; }
  double shrink(double p) const;
  double observed_rate() const;
  double expected_rate() const;
  double correlation() const;
  uint64_t resolved() const { return resolved_; }
  double min_trust() const { return min_trust_; }

 private:
  struct Turn {
    double time = 0, p = 0;
    bool continued = false;
  };
  void count(double p, bool continued);
  void drain(double now_s);

  DriftOptions o_;
  // Per session, the sequence number of its latest turn still in `turns_`.
  std::unordered_map<SessionId, uint64_t> latest_;
  std::deque<Turn> turns_;  // every turn not yet counted, in arrival order
  uint64_t first_seq_ = 0;  // the sequence number of turns_.front()
  uint64_t resolved_ = 0;
  // Exponentially forgotten sums over counted turns: weight, labels, scores, their squares and
  // products.
  double w_ = 0, y_ = 0, p_ = 0, pp_ = 0, py_ = 0;
  double trust_ = 1, min_trust_ = 1;
};

}  // namespace kvpolicy
