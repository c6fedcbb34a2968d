// The Python literals LooGLE stores its QA pairs in (strings, lists, tuples, dicts, numbers,
// None/True/False), parsed into a tree of PyValue (internal header).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvpolicy {

struct PyValue {
  enum Kind { kNone, kBool, kNumber, kString, kList, kDict } kind = kNone;
  std::string text;               // kString; kNumber and kBool keep their spelling
  std::vector<PyValue> items;     // kList; kDict: the values, keys[i] -> items[i]
  std::vector<std::string> keys;  // kDict

  const PyValue* get(std::string_view key) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &items[i];
    return nullptr;
  }
  // Every string inside, joined (an answer may be a string, a list or a dict of strings).
  void collect(std::string& out) const {
    if (kind == kString || kind == kNumber || kind == kBool) {
      if (!out.empty()) out += "; ";
      out += text;
    }
    for (auto& v : items) v.collect(out);
  }
};

// Strings (' or " with Python's escapes), lists, tuples, dicts, numbers, None/True/False.
// Throws std::runtime_error naming the offset of what it cannot read.
PyValue parse_python_literal(std::string_view s);

}  // namespace kvpolicy
