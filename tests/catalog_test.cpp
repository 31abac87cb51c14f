// The compiled-in catalog (lint/model/catalog.h): lookups, did-you-mean, the GPU
// table, facts from NVIDIA's recipes (data/recipe_facts.csv), and, when
// ../shared is present, that the generated data is current and that the
// generator stops on a value it does not have.
#include "lint/model/catalog.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include <sys/wait.h>

#include "tests/test_support.h"

using namespace mblint;

namespace {

// A value find_recipe must overwrite.
constexpr RecipeAlias kSentinelAlias{"sentinel", "sentinel"};

bool sorted_by_name(auto span, auto field) {
  return std::is_sorted(span.begin(), span.end(), [&](const auto& a, const auto& b) {
    return std::string_view(a.*field) < std::string_view(b.*field);
  });
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

TEST_CASE("catalog: tables are sorted for binary search", "[catalog]") {
  CHECK(sorted_by_name(all_recipes(), &Recipe::name));
  CHECK(sorted_by_name(all_recipe_aliases(), &RecipeAlias::alias));
  CHECK(sorted_by_name(all_models(), &ModelDims::key));
}

TEST_CASE("catalog: find_recipe by canonical name", "[catalog]") {
  const RecipeAlias* alias = &kSentinelAlias;
  const Recipe* r = find_recipe("llama3_70b_pretrain_32gpu_h100_bf16_config", &alias);
  REQUIRE(r != nullptr);
  CHECK(alias == nullptr);
  CHECK(std::string_view(r->name) == "llama3_70b_pretrain_32gpu_h100_bf16_config");
  CHECK(std::string_view(r->kind) == "library");
  CHECK(std::string_view(r->model) == "llama3_70b");
  CHECK(std::string_view(r->task) == "pretrain");
  CHECK(std::string_view(r->gpu) == "h100");
  CHECK(r->num_gpus == 32);

  CHECK(r->tensor_model_parallel_size.set);
  CHECK(r->tensor_model_parallel_size.certain);
  CHECK(r->tensor_model_parallel_size.value == 4);
  CHECK(r->pipeline_model_parallel_size.value == 4);
  CHECK(r->context_parallel_size.value == 2);
  CHECK(r->virtual_pipeline_model_parallel_size.set);
  CHECK(r->virtual_pipeline_model_parallel_size.value == 5);
  CHECK_FALSE(r->expert_model_parallel_size.set);  // "(1)": left at the default
  CHECK(r->sequence_parallel == 1);
  CHECK(r->seq_length.value == 8192);
  CHECK(r->global_batch_size.value == 512);
  CHECK(r->micro_batch_size.value == 1);
  CHECK(r->use_distributed_optimizer == 1);
  CHECK(std::string_view(r->consistency_note).empty());

  REQUIRE(r->dims != nullptr);
  CHECK(std::string_view(r->dims->key) == "llama3_70b");
  CHECK(r->dims->num_layers == 80);
  CHECK(r->dims->hidden_size == 8192);
  CHECK(r->dims->num_attention_heads == 64);
  CHECK(r->dims->num_query_groups == 8);
  CHECK(r->dims->ffn_hidden_size == 28672);
  CHECK(r->dims->vocab_size == 128256);
  CHECK(r->dims->gated_linear_unit);
  CHECK_FALSE(r->dims->tied_embeddings);
  CHECK_FALSE(std::string_view(r->dims->source).empty());
}

TEST_CASE("catalog: find_recipe through a legacy alias", "[catalog]") {
  const RecipeAlias* alias = nullptr;
  const Recipe* r = find_recipe("llama3_70b_pretrain_config", &alias);
  REQUIRE(r != nullptr);
  REQUIRE(alias != nullptr);
  CHECK(std::string_view(alias->alias) == "llama3_70b_pretrain_config");
  CHECK(std::string_view(alias->canonical) == "llama3_70b_pretrain_32gpu_h100_bf16_config");
  CHECK(std::string_view(r->name) == "llama3_70b_pretrain_32gpu_h100_bf16_config");

  // The out-parameter is optional.
  CHECK(find_recipe("deepseek_v3_pretrain_config") != nullptr);
}

TEST_CASE("catalog: unknown names are not found", "[catalog]") {
  const RecipeAlias* alias = &kSentinelAlias;
  CHECK(find_recipe("no_such_recipe_config", &alias) == nullptr);
  CHECK(alias == nullptr);
  CHECK(find_recipe("") == nullptr);
  // Exact names only: no case folding, no dropping of "_config".
  CHECK(find_recipe("LLAMA3_70B_PRETRAIN_CONFIG") == nullptr);
  CHECK(find_recipe("llama3_70b_pretrain_32gpu_h100_bf16") == nullptr);
  CHECK(find_model("no_such_model") == nullptr);
}

TEST_CASE("catalog: a name that is both a library and a perf recipe resolves to the library one",
          "[catalog]") {
  const Recipe* r = find_recipe("llama3_70b_sft_32gpu_h100_bf16_config");
  REQUIRE(r != nullptr);
  CHECK(std::string_view(r->kind) == "library");
  const auto count = std::count_if(all_recipes().begin(), all_recipes().end(), [](const Recipe& x) {
    return std::string_view(x.name) == "llama3_70b_sft_32gpu_h100_bf16_config";
  });
  CHECK(count == 2);
}

TEST_CASE("catalog: did-you-mean for typos", "[catalog]") {
  for (std::string_view typo : {"llama3_70b_pretrain_confg", "lama3_70b_pretrain_config"}) {
    INFO(typo);
    const auto names = similar_recipe_names(typo);
    REQUIRE_FALSE(names.empty());
    CHECK(names.front() == "llama3_70b_pretrain_config");
    CHECK(names.size() <= 3);
  }
  const auto one = similar_recipe_names("llama3_70b_pretrain_32gpu_h100_bf16_confi", 1);
  REQUIRE(one.size() == 1);
  CHECK(one.front() == "llama3_70b_pretrain_32gpu_h100_bf16_config");

  // Nothing is close to a random word; no duplicates from library/perf twins.
  CHECK(similar_recipe_names("zzzzzzzzzz").empty());
  const auto twins = similar_recipe_names("llama3_70b_sft_32gpu_h100_bf16_confi", 5);
  CHECK(std::count(twins.begin(), twins.end(), "llama3_70b_sft_32gpu_h100_bf16_config") == 1);
}

TEST_CASE("catalog: every alias resolves to its canonical recipe", "[catalog]") {
  REQUIRE(all_recipe_aliases().size() > 200);
  for (const RecipeAlias& a : all_recipe_aliases()) {
    INFO(a.alias);
    const RecipeAlias* via = nullptr;
    const Recipe* r = find_recipe(a.alias, &via);
    REQUIRE(r != nullptr);
    CHECK(via == &a);
    CHECK(std::string_view(r->name) == a.canonical);
  }
}

TEST_CASE("catalog: model dimensions are complete and consistent", "[catalog]") {
  REQUIRE(all_models().size() >= 12);
  for (const ModelDims& m : all_models()) {
    INFO(m.key);
    CHECK(m.num_layers > 0);
    CHECK(m.hidden_size > 0);
    CHECK(m.num_attention_heads > 0);
    CHECK(m.ffn_hidden_size > 0);
    CHECK(m.vocab_size >= 0);
    CHECK_FALSE(std::string_view(m.source).empty());
    if (m.multi_latent_attention) {
      CHECK(m.num_query_groups == 0);
      CHECK(m.kv_lora_rank > 0);
      CHECK(m.qk_head_dim > 0);
      CHECK(m.v_head_dim > 0);
    } else {
      REQUIRE(m.num_query_groups > 0);
      CHECK(m.num_attention_heads % m.num_query_groups == 0);
      CHECK(m.q_lora_rank == 0);
    }
    if (m.num_moe_experts > 0) {
      CHECK(m.moe_ffn_hidden_size > 0);
      CHECK(m.moe_router_topk > 0);
      CHECK(m.moe_router_topk <= m.num_moe_experts);
    } else {
      CHECK(m.moe_router_topk == 0);
    }
    CHECK(m.moe_dense_layers < m.num_layers);
    const std::string_view pattern = m.hybrid_layer_pattern;
    if (!pattern.empty()) CHECK(pattern.size() == static_cast<size_t>(m.num_layers));
  }
  for (const Recipe& r : all_recipes()) {
    if (!r.dims) continue;
    INFO(r.name);
    CHECK(std::string_view(r.dims->key) == r.model);
    CHECK(find_model(r.model) == r.dims);
  }
}

TEST_CASE("catalog: models the linter relies on have sourced dimensions", "[catalog]") {
  for (std::string_view key : {"llama3_8b", "llama3_70b", "llama31_8b", "llama31_70b", "llama31_405b",
                               "llama32_1b", "llama32_3b", "qwen3_30b_a3b", "qwen3_235b_a22b",
                               "deepseek_v2", "deepseek_v2_lite", "deepseek_v3"}) {
    INFO(key);
    CHECK(find_model(key) != nullptr);
  }

  const ModelDims* v2 = find_model("deepseek_v2");
  REQUIRE(v2 != nullptr);
  CHECK(v2->num_layers == 60);
  CHECK(v2->hidden_size == 5120);
  CHECK(v2->num_attention_heads == 128);
  CHECK(v2->multi_latent_attention);
  CHECK(v2->q_lora_rank == 1536);
  CHECK(v2->kv_lora_rank == 512);
  CHECK(v2->num_moe_experts == 160);
  CHECK(v2->moe_shared_expert_intermediate_size == 3072);
  CHECK(v2->moe_router_topk == 6);
  CHECK(v2->moe_ffn_hidden_size == 1536);
  CHECK(v2->moe_dense_layers == 1);
  CHECK(v2->ffn_hidden_size == 12288);
  CHECK(v2->vocab_size == 102400);

  const ModelDims* lite = find_model("deepseek_v2_lite");
  REQUIRE(lite != nullptr);
  CHECK(lite->num_layers == 27);
  CHECK(lite->q_lora_rank == 0);
  CHECK(lite->num_moe_experts == 64);
  CHECK(lite->moe_ffn_hidden_size == 1408);
  CHECK(lite->ffn_hidden_size == 10944);

  const ModelDims* v3 = find_model("deepseek_v3");
  REQUIRE(v3 != nullptr);
  CHECK(v3->num_layers == 61);
  CHECK(v3->moe_dense_layers == 3);
  CHECK(v3->num_moe_experts == 256);
  CHECK(v3->moe_shared_expert_intermediate_size == 2048);
  CHECK(v3->moe_router_topk == 8);
  CHECK(v3->vocab_size == 129280);
  CHECK(v3->mtp_num_layers == 1);

  CHECK(find_model("llama32_1b")->tied_embeddings);
  CHECK(find_model("llama32_3b")->tied_embeddings);
  CHECK_FALSE(find_model("llama31_405b")->tied_embeddings);
  CHECK(find_model("qwen3_30b_a3b")->moe_ffn_hidden_size == 768);
  CHECK(find_model("qwen3_235b_a22b")->num_query_groups == 4);
}

TEST_CASE("catalog: recipe facts from NVIDIA's tables", "[catalog]") {
  // The 64-GPU H100 DeepSeek-V3 perf recipe reuses the 1024-GPU layout.
  const Recipe* dsv3 = find_recipe("deepseek_v3_pretrain_64gpu_h100_bf16_config");
  REQUIRE(dsv3 != nullptr);
  CHECK(std::string_view(dsv3->kind) == "perf");
  CHECK_FALSE(std::string_view(dsv3->consistency_note).empty());
  CHECK(std::string_view(dsv3->consistency_note).find("EP*ETP*PP") != std::string_view::npos);
  REQUIRE(dsv3->dims != nullptr);
  CHECK(std::string_view(dsv3->dims->key) == "deepseek_v3");
  // The layout a recipe helper computes is evaluated: _get_deepseek_v3_pipeline_layout
  // (recipes/deepseek/h100/deepseek_v3.py:50-66) for PP 8 x VPP 4 (perf_recipes/deepseek/h100/
  // deepseek_v3.py) falls to set_deepseek_v3_pipeline_model_parallel_layout's explicit layout.
  CHECK(std::string_view(dsv3->pipeline_model_parallel_layout) == "Et|(tt|)*30mL");
  // Computed from the layer count of a Hugging Face config the extractor does not know:
  // set, value unknown ("?"); set_deepseek_v4_pipeline_model_parallel_layout
  // (models/deepseek/deepseek_v4_bridge.py:125).
  CHECK(std::string_view(find_recipe("deepseek_v4_flash_pretrain_32gpu_h100_bf16_config")
                             ->pipeline_model_parallel_layout) == "?");

  // Pipeline split accounting that the recipes set explicitly.
  const Recipe* l405 = find_recipe("llama31_405b_pretrain_256gpu_h100_bf16_config");
  REQUIRE(l405 != nullptr);
  CHECK(l405->account_for_embedding_in_pipeline_split == 1);
  CHECK(l405->account_for_loss_in_pipeline_split == 1);
  const Recipe* q235 = find_recipe("qwen3_235b_a22b_pretrain_256gpu_h100_bf16_config");
  REQUIRE(q235 != nullptr);
  CHECK(q235->account_for_embedding_in_pipeline_split == 1);
  const Recipe* dsv3_lib = find_recipe("deepseek_v3_pretrain_1024gpu_h100_bf16_config");
  REQUIRE(dsv3_lib != nullptr);
  CHECK(dsv3_lib->account_for_loss_in_pipeline_split == 0);
  CHECK(find_recipe("llama3_70b_pretrain_32gpu_h100_bf16_config")->account_for_embedding_in_pipeline_split == -1);

  // The recipe table's "False(?)" (set inside a branch): the branch is decided by the
  // recipe's own optimizer_type (recipes/kimi/h100/kimi_k2.py:66-74, the Muon branch).
  const Recipe* kimi = find_recipe("kimi_k2_pretrain_512gpu_h100_bf16_config");
  REQUIRE(kimi != nullptr);
  CHECK(kimi->use_distributed_optimizer == 0);

  // A recipe name without the <N>gpu part: model/task still known, GPU count 0.
  const Recipe* lightning = find_recipe("nemotron_3_5_lightning_peft_config");
  REQUIRE(lightning != nullptr);
  CHECK(std::string_view(lightning->model) == "nemotron_3_5_lightning");
  CHECK(std::string_view(lightning->task) == "peft");
  CHECK(lightning->num_gpus == 0);
  // The table's "(1)" and "alltoall(?)": _nemotron_3_nano_finetune_model sets the sizes
  // (recipes/nemotronh/h100/nemotron_3_nano.py:54-61) and `enable_deepep = True` takes the
  // flex branch (:513-516).
  CHECK(lightning->tensor_model_parallel_size.set);
  CHECK(lightning->expert_model_parallel_size.value == 8);
  CHECK(std::string_view(lightning->moe_token_dispatcher_type) == "flex");

  // Literal layouts are kept.
  const Recipe* glm = find_recipe("glm52_sft_416gpu_h100_bf16_config");
  REQUIRE(glm != nullptr);
  CHECK(std::string_view(glm->pipeline_model_parallel_layout).starts_with("Et|t||tttt|"));
}

namespace {

struct Sizes {
  long long tp, pp, cp, ep;
  int sp;  // -1 unset, 0, 1
};

void check_sizes(std::string_view name, Sizes want) {
  INFO(name);
  const Recipe* r = find_recipe(name);
  REQUIRE(r != nullptr);
  for (const RecipeInt* size : {&r->tensor_model_parallel_size, &r->pipeline_model_parallel_size,
                                &r->context_parallel_size, &r->expert_model_parallel_size}) {
    CHECK(size->certain);
  }
  auto value = [](const RecipeInt& v) { return v.set ? v.value : 1; };
  CHECK(value(r->tensor_model_parallel_size) == want.tp);
  CHECK(value(r->pipeline_model_parallel_size) == want.pp);
  CHECK(value(r->context_parallel_size) == want.cp);
  CHECK(value(r->expert_model_parallel_size) == want.ep);
  CHECK(r->sequence_parallel == want.sp);
}

}  // namespace

// Recipes whose parallel sizes a helper or a model provider sets, which the
// recipe table records as left at the default (field review B3). Expected
// values read in Megatron-Bridge @ 067f987df03b, src/megatron/bridge/.
TEST_CASE("catalog: parallel sizes set by helpers and providers", "[catalog]") {
  // recipes/moonlight/h100/moonlight_16b.py:405-412 passes tensor_parallel_size=4,
  // pipeline_parallel_size=2, context_parallel_size=1, expert_parallel_size=4,
  // sequence_parallel=True to _moonlight_16b_finetuning_model_provider (:44), which
  // writes them at :60-67; GBS 32 / MBS 1 from the convergence contract (:82-83).
  check_sizes("moonlight_16b_sft_8gpu_h100_bf16_config", {4, 2, 1, 4, 1});
  const Recipe* moonlight = find_recipe("moonlight_16b_sft_8gpu_h100_bf16_config");
  CHECK(moonlight->expert_tensor_parallel_size.value == 1);  // :66
  CHECK(moonlight->global_batch_size.value == 32);
  CHECK(moonlight->micro_batch_size.value == 1);
  CHECK(std::string_view(moonlight->recompute_granularity) == "selective");  // :69
  // The layout of _get_moonlight_pipeline_layout(2, 1) (:139): 14 + 13 decoder layers.
  CHECK(std::string_view(moonlight->pipeline_model_parallel_layout) == "Etttttttttttttt|tttttttttttttL");
  // moonlight_16b.py:693-697: TP 1, PP 1, CP 1, EP 2, SP off.
  check_sizes("moonlight_16b_peft_2gpu_h100_bf16_config", {1, 1, 1, 2, 0});

  // recipes/wan/h100/wan.py:171-176: TP 2, PP 1, CP 4, SP on; :183-184 GBS 1, MBS 1.
  check_sizes("wan_14b_pretrain_8gpu_h100_bf16_config", {2, 1, 4, 1, 1});
  const Recipe* wan = find_recipe("wan_14b_pretrain_8gpu_h100_bf16_config");
  CHECK(wan->global_batch_size.value == 1);
  CHECK(wan->micro_batch_size.value == 1);
  // DP = 8 / (2 x 4) = 1 divides GBS 1: the table's "GBS 1 not divisible by MBS*DP=8" is gone.
  CHECK(std::string_view(wan->consistency_note).empty());
  // wan.py:61-66 (wan_1_3b_pretrain_8gpu_h100_bf16_config at :34): TP 1, PP 1, CP 8, SP off.
  check_sizes("wan_1_3b_pretrain_8gpu_h100_bf16_config", {1, 1, 8, 1, 0});

  // recipes/flux/h100/flux.py:57-62: TP 2, PP 1, CP 1, SP off on the provider
  // FluxBridge().provider_bridge() builds.
  check_sizes("flux_12b_pretrain_2gpu_h100_bf16_config", {2, 1, 1, 1, 0});
  check_sizes("flux_12b_sft_2gpu_h100_bf16_config", {2, 1, 1, 1, 0});

  // recipes/nemotronh/h100/nemotron_3_nano.py:54-61 (_nemotron_3_nano_finetune_model):
  // TP 1, PP 1, CP 1, SP off, ETP 1, EP 8.
  check_sizes("nemotron_3_nano_sft_8gpu_h100_bf16_config", {1, 1, 1, 8, 0});
  check_sizes("nemotron_3_nano_peft_8gpu_h100_bf16_config", {1, 1, 1, 8, 0});

  // recipes/qwen2_audio/h100/qwen2_audio.py:48-49 passes TP 1 / PP 1 to
  // _qwen2_audio_common (:78), which writes them and its CP 1 / SP off defaults at :128-133.
  check_sizes("qwen2_audio_7b_sft_1gpu_h100_bf16_config", {1, 1, 1, 1, 0});
}

TEST_CASE("catalog: env_vars, comm_overlap and optimizer precision of a recipe", "[catalog]") {
  // recipes/moonlight/h100/moonlight_16b.py:375-384 (moonlight_16b_pretrain_16gpu_h100_bf16_config):
  // COMMON_RECIPE_ENV_VARS plus CUDA_DEVICE_MAX_CONNECTIONS 32 and NVLINK_DOMAIN_SIZE 8.
  const Recipe* r = find_recipe("moonlight_16b_pretrain_16gpu_h100_bf16_config");
  REQUIRE(r != nullptr);
  auto env = [&](std::string_view key) -> const RecipeSetting* {
    for (const RecipeSetting& s : r->env_vars) {
      if (key == s.key) return &s;
    }
    return nullptr;
  };
  REQUIRE(env("CUDA_DEVICE_MAX_CONNECTIONS") != nullptr);
  CHECK(env("CUDA_DEVICE_MAX_CONNECTIONS")->kind == RecipeValueKind::Int);
  CHECK(std::string_view(env("CUDA_DEVICE_MAX_CONNECTIONS")->text) == "32");
  REQUIRE(env("NVLINK_DOMAIN_SIZE") != nullptr);
  CHECK(std::string_view(env("NVLINK_DOMAIN_SIZE")->text) == "8");
  // recipes/utils/environment_utils.py:22-33.
  REQUIRE(env("PYTORCH_CUDA_ALLOC_CONF") != nullptr);
  CHECK(env("PYTORCH_CUDA_ALLOC_CONF")->kind == RecipeValueKind::String);
  CHECK(std::string_view(env("PYTORCH_CUDA_ALLOC_CONF")->text) == "expandable_segments:True");

  // moonlight_16b.py:258 builds CommOverlapConfig(tp_comm_overlap=False) in the 8-GPU recipe the
  // 16-GPU one starts from, which turns EP overlap and delayed wgrad on (:332-333).
  CHECK(r->comm_overlap == 1);
  auto comm = [&](std::string_view key) -> std::string_view {
    for (const RecipeSetting& s : r->comm_overlap_fields) {
      if (key == s.key) return s.text;
    }
    return "(unset)";
  };
  CHECK(comm("tp_comm_overlap") == "false");
  CHECK(comm("overlap_moe_expert_parallel_comm") == "true");
  CHECK(comm("delay_wgrad_compute") == "true");

  // :354-358: precision-aware optimizer with bf16 main grads and moments, fp32 main params;
  // :365-371: MixedPrecisionConfig(grad_reduce_in_fp32=False), which Bridge copies to ddp.
  CHECK(r->use_precision_aware_optimizer == 1);
  CHECK(std::string_view(r->main_grads_dtype) == "bf16");
  CHECK(std::string_view(r->main_params_dtype) == "fp32");
  CHECK(std::string_view(r->exp_avg_dtype) == "bf16");
  CHECK(std::string_view(r->exp_avg_sq_dtype) == "bf16");
  CHECK(r->grad_reduce_in_fp32 == 0);
  CHECK(r->grad_reduce_from_mixed_precision);

  // recipes/common.py:128 (_pretrain_common) leaves comm_overlap None; recipes/wan/h100/wan.py:246
  // passes comm_overlap=None as well.
  CHECK(find_recipe("wan_14b_pretrain_8gpu_h100_bf16_config")->comm_overlap == 0);
}

TEST_CASE("catalog: every recipe of data/recipe_facts.csv is compiled in", "[catalog]") {
  const std::string facts = mblint::test::read_file(mblint::test::source_dir() / "data/recipe_facts.csv");
  REQUIRE_FALSE(facts.empty());
  std::set<std::pair<std::string, std::string>> recipes;
  std::istringstream lines(facts);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("recipe,", 0) == 0) continue;
    size_t first = line.find(',');
    size_t second = line.find(',', first + 1);
    recipes.emplace(line.substr(0, first), line.substr(first + 1, second - first - 1));
  }
  CHECK(recipes.size() == all_recipes().size());
  for (const Recipe& r : all_recipes()) {
    INFO(r.name);
    CHECK(recipes.count({r.name, r.kind}) == 1);
  }
}

