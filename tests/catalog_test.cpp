// The compiled-in catalog (lint/catalog.h): lookups, did-you-mean, the GPU
// table, facts from NVIDIA's recipes, and, when ../shared is present, that the
// generated data matches the recipe table it was generated from.
#include "lint/catalog.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <string_view>

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
  // The layout is computed by a Python helper in the recipe: known to be set,
  // but its value is not statically known ("?").
  CHECK(std::string_view(dsv3->pipeline_model_parallel_layout) == "?");

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

  // "False(?)": set inside a branch, so not relied upon.
  const Recipe* kimi = find_recipe("kimi_k2_pretrain_512gpu_h100_bf16_config");
  REQUIRE(kimi != nullptr);
  CHECK(kimi->use_distributed_optimizer == -1);

  // A recipe name without the <N>gpu part: model/task still known, GPU count 0.
  const Recipe* lightning = find_recipe("nemotron_3_5_lightning_peft_config");
  REQUIRE(lightning != nullptr);
  CHECK(std::string_view(lightning->model) == "nemotron_3_5_lightning");
  CHECK(std::string_view(lightning->task) == "peft");
  CHECK(lightning->num_gpus == 0);
  CHECK_FALSE(lightning->tensor_model_parallel_size.set);
  CHECK(std::string_view(lightning->moe_token_dispatcher_type).empty());  // "alltoall(?)"

  // Literal layouts are kept.
  const Recipe* glm = find_recipe("glm52_sft_416gpu_h100_bf16_config");
  REQUIRE(glm != nullptr);
  CHECK(std::string_view(glm->pipeline_model_parallel_layout).starts_with("Et|t||tttt|"));
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
  for (std::string_view name : {"h200", "b200", "b300", "gb300", "vr200", "r100"}) {
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
  // One recipe per line after the header (no field spans lines).
  const auto lines = std::count(csv.begin(), csv.end(), '\n') + (csv.back() == '\n' ? 0 : 1);
  CHECK(all_recipes().size() == static_cast<size_t>(lines - 1));

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
