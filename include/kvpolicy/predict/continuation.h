// LPC's continuation classifier (docs/policies.md, lpc): p = P(the conversation has another
// user turn after this one), from the text of the current and up to 4 previous user prompts and
// the turn count. The paper embeds the prompts with multilingual-e5-small and classifies with an
// MLP; that model is not available offline, so this is fastText's supervised classifier
// (word + word-bigram features, optional character n-grams, softmax over 2 labels) on the same
// inputs. Plain strings in, a probability out: this layer knows no trace or conversation type.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvpolicy/predict/continuation_calibration.h"

namespace kvpolicy {

// How one turn becomes fastText's input line.
struct ContinuationFeatureOptions {
  uint32_t window = 5;        // prompts used: the current one and window - 1 before it
  uint32_t max_chars = 2000;  // per prompt, after normalising: the first and last halves kept
  // Features tried for transfer across datasets (docs/results/lpc.md, "across datasets"):
  bool turn_token = true;      // the __turn_* token (off: the turn index is not a feature)
  bool answer_length = false;  // __ans_<floor(log2(chars + 1))> of the previous answer
                               // (__ans_none on a first turn or when the answer is unknown)
  bool turn_quantile = false;  // __tq_<k>: the turn's quintile k = min(4, floor(5 q)) among the
                               // turn indices of the data (TurnQuantileTracker; __tq_none
                               // when q is unknown)
};

// The feature line of one turn (no label, no newline). `prompts` holds the user prompts, the
// current one first, then the previous ones (only the first `window` are used); `turn` is
// 1-based. Each prompt is ASCII-lowercased, control characters and runs of white space become
// one space, ASCII punctuation is split off into tokens of its own, and a prompt longer than
// max_chars keeps its first and last max_chars / 2 characters (the paper's head + tail budget).
// Every token of prompt i is prefixed "p<i>_", so "p0_why" (asked now) and "p1_why" (asked a
// turn ago) are different features; a prompt with no token gives "p<i>__empty". Then the extra
// tokens: the turn bucket __turn_1, __turn_2, __turn_3_4, __turn_5_8 or __turn_9plus, and the
// current prompt's length bucket __len_<floor(log2(characters + 1))>, characters counted
// before truncation.
// `previous_answer_chars` (< 0: unknown) is read only with opts.answer_length, `turn_quantile`
// (in [0, 1]; < 0: unknown) only with opts.turn_quantile. Training takes q from the training
// turns' distribution; scoring from the scored data's, online (TurnQuantileTracker in the order
// the turns are scored: a trace's arrival order, a dataset's file order).
std::string continuation_features(std::span<const std::string> prompts, uint32_t turn,
                                  const ContinuationFeatureOptions& opts = {},
                                  int64_t previous_answer_chars = -1, double turn_quantile = -1);

// The turn count bucket's token, as above.
std::string continuation_turn_token(uint32_t turn);

// The paper's LPC_turns ablation: the turn count alone. Per turn bucket (as above), the training
// examples' share of label 1; a bucket without examples gets the overall share.
class TurnBucketBaseline {
 public:
  static TurnBucketBaseline fit(std::span<const uint32_t> turns, std::span<const uint8_t> labels);
  double predict(uint32_t turn) const;

 private:
  double rate_[5] = {0, 0, 0, 0, 0};
};

struct ContinuationExample {
  std::string features;  // continuation_features(...)
  bool label = false;    // the conversation has a later user turn
};

struct ContinuationTrainOptions {
  int epochs = 10;
  double lr = 0.1;
  int dim = 32;
  int word_ngrams = 2;
  int minn = 0;  // character n-grams of minn..maxn characters; 0 = none
  int maxn = 0;
  int min_count = 1;
  int bucket = 200000;  // hash buckets for word and character n-grams (model size ~ bucket x dim)
  ContinuationFeatureOptions features;  // stored with the model, used again when it scores
};

class ContinuationClassifier {
 public:
  ContinuationClassifier();  // untrained: predict throws
  ContinuationClassifier(ContinuationClassifier&&) noexcept;
  ContinuationClassifier& operator=(ContinuationClassifier&&) noexcept;
  ~ContinuationClassifier();

  // Trains on `examples` (shuffled by `seed` first; one training thread, so the same examples
  // and seed give the same model). Throws ConfigError for bad options or if the examples do
  // not hold both labels. fastText trains from a file: a temporary one is written and removed.
  static ContinuationClassifier train(std::span<const ContinuationExample> examples,
                                      const ContinuationTrainOptions& options, uint64_t seed);

  // P(label 1) in [0, 1] for a feature line, through the model's calibration: the isotonic map
  // if it has one, else the Platt map (both the identity unless set before saving).
  double predict(std::string_view features) const;
  // The same before calibration: fastText's softmax.
  double predict_uncalibrated(std::string_view features) const;
  // The same for raw prompts (current first), encoded with the model's own feature options.
  double predict(std::span<const std::string> prompts, uint32_t turn,
                 int64_t previous_answer_chars = -1, double turn_quantile = -1) const;

  const ContinuationFeatureOptions& feature_options() const;
  double train_base_rate() const;  // share of label 1 in the training examples
  // The Platt map applied to every score (`classifier train --validation-share`); saved with
  // the model (since trailer version 2; a version-1 file reads as the identity).
  const PlattScaling& calibration() const;
  void set_calibration(const PlattScaling& c);
  // The isotonic map (`classifier train --calibration isotonic`), applied instead of the Platt
  // map when not empty; saved with the model (trailer version 3).
  const IsotonicCalibration& isotonic() const;
  void set_isotonic(IsotonicCalibration c);

  // The fastText model followed by the isotonic map and a trailer (magic, feature options, base
  // rate, calibration, size and a checksum of the model bytes; docs/formats.md), so a truncated or
  // corrupt file is refused before fastText, which trusts its input, reads it. Throws ConfigError
  // if the file cannot be written.
  void save(const std::string& path) const;
  // Throws one ConfigError naming the file if it is missing, truncated, corrupt or not a model
  // saved by `save`.
  static ContinuationClassifier load(const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvpolicy
