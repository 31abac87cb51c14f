#!/usr/bin/env python3
"""Generate lint/model/catalog_data.inc, the catalog mblint compiles in.

mblint never reads ../shared at run time, so the recipe table, the legacy recipe
names and the model dimensions become C++ source here:

  inputs   data/recipe_facts.csv     what each recipe sets, extracted statically from
                                     Megatron Bridge's source by tools/extract_recipe_facts.py
                                     (committed; one row per recipe and field, with file:line)
           <shared>/corpus/megatron-bridge/derived/recipe_parallelism.csv
                                     the recipe table: model key, task, GPU, GPU count and
                                     precision name of each recipe, and model shapes
           data/recipe_aliases.csv   (tools/extract_recipe_aliases.py; committed)
           data/model_dims.csv       (hand-written, every row cites its source)
  output   lint/model/catalog_data.inc     (aggregate-initialised constexpr arrays, sorted)
           data/recipe_table_corrections.csv
                                     every catalog value in which the recipe table disagrees
                                     with the source (the source wins)

Every setting the catalog records comes from the facts; a recipe or field the
facts do not determine stops the generator (exit 2, naming both), so nothing
unknown is recorded as a default. The recipe table's parallel sizes are only
compared, and its consistency notes are recomputed from the facts.

Usage:
  tools/gen_catalog.py            regenerate lint/model/catalog_data.inc and the corrections
  tools/gen_catalog.py --check    exit 1 when a committed file differs from what
                                  would be generated (used by tests/catalog_test.cpp)

Standard library only. The output is deterministic: rows are sorted and no
paths, dates or machine details are written.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SHARED = REPO_ROOT.parent / "shared"
RECIPE_CSV = Path("corpus/megatron-bridge/derived/recipe_parallelism.csv")
ALIAS_CSV = REPO_ROOT / "data/recipe_aliases.csv"
FACTS_CSV = REPO_ROOT / "data/recipe_facts.csv"
CORRECTIONS = REPO_ROOT / "data/recipe_table_corrections.csv"
MODEL_CSV = REPO_ROOT / "data/model_dims.csv"
OUTPUT = REPO_ROOT / "lint/model/catalog_data.inc"
VISION_CSV = REPO_ROOT / "data/vision_dims.csv"
VISION_OUTPUT = REPO_ROOT / "lint/facts/vision_dims_data.inc"
SOUND_CSV = REPO_ROOT / "data/sound_dims.csv"
SOUND_OUTPUT = REPO_ROOT / "lint/facts/sound_dims_data.inc"
NOTES_CSV = REPO_ROOT / "data/model_notes.csv"
NOTES_OUTPUT = REPO_ROOT / "lint/facts/model_notes_data.inc"

# Recipe names follow <model>_<task>_<N>gpu_<gpu>_<precision>[_variant]_config;
# used only where the recipe table leaves model/task/gpu empty (8 rows whose
# names do not follow the pattern fully, e.g. nemotron_3_5_lightning_pretrain_config).
NAME_TASK = re.compile(r"^(?P<model>.+?)_(?P<task>pretrain|sft|peft)(?:_|$)")
NAME_GPUS = re.compile(r"_(?P<n>\d+)gpu_(?P<gpu>[a-z0-9]+)_")

# A pipeline layout the recipe spells out literally (Megatron's layout grammar:
# E embedding, t transformer layer, m MTP, L loss, | stage boundary, repetition).
# Anything else in the table is an unevaluated Python expression.
LITERAL_LAYOUT = re.compile(r"^[EtmL|*()0-9,]+$")

UNCERTAIN = "(?)"


class DataError(Exception):
    pass


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a CSV whose leading `#` lines are comments."""
    with path.open(newline="", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))


# ---------------------------------------------------------------- value parsing


@dataclass(frozen=True)
class RecipeInt:
    set: bool = False
    certain: bool = True
    value: int = 0


def parse_int_setting(text: str) -> RecipeInt:
    """`(1)`/`1*`/empty: left at the Megatron default; `(?)`: set inside a branch;
    `EXPR:`/other text: not statically known."""
    text = text.strip()
    if text in ("", "(1)", "1*", "None"):
        return RecipeInt()
    certain = UNCERTAIN not in text
    text = text.replace(UNCERTAIN, "").strip()
    if re.fullmatch(r"-?\d+", text):
        return RecipeInt(True, certain, int(text))
    return RecipeInt(False, False, 0)


def parse_bool_setting(text: str) -> int:
    """True/False -> 1/0; empty, conditional or unknown -> -1."""
    return {"True": 1, "False": 0}.get(text.strip(), -1)


def parse_str_setting(text: str) -> str:
    """A string setting, or "" when unset, conditional, None or an expression."""
    text = text.strip()
    if UNCERTAIN in text or text.startswith("EXPR:") or text == "None":
        return ""
    return text


def parse_modules(text: str) -> str:
    """"['core_attn', 'mlp']" -> "core_attn,mlp"."""
    text = parse_str_setting(text)
    if not text:
        return ""
    try:
        modules = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return ""
    if not isinstance(modules, (list, tuple)) or not all(isinstance(m, str) for m in modules):
        return ""
    return ",".join(modules)


# A layout the recipe computes with a helper function: set, value unknown.
LAYOUT_SET_UNKNOWN = "?"


def parse_layout(raw: str) -> str:
    text = parse_str_setting(raw)
    if LITERAL_LAYOUT.match(text):
        return text
    # Also a layout set inside a branch ("(?)"): it may be set, so nothing
    # may be concluded from the even split.
    raw = raw.strip().strip('"')
    if raw and raw not in ("None", "none"):
        return LAYOUT_SET_UNKNOWN
    return ""


# ---------------------------------------------------------------- models

MODEL_INT_FIELDS = (
    "num_layers", "hidden_size", "num_attention_heads", "num_query_groups", "kv_channels",
    "ffn_hidden_size", "num_moe_experts", "moe_ffn_hidden_size", "moe_shared_expert_intermediate_size",
    "moe_router_topk", "moe_dense_layers", "vocab_size",
)
MLA_INT_FIELDS = ("q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim", "mtp_num_layers",
                  "moe_latent_size")
MODEL_BOOL_FIELDS = ("multi_latent_attention", "gated_linear_unit", "tied_embeddings", "mtp_repeated_layer")

# Recipe-table dimension columns and the ModelDims field each must agree with.
CSV_DIM_COLUMNS = (
    "num_layers", "hidden_size", "num_attention_heads", "num_query_groups",
    "ffn_hidden_size", "num_moe_experts", "moe_router_topk",
)


# The tokens of data/model_dims.csv's `text_extras` column (appended after
# dsa_indexer), the layer features lint/facts/estimate_read.cpp reads.
TEXT_EXTRAS = ("rmsnorm", "post_norms", "no_pre_norms", "qk_norm", "unfused_glu", "logit_softcap", "softcap_attention",
               "unfused_attention", "swiglu_clamp", "gemma4_norms", "torch_norms")


# Abbreviations of data/model_dims.csv's `source` column (see its header),
# expanded so that ModelDims::source names repository, commit and path.
SOURCE_ABBREVIATIONS = (
    (re.compile(r"\bMB-P "), "NVIDIA-NeMo/Megatron-Bridge@dc805f5cf9e0 src/megatron/bridge/models/"),
    (re.compile(r"\bMB-Q "), "NVIDIA-NeMo/Megatron-Bridge@468fecc82e11 src/megatron/bridge/models/qwen/qwen_provider.py "),
    (re.compile(r"\bMB "), "NVIDIA-NeMo/Megatron-Bridge@067f987df03b "),
    (re.compile(r"\bDS3 "), "deepseek-ai/DeepSeek-V3@9b4e9788e4a3 inference/configs/"),
    (re.compile(r"\bREF\b"), "shared/reference/bridge-config-format.md sec. 5.2"),
    (re.compile(r"\bCSV\b"), "shared/corpus/megatron-bridge/derived/recipe_parallelism.csv"),
)


