// The leaderboard's outputs: the readable tables, and the --board-json rows whose fields are
// declared here once (docs/formats.md, "leaderboard --board-json"; a test keeps them equal).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "kvpolicy/app/leaderboard.h"

namespace kvpolicy::app {
namespace {

using namespace result_fields;

// A constant field naming the row's kind.
template <typename R>
ResultFieldOf<R> kind_field(std::string kind) {
  return {"kind",
          "string",
          "",
          "`" + kind + "`",
          [kind](const R&, JsonObject& o) { o.add("kind", kind); },
          {}};
}

std::vector<ResultFieldOf<BoardCell>> cell_fields() {
  using C = BoardCell;
  std::vector<ResultFieldOf<C>> f;
  f.push_back(kind_field<C>("cell"));
  f.push_back(text("trace", &C::trace, "the trace's label (`--traces label=path`)"));
  f.push_back(text("policy", &C::policy, "the policy's label (name:params)"));
  f.push_back(text("capacity", &C::capacity, "the capacity as written in `-c`"));
  f.push_back(integer("capacity_blocks", &C::capacity_blocks, "blocks", "it, on this trace"));
  f.push_back(flag("seed_policy", &C::is_seed, "the policy is one of `--seeds`"));
  f.push_back(number("block_hit_rate", &C::hit_rate, 6, -1, "", "the policy's block hit rate"));
  f.push_back(number("lru_hit_rate", &C::lru_hit_rate, 6, -1, "", "LRU's in this cell"));
  f.push_back(optional_text("best_seed", &C::best_seed,
                            "the seed policy with the most hits in this cell, the policy itself "
                            "left out (absent when no other seed policy ran)"));
  f.push_back(number_or_null("best_seed_hit_rate", &C::best_seed_hit_rate,
                             "its block hit rate (null when none ran)", 6));
  f.push_back(number_or_null("belady_hit_rate", &C::belady_hit_rate,
                             "Belady's, the offline reference (null when it failed)", 6));
  f.push_back(number("margin_lru_pt", &C::margin_lru_pt, 4, -1, "points",
                     "(`block_hit_rate` - `lru_hit_rate`) x 100"));
  f.push_back(number("margin_seed_pt", &C::margin_seed_pt, 4, -1, "points",
                     "(`block_hit_rate` - `best_seed_hit_rate`) x 100; 0 when no seed ran"));
  f.push_back(flag("beats_lru", &C::beats_lru, "more block hits than LRU"));
  f.push_back(flag("beats_seeds", &C::beats_seeds, "more block hits than every other seed policy"));
  f.push_back(flag("win", &C::win, "`beats_lru` and `beats_seeds`"));
  f.push_back(number_or_null("gap_closed", &C::gap_closed,
                             "(hit - LRU) / (Belady - LRU); null when that gap is under 0.1 pt",
                             6));
  return f;
}

std::vector<ResultFieldOf<BoardTraceRow>> trace_fields() {
  using T = BoardTraceRow;
  std::vector<ResultFieldOf<T>> f;
  f.push_back(kind_field<T>("trace"));
  f.push_back(text("trace", &T::trace, "the trace's label"));
  f.push_back(text("policy", &T::policy, "the policy's label"));
  f.push_back(flag("seed_policy", &T::is_seed, "the policy is one of `--seeds`"));
  f.push_back(integer("sizes", &T::sizes, "", "capacities it ran at"));
  f.push_back(integer("wins", &T::wins, "", "capacities where `win` holds"));
  f.push_back(integer("wins_needed", &T::wins_needed, "", "ceil(3/4 x the capacities asked)"));
  f.push_back(flag("counts", &T::counts, "`wins` >= `wins_needed`: the trace counts for it"));
  f.push_back(number("worst_margin_lru_pt", &T::worst_margin_lru_pt, 4, -1, "points",
                     "its least margin over LRU on this trace"));
  f.push_back(number("mean_margin_lru_pt", &T::mean_margin_lru_pt, 4, -1, "points",
                     "mean margin over LRU over the capacities"));
  f.push_back(number("mean_margin_seed_pt", &T::mean_margin_seed_pt, 4, -1, "points",
                     "mean margin over the best seed policy"));
  return f;
}

std::vector<ResultFieldOf<BoardSummary>> summary_fields() {
  using S = BoardSummary;
  std::vector<ResultFieldOf<S>> f;
  f.push_back(kind_field<S>("summary"));
  f.push_back(text("policy", &S::policy, "the policy's label"));
  f.push_back(flag("seed_policy", &S::is_seed, "the policy is one of `--seeds`"));
  f.push_back(integer("traces", &S::traces, "", "traces it ran on (T)"));
  f.push_back(integer("traces_won", &S::traces_won, "", "traces where `counts` holds (N)"));
  f.push_back(integer("sizes", &S::sizes, "", "capacities asked"));
  f.push_back(integer("wins_needed", &S::wins_needed, "", "ceil(3/4 x `sizes`)"));
  f.push_back(setting("min_margin_pt", &S::min_margin_pt, "points",
                      "the margin a win needs over LRU and each seed policy (0: more hits)"));
  f.push_back(number("worst_margin_lru_pt", &S::worst_margin_lru_pt, 4, -1, "points",
                     "its least margin over LRU in any cell"));
  f.push_back(text("worst_cell", &S::worst_cell, "where: \"trace at capacity\""));
  f.push_back(number("mean_margin_lru_pt", &S::mean_margin_lru_pt, 4, -1, "points",
                     "mean over traces of the per-trace mean margin over LRU"));
  f.push_back(number("mean_margin_seed_pt", &S::mean_margin_seed_pt, 4, -1, "points",
                     "the same over the best seed policy"));
  f.push_back(text("statement", &S::statement,
                   "\"beats LRU and every seed policy at >= 3 of 4 sizes on N of T traces; never "
                   "more than X pt below LRU (worst: ...)\""));
  return f;
}

template <typename R>
std::string row_json(const std::vector<ResultFieldOf<R>>& fields, const R& r) {
  JsonObject o;
  for (const auto& f : fields) f.write(r, o);
  return o.str();
}

std::string pt(double v) { return fmt::format("{:+.2f}", v); }

}  // namespace

const std::vector<ResultFieldOf<BoardCell>>& board_cell_fields() {
  static const auto fields = cell_fields();
  return fields;
}
const std::vector<ResultFieldOf<BoardTraceRow>>& board_trace_fields() {
  static const auto fields = trace_fields();
  return fields;
}
const std::vector<ResultFieldOf<BoardSummary>>& board_summary_fields() {
  static const auto fields = summary_fields();
  return fields;
}

std::vector<std::string> leaderboard_rows(const Leaderboard& b) {
  std::vector<std::string> out;
  for (const BoardCell& c : b.cells) out.push_back(row_json(board_cell_fields(), c));
  for (const BoardTraceRow& t : b.per_trace) out.push_back(row_json(board_trace_fields(), t));
  for (const BoardSummary& s : b.summary) out.push_back(row_json(board_summary_fields(), s));
  return out;
}

std::string leaderboard_text(const Leaderboard& b) {
  std::string out;
  auto say = [&](const std::string& s) { out += s; };
  say(fmt::format("seed policies: {}\n", fmt::join(b.seeds, ", ")));
  say("traces:\n");
  for (const BoardTraceInfo& t : b.traces) {
    say(fmt::format("  {:<16} {} ({} requests, {} block accesses, {} unique blocks{})\n", t.label,
                    t.source, with_commas(t.requests), with_commas(t.block_accesses),
                    with_commas(t.unique_blocks), t.has_scores ? ", continuation scores" : ""));
    if (!t.skipped.empty()) say(fmt::format("  {:<16} {}\n", "", t.skipped));
  }
  // Per trace: each policy's hit rate and margins at each capacity, policies by mean margin.
  std::map<std::pair<std::string, std::string>, const BoardTraceRow*> rows;
  for (const BoardTraceRow& r : b.per_trace) rows[{r.trace, r.policy}] = &r;
  size_t name_w = 22;
  for (const BoardSummary& s : b.summary) name_w = std::max(name_w, s.policy.size() + 6);
  for (const BoardTraceInfo& t : b.traces) {
    say(
        fmt::format("\n{}: block hit rate % | margin over LRU | over the best seed policy, points "
                    "(* = beats LRU and every seed policy)\n",
                    t.label));
    say(fmt::format("{:<{}}", "policy", name_w));
    for (const std::string& c : b.capacities) say(fmt::format("{:>25}", c));
    say(fmt::format("{:>7}\n", "wins"));
    std::vector<const BoardCell*> cells;
    for (const BoardCell& c : b.cells)
      if (c.trace == t.label) cells.push_back(&c);
    std::vector<std::string> policies;
    for (const BoardCell* c : cells)
      if (std::find(policies.begin(), policies.end(), c->policy) == policies.end())
        policies.push_back(c->policy);
    std::stable_sort(policies.begin(), policies.end(), [&](auto& a, auto& c) {
      return rows[{t.label, a}]->mean_margin_lru_pt > rows[{t.label, c}]->mean_margin_lru_pt;
    });
    for (const std::string& p : policies) {
      say(fmt::format("{:<{}}", p + (rows[{t.label, p}]->is_seed ? " (s)" : ""), name_w));
      for (size_t k = 0; k < b.capacities.size(); ++k) {
        auto it = std::find_if(cells.begin(), cells.end(), [&](const BoardCell* c) {
          return c->policy == p && c->capacity == b.capacities[k];
        });
        if (it == cells.end()) {
          say(fmt::format("{:>25}", "-"));
          continue;
        }
        const BoardCell& c = **it;
        say(fmt::format("{:>25}",
                        fmt::format("{:.2f} {} {}{}", c.hit_rate * 100, pt(c.margin_lru_pt),
                                    pt(c.margin_seed_pt), c.win ? "*" : " ")));
      }
      const BoardTraceRow& r = *rows[{t.label, p}];
      say(fmt::format("{:>7}\n", fmt::format("{}/{}", r.wins, r.sizes)));
    }
    // The references and which seed policy was best, per capacity.
    say(fmt::format("{:<{}}", "belady (offline)", name_w));
    for (const std::string& cap : b.capacities) {
      auto it = std::find_if(cells.begin(), cells.end(), [&](const BoardCell* c) {
        return c->capacity == cap && c->policy == "lru";
      });
      say(fmt::format("{:>25}", it == cells.end() || (*it)->belady_hit_rate < 0
                                    ? std::string("-")
                                    : fmt::format("{:.2f}  ", (*it)->belady_hit_rate * 100)));
    }
    say(fmt::format("\n{:<{}}", "best seed policy", name_w));
    for (const std::string& cap : b.capacities) {
      auto it = std::find_if(cells.begin(), cells.end(), [&](const BoardCell* c) {
        return c->capacity == cap && c->policy == "lru";
      });
      say(fmt::format("{:>25}", it == cells.end() || (*it)->best_seed.empty()
                                    ? std::string("-")
                                    : (*it)->best_seed + "  "));
    }
    say("\n");
  }
  // The summary, ranked.
  say(fmt::format(
      "\nsummary: a trace counts for a policy when it beats LRU and every seed policy ({}; a seed "
      "policy against the others) at >= {} of {} sizes (ceil 3/4)\n",
      b.min_margin_pt > 0 ? fmt::format("by more than {:g} points", b.min_margin_pt)
                          : std::string("more block hits than each"),
      b.wins_needed, b.capacities.size()));
  say(fmt::format("{:<{}}", "policy", name_w));
  for (const BoardTraceInfo& t : b.traces)
    say(fmt::format("{:>{}}", t.label, std::max<size_t>(t.label.size() + 2, 8)));
  say(fmt::format("{:>10}{:>12}{:>12}{:>12}\n", "N of T", "worst vs", "mean vs", "mean vs"));
  say(fmt::format("{:<{}}", "", name_w));
  for (const BoardTraceInfo& t : b.traces)
    say(fmt::format("{:>{}}", "wins", std::max<size_t>(t.label.size() + 2, 8)));
  say(fmt::format("{:>10}{:>12}{:>12}{:>12}\n", "traces", "LRU, pt", "LRU, pt", "seed, pt"));
  for (const BoardSummary& s : b.summary) {
    say(fmt::format("{:<{}}", s.policy + (s.is_seed ? " (s)" : ""), name_w));
    for (const BoardTraceInfo& t : b.traces) {
      auto it = rows.find({t.label, s.policy});
      std::string w = it == rows.end() ? "-"
                                       : fmt::format("{}/{}{}", it->second->wins, it->second->sizes,
                                                     it->second->counts ? "+" : "");
      say(fmt::format("{:>{}}", w, std::max<size_t>(t.label.size() + 2, 8)));
    }
    say(fmt::format("{:>10}{:>12}{:>12}{:>12}\n", fmt::format("{} of {}", s.traces_won, s.traces),
                    pt(s.worst_margin_lru_pt), pt(s.mean_margin_lru_pt),
                    pt(s.mean_margin_seed_pt)));
  }
  say("(s) = a seed policy; + = the trace counts (wins >= needed)\n\n");
  for (const BoardSummary& s : b.summary)
    if (s.policy != "lru") say(fmt::format("{}: {}\n", s.policy, s.statement));
  return out;
}

}  // namespace kvpolicy::app
