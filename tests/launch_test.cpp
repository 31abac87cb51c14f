// Finding the training launch in a script: wrappers, launchers, resources,
// entry-point arguments.
#include <catch2/catch.hpp>

#include "lint/load/shell/launch.h"

using namespace mblint;

namespace {

struct Found {
  SourceSet sources;
  FileId file = kNoFile;
  ShellScript script;
  std::vector<Launch> launches;
};

Found find(const std::string& text) {
  Found found;
  found.file = add_source(found.sources, "launch.sh", text);
  std::vector<SbatchDirective> directives = read_sbatch_directives(found.sources.files[found.file], found.file);
  found.script = walk_shell_script(found.sources, found.file, slurm_environment(directives));
  found.launches = find_launches(found.script, directives);
  return found;
}

// The one launch the script must have.
const Launch& only_launch(const Found& f) {
  REQUIRE(f.launches.size() == 1);
  return f.launches[0];
}

std::string text(const Found& f, Span span) {
  return f.sources.files[f.file].text.substr(span.begin, span.end - span.begin);
}

}  // namespace

TEST_CASE("torchrun: nodes and processes per node", "[launch]") {
  Found f = find("torchrun --nnodes=2 --nproc_per_node 8 scripts/training/run_recipe.py --recipe x_config\n");
  const Launch& l = only_launch(f);
  CHECK(l.entry == EntryPoint::RunRecipe);
  CHECK(l.cluster.nodes.value == 2);
  CHECK(l.cluster.gpus_per_node.value == 8);
  CHECK(text(f, l.cluster.nodes.where.statement) == "--nnodes=2");
  CHECK(text(f, l.cluster.gpus_per_node.where.statement) == "--nproc_per_node 8");
  REQUIRE(l.recipe);
  CHECK(l.recipe->text == "x_config");
  CHECK(text(f, l.recipe_statement) == "--recipe x_config");
}

TEST_CASE("torchrun defaults to one node and one process", "[launch]") {
  Found f = find("torchrun scripts/training/run_recipe.py --recipe x_config\n");
  const Launch& l = only_launch(f);
  CHECK(l.cluster.nodes.value == 1);
  CHECK(l.cluster.gpus_per_node.value == 1);
  CHECK_FALSE(l.cluster.gpus_per_node.where.origin.empty());
}

TEST_CASE("python -m torch.distributed.run under uv run and srun, with #SBATCH nodes", "[launch]") {
  Found f = find(
      "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\n"
      "srun --container-image=img uv run --no-project python -m torch.distributed.run \\\n"
      "  --nnodes $SLURM_NNODES --nproc-per-node 8 scripts/training/run_recipe.py --recipe x_config -tp 4\n");
  const Launch& l = only_launch(f);
  CHECK(l.cluster.nodes.value == 4);
  REQUIRE_FALSE(l.cluster.nodes.where.via.empty());
  CHECK(text(f, l.cluster.nodes.where.via[0]) == "--nodes=4");
  REQUIRE(l.flags.size() == 1);
  CHECK(l.flags[0].flag == "-tp");
  CHECK(join_path(l.flags[0].key) == "model.tensor_model_parallel_size");
  CHECK(text(f, l.flags[0].statement) == "-tp 4");
}

TEST_CASE("srun alone: one task per GPU from --ntasks-per-node; GPU type from --gres", "[launch]") {
  Found f = find(
      "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:h100:8\n"
      "srun python scripts/training/run_recipe.py --recipe x_config\n");
  const Launch& l = only_launch(f);
  CHECK(l.cluster.nodes.value == 2);
  CHECK(l.cluster.gpus_per_node.value == 8);
  CHECK(l.cluster.gpu == "h100");
}

TEST_CASE("a bare python command runs as many processes as whatever runs the script", "[launch]") {
  // One process when run alone, but a script an outer mpirun or srun starts
  // once per rank looks the same: unknown, with the reason.
  Found f = find("python scripts/training/run_recipe.py --recipe x_config\n");
  const Launch& l = only_launch(f);
  CHECK_FALSE(l.cluster.nodes.value);
  CHECK_FALSE(l.cluster.gpus_per_node.value);
  CHECK(l.cluster.nodes.unknown_because.find("WORLD_SIZE") != std::string::npos);
}

