// The router registry: routers join it at static-initialisation time (register_router), specs
// are parsed and routers built from it, and README's router table is rendered from it.
#include <algorithm>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/strings.h"
#include "kvpolicy/route/router.h"

namespace kvpolicy {

RouterRegistry& RouterRegistry::instance() {
  static RouterRegistry registry;
  return registry;
}

void RouterRegistry::add(RouterInfo info) {
  routers_.push_back(std::move(info));
  std::sort(routers_.begin(), routers_.end(),
            [](const RouterInfo& a, const RouterInfo& b) { return a.name < b.name; });
}

const RouterInfo& RouterRegistry::get(const std::string& name) const {
  for (auto& r : routers_)
    if (r.name == name) return r;
  std::string known;
  for (auto& r : routers_) known += (known.empty() ? "" : ", ") + r.name;
  throw ConfigError("unknown router '" + name + "' (known: " + known + ")");
}

RouterSpec parse_router_spec(const std::string& text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return {text, ""};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

std::vector<RouterSpec> parse_router_list(const std::string& text) {
  std::vector<RouterSpec> out;
  for (const std::string& item : split_list(text)) {
    // "cache_aware:a=1,b=2" splits at the comma; a bare "b=2" continues the previous spec.
    if (item.find('=') != std::string::npos && item.find(':') == std::string::npos &&
        !out.empty()) {
      out.back().params += (out.back().params.empty() ? "" : ",") + item;
    } else {
      out.push_back(parse_router_spec(item));
    }
  }
  if (out.empty()) throw ConfigError("no router given");
  return out;
}

std::unique_ptr<Router> make_router(const RouterSpec& spec, const RouterContext& ctx) {
  const RouterInfo& info = RouterRegistry::instance().get(spec.name);
  if (ctx.workers == 0) throw ConfigError("a cluster needs at least one worker");
  if (info.max_workers != 0 && ctx.workers > info.max_workers)
    throw ConfigError("router " + spec.name + " routes over at most " +
                      std::to_string(info.max_workers) + " workers, not " +
                      std::to_string(ctx.workers));
  if (info.needs_future && ctx.future == nullptr)
    throw ConfigError("router " + spec.name +
                      " reads the trace's future (offline) and none is given here: serve mode "
                      "gives it the trace in an open loop as the cluster's only router");
  Params params = Params::parse(spec.params, info.params, "router " + spec.name);
  return info.make(ctx, params);
}

bool router_needs_future(const RouterSpec& spec) {
  return RouterRegistry::instance().get(spec.name).needs_future;
}

std::vector<std::string> online_router_names() {
  std::vector<std::string> out;
  for (auto& r : RouterRegistry::instance().all())
    if (!r.needs_future) out.push_back(r.name);
  return out;
}

std::string router_table_markdown() {
  std::string out = "| name | routes to | source |\n|---|---|---|\n";
  for (auto& r : RouterRegistry::instance().all())
    out += "| `" + r.name + "` | " + markdown_cell(r.summary) + " | " + markdown_cell(r.source) +
           " |\n";
  return out;
}

}  // namespace kvpolicy
