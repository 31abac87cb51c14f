#include "lint/load/yaml/interpolation.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

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

struct Frame {
  std::vector<std::string> path;
  Span at;
};

struct Resolver {
  ConfigValue& root;
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
      if (!plain_reference(piece.text)) return unknown();  // a resolver, or a form not modelled
      Lookup target = lookup(piece.text, path, value);
      if (!target.node) {
        if (target.missing && depth == 0 && result.complete) {
          InterpolationProblem problem = problem_at(value, piece, path);
          problem.target = target.path;
          problem.found = target.found;
          result.problems.push_back(std::move(problem));
        }
        return unknown();
      }
      if (target.node->is_unknown() || depth >= kMaxInterpolationDepth) return unknown();
      for (const Frame& frame : chain) {
        if (same_path(frame.path, target.path)) {
          note_cycle(target.path, piece, value);
          return unknown();
        }
      }
      if (!charge(count_nodes(*target.node, kInterpolationWork + 1), value)) return unknown();
      ConfigValue resolved = *target.node;
      if (resolved.kind == ValueKind::String && has_interpolation(resolved.text)) {
        resolved = resolve(resolved, target.path, depth + 1);
        if (resolved.is_unknown()) return unknown();
      }
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

InterpolationResult resolve_interpolations(ConfigValue& root) {
  Resolver resolver{root, 0, {}, {}, {}};
  std::vector<Resolver::Step> steps;
  resolver.walk(root, steps);
  return resolver.result;
}

}  // namespace mblint
