// `mblint plan` and `mblint layout` end to end: every layout plan prints
// passes `mblint check` (its override fed back with the same recipe and
// cluster), the lazy search is consistent, the guide comparison and the
// NVLink rules agree with the rank layout.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/facts/derived.h"
#include "lint/model/catalog.h"
#include "lint/plan/plan.h"
#include "tests/fixture_runner.h"
#include "tests/test_support.h"

using namespace mblint;
using namespace mblint::test;

namespace {

struct Run {
  std::string out;
  int exit = -1;
};

Run run(const std::filesystem::path& dir, std::vector<std::string> args) {
  std::string text = run_case(FixtureCase{dir, std::move(args)});
  Run r;
  size_t at = text.rfind("[exit ");
  REQUIRE(at != std::string::npos);
  r.exit = std::stoi(text.substr(at + 6));
  r.out = text.substr(0, at);
  return r;
}

std::string yaml_of(const nlohmann::json& settings) {
  std::map<std::string, std::vector<std::string>> sections;
  for (const auto& [key, value] : settings.items()) {
    size_t dot = key.find('.');
    sections[key.substr(0, dot)].push_back(fmt::format("  {}: {}", key.substr(dot + 1), value.get<std::string>()));
  }
  std::string text;
  for (const auto& [section, lines] : sections) {
    text += section + ":\n";
    for (const std::string& line : lines) text += line + "\n";
  }
  return text;
}

struct PlanCase {
  std::vector<std::string> plan;   // after `mblint plan`
  std::vector<std::string> check;  // what describes the same job to `mblint check`
};

}  // namespace

TEST_CASE("every layout mblint plan prints passes mblint check with no error", "[plan]") {
  // Kimi-K2-like dimensions given on the command line reach check as --set.
  std::vector<std::string> kimi_dims = {"--num-layers", "61", "--hidden-size", "7168", "--num-attention-heads", "64",
                                        "--ffn-hidden-size", "18432", "--num-experts", "384", "--moe-topk", "8",
                                        "--moe-ffn-hidden-size", "2048", "--vocab-size", "163840", "--seq-length",
                                        "4096", "--global-batch-size", "4096", "--gpus", "512", "--gpu", "h100"};
  std::vector<std::string> kimi_sets = {
      "--set", "model.num_layers=61", "--set", "model.hidden_size=7168", "--set", "model.num_attention_heads=64",
      "--set", "model.ffn_hidden_size=18432", "--set", "model.num_moe_experts=384", "--set",
      "model.moe_router_topk=8", "--set", "model.moe_ffn_hidden_size=2048", "--set", "model.vocab_size=163840",
      "--set", "model.seq_length=4096", "--set", "dataset.seq_length=4096", "--nodes", "64", "--gpus-per-node",
      "8", "--gpu", "h100"};
  std::vector<PlanCase> cases = {
      {{"--recipe", "llama3_8b_pretrain_8gpu_h100_bf16_config", "--gpus", "8"},
       {"--recipe", "llama3_8b_pretrain_8gpu_h100_bf16_config", "--nodes", "1", "--gpus-per-node", "8", "--gpu", "h100"}},
      {{"--recipe", "llama3_70b_pretrain_64gpu_h100_bf16_config", "--gpus", "64"},
       {"--recipe", "llama3_70b_pretrain_64gpu_h100_bf16_config", "--nodes", "8", "--gpus-per-node", "8", "--gpu",
        "h100"}},
      {{"--recipe", "llama31_405b_pretrain_512gpu_h100_bf16_config", "--gpus", "512"},
       {"--recipe", "llama31_405b_pretrain_512gpu_h100_bf16_config", "--nodes", "64", "--gpus-per-node", "8", "--gpu",
        "h100"}},
      {{"--recipe", "qwen3_235b_a22b_pretrain_256gpu_h100_bf16_config", "--gpus", "256", "--global-batch-size", "2048"},
       {"--recipe", "qwen3_235b_a22b_pretrain_256gpu_h100_bf16_config", "--nodes", "32", "--gpus-per-node", "8",
        "--gpu", "h100"}},
      {{"--recipe", "deepseek_v3_pretrain_1024gpu_h100_bf16_config", "--gpus", "1024"},
       {"--recipe", "deepseek_v3_pretrain_1024gpu_h100_bf16_config", "--nodes", "128", "--gpus-per-node", "8",
        "--gpu", "h100"}},
      {{"--recipe", "deepseek_v3_pretrain_256gpu_gb200_bf16_config", "--gpus", "256"},
       {"--recipe", "deepseek_v3_pretrain_256gpu_gb200_bf16_config", "--nodes", "64", "--gpus-per-node", "4", "--gpu",
        "gb200"}},
      {kimi_dims, kimi_sets},
  };
  std::filesystem::path dir = make_temp_dir("mblint-plan-check");
  size_t checked = 0;
  for (const PlanCase& c : cases) {
    std::vector<std::string> args = {"plan"};
    args.insert(args.end(), c.plan.begin(), c.plan.end());
    args.insert(args.end(), {"--format", "json", "--top", "3"});
    Run plan = run(dir, args);
    INFO("mblint " << fmt::format("{}", fmt::join(args, " ")));
    REQUIRE(plan.exit == 0);
    nlohmann::json result = nlohmann::json::parse(plan.out);
    REQUIRE(!result["layouts"].empty());
    // The winner's snippets are the first layout's settings.
    nlohmann::json first = result["layouts"][0]["settings"];
    CHECK(result["winner_yaml"].get<std::string>().find(
              fmt::format("tensor_model_parallel_size: {}", first["model.tensor_model_parallel_size"].get<std::string>())) !=
          std::string::npos);
    for (const nlohmann::json& layout : result["layouts"]) {
      std::string yaml = yaml_of(layout["settings"]);
      std::ofstream(dir / "plan.yaml") << yaml;
      std::vector<std::string> check = {"check", "plan.yaml"};
      check.insert(check.end(), c.check.begin(), c.check.end());
      Run linted = run(dir, check);
      INFO("override:\n" << yaml << "check output:\n" << linted.out);
      CHECK(linted.exit == 0);
      CHECK(linted.out.find(": error:") == std::string::npos);
      ++checked;
    }
  }
  CHECK(checked >= cases.size() * 3);
}

