// The continuation classifier's examples from text conversations (LPC, docs/policies.md):
// one per user turn, with the prompts it may look at and whether the conversation goes on, and
// the train/test split by conversation. The text stays here and in the classifier: a trace
// carries only the score (Trace::continuation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvpolicy/trace/text_trace.h"

namespace kvpolicy {

struct ConversationTurnExample {
  uint32_t conversation = 0;  // index in the input
  uint32_t turn = 1;          // 1 = first, as in the trace built from the same conversations
  bool continues = false;     // label: the conversation has a later user turn
  bool test = false;          // in the test split (see continuation_split_test)
  double split = 0;           // continuation_split_value: validation is split >= 1 - its share
  // The turn's user prompt first, then the previous turns' prompts, at most `window` in all.
  std::vector<std::string> prompts;
  // Characters (code points) of the answer to the previous turn; -1 on a first turn.
  int64_t previous_answer_chars = -1;
};

// Per user turn of every conversation, in order (conversation, then turn). Turns are counted as
// tokenize_conversation counts them: user messages up to an assistant message (or the end) are
// one turn, joined by a blank line; LooGLE's document (the first message of an
// independent-turns record) is context, not a turn. `test_share` of the conversations (by
// continuation_split_test) are marked test.
std::vector<ConversationTurnExample> continuation_examples(
    const std::vector<Conversation>& conversations, double test_share = 0.2, uint32_t window = 5);

// Whether a conversation falls in the test split: a hash of its id (of its index when it has
// none) below test_share, so the split is by conversation, never by turn, and the same for a
// conversation whatever else the file holds. A ShareGPT id's trailing part number ("abc_3" of a
// long conversation cut into parts) is ignored when it follows a base id without underscores,
// so the parts of one conversation share a split.
bool continuation_split_test(const Conversation& c, uint32_t index, double test_share);
// The uniform number in [0, 1) behind that split: test when below test_share. A validation
// split of the training side takes the top `validation_share` (value >= 1 - validation_share),
// so it never meets the test split while test_share + validation_share <= 1.
double continuation_split_value(const Conversation& c, uint32_t index);

// Stores per request of `trace` (built by build_text_trace from the same conversations, where
// session = conversation index and turn counts as above) the score of its (conversation, turn)
// example: scores[i] belongs to examples[i]. Throws Error if a request has no example.
void set_continuation(Trace& trace, const std::vector<ConversationTurnExample>& examples,
                      const std::vector<float>& scores);

}  // namespace kvpolicy
