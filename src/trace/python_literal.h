// The Python literals LooGLE stores its QA pairs in (strings, lists, tuples, dicts, numbers,
// None/True/False), parsed into a tree of PyValue (internal header).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvpolicy {

struct PyValue {
  enum Kind { kNone, kBool, kNumber, kString, kList, kDict } kind = kNone;
  std::string text;  // kString; kNumber and kBool keep their spelling
  std::vector<PyValue> items;
  std::vector<std::pair<std::string, PyValue>> entries;

  const PyValue* get(std::string_view key) const {
    for (auto& [k, v] : entries)
      if (k == key) return &v;
    return nullptr;
  }
  // Every string inside, joined (an answer may be a string, a list or a dict of strings).
  void collect(std::string& out) const {
    if (kind == kString || kind == kNumber || kind == kBool) {
      if (!out.empty()) out += "; ";
      out += text;
    }
    for (auto& v : items) v.collect(out);
    for (auto& e : entries) e.second.collect(out);
  }
};

// Strings (' or " with Python's escapes), lists, tuples, dicts, numbers, None/True/False.
// Throws std::runtime_error naming the offset of what it cannot read.
PyValue parse_python_literal(std::string_view s);

}  // namespace kvpolicy
