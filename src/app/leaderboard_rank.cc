// The leaderboard's ranking from replay rows: each cell's margins over LRU and over the best seed
// policy, wins per trace by the 3-of-4 rule, and the summary per policy (docs/formats.md).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "kvpolicy/app/leaderboard.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy::app {
namespace {

// Below this LRU-to-Belady gap (0.1 points) the share closed is noise (as compare says it).
constexpr double kMinGap = 0.001;

// From the counts, not block_hit_rate: a row read back (--resume) carries that rounded to six
// decimals, and the board must not depend on which rows were resumed.
double hit_rate(const ReplayResult& r) {
  return r.block_accesses ? double(r.block_hits) / double(r.block_accesses) : 0.0;
}

std::string label_of(const ReplayResult& r) {
  return r.params.empty() ? r.policy : r.policy + ":" + r.params;
}

}  // namespace

Leaderboard rank_leaderboard(std::vector<BoardTraceInfo> traces,
                             std::vector<std::string> capacities, std::vector<std::string> seeds,
                             std::vector<ReplayResult> results, double min_margin_pt) {
  Leaderboard b;
  b.wins_needed = board_wins_needed(capacities.size());
  b.min_margin_pt = min_margin_pt;
  // More hits (counted over the same accesses, so exact), or by more than the margin asked.
  auto beats = [&](const ReplayResult& a, const ReplayResult& other) {
    if (min_margin_pt <= 0) return a.block_hits > other.block_hits;
    return (hit_rate(a) - hit_rate(other)) * 100 > min_margin_pt;
  };
  // (trace, policy label, capacity blocks) -> result
  std::map<std::tuple<std::string, std::string, size_t>, const ReplayResult*> at;
  // Each trace's deployable policies, in the order their rows came.
  std::map<std::string, std::vector<std::string>> ran;
  for (const ReplayResult& r : results) {
    at[{r.trace, label_of(r), r.capacity_blocks}] = &r;
    auto& list = ran[r.trace];
    if (!r.offline && std::find(list.begin(), list.end(), label_of(r)) == list.end())
      list.push_back(label_of(r));
  }
  auto is_seed = [&](const std::string& p) {
    return std::find(seeds.begin(), seeds.end(), p) != seeds.end();
  };
  std::map<std::pair<std::string, std::string>, BoardTraceRow> per;  // (policy, trace)
  for (const BoardTraceInfo& t : traces) {
    if (t.capacity_blocks.size() != capacities.size())
      throw Error("leaderboard: trace " + t.label + " lacks its capacities");
    const std::vector<std::string>& policies = ran[t.label];
    for (size_t k = 0; k < capacities.size(); ++k) {
      const size_t blocks = t.capacity_blocks[k];
      auto find = [&](const std::string& p) -> const ReplayResult* {
        auto it = at.find({t.label, p, blocks});
        return it == at.end() ? nullptr : it->second;
      };
      const ReplayResult* lru = find("lru");
      if (!lru)
        throw Error(fmt::format("leaderboard: no LRU row for {} at {}", t.label, capacities[k]));
      const ReplayResult* opt = find("belady");
      for (const std::string& p : policies) {
        const ReplayResult* r = find(p);
        if (!r) continue;
        BoardCell c;
        c.trace = t.label;
        c.policy = p;
        c.capacity = capacities[k];
        c.capacity_blocks = blocks;
        c.is_seed = is_seed(p);
        c.hit_rate = hit_rate(*r);
        c.lru_hit_rate = hit_rate(*lru);
        c.margin_lru_pt = (hit_rate(*r) - hit_rate(*lru)) * 100;
        c.beats_lru = beats(*r, *lru);
        c.beats_seeds = true;
        const ReplayResult* best = nullptr;
        for (const std::string& s : seeds) {
          if (s == p) continue;  // a seed policy is measured against the others
          const ReplayResult* sr = find(s);
          if (!sr) continue;
          if (!best || sr->block_hits > best->block_hits) {
            best = sr;
            c.best_seed = s;
          }
          if (!beats(*r, *sr)) c.beats_seeds = false;
        }
        if (best) {
          c.best_seed_hit_rate = hit_rate(*best);
          c.margin_seed_pt = (hit_rate(*r) - hit_rate(*best)) * 100;
        }
        c.win = c.beats_lru && c.beats_seeds;
        if (opt) {
          c.belady_hit_rate = hit_rate(*opt);
          double gap = hit_rate(*opt) - hit_rate(*lru);
          if (gap >= kMinGap) c.gap_closed = (hit_rate(*r) - hit_rate(*lru)) / gap;
        }
        BoardTraceRow& row = per[{p, t.label}];
        if (row.sizes == 0) {
          row.trace = t.label;
          row.policy = p;
          row.is_seed = c.is_seed;
          row.wins_needed = b.wins_needed;
          row.worst_margin_lru_pt = c.margin_lru_pt;
        }
        ++row.sizes;
        row.wins += c.win;
        row.worst_margin_lru_pt = std::min(row.worst_margin_lru_pt, c.margin_lru_pt);
        row.mean_margin_lru_pt += c.margin_lru_pt;
        row.mean_margin_seed_pt += c.margin_seed_pt;
        b.cells.push_back(std::move(c));
      }
    }
  }
  // Per trace, then the summary per policy.
  std::map<std::string, BoardSummary> sums;
  std::vector<std::string> order;  // policies as first seen
  for (const BoardTraceInfo& t : traces)
    for (const std::string& p : ran[t.label]) {
      auto it = per.find({p, t.label});
      if (it == per.end()) continue;
      BoardTraceRow& row = it->second;
      row.mean_margin_lru_pt /= row.sizes;
      row.mean_margin_seed_pt /= row.sizes;
      // A capacity missing on a trace (a failed row) cannot be won: the sizes are the asked ones.
      row.counts = row.wins >= row.wins_needed;
      BoardSummary& s = sums[p];
      if (s.traces == 0) {
        order.push_back(p);
        s.policy = p;
        s.is_seed = row.is_seed;
        s.sizes = uint32_t(capacities.size());
        s.wins_needed = b.wins_needed;
        s.min_margin_pt = min_margin_pt;
        s.worst_margin_lru_pt = row.worst_margin_lru_pt + 1;  // replaced below
      }
      ++s.traces;
      s.traces_won += row.counts;
      s.mean_margin_lru_pt += row.mean_margin_lru_pt;
      s.mean_margin_seed_pt += row.mean_margin_seed_pt;
      b.per_trace.push_back(row);
    }
  for (const BoardCell& c : b.cells) {
    BoardSummary& s = sums[c.policy];
    if (s.worst_cell.empty() || c.margin_lru_pt < s.worst_margin_lru_pt) {
      s.worst_margin_lru_pt = c.margin_lru_pt;
      s.worst_cell = c.trace + " at " + c.capacity;
    }
  }
  for (const std::string& p : order) {
    BoardSummary s = sums[p];
    s.mean_margin_lru_pt /= s.traces;
    s.mean_margin_seed_pt /= s.traces;
    s.statement = fmt::format(
        "beats LRU and every seed policy{} at >= {} of {} sizes on {} of {} traces; {}",
        min_margin_pt > 0 ? fmt::format(" by > {:g} pt", min_margin_pt) : "", s.wins_needed,
        s.sizes, s.traces_won, s.traces,
        s.worst_margin_lru_pt < 0 ? fmt::format("never more than {:.2f} pt below LRU (worst: {})",
                                                -s.worst_margin_lru_pt, s.worst_cell)
                                  : fmt::format("never below LRU (least margin {:+.2f} pt, {})",
                                                s.worst_margin_lru_pt, s.worst_cell));
    b.summary.push_back(std::move(s));
  }
  std::stable_sort(b.summary.begin(), b.summary.end(),
                   [](const BoardSummary& a, const BoardSummary& c) {
                     if (a.traces_won != c.traces_won) return a.traces_won > c.traces_won;
                     return a.mean_margin_lru_pt > c.mean_margin_lru_pt;
                   });
  b.traces = std::move(traces);
  b.capacities = std::move(capacities);
  b.seeds = std::move(seeds);
  b.results = std::move(results);
  return b;
}

}  // namespace kvpolicy::app