TEST_CASE("catalog: GPU lookups", "[catalog]") {
  const GpuType* h100 = find_gpu("h100");
  REQUIRE(h100 != nullptr);
  CHECK(std::string_view(h100->name) == "h100");
  CHECK(std::string_view(h100->architecture) == "hopper");
  CHECK(h100->gpus_per_node == 8);
  CHECK(h100->nvlink_domain == 8);
  CHECK(h100->memory_gib == Approx(79.11));
  CHECK(find_gpu("H100") == h100);
  CHECK(find_gpu("h100-80gb") == h100);
  CHECK(find_gpu("NVIDIA H100 80GB HBM3") == h100);

  const GpuType* a100 = find_gpu("a100");
  REQUIRE(a100 != nullptr);
  CHECK(a100->memory_gib > 70);  // plain "a100" is the 80GB part
  CHECK(find_gpu("a100-80") == a100);
  CHECK(find_gpu("A100-80GB") == a100);
  const GpuType* a100_40 = find_gpu("a100-40");
  REQUIRE(a100_40 != nullptr);
  CHECK(a100_40 != a100);
  CHECK(a100_40->memory_gib < 40);
  CHECK(std::string_view(a100_40->architecture) == "ampere");

  const GpuType* gb200 = find_gpu("GB200");
  REQUIRE(gb200 != nullptr);
  CHECK(gb200->gpus_per_node == 4);
  CHECK(gb200->nvlink_domain == 72);
  CHECK(find_gpu("gb200-nvl72") == gb200);
  CHECK(std::string_view(find_gpu("vr200")->architecture) == "rubin");
  CHECK(find_gpu("b300")->memory_gib > find_gpu("b200")->memory_gib);
  CHECK(find_gpu("h200")->memory_gib > h100->memory_gib);
  // GH200: the marketed 96 GB / 144 GB (a lower bound of what torch reports), four per quad node.
  const GpuType* gh200 = find_gpu("GH200");
  REQUIRE(gh200 != nullptr);
  CHECK(gh200->memory_gib == Approx(96e9 / (1u << 30)));
  CHECK(gh200->gpus_per_node == 4);
  CHECK(gh200->nvlink_domain == 4);
  CHECK(std::string_view(gh200->architecture) == "hopper");
  CHECK(find_gpu("gh200-96gb") == gh200);
  const GpuType* gh200_144 = find_gpu("GH200 144GB");
  REQUIRE(gh200_144 != nullptr);
  CHECK(gh200_144->memory_gib == Approx(144e9 / (1u << 30)));
  CHECK(find_gpu("gh200-hbm3e") == gh200_144);
  for (std::string_view name : {"h200", "b200", "b300", "gb300", "vr200", "r100", "gh200", "gh200-144gb"}) {
    INFO(name);
    CHECK(find_gpu(name) != nullptr);
  }

  CHECK(find_gpu("") == nullptr);
  CHECK(find_gpu("v100") == nullptr);
  CHECK(find_gpu("tpu") == nullptr);

  // Every GPU a recipe names is in the table.
  for (const Recipe& r : all_recipes()) {
    if (std::string_view(r.gpu).empty()) continue;
    INFO(r.name);
    CHECK(find_gpu(r.gpu) != nullptr);
  }
}

