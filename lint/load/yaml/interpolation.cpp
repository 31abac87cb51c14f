#include "lint/base/python_number.h"
#include "lint/load/yaml/interpolation.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lint/base/yaml_scalar.h"

namespace mblint {

namespace {

struct Piece {
  bool reference = false;
  std::string text;  // literal text, or the expression inside ${...}
  size_t begin = 0;  // of the piece in the value's text (the "${" of a reference)
  size_t end = 0;
};

// Split "a_${x.y}_b" into literal and reference pieces. Nested `${` inside a
// reference (resolver arguments) are kept in the expression.
std::vector<Piece> split_pieces(const std::string& text) {
  std::vector<Piece> pieces;
  size_t i = 0;
  std::string literal;
  size_t literal_begin = 0;
  auto flush = [&](size_t end) {
    if (!literal.empty()) pieces.push_back(Piece{false, std::move(literal), literal_begin, end});
    literal.clear();
  };
  while (i < text.size()) {
    if (text.compare(i, 2, "${") == 0) {
      size_t depth = 0;
      size_t j = i;
      for (; j < text.size(); ++j) {
        if (text.compare(j, 2, "${") == 0) {
          ++depth;
          ++j;
        } else if (text[j] == '}') {
          if (--depth == 0) break;
        }
      }
      if (j >= text.size()) {  // unterminated: OmegaConf fails to parse it; keep literal
        if (literal.empty()) literal_begin = i;
        literal += text.substr(i);
        break;
      }
      flush(i);
      pieces.push_back(Piece{true, text.substr(i + 2, j - i - 2), i, j + 1});
      i = j + 1;
      literal_begin = i;
      continue;
    }
    if (literal.empty()) literal_begin = i;
    literal += text[i++];
  }
  flush(text.size());
  return pieces;
}

// Nodes in `value`, counting at most up to `limit`.
size_t count_nodes(const ConfigValue& value, size_t limit) {
  size_t count = 1;
  for (const ConfigValue& item : value.items) {
    if (count >= limit) return count;
    count += count_nodes(item, limit - count);
  }
  for (const MapEntry& entry : value.entries) {
    if (count >= limit) return count;
    count += count_nodes(entry.value, limit - count);
  }
  return count;
}

bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// A plain dotted key, optionally relative: `a.b`, `.x`, `..y.z`. Anything
// else (brackets, quotes, spaces, empty segments, resolvers) is a form whose
// meaning mblint does not model: its value stays unknown and is never
// reported.
bool plain_reference(const std::string& expression) {
  size_t i = 0;
  while (i < expression.size() && expression[i] == '.') ++i;
  if (i == expression.size()) return false;
  bool segment_start = true;
  for (; i < expression.size(); ++i) {
    char c = expression[i];
    if (c == '.') {
      if (segment_start) return false;
      segment_start = true;
    } else if (key_char(c)) {
      segment_start = false;
    } else {
      return false;
    }
  }
  return !segment_start;
}

// What a reference names.
struct Lookup {
  const ConfigValue* node = nullptr;
  std::vector<std::string> path;  // absolute
  size_t found = 0;               // leading segments of `path` that exist
  bool missing = false;           // a map exists and lacks the next segment
};

// A resolver's arguments: split at the commas outside `${...}` and quotes.
std::vector<std::string_view> split_arguments(std::string_view text) {
  std::vector<std::string_view> args;
  size_t depth = 0;
  size_t start = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      ++depth;
      ++i;
    } else if (c == '}' && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      args.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (!python_strip(text).empty()) args.push_back(text.substr(start));
  return args;
}

// Python's integer arithmetic for the resolvers MLPerf's trainers register;
// nullopt on overflow, a zero divisor or another name.
std::optional<int64_t> integer_resolver(std::string_view name, int64_t x, int64_t y) {
  int64_t out = 0;
  auto floor_div = [](int64_t a, int64_t b) -> std::optional<int64_t> {
    if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  };
  if (name == "add") return __builtin_add_overflow(x, y, &out) ? std::nullopt : std::optional(out);
  if (name == "multiply") return __builtin_mul_overflow(x, y, &out) ? std::nullopt : std::optional(out);
  if (name == "floor_div") return floor_div(x, y);
  if (name == "ceil_div") {
    if (__builtin_add_overflow(x, y, &out) || __builtin_sub_overflow(out, 1, &out)) return std::nullopt;
    return floor_div(out, y);
  }
  return std::nullopt;
}

struct Frame {
  std::vector<std::string> path;
  Span at;
};

struct Resolver {
  ConfigValue& root;
  const InterpolationEnvironment* environment = nullptr;
  mutable size_t work = 0;  // map entries scanned and nodes copied, against kInterpolationWork
  mutable InterpolationResult result;
  // Values being resolved, outermost first (for cycles).
  mutable std::vector<Frame> chain;
  // A cycle found below the value the walk is at: reported once, for that value.
  mutable std::optional<InterpolationProblem> cycle;

