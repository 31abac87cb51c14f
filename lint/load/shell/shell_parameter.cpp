// Parameter expansion: looking `$X`, `${A[i]}`, `$1`, `$@` up in the walk's
// variables, and the operators `${X:-d}`, `:=`, `:+`, `:?`, `#`, `%` and
// `${#X}`. A variable the launcher's environment would have to provide is
// unknown, but its `:-` default is taken: that is the reading the script
// documents.
#include <algorithm>
#include <charconv>
#include <memory>

#include "lint/load/shell/shell_expand_internal.h"

namespace mblint::shell {

namespace {

enum class Kind : uint8_t { Environment, Unset, Opaque, Value };

struct Resolved {
  Resolved() = default;
  Resolved(Resolved&&) = default;  // `owned` values stay where they are
  Resolved& operator=(Resolved&&) = default;
  Resolved(const Resolved&) = delete;  // a copy would point into the original

  Kind kind = Kind::Environment;
  // The values, pointing into the variable (or into `owned` for values made
  // here: a length, a stripped pattern), so a lookup copies nothing.
  std::vector<const MappedString*> items;
  std::vector<std::unique_ptr<MappedString>> owned;
  std::vector<Span> item_definitions;
  bool multi = false;   // [@] [*] $@ $*: the items are separate words
  bool joined = false;  // [*] $*: joined with a space inside quotes
  Span definition;
};

Resolved only(Kind kind) {
  Resolved r;
  r.kind = kind;
  return r;
}

Span item_definition(const MappedString& item, Span fallback) {
  if (item.text.empty()) return fallback;
  Span span = span_of(item, 0, item.text.size());
  return span.valid() ? span : fallback;
}

void add_item(Resolved& r, const MappedString& item, Span definition) {
  r.item_definitions.push_back(definition);
  r.items.push_back(&item);
}

void add_owned(Resolved& r, MappedString item, Span definition) {
  r.owned.push_back(std::make_unique<MappedString>(std::move(item)));
  add_item(r, *r.owned.back(), definition);
}

MappedString plain(std::string text) {
  MappedString out;
  out.text = std::move(text);
  return out;
}

Resolved resolve_positional(const Walker& w, const Part& part) {
  Resolved r;
  const std::string& name = part.text;
  if (name == "@" || name == "*") {
    r.multi = true;
    r.joined = name == "*";
    if (!w.positional) return r;  // the script's own arguments
    r.kind = Kind::Value;
    for (const MappedString& arg : *w.positional) add_item(r, arg, item_definition(arg, {}));
    return r;
  }
  if (name == "#") {
    if (!w.positional) return only(Kind::Opaque);
    r.kind = Kind::Value;
    add_owned(r, plain(std::to_string(w.positional->size())), {});
    return r;
  }
  size_t index = 0;
  auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), index);
  if (error != std::errc() || end != name.data() + name.size() || index == 0) {
    return only(Kind::Opaque);  // $0, and out-of-range numbers
  }
  if (!w.positional) return r;
  if (index > w.positional->size()) return only(Kind::Unset);
  r.kind = Kind::Value;
  const MappedString& arg = (*w.positional)[index - 1];
  r.definition = item_definition(arg, {});
  add_item(r, arg, r.definition);
  return r;
}

std::optional<int64_t> subscript_index(Walker& w, const Part& part) {
  if (inner_words(part).empty()) return std::nullopt;
  return evaluate_arith_word(w, inner_words(part)[0]);
}

void select_elements(Walker& w, const Part& part, const VarState& state, Resolved& r) {
  const ShellVariable& var = state.var;
  const MappedString* elements = var.is_array ? var.elements.data() : &var.value;
  size_t count = var.is_array ? var.elements.size() : 1;
  auto definition_of = [&](const MappedString& item) {
    return var.is_array ? item_definition(item, var.definition) : var.definition;
  };
  if (part.subscript == Subscript::All || part.subscript == Subscript::Joined) {
    r.multi = true;
    r.joined = part.subscript == Subscript::Joined;
    r.items.reserve(count);
    r.item_definitions.reserve(count);
    for (size_t i = 0; i < count; ++i) add_item(r, elements[i], definition_of(elements[i]));
    return;
  }
  int64_t index = 0;
  if (part.subscript == Subscript::Index) {
    std::optional<int64_t> value = subscript_index(w, part);
    if (!value) {
      r.kind = Kind::Opaque;
      return;
    }
    index = *value < 0 ? *value + static_cast<int64_t>(count) : *value;
  }
  if (index < 0 || index >= static_cast<int64_t>(count)) {
    r.kind = Kind::Unset;
    return;
  }
  add_item(r, elements[static_cast<size_t>(index)],
           definition_of(elements[static_cast<size_t>(index)]));
}

