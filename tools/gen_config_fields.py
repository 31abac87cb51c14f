#!/usr/bin/env python3
"""Generate lint/model/config_fields_data.inc:

* the field names of the ConfigContainer section variants that
  lint/model/schema_data.inc does not describe (model-specific providers such as
  Qwen2.5-VL's freeze_* fields, distillation's teacher, the dataset providers
  of VLM and diffusion recipes, PEFT variants), so that unknown-key accepts
  every variant's fields, with the annotations those variants give them
  (value-type-mismatch accepts a value any variant's annotation takes);
* the catalog recipes that may turn on Megatron-FSDP or MoE expert-parallel
  communication overlap (the recipe function, or a function it calls, assigns
  True; branches are not evaluated, so the lists over-approximate). Recipes
  not listed leave both off.

Source: a Megatron Bridge checkout (default: the mirror used for the catalog,
commit 067f987df03b) plus the Megatron-LM builder-backed model configs.
Only field names and annotation source text are extracted (Python AST);
nothing is executed.

Usage: tools/gen_config_fields.py [--bridge PATH] [--megatron-lm PATH] [--check]
"""
import argparse
import ast
import os
import sys

from gen_support import add_upstream_arguments, class_defs, git, python_sources, write_or_check

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUTPUT = os.path.join(ROOT, "lint", "model", "config_fields_data.inc")

# Classes whose subclasses (and themselves) make up each section's variants.
ROOTS = {
    "model": {"GPTModelProvider", "HybridModelProvider", "T5ModelProvider", "TransformerConfig",
              "MLATransformerConfig", "ModelProviderMixin", "MegatronMIMOProvider", "DistillationProvider",
              "ModelConfig", "GPTModelConfig", "HybridModelConfig"},
    "dataset": {"DatasetProvider", "GPTDatasetConfig", "BlendedMegatronDatasetConfig", "DataloaderConfig",
                "FinetuningDatasetConfig", "GPTSFTDatasetConfig"},
    "peft": {"PEFT"},
}
# Field owners that only some jobs have: a field declared by nothing else is
# accepted only when the section's _target_ names that family.
RESTRICTED_FAMILIES = {"T5ModelProvider": "T5"}

# DeepSeek V4 in Bridge (models/deepseek/deepseek_v4_*.py, recipes/deepseek/)
# builds on a Megatron-Core that no release has: the dev branch, whose
# TransformerConfig adds the DSv4 fields (cp_partition_mode, csa_window_size,
# hc_mult, ...). Those fields, absent at the Megatron-Core Bridge pins, are
# accepted for a DeepSeek V4 job only (family "dsv4").
MCORE_DEV_REV = "d48bd6be0a85"
MCORE_PINNED_REV = "2a75ac12c54b"
MCORE_CONFIG_FILES = ["megatron/core/transformer/transformer_config.py"]
MCORE_CONFIG_CLASSES = ("TransformerConfig", "MLATransformerConfig")


def class_table(sources):
    classes = {}
    for node in class_defs(sources):
        fields, init_args = [], []
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                annotation = " ".join(ast.unparse(statement.annotation).split())
                if "ClassVar" not in annotation:
                    fields.append((statement.target.id, annotation))
            if isinstance(statement, ast.FunctionDef) and statement.name == "__init__":
                init_args += [(a.arg, " ".join(ast.unparse(a.annotation).split()) if a.annotation else "Any")
                              for a in statement.args.args[1:] + statement.args.kwonlyargs]
        bases = [ast.unparse(b).split(".")[-1].split("[")[0] for b in node.bases]
        classes.setdefault(node.name, []).append((bases, fields, init_args))
    return classes


def ancestors(classes, name, seen=None):
    seen = set() if seen is None else seen
    for bases, _, _ in classes.get(name, []):
        for base in bases:
            if base not in seen:
                seen.add(base)
                ancestors(classes, base, seen)
    return seen


def family_of(classes, name):
    for family, tag in RESTRICTED_FAMILIES.items():
        if name == family or family in ancestors(classes, name):
            return tag
    return ""


def collect(classes):
    """{(section, field): (family, annotations joined with " | ")}."""
    rows = {}
    for section, roots in ROOTS.items():
        owners, annotations = {}, {}
        for name in classes:
            if name not in roots and not (ancestors(classes, name) & roots):
                continue
            for bases, fields, init_args in classes[name]:
                names = fields + (init_args if section == "dataset" else [])
                for field, annotation in names:
                    if field.startswith("_") or field in ("self", "args", "kwargs"):
                        continue
                    owners.setdefault(field, set()).add(family_of(classes, name))
                    annotations.setdefault(field, set()).add(annotation)
        for field, families in owners.items():
            family = "" if "" in families else sorted(families)[0]
            rows[(section, field)] = (family, " | ".join(sorted(annotations[field])))
    return rows


