// A value that is not of the type its ConfigContainer field declares.
// Megatron Bridge copies the merged YAML and overrides onto the dataclasses
// with setattr and converts nothing, so "1" stays a string and 1e3 a float
// until Python computes with it.
#include <algorithm>
#include <cmath>
#include <set>

#include "lint/base/yaml_scalar.h"
#include "lint/model/field_type.h"
#include "lint/model/schema.h"
#include "rules/support/config_support.h"
#include "lint/model/config_fields.h"

namespace mblint {

extern const RuleInfo kValueTypeMismatch;

namespace {

// Fields whose values other rules judge one by one (their choices, list
// items or string forms): not judged twice.
constexpr std::string_view kJudgedElsewhere[] = {
    "dist.sharp_enabled_group",          // sharp-group-invalid
    "model.cp_comm_type",                // cp-comm-type-invalid
    "model.cuda_graph_impl",             // cuda-graph-scope
    "model.cuda_graph_scope",            // cuda-graph-scope
    "model.moe_layer_freq",              // moe-layer-freq-invalid
    "model.pipeline_model_parallel_comm_backend",  // pipeline-comm-backend-invalid
    "model.recompute_granularity",       // recompute-settings
    "model.recompute_method",            // recompute-settings
    "model.recompute_modules",           // recompute-modules-unknown
};

bool judged_elsewhere(std::string_view path) {
  return std::find(std::begin(kJudgedElsewhere), std::end(kJudgedElsewhere), path) != std::end(kJudgedElsewhere);
}

// Int fields Megatron-Core uses as sizes and counts: a float there raises
// TypeError (range() over process-group ranks, layers, experts and
// micro-batches; tensor shapes; slices; torch.topk's k).
bool used_as_size(std::string_view name) {
  static constexpr std::string_view kSizes[] = {
      "eval_global_batch_size", "eval_micro_batch_size", "ffn_hidden_size", "global_batch_size",
      "hidden_size",            "kv_channels",           "micro_batch_size", "moe_ffn_hidden_size",
      "moe_router_topk",        "num_attention_heads",   "num_layers",       "num_moe_experts",
      "num_query_groups",       "seq_length",            "vocab_size",
  };
  constexpr std::string_view kParallel = "_parallel_size";
  if (name.size() > kParallel.size() && name.substr(name.size() - kParallel.size()) == kParallel) return true;
  return std::find(std::begin(kSizes), std::end(kSizes), name) != std::end(kSizes);
}

// Literal fields whose reading code raises on any other value, with what it says.
std::string_view raise_on_other_choice(std::string_view path) {
  if (path == "scheduler.lr_decay_style") {
    return "Megatron-Core's OptimizerParamScheduler.get_lr raises \"... decay style is not supported\" at the first "
           "step after warm-up";
  }
  return "";
}

// A string Python reads as true although it spells false.
bool spells_false(const ConfigValue& value) {
  if (value.kind != ValueKind::String) return false;
  std::string text = value.text;
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text == "false" || text == "no" || text == "off" || text == "0";
}

// `key=None` in a Hydra override: the string "None", which override-syntax
// already reports ("write null").
bool hydra_none(const ConfigValue& value) {
  bool hydra = value.where.layer == Layer::Override || value.where.layer == Layer::CommandLine;
  return hydra && value.kind == ValueKind::String && !value.quoted && value.text == "None";
}

// A number as Python's repr shows it: floats keep their point (1000.0).
std::string python_float(double f) {
  std::string text = fmt::format("{}", f);
  if (text.find_first_of(".eEni") == std::string::npos) text += ".0";
  return text;
}

std::string shown(const ConfigValue& value) {
  switch (value.kind) {
    case ValueKind::Float: return python_float(value.real);
    case ValueKind::String: return fmt::format("\"{}\"", value.text);
    default: return to_display(value);
  }
}

std::string_view kind_name(const ConfigValue& value) {
  switch (value.kind) {
    case ValueKind::Bool: return "a bool";
    case ValueKind::Int: return "an int";
    case ValueKind::Float: return "a float";
    case ValueKind::String: return "a string";
    case ValueKind::List: return "a list";
    case ValueKind::Map: return "a mapping";
    default: return "null";
  }
}

// The number a string spells (YAML 1.1 numbers: 8, 1_024, 3e-4, 0x10),
// when it spells one.
std::optional<ConfigValue> spelled_number(const ConfigValue& value) {
  if (value.kind != ValueKind::String) return std::nullopt;
  ConfigValue typed = type_plain_scalar(value.text, YamlFlavor::OmegaConf);
  if (typed.kind == ValueKind::Int || (typed.kind == ValueKind::Float && std::isfinite(typed.real))) return typed;
  return std::nullopt;
}

// The int a number is, when it is a whole one.
std::optional<ConfigValue> whole(const ConfigValue& number) {
  if (number.kind == ValueKind::Int) return number;
  if (auto i = as_int(&number)) return make_int(*i);
  return std::nullopt;
}

bool literal_of_ints(const DeclaredType& type) {
  return type.kind == TypeKind::Literal && !type.choices.empty() &&
         std::all_of(type.choices.begin(), type.choices.end(),
                     [](const ConfigValue& c) { return c.kind == ValueKind::Int; });
}

std::string join(const std::vector<std::string>& names, std::string_view separator = ", ") {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : std::string(separator)) + name;
  return out;
}

struct Field {
  std::string section;
  std::string name;
  std::string path;  // section.name
};

struct Finding {
  Severity severity = Severity::Error;
  std::string message;
  std::string help;                     // "{}" stands for the intended value as written
  std::optional<ConfigValue> intended;  // the value the user evidently meant
  bool names_release = false;           // the verdict depends on the Megatron Bridge release
};

struct Judge {
  const RuleContext& context;
  Field field;

