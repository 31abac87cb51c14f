#include "lint/model/field_type.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "lint/model/schema.h"

namespace mblint {

namespace {

struct LiteralEra {
  const char* section;
  const char* name;
  const char* snapshot;  // the snapshot's choices, "a|b"
  Version last;          // the last release of the run
  const char* choices;   // "a|b"; nullptr: no Literal then
};

#include "lint/model/field_history.inc"

// A small recursive-descent reader of Python annotations. It never fails:
// what it does not understand becomes Any.
class AnnotationParser {
 public:
  explicit AnnotationParser(std::string_view text) : text_(text) {}

  FieldType parse() {
    FieldType type = parse_union();
    skip_space();
    if (pos_ != text_.size() || failed_) return FieldType{{DeclaredType{}}};
    return type;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  bool failed_ = false;  // an unterminated [...]

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  FieldType parse_union() {
    FieldType type = parse_primary();
    while (eat('|')) {
      FieldType next = parse_primary();
      type.alternatives.insert(type.alternatives.end(), next.alternatives.begin(), next.alternatives.end());
    }
    return type;
  }

  // Arguments of X[...]: a comma-separated list of unions (a trailing comma allowed).
  std::vector<FieldType> parse_arguments() {
    std::vector<FieldType> arguments;
    if (!eat('[')) return arguments;
    while (!eat(']')) {
      size_t before = pos_;
      if (pos_ >= text_.size()) {
        failed_ = true;
        return arguments;
      }
      arguments.push_back(parse_union());
      eat(',');
      if (pos_ == before) {  // no progress: give up
        failed_ = true;
        return arguments;
      }
    }
    return arguments;
  }

  std::optional<ConfigValue> parse_constant() {
    skip_space();
    if (pos_ >= text_.size()) return std::nullopt;
    char c = text_[pos_];
    if (c == '"' || c == '\'') {
      size_t end = text_.find(c, pos_ + 1);
      if (end == std::string_view::npos) return std::nullopt;
      ConfigValue value = make_string(std::string(text_.substr(pos_ + 1, end - pos_ - 1)));
      pos_ = end + 1;
      return value;
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t end = pos_ + 1;
      while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
      int64_t number = 0;
      auto [ptr, ec] = std::from_chars(text_.data() + pos_, text_.data() + end, number);
      if (ec != std::errc() || ptr != text_.data() + end) return std::nullopt;
      pos_ = end;
      return make_int(number);
    }
    return std::nullopt;
  }

  std::string parse_name() {
    skip_space();
    size_t begin = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                   text_[pos_] == '.')) {
      ++pos_;
    }
    std::string_view name = text_.substr(begin, pos_ - begin);
    size_t dot = name.rfind('.');
    return std::string(dot == std::string_view::npos ? name : name.substr(dot + 1));
  }

  FieldType parse_primary() {
    if (auto constant = parse_constant()) {  // a bare constant outside Literal: not a type
      return FieldType{{DeclaredType{}}};
    }
    std::string name = parse_name();
    if (name.empty()) {
      ++pos_;  // skip what cannot start a type
      return FieldType{{DeclaredType{}}};
    }
    if (name == "Literal") return parse_literal();
    std::vector<FieldType> arguments = parse_arguments();
    auto single = [](TypeKind kind) { return FieldType{{DeclaredType{kind, {}, {}}}}; };
    if (name == "int") return single(TypeKind::Int);
    if (name == "float") return single(TypeKind::Float);
    if (name == "bool") return single(TypeKind::Bool);
    if (name == "str" || name == "Path") return single(TypeKind::Str);
    if (name == "None" || name == "NoneType") return single(TypeKind::None);
    if (name == "dict" || name == "Dict" || name == "Mapping") return single(TypeKind::Dict);
    if (name == "Optional" && arguments.size() == 1) {
      FieldType type = arguments[0];
      type.alternatives.push_back(DeclaredType{TypeKind::None, {}, {}});
      return type;
    }
    if (name == "Union" && !arguments.empty()) {
      FieldType type;
      for (const FieldType& argument : arguments) {
        type.alternatives.insert(type.alternatives.end(), argument.alternatives.begin(), argument.alternatives.end());
      }
      return type;
    }
    if (name == "list" || name == "List" || name == "Sequence") {
      DeclaredType list{TypeKind::List, {}, {}};
      // A union element type keeps only its first alternative's reading when
      // it is not a single type: the element is then Any.
      if (arguments.size() == 1 && arguments[0].alternatives.size() == 1) {
        list.item.push_back(arguments[0].alternatives[0]);
      } else {
        list.item.push_back(DeclaredType{});
      }
      return FieldType{{list}};
    }
    return FieldType{{DeclaredType{}}};  // Any, a class, Callable, Tuple, torch.dtype, ...
  }