TEST_CASE("$SLURM_NNODES without #SBATCH is unknown, never guessed", "[launch]") {
  Found f = find("torchrun --nnodes $SLURM_NNODES --nproc-per-node 8 scripts/training/run_recipe.py --recipe x\n");
  const Launch& l = only_launch(f);
  CHECK_FALSE(l.cluster.nodes.value);
  CHECK_FALSE(l.cluster.nodes.unknown_because.empty());
}

TEST_CASE("train.sh: its own --nodes and --gpus-per-node, the rest goes to run_recipe.py", "[launch]") {
  Found f = find(
      "./scripts/training/train.sh --nodes 2 --gpus-per-node 8 --account acct --recipe x_config --mode pretrain "
      "--seq_length 4096 'dataset.split=\"1,2,3\"'\n");
  const Launch& l = only_launch(f);
  CHECK(l.entry == EntryPoint::TrainSh);
  CHECK(l.cluster.nodes.value == 2);
  CHECK(l.cluster.gpus_per_node.value == 8);
  REQUIRE(l.flags.size() == 1);
  CHECK(join_path(l.flags[0].key) == "dataset.seq_length");
  REQUIRE(l.overrides.size() == 1);
  CHECK(l.overrides[0].text == "dataset.split=\"1,2,3\"");
}

TEST_CASE("run_recipe.py rejects --config-file and words without =", "[launch]") {
  Found f = find("torchrun scripts/training/run_recipe.py --recipe x --config-file c.yaml oops a.b=1\n");
  const Launch& l = only_launch(f);
  REQUIRE(l.problems.size() == 2);
  CHECK(l.problems[0].rule == "entry-point-argument");
  CHECK(text(f, l.problems[0].where) == "--config-file");
  CHECK(text(f, l.problems[1].where) == "oops");
  REQUIRE(l.overrides.size() == 1);
  CHECK(l.overrides[0].text == "a.b=1");
}

TEST_CASE("a --config-file script inside bash -c keeps exact positions", "[launch]") {
  Found f = find(
      "#!/bin/bash\n#SBATCH --nodes=2\nGPUS=8\n"
      "srun bash -c \"torchrun --nnodes \\$SLURM_NNODES --nproc-per-node $GPUS pretrain.py "
      "--config-file conf/a.yaml model.tensor_model_parallel_size=16\"\n");
  const Launch& l = only_launch(f);
  CHECK(l.entry == EntryPoint::ConfigFileScript);
  CHECK(l.cluster.nodes.value == 2);
  CHECK(l.cluster.gpus_per_node.value == 8);
  REQUIRE(l.config_file);
  CHECK(l.config_file->text == "conf/a.yaml");
  CHECK(text(f, span_of(*l.config_file, 0, l.config_file->text.size())) == "conf/a.yaml");
  REQUIRE(l.overrides.size() == 1);
  CHECK(text(f, span_of(l.overrides[0], 0, l.overrides[0].text.size())) == "model.tensor_model_parallel_size=16");
}

TEST_CASE("the launch sees exported variables and prefix assignments", "[launch]") {
  Found f = find(
      "export CUDA_DEVICE_MAX_CONNECTIONS=1\nNOT_EXPORTED=1\n"
      "NCCL_DEBUG=INFO torchrun scripts/training/run_recipe.py --recipe x\n");
  const Launch& l = only_launch(f);
  std::map<std::string, std::optional<std::string>> env;
  for (const EnvSetting& setting : l.env) env[setting.name] = setting.value;
  CHECK(env["CUDA_DEVICE_MAX_CONNECTIONS"] == std::optional<std::string>("1"));
  CHECK(env["NCCL_DEBUG"] == std::optional<std::string>("INFO"));
  CHECK(env.count("NOT_EXPORTED") == 0);
}

TEST_CASE("commands that are not launches are ignored", "[launch]") {
  Found f = find("echo torchrun\nmkdir -p logs\npython -c 'print(1)'\npip install x\n");
  CHECK(f.launches.empty());
}
