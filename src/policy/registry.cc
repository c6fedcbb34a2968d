// The policy registry: policies join it at static-initialisation time (register_policy),
// specs are parsed and policies built from it, and README's policy table is rendered from it.
#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/policy/listing.h"
#include "kvpolicy/policy/policy.h"
#include "kvpolicy/predict/continuation_source.h"
#include "retention.h"

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
  for (const std::string& v : p.variants) {
    try {
      if (other.empty() && needs_future(PolicySpec{p.name, v}) != by_default) other = v;
    } catch (const ConfigError&) {
      // A variant this build cannot make (a learned predictor without -DKVPOLICY_LEARNED).
    }
  }
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
    std::string flat;
    for (auto& s : p.params) {
      if (s.deprecated) {
        flat += (flat.empty() ? "" : ", ") + s.name;
        continue;
      }
      out += "  " + s.name + " (" + s.type_name() + ", default " + s.default_value +
             "): " + s.allowed() + "\n      " + s.help + "\n";
      if (s.kind != ParamKind::kNested || !s.nested) continue;
      // A nested component's own parameters, under its name: name(key=value,...).
      for (const NestedChoice& c : s.nested()) {
        out += "    " + s.name + "=" + c.name + (c.params.empty() ? "" : "(...)") + ": " +
               (c.unavailable.empty() ? c.summary : c.unavailable) + "\n";
        for (auto& n : c.params)
          out += "      " + n.name + " (" + n.type_name() + ", default " + n.default_value +
                 "): " + n.allowed() + "\n          " + n.help + "\n";
      }
    }
    if (!flat.empty())
      out += "  deprecated flat spellings of the predictor's parameters (" + flat +
             "): predictor=reuse,reuse_trees=50 is predictor=reuse(trees=50)\n";
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
  for (const std::string& item : split_top_level(text)) {
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

std::vector<PolicySpec> expand_policy_sets(const std::string& text) {
  std::vector<PolicySpec> out;
  auto& registry = PolicyRegistry::instance();
  for (PolicySpec& spec : parse_policy_list(text)) {
    bool set = spec.params.empty() &&
               (spec.name == "online" || spec.name == "offline" || spec.name == "all");
    if (!set) {
      out.push_back(std::move(spec));
      continue;
    }
    for (const std::string& name : registry.names()) {
      if (!registry.get(name).in_sets) continue;
      PolicySpec member{name, ""};
      bool offline = needs_future(member);
      if (spec.name == "all" || (spec.name == "offline") == offline) out.push_back(member);
    }
  }
  // A name given twice (online,lru) runs once.
  std::vector<PolicySpec> unique;
  for (auto& s : out)
    if (std::none_of(unique.begin(), unique.end(),
                     [&](const PolicySpec& u) { return u.label() == s.label(); }))
      unique.push_back(s);
  return unique;
}

namespace {

bool reads_trace_scores(const PolicySpec& spec) {
  const PolicyInfo& info = PolicyRegistry::instance().get(spec.name);
  return info.reads_trace_scores_with && info.reads_trace_scores_with(Params::parse(
                                             spec.params, info.params, "policy " + spec.name));
}

}  // namespace

std::vector<PolicySpec> policies_for_trace(const std::string& text, bool has_scores,
                                           std::string* skipped) {
  if (skipped) skipped->clear();
  std::vector<PolicySpec> all = expand_policy_sets(text);
  if (has_scores) return all;
  std::vector<PolicySpec> named = parse_policy_list(text);
  std::vector<PolicySpec> out;
  std::string left_out;
  for (PolicySpec& spec : all) {
    if (!reads_trace_scores(spec)) {
      out.push_back(std::move(spec));
      continue;
    }
    bool by_name = std::any_of(named.begin(), named.end(),
                               [&](const PolicySpec& n) { return n.label() == spec.label(); });
    if (by_name)
      throw ConfigError("policy " + spec.label() + ": " + kNoContinuationScores + "; " + spec.name +
                        ":predictor=oracle is its offline reference");
    left_out += (left_out.empty() ? "" : ", ") + spec.label();
  }
  if (skipped && !left_out.empty()) *skipped = "skipped " + left_out + ": " + kNoContinuationScores;
  return out;
}

std::unique_ptr<Policy> make_policy(const PolicySpec& spec, const PolicyContext& ctx) {
  const PolicyInfo& info = PolicyRegistry::instance().get(spec.name);
  Params params = Params::parse(spec.params, info.params, "policy " + spec.name);
  if (info.needs_future && (!info.needs_future_with || info.needs_future_with(params)) &&
      !ctx.future)
    throw ConfigError("policy " + spec.name + " needs the trace's future (an oracle)");
  // Retention hints: every policy behind the hint wrapper, once. guarded and auto keep the hints
  // for the policies they build, so the guard stays outermost and bounds what hints cost.
  if (!ctx.retention || spec.name == "guarded" || spec.name == "auto")
    return info.make(ctx, params);
  PolicyContext plain = ctx;
  plain.retention.reset();
  if (spec.name == "hinted") return info.make(plain, params);
  return std::make_unique<Retention>(plain, info.make(plain, params),
                                     ctx.retention->default_priority);
}

}  // namespace kvpolicy
