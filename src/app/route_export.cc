// The configuration to paste for a tuned router: one table from (router, kvpolicy parameter) to
// (system, key, form), and how each system's text is laid out (docs/serve.md, "Autotuning a
// router: route-tune"). A router without a row gets the kvpolicy line only.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kvpolicy/app/route_tune.h"
#include "kvpolicy/core/params.h"
#include "kvpolicy/core/strings.h"

namespace kvpolicy::app {
namespace {

enum class Form {
  kFlag,    // --key value
  kSwitch,  // key is "word=--flag|word=--flag": the value picks the flag
  kWeight,  // a scorer plugin's weight in an EndpointPickerConfig (key: the plugin type)
};

struct ExportRow {
  std::string_view router, param, system, key;
  Form form;
};

// The names are the systems' own (SGLang's router launcher, Dynamo's frontend, the llm-d
// inference scheduler's plugin config), as docs/routers.md lists them.
constexpr ExportRow kExports[] = {
    {"cache_aware", "cache_threshold", "sglang", "--cache-threshold", Form::kFlag},
    {"cache_aware", "balance_abs", "sglang", "--balance-abs-threshold", Form::kFlag},
    {"cache_aware", "balance_rel", "sglang", "--balance-rel-threshold", Form::kFlag},
    {"dynamo", "overlap_weight", "dynamo", "--kv-overlap-score-weight", Form::kFlag},
    // Dynamo's softmax temperature, under either name the dynamo router declares it.
    {"dynamo", "temperature", "dynamo", "--router-temperature", Form::kFlag},
    {"dynamo", "router_temperature", "dynamo", "--router-temperature", Form::kFlag},
    {"dynamo", "events", "dynamo", "exact=--kv-events|approx=--no-kv-events", Form::kSwitch},
    {"llm_d", "prefix_weight", "llm-d", "prefix-cache-scorer", Form::kWeight},
    {"llm_d", "kv_weight", "llm-d", "kv-cache-utilization-scorer", Form::kWeight},
    {"llm_d", "queue_weight", "llm-d", "queue-scorer", Form::kWeight},
};

struct SystemText {
  std::string_view system, comment, command;
};

constexpr SystemText kSystems[] = {
    {"sglang", "# SGLang router (the same flags on the SGLang model gateway)",
     "python -m sglang_router.launch_router --policy cache_aware"},
    {"dynamo", "# NVIDIA Dynamo frontend, KV router", "python -m dynamo.frontend --router-mode kv"},
    {"llm-d", "# llm-d inference scheduler (EndpointPickerConfig)", ""},
};

std::map<std::string, std::string> to_map(const std::string& params) {
  std::map<std::string, std::string> out;
  for (const std::string& item : split_top_level(params)) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

std::string switch_flag(std::string_view key, const std::string& value) {
  for (const std::string& option : split_list(key, '|')) {
    size_t eq = option.find('=');
    if (option.substr(0, eq) == value) return option.substr(eq + 1);
  }
  return "";
}

}  // namespace

std::string export_config(const std::string& router, const std::string& params,
                          const std::string& tuned) {
  std::map<std::string, std::string> values = to_map(params);
  std::string out;
  std::vector<std::string> exported;
  for (const SystemText& sys : kSystems) {
    std::vector<const ExportRow*> rows;
    for (const ExportRow& row : kExports)
      if (row.router == router && row.system == sys.system && values.count(std::string(row.param)))
        rows.push_back(&row);
    if (rows.empty()) continue;
    out += std::string(sys.comment) + "\n";
    if (rows[0]->form == Form::kWeight) {
      out +=
          "apiVersion: inference.networking.x-k8s.io/v1alpha1\n"
          "kind: EndpointPickerConfig\n"
          "plugins:\n"
          "- type: single-profile-handler\n";
      for (const ExportRow* row : rows) out += fmt::format("- type: {}\n", row->key);
      out +=
          "- type: max-score-picker\n"
          "schedulingProfiles:\n"
          "- name: default\n"
          "  plugins:\n";
      for (const ExportRow* row : rows)
        out += fmt::format("  - pluginRef: {}\n    weight: {}\n", row->key,
                           values[std::string(row->param)]);
      out += "  - pluginRef: max-score-picker\n";
    } else {
      std::string line(sys.command);
      for (const ExportRow* row : rows) {
        const std::string& v = values[std::string(row->param)];
        if (row->form == Form::kSwitch) {
          std::string flag = switch_flag(row->key, v);
          if (!flag.empty()) line += " " + flag;
        } else {
          line += fmt::format(" {} {}", row->key, v);
        }
      }
      out += line + "\n";
    }
    for (const ExportRow* row : rows) exported.emplace_back(row->param);
  }
  // What the table does not map stays a kvpolicy setting only.
  std::vector<std::string> rest;
  for (auto& [k, v] : to_map(tuned))
    if (std::find(exported.begin(), exported.end(), k) == exported.end())
      rest.push_back(k + "=" + v);
  if (!out.empty() && !rest.empty()) {
    std::string line = "# not in the export (kvpolicy's own model):";
    for (auto& r : rest) line += " " + r;
    out += line + "\n";
  }
  out += "# kvpolicy flags\n";
  out += "--router " + router + (tuned.empty() ? "" : ":" + tuned) + "\n";
  return out;
}

}  // namespace kvpolicy::app