TEST_CASE("catalog: generated data matches shared/ (when present)", "[catalog][shared]") {
  const auto shared = mblint::test::shared_or_skip("the recipe-table comparison");
  if (!shared) return;
  const std::string csv =
      mblint::test::read_file(*shared / "corpus/megatron-bridge/derived/recipe_parallelism.csv");
  REQUIRE_FALSE(csv.empty());
  // Every recipe of the table is in the catalog (the catalog also has the
  // recipes the table misses: data/recipe_table_corrections.csv).
  std::istringstream rows(csv);
  std::string row;
  std::getline(rows, row);  // header
  size_t table = 0;
  while (std::getline(rows, row)) {
    if (row.empty()) continue;
    ++table;
    INFO(row.substr(0, row.find(',')));
    CHECK(find_recipe(row.substr(0, row.find(','))) != nullptr);
  }
  CHECK(all_recipes().size() >= table);

  if (std::system("python3 --version > /dev/null 2>&1") != 0) {
    if (mblint::test::shared_required()) FAIL("python3 not found: tools/gen_catalog.py --check cannot run");
    WARN("python3 not found; skipping tools/gen_catalog.py --check");
    return;
  }
  const std::string command = "python3 " +
                              shell_quote((mblint::test::source_dir() / "tools/gen_catalog.py").string()) +
                              " --check --shared " + shell_quote(shared->string());
  INFO(command);
  CHECK(std::system(command.c_str()) == 0);
}