  const Job& job() const { return context.job; }

  // The Literal's choices in the release the job runs; nullopt: no Literal
  // then (any string).
  std::optional<std::vector<std::string>> choices_now(const DeclaredType& literal) const {
    auto era = literal_choices_in(field.section, field.name, joined_choices(literal), job().versions.bridge);
    if (!era) {
      std::vector<std::string> names;
      for (const ConfigValue& c : literal.choices) names.push_back(c.kind == ValueKind::String ? c.text : to_display(c));
      return names;
    }
    if (era->empty()) return std::nullopt;
    return era;
  }

  bool literal_accepts(const DeclaredType& literal, const ConfigValue& value) const {
    if (literal_of_ints(literal)) return value.kind == ValueKind::Int || value.kind == ValueKind::Bool;
    auto choices = choices_now(literal);
    if (!choices) return true;
    if (value.kind != ValueKind::String) return false;
    if (std::find(choices->begin(), choices->end(), value.text) != choices->end()) return true;
    // A choice of the compiled snapshot that the assumed (not given) release
    // lacks: the user may run a newer one.
    bool in_snapshot = std::any_of(literal.choices.begin(), literal.choices.end(), [&](const ConfigValue& c) {
      return c.kind == ValueKind::String && c.text == value.text;
    });
    return in_snapshot && !job().versions.bridge_given;
  }

  bool accepts(const DeclaredType& type, const ConfigValue& value) const {
    if (value.is_null() || value.is_unknown()) return true;
    switch (type.kind) {
      case TypeKind::Any:
      case TypeKind::Str:
      case TypeKind::Dict: return true;
      case TypeKind::None: return false;
      case TypeKind::Int: return value.kind == ValueKind::Int || value.kind == ValueKind::Bool;
      case TypeKind::Float:
        return value.kind == ValueKind::Int || value.kind == ValueKind::Bool || value.kind == ValueKind::Float;
      case TypeKind::Bool: return !spells_false(value);
      case TypeKind::Literal: return literal_accepts(type, value);
      case TypeKind::List:
        return value.is_list() && std::all_of(value.items.begin(), value.items.end(), [&](const ConfigValue& item) {
                 return type.item.empty() || accepts(type.item.front(), item);
               });
    }
    return true;
  }

  std::string set_as_is() const { return "Megatron Bridge sets it unconverted"; }

