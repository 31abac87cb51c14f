#include "lint/engine/baseline.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mblint {

namespace {

using json = nlohmann::ordered_json;

constexpr int kBaselineVersion = 1;

}  // namespace

std::string relative_path(const std::string& path, const std::filesystem::path& base_dir) {
  std::filesystem::path p(path);
  if (p.is_absolute() && !base_dir.empty()) {
    std::filesystem::path relative = p.lexically_normal().lexically_relative(base_dir.lexically_normal());
    if (!relative.empty() && *relative.begin() != "..") p = relative;
  }
  return p.lexically_normal().generic_string();
}

std::string fnv1a_hex(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", hash);
}

BaselineKey baseline_key(const SourceSet& sources, const Diagnostic& d, const std::filesystem::path& base_dir) {
  BaselineKey key;
  if (d.where.valid() && d.where.file < static_cast<FileId>(sources.files.size())) {
    const SourceFile& file = sources.files[d.where.file];
    key.file = file.synthetic ? file.path : relative_path(file.path, base_dir);
  }
  key.rule = d.rule;
  key.subject = d.subject;
  if (key.subject.empty()) key.message_hash = fnv1a_hex(d.message);
  return key;
}

std::vector<BaselineEntry> make_baseline(const SourceSet& sources, const std::vector<Diagnostic>& diagnostics,
                                         const std::filesystem::path& base_dir) {
  std::map<BaselineKey, BaselineEntry> by_key;
  for (const Diagnostic& d : diagnostics) {
    BaselineKey key = baseline_key(sources, d, base_dir);
    BaselineEntry& entry = by_key[key];
    entry.key = key;
    ++entry.count;
    if (key.subject.empty()) entry.message = d.message;
  }
  std::vector<BaselineEntry> entries;
  for (auto& [key, entry] : by_key) entries.push_back(std::move(entry));
  return entries;
}

std::string baseline_to_json(const std::vector<BaselineEntry>& entries) {
  json findings = json::array();
  for (const BaselineEntry& e : entries) {
    json finding = {{"file", e.key.file}, {"rule", e.key.rule}};
    if (!e.key.subject.empty()) {
      finding["subject"] = e.key.subject;
    } else {
      finding["message_hash"] = e.key.message_hash;
      finding["message"] = e.message;
    }
    finding["count"] = e.count;
    findings.push_back(std::move(finding));
  }
  json document = {{"version", kBaselineVersion}, {"tool", "mblint"}, {"findings", std::move(findings)}};
  return document.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<std::vector<BaselineEntry>> parse_baseline(std::string_view text, std::string& error) {
  json document = json::parse(text, nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    error = "not JSON";
    return std::nullopt;
  }
  if (!document.contains("version") || document["version"] != kBaselineVersion) {
    error = fmt::format("not an mblint baseline of version {}", kBaselineVersion);
    return std::nullopt;
  }
  if (!document.contains("findings") || !document["findings"].is_array()) {
    error = "no \"findings\" list";
    return std::nullopt;
  }
  std::vector<BaselineEntry> entries;
  for (const json& f : document["findings"]) {
    if (!f.is_object() || !f.contains("rule") || !f["rule"].is_string() || !f.contains("count") ||
        !f["count"].is_number_unsigned()) {
      error = fmt::format("finding {} needs a \"rule\" and a \"count\"", entries.size() + 1);
      return std::nullopt;
    }
    BaselineEntry entry;
    entry.key.rule = f["rule"].get<std::string>();
    entry.key.file = f.value("file", std::string());
    entry.key.subject = f.value("subject", std::string());
    entry.key.message_hash = entry.key.subject.empty() ? f.value("message_hash", std::string()) : std::string();
    entry.count = f["count"].get<size_t>();
    entries.push_back(std::move(entry));
  }
  return entries;
}

size_t apply_baseline(const SourceSet& sources, const std::vector<BaselineEntry>& baseline,
                      const std::filesystem::path& base_dir, std::vector<Diagnostic>& diagnostics) {
  std::map<BaselineKey, size_t> remaining;
  for (const BaselineEntry& e : baseline) remaining[e.key] += e.count;
  std::vector<Diagnostic> kept;
  size_t hidden = 0;
  for (Diagnostic& d : diagnostics) {
    auto it = remaining.find(baseline_key(sources, d, base_dir));
    if (it != remaining.end() && it->second > 0) {
      --it->second;
      ++hidden;
      continue;
    }
    kept.push_back(std::move(d));
  }
  diagnostics = std::move(kept);
  return hidden;
}

}  // namespace mblint