  // Charge `amount`; false (and the first place recorded) once the budget is spent.
  bool charge(size_t amount, const ConfigValue& at) const {
    work += amount;
    if (work <= kInterpolationWork) return true;
    if (result.complete) {
      result.complete = false;
      result.stopped_at = primary_span(at.where);
    }
    return false;
  }

  // Walks `path` from the root, charged with the entries of every map it searches.
  Lookup walk_path(std::vector<std::string> path, const ConfigValue& at) const {
    Lookup lookup;
    const ConfigValue* node = &root;
    for (const std::string& segment : path) {
      if (!charge(node->entries.size() + 1, at)) return lookup;
      const ConfigValue* child = find_child(*node, segment);
      if (!child) {
        lookup.missing = node->is_map();  // a list index out of range or a scalar's child: not modelled
        lookup.path = std::move(path);
        return lookup;
      }
      node = child;
      ++lookup.found;
    }
    lookup.node = node;
    lookup.path = std::move(path);
    return lookup;
  }

  // The node a reference names, relative to the path of the node holding it.
  Lookup lookup(const std::string& expression, const std::vector<std::string>& holder, const ConfigValue& at) const {
    size_t dots = 0;
    while (dots < expression.size() && expression[dots] == '.') ++dots;
    std::vector<std::string> path;
    if (dots > 0) {
      // `.x` is a sibling of the holder: the holder's parent is the base.
      if (dots > holder.size()) return Lookup{};
      path.assign(holder.begin(), holder.end() - static_cast<long>(dots));
    }
    for (std::string& segment : split_path(std::string_view(expression).substr(dots))) {
      path.push_back(std::move(segment));
    }
    Lookup found = walk_path(path, at);
    // Builder-backed models keep model.transformer.* flat under model.*.
    if (found.missing && found.found == 1 && path.size() >= 3 && path[0] == "model" && path[1] == "transformer") {
      std::vector<std::string> flat = path;
      flat.erase(flat.begin() + 1);
      Lookup hoisted = walk_path(flat, at);
      hoisted.path = path;
      if (hoisted.found > 0) ++hoisted.found;  // `transformer` counts as present
      return hoisted;
    }
    return found;
  }

  static bool same_path(const std::vector<std::string>& a, const std::vector<std::string>& b) { return a == b; }

  void note_cycle(const std::vector<std::string>& target, const Piece& piece, const ConfigValue& value) const {
    if (cycle) return;
    InterpolationProblem problem;
    problem.kind = InterpolationProblem::Kind::Cycle;
    problem.expression = piece.text;
    for (const Frame& frame : chain) {
      problem.chain.push_back(frame.path);
      problem.chain_at.push_back(frame.at);
    }
    problem.chain.push_back(target);
    (void)value;
    cycle = std::move(problem);
  }

  InterpolationProblem problem_at(const ConfigValue& value, const Piece& piece,
                                  const std::vector<std::string>& holder) const {
    InterpolationProblem problem;
    problem.expression = piece.text;
    problem.offset = piece.begin;
    problem.length = piece.end - piece.begin;
    problem.text = value.text;
    problem.where = value.where;
    problem.holder = holder;
    return problem;
  }

  // The value a plain reference names, resolved; nullopt: unknown.
  std::optional<ConfigValue> referenced(const Piece& piece, const std::string& expression,
                                        const std::vector<std::string>& path, const ConfigValue& value,
                                        int depth) const {
    Lookup target = lookup(expression, path, value);
    if (!target.node) {
      if (target.missing && depth == 0 && result.complete) {
        InterpolationProblem problem = problem_at(value, piece, path);
        problem.target = target.path;
        problem.found = target.found;
        result.problems.push_back(std::move(problem));
      }
      return std::nullopt;
    }
    if (target.node->is_unknown() || depth >= kMaxInterpolationDepth) return std::nullopt;
    for (const Frame& frame : chain) {
      if (same_path(frame.path, target.path)) {
        note_cycle(target.path, piece, value);
        return std::nullopt;
      }
    }
    if (!charge(count_nodes(*target.node, kInterpolationWork + 1), value)) return std::nullopt;
    ConfigValue resolved = *target.node;
    if (resolved.kind == ValueKind::String && has_interpolation(resolved.text)) {
      resolved = resolve(resolved, target.path, depth + 1);
      if (resolved.is_unknown()) return std::nullopt;
    }
    return resolved;
  }