Resolved resolve(Walker& w, const Part& part) {
  const std::string& name = part.text;
  if (name.empty()) return only(Kind::Opaque);
  if (name == "?" || name == "$" || name == "!" || name == "-") return only(Kind::Opaque);
  if (!is_identifier(name)) return resolve_positional(w, part);
  Resolved r;
  r.multi = part.subscript == Subscript::All || part.subscript == Subscript::Joined;
  r.joined = part.subscript == Subscript::Joined;
  const VarState* state = find_var(w, name);
  if (!state || state->presence == Presence::Environment) return r;
  r.definition = state->var.definition;
  if (state->presence == Presence::Unset) {
    r.kind = Kind::Unset;
    return r;
  }
  if (state->opaque) {
    r.kind = Kind::Opaque;
    return r;
  }
  r.kind = Kind::Value;
  select_elements(w, part, *state, r);
  return r;
}

enum class Emptiness : uint8_t { Empty, NonEmpty, Unknown };

// True when some character is outside every unknown expansion, so the
// value is certainly not empty.
bool has_known_char(const MappedString& s) {
  std::vector<std::pair<size_t, size_t>> unknown;
  for (const Expansion& e : s.expansions) {
    if (!e.known) unknown.emplace_back(e.begin, e.end);
  }
  std::sort(unknown.begin(), unknown.end());
  size_t covered = 0;  // characters [0, covered) are inside unknown expansions
  for (auto [begin, end] : unknown) {
    if (begin > covered) return true;
    covered = std::max(covered, end);
  }
  return covered < s.text.size();
}

Emptiness emptiness(const Resolved& r) {
  if (r.items.empty()) return Emptiness::Empty;
  bool any_unknown = false;
  for (const MappedString* item : r.items) {
    if (has_known_char(*item)) return Emptiness::NonEmpty;
    if (!item->text.empty()) any_unknown = true;
  }
  return any_unknown ? Emptiness::Unknown : Emptiness::Empty;
}

// Whether field splitting makes more than one word of `value` (blanks
// outside an unknown expansion, between other characters).
bool splits_into_words(const MappedString& value) {
  const std::string& text = value.text;
  auto blank = [&](size_t i) { return text[i] == ' ' || text[i] == '\t' || text[i] == '\n'; };
  size_t first = 0;
  while (first < text.size() && blank(first)) ++first;
  for (size_t i = first; i < text.size(); ++i) {
    if (!blank(i) || has_unknown(value, i, i + 1)) continue;
    size_t next = i;
    while (next < text.size() && blank(next)) ++next;
    return next < text.size();
  }
  return false;
}

// Every character of `value` maps to a place in `file`.
bool maps_to(const MappedString& value, FileId file) {
  return !value.text.empty() && value.file == file && value.begins.size() == value.text.size() &&
         value.ends.size() == value.text.size();
}

Piece in_place_piece(const MappedString& value, Span expression, bool quoted) {
  Piece piece;
  piece.text = value;
  piece.in_place = expression;
  set_flags(piece, quoted);
  return piece;
}

void value_pieces(const Resolved& r, Span expression, const std::string& name, bool quoted,
                  Pieces& out) {
  if (r.multi && quoted && r.joined) {
    MappedString joined;
    for (size_t i = 0; i < r.items.size(); ++i) {
      if (i > 0) append_joined(joined, uniform_text(" ", expression));
      append_joined(joined,
                    value_piece(*r.items[i], expression, name, r.item_definitions[i], true).text);
    }
    Piece piece;
    piece.text = std::move(joined);
    piece.text.file = expression.file;
    set_flags(piece, true);
    out.push_back(std::move(piece));
    return;
  }
  size_t first = out.size();
  for (size_t i = 0; i < r.items.size(); ++i) {
    if (i > 0) out.push_back(field_break());
    const MappedString& item = *r.items[i];
    // Array elements are words as written, and so are the words an unquoted
    // `$CMD` splits into: they keep their own characters' locations.
    bool keeps_words = (r.multi || (!quoted && splits_into_words(item))) && maps_to(item, expression.file);
    out.push_back(keeps_words ? in_place_piece(item, expression, quoted)
                              : value_piece(item, expression, name, r.item_definitions[i], quoted));
  }
  if (out.size() == first && !r.multi) empty_result(quoted, out);
}

// The word after `:-`, `:+`, ...: mapped to the whole expression, defined at
// the operand itself.
void operand_pieces(Walker& w, const Part& part, Span expression, bool quoted, Pieces& out) {
  if (operand_words(part).empty()) return empty_result(quoted, out);
  const Word& operand = operand_words(part)[0];
  Span definition = source_span(w.source, operand.begin, operand.end);
  size_t first = out.size();
  expand_parts_into(w, operand.parts, !quoted, 0, out);
  for (size_t i = first; i < out.size(); ++i) {
    Piece& piece = out[i];
    MappedString text = rebased(piece.text, expression);
    if (!text.text.empty() && !piece.field_break) {
      text.expansions.push_back(
          Expansion{0, text.text.size(), expression, definition, part.text, true});
    }
    piece.text = std::move(text);
  }
  if (out.size() == first) empty_result(quoted, out);
}

