// The DDP gradient buffer is cut into buckets either by size (bucket_size)
// or by count (num_buckets, Megatron-Core 0.18), not both.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kDdpNumBuckets;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  if (job.versions.megatron_core < Version{0, 18, 0}) return;
  Quantity count = config_int(job, "ddp.num_buckets");
  if (!count.known()) return;
  if (*count <= 0) {
    report(out,
           make_diagnostic(kDdpNumBuckets, fmt::format("num_buckets {} must be greater than 0", *count),
                           first_span(job, {span_for(count)})),
           "use a positive bucket count, or remove num_buckets",
           {unset_fix(job, count.path, count.where, FixSafety::Unsafe)});
    return;
  }
  Quantity size = config_int(job, "ddp.bucket_size");
  if (!size.known()) return;
  bool size_last = rank_of(size.where) > rank_of(count.where);
  Diagnostic diag = make_diagnostic(
      kDdpNumBuckets,
      fmt::format("num_buckets {} and bucket_size {} are both set: the gradient buffer is split by one or the other",
                  *count, *size),
      first_span(job, {size_last ? span_for(size) : span_for(count)}));
  add_notes(diag, {&count, &size}, size_last ? &size : &count);
  report(out, std::move(diag), "keep one of num_buckets and bucket_size",
         {unset_fix(job, size.path, size.where, FixSafety::Unsafe),
          unset_fix(job, count.path, count.where, FixSafety::Unsafe)});
}

}  // namespace

extern const RuleInfo kDdpNumBuckets = {
    .code = "MB909",
    .name = "ddp-num-buckets",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "ddp.num_buckets together with bucket_size, or not positive",
    .doc = R"md(Megatron-Core 0.18 added `num_buckets` to `DistributedDataParallelConfig`: the gradient buffer
is split into that many buckets instead of buckets of `bucket_size` parameters. Its
`__post_init__` asserts "Cannot specify both num_buckets and bucket_size" and "num_buckets must be
greater than 0", so the job stops when the DDP config is built (Megatron-LM: `--ddp-num-buckets`
with `--ddp-bucket-size`).

Megatron Bridge's `CommOverlapConfig` may also set `ddp.bucket_size` at start-up; only values the
job writes are compared here.)md",
    .bad = {"override.yaml",
     "ddp:\n  num_buckets: 48\n  bucket_size: 40000000\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "ddp:\n  num_buckets: 48\n  bucket_size: null\n"},
    .check = check,
    .checks = "MC K8",
};

}  // namespace mblint
