// `kvpolicy doctor`'s report: the text it prints and the JSON object of --json and Python
// (docs/doctor.md lists the fields).
#include <fmt/format.h>

#include "doctor_internal.h"
#include "kvpolicy/core/json_writer.h"

namespace kvpolicy::app {
namespace {

std::string pct(double share) { return fmt::format("{:.1f}%", 100 * share); }

std::string cause_meaning(const std::string& code) {
  if (code == doctor::kVolatile)
    return "a timestamp or id: the texts differ in a short run of "
           "digits/hex and agree again after it";
  if (code == doctor::kSystemPrompt) return "a changed system prompt: the first message differs";
  if (code == doctor::kReordered) return "reordered messages: the same messages in another order";
  if (code == "answer_missing")
    return "the next prompt does not carry the previous answer after the previous prompt";
  if (code == "answer_changed")
    return "the next prompt carries the previous answer altered (trimmed, reformatted, edited)";
  if (code == doctor::kTemplate)
    return "a tokenizer or template change: the same text (or messages) in other tokens or role "
           "markers";
  return "other: the prompts differ otherwise (e.g. history cut or edited)";
}

std::string section_text(const BreakSection& s, const char* what) {
  std::string out;
  for (size_t b = 0; b < s.histogram.size(); ++b)
    if (s.histogram[b])
      out +=
          fmt::format("{}{}: {}", out.empty() ? "" : ", ", doctor::bucket_label(b), s.histogram[b]);
  std::string text = fmt::format("   {}\n   first unshared block of {}: {}\n", s.basis, what,
                                 out.empty() ? "none" : out);
  for (const BreakCause& c : s.causes) {
    text += fmt::format("   {} x {} — {}\n", c.count, c.code, cause_meaning(c.code));
    for (const BreakExample& e : c.examples)
      text += fmt::format("     line {} (vs line {}), block {}: \"{}\" vs \"{}\"\n", e.line,
                          e.previous_line, e.block, e.before, e.after);
  }
  return text;
}

std::string hits_text(const HitRates& h) {
  return fmt::format("block {:>6}  token {:>6}", pct(h.block), pct(h.token));
}

std::string hits_json(const HitRates& h) {
  return JsonObject().add("block", h.block).add("token", h.token).str();
}

std::string section_json(const BreakSection& s) {
  std::string hist, causes;
  for (size_t b = 0; b < s.histogram.size(); ++b)
    hist += (hist.empty() ? "" : ",") +
            JsonObject().add("blocks", doctor::bucket_label(b)).add("count", s.histogram[b]).str();
  for (const BreakCause& c : s.causes) {
    std::string ex;
    for (const BreakExample& e : c.examples)
      ex += (ex.empty() ? "" : ",") + JsonObject()
                                          .add("line", e.line)
                                          .add("previous_line", e.previous_line)
                                          .add("block", e.block)
                                          .add("before", e.before)
                                          .add("after", e.after)
                                          .str();
    causes += (causes.empty() ? "" : ",") + JsonObject()
                                                .add("cause", c.code)
                                                .add("count", c.count)
                                                .raw("examples", "[" + ex + "]")
                                                .str();
  }
  return JsonObject()
      .add("pairs", s.pairs)
      .add("breaks", s.breaks)
      .add("basis", s.basis)
      .raw("histogram", "[" + hist + "]")
      .raw("causes", "[" + causes + "]")
      .str();
}

}  // namespace

std::string DoctorReport::text() const {
  std::string o =
      fmt::format("kvpolicy doctor: {} ({}): {} requests, {} unique blocks of {} tokens\n{}\n",
                  input, content == "blocks" ? "block keys only" : "prompt " + content, requests,
                  with_commas(unique_blocks), block_tokens, sanity.text());
  o += fmt::format("1. The finite cache: {}\n", capacity_label);
  o += fmt::format("   {:<26} {}\n", "ideal (infinite cache)", hits_text(ideal));
  if (policy != "lru") o += fmt::format("   {:<26} {}\n", policy, hits_text(policy_hit));
  o += fmt::format("   {:<26} {}\n", "lru", hits_text(lru));
  o += fmt::format("   {:<26} {}\n", "belady (offline bound)", hits_text(belady));
  o += fmt::format(
      "   lost to the finite cache: {:.1f} points of tokens (ideal - {}); a better policy could "
      "recover at most {:.1f} of them (belady - {}, an offline bound)\n\n",
      100 * (ideal.token - policy_hit.token), policy, 100 * (belady.token - policy_hit.token),
      policy);
  o += fmt::format(
      "2. Prefix breaks within sessions: {} of {} turns ({}) break before the "
      "previous prompt's last full block\n",
      within.breaks, within.pairs, pct(within.pairs ? double(within.breaks) / within.pairs : 0));
  o += section_text(within, "the breaks") + "\n";
  if (answers.pairs) {
    o += fmt::format(
        "2b. Answers: {} of {} turns that extend the previous prompt do not carry its "
        "answer as generated (output_text)\n",
        answers.breaks, answers.pairs);
    o += section_text(answers, "those turns") + "\n";
  }
  o += fmt::format(
      "3. Across sessions: {} of {} requests ({}) share a long head with a recent "
      "request of another session except for a volatile span near the start\n",
      across.breaks, across.pairs, pct(across.pairs ? double(across.breaks) / across.pairs : 0));
  o += section_text(across, "each request with its most similar recent one") + "\n";
  o += fmt::format(
      "4. Block size: {} of {} prompts ({}) are shorter than one block of {} tokens; {} of "
      "prompt tokens are in partial last blocks (never reusable)\n",
      shorter_than_block, requests, pct(requests ? double(shorter_than_block) / requests : 0),
      block_tokens, pct(partial_block_token_share));
  if (small_block_tokens)
    o += fmt::format("   at {} tokens a block (the same KV memory): ideal {}, {} {}\n",
                     small_block_tokens, hits_text(small_ideal), policy, hits_text(small_policy));
  else
    o += "   smaller blocks not measured: " +
         std::string(content == "blocks" ? "the trace holds no token ids"
                                         : "the block size is already 1") +
         "\n";
  o += "\n";
  if (routers.empty()) {
    o += "5. Routing: not measured (--no-routing)\n\n";
  } else {
    o += fmt::format("5. Routing: {} workers, {} with {} blocks each (serve mode)\n", workers,
                     policy, with_commas(capacity_blocks));
    bool queueing = false;
    for (const RouterRow& r : routers) {
      o += fmt::format(
          "   {:<18} {}  TTFT p50 {:.1f} ms, p90 {:.1f} ms (queue wait p50 {:.1f} ms)\n", r.router,
          hits_text(r.hit), r.ttft_p50_ms, r.ttft_p90_ms, r.queue_wait_p50_ms);
      queueing |= r.queue_wait_p50_ms > r.ttft_p50_ms / 2;
    }
    if (queueing)
      o += fmt::format(
          "   (the median request waits in a queue for more than half its TTFT: {} workers do "
          "not keep up with the trace's arrivals; try more --workers)\n",
          workers);
    o += "\n";
  }
  o += "6. What to change, by measured gain in token hit rate:\n";
  for (size_t i = 0; i < remedies.size(); ++i) {
    const Remedy& r = remedies[i];
    o += fmt::format("   {}. {:+.1f} points of tokens ({:+.1f} of blocks): {} — {}\n", i + 1,
                     r.gain_token_points(), r.gain_block_points(), r.what, r.setting);
    if (r.changes_prompts)
      o += fmt::format("      (the ideal, an infinite cache: {} → {} of tokens)\n",
                       pct(r.ideal_before.token), pct(r.ideal_after.token));
  }
  o += fmt::format("\ndiagnosed in {:.1f} s\n", seconds);
  return o;
}

std::string DoctorReport::to_json() const {
  std::string rows, rem;
  for (const RouterRow& r : routers)
    rows += (rows.empty() ? "" : ",") + JsonObject()
                                            .add("router", r.router)
                                            .raw("hit_rate", hits_json(r.hit))
                                            .add("ttft_p50_ms", r.ttft_p50_ms, 3)
                                            .add("ttft_p90_ms", r.ttft_p90_ms, 3)
                                            .add("queue_wait_p50_ms", r.queue_wait_p50_ms, 3)
                                            .str();
  for (const Remedy& r : remedies)
    rem += (rem.empty() ? "" : ",") +
           JsonObject()
               .add("what", r.what)
               .add("setting", r.setting)
               .raw("before", hits_json(r.before))
               .raw("after", hits_json(r.after))
               .add("gain_token_points", r.gain_token_points(), 3)
               .add("gain_block_points", r.gain_block_points(), 3)
               .raw("ideal_before", r.changes_prompts ? hits_json(r.ideal_before) : "null")
               .raw("ideal_after", r.changes_prompts ? hits_json(r.ideal_after) : "null")
               .str();
  return JsonObject()
      .add("input", input)
      .add("content", content)
      .add("requests", requests)
      .add("unique_blocks", unique_blocks)
      .add("block_tokens", block_tokens)
      .raw("sanity", sanity.to_json())
      .add("capacity", capacity_label)
      .add("capacity_blocks", capacity_blocks)
      .add("policy", policy)
      .raw("ideal", hits_json(ideal))
      .raw("policy_hit_rate", hits_json(policy_hit))
      .raw("lru", hits_json(lru))
      .raw("belady", hits_json(belady))
      .raw("within_sessions", section_json(within))
      .raw("across_sessions", section_json(across))
      .raw("answers", section_json(answers))
      .add("shorter_than_block", shorter_than_block)
      .add("partial_block_token_share", partial_block_token_share)
      .add("small_block_tokens", small_block_tokens)
      .raw("small_ideal", hits_json(small_ideal))
      .raw("small_policy", hits_json(small_policy))
      .add("workers", workers)
      .raw("routers", "[" + rows + "]")
      .raw("remedies", "[" + rem + "]")
      .str();
}

}  // namespace kvpolicy::app
