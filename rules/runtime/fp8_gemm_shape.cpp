// TransformerEngine runs a GEMM in FP8 only when both matrices have
// aligned shapes: rows (tokens, output features) a multiple of 8 and
// columns (input features) a multiple of 16, or 32 for both with MXFP8's
// 32-element scaling blocks. Every shape of a dense transformer layer is
// known from the config.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kFp8GemmShape;

namespace {

struct Multiples {
  int64_t rows = 8;
  int64_t columns = 16;
  std::string recipe;
};

std::optional<Multiples> multiples_for(const Precision& p) {
  if (!p.fp8.is_set() || !p.fp8_recipe.is_set()) return std::nullopt;
  const std::string& recipe = *p.fp8_recipe.value;
  if (recipe == "mxfp8") return Multiples{32, 32, recipe};
  if (recipe == "delayed" || recipe == "tensorwise") return Multiples{8, 16, recipe};
  return std::nullopt;  // blockwise and custom recipes have their own rules
}

struct Shapes {
  const RuleContext& rule;
  const Precision& precision;
  const Multiples& m;
  std::vector<Diagnostic>& out;
};

void push(Shapes& s, std::string message, std::initializer_list<const Quantity*> inputs, std::string help,
          std::vector<Fix> fixes = {}) {
  const Quantity& primary = most_specific(inputs);
  Diagnostic diag = make_diagnostic(kFp8GemmShape, std::move(message), first_span(s.rule.job, {span_for(primary)}));
  add_notes(diag, inputs, &primary);
  diag.notes.push_back(note_for(s.precision.fp8_recipe));
  diag.help = std::move(help);
  diag.fixes = std::move(fixes);
  s.out.push_back(std::move(diag));
}

bool sequence_parallel(const Derived& d) {
  return d.sequence_parallel.value.value_or(false) && splits(d.tensor_parallel);
}

// Tokens per micro-batch on one rank: the rows of every activation matrix.
void check_tokens(Shapes& s) {
  const Derived& d = s.rule.derived;
  const Quantity &seq = d.seq_length, &mbs = d.micro_batch_size, &cp = d.context_parallel, &tp = d.tensor_parallel;
  if (!seq.known() || !mbs.known() || !cp.known() || *cp <= 0 || *seq <= 0 || *mbs <= 0) return;
  if ((*seq * *mbs) % *cp != 0) return;
  int64_t tokens = *seq * *mbs / *cp;
  bool sp = sequence_parallel(d);
  int64_t split = sp ? *tp : 1;
  if (tokens % split != 0) return;  // sequence-parallel divisibility is its own rule
  int64_t local = tokens / split;
  bool full_fails = tokens % s.m.rows != 0;
  if (!full_fails && local % s.m.rows == 0) return;
  int64_t need = s.m.rows * *cp * split;
  int64_t step = need / gcd64(*mbs, need);
  if (*cp > 1) step = lcm64(step, 2 * *cp);
  int64_t suggestion = nearest_multiple(*seq, step);
  std::string count = fmt::format("seq_length {} x micro_batch_size {} / context_parallel_size {} = {}", *seq, *mbs,
                                  *cp, tokens);
  std::string message =
      full_fails ? fmt::format("FP8 ({}) GEMMs need the tokens per rank to be a multiple of {}, but {} is not",
                               s.m.recipe, s.m.rows, count)
                 : fmt::format("FP8 ({}) GEMMs need the tokens per rank to be a multiple of {}; with sequence "
                               "parallelism the layer inputs hold {} / tensor_model_parallel_size {} = {}",
                               s.m.recipe, s.m.rows, count, *tp, local);
  if (sp) {
    push(s, std::move(message), {&seq, &mbs, &cp, &tp},
         fmt::format("use seq_length {} (a multiple of {})", suggestion, step), {set_value_fix(seq, suggestion)});
  } else {
    push(s, std::move(message), {&seq, &mbs, &cp},
         fmt::format("use seq_length {} (a multiple of {})", suggestion, step), {set_value_fix(seq, suggestion)});
  }
}

// Whether the model is known not to use multi-latent attention (whose
// projections have other shapes).
bool standard_attention(const Job& job) {
  Setting mla = read_flag(job, "model.multi_latent_attention");
  if (mla.value) return !*mla.value;
  if (!config_node(job, "model.multi_latent_attention") && job.recipe && job.recipe->dims) {
    return !job.recipe->dims->multi_latent_attention;
  }
  return false;
}

void check_weights(Shapes& s) {
  const Job& job = s.rule.job;
  const Derived& d = s.rule.derived;
  const Quantity &h = d.hidden_size, &tp = d.tensor_parallel;
  if (!tp.known() || *tp <= 0) return;
  int64_t both = lcm64(s.m.rows, s.m.columns);
  if (h.known() && *h % both != 0) {
    push(s, fmt::format("FP8 ({}) GEMMs need hidden_size to be a multiple of {}, but it is {}", s.m.recipe, both, *h),
         {&h}, "FP8 cannot run this model's layers; train it in BF16");
    return;
  }
  Quantity ffn = config_int(job, "model.ffn_hidden_size");
  if (ffn.known() && d.num_moe_experts.known() && *d.num_moe_experts == 0 && *ffn % *tp == 0 &&
      (*ffn / *tp) % s.m.columns != 0) {
    push(s,
         fmt::format("FP8 ({}) GEMMs need the MLP width per tensor-parallel rank to be a multiple of {}: "
                     "ffn_hidden_size {} / tensor_model_parallel_size {} = {}",
                     s.m.recipe, s.m.columns, *ffn, *tp, *ffn / *tp),
         {&ffn, &tp},
         fmt::format("choose a tensor_model_parallel_size that leaves a multiple of {} MLP columns per rank",
                     s.m.columns));
  }
  if (!standard_attention(job) || !h.known()) return;
  const Quantity &heads = d.num_attention_heads, &groups_q = d.num_query_groups;
  Quantity kv = config_int(job, "model.kv_channels");
  if (!heads.known() || *heads <= 0 || *heads % *tp != 0) return;
  // The recipe's model may set its own head dim (the recipe layer writes no kv_channels).
  bool recipe_model = !config_node(job, "model.kv_channels") && job.recipe && job.recipe->dims;
  if (recipe_model && job.recipe->dims->kv_channels > 0) kv.value = job.recipe->dims->kv_channels;
  if (!kv.known() && !recipe_model && !job.config_complete) return;  // kv_channels may be set elsewhere
  int64_t head_dim = kv.known() ? *kv : *h / *heads;
  int64_t groups = groups_q.known() && *groups_q > 0 ? *groups_q : *heads;
  int64_t proj = *heads * head_dim / *tp;
  if (proj % s.m.columns != 0) {
    push(s,
         fmt::format("FP8 ({}) GEMMs need the attention output width per rank to be a multiple of {}: "
                     "num_attention_heads {} x head dim {} / tensor_model_parallel_size {} = {}",
                     s.m.recipe, s.m.columns, *heads, head_dim, *tp, proj),
         {&heads, &tp},
         fmt::format("choose a tensor_model_parallel_size that leaves whole {}-column blocks per rank", s.m.columns));
    return;
  }
  if ((*heads + 2 * groups) * head_dim % *tp != 0) return;
  int64_t qkv = (*heads + 2 * groups) * head_dim / *tp;
  if (qkv % s.m.rows != 0) {
    push(s,
         fmt::format("FP8 ({}) GEMMs need the QKV projection rows per rank to be a multiple of {}: (heads {} + 2 x "
                     "query groups {}) x head dim {} / tensor_model_parallel_size {} = {}",
                     s.m.recipe, s.m.rows, *heads, groups, head_dim, *tp, qkv),
         {&heads, &groups_q, &tp}, "choose another tensor_model_parallel_size");
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Precision& p = effective_precision(context);
  std::optional<Multiples> m = multiples_for(p);
  if (!m) return;
  Shapes s{context, p, *m, out};
  check_tokens(s);
  check_weights(s);
}

}  // namespace

extern const RuleInfo kFp8GemmShape = {
    .code = "MB822",
    .name = "fp8-gemm-shape",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "FP8 GEMM shapes: tokens per rank and per-rank weight dimensions must be multiples of 8/16 (MXFP8: 32)",
    .doc = R"md(TransformerEngine runs a linear layer in FP8 only when both matrices are aligned: it asserts
"FP8 execution requires 2D input matrices with height divisible by 8 and width divisible by 16"
(`assert_dim_for_fp8_exec`), and MXFP8's 32-element scaling blocks need multiples of 32 in both
dimensions. The assert fires in the first forward pass, after the job waited in the queue.

From the config mblint checks, for delayed and current (tensorwise) scaling and for MXFP8:

* the rows of every activation: the tokens of one micro-batch on one rank,
  `seq_length x micro_batch_size / context_parallel_size`, and with sequence parallelism the
  layer inputs, which are split again by `tensor_model_parallel_size`;
* `hidden_size`, the MLP width per tensor-parallel rank (`ffn_hidden_size / TP`, dense models),
  and for standard attention the attention output width (`heads x head dim / TP`) and the QKV
  projection rows (`(heads + 2 x query groups) x head dim / TP`).

Expert GEMMs (token counts vary per expert and are padded by the router), multi-latent attention
and the blockwise and custom recipes are not checked. Under Megatron Bridge the FP8 settings come
from `mixed_precision`.)md",
    .bad = {"override.yaml",
     "mixed_precision: bf16_with_fp8_current_scaling_mixed\ndataset:\n  seq_length: 8196\nmodel:\n  seq_length: 8196\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "mixed_precision: bf16_with_fp8_current_scaling_mixed\ndataset:\n  seq_length: 8192\nmodel:\n  seq_length: 8192\n"},
    .check = check,
    .checks = "MC J9",
};

}  // namespace mblint
