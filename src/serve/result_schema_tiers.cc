// Serve mode's memory-tier result fields (docs/formats.md, docs/serve.md "Memory tiers"): written
// only when a run has lower tiers, so the rows of HBM-only runs stay as they were.
#include <type_traits>

#include "kvpolicy/serve/result_schema.h"

namespace kvpolicy::serve_detail {
namespace {

using R = ServeResult;

bool has(const JsonRecord& j, const char* key) { return !j.object()[key].error(); }

ServeResultField tiers_array() {
  return {"tiers",
          "array",
          "",
          "memory tiers below HBM, one object each (dram, ssd, remote; see below); absent "
          "without lower tiers",
          [](const R& r, JsonObject& o) {
            if (r.tiers.empty()) return;
            std::string out = "[";
            for (size_t i = 0; i < r.tiers.size(); ++i) {
              const TierResult& t = r.tiers[i];
              JsonObject y;
              y.add("tier", t.tier).add("policy", t.policy).add("admission", t.admission);
              y.add("link", t.link).add("capacity_blocks", t.capacity_blocks);
              y.add("hits", t.hits).add("hit_rate", t.hit_rate);
              y.add("blocks_read", t.blocks_read).add("blocks_written", t.blocks_written);
              y.add("bytes_read", t.bytes_read).add("bytes_written", t.bytes_written);
              y.add("evictions", t.evictions).add("rejected", t.rejected).add("full", t.full);
              y.add("link_busy_seconds", t.link_busy_seconds);
              y.add("link_write_seconds", t.link_write_seconds);
              y.add("link_wait_seconds", t.link_wait_seconds);
              y.add("link_utilisation", t.link_utilisation);
              out += (i ? "," : "") + y.str();
            }
            o.raw("tiers", out + "]");
          },
          [](const JsonRecord& j, R& r) {
            if (!has(j, "tiers")) return;
            simdjson::dom::array tiers;
            if (j.object()["tiers"].get(tiers)) j.fail("tiers", "not an array");
            for (simdjson::dom::element e : tiers) {
              TierResult t;
              auto text = [&](const char* key, std::string& out) {
                std::string_view v;
                if (e[key].get(v)) j.fail(std::string("tiers.") + key, "missing or not a string");
                out = std::string(v);
              };
              auto number = [&](const char* key, auto& out) {
                double v;
                if (e[key].get(v)) j.fail(std::string("tiers.") + key, "missing or not a number");
                out = static_cast<std::remove_reference_t<decltype(out)>>(v);
              };
              text("tier", t.tier);
              text("policy", t.policy);
              text("admission", t.admission);
              text("link", t.link);
              number("capacity_blocks", t.capacity_blocks);
              number("hits", t.hits);
              number("hit_rate", t.hit_rate);
              number("blocks_read", t.blocks_read);
              number("blocks_written", t.blocks_written);
              number("bytes_read", t.bytes_read);
              number("bytes_written", t.bytes_written);
              number("evictions", t.evictions);
              number("rejected", t.rejected);
              number("full", t.full);
              // (rows written before link queueing have no link fields)
              auto link_number = [&](const char* key, double& out) {
                if (!e[key].error()) number(key, out);
              };
              link_number("link_busy_seconds", t.link_busy_seconds);
              link_number("link_write_seconds", t.link_write_seconds);
              link_number("link_wait_seconds", t.link_wait_seconds);
              link_number("link_utilisation", t.link_utilisation);
              r.tiers.push_back(t);
            }
          }};
}

ServeResultField tier_text(const char* name, std::string R::*m, std::string desc) {
  return {name,
          "string",
          "",
          std::move(desc),
          [name, m](const R& r, JsonObject& o) {
            if (!r.tiers.empty()) o.add(name, r.*m);
          },
          [name, m](const JsonRecord& j, R& r) { r.*m = j.str_or(name, ""); }};
}

template <typename T>
ServeResultField tier_number(const char* name, T R::*m, std::string type, std::string unit,
                             std::string desc) {
  return {name,
          std::move(type),
          std::move(unit),
          std::move(desc),
          [name, m](const R& r, JsonObject& o) {
            if (r.tiers.empty()) return;
            if constexpr (std::is_same_v<T, bool>) {
              o.raw(name, r.*m ? "true" : "false");
            } else {
              o.add(name, r.*m);
            }
          },
          [name, m](const JsonRecord& j, R& r) {
            if (!has(j, name)) return;
            if constexpr (std::is_same_v<T, bool>) {
              r.*m = j.boolean(name);
            } else {
              r.*m = static_cast<T>(j.num(name));
            }
          }};
}

// Written only when the minimum priority for offload is set (read as its default when absent).
template <typename T>
ServeResultField offload_number(const char* name, T R::*m, std::string desc) {
  return {name,
          "int",
          name == std::string("offload_skipped_priority") ? "blocks" : "",
          std::move(desc),
          [name, m](const R& r, JsonObject& o) {
            if (!r.tiers.empty() && r.offload_min_priority >= 0) o.add(name, r.*m);
          },
          [name, m](const JsonRecord& j, R& r) {
            if (has(j, name)) r.*m = static_cast<T>(j.num(name));
          }};
}

}  // namespace

void add_tier_fields(std::vector<ServeResultField>& f) {
  f.push_back(tier_text("tier_placement", &R::tier_placement,
                        "with lower tiers: `exclusive` or `inclusive`"));
  f.push_back(
      tier_text("tier_write", &R::tier_write, "with lower tiers: `write-back` or `write-through`"));
  f.push_back(tier_number("overlap_transfers", &R::overlap_transfers, "bool", "",
                          "with lower tiers: whether reads overlap the forward pass"));
  f.push_back(tier_number("hbm_hits", &R::hbm_hits, "int", "blocks",
                          "with lower tiers: the part of `block_hits` found in HBM"));
  f.push_back(tier_number("hbm_hit_rate", &R::hbm_hit_rate, "number", "",
                          "with lower tiers: `hbm_hits` / `block_accesses`"));
  f.push_back(
      tier_number("transfer_seconds", &R::transfer_seconds, "number", "s",
                  "with lower tiers: iterations' waits for their lower-tier reads (queueing on the "
                  "links included), summed"));
  f.push_back(offload_number("offload_min_priority", &R::offload_min_priority,
                             "with lower tiers and `--offload-min-priority`: the minimum "
                             "retention priority for offload (TensorRT-LLM's "
                             "`secondary_offload_min_priority`); absent (read as -1) when off"));
  f.push_back(offload_number("offload_skipped_priority", &R::offload_skipped_priority,
                             "with `offload_min_priority`: computed HBM victims whose retention "
                             "priority was below it, dropped instead of demoted (blocks, summed "
                             "over workers)"));
  f.push_back(tiers_array());
}

}  // namespace kvpolicy::serve_detail
