#include "lint/model/config_fields.h"

#include <algorithm>
#include <iterator>
#include <span>
#include <string>
#include <utility>

#include "lint/model/catalog.h"
#include "lint/model/job.h"

namespace mblint {

namespace {

#include "lint/model/config_fields_data.inc"

}  // namespace

const VariantField* find_variant_field(std::string_view section, std::string_view name) {
  auto it = std::lower_bound(std::begin(kVariantFields), std::end(kVariantFields), std::make_pair(section, name),
                             [](const VariantField& f, const std::pair<std::string_view, std::string_view>& key) {
                               if (f.section != key.first) return std::string_view(f.section) < key.first;
                               return std::string_view(f.name) < key.second;
                             });
  if (it == std::end(kVariantFields) || it->section != section || it->name != name) return nullptr;
  return &*it;
}

bool variant_field_applies(const Job& job, const VariantField& field) {
  std::string_view family = field.family;
  if (family.empty()) return true;
  if (family == "dsv4") return job.recipe && job.recipe->dims && job.recipe->dims->dsv4 && *job.recipe->dims->dsv4;
  const ConfigValue* target = find_path(job.config, std::string(field.section) + "._target_");
  return target && target->kind == ValueKind::String && target->text.find(family) != std::string::npos;
}

std::string_view variant_annotations(std::string_view section, std::string_view name) {
  const VariantField* field = find_variant_field(section, name);
  return field ? field->type : "";
}

bool recipe_listed(RecipeList list, std::string_view recipe) {
  std::span<const std::string_view> names;
  switch (list) {
    case RecipeList::MaybeMegatronFsdp: names = kRecipesMaybeMegatronFsdp; break;
    case RecipeList::MaybeEpOverlap: names = kRecipesMaybeEpOverlap; break;
    case RecipeList::MaybeOtherCkptFormat: names = kRecipesMaybeOtherCkptFormat; break;
    case RecipeList::MaybeNoSaveDir: names = kRecipesMaybeNoSaveDir; break;
    case RecipeList::WithCommonBase: names = kRecipesWithCommonBase; break;
  }
  return std::binary_search(names.begin(), names.end(), recipe);
}

}  // namespace mblint
