#!/usr/bin/env python3
"""Generate lint/catalog_data.inc, the catalog mblint compiles in.

mblint never reads ../shared at run time, so the recipe table, the legacy recipe
names and the model dimensions become C++ source here:

  inputs   <shared>/corpus/megatron-bridge/derived/recipe_parallelism.csv  (one row per recipe)
           data/recipe_aliases.csv   (tools/extract_recipe_aliases.py; committed)
           data/model_dims.csv       (hand-written, every row cites its source)
           PIPELINE_SPLIT below      (account_for_*_in_pipeline_split per recipe)
  output   lint/catalog_data.inc     (aggregate-initialised constexpr arrays, sorted)

Usage:
  tools/gen_catalog.py            regenerate lint/catalog_data.inc
  tools/gen_catalog.py --check    exit 1 when the committed file differs from what
                                  would be generated (used by tests/catalog_test.cpp)

Standard library only. The output is deterministic: rows are sorted and no
paths, dates or machine details are written.
"""

from __future__ import annotations

import argparse
import ast
import csv
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SHARED = REPO_ROOT.parent / "shared"
RECIPE_CSV = Path("corpus/megatron-bridge/derived/recipe_parallelism.csv")
ALIAS_CSV = REPO_ROOT / "data/recipe_aliases.csv"
MODEL_CSV = REPO_ROOT / "data/model_dims.csv"
OUTPUT = REPO_ROOT / "lint/catalog_data.inc"

