// The policy registry: policies join it at static-initialisation time (register_policy),
// specs are parsed and policies built from it, and README's policy table is rendered from it.
#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/policy/listing.h"
#include "kvpolicy/policy/policy.h"

namespace kvpolicy {

PolicyRegistry& PolicyRegistry::instance() {
  static PolicyRegistry registry;
  return registry;
}

void PolicyRegistry::add(PolicyInfo info) {
  policies_.push_back(std::move(info));
  std::sort(policies_.begin(), policies_.end(),
            [](const PolicyInfo& a, const PolicyInfo& b) { return a.name < b.name; });
}

const PolicyInfo& PolicyRegistry::get(const std::string& name) const {
  for (auto& p : policies_)
    if (p.name == name) return p;
  std::string known;
  for (auto& p : policies_) known += (known.empty() ? "" : ", ") + p.name;
  throw ConfigError("unknown policy '" + name + "' (known: " + known + ")");
}

std::vector<std::string> PolicyRegistry::names() const {
  std::vector<std::string> out;
  for (auto& p : policies_) out.push_back(p.name);
  return out;
}

std::string policy_table_markdown() {
  std::string out = "| name | evicts | source |\n|---|---|---|\n";
  for (auto& p : PolicyRegistry::instance().all())
    out += "| `" + p.name + "` | " + markdown_cell(p.summary) + " | " + markdown_cell(p.paper) +
           " |\n";
  return out;
}

namespace {

// Whether the policy is offline comes from needs_future(), as for a spec everywhere else: by its
// defaults, with a registered variant of the other kind as an example.
std::string offline_note(const PolicyInfo& p) {
  if (!p.needs_future) return "";
  bool by_default = needs_future(PolicySpec{p.name, ""});
  std::string other;
  for (const std::string& v : p.variants)
    if (other.empty() && needs_future(PolicySpec{p.name, v}) != by_default) other = v;
  if (by_default)
    return "\n  offline: reads the trace's future" +
           (other.empty() ? "" : " (online with " + other + ")");
  return "\n  online; offline (reads the trace's future) with " +
         (other.empty() ? std::string("some parameters") : other);
}

}  // namespace

std::string policy_listing() {
  std::string out;
  for (auto& p : PolicyRegistry::instance().all()) {
    out += p.name + "\n  " + p.summary + "\n  source: " + p.paper + offline_note(p) +
           (p.randomized ? "\n  randomized: --seed sets its choices" : "") + "\n";
    // From each declaration: name, type, default, what it accepts, then the help.
    for (auto& s : p.params)
      out += "  " + s.name + " (" + s.type_name() + ", default " + s.default_value +
             "): " + s.allowed() + "\n      " + s.help + "\n";
    out += "\n";
  }
  return out;
}

PolicySpec parse_policy_spec(const std::string& text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return {text, ""};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

std::vector<PolicySpec> parse_policy_list(const std::string& text) {
  std::vector<PolicySpec> out;
  for (const std::string& item : split_list(text)) {
    if (item.find('=') != std::string::npos && item.find(':') == std::string::npos &&
        !out.empty()) {
      out.back().params += (out.back().params.empty() ? "" : ",") + item;
    } else {
      out.push_back(parse_policy_spec(item));
    }
  }
  if (out.empty()) throw ConfigError("no policy given");
  return out;
}

bool needs_future(const PolicySpec& spec) {
  const PolicyInfo& info = PolicyRegistry::instance().get(spec.name);
  if (!info.needs_future || !info.needs_future_with) return info.needs_future;
  return info.needs_future_with(Params::parse(spec.params, info.params, "policy " + spec.name));
}

std::unique_ptr<Policy> make_policy(const PolicySpec& spec, const PolicyContext& ctx) {
  const PolicyInfo& info = PolicyRegistry::instance().get(spec.name);
  Params params = Params::parse(spec.params, info.params, "policy " + spec.name);
  if (info.needs_future && (!info.needs_future_with || info.needs_future_with(params)) &&
      !ctx.future)
    throw ConfigError("policy " + spec.name + " needs the trace's future (an oracle)");
  return info.make(ctx, params);
}

}  // namespace kvpolicy
