#include "lint/fix/fix_verify.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "lint/engine/check_job.h"
#include "lint/load/dialects/megatron_lm_args.h"
#include "lint/load/dialects/nemo_yaml.h"
#include "lint/resolve/project_config.h"

namespace mblint {

namespace {

ConfigValue value_of(const std::string& text, Provenance where) {
  if (text == "true" || text == "false") return make_bool(text == "true", std::move(where));
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {  // "[2, 4]": a list of values
    ConfigValue list = make_list(where);
    std::string_view items(text.data() + 1, text.size() - 2);
    while (!items.empty()) {
      size_t comma = std::min(items.find(','), items.size());
      std::string item(items.substr(0, comma));
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (!item.empty()) list.items.push_back(value_of(item, where));
      items.remove_prefix(std::min(comma + 1, items.size()));
    }
    return list;
  }
  if (text == "null") return make_null(std::move(where));
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    return make_string(text.substr(1, text.size() - 2), std::move(where));  // as to_display writes a string
  }
  int64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error == std::errc() && end == text.data() + text.size()) return make_int(number, std::move(where));
  double real = 0;
  auto [real_end, real_error] = std::from_chars(text.data(), text.data() + text.size(), real);
  if (real_error == std::errc() && real_end == text.data() + text.size()) return make_float(real, std::move(where));
  return make_string(text, std::move(where));
}

// Defaults that follow other settings (Megatron-LM's global batch is MBS x
// DP, its expert TP is TP) are dropped and worked out again after a change.
void drop_defaults(ConfigValue& node) {
  if (!node.is_map()) return;
  std::erase_if(node.entries, [](const MapEntry& e) { return e.value.where.layer == Layer::SchemaDefault; });
  for (MapEntry& entry : node.entries) drop_defaults(entry.value);
}

void set_count(LocatedInt& slot, const std::string& text) {
  int64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  slot.value = error == std::errc() && end == text.data() + text.size() ? std::optional<int64_t>(number) : std::nullopt;
}

// Values the user wrote at `written`, and those Bridge copied from there.
// (Recipe values and defaults share the span of the --recipe or launch
// text they came from; they are not written there.) True when one changed.
bool replace_written_at(ConfigValue& node, const Provenance& written, const std::string& text) {
  if (node.is_map()) {
    bool any = false;
    for (MapEntry& entry : node.entries) any = replace_written_at(entry.value, written, text) || any;
    return any;
  }
  if (node.is_list() || node.where.value != written.value) return false;
  if (node.where.layer != written.layer && node.where.layer != Layer::Rewrite) return false;
  node = value_of(text, node.where);
  return true;
}

std::string top_level_key(const std::string& path) { return path.substr(0, path.find('.')); }

void add_section(std::vector<std::string>& sections, std::string section) {
  if (std::find(sections.begin(), sections.end(), section) == sections.end()) sections.push_back(std::move(section));
}

// The job as a fix would leave it, and the top-level sections it changed
// (null when the change may reach any of them: Section rules then judge
// every section again).
struct ChangedJob {
  Job job;
  std::optional<std::vector<std::string>> sections;
};

ChangedJob changed_job(const Job& job, const std::vector<SettingChange>& changes) {
  // The copy keeps the original's guess of whether the file is a Bridge file
  // (Job::bridge_file_plausible), so Section rules see the same job facts.
  ChangedJob changed{job, std::vector<std::string>{}};
  Job& copy = changed.job;
  std::vector<std::string>& sections = *changed.sections;
  Provenance where;
  where.layer = Layer::CommandLine;
  where.origin = "changed by the fix being re-checked";
  for (const SettingChange& change : changes) {
    if (change.path == "cluster.nodes" || change.path == "cluster.gpus_per_node") {
      set_count(change.path == "cluster.nodes" ? copy.cluster.nodes : copy.cluster.gpus_per_node, change.value);
      copy.cluster.world_size = LocatedInt{};  // now nodes x GPUs per node
      continue;
    }
    if (!change.from.empty()) {
      if (const ConfigValue* moved = find_path(copy.config, change.from)) {
        ConfigValue value = *moved;
        erase_path(copy.config, split_path(change.from));
        assign_path(copy.config, split_path(change.path), std::move(value));
        add_section(sections, top_level_key(change.from));
        add_section(sections, top_level_key(change.path));
      }
      continue;
    }
    // The new value stands where the old one was written (the fix edits it
    // there), so a finding about it is recognised as the same finding.
    const ConfigValue* old = find_path(copy.config, change.path);
    Provenance at = old && old->where.value.valid() ? old->where : where;
    // Every setting read from the text the fix edits changes with it (under
    // run_recipe.py, dataset.seq_length=N also sets model.seq_length).
    if (old && old->where.value.valid() && written_by_user(old->where.layer)) {
      Provenance written = old->where;  // `old` may be replaced below
      if (!copy.config.is_map()) replace_written_at(copy.config, written, change.value);
      for (MapEntry& entry : copy.config.entries) {
        if (replace_written_at(entry.value, written, change.value)) add_section(sections, entry.key);
      }
    }
    assign_path(copy.config, split_path(change.path), value_of(change.value, at));
    add_section(sections, top_level_key(change.path));
  }
  bool nemo = copy.kind == InputKind::NemoYaml || (copy.kind == InputKind::LaunchScript && copy.dialect == Dialect::NeMo);
  if (copy.dialect == Dialect::MegatronLM || nemo) {
    drop_defaults(copy.config);
    if (copy.dialect == Dialect::MegatronLM) apply_megatron_lm_defaults(copy);
    else apply_nemo_defaults(copy);
    changed.sections.reset();  // defaults worked out again everywhere
  }
  if (!copy.config.is_map()) changed.sections.reset();
  return changed;
}