# account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split.
# The recipe table does not carry them. They were found (once, by hand-run
# `ast` analysis; re-derive when moving to a newer Bridge snapshot) by following
# every recipe function of NVIDIA-NeMo/Megatron-Bridge @ 067f987df03b (library
# and perf) through its base recipes and helpers: `cfg = base()`, `helper(cfg)`,
# `cfg.model = ...` (which resets both) and `....account_for_... = <const>`
# writes; none of the writes is conditional. Each entry names the file:lines
# under src/megatron/bridge/ that set both flags (always to the same value) and
# the (recipe, kind) rows that inherit them. Recipes not listed leave both at the
# provider default (False in GPTModelProvider), reported as -1 (unset).
PIPELINE_SPLIT: tuple[tuple[bool, str, tuple[tuple[str, str], ...]], ...] = (
    (False, 'perf_recipes/glm_moe_dsa/gb200/glm5.py:143,144', (
        ('glm52_sft_192gpu_gb200_bf16_config', 'perf'),
    )),
    (False, 'perf_recipes/glm_moe_dsa/gb200/glm5.py:51,52', (
        ('glm51_sft_192gpu_gb200_bf16_config', 'perf'),
    )),
    (False, 'perf_recipes/glm_moe_dsa/h100/glm5.py:141,142', (
        ('glm52_sft_416gpu_h100_bf16_config', 'perf'),
    )),
    (False, 'perf_recipes/glm_moe_dsa/h100/glm5.py:51,52', (
        ('glm51_sft_416gpu_h100_bf16_config', 'perf'),
    )),
    (False, 'recipes/deepseek/gb200/deepseek_v4.py:67,68', (
        ('deepseek_v4_flash_pretrain_128gpu_gb200_fp8mx_config', 'perf'),
        ('deepseek_v4_flash_pretrain_128gpu_gb300_fp8mx_config', 'perf'),
        ('deepseek_v4_flash_pretrain_64gpu_gb200_bf16_config', 'library'),
        ('deepseek_v4_flash_pretrain_64gpu_gb200_bf16_muon_config', 'library'),
        ('deepseek_v4_flash_pretrain_64gpu_gb200_fp8mx_config', 'library'),
    )),
    (False, 'recipes/deepseek/gb300/deepseek_v4.py:58,59', (
        ('deepseek_v4_pro_pretrain_256gpu_gb300_fp8mx_config', 'perf'),
        ('deepseek_v4_pro_pretrain_32gpu_gb300_bf16_config', 'library'),
        ('deepseek_v4_pro_pretrain_32gpu_gb300_fp8mx_config', 'library'),
    )),
    (False, 'recipes/deepseek/h100/deepseek_v3.py:148,149', (
        ('deepseek_v3_pretrain_1024gpu_h100_bf16_config', 'library'),
        ('deepseek_v3_pretrain_1024gpu_h100_bf16_config', 'perf'),
        ('deepseek_v3_pretrain_1024gpu_h100_fp8cs_config', 'perf'),
        ('deepseek_v3_pretrain_1024gpu_h100_fp8sc_config', 'perf'),
        ('deepseek_v3_pretrain_1024gpu_h100_fp8sc_large_scale_config', 'perf'),
        ('deepseek_v3_pretrain_128gpu_gb300_fp8mx_hsdp_config', 'perf'),
        ('deepseek_v3_pretrain_128gpu_vr200_bf16_config', 'perf'),
        ('deepseek_v3_pretrain_128gpu_vr200_fp8cs_config', 'perf'),
        ('deepseek_v3_pretrain_128gpu_vr200_fp8mx_config', 'perf'),
        ('deepseek_v3_pretrain_128gpu_vr200_nvfp4_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b200_bf16_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b200_fp8cs_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b200_fp8mx_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b200_fp8mx_large_scale_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b200_nvfp4_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b300_bf16_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b300_fp8cs_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b300_fp8mx_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b300_fp8mx_large_scale_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_b300_nvfp4_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb200_bf16_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb200_fp8cs_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb200_fp8mx_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb200_fp8mx_large_scale_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb200_fp8mx_partial_cg_dev_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb200_nvfp4_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb300_bf16_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb300_fp8cs_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb300_fp8mx_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb300_fp8mx_large_scale_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb300_fp8mx_partial_cg_dev_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_gb300_nvfp4_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_vr200_bf16_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_vr200_fp8cs_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_vr200_fp8mx_config', 'perf'),
        ('deepseek_v3_pretrain_256gpu_vr200_nvfp4_config', 'perf'),
        ('deepseek_v3_pretrain_64gpu_gb300_bf16_fsdp_config', 'perf'),
        ('deepseek_v3_pretrain_64gpu_gb300_fp8mx_fsdp_config', 'perf'),
        ('deepseek_v3_pretrain_64gpu_h100_bf16_config', 'perf'),
        ('deepseek_v3_pretrain_64gpu_h100_fp8cs_config', 'perf'),
    )),
    (False, 'recipes/deepseek/h100/deepseek_v3.py:316,317', (
        ('deepseek_v3_pretrain_256gpu_h100_bf16_32nodes_config', 'library'),
    )),
    (False, 'recipes/deepseek/h100/deepseek_v4.py:83,84', (
        ('deepseek_v4_flash_pretrain_32gpu_h100_bf16_config', 'library'),
        ('deepseek_v4_flash_pretrain_32gpu_h100_bf16_muon_config', 'library'),
        ('deepseek_v4_flash_pretrain_32gpu_h100_fp8mx_config', 'library'),
    )),
    (False, 'recipes/gemma/h100/gemma3.py:75,76', (
        ('gemma3_1b_pretrain_1gpu_h100_bf16_config', 'library'),
    )),
    (False, 'recipes/glm/gb200/glm5.py:133,134', (
        ('glm52_sft_192gpu_gb200_bf16_config', 'library'),
    )),
    (False, 'recipes/glm/gb200/glm5.py:239,240', (
        ('glm52_sft_192gpu_gb200_bf16_128k_config', 'library'),
    )),
    (False, 'recipes/glm/gb200/glm5.py:343,344', (
        ('glm52_peft_192gpu_gb200_bf16_config', 'library'),
    )),
    (False, 'recipes/glm/gb200/glm5.py:56,57', (
        ('glm52_pretrain_192gpu_gb200_bf16_config', 'library'),
    )),
    (False, 'recipes/glm/h100/glm45.py:195,196', (
        ('glm45_air_106b_pretrain_32gpu_h100_bf16_config', 'library'),
    )),
    (False, 'recipes/glm/h100/glm45.py:62,63', (
        ('glm45_355b_pretrain_128gpu_h100_bf16_config', 'library'),
    )),
    (False, 'recipes/glm_vl/h100/glm_45v.py:138,139', (
        ('glm_45v_sft_128gpu_h100_bf16_config', 'library'),
    )),
    (False, 'recipes/glm_vl/h100/glm_45v.py:295,296', (
        ('glm_45v_peft_32gpu_h100_bf16_config', 'library'),
    )),
    (False, 'recipes/gpt_oss/h100/gpt_oss.py:198,199', (
        ('gpt_oss_120b_pretrain_64gpu_b200_bf16_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_b200_fp8mx_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_b300_bf16_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_b300_fp8mx_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_gb200_bf16_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_gb200_fp8mx_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_gb300_bf16_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_gb300_fp8mx_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_h100_bf16_config', 'library'),
        ('gpt_oss_120b_pretrain_64gpu_h100_bf16_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_h100_fp8cs_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_vr200_bf16_config', 'perf'),
        ('gpt_oss_120b_pretrain_64gpu_vr200_fp8mx_config', 'perf'),
    )),
    (False, 'recipes/gpt_oss/h100/gpt_oss.py:73,74', (
        ('gpt_oss_20b_pretrain_16gpu_h100_bf16_config', 'library'),
        ('gpt_oss_20b_pretrain_16gpu_h100_fp8cs_config', 'library'),
        ('gpt_oss_20b_pretrain_16gpu_h100_fp8mx_config', 'library'),
        ('gpt_oss_20b_pretrain_512gpu_gb200_fp8mx_config', 'perf'),
        ('gpt_oss_20b_pretrain_512gpu_gb300_fp8mx_config', 'perf'),
        ('gpt_oss_20b_pretrain_64gpu_b300_fp8mx_config', 'perf'),
        ('gpt_oss_20b_pretrain_64gpu_b300_nvfp4_config', 'perf'),
        ('gpt_oss_20b_pretrain_64gpu_vr200_nvfp4_config', 'perf'),
        ('gpt_oss_20b_pretrain_72gpu_gb200_nvfp4_config', 'perf'),
        ('gpt_oss_20b_pretrain_72gpu_gb300_nvfp4_config', 'perf'),
        ('gpt_oss_20b_pretrain_8gpu_b300_fp8mx_config', 'perf'),
        ('gpt_oss_20b_pretrain_8gpu_b300_nvfp4_config', 'perf'),
        ('gpt_oss_20b_pretrain_8gpu_gb200_nvfp4_config', 'perf'),
        ('gpt_oss_20b_pretrain_8gpu_gb300_nvfp4_config', 'perf'),
        ('gpt_oss_20b_pretrain_8gpu_vr200_fp8mx_config', 'perf'),
        ('gpt_oss_20b_pretrain_8gpu_vr200_nvfp4_config', 'perf'),
    )),
    (False, 'recipes/kimi/h100/kimi_k2.py:118,119', (
        ('kimi_k2_pretrain_1024gpu_h100_bf16_config', 'perf'),
        ('kimi_k2_pretrain_1024gpu_h100_fp8cs_config', 'perf'),
        ('kimi_k2_pretrain_1024gpu_h100_fp8sc_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_b200_bf16_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_b200_fp8cs_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_b200_fp8mx_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_b300_bf16_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_b300_fp8cs_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_b300_fp8mx_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_gb200_bf16_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_gb200_fp8cs_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_gb200_fp8mx_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_gb300_bf16_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_gb300_fp8cs_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_gb300_fp8mx_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_gb300_nvfp4_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_vr200_bf16_config', 'perf'),
        ('kimi_k2_pretrain_256gpu_vr200_fp8mx_config', 'perf'),
        ('kimi_k2_pretrain_512gpu_h100_bf16_config', 'library'),
    )),
    (False, 'recipes/kimi_vl/h100/kimi_k25_vl.py:81,82', (
        ('kimi_k25_vl_sft_512gpu_h100_bf16_config', 'library'),
    )),
    (True, 'recipes/llama/h100/llama3.py:1227,1228', (
        ('llama31_405b_pretrain_1024gpu_h100_bf16_config', 'perf'),
        ('llama31_405b_pretrain_1024gpu_h100_fp8cs_config', 'perf'),
        # perf_recipes/llama/h100/llama31.py:115,138: the 1024-GPU recipe with another batch.
        ('llama31_405b_pretrain_512gpu_h100_bf16_config', 'perf'),
        ('llama31_405b_pretrain_512gpu_h100_fp8cs_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_b200_bf16_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_b200_fp8cs_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_b200_fp8mx_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_b200_nvfp4_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_b300_bf16_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_b300_fp8cs_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_b300_fp8mx_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_b300_nvfp4_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_gb200_bf16_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_gb200_fp8cs_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_gb200_fp8mx_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_gb200_nvfp4_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_gb300_bf16_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_gb300_fp8cs_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_gb300_fp8mx_config', 'perf'),
        ('llama31_405b_pretrain_128gpu_gb300_nvfp4_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_b200_nvfp4_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_b300_bf16_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_gb200_bf16_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_gb200_fp8cs_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_gb200_fp8mx_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_gb200_nvfp4_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_gb300_bf16_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_gb300_fp8cs_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_gb300_fp8mx_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_gb300_nvfp4_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_h100_bf16_config', 'library'),
        ('llama31_405b_pretrain_256gpu_h100_bf16_deterministic_config', 'library'),
        ('llama31_405b_pretrain_256gpu_vr200_bf16_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_vr200_fp8mx_config', 'perf'),
        ('llama31_405b_pretrain_256gpu_vr200_nvfp4_config', 'perf'),
    )),
    (True, 'recipes/llama/h100/llama3.py:2014,2015', (
        ('llama31_405b_sft_128gpu_h100_bf16_config', 'library'),
    )),
    (True, 'recipes/llama/h100/llama3.py:2867,2868', (
        ('llama31_405b_peft_32gpu_h100_bf16_config', 'library'),
    )),
    (False, 'recipes/minimax/h100/minimax_m3.py:168,169', (
        ('minimax_m3_sft_128gpu_h100_bf16_config', 'library'),
    )),
    (False, 'recipes/minimax/h100/minimax_m3.py:58,59', (
        ('minimax_m3_pretrain_256gpu_h100_bf16_config', 'library'),
    )),
    (False, 'recipes/moonlight/h100/moonlight_16b.py:415,416', (
        ('moonlight_16b_sft_8gpu_h100_bf16_8k_config', 'library'),
        ('moonlight_16b_sft_8gpu_h100_bf16_config', 'library'),
        ('moonlight_16b_sft_8gpu_h100_bf16_tp1_config', 'library'),
    )),
    (False, 'recipes/moonlight/h100/moonlight_16b.py:701,702', (
        ('moonlight_16b_peft_2gpu_h100_bf16_config', 'library'),
        ('moonlight_16b_peft_4gpu_h100_bf16_config', 'library'),
    )),
    (True, 'recipes/qwen/h100/qwen3_moe.py:261,262', (
        ('qwen3_235b_a22b_pretrain_128gpu_b200_fp8mx_deepep_dev_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_128gpu_b300_fp8mx_hybridep_dev_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_128gpu_gb200_fp8mx_paged_stash_dev_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_128gpu_gb200_fp8mx_partial_cg_dev_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_128gpu_gb300_fp8mx_paged_stash_dev_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b200_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b200_fp8cs_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b200_fp8mx_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b200_fp8mx_large_scale_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b200_nvfp4_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b300_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b300_fp8cs_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b300_fp8mx_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b300_fp8mx_large_scale_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_b300_nvfp4_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb200_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb200_fp8cs_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb200_fp8mx_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb200_fp8mx_large_scale_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb200_nvfp4_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb300_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb300_fp8cs_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_large_scale_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_gb300_nvfp4_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_h100_bf16_config', 'library'),
        ('qwen3_235b_a22b_pretrain_256gpu_h100_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_h100_bf16_hybridep_dev_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_h100_fp8cs_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_h100_fp8cs_large_scale_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_vr200_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_vr200_fp8mx_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_256gpu_vr200_nvfp4_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_b200_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_b200_fp8cs_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_b200_fp8mx_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_b200_nvfp4_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_b300_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_b300_fp8cs_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_b300_fp8mx_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_b300_nvfp4_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_gb200_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_gb200_fp8cs_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_gb200_fp8mx_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_gb200_nvfp4_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_gb300_bf16_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_gb300_fp8cs_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_gb300_fp8mx_config', 'perf'),
        ('qwen3_235b_a22b_pretrain_64gpu_gb300_nvfp4_config', 'perf'),
    )),
    (True, 'recipes/qwen/h100/qwen3_moe.py:569,570', (
        ('qwen3_235b_a22b_sft_64gpu_h100_bf16_config', 'library'),
    )),
    (True, 'recipes/qwen/h100/qwen3_moe.py:880,881', (
        ('qwen3_235b_a22b_peft_16gpu_h100_bf16_config', 'library'),
    )),
)

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
MLA_INT_FIELDS = ("q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim", "mtp_num_layers")
MODEL_BOOL_FIELDS = ("multi_latent_attention", "gated_linear_unit", "tied_embeddings")