TEST_CASE("the lazy search gives the same leaders whatever the list length", "[plan]") {
  std::filesystem::path dir = make_temp_dir("mblint-plan-top");
  auto leaders = [&](const std::string& top) {
    Run r = run(dir, {"plan", "--recipe", "qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config", "--gpus", "32", "--top", top,
                      "--format", "json"});
    REQUIRE(r.exit == 0);
    nlohmann::json j = nlohmann::json::parse(r.out);
    std::vector<std::string> out;
    for (const auto& l : j["layouts"]) out.push_back(l["settings"].dump());
    std::vector<double> scores;
    for (const auto& l : j["layouts"]) scores.push_back(l["score"].get<double>());
    CHECK(std::is_sorted(scores.begin(), scores.end()));
    return out;
  };
  std::vector<std::string> three = leaders("3");
  std::vector<std::string> ten = leaders("10");
  REQUIRE(three.size() == 3);
  REQUIRE(ten.size() >= 3);
  CHECK(std::equal(three.begin(), three.end(), ten.begin()));
}

// Interleavings of one layout differ by less than the speed model can tell:
// the list gives each (TP, PP, CP, EP, ETP, MBS) once, with its fastest VPP
// (Llama 3 70B on 64 H100 listed TP 4 PP 4 at VPP 10 and 20, with and
// without CP 2, before). The leader is the fastest layout either way.
TEST_CASE("plan lists each layout once, with its fastest interleaving", "[plan]") {
  std::filesystem::path dir = make_temp_dir("mblint-plan-once");
  Run r = run(dir, {"plan", "--recipe", "llama3_70b_pretrain_64gpu_h100_bf16_config", "--gpus", "64", "--gpu", "h100",
                    "--top", "20", "--format", "json"});
  REQUIRE(r.exit == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["layouts"].size() == 20);
  std::set<std::vector<int64_t>> seen;
  bool interleaved = false;
  for (const auto& l : j["layouts"]) {
    std::vector<int64_t> layout = {l["tp"], l["pp"], l["cp"], l["ep"], l["etp"], l["mbs"]};
    CHECK(seen.insert(layout).second);
    interleaved = interleaved || !l["vpp"].is_null();
  }
  CHECK(interleaved);  // the VPP is chosen, not dropped
  // The same job with VPP pinned to the leader's: no layout beats the leader.
  const auto& first = j["layouts"][0];
  REQUIRE(!first["vpp"].is_null());
  Run pinned = run(dir, {"plan", "--recipe", "llama3_70b_pretrain_64gpu_h100_bf16_config", "--gpus", "64", "--gpu",
                         "h100", "--top", "1", "--format", "json", "--set",
                         fmt::format("model.virtual_pipeline_model_parallel_size={}", first["vpp"].get<int64_t>())});
  REQUIRE(pinned.exit == 0);
  nlohmann::json p = nlohmann::json::parse(pinned.out);
  CHECK(p["layouts"][0]["score"].get<double>() >= first["score"].get<double>());
}

