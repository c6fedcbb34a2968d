#include "kvpolicy/core/json_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <string>

#include "kvpolicy/trace/trace_stats.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

using namespace std::string_literals;

// What simdjson reads back from `json`, which must be one JSON string.
std::string parsed_string(const std::string& json) {
  simdjson::dom::parser parser;
  std::string_view s;
  auto err = parser.parse(json).get_string().get(s);
  EXPECT_FALSE(err) << json << ": " << simdjson::error_message(err);
  return std::string(s);
}

TEST(JsonString, EveryByteIsValidJson) {
  for (int b = 0; b < 256; ++b) {
    std::string raw = "a" + std::string(1, static_cast<char>(b)) + "z";
    std::string json = json_string(raw);
    // A lone byte at or above 0x80 is not UTF-8: it becomes U+FFFD, everything else is kept.
    std::string want = b < 0x80 ? raw : "a\xEF\xBF\xBDz";
    EXPECT_EQ(parsed_string(json), want) << "byte " << b << ": " << json;
  }
}

TEST(JsonString, KeepsValidUtf8AndReplacesInvalidSequences) {
  EXPECT_EQ(parsed_string(json_string("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80")),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  // Overlong '/', a UTF-16 surrogate, past U+10FFFF, a cut sequence: one U+FFFD per bad byte.
  for (const char* bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"}) {
    std::string out = parsed_string(json_string(bad));
    EXPECT_EQ(out.size(), 3 * std::string(bad).size()) << json_string(bad);
    EXPECT_EQ(out.find_first_not_of("\xEF\xBF\xBD"), std::string::npos);
  }
  EXPECT_EQ(json_string("\x01\x1f\"\\\n"), R"("\u0001\u001f\"\\\n")");
}

// `trace stats --json` with every byte in a category name, read by Python's json module too.
TEST(JsonString, TraceStatsWithControlCharactersParses) {
  Trace t;
  t.name = "ctl";
  std::string every;
  for (int b = 1; b < 256; ++b) every += static_cast<char>(b);
  t.category_names = {"tab\there", "nul\x00in"s, every, "\x7f\x80\xff"};
  for (CategoryId c = 0; c < 4; ++c)
    t.add_request(c, std::vector<uint64_t>{1, 2}, 32, 1, kNoSession, 1, c);
  std::string json = trace_stats(t).to_json("");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(json).get(doc)) << json;
  std::string_view name;
  ASSERT_FALSE(doc["categories"].at(1)["name"].get_string().get(name));
  EXPECT_EQ(name, "nul\x00in"s);
  std::string path = testing::write_file("stats.json", json);
  std::string cmd = "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' " + path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << json;
}

}  // namespace
}  // namespace kvpolicy