# Recipe-table dimension columns and the ModelDims field each must agree with.
CSV_DIM_COLUMNS = (
    "num_layers", "hidden_size", "num_attention_heads", "num_query_groups",
    "ffn_hidden_size", "num_moe_experts", "moe_router_topk",
)


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


def load_models(path: Path) -> dict[str, dict]:
    models: dict[str, dict] = {}
    for row in read_csv(path):
        key = row["key"]
        if key in models:
            raise DataError(f"{path.name}: duplicate model {key}")
        model: dict = {"key": key, "hf_id": row["hf_id"], "source": expand_source(row["source"]),
                       "hybrid_layer_pattern": row["hybrid_layer_pattern"]}
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


# ---------------------------------------------------------------- recipes


def split_flags() -> dict[tuple[str, str], int]:
    flags: dict[tuple[str, str], int] = {}
    for value, _source, recipes in PIPELINE_SPLIT:
        for key in recipes:
            if key in flags:
                raise DataError(f"PIPELINE_SPLIT lists {key} twice")
            flags[key] = int(value)
    return flags


def build_recipe(row: dict[str, str], models: dict[str, dict], flags: dict) -> dict:
    name = row["recipe"]
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
    seq = row["seq_length"] if row["seq_length"].strip() else row["model_seq_length"]
    split = flags.get((name, row["kind"]), -1)
    return {
        "name": name,
        "kind": row["kind"],
        "module": row["module"],
        "model": model,
        "task": task,
        "gpu": gpu,
        "num_gpus": int(num_gpus) if num_gpus.isdigit() else 0,
        "precision": parse_str_setting(row["precision"]),
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
        "account_for_embedding_in_pipeline_split": split,
        "account_for_loss_in_pipeline_split": split,
        "consistency_note": row["consistency_note"].strip(),
        "dims": model if model in models else None,
    }


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
        f"        .hybrid_layer_pattern = {c_str(m['hybrid_layer_pattern'])},\n"
        f"        .source = {c_str(m['source'])},\n"
        "    },\n"
    )


