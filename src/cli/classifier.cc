// `kvpolicy classifier train|eval`: LPC's continuation classifier on a text conversation
// dataset, trained on the train split (by conversation) and evaluated on the test split, next to
// the turn-count-only baseline (the paper's LPC_turns).
#include <fmt/format.h>

#include <cmath>
#include <numeric>
#include <tuple>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/core/atomic_file.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/core/json_writer.h"
#include "kvpolicy/predict/binary_metrics.h"
#include "kvpolicy/predict/continuation.h"
#include "kvpolicy/predict/continuation_calibration.h"
#include "kvpolicy/predict/turn_metrics.h"
#include "kvpolicy/trace/continuation_examples.h"

namespace kvpolicy::cli {
namespace {

struct DataArgs {
  std::string source;
  std::string input;
  double test_share = 0.2;
  bool skip_bad = false;
  std::string json;
  uint32_t min_turn = 1;

  void add(CLI::App* cmd) {
    cmd->add_option("--source", source, "chatbot-arena, sharegpt or loogle")
        ->required()
        ->check(CLI::IsMember({"chatbot-arena", "sharegpt", "loogle"}));
    input_file(cmd->add_option("--input,-i", input, "the dataset's JSONL file"))->required();
    cmd->add_option("--test-share", test_share,
                    "share of conversations in the test split (by a hash of the id)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    cmd->add_flag("--skip-bad-lines", skip_bad, "skip and count bad records");
    cmd->add_option("--min-turn", min_turn,
                    "evaluate only turns from this one on (2 leaves out first turns, which "
                    "always continue in Chatbot Arena's >= 2-turn sample)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    output_file(cmd->add_option("--json", json, "write the evaluation as one JSON object to FILE"));
  }
};

struct Data {
  std::vector<ConversationTurnExample> examples;
  size_t conversations = 0;
};

// One dataset's examples appended to `d`, its conversations numbered after those already there.
void append(Data& d, const std::string& source, const std::string& input, const DataArgs& a,
            uint32_t window) {
  TextReadReport rep;
  auto convs = read_conversations(input, source, a.skip_bad, rep);
  if (rep.bad_records)
    fmt::print(stderr, "kvpolicy: {}: skipped {} bad record(s) of {} lines; first: {}\n", input,
               rep.bad_records, rep.lines, rep.first_error);
  auto examples = continuation_examples(convs, a.test_share, window);
  for (auto& e : examples) {
    e.conversation += static_cast<uint32_t>(d.conversations);
    d.examples.push_back(std::move(e));
  }
  d.conversations += convs.size();
}

Data load(const DataArgs& a, uint32_t window) {
  Data d;
  append(d, a.source, a.input, a, window);
  return d;
}

// The evaluation of `score` on the chosen split, with the turn baseline fitted on the train
// split, printed and optionally written as JSON.
template <typename Score>
void evaluate(const Data& d, const DataArgs& a, const std::string& split, Score score,
              const JsonObject& extra) {
  std::vector<uint32_t> train_turns;
  std::vector<uint8_t> train_labels;
  std::vector<double> p, baseline;
  std::vector<uint8_t> y;
  std::vector<uint32_t> turn_of;
  // The turn quantile feature's q: online over the turns scored, in file order (every turn of
  // the split, also those below --min-turn).
  TurnQuantileTracker quantiles;
  size_t train_conversations = 0, eval_conversations = 0;
  uint32_t last = UINT32_MAX, last_eval = UINT32_MAX;
  for (const auto& e : d.examples) {
    const bool first = e.conversation != last;
    last = e.conversation;
    if (!e.test) {
      train_turns.push_back(e.turn);
      train_labels.push_back(e.continues);
      train_conversations += first;
    }
    if (!(split == "all" || (split == "test") == e.test)) continue;
    const double q = quantiles.observe(e.turn);
    if (e.turn >= a.min_turn) {
      p.push_back(score(e, q));
      y.push_back(e.continues);
      turn_of.push_back(e.turn);
      eval_conversations += e.conversation != last_eval;
      last_eval = e.conversation;
    }
  }
  if (p.empty())
    throw ConfigError(
        fmt::format("no {} examples in '{}' (test share {})", split, a.input, a.test_share));
  if (train_turns.empty())
    throw ConfigError("no train examples for the turn baseline (test share 1?)");
  const TurnBucketBaseline turns = TurnBucketBaseline::fit(train_turns, train_labels);
  for (const auto& e : d.examples)
    if ((split == "all" || (split == "test") == e.test) && e.turn >= a.min_turn)
      baseline.push_back(turns.predict(e.turn));
  BinaryMetrics m = evaluate_binary(p, y);
  BinaryMetrics b = evaluate_binary(baseline, y);
  fmt::print("{} split{}: {} turns of {} conversations\n{}", split,
             a.min_turn > 1 ? fmt::format(", turns >= {}", a.min_turn) : "", p.size(),
             eval_conversations, format_metrics(m));
  fmt::print(
      "turn count only (train split's share per turn bucket, the paper's LPC_turns): MCC {:.4f}, "
      "F1 {:.4f} (macro {:.4f}), AUC {:.4f}, accuracy {:.4f}\n",
      b.mcc, b.f1, b.f1_macro, b.auc, b.accuracy);
  const auto per_turn = per_turn_metrics(p, y, turn_of);
  fmt::print("per turn (MCC at p >= 0.5; AUC nan when a turn holds one label):\n{}",
             format_turn_metrics(per_turn));
  if (!a.json.empty()) {
    JsonObject o = extra;
    o.add("source", a.source).add("input", a.input).add("split", split);
    o.add("test_share", a.test_share).add("min_turn", a.min_turn);
    o.add("conversations", d.conversations);
    o.add("train_conversations", train_conversations).add("train_turns", train_turns.size());
    o.raw("metrics", metrics_json(m));
    o.raw("turn_baseline", metrics_json(b));
    o.raw("per_turn", turn_metrics_json(per_turn));
    write_file_atomically(a.json, o.str() + "\n");
    fmt::print("wrote {}\n", a.json);
  }
}

struct TrainArgs {
  DataArgs data;
  std::string out;
  ContinuationTrainOptions options;
  uint64_t seed = 1;
  std::vector<std::string> also;  // SOURCE=FILE: more datasets' train splits (a mixture)
  double validation_share = 0;    // > 0: calibrate on this share of the conversations
  std::string calibration = "platt";
};

// Brier scores of Platt and isotonic maps on the validation split, each fitted on one half of
// its conversations (by index parity) and scored on the other, both ways: a comparison of the
// two calibrations on training-side data that neither was fitted on.
std::pair<double, double> cross_fitted_brier(const std::vector<double>& raw,
                                             const std::vector<uint8_t>& y,
                                             const std::vector<uint32_t>& conversation) {
  double platt = 0, isotonic = 0;
  size_t n = 0;
  for (uint32_t fold = 0; fold < 2; ++fold) {
    std::vector<double> fit_p, test_p;
    std::vector<uint8_t> fit_y, test_y;
    for (size_t i = 0; i < raw.size(); ++i) {
      auto& p = conversation[i] % 2 == fold ? fit_p : test_p;
      auto& l = conversation[i] % 2 == fold ? fit_y : test_y;
      p.push_back(raw[i]);
      l.push_back(y[i]);
    }
    if (fit_p.empty() || test_p.empty()) return {NAN, NAN};
    const PlattScaling ps = PlattScaling::fit(fit_p, fit_y);
    const IsotonicCalibration is = IsotonicCalibration::fit(fit_p, fit_y);
    for (size_t i = 0; i < test_p.size(); ++i) {
      platt += std::pow(ps.apply(test_p[i]) - test_y[i], 2);
      isotonic += std::pow(is.apply(test_p[i]) - test_y[i], 2);
    }
    n += test_p.size();
  }
  return {platt / double(n), isotonic / double(n)};
}

void train(const TrainArgs& a) {
  if (a.validation_share > 0 && a.data.test_share + a.validation_share > 1)
    throw ConfigError(fmt::format("--test-share {} and --validation-share {} overlap (sum > 1)",
                                  a.data.test_share, a.validation_share));
  std::vector<std::pair<std::string, std::string>> more;
  for (const std::string& s : a.also) {
    const size_t eq = s.find('=');
    const std::string source = eq == std::string::npos ? "" : s.substr(0, eq);
    if (source != "chatbot-arena" && source != "sharegpt" && source != "loogle")
      throw ConfigError(fmt::format(
          "--also '{}': expected SOURCE=FILE with SOURCE chatbot-arena, sharegpt or loogle", s));
    more.emplace_back(source, s.substr(eq + 1));
  }
  Data d = load(a.data, a.options.features.window);
  for (auto& [source, input] : more) append(d, source, input, a.data, a.options.features.window);
  // The validation split (the top of the training side) calibrates; the rest trains.
  auto validation = [&](const ConversationTurnExample& e) {
    return !e.test && a.validation_share > 0 && e.split >= 1 - a.validation_share;
  };
  if (a.calibration == "isotonic" && !(a.validation_share > 0))
    throw ConfigError(
        "--calibration isotonic needs --validation-share > 0 (the data it is fitted on)");
  std::vector<ContinuationExample> train_set;
  std::vector<const ConversationTurnExample*> held, trained;
  // The turn quantile feature's q in training: against every training turn's index (offline).
  TurnQuantileTracker train_quantiles;
  for (const auto& e : d.examples) {
    if (e.test) continue;
    if (validation(e)) {
      held.push_back(&e);
    } else {
      trained.push_back(&e);
      train_quantiles.observe(e.turn);
    }
  }
  for (const auto* e : trained)
    train_set.push_back(
        {continuation_features(e->prompts, e->turn, a.options.features, e->previous_answer_chars,
                               train_quantiles.quantile(e->turn)),
         e->continues});
  fmt::print(
      "{}{}: {} conversations, {} turns; training on {} turns (train split){}\n", a.data.input,
      more.empty() ? "" : fmt::format(" and {} more", more.size()), d.conversations,
      d.examples.size(), train_set.size(),
      held.empty() ? "" : fmt::format(", calibrating on {} (validation split)", held.size()));
  ContinuationClassifier c = ContinuationClassifier::train(train_set, a.options, a.seed);
  double validation_auc = NAN, validation_mcc = NAN, cv_brier_platt = NAN, cv_brier_isotonic = NAN;
  if (a.validation_share > 0) {
    if (held.empty()) throw ConfigError("--validation-share: the validation split is empty");
    std::vector<double> raw;
    std::vector<uint8_t> y;
    std::vector<uint32_t> conversation;
    TurnQuantileTracker quantiles;  // scored as at test time: online, in file order
    for (const auto* e : held) {
      raw.push_back(c.predict_uncalibrated(
          continuation_features(e->prompts, e->turn, c.feature_options(), e->previous_answer_chars,
                                quantiles.observe(e->turn))));
      y.push_back(e->continues);
      conversation.push_back(e->conversation);
    }
    const PlattScaling platt = PlattScaling::fit(raw, y);
    c.set_calibration(platt);
    std::vector<double> cal;
    for (double x : raw) cal.push_back(platt.apply(x));
    const BinaryMetrics vm = evaluate_binary(raw, y);
    validation_auc = vm.auc;
    validation_mcc = vm.mcc;
    std::tie(cv_brier_platt, cv_brier_isotonic) = cross_fitted_brier(raw, y, conversation);
    fmt::print(
        "validation split: AUC {:.4f}, MCC {:.4f} (uncalibrated); Brier with each calibration "
        "cross-fitted on its two halves: platt {:.4f}, isotonic {:.4f}\n",
        vm.auc, vm.mcc, cv_brier_platt, cv_brier_isotonic);
    fmt::print(
        "Platt scaling on the validation split: a {:.4f}, b {:.4f}; Brier {:.4f} -> {:.4f}, mean "
        "p {:.3f} -> {:.3f} (observed {:.3f})\n",
        platt.a, platt.b, evaluate_binary(raw, y).brier, evaluate_binary(cal, y).brier,
        std::accumulate(raw.begin(), raw.end(), 0.0) / double(raw.size()),
        std::accumulate(cal.begin(), cal.end(), 0.0) / double(cal.size()),
        evaluate_binary(cal, y).base_rate);
    if (a.calibration == "isotonic") {
      IsotonicCalibration iso = IsotonicCalibration::fit(raw, y);
      std::vector<double> iso_cal;
      for (double x : raw) iso_cal.push_back(iso.apply(x));
      fmt::print(
          "isotonic calibration on the validation split: {} breakpoints; Brier {:.4f} -> {:.4f}\n",
          iso.x.size(), evaluate_binary(raw, y).brier, evaluate_binary(iso_cal, y).brier);
      c.set_isotonic(std::move(iso));
    }
  }
  c.save(a.out);
  fmt::print("wrote {}\n", a.out);
  if (a.data.test_share <= 0) return;
  JsonObject extra;
  extra.add("model", a.out).add("epochs", a.options.epochs).add("lr", a.options.lr);
  extra.add("dim", a.options.dim).add("word_ngrams", a.options.word_ngrams);
  extra.add("minn", a.options.minn).add("maxn", a.options.maxn).add("seed", a.seed);
  extra.add("validation_share", a.validation_share);
  extra.add("turn_token", a.options.features.turn_token ? 1 : 0);
  extra.add("answer_length", a.options.features.answer_length ? 1 : 0);
  extra.add("turn_quantile", a.options.features.turn_quantile ? 1 : 0);
  extra.add("calibration", a.validation_share > 0 ? a.calibration : std::string("none"));
  extra.add("platt_a", c.calibration().a).add("platt_b", c.calibration().b);
  extra.add("isotonic_points", c.isotonic().x.size());
  extra.add("validation_auc", validation_auc);
  extra.add("validation_mcc", validation_mcc);
  extra.add("validation_brier_platt_cv", cv_brier_platt);
  extra.add("validation_brier_isotonic_cv", cv_brier_isotonic);
  evaluate(
      d, a.data, "test",
      [&](const ConversationTurnExample& e, double q) {
        return c.predict(e.prompts, e.turn, e.previous_answer_chars, q);
      },
      extra);
}

struct EvalArgs {
  DataArgs data;
  std::string model;
  std::string split = "test";
  bool uncalibrated = false;
};

void eval(const EvalArgs& a) {
  ContinuationClassifier c = ContinuationClassifier::load(a.model);
  Data d = load(a.data, c.feature_options().window);
  JsonObject extra;
  extra.add("model", a.model).add("calibrated", !a.uncalibrated);
  extra.add("platt_a", c.calibration().a).add("platt_b", c.calibration().b);
  extra.add("isotonic_points", c.isotonic().x.size());
  evaluate(
      d, a.data, a.split,
      [&](const ConversationTurnExample& e, double q) {
        const std::string f = continuation_features(e.prompts, e.turn, c.feature_options(),
                                                    e.previous_answer_chars, q);
        return a.uncalibrated ? c.predict_uncalibrated(f) : c.predict(f);
      },
      extra);
}

void add(CLI::App& app) {
  CLI::App* cls = app.add_subcommand(
      "classifier", "LPC's conversation continuation classifier (fastText): train, eval");
  cls->require_subcommand(1);

  auto t = std::make_shared<TrainArgs>();
  auto* train_cmd = cls->add_subcommand(
      "train", "train on a dataset's train split, save the model, evaluate on the test split");
  t->data.add(train_cmd);
  output_file(train_cmd->add_option("--out,-o", t->out, "the model file to write"))->required();
  ContinuationTrainOptions& o = t->options;
  train_cmd->add_option("--epochs", o.epochs, "passes over the training data")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train_cmd->add_option("--lr", o.lr, "learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train_cmd->add_option("--dim", o.dim, "embedding dimension")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train_cmd->add_option("--word-ngrams", o.word_ngrams, "word n-grams (2 = words + bigrams)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train_cmd->add_option("--minn", o.minn, "shortest character n-gram (0 = none)")
      ->capture_default_str();
  train_cmd->add_option("--maxn", o.maxn, "longest character n-gram (0 = none)")
      ->capture_default_str();
  train_cmd->add_option("--bucket", o.bucket, "hash buckets for n-grams")->capture_default_str();
  train_cmd
      ->add_option("--max-chars", o.features.max_chars,
                   "characters kept per prompt (head and tail halves)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train_cmd->add_option("--window", o.features.window, "prompts per turn: current + previous")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train_cmd->add_flag("!--no-turn-token", o.features.turn_token,
                      "leave the turn-count token out of the features (stored with the model)");
  train_cmd->add_flag("--answer-length", o.features.answer_length,
                      "add the previous answer's length bucket to the features (stored with the "
                      "model)");
  train_cmd->add_flag("--turn-quantile", o.features.turn_quantile,
                      "add the turn's quintile among the data's turn indices (training: the "
                      "training turns'; scoring: the scored turns' so far, online; stored with "
                      "the model)");
  train_cmd
      ->add_option("--calibration", t->calibration,
                   "the map fitted on the validation share: platt (sigmoid of the logit) or "
                   "isotonic (pool-adjacent-violators); stored with the model")
      ->check(CLI::IsMember({"platt", "isotonic"}))
      ->capture_default_str();
  train_cmd->add_option("--seed", t->seed, "seed of the shuffle and the initial weights")
      ->capture_default_str();
  train_cmd->add_option("--also", t->also,
                        "SOURCE=FILE: train on this dataset's train split too (a mixture; "
                        "repeatable; same --test-share)");
  train_cmd
      ->add_option("--validation-share", t->validation_share,
                   "hold out this share of the conversations (from the training side) and fit "
                   "Platt scaling on them; stored in the model (0 = no calibration)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  train_cmd->callback([t] { train(*t); });

  auto e = std::make_shared<EvalArgs>();
  auto* eval_cmd =
      cls->add_subcommand("eval", "evaluate a saved model on a dataset's test (or other) split");
  e->data.add(eval_cmd);
  input_file(eval_cmd->add_option("--model,-m", e->model, "a model written by `classifier train`"))
      ->required();
  eval_cmd->add_option("--split", e->split, "test, train or all")
      ->check(CLI::IsMember({"test", "train", "all"}))
      ->capture_default_str();
  eval_cmd->add_flag("--uncalibrated", e->uncalibrated,
                     "score without the model's Platt scaling (the before of a calibrated model)");
  eval_cmd->callback([e] { eval(*e); });
}

CommandRegistrar registrar(46, add);

}  // namespace
}  // namespace kvpolicy::cli
