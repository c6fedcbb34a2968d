// The optional priority column (docs/formats.md, bailian): read per record (absent = 0), kept
// through sorting, handed to policies in the request view, refused by the native writer.
#include <gtest/gtest.h>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/trace.h"
#include "kvpolicy/trace/trace_io.h"
#include "trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::write_file;

TEST(PriorityColumn, ReadSortedAndHandedToPolicies) {
  // Line 3 comes first in time; line 2 has no priority.
  std::string text =
      R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 2.0, "input_length": 16, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [1], "priority": 5}
{"chat_id": 2, "parent_chat_id": -1, "timestamp": 3.0, "input_length": 16, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [2]}
{"chat_id": 3, "parent_chat_id": -1, "timestamp": 1.0, "input_length": 16, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [3], "priority": -2}
)";
  Trace t = read_trace(write_file("priority.jsonl", text), "bailian", {});
  ASSERT_TRUE(t.has_priority());
  EXPECT_EQ(t.priority, (std::vector<int32_t>{-2, 5, 0}));
  EXPECT_EQ(request_view(t, 1).priority, 5);
  EXPECT_THROW(write_native(t, write_file("priority.kvtrace", "")), ConfigError);

  std::string none =
      R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 2.0, "input_length": 16, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [1], "priority": 0}
)";
  Trace z = read_trace(write_file("no-priority.jsonl", none), "bailian", {});
  EXPECT_FALSE(z.has_priority());  // all 0: no column, as without the field
  EXPECT_EQ(request_view(z, 0).priority, 0);
}

TEST(PriorityColumn, OutOfRangeIsAnError) {
  std::string text =
      R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 2.0, "input_length": 16, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [1], "priority": 4294967296}
)";
  EXPECT_THROW(read_trace(write_file("bad-priority.jsonl", text), "bailian", {}), InputError);
}

}  // namespace
}  // namespace kvpolicy
