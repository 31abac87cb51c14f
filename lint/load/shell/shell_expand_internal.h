// Private to word expansion (shell_expand.cpp: words, fields, strings,
// patterns and arithmetic; shell_parameter.cpp: `$X` and `${X...}`).
#pragma once

#include <span>

#include <string>
#include <string_view>
#include <vector>

#include "lint/load/shell/shell_walk.h"

namespace mblint::shell {

using Pieces = std::vector<Piece>;

// append_mapped, joining an expansion record that continues one already at
// the end; the second form takes over `piece`'s storage when `out` is empty.
void append_joined(MappedString& out, const MappedString& piece);
void append_joined(MappedString& out, MappedString&& piece);

// `value`'s characters, all mapped to `expression`; its records kept.
MappedString rebased(const MappedString& value, Span expression);

void set_flags(Piece& piece, bool quoted);
// An expansion whose value cannot be known: the expression as written.
Piece unknown_piece(const Walker& w, const Part& part, const std::string& name, Span definition);
// A known value of `name`, mapped to `expression`, defined at `definition`.
Piece value_piece(const MappedString& value, Span expression, const std::string& name,
                  Span definition, bool quoted);
// Between "${A[@]}" elements.
Piece field_break();
// Nothing, or in quotes an empty word ("$EMPTY").
void empty_result(bool quoted, Pieces& out);

// Appends the pieces of `parts`; `operand`: unquoted literal characters split
// like a value (the word of `${X:-a b}`); `skip`: see expand_parts.
void expand_parts_into(Walker& w, std::span<const Part> parts, bool operand, size_t skip,
                       Pieces& out);

// shell_parameter.cpp: `$X`, `${A[@]}`, `${X:-d}`, ...
void expand_parameter(Walker& w, const Part& part, Pieces& out);

}  // namespace mblint::shell