  Finding not_a_number(const ConfigValue& value, bool want_int) const {
    Finding f;
    std::string want = want_int ? "an int" : "a number";
    std::string what = fmt::format("{} takes {}, but {} is {}", field.path, want, shown(value), kind_name(value));
    if (value.kind == ValueKind::Float) {  // want_int
      f.intended = whole(value);
      // A size or count fails; elsewhere a whole float behaves like the int
      // wherever Python only compares or divides it (advice), a fraction does not.
      f.severity = used_as_size(field.name) ? Severity::Error : f.intended ? Severity::Note : Severity::Warning;
      if (f.severity == Severity::Error) {
        f.message = fmt::format("{}: {}, and Megatron-Core fails with TypeError where it uses it as a size or count",
                                what, set_as_is());
      } else if (f.severity == Severity::Note) {
        f.message = fmt::format("{}: {}; Python compares and divides it like {}, so it works unless the value is "
                                "used as a count or an index (TypeError)",
                                what, set_as_is(), to_display(*f.intended));
      } else {
        f.message = fmt::format("{}: {}; Python computes with the fraction where it compares or divides, and "
                                "fails with TypeError where it is used as a count or an index",
                                what, set_as_is());
      }
      f.help = f.intended ? "write {}" : "write a whole number";
      return f;
    }
    f.message = fmt::format("{}: {}, and the job fails with TypeError where it first computes with it", what,
                            set_as_is());
    if (auto number = spelled_number(value)) f.intended = want_int ? whole(*number) : number;
    if (f.intended) {
      f.help = "write {} without quotes";
    } else if (value.kind == ValueKind::String) {
      f.help = want_int ? "write the number as an integer literal" : "write the number as a numeric literal";
    } else {
      f.help = fmt::format("give a single {}", want_int ? "integer" : "number");
    }
    return f;
  }

  Finding not_a_choice(const DeclaredType& literal, const ConfigValue& value) const {
    Finding f;
    auto now = choices_now(literal);
    std::vector<std::string> choices = now ? *now : std::vector<std::string>{};
    std::string release = to_string(job().versions.bridge);
    bool newer = value.kind == ValueKind::String &&
                 std::any_of(literal.choices.begin(), literal.choices.end(),
                             [&](const ConfigValue& c) { return c.kind == ValueKind::String && c.text == value.text; });
    std::string_view raises = raise_on_other_choice(field.path);
    f.names_release = true;
    f.severity = raises.empty() || newer ? Severity::Warning : Severity::Error;
    if (newer) {
      f.message = fmt::format("{} {} is not one of the choices of Megatron Bridge {} ({}): a later release added it",
                              field.path, shown(value), release, join(choices));
      f.help = fmt::format("use one of {}, or run the Megatron Bridge release that has it", join(choices));
      return f;
    }
    std::string consequence =
        raises.empty() ? std::string("Megatron Bridge does not check the choices when it sets the field, so the code "
                                     "that reads it gets the value as written")
                       : std::string(raises);
    f.message = fmt::format("{} takes one of {} (Megatron Bridge {}), but {} is none of them: {}", field.path,
                            join(choices), release, shown(value), consequence);
    // A close spelling of one choice: that choice.
    std::optional<std::string> best;
    size_t best_distance = 3, ties = 0;
    if (value.kind == ValueKind::String) {
      for (const std::string& choice : choices) {
        size_t distance = edit_distance(value.text, choice);
        if (distance < best_distance) {
          best_distance = distance;
          best = choice;
          ties = 0;
        } else if (distance == best_distance) {
          ++ties;
        }
      }
    }
    if (best && ties == 0) {
      f.intended = make_string(*best);
      f.help = "did you mean {}?";
    } else {
      f.help = fmt::format("use one of {}", join(choices));
    }
    return f;
  }