  // `${a.b}` or a resolver call with an environment; nullopt: unknown.
  std::optional<ConfigValue> expression(const Piece& piece, const std::string& text,
                                        const std::vector<std::string>& path, const ConfigValue& value,
                                        int depth) const {
    if (plain_reference(text)) return referenced(piece, text, path, value, depth);
    if (!environment || depth >= kMaxInterpolationDepth) return std::nullopt;
    return call(piece, text, path, value, depth + 1);
  }

  // One argument of a resolver call, as OmegaConf's grammar reads it.
  std::optional<ConfigValue> argument(const Piece& piece, std::string_view text, const std::vector<std::string>& path,
                                      const ConfigValue& value, int depth) const {
    text = python_strip(text);
    bool quoted = text.size() >= 2 && (text.front() == '\'' || text.front() == '"') && text.back() == text.front();
    if (quoted) {
      std::string inner(text.substr(1, text.size() - 2));
      if (has_interpolation(inner)) return std::nullopt;
      return make_string(std::move(inner), value.where);
    }
    if (!has_interpolation(std::string(text))) {
      ConfigValue typed = type_plain_scalar(text, YamlFlavor::OmegaConf);
      typed.where = value.where;
      return typed;
    }
    std::vector<Piece> pieces = split_pieces(std::string(text));
    if (pieces.size() == 1 && pieces[0].reference) return expression(piece, pieces[0].text, path, value, depth);
    std::string joined;
    for (const Piece& part : pieces) {
      if (!part.reference) {
        joined += part.text;
        continue;
      }
      std::optional<ConfigValue> inner = expression(piece, part.text, path, value, depth);
      if (!inner || inner->is_map() || inner->is_list()) return std::nullopt;
      joined += inner->kind == ValueKind::String ? inner->text : to_display(*inner);
    }
    return make_string(std::move(joined), value.where);
  }

  std::optional<ConfigValue> call(const Piece& piece, const std::string& text, const std::vector<std::string>& path,
                                  const ConfigValue& value, int depth) const {
    size_t colon = text.find(':');
    if (colon == std::string::npos) return std::nullopt;
    std::string_view name = python_strip(std::string_view(text).substr(0, colon));
    std::vector<std::optional<ConfigValue>> args;
    for (std::string_view raw : split_arguments(std::string_view(text).substr(colon + 1))) {
      args.push_back(argument(piece, raw, path, value, depth));
    }
    if (name == "oc.env") return environment_variable(args);
    if (name == "oc.decode") {
      if (args.size() != 1 || !args[0]) return std::nullopt;
      if (args[0]->kind != ValueKind::String) return args[0];
      ConfigValue typed = type_plain_scalar(python_strip(args[0]->text), YamlFlavor::OmegaConf);
      typed.where = args[0]->where;
      return typed;
    }
    if (args.size() != 2 || !args[0] || !args[1] || args[0]->kind != ValueKind::Int ||
        args[1]->kind != ValueKind::Int) {
      return std::nullopt;
    }
    std::optional<int64_t> number = integer_resolver(name, args[0]->integer, args[1]->integer);
    if (!number) return std::nullopt;
    ConfigValue out = make_int(*number, value.where);
    for (const std::optional<ConfigValue>& arg : args) {
      if (arg->where.value.valid() && arg->where.value != value.where.value) out.where.via.push_back(arg->where.value);
      out.where.via.insert(out.where.via.end(), arg->where.via.begin(), arg->where.via.end());
    }
    return out;
  }