  FieldType parse_literal() {
    FieldType type;
    DeclaredType literal{TypeKind::Literal, {}, {}};
    if (!eat('[')) return FieldType{{DeclaredType{}}};
    while (!eat(']')) {
      if (pos_ >= text_.size()) {
        failed_ = true;
        return FieldType{{DeclaredType{}}};
      }
      if (auto constant = parse_constant()) {
        literal.choices.push_back(std::move(*constant));
      } else if (parse_name() == "None") {
        type.alternatives.push_back(DeclaredType{TypeKind::None, {}, {}});
      } else {
        return FieldType{{DeclaredType{}}};  // an Enum member or an expression
      }
      eat(',');
    }
    type.alternatives.insert(type.alternatives.begin(), std::move(literal));
    return type;
  }
};

}  // namespace

bool FieldType::takes_anything() const {
  return alternatives.empty() || std::any_of(alternatives.begin(), alternatives.end(),
                                             [](const DeclaredType& t) { return t.kind == TypeKind::Any; });
}

bool FieldType::optional() const {
  return std::any_of(alternatives.begin(), alternatives.end(),
                     [](const DeclaredType& t) { return t.kind == TypeKind::None; });
}

const DeclaredType* FieldType::find(TypeKind kind) const {
  for (const DeclaredType& t : alternatives) {
    if (t.kind == kind) return &t;
  }
  return nullptr;
}

FieldType parse_annotation(std::string_view annotation) { return AnnotationParser(annotation).parse(); }

const FieldType& parsed_annotation(std::string_view annotation, AnnotationCache& cache) {
  auto it = cache.find(annotation);
  if (it == cache.end()) it = cache.emplace(annotation, parse_annotation(annotation)).first;
  return it->second;
}

FieldType declared_type(std::string_view section, std::string_view name) {
  AnnotationCache cache;
  return declared_type(section, name, cache);
}

FieldType declared_type(std::string_view section, std::string_view name, AnnotationCache& cache) {
  FieldType type;
  auto fields = schema_fields();
  auto it = std::lower_bound(fields.begin(), fields.end(), std::make_pair(section, name),
                             [](const SchemaField& f, const std::pair<std::string_view, std::string_view>& key) {
                               if (f.section != key.first) return std::string_view(f.section) < key.first;
                               return std::string_view(f.name) < key.second;
                             });
  for (; it != fields.end() && it->section == section && it->name == name; ++it) {
    const FieldType& variant = parsed_annotation(it->type ? it->type : "", cache);
    type.alternatives.insert(type.alternatives.end(), variant.alternatives.begin(), variant.alternatives.end());
  }
  return type;  // no alternatives: takes_anything()
}

std::string joined_choices(const DeclaredType& literal) {
  std::string out;
  for (const ConfigValue& choice : literal.choices) {
    if (!out.empty()) out += '|';
    out += choice.kind == ValueKind::String ? choice.text : std::to_string(choice.integer);
  }
  return out;
}

std::optional<std::vector<std::string>> literal_choices_in(std::string_view section, std::string_view name,
                                                           std::string_view snapshot, const Version& release) {
  for (const LiteralEra& era : kLiteralEras) {  // runs in release order per field
    if (era.section != section || era.name != name || era.snapshot != snapshot) continue;
    if (release > era.last) continue;
    std::vector<std::string> choices;
    std::string_view text = era.choices ? era.choices : "";
    while (!text.empty()) {
      size_t bar = text.find('|');
      choices.emplace_back(text.substr(0, bar));
      text = bar == std::string_view::npos ? std::string_view() : text.substr(bar + 1);
    }
    return choices;
  }
  return std::nullopt;
}

}  // namespace mblint