bool touches_allocation(const Fix& fix) {
  return std::any_of(fix.changes.begin(), fix.changes.end(),
                     [](const SettingChange& c) { return c.path.rfind("cluster.", 0) == 0; });
}

// A finding is the same when the same rule reports at the same place: its
// message may quote the changed value ("tensor_model_parallel_size 8" after
// the fix, 16 before) without being a new finding.
std::string key_of(const Diagnostic& d) {
  if (!d.where.valid()) return d.rule + '\n' + d.message;
  return fmt::format("{}\n{}:{}", d.rule, d.where.file, d.where.begin);
}

// Errors and warnings, as sorted keys: what a fix must not add.
std::vector<std::string> findings(const std::vector<Diagnostic>& found, size_t first) {
  std::vector<std::string> keys;
  for (size_t i = first; i < found.size(); ++i) {
    if (found[i].severity != Severity::Note) keys.push_back(key_of(found[i]));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

bool contains(const std::vector<std::string>& sorted, const std::string& key) {
  return std::binary_search(sorted.begin(), sorted.end(), key);
}

// What the job would report with a fix's changes applied.
struct Outcome {
  std::vector<std::string> keys;   // every finding, sorted
  std::vector<std::string> after;  // errors and warnings, sorted
  std::string first_new;           // the first error or warning the job did not have; "" for none
};

std::string changes_key(const Fix& fix) {
  std::string key;
  for (const SettingChange& c : fix.changes) key += fmt::format("{}\x1f{}\x1f{}\n", c.path, c.value, c.from);
  return key;
}

bool section_rule(RuleSet rules, const Diagnostic& d) {
  const RuleInfo* rule = find_rule(rules, d.rule);
  return rule && rule->scope == RuleScope::Section;
}

struct Recheck {
  const Job& job;
  const Derived& derived;
  const Thresholds& thresholds;
  RuleSet rules;
  const ProjectConfig* config;
  bool everywhere;                  // LintOptions::recheck_everywhere
  std::vector<std::string> before;  // errors and warnings, sorted
  // The job's findings by Section rules: every key, and those that are errors or warnings.
  std::vector<std::string> section_keys;
  std::vector<std::string> section_findings;
  // Findings at one value offer the same change (set TP to 8): linted once.
  mutable std::map<std::string, Outcome> outcomes;
  // What Section rules report over some sections of the unchanged job, by the sections.
  mutable std::map<std::vector<std::string>, std::vector<std::string>> section_runs;

  void apply_settings(std::vector<Diagnostic>& found) const {
    if (config) apply_rule_settings(*config, found, 0);
  }

  // Keys of what Section rules report over `sections` of the unchanged job, sorted.
  const std::vector<std::string>& reported_before(const std::vector<std::string>& sections) const {
    if (auto it = section_runs.find(sections); it != section_runs.end()) return it->second;
    std::vector<Diagnostic> found;
    check_job(job, derived, thresholds, rules, found, {&sections, true});
    apply_settings(found);
    std::vector<std::string> keys;
    for (const Diagnostic& d : found) keys.push_back(key_of(d));
    std::sort(keys.begin(), keys.end());
    return section_runs.emplace(sections, std::move(keys)).first->second;
  }

  const Outcome& outcome(const Fix& fix) const {
    std::string key = changes_key(fix);
    if (auto it = outcomes.find(key); it != outcomes.end()) return it->second;
    ChangedJob changed = changed_job(job, fix.changes);
    const Job& copy = changed.job;
    Derived after_derived = derive(copy);
    // The domain from the project config or the GPU type stays what it was,
    // unless the fix changes the nodes it is derived from.
    if (!touches_allocation(fix)) after_derived.nvlink_domain = derived.nvlink_domain;
    const std::vector<std::string>* sections = everywhere || !changed.sections ? nullptr : &*changed.sections;
    std::vector<Diagnostic> found;
    check_job(copy, after_derived, thresholds, rules, found, {sections, false});
    apply_settings(found);
    Outcome result;
    if (sections) {
      // Section rules judged only the sections the fix changed: what they
      // reported elsewhere stands. A finding that appears only because the
      // run was confined (a copy whose source section was not judged) is
      // not one the whole run would report.
      const std::vector<std::string>& judged = reported_before(*sections);
      std::erase_if(found, [&](const Diagnostic& d) {
        return section_rule(rules, d) && contains(judged, key_of(d)) && !contains(section_keys, key_of(d));
      });
      for (const std::string& kept : section_keys) {
        if (!contains(judged, kept)) result.keys.push_back(kept);
      }
      for (const std::string& kept : section_findings) {
        if (!contains(judged, kept)) result.after.push_back(kept);
      }
    }
    for (const Diagnostic& d : found) {
      result.keys.push_back(key_of(d));
      if (d.severity != Severity::Note) result.after.push_back(key_of(d));
      if (!result.first_new.empty() || d.severity == Severity::Note || contains(before, key_of(d))) continue;
      result.first_new = fmt::format("it would bring a new {}, {}: {}", severity_name(d.severity), d.rule, d.message);
    }
    std::sort(result.keys.begin(), result.keys.end());
    std::sort(result.after.begin(), result.after.end());
    return outcomes.emplace(std::move(key), std::move(result)).first->second;
  }

  // False when the fix must not be offered; fills fix.resolves otherwise.
  bool keep(Fix& fix, const Diagnostic& made_for, std::string& left) const {
    const Outcome& result = outcome(fix);
    const std::vector<std::string>& after = result.after;
    if (!result.first_new.empty()) {
      left = result.first_new;
      return false;  // a finding the job did not have
    }
    if (contains(result.keys, key_of(made_for))) {
      left = "it would not remove this finding";
      return false;
    }
    fix.resolves.clear();
    for (const std::string& key : before) {
      if (!contains(after, key)) fix.resolves.push_back(key.substr(0, key.find('\n')));
    }
    return true;
  }
};

// "set X to 2", "set X to 4" -> "set X to 2 or 4"
std::string joined_values(const std::string& prefix, const std::vector<std::string>& values) {
  if (values.size() == 1) return prefix + values.front();
  std::string out = prefix;
  for (size_t i = 0; i < values.size(); ++i) {
    out += values[i];
    if (i + 2 < values.size()) out += ", ";
    else if (i + 2 == values.size()) out += " or ";
  }
  return out;
}

}  // namespace

bool awaits_recheck(const Fix& fix) { return !fix.rechecked && !fix.changes.empty(); }

std::string help_from(const std::vector<Fix>& fixes) {
  std::vector<std::string> parts;
  std::string prefix;
  std::vector<std::string> values;
  auto flush = [&] {
    if (!values.empty()) parts.push_back(joined_values(prefix, values));
    values.clear();
  };
  for (const Fix& fix : fixes) {
    size_t to = fix.description.find(" to ");
    bool settable = fix.description.rfind("set ", 0) == 0 && to != std::string::npos;
    std::string this_prefix = settable ? fix.description.substr(0, to + 4) : "";
    if (!settable || this_prefix != prefix) flush();
    if (!settable) {
      parts.push_back(fix.description);
      prefix.clear();
      continue;
    }
    prefix = this_prefix;
    values.push_back(fix.description.substr(to + 4));
  }
  flush();
  return fmt::format("{}", fmt::join(parts, ", or "));
}

void verify_fixes(const Job& job, const Derived& derived, const Thresholds& thresholds, RuleSet rules,
                  const ProjectConfig* config, std::vector<Diagnostic>& found, size_t first, bool everywhere) {
  bool any = false;
  for (size_t i = first; i < found.size() && !any; ++i) {
    any = std::any_of(found[i].fixes.begin(), found[i].fixes.end(), awaits_recheck);
  }
  if (!any) return;
  Recheck recheck{job, derived, thresholds, rules, config, everywhere, findings(found, first), {}, {}, {}, {}};
  for (size_t i = first; i < found.size(); ++i) {
    if (!section_rule(rules, found[i])) continue;
    recheck.section_keys.push_back(key_of(found[i]));
    if (found[i].severity != Severity::Note) recheck.section_findings.push_back(key_of(found[i]));
  }
  std::sort(recheck.section_keys.begin(), recheck.section_keys.end());
  std::sort(recheck.section_findings.begin(), recheck.section_findings.end());
  for (size_t i = first; i < found.size(); ++i) {
    Diagnostic& d = found[i];
    std::vector<Fix> kept;
    std::optional<std::string> first_dropped;
    size_t dropped = 0;
    for (Fix& fix : d.fixes) {
      std::string left;
      if (!awaits_recheck(fix) || recheck.keep(fix, d, left)) {
        kept.push_back(std::move(fix));
        continue;
      }
      ++dropped;
      if (!first_dropped) first_dropped = fmt::format("{}: {}", fix.description, left);
    }
    bool all_dropped = kept.empty() && first_dropped;
    d.fixes = std::move(kept);
    // A help written by the rule may still suggest what the re-check refused.
    if (all_dropped && !d.help_from_fixes) {
      d.help += fmt::format(" (mblint offers no fix: re-checked, {})", *first_dropped);
    } else if (first_dropped && !d.help_from_fixes) {
      d.help += fmt::format(" (re-checked, not offered as a fix: {}{})", *first_dropped,
                            dropped > 1 ? fmt::format("; and {} more", dropped - 1) : "");
    }
    if (d.help_from_fixes && !d.fixes.empty()) d.help = help_from(d.fixes);
  }
}

}  // namespace mblint
