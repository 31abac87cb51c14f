// NVIDIA's published layouts are valid: every parallel layout of Megatron
// Bridge's performance tables (shared/data/perf_published.csv) and of its
// performance presets at each release (perf_recipe_presets.csv) ran on NVIDIA's
// clusters, so `mblint check` with that layout, on the model's recipe, at that
// GPU count and type, must report no error. An independent reference for the
// validity checks that `plan` and `check` share: nothing here is computed by
// mblint's own formulas.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/cli/cli.h"
#include "lint/model/catalog.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

using CsvRow = std::map<std::string, std::string>;

// RFC 4180: quoted fields may hold commas, quotes ("") and newlines.
std::vector<CsvRow> read_csv(const std::filesystem::path& path) {
  std::string text = test::read_file(path);
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      records.back().push_back(std::move(field));
      field.clear();
      records.emplace_back();
    } else if (c != '\r') {
      field += c;
    }
  }
  if (!field.empty() || !records.back().empty()) records.back().push_back(field);
  if (records.back().empty()) records.pop_back();
  std::vector<CsvRow> rows;
  for (size_t r = 1; r < records.size(); ++r) {
    CsvRow row;
    for (size_t c = 0; c < records[0].size() && c < records[r].size(); ++c) row[records[0][c]] = records[r][c];
    rows.push_back(std::move(row));
  }
  return rows;
}

// A published layout: what the table states, nothing derived.
struct Layout {
  std::string source;  // where it is published
  std::string model;   // model key, "llama3_70b"
  std::string task;    // pretrain, sft, peft
  std::string gpu;     // h100, gb200, ...
  int num_gpus = 0;
  std::string recipe;  // the catalog recipe that gives the model
  // Each value as written; "" = the table leaves it to the recipe, "null" =
  // explicitly none.
  std::string tp, pp, cp, vp, ep, etp, gbs, mbs, seq, pp_layout;
};

