#include "kvpolicy/serve/route_study.h"

#include <filesystem>
#include <iterator>

#include "kvpolicy/core/error.h"
#include "kvpolicy/trace/generators.h"
#include "kvpolicy/trace/text_trace.h"

namespace kvpolicy {
namespace {

struct TextSource {
  const char* name;
  const char* source;              // text_trace.h's reader
  std::vector<const char*> files;  // under the data directory, read one after another
};
const TextSource kTextSources[] = {
    {"sharegpt", "sharegpt", {"sharegpt-sample/sharegpt_sample_slim.jsonl"}},
    {"chatbot-arena", "chatbot-arena", {"chatbot-arena/chatbot_arena_conversations_raw.jsonl"}},
    // Every LooGLE sample (20 documents with their questions): 5 documents alone are too few
    // to load 4 workers.
    {"loogle",
     "loogle",
     {"loogle/longdep_qa.jsonl", "loogle/shortdep_qa.jsonl", "loogle/shortdep_cloze.jsonl",
      "loogle/longdep_summarization.jsonl"}},
};

}  // namespace

std::vector<std::string> route_study_workload_names() {
  std::vector<std::string> names = {"gsp-random", "gsp-round_robin", "gsp-grouped"};
  for (const TextSource& s : kTextSources) names.push_back(s.name);
  return names;
}

std::vector<StudyWorkload> route_study_workloads(const std::vector<std::string>& names,
                                                 const RouteStudyWorkloadOptions& o,
                                                 std::vector<std::string>* skipped) {
  std::vector<std::string> wanted = names;
  if (wanted.size() == 1 && wanted[0] == "all") wanted = route_study_workload_names();
  std::vector<StudyWorkload> out;
  for (const std::string& name : wanted) {
    if (name.rfind("gsp-", 0) == 0) {
      std::string order = name.substr(4);
      if (order != "random" && order != "round_robin" && order != "grouped")
        throw ConfigError("route-study: unknown workload '" + name + "'");
      std::string params = "order=" + order;
      if (!o.gsp_params.empty()) params += "," + o.gsp_params;
      Trace t = generate_workload("gsp", params, o.seed);
      t.name = name;
      out.push_back({name, std::move(t)});
      continue;
    }
    const TextSource* source = nullptr;
    for (const TextSource& s : kTextSources)
      if (name == s.name) source = &s;
    if (!source) {
      std::string known;
      for (auto& n : route_study_workload_names()) known += (known.empty() ? "" : ", ") + n;
      throw ConfigError("route-study: unknown workload '" + name + "' (known: " + known +
                        ", or all)");
    }
    std::vector<Conversation> conversations;
    std::string missing;
    for (const char* file : source->files) {
      std::string path = o.data_dir + "/" + file;
      if (o.data_dir.empty() || !std::filesystem::exists(path)) {
        missing = o.data_dir.empty() ? "no data directory (--data or KVPOLICY_DATA)"
                                     : path + " not found";
        break;
      }
      TextReadReport report;
      auto some = read_conversations(path, source->source, /*skip_bad=*/true, report);
      conversations.insert(conversations.end(), std::make_move_iterator(some.begin()),
                           std::make_move_iterator(some.end()));
    }
    if (!missing.empty()) {
      if (skipped) skipped->push_back(name + ": " + missing);
      continue;
    }
    auto tokenizer = make_tokenizer(o.tokenizer);
    TextTraceParams params;
    params.max_conversations = o.max_conversations;
    Trace t = build_text_trace(conversations, *tokenizer, params, o.seed);
    t.name = name;
    out.push_back({name, std::move(t)});
  }
  return out;
}

}  // namespace kvpolicy
