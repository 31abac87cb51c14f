// bucket_size counts parameters, not bytes. A value in the billions is a
// byte count read as parameters: one bucket then holds the whole model and
// nothing overlaps.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kDdpBucketSizeUnits;

namespace {

constexpr int64_t kImplausible = 1'000'000'000;

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!context.job.trains) return;  // only training builds the optimizer and recomputes
  const Job& job = context.job;
  for (std::string_view path : {"ddp.bucket_size", "comm_overlap.bucket_size"}) {
    Quantity size = config_int(job, path);
    if (!size.known() || *size < kImplausible || size.defaulted) continue;
    report(out,
           make_diagnostic(
               kDdpBucketSizeUnits,
               fmt::format(
                   "{} {} is a number of parameters ({:.1f} GB of fp32 gradients per bucket); it looks like a byte "
                   "count",
                   path, *size, static_cast<double>(*size) * 4.0 / 1e9),
               first_span(job, {span_for(size)})),
           "give bucket_size in parameters: Megatron Bridge's default is 134217728 (128 Mi), Megatron-LM's "
           "max(40000000, 1000000 x data-parallel size)");
  }
}

}  // namespace

extern const RuleInfo kDdpBucketSizeUnits = {
    .code = "MB910",
    .name = "ddp-bucket-size-units",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Note,
    .summary = "bucket_size of a billion or more: it counts parameters, not bytes",
    .doc = R"md(`ddp.bucket_size` (and `comm_overlap.bucket_size`) is the number of **parameters** per
gradient-reduction bucket; Megatron Bridge's `CommOverlapConfig` uses 128 Mi (134217728) parameters
when data parallelism is on. A value of a billion or more (4 GB of fp32 gradients per bucket) is
almost certainly a byte count: the buffer then becomes one or two buckets and the reduce-scatter
can hardly overlap with the backward pass. The run works; this is advice.)md",
    .bad = {"override.yaml",
     "ddp:\n  bucket_size: 4294967296\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "ddp:\n  bucket_size: 134217728\n"},
    .check = check,
    .checks = "PS 46",
};

}  // namespace mblint
