#include "lint/model/schema.h"

#include <algorithm>

namespace mblint {

namespace {

#include "lint/model/schema_data.inc"

bool field_less(const SchemaField& field, std::pair<std::string_view, std::string_view> key) {
  std::string_view section = field.section;
  if (section != key.first) return section < key.first;
  return std::string_view(field.name) < key.second;
}

}  // namespace

std::span<const SchemaField> schema_fields() { return kSchemaFields; }

const SchemaField* find_schema_field(std::string_view section, std::string_view name) {
  auto fields = schema_fields();
  auto it = std::lower_bound(fields.begin(), fields.end(), std::make_pair(section, name), field_less);
  if (it != fields.end() && it->section == section && it->name == name) return &*it;
  return nullptr;
}

bool is_config_section(std::string_view name) {
  if (name.empty() || name[0] == '_') return false;
  return find_schema_field("", name) != nullptr;
}

bool is_free_form_field(const SchemaField& field) {
  std::string_view type = field.type ? field.type : "";
  return type.find("dict") != std::string_view::npos || type.find("Dict") != std::string_view::npos ||
         type.find("Any") != std::string_view::npos;
}

std::optional<ConfigValue> literal_default(const SchemaField& field) {
  if (!field.default_text) return std::nullopt;
  std::string_view text = field.default_text;
  if (text == "None") return make_null();
  if (text == "True") return make_bool(true);
  if (text == "False") return make_bool(false);
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front()) {
    return make_string(std::string(text.substr(1, text.size() - 2)));
  }
  bool digits = !text.empty();
  bool dot = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '-' && i == 0) continue;
    if (c == '.' || c == 'e' || c == 'E') {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') digits = false;
  }
  if (!digits) return std::nullopt;
  std::string copy(text);
  if (dot) return make_float(std::strtod(copy.c_str(), nullptr));
  return make_int(std::strtoll(copy.c_str(), nullptr, 10));
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> similar_field_names(std::string_view section, std::string_view name,
                                             size_t limit) {
  std::vector<std::pair<size_t, std::string>> scored;
  size_t threshold = std::max<size_t>(2, name.size() / 3);
  for (const SchemaField& field : schema_fields()) {
    if (field.section != section || !field.init) continue;
    std::string_view candidate = field.name;
    if (!scored.empty() && scored.back().second == candidate) continue;  // variants repeat names
    bool prefix = candidate.size() > 3 && (candidate.find(name) == 0 || name.find(candidate) == 0);
    // The length difference bounds the distance from below (and is the
    // distance when one name starts the other): most fields end here.
    size_t gap = name.size() > candidate.size() ? name.size() - candidate.size() : candidate.size() - name.size();
    if (gap > threshold && !prefix) continue;
    size_t distance = prefix ? gap : edit_distance(name, candidate);
    if (distance <= threshold || prefix) scored.emplace_back(distance, std::string(candidate));
  }
  std::sort(scored.begin(), scored.end());
  scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
  std::vector<std::string> names;
  for (auto& [distance, candidate] : scored) {
    if (names.size() >= limit) break;
    if (std::find(names.begin(), names.end(), candidate) == names.end()) names.push_back(candidate);
  }
  return names;
}

}  // namespace mblint
