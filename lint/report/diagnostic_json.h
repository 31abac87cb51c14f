// One diagnostic as the JSON renderer writes it, for reports that embed
// findings in their own documents (`mblint diff`).
#pragma once

#include <nlohmann/json.hpp>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"

namespace mblint {

// {rule, code, severity, message, file, line, column, end_line, end_column,
//  subject, notes, help, fixes}
nlohmann::ordered_json diagnostic_json(const SourceSet& sources, const Diagnostic& d);

}  // namespace mblint
