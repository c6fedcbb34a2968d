// `trace import` of engines' own log formats: vLLM's request log lines and OpenTelemetry GenAI
// spans in OTLP/JSON (docs/formats.md, "Presets"). Each test writes its own log.
#include <gtest/gtest.h>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/import.h"
#include "kvpolicy/trace/text_trace.h"
#include "trace/import_logs_util.h"
#include "trace/trace_test_util.h"

namespace kvpolicy {
namespace {

using testing::import;
using testing::input_error;
using testing::keys;
using testing::write_file;

TEST(ImportLogs, VllmRequestLogLinesAreRequests) {
  // Lines as vLLM's --enable-log-requests writes them (and others it writes between them).
  std::string ids = "1, 2, 3, 4, 5, 6, 7, 8, 9";
  std::string log = write_file(
      "vllm.log",
      "INFO 03-04 10:00:00 [api_server.py:1] vLLM API server\n"
      "INFO 03-04 10:00:01 [logger.py:43] Received request cmpl-1: prompt: 'Hi,\\nthere', "
      "params: SamplingParams(n=1, max_tokens=8), prompt_token_ids: [" +
          ids +
          "], prompt_embeds shape: None, lora_request: None.\n"
          "INFO 03-04 10:00:02 [async_llm.py:1] Added request cmpl-1.\n"
          "(APIServer pid=7) INFO 03-04 10:00:04 [logger.py:43] Received request cmpl-2: prompt: "
          "None, params: SamplingParams(n=1), prompt_token_ids: [" +
          ids +
          ", 10], lora_request: None.\n"
          "INFO 03-04 10:00:05 logger.py:37] Received request cmpl-3: prompt: \"It's\", params: "
          "SamplingParams(n=1), prompt_token_ids: None, lora_request: None.\n"
          // Later releases: the prompt at DEBUG, then an INFO line without it.
          "DEBUG 03-04 10:00:07 [logger.py:50] Request cmpl-4 details: prompt: 'Hi', "
          "prompt_token_ids: [" +
          ids +
          ", 11, 12], prompt_embeds shape: None.\n"
          "INFO 03-04 10:00:07 [logger.py:60] Received request cmpl-4: params: "
          "SamplingParams(n=1), lora_request: None.\n");
  ImportOptions io;
  ImportReport rep;
  auto tok = make_approx_tokenizer();
  io.map = parse_import_mapping("", "vllm-log");
  io.format = "vllm-log";
  io.block_tokens = 4;
  io.tokenizer = tok.get();
  Trace t = import_trace(log, io, rep);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(rep.format, "vllm-log");
  EXPECT_EQ(t.time, (std::vector<Time>{0, 3'000'000, 4'000'000, 6'000'000}));
  EXPECT_EQ(t.prompt_tokens[3], 11u);
  EXPECT_EQ(keys(t, 3)[1], keys(t, 0)[1]);
  EXPECT_EQ(t.prompt_tokens[0], 9u);  // the logged token ids, not the text
  EXPECT_EQ(t.prompt_tokens[1], 10u);
  EXPECT_EQ(keys(t, 0)[1], keys(t, 1)[1]);  // two full blocks shared
  std::string bad = write_file(
      "bad.log", "x\nINFO 03-04 10:00:01 [logger.py:43] Received request c: prompt: 'open\n");
  EXPECT_EQ(std::string(input_error([&] { import_trace(bad, io, rep); }).what()),
            bad + ":2: vLLM request log: the prompt's string is not closed on its line");
  std::string info = write_file("info.log",
                                "INFO 03-04 10:00:07 [logger.py:60] Received request c: params: "
                                "SamplingParams(n=1), lora_request: None.\n");
  EXPECT_NE(std::string(input_error([&] { import_trace(info, io, rep); }).what())
                .find("VLLM_LOGGING_LEVEL=DEBUG"),
            std::string::npos);
  std::string none = write_file("none.log", "INFO 03-04 10:00:01 started\n");
  EXPECT_NE(std::string(input_error([&] { import_trace(none, io, rep); }).what())
                .find("no 'Received request' line"),
            std::string::npos);
}

// OTLP/JSON as OpenTelemetry's file exporter writes it: spans with attributes as key/value lists,
// int64 values as strings; the GenAI messages with `parts`, on the span or on its event.
std::string otlp_span(const std::string& id, const std::string& start_ns, const std::string& user,
                      int output, bool on_event) {
  std::string messages =
      "[{\\\"role\\\":\\\"system\\\",\\\"parts\\\":[{\\\"type\\\":\\\"text\\\",\\\"content\\\":"
      "\\\"Answer in one exact sentence, please.\\\"}]},{\\\"role\\\":\\\"user\\\",\\\"parts\\\":"
      "[{\\\"type\\\":\\\"text\\\",\\\"content\\\":\\\"" +
      user + "\\\"}]}]";
  std::string msg_attr =
      "{\"key\":\"gen_ai.input.messages\",\"value\":{\"stringValue\":\"" + messages + "\"}}";
  std::string attrs = "{\"key\":\"gen_ai.usage.output_tokens\",\"value\":{\"intValue\":\"" +
                      std::to_string(output) + "\"}}" + (on_event ? "" : "," + msg_attr);
  std::string events = on_event
                           ? ",\"events\":[{\"name\":\"gen_ai.client.inference.operation.details\","
                             "\"attributes\":[" +
                                 msg_attr + "]}]"
                           : "";
  return "{\"traceId\":\"t\",\"spanId\":\"" + id + "\",\"name\":\"chat\",\"startTimeUnixNano\":\"" +
         start_ns + "\",\"attributes\":[" + attrs + "]" + events + "}";
}

TEST(ImportLogs, OtelGenAiSpansAreRequests) {
  std::string other =
      "{\"spanId\":\"h\",\"startTimeUnixNano\":\"1\",\"attributes\":[{\"key\":\"http.method\","
      "\"value\":{\"stringValue\":\"POST\"}}]}";
  auto line = [](const std::string& spans) {
    return "{\"resourceSpans\":[{\"resource\":{},\"scopeSpans\":[{\"scope\":{},\"spans\":[" +
           spans + "]}]}]}\n";
  };
  std::string log = write_file(
      "otel.jsonl", line(otlp_span("a", "1735732800000000000", "Hi", 5, false) + "," + other) +
                        line(otlp_span("b", "1735732802500000000", "Hi there", 6, true) + "," +
                             otlp_span("c", "1735732803000000000", "Hi", 7, false)));
  ImportOptions io;
  ImportReport rep;
  auto tok = make_approx_tokenizer();
  io.map = parse_import_mapping("", "otel-genai");
  io.format = "otlp-json";
  io.block_tokens = 4;
  io.tokenizer = tok.get();
  Trace t = import_trace(log, io, rep);
  ASSERT_EQ(t.size(), 3u);  // the HTTP span is not a request
  EXPECT_EQ(t.time, (std::vector<Time>{0, 2'500'000, 3'000'000}));
  EXPECT_EQ(t.output_tokens, (std::vector<uint32_t>{5, 6, 7}));
  EXPECT_EQ(keys(t, 0), keys(t, 2));  // the same messages, the same blocks
  EXPECT_EQ(keys(t, 0)[0], keys(t, 1)[0]);
  // The messages render as OpenAI's would: parts' "content" is their text.
  std::string openai = write_file(
      "openai.jsonl",
      "{\"t\": 0, \"m\": [{\"role\": \"system\", \"content\": \"Answer in one exact sentence, "
      "please.\"}, {\"role\": \"user\", \"content\": \"Hi\"}]}\n");
  EXPECT_EQ(keys(import(openai, {"time=t,messages=m"}), 0), keys(t, 0));
  // A span's error names the log line that held it.
  io.map = parse_import_mapping("output=gen_ai.usage.input_tokens", "otel-genai");
  EXPECT_EQ(std::string(input_error([&] { import_trace(log, io, rep); }).what()),
            log +
                ":1: field 'gen_ai.usage.input_tokens': missing: no key "
                "'gen_ai.usage.input_tokens' and no 'gen_ai' in the record");
  std::string bad = write_file("bad.jsonl", "{\"spans\": []}\n");
  EXPECT_EQ(std::string(input_error([&] { import_trace(bad, io, rep); }).what()),
            bad + ":1: OTLP/JSON: no 'resourceSpans' array: not an OTLP/JSON trace export");
}

}  // namespace
}  // namespace kvpolicy
