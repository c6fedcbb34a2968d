// `trace import --map id=...`: JSONL lines that share a request id (a gateway's request line and
// its later response line) joined into one request. Internal to src/trace (import).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "import_rows.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy {

class RequestJoin {
 public:
  // `columns`: every mapped column but the id; `prompt`: the prompt's column.
  RequestJoin(const std::string& path, std::string id_column, std::vector<std::string> columns,
              std::string prompt)
      : path_(path),
        id_(std::move(id_column)),
        columns_(std::move(columns)),
        prompt_(std::move(prompt)) {}

  // Keeps the mapped fields of one line. The line holding the prompt gives every field it has
  // (its time is the request's); the others fill in what it lacks, first line first. A second
  // line with a prompt for the same id is an InputError naming both lines.
  void add(simdjson::dom::object obj, uint64_t line);

  // Each request in the order of its first line. A request whose lines have no prompt (a
  // response without its request) goes to on_orphan, which throws or counts it.
  void for_each(const std::function<void(const RowSource&)>& on_row,
                const std::function<void(const InputError&)>& on_orphan) const;

  uint64_t joined_lines() const { return joined_; }

 private:
  struct Field {
    std::string json;  // minified
    uint64_t line = 0;
  };
  struct Request {
    std::string id;
    uint64_t first_line = 0, prompt_line = 0;
    std::unordered_map<std::string, Field> fields;
  };

  const std::string& path_;
  std::string id_;
  std::vector<std::string> columns_;
  std::string prompt_;
  std::vector<Request> requests_;
  std::unordered_map<std::string, size_t> index_;
  uint64_t joined_ = 0;
};

}  // namespace kvpolicy
