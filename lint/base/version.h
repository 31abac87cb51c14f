// Release versions of Megatron Bridge and Megatron-Core. Rules whose
// behaviour moved between releases compare against these.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace mblint {

struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;

  friend auto operator<=>(const Version&, const Version&) = default;
};

// "0.6", "0.6.0", "v0.6.0", "core_v0.16.0", "0.16.0rc1" (pre-release tags
// compare as their release). nullopt when it is not a version.
std::optional<Version> parse_version(std::string_view text);
std::string to_string(const Version& version);

// The newest releases mblint knows; the defaults when the user says nothing.
inline constexpr Version kNewestBridge{0, 6, 0};
inline constexpr Version kNewestMegatronCore{0, 19, 0};

}  // namespace mblint
