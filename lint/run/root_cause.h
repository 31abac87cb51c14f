// One mistake, one error. When one value breaks several checks (TP 3 breaks
// the attention heads, the query groups and the world size), the findings
// at that value are folded into the first error: the others become its
// notes, and its fixes are the re-checked ones that fix all of them.
#pragma once

#include <vector>

#include "lint/base/diagnostic.h"

namespace mblint {

// `diagnostics` sorted by location (sort_and_deduplicate).
void fold_root_causes(std::vector<Diagnostic>& diagnostics);

}  // namespace mblint
