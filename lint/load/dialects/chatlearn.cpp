#include "lint/load/dialects/chatlearn.h"

#include <array>
#include <string>
#include <string_view>

#include "lint/base/made_word.h"

namespace mblint {

namespace {

Span located(const ConfigValue& value, Span fallback) {
  return value.where.value.valid() ? value.where.value : fallback;
}

}  // namespace

std::vector<MappedString> chatlearn_megatron_words(const ConfigValue& root, Span command) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kValued = {{
      {"models.policy_trainer.tensor_model_parallel_size", "--tensor-model-parallel-size"},
      {"models.policy_trainer.pipeline_model_parallel_size", "--pipeline-model-parallel-size"},
      {"models.policy_trainer.context_parallel_size", "--context-parallel-size"},
      {"models.policy_trainer.expert_model_parallel_size", "--expert-model-parallel-size"},
      {"models.policy_trainer.expert_tensor_parallel_size", "--expert-tensor-parallel-size"},
      {"models.policy_trainer.virtual_pipeline_model_parallel_size", "--num-virtual-stages-per-pipeline-rank"},
      {"models.policy_trainer.seq_length", "--seq-length"},
      {"models.policy_trainer.num_layers", "--num-layers"},
      {"runtime_args.train_micro_batch_size", "--micro-batch-size"},
      {"runtime_args.train_global_batch_size", "--global-batch-size"},
  }};
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kSwitches = {{
      {"models.policy_trainer.sequence_parallel", "--sequence-parallel"},
      {"models.policy_trainer.use_distributed_optimizer", "--use-distributed-optimizer"},
      {"models.policy_trainer.bf16", "--bf16"},
      {"models.policy_trainer.fp16", "--fp16"},
  }};
  std::vector<MappedString> words;
  for (const auto& [key, flag] : kValued) {
    const ConfigValue* value = find_path(root, key);
    if (!value || value->is_null()) continue;  // Megatron-LM's default
    Span at = located(*value, command);
    words.push_back(word_at(flag, at));
    if (value->kind == ValueKind::Int) {
      words.push_back(word_at(to_display(*value), at));
    } else {
      words.push_back(unknown_word_at(value->kind == ValueKind::String ? value->text : to_display(*value), at));
    }
  }
  for (const auto& [key, flag] : kSwitches) {
    const ConfigValue* value = find_path(root, key);
    if (!value) continue;
    std::optional<bool> on = value->kind == ValueKind::Bool ? as_bool(value) : std::nullopt;
    if (on == true) {
      words.push_back(word_at(flag, located(*value, command)));
    } else if (!on) {  // may be on: an opaque word hides the default behind it
      words.push_back(unknown_word_at(to_display(*value), located(*value, command)));
      words.back().expansions.back().definition = located(*value, command);
    }
  }
  return words;
}

}  // namespace mblint
