// `mblint recipes [PATTERN]`: the recipes in mblint's catalog, so a user can
// find the name to pass as --recipe. A pattern with `*`, `?` or `[` is a
// glob over the whole name; otherwise a case-insensitive substring of the
// name, the model or a legacy short name.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/base/file_walk.h"
#include "lint/cli/cli.h"
#include "lint/command_line/command_line.h"
#include "lint/model/catalog.h"

namespace mblint {

namespace {

cxxopts::Options recipes_options() {
  cxxopts::Options options("mblint recipes",
                           "List the Megatron Bridge recipes mblint knows (the names --recipe takes).");
  options.custom_help("[options]");
  options.positional_help("[PATTERN]");
  options.add_options()
      ("format", "output format: text or json", cxxopts::value<std::string>()->default_value("text"))
      ("h,help", "show this help")
      ("pattern", "a substring of the name, model or short name, or a glob over the name",
       cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"pattern"});
  return options;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_glob(std::string_view pattern) { return pattern.find_first_of("*?[") != std::string_view::npos; }

// The legacy short names that resolve to `recipe`.
std::vector<std::string> aliases_of(const Recipe& recipe) {
  std::vector<std::string> out;
  for (const RecipeAlias& alias : all_recipe_aliases()) {
    if (std::string_view(alias.canonical) == recipe.name) out.emplace_back(alias.alias);
  }
  return out;
}

bool matches(const Recipe& recipe, const std::vector<std::string>& aliases, std::string_view pattern) {
  if (pattern.empty()) return true;
  if (is_glob(pattern)) {
    if (glob_match(pattern, recipe.name)) return true;
    return std::any_of(aliases.begin(), aliases.end(), [&](const std::string& a) { return glob_match(pattern, a); });
  }
  std::string needle = lower(pattern);
  auto has = [&](std::string_view text) { return lower(text).find(needle) != std::string::npos; };
  if (has(recipe.name) || has(recipe.model)) return true;
  return std::any_of(aliases.begin(), aliases.end(), has);
}

// A parallel size as the recipe leaves it: unset is Megatron's default 1;
// a value set only inside a branch of the recipe is not known ("?").
std::string size_text(const RecipeInt& size) {
  if (!size.certain) return "?";
  return std::to_string(size.set ? size.value : 1);
}

nlohmann::ordered_json size_json(const RecipeInt& size) {
  if (!size.certain) return nullptr;
  return size.set ? size.value : 1;
}

std::string layout_text(const Recipe& r) {
  return fmt::format("{}x{}x{}x{}", size_text(r.tensor_model_parallel_size), size_text(r.pipeline_model_parallel_size),
                     size_text(r.context_parallel_size), size_text(r.expert_model_parallel_size));
}

std::string gpus_text(const Recipe& r) {
  if (r.num_gpus <= 0) return std::string(r.gpu);
  return fmt::format("{} {}", r.num_gpus, r.gpu);
}

nlohmann::ordered_json recipe_json(const Recipe& r, const std::vector<std::string>& aliases) {
  auto optional_int = [](const RecipeInt& v) -> nlohmann::ordered_json {
    if (!v.certain || !v.set) return nullptr;
    return v.value;
  };
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["kind"] = r.kind;
  j["model"] = r.model;
  j["task"] = r.task;
  j["gpu"] = r.gpu;
  j["num_gpus"] = r.num_gpus > 0 ? nlohmann::ordered_json(r.num_gpus) : nlohmann::ordered_json(nullptr);
  j["precision"] = r.precision;
  j["tp"] = size_json(r.tensor_model_parallel_size);
  j["pp"] = size_json(r.pipeline_model_parallel_size);
  j["cp"] = size_json(r.context_parallel_size);
  j["ep"] = size_json(r.expert_model_parallel_size);
  // VPP unset means no interleaving: null, as in Megatron.
  j["vpp"] = optional_int(r.virtual_pipeline_model_parallel_size);
  j["seq_length"] = optional_int(r.seq_length);
  j["global_batch_size"] = optional_int(r.global_batch_size);
  j["micro_batch_size"] = optional_int(r.micro_batch_size);
  j["module"] = r.module;
  j["aliases"] = aliases;
  return j;
}

void print_table(std::ostream& out, const std::vector<const Recipe*>& shown) {
  size_t name_width = 4, model_width = 5, gpus_width = 4, precision_width = 9;
  for (const Recipe* r : shown) {
    name_width = std::max(name_width, std::string_view(r->name).size());
    model_width = std::max(model_width, std::string_view(r->model).size());
    gpus_width = std::max(gpus_width, gpus_text(*r).size());
    precision_width = std::max(precision_width, std::string_view(r->precision).size());
  }
  auto row = [&](std::string_view name, std::string_view kind, std::string_view model, std::string_view gpus,
                 std::string_view precision, std::string_view layout) {
    out << fmt::format("{:<{}}  {:<7}  {:<{}}  {:<{}}  {:<{}}  {}\n", name, name_width, kind, model, model_width,
                       gpus, gpus_width, precision, precision_width, layout);
  };
  row("name", "kind", "model", "GPUs", "precision", "TPxPPxCPxEP");
  for (const Recipe* r : shown) row(r->name, r->kind, r->model, gpus_text(*r), r->precision, layout_text(*r));
}

}  // namespace

int run_recipes(const std::vector<std::string>& args, RuleSet, const CliEnvironment& env) {
  cxxopts::Options parser = recipes_options();
  cxxopts::ParseResult parsed;
  if (auto stop = parse_command(parser, args, parsed, env)) return *stop;
  std::string format = parsed["format"].as<std::string>();
  if (format != "text" && format != "json") return usage_error(env, "recipes --format takes text or json");
  std::string pattern;
  if (parsed.count("pattern")) {
    auto patterns = parsed["pattern"].as<std::vector<std::string>>();
    if (patterns.size() > 1) return usage_error(env, "recipes takes one PATTERN (quote a glob: 'llama3_*')");
    pattern = patterns.front();
  }

  std::vector<const Recipe*> shown;
  std::vector<std::vector<std::string>> shown_aliases;
  for (const Recipe& recipe : all_recipes()) {
    std::vector<std::string> aliases = aliases_of(recipe);
    if (!matches(recipe, aliases, pattern)) continue;
    shown.push_back(&recipe);
    shown_aliases.push_back(std::move(aliases));
  }
  if (format == "json") {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (size_t i = 0; i < shown.size(); ++i) list.push_back(recipe_json(*shown[i], shown_aliases[i]));
    nlohmann::ordered_json document;
    document["version"] = 1;
    document["recipes"] = std::move(list);
    env.out << document.dump(2) << '\n';
    return shown.empty() ? kExitFindings : kExitClean;
  }
  if (shown.empty()) {
    env.err << fmt::format("mblint: no catalogued recipe matches '{}' (a substring of the name or model, or a glob "
                           "such as 'llama3_*_pretrain_*')\n",
                           pattern);
    return kExitFindings;
  }
  print_table(env.out, shown);
  return kExitClean;
}

}  // namespace mblint
