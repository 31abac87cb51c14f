#include "rules/support/moe_support.h"

#include <algorithm>
#include <cmath>

#include "rules/support/config_support.h"
#include "rules/support/runtime_support.h"

namespace mblint::moe {

namespace {

void push_unique(Diagnostic& d, Note note) {
  bool duplicate = std::any_of(d.notes.begin(), d.notes.end(), [&](const Note& n) {
    return n.message == note.message && n.where == note.where;
  });
  if (!duplicate) d.notes.push_back(std::move(note));
}

}  // namespace

std::optional<int64_t> Field::integer() const { return known() ? as_int(&value) : std::nullopt; }
std::optional<double> Field::number() const { return known() ? as_number(&value) : std::nullopt; }
std::optional<bool> Field::boolean() const { return known() ? as_bool(&value) : std::nullopt; }
std::optional<std::string> Field::text() const { return known() ? as_string(&value) : std::nullopt; }

std::optional<bool> Field::truthy() const {
  if (!known()) return std::nullopt;
  switch (value.kind) {
    case ValueKind::Null: return false;
    case ValueKind::Bool: return value.boolean;
    case ValueKind::Int: return value.integer != 0;
    case ValueKind::Float: return value.real != 0.0;
    case ValueKind::String: return !value.text.empty();
    case ValueKind::List: return !value.items.empty();
    case ValueKind::Map: return !value.entries.empty();
    case ValueKind::Unknown: return std::nullopt;
  }
  return std::nullopt;
}

std::string Field::display() const {
  if (!present) return "unknown";
  if (!shown.empty()) return shown;
  if (value.kind == ValueKind::String) return value.text;
  if (value.is_null() && defaulted) return "None";  // a Python default
  if (value.kind == ValueKind::Float && std::floor(value.real) == value.real && std::abs(value.real) < 1e15) {
    return fmt::format("{:.1f}", value.real);  // 1.0 stays a float
  }
  return to_display(value);
}

namespace {

// validate_args unwraps one-element lists of these before the model config sees them.
bool unwrapped_by_validate_args(const Job& job, std::string_view path) {
  return job.dialect == Dialect::MegatronLM &&
         (path == "model.moe_router_load_balancing_type" || path == "model.moe_aux_loss_coeff");
}

}  // namespace

// The policy is read_setting's; a Field adds how its default reads in notes.
Field read_field(const Job& job, std::string_view path) {
  Field f;
  f.path = std::string(path);
  f.name = last_segment(path);
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = setting.node();
  if (!node) {
    f.value = make_unknown("");
    return f;
  }
  f.value = *node;
  if (unwrapped_by_validate_args(job, path) && node->is_list() && node->items.size() == 1) {
    f.value = node->items.front();
  }
  f.present = true;
  f.source = setting.source;
  if (setting.source == SettingSource::DataclassDefault) {
    f.default_from = "the dataclass default";
  } else if (setting.source == SettingSource::ArgparseDefault) {
    f.default_from = "the Megatron-LM default";
  } else if (node->where.layer == Layer::SchemaDefault) {
    f.default_from = node->where.origin.empty() ? "the default" : node->where.origin;
  }
  f.defaulted = !f.default_from.empty();
  return f;
}

Field from_quantity(const Quantity& quantity) {
  Field f;
  f.name = quantity.name;
  f.path = quantity.path;
  f.value = quantity.value ? make_int(*quantity.value, quantity.where) : make_unknown("", quantity.where);
  f.present = quantity.known() || primary_span(quantity.where).valid();
  f.defaulted = quantity.defaulted || quantity.where.layer == Layer::SchemaDefault;
  if (f.defaulted) f.default_from = quantity.where.origin.empty() ? "the default" : quantity.where.origin;
  f.how = quantity.how;
  f.shown = quantity.display;
  return f;
}

namespace {

// A typed reading that names, locates and marks defaulted as the field does;
// its value is the caller's to read.
template <typename Reading>
Reading reading_of(const Field& field) {
  Reading r;
  r.name = field.name;
  r.path = field.path;
  r.where = field.value.where;
  r.defaulted = field.defaulted;
  return r;
}

}  // namespace

Quantity as_quantity(const Field& field) {
  auto q = reading_of<Quantity>(field);
  q.value = field.integer();
  if (!q.value || field.value.kind != ValueKind::Int) q.display = field.display();
  return q;
}

Setting as_setting(const Field& field) {
  auto s = reading_of<Setting>(field);
  s.value = field.boolean();
  return s;
}

Span span_for(const Field& field) { return field.present ? primary_span(field.value.where) : Span{}; }

bool located(const Field& field) { return span_for(field).valid(); }

Note note_for(const Field& field) {
  const Provenance& where = field.value.where;
  Span span = span_for(field);
  if (where.layer == Layer::Recipe && !where.origin.empty()) return Note{where.origin, span};
  if (!field.how.empty()) return Note{field.how, span};
  if (field.defaulted || !span.valid()) {
    std::string from = field.default_from.empty() ? "the default" : field.default_from;
    if (!field.defaulted && !where.origin.empty()) return Note{where.origin, span};
    return Note{fmt::format("{} is {} ({})", field.name, field.display(), from), span};
  }
  if (where.layer == Layer::Rewrite && !where.origin.empty()) return Note{where.origin, span};
  return Note{fmt::format("{} set to {} here", field.name, field.display()), span};
}

const Field& most_specific(std::initializer_list<const Field*> fields) {
  const Field* best = *fields.begin();
  for (const Field* f : fields) {
    if (located(*f) && (!located(*best) || layer_rank(f->value.where.layer) > layer_rank(best->value.where.layer))) {
      best = f;
    }
  }
  return *best;
}

void add_field_notes(Diagnostic& d, std::initializer_list<const Field*> fields, const Field* primary) {
  if (primary && located(*primary)) {
    Quantity q = as_quantity(*primary);
    Diagnostic scratch;
    scratch.where = d.where;
    add_notes(scratch, {&q}, &q);  // only the `$VAR` / interpolation chain of the primary value
    for (Note& note : scratch.notes) push_unique(d, std::move(note));
  }
  for (const Field* f : fields) {
    if (f == primary || !f->present) continue;
    if (!located(*f)) {
      push_unique(d, note_for(*f));
      continue;
    }
    push_unique(d, note_for(*f));
    Quantity q = as_quantity(*f);
    Diagnostic scratch;
    scratch.where = d.where;
    add_notes(scratch, {&q}, &q);
    for (Note& note : scratch.notes) push_unique(d, std::move(note));
  }
}

Diagnostic diagnostic_at(const RuleInfo& rule, std::string message, std::initializer_list<const Field*> fields) {
  const Field& primary = most_specific(fields);
  Diagnostic d = make_diagnostic(rule, std::move(message), span_for(primary));
  add_field_notes(d, fields, located(primary) ? &primary : nullptr);
  return d;
}

Fix set_field_fix(const Field& field, std::string replacement, FixSafety safety) {
  Fix fix;
  fix.description = fmt::format("set {} to {}", field.name, replacement);
  fix.safety = safety;
  if (field.present && !field.defaulted) edit_or_set(fix, field.value.where, field.path, replacement);
  if (!field.path.empty()) fix.changes.push_back(SettingChange{field.path, replacement});  // for the re-check
  return fix;
}

bool runs_validate_args(const Job& job) { return job.dialect == Dialect::MegatronLM; }

bool is_moe(const Derived& d) { return d.num_moe_experts.known() && *d.num_moe_experts > 0; }

namespace {

// A preset name, read with Bridge's preset table (runtime_support's
// effective_precision, the one place the presets are written down).
ComputePrecision from_preset(const Job& job, const ConfigValue& node) {
  Precision effective = effective_precision(job);
  if (!effective.bf16.value || !effective.fp16.value) return ComputePrecision{};  // not a preset mblint knows
  ComputePrecision p;
  p.bf16 = effective.bf16.value;
  p.fp16 = effective.fp16.value;
  p.quantized = effective.fp8.is_set() || effective.fp4.is_set();
  p.describe = fmt::format("mixed_precision {}", node.text);
  p.where = node.where;
  return p;
}

ComputePrecision from_fields(const Field& bf16, const Field& fp16, const Field& fp8, const Field& fp4) {
  ComputePrecision p;
  p.bf16 = bf16.boolean();
  p.fp16 = fp16.boolean();
  if (fp8.known() && fp4.known()) p.quantized = !fp8.is_null() || !fp4.is_null();
  p.describe = fmt::format("{} {} and {} {}", bf16.path, bf16.display(), fp16.path, fp16.display());
  const Field& decided = bf16.boolean().value_or(false) ? bf16 : fp16.boolean().value_or(false) ? fp16 : bf16;
  p.where = decided.value.where;
  p.defaulted = decided.defaulted;
  return p;
}

}  // namespace

ComputePrecision model_precision(const Job& job) {
  const ConfigValue* mp = find_path(job.config, "mixed_precision");
  if (mp && mp->kind == ValueKind::String) return from_preset(job, *mp);
  if (mp && mp->is_map()) {
    return from_fields(read_field(job, "mixed_precision.bf16"), read_field(job, "mixed_precision.fp16"),
                       read_field(job, "mixed_precision.fp8"), read_field(job, "mixed_precision.fp4"));
  }
  bool no_mixed_precision = (mp && mp->is_null()) || (!mp && (job.config_complete || job.dialect != Dialect::Bridge));
  if (!no_mixed_precision) return ComputePrecision{};
  return from_fields(read_field(job, "model.bf16"), read_field(job, "model.fp16"), read_field(job, "model.fp8"),
                     read_field(job, "model.fp4"));
}

Note note_for(const ComputePrecision& precision) {
  Span span = primary_span(precision.where);
  if (precision.where.layer == Layer::Recipe && !precision.where.origin.empty()) {
    return Note{precision.where.origin, span};
  }
  if (precision.defaulted || !span.valid()) return Note{fmt::format("{} (the defaults)", precision.describe), {}};
  return Note{fmt::format("the model trains in {}: {}", precision.bf16.value_or(false) ? "bf16"
                                                          : precision.fp16.value_or(false) ? "fp16"
                                                                                           : "fp32",
                          precision.describe),
              span};
}

Switch overlap_switch(const Job& job, std::string_view field) {
  Switch s;
  Field user = read_field(job, fmt::format("comm_overlap.{}", field));
  Field model = read_field(job, fmt::format("model.{}", field));
  if (job.dialect == Dialect::Bridge) {
    // What the recipe is known to leave is the outcome without a value
    // written anywhere, not a comm_overlap value: the model's value may stand.
    if (user.source == SettingSource::RecipeLeaves) {
      user.present = false;
      user.value = make_unknown("");
    }
    if (auto on = user.boolean()) {
      s.value = on;
      s.from = user;
      return s;
    }
    if (user.present && !user.is_null()) return s;  // written, but unknown
    const ConfigValue* section = find_path(job.config, "comm_overlap");
    bool no_section = (section && section->is_null()) || (!section && job.config_complete);
    // A full dump, or the recipe's own CommOverlapConfig (the catalog records
    // every field the recipe sets; the rest keep the dataclass defaults).
    bool has_section =
        section && section->is_map() && (job.config_complete || section->where.layer == Layer::Recipe);
    if (has_section) {
      s.value = false;  // CommOverlapConfig.setup() writes False unless the comm_overlap value is set
      s.from = model;
      return s;
    }
    if (!no_section) {
      if (model.boolean() == false) {
        s.value = false;
        s.from = model;
      }
      return s;
    }
  }
  s.value = model.boolean();
  s.from = model;
  return s;
}

NvlinkDomain nvlink_domain(const Job& job, const Derived& d) {
  NvlinkDomain domain{d.nvlink_domain, false};
  // A GPU type given for this job wins; one inferred from the recipe's name
  // yields to the job's own NVLINK_DOMAIN_SIZE.
  bool from_recipe_name = job.recipe && primary_span(job.cluster.gpu_where) == primary_span(job.recipe_where);
  if (d.gpu && !from_recipe_name) return domain;
  EnvLookup env = lookup_env(job, "NVLINK_DOMAIN_SIZE");
  if (std::optional<int64_t> size = env_int(env); size && *size > 0) {
    domain.size.value = *size;
    domain.size.where = Provenance{};
    domain.size.where.value = primary_span(env.where);
    domain.size.how = fmt::format("NVLINK_DOMAIN_SIZE={} ({})", *size, env_source(job, env));
    return domain;
  }
  domain.assumed = !d.gpu;
  return domain;
}

}  // namespace mblint::moe
