// MLflow and Comet logging need a run / experiment name.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kLoggerRunNameMissing;

namespace {

bool empty_name(const Resolved& r) {
  return r.known() && (r.value->is_null() || (r.value->kind == ValueKind::String && r.value->text.empty()));
}

void check_pair(const RuleContext& context, std::string_view enabling, std::string_view name, std::string_view tool,
                std::vector<Diagnostic>& out) {
  Resolved on = resolve(context.job, enabling);
  Resolved named = resolve(context.job, name);
  if (!is_on(on) || !empty_name(named)) return;
  report(out,
         finding(kLoggerRunNameMissing,
                 fmt::format("{} is set but {} is empty: LoggerConfig.finalize() raises \"Set {} when "
                             "enabling {} logging.\"",
                             on.path, named.path, named.path, tool),
                 {&on, &named}),
         fmt::format("set {} (for example the experiment's run name)", named.path));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_bridge_job(context.job)) return;
  check_pair(context, "logger.mlflow_experiment", "logger.mlflow_run_name", "MLFlow", out);
  check_pair(context, "logger.comet_project", "logger.comet_experiment_name", "Comet ML", out);
}

}  // namespace

extern const RuleInfo kLoggerRunNameMissing = {
    .code = "MB976",
    .name = "logger-run-name-missing",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "MLflow or Comet logging without a run / experiment name",
    .doc = R"md(Megatron Bridge's `LoggerConfig.finalize()` refuses half-configured experiment trackers at
start-up: `logger.mlflow_experiment` without `logger.mlflow_run_name` raises "Set
logger.mlflow_run_name when enabling MLFlow logging.", and `logger.comet_project` without
`logger.comet_experiment_name` raises "Set logger.comet_experiment_name when enabling Comet ML
logging." (an empty string counts as missing). The tutorials' YAML files show the MLflow keys
commented out in pairs; uncommenting only the first one trips this. Whether the `mlflow` /
`comet_ml` package is installed is checked at run time too, but cannot be seen from the files.)md",
    .bad = {"override.yaml", "logger:\n  mlflow_experiment: llama32_1b_pretrain\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content =
     "logger:\n  mlflow_experiment: llama32_1b_pretrain\n  mlflow_run_name: llama32_1b_pretrain_run\n"},
    .check = check,
    .checks = "BR logger",
};

}  // namespace mblint
