// `kvpolicy predictor-report` in a build without XGBoost (-DKVPOLICY_LEARNED=OFF): the command is
// listed and refuses with an error naming the option (predictor_report.cc is the real one).
#include "command.h"
#include "kvpolicy/core/error.h"

namespace kvpolicy::cli {
namespace {

void add(CLI::App& app) {
  auto* cmd = app.add_subcommand("predictor-report",
                                 "the GBM predictor's quality and cost (needs XGBoost: this build "
                                 "has -DKVPOLICY_LEARNED=OFF)");
  cmd->allow_extras();
  cmd->callback([] {
    throw ConfigError(
        "predictor-report needs XGBoost: this kvpolicy was built with -DKVPOLICY_LEARNED=OFF; "
        "rebuild with -DKVPOLICY_LEARNED=ON (Debian libxgboost-dev)");
  });
}

CommandRegistrar registrar(31, add);

}  // namespace
}  // namespace kvpolicy::cli
