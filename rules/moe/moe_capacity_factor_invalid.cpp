// Token dropping: moe_expert_capacity_factor caps the tokens per expert; it
// works only with the aux-loss load-balancing types, and padding to capacity
// needs a capacity to pad to.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kMoeCapacityFactorInvalid;

namespace {

using namespace moe;

constexpr std::string_view kCapacityTypes[] = {"aux_loss", "seq_aux_loss", "global_aux_loss", "none"};

bool works_with_capacity(std::string_view type) {
  for (std::string_view allowed : kCapacityTypes) {
    if (type == allowed) return true;
  }
  return false;
}

// The first load-balancing type the capacity factor does not work with;
// nullopt when all work or the setting is not known.
std::optional<std::string> unsupported_type(const Field& balancing) {
  if (!balancing.known()) return std::nullopt;
  if (auto single = balancing.text()) {
    return works_with_capacity(*single) ? std::nullopt : single;
  }
  if (!balancing.value.is_list()) return std::nullopt;
  for (const ConfigValue& item : balancing.value.items) {
    std::optional<std::string> type = as_string(&item);
    if (!type) return std::nullopt;
    if (!works_with_capacity(*type)) return type;
  }
  return std::nullopt;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Field factor = read_field(job, "model.moe_expert_capacity_factor");
  Field balancing = read_field(job, "model.moe_router_load_balancing_type");
  Field pad = read_field(job, "model.moe_pad_expert_input_to_capacity");
  std::optional<double> cf = factor.number();
  if (cf) {
    if (std::optional<std::string> type = unsupported_type(balancing)) {
      report(out,
             diagnostic_at(
                 kMoeCapacityFactorInvalid,
                 fmt::format(
                     "moe_expert_capacity_factor {} with load balancing \"{}\": Megatron-Core raises ValueError "
                     "(\"moe_expert_capacity_factor only works with aux_loss, seq_aux_loss, global_aux_loss or none "
                     "load balancing\") when the model config is finalized",
                     factor.display(), *type),
                 {&factor, &balancing}),
             "use an aux-loss load-balancing type (aux_loss, seq_aux_loss, global_aux_loss or none), or remove "
             "the capacity factor (dropless)",
             {set_field_fix(factor, "null")});
    }
  }
  bool negative = cf && *cf < 0;
  if (negative && pad.boolean() != true) {
    Diagnostic diag = diagnostic_at(
        kMoeCapacityFactorInvalid,
        fmt::format("moe_expert_capacity_factor {} is negative: Megatron-Core silently treats it as None, so no "
                    "tokens are dropped",
                    factor.display()),
        {&factor});
    diag.severity = Severity::Warning;
    report(out, std::move(diag), "write null for dropless MoE, or a positive capacity factor (e.g. 1.0) to drop tokens",
           {set_field_fix(factor, "null", FixSafety::Safe)});
  }
  if (pad.boolean() == true && factor.known() && (factor.is_null() || negative)) {
    report(
        out,
        diagnostic_at(
            kMoeCapacityFactorInvalid,
            fmt::format("moe_pad_expert_input_to_capacity is true but moe_expert_capacity_factor is {}: Megatron-Core "
                        "raises ValueError (\"moe_expert_capacity_factor must be set to use "
                        "moe_pad_expert_input_to_capacity\")",
                        negative ? factor.display() + " (treated as None)" : factor.display()),
            {&pad, &factor}),
        "set moe_expert_capacity_factor (e.g. 1.0), or moe_pad_expert_input_to_capacity to false",
        {set_field_fix(factor, "1.0"), set_field_fix(pad, "false")});
  }
}

}  // namespace

extern const RuleInfo kMoeCapacityFactorInvalid = {
    .code = "MB708",
    .name = "moe-capacity-factor-invalid",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "capacity factor with a load balancing it does not support, padding to capacity without a factor, or a negative factor",
    .doc = R"md(`moe_expert_capacity_factor` makes MoE token-dropping: each expert takes at most
`capacity_factor x tokens x topk / experts` tokens. Megatron-Core's `TransformerConfig.__post_init__`
checks it when the model config is finalized:

* a capacity factor with a `moe_router_load_balancing_type` (or any entry of a list of them) other
  than `aux_loss`, `seq_aux_loss`, `global_aux_loss` or `none` (for example `sinkhorn`) raises
  `ValueError("moe_expert_capacity_factor only works with aux_loss, seq_aux_loss, global_aux_loss or
  none load balancing")`;
* `moe_pad_expert_input_to_capacity` without a capacity factor raises `ValueError(
  "moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity")`;
* a **negative** capacity factor is silently replaced by None: the run is dropless although the
  config asks for dropping (a warning; writing null is a safe fix).

Megatron-LM and Megatron Bridge behave the same.)md",
    .bad = {"override.yaml",
     "model:\n  moe_expert_capacity_factor: 1.0\n  moe_router_load_balancing_type: sinkhorn\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "model:\n  moe_expert_capacity_factor: 1.0\n  moe_router_load_balancing_type: aux_loss\n"},
    .check = check,
    .checks = "MC G11",
};

}  // namespace mblint
