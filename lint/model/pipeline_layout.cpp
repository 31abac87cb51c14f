#include "lint/model/pipeline_layout.h"

#include <cctype>

#include <fmt/format.h>

namespace mblint {

namespace {

// Expanding "t*1000000000" is never worth it: past this the layout is left
// unknown.
constexpr size_t kMaxExpanded = size_t{1} << 20;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The digits starting at `at`; nullopt when the count is absurd.
std::optional<int64_t> read_count(std::string_view s, size_t at, size_t& end) {
  end = at;
  int64_t count = 0;
  while (end < s.size() && is_digit(s[end])) {
    count = count * 10 + (s[end] - '0');
    if (count > static_cast<int64_t>(kMaxExpanded)) return std::nullopt;
    ++end;
  }
  return count;
}

bool append_repeated(std::string& out, std::string_view unit, int64_t count) {
  if (out.size() + unit.size() * static_cast<size_t>(count) > kMaxExpanded) return false;
  for (int64_t i = 0; i < count; ++i) out.append(unit);
  return true;
}

// re.sub(r'\(([^)]+)\)\*(\d+)', group1 * n, s): `[^)]+` runs to the first
// ')', so a match at '(' is decided by what follows that ')'.
std::optional<std::string> unroll_groups(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '(') {
      size_t close = s.find(')', i + 1);
      if (close != std::string_view::npos && close > i + 1 && close + 2 < s.size() && s[close + 1] == '*' &&
          is_digit(s[close + 2])) {
        size_t end = 0;
        auto count = read_count(s, close + 2, end);
        if (!count || !append_repeated(out, s.substr(i + 1, close - i - 1), *count)) return std::nullopt;
        i = end;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

// re.sub(r'(.)\*(\d+)', group1 * n, s).
std::optional<std::string> unroll_single(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '\n' && i + 2 < s.size() && s[i + 1] == '*' && is_digit(s[i + 2])) {
      size_t end = 0;
      auto count = read_count(s, i + 2, end);
      if (!count || !append_repeated(out, s.substr(i, 1), *count)) return std::nullopt;
      i = end;
      continue;
    }
    out += s[i++];
  }
  return out;
}

std::string describe_char(char c) {
  if (std::isprint(static_cast<unsigned char>(c))) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
}

}  // namespace

std::optional<ExpandedLayout> expand_layout(std::string_view text) {
  std::string plain;
  for (char c : text) {
    if (c != ',') plain += c;
  }
  auto grouped = unroll_groups(plain);
  if (!grouped) return std::nullopt;
  auto unrolled = unroll_single(*grouped);
  if (!unrolled) return std::nullopt;
  ExpandedLayout layout;
  std::string stage;
  for (char c : *unrolled + '|') {
    if (c == '|') {
      layout.stages.push_back(std::move(stage));
      stage.clear();
      continue;
    }
    bool valid = c == kEmbedding || c == kLoss || c == kDecoder || c == kMtp;
    if (!valid && layout.error.empty()) {
      layout.error = fmt::format("invalid layer character {} in stage {} (after expansion: {}); the layer characters "
                                 "are E (embedding), t (transformer layer), m (MTP layer), L (loss) and | between "
                                 "stages",
                                 describe_char(c), layout.stages.size() + 1,
                                 unrolled->size() > 80 ? unrolled->substr(0, 77) + "..." : *unrolled);
    }
    stage += c;
  }
  return layout;
}

// The list form: [["embedding", "decoder"], ["decoder", "loss"]], names as
// Megatron-Core's LayerType (stripped, lower-cased).
std::optional<ExpandedLayout> expand_layout_list(const ConfigValue& list) {
  ExpandedLayout layout;
  for (const ConfigValue& row : list.items) {
    if (!row.is_list()) {
      if (row.is_unknown()) return std::nullopt;
      layout.error = "every stage of a list layout must itself be a list";
      return layout;
    }
    std::string stage;
    for (const ConfigValue& item : row.items) {
      auto name = as_string(&item);
      if (!name) {
        if (item.is_unknown()) return std::nullopt;
        layout.error = fmt::format("{} is not a layer type", to_display(item));
        return layout;
      }
      std::string lower;
      for (char c : *name) {
        if (!std::isspace(static_cast<unsigned char>(c))) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      char code = lower == "embedding" ? kEmbedding
                  : lower == "loss"    ? kLoss
                  : lower == "decoder" ? kDecoder
                  : lower == "mtp"     ? kMtp
                  : lower == "encoder" ? kEncoder
                                       : '\0';
      if (!code) {
        layout.error = fmt::format("'{}' is not a layer type (embedding, decoder, mtp, loss)", *name);
        return layout;
      }
      stage += code;
    }
    layout.stages.push_back(std::move(stage));
  }
  return layout;
}

}  // namespace mblint
