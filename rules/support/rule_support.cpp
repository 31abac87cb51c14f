#include "rules/support/rule_support.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

namespace mblint {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> small, large;
  if (n <= 0 || n > (int64_t{1} << 31)) return small;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i != 0) continue;
    small.push_back(i);
    if (i != n / i) large.push_back(n / i);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

int64_t nearest_multiple(int64_t value, int64_t step) {
  if (step <= 0) return value;
  int64_t below = value / step * step;
  int64_t above = below + step;
  if (below < step) return above < step ? step : std::max(step, above);
  return (value - below < above - value) ? below : above;
}

std::string join_or(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += std::to_string(values[i]);
  }
  return out;
}

std::optional<TextEdit> replace_value(const Provenance& where, std::string replacement) {
  if (!where.value.valid() || !where.via.empty()) return std::nullopt;
  if (where.layer == Layer::Recipe || where.layer == Layer::Rewrite || where.layer == Layer::SchemaDefault) {
    return std::nullopt;
  }
  return TextEdit{where.value, std::move(replacement)};
}

void edit_or_set(Fix& fix, const Provenance& where, const std::string& path, std::string text) {
  if (auto edit = replace_value(where, text)) {
    fix.edits.push_back(*edit);
  } else if (where.layer == Layer::Recipe && !path.empty()) {
    fix.set_key = path;  // the recipe's value: written into the user's YAML or launch command, if any
    fix.set_text = std::move(text);
  }
}

namespace {

// The key a re-check changes for `quantity`: its config path, or the
// allocation's own names for the derived node and GPU counts.
std::string setting_path(const Quantity& quantity) {
  if (!quantity.path.empty()) return quantity.path;
  if (quantity.name == "nodes") return "cluster.nodes";
  if (quantity.name == "GPUs per node") return "cluster.gpus_per_node";
  return "";
}

}  // namespace

Fix set_value_fix(const Quantity& quantity, int64_t value, FixSafety safety) {
  Fix fix;
  fix.description = fmt::format("set {} to {}", quantity.name, value);
  fix.safety = safety;
  edit_or_set(fix, quantity.where, quantity.path, std::to_string(value));
  if (std::string path = setting_path(quantity); !path.empty()) {
    fix.changes.push_back(SettingChange{path, std::to_string(value)});
  }
  return fix;
}

Fix set_setting_fix(const Setting& setting, bool value, FixSafety safety) {
  Fix fix;
  fix.description = fmt::format("set {} to {}", setting.name, value ? "true" : "false");
  fix.safety = safety;
  edit_or_set(fix, setting.where, setting.path, value ? "true" : "false");
  if (!setting.path.empty()) fix.changes.push_back(SettingChange{setting.path, value ? "true" : "false"});
  return fix;
}

Fix combined_fix(std::string description, const std::vector<Fix>& parts, FixSafety safety) {
  Fix fix;
  fix.description = std::move(description);
  fix.safety = safety;
  bool editable = !parts.empty();
  for (const Fix& part : parts) {
    fix.changes.insert(fix.changes.end(), part.changes.begin(), part.changes.end());
    for (const TextEdit& edit : part.edits) {
      // Two insertions at one place (flags appended to a command) become one.
      auto same_point = [&](const TextEdit& e) {
        return e.where == edit.where && edit.where.begin == edit.where.end;
      };
      auto at = std::find_if(fix.edits.begin(), fix.edits.end(), same_point);
      if (at != fix.edits.end()) at->replacement += edit.replacement;
      else fix.edits.push_back(edit);
    }
    editable = editable && !part.edits.empty() && part.set_key.empty();
  }
  if (!editable) fix.edits.clear();
  return fix;
}

namespace {

void push_unique(Diagnostic& d, Note note) {
  bool duplicate = std::any_of(d.notes.begin(), d.notes.end(), [&](const Note& n) {
    return n.message == note.message && n.where == note.where;
  });
  if (!duplicate) d.notes.push_back(std::move(note));
}

// `$TP` / `${dataset.seq_length}`: also show where the value was defined.
bool contains(const Span& outer, const Span& inner) {
  return outer.file == inner.file && outer.begin <= inner.begin && inner.end <= outer.end && !(outer == inner);
}

void push_via_notes(Diagnostic& d, const Quantity& q) {
  for (const Span& via : q.where.via) {
    if (via == d.where) continue;
    // `TP=${TP:-2}`: point at the `2`, not also at the whole assignment.
    bool wider = std::any_of(q.where.via.begin(), q.where.via.end(), [&](const Span& other) { return contains(via, other); });
    if (wider) continue;
    push_unique(d, Note{fmt::format("the value of {} comes from here", q.name), via});
  }
  if (q.where.interpolated_at.valid() && q.where.interpolated_at != d.where) {
    push_unique(d, Note{fmt::format("{} takes it through this interpolation", q.path.empty() ? q.name : q.path),
                        q.where.interpolated_at});
  }
}

}  // namespace