TEST_CASE("catalog: the generator stops on a recipe value it does not have", "[catalog][shared]") {
  const auto shared = mblint::test::shared_dir();
  if (!shared || std::system("python3 --version > /dev/null 2>&1") != 0) {
    WARN("../shared or python3 not present; skipping the generator's failure test");
    return;
  }
  // The facts without moonlight_16b_sft_8gpu_h100_bf16_config's TP: the
  // generator must name the recipe and the field, not record a default.
  const std::string facts = mblint::test::read_file(mblint::test::source_dir() / "data/recipe_facts.csv");
  std::istringstream lines(facts);
  std::string kept;
  std::string line;
  size_t dropped = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("moonlight_16b_sft_8gpu_h100_bf16_config,library,model.tensor_model_parallel_size,", 0) == 0) {
      ++dropped;
      continue;
    }
    kept += line + "\n";
  }
  REQUIRE(dropped == 1);
  const std::filesystem::path dir = mblint::test::make_temp_dir("mblint-gen-catalog");
  std::ofstream(dir / "facts.csv") << kept;
  const std::string command =
      "python3 " + shell_quote((mblint::test::source_dir() / "tools/gen_catalog.py").string()) + " --shared " +
      shell_quote(shared->string()) + " --facts " + shell_quote((dir / "facts.csv").string()) + " --out " +
      shell_quote((dir / "catalog.inc").string()) + " --corrections " + shell_quote((dir / "fixes.csv").string()) +
      " 2> " + shell_quote((dir / "err.txt").string());
  INFO(command);
  const int status = std::system(command.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  const std::string err = mblint::test::read_file(dir / "err.txt");
  CHECK(err.find("moonlight_16b_sft_8gpu_h100_bf16_config") != std::string::npos);
  CHECK(err.find("model.tensor_model_parallel_size") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "catalog.inc"));
  std::filesystem::remove_all(dir);
}
