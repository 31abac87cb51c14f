// The pipeline's point-to-point settings must match the schedule: overlapped
// p2p only with the interleaved schedule and never batched, and the
// warm-up/flush overlap only on top of overlapped, unbatched p2p.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kPipelineP2pCommConflict;

namespace {

// One effective boolean and where it came from.
struct Effective {
  std::optional<bool> value;
  Quantity source;  // located where written; `how` when Megatron Bridge or Megatron-LM decided it
};

Effective written(const Job& job, std::string_view path) {
  Setting s = config_bool(job, path);
  return {s.value, as_quantity(s)};
}

Effective decided(std::string_view path, bool value, std::string how) {
  Effective e;
  e.value = value;
  e.source.name = std::string(path.substr(path.rfind('.') + 1));
  e.source.path = std::string(path);
  e.source.value = value ? 1 : 0;
  e.source.display = value ? "true" : "false";
  e.source.how = std::move(how);
  return e;
}

struct P2p {
  Effective overlap;  // overlap_p2p_comm
  Effective batch;    // batch_p2p_comm
  Effective flush;    // overlap_p2p_comm_warmup_flush
};

// Megatron Bridge with a comm_overlap section: its value, or Bridge's own
// choice (overlap and no batching exactly when PP > 1 and VPP > 1).
Effective from_comm_overlap(const RuleContext& context, std::string_view field, bool for_overlap) {
  std::string path = "comm_overlap." + std::string(field);
  Effective user = written(context.job, path);
  if (user.value) return user;
  // Absent from a partial config: the recipe's comm_overlap may set it.
  const ConfigValue* node = config_node(context.job, path);
  if (!(node && node->is_null()) && !(!node && context.job.config_complete)) return {};
  const Quantity& pp = context.derived.pipeline_parallel;
  Quantity vpp = raw_virtual_pipeline(context.job);
  if (!pp.known() || !vpp.known()) return {};
  bool interleaved = *pp > 1 && *vpp > 1;
  bool value = *pp > 1 && (for_overlap ? interleaved : !interleaved);
  return decided("model." + std::string(field), value,
                 fmt::format("comm_overlap leaves {} unset: Megatron Bridge sets it to {} (pipeline_model_parallel_size "
                             "{}, virtual_pipeline_model_parallel_size {})",
                             field, value ? "true" : "false", *pp, vpp.display.empty() ? std::to_string(*vpp) : vpp.display));
}

P2p read_p2p(const RuleContext& context, const Interleaving& schedule) {
  const Job& job = context.job;
  P2p p2p;
  p2p.flush = written(job, "model.overlap_p2p_comm_warmup_flush");
  if (job.dialect == Dialect::MegatronLM) {
    if (!p2p.flush.value) p2p.flush = decided("model.overlap_p2p_comm_warmup_flush", false, "");
    Effective overlap = written(job, "model.overlap_p2p_comm");
    if (!overlap.value) overlap = decided("model.overlap_p2p_comm", true, "overlap_p2p_comm is on by default in Megatron-LM");
    if (schedule.known && !schedule.interleaved) {
      overlap = decided("model.overlap_p2p_comm", false,
                        "Megatron-LM turns overlap_p2p_comm off without a virtual pipeline");
    } else if (!schedule.known) {
      overlap.value.reset();
    }
    p2p.overlap = overlap;
    if (overlap.value) {
      p2p.batch = decided("model.batch_p2p_comm", !*overlap.value,
                          fmt::format("Megatron-LM sets batch_p2p_comm = not overlap_p2p_comm = {}",
                                      *overlap.value ? "false" : "true"));
    }
    return p2p;
  }
  switch (comm_overlap_presence(job)) {
    case Presence::Present:
      p2p.overlap = from_comm_overlap(context, "overlap_p2p_comm", true);
      p2p.batch = from_comm_overlap(context, "batch_p2p_comm", false);
      break;
    case Presence::Absent:
      p2p.overlap = written(job, "model.overlap_p2p_comm");
      p2p.batch = written(job, "model.batch_p2p_comm");
      break;
    case Presence::Unknown:
      break;  // comm_overlap may rewrite both
  }
  return p2p;
}

Diagnostic conflict(std::string message, std::initializer_list<const Effective*> involved) {
  std::vector<const Quantity*> located;
  for (const Effective* e : involved) {
    if (span_for(e->source).valid()) located.push_back(&e->source);
  }
  const Quantity* primary = located.empty() ? nullptr : located.front();
  for (const Quantity* q : located) {
    if (&most_specific({primary, q}) == q) primary = q;
  }
  Diagnostic diag = make_diagnostic(kPipelineP2pCommConflict, std::move(message),
                                    primary ? span_for(*primary) : Span{});
  for (const Effective* e : involved) {
    if (&e->source == primary) continue;
    if (span_for(e->source).valid() || !e->source.how.empty()) diag.notes.push_back(note_for(e->source));
  }
  return diag;
}

void push_fix(Diagnostic& diag, const Effective& setting, bool value) {
  if (setting.source.how.empty() && span_for(setting.source).valid()) {
    Setting s;
    s.name = setting.source.name;
    s.where = setting.source.where;
    diag.fixes.push_back(set_setting_fix(s, value, FixSafety::Unsafe));
  }
}

void check_warmup_flush(const P2p& p2p, std::vector<Diagnostic>& out) {
  if (!p2p.flush.value || !*p2p.flush.value || !p2p.overlap.value || !p2p.batch.value) return;
  if (*p2p.overlap.value && !*p2p.batch.value) return;
  Diagnostic diag = conflict(fmt::format("overlap_p2p_comm_warmup_flush needs overlap_p2p_comm on and "
                                         "batch_p2p_comm off (here overlap_p2p_comm {}, batch_p2p_comm {})",
                                         *p2p.overlap.value ? "true" : "false", *p2p.batch.value ? "true" : "false"),
                             {&p2p.flush, &p2p.overlap, &p2p.batch});
  diag.help = "turn overlap_p2p_comm_warmup_flush off, or use overlapped, unbatched p2p (interleaved schedule)";
  push_fix(diag, p2p.flush, false);
  out.push_back(std::move(diag));
}

void check_schedule(const RuleContext& context, const Interleaving& schedule, const P2p& p2p,
                    std::vector<Diagnostic>& out) {
  const Quantity& pp = context.derived.pipeline_parallel;
  if (context.job.dialect == Dialect::MegatronLM || !schedule.known || !splits(pp)) return;
  if (!p2p.overlap.value || !*p2p.overlap.value) return;
  if (schedule.interleaved) {
    if (!p2p.batch.value || !*p2p.batch.value) return;
    Diagnostic diag = conflict("overlap_p2p_comm and batch_p2p_comm are both on: the interleaved pipeline schedule "
                               "cannot use both",
                               {&p2p.overlap, &p2p.batch});
    diag.notes.push_back(note_for(schedule.source));
    diag.help = "set batch_p2p_comm to false (overlapped p2p is the faster choice with interleaving)";
    push_fix(diag, p2p.batch, false);
    push_fix(diag, p2p.overlap, false);
    out.push_back(std::move(diag));
    return;
  }
  Diagnostic diag = conflict(fmt::format("overlap_p2p_comm is on but the pipeline (pipeline_model_parallel_size {}) "
                                         "is not interleaved: the non-interleaved schedule does not support "
                                         "overlapping p2p communication",
                                         *pp),
                             {&p2p.overlap});
  if (span_for(schedule.source).valid()) diag.notes.push_back(note_for(schedule.source));
  diag.help = "set overlap_p2p_comm to false, or interleave with virtual_pipeline_model_parallel_size > 1";
  push_fix(diag, p2p.overlap, false);
  out.push_back(std::move(diag));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  Interleaving schedule = interleaving(context);
  P2p p2p = read_p2p(context, schedule);
  check_warmup_flush(p2p, out);
  check_schedule(context, schedule, p2p, out);
}

}  // namespace