RECIPE_FEATURES = {
    "kRecipesMaybeMegatronFsdp": r"use_megatron_fsdp\s*=\s*True",
    "kRecipesMaybeEpOverlap": r"overlap_moe_expert_parallel_comm\s*=\s*True",
    "kRecipesMaybeOtherCkptFormat": r"ckpt_format\s*=\s*(?!\s)(?![\"']torch_dist[\"'])",
    "kRecipesMaybeNoSaveDir": r"(checkpoint\.save\s*=\s*None|\bsave\s*=\s*None|cfg\.checkpoint\s*=)",
    # The common bases (recipes/common.py) set checkpoint.save and .load.
    "kRecipesWithCommonBase": r"\b_(pretrain|sft|peft)_common(_vlm)?\(",
}


def recipe_features(sources, catalog_names):
    """{array name: sorted recipe names} for RECIPE_FEATURES."""
    import re
    functions = {}
    for path, text in sources:
        if "/recipes/" not in path and "/perf_recipes/" not in path:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                functions.setdefault(node.name, []).append(node)
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.asname and alias.asname != alias.name:
                        functions.setdefault(alias.asname, []).append(alias.name)

    def called(node):
        names = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                f = n.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if name:
                    names.add(name)
        return names

    def has(name, pattern, seen):
        if name in seen:
            return False
        seen.add(name)
        for node in functions.get(name, []):
            if isinstance(node, str):
                if has(node, pattern, seen):
                    return True
                continue
            if re.search(pattern, ast.unparse(node)):
                return True
            if any(has(c, pattern, seen) for c in called(node) if c in functions):
                return True
        return False

    return {array: sorted(n for n in catalog_names if has(n, pattern, set()))
            for array, pattern in RECIPE_FEATURES.items()}


def mcore_fields(megatron_lm, rev):
    """{field: annotation} of Megatron-Core's TransformerConfig classes at `rev`."""
    sources = [(path, git(megatron_lm, "show", "%s:%s" % (rev, path))) for path in MCORE_CONFIG_FILES]
    fields = {}
    for name, variants in class_table(sources).items():
        if name in MCORE_CONFIG_CLASSES:
            for _bases, names, _init in variants:
                for field, annotation in names:
                    fields.setdefault(field, annotation)
    return fields


def dsv4_rows(megatron_lm):
    """The model fields only Megatron-Core dev declares, for DeepSeek V4 jobs."""
    pinned = mcore_fields(megatron_lm, MCORE_PINNED_REV)
    dev = mcore_fields(megatron_lm, MCORE_DEV_REV)
    return {("model", field): ("dsv4", annotation)
            for field, annotation in dev.items() if field not in pinned and not field.startswith("_")}


def catalog_recipe_names():
    names = []
    with open(os.path.join(ROOT, "lint", "model", "catalog_data.inc")) as f:
        for line in f:
            line = line.strip()
            if line.startswith('.name = "'):
                names.append(line.split('"')[1])
    return names


def render(rows, features):
    lines = [
        "// Generated by tools/gen_config_fields.py from the Megatron Bridge sources (commit 067f987df03b),",
        "// Megatron-LM's builder-backed model configs and Megatron-Core dev's TransformerConfig (%s: the"
        % MCORE_DEV_REV,
        "// fields the Megatron-Core Bridge pins, %s, lacks); do not edit. Field names and annotations." % MCORE_PINNED_REV,
        "// section, field, family (\"\": any variant; \"T5\": only when the section's _target_ names it;",
        "// \"dsv4\": only for a DeepSeek V4 model),",
        "// the annotations of every variant that declares the field, joined with \" | \"",
        "constexpr VariantField kVariantFields[] = {",
    ]
    for (section, field), (family, annotation) in sorted(rows.items()):
        text = annotation.replace("\\", "\\\\").replace('"', '\\"')
        lines.append('    {"%s", "%s", "%s", "%s"},' % (section, field, family, text))
    lines.append("};")
    for array, names in features.items():
        lines.append("")
        lines.append("constexpr std::string_view %s[] = {" % array)
        for name in names:
            lines.append('    "%s",' % name)
        lines.append("};")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    add_upstream_arguments(parser)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    sources = list(python_sources(args.bridge, "HEAD", ["src/megatron/bridge"]))
    sources += list(python_sources(args.megatron_lm, "HEAD", ["megatron/training/models"]))
    features = recipe_features(sources, catalog_recipe_names())
    rows = dsv4_rows(args.megatron_lm)
    rows.update(collect(class_table(sources)))  # a Bridge or builder field keeps its own row
    text = render(rows, features)
    return write_or_check(OUTPUT, text, args.check, "gen_config_fields.py")


if __name__ == "__main__":
    sys.exit(main())
