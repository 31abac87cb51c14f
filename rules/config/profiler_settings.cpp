// ProfilingConfig.finalize() runs for every job (profiling is a default
// instance): one profiler at a time, and a step window that makes sense.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kProfilerSettings;

namespace {

constexpr BothOn kBothProfilers = {
    .first = "profiling.use_pytorch_profiler",
    .second = "profiling.use_nsys_profiler",
    .message =
        "profiling.use_pytorch_profiler and use_nsys_profiler are both on: ProfilingConfig.finalize() asserts "
        "\"Exactly one of pytorch or nsys profiler should be enabled, not both\"",
    .help = "keep one profiler",
};

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  const ConfigValue* section = find_path(job.config, "profiling");
  if (section && section->is_null()) return;  // profiling: null skips finalize()
  check_both_on(job, kProfilerSettings, kBothProfilers, out);
  Resolved start = resolve(job, "profiling.profile_step_start");
  Resolved end = resolve(job, "profiling.profile_step_end");
  // Plain integers: GCC 12 misreads optionals here (-Wmaybe-uninitialized).
  bool has_a = start.known() && as_int(&*start.value).has_value();
  bool has_b = end.known() && as_int(&*end.value).has_value();
  int64_t a_value = has_a ? *as_int(&*start.value) : 0;
  int64_t b_value = has_b ? *as_int(&*end.value) : 0;
  const int64_t* a = has_a ? &a_value : nullptr;
  const int64_t* b = has_b ? &b_value : nullptr;
  if (a && *a < 0) {
    report(out,
           finding(kProfilerSettings,
                   fmt::format(
                       "profiling.profile_step_start is {}: ProfilingConfig.finalize() asserts \"profile_step_start "
                       "must be >= 0\"",
                       *a),
                   {&start}),
           "use a step number of 0 or more");
  }
  if (b && *b < 0) {
    report(out,
           finding(kProfilerSettings,
                   fmt::format(
                       "profiling.profile_step_end is {}: ProfilingConfig.finalize() asserts \"profile_step_end must "
                       "be >= 0\"",
                       *b),
                   {&end}),
           "use a step number of 0 or more");
  }
  if (a && b && *a >= 0 && *b >= 0 && *b < *a) {
    report(
        out,
        finding(kProfilerSettings,
                fmt::format("profiling.profile_step_end {} is before profile_step_start {}: ProfilingConfig.finalize() "
                            "asserts \"profile_step_end ({}) must be >= profile_step_start ({})\"",
                            *b, *a, *b, *a),
                {&start, &end}),
        fmt::format("set profile_step_end to {} or later{}", *a,
                    end.defaulted ? " (its default is 12, even when no profiler is on)" : ""));
  }
}

}  // namespace

extern const RuleInfo kProfilerSettings = {
    .code = "MB977",
    .name = "profiler-settings",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "both profilers on, or a profiling step window ProfilingConfig.finalize() rejects",
    .doc = R"md(`ConfigContainer.profiling` is a `ProfilingConfig` instance by default, and Megatron Bridge calls
its `finalize()` at start-up whether or not a profiler is enabled. It asserts:

* "Exactly one of pytorch or nsys profiler should be enabled, not both, when ProfilingConfig is
  active." (`use_pytorch_profiler` and `use_nsys_profiler`);
* "profile_step_start must be >= 0", "profile_step_end must be >= 0";
* "profile_step_end (E) must be >= profile_step_start (S)".

The step defaults are 10 and 12, so moving only the start (`profile_step_start: 100`) fails even
when profiling is off. No recipe of the catalog sets the profiling fields, so their defaults are
known for recipe jobs; `profiling: null` skips the checks.)md",
    .bad = {"override.yaml", "profiling:\n  use_nsys_profiler: true\n  profile_step_start: 100\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "profiling:\n  use_nsys_profiler: true\n  profile_step_start: 100\n  profile_step_end: 102\n"},
    .check = check,
    .checks = "BR profiling",
};

}  // namespace mblint
