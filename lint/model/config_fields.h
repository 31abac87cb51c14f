// What tools/gen_config_fields.py extracts from the Megatron Bridge sources
// (lint/model/config_fields_data.inc): the fields of the ConfigContainer
// section variants lint/model/schema_data.inc does not describe
// (model-specific providers, dataset providers, PEFT variants), and which
// catalog recipes may change a few settings every other recipe leaves alone.
#pragma once

#include <string_view>

namespace mblint {

struct VariantField {
  const char* section;
  const char* name;
  const char* family;  // "" any variant; "dsv4" a DeepSeek V4 job; else the section's _target_ must name it
  const char* type;    // the variants' annotations, " | "-joined
};

// The variant field `section`.`name`; nullptr when no variant declares it.
const VariantField* find_variant_field(std::string_view section, std::string_view name);

struct Job;

// Whether `field` can belong to the job's `section` class: any variant's
// field can; a family's only when the section's _target_ names the family
// (T5), or, for Megatron-Core dev's fields, when the job's model is DeepSeek
// V4 (which needs that Megatron-Core).
bool variant_field_applies(const Job& job, const VariantField& field);

// The annotations every such variant gives `section`.`name`, joined with
// " | " (one union); "" when no such variant declares the field.
std::string_view variant_annotations(std::string_view section, std::string_view name);

// Recipes whose sources (or a function they call) assign a setting: the
// searches do not evaluate branches, so each list over-approximates, and a
// catalog recipe not listed is known to leave the setting alone.
enum class RecipeList {
  MaybeMegatronFsdp,     // use_megatron_fsdp = True
  MaybeEpOverlap,        // overlap_moe_expert_parallel_comm = True
  MaybeOtherCkptFormat,  // ckpt_format other than torch_dist
  MaybeNoSaveDir,        // checkpoint.save = None
  WithCommonBase,        // built on _pretrain/_sft/_peft_common (checkpoint.save set)
};

bool recipe_listed(RecipeList list, std::string_view recipe);

}  // namespace mblint