namespace {

// A layout worked out by hand from Megatron-Core's two rank grids
// (parallel_state.initialize_model_parallel): the world size must be a
// multiple of TP x CP x PP (the decoder grid, DP = world / that) and of
// ETP x EP x PP (the expert grid, expert DP = world / that).
struct HandLayout {
  const char* recipe;
  int gpus;  // the cluster planned for
  int tp, pp, cp, ep, etp;
  int min_gpus, dp, edp;  // derived by hand, in the comment of each case
};

}  // namespace

TEST_CASE("minimum GPU counts and data-parallel sizes derived by hand", "[plan]") {
  const HandLayout cases[] = {
      // Llama3-70B, TP 4 x PP 4 x CP 2 (dense; ETP follows TP, EP 1):
      // decoder grid 4*2*4 = 32, expert grid 4*1*4 = 16; 32 is a multiple of
      // 16, so 32 GPUs is the minimum. On 64 GPUs DP = 64/32 = 2, expert DP =
      // 64/16 = 4.
      {"llama3_70b_pretrain_64gpu_h100_bf16_config", 64, 4, 4, 2, 1, 4, 32, 2, 4},
      // DeepSeek-V3, TP 2 x PP 16 x EP 64 x ETP 1: decoder grid 2*1*16 = 32,
      // expert grid 1*64*16 = 1024, and 1024 is a multiple of 32: 1024 GPUs at
      // least. DP = 1024/32 = 32, expert DP = 1024/1024 = 1.
      {"deepseek_v3_pretrain_1024gpu_h100_bf16_config", 1024, 2, 16, 1, 64, 1, 1024, 32, 1},
      // Qwen3-30B-A3B, TP 2, EP 8 x ETP 2, PP 1, CP 1: decoder grid 2, expert
      // grid 2*8 = 16; the least common multiple is 16, half the full
      // product 2*8*2 = 32. On 32 GPUs DP = 32/2 = 16, expert DP = 32/16 = 2.
      {"qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config", 32, 2, 1, 1, 8, 2, 16, 16, 2},
      // Qwen3-30B-A3B, TP 4 x PP 2, EP 4 x ETP 1, CP 1: decoder grid 4*2 = 8,
      // expert grid 1*4*2 = 8: 8 GPUs. On 16 GPUs DP = 2, expert DP = 2.
      {"qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config", 16, 4, 2, 1, 4, 1, 8, 2, 2},
  };
  std::filesystem::path dir = make_temp_dir("mblint-plan-min");
  for (const HandLayout& c : cases) {
    INFO(c.recipe << " on " << c.gpus << ": TP " << c.tp << " PP " << c.pp << " CP " << c.cp << " EP " << c.ep
                  << " ETP " << c.etp);
    std::vector<std::string> pins = {
        "--set", fmt::format("model.tensor_model_parallel_size={}", c.tp),
        "--set", fmt::format("model.pipeline_model_parallel_size={}", c.pp),
        "--set", fmt::format("model.context_parallel_size={}", c.cp),
        "--set", fmt::format("model.expert_model_parallel_size={}", c.ep),
        "--set", fmt::format("model.expert_tensor_parallel_size={}", c.etp)};
    std::vector<std::string> plan = {"plan", "--recipe", c.recipe, "--gpus", std::to_string(c.gpus), "--format",
                                     "json", "--top", "3"};
    plan.insert(plan.end(), pins.begin(), pins.end());
    Run planned = run(dir, plan);
    REQUIRE(planned.exit == 0);
    nlohmann::json j = nlohmann::json::parse(planned.out);
    // Where nothing fits in memory the nearest layout still carries the sizes.
    nlohmann::json layouts = j["layouts"].empty() ? nlohmann::json::array({j["closest"]}) : j["layouts"];
    REQUIRE(!layouts.empty());
    for (const auto& l : layouts) {
      REQUIRE(l.is_object());
      CHECK(l["tp"] == c.tp);
      CHECK(l["ep"] == c.ep);
      CHECK(l["min_gpus"] == c.min_gpus);
      CHECK(l["dp"] == c.dp);
      CHECK(l["edp"] == c.edp);
    }
    // `layout` draws the same job with the same sizes.
    std::vector<std::string> drawn = {"layout", "--recipe", c.recipe, "--nodes", std::to_string(c.gpus / 8),
                                      "--gpus-per-node", "8", "--format", "json"};
    drawn.insert(drawn.end(), pins.begin(), pins.end());
    Run shown = run(dir, drawn);
    REQUIRE(shown.exit == 0);
    nlohmann::json sizes = nlohmann::json::parse(shown.out)[0]["sizes"];
    CHECK(sizes["dp"] == c.dp);
    CHECK(sizes["edp"] == c.edp);
    // Below the minimum, no layout with these sizes exists.
    if (c.min_gpus > 8) {
      std::vector<std::string> fewer = {"plan", "--recipe", c.recipe, "--gpus", std::to_string(c.min_gpus / 2),
                                        "--format", "json"};
      fewer.insert(fewer.end(), pins.begin(), pins.end());
      Run none = run(dir, fewer);
      if (none.exit == 0) {
        nlohmann::json k = nlohmann::json::parse(none.out);
        CHECK(k["layouts"].empty());
      }
    }
  }
}