// ${X:=default} also assigns the default.
void assign_default(Walker& w, const Part& part) {
  if (!is_identifier(part.text) || part.subscript != Subscript::None) return;
  MappedString value;
  Span definition;
  if (!operand_words(part).empty()) {
    const Word& operand = operand_words(part)[0];
    value = expand_string(w, operand.parts);
    definition = source_span(w.source, operand.begin, operand.end);
  }
  set_var(w, part.text, known_scalar(std::move(value), definition, is_exported(w, part.text)));
}

std::optional<std::string> literal_pattern(Walker& w, const Part& part) {
  if (operand_words(part).empty()) return std::string();
  Pattern pattern = expand_pattern(w, operand_words(part)[0]);
  if (!fully_known(pattern.text)) return std::nullopt;
  for (size_t i = 0; i < pattern.text.text.size(); ++i) {
    char c = pattern.text.text[i];
    if (pattern.active[i] && (c == '*' || c == '?' || c == '[')) return std::nullopt;
  }
  return pattern.text.text;
}

std::optional<Resolved> strip_pattern(Walker& w, const Part& part, const Resolved& r) {
  std::optional<std::string> pattern = literal_pattern(w, part);
  if (!pattern) return std::nullopt;
  Resolved stripped = only(Kind::Value);
  stripped.multi = r.multi;
  stripped.joined = r.joined;
  stripped.definition = r.definition;
  for (size_t i = 0; i < r.items.size(); ++i) {
    const MappedString& item = *r.items[i];
    if (!fully_known(item)) return std::nullopt;
    const std::string& text = item.text;
    size_t begin = 0, end = text.size();
    if (part.op == ParamOp::RemovePrefix && text.starts_with(*pattern)) begin = pattern->size();
    if (part.op == ParamOp::RemoveSuffix && text.ends_with(*pattern)) end -= pattern->size();
    add_owned(stripped, substring(item, begin, end), r.item_definitions[i]);
  }
  return stripped;
}

size_t utf8_length(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// ${#X}; false when the length cannot be known.
bool length_pieces(const Part& part, const Resolved& r, Span expression, Pieces& out) {
  size_t length = 0;
  if (r.kind == Kind::Value && r.multi) {
    length = r.items.size();
  } else if (r.kind == Kind::Value) {
    if (!fully_known(*r.items[0])) return false;
    length = utf8_length(r.items[0]->text);
  }
  Resolved number = only(Kind::Value);
  add_owned(number, plain(std::to_string(length)), r.definition);
  value_pieces(number, expression, part.text, true, out);
  return true;
}

}  // namespace

void expand_parameter(Walker& w, const Part& part, Pieces& out) {
  bool quoted = part.quoted;
  Span expression = source_span(w.source, part.begin, part.end);
  if (part.op == ParamOp::Unsupported) return out.push_back(unknown_piece(w, part, part.text, {}));
  Resolved r = resolve(w, part);
  auto unknown = [&] { out.push_back(unknown_piece(w, part, part.text, r.definition)); };
  bool absent = r.kind == Kind::Environment || r.kind == Kind::Unset;
  Emptiness empty = r.kind == Kind::Value ? emptiness(r) : Emptiness::Empty;
  switch (part.op) {
    case ParamOp::None:
      if (r.kind == Kind::Unset) return r.multi ? void() : empty_result(quoted, out);
      if (r.kind != Kind::Value) return unknown();
      return value_pieces(r, expression, part.text, quoted, out);
    case ParamOp::Length:
      if (r.kind == Kind::Environment || r.kind == Kind::Opaque) return unknown();
      if (!length_pieces(part, r, expression, out)) unknown();
      return;
    case ParamOp::Default:
    case ParamOp::Assign: {
      // An unset variable, or one the environment would have to provide,
      // takes the script's default: that is the reading the script documents.
      if (r.kind == Kind::Opaque || (part.colon && empty == Emptiness::Unknown)) return unknown();
      bool use_default = absent || (part.colon && empty == Emptiness::Empty);
      if (!use_default) return value_pieces(r, expression, part.text, quoted, out);
      operand_pieces(w, part, expression, quoted, out);
      if (part.op == ParamOp::Assign) assign_default(w, part);
      return;
    }
    case ParamOp::Alternative:
      if (r.kind == Kind::Environment || r.kind == Kind::Opaque) return unknown();
      if (r.kind == Kind::Unset || (part.colon && empty == Emptiness::Empty))
        return empty_result(quoted, out);
      if (part.colon && empty == Emptiness::Unknown) return unknown();
      return operand_pieces(w, part, expression, quoted, out);
    case ParamOp::Error:
      if (r.kind != Kind::Value || (part.colon && empty != Emptiness::NonEmpty)) return unknown();
      return value_pieces(r, expression, part.text, quoted, out);
    case ParamOp::RemovePrefix:
    case ParamOp::RemoveSuffix: {
      if (r.kind == Kind::Unset) return empty_result(quoted, out);
      if (r.kind != Kind::Value) return unknown();
      std::optional<Resolved> stripped = strip_pattern(w, part, r);
      if (!stripped) return unknown();
      return value_pieces(*stripped, expression, part.text, quoted, out);
    }
    case ParamOp::Unsupported:
      break;
  }
  unknown();
}

}  // namespace mblint::shell
