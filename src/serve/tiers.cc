#include "tiers.h"

#include <fmt/format.h>

#include "kvpolicy/core/error.h"

namespace kvpolicy::serve_detail {

void check_tiers(const ServeOptions& o) {
  static const char* kOrder[] = {"dram", "ssd", "remote"};
  size_t next = 0;
  for (const TierSpec& t : o.tiers) {
    while (next < 3 && t.name != kOrder[next]) ++next;
    if (next == 3)
      throw ConfigError("serve: tier '" + t.name +
                        "' is not dram, ssd or remote, or comes out of that order or twice");
    ++next;
    if (t.capacity_blocks == 0)
      throw ConfigError("serve: the " + t.name + " tier needs at least one block");
  }
  if (o.offload_min_priority < -1 || o.offload_min_priority > 100)
    throw ConfigError("serve: --offload-min-priority " + std::to_string(o.offload_min_priority) +
                      " is not a priority from 0 to 100");
  if (o.offload_min_priority >= 0 && !o.tiers.empty() && o.write_mode == WriteMode::kWriteThrough)
    throw ConfigError(
        "serve: --offload-min-priority filters the blocks HBM evicts (write-back); with "
        "write-through every block is written down when computed");
  if (!o.tiers.empty() && o.placement == Placement::kExclusive &&
      o.write_mode == WriteMode::kWriteThrough)
    throw ConfigError(
        "serve: exclusive placement writes a block down only when it leaves HBM; write-through "
        "needs --placement inclusive");
}

void echo_tiers(const ServeOptions& o, ServeResult& res) {
  if (o.tiers.empty()) return;
  for (const TierSpec& t : o.tiers) {
    TierResult r;
    r.tier = t.name;
    r.policy = t.policy.label();
    r.admission = t.admission.label();
    r.link = t.link.name;
    r.capacity_blocks = t.capacity_blocks;
    res.tiers.push_back(r);
  }
  res.tier_placement = placement_name(o.placement);
  res.tier_write = write_mode_name(o.write_mode);
  res.overlap_transfers = o.overlap_transfers;
  res.offload_min_priority = o.offload_min_priority;
}

void attach_tiers(std::vector<std::unique_ptr<Worker>>& workers, const ServeOptions& o,
                  PolicyContext ctx, std::unique_ptr<TierStore>& remote) {
  if (o.tiers.empty()) return;
  const TierSpec* pool = o.tiers.back().name == "remote" ? &o.tiers.back() : nullptr;
  if (pool) {
    ctx.seed = o.seed + o.workers;  // apart from every worker's
    remote = std::make_unique<TierStore>("remote", pool->capacity_blocks, pool->policy, ctx,
                                         pool->admission);
  }
  for (uint32_t w = 0; w < workers.size(); ++w) {
    ctx.seed = o.seed + w;
    std::vector<std::unique_ptr<TierStore>> local;
    std::vector<LinkSpec> links;
    for (const TierSpec& t : o.tiers) {
      if (&t == pool) continue;
      local.push_back(
          std::make_unique<TierStore>(t.name, t.capacity_blocks, t.policy, ctx, t.admission));
      links.push_back(t.link);
    }
    workers[w]->cache().set_tiers(
        std::make_unique<LowerTiers>(o.placement, o.write_mode, std::move(local), std::move(links),
                                     remote.get(), pool ? pool->link : LinkSpec{}));
    workers[w]->cache().tiers()->set_offload_min_priority(o.offload_min_priority);
    // Each link a FIFO server of this worker's (the pool's: its own NIC), reads and writes.
    if (ctx.cost_model)
      workers[w]->cache().tiers()->set_transfer(ctx.cost_model->kv_bytes_per_block(),
                                                ctx.cost_model->tensor_parallel());
  }
}

void collect_tiers(const std::vector<std::unique_ptr<Worker>>& workers, const ServeOptions& o,
                   const CostModel& cost, ServeResult& res) {
  if (o.tiers.empty()) return;
  const double block_bytes = cost.kv_bytes_per_block();
  uint64_t lower_hits = 0;
  for (size_t t = 0; t < res.tiers.size(); ++t) {
    TierResult& r = res.tiers[t];
    const bool pool = r.tier == "remote";
    for (size_t w = 0; w < workers.size(); ++w) {
      r.hits += workers[w]->tier_hits()[t];
      if (pool && w > 0) continue;  // one pool: its counters once
      const TierStore& s = workers[w]->cache().tiers()->tier(t);
      r.blocks_read += s.counters.blocks_read;
      r.blocks_written += s.counters.blocks_written;
      r.evictions += s.counters.evictions;
      r.rejected += s.counters.rejected;
      r.full += s.counters.full;
    }
    for (const auto& w : workers) {
      const LinkQueue* q = w->cache().tiers()->queue(t);
      if (!q) continue;
      r.link_busy_seconds += q->busy_seconds();
      r.link_write_seconds += q->write_seconds();
      r.link_wait_seconds += q->read_wait_seconds();
    }
    const double link_time = double(workers.size()) * res.makespan_s;
    r.link_utilisation = link_time > 0 ? r.link_busy_seconds / link_time : 0;
    r.hit_rate = res.block_accesses ? double(r.hits) / double(res.block_accesses) : 0;
    r.bytes_read = double(r.blocks_read) * block_bytes;
    r.bytes_written = double(r.blocks_written) * block_bytes;
    lower_hits += r.hits;
  }
  res.hbm_hits = res.block_hits - lower_hits;
  res.hbm_hit_rate = res.block_accesses ? double(res.hbm_hits) / double(res.block_accesses) : 0;
  for (const auto& w : workers) {
    res.transfer_seconds += w->transfer_seconds();
    res.offload_skipped_priority += w->cache().tiers()->offload_skipped();
  }
}

}  // namespace kvpolicy::serve_detail