extern const RuleInfo kPipelineP2pCommConflict = {
    .code = "MB507",
    .name = "pipeline-p2p-comm-conflict",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "pipeline p2p overlap/batching settings the pipeline schedule rejects",
    .doc = R"md(Pipeline stages exchange activations with point-to-point sends. Three settings shape that
exchange, and Megatron-Core accepts only some combinations:

* `overlap_p2p_comm_warmup_flush` needs `overlap_p2p_comm` on and `batch_p2p_comm` off
  (`ModelParallelConfig`: "overlap_p2p_comm_warmup_flush is only compatible with
  overlap_p2p_comm but not batch_p2p_comm");
* the interleaved schedule (virtual pipeline) rejects `overlap_p2p_comm` together with
  `batch_p2p_comm` ("Can not use both overlap_p2p_comm and batch_p2p_comm");
* the non-interleaved schedule (PP > 1, no virtual pipeline) rejects `overlap_p2p_comm` ("Non-
  interleaved pipeline parallelism does not support overlapping p2p communication").

Which values apply depends on the program. Megatron Bridge's `comm_overlap` section, when set,
rewrites `model.overlap_p2p_comm` and `model.batch_p2p_comm` before the model is checked (from
`comm_overlap.*`, or its own choice: overlapped and unbatched exactly when PP > 1 and VPP > 1);
without it the model's values apply (defaults: overlap off, batch on). Megatron-LM turns overlap
off without a virtual pipeline and always sets `batch_p2p_comm = not overlap_p2p_comm`, so only
the warm-up/flush combination can fail there. mblint stays silent when a recipe may have set
`comm_overlap` and the files do not say.)md",
    .bad = {"override.yaml",
     "comm_overlap: null\nmodel:\n  pipeline_model_parallel_size: 4\n  virtual_pipeline_model_parallel_size: null\n"
     "  overlap_p2p_comm: true\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 4 --gpus-per-node 8"},
    .good = {.content =
     "comm_overlap: null\nmodel:\n  pipeline_model_parallel_size: 4\n  virtual_pipeline_model_parallel_size: null\n"
     "  overlap_p2p_comm: false\n"},
    .check = check,
    .checks = "MC E8, MC E24, MC E25, BR model p2p warmup flush",
};

}  // namespace mblint
