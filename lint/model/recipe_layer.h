// A recipe's settings as the lowest layer of the config.
#pragma once

#include "lint/base/config_value.h"
#include "lint/model/catalog.h"

namespace mblint {

// Every value is located at `selected_at` (the `--recipe NAME` that chose
// the recipe) and its origin names the recipe, so a diagnostic about a
// recipe default points where the user can act on it.
ConfigValue recipe_layer(const Recipe& recipe, const Provenance& selected_at);

}  // namespace mblint