def expand_source(text: str) -> str:
    for pattern, replacement in SOURCE_ABBREVIATIONS:
        text = pattern.sub(replacement, text)
    return text


def bias_activation_fusion(text: str, key: str, where: str) -> int:
    """data/model_dims.csv's `bias_activation_fusion` column (appended after
    gated_delta_net): "0 SOURCE" or "1 SOURCE", the value the model's bridge or
    provider leaves in TransformerConfig.bias_activation_fusion and where it is
    set (or, for 0, the bridge that leaves Megatron-Core's default False);
    empty when not recorded (-1: the estimate then assumes the unfused GLU)."""
    text = text.strip()
    if not text:
        return -1
    value, _, source = text.partition(" ")
    if value not in ("0", "1") or not source.strip():
        raise DataError(f"{where}: {key}.bias_activation_fusion must be '0 SOURCE' or '1 SOURCE'")
    return int(value)


def load_models(path: Path) -> dict[str, dict]:
    models: dict[str, dict] = {}
    for row in read_csv(path):
        key = row["key"]
        if key in models:
            raise DataError(f"{path.name}: duplicate model {key}")
        model: dict = {"key": key, "hf_id": row["hf_id"], "source": expand_source(row["source"]),
                       "hybrid_layer_pattern": row["hybrid_layer_pattern"], "mamba_mixer": row["mamba_mixer"],
                       "mtp_layer_pattern": row["mtp_layer_pattern"], "dsa_indexer": row["dsa_indexer"],
                       "text_extras": row.get("text_extras") or "",
                       "gated_delta_net": row.get("gated_delta_net") or "",
                       "dsv4": row.get("dsv4") or "", "csa_compress_ratios": row.get("csa_compress_ratios") or "",
                       "dit": row.get("dit") or "", "global_attention": row.get("global_attention") or "",
                       "per_layer_embedding": row.get("per_layer_embedding") or ""}
        model["bias_activation_fusion"] = bias_activation_fusion(row.get("bias_activation_fusion") or "", key, path.name)
        for name in MODEL_INT_FIELDS + MLA_INT_FIELDS:
            model[name] = int(row[name])
        for name in MODEL_BOOL_FIELDS:
            if row[name] not in ("0", "1"):
                raise DataError(f"{path.name}: {key}.{name} must be 0 or 1")
            model[name] = row[name] == "1"
        check_model(model, path.name)
        models[key] = model
    return models


def check_model(m: dict, where: str) -> None:
    """Internal consistency, so a typo in the hand-written CSV fails loudly."""
    key = m["key"]

    def need(cond: bool, what: str) -> None:
        if not cond:
            raise DataError(f"{where}: {key}: {what}")

    need(bool(m["source"].strip()), "no source")
    for name in ("num_layers", "hidden_size", "num_attention_heads", "ffn_hidden_size"):
        need(m[name] > 0, f"{name} must be > 0")
    if m["multi_latent_attention"]:
        need(m["num_query_groups"] == 0, "MLA models have no query groups (0)")
        need(m["kv_lora_rank"] > 0 and m["qk_head_dim"] > 0 and m["v_head_dim"] > 0, "MLA dims missing")
    else:
        need(m["num_query_groups"] > 0, "num_query_groups must be > 0 (= heads for MHA)")
        need(m["num_attention_heads"] % m["num_query_groups"] == 0, "heads not divisible by query groups")
        need(m["q_lora_rank"] == m["kv_lora_rank"] == m["qk_head_dim"] == m["v_head_dim"] == 0,
             "MLA fields set on a non-MLA model")
    moe = m["num_moe_experts"] > 0
    need(moe == (m["moe_ffn_hidden_size"] > 0) == (m["moe_router_topk"] > 0), "MoE fields inconsistent")
    need(m["moe_router_topk"] <= m["num_moe_experts"], "top-k larger than the expert count")
    need(m["moe_dense_layers"] < m["num_layers"], "more dense layers than layers")
    pattern = m["hybrid_layer_pattern"]
    if pattern:
        need(len(pattern) == m["num_layers"], "hybrid_layer_pattern length != num_layers")
        need(set(pattern) <= set("M*-E"), "hybrid_layer_pattern has unknown symbols")
    mixer = m["mamba_mixer"]
    need(not mixer or "M" in pattern, "mamba_mixer set on a model without Mamba layers")
    need(not mixer or re.fullmatch(r"[1-9]\d*/[1-9]\d*/[1-9]\d*/[1-9]\d*(/unfused)?", mixer) is not None,
         "mamba_mixer is not heads/head_dim/state/groups[/unfused]")
    mtp = m["mtp_layer_pattern"]
    need(not mtp or m["mtp_num_layers"] > 0, "mtp_layer_pattern set without MTP layers")
    # A transformer's MTP layer: attention and a dense MLP or a MoE (EXAONE MoE keeps it dense).
    need(not mtp or pattern or mtp in ("*-", "*E"), "mtp_layer_pattern of a transformer is not '*-' or '*E'")
    need(set(mtp) <= set("M*-E"), "mtp_layer_pattern has unknown symbols")
    need(not m["mtp_repeated_layer"] or m["mtp_num_layers"] > 0, "mtp_repeated_layer set without MTP layers")
    need(m["moe_latent_size"] == 0 or moe, "moe_latent_size set on a dense model")
    dsa = m["dsa_indexer"]
    need(not dsa or re.fullmatch(r"[1-9]\d*/[1-9]\d*/[1-9]\d*/[1-9]\d*/\d+", dsa) is not None,
         "dsa_indexer is not heads/head_dim/topk/topk_freq/skip_topk_offset")
    need(not dsa or m["multi_latent_attention"], "dsa_indexer set on a model without MLA")
    extras = [t for t in m["text_extras"].split("+") if t]
    need(set(extras) <= set(TEXT_EXTRAS), f"text_extras has unknown tokens (known: {', '.join(TEXT_EXTRAS)})")
    gdn = m["gated_delta_net"]
    need(not gdn or re.fullmatch(r"[1-9]\d*/[1-9]\d*/[1-9]\d*/[1-9]\d*/[1-9]\d*/[1-9]\d*/[01]", gdn) is not None,
         "gated_delta_net is not freq/key_heads/key_dim/value_heads/value_dim/conv_kernel/output_gate")
    need(not gdn or not dsa, "gated_delta_net and dsa_indexer are both set")
    check_dsv4(m, need)
    check_dit(m, need)
    glob = re.fullmatch(r"([1-9]\d*)/([1-9]\d*)/([1-9]\d*)", m["global_attention"])
    need(not m["global_attention"] or glob is not None, "global_attention is not every/kv_channels/query_groups")
    need(not glob or (int(glob[1]) <= m["num_layers"] and m["num_attention_heads"] % int(glob[3]) == 0),
         "global_attention: no global layer, or heads not divisible by its query groups")
    need(not glob or not (m["multi_latent_attention"] or m["hybrid_layer_pattern"] or m["gated_delta_net"] or m["dsv4"]),
         "global_attention on an MLA, hybrid, gated delta net or DeepSeek V4 model")
    ple = m["per_layer_embedding"]
    need(not ple or re.fullmatch(r"[1-9]\d*/[1-9]\d*", ple) is not None, "per_layer_embedding is not vocab/dim")
    need(not ple or not (m["num_moe_experts"] or m["hybrid_layer_pattern"] or m["multi_latent_attention"]),
         "per_layer_embedding on a MoE, hybrid or MLA model")