TEST_CASE("the guide's starting point is placed and its section-7 example flagged", "[plan]") {
  std::filesystem::path dir = make_temp_dir("mblint-plan-guide");
  Run r = run(dir, {"plan", "--recipe", "deepseek_v3_pretrain_1024gpu_h100_bf16_config", "--gpus", "256", "--top", "3",
                    "--format", "json"});
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["guide"]["band"].get<std::string>().find("TP=2 PP=16 EP=64") != std::string::npos);
  REQUIRE(j["guide"]["layouts"].size() == 1);
  // 256 GPUs cannot hold EP 64 x PP 16.
  CHECK(j["guide"]["layouts"][0]["possible"] == false);
  CHECK(j["guide"]["layouts"][0]["why_not"].get<std::string>().find("= 1024") != std::string::npos);
  REQUIRE(j["guide"]["notes"].size() == 1);
  CHECK(j["guide"]["notes"][0].get<std::string>().find("256 GPUs") != std::string::npos);

  Run dense = run(dir, {"plan", "--recipe", "llama3_70b_pretrain_64gpu_h100_bf16_config", "--gpus", "128", "--format",
                        "json"});
  nlohmann::json d = nlohmann::json::parse(dense.out);
  CHECK(d["guide"]["band"].get<std::string>().find("dense 70-175B") != std::string::npos);
  CHECK(d["guide"]["layouts"].size() == 2);  // PP 4 and PP 8, CP 2 for seq 8192
  for (const auto& g : d["guide"]["layouts"]) CHECK(g["cp"] == 2);
}

TEST_CASE("model sizes pick the guide's rows", "[plan]") {
  auto size_of = [](const char* recipe) {
    SourceSet sources;
    Job job;
    job.recipe = find_recipe(recipe);
    REQUIRE(job.recipe != nullptr);
    job.config = make_map();
    // The recipe layer through a plan run is tested end to end above; here
    // the dimensions alone matter.
    const ModelDims& dims = *job.recipe->dims;
    for (auto [key, value] : {std::pair{"model.num_layers", dims.num_layers}, {"model.hidden_size", dims.hidden_size},
                              {"model.num_attention_heads", dims.num_attention_heads},
                              {"model.ffn_hidden_size", dims.ffn_hidden_size}, {"model.vocab_size", dims.vocab_size},
                              {"model.num_moe_experts", dims.num_moe_experts},
                              {"model.moe_ffn_hidden_size", dims.moe_ffn_hidden_size},
                              {"model.moe_router_topk", dims.moe_router_topk},
                              {"model.moe_shared_expert_intermediate_size", dims.moe_shared_expert_intermediate_size},
                              {"model.num_query_groups", dims.num_query_groups}}) {
      if (value > 0) assign_path(job.config, split_path(key), make_int(value));
    }
    if (dims.multi_latent_attention) assign_path(job.config, split_path("model.multi_latent_attention"), make_bool(true));
    if (dims.num_moe_experts == 0) assign_path(job.config, split_path("model.num_moe_experts"), make_null());
    return model_size(job, derive(job));
  };
  ModelSize llama8 = size_of("llama3_8b_pretrain_8gpu_h100_bf16_config");
  CHECK(llama8.total_params == Approx(8.0).epsilon(0.03));
  ModelSize llama70 = size_of("llama3_70b_pretrain_64gpu_h100_bf16_config");
  CHECK(llama70.total_params == Approx(70.6).epsilon(0.03));
  ModelSize dsv3 = size_of("deepseek_v3_pretrain_1024gpu_h100_bf16_config");
  CHECK(dsv3.moe);
  CHECK(dsv3.total_params == Approx(671).epsilon(0.03));
  CHECK(dsv3.active_params == Approx(37).epsilon(0.05));
}

