// Activation recompute is three settings that must agree: the granularity
// (full or selective), the method (uniform or block, full only) and the
// number of layers (full only). Megatron-Core's TransformerConfig rejects
// every other combination before the model is built.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kRecomputeSettings;

namespace {

struct Recompute {
  Choice granularity;
  Choice method;
  Quantity num_layers;
  bool num_layers_none = false;  // known to be None
};

Recompute read_recompute(const Job& job) {
  Recompute r;
  r.granularity = read_choice(job, "model.recompute_granularity");
  r.method = read_choice(job, "model.recompute_method");
  r.num_layers = config_int(job, "model.recompute_num_layers");
  r.num_layers_none = !r.num_layers.value && r.num_layers.display == "null";
  return r;
}

// The layers of one pipeline stage: what recompute_num_layers counts up to.
std::optional<int64_t> layers_per_stage(const Derived& d) {
  if (!d.num_layers.known() || !d.pipeline_parallel.known() || *d.pipeline_parallel <= 0) return std::nullopt;
  return *d.num_layers / *d.pipeline_parallel;
}

void report(const RuleContext& context, std::vector<Diagnostic>& out, std::string message, Span where,
            std::vector<Note> notes, std::string help, std::vector<Fix> fixes) {
  Diagnostic diag = make_diagnostic(kRecomputeSettings, std::move(message), first_span(context.job, {where}));
  for (Note& n : notes) {
    if (n.where != diag.where || !n.where.valid()) diag.notes.push_back(std::move(n));
  }
  diag.help = std::move(help);
  diag.fixes = std::move(fixes);
  out.push_back(std::move(diag));
}

void check_values(const RuleContext& context, const Recompute& r, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const std::string& g = *r.granularity.value;
  if (g != "full" && g != "selective") {
    report(context, out, fmt::format("recompute_granularity '{}' is not one of full, selective", g),
           span_for(r.granularity), {}, "use recompute_granularity selective (or full with a method and a layer count)",
           {text_fix(job, r.granularity, "selective")});
  }
  if (r.method.is_set() && *r.method.value != "uniform" && *r.method.value != "block") {
    report(context, out, fmt::format("recompute_method '{}' is not one of uniform, block", *r.method.value),
           span_for(r.method), {note_for(r.granularity)}, "use recompute_method uniform or block",
           {text_fix(job, r.method, "uniform"), text_fix(job, r.method, "block")});
  }
}

void check_full(const RuleContext& context, const Recompute& r, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  std::optional<int64_t> per_stage = layers_per_stage(context.derived);
  if (r.method.is_none()) {
    bool method_written = span_for(r.method).valid() && rank_of(r.method.where) > rank_of(r.granularity.where);
    report(context, out,
           "recompute_granularity full needs recompute_method uniform or block, but recompute_method is None",
           method_written ? span_for(r.method) : span_for(r.granularity),
           {method_written ? note_for(r.granularity) : note_for(r.method)},
           "set recompute_method uniform (recompute every group of recompute_num_layers layers) or block",
           {text_fix(job, r.method, "uniform"), text_fix(job, r.granularity, "selective")});
  }
  if (r.num_layers_none) {
    std::string range = per_stage ? fmt::format(" (1 to {}, the layers per pipeline stage)", *per_stage) : "";
    bool written = span_for(r.num_layers).valid() && rank_of(r.num_layers.where) > rank_of(r.granularity.where);
    report(context, out,
           fmt::format("recompute_granularity full needs recompute_num_layers{}, but it is None", range),
           written ? span_for(r.num_layers) : span_for(r.granularity),
           {written ? note_for(r.granularity) : note_for(r.num_layers)},
           "set recompute_num_layers (1 with recompute_method uniform recomputes every layer)",
           {int_fix(job, r.num_layers, 1), text_fix(job, r.granularity, "selective")});
  }
}

void check_selective(const RuleContext& context, const Recompute& r, std::vector<Diagnostic>& out) {
  if (!r.num_layers.known()) return;
  const Job& job = context.job;
  report(context, out,
         fmt::format("recompute_num_layers {} is only for full recompute; with recompute_granularity selective it "
                     "must be None",
                     *r.num_layers),
         rank_of(r.num_layers.where) >= rank_of(r.granularity.where) ? span_for(r.num_layers)
                                                                     : span_for(r.granularity),
         {note_for(r.granularity), note_for(r.num_layers)},
         "remove recompute_num_layers, or use recompute_granularity full with a recompute_method",
         {unset_fix(job, r.num_layers.path, r.num_layers.where, FixSafety::Unsafe),
          text_fix(job, r.granularity, "full")});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  Recompute r = read_recompute(context.job);
  if (!r.granularity.is_set()) return;
  check_values(context, r, out);
  if (r.granularity.is("full")) check_full(context, r, out);
  if (r.granularity.is("selective")) check_selective(context, r, out);
}

}  // namespace

extern const RuleInfo kRecomputeSettings = {
    .code = "MB801",
    .name = "recompute-settings",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "recompute granularity, method and layer count must form a combination Megatron-Core accepts",
    .doc = R"md(Activation recompute trades compute for memory with three settings:

* `recompute_granularity`: `full` recomputes whole transformer layers, `selective` recomputes
  the submodules named in `recompute_modules` (default `core_attn`);
* `recompute_method`: `uniform` (recompute each group of `recompute_num_layers` layers) or
  `block` (recompute the first `recompute_num_layers` layers of each pipeline stage); full only;
* `recompute_num_layers`: full only.

Megatron-Core's `TransformerConfig.__post_init__` raises a `ValueError` before the model is
built when the granularity is not `full`/`selective`, when the method is not `uniform`/`block`,
when full recompute has no method ("recompute_method must be \"block\" or \"uniform\"") or no
layer count ("recompute_num_layers must be between 1 and num_layers_per_pipeline_rank"), and when
selective recompute is given a layer count ("recompute_num_layers must be None"). The same checks
run under Megatron Bridge (model `finalize()`) and Megatron-LM, in every Megatron-Core release.

A selective granularity with a `recompute_method` is reported by `recompute-method-with-selective`.)md",
    .bad = {"override.yaml",
     "model:\n  recompute_granularity: full\n  recompute_method: uniform\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "model:\n  recompute_granularity: full\n  recompute_method: uniform\n  recompute_num_layers: 1\n"},
    .check = check,
    .checks = "MC I5, PS 64",
};

}  // namespace mblint
