// With a comm_overlap section and the distributed optimizer, Megatron
// Bridge's CommOverlapConfig computes the data-parallel overlap settings and
// writes them into ddp and optimizer, replacing what those sections say.
// Only comm_overlap.* changes them.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kCommOverlapOverridesDdp;

namespace {

bool user_set(const ConfigValue* node) {
  return node && primary_span(node->where).valid() && written_by_user(node->where.layer);
}

std::string display(const ConfigValue& v) { return v.is_null() ? "null" : to_display(v); }

struct Field {
  std::string_view name;
  std::vector<std::string_view> sections;
};

// What CommOverlapConfig computes when comm_overlap.<name> is unset.
std::optional<std::string> computed(std::string_view name, const Derived& d) {
  if (!d.data_parallel.known()) return std::nullopt;
  bool dp = *d.data_parallel > 1;
  if (name == "bucket_size") return dp ? std::optional<std::string>("134217728") : std::optional<std::string>("null");
  if (name == "overlap_grad_reduce" || name == "overlap_param_gather") return dp ? "true" : "false";
  if (name == "overlap_param_gather_with_optimizer_step") return "false";
  if (name == "align_param_gather") {
    if (!dp) return "false";
    if (!d.pipeline_parallel.known() || !d.virtual_pipeline.known()) return std::nullopt;
    return *d.pipeline_parallel > 1 && *d.virtual_pipeline > 1 ? "true" : "false";
  }
  return std::nullopt;
}

std::string why(std::string_view name, const Derived& d) {
  if (name == "overlap_param_gather_with_optimizer_step") return "CommOverlapConfig leaves it off";
  return fmt::format("with data-parallel size {} CommOverlapConfig sets it", *d.data_parallel);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  const Derived& d = context.derived;
  if (job.config_complete || comm_overlap_sets_dp_overlap(job) != true) return;
  const Field fields[] = {{"overlap_grad_reduce", {"ddp"}},
                          {"overlap_param_gather", {"ddp", "optimizer"}},
                          {"bucket_size", {"ddp"}},
                          {"align_param_gather", {"ddp"}},
                          {"overlap_param_gather_with_optimizer_step", {"optimizer"}}};
  for (const Field& f : fields) {
    std::string comm_path = fmt::format("comm_overlap.{}", f.name);
    const ConfigValue* own = config_node(job, comm_path);
    std::optional<std::string> effective = own && !own->is_null() ? std::optional<std::string>(display(*own))
                                                                  : computed(f.name, d);
    if (!effective) continue;
    for (std::string_view section : f.sections) {
      std::string path = fmt::format("{}.{}", section, f.name);
      const ConfigValue* node = config_node(job, path);
      if (!user_set(node) || node->is_unknown() || display(*node) == *effective) continue;
      std::string source = own && !own->is_null() ? fmt::format("{} sets it", comm_path) : why(f.name, d);
      Diagnostic diag = make_diagnostic(
          kCommOverlapOverridesDdp,
          fmt::format("{} = {} is replaced at start-up: {} to {}", path, display(*node), source, *effective),
          first_span(job, {primary_span(node->where)}));
      if (own && !own->is_null()) {
        diag.notes.push_back(Note{fmt::format("{} set to {} here", comm_path, display(*own)), primary_span(own->where)});
      } else {
        diag.notes.push_back(Note{fmt::format("data-parallel size {} = {}", *d.data_parallel, d.data_parallel.how), {}});
      }
      report(out, std::move(diag),
             fmt::format("set {} instead (CommOverlapConfig owns the data-parallel overlap settings)", comm_path),
             {advice_fix(fmt::format("set {} to {} and remove {}", comm_path, display(*node), path))});
    }
  }
}

}  // namespace

extern const RuleInfo kCommOverlapOverridesDdp = {
    .code = "MB913",
    .name = "comm-overlap-overrides-ddp",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Warning,
    .summary = "a ddp/optimizer overlap setting that Megatron Bridge's CommOverlapConfig silently replaces",
    .doc = R"md(When the config has a `comm_overlap` section and `ddp.use_distributed_optimizer` is on, Megatron
Bridge's `CommOverlapConfig.setup()` computes the data-parallel overlap settings and writes them
into `ddp` and `optimizer`, over whatever those sections say:

| setting | data-parallel size > 1 | data-parallel size 1 |
|---|---|---|
| `overlap_grad_reduce`, `overlap_param_gather` | true | false |
| `bucket_size` | 134217728 (parameters) | null |
| `align_param_gather` | true with PP > 1 and VPP > 1 | false |
| `overlap_param_gather_with_optimizer_step` | false | false |

Only the `comm_overlap.*` field of the same name changes the result. So
`ddp.overlap_grad_reduce: false` next to a `comm_overlap` section still overlaps the gradient
reduce-scatter, without a message. Megatron-LM has no such section: its flags are taken as given
(and `validate_args` checks them, see `overlap-param-gather-prerequisites`).

mblint's catalog records which recipes build a `CommOverlapConfig` and the fields they set, so
the rule speaks when the job's files or its recipe have the section (not for `comm_overlap: null`).
The model's overlap switches it replaces are `comm-overlap-overrides-model`.)md",
    .bad = {"override.yaml",
     "comm_overlap:\n  tp_comm_overlap: false\nddp:\n  use_distributed_optimizer: true\n  overlap_grad_reduce: false\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content =
     "comm_overlap:\n  tp_comm_overlap: false\n  overlap_grad_reduce: false\nddp:\n  use_distributed_optimizer: true\n"},
    .check = check,
    .checks = "PS 43",
};

}  // namespace mblint
