// Sections 1, 4, 5 and 6 of `kvpolicy doctor` (docs/doctor.md): every number a replay
// (app::run_grid) or a serve sweep (app::serve_sweep) of the trace or of a counterfactual of it.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "doctor_internal.h"
#include "kvpolicy/app/replay.h"
#include "kvpolicy/app/serve.h"

namespace kvpolicy::app::doctor {
namespace {

// The deployable policies section 6 compares the chosen one with.
constexpr const char* kDeployable[] = {"lru", "s3fifo", "gdsf"};
constexpr const char* kRouters[] = {"random", "session_affinity", "cache_aware"};

const ReplayResult* find(const std::vector<ReplayResult>& rows, const std::string& policy) {
  for (const ReplayResult& r : rows)
    if (r.policy == policy) return &r;
  return nullptr;
}

// The block size section 4 tries: 16 (vLLM's default) under a larger one, else half.
uint32_t smaller_block(uint32_t b) { return b > 16 ? 16 : b / 2; }

bool found(const BreakSection& s, const char* cause) {
  return std::any_of(s.causes.begin(), s.causes.end(),
                     [&](const BreakCause& c) { return c.code == cause && c.count > 0; });
}

// A counterfactual of the log's prompt texts, for a cause found in sections 2 and 3.
struct Rewrite {
  std::string what, setting;
  std::vector<std::string> texts;
};

// Each session's requests rewritten in turn by `change(text, session's state)`.
template <typename State, typename Change>
std::vector<std::string> per_session(const Input& in, Change change) {
  const Trace& t = in.trace;
  std::unordered_map<SessionId, State> state;
  std::vector<std::string> out;
  for (size_t r = 0; r < t.size(); ++r) {
    const std::string& text = in.prompts[r].text;
    out.push_back(t.session[r] == kNoSession ? text : change(text, state[t.session[r]]));
  }
  return out;
}

std::vector<Rewrite> rewrites(const Input& in, const DoctorReport& rep, const Measured& m) {
  std::vector<Rewrite> out;
  if (!in.has_text() || !in.tokenizer) return out;
  if (!m.anchors.empty()) {
    std::vector<std::string> texts;
    for (const KeptPrompt& p : in.prompts) texts.push_back(mask_volatile(p.text, m.anchors));
    out.push_back(
        {fmt::format("mask the volatile span (timestamp or id) after \"{}\"", m.anchors.front()),
         "keep timestamps and request ids out of the prompt's head (after the shared "
         "part, or not at all)",
         std::move(texts)});
  }
  if (found(rep.within, kSystemPrompt))
    out.push_back({"keep each session's system prompt as its first turn had it",
                   "change the system prompt only between sessions; put what changes per turn "
                   "after the conversation",
                   per_session<std::string>(in, [](const std::string& text, std::string& first) {
                     if (first.empty()) {
                       auto msgs = split_messages(text);
                       if (!msgs.empty())
                         first = text.substr(msgs[0].start, msgs[0].end - msgs[0].start);
                       return text;
                     }
                     return replace_first_message(text, first);
                   })});
  if (found(rep.within, kReordered))
    out.push_back({"keep the messages in the order they first appeared in the session",
                   "append new messages (retrieved documents, tool results) after the earlier "
                   "ones; never reorder the history",
                   per_session<std::map<std::string, size_t>>(
                       in, [](const std::string& text, std::map<std::string, size_t>& seen) {
                         return stable_message_order(text, seen);
                       })});
  return out;
}

}  // namespace

HitRates hit_of(const ReplayResult& r) { return {r.block_hit_rate, r.token_hit_rate}; }

HitRates ideal_of(const Trace& t) {
  SanityReport s = import_sanity(t);
  return {s.ideal_block_hit_rate, s.ideal_token_hit_rate};
}

std::vector<ReplayResult> replays(const Trace& trace, const std::vector<std::string>& policies,
                                  const std::vector<CapacitySpec>& caps, const DoctorSpec& spec,
                                  const CostModel& cost) {
  std::string list;
  for (const std::string& p : policies)
    if (std::find(policies.begin(), policies.end(), p) - policies.begin() ==
        &p - policies.data())  // each once: a repeat would be a repeated configuration
      list += (list.empty() ? "" : ",") + p;
  std::string skipped;
  std::vector<PolicySpec> specs = policies_the_trace_feeds(list, trace, &skipped);
  GridOptions grid;
  CostModel at_b = cost.with_block_tokens(std::max<uint32_t>(trace.block_tokens, 1));
  grid.cost_model = &at_b;
  grid.jobs = spec.jobs;
  return run_grid(trace, specs, caps, spec.seed, grid);
}

void measure_cache(const Input& in, const DoctorSpec& spec, const CostModel& cost, Measured& m,
                   DoctorReport& rep) {
  std::vector<std::string> names{spec.policy, "lru", "belady"};
  for (const char* p : kDeployable) names.push_back(p);
  m.at_capacity = replays(in.trace, names, {m.capacity}, spec, cost);
  size_t twice = std::max<size_t>(1, 2 * rep.capacity_blocks);
  m.doubled =
      replays(in.trace, {spec.policy}, {CapacitySpec::whole_blocks(twice)}, spec, cost).at(0);
  rep.ideal = ideal_of(in.trace);
  const ReplayResult* chosen = &m.at_capacity.at(0);
  rep.policy = chosen->policy;
  rep.policy_hit = hit_of(*chosen);
  if (auto* r = find(m.at_capacity, "lru")) rep.lru = hit_of(*r);
  if (auto* r = find(m.at_capacity, "belady")) rep.belady = hit_of(*r);
}

void measure_block_size(const Input& in, const DoctorSpec& spec, const CostModel& cost,
                        const Measured&, DoctorReport& rep) {
  const Trace& t = in.trace;
  uint64_t tokens = 0, partial = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    rep.shorter_than_block += t.prompt_tokens[r] < t.block_tokens;
    partial += t.prompt_tokens[r] % t.block_tokens;
    tokens += t.prompt_tokens[r];
  }
  rep.partial_block_token_share = tokens ? double(partial) / tokens : 0;
  uint32_t small = smaller_block(t.block_tokens);
  if (!in.has_tokens() || small < 1) return;
  std::vector<std::vector<uint32_t>> ids;
  ids.reserve(t.size());
  for (const KeptPrompt& p : in.prompts) ids.push_back(p.tokens);
  Trace smaller = rebuild(t, ids, small);
  // The same KV memory: as many tokens in smaller blocks.
  size_t blocks = rep.capacity_blocks * t.block_tokens / small;
  rep.small_block_tokens = small;
  rep.small_ideal = ideal_of(smaller);
  rep.small_policy = hit_of(
      replays(smaller, {spec.policy}, {CapacitySpec::whole_blocks(blocks)}, spec, cost).at(0));
}

