#include "lint/base/input_rules.h"
#include "lint/resolve/interpolation_check.h"

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "lint/model/schema.h"

namespace mblint {

namespace {

std::string dotted(const std::vector<std::string>& path, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < path.size(); ++i) {
    if (i > 0) out += '.';
    out += path[i];
  }
  return out;
}

std::string dotted(const std::vector<std::string>& path) { return dotted(path, path.size()); }

// The `${...}` of a problem where it is written: its characters in the
// value's span when the source holds them (a plain or single-quoted scalar,
// an override word), else the whole value.
Span interpolation_span(const InterpolationProblem& problem, const SourceSet& sources, bool* exact) {
  *exact = false;
  Span value = problem.where.value.valid() ? problem.where.value : primary_span(problem.where);
  if (!value.valid() || value.file < 0 || static_cast<size_t>(value.file) >= sources.files.size()) return value;
  const std::string& text = sources.files[value.file].text;
  if (value.end > text.size() || value.begin > value.end) return value;
  std::string_view written = std::string_view(text).substr(value.begin, value.end - value.begin);
  std::string_view reference = std::string_view(problem.text).substr(problem.offset, problem.length);
  // The same reference may occur more than once in the value: take the
  // occurrence with the same index.
  size_t occurrence = 0;
  for (size_t at = problem.text.find(reference); at < problem.offset; at = problem.text.find(reference, at + 1)) {
    ++occurrence;
  }
  size_t at = written.find(reference);
  for (size_t i = 0; i < occurrence && at != std::string_view::npos; ++i) at = written.find(reference, at + 1);
  if (at == std::string_view::npos) return value;
  *exact = true;
  return make_span(value.file, value.begin + at, value.begin + at + reference.size());
}

// Whether the key a reference names may exist although mblint does not
// hold it: a ConfigContainer field, a field of its section's dataclasses,
// or anything under a free-form field (env_vars, a dict, a nested config).
bool may_exist(const Job& job, const std::vector<std::string>& target) {
  if (target.empty()) return true;
  const SchemaField* section = find_schema_field("", target[0]);
  if (!section) return false;  // only the job's own files could add it, and they do not
  if (target.size() == 1 || is_free_form_field(*section)) return true;
  std::string_view field = target[1];
  if (target[0] == "model" && field == "transformer" && target.size() >= 3) {
    if (!job.builder_backed_model) return true;  // a builder's transformer config: not in the schema
    field = target[2];
  }
  return find_schema_field(target[0], field) != nullptr;
}

// Keys next to the missing one: what the config holds at that level and,
// for the top level and a section, the schema's fields.
std::optional<std::string> closest_key(const Job& job, const std::vector<std::string>& target, size_t found) {
  std::string_view missing = target[found];
  if (missing.size() > 200) return std::nullopt;
  std::vector<std::string> parent(target.begin(), target.begin() + static_cast<long>(found));
  std::vector<std::string> candidates;
  if (const ConfigValue* node = find_path(job.config, parent); node && node->is_map()) {
    for (const MapEntry& entry : node->entries) candidates.push_back(entry.key);
  }
  if (found <= 1) {
    std::string section = found == 0 ? "" : target[0];
    for (std::string& name : similar_field_names(section, missing, 3)) candidates.push_back(std::move(name));
  }
  // Short keys tolerate one edit ("foo" is not "ft"); a longer one that is
  // the start of a key ("seq_len") counts as close.
  size_t threshold = missing.size() <= 3 ? 1 : std::max<size_t>(2, missing.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = threshold + 1;
  for (const std::string& candidate : candidates) {
    if (candidate == missing) continue;
    bool prefix = missing.size() > 3 && candidate.size() > missing.size() && candidate.size() <= missing.size() + 4 &&
                  candidate.compare(0, missing.size(), missing) == 0;
    size_t distance = prefix ? threshold : edit_distance(missing, candidate);
    if (distance < best_distance || (distance == best_distance && best && candidate < *best)) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

// The expression with the segment `index` of its absolute path renamed.
std::string renamed_expression(const InterpolationProblem& problem, size_t index, const std::string& name) {
  size_t dots = 0;
  while (dots < problem.expression.size() && problem.expression[dots] == '.') ++dots;
  std::vector<std::string> rest = split_path(std::string_view(problem.expression).substr(dots));
  size_t base = problem.target.size() - rest.size();
  if (index >= base) rest[index - base] = name;
  return std::string(dots, '.') + dotted(rest);
}

Diagnostic make(const InputRule& rule, std::string message, Span where) {
  return input_finding(rule, std::move(message), where);
}

bool user_layer(const Provenance& where) {
  return where.layer == Layer::ConfigFile || where.layer == Layer::ConvenienceFlag || where.layer == Layer::Override ||
         where.layer == Layer::CommandLine;
}

constexpr std::string_view kWhen =
    "when Megatron Bridge resolves the merged config (OmegaConf.to_container(resolve=True))";

void missing_key(const Job& job, const InterpolationProblem& problem, const SourceSet& sources,
                 std::vector<Diagnostic>& out) {
  if (problem.found >= problem.target.size() || may_exist(job, problem.target)) return;
  bool exact = false;
  Span where = interpolation_span(problem, sources, &exact);
  std::string reference = problem.text.substr(problem.offset, problem.length);
  std::string owner = problem.found == 0 ? "the config" : fmt::format("'{}'", dotted(problem.target, problem.found));
  Diagnostic d = make(input_rule::kInterpolationMissingKey,
                      fmt::format("{} names a key that does not exist: {} has no '{}', so OmegaConf raises "
                                  "InterpolationKeyError {}",
                                  reference, owner, problem.target[problem.found], kWhen),
                      where);
  if (problem.holder.size() > 0) {
    d.notes.push_back(Note{fmt::format("it is the value of {}", dotted(problem.holder)), Span{}});
  }
  if (auto suggestion = closest_key(job, problem.target, problem.found)) {
    std::string expression = renamed_expression(problem, problem.found, *suggestion);
    d.help = fmt::format("did you mean ${{{}}}?", expression);
    Fix fix;
    fix.description = fmt::format("refer to {} instead", expression);
    fix.safety = FixSafety::Unsafe;  // the value changes
    if (exact && user_layer(problem.where)) fix.edits.push_back(TextEdit{where, fmt::format("${{{}}}", expression)});
    d.fixes.push_back(std::move(fix));
  } else {
    d.help = problem.found == 0 ? "refer to a key of the config (model, train, dataset, ...), or write the value "
                                  "instead of the interpolation"
                                : fmt::format("refer to a field of {}, or write the value instead of the interpolation",
                                              dotted(problem.target, problem.found));
  }
  out.push_back(std::move(d));
}

void cycle(const InterpolationProblem& problem, const SourceSet& sources, std::vector<Diagnostic>& out) {
  bool exact = false;
  Span where = interpolation_span(problem, sources, &exact);
  std::string path;
  for (const auto& step : problem.chain) path += (path.empty() ? "" : " -> ") + dotted(step);
  Diagnostic d = make(input_rule::kInterpolationCycle,
                      fmt::format("{} starts an interpolation cycle ({}): OmegaConf raises "
                                  "InterpolationResolutionError \"Recursive interpolation detected\" {}",
                                  problem.text.substr(problem.offset, problem.length), path, kWhen),
                      where);
  for (size_t i = 1; i + 1 < problem.chain.size() && i < problem.chain_at.size(); ++i) {
    d.notes.push_back(Note{fmt::format("{} continues the cycle here", dotted(problem.chain[i])), problem.chain_at[i]});
  }
  d.help = "replace one interpolation of the cycle by a value";
  out.push_back(std::move(d));
}

}  // namespace

std::vector<Diagnostic> interpolation_diagnostics(const Job& job, const std::vector<InterpolationProblem>& problems,
                                                  const SourceSet& sources) {
  std::vector<Diagnostic> out;
  if (job.dialect != Dialect::Bridge || job.kind == InputKind::BridgeDump || job.kind == InputKind::NotAConfig) {
    return out;
  }
  for (const InterpolationProblem& problem : problems) {
    if (problem.kind == InterpolationProblem::Kind::Cycle) {
      cycle(problem, sources, out);
    } else {
      missing_key(job, problem, sources, out);
    }
  }
  return out;
}

}  // namespace mblint
