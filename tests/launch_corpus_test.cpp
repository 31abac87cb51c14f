// Acceptance of `mblint resolve` on ../shared/corpus/launch-scripts: ~100
// real launch scripts with a hand-checked truth.json (what a careful reader
// determines statically). Per field: correct, unknown (mblint says it does
// not know) and wrong; a value where the truth is null (it depends on the
// environment) is a guess, counted apart. Every document is checked against
// the JSON contract. Prints the table and holds the figures measured when
// the floors were set.
//
// Targets of issue 15 (the work on following hand-offs aims at them):
// launches found >= 95%, correct >= 90% of known values, wrong <= 2%.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/cli/cli.h"
#include "rules/registry.h"
#include "tests/resolve_contract.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

using namespace mblint;
using nlohmann::json;

namespace {

const std::vector<std::string> kFields = {"nodes",      "gpus_per_node", "tp",          "pp",
                                          "cp",         "ep",            "vpp",         "num_layers",
                                          "hidden_size", "seq_length",   "micro_batch_size", "global_batch_size"};

// A setting's value as truth.json spells it; nullopt when mblint does not
// know it (absent from settings).
std::optional<int64_t> setting(const json& job, const std::string& key) {
  if (!job["settings"].contains(key)) return std::nullopt;
  const json& value = job["settings"][key]["value"];
  if (value.is_number_integer()) return value.get<int64_t>();
  return std::nullopt;
}

std::optional<int64_t> field_of(const json& job, const std::string& field) {
  auto top = [&](const char* key) -> std::optional<int64_t> {
    return job[key].is_number_integer() ? std::optional<int64_t>(job[key].get<int64_t>()) : std::nullopt;
  };
  if (field == "nodes") return top("nodes");
  if (field == "gpus_per_node") return top("gpus_per_node");
  if (field == "tp") return setting(job, "model.tensor_model_parallel_size");
  if (field == "pp") return setting(job, "model.pipeline_model_parallel_size");
  if (field == "cp") return setting(job, "model.context_parallel_size");
  if (field == "ep") return setting(job, "model.expert_model_parallel_size");
  if (field == "vpp") {
    // truth.json: 1 is no interleaving (Megatron's None).
    const std::string key = "model.virtual_pipeline_model_parallel_size";
    if (!job["settings"].contains(key)) return std::nullopt;
    if (job["settings"][key]["value"].is_null()) return 1;
    return setting(job, key);
  }
  if (field == "num_layers") return setting(job, "model.num_layers");
  if (field == "hidden_size") return setting(job, "model.hidden_size");
  if (field == "seq_length") {
    if (auto model = setting(job, "model.seq_length")) return model;
    return setting(job, "dataset.seq_length");
  }
  if (field == "micro_batch_size") return setting(job, "train.micro_batch_size");
  if (field == "global_batch_size") return setting(job, "train.global_batch_size");
  return std::nullopt;
}

struct Tally {
  int known = 0;    // truth has a value
  int correct = 0;
  int unknown = 0;  // mblint does not know it
  int wrong = 0;
  int guessed = 0;  // truth is null (depends on the environment); mblint gave a value
};

// The values truth expects for `field`: the top-level value, or each run's
// value for a script that launches several trainings. Empty: null.
std::set<int64_t> expected(const json& record, const std::string& field) {
  std::set<int64_t> values;
  if (record[field].is_number_integer()) {
    values.insert(record[field].get<int64_t>());
  } else if (record.contains("runs")) {
    for (const json& run : record["runs"]) {
      if (run.contains(field) && run[field].is_number_integer()) values.insert(run[field].get<int64_t>());
    }
  }
  return values;
}

// Compares the jobs mblint found with the truth: one value against the
// first job; a set of run values against the values of all jobs (a subset
// of the runs is not wrong, only incomplete: unknown).
void score(const json& record, const json& jobs, const std::string& field, Tally& tally, std::ostream& wrong_log) {
  std::set<int64_t> want = expected(record, field);
  std::set<int64_t> got;
  bool several = want.size() > 1 || (record.contains("runs") && record[field].is_null());
  for (const json& job : jobs) {
    if (auto value = field_of(job, field)) got.insert(*value);
    if (!several) break;
  }
  if (want.empty()) {
    if (!got.empty()) {
      ++tally.guessed;
      wrong_log << fmt::format("  guessed {} {} = {} (truth: null)\n", record["script"].get<std::string>(), field,
                               *got.begin());
    }
    return;
  }
  ++tally.known;
  bool inside = std::all_of(got.begin(), got.end(), [&](int64_t v) { return want.count(v) == 1; });
  if (got.empty()) {
    ++tally.unknown;
  } else if (!inside) {
    ++tally.wrong;
    wrong_log << fmt::format("  wrong {} {}: mblint {}, truth {}\n", record["script"].get<std::string>(), field,
                             fmt::join(got, ","), fmt::join(want, ","));
  } else if (got == want) {
    ++tally.correct;
  } else {
    ++tally.unknown;  // some of the runs' values, not all
  }
}

double percent(int part, int whole) { return whole ? 100.0 * part / whole : 0.0; }

}  // namespace

