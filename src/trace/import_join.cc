#include "import_join.h"

#include <fmt/format.h>

#include <optional>

#include "kvpolicy/core/error.h"

namespace kvpolicy {
namespace {

using simdjson::dom::element;

// A joined request's fields, read back from their minified JSON.
class StoredRow : public import_json::JsonCells {
 public:
  template <typename Fields>
  StoredRow(const std::string& path, const std::string& id, uint64_t line, const Fields& fields)
      : path_(path), id_(id), line_(line), lookup_([&fields](const std::string& c) {
          auto it = fields.find(c);
          return it == fields.end()
                     ? std::pair<const std::string*, uint64_t>{nullptr, 0}
                     : std::pair<const std::string*, uint64_t>{&it->second.json, it->second.line};
        }) {}

  [[noreturn]] void fail(const std::string& column, const std::string& what) const override {
    auto [json, line] = lookup_(column);
    throw InputError(path_, json ? line : line_, column, what);
  }
  uint64_t line() const override { return line_; }

 protected:
  element get(const std::string& column) const override {
    auto [json, line] = lookup_(column);
    if (!json) fail(column, fmt::format("missing in every line of request id '{}'", id_));
    element v;
    if (parser_.parse(*json).get(v)) fail(column, "unreadable JSON");
    return v;
  }

 private:
  const std::string& path_;
  const std::string& id_;
  uint64_t line_;
  std::function<std::pair<const std::string*, uint64_t>(const std::string&)> lookup_;
  mutable simdjson::dom::parser parser_;
};

}  // namespace

void RequestJoin::add(simdjson::dom::object obj, uint64_t line) {
  element v;
  std::string why;
  if (import_json::resolve(obj, id_, v, why) != import_json::Found::kYes)
    throw InputError(path_, line, id_, why);
  std::optional<std::string> id;
  std::string err = import_json::scalar(v, id);
  if (!err.empty()) throw InputError(path_, line, id_, err);
  if (!id) throw InputError(path_, line, id_, "empty request id");
  // Every field first, so a bad line changes nothing.
  std::vector<std::pair<const std::string*, std::string>> got;
  bool has_prompt = false;
  for (const std::string& c : columns_) {
    import_json::Found f = import_json::resolve(obj, c, v, why);
    if (f == import_json::Found::kBad) throw InputError(path_, line, c, why);
    if (f == import_json::Found::kMissing || v.is_null()) continue;
    got.emplace_back(&c, simdjson::minify(v));
    has_prompt |= c == prompt_;
  }
  auto [it, fresh] = index_.try_emplace(*id, requests_.size());
  if (fresh) requests_.push_back(Request{*id, line, 0, {}});
  Request& r = requests_[it->second];
  if (has_prompt && r.prompt_line)
    throw InputError(path_, line, prompt_,
                     fmt::format("request id '{}' has a prompt on line {} already: one prompt "
                                 "per request id",
                                 *id, r.prompt_line));
  if (!fresh) ++joined_;
  if (has_prompt) r.prompt_line = line;
  for (auto& [column, json] : got) {
    auto [slot, added] = r.fields.try_emplace(*column, Field{json, line});
    if (!added && has_prompt) slot->second = Field{std::move(json), line};
  }
}

void RequestJoin::for_each(const std::function<void(const RowSource&)>& on_row,
                           const std::function<void(const InputError&)>& on_orphan) const {
  for (const Request& r : requests_) {
    if (!r.prompt_line) {
      on_orphan(InputError(path_, r.first_line, prompt_,
                           fmt::format("request id '{}': no line of it has the prompt (a "
                                       "response without its request)",
                                       r.id)));
      continue;
    }
    on_row(StoredRow(path_, r.id, r.prompt_line, r.fields));
  }
}

}  // namespace kvpolicy