  std::optional<ConfigValue> environment_variable(const std::vector<std::optional<ConfigValue>>& args) const {
    if (args.empty() || args.size() > 2 || !args[0] || args[0]->kind != ValueKind::String) return std::nullopt;
    EnvironmentValue found = environment->lookup(args[0]->text);
    if (found.state == EnvironmentValue::State::Set) {
      Provenance where;
      where.layer = Layer::Launcher;
      where.value = found.where;
      where.statement = found.where;
      return make_string(found.value, where);
    }
    if (found.state == EnvironmentValue::State::Unknown || args.size() < 2 || !args[1]) return std::nullopt;
    const ConfigValue& fallback = *args[1];
    if (fallback.is_null() || fallback.kind == ValueKind::String) return fallback;
    if (fallback.is_map() || fallback.is_list() || fallback.is_unknown()) return std::nullopt;
    return make_string(to_display(fallback), fallback.where);  // OmegaConf: str(default)
  }

  ConfigValue resolve(const ConfigValue& value, const std::vector<std::string>& path, int depth) const {
    std::vector<Piece> pieces = split_pieces(value.text);
    bool whole = pieces.size() == 1 && pieces[0].reference;
    std::string joined;
    std::vector<Span> via = value.where.via;
    chain.push_back(Frame{path, primary_span(value.where)});
    struct Pop {
      std::vector<Frame>& chain;
      ~Pop() { chain.pop_back(); }
    } pop{chain};
    auto unknown = [&] { return make_unknown(value.text, value.where); };
    for (const Piece& piece : pieces) {
      if (!piece.reference) {
        joined += piece.text;
        continue;
      }
      std::optional<ConfigValue> found = expression(piece, piece.text, path, value, depth);
      if (!found) return unknown();  // a resolver, or a form not modelled
      ConfigValue& resolved = *found;
      if (resolved.where.value.valid()) via.push_back(resolved.where.value);
      via.insert(via.end(), resolved.where.via.begin(), resolved.where.via.end());
      if (whole) {
        // The number was written at the target: point there, and remember
        // the interpolation that pulled it in.
        resolved.where.interpolated_at = primary_span(value.where);
        resolved.earlier = value.earlier;
        return resolved;
      }
      if (resolved.is_map() || resolved.is_list()) return unknown();
      joined += resolved.kind == ValueKind::String ? resolved.text : to_display(resolved);
    }
    ConfigValue out = make_string(joined, value.where);
    out.where.via = via;
    out.earlier = value.earlier;
    return out;
  }

  // The value the walk is at, resolved; a cycle found below it is its problem.
  ConfigValue resolve_top(const ConfigValue& value, const std::vector<std::string>& path) const {
    cycle.reset();
    ConfigValue resolved = resolve(value, path, 0);
    if (cycle && result.complete) {
      // Locate it at the first reference of the value that starts the cycle.
      for (const Piece& piece : split_pieces(value.text)) {
        if (!piece.reference) continue;
        InterpolationProblem problem = problem_at(value, piece, path);
        problem.kind = InterpolationProblem::Kind::Cycle;
        problem.chain = std::move(cycle->chain);
        problem.chain_at = std::move(cycle->chain_at);
        result.problems.push_back(std::move(problem));
        break;
      }
    }
    cycle.reset();
    return resolved;
  }

  // Where the walk is: a key of a map or an index of a list. The path is
  // spelled out only for a value that holds a reference (most hold none).
  struct Step {
    const std::string* key = nullptr;
    size_t index = 0;
  };

  static std::vector<std::string> spelled(const std::vector<Step>& steps) {
    std::vector<std::string> path;
    path.reserve(steps.size());
    for (const Step& step : steps) path.push_back(step.key ? *step.key : std::to_string(step.index));
    return path;
  }

  void walk(ConfigValue& node, std::vector<Step>& steps) {
    if (node.kind == ValueKind::String && has_interpolation(node.text)) {
      node = resolve_top(node, spelled(steps));
      return;
    }
    if (node.is_map()) {
      for (MapEntry& entry : node.entries) {
        steps.push_back(Step{&entry.key, 0});
        walk(entry.value, steps);
        steps.pop_back();
      }
    } else if (node.is_list()) {
      for (size_t i = 0; i < node.items.size(); ++i) {
        steps.push_back(Step{nullptr, i});
        walk(node.items[i], steps);
        steps.pop_back();
      }
    }
  }
};

}  // namespace

bool has_interpolation(const std::string& text) { return text.find("${") != std::string::npos; }

InterpolationResult resolve_interpolations(ConfigValue& root, const InterpolationEnvironment* environment) {
  Resolver resolver{root, environment, 0, {}, {}, {}};
  std::vector<Resolver::Step> steps;
  resolver.walk(root, steps);
  return resolver.result;
}

}  // namespace mblint