void add_notes(Diagnostic& d, std::initializer_list<const Quantity*> quantities, const Quantity* primary) {
  if (primary) push_via_notes(d, *primary);
  for (const Quantity* q : quantities) {
    if (q == primary) continue;
    if (!q->known() && !span_for(*q).valid()) continue;  // nothing to show
    push_unique(d, note_for(*q));
    push_via_notes(d, *q);
  }
}

Diagnostic finding(const RuleInfo& rule, std::string message, std::initializer_list<const Quantity*> quantities) {
  return finding_at(rule, std::move(message), most_specific(quantities), quantities);
}

Diagnostic finding_at(const RuleInfo& rule, std::string message, const Quantity& primary,
                      std::initializer_list<const Quantity*> quantities) {
  Diagnostic diag = make_diagnostic(rule, std::move(message), span_for(primary));
  add_notes(diag, quantities, &primary);
  return diag;
}

void report(std::vector<Diagnostic>& out, Diagnostic diag, std::string help, std::vector<Fix> fixes) {
  diag.help = std::move(help);
  diag.fixes.insert(diag.fixes.end(), std::make_move_iterator(fixes.begin()), std::make_move_iterator(fixes.end()));
  out.push_back(std::move(diag));
}

std::vector<int64_t> valid_tensor_parallel_sizes(const RuleContext& context, int64_t limit) {
  const Derived& d = context.derived;
  bool divisor_allowed = context.job.versions.megatron_core >= Version{0, 16, 0};
  const ConfigValue* mla = find_path(context.job.config, "model.multi_latent_attention");
  bool has_groups = d.num_query_groups.known() && *d.num_query_groups > 0 && !(mla && as_bool(mla).value_or(false));
  std::vector<int64_t> sizes;
  for (int64_t t = 2; t <= limit; ++t) {
    if (d.num_attention_heads.known() && *d.num_attention_heads % t != 0) continue;
    if (has_groups) {
      int64_t g = *d.num_query_groups;
      if (g % t != 0 && !(divisor_allowed && t % g == 0)) continue;
    }
    sizes.push_back(t);
  }
  return sizes;
}

std::vector<int64_t> closest_below(const std::vector<int64_t>& values, int64_t below, size_t count) {
  std::vector<int64_t> out;
  for (int64_t v : values) {
    if (v < below) out.push_back(v);
  }
  if (out.size() > count) out.erase(out.begin(), out.end() - static_cast<long>(count));
  return out;
}

std::vector<int64_t> closest_around(const std::vector<int64_t>& candidates, int64_t current) {
  std::vector<int64_t> out = closest_below(candidates, current, 1);
  auto above = std::upper_bound(candidates.begin(), candidates.end(), current);
  if (above != candidates.end()) out.push_back(*above);
  return out;
}

std::vector<int64_t> divisors_above_one(int64_t n) {
  std::vector<int64_t> out = divisors(n);
  if (!out.empty() && out.front() == 1) out.erase(out.begin());
  return out;
}

bool splits(const Quantity& size) { return size.known() && *size > 1; }

bool splits_unevenly(const Quantity& whole, const Quantity& part, int64_t factor) {
  if (!whole.known() || !part.known() || *part <= 1 || *whole <= 0) return false;
  return *whole % (factor * *part) != 0;
}

std::vector<Fix> set_value_fixes(const Quantity& quantity, const std::vector<int64_t>& choices) {
  std::vector<Fix> fixes;
  for (int64_t value : choices) fixes.push_back(set_value_fix(quantity, value));
  return fixes;
}

std::string count_of(int64_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string named(const Quantity& q) {
  return q.value ? fmt::format("{} {}", q.name, *q.value) : q.name;
}

}  // namespace mblint
