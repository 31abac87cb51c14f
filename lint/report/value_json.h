// A config value as JSON, shared by `resolve` and `diff`.
#pragma once

#include <nlohmann/json.hpp>

#include "lint/base/config_value.h"

namespace mblint {

// Scalars as JSON scalars, lists and maps as arrays and objects; null for an
// unknown value and text for a non-finite number.
nlohmann::ordered_json value_json(const ConfigValue& value);

}  // namespace mblint