def check_dit(m: dict, need) -> None:
    """A diffusion transformer: "wan", or "flux/J/S/C/T/V/G" with J + S = num_layers."""
    dit = m["dit"]
    if not dit:
        return
    flux = re.fullmatch(r"flux/([1-9]\d*)/([1-9]\d*)/([1-9]\d*)/([1-9]\d*)/([1-9]\d*)/([01])", dit)
    need(dit == "wan" or flux is not None, "dit is not 'wan' or 'flux/joint/single/in_channels/context_dim/vec_in_dim/guidance'")
    need(not flux or int(flux[1]) + int(flux[2]) == m["num_layers"], "a FLUX row's num_layers is not joint + single blocks")
    need(m["num_moe_experts"] == 0 and not m["multi_latent_attention"] and not m["hybrid_layer_pattern"],
         "dit set on a MoE, MLA or hybrid model")


def check_dsv4(m: dict, need) -> None:
    """DeepSeek V4's two columns: both or neither, one ratio (0, 4 or 128) per decoder and MTP layer."""
    dsv4, ratios = m["dsv4"], m["csa_compress_ratios"].split()
    need(bool(dsv4) == bool(ratios), "dsv4 and csa_compress_ratios must be set together")
    if not dsv4:
        return
    need(re.fullmatch(r"[1-9]\d*/[1-9]\d*/[1-9]\d*/[1-9]\d*/\d+/[1-9]\d*/[1-9]\d*/[1-9]\d*", dsv4) is not None,
         "dsv4 is not hc_mult/o_groups/o_lora_rank/window/hash_layers/index_heads/index_head_dim/index_topk")
    need(m["multi_latent_attention"] and m["num_moe_experts"] > 0, "dsv4 set on a model without MLA and MoE")
    need(set(ratios) <= {"0", "4", "128"}, "csa_compress_ratios has a ratio other than 0, 4, 128")
    need(len(ratios) == m["num_layers"] + m["mtp_num_layers"], "csa_compress_ratios length != num_layers + mtp_num_layers")
    need(not m["dsa_indexer"] and not m["gated_delta_net"], "dsv4 with dsa_indexer or gated_delta_net")


# ---------------------------------------------------------------- recipes


@dataclass(frozen=True)
class Fact:
    status: str  # set, default (Megatron-Core's dataclass default), runtime (decided at run time)
    value: object
    where: str


Facts = dict[str, Fact]

# Fields every recipe's facts must have (tools/extract_recipe_facts.py FIELDS).
REQUIRED_FACTS = (
    "module", "model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
    "model.context_parallel_size", "model.expert_model_parallel_size", "model.expert_tensor_parallel_size",
    "model.virtual_pipeline_model_parallel_size", "model.sequence_parallel", "model.seq_length", "dataset.seq_length",
    "train.global_batch_size", "train.micro_batch_size", "model.recompute_granularity", "model.recompute_method",
    "model.recompute_num_layers", "model.recompute_modules", "ddp.use_distributed_optimizer",
    "optimizer.use_distributed_optimizer", "model.moe_token_dispatcher_type", "model.moe_flex_dispatcher_backend",
    "model.cuda_graph_impl", "model.pipeline_model_parallel_layout", "model.num_layers_in_first_pipeline_stage",
    "model.num_layers_in_last_pipeline_stage", "model.account_for_embedding_in_pipeline_split",
    "model.account_for_loss_in_pipeline_split", "mixed_precision", "mixed_precision.grad_reduce_in_fp32",
    "ddp.grad_reduce_in_fp32", "optimizer.use_precision_aware_optimizer", "optimizer.main_grads_dtype",
    "optimizer.main_params_dtype", "optimizer.exp_avg_dtype", "optimizer.exp_avg_sq_dtype", "env_vars",
    "comm_overlap",
)

# Settings recorded only where a recipe sets them, for the memory estimate
# (tools/extract_recipe_facts.py MEMORY_FIELDS); the recipe layer writes each
# at its path.
MEMORY_FIELDS = (
    "ddp.data_parallel_sharding_strategy", "ddp.outer_dp_sharding_strategy",
    "ddp.num_distributed_optimizer_instances", "ddp.keep_fp8_transpose_cache", "mixed_precision.fp8_param_gather",
    "model.disable_parameter_transpose_cache", "model.gradient_accumulation_fusion", "model.cpu_offloading",
    "model.cpu_offloading_num_layers", "model.fine_grained_activation_offloading", "model.offload_modules",
    "optimizer.optimizer_cpu_offload", "optimizer.optimizer_offload_fraction", "model.cross_entropy_loss_fusion",
    "model.cross_entropy_fusion_impl", "model.moe_expert_capacity_factor", "model.moe_pad_expert_input_to_capacity",
    "model.freeze_vision_model", "model.freeze_vision_projection", "model.freeze_language_model",
    "model.has_sound",  # Nemotron Omni: no sound encoder (estimate_vision.cpp)
    "model.freeze_audio_model", "model.freeze_audio_projection",  # Qwen2-Audio's encoder (estimate_vision.cpp)
    # Nemotron Omni with sound: what of the Parakeet encoder trains, and RADIO's
    # temporal video embedder (estimate_sound.cpp).
    "model.freeze_sound_encoder", "model.freeze_sound_projection", "model.temporal_patch_dim",
    "model.separate_video_embedder",
    "model.bias_activation_fusion", "model.apply_dsa_kernel_fusion", "model.dsa_kernel_backend", "model.use_fused_mhc",
    # Diffusion recipes: the mock data module's latent grid and text length.
    "dataset.F_latents", "dataset.H_latents", "dataset.W_latents", "dataset.patch_spatial",
    "dataset.patch_temporal", "dataset.number_packed_samples", "dataset.context_seq_len", "dataset.image_H",
    "dataset.image_W", "dataset.vae_scale_factor", "dataset.prompt_seq_len",
    # Recorded for every recipe (FIELDS) but not otherwise carried into the catalog.
    "ddp.use_megatron_fsdp",
    # Rules' settings (RULE_FIELDS there): the Mamba mixer's path and the
    # dataset's sequence packing (rules/batch/packed_sequences_unfused_mamba.cpp).
    "model.use_mamba_mem_eff_path", "dataset.enable_offline_packing", "dataset.enable_in_batch_packing",
    # PEFT's LoRA / DoRA rank (estimate_read.cpp); null where the recipe has no PEFT.
    "peft.dim",
    # Megatron's own layer spec and its softmax path (estimate_read.cpp).
    "model.transformer_impl", "model.masked_softmax_fusion",
    # The vocabulary Bridge sizes the embedding with (estimate_read.cpp vocab_size).
    "tokenizer.tokenizer_type", "tokenizer.vocab_size", "tokenizer.use_tokenizer_vocab_size", "model.vocab_size",
    "model.make_vocab_size_divisible_by",
)

# The model's shape where nothing in Bridge sets it (tools/extract_recipe_facts.py
# SHAPE_FIELDS): the recipe layer writes TransformerConfig's defaults (0, None).
SHAPE_FIELDS = ("model.num_layers", "model.hidden_size", "model.num_attention_heads", "model.num_moe_experts",
                "model.kv_channels")