TEST_CASE("plan sizes a hybrid stack as the memory estimate counts it", "[plan]") {
  // Nemotron 3 Super: 88 layers of Mamba-2, attention and LatentMoE blocks
  // (data/model_dims.csv). NVIDIA names it 120B-A12B; the transformer
  // formula, every layer attention + MoE, made it 999.6 B (12 active of
  // 512 experts per MoE layer on every layer).
  Run planned = run(source_dir(), {"plan", "--recipe", "nemotron_3_super_pretrain_64gpu_gb200_fp8mx_config", "--gpus",
                                   "64", "--top", "1"});
  std::smatch m;
  REQUIRE(std::regex_search(planned.out, m, std::regex(R"(model: ([0-9.]+)B parameters \(([0-9.]+)B active)")));
  double total = std::stod(m[1]), active = std::stod(m[2]);
  CHECK(total > 115);
  CHECK(total < 126);
  CHECK(active > 11.5);
  CHECK(active < 13);
}

TEST_CASE("plan splits a hybrid stack without interleaving, as Megatron Bridge builds it", "[plan]") {
  // HybridModelProvider.provide asserts the virtual pipeline is None
  // (hybrid-virtual-pipeline), and the hybrid allocation reads neither a
  // pipeline layout nor the account_for_* options. Before, the plan's #1 for
  // Nemotron 3 Super on 64 GB200 was PP 2 x VPP 22 with its memory not
  // estimated.
  Run planned = run(source_dir(), {"plan", "--recipe", "nemotron_3_super_pretrain_64gpu_gb200_fp8mx_config", "--gpus",
                                   "64", "--gpu", "gb200", "--top", "10", "--format", "json"});
  REQUIRE(planned.exit == 0);
  nlohmann::json j = nlohmann::json::parse(planned.out);
  REQUIRE(j["layouts"].size() == 10);
  bool pipelined = false;
  for (const auto& layout : j["layouts"]) {
    INFO(layout.dump());
    CHECK(layout["vpp"].is_null());
    CHECK(!layout["memory"].is_null());
    pipelined = pipelined || layout["pp"].get<int>() > 1;
    for (const char* key : {"model.pipeline_model_parallel_layout", "model.account_for_embedding_in_pipeline_split",
                            "model.account_for_loss_in_pipeline_split"}) {
      CHECK((!layout["settings"].contains(key) || layout["settings"][key] == "null" ||
             layout["settings"][key] == "false"));
    }
  }
  CHECK(pipelined);  // pipeline stages are still searched, without interleaving
}

