// An unset expert_tensor_parallel_size means different things to different
// releases when TP > 1 and EP > 1: 1 for Megatron Bridge >= 0.6, TP for older
// Bridge and for Megatron-Core itself. The layout then changes with the
// release that runs it.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kExpertTensorParallelUnset;

namespace {

// Where ETP was left unset: a null written somewhere, a recipe that does not
// set it, a dump's default. Nullopt when it is set (or unknown).
std::optional<Provenance> unset_at(const Job& job) {
  const ConfigValue* node = find_path(job.config, "model.expert_tensor_parallel_size");
  if (node) return node->is_null() ? std::optional<Provenance>(node->where) : std::nullopt;
  if (job.recipe || job.config_complete) return Provenance{};
  return std::nullopt;
}

// "minimum GPUs 16, expert data-parallel size 2" for one reading of ETP.
std::string layout_with(const Derived& d, int64_t etp) {
  int64_t min_gpus = *d.pipeline_parallel * lcm64(*d.tensor_parallel * *d.context_parallel, *d.expert_parallel * etp);
  std::string text = fmt::format("minimum GPUs {}", min_gpus);
  if (d.world_size.known()) {
    int64_t grid = etp * *d.expert_parallel * *d.pipeline_parallel;
    text += *d.world_size % grid == 0 ? fmt::format(", expert data-parallel size {}", *d.world_size / grid)
                                      : fmt::format(", and {} GPUs do not fit it", *d.world_size);
  }
  return text;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge) return;  // Megatron-LM and NeMo always use TP
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& ep = d.expert_parallel;
  if (!tp.known() || !ep.known() || *tp <= 1 || *ep <= 1) return;
  if (!d.pipeline_parallel.known() || !d.context_parallel.known()) return;
  if (*d.pipeline_parallel <= 0 || *d.context_parallel <= 0) return;
  auto where = unset_at(job);
  if (!where) return;
  bool new_reading = job.versions.bridge >= Version{0, 6, 0};
  std::string version = to_string(job.versions.bridge);
  Span span = primary_span(*where).valid() ? primary_span(*where) : span_for(most_specific({&ep, &tp}));
  Diagnostic diag = make_diagnostic(
      kExpertTensorParallelUnset,
      fmt::format("expert_tensor_parallel_size is unset with tensor_model_parallel_size {} and "
                  "expert_model_parallel_size {}: Megatron Bridge >= 0.6 uses 1 ({}), older Bridge and "
                  "Megatron-Core use {} ({}); this job (Bridge {}) gets {}",
                  *tp, *ep, layout_with(d, 1), *tp, layout_with(d, *tp), version, new_reading ? 1 : *tp),
      span);
  if (!where->origin.empty()) diag.notes.push_back(Note{where->origin, primary_span(*where)});
  add_notes(diag, {&tp, &ep}, nullptr);
  int64_t current = new_reading ? 1 : *tp;
  int64_t other = new_reading ? *tp : 1;
  diag.help = fmt::format("set expert_tensor_parallel_size explicitly: {} keeps what this release does, {} is the "
                          "other reading",
                          current, other);
  Quantity etp = config_int(job, "model.expert_tensor_parallel_size");
  etp.where = *where;
  etp.name = "expert_tensor_parallel_size";
  diag.fixes.push_back(set_value_fix(etp, current, FixSafety::Safe));
  diag.fixes.push_back(set_value_fix(etp, other));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kExpertTensorParallelUnset = {
    .code = "MB108",
    .name = "expert-tensor-parallel-unset",
    .group = RuleGroup::World,
    .severity = Severity::Warning,
    .summary = "expert_tensor_parallel_size unset with TP > 1 and EP > 1 means 1 or TP depending on the release",
    .doc = R"md(The expert layers have their own tensor-parallel size. When `expert_tensor_parallel_size` is
left unset (null), what it becomes depends on the program: Megatron Bridge >= 0.6 sets it to 1
in the model's `finalize()` whenever `expert_model_parallel_size > 1`, while older Bridge
releases, Megatron-LM and Megatron-Core used directly set it to `tensor_model_parallel_size`.
With TP > 1 and EP > 1 the two readings give different layouts: a different minimum GPU count
(`PP x lcm(TP x CP, EP x ETP)`), a different expert data-parallel size, different expert
weight shards per GPU, and checkpoints that do not load into the other layout.

Nothing fails; the run silently depends on the release it happens to use. The warning names
both readings and which one applies (`--bridge-version`, default the newest). Setting the
value the job's release already uses is a safe fix. Megatron-LM command lines are not
affected (argparse always uses TP).)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 2\n  expert_tensor_parallel_size: null\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 8"},
    .good = {.content = "model:\n  tensor_model_parallel_size: 2\n  expert_tensor_parallel_size: 1\n"},
    .check = check,
    .checks = "PS 6",
};

}  // namespace mblint
