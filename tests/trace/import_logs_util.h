// Helpers of the `trace import` log tests (import_logs_test.cc, import_engine_logs_test.cc): an
// import with the approximate tokenizer, and a row's block keys.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kvpolicy/trace/import.h"
#include "kvpolicy/trace/text_trace.h"

namespace kvpolicy::testing {

struct Opts {
  Opts(std::string m = "", std::string p = "", std::string c = "chatml", uint32_t b = 4)
      : map(std::move(m)), preset(std::move(p)), chat(std::move(c)), block_tokens(b) {}
  std::string map, preset, chat;
  uint32_t block_tokens;
  bool skip = false;
};

inline Trace import(const std::string& path, const Opts& o, ImportReport* report = nullptr) {
  static const auto tok = make_approx_tokenizer();
  ImportOptions io;
  io.map = parse_import_mapping(o.map, o.preset);
  io.chat_template = o.chat;
  io.block_tokens = o.block_tokens;
  io.skip_bad_lines = o.skip;
  io.tokenizer = tok.get();
  ImportReport local;
  return import_trace(path, io, report ? *report : local);
}

inline std::vector<BlockKey> keys(const Trace& t, size_t r) {
  auto p = t.prompt(r);
  return {p.begin(), p.end()};
}

}  // namespace kvpolicy::testing