def emit_recipe(r: dict, model_index: dict[str, int]) -> str:
    dims = f"&kModelDims[{model_index[r['dims']]}]" if r["dims"] else "nullptr"
    i = c_int
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
        f"        .pipeline_model_parallel_layout = {c_str(r['pipeline_model_parallel_layout'])},\n"
        f"        .num_layers_in_first_pipeline_stage = {i(r['num_layers_in_first_pipeline_stage'])},"
        f" .num_layers_in_last_pipeline_stage = {i(r['num_layers_in_last_pipeline_stage'])},\n"
        f"        .account_for_embedding_in_pipeline_split = {r['account_for_embedding_in_pipeline_split']},"
        f" .account_for_loss_in_pipeline_split = {r['account_for_loss_in_pipeline_split']},\n"
        f"        .consistency_note = {c_str(r['consistency_note'])},\n"
        f"        .dims = {dims},\n"
        "    },\n"
    )


def generate(shared: Path) -> str:
    recipe_csv = shared / RECIPE_CSV
    if not recipe_csv.is_file():
        raise DataError(f"{recipe_csv} not found (pass --shared DIR)")
    models = load_models(MODEL_CSV)
    flags = split_flags()
    rows = read_csv(recipe_csv)

    unsourced: set[str] = set()
    recipes = []
    for row in rows:
        recipe = build_recipe(row, models, flags)
        check_csv_dims(row, models.get(recipe["model"]), unsourced)
        recipes.append(recipe)
    recipes.sort(key=lambda r: (r["name"], r["kind"]))
    keys = [(r["name"], r["kind"]) for r in recipes]
    if len(set(keys)) != len(keys):
        raise DataError("the recipe table has two rows with the same name and kind")
    stale = set(flags) - set(keys)
    if stale:
        raise DataError(f"PIPELINE_SPLIT names recipes not in the table: {sorted(stale)}")

    aliases = load_aliases(ALIAS_CSV, {r["name"] for r in recipes})
    model_keys = sorted(models)
    model_index = {k: i for i, k in enumerate(model_keys)}
    with_dims = sum(1 for r in recipes if r["dims"])

    out = [
        "// Generated by tools/gen_catalog.py from\n",
        f"//   shared/{RECIPE_CSV.as_posix()}\n",
        "//   data/recipe_aliases.csv, data/model_dims.csv and the PIPELINE_SPLIT table in the generator;\n",
        "// do not edit. Regenerate with `python3 tools/gen_catalog.py`.\n",
        f"// {len(recipes)} recipes ({with_dims} with model dimensions), {len(aliases)} aliases,"
        f" {len(models)} models.\n",
    ]
    if unsourced:
        out.append("// Models whose shapes the recipe table spells out but data/model_dims.csv does not\n")
        out.append(f"// describe yet (their recipes have dims = nullptr): {', '.join(sorted(unsourced))}.\n")
    out.append("//\n// Included by lint/catalog.cpp inside an unnamed namespace.\n\n")
    out.append("constexpr ModelDims kModelDims[] = {\n")
    out.extend(emit_model(models[k]) for k in model_keys)
    out.append("};\n\n")
    out.append("// Sorted by (name, kind): a name that is both a library and a perf recipe lists the\n")
    out.append("// library one first.\n")
    out.append("constexpr Recipe kRecipes[] = {\n")
    out.extend(emit_recipe(r, model_index) for r in recipes)
    out.append("};\n\n")
    out.append("// Sorted by alias.\n")
    out.append("constexpr RecipeAlias kRecipeAliases[] = {\n")
    out.extend(f"    {{{c_str(a)}, {c_str(c)}}},\n" for a, c in aliases)
    out.append("};\n")
    return "".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared/ directory (default: ../shared)")
    parser.add_argument("--out", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    args = parser.parse_args()
    try:
        text = generate(args.shared)
    except DataError as e:
        print(f"gen_catalog: {e}", file=sys.stderr)
        return 2
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else None
        if current != text:
            print(f"gen_catalog: {args.out} is out of date; run python3 tools/gen_catalog.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
