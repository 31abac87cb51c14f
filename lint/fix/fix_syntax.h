// Rules state a fix as "replace this value with that one". The file the value
// was written in decides how that must be spelled: YAML keeps the user's
// quotes and needs a space after `key:`; a shell word cannot take spaces or
// `$`; an argparse flag cannot take `null` (the flag is removed instead); a
// list is `[a,b]` in a Hydra override and `a b` after a Megatron-LM flag.
// This pass rewrites each edit in its file's syntax, and turns a fix whose
// edit cannot be written safely (or lands in "<command-line>") into advice:
// the fix keeps its description and loses its edits.
#pragma once

#include <optional>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"

namespace mblint {

// The edit as it must be written in `sources`, or nullopt when it cannot be
// written without changing more than the value (or breaking the file).
std::optional<TextEdit> fit_edit(const TextEdit& edit, const SourceSet& sources);

// fit_edit over every fix of every diagnostic.
void fit_fix_edits(std::vector<Diagnostic>& diagnostics, const SourceSet& sources);

}  // namespace mblint
