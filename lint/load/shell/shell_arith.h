// Bash arithmetic ($(( )), (( )), let, array subscripts) on 64-bit integers.
// Anything that cannot be known statically, would overflow, divides by zero
// or is malformed gives nullopt ("unknown") instead of a guess.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mblint::shell {

struct ArithScope {
  // The text of a variable (evaluated as an expression in turn); "" when it is
  // known to be unset or empty (bash reads that as 0); nullopt when unknown.
  std::function<std::optional<std::string>(std::string_view name)> get;
  // An assignment (`x = 1`, `i++`); nullopt when the new value is unknown.
  std::function<void(std::string_view name, std::optional<int64_t> value)> set;
};

std::optional<int64_t> evaluate_arithmetic(std::string_view expression, const ArithScope& scope);

}  // namespace mblint::shell
