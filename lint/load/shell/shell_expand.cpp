// Word expansion: parameters, arithmetic, quote removal and field
// splitting, never globbing or tilde expansion. Every produced character
// maps to the source bytes it came from; an expansion's characters map to
// the whole `$X` expression and carry an Expansion record saying where X was
// defined (or that it is unknown, with the expression as its text).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>

#include "lint/load/shell/shell_arith.h"
#include "lint/load/shell/shell_expand_internal.h"

namespace mblint::shell {

namespace {

constexpr size_t kMaxRecords = 256;

bool is_ifs(char c) { return c == ' ' || c == '\t' || c == '\n'; }

bool same_origin(const Expansion& a, const Expansion& b) {
  return a.name == b.name && a.expression == b.expression && a.definition == b.definition &&
         a.known == b.known;
}

// Keeps the record list short: known records go first, then unknown ones are
// folded into one covering the rest (has_unknown stays true where it was).
void compact(MappedString& s) {
  auto& records = s.expansions;
  if (records.size() <= kMaxRecords) return;
  std::erase_if(records, [](const Expansion& e) { return e.known; });
  if (records.size() <= kMaxRecords) return;
  Expansion& last = records[kMaxRecords - 1];
  for (size_t i = kMaxRecords; i < records.size(); ++i) {
    last.begin = std::min(last.begin, records[i].begin);
    last.end = std::max(last.end, records[i].end);
  }
  records.resize(kMaxRecords);
}

std::string_view written(const Walker& w, uint32_t begin, uint32_t end) {
  return w.source.text.substr(begin, end - begin);
}

std::optional<int64_t> evaluate_arith(Walker& w, const MappedString& text, Span where,
                                      std::vector<Expansion>* used,
                                      std::vector<std::string>* assigned) {
  ArithScope scope;
  scope.get = [&](std::string_view name) -> std::optional<std::string> {
    const VarState* state = find_var(w, name);
    if (!state || state->presence == Presence::Environment || state->opaque) return std::nullopt;
    if (state->presence == Presence::Unset) return std::string();
    const ShellVariable& var = state->var;
    const MappedString* value = &var.value;
    if (var.is_array) {
      if (var.elements.empty()) return std::string();
      value = &var.elements[0];
    }
    if (!fully_known(*value)) return std::nullopt;
    if (used) used->push_back(Expansion{0, 0, where, var.definition, std::string(name), true});
    return value->text;
  };
  scope.set = [&](std::string_view name, std::optional<int64_t> value) {
    if (assigned) assigned->emplace_back(name);
    bool exported = is_exported(w, name);
    if (!value) return set_var(w, name, opaque_var(where, exported));
    set_var(w, name, known_scalar(uniform_text(std::to_string(*value), where), where, exported));
  };
  return evaluate_arithmetic(text.text, scope);
}

Piece arithmetic_piece(Walker& w, const Part& part) {
  Span expression = source_span(w.source, part.begin, part.end);
  MappedString inner =
      inner_words(part).empty() ? MappedString{} : expand_word_string(w, inner_words(part)[0]);
  std::vector<Expansion> used = inner.expansions;
  std::optional<int64_t> value;
  if (fully_known(inner)) value = evaluate_arith(w, inner, expression, &used, nullptr);
  if (!value) {
    Piece piece = unknown_piece(w, part, "", {});
    for (Expansion e : used) {
      e.begin = 0;
      e.end = piece.text.text.size();
      piece.text.expansions.push_back(std::move(e));
    }
    compact(piece.text);
    return piece;
  }
  Piece piece;
  piece.quoted = true;
  piece.text = uniform_text(std::to_string(*value), expression);
  for (Expansion e : used) {
    e.begin = 0;
    e.end = piece.text.text.size();
    if (!e.expression.valid()) e.expression = expression;
    piece.text.expansions.push_back(std::move(e));
  }
  compact(piece.text);
  return piece;
}

void check_length(Walker& w, MappedString& text) {
  if (text.text.size() <= w.limits.max_word_length) return;
  Span where = span_of(text, 0, std::min<size_t>(text.text.size(), 1));
  limit_problem(w, "word-length", where,
                fmt::format("a word longer than {} characters; mblint reads only its beginning",
                            w.limits.max_word_length),
                "shorten the value", false);
  text = substring(text, 0, w.limits.max_word_length);
}

// Quote removal and field splitting: appends the words of `pieces` to `fields`.
// Where an unquoted value may be split: at blanks, but never inside the text
// of an unknown expansion (`$(scontrol show hostnames)` kept in a variable
// is one unknown word, not three).
std::vector<bool> split_points(const MappedString& value) {
  std::vector<bool> points(value.text.size());
  for (size_t i = 0; i < points.size(); ++i) points[i] = is_ifs(value.text[i]);
  for (const Expansion& e : value.expansions) {
    if (e.known) continue;
    for (size_t i = e.begin; i < e.end && i < points.size(); ++i) points[i] = false;
  }
  return points;
}

bool has_unknown_record(const MappedString& value) {
  return std::any_of(value.expansions.begin(), value.expansions.end(),
                     [](const Expansion& e) { return !e.known; });
}

// Characters of `text` that keep the mapping of the words they came from.
struct InPlaceRange {
  size_t begin = 0;
  size_t end = 0;
  Span expression;
};

// A word joined from an in-place piece and other text points at the
// expression for those characters: the piece's own source is elsewhere.
void locate_joined_at_expressions(MappedString& word, const std::vector<InPlaceRange>& ranges) {
  for (const InPlaceRange& r : ranges) {
    if (r.expression.file != word.file) continue;
    for (size_t k = r.begin; k < r.end && k < word.begins.size(); ++k) {
      word.begins[k] = r.expression.begin;
      word.ends[k] = r.expression.end;
    }
  }
}

void split_fields(Walker& w, std::vector<Piece>& pieces, std::vector<MappedString>& fields) {
  MappedString current;
  bool started = false;
  size_t contributions = 0;  // non-empty stretches joined into `current`
  std::vector<InPlaceRange> in_place;
  auto end_field = [&] {
    if (started) {
      if (contributions > 1 && !in_place.empty()) locate_joined_at_expressions(current, in_place);
      compact(current);
      check_length(w, current);
      fields.push_back(std::move(current));
    }
    current = MappedString{};
    started = false;
    contributions = 0;
    in_place.clear();
  };
  auto add = [&](MappedString&& text, const Piece& piece) {
    size_t at = current.text.size();
    size_t size = text.text.size();
    append_joined(current, std::move(text));
    if (size == 0) return;
    ++contributions;
    if (piece.in_place.valid()) in_place.push_back(InPlaceRange{at, at + size, piece.in_place});
  };
  for (Piece& piece : pieces) {
    if (piece.field_break) {
      end_field();
      continue;
    }
    const std::string& text = piece.text.text;
    if (!piece.split) {
      started = started || piece.quoted || !text.empty();
      add(std::move(piece.text), piece);
      continue;
    }
    std::vector<bool> points;
    if (has_unknown_record(piece.text)) points = split_points(piece.text);
    auto splits = [&](size_t k) { return points.empty() ? is_ifs(text[k]) : points[k]; };
    size_t i = 0;
    while (i < text.size()) {
      if (splits(i)) {
        end_field();
        while (i < text.size() && splits(i)) ++i;
        continue;
      }
      size_t j = i;
      while (j < text.size() && !splits(j)) ++j;
      if (i == 0 && j == text.size())
        add(std::move(piece.text), piece);
      else
        add(substring(piece.text, i, j), piece);
      started = true;
      i = j;
    }
  }
  end_field();
}

size_t total_size(const std::vector<MappedString>& fields, size_t from) {
  size_t total = 0;
  for (size_t i = from; i < fields.size(); ++i) total += fields[i].text.size();
  return total;
}

// Words joined into one string ("$@" in an assignment): the separating space
// maps like the character before it.
void append_piece(MappedString& out, Piece&& piece) {
  if (!piece.field_break) return append_joined(out, std::move(piece.text));
  if (out.text.empty()) return;
  append_char(out, ' ', out.begins.back(), out.ends.back());
}

}  // namespace

// ---------------------------------------------------------------- shared with shell_parameter.cpp

// The same, taking over `piece`'s storage when `out` is still empty.
void append_joined(MappedString& out, MappedString&& piece) {
  if (out.text.empty() && out.expansions.empty()) {
    out = std::move(piece);
    return;
  }
  append_joined(out, static_cast<const MappedString&>(piece));
}

void append_joined(MappedString& out, const MappedString& piece) {
  size_t shift = out.text.size();
  size_t old_count = out.expansions.size();
  append_mapped(out, piece);
  for (size_t i = old_count; i < out.expansions.size();) {
    Expansion& added = out.expansions[i];
    auto previous = std::find_if(
        out.expansions.begin(), out.expansions.begin() + old_count, [&](const Expansion& e) {
          return e.end == shift && added.begin == shift && same_origin(e, added);
        });
    if (previous == out.expansions.begin() + old_count) {
      ++i;
      continue;
    }
    previous->end = added.end;
    out.expansions.erase(out.expansions.begin() + i);
  }
}

// `value`'s characters, all mapped to `expression`; its records kept (with
// room for the one the caller adds).
MappedString rebased(const MappedString& value, Span expression) {
  MappedString out;
  out.file = expression.file;
  out.text = value.text;
  out.begins.assign(value.text.size(), expression.begin);
  out.ends.assign(value.text.size(), expression.end);
  out.expansions.reserve(value.expansions.size() + 1);
  out.expansions.insert(out.expansions.end(), value.expansions.begin(), value.expansions.end());
  return out;
}

MappedString uniform_text(std::string_view text, Span span) {
  MappedString out;
  out.file = span.file;
  out.text.assign(text);
  out.begins.assign(text.size(), span.begin);
  out.ends.assign(text.size(), span.end);
  return out;
}

void set_flags(Piece& piece, bool quoted) {
  piece.quoted = quoted;
  piece.split = !quoted;
  piece.glob = !quoted;
}

// An expansion whose value cannot be known: the expression as written.
Piece unknown_piece(const Walker& w, const Part& part, const std::string& name, Span definition) {
  Span expression = source_span(w.source, part.begin, part.end);
  std::string_view text = written(w, part.begin, part.end);
  Piece piece;
  piece.quoted = true;  // one word, never split: its real value is unknown
  piece.text = uniform_text(text, expression);
  piece.text.expansions.push_back(Expansion{0, text.size(), expression, definition, name, false});
  return piece;
}

Piece value_piece(const MappedString& value, Span expression, const std::string& name,
                  Span definition, bool quoted) {
  Piece piece;
  piece.text = rebased(value, expression);
  if (!value.text.empty()) {
    piece.text.expansions.push_back(
        Expansion{0, value.text.size(), expression, definition, name, true});
  }
  set_flags(piece, quoted);
  return piece;
}

// `$(...)` is never run; only `$(dirname "$0")` and its variants and the pure
// commands of shell_substitution.cpp have a value mblint knows (kept as one
// word: paths keep spaces).
Piece substitution_piece(Walker& w, const Part& part) {
  std::optional<std::string> directory = script_directory_idiom(w, written(w, part.begin, part.end));
  if (!directory) directory = pure_substitution(w, part.begin, part.end);
  if (!directory) return unknown_piece(w, part, "", {});
  Piece piece;
  piece.text = uniform_text(*directory, source_span(w.source, part.begin, part.end));
  piece.quoted = true;
  return piece;
}

// Between "${A[@]}" elements. Where words are joined instead (an assignment)
// it stands for a space mapped like the element before it.
Piece field_break() {
  Piece piece;
  piece.field_break = true;
  return piece;
}

void empty_result(bool quoted, Pieces& out) {
  if (quoted) out.emplace_back().quoted = true;  // "$EMPTY" is still a word
}

void expand_parts_into(Walker& w, std::span<const Part> parts, bool operand, size_t skip,
                       Pieces& pieces) {
  for (const Part& part : parts) {
    if (w.stopped) break;
    switch (part.kind) {
      case PartKind::Literal: {
        Piece piece;
        piece.text = literal_mapped(w.source, part, skip);
        skip = 0;
        if (piece.text.text.empty() && !part.quoted) break;
        piece.quoted = part.quoted;
        piece.glob = !part.quoted;
        piece.split = operand && !part.quoted;  // ${X:-a b} unquoted splits like a value
        pieces.push_back(std::move(piece));
        break;
      }
      case PartKind::Parameter:
        expand_parameter(w, part, pieces);
        break;
      case PartKind::CommandSubstitution:
        pieces.push_back(substitution_piece(w, part));
        break;
      case PartKind::Arithmetic:
        pieces.push_back(arithmetic_piece(w, part));
        break;
    }
  }
}

// ---------------------------------------------------------------- words

bool fully_known(const MappedString& text) { return !has_unknown(text); }

std::vector<Piece> expand_parts(Walker& w, const std::vector<Part>& parts, bool operand,
                                size_t skip) {
  std::vector<Piece> pieces;
  pieces.reserve(parts.size() + 4);
  expand_parts_into(w, parts, operand, skip, pieces);
  return pieces;
}

void expand_fields_into(Walker& w, const Word& word, std::vector<MappedString>& fields) {
  size_t first = fields.size();
  if (word.is_array) {
    // `NAME=(...)` where no assignment is possible: kept as written.
    std::string_view text = written(w, word.begin, word.end);
    fields.push_back(uniform_text(text, source_span(w.source, word.begin, word.end)));
  } else if (word.parts.size() == 1 && word.parts[0].kind == PartKind::Literal) {
    fields.push_back(literal_mapped(w.source, word.parts[0]));  // most words: nothing to expand
    check_length(w, fields.back());
  } else {
    std::vector<Piece> pieces = expand_parts(w, word.parts);
    split_fields(w, pieces, fields);
  }
  charge(w, total_size(fields, first), source_span(w.source, word.begin, word.end));
}

std::vector<MappedString> expand_fields(Walker& w, const Word& word) {
  std::vector<MappedString> fields;
  expand_fields_into(w, word, fields);
  return fields;
}

MappedString expand_string(Walker& w, const std::vector<Part>& parts, size_t skip) {
  MappedString out;
  for (Piece& piece : expand_parts(w, parts, false, skip)) append_piece(out, std::move(piece));
  compact(out);
  check_length(w, out);
  if (!out.text.empty()) charge(w, out.text.size(), span_of(out, 0, 1));
  return out;
}

MappedString expand_self_append(Walker& w, const std::vector<Part>& parts, MappedString old, Span definition) {
  const Part& self = parts[1];
  Span expression = source_span(w.source, self.begin, self.end);
  // As value_piece maps `$X`: every character at the expression, a record
  // saying where X got its value; but in place, without a copy.
  old.file = expression.file;
  std::fill(old.begins.begin(), old.begins.end(), expression.begin);
  std::fill(old.ends.begin(), old.ends.end(), expression.end);
  // The old value's own records of X (the earlier steps of `X="$X ..."`)
  // are superseded by this one, which covers them: keeping them all would
  // make every word later split from X copy one record per step.
  std::erase_if(old.expansions, [&](const Expansion& e) { return e.known && e.begin == 0 && e.name == self.text; });
  if (!old.text.empty()) old.expansions.push_back(Expansion{0, old.text.size(), expression, definition, self.text, true});
  MappedString out = std::move(old);
  Pieces pieces;
  expand_parts_into(w, std::span<const Part>(parts).subspan(2), false, 0, pieces);
  for (Piece& piece : pieces) append_piece(out, std::move(piece));
  compact(out);
  check_length(w, out);
  if (!out.text.empty()) charge(w, out.text.size(), span_of(out, 0, 1));
  return out;
}

MappedString expand_word_string(Walker& w, const Word& word) {
  return expand_string(w, word.parts);
}

Pattern expand_pattern(Walker& w, const Word& word) {
  Pattern pattern;
  for (Piece& piece : expand_parts(w, word.parts)) {
    size_t before = pattern.text.text.size();
    bool glob = piece.glob && !piece.field_break;
    append_piece(pattern.text, std::move(piece));
    pattern.active.insert(pattern.active.end(), pattern.text.text.size() - before, glob);
  }
  return pattern;
}

std::optional<int64_t> evaluate_arith_word(Walker& w, const Word& word,
                                           std::vector<std::string>* assigned) {
  MappedString text = expand_word_string(w, word);
  if (!fully_known(text)) return std::nullopt;
  return evaluate_arith(w, text, source_span(w.source, word.begin, word.end), nullptr, assigned);
}

std::optional<int64_t> evaluate_arith_text(Walker& w, const MappedString& text,
                                           std::vector<Expansion>* used) {
  if (!fully_known(text)) return std::nullopt;
  return evaluate_arith(w, text, span_of(text, 0, text.text.size()), used, nullptr);
}

}  // namespace mblint::shell
