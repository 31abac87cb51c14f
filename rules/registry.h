// Every rule mblint has, in the order `mblint rules` lists them.
#pragma once

#include "lint/rule.h"

namespace mblint {

RuleSet all_rules();

}  // namespace mblint