// "n/a", "None" -> "null"; integers as written; anything else (an expression
// the preset computes) -> "" (left to the recipe).
std::string value(const std::string& text) {
  if (text == "n/a" || text == "None") return "null";
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return "";
  return text;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The GPU of "DGX-GB200" or "GB200".
std::string gpu_of(std::string system) {
  if (system.rfind("DGX-", 0) == 0) system = system.substr(4);
  return lower(system);
}

std::string task_of(const std::string& task) { return task == "lora" ? "peft" : task; }

long long recipe_pp(const Recipe& r) {
  return r.pipeline_model_parallel_size.set ? r.pipeline_model_parallel_size.value : 1;
}

long long recipe_vp(const Recipe& r) {
  return r.virtual_pipeline_model_parallel_size.set ? r.virtual_pipeline_model_parallel_size.value : 0;
}

// Whether the recipe already has the layout's PP and VP, so that whatever
// pipeline split it makes for them (a layout its code computes, which the
// catalog does not record) is the one the published run had.
bool same_pipeline(const Recipe& r, const Layout& l) {
  if (!l.pp.empty() && std::to_string(recipe_pp(r)) != l.pp) return false;
  if (l.vp.empty()) return true;
  long long vp = l.vp == "null" || l.vp == "1" ? 0 : std::stoll(l.vp);
  return recipe_vp(r) == vp || (vp == 0 && recipe_vp(r) == 1);
}

// A recipe of the catalog for the model: the same task required; then the
// same PP and VP, GPU type and GPU count, in that order of preference.
const Recipe* recipe_for(const Layout& l) {
  const Recipe* best = nullptr;
  int best_score = -1;
  for (const Recipe& r : all_recipes()) {
    if (l.model != r.model || l.task != r.task || !r.dims) continue;
    int score = (same_pipeline(r, l) ? 4 : 0) + (l.gpu == r.gpu ? 2 : 0) + (l.num_gpus == r.num_gpus ? 1 : 0);
    if (score > best_score) {
      best = &r;
      best_score = score;
    }
  }
  return best;
}

// The columns both tables share: the model, the task, the GPUs and the layout
// (the GPU type is in `gpu_column`).
Layout layout_of(const CsvRow& row, const std::string& gpu_column) {
  Layout l;
  l.model = row.at("model_key");
  l.task = task_of(row.at("task"));
  l.gpu = gpu_of(row.at(gpu_column));
  l.num_gpus = std::stoi(row.at("num_gpus"));
  l.tp = value(row.at("tp"));
  l.pp = value(row.at("pp"));
  l.cp = value(row.at("cp"));
  l.vp = value(row.at("vp"));
  l.ep = value(row.at("ep"));
  l.etp = value(row.at("etp"));
  l.gbs = value(row.at("gbs"));
  l.mbs = value(row.at("mbs"));
  l.seq = value(row.at("seq_len"));
  return l;
}

std::vector<Layout> published_layouts(const std::filesystem::path& data, std::vector<std::string>& unmatched) {
  std::vector<Layout> layouts;
  for (const CsvRow& row : read_csv(data / "perf_published.csv")) {
    Layout l = layout_of(row, "system");
    l.source = fmt::format("perf_published.csv {} {} {} {}x{} ({})", row.at("release"), row.at("model"),
                           row.at("task"), row.at("num_gpus"), row.at("system"), row.at("precision"));
    const Recipe* recipe = find_recipe(row.at("current_recipe_v060"));
    if (!recipe || !same_pipeline(*recipe, l)) recipe = recipe_for(l);
    if (!recipe) {
      unmatched.push_back(l.source + ": no recipe of model " + l.model + " in the catalog");
      continue;
    }
    l.recipe = recipe->name;
    layouts.push_back(l);
  }
  for (const CsvRow& row : read_csv(data / "perf_recipe_presets.csv")) {
    Layout l = layout_of(row, "gpu");
    l.source = fmt::format("perf_recipe_presets.csv {} {}", row.at("release"), row.at("recipe_name"));
    l.pp_layout = row.at("pp_layout");
    if (row.at("file").rfind("scripts/performance/configs/", 0) == 0) {
      // The YAML perf matrix of 25.09: what a preset leaves out is 1 (VP:
      // none), not the recipe's (scripts/performance/utils/helpers.py at
      // v0.1.0rc3, set_primary_perf_configs).
      for (std::string* size : {&l.tp, &l.pp, &l.cp, &l.ep}) {
        if (size->empty()) *size = "1";
      }
      if (l.vp.empty()) l.vp = "null";
    }
    // At 26.08 the preset is a recipe of the catalog by name.
    const Recipe* recipe = find_recipe(row.at("recipe_name"));
    if (!recipe || recipe->model != l.model || !same_pipeline(*recipe, l)) recipe = recipe_for(l);
    if (!recipe) {
      unmatched.push_back(l.source + ": no " + l.task + " recipe of model " + l.model + " in the catalog");
      continue;
    }
    l.recipe = recipe->name;
    layouts.push_back(l);
  }
  return layouts;
}

// The override that sets the published layout on the recipe. A pipeline
// split the recipe makes for its own PP (an explicit layout, uneven first and
// last stages) does not apply to another PP, so it is cleared unless the
// table gives one.
std::string override_yaml(const Layout& l, const Recipe& recipe) {
  std::string model, train, dataset;
  auto set = [](std::string& section, const char* key, const std::string& v) {
    if (!v.empty()) section += fmt::format("  {}: {}\n", key, v);
  };
  set(model, "tensor_model_parallel_size", l.tp);
  set(model, "pipeline_model_parallel_size", l.pp);
  set(model, "context_parallel_size", l.cp);
  set(model, "expert_model_parallel_size", l.ep == "null" ? "1" : l.ep);
  set(model, "expert_tensor_parallel_size", l.etp);
  bool pp_one = l.pp == "1" || (l.pp.empty() && recipe.pipeline_model_parallel_size.value <= 1);
  set(model, "virtual_pipeline_model_parallel_size", pp_one || l.vp == "1" ? "null" : l.vp);
  if (!l.pp_layout.empty()) {
    model += fmt::format("  pipeline_model_parallel_layout: \"{}\"\n", l.pp_layout);
  } else if (!same_pipeline(recipe, l) && recipe.pipeline_layout_builder) {
    // The recipe's layout builder computes the split for the new PP and VP
    // (run_recipe.py's sync_model_pipeline_layout; the performance scripts
    // call the same builder): unknown to mblint, as in a real launch.
    model += "  pipeline_model_parallel_layout: ${oc.env:LAYOUT_FROM_RECIPE_BUILDER}\n";
  } else if (!same_pipeline(recipe, l)) {
    if (*recipe.pipeline_model_parallel_layout) model += "  pipeline_model_parallel_layout: null\n";
    if (recipe.num_layers_in_first_pipeline_stage.set) model += "  num_layers_in_first_pipeline_stage: null\n";
    if (recipe.num_layers_in_last_pipeline_stage.set) model += "  num_layers_in_last_pipeline_stage: null\n";
  }
  // The flex dispatcher's backend is chosen per GPU (Bridge's
  // training/flex_dispatcher_backend.py); a recipe of another GPU does not
  // carry its choice over, and the tables do not give one.
  if (l.gpu != recipe.gpu && *recipe.moe_flex_dispatcher_backend) model += "  moe_flex_dispatcher_backend: null\n";
  // Bridge's performance scripts turn sequence parallelism on exactly when
  // TP > 1 (scripts/performance/utils/helpers.py at v0.1.0rc3;
  // PerfSettings.sequence_parallel in utils.py at v0.6.0); the tables do not
  // list it.
  long long tp = l.tp.empty() ? recipe.tensor_model_parallel_size.value : std::stoll(l.tp);
  model += fmt::format("  sequence_parallel: {}\n", tp > 1 ? "true" : "false");
  set(model, "seq_length", l.seq);
  set(dataset, "seq_length", l.seq);
  set(train, "global_batch_size", l.gbs);
  set(train, "micro_batch_size", l.mbs);
  std::string text;
  if (!model.empty()) text += "model:\n" + model;
  if (!train.empty()) text += "train:\n" + train;
  if (!dataset.empty()) text += "dataset:\n" + dataset;
  return text.empty() ? "train: {}\n" : text;
}

std::vector<std::string> errors_of(const Layout& l, const std::filesystem::path& dir) {
  const Recipe* recipe = find_recipe(l.recipe);
  std::ofstream(dir / "job.yaml") << override_yaml(l, *recipe);
  const GpuType* gpu = find_gpu(l.gpu);
  REQUIRE(gpu != nullptr);
  int per_node = l.num_gpus % gpu->gpus_per_node == 0 ? gpu->gpus_per_node : l.num_gpus;
  std::vector<std::string> args = {"check",   "job.yaml", "--recipe", l.recipe, "--nodes",
                                   std::to_string(l.num_gpus / per_node), "--gpus-per-node",
                                   std::to_string(per_node), "--gpu", l.gpu, "--format", "json"};
  test::CliRun run = test::run_mblint(args, dir);
  INFO(run.err);
  REQUIRE(run.code != kExitUsage);
  REQUIRE(run.code != kExitInternal);
  std::vector<std::string> errors;
  nlohmann::json document = nlohmann::json::parse(run.out);
  for (const auto& d : document["diagnostics"]) {
    if (d["severity"] == "error") errors.push_back(fmt::format("[{}] {}", d["rule"].get<std::string>(),
                                                               d["message"].get<std::string>()));
  }
  return errors;
}

// Why the layout cannot be rebuilt on its recipe: the recipe's code computes
// the pipeline split for its own PP and VP (the catalog records "?"), and the
// table gives neither that split nor a recipe with the same PP and VP.
std::string not_checkable(const Layout& l) {
  const Recipe& recipe = *find_recipe(l.recipe);
  if (same_pipeline(recipe, l) || !l.pp_layout.empty()) return "";
  bool computed = std::string(recipe.pipeline_model_parallel_layout) == "?" ||
                  !recipe.num_layers_in_first_pipeline_stage.certain || !recipe.num_layers_in_last_pipeline_stage.certain;
  return computed ? fmt::format("{} computes its pipeline split in code for PP {}, VP {}; the table gives none for PP {}, VP {}",
                                l.recipe, recipe_pp(recipe), recipe_vp(recipe), l.pp, l.vp)
                  : "";
}

// Published layouts Megatron would refuse as written, checked against the
// source: genuine upstream problems, not mblint's. A rejected layout is
// excused by an entry whose `source` starts one of the places it is
// published and whose rules cover every error; an entry that no longer
// excuses anything is stale and fails the test.
struct KnownRejected {
  std::string_view source;
  std::vector<std::string_view> rules;
  std::string_view evidence;
};

const KnownRejected kKnownRejected[] = {
    {"perf_published.csv 25.09 DeepSeekV3 (tokendrop) pretrain 256xDGX-GB200 (MXFP8)",
     {"expert-world-size-divisibility"},
     "read from the parenthesised values of a combined row of docs/performance-summary-archive.md (25.09): "
     "TP 1, PP 8, VP 2, EP 64 needs a multiple of 1 x 64 x 8 = 512 GPUs, not 256; the dataset marks its PP and VP "
     "as not the recipe's of that release"},
    {"perf_recipe_presets.csv 26.08 deepseek_v3_pretrain_256gpu_gb",
     {"pipeline-layout-mismatch"},
     "Megatron-Bridge @067f987 src/megatron/bridge/perf_recipes/deepseek/gb200/deepseek_v3.py: "
     "deepseek_v3_pretrain_256gpu_gb200_fp8mx_partial_cg_dev_config (and its GB300 twin in gb300/deepseek_v3.py) "
     "sets PP 4, VP 2 and the explicit layout \"Et*4|(tttt|)*14tmL\" of 16 stages: 16 / PP 4 = 4 virtual stages, and "
     "Megatron-Core's TransformerConfig asserts \"virtual_pipeline_model_parallel_size conflicts with "
     "pipeline_model_parallel_layout\""},
    {"perf_published.csv 25.04.rc2 LLAMA3-8B pretrain",
     {"global-batch-divisibility"},
     "NeMo's long-context table (performance_long_sequence.md): TP x PP x CP x DP does not make its GPU count (the "
     "dataset flags TPxPPxDPxCP!=num_gpus) and no MBS is given; its GBS is below the data-parallel size its TP and "
     "CP leave"},
    {"perf_recipe_presets.csv 25.09 qwen3_30b_a3b_llm_pretrain.yaml:perf_matrix.b200.num_gpus_8",
     {"expert-world-size-divisibility", "layers-divisible-by-pp"},
     "scripts/performance/configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml at v0.1.0rc3 gives PP 8, VP 12, EP 8 on 8 "
     "B200s: the expert grid needs 1 x 8 x 8 = 64 GPUs and 48 layers / PP 8 = 6 do not split into 12 virtual "
     "stages; r0.1.0 corrected it to PP 1"},
    // Before the 26.04 entry: a layout both releases publish is excused by the later entry.
    {"perf_recipe_presets.csv 26.08 qwen35_vl_397b_a17b_pretrain_",
     {"layers-divisible-by-pp"},
     "Megatron-Bridge @067f987 perf_recipes/qwen_vl/{gb200,b200,h100}/qwen35_vl.py keep the PP 8 of the 26.04 presets "
     "for the 60-layer 397B-A17B (tests/acceptance_recipes_test.cpp lists the recipes)"},
    {"perf_recipe_presets.csv 26.04 QWEN35_VL_397B_A17B_PRETRAIN_CONFIG_",
     {"layers-divisible-by-pp"},
     "scripts/performance/configs/qwen_vl/qwen35_vl_workload_base_configs.py (26.04 to 26.06.01) gives Qwen3.5-VL "
     "397B-A17B PP 8 on GB200, B200 and H100 (VP 4 on the latter two) with no uneven split or layout: its 60 decoder "
     "layers (Bridge's qwen35_vl_provider.py \"60 layers: 15 groups\", test_qwen35_bridge.py) give 7.5 a stage, and "
     "Megatron-Core's get_num_layers_to_build asserts \"num_layers=60 should be divisible by "
     "pipeline_model_parallel_size=8\" (transformer_block.py, at the 2a75ac12c5 Bridge pins and at HEAD); no Qwen3.5 "
     "run is in the published performance tables"},
    {"perf_recipe_presets.csv 26.04 QWEN35_VL_122B_A10B_PRETRAIN_CONFIG_H100",
     {"layers-divisible-by-pp"},
     "qwen35_vl_workload_base_configs.py (26.04 to 26.06.01) gives Qwen3.5-VL 122B-A10B on H100 PP 8 and VP 4: 48 "
     "layers / 8 = 6 a stage, not 4 chunks; Bridge @067f987 sets VP 2 instead, and its "
     "tests/unit_tests/scripts/performance/test_qwen35_vl_workload_base_configs.py asserts (48 // PP) % VP == 0"},
    {"perf_recipe_presets.csv 26.04 QWEN35_VL_35B_A3B_PRETRAIN_CONFIG_H100",
     {"layers-divisible-by-pp"},
     "qwen35_vl_workload_base_configs.py (26.04 to 26.06.01) gives Qwen3.5-VL 35B-A3B on H100 PP 2 and VP 12: 40 "
     "layers / 2 = 20 a stage, not 12 chunks (Bridge's GPTModelProvider.provide asserts \"Make sure the number of "
     "model chunks is the same across all pipeline stages\"); Bridge @067f987 gives the BF16 recipe 17 + 23 layers "
     "without VP, the FP8 recipe keeps PP 2 x VP 12 (tests/acceptance_recipes_test.cpp)"},
    {"perf_recipe_presets.csv 26.08 qwen3_vl_235b_a22b_pretrain_256gpu_h100_",
     {"layers-divisible-by-pp"},
     "Megatron-Bridge @067f987 perf_recipes/qwen_vl/h100/qwen3_vl.py sets PP 8 and VP 4 for the 94-layer "
     "Qwen3-VL-235B-A22B with no uneven split, layout or account_for_* flag (tests/acceptance_recipes_test.cpp "
     "lists the recipes)"},
    {"perf_recipe_presets.csv 26.04 QWEN3_VL_235B_A22B_PRETRAIN_CONFIG_H100_",
     {"layers-divisible-by-pp"},
     "scripts/performance/configs/qwen_vl/qwen3_vl_workload_base_configs.py gives Qwen3-VL 235B-A22B on H100 PP 8 and "
     "VP 4 from 26.02 to 26.06.01. At 26.02 and 26.02.01 (21b02e0cf, 9c9dd8489) the recipe it built on, "
     "recipes/qwen_vl/qwen3_vl.py qwen3_vl_235b_a22b_pretrain_config, set account_for_embedding_in_pipeline_split "
     "and account_for_loss_in_pipeline_split: 94 + 2 = 96 = 8 stages x 4 chunks x 3, valid then (rebuilt on "
     "@067f987's recipe, which dropped both, it is rejected). From 26.04 (0fbfe7d3e, 533fc961f) the script builds "
     "on qwen3_vl_235b_a22b_pretrain_mock_config, which sets neither and no uneven split: 94 = 8 x 11 + 6, and "
     "Megatron-Core's get_num_layers_to_build asserts \"num_layers=94 should be divisible by "
     "config.pipeline_model_parallel_size=8\"; no Qwen3-VL run is in the published performance tables"},
    {"perf_recipe_presets.csv 26.04 QWEN3_VL_235B_A22B_PRETRAIN_CONFIG_B200_",
     {"layers-divisible-by-pp"},
     "qwen3_vl_workload_base_configs.py gives Qwen3-VL 235B-A22B on B200 PP 8 and VP 4 from 26.02 to 26.04: valid at "
     "26.02 and 26.02.01, whose recipe set both account_for_* flags (94 + 2 = 96 = 8 x 4 x 3), not at 26.04 "
     "(0fbfe7d3e), whose mock recipe sets neither and whose B200 script no uneven split: 94 % 8 = 6; 26.04.01 "
     "(c81012934) gives B200 10 first and 12 last layers without VP, which builds"},
};

// The rule a catalog consistency note names (as acceptance_recipes_test reads them).
std::string_view rule_of_note(std::string_view note) {
  if (note.rfind("world", 0) == 0) return "expert-world-size-divisibility";
  if (note.rfind("GBS", 0) == 0) return "global-batch-divisibility";
  return "";
}

std::string rule_of(const std::string& error) { return error.substr(1, error.find(']') - 1); }

std::string key_of(const Layout& l) {
  return fmt::format("{} {} {} {} tp{} pp{} cp{} vp{} ep{} etp{} gbs{} mbs{} seq{} layout{}", l.recipe, l.gpu,
                     l.num_gpus, l.task, l.tp, l.pp, l.cp, l.vp, l.ep, l.etp, l.gbs, l.mbs, l.seq, l.pp_layout);
}

}  // namespace

