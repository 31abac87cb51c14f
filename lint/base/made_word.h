// Words mblint makes while reading a launch: a Megatron-LM flag standing for
// a key of another program's config, a value read from a file. Every
// character maps to where what the word stands for is written, so findings
// about it point there.
#pragma once

#include <string_view>

#include "lint/base/mapped_string.h"

namespace mblint {

// `text`, located at `at`.
MappedString word_at(std::string_view text, Span at);

// A value decided at run time: the word `what`, located at `at` and marked
// unknown (consumers treat it as a value they cannot know).
MappedString unknown_word_at(std::string_view what, Span at);

}  // namespace mblint
