// The type a ConfigContainer field declares, parsed from its Python
// annotation in the compiled schema (lint/model/schema_data.inc): int, float,
// bool, str, Literal choices, lists, dicts, unions and Optional. Anything
// else (a class, a Callable, torch.dtype) takes any value as far as mblint
// can tell.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/version.h"

namespace mblint {

enum class TypeKind { Any, None, Int, Float, Bool, Str, Literal, List, Dict };

struct DeclaredType {
  TypeKind kind = TypeKind::Any;
  std::vector<ConfigValue> choices;  // Literal: strings and ints, as written
  std::vector<DeclaredType> item;    // List: the element type (one entry)
};

// A union of alternatives (Optional[X] is X | None).
struct FieldType {
  std::vector<DeclaredType> alternatives;

  bool takes_anything() const;
  bool optional() const;
  // The alternative of `kind`, or null.
  const DeclaredType* find(TypeKind kind) const;
};

// Parse an annotation's source text ("Optional[Literal['full', 'selective']]",
// "int | None", "list[str]"). Text it cannot read parses as Any.
FieldType parse_annotation(std::string_view annotation);

// The union of what every variant lint/model/schema_data.inc describes declares
// for `section`.`name` (model has several provider classes), in the order of
// the schema's variants; no alternatives (takes anything) when it does not
// describe the field. `section` "" is the ConfigContainer itself. Variants
// the schema does not describe: lint/model/config_fields.h.
FieldType declared_type(std::string_view section, std::string_view name);

// Parsed annotations by their text: a check over a whole config parses each
// distinct annotation once (a 3,000-line dump has ~100 distinct ones).
using AnnotationCache = std::unordered_map<std::string_view, FieldType>;
const FieldType& parsed_annotation(std::string_view annotation, AnnotationCache& cache);
FieldType declared_type(std::string_view section, std::string_view name, AnnotationCache& cache);

// The Literal choices of `section`.`name` in Megatron Bridge `release` when
// they differ from the compiled snapshot (lint/model/field_history.inc): the
// choices, or an empty vector when the field was no Literal then (plain str,
// choices not declared). nullopt: the same as the snapshot. `snapshot` are
// the choices of the variant being checked, "a|b|c".
std::optional<std::vector<std::string>> literal_choices_in(std::string_view section, std::string_view name,
                                                           std::string_view snapshot, const Version& release);

// "a|b|c" of a Literal's choices.
std::string joined_choices(const DeclaredType& literal);

}  // namespace mblint
