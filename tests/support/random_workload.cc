#include "support/random_workload.h"

#include <algorithm>
#include <unordered_set>

namespace kvpolicy::testing {
namespace {

class SmallRng {
 public:
  explicit SmallRng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
  uint32_t between(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace

Trace random_workload(const RandomWorkloadOptions& o) {
  SmallRng rng(o.seed * 0x2545f4914f6cdd1dULL + 17);
  uint64_t fresh = 1;  // raw ids; add_request chains them, so a fresh id is a new block
  auto add_fresh = [&](std::vector<uint64_t>& ids, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) ids.push_back(fresh++);
  };

  std::vector<std::vector<uint64_t>> system(o.system_prompts);
  for (auto& s : system) add_fresh(s, rng.between(1, o.max_system_blocks));

  struct Session {
    SessionId id;
    uint32_t turn = 0;
    std::vector<uint64_t> history;
  };
  SessionId next_session = 0;
  auto open_session = [&] {
    Session s{next_session++, 0, {}};
    if (!system.empty() && rng.below(4) != 0) s.history = system[rng.below(o.system_prompts)];
    return s;
  };
  std::vector<Session> sessions;
  for (uint32_t i = 0; i < o.sessions; ++i) sessions.push_back(open_session());

  Trace trace;
  trace.name = "random-" + std::to_string(o.seed);
  std::vector<std::vector<uint64_t>> prompts;
  Time t = 0;
  for (uint32_t r = 0; r < o.requests; ++r) {
    t += 1 + rng.below(1000);
    double u = rng.uniform();
    std::vector<uint64_t> ids;
    SessionId sid = kNoSession;
    uint32_t turn = 1;
    if (!prompts.empty() && u < o.p_repeat) {
      ids = prompts[rng.below(static_cast<uint32_t>(prompts.size()))];
    } else if (!prompts.empty() && u < o.p_repeat + o.p_branch) {
      const auto& base = prompts[rng.below(static_cast<uint32_t>(prompts.size()))];
      ids.assign(base.begin(), base.begin() + rng.between(1, static_cast<uint32_t>(base.size())));
      add_fresh(ids, rng.between(1, o.max_new_blocks));
    } else if (u < o.p_repeat + o.p_branch + o.p_oneshot || sessions.empty()) {
      if (!system.empty() && rng.below(3) != 0) ids = system[rng.below(o.system_prompts)];
      add_fresh(ids, rng.between(1, o.max_new_blocks));
    } else {
      Session& s = sessions[rng.below(static_cast<uint32_t>(sessions.size()))];
      if (s.history.size() > o.max_session_blocks) s = open_session();
      add_fresh(s.history, rng.between(1, o.max_new_blocks));
      ids = s.history;
      sid = s.id;
      turn = ++s.turn;
    }
    uint32_t tokens = static_cast<uint32_t>(ids.size()) * trace.block_tokens;
    trace.add_request(t, ids, tokens, 1 + rng.below(64), sid, turn);
    prompts.push_back(std::move(ids));
    if (o.continuation)
      trace.continuation.push_back(float(mix64(o.seed * 0x9e3779b97f4a7c15ULL + r) >> 40) *
                                   0x1.0p-24f);
  }
  return trace;
}

std::vector<uint32_t> infinite_cache_hits(const Trace& trace) {
  std::unordered_set<BlockKey> seen;
  std::vector<uint32_t> out;
  for (size_t r = 0; r < trace.size(); ++r) {
    auto blocks = trace.prompt(r);
    uint32_t hits = 0;
    while (hits < blocks.size() && seen.count(blocks[hits])) ++hits;
    out.push_back(hits);
    seen.insert(blocks.begin(), blocks.end());
  }
  return out;
}

uint32_t longest_prompt(const Trace& trace) {
  uint32_t longest = 0;
  for (size_t r = 0; r < trace.size(); ++r) longest = std::max(longest, trace.prompt_blocks(r));
  return longest;
}

class ScriptedCache::Recorder final : public ForwardingPolicy {
 public:
  Recorder(ScriptedCache& owner, const PrefixTree& tree, std::unique_ptr<Policy> inner)
      : ForwardingPolicy(std::move(inner)), owner_(owner), tree_(tree) {}
  void on_removed(NodeId n, Removal why) override {
    if (is_victim(why)) {
      BlockKey key = tree_.key(n);
      for (auto& [k, path] : owner_.paths_)
        if (k == key) owner_.victims_.push_back(path);
    }
    inner().on_removed(n, why);
  }

 private:
  ScriptedCache& owner_;
  const PrefixTree& tree_;
};

ScriptedCache::ScriptedCache(const std::string& policy, size_t capacity, uint64_t seed) {
  auto tree = std::make_unique<PrefixTree>();
  PolicyContext ctx;
  ctx.tree = tree.get();
  ctx.capacity_blocks = capacity;
  ctx.seed = seed;
  auto inner = make_policy(parse_policy_spec(policy), ctx);
  auto recorder = std::make_unique<Recorder>(*this, *tree, std::move(inner));
  cache_ = std::make_unique<PrefixCache>(capacity, std::move(recorder), std::move(tree));
  cache_->set_checking(true);
}

static std::vector<BlockKey> chain(const std::vector<uint64_t>& ids) {
  std::vector<BlockKey> keys;
  BlockKey key = kRootKey;
  for (uint64_t id : ids) keys.push_back(key = chain_key(key, id));
  return keys;
}

AccessResult ScriptedCache::request(const std::vector<uint64_t>& ids) {
  std::vector<BlockKey> keys = chain(ids);
  for (size_t i = 0; i < keys.size(); ++i) {
    bool known = false;
    for (auto& [k, path] : paths_) known |= k == keys[i];
    if (!known)
      paths_.push_back({keys[i], std::vector<uint64_t>(ids.begin(), ids.begin() + i + 1)});
  }
  RequestView v;
  v.index = next_;
  v.time = next_;
  v.first_access = 0;
  ++next_;
  v.prompt_tokens = static_cast<uint32_t>(ids.size() * 16);
  v.blocks = keys;
  return cache_->access(v);
}

bool ScriptedCache::cached(const std::vector<uint64_t>& ids) const {
  return !ids.empty() && cache_->tree().find(chain(ids).back()) != kNoNode;
}

}  // namespace kvpolicy::testing