# torch dtypes of the precision-aware optimizer, as mblint spells them.
DTYPES = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.uint8": "fp8"}

# Pipeline layout entries (Megatron's PipelineParallelLayerLayout) in the
# string grammar mblint reads.
LAYOUT_SYMBOLS = {"embedding": "E", "decoder": "t", "mtp": "m", "loss": "L"}


def load_facts(path: Path) -> dict[tuple[str, str], Facts]:
    facts: dict[tuple[str, str], Facts] = {}
    for row in read_csv(path):
        key = (row["recipe"], row["kind"])
        if row["status"] not in ("set", "default", "runtime"):
            raise DataError(f"{path.name}: {key[0]}: {row['field']} has status {row['status']}")
        facts.setdefault(key, {})[row["field"]] = Fact(row["status"], json.loads(row["value"]), row["where"])
    for (name, _kind), f in facts.items():
        for field in REQUIRED_FACTS:
            if field not in f:
                raise DataError(f"{path.name}: {name}: no value for {field}")
    return facts


class FactReader:
    """Catalog values from one recipe's facts; anything unexpected names the
    recipe and the field."""

    def __init__(self, name: str, facts: Facts):
        self.name = name
        self.facts = facts

    def fail(self, field: str, what: str) -> DataError:
        return DataError(f"{self.name}: {field}: {what}")

    def fact(self, field: str) -> Fact:
        return self.facts[field]

    def integer(self, field: str) -> RecipeInt:
        f = self.fact(field)
        if f.status == "runtime":
            return RecipeInt(False, False, 0)
        if f.status == "default" or f.value is None:
            return RecipeInt()
        if isinstance(f.value, bool) or not isinstance(f.value, int):
            raise self.fail(field, f"{f.value!r} is not an integer")
        return RecipeInt(True, True, f.value)

    def flag(self, field: str) -> int:
        f = self.fact(field)
        if f.status != "set" or f.value is None:
            return -1
        if not isinstance(f.value, bool):
            raise self.fail(field, f"{f.value!r} is not a bool")
        return int(f.value)

    def text(self, field: str) -> str:
        f = self.fact(field)
        if f.status != "set" or f.value is None:
            return ""
        if not isinstance(f.value, str):
            raise self.fail(field, f"{f.value!r} is not a string")
        return f.value

    def modules(self, field: str) -> str:
        f = self.fact(field)
        if f.status != "set" or f.value is None:
            return ""
        if not isinstance(f.value, list) or not all(isinstance(m, str) for m in f.value):
            raise self.fail(field, f"{f.value!r} is not a list of names")
        return ",".join(f.value)

    def layout(self, field: str) -> str:
        f = self.fact(field)
        if f.status == "runtime":
            return LAYOUT_SET_UNKNOWN
        if f.status != "set" or f.value is None:
            return ""
        if isinstance(f.value, str):
            if not LITERAL_LAYOUT.match(f.value):
                raise self.fail(field, f"layout {f.value!r} is not in Megatron's layout grammar")
            return f.value
        stages = []
        for stage in f.value if isinstance(f.value, list) else [None]:
            if not isinstance(stage, list) or not all(layer in LAYOUT_SYMBOLS for layer in stage):
                raise self.fail(field, f"layout {f.value!r} is not a list of stages")
            stages.append("".join(LAYOUT_SYMBOLS[layer] for layer in stage))
        return "|".join(stages)

    def dtype(self, field: str) -> str:
        f = self.fact(field)
        if f.status != "set" or f.value is None:
            return ""
        name = f.value.get("py") if isinstance(f.value, dict) else None
        if name not in DTYPES:
            raise self.fail(field, f"{f.value!r} is not a dtype mblint knows")
        return DTYPES[name]

    def distributed_optimizer(self) -> int:
        """Bridge turns the distributed optimizer on for both configs when either
        asks for it (_validate_and_sync_distributed_optimizer_settings)."""
        values = [self.flag("ddp.use_distributed_optimizer"), self.flag("optimizer.use_distributed_optimizer")]
        if 1 in values:
            return 1
        return 0 if 0 in values else -1

    def grad_reduce_in_fp32(self) -> tuple[int, int]:
        """ddp.grad_reduce_in_fp32 as training sees it: MixedPrecisionConfig.setup()
        copies the mixed-precision config's value onto ddp whenever the recipe
        has one. Returns (value, 1 if it comes from mixed_precision)."""
        mp = self.fact("mixed_precision")
        if mp.status == "runtime":
            return -1, 0
        if mp.value is None:
            return self.flag("ddp.grad_reduce_in_fp32"), 0
        f = self.fact("mixed_precision.grad_reduce_in_fp32")
        if f.status == "runtime" or not isinstance(f.value, bool):
            raise self.fail("mixed_precision.grad_reduce_in_fp32", f"{f.value!r} is not a bool")
        return int(f.value), 1

    def precision_preset(self) -> str:
        """The preset a recipe's mixed-precision config starts from."""
        value = self.fact("mixed_precision").value
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            return str(value.get("preset", ""))
        return ""

    def settings(self, section: str) -> list[tuple[str, str, str]]:
        """(key, kind, text) of a dict section (env_vars) or of the fields the
        recipe writes on a config object (comm_overlap)."""
        out = []
        prefix = section + "."
        for field in sorted(self.facts):
            if not field.startswith(prefix):
                continue
            value = self.facts[field].value
            key = field[len(prefix):]
            if value is None:
                out.append((key, "Null", ""))
            elif isinstance(value, bool):
                out.append((key, "Bool", "true" if value else "false"))
            elif isinstance(value, int):
                out.append((key, "Int", str(value)))
            elif isinstance(value, float):
                out.append((key, "Float", repr(value)))
            elif isinstance(value, str):
                out.append((key, "String", value))
            elif isinstance(value, dict) and "object" in value:
                out.append((key, "Object", str(value.get("name", value["object"]))))
            else:
                raise self.fail(field, f"{value!r} is not a setting mblint can record")
        return out

    def shape_at_defaults(self) -> bool:
        """The recipe's provider leaves the model's shape at TransformerConfig's
        0, no experts and no head dimension (tools/extract_recipe_facts.py
        SHAPE_FIELDS: a bare GPTModelProvider)."""
        rows = [self.facts.get(field) for field in SHAPE_FIELDS]
        if not any(rows):
            return False
        expected = (0, 0, 0, None, None)
        if not all(r is not None and r.status == "default" and r.value == v for r, v in zip(rows, expected)):
            raise self.fail(SHAPE_FIELDS[0], "the shape is recorded only in part, or not at 0")
        return True

    def memory_settings(self) -> list[tuple[str, str, str]]:
        """(path, kind, text) of the settings tools/extract_recipe_facts.py
        records beyond its FIELDS for the memory estimate (MEMORY_FIELDS there:
        recorded only where the recipe sets them); a list of strings
        (offload_modules) is a List, its items joined by commas."""
        out = []
        for field in sorted(self.facts):
            if field not in MEMORY_FIELDS or self.facts[field].status != "set":
                continue
            value = self.facts[field].value
            if field.startswith("peft.") and value is None:
                continue  # no PEFT (peft None): writing it would make a peft section
            if isinstance(value, list) and all(isinstance(v, str) and "," not in v for v in value):
                out.append((field, "List", ",".join(value)))
            elif value is None:
                out.append((field, "Null", ""))
            elif isinstance(value, bool):
                out.append((field, "Bool", "true" if value else "false"))
            elif isinstance(value, int):
                out.append((field, "Int", str(value)))
            elif isinstance(value, float):
                out.append((field, "Float", repr(value)))
            elif isinstance(value, str):
                out.append((field, "String", value))
            else:
                raise self.fail(field, f"{value!r} is not a setting mblint can record")
        return out

    def comm_overlap(self) -> int:
        f = self.fact("comm_overlap")
        if f.value is None:
            return 0
        if isinstance(f.value, dict) and f.value.get("object") == "CommOverlapConfig":
            return 1
        raise self.fail("comm_overlap", f"{f.value!r} is not None or a CommOverlapConfig")


