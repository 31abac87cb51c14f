#include "lint/interpolation.h"

#include <string>
#include <vector>

namespace mblint {

namespace {

constexpr int kMaxDepth = 32;  // chains of interpolations, and cycles

struct Piece {
  bool reference = false;
  std::string text;  // literal text, or the expression inside ${...}
};

// Split "a_${x.y}_b" into literal and reference pieces. Nested `${` inside a
// reference (resolver arguments) are kept in the expression.
std::vector<Piece> split_pieces(const std::string& text) {
  std::vector<Piece> pieces;
  size_t i = 0;
  std::string literal;
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
        literal += text.substr(i);
        break;
      }
      if (!literal.empty()) pieces.push_back(Piece{false, std::move(literal)});
      literal.clear();
      pieces.push_back(Piece{true, text.substr(i + 2, j - i - 2)});
      i = j + 1;
      continue;
    }
    literal += text[i++];
  }
  if (!literal.empty()) pieces.push_back(Piece{false, std::move(literal)});
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

struct Resolver {
  ConfigValue& root;
  mutable size_t work = 0;  // map entries scanned and nodes copied, against kInterpolationWork
  mutable InterpolationResult result;

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

  // find_path, charged with the entries of every map it searches.
  const ConfigValue* find_charged(const ConfigValue& base, const std::vector<std::string>& segments,
                                  const ConfigValue& at) const {
    const ConfigValue* node = &base;
    for (const std::string& segment : segments) {
      if (!charge(node->entries.size() + 1, at)) return nullptr;
      node = find_child(*node, segment);
      if (!node) return nullptr;
    }
    return node;
  }

  // The node a reference names, relative to the path of the node holding it.
  const ConfigValue* lookup(const std::string& expression, const std::vector<std::string>& holder,
                            const ConfigValue& at) const {
    if (expression.empty()) return nullptr;
    if (expression.front() == '.') {
      size_t dots = 0;
      while (dots < expression.size() && expression[dots] == '.') ++dots;
      // `.x` is a sibling of the holder: the holder's parent is the base.
      if (dots > holder.size()) return nullptr;
      std::vector<std::string> base(holder.begin(), holder.end() - static_cast<long>(dots));
      const ConfigValue* node = find_charged(root, base, at);
      if (!node) return nullptr;
      std::string rest = expression.substr(dots);
      return rest.empty() ? node : find_charged(*node, split_path(rest), at);
    }
    return find_charged(root, split_path(expression), at);
  }

  ConfigValue resolve(const ConfigValue& value, const std::vector<std::string>& path, int depth) const {
    std::vector<Piece> pieces = split_pieces(value.text);
    bool whole = pieces.size() == 1 && pieces[0].reference;
    std::string joined;
    std::vector<Span> via = value.where.via;
    for (const Piece& piece : pieces) {
      if (!piece.reference) {
        joined += piece.text;
        continue;
      }
      bool is_resolver = piece.text.find(':') != std::string::npos || piece.text.find("${") != std::string::npos;
      const ConfigValue* target = is_resolver ? nullptr : lookup(piece.text, path, value);
      if (!target || target->is_unknown() || depth >= kMaxDepth) {
        return make_unknown(value.text, value.where);
      }
      if (!charge(count_nodes(*target, kInterpolationWork + 1), value)) return make_unknown(value.text, value.where);
      ConfigValue resolved = *target;
      if (resolved.kind == ValueKind::String && has_interpolation(resolved.text)) {
        std::vector<std::string> target_path = split_path(piece.text);
        resolved = resolve(resolved, target_path, depth + 1);
        if (resolved.is_unknown()) return make_unknown(value.text, value.where);
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
      if (resolved.is_map() || resolved.is_list()) return make_unknown(value.text, value.where);
      joined += resolved.kind == ValueKind::String ? resolved.text : to_display(resolved);
    }
    ConfigValue out = make_string(joined, value.where);
    out.where.via = via;
    out.earlier = value.earlier;
    return out;
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
      node = resolve(node, spelled(steps), 0);
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
  Resolver resolver{root, 0, {}};
  std::vector<Resolver::Step> steps;
  resolver.walk(root, steps);
  return resolver.result;
}

}  // namespace mblint
