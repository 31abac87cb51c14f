// Commands of a launch script that may hand the job to something mblint does
// not read: a sourced file, another script, `eval`, a command held in an
// unknown variable, a launcher or entry point it does not know. They are
// reported (as ShellCheck reports SC1090) instead of passing silently.
#pragma once

#include <vector>

#include "lint/load/shell/launch.h"
#include "lint/load/shell/shell.h"
#include "lint/model/job.h"

namespace mblint {

// The hand-offs among `script`'s commands, in order, skipping the commands
// that are themselves `launches`.
std::vector<Unresolved> find_hand_offs(const ShellScript& script, const std::vector<Launch>& launches);

}  // namespace mblint
