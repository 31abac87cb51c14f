// Numbers read from text as Python's int() and float() read them: Megatron-LM's
// argparse (`type=int`), Hydra's int()/float() casts and a launcher's integer
// flags all go through them, so one grammar decides what is a number.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace mblint {

// str.strip(): the text without surrounding whitespace (what int() and
// float() ignore, and OmegaConf around a resolver's arguments).
std::string_view python_strip(std::string_view text);

// int(text): surrounding whitespace, an optional sign, decimal digits with
// single underscores between them. nullopt where Python raises ValueError;
// `overflow` (when given) is set for a number beyond 64 bits, which Python
// would accept.
std::optional<int64_t> python_int(std::string_view text, bool* overflow = nullptr);

// float(text): surrounding whitespace, an optional sign, then inf, infinity or
// nan (any case), or a decimal number with optional fraction and exponent,
// underscores only between digits. nullopt where Python raises ValueError.
std::optional<double> python_float(std::string_view text);

}  // namespace mblint
