// `kvpolicy trace build`: a replayable conversation trace from a text dataset.
#include <fmt/format.h>

#include "command.h"
#include "common.h"
#include "file_options.h"
#include "kvpolicy/app/inputs.h"
#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/continuation.h"
#include "kvpolicy/predict/continuation_calibration.h"
#include "kvpolicy/trace/continuation_examples.h"
#include "kvpolicy/trace/text_trace.h"
#include "kvpolicy/trace/trace_io.h"

namespace kvpolicy::cli {
namespace {

struct BuildArgs {
  std::string source;
  std::string input;
  std::string out;
  std::string tokenizer = "auto";
  TextTraceParams params;
  uint64_t seed = 1;
  bool skip_bad = false;
  std::string classifier;
  // Keep only the conversations of one side of the classifier's split (by conversation, as
  // `classifier train` splits), so a study scores conversations the model never saw.
  std::string split = "all";
  double test_share = 0.2;
  std::string arrivals;         // a trace whose request times become the conversations' starts
  double validation_share = 0;  // --split validation: the top of the training side
};

// The split of `classifier train`: test below test_share, validation at and above
// 1 - validation_share, train between (validation counts as train without a validation share).
bool in_split(double value, const BuildArgs& a) {
  const bool test = value < a.test_share;
  const bool validation = !test && a.validation_share > 0 && value >= 1 - a.validation_share;
  if (a.split == "test") return test;
  if (a.split == "validation") return validation;
  return !test && !validation;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void run(const BuildArgs& a) {
  if (!ends_with(a.out, ".kvtrace") && !ends_with(a.out, ".jsonl"))
    throw ConfigError("--out must end in .kvtrace (native) or .jsonl (Alibaba schema)");
  // Loaded first, so a bad model fails before the dataset is read.
  std::unique_ptr<ContinuationClassifier> classifier;
  if (!a.classifier.empty())
    classifier =
        std::make_unique<ContinuationClassifier>(ContinuationClassifier::load(a.classifier));
  std::string note;
  auto tok = make_tokenizer(a.tokenizer, &note);
  if (!note.empty()) fmt::print(stderr, "kvpolicy: {}\n", note);
  TextReadReport rep;
  auto convs = read_conversations(a.input, a.source, a.skip_bad, rep);
  if (rep.bad_records)
    fmt::print(stderr, "kvpolicy: skipped {} bad record(s) of {} lines; first: {}\n",
               rep.bad_records, rep.lines, rep.first_error);
  if (a.split == "validation" && !(a.validation_share > 0))
    throw ConfigError("--split validation needs --validation-share > 0");
  if (a.test_share + a.validation_share > 1)
    throw ConfigError(fmt::format("--test-share {} and --validation-share {} overlap (sum > 1)",
                                  a.test_share, a.validation_share));
  if (a.split != "all") {
    std::vector<Conversation> kept;
    for (uint32_t i = 0; i < convs.size(); ++i)
      if (in_split(continuation_split_value(convs[i], i), a)) kept.push_back(std::move(convs[i]));
    fmt::print(stderr, "kvpolicy: kept the {} split: {} of {} conversations\n", a.split,
               kept.size(), convs.size());
    convs = std::move(kept);
  }
  TextTraceParams params = a.params;
  if (!a.arrivals.empty()) {
    app::TraceOptions opts;
    opts.path = a.arrivals;
    opts.sessions = "keep";
    Trace timing = app::load_trace(opts);
    if (timing.size() == 0)
      throw InputError(a.arrivals, 0, "", "no requests to take arrival times from");
    params.session_starts_s.reserve(timing.size());
    for (Time t : timing.time) params.session_starts_s.push_back(double(t) / kMicrosPerSecond);
  }
  std::vector<uint64_t> raw;
  Trace t = build_text_trace(convs, *tok, params, a.seed, &raw);
  t.name = a.source + ":" + a.input;
  if (classifier) {
    // Every turn scored from its prompts; the trace keeps the score and never the text.
    auto examples = continuation_examples(convs, 0.0, classifier->feature_options().window);
    std::vector<float> scores;
    scores.reserve(examples.size());
    // The turn quantile feature's q: online over the trace's requests in arrival order (each
    // request's turn counted when it arrives), read per (conversation, turn) example.
    std::vector<double> quantile(examples.size(), -1);
    if (classifier->feature_options().turn_quantile) {
      std::vector<uint32_t> conversation, turn;
      for (const auto& e : examples) {
        conversation.push_back(e.conversation);
        turn.push_back(e.turn);
      }
      quantile = online_turn_quantiles(t.session, t.turn, conversation, turn);
    }
    for (size_t i = 0; i < examples.size(); ++i) {
      const auto& e = examples[i];
      scores.push_back(static_cast<float>(
          classifier->predict(e.prompts, e.turn, e.previous_answer_chars, quantile[i])));
    }
    set_continuation(t, examples, scores);
    double sum = 0;
    for (float p : t.continuation) sum += p;
    fmt::print("scored {} requests with the continuation classifier {} (mean p {:.3f})\n", t.size(),
               a.classifier, t.size() ? sum / double(t.size()) : 0.0);
  }
  if (ends_with(a.out, ".kvtrace")) {
    write_native(t, a.out);
  } else {
    write_conversation_jsonl(t, a.out, raw, a.source);
  }
  uint64_t prompt = 0, output = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    prompt += t.prompt_tokens[r];
    output += t.output_tokens[r];
  }
  size_t sessions = 0;
  for (size_t r = 0; r < t.size(); ++r) sessions += t.turn[r] == 1;
  fmt::print(
      "{}: {} conversations ({} used; {} without a user message left out), {} requests, {} "
      "merged and {} empty messages\n"
      "tokenizer {}; {} prompt tokens ({:.0f} a request), {} output tokens; {} blocks of {} "
      "tokens; {:.0f} s of arrivals\nwrote {}\n",
      a.input, rep.conversations, sessions, rep.without_user, t.size(), rep.merged_messages,
      rep.empty_messages, tok->name(), prompt, t.size() ? double(prompt) / t.size() : 0.0, output,
      t.num_block_accesses(), t.block_tokens,
      t.size() ? double(t.time.back()) / kMicrosPerSecond : 0.0, a.out);
}

void add(CLI::App& app) {
  CLI::App* trace = trace_command(app);
  auto args = std::make_shared<BuildArgs>();
  auto* cmd = trace->add_subcommand(
      "build", "build a conversation trace from text (Chatbot Arena, ShareGPT, LooGLE)");
  cmd->add_option("--source", args->source, "chatbot-arena, sharegpt or loogle")
      ->required()
      ->check(CLI::IsMember({"chatbot-arena", "sharegpt", "loogle"}));
  input_file(cmd->add_option("--input,-i", args->input, "the dataset's JSONL file"))->required();
  output_file(cmd->add_option("--out,-o", args->out,
                              "FILE.kvtrace (native) or FILE.jsonl (Alibaba schema)"))
      ->required();
  input_file(cmd->add_option("--tokenizer", args->tokenizer,
                             "auto, cl100k, approx, or a tiktoken rank file (JSON)"))
      ->capture_default_str();
  cmd->add_option("--block-tokens", args->params.block_tokens, "tokens per KV block")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--session-rate", args->params.session_rate,
                  "Poisson conversation starts per second")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--think-s", args->params.think_mean_s,
                  "mean exponential think time after an answer, s")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-active", args->params.max_active, "cap on active conversations")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--decode-ms", args->params.decode_ms,
                  "an answer takes its tokens x this (ms) before the think time")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-conversations", args->params.max_conversations,
                  "use at most this many conversations (0 = all)")
      ->capture_default_str();
  cmd->add_option("--system-prompt", args->params.system_prompt,
                  "text prepended to every conversation (a shared prefix)");
  cmd->add_option("--seed", args->seed, "seed of the arrival times")->capture_default_str();
  cmd->add_option("--split", args->split,
                  "keep all conversations, or only the test (train, validation) split of "
                  "`classifier train` (by conversation): score only conversations the model "
                  "never saw")
      ->check(CLI::IsMember({"all", "test", "train", "validation"}))
      ->capture_default_str();
  cmd->add_option("--test-share", args->test_share, "the split's test share, as in training")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--validation-share", args->validation_share,
                  "the validation share of `classifier train --validation-share` (train keeps "
                  "the rest of the training side)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--skip-bad-lines", args->skip_bad, "skip and count bad records");
  input_file(cmd->add_option(
      "--arrivals", args->arrivals,
      "a trace (any format `simulate` reads, e.g. Azure's log through `trace import --assume`) "
      "whose request times become the conversations' start times, in order, instead of "
      "Poisson starts"));
  input_file(
      cmd->add_option("--classifier", args->classifier,
                      "score every request with this continuation model (`classifier train`) and "
                      "store the score in the trace's continuation column"));
  cmd->callback([args] { run(*args); });
}

CommandRegistrar registrar(45, add);

}  // namespace
}  // namespace kvpolicy::cli
