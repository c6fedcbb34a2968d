// The predictor registry, the learned policies' predictor parameters (nested, and their
// deprecated flat spellings) and the factory.
#include "kvpolicy/predict/registry.h"

#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/predict/key_gbm.h"

namespace kvpolicy {

PredictorRegistry& PredictorRegistry::instance() {
  static PredictorRegistry registry;
  return registry;
}

void PredictorRegistry::add(PredictorInfo info) {
  predictors_.push_back(std::move(info));
  std::sort(predictors_.begin(), predictors_.end(),
            [](const PredictorInfo& a, const PredictorInfo& b) { return a.name < b.name; });
}

const PredictorInfo* PredictorRegistry::find(const std::string& name) const {
  for (auto& p : predictors_)
    if (p.name == name) return &p;
  return nullptr;
}

const PredictorInfo& PredictorRegistry::get(const std::string& name) const {
  if (const PredictorInfo* p = find(name)) return *p;
  std::string absent = learned_predictor_absent(name);
  if (!absent.empty()) throw ConfigError(absent);
  std::string known;
  for (auto& p : predictors_) known += (known.empty() ? "" : ", ") + p.name;
  throw ConfigError("unknown predictor '" + name + "' (known: " + known + ")");
}

bool register_predictor(PredictorInfo info) {
  PredictorRegistry::instance().add(std::move(info));
  return true;
}

const std::vector<std::string>& learned_only_predictors() {
  static const std::vector<std::string> names = {"gbm", "reuse"};
  return names;
}

std::string learned_predictor_absent(const std::string& name) {
  auto& names = learned_only_predictors();
  if (std::find(names.begin(), names.end(), name) == names.end()) return "";
  return "predictor '" + name +
         "' needs XGBoost: this kvpolicy was built with -DKVPOLICY_LEARNED=OFF";
}

namespace {
std::unique_ptr<KeyModel> (*key_gbm_factory)(const KeyGbmConfig&) = nullptr;
}  // namespace

bool register_key_gbm(std::unique_ptr<KeyModel> (*make)(const KeyGbmConfig&)) {
  key_gbm_factory = make;
  return true;
}

std::unique_ptr<KeyModel> make_key_gbm(const KeyGbmConfig& config) {
  if (!key_gbm_factory)
    throw ConfigError(
        "the embedding cache's GBM needs XGBoost: this kvpolicy was built with "
        "-DKVPOLICY_LEARNED=OFF");
  return key_gbm_factory(config);
}

std::vector<NestedChoice> predictor_choices() {
  std::vector<NestedChoice> out;
  for (auto& p : PredictorRegistry::instance().all())
    out.push_back({p.name, p.summary, p.params, ""});
  for (const std::string& name : learned_only_predictors())
    if (!PredictorRegistry::instance().find(name))
      out.push_back({name, "", {}, learned_predictor_absent(name)});
  return out;
}

// --- the learned policies' parameters ---------------------------------------------------------

std::vector<ParamSpec> predictor_param_specs() {
  return {
      param_nested("predictor", "oracle", predictor_choices,
                   "next-access predictor, with its own parameters nested: "
                   "predictor=reuse(window=20000,trees=50); oracle and noisy read the trace's "
                   "future"),
      param_bool("audit", false, "score predictions against the oracle (stats audit_*)"),
      // The flat spellings of the predictors' parameters, from before they were nested: old
      // result files and scripts name them (docs/policies.md).
      deprecated(param_double("p", 0, {.min = 0, .max = 1}, "noisy: p")),
      deprecated(
          param_choice("noise", "adversarial", {"adversarial", "lognormal"}, "noisy: noise")),
      deprecated(param_choice("redraw", "request", {"request", "access"}, "noisy: redraw")),
      deprecated(param_double("sigma", 1, {.min = 0}, "noisy: sigma")),
      deprecated(param_choice("mode", "sync", {"sync", "async"}, "gbm: mode")),
      deprecated(param_int("max_lag", 0, {.min = 0}, "gbm: max_lag")),
      deprecated(param_int("window", 30000, {.min = 10}, "gbm: window")),
      deprecated(param_int("retrain", 10000, {.min = 1}, "gbm: retrain")),
      deprecated(param_int("trees", 300, {.min = 1}, "gbm: trees")),
      deprecated(param_int("depth", 6, {.min = 1}, "gbm: depth")),
      deprecated(param_double("eta", 0.1, {.min = 0, .min_exclusive = true}, "gbm: eta")),
      deprecated(param_double("horizon", 0, {.min = 0}, "reuse: horizon")),
      deprecated(
          param_double("horizon_x", 1, {.min = 0, .min_exclusive = true}, "reuse: horizon_x")),
      deprecated(param_double("bonus_x", 1, {.min = 0}, "reuse: bonus_x")),
      deprecated(param_double("sample", 0.1, {.min = 0, .max = 1, .min_exclusive = true},
                              "reuse: sample")),
      deprecated(param_int("key_table", 1 << 18, {.min = 2}, "reuse: key_table")),
      deprecated(param_int("session_table", 1 << 16, {.min = 2}, "reuse: session_table")),
      deprecated(param_int("reuse_window", 40000, {.min = 10}, "reuse: window")),
      deprecated(param_int("first_fit", 1000, {.min = 10}, "reuse: first_fit")),
      deprecated(param_int("reuse_retrain", 20000, {.min = 1}, "reuse: retrain")),
      deprecated(param_int("reuse_trees", 30, {.min = 1}, "reuse: trees")),
      deprecated(param_double("reuse_eta", 0.2, {.min = 0, .min_exclusive = true}, "reuse: eta")),
      deprecated(param_int("reuse_depth", 5, {.min = 1}, "reuse: depth")),
      deprecated(param_string("load_model", "", "reuse: load_model")),
      deprecated(param_string("save_model", "", "reuse: save_model")),
  };
}

namespace {

// The predictor that alone reads a flat parameter ("" = every predictor): the one that
// declares it as an alias.
std::string only_predictor_reading(const std::string& name) {
  for (auto& info : PredictorRegistry::instance().all())
    for (auto& [flat, own] : info.flat_aliases)
      if (flat == name) return info.name;
  return "";
}

// A parameter of another predictor would be silently ignored (laru:p=0.2 without
// predictor=noisy ran the exact oracle): an error naming it. Values equal to the default pass,
// so a spelled-out canonical parameter list still parses.
void reject_other_predictors_params(const Params& p, const std::string& kind) {
  for (const ParamSpec& s : predictor_param_specs()) {
    std::string reader = only_predictor_reading(s.name);
    if (reader.empty() || reader == kind) continue;
    bool is_default = s.kind == ParamKind::kInt ? p.get_int(s.name) == std::stoll(s.default_value)
                      : s.kind == ParamKind::kDouble
                          ? p.get_double(s.name) == std::stod(s.default_value)
                          : p.get_string(s.name) == s.default_value;
    if (!is_default)
      throw ConfigError(p.owner() + ": parameter " + s.name + " applies to predictor=" + reader +
                        " only (this one is predictor=" + kind + ")");
  }
}

}  // namespace

PredictorConfig predictor_config(const Params& p) {
  PredictorConfig c;
  auto [kind, nested] = split_nested(p.get_string("predictor"));
  const PredictorInfo& info = PredictorRegistry::instance().get(kind);
  c.kind = kind;
  reject_other_predictors_params(p, kind);
  c.audit = p.get_bool("audit");
  // The flat spellings first: a nested value, given after them, wins.
  std::string text;
  for (auto& [flat, own] : info.flat_aliases)
    text += (text.empty() ? "" : ",") + own + "=" + p.get_string(flat);
  if (!nested.empty()) text += (text.empty() ? "" : ",") + nested;
  Params own = Params::parse(text, info.params, p.owner() + ": predictor " + kind);
  if (info.configure) info.configure(own, c);
  return c;
}

std::unique_ptr<NextAccessPredictor> make_predictor(const PredictorConfig& c,
                                                    const PredictorContext& ctx) {
  const PredictorInfo& info = PredictorRegistry::instance().get(c.kind);
  if ((info.reads_future || c.audit) && !ctx.future)
    throw ConfigError("predictor '" + c.kind + "'" + (c.audit ? " with audit" : "") +
                      " needs the trace's oracle");
  std::unique_ptr<NextAccessPredictor> p = info.make(c, ctx);
  if (c.audit) p = std::make_unique<AuditedPredictor>(std::move(p), *ctx.future, ctx.seed);
  return p;
}

}  // namespace kvpolicy