def build_recipe(name: str, kind: str, row: dict[str, str] | None, facts: Facts, models: dict[str, dict]) -> dict:
    """One catalog entry: settings from the facts, names and the precision
    preset's name from the recipe table (or the recipe's name when the table
    has no row)."""
    read = FactReader(name, facts)
    row = row or {"model": "", "task": "", "gpu": "", "num_gpus": "", "precision": ""}
    model, task, gpu, num_gpus = row["model"], row["task"], row["gpu"], row["num_gpus"]
    if not model or not task:
        m = NAME_TASK.match(name)
        if m:
            model = model or m["model"]
            task = task or m["task"]
    if not gpu or not num_gpus:
        m = NAME_GPUS.search(name)
        if m:
            gpu = gpu or m["gpu"]
            num_gpus = num_gpus or m["n"]
    seq = read.integer("dataset.seq_length")
    if not seq.set and seq.certain:
        seq = read.integer("model.seq_length")
    grad_reduce, from_mixed = read.grad_reduce_in_fp32()
    env = read.settings("env_vars")
    comm = read.settings("comm_overlap")
    return {
        "name": name,
        "kind": kind,
        "module": str(read.fact("module").value),
        "model": model,
        "task": task,
        "gpu": gpu,
        "num_gpus": int(num_gpus) if str(num_gpus).isdigit() else 0,
        # The table's short names (bf16, fp8_cs: perf recipes' _perf_precision)
        # are kept; where it has none, the preset the recipe starts from.
        "precision": parse_str_setting(row["precision"]) or read.precision_preset(),
        "tensor_model_parallel_size": read.integer("model.tensor_model_parallel_size"),
        "pipeline_model_parallel_size": read.integer("model.pipeline_model_parallel_size"),
        "context_parallel_size": read.integer("model.context_parallel_size"),
        "expert_model_parallel_size": read.integer("model.expert_model_parallel_size"),
        "expert_tensor_parallel_size": read.integer("model.expert_tensor_parallel_size"),
        "virtual_pipeline_model_parallel_size": read.integer("model.virtual_pipeline_model_parallel_size"),
        "sequence_parallel": read.flag("model.sequence_parallel"),
        "seq_length": seq,
        "global_batch_size": read.integer("train.global_batch_size"),
        "micro_batch_size": read.integer("train.micro_batch_size"),
        "recompute_granularity": read.text("model.recompute_granularity"),
        "recompute_method": read.text("model.recompute_method"),
        "recompute_num_layers": read.integer("model.recompute_num_layers"),
        "recompute_modules": read.modules("model.recompute_modules"),
        "use_distributed_optimizer": read.distributed_optimizer(),
        "moe_token_dispatcher_type": read.text("model.moe_token_dispatcher_type"),
        "moe_flex_dispatcher_backend": read.text("model.moe_flex_dispatcher_backend"),
        "cuda_graph_impl": read.text("model.cuda_graph_impl"),
        "pipeline_model_parallel_layout": read.layout("model.pipeline_model_parallel_layout"),
        "pipeline_layout_builder": "model._pipeline_model_parallel_layout_builder" in facts,
        "num_layers_in_first_pipeline_stage": read.integer("model.num_layers_in_first_pipeline_stage"),
        "num_layers_in_last_pipeline_stage": read.integer("model.num_layers_in_last_pipeline_stage"),
        "account_for_embedding_in_pipeline_split": read.flag("model.account_for_embedding_in_pipeline_split"),
        "account_for_loss_in_pipeline_split": read.flag("model.account_for_loss_in_pipeline_split"),
        "grad_reduce_in_fp32": grad_reduce,
        "grad_reduce_from_mixed_precision": from_mixed,
        "use_precision_aware_optimizer": read.flag("optimizer.use_precision_aware_optimizer"),
        "main_grads_dtype": read.dtype("optimizer.main_grads_dtype"),
        "main_params_dtype": read.dtype("optimizer.main_params_dtype"),
        "exp_avg_dtype": read.dtype("optimizer.exp_avg_dtype"),
        "exp_avg_sq_dtype": read.dtype("optimizer.exp_avg_sq_dtype"),
        "comm_overlap": read.comm_overlap(),
        "comm_overlap_fields": comm,
        "env_vars": env,
        "memory_settings": read.memory_settings(),
        "shape_at_defaults": read.shape_at_defaults(),
        "dims": model if model in models else None,
    }


def consistency_note(r: dict) -> str:
    """What a recipe's own numbers break at its own GPU count (world size,
    expert grid, global batch), as the recipe table states it; "" when they
    fit or are not all known."""
    world = r["num_gpus"]

    def size(field: str, default: int | None) -> int | None:
        v: RecipeInt = r[field]
        if not v.certain:
            return None
        return v.value if v.set else default

    tp, pp, cp = size("tensor_model_parallel_size", 1), size("pipeline_model_parallel_size", 1), \
        size("context_parallel_size", 1)
    ep, etp = size("expert_model_parallel_size", 1), size("expert_tensor_parallel_size", None)
    gbs, mbs = size("global_batch_size", None), size("micro_batch_size", None)
    if world <= 0 or None in (tp, pp, cp, ep):
        return ""
    if world % (tp * pp * cp):
        return f"world {world} not divisible by TP*PP*CP={tp * pp * cp}"
    if etp is None:
        # Bridge's finalize() sets an unset ETP to 1 when EP > 1
        # (models/transformer_config.py); Megatron-Core then takes TP.
        etp = 1 if ep > 1 else tp
    expert = ep * etp * pp
    if world % expert:
        return f"world {world} not divisible by EP*ETP*PP={expert}"
    dp = world // (tp * pp * cp)
    if gbs is not None and mbs is not None and gbs % (mbs * dp):
        return f"GBS {gbs} not divisible by MBS*DP={mbs * dp}"
    return ""


# ---------------------------------------------------------------- the recipe table's view


