// Fixes for values no file holds: the recipe's default. Such a value cannot
// be edited where it is (mblint's catalog), so the fix writes the key where
// the user configures the job: a new `key: value` line at the indentation of
// its section in the job's override YAML, or a Hydra override appended to
// the launch command. When neither exists the fix stays advice.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/model/job.h"

namespace mblint {

// The edit that sets dotted `key` to `text` for `job`, if there is a place.
std::optional<TextEdit> setting_edit(const Job& job, const SourceSet& sources, const std::string& key,
                                     const std::string& text);

// Give each fix of diagnostics[first..] that names a key (Fix::set_key) and
// has no edit the edit above.
void place_setting_fixes(std::vector<Diagnostic>& diagnostics, size_t first, const Job& job,
                         const SourceSet& sources);

}  // namespace mblint
