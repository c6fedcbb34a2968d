#include "pd_options.h"

#include "common.h"
#include "kvpolicy/core/links.h"
#include "kvpolicy/route/router.h"

namespace kvpolicy::cli {

void add_pd_options(CLI::App* cmd, ServeOptions& base) {
  ServeOptions* b = &base;
  cmd->add_option("--allocation", b->allocation,
                  "chunked: a prompt's blocks are allocated chunk by chunk as its prefill "
                  "proceeds (vLLM v1); whole: all at admission (vLLM v0)")
      ->check(CLI::IsMember({"chunked", "whole"}))
      ->capture_default_str();
  cmd->add_option("--prefill-workers", b->prefill_workers,
                  "prefill/decode disaggregation: workers of the prefill pool (with "
                  "--decode-workers; 0 and 0 = every worker does both)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cmd->add_option("--decode-workers", b->decode_workers,
                  "prefill/decode disaggregation: workers of the decode pool")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--decode-router", [b](const std::string& s) { b->decode_router = parse_router_spec(s); },
         "router of the decode pool (--router routes to the prefill pool); default least_loaded")
      ->type_name("ROUTER");
  auto* bandwidth =
      cmd->add_option_function<double>(
             "--kv-link-bandwidth", [b](double gb) { b->kv_link_bytes_per_s = gb * 1e9; },
             "P/D: GB/s of each prefill worker's KV link (default 50: RDMA at 400 Gb/s)")
          ->check(finite_in(1e-9, 1e9));
  auto* latency = cmd->add_option_function<double>(
                         "--kv-link-latency", [b](double us) { b->kv_link_latency_s = us * 1e-6; },
                         "P/D: microseconds added to each KV transfer (default 10)")
                      ->check(finite_in(0, 1e9));
  cmd->add_option_function<std::string>(
         "--kv-link",
         [b](const std::string& name) {
           LinkSpec link = find_link(name);  // the tiers' presets (docs/cost-model.md, "Links")
           b->kv_link_bytes_per_s = link.write_bytes_per_s;
           b->kv_link_latency_s = link.latency_s;
         },
         "P/D: the KV link as a preset of the memory tiers' links (rdma-200, rdma-400, pcie5, "
         "custom:GBps[:latency_us]) instead of --kv-link-bandwidth and --kv-link-latency")
      ->type_name("LINK")
      ->excludes(bandwidth)
      ->excludes(latency);
  cmd->add_option_function<std::string>(
         "--decode-cache", [b](const std::string& v) { b->decode_cache = v == "on"; },
         "P/D: on (default, as vLLM/SGLang decode instances): decode workers keep a prefix cache "
         "and a transfer carries only the blocks the decode worker lacks; off: transferred KV is "
         "freed at completion")
      ->check(CLI::IsMember({"on", "off"}))
      ->type_name("on|off");
  cmd->add_option("--kv-transfer", b->kv_transfer,
                  "P/D: after-prefill (default): the KV leaves after the prefill's last layer; "
                  "layerwise: each layer's KV streams during the prefill's last iteration")
      ->check(CLI::IsMember({"after-prefill", "layerwise"}))
      ->capture_default_str();
}

}  // namespace kvpolicy::cli