void measure_routing(const Input& in, const DoctorSpec& spec, const Measured& m,
                     DoctorReport& rep) {
  ServeSpec s;
  std::string routers;
  for (const char* r : kRouters) routers += (routers.empty() ? "" : ",") + std::string(r);
  s.routers = routers;
  s.policies = spec.policy;
  s.workers = std::to_string(spec.workers);
  s.capacities = std::to_string(rep.capacity_blocks);
  s.cost = spec.cost;
  s.base.seed = spec.seed;
  s.jobs = spec.jobs;
  rep.workers = spec.workers;
  for (const ServeResult& r : serve_sweep(in.trace, s, "doctor: routers"))
    rep.routers.push_back({r.router,
                           {r.block_hit_rate, r.token_hit_rate},
                           r.ttft_ms.p50,
                           r.ttft_ms.p90,
                           r.queue_wait_ms.p50});
  (void)m;
}

void measure_remedies(const Input& in, const DoctorSpec& spec, const CostModel& cost,
                      const Measured& m, DoctorReport& rep) {
  const Trace& t = in.trace;
  auto add = [&](std::string what, std::string setting, HitRates before, HitRates after) {
    Remedy r;
    r.what = std::move(what);
    r.setting = std::move(setting);
    r.before = before;
    r.after = after;
    rep.remedies.push_back(std::move(r));
  };
  // A remedy on changed prompts: the policy at the same blocks (not the same share: a
  // counterfactual has fewer unique blocks), and the changed trace's ideal.
  auto add_changed = [&](std::string what, std::string setting, const Trace& changed) {
    add(std::move(what), std::move(setting), rep.policy_hit,
        hit_of(replays(changed, {spec.policy}, {CapacitySpec::whole_blocks(rep.capacity_blocks)},
                       spec, cost)
                   .at(0)));
    Remedy& r = rep.remedies.back();
    r.changes_prompts = true;
    r.ideal_before = rep.ideal;
    r.ideal_after = ideal_of(changed);
  };
  if (!m.token_anchors.empty() && in.has_tokens() && !in.has_text()) {
    std::vector<std::vector<uint32_t>> ids;
    for (const KeptPrompt& p : in.prompts)
      ids.push_back(mask_volatile_tokens(p.tokens, m.token_anchors));
    add_changed(fmt::format("mask the volatile span of token ids ({} tokens after {} others)",
                            m.token_anchors.front().span, m.token_anchors.front().before.size()),
                "keep timestamps and request ids out of the prompt's head (after the shared "
                "part, or not at all)",
                rebuild(t, ids, t.block_tokens));
  }
  for (Rewrite& w : rewrites(in, rep, m)) {
    std::vector<std::vector<uint32_t>> ids(t.size());
    for (size_t r = 0; r < t.size(); ++r) in.tokenizer->encode(w.texts[r], ids[r]);
    add_changed(w.what, w.setting, rebuild(t, ids, t.block_tokens));
  }
  if (rep.small_block_tokens)
    add(fmt::format("blocks of {} tokens instead of {} (the same KV memory)",
                    rep.small_block_tokens, t.block_tokens),
        fmt::format("the engine's block size (vLLM --block-size {}; SGLang --page-size {})",
                    rep.small_block_tokens, rep.small_block_tokens),
        rep.policy_hit, rep.small_policy);
  if (rep.small_block_tokens) {
    rep.remedies.back().changes_prompts = true;
    rep.remedies.back().ideal_before = rep.ideal;
    rep.remedies.back().ideal_after = rep.small_ideal;
  }
  if (!rep.routers.empty()) {
    auto best = std::max_element(rep.routers.begin(), rep.routers.end(),
                                 [](auto& a, auto& b) { return a.hit.token < b.hit.token; });
    auto random = std::find_if(rep.routers.begin(), rep.routers.end(),
                               [](auto& r) { return r.router == "random"; });
    if (random != rep.routers.end() && best->router != "random")
      add(fmt::format("route with {} instead of random ({} workers)", best->router, rep.workers),
          fmt::format("the load balancer: kvpolicy serve --router {}", best->router), random->hit,
          best->hit);
  }
  add(fmt::format("twice the cache ({} blocks instead of {})",
                  with_commas(m.doubled.capacity_blocks), with_commas(rep.capacity_blocks)),
      "more KV memory: a larger GPU, tensor parallelism, fp8 KV (--kv-dtype fp8) or a DRAM tier",
      rep.policy_hit, hit_of(m.doubled));
  const ReplayResult* best = nullptr;
  for (const char* p : kDeployable)
    if (auto* r = find(m.at_capacity, p); r && (!best || r->token_hit_rate > best->token_hit_rate))
      best = r;
  if (best && best->policy != rep.policy)
    add(fmt::format("evict with {} instead of {}", best->policy, rep.policy),
        fmt::format("the eviction policy: -p {}", best->policy), rep.policy_hit, hit_of(*best));
  std::stable_sort(rep.remedies.begin(), rep.remedies.end(),
                   [](auto& a, auto& b) { return a.gain_token_points() > b.gain_token_points(); });
}

}  // namespace kvpolicy::app::doctor