def table_view(row: dict[str, str]) -> dict:
    """The catalog values the recipe table alone would give (the generator's
    input before the facts), for the corrections report."""
    seq = row["seq_length"] if row["seq_length"].strip() else row["model_seq_length"]
    return {
        "tensor_model_parallel_size": parse_int_setting(row["tp"]),
        "pipeline_model_parallel_size": parse_int_setting(row["pp"]),
        "context_parallel_size": parse_int_setting(row["cp"]),
        "expert_model_parallel_size": parse_int_setting(row["ep"]),
        "expert_tensor_parallel_size": parse_int_setting(row["etp"]),
        "virtual_pipeline_model_parallel_size": parse_int_setting(row["vpp"]),
        "sequence_parallel": parse_bool_setting(row["sp"]),
        "seq_length": parse_int_setting(seq),
        "global_batch_size": parse_int_setting(row["gbs"]),
        "micro_batch_size": parse_int_setting(row["mbs"]),
        "recompute_granularity": parse_str_setting(row["recompute_granularity"]),
        "recompute_method": parse_str_setting(row["recompute_method"]),
        "recompute_num_layers": parse_int_setting(row["recompute_num_layers"]),
        "recompute_modules": parse_modules(row["recompute_modules"]),
        "use_distributed_optimizer": parse_bool_setting(row["dist_optimizer"]),
        "moe_token_dispatcher_type": parse_str_setting(row["moe_dispatcher"]),
        "moe_flex_dispatcher_backend": parse_str_setting(row["flex_backend"]),
        "cuda_graph_impl": parse_str_setting(row["cuda_graph_impl"]),
        "pipeline_model_parallel_layout": parse_layout(row["pp_layout"]),
        "num_layers_in_first_pipeline_stage": parse_int_setting(row["first_stage_layers"]),
        "num_layers_in_last_pipeline_stage": parse_int_setting(row["last_stage_layers"]),
        "consistency_note": row["consistency_note"].strip(),
    }


# Fact fields behind each catalog value, for the corrections' `where`.
FACT_OF = {
    "tensor_model_parallel_size": "model.tensor_model_parallel_size",
    "pipeline_model_parallel_size": "model.pipeline_model_parallel_size",
    "context_parallel_size": "model.context_parallel_size",
    "expert_model_parallel_size": "model.expert_model_parallel_size",
    "expert_tensor_parallel_size": "model.expert_tensor_parallel_size",
    "virtual_pipeline_model_parallel_size": "model.virtual_pipeline_model_parallel_size",
    "sequence_parallel": "model.sequence_parallel",
    "seq_length": "dataset.seq_length",
    "global_batch_size": "train.global_batch_size",
    "micro_batch_size": "train.micro_batch_size",
    "recompute_granularity": "model.recompute_granularity",
    "recompute_method": "model.recompute_method",
    "recompute_num_layers": "model.recompute_num_layers",
    "recompute_modules": "model.recompute_modules",
    "use_distributed_optimizer": "ddp.use_distributed_optimizer",
    "moe_token_dispatcher_type": "model.moe_token_dispatcher_type",
    "moe_flex_dispatcher_backend": "model.moe_flex_dispatcher_backend",
    "cuda_graph_impl": "model.cuda_graph_impl",
    "pipeline_model_parallel_layout": "model.pipeline_model_parallel_layout",
    "num_layers_in_first_pipeline_stage": "model.num_layers_in_first_pipeline_stage",
    "num_layers_in_last_pipeline_stage": "model.num_layers_in_last_pipeline_stage",
}


def shown(value: object) -> str:
    """A catalog value as the corrections file writes it."""
    if isinstance(value, RecipeInt):
        if not value.certain:
            return "unknown"
        return str(value.value) if value.set else "default"
    if isinstance(value, int) and not isinstance(value, bool) and value in (-1, 0, 1):
        return {-1: "unset", 0: "false", 1: "true"}[value]
    if value == LAYOUT_SET_UNKNOWN:
        return "unknown"
    return str(value) if value != "" else "unset"


def corrections(recipe: dict, row: dict[str, str] | None, facts: Facts) -> list[dict[str, str]]:
    out = []
    base = {"recipe": recipe["name"], "kind": recipe["kind"]}
    if row is None:
        return [{**base, "field": "(recipe)", "table": "missing", "source": "present",
                 "where": facts["module"].where}]
    view = table_view(row)
    for field, table_value in view.items():
        value = recipe[field] if field != "consistency_note" else consistency_note(recipe)
        if shown(table_value) == shown(value):
            continue
        fact = facts.get(FACT_OF.get(field, ""))
        if field == "seq_length" and fact is not None and fact.status != "set":
            fact = facts.get("model.seq_length")
        out.append({**base, "field": field, "table": shown(table_value), "source": shown(value),
                    "where": fact.where if fact is not None and fact.status == "set" else ""})
    return out


def check_csv_dims(row: dict[str, str], model: dict | None, unsourced: set[str]) -> None:
    """The recipe table spells out shapes for a few models; they must agree
    with data/model_dims.csv (or be recorded as not yet in it)."""
    present = {c: row[c] for c in CSV_DIM_COLUMNS if row[c].strip()}
    if not present:
        return
    if model is None:
        unsourced.add(row["model"] or row["recipe"])
        return
    for column, text in present.items():
        if int(text) != model[column]:
            raise DataError(
                f"{row['recipe']}: recipe table says {column}={text}, model_dims.csv says {model[column]}"
            )


def load_aliases(path: Path, recipe_names: set[str]) -> list[tuple[str, str]]:
    aliases = []
    seen = set()
    for row in read_csv(path):
        alias, canonical = row["alias"], row["canonical"]
        if canonical not in recipe_names:
            raise DataError(f"{path.name}: {alias} -> {canonical}: not a recipe in the table")
        if alias in recipe_names:
            raise DataError(f"{path.name}: alias {alias} is also a canonical recipe name")
        if alias in seen:
            raise DataError(f"{path.name}: duplicate alias {alias}")
        seen.add(alias)
        aliases.append((alias, canonical))
    return sorted(aliases)


# ---------------------------------------------------------------- C++ output


