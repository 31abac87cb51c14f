#include "rules/support/memory_support.h"

#include <algorithm>

#include "rules/support/runtime_support.h"

namespace mblint {

namespace {

bool is_memory_rule(std::string_view name) {
  return name == "estimated-oom" || name == "memory-headroom" || name == "distributed-optimizer-off";
}

}  // namespace

// The error diagnostics the other rules report on a job (the memory rules
// left out: the candidate's memory is what the re-estimate decides).
std::vector<std::string> other_errors(const RuleContext& context, const Job& job, const Derived& derived) {
  if (!context.check_rules) return {};
  std::vector<const RuleInfo*> selected;
  for (const RuleInfo* rule : context.rules) {
    if (rule->check && rule->severity == Severity::Error && !is_memory_rule(rule->name)) selected.push_back(rule);
  }
  std::vector<Diagnostic> found;
  context.check_rules(job, derived, context.thresholds, RuleSet(selected.data(), selected.size()), found);
  std::vector<std::string> keys;
  for (const Diagnostic& d : found) {
    if (d.severity == Severity::Error) keys.push_back(d.rule + ": " + d.message);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

namespace {

}  // namespace

Job changed_job(const Job& job, const std::vector<MemoryChange>& changes) {
  Job copy = job;
  for (const MemoryChange& c : changes) {
    ConfigValue value = c.value;
    value.where.layer = Layer::CommandLine;
    value.where.origin = "changed by mblint's remedy";
    assign_path(copy.config, split_path(c.path), std::move(value));
  }
  return copy;
}

namespace {

std::string flag_or_path(const Job& job, const std::string& path) {
  if (job.dialect != Dialect::MegatronLM) return path;
  if (path == "ddp.use_distributed_optimizer") return "--use-distributed-optimizer";
  if (path == "model.recompute_granularity") return "--recompute-granularity";
  if (path == "model.sequence_parallel") return "--sequence-parallel";
  if (path == "model.pipeline_model_parallel_size") return "--pipeline-model-parallel-size";
  if (path == "model.tensor_model_parallel_size") return "--tensor-model-parallel-size";
  if (path == "train.micro_batch_size") return "--micro-batch-size";
  if (path == "model.context_parallel_size") return "--context-parallel-size";
  return path;
}

// Cost of a change to the run, in the order Megatron Bridge's memory-tuning
// notes try them (parallelism-strategies.md 11.4): sharding the optimizer
// and sequence parallelism are free, selective recompute costs a few
// percent, a smaller micro-batch or more model parallelism more, full
// recompute about a third of the step time.
struct Candidate {
  std::string what;
  std::vector<MemoryChange> changes;
  int cost = 0;
  const Quantity* quantity = nullptr;  // for an edit where the value is written
  int64_t new_value = 0;
};

std::vector<Candidate> candidates(const RuleContext& context, std::vector<Quantity>& storage) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  std::vector<Candidate> out;
  bool dist = read_flag(job, "ddp.use_distributed_optimizer").value.value_or(false) ||
              read_flag(job, "optimizer.use_distributed_optimizer").value.value_or(false);
  if (!dist) {
    Candidate c{fmt::format("enable {}", flag_or_path(job, "ddp.use_distributed_optimizer")), {}, 0};
    c.changes.push_back({"ddp.use_distributed_optimizer", make_bool(true)});
    c.changes.push_back({"optimizer.use_distributed_optimizer", make_bool(true)});
    out.push_back(std::move(c));
  }
  std::optional<std::string> recompute = config_text(job, "model.recompute_granularity").value;
  if (!recompute) {
    Candidate c{fmt::format("{}: selective", flag_or_path(job, "model.recompute_granularity")), {}, 1};
    c.changes.push_back({"model.recompute_granularity", make_string("selective")});
    out.push_back(std::move(c));
  }
  if (!recompute || *recompute == "selective") {
    Candidate c{fmt::format("{}: full (uniform, 1 layer)", flag_or_path(job, "model.recompute_granularity")), {}, 4};
    c.changes.push_back({"model.recompute_granularity", make_string("full")});
    c.changes.push_back({"model.recompute_method", make_string("uniform")});
    c.changes.push_back({"model.recompute_num_layers", make_int(1)});
    c.changes.push_back({"model.recompute_modules", make_null()});
    out.push_back(std::move(c));
  }
  if (d.tensor_parallel.known() && *d.tensor_parallel > 1 && !d.sequence_parallel.value.value_or(false)) {
    Candidate c{fmt::format("{}: true", flag_or_path(job, "model.sequence_parallel")), {}, 0};
    c.changes.push_back({"model.sequence_parallel", make_bool(true)});
    out.push_back(std::move(c));
  }
  auto scale = [&](const Quantity& q, const char* path, int64_t next, int cost) {
    storage.push_back(q);
    Candidate c{fmt::format("{} {} -> {}", flag_or_path(job, path), *q, next), {}, cost};
    c.changes.push_back({path, make_int(next)});
    c.quantity = &storage.back();
    c.new_value = next;
    out.push_back(std::move(c));
  };
  storage.reserve(8);  // pointers into it stay valid
  if (d.pipeline_parallel.known() && *d.pipeline_parallel > 0) {
    scale(d.pipeline_parallel, "model.pipeline_model_parallel_size", *d.pipeline_parallel * 2, 3);
  }
  if (d.pipeline_parallel.known() && *d.pipeline_parallel > 0) {
    scale(d.pipeline_parallel, "model.pipeline_model_parallel_size", *d.pipeline_parallel * 4, 4);
  }
  if (d.context_parallel.known() && *d.context_parallel > 0 && d.seq_length.known() && *d.seq_length >= 8192) {
    scale(d.context_parallel, "model.context_parallel_size", *d.context_parallel * 2, 3);
  }
  if (d.tensor_parallel.known() && *d.tensor_parallel > 0 && *d.tensor_parallel < 8) {
    scale(d.tensor_parallel, "model.tensor_model_parallel_size", *d.tensor_parallel * 2, 3);
  }
  if (d.micro_batch_size.known() && *d.micro_batch_size > 1) {
    scale(d.micro_batch_size, "train.micro_batch_size", *d.micro_batch_size / 2, 2);
  }
  return out;
}

std::optional<MemoryEstimate> estimate_of(const RuleContext& context) {
  if (!context.job.trains) return std::nullopt;
  // The rules judge only jobs that state every memory-relevant setting: a
  // Megatron-LM command line (the parser's defaults are known) or a full
  // config dump. A recipe-based job leaves recompute, offloading, FP8
  // parameters and the like to provider code mblint does not see, so its
  // estimate is an upper bound (`mblint estimate` still shows it).
  if (context.job.dialect != Dialect::MegatronLM && !context.job.config_complete) return std::nullopt;
  std::optional<MemoryEstimate> e = estimate_memory(context.job, context.derived);
  // A vision tower's images per micro-batch are bounded, not known: that
  // estimate is an upper bound too.
  if (e && activation_only_assumptions(*e) > 0) return std::nullopt;
  return e;
}

}  // namespace

const std::optional<MemoryEstimate>& job_estimate(const RuleContext& context) {
  RuleMemo& memo = memo_of(context);
  if (!memo.estimate) memo.estimate = estimate_of(context);  // three rules ask
  return *memo.estimate;
}

std::optional<MemoryEstimate> partial_job_estimate(const RuleContext& context) {
  const Job& job = context.job;
  if (!job.trains || job.dialect != Dialect::Bridge) return std::nullopt;
  if (job.config_complete && job_estimate(context)) return std::nullopt;  // judged whole
  return estimate_memory(job, context.derived);
}

std::optional<MemoryEstimate> estimate_with(const RuleContext& context, const std::vector<MemoryChange>& changes) {
  Job job = changed_job(context.job, changes);
  Derived derived = derive(job);
  return estimate_memory(job, derived);
}

namespace {

bool overlaps(const Candidate& a, const Candidate& b) {
  for (const MemoryChange& x : a.changes) {
    for (const MemoryChange& y : b.changes) {
      if (x.path == y.path || (x.path.find("recompute") != std::string::npos &&
                               y.path.find("recompute") != std::string::npos)) {
        return true;
      }
    }
  }
  return false;
}

Candidate combine(const Candidate& a, const Candidate& b) {
  Candidate c{a.what + " and " + b.what, a.changes, a.cost + b.cost};
  c.changes.insert(c.changes.end(), b.changes.begin(), b.changes.end());
  return c;
}

}  // namespace

MemoryEstimate fixed_part(const MemoryEstimate& e) {
  MemoryEstimate fixed = e;
  fixed.activations = 0;
  fixed.other = 0;
  fixed.peak_allocated = e.weights + e.gradients + e.optimizer;
  fixed.overhead = 0;
  fixed.total = fixed.peak_allocated;
  return fixed;
}

std::vector<MemoryRemedy> memory_remedies(const RuleContext& context, const MemoryEstimate& current, double limit,
                                          MemoryMeasure measure) {
  auto judged = [measure](const MemoryEstimate& e) { return measure == MemoryMeasure::Whole ? e : fixed_part(e); };
  const MemoryEstimate now = judged(current);
  std::string_view of_what = measure == MemoryMeasure::Whole ? "" : " of weights, gradients and optimizer state";
  std::vector<MemoryRemedy> remedies;
  std::vector<Quantity> storage;
  std::vector<std::string> before;
  bool before_known = false;
  // Adds the remedy the candidate makes, if any; says whether it did.
  auto try_candidate = [&](const std::vector<const Candidate*>& parts) -> bool {
    Candidate merged = *parts.front();
    for (size_t i = 1; i < parts.size(); ++i) merged = combine(merged, *parts[i]);
    Job job = changed_job(context.job, merged.changes);
    Derived derived = derive(job);
    auto e = estimate_memory(job, derived);
    if (!e) return false;
    MemoryEstimate measured = judged(*e);
    // A change that saves under 1% is not a remedy (selective core-attention
    // recompute under flash attention: 0.4 of 479 GiB).
    if (measured.total >= now.total - std::max(0.05, 0.01 * now.total)) return false;
    if (!before_known) {
      before = other_errors(context, context.job, context.derived);
      before_known = true;
    }
    std::vector<std::string> after = other_errors(context, job, derived);
    bool new_error = std::any_of(after.begin(), after.end(), [&](const std::string& k) {
      return !std::binary_search(before.begin(), before.end(), k);
    });
    if (new_error) return false;
    MemoryRemedy r;
    r.cost = merged.cost;
    r.what = merged.what;
    r.changes = merged.changes;
    r.saving = now.total - measured.total;
    r.fits = e->capacity <= 0 || total_range(measured).high <= limit;
    r.estimate = std::move(*e);
    r.fix.description = fmt::format("{}: -{:.1f} GiB -> {:.1f} GiB{}{}", r.what, r.saving, measured.total, of_what,
                                    r.estimate.capacity > 0 ? (r.fits ? ", fits" : ", still too much") : "");
    r.fix.safety = FixSafety::Unsafe;
    r.fix.rechecked = true;  // re-estimated and re-checked above
    for (const Candidate* part : parts) {
      if (!part->quantity) continue;
      if (auto edit = replace_value(part->quantity->where, std::to_string(part->new_value))) r.fix.edits.push_back(*edit);
    }
    remedies.push_back(std::move(r));
    return true;
  };
  std::vector<Candidate> singles = candidates(context, storage);
  // Judged by the weights, gradients and optimizer state, a change that does
  // not lower them alone (recompute, a smaller micro-batch) adds nothing to a
  // pair.
  std::vector<const Candidate*> lowering;
  for (const Candidate& c : singles) {
    if (try_candidate({&c}) || measure == MemoryMeasure::Whole) lowering.push_back(&c);
  }
  bool any_fits = std::any_of(remedies.begin(), remedies.end(), [](const MemoryRemedy& r) { return r.fits; });
  // No single change is enough: every pair of changes that touch different
  // settings, re-estimated and re-checked the same way.
  if (!any_fits) {
    for (size_t i = 0; i < lowering.size(); ++i) {
      for (size_t j = i + 1; j < lowering.size(); ++j) {
        if (!overlaps(*lowering[i], *lowering[j])) try_candidate({lowering[i], lowering[j]});
      }
    }
  }
  std::stable_sort(remedies.begin(), remedies.end(), [&judged](const MemoryRemedy& a, const MemoryRemedy& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.fits && a.cost != b.cost) return a.cost < b.cost;  // the cheapest change that fits
    return judged(a.estimate).total < judged(b.estimate).total;
  });
  return remedies;
}

std::string error_band_note() {
  return fmt::format("the range is the estimate's measured error: 9 of 10 measured peaks lie within {:.2f}% of it "
                     "(the p90 of its under-estimation on 217 Megatron-LM CI runs, docs/memory.md)",
                     100 * kEstimateErrorBand);
}

std::string largest_parts(const MemoryEstimate& e, size_t count) {
  std::vector<const MemoryPart*> parts;
  for (const MemoryPart& p : e.parts) {
    if (p.name != "overhead") parts.push_back(&p);
  }
  std::stable_sort(parts.begin(), parts.end(), [](const MemoryPart* a, const MemoryPart* b) { return a->gib > b->gib; });
  std::string out;
  for (size_t i = 0; i < parts.size() && i < count; ++i) {
    out += fmt::format("{}{} {:.1f} GiB", i ? ", " : "", parts[i]->name, parts[i]->gib);
  }
  return out;
}

std::string remedies_help(const std::vector<MemoryRemedy>& remedies, size_t count) {
  if (remedies.empty()) return "no single change mblint tried (distributed optimizer, recompute, sequence parallel, "
                               "more PP or TP, a smaller micro-batch) lowers it without breaking another rule";
  std::string out = "re-estimated: ";
  for (size_t i = 0; i < remedies.size() && i < count; ++i) {
    out += (i ? "; " : "") + remedies[i].fix.description;
  }
  return out;
}

void report_with_remedies(std::vector<Diagnostic>& out, Diagnostic diag, const std::vector<MemoryRemedy>& remedies,
                          size_t count) {
  diag.help = remedies_help(remedies, count);
  for (size_t i = 0; i < remedies.size() && i < count; ++i) diag.fixes.push_back(remedies[i].fix);
  out.push_back(std::move(diag));
}

Span memory_span(const RuleContext& context) {
  const Derived& d = context.derived;
  return first_span(context.job, {span_for(d.micro_batch_size), span_for(d.pipeline_parallel),
                                  span_for(d.tensor_parallel), context.job.launch_span});
}

Span fixed_part_span(const RuleContext& context) {
  const Derived& d = context.derived;
  return first_span(context.job, {span_for(d.tensor_parallel), span_for(d.pipeline_parallel),
                                  span_for(d.expert_parallel), context.job.launch_span});
}

}  // namespace mblint
