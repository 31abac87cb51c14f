// What the ConfigContainer section variants that lint/model/schema_data.inc does
// not describe declare (model-specific providers, dataset providers, PEFT
// variants; rules/support/config_fields_data.inc, from tools/gen_config_fields.py).
#pragma once

#include <string_view>

namespace mblint {

// The annotations every such variant gives `section`.`name`, joined with
// " | " (one union); "" when no such variant declares the field.
std::string_view variant_annotations(std::string_view section, std::string_view name);

}  // namespace mblint
