// Upstream checks mblint does not make, each with the reason: they need the
// running program, the hardware, library versions mblint cannot see, or
// data. Printed in the rules reference so a reader knows what is not covered.
#pragma once

#include <span>
#include <string_view>

namespace mblint {

struct UncheckedRow {
  std::string_view id;      // "MC D2", "BR V26"
  std::string_view check;   // what upstream checks
  std::string_view reason;  // why mblint cannot decide it from the files
};

std::span<const UncheckedRow> unchecked_rows();

}  // namespace mblint
