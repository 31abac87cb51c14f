#!/usr/bin/env python3
"""Extract what each Megatron Bridge recipe sets into data/recipe_facts.csv.

Developer tool, like tools/extract_recipe_aliases.py: the CSV it writes is
committed data, and mblint and tools/gen_catalog.py never need the Bridge
sources. Re-run it when the catalog moves to a newer Bridge snapshot.

Every exported recipe function (library recipes under
recipes/<family>/<gpu>/, performance recipes under perf_recipes/<family>/<gpu>/)
is followed statically by tools/recipe_interp.py through its base recipes,
helpers, model providers and config constructors; nothing is imported or run.
For each recipe the CSV records the fields mblint's catalog needs, with the
file and line that set each one:

    recipe,kind,field,status,value,where
    moonlight_16b_sft_8gpu_h100_bf16_config,library,model.tensor_model_parallel_size,set,4,recipes/moonlight/h100/moonlight_16b.py:63

  status  set      the recipe (or a helper, provider or Bridge class default) sets it
          default  nothing in Bridge sets it: the Megatron-Core dataclass default
  value   JSON; a Python name such as torch.bfloat16 is {"py": "torch.bfloat16"},
          an object {"object": "CommOverlapConfig"} (its own fields follow as rows)

A value that cannot be determined statically stops the run with the recipe and
the field named (exit 2), unless RUNTIME_FIELDS below says why that field is
decided at run time; such values are written with status `runtime`.

Usage:
    tools/extract_recipe_facts.py [--bridge DIR] [--mcore DIR] [--rev REV] [--out CSV] [--check]
                                  [--skip-missing] [--only NAME] [--verbose]
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recipe_interp as ri  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BRIDGE = Path("/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo")
DEFAULT_MCORE = Path("/work/.mirror/NVIDIA+Megatron-LM/repo")
DEFAULT_REV = "067f987df03b8355b03192d88d70f1709fedf51a"
DEFAULT_OUT = REPO_ROOT / "data/recipe_facts.csv"
MODEL_CSV = REPO_ROOT / "data/model_dims.csv"

# What a model provider built from a Hugging Face config takes from that
# config, for the models data/model_dims.csv describes (each row cites its
# source): whether it has experts, and its layer count. Recipe helpers branch
# on these (apply_flex_dispatcher_backend skips dense models).
HF_CONFIG_FIELDS = ("num_moe_experts", "num_layers")

# The fields of the ConfigContainer mblint's catalog records for each recipe.
FIELDS = (
    "model.tensor_model_parallel_size",
    "model.pipeline_model_parallel_size",
    "model.context_parallel_size",
    "model.expert_model_parallel_size",
    "model.expert_tensor_parallel_size",
    "model.virtual_pipeline_model_parallel_size",
    "model.sequence_parallel",
    "model.seq_length",
    "dataset.seq_length",
    "train.global_batch_size",
    "train.micro_batch_size",
    "model.recompute_granularity",
    "model.recompute_method",
    "model.recompute_num_layers",
    "model.recompute_modules",
    "ddp.use_distributed_optimizer",
    "optimizer.use_distributed_optimizer",
    "ddp.use_megatron_fsdp",
    "model.moe_token_dispatcher_type",
    "model.moe_flex_dispatcher_backend",
    "model.cuda_graph_impl",
    "model.pipeline_model_parallel_layout",
    "model.num_layers_in_first_pipeline_stage",
    "model.num_layers_in_last_pipeline_stage",
    "model.account_for_embedding_in_pipeline_split",
    "model.account_for_loss_in_pipeline_split",
    "mixed_precision",
    "mixed_precision.grad_reduce_in_fp32",
    "ddp.grad_reduce_in_fp32",
    "optimizer.use_precision_aware_optimizer",
    "optimizer.main_grads_dtype",
    "optimizer.main_params_dtype",
    "optimizer.exp_avg_dtype",
    "optimizer.exp_avg_sq_dtype",
)
# Settings the memory estimate reads that recipes write beyond FIELDS
# (Megatron-FSDP sharding, FP8 parameters and caches, activation and optimizer
# offloading, gradient accumulation fusion). Recorded only where the recipe, a
# helper or a Bridge class sets them (status `set`); a value left to a model
# provider built from a Hugging Face config is not recorded, and the estimate
# then keeps its own default for it, as it did before these were recorded.
MEMORY_FIELDS = (
    "ddp.data_parallel_sharding_strategy",
    "ddp.outer_dp_sharding_strategy",
    "ddp.num_distributed_optimizer_instances",
    "ddp.keep_fp8_transpose_cache",
    "mixed_precision.fp8_param_gather",
    "model.disable_parameter_transpose_cache",
    "model.gradient_accumulation_fusion",
    "model.cpu_offloading",
    "model.cpu_offloading_num_layers",
    "model.fine_grained_activation_offloading",
    "model.offload_modules",
    "optimizer.optimizer_cpu_offload",
    "optimizer.optimizer_offload_fraction",
    "model.cross_entropy_loss_fusion",
    "model.cross_entropy_fusion_impl",
    # DeepSeek V4's compressed sparse attention: the fused kernels (a backend
    # other than "none"; the deprecated apply_dsa_kernel_fusion maps to it)
    # keep far less than the PyTorch path (lint/facts/estimate_dsv4.cpp).
    "model.apply_dsa_kernel_fusion",
    "model.dsa_kernel_backend",
    "model.use_fused_mhc",
    "model.moe_expert_capacity_factor",
    "model.moe_pad_expert_input_to_capacity",
    # The MLP's activation: fused (bias_swiglu_impl keeps its input) or the
    # unfused glu, which keeps two or three f-wide tensors more per layer
    # (lint/facts/estimate.cpp). A model's bridge that sets it is recorded in
    # data/model_dims.csv (bias_activation_fusion), not here.
    "model.bias_activation_fusion",
    # Vision-language recipes: a frozen vision tower (or language model) keeps
    # no gradients or optimizer state (lint/facts/estimate_vision.cpp).
    "model.freeze_vision_model",
    "model.freeze_vision_projection",
    "model.freeze_language_model",
    # Qwen2-Audio's provider names its switches for the audio encoder.
    "model.freeze_audio_model",
    "model.freeze_audio_projection",
    # Nemotron Omni: a recipe that turns the checkpoint's sound encoder off
    # (has_sound False) builds no Parakeet encoder (estimate_vision.cpp).
    "model.has_sound",
    # Nemotron Omni with sound (the valor32k recipes): whether the Parakeet
    # encoder and its projector train, and the temporal video embedder RADIO
    # builds beside its image embedder (lint/facts/estimate_sound.cpp).
    "model.freeze_sound_encoder",
    "model.freeze_sound_projection",
    "model.temporal_patch_dim",
    "model.separate_video_embedder",
    # Diffusion recipes (lint/facts/estimate_dit.cpp): real data (a path) or
    # the mock data module, whose latent grid and text length fix the tokens
    # (dataset.path itself is read from the job: the recipes leave it None).
    "dataset.F_latents",
    "dataset.H_latents",
    "dataset.W_latents",
    "dataset.patch_spatial",
    "dataset.patch_temporal",
    "dataset.number_packed_samples",
    "dataset.context_seq_len",
    "dataset.image_H",
    "dataset.image_W",
    "dataset.vae_scale_factor",
    "dataset.prompt_seq_len",
    # PEFT: the LoRA / DoRA rank sizes the adapters (lint/facts/estimate_peft.cpp).
    "peft.dim",
    # The vocabulary (lint/facts/estimate_read.cpp vocab_size): Bridge takes
    # the tokenizer's, padded, with use_tokenizer_vocab_size or no model
    # vocabulary, else the model's own (training/setup.py
    # _validate_and_set_vocab_size); a NullTokenizer's is its vocab_size.
    "tokenizer.tokenizer_type",
    "tokenizer.vocab_size",
    "tokenizer.use_tokenizer_vocab_size",
    "model.vocab_size",
    "model.make_vocab_size_divisible_by",
)
# Megatron's own layer spec (transformer_impl "local": Gemma 4 E4B) runs
# DotProductAttention, whose softmax without masked_softmax_fusion is
# PyTorch's, in fp32 (lint/facts/estimate.cpp core_attention). Recorded only
# for a recipe that picks an implementation other than Transformer Engine's,
# where they change what the estimate counts.
LOCAL_SPEC_FIELDS = (
    "model.transformer_impl",
    "model.masked_softmax_fusion",
)
# Settings rules read that recipes write beyond FIELDS, recorded as
# MEMORY_FIELDS are: only where a recipe, a helper or a Bridge class sets them
# (a field the recipe's config class does not have is skipped). The Mamba
# mixer's path and the dataset's sequence packing, which together decide
# whether Megatron-Core's unfused Mamba path meets packed sequences
# (rules/batch/packed_sequences_unfused_mamba.cpp).
RULE_FIELDS = (
    "model.use_mamba_mem_eff_path",
    "dataset.enable_offline_packing",
    "dataset.enable_in_batch_packing",
)
# The model's shape, recorded only where nothing in Bridge sets any of it
# (status `default`): a recipe that builds a bare provider (vanilla_gpt's
# GPTModelProvider()) leaves TransformerConfig's 0 (no experts, no head
# dimension: None) until the launch sets it.
# A shape a provider or a Hugging Face config gives is data/model_dims.csv's.
SHAPE_FIELDS = (
    "model.num_layers",
    "model.hidden_size",
    "model.num_attention_heads",
    "model.num_moe_experts",
    "model.kv_channels",
)
# Written as one row per key (env_vars) or per field the recipe writes (comm_overlap).
SECTIONS = ("env_vars", "comm_overlap")

# A model built from a Hugging Face config (AutoBridge.from_hf_pretrained(...)
# .to_megatron_provider(), a bridge's provider_bridge(), get_model_config())
# takes its architecture from that config at run time. Its parallel layout and
# recompute settings are not read from the config: the extractor verifies that
# no code under models/ writes these fields (see check_provider_fields), so a
# recipe that leaves them alone gets the provider class default.
PROVIDER_DEFAULT_FIELDS = (
    "tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
    "expert_model_parallel_size", "expert_tensor_parallel_size", "virtual_pipeline_model_parallel_size",
    "sequence_parallel", "pipeline_model_parallel_layout", "num_layers_in_first_pipeline_stage",
    "num_layers_in_last_pipeline_stage", "account_for_embedding_in_pipeline_split",
    "account_for_loss_in_pipeline_split", "recompute_granularity", "recompute_method", "recompute_num_layers",
    "recompute_modules", "cuda_graph_impl", "cuda_graph_scope",
)
# Classes under models/ whose defaults for those fields differ from
# Megatron-Core's, and why no recipe's provider can be one of them (checked to
# still differ, so a stale entry fails).
PROVIDER_CLASSES_OK = {
    "ModuleParallelismConfig": "per-module parallelism of a MegatronMIMO model, not a model provider",
    "SarvamMoEModelProvider": "no recipe builds a Sarvam model",
    "SarvamMLAModelProvider": "no recipe builds a Sarvam model",
    "T5ModelProvider": "no recipe builds a T5 model",
}

# Fields a recipe may leave to values read from the Hugging Face config at run
# time, and what they are then. Only an unknown that comes from such a config
# is accepted; any other value not known statically stops the extraction.
RUNTIME_FIELDS = {
    "model.moe_token_dispatcher_type": "set by the model's bridge from the Hugging Face config",
    "model.moe_flex_dispatcher_backend": "set by the model's bridge from the Hugging Face config",
    "model.seq_length": "the provider takes max_position_embeddings from the Hugging Face config",
    "model.pipeline_model_parallel_layout": "computed from the layer count of the Hugging Face config",
}
HF_ORIGIN = "the Hugging Face config"
UNPUBLISHED = "compute capability not published"
RUNTIME_ORIGINS = (HF_ORIGIN, UNPUBLISHED)

# Functions under models/ the recipes call that are plain config helpers.
INTERPRETED_MODEL_FUNCTIONS = (
    "megatron.bridge.models.deepseek.deepseek_v4_bridge.set_deepseek_v4_pipeline_model_parallel_layout",
    "megatron.bridge.models.deepseek.deepseek_v4_bridge.deepseek_v4_supports_blackwell_fused_kernels",
)
# Methods that build a model provider from a Hugging Face config.
PROVIDER_FACTORIES = ("to_megatron_provider", "provider_bridge", "get_model_config", "to_text_provider")

# What torch.cuda reports on the GPU a recipe is named for (the recipe is built
# in the training process, on that GPU). Compute capability from NVIDIA's CUDA
# GPU list; names as torch.cuda.get_device_properties(0).name prints them.
# Rubin (vr200, r100) is left unknown: its compute capability is not published.
DEVICES = {
    "h100": (9, 0, "NVIDIA H100 80GB HBM3"),
    "b200": (10, 0, "NVIDIA B200"),
    "b300": (10, 3, "NVIDIA B300 SXM6 AC"),
    "gb200": (10, 0, "NVIDIA GB200"),
    "gb300": (10, 3, "NVIDIA GB300"),
}

GPU_DIRS = ("h100", "gb200", "gb300", "b200", "b300", "vr200", "r100")


class FactError(Exception):
    pass


# ---------------------------------------------------------------- special calls


HF_FACTS: dict[str, dict[str, object]] = {}


def load_hf_facts(path: Path) -> None:
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            if row["hf_id"]:
                experts = int(row["num_moe_experts"])
                HF_FACTS[row["hf_id"]] = {"num_moe_experts": experts or None, "num_layers": int(row["num_layers"])}


def hf_provider(interp: ri.Interpreter, desc: str, hf: object = None) -> ri.Obj:
    obj = ri.Obj(None, "hf_provider", desc)
    if isinstance(hf, str):
        obj.tags["hf"] = hf
    return obj


def provider_class(interp: ri.Interpreter) -> ri.ClassInfo:
    cls = interp.import_name("megatron.bridge.models.gpt_provider", "GPTModelProvider")
    if not isinstance(cls, ri.ClassInfo):
        raise FactError("GPTModelProvider not found")
    return cls


def hf_provider_attr(interp: ri.Interpreter, obj: ri.Obj, name: str):
    facts = HF_FACTS.get(obj.tags.get("hf", ""), {})
    if name in HF_CONFIG_FIELDS and name in facts:
        return facts[name]
    cls = provider_class(interp)
    owner = cls.defining(name)
    if name in PROVIDER_DEFAULT_FIELDS and owner is not None:
        return interp.obj_attr(ri.Obj(cls, desc=obj.desc), name, None)
    if name in PROVIDER_FACTORIES:
        # A VLM's text provider: a different model, nothing known of its config.
        return ri.Builtin(f"provider.{name}", lambda a, k, w: hf_provider(interp, f"{obj.desc}.{name}()"))
    if owner is not None and name in owner.methods:
        return ri.Builtin(f"provider.{name}", lambda a, k, w: interp.opaque_call(f"provider.{name}", w))
    return ri.Unknown(f"{name} of the model provider built from the Hugging Face config ({obj.desc})")


def hf_provider_hasattr(interp: ri.Interpreter, obj: ri.Obj, name: str):
    if provider_class(interp).defining(name) is not None:
        return True
    return ri.Unknown(f"hasattr on the provider built from the Hugging Face config ({obj.desc})")


def autobridge_new(interp, args, kwargs, where):
    hf = args[0] if args else kwargs.get("hf_path", kwargs.get("pretrained_model_name_or_path"))
    hf = interp.resolve(hf)
    obj = ri.Obj(None, "autobridge", f"AutoBridge({hf if isinstance(hf, str) else '?'})")
    if isinstance(hf, str):
        obj.tags["hf"] = hf
    return obj


def autobridge_method(name):
    def run(interp, obj, args, kwargs, where):
        if name in PROVIDER_FACTORIES:
            return hf_provider(interp, f"{obj.desc}.{name}()", obj.tags.get("hf"))
        return interp.opaque_call(f"AutoBridge.{name}", where)
    return run


def device_properties(interp, args, kwargs, where):
    gpu = interp.context.get("gpu")
    if gpu not in DEVICES:
        return ri.Unknown(f"the properties of the GPU it runs on ({gpu}: {UNPUBLISHED})")
    major, minor, name = DEVICES[gpu]
    obj = ri.Obj(None, "device", f"{gpu}")
    obj.slots = {"major": ri.Slot(major, None), "minor": ri.Slot(minor, None), "name": ri.Slot(name, None)}
    return obj


def device_capability(interp, args, kwargs, where):
    gpu = interp.context.get("gpu")
    if gpu not in DEVICES:
        return ri.Unknown(f"the compute capability of the GPU it runs on ({gpu}: {UNPUBLISHED})")
    return (DEVICES[gpu][0], DEVICES[gpu][1])


def replace_obj(interp, args, kwargs, where):
    src = interp.resolve(args[0])
    if not isinstance(src, ri.Obj):
        return ri.Unknown("dataclasses.replace of an unknown value")
    out = ri.Obj(src.cls, src.kind, src.desc)
    out.slots = dict(src.slots)
    out.tags = dict(src.tags)
    for k, v in kwargs.items():
        out.slots[k] = ri.Slot(v, where)
    return out


def deepcopy_value(interp, args, kwargs, where):
    memo: dict = {}

    def copy(v):
        v = interp.resolve(v)
        if id(v) in memo:
            return memo[id(v)]
        if isinstance(v, ri.Obj):
            out = ri.Obj(v.cls, v.kind, v.desc)
            memo[id(v)] = out
            out.slots = {k: ri.Slot(copy(s.value), s.where, s.defaulted) for k, s in v.slots.items()}
            out.tags = dict(v.tags)
            return out
        if isinstance(v, list):
            out_list: list = []
            memo[id(v)] = out_list
            out_list.extend(copy(x) for x in v)
            return out_list
        if isinstance(v, dict):
            out_dict: dict = {}
            memo[id(v)] = out_dict
            out_dict.update({k: copy(x) for k, x in v.items()})
            return out_dict
        if isinstance(v, tuple):
            return tuple(copy(x) for x in v)
        return v
    return copy(args[0])


def constant(value):
    return lambda interp, args, kwargs, where: value


def opaque_none(interp, args, kwargs, where):
    return None


SPECIAL_CALLS = {
    "AutoBridge.from_hf_pretrained": autobridge_new,
    "AutoBridge.from_hf_config": autobridge_new,
    "AutoBridge.from_auto_config": autobridge_new,
    "torch.cuda.is_available": constant(True),
    "torch.cuda.get_device_properties": device_properties,
    "torch.cuda.get_device_capability": device_capability,
    "megatron.bridge.utils.common_utils.get_rank_safe": constant(0),
    "megatron.bridge.utils.common_utils.print_rank_0": opaque_none,
    "megatron.bridge.models._deprecation.warn_deprecated_model": opaque_none,
    "functools.partial": ri._b_partial,
    "dataclasses.replace": replace_obj,
    "copy.deepcopy": deepcopy_value,
    "copy.copy": replace_obj,
    "typing.cast": lambda interp, args, kwargs, where: args[1],
    "<hf_provider_attr>": hf_provider_attr,
    "<hf_provider_hasattr>": hf_provider_hasattr,
}
for _name in ("to_megatron_provider", "get_model_config", "provider_bridge", "to_text_provider",
              "from_hf_pretrained", "hf_pretrained"):
    SPECIAL_CALLS[f"<autobridge>.{_name}"] = autobridge_method(_name)
for _name in PROVIDER_FACTORIES:
    SPECIAL_CALLS[f"<opaque>.{_name}"] = autobridge_method(_name)

SPECIAL_NAMES = {
    name: (lambda interp: ri.Sym("AutoBridge"))
    for name in ("megatron.bridge.AutoBridge", "megatron.bridge.models.AutoBridge",
                 "megatron.bridge.models.conversion.auto_bridge.AutoBridge")
}


class RecipeInterpreter(ri.Interpreter):
    """Adds the rules for model code: functions under models/ are not
    interpreted, but a method that builds a provider from a Hugging Face config
    yields a provider object."""

    def call(self, func, args, kwargs, where, kw_where=None, text=""):
        func = self.resolve(func)
        target = func.func if isinstance(func, ri.BoundMethod) else func
        if isinstance(target, ri.Function):
            qualified = f"{target.module.name}.{target.name}"
            if qualified in INTERPRETED_MODEL_FUNCTIONS:
                return self.call_function(target, ([func.self_value] if isinstance(func, ri.BoundMethod) else [])
                                          + list(args), kwargs, where)
            if target.module.name.startswith(self.uninterpreted) and target.name in PROVIDER_FACTORIES:
                return hf_provider(self, f"{qualified}() at {where}")
        result = super().call(func, args, kwargs, where, kw_where, text)
        # The preset a mixed-precision config comes from: the outermost preset
        # function (presets build on each other, e.g. on bf16_mixed()).
        if (isinstance(target, ri.Function) and target.module.name == "megatron.bridge.training.mixed_precision"
                and isinstance(result, ri.Obj) and not target.name.startswith(("_", "get_"))):
            result.tags["preset"] = target.name
        return result


# ---------------------------------------------------------------- trees


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def submodule_rev(bridge: Path, rev: str) -> str:
    line = git(bridge, "ls-tree", rev, "3rdparty/Megatron-LM").split()
    if len(line) < 3 or line[1] != "commit":
        raise FactError("3rdparty/Megatron-LM is not a submodule at this revision")
    return line[2]


def has_commit(repo: Path, rev: str) -> bool:
    return subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{rev}^{{commit}}"],
                          capture_output=True).returncode == 0


def snapshots_present(bridge: Path, mcore: Path, rev: str) -> bool:
    if not has_commit(bridge, rev):
        return False
    try:
        return has_commit(mcore, submodule_rev(bridge, rev))
    except (FactError, subprocess.CalledProcessError):
        return False


def recipe_functions(tree: ri.GitTree) -> list[tuple[str, str, str]]:
    """(name, kind, module path) of every exported recipe function."""
    out = []
    for path in sorted(tree.files):
        parts = path.split("/")
        # src/megatron/bridge/{recipes,perf_recipes}/<family>/<gpu>/<module>.py
        if len(parts) != 7 or parts[3] not in ("recipes", "perf_recipes") or parts[5] not in GPU_DIRS:
            continue
        if parts[6] == "__init__.py":
            continue
        kind = "library" if parts[3] == "recipes" else "perf"
        module = ast.parse(tree.read(path))
        for node in module.body:
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_config") and not node.name.startswith("_"):
                out.append((node.name, kind, path))
    return out


BUILD_FUNCTIONS = ("provider_bridge", "hf_config_to_model_config", "to_megatron_provider", "get_model_config")


def check_provider_fields(tree: ri.GitTree, interp: ri.Interpreter) -> None:
    """Nothing that builds a provider from a Hugging Face config writes the
    fields taken from the provider default: the bridges' provider_bridge /
    hf_config_to_model_config (and the functions of their module they call) do
    not assign them or pass them as keywords, and no class under models/ gives
    them a default other than Megatron-Core's. (Code that runs later, when the
    model is built or finalized, does not change what the recipe hands over.)"""
    base = interp.import_name("megatron.core.transformer.transformer_config", "TransformerConfig")
    if not isinstance(base, ri.ClassInfo):
        raise FactError("Megatron-Core's TransformerConfig not found")
    mcore_default = {name: interp.default_of(ri.Obj(base), name)[0] for name in PROVIDER_DEFAULT_FIELDS}
    violations: list[str] = []
    seen_ok: set[str] = set()
    for path in sorted(tree.files):
        rel = path[len("src/megatron/bridge/"):]
        if not rel.startswith(("models/", "diffusion/models/", "diffusion/conversion/")):
            continue
        module = ast.parse(tree.read(path))
        functions: dict[str, list[ast.FunctionDef]] = {}
        for node in ast.walk(module):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(node.name, []).append(node)
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                            and stmt.target.id in PROVIDER_DEFAULT_FIELDS and stmt.value is not None):
                        try:
                            value = ast.literal_eval(stmt.value)
                        except ValueError:
                            value = ast.unparse(stmt.value)
                        if not ri.same(value, mcore_default[stmt.target.id]):
                            if node.name in PROVIDER_CLASSES_OK:
                                seen_ok.add(node.name)
                                continue
                            violations.append(f"{rel}:{stmt.lineno} ({node.name}.{stmt.target.id} = {value!r})")
        todo = [f for name in BUILD_FUNCTIONS for f in functions.get(name, [])]
        done: set[int] = set()
        while todo:
            func = todo.pop()
            if id(func) in done:
                continue
            done.add(id(func))
            for node in ast.walk(func):
                if isinstance(node, ast.Call):
                    callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                    todo.extend(functions.get(callee, []))
                    for kw in node.keywords:
                        if kw.arg in PROVIDER_DEFAULT_FIELDS:
                            violations.append(f"{rel}:{kw.value.lineno} ({kw.arg}=...)")
                targets = node.targets if isinstance(node, ast.Assign) else (
                    [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
                for t in targets:
                    if isinstance(t, ast.Attribute) and t.attr in PROVIDER_DEFAULT_FIELDS:
                        violations.append(f"{rel}:{t.lineno} (.{t.attr} = ...)")
    if violations:
        raise FactError("code that builds providers from Hugging Face configs sets fields assumed to keep their "
                        "default; review PROVIDER_DEFAULT_FIELDS: " + ", ".join(violations))
    stale = set(PROVIDER_CLASSES_OK) - seen_ok
    if stale:
        raise FactError(f"PROVIDER_CLASSES_OK names classes that no longer set those fields: {sorted(stale)}")


# ---------------------------------------------------------------- reading a result


class Reader:
    def __init__(self, interp: ri.Interpreter, recipe: str):
        self.interp = interp
        self.recipe = recipe

    def read(self, root: ri.Obj, path: str) -> tuple[str, object, str]:
        """(status, value, where) of a dotted field of the ConfigContainer."""
        obj: object = root
        parts = path.split(".")
        status, where = "set", ""
        for i, part in enumerate(parts):
            obj = self.interp.resolve(obj)
            if obj is None:
                return "set", None, where  # the section itself is None
            if ri.unknown(obj):
                return "unknown", obj, where
            if not isinstance(obj, ri.Obj):
                raise FactError(f"{self.recipe}: {'.'.join(parts[:i])} is {obj!r}, not a config object")
            if part in obj.slots and not obj.slots[part].defaulted:
                slot = obj.slots[part]
                obj, where, status = slot.value, str(slot.where) if slot.where else "", "set"
                continue
            if obj.kind == "hf_provider":
                if part not in PROVIDER_DEFAULT_FIELDS:
                    return "unknown", ri.Unknown(f"{part} of the model provider built from {HF_ORIGIN} ({obj.desc})"), ""
                obj = ri.Obj(provider_class(self.interp))
            value, owner = self.interp.default_of(obj, part)
            if value is ri.MISSING:
                raise FactError(f"{self.recipe}: {'.'.join(parts[: i + 1])} is not a field of {obj!r}")
            if part in obj.slots:  # the default object the recipe may have written into
                value = obj.slots[part].value
            status, where = self.default_status(obj.cls, owner, part, value)
            obj = value
        obj = self.interp.resolve(obj)
        if ri.unknown(obj):
            return "unknown", obj, where
        return status, obj, where


    def default_status(self, cls: ri.ClassInfo | None, owner: ri.ClassInfo | None, name: str,
                       value: object) -> tuple[str, str]:
        """A class default is the recipe's setting when a Bridge class gives the
        field a value other than Megatron-Core's (a provider's own default)."""
        if owner is None or not owner.module.name.startswith("megatron.bridge"):
            return "default", ""
        base = next((c for c in cls.mro() if not c.module.name.startswith("megatron.bridge")
                     and (name in c.fields or name in c.attrs)), None) if cls else None
        if base is not None:
            mcore, _ = self.interp.default_of(ri.Obj(base), name)
            if ri.same(self.interp.resolve(mcore), self.interp.resolve(value)):
                return "default", ""
        return "set", str(owner.where.get(name, "")).removeprefix("src/megatron/bridge/")


def encode(interp: ri.Interpreter, value: object) -> object:
    value = interp.resolve(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, ri.Sym):
        return {"py": value.name}
    if isinstance(value, (list, tuple)):
        return [encode(interp, v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(interp, v) for k, v in value.items()}
    if isinstance(value, ri.Obj):
        out: dict = {"object": value.cls.name if value.cls else value.kind or "opaque"}
        if "name" in value.tags:
            out["name"] = value.tags["name"]
        if "preset" in value.tags:
            out["preset"] = value.tags["preset"]
        return out
    if ri.unknown(value):
        raise FactError(f"unknown value {value!r}")
    return {"py": repr(value)}


def describe_unknown(value: object) -> str:
    if isinstance(value, ri.Cond):
        return f"one of {value.options!r}: {value.why}"
    return getattr(value, "why", repr(value))


def tag_module_objects(interp: ri.Interpreter) -> None:
    """Name the module-level objects (userbuffer configs) so rows can say which one."""
    for mod in interp.modules.values():
        for name, value in mod.globals.items():
            if isinstance(value, ri.Obj) and "name" not in value.tags:
                value.tags["name"] = name


def recipe_gpu(name: str, path: str) -> str:
    m = re.search(r"_\d+gpu_([a-z0-9]+)_", name)
    if m:
        return m.group(1)
    return path.split("/")[5]


def extract(bridge: Path, rev: str, mcore: Path, only: str | None) -> tuple[list[dict], dict]:
    load_hf_facts(MODEL_CSV)
    btree = ri.GitTree(str(bridge), rev, "src/megatron/bridge")
    mrev = submodule_rev(bridge, rev)
    mtree = ri.GitTree(str(mcore), mrev, "megatron")
    interp = RecipeInterpreter(
        roots=[("megatron.bridge", btree, "src/"), ("megatron.core", mtree, ""), ("megatron.training", mtree, "")],
        special_calls=SPECIAL_CALLS, special_names=SPECIAL_NAMES,
        uninterpreted=("megatron.bridge.models", "megatron.bridge.diffusion.models",
                       "megatron.bridge.diffusion.conversion", "megatron.core", "megatron.training"),
    )
    ri.install_builtins(interp)
    check_provider_fields(btree, interp)
    rows: list[dict] = []
    errors: list[str] = []
    raises: list[str] = []
    for name, kind, path in recipe_functions(btree):
        if only and name != only:
            continue
        module = path[len("src/"):-len(".py")].replace("/", ".")
        interp.context = {"gpu": recipe_gpu(name, path)}
        interp.lost_writes = []
        rel = path[len("src/megatron/bridge/"):]
        try:
            func = interp.import_name(module, name)
            cfg = interp.call(func, [], {}, ri.Where(rel, 0))
            tag_module_objects(interp)
            line = interp.modules[module].globals[name].node.lineno
            rows.append({"recipe": name, "kind": kind, "field": "module", "status": "set",
                         "value": json.dumps(path), "where": f"{rel}:{line}"})
            rows.extend(recipe_rows(interp, name, kind, cfg))
        except ri._Raise as e:
            # Not a recipe one can run (e.g. "PEFT is not currently supported"):
            # left out of the table, as Bridge's own recipe listing does.
            raises.append(f"{name} ({kind}) raises {e.what.split('(')[0]} at {e.where}")
        except (ri.EvalError, FactError, RecursionError) as e:
            errors.append(f"{name} ({kind}): {e}")
    btree.close()
    mtree.close()
    return rows, {"errors": errors, "opaque": interp.opaque_calls, "mcore_rev": mrev, "raises": raises}


def recipe_rows(interp: ri.Interpreter, name: str, kind: str, cfg: object) -> list[dict]:
    cfg = interp.resolve(cfg)
    if not isinstance(cfg, ri.Obj) or cfg.cls is None or cfg.cls.name != "ConfigContainer":
        raise FactError(f"returns {cfg!r}, not a ConfigContainer")
    reader = Reader(interp, name)
    rows = []
    problems = []
    lost = [text for text, _ in interp.lost_writes if text.rsplit(".", 1)[-1] in {f.rsplit(".", 1)[-1] for f in FIELDS}]
    if lost:
        raise FactError(f"writes {lost[0]} on an object the extractor cannot follow")

    def row(field: str, status: str, value: object, where: str) -> None:
        rows.append({"recipe": name, "kind": kind, "field": field, "status": status,
                     "value": json.dumps(encode(interp, value), sort_keys=True),
                     "where": where.removeprefix("src/megatron/bridge/")})

    for field in FIELDS:
        if field == "mixed_precision.grad_reduce_in_fp32":
            status, value, where = mixed_precision_grad_reduce(interp, reader, cfg)
        else:
            status, value, where = reader.read(cfg, field)
        if status != "unknown" and ri.contains_unknown(value) is not None:
            status, value = "unknown", ri.contains_unknown(value)
        if status == "unknown":
            if field in RUNTIME_FIELDS and any(o in describe_unknown(value) for o in RUNTIME_ORIGINS):
                rows.append({"recipe": name, "kind": kind, "field": field, "status": "runtime",
                             "value": "null", "where": RUNTIME_FIELDS[field]})
                continue
            problems.append(f"{field}: {describe_unknown(value)}")
            continue
        row(field, status, value, where)
    for field in MEMORY_FIELDS + RULE_FIELDS:
        try:
            status, value, where = reader.read(cfg, field)
        except FactError:
            continue  # not a field of this recipe's config objects (a provider without it)
        if status == "set" and ri.contains_unknown(value) is None:
            row(field, status, value, where)
    impl = reader.read(cfg, "model.transformer_impl")
    if impl[0] == "set" and impl[1] != "transformer_engine":
        for field in LOCAL_SPEC_FIELDS:
            status, value, where = reader.read(cfg, field)
            if status == "set" and ri.contains_unknown(value) is None:
                row(field, status, value, where)
    shape = [(field, *reader.read(cfg, field)) for field in SHAPE_FIELDS]
    if all(status == "default" and ri.contains_unknown(value) is None for _, status, value, _ in shape):
        for field, status, value, where in shape:
            row(field, status, value, where)
    # A function the recipe leaves on the model to rebuild its pipeline layout
    # when the command line changes PP or VPP (scripts/training/recipe_runner.py
    # sync_model_pipeline_layout).
    model = interp.resolve(cfg.slots["model"].value) if "model" in cfg.slots else None
    builder = None
    if isinstance(model, ri.Obj) and "_pipeline_model_parallel_layout_builder" in model.slots:
        slot = model.slots["_pipeline_model_parallel_layout_builder"]
        builder = builder_name(interp.resolve(slot.value))
        if builder is None:
            problems.append(f"model._pipeline_model_parallel_layout_builder: {slot.value!r}")
        else:
            rows.append({"recipe": name, "kind": kind, "field": "model._pipeline_model_parallel_layout_builder",
                         "status": "set", "value": json.dumps(builder),
                         "where": str(slot.where).removeprefix("src/megatron/bridge/")})
    for section in SECTIONS:
        status, value, where = reader.read(cfg, section)
        value = interp.resolve(value)
        if status == "unknown":
            problems.append(f"{section}: {describe_unknown(value)}")
            continue
        if isinstance(value, dict):
            row(section, status, {}, where)
            for key in sorted(value):
                item = interp.resolve(value[key])
                if ri.unknown(item):
                    problems.append(f"{section}.{key}: {describe_unknown(item)}")
                    continue
                row(f"{section}.{key}", status, item, where)
        elif isinstance(value, ri.Obj):
            row(section, status, value, where)
            for key in sorted(k for k, slot in value.slots.items() if not slot.defaulted):
                slot = value.slots[key]
                item = interp.resolve(slot.value)
                if ri.unknown(item):
                    problems.append(f"{section}.{key}: {describe_unknown(item)}")
                    continue
                row(f"{section}.{key}", "set", item, str(slot.where) if slot.where else where)
        else:
            row(section, status, value, where)
    if problems:
        raise FactError("cannot determine " + "; ".join(problems))
    return rows


def builder_name(value: object) -> str | None:
    if isinstance(value, ri.Partial):
        return builder_name(value.func)
    if isinstance(value, ri.Function):
        return f"{value.module.name.removeprefix('megatron.bridge.')}.{value.name}"
    return None


def mixed_precision_grad_reduce(interp: ri.Interpreter, reader: Reader, cfg: ri.Obj) -> tuple[str, object, str]:
    """grad_reduce_in_fp32 of the mixed-precision config the recipe leaves: a
    preset name is looked up the way Bridge does (get_mixed_precision_config)."""
    status, mp, where = reader.read(cfg, "mixed_precision")
    mp = interp.resolve(mp)
    if status == "unknown" or mp is None:
        return status, mp, where
    if isinstance(mp, str):
        getter = interp.import_name("megatron.bridge.training.mixed_precision", "get_mixed_precision_config")
        mp = interp.resolve(interp.call(getter, [mp], {}, None))
    if not isinstance(mp, ri.Obj):
        return "unknown", ri.Unknown(f"mixed_precision is {mp!r}"), where
    return reader.read(mp, "grad_reduce_in_fp32")


# ---------------------------------------------------------------- output


HEADER = ("recipe", "kind", "field", "status", "value", "where")


def render(rows: list[dict], rev: str, mcore_rev: str, raises: list[str]) -> str:
    out = io.StringIO()
    out.write(f"# What each Megatron Bridge recipe sets (NVIDIA-NeMo/Megatron-Bridge @ {rev},\n")
    out.write(f"# Megatron-Core @ {mcore_rev} for dataclass defaults), extracted statically by\n")
    out.write("# tools/extract_recipe_facts.py. Do not edit by hand. `where` is relative to src/megatron/bridge/.\n")
    for line in sorted(raises):
        out.write(f"# left out, the recipe always raises: {line}\n")
    writer = csv.DictWriter(out, fieldnames=HEADER, lineterminator="\n")
    writer.writeheader()
    for r in sorted(rows, key=lambda r: (r["recipe"], r["kind"], r["field"])):
        writer.writerow(r)
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bridge", type=Path, default=DEFAULT_BRIDGE, help="Megatron-Bridge git directory")
    parser.add_argument("--mcore", type=Path, default=DEFAULT_MCORE, help="Megatron-LM git directory")
    parser.add_argument("--rev", default=DEFAULT_REV)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    parser.add_argument("--only", help="one recipe, printed to stdout (for debugging)")
    parser.add_argument("--verbose", action="store_true", help="list the calls left opaque")
    parser.add_argument("--skip-missing", action="store_true",
                        help="exit 77 (a skipped test) when a git directory or the revision is not here")
    args = parser.parse_args()
    if args.skip_missing and not snapshots_present(args.bridge, args.mcore, args.rev):
        print("extract_recipe_facts: the Megatron-Bridge or Megatron-LM snapshot is not here; skipped",
              file=sys.stderr)
        return 77
    try:
        rows, info = extract(args.bridge, args.rev, args.mcore, args.only)
    except (FactError, subprocess.CalledProcessError) as e:
        print(f"extract_recipe_facts: {e}", file=sys.stderr)
        return 2
    if args.verbose:
        for name, count in sorted(info["opaque"].items(), key=lambda kv: -kv[1]):
            print(f"opaque {count:5d} {name}", file=sys.stderr)
    if info["errors"]:
        for e in info["errors"]:
            print(f"extract_recipe_facts: {e}", file=sys.stderr)
        print(f"extract_recipe_facts: {len(info['errors'])} recipe(s) could not be determined", file=sys.stderr)
        return 2
    text = render(rows, args.rev, info["mcore_rev"], info["raises"])
    if args.only:
        sys.stdout.write(text)
        return 0
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else None
        if current != text:
            print(f"extract_recipe_facts: {args.out} is out of date", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
