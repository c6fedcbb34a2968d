// Replayable traces from text conversations (Chatbot Arena, ShareGPT, LooGLE): read the
// dataset, tokenize it, hash 16-token blocks along each conversation's growing history, and
// give the turns arrival times (Poisson conversation starts, exponential think time, a cap on
// active conversations).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kvpolicy/trace/trace.h"

namespace kvpolicy {

// --- Tokenizers ---------------------------------------------------------------------------

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Appends the tokens of `text` (UTF-8) to `out`.
  virtual void encode(std::string_view text, std::vector<uint32_t>& out) const = 0;
  virtual std::string name() const = 0;
};

// OpenAI's cl100k_base byte-level BPE, read at run time from a tiktoken rank file in JSON (the
// npm package `tiktoken`'s encoders/cl100k_base.json: pat_str, special_tokens, bpe_ranks).
// Special tokens are never produced (text is encoded as ordinary text). Throws ConfigError if the
// file is missing or malformed.
std::unique_ptr<Tokenizer> load_bpe_tokenizer(const std::string& path);

// A deterministic stand-in when no vocabulary is installed: the same pre-tokenizer as cl100k
// (words with their leading space, number groups, punctuation runs, whitespace), each piece
// cut into round(bytes / chars_per_token) chunks (at least one); token ids are hashes of the
// chunks. The default 5.5 is calibrated against cl100k on Chatbot Arena (prompt tokens within
// 0.1 %, answers +8 %) and ShareGPT (prompts +4 %, answers +8 %).
std::unique_ptr<Tokenizer> make_approx_tokenizer(double chars_per_token = 5.5);

// Where the cl100k rank file is looked for: $KVPOLICY_TOKENIZER if set (only there), else
// /usr/local/share/kvpolicy/cl100k_base.json, then /usr/share/kvpolicy/cl100k_base.json.
// Returns "" if none exists.
std::string find_bpe_vocabulary();

// "cl100k" (the installed vocabulary; ConfigError with the install hint if absent), "approx"
// (or "approx:<bytes per token>"),
// "auto" (cl100k if installed, else approx, saying so in *note), or a path to a rank file.
std::unique_ptr<Tokenizer> make_tokenizer(const std::string& spec, std::string* note = nullptr);

// The pre-tokenizer of cl100k_base: splits `text` into pieces exactly as its regular
// expression does for ASCII; other code points are classed as letters unless they are Unicode
// white space, digits, combining marks or in a punctuation or symbol block (an approximation of
// Unicode's letter class).
std::vector<std::string_view> pretokenize(std::string_view text);

// --- Conversations ------------------------------------------------------------------------

enum class Role : uint8_t { kSystem, kUser, kAssistant };

struct Message {
  Role role;
  std::string text;
};

struct Conversation {
  std::string id;
  uint64_t line = 0;  // where it was read
  // Nested (chat): turn k's prompt is everything before it plus its user message. Independent
  // (LooGLE): every turn's prompt is the shared context plus its own question only.
  bool independent_turns = false;
  std::vector<Message> messages;
};

struct TextReadReport {
  uint64_t lines = 0;
  uint64_t conversations = 0;
  uint64_t turns = 0;
  uint64_t bad_records = 0;  // skipped (with skip_bad); else the first one throws
  std::string first_error;   // file:line: field: what
  uint64_t empty_messages = 0;
  uint64_t merged_messages = 0;  // consecutive messages of one role joined into one
  uint64_t without_user = 0;     // chats with no user message: valid, but no request; left out
};

// Sources: "chatbot-arena" ({"id", "messages": [{"role", "content"}]}), "sharegpt" ({"id",
// "conversations": [{"from": human|gpt|system, "value"}]}), "loogle" ({"input" document,
// "title", "qa_pairs" as a Python literal list of {"Q", "A", ...}, or "none" with "output" as
// the answer to a summary request}). A chat with no user message makes no request: it is left
// out and counted (without_user). A malformed record is bad: an InputError naming file, line
// and field, or with skip_bad a count and the first error.
std::vector<Conversation> read_conversations(const std::string& path, const std::string& source,
                                             bool skip_bad, TextReadReport& report);

// --- Tokens and the trace ------------------------------------------------------------------

// A conversation as the engine serves it, in a ChatML-like template: every message is
// "<|im_start|>ROLE\n" + text + "<|im_end|>\n"; a prompt ends with "<|im_start|>assistant\n"
// and the answer's text follows it. Nested: one token stream; turn k's prompt is
// tokens[0, prompt_end[k]) and its answer tokens[prompt_end[k], answer_end[k]), so turn k+1's
// prompt starts with turn k's prompt and answer. Independent: `tokens` is the shared context
// and turn k's prompt is tokens + questions[k].
struct ConversationTokens {
  bool independent = false;
  std::vector<uint32_t> tokens;
  std::vector<uint32_t> prompt_end, answer_end;  // nested
  std::vector<std::vector<uint32_t>> questions;  // independent
  std::vector<uint32_t> answer_tokens;           // per turn: the answer's token count
  size_t turns() const { return answer_tokens.size(); }
};
ConversationTokens tokenize_conversation(const Conversation& c, const Tokenizer& tok,
                                         const std::string& system_prompt = "");

struct TextTraceParams {
  uint32_t block_tokens = 16;
  double session_rate = 1.0;       // Poisson conversation starts per second
  double think_mean_s = 100;       // exponential gap after an answer before the next turn
  uint32_t max_active = 200;       // a conversation waits to start while this many are active
  double decode_ms = 20;           // an answer takes its tokens x this before the think time
  uint64_t max_conversations = 0;  // 0 = all
  std::string system_prompt;       // prepended to every conversation (a shared prefix)
  // Real arrival times (seconds, ascending): conversation i starts at session_starts_s[i] minus
  // the first, instead of at Poisson times (session_rate is then unused). Empty = Poisson.
  std::vector<double> session_starts_s;
};

// Turn k of conversation i becomes a request with session = i (in order of start), turn = k+1,
// prompt_tokens = its prompt, output_tokens = its answer, category 0; blocks are hashes of B
// tokens (the last, partial block of its own tokens). Deterministic for the seed. `raw_ids`, if
// given, receives the raw block ids (before chaining), one per entry of trace.blocks.
Trace build_text_trace(const std::vector<Conversation>& conversations, const Tokenizer& tok,
                       const TextTraceParams& params, uint64_t seed,
                       std::vector<uint64_t>* raw_ids = nullptr);

// Writes the Alibaba (qwen-bailian) JSONL schema, which the `bailian` reader reads back with
// sessions: chat_id (= request index), parent_chat_id (the session's previous turn, -1 first),
// timestamp (s), input_length, output_length, type, turn, hash_ids (the raw block hashes, so
// the keys chain the same), plus session and continues (whether the session has a next turn).
void write_conversation_jsonl(const Trace& trace, const std::string& path,
                              const std::vector<uint64_t>& raw_ids,
                              const std::string& type = "conversation");

// Raw id of a block of text tokens: 53 bits, so JSON readers keep it exact.
uint64_t text_block_id(const uint32_t* tokens, size_t count);

// Appends the raw ids of a prompt's blocks of `block_tokens` tokens to `ids`, from block
// `from_block` on: full blocks, then a partial last block of its own tokens. Chained by
// Trace::add_request, these are the keys every text trace uses (`trace build`, `trace import`).
void text_block_ids(const uint32_t* tokens, size_t count, uint32_t block_tokens,
                    std::vector<uint64_t>& ids, size_t from_block = 0);

}  // namespace kvpolicy