TEST_CASE("NVIDIA's published layouts pass mblint's validity checks", "[plan][published][shared]") {
  auto shared = test::shared_or_skip("the published layouts");
  if (!shared) return;
  std::vector<std::string> unmatched;
  std::vector<Layout> layouts = published_layouts(*shared / "data", unmatched);
  std::filesystem::path dir = test::make_temp_dir("mblint-published");
  std::map<std::string, std::vector<std::string>> checked;  // layout -> errors
  std::map<std::string, std::vector<std::string>> sources;  // layout -> where published
  std::map<std::string, std::string> overrides;             // layout -> the override checked
  std::map<std::string, std::string> unjudged;              // layout -> why it cannot be rebuilt
  for (const Layout& l : layouts) {
    std::string key = key_of(l);
    sources[key].push_back(l.source);
    if (checked.count(key) || unjudged.count(key)) continue;
    if (std::string why = not_checkable(l); !why.empty()) {
      unjudged[key] = why;
      continue;
    }
    {
      checked[key] = errors_of(l, dir);
      overrides[key] = test::read_file(dir / "job.yaml");
    }
  }
  std::ostringstream report;
  size_t rejected = 0, noted = 0;
  std::vector<std::string> unexplained;
  std::set<const KnownRejected*> used;
  // MBLINT_PUBLISHED_VERBOSE=1 lists the accepted layouts too, with their override.
  const bool verbose = std::getenv("MBLINT_PUBLISHED_VERBOSE") != nullptr;
  for (const auto& entry : checked) {
    const std::string& key = entry.first;
    const std::vector<std::string>& errors = entry.second;  // a lambda below captures it
    if (verbose && errors.empty()) report << "accepted: " << key << "\n" << overrides[key];
    if (errors.empty()) continue;
    ++rejected;
    report << "rejected: " << key << "\n    published: " << sources[key].front();
    if (sources[key].size() > 1) report << " and " << sources[key].size() - 1 << " more";
    report << "\n";
    for (const std::string& e : errors) report << "    " << e << "\n";
    auto covered = [&](const std::vector<std::string_view>& rules) {
      return std::all_of(errors.begin(), errors.end(), [&](const std::string& e) {
        return std::find(rules.begin(), rules.end(), rule_of(e)) != rules.end();
      });
    };
    // NVIDIA's recipe as shipped, which the catalog already records as inconsistent.
    const char* note = find_recipe(key.substr(0, key.find(' ')))->consistency_note;
    if (note && *note && covered({rule_of_note(note)})) {
      ++noted;
      report << "    upstream: the catalog notes this recipe as inconsistent: " << note << "\n";
      continue;
    }
    const KnownRejected* known = nullptr;
    for (const KnownRejected& k : kKnownRejected) {
      for (const std::string& where : sources[key]) {
        if (where.rfind(k.source, 0) == 0 && covered(k.rules)) known = &k;
      }
    }
    if (known) {
      used.insert(known);
      report << "    upstream: " << known->evidence << "\n";
      continue;
    }
    unexplained.push_back(key + ": " + errors.front());
  }
  for (const auto& [key, why] : unjudged) report << "not judged: " << key << "\n    " << why << "\n";
  report << layouts.size() << " published rows, " << checked.size() + unjudged.size() << " distinct layouts: "
         << checked.size() << " checked, " << rejected << " rejected (" << noted
         << " recipes the catalog notes as inconsistent upstream, " << rejected - noted - unexplained.size()
         << " other upstream errors with evidence, " << unexplained.size() << " unexplained), " << unjudged.size()
         << " not judged (pipeline split unknown); " << unmatched.size() << " rows without a recipe of their model:\n";
  for (const std::string& u : std::set<std::string>(unmatched.begin(), unmatched.end())) report << "  " << u << "\n";
  WARN(report.str());
  CHECK(layouts.size() >= 2000);
  CHECK(checked.size() >= 500);
  // Each rejection is mblint's bug until shown to be upstream's.
  for (const std::string& u : unexplained) FAIL_CHECK("published layout rejected: " << u);
  for (const KnownRejected& k : kKnownRejected) {
    INFO(k.source);
    for (std::string_view rule : k.rules) CHECK(find_rule(all_rules(), rule) != nullptr);
    if (!used.count(&k)) FAIL_CHECK("stale excuse: no published layout it names is rejected any more");
  }
  std::filesystem::remove_all(dir);
}
