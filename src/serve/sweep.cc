// Serve-mode sweeps: configurations on all cores, each result streamed as one JSON line,
// resumable after an interruption.
#include <map>
#include <mutex>

#include "kvpolicy/core/error.h"
#include "kvpolicy/core/resumable.h"
#include "kvpolicy/serve/serve.h"
#include "kvpolicy/trace/fingerprint.h"

namespace kvpolicy {

std::vector<ServeResult> run_serve_sweep(const Trace& trace,
                                         const std::vector<ServeOptions>& configs,
                                         const ServeSweepOptions& options) {
  std::map<std::string, ServeResult> finished;
  if (options.resume && !options.json_path.empty()) {
    std::string fingerprint = trace_fingerprint(trace);
    read_complete_lines(options.json_path, [&](const ResultLine& line) {
      ServeResult r = parse_serve_result(line.text, options.json_path, line.line_no);
      refuse_stale_row(options.json_path, line.line_no, r.trace, r.trace_fingerprint, trace.name,
                       fingerprint);
      finished[r.key()] = std::move(r);
    });
  }
  ResultsFile out;
  if (!options.json_path.empty()) out = ResultsFile(options.json_path, !options.resume);
  std::vector<ServeResult> results(configs.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < configs.size(); ++i) {
    auto it = finished.find(planned_result(trace, configs[i]).key());
    if (it != finished.end()) {
      results[i] = it->second;
    } else {
      todo.push_back(i);
    }
  }
  std::mutex mu;
  size_t completed = configs.size() - todo.size();
  parallel_for(todo.size(), options.jobs, [&](size_t k) {
    ServeOptions o = configs[todo[k]];
    std::string label = o.router.label() + " / " + o.policy.label() + " / " +
                        std::to_string(o.workers) + " workers";
    o.progress = [&](double f) {
      std::lock_guard lock(mu);
      if (options.progress) options.progress((completed + f) / configs.size(), label);
    };
    ServeResult r = serve(trace, o);
    std::lock_guard lock(mu);
    if (out.is_open()) out.append(r.to_json());
    results[todo[k]] = std::move(r);
    ++completed;
  });
  out.finish();
  return results;
}

}  // namespace kvpolicy