  // What is wrong with `value` for the first alternative of `type` that
  // could have taken it; nullopt when some alternative takes it.
  std::optional<Finding> judge(const FieldType& type, const ConfigValue& value, const ConfigValue** at) const {
    *at = &value;
    if (value.is_null() || value.is_unknown() || type.takes_anything()) return std::nullopt;
    if (value.is_map() && find_child(value, "_target_")) return std::nullopt;  // instantiated, not set
    if (hydra_none(value)) return std::nullopt;  // override-syntax: "write null"
    for (const DeclaredType& alternative : type.alternatives) {
      if (accepts(alternative, value)) return std::nullopt;
    }
    // A list given to a list-or-scalar field: its items decide.
    if (value.is_list()) {
      if (const DeclaredType* list = type.find(TypeKind::List); list && !list->item.empty()) {
        for (size_t i = 0; i < value.items.size(); ++i) {
          Judge item{context, field};
          item.field.path = fmt::format("{}[{}]", field.path, i);
          if (auto finding = item.judge(FieldType{{list->item.front()}}, value.items[i], at)) return finding;
        }
      }
    }
    for (const DeclaredType& alternative : type.alternatives) {
      switch (alternative.kind) {
        case TypeKind::Int: return not_a_number(value, true);
        case TypeKind::Float: return not_a_number(value, false);
        case TypeKind::Literal:
          if (literal_of_ints(alternative)) return not_a_number(value, true);
          return not_a_choice(alternative, value);
        case TypeKind::Bool: {
          Finding f;
          f.severity = Severity::Warning;
          f.message = fmt::format("{} takes a bool, but {} is a string: {}, and Python reads a non-empty string "
                                  "as true",
                                  field.path, shown(value), set_as_is());
          f.intended = make_bool(false);
          f.help = "write {} without quotes";
          return f;
        }
        case TypeKind::List: {
          if (value.is_list()) continue;
          Finding f;
          f.severity = Severity::Warning;
          f.message = fmt::format("{} takes a list, but {} is {}: {}, and Python iterates a string character by "
                                  "character and cannot iterate a number",
                                  field.path, shown(value), kind_name(value), set_as_is());
          f.help = fmt::format("write it as a list: [{}]", to_display(value));
          return f;
        }
        default: continue;
      }
    }
    return std::nullopt;
  }
};

// --- fixes -------------------------------------------------------------------

// How a value is typed where it was written.
std::optional<YamlFlavor> flavor_of(const Job& job, const Provenance& where) {
  if (where.layer == Layer::ConfigFile) return job.config_complete ? YamlFlavor::PyYaml : YamlFlavor::OmegaConf;
  return std::nullopt;  // a Hydra override
}

// A Hydra override's number grammar (Hydra 1.3 OverrideParser): digits, or
// digits with a point and/or a signed exponent.
bool hydra_reads_as(std::string_view text, const ConfigValue& intended) {
  ConfigValue typed = type_plain_scalar(text, YamlFlavor::Yaml12);
  bool simple = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string_view::npos &&
                text.find_first_of("0123456789") != std::string_view::npos;
  if (intended.kind == ValueKind::Bool || intended.kind == ValueKind::String) {
    return to_display(typed) == to_display(intended) && typed.kind == intended.kind;
  }
  return simple && typed.kind == intended.kind && to_display(typed) == to_display(intended);
}

bool reads_as(const Job& job, const Provenance& where, std::string_view text, const ConfigValue& intended) {
  auto flavor = flavor_of(job, where);
  if (!flavor) return hydra_reads_as(text, intended);
  ConfigValue typed = type_plain_scalar(text, *flavor);
  return typed.kind == intended.kind && to_display(typed) == to_display(intended);
}

// The text that writes `intended` where `value` was written: the user's own
// spelling without its quotes when that reads right, else a plain form.
std::optional<std::string> written_form(const Job& job, const ConfigValue& value, const ConfigValue& intended) {
  std::vector<std::string> candidates;
  if (value.kind == ValueKind::String) candidates.push_back(value.text);
  if (intended.kind == ValueKind::Float) {
    std::string text = python_float(intended.real);
    if (size_t e = text.find('e'); e != std::string::npos) {
      if (text.find('.') == std::string::npos) text.insert(e, ".0");
      e = text.find('e');
      if (e + 1 < text.size() && text[e + 1] != '-' && text[e + 1] != '+') text.insert(e + 1, "+");
    }
    candidates.push_back(text);
  } else if (intended.kind == ValueKind::String) {
    candidates.push_back(intended.text);
    candidates.push_back(fmt::format("\"{}\"", intended.text));
  } else {
    candidates.push_back(to_display(intended));
  }
  for (const std::string& text : candidates) {
    if (reads_as(job, value.where, text, intended)) return text;
  }
  return std::nullopt;
}

// The value's own characters can be replaced: written by the user as a
// literal (not through a shell variable or an interpolation, not behind a
// YAML tag that would keep it a string).
bool editable(const ConfigValue& value) {
  const Provenance& where = value.where;
  if (!where.value.valid() || !where.via.empty() || where.interpolated_at.valid() || !written_by_user(where)) {
    return false;
  }
  if (value.quoted) return where.value.end - where.value.begin >= value.text.size() + 2;
  return true;
}

// The dotted path of `at` inside the field's value (a list item gets its
// index), for the re-check of the fix (lint/fix/fix_verify.h).
std::string path_of(const Field& field, const ConfigValue& whole_value, const ConfigValue* at) {
  for (size_t i = 0; i < whole_value.items.size(); ++i) {
    if (&whole_value.items[i] == at) return fmt::format("{}.{}", field.path, i);
  }
  return field.path;
}

// The help names the intended value as it would be written; the fix writes
// it, when the value's characters can be replaced and the job with it has no
// new finding.
void add_help_and_fix(const Judge& judge, const ConfigValue& whole_value, const ConfigValue* at, Finding& finding,
                      Diagnostic& diag) {
  std::optional<std::string> text;
  if (finding.intended) text = written_form(judge.job(), *at, *finding.intended);
  diag.help = finding.help;
  if (size_t slot = diag.help.find("{}"); finding.intended && slot != std::string::npos) {
    diag.help.replace(slot, 2, text ? *text : to_display(*finding.intended));
  }
  if (!text || !editable(*at)) return;
  Fix fix;
  fix.description = fmt::format("write {}", *text);
  fix.safety = FixSafety::Unsafe;  // the run changes: it no longer fails or ignores the value
  fix.edits.push_back(TextEdit{at->where.value, *text});
  // Re-checked by the engine before it is offered (lint/fix/fix_verify.h).
  fix.changes.push_back(SettingChange{path_of(judge.field, whole_value, at), to_display(*finding.intended)});
  diag.fixes.push_back(std::move(fix));
}

Span location(const ConfigValue& value) {
  if (value.where.interpolated_at.valid()) return value.where.interpolated_at;
  if (value.where.value.valid()) return value.where.value;
  return first_span(value);
}

bool skipped_layer(const Provenance& where) {
  // Recipe values are mblint's catalog; run_recipe.py's convenience flags
  // are typed by argparse (entry-point-argument reports what it rejects).
  return !written_by_user(where) || where.layer == Layer::ConvenienceFlag;
}

FieldType field_type(std::string_view section, std::string_view name, AnnotationCache& cache) {
  FieldType type = declared_type(section, name, cache);
  if (type.alternatives.empty()) return type;  // not in the schema: not judged
  std::string_view variants = variant_annotations(section, name);
  if (!variants.empty()) {
    const FieldType& more = parsed_annotation(variants, cache);
    type.alternatives.insert(type.alternatives.end(), more.alternatives.begin(), more.alternatives.end());
  }
  return type;
}

// Where a value was written: an interpolation's copy shares its source's.
using Written = std::pair<FileId, uint32_t>;

Written written_at(const ConfigValue& value) { return {value.where.value.file, value.where.value.begin}; }

void check_field(const RuleContext& context, const std::string& section, const MapEntry& entry,
                 std::set<Written>& reported, AnnotationCache& types, std::vector<Diagnostic>& out) {
  const ConfigValue& value = entry.value;
  if (is_serialization_key(entry.key) || skipped_layer(value.where)) return;
  Judge judge{context, Field{section, entry.key, section + "." + entry.key}};
  if (judged_elsewhere(judge.field.path)) return;
  FieldType type = field_type(section, entry.key, types);
  const ConfigValue* at = nullptr;
  auto finding = judge.judge(type, value, &at);
  if (!finding || skipped_layer(at->where)) return;
  // A value copied by an interpolation is reported once, at its source when
  // that is a field too.
  if (at->where.value.valid() && !reported.insert(written_at(*at)).second) return;
  Diagnostic diag = make_diagnostic(kValueTypeMismatch, finding->message, location(*at));
  diag.severity = finding->severity;
  if (at->where.interpolated_at.valid() && at->where.value.valid()) {
    diag.notes.push_back(Note{"the interpolation copies this value", at->where.value});
  }
  if (!at->where.via.empty()) diag.notes.push_back(Note{"the value comes from here", at->where.via.front()});
  if (!context.job.versions.bridge_given && finding->names_release) {
    diag.notes.push_back(Note{fmt::format("Megatron Bridge {} assumed (the newest mblint knows); pass "
                                          "--bridge-version for another release",
                                          to_string(context.job.versions.bridge)),
                              {}});
  }
  add_help_and_fix(judge, value, at, *finding, diag);
  out.push_back(std::move(diag));
}

// run_recipe.py copies dataset.seq_length into model.seq_length: the copy
// is not reported again.
bool copied_value(const Job& job, const std::string& section, const MapEntry& entry) {
  if (section != "model" || entry.key != "seq_length") return false;
  const ConfigValue* dataset = find_path(job.config, "dataset.seq_length");
  return dataset && dataset->where.value.valid() && dataset->where.value == entry.value.where.value;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job) || !job.config.is_map()) return;
  std::set<Written> reported;
  AnnotationCache types;
  // Values as written first, then the copies interpolations made.
  for (bool copies : {false, true}) {
    for (const MapEntry& section : job.config.entries) {
      if (!in_scope(context, section.key)) continue;
      const SchemaField* field = find_schema_field("", section.key);
      if (!field || !section.value.is_map()) continue;
      // env_vars and other dict sections hold any key and value.
      if (section.key != "model" && section.key != "dataset" && is_free_form_field(*field)) continue;
      // A section a --config-file instantiates from _target_ may be any class
      // (in a dump every section names its standard class).
      if (find_child(section.value, "_target_") && !job.config_complete) continue;
      for (const MapEntry& entry : section.value.entries) {
        if (copied_value(job, section.key, entry) || entry.value.where.interpolated_at.valid() != copies) continue;
        check_field(context, section.key, entry, reported, types, out);
      }
    }
  }
}

}  // namespace