TEST_CASE("resolve on the launch-script corpus, per field", "[shared][launch-corpus]") {
  auto shared = test::shared_or_skip("the launch-script corpus");
  if (!shared) return;
  std::filesystem::path corpus = *shared / "corpus" / "launch-scripts";
  std::ifstream in(corpus / "truth.json");
  REQUIRE(in);
  json truth = json::parse(in);
  REQUIRE(truth.size() >= 100);

  std::map<std::string, Tally> tallies;
  int launching = 0, found = 0, negatives = 0, negatives_with_job = 0;
  std::ostringstream wrong_log;
  for (const json& record : truth) {
    std::string script = record["script"].get<std::string>();
    test::CliRun run = test::run_mblint({"resolve", script, "--format", "json"}, corpus);
    INFO(script << "\n" << run.err);
    REQUIRE(run.code != kExitInternal);
    REQUIRE(run.code != kExitUsage);
    json document = json::parse(run.out);
    test::check_contract(document);
    json jobs = document["jobs"];
    if (!record["launches"].get<bool>()) {
      ++negatives;
      if (!jobs.empty()) ++negatives_with_job;
      continue;
    }
    ++launching;
    if (!jobs.empty()) ++found;  // a launch not found leaves every known value unknown
    for (const std::string& field : kFields) score(record, jobs, field, tallies[field], wrong_log);
  }
  Tally total;
  std::ostringstream table;
  table << fmt::format("launch-script corpus: {} scripts, {} launch training; launches found {} ({:.1f}%); "
                       "{} of {} negatives reported a job\n",
                       truth.size(), launching, found, percent(found, launching), negatives_with_job, negatives);
  table << fmt::format("{:<18} {:>6} {:>8} {:>8} {:>6} {:>8}\n", "field", "known", "correct", "unknown", "wrong",
                       "guessed");
  for (const std::string& field : kFields) {
    const Tally& t = tallies[field];
    table << fmt::format("{:<18} {:>6} {:>8} {:>8} {:>6} {:>8}\n", field, t.known, t.correct, t.unknown, t.wrong,
                         t.guessed);
    total.known += t.known;
    total.correct += t.correct;
    total.unknown += t.unknown;
    total.wrong += t.wrong;
    total.guessed += t.guessed;
  }
  table << fmt::format("{:<18} {:>6} {:>8} {:>8} {:>6} {:>8}\n", "total", total.known, total.correct,
                       total.unknown, total.wrong, total.guessed);
  table << fmt::format("correct {:.1f}%, unknown {:.1f}%, wrong {:.1f}% of the known values\n",
                       percent(total.correct, total.known), percent(total.unknown, total.known),
                       percent(total.wrong, total.known));
  WARN(table.str() << wrong_log.str());

  // Floors at the figures measured on 2026-12-02. After the builder learned
  // to follow hand-offs (source, bash FILE, eval, loops; ms-swift, slime,
  // ray, deepspeed, mpirun, verl): 75 of 94 launches found (was 32), 638 of
  // 900 known values correct, 0 wrong (was 13). Then (wip/launch): a
  // template's guard on an empty placeholder, shells run by srun / mpirun /
  // docker (`srun ... bash -c`, `mpirun ... bash train.sh`), here-documents
  // fed to sbatch or a shell, repository-rooted child paths, launcher option
  // words mblint cannot know, and `continue` no longer making later loop
  // iterations uncertain: 83 of 94 found, 691 correct (76.8%), 209 unknown,
  // 0 wrong. Reading an opaque
  // `${options}` among Megatron-LM's arguments as "may set anything" (no
  // default behind it) turned 9 values that were right only because the
  // branch happened to add harmless flags into unknowns. 1 of 6 negatives
  // has a job (evaluate_zeroshot_gpt.sh runs tasks/main.py with Megatron-LM's
  // flags). 54 values are given where truth.json has null: 46 are model
  // shapes taken from the catalog for a Hugging Face id or a catalogued
  // recipe model, which issue 15 asks for (with a note) and the truth leaves
  // null (its rule 3: shapes that live in a Hugging Face config); they are
  // reported above, not counted as wrong. Then (wip/launch2): NeMo-RL's
  // `--config` with its `defaults:` chain and overrides; command
  // substitutions that are pure functions of known text (`basename "$0" .sh`,
  // `realpath /abs/..`, `echo X | sed 's#a#b#'`); NeMo-Framework-Launcher's
  // stage config under launcher_scripts/conf; ms-swift's `megatron sft
  // CONFIG.yaml`; ChatLearn's policy trainer; NeMo 1.x Hydra applications
  // (--config-path/--config-name, NeMo-Aligner); slime's global batch from
  // --num-steps-per-rollout; container paths (/root/slime/...) found in the
  // repository above the script: 85 found, 791 correct (87.9%), 109 unknown,
  // 0 wrong; 54 guessed (2 more catalog shapes for NeMo-RL's
  // policy.model_name, 2 fewer: ChatLearn's allocation is no longer one
  // process). Then (wip/launch3): `if [ -z "$X" ]; then X=d; fi` on a
  // variable the script never sets read as `${X:=d}` (modelopt's finetune.sh:
  // 86 found, 800 correct); variables that undecidable branches set to
  // different known values keep them, a command reading them is walked once
  // per combination and a launch in every arm is one job with the settings
  // the arms agree on (`if [ -n "$WANDB_API_KEY" ]` appending flags, a task
  // picked by `$1`): 88 found, 834 correct (92.7%), 66 unknown, 0 wrong, 54
  // guessed, 1 of 6 negatives. Then: MLPerf's config_<SYSTEM>.sh read as
  // the environment of the run.sub beside it (srun slurm2pytorch
  // ./run_and_time.sh -> python -u trainer, whose Hydra config is composed
  // from its defaults list with `${oc.env:...}` and the integer resolvers
  // evaluated): 91 found (was 88; 96.8%, the 95% met), 861 correct
  // (95.7%), 39 unknown, 0 wrong, 54 guessed, 1 of 6 negatives. Then
  // (wip/memvlm): the catalog's Qwen3-VL 8B and 30B-A3B shapes give Bridge's
  // examples/models/qwen/qwen3_vl/peft.sh num_layers and hidden_size, which
  // the corpus leaves null (the checkpoint decides): 56 guessed. Then
  // (wip/q35): the catalog's Qwen3.5-35B-A3B shape (40 layers, hidden 2048)
  // gives ms-swift's examples/yaml/megatron/sft.yaml (model
  // Qwen/Qwen3.5-35B-A3B) and Bridge's tutorials/data/datacomp/
  // train_qwen36_example.sh (recipe qwen35_vl_35b_a3b_pretrain_mock_config)
  // num_layers and hidden_size, which the corpus leaves null: 60 guessed.
  // (wip/vlm): the Gemma 3 VL shapes give examples/models/gemma/gemma3_vl/
  // sft.sh's num_layers and hidden_size the same way: 62 guessed.
  // (wip/shapes): the Ministral 3 3B shape (26 layers, hidden 3072) gives
  // examples/models/mistral/ministral3/sft_unpacked.sh's the same way: 64
  // guessed. Then: an array or string the script appends to (`ALL_PARAMS+=(...)`)
  // without ever setting it, after a `source` mblint could not read, holds
  // what that file set (llm-jp's v4 template: its layout was Megatron-LM's
  // defaults before, which truth.json leaves null): 862 correct, 38 unknown,
  // 0 wrong, 58 guessed (T5's layer count from --encoder-num-layers, as
  // validate_args takes it, is one more correct value). Then: a plain
  // `python pretrain_gpt.py` no longer counts as one process (scripts that an
  // outer mpirun or srun starts once per rank look the same, and got a false
  // world-size error): Megatron-LM's examples/pretrain_gpt.sh loses its 1 x 1
  // (2 values, now unknown): 860 correct, 40 unknown. Then: a Hugging Face id
  // is matched to the catalog without its variant marks (-Instruct-2507-FP8,
  // -Thinking, a release date), so 6 more launches get their model's shape
  // from the catalog where truth.json leaves it to the model's config: 70
  // guessed, each checked by hand against the model. Raise the floors as more
  // launches are followed; the targets are in the header.
  CHECK(found >= 91);
  CHECK(total.correct >= 860);
  CHECK(total.wrong == 0);
  CHECK(total.guessed <= 70);
  CHECK(negatives_with_job <= 1);
  CHECK(percent(total.wrong, total.known) <= 2.0);  // the target, met today
}