TEST_CASE("plan keeps DeepSeek V4 at TP 1 and CP 1 and sizes it as the estimate counts it", "[plan][dsv4]") {
  // Megatron-LM dev d48bd6be0a85: DSv4's hybrid attention asserts TP 1
  // (transformer_config.py:1760-1762) and refuses CP > 1 with the default
  // zigzag partition (:1611-1616): dsv4-tensor-parallel and
  // dsv4-context-parallel reject such layouts, so none is proposed.
  Run planned = run(source_dir(), {"plan", "--recipe", "deepseek_v4_flash_pretrain_64gpu_gb200_bf16_config", "--nodes",
                                   "16", "--gpus-per-node", "4", "--gpu", "gb200", "--top", "30"});
  std::regex layout(R"(\n *[0-9]+\. TP ([0-9]+) PP [0-9]+ (?:VPP [0-9]+ )?CP ([0-9]+) )");
  int layouts = 0;
  for (auto it = std::sregex_iterator(planned.out.begin(), planned.out.end(), layout); it != std::sregex_iterator();
       ++it) {
    ++layouts;
    CHECK((*it)[1] == "1");
    CHECK((*it)[2] == "1");
  }
  CHECK(layouts > 0);
  CHECK(planned.out.find("rejected: [dsv4-tensor-parallel]") != std::string::npos);  // the guide's TP 2-4 rows
  // Size: estimate_dsv4_test.cpp derives 290,942,278,866 parameters with the
  // MTP layer. Idle per token: 256 - 6 routed experts of 3 x 4096 x 2048 on
  // 43 + 1 layers = 276,824,064,000, so 14,118,214,866 active.
  std::smatch m;
  REQUIRE(std::regex_search(planned.out, m, std::regex(R"(model: ([0-9.]+)B parameters \(([0-9.]+)B active)")));
  CHECK(m[1] == "290.9");
  CHECK(m[2] == "14.1");
}

TEST_CASE("the NVLink rules count the crossing groups mblint layout shows", "[plan][layout]") {
  std::filesystem::path dir = source_dir() / "fixtures" / "rules" / "ep-crosses-nvlink-domain" / "fires-ep16-two-h100-nodes";
  std::vector<std::string> job = {"override.yaml", "--recipe", "qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config",
                                  "--nodes", "2", "--gpus-per-node", "8", "--gpu", "h100"};
  std::vector<std::string> check = {"check"}, layout = {"layout"};
  check.insert(check.end(), job.begin(), job.end());
  layout.insert(layout.end(), job.begin(), job.end());
  layout.insert(layout.end(), {"--format", "json"});
  Run linted = run(dir, check);
  Run drawn = run(dir, layout);
  REQUIRE(drawn.exit == 0);
  nlohmann::json j = nlohmann::json::parse(drawn.out)[0];
  int64_t crossing = -1, groups = -1;
  for (const auto& g : j["groups"]) {
    if (g["kind"] == "ep") {
      crossing = g["crossing_nvlink_domains"];
      groups = static_cast<int64_t>(g["ranks"].size());
    }
  }
  std::smatch m;
  std::regex counted("([0-9]+) of ([0-9]+) expert-parallel groups");
  REQUIRE(std::regex_search(linted.out, m, counted));
  CHECK(std::stoll(m[1]) == crossing);
  CHECK(std::stoll(m[2]) == groups);
  // By hand, not from the rank layout both of them use: EP 16 x ETP 1 x PP 1
  // on 16 GPUs is one expert-parallel group, ranks 0-15, and it spans both
  // 8-GPU nodes.
  CHECK(groups == 1);
  CHECK(crossing == 1);
}

TEST_CASE("settings fixed with --set are kept by every layout", "[plan]") {
  std::filesystem::path dir = make_temp_dir("mblint-plan-pins");
  Run r = run(dir, {"plan", "--recipe", "llama3_70b_pretrain_64gpu_h100_bf16_config", "--gpus", "64", "--set",
                    "model.tensor_model_parallel_size=4", "--set", "model.context_parallel_size=1", "--format", "json",
                    "--top", "8"});
  REQUIRE(r.exit == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["fixed_by_set"] == nlohmann::json({"TP 4", "CP 1"}));
  REQUIRE(!j["layouts"].empty());
  for (const auto& l : j["layouts"]) {
    CHECK(l["tp"] == 4);
    CHECK(l["cp"] == 1);
  }
}