def c_str(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def c_bool(value: bool) -> str:
    return "true" if value else "false"


def c_int(value: RecipeInt) -> str:
    return f"{{{c_bool(value.set)}, {c_bool(value.certain)}, {value.value}}}"


def emit_model(m: dict) -> str:
    return (
        "    {\n"
        f"        .key = {c_str(m['key'])}, .hf_id = {c_str(m['hf_id'])},\n"
        f"        .num_layers = {m['num_layers']}, .hidden_size = {m['hidden_size']},"
        f" .num_attention_heads = {m['num_attention_heads']}, .num_query_groups = {m['num_query_groups']},"
        f" .kv_channels = {m['kv_channels']},\n"
        f"        .ffn_hidden_size = {m['ffn_hidden_size']}, .num_moe_experts = {m['num_moe_experts']},"
        f" .moe_ffn_hidden_size = {m['moe_ffn_hidden_size']},"
        f" .moe_shared_expert_intermediate_size = {m['moe_shared_expert_intermediate_size']},"
        f" .moe_router_topk = {m['moe_router_topk']}, .moe_dense_layers = {m['moe_dense_layers']},\n"
        f"        .vocab_size = {m['vocab_size']}, .multi_latent_attention = {c_bool(m['multi_latent_attention'])},"
        f" .q_lora_rank = {m['q_lora_rank']}, .kv_lora_rank = {m['kv_lora_rank']},"
        f" .qk_head_dim = {m['qk_head_dim']}, .qk_pos_emb_head_dim = {m['qk_pos_emb_head_dim']},"
        f" .v_head_dim = {m['v_head_dim']},\n"
        f"        .mtp_num_layers = {m['mtp_num_layers']}, .gated_linear_unit = {c_bool(m['gated_linear_unit'])},"
        f" .tied_embeddings = {c_bool(m['tied_embeddings'])},\n"
        f"        .hybrid_layer_pattern = {c_str(m['hybrid_layer_pattern'])},"
        f" .mamba_mixer = {c_str(m['mamba_mixer'])},\n"
        f"        .mtp_layer_pattern = {c_str(m['mtp_layer_pattern'])},"
        f" .mtp_repeated_layer = {c_bool(m['mtp_repeated_layer'])}, .moe_latent_size = {m['moe_latent_size']},\n"
        f"        .dsa_indexer = {c_str(m['dsa_indexer'])}, .text_extras = {c_str(m['text_extras'])},"
        f" .gated_delta_net = {c_str(m['gated_delta_net'])},"
        f" .bias_activation_fusion = {m['bias_activation_fusion']},\n"
        f"        .dsv4 = {c_str(m['dsv4'])}, .csa_compress_ratios = {c_str(m['csa_compress_ratios'])},"
        f" .dit = {c_str(m['dit'])}, .global_attention = {c_str(m['global_attention'])},"
        f" .per_layer_embedding = {c_str(m['per_layer_embedding'])},\n"
        f"        .source = {c_str(m['source'])},\n"
        "    },\n"
    )


def span(offset: int, count: int) -> str:
    return f"{{kRecipeSettings + {offset}, {count}}}" if count else "{}"


def emit_recipe(r: dict, model_index: dict[str, int], settings_at: dict[str, int]) -> str:
    dims = f"&kModelDims[{model_index[r['dims']]}]" if r["dims"] else "nullptr"
    i = c_int
    env = span(settings_at["env_vars"], len(r["env_vars"]))
    comm = span(settings_at["comm_overlap_fields"], len(r["comm_overlap_fields"]))
    memory = span(settings_at["memory_settings"], len(r["memory_settings"]))
    return (
        "    {\n"
        f"        .name = {c_str(r['name'])}, .kind = {c_str(r['kind'])},\n"
        f"        .module = {c_str(r['module'])},\n"
        f"        .model = {c_str(r['model'])}, .task = {c_str(r['task'])}, .gpu = {c_str(r['gpu'])},"
        f" .num_gpus = {r['num_gpus']}, .precision = {c_str(r['precision'])},\n"
        f"        .tensor_model_parallel_size = {i(r['tensor_model_parallel_size'])},"
        f" .pipeline_model_parallel_size = {i(r['pipeline_model_parallel_size'])},"
        f" .context_parallel_size = {i(r['context_parallel_size'])},\n"
        f"        .expert_model_parallel_size = {i(r['expert_model_parallel_size'])},"
        f" .expert_tensor_parallel_size = {i(r['expert_tensor_parallel_size'])},"
        f" .virtual_pipeline_model_parallel_size = {i(r['virtual_pipeline_model_parallel_size'])},\n"
        f"        .sequence_parallel = {r['sequence_parallel']}, .seq_length = {i(r['seq_length'])},"
        f" .global_batch_size = {i(r['global_batch_size'])}, .micro_batch_size = {i(r['micro_batch_size'])},\n"
        f"        .recompute_granularity = {c_str(r['recompute_granularity'])},"
        f" .recompute_method = {c_str(r['recompute_method'])},"
        f" .recompute_num_layers = {i(r['recompute_num_layers'])},"
        f" .recompute_modules = {c_str(r['recompute_modules'])},\n"
        f"        .use_distributed_optimizer = {r['use_distributed_optimizer']},"
        f" .moe_token_dispatcher_type = {c_str(r['moe_token_dispatcher_type'])},"
        f" .moe_flex_dispatcher_backend = {c_str(r['moe_flex_dispatcher_backend'])},"
        f" .cuda_graph_impl = {c_str(r['cuda_graph_impl'])},\n"
        f"        .pipeline_model_parallel_layout = {c_str(r['pipeline_model_parallel_layout'])},"
        f" .pipeline_layout_builder = {c_bool(r['pipeline_layout_builder'])},\n"
        f"        .num_layers_in_first_pipeline_stage = {i(r['num_layers_in_first_pipeline_stage'])},"
        f" .num_layers_in_last_pipeline_stage = {i(r['num_layers_in_last_pipeline_stage'])},\n"
        f"        .account_for_embedding_in_pipeline_split = {r['account_for_embedding_in_pipeline_split']},"
        f" .account_for_loss_in_pipeline_split = {r['account_for_loss_in_pipeline_split']},\n"
        f"        .grad_reduce_in_fp32 = {r['grad_reduce_in_fp32']},"
        f" .grad_reduce_from_mixed_precision = {c_bool(bool(r['grad_reduce_from_mixed_precision']))},\n"
        f"        .use_precision_aware_optimizer = {r['use_precision_aware_optimizer']},"
        f" .main_grads_dtype = {c_str(r['main_grads_dtype'])}, .main_params_dtype = {c_str(r['main_params_dtype'])},"
        f" .exp_avg_dtype = {c_str(r['exp_avg_dtype'])}, .exp_avg_sq_dtype = {c_str(r['exp_avg_sq_dtype'])},\n"
        f"        .comm_overlap = {r['comm_overlap']}, .comm_overlap_fields = {comm}, .env_vars = {env},\n"
        f"        .memory_settings = {memory},\n"
        f"        .shape_at_defaults = {c_bool(r['shape_at_defaults'])},\n"
        f"        .consistency_note = {c_str(r['consistency_note'])},\n"
        f"        .dims = {dims},\n"
        "    },\n"
    )


def emit_setting(key: str, kind: str, text: str) -> str:
    return f"    {{{c_str(key)}, RecipeValueKind::{kind}, {c_str(text)}}},\n"


CORRECTION_FIELDS = ("recipe", "kind", "field", "table", "source", "where")


def render_corrections(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    out.write("# Where shared/corpus/megatron-bridge/derived/recipe_parallelism.csv (the recipe table) and\n")
    out.write("# data/recipe_facts.csv (Megatron Bridge's source, read by tools/extract_recipe_facts.py)\n")
    out.write("# give a recipe different catalog values; the catalog takes the source's. Generated by\n")
    out.write("# tools/gen_catalog.py; do not edit. `default`: left at the Megatron default; `unset`: no\n")
    out.write("# value recorded; `unknown`: decided at run time. `where` is relative to src/megatron/bridge/.\n")
    writer = csv.DictWriter(out, fieldnames=CORRECTION_FIELDS, lineterminator="\n")
    writer.writeheader()
    for r in sorted(rows, key=lambda r: (r["recipe"], r["kind"], r["field"])):
        writer.writerow(r)
    return out.getvalue()


def generate(shared: Path, facts_csv: Path = FACTS_CSV) -> tuple[str, str]:
    recipe_csv = shared / RECIPE_CSV
    if not recipe_csv.is_file():
        raise DataError(f"{recipe_csv} not found (pass --shared DIR)")
    models = load_models(MODEL_CSV)
    facts = load_facts(facts_csv)
    rows = {(row["recipe"], row["kind"]): row for row in read_csv(recipe_csv)}
    stale = set(rows) - set(facts)
    if stale:
        raise DataError(f"recipes in the recipe table but not in {facts_csv.name}: {sorted(stale)}")

    unsourced: set[str] = set()
    recipes = []
    fixes: list[dict[str, str]] = []
    for (name, kind), recipe_facts in facts.items():
        row = rows.get((name, kind))
        recipe = build_recipe(name, kind, row, recipe_facts, models)
        recipe["consistency_note"] = consistency_note(recipe)
        if row is not None:
            check_csv_dims(row, models.get(recipe["model"]), unsourced)
        fixes.extend(corrections(recipe, row, recipe_facts))
        recipes.append(recipe)
    recipes.sort(key=lambda r: (r["name"], r["kind"]))

    aliases = load_aliases(ALIAS_CSV, {r["name"] for r in recipes})
    model_keys = sorted(models)
    model_index = {k: i for i, k in enumerate(model_keys)}
    with_dims = sum(1 for r in recipes if r["dims"])

    # Recipes with the same settings (most share COMMON_RECIPE_ENV_VARS) share one span.
    settings: list[str] = []
    pooled: dict[tuple, int] = {}
    offsets = []
    for r in recipes:
        at = {}
        for section in ("env_vars", "comm_overlap_fields", "memory_settings"):
            key = tuple(r[section])
            if key not in pooled:
                pooled[key] = len(settings)
                settings.extend(emit_setting(*s) for s in key)
            at[section] = pooled[key]
        offsets.append(at)

    out = [
        "// Generated by tools/gen_catalog.py from\n",
        "//   data/recipe_facts.csv (Megatron Bridge's recipes, read statically by tools/extract_recipe_facts.py),\n",
        f"//   shared/{RECIPE_CSV.as_posix()} (names, GPU counts, precision names),\n",
        "//   data/recipe_aliases.csv and data/model_dims.csv;\n",
        "// do not edit. Regenerate with `python3 tools/gen_catalog.py`.\n",
        f"// {len(recipes)} recipes ({with_dims} with model dimensions), {len(aliases)} aliases,"
        f" {len(models)} models.\n",
    ]
    if unsourced:
        out.append("// Models whose shapes the recipe table spells out but data/model_dims.csv does not\n")
        out.append(f"// describe yet (their recipes have dims = nullptr): {', '.join(sorted(unsourced))}.\n")
    out.append("//\n// Included by lint/model/catalog.cpp inside an unnamed namespace.\n\n")
    out.append("constexpr ModelDims kModelDims[] = {\n")
    out.extend(emit_model(models[k]) for k in model_keys)
    out.append("};\n\n")
    out.append("// Recipes' env_vars, comm_overlap fields and memory settings; each recipe spans its own\n")
    out.append("// (shared when equal).\n")
    out.append("constexpr RecipeSetting kRecipeSettings[] = {\n")
    out.extend(settings)
    out.append("};\n\n")
    out.append("// Sorted by (name, kind): a name that is both a library and a perf recipe lists the\n")
    out.append("// library one first.\n")
    out.append("constexpr Recipe kRecipes[] = {\n")
    out.extend(emit_recipe(r, model_index, at) for r, at in zip(recipes, offsets))
    out.append("};\n\n")
    out.append("// Sorted by alias.\n")
    out.append("constexpr RecipeAlias kRecipeAliases[] = {\n")
    out.extend(f"    {{{c_str(a)}, {c_str(c)}}},\n" for a, c in aliases)
    out.append("};\n")
    return "".join(out), render_corrections(fixes)


VISION_INT_FIELDS = ("layers", "hidden", "heads", "head_dim", "ffn", "patch_size", "temporal_patch", "in_channels",
                     "position_rows", "merge", "text_hidden", "tokens_per_image", "extra_params", "deepstack")
# Appended after `source` (rows written before them leave them out: 0).
VISION_APPENDED_INT_FIELDS = ("class_tokens", "projector_ffn", "kv_heads")


def render_vision(path: Path, models: dict[str, dict]) -> str:
    """data/vision_dims.csv as VisionDims initializers (lint/facts/estimate_vision.h)."""
    out = ["// Generated by tools/gen_catalog.py from data/vision_dims.csv. Do not edit.\n"]
    for row in read_csv(path):
        if row["key"] not in models or not row["source"].strip():
            raise DataError(f"{path.name}: {row['key']}: needs a data/model_dims.csv row and a source")
        if row["arch"] not in ("gemma4", "qwen3_vl", "qwen25_vl", "gemma3_siglip", "pixtral", "radio", "qwen2_audio", "glm4v",
                               "exaone45"):  # the layouts lint/facts/estimate_vision.cpp counts
            raise DataError(f"{path.name}: {row['key']}: unknown arch {row['arch']}")
        ints = ", ".join(str(int(row[name])) for name in VISION_INT_FIELDS)
        strs = ", ".join(c_str(row[name]) for name in ("key", "hf_id", "arch"))
        appended = ", ".join(str(int(row.get(name) or 0)) for name in VISION_APPENDED_INT_FIELDS)
        out.append(f"    {{{strs}, {ints},\n     {c_str(expand_source(row['source']))}, {appended}}},\n")
    return "".join(out)


SOUND_INT_FIELDS = ("layers", "hidden", "heads", "ffn", "conv_kernel", "subsampling_channels", "subsampling_factor",
                    "mel_bins", "projector_ffn", "text_hidden")


def render_sound(path: Path, models: dict[str, dict]) -> str:
    """data/sound_dims.csv as SoundDims initializers (lint/facts/estimate_sound.h)."""
    out = ["// Generated by tools/gen_catalog.py from data/sound_dims.csv. Do not edit.\n"]
    for row in read_csv(path):
        if row["key"] not in models or not row["source"].strip():
            raise DataError(f"{path.name}: {row['key']}: needs a data/model_dims.csv row and a source")
        if row["arch"] != "parakeet":  # the layout lint/facts/estimate_sound.cpp counts
            raise DataError(f"{path.name}: {row['key']}: unknown arch {row['arch']}")
        ints = ", ".join(str(int(row[name])) for name in SOUND_INT_FIELDS)
        strs = ", ".join(c_str(row[name]) for name in ("key", "hf_id", "arch"))
        out.append(f"    {{{strs}, {ints},\n     {c_str(expand_source(row['source']))}}},\n")
    return "".join(out)


def render_notes(path: Path, models: dict[str, dict]) -> str:
    """data/model_notes.csv as ModelNote initializers (lint/facts/estimate_read.cpp): what a catalogued
    model without dimensions still lacks, said when its recipes are declined."""
    out = ["// Generated by tools/gen_catalog.py from data/model_notes.csv. Do not edit.\n"]
    for row in read_csv(path):
        if row["key"] in models:
            raise DataError(f"{path.name}: {row['key']}: has a data/model_dims.csv row; the note is stale")
        if not row["missing"].strip():
            raise DataError(f"{path.name}: {row['key']}: needs the missing piece named")
        strs = ", ".join(c_str(row[name]) for name in ("key", "hf_id"))
        out.append(f"    {{{strs},\n     {c_str(expand_source(row['missing']))}}},\n")
    return "".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared/ directory (default: ../shared)")
    parser.add_argument("--out", type=Path, default=OUTPUT)
    parser.add_argument("--corrections", type=Path, default=CORRECTIONS)
    parser.add_argument("--facts", type=Path, default=FACTS_CSV, help="the recipe facts (default: data/recipe_facts.csv)")
    parser.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = parser.parse_args()
    try:
        text, fixes = generate(args.shared, args.facts)
    except DataError as e:
        print(f"gen_catalog: {e}", file=sys.stderr)
        return 2
    try:
        vision = render_vision(VISION_CSV, load_models(MODEL_CSV))
        sound = render_sound(SOUND_CSV, load_models(MODEL_CSV))
        notes = render_notes(NOTES_CSV, load_models(MODEL_CSV))
    except DataError as e:
        print(f"gen_catalog: {e}", file=sys.stderr)
        return 2
    outputs = ((args.out, text), (args.corrections, fixes), (VISION_OUTPUT, vision), (SOUND_OUTPUT, sound),
               (NOTES_OUTPUT, notes))
    if args.check:
        status = 0
        for path, content in outputs:
            current = path.read_text(encoding="utf-8") if path.is_file() else None
            if current != content:
                print(f"gen_catalog: {path} is out of date; run python3 tools/gen_catalog.py", file=sys.stderr)
                status = 1
        return status
    for path, content in outputs:
        path.write_text(content, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