extern const RuleInfo kValueTypeMismatch = {
    .code = "MB009",
    .name = "value-type-mismatch",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "a value of another type than its config field declares, which Megatron Bridge sets unconverted",
    .doc = R"md(Megatron Bridge turns the recipe's ConfigContainer into a plain OmegaConf dictionary, merges the
`--config-file` YAML into it (`OmegaConf.merge`), applies the Hydra overrides in struct mode and
copies the result back onto the dataclasses with `setattr` (`_apply_overrides` in
`training/utils/omegaconf_utils.py`, called by `process_config_with_overrides` from 0.3 on; in 0.2
the example scripts such as `examples/recipes/llama/pretrain_llama3_8b.py` made the same calls).
The dictionary is not a structured config, so neither the merge nor Hydra checks or converts types
against the dataclass annotations, and `_apply_overrides` converts only two things: a string given
to a field that holds a `torch.dtype`, and (from 0.4) a string given to `activation_func`. This is
the same in every release from 0.2 through 0.6 and the development branch. A full dump loaded with
`ConfigContainer.from_yaml` (PyYAML `safe_load`) passes its values to the dataclass constructors
unconverted too. So a value keeps the type YAML or Hydra gave it:

| written | read as | field declared `int` | field declared `float` | field declared `bool` |
|---|---|---|---|---|
| `2.5`, `2.0`, `1e3` (`1e3` in a dump is a string) | float | **error** for sizes and counts; otherwise a warning for a fraction, a note for a whole number | accepted | accepted |
| `"1"`, `four`, `'1e3'` | str | **error** | **error** | `"false"`, `"no"`, `"off"`, `"0"`: warning (a non-empty string is true) |
| `true` | bool | accepted (`bool` is an `int` in Python) | accepted | accepted |
| `8` | int | accepted | accepted (an int works wherever a float does) | accepted |
| `null` | None | not reported (many fields declared `int` test `is None`) | not reported | not reported |

* A string where a number is declared: the first comparison or arithmetic with it raises
  `TypeError`. `micro_batch_size: "1"` fails in `ConfigContainer.validate` (`training/config.py` at
  the snapshot): `eval_micro_batch_size * data_parallel_size` repeats the string, and
  `eval_global_batch_size % "11111111"` raises. Error.
* A float where an int is declared: Python compares and divides floats like ints
  (`save_interval: 1e3` saves every 1000 steps), but `range()`, tensor shapes, slices and
  `torch.topk` refuse them. For the sizes and counts (every `*_parallel_size`, `micro_batch_size`,
  `global_batch_size`, `eval_*_batch_size`, `seq_length`, `num_layers`, `hidden_size`,
  `ffn_hidden_size`, `moe_ffn_hidden_size`, `num_attention_heads`, `num_query_groups`,
  `kv_channels`, `vocab_size`, `num_moe_experts`, `moe_router_topk`) that is certain: Megatron-Core
  builds its process groups with `range(world_size // group_size)` (`parallel_state.py`), runs
  `range(num_microbatches)` in the pipeline schedules (the micro-batch count is
  `global_batch_size // (micro_batch_size * dp)`, a float then), builds `range(num_layers)` layers
  and sizes tensors with the rest. Error there. Other int fields are often only compared or
  divided (`save_interval`, `lr_warmup_iters`, `train_iters`), where a whole float works like the
  int: a note; a fraction changes what the setting means (`save_interval: 2.5` saves every 5
  steps): a warning.
* `Literal` choices: nothing checks them when the value is set; the code that reads the field gets
  the value as written. A value outside the choices is a warning, and an error where that code
  raises on any other value: `scheduler.lr_decay_style` (Megatron-Core
  `optimizer_param_scheduler.py`, `get_lr`: "... decay style is not supported", at the first step
  after warm-up, in every release). The choices are those of the release given with
  `--bridge-version` and the Megatron-LM commit it pins (`lint/model/field_history.inc`, generated from
  the release tags by `tools/gen_field_history.py`): `ckpt_format: zarr` is a choice up to 0.3.1,
  `moe_flex_dispatcher_backend: ncclep` from 0.6, `lr_wsd_decay_style: minus_sqrt` from 0.4; a
  field that was a plain `str` in a release (many model fields in 0.2) is not judged for it. A
  choice only the development branch after the newest release knows is reported only when the
  release was given.
* `Optional[...]`: `null` is accepted; another value is judged by the inner type. Unions accept
  what any member accepts; lists are judged item by item (an item of the wrong type is located at
  the item); a scalar where only a list is declared is a warning.

Where a field is declared differently by several model or dataset classes (a VLM provider
redeclares `position_embedding_type: str`), a value any of them takes is accepted: mblint does not
know which class the recipe builds. Not judged: fields declared as classes, callables, tuples or
`Any`; enums (a string given to `attention_backend` is compared with the `AttnBackend` members by
Megatron-Core and matches none, while the hybrid and Qwen3-Omni providers accept the string
`"local"`: the effect depends on the provider); mappings with `_target_` (instantiated, not set);
values of the recipe (mblint's catalog) and run_recipe.py's convenience flags (typed by argparse,
see `entry-point-argument`); Hydra's `key=None` (the string "None", reported by
`override-syntax`); and the fields other rules check value by value (`cp_comm_type`,
`cuda_graph_impl`, `cuda_graph_scope`, `moe_layer_freq`, `pipeline_model_parallel_comm_backend`,
`recompute_granularity`, `recompute_method`, `recompute_modules`, `sharp_enabled_group`). A value
copied by an interpolation (or by run_recipe.py from `dataset.seq_length` to `model.seq_length`) is
reported once, where it was written when that is a field, else at the `${...}`.

The fix writes the value the text evidently means (`"1"` -> `1`, `1e3` -> `1000`, `2.0` -> `2`,
`"false"` -> `false`, the one choice within two edits of a misspelling) in the form its file reads
with that type (a dump read by PyYAML needs `1000` and `0.0003`, not `1e3` and `3e-4`); there is
none for `four` or `2.5`. Each fix is re-checked: the job with the fix applied is linted again,
and a fix that would bring a new error or warning is not offered (the help names it).)md",
    .bad = {"override.yaml", "train:\n  micro_batch_size: \"1\"\n",
     "override.yaml --recipe llama3_8b_pretrain_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "train:\n  micro_batch_size: 1\n"},
    .check = check,
    .checks = "",
    .scope = RuleScope::Section,
};

}  // namespace mblint