TEST_CASE("plan judges memory as estimated-oom does: within the error band a layout is listed with its range",
          "[plan]") {
  // Llama 3 70B on 64 H100: the fastest layouts sit within the estimate's
  // error band of the 80 GB (the golden lists them); none beyond it.
  std::filesystem::path dir = make_temp_dir("mblint-plan-band");
  Run r = run(dir, {"plan", "--recipe", "llama3_70b_pretrain_64gpu_h100_bf16_config", "--gpus", "64", "--format", "json",
                    "--top", "8"});
  REQUIRE(r.exit == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(!j["layouts"].empty());
  size_t in_band = 0;
  for (const auto& l : j["layouts"]) {
    const auto& m = l["memory"];
    double low = m["range_gib"][0], high = m["range_gib"][1], capacity = m["capacity_gib"], total = m["total_gib"];
    CHECK(low <= capacity);  // beyond the band: estimated-oom's error, never listed
    CHECK(low < total);
    CHECK(total < high);
    CHECK(m["may_not_fit"].get<bool>() == (high > capacity));
    if (high > capacity) ++in_band;
  }
  CHECK(in_band > 0);
}

TEST_CASE("a layout that cannot keep the job's EP overlap turns it off instead of being rejected", "[plan]") {
  // The Qwen3-235B recipe overlaps the EP all-to-all (and delays wgrads);
  // NVIDIA runs it on PP 8 without VPP, where Megatron-Core asserts with the
  // overlap on.
  std::filesystem::path dir = make_temp_dir("mblint-plan-ep-overlap");
  std::vector<std::string> machine = {"--recipe", "qwen3_235b_a22b_pretrain_256gpu_b200_fp8mx_config"};
  std::vector<std::string> args = {"plan"};
  args.insert(args.end(), machine.begin(), machine.end());
  args.insert(args.end(), {"--gpus", "256", "--gpu", "b200", "--set", "model.tensor_model_parallel_size=1", "--set",
                           "model.pipeline_model_parallel_size=8", "--set",
                           "model.virtual_pipeline_model_parallel_size=null", "--set",
                           "model.expert_model_parallel_size=8", "--format", "json", "--top", "1"});
  Run r = run(dir, args);
  REQUIRE(r.exit == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["layouts"].size() == 1);
  const auto& settings = j["layouts"][0]["settings"];
  CHECK(settings["comm_overlap.overlap_moe_expert_parallel_comm"] == "false");
  std::ofstream(dir / "plan.yaml") << yaml_of(settings);
  std::vector<std::string> check = {"check", "plan.yaml"};
  check.insert(check.end(), machine.begin(), machine.end());
  check.insert(check.end(), {"--nodes", "32", "--gpus-per-node", "8", "--gpu", "b200"});
  Run linted = run(dir, check);
  INFO(linted.out);
  CHECK(linted.out.find(": error:") == std::string::npos);
}

TEST_CASE("where no even split exists, plan writes the pipeline layout NVIDIA's presets write", "[plan]") {
  // DeepSeek-V3's 61 layers (and MTP) on PP 4 x VPP 4: NVIDIA's 26.02-26.04.01
  // presets (perf_recipe_presets.csv) run "Et*4|(t*4|)*14tmL": the embedding
  // and 4 layers, 14 chunks of 4, then a layer, MTP and the loss.
  std::filesystem::path dir = make_temp_dir("mblint-plan-written-layout");
  std::vector<std::string> machine = {"--recipe", "deepseek_v3_pretrain_256gpu_gb200_fp8mx_config"};
  std::vector<std::string> args = {"plan"};
  args.insert(args.end(), machine.begin(), machine.end());
  args.insert(args.end(), {"--gpus", "256", "--gpu", "gb200", "--set", "model.pipeline_model_parallel_size=4",
                           "--set", "model.virtual_pipeline_model_parallel_size=4", "--set",
                           "model.expert_model_parallel_size=64", "--format", "json", "--top", "1"});
  Run r = run(dir, args);
  REQUIRE(r.exit == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["rejections"].is_object());
  REQUIRE(j["layouts"].size() == 1);
  const auto& layout = j["layouts"][0];
  CHECK(layout["vpp"] == 4);
  CHECK(layout["bubble"].is_number());
  const auto& settings = layout["settings"];
  std::string written = "Etttt|";
  for (int i = 0; i < 14; ++i) written += "tttt|";
  written += "tmL";
  CHECK(settings["model.pipeline_model_parallel_layout"] == written);
  std::ofstream(dir / "plan.yaml") << yaml_of(settings);
  std::vector<std::string> check = {"check", "plan.yaml"};
  check.insert(check.end(), machine.begin(), machine.end());
  check.insert(check.end(), {"--nodes", "64", "--gpus-per-node", "4", "--gpu", "gb200"});
  Run linted = run(dir, check);
  INFO(linted.out);
  CHECK(linted.out.find(": error:") == std::string::npos);
}
