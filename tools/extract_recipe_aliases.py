#!/usr/bin/env python3
"""Extract Megatron Bridge's legacy recipe names into data/recipe_aliases.csv.

One-off developer tool: the CSV it writes is committed data, and mblint (and
tools/gen_catalog.py) never need the Bridge sources. Re-run it by hand when the
catalog moves to a newer Bridge snapshot.

Bridge keeps the short names users type (`llama3_70b_pretrain_config`) in
compatibility modules `src/megatron/bridge/recipes/<family>/<model>.py`, which
re-export the canonical GPU-specific recipes:

    from megatron.bridge.recipes.llama.h100.llama3 import (
        llama3_70b_pretrain_32gpu_h100_bf16_config as llama3_70b_pretrain_config,
    )

A few legacy names are instead thin wrappers (`def alias(): return canonical()`);
those count too. Both are found with `ast`, so formatting does not matter.
Aliases whose target is not an exported recipe of the derived recipe table
(e.g. a private `_..._config` helper) are skipped and listed on stderr, because
mblint could not describe them anyway.

Usage:
    tools/extract_recipe_aliases.py [--mirror DIR] [--recipes CSV] [--out CSV]
"""

from __future__ import annotations

import argparse
import ast
import csv
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MIRROR = Path("/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo")
DEFAULT_RECIPES = REPO_ROOT.parent / "shared/corpus/megatron-bridge/derived/recipe_parallelism.csv"
DEFAULT_OUT = REPO_ROOT / "data/recipe_aliases.csv"
RECIPES_DIR = "src/megatron/bridge/recipes"


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(mirror), *args], check=True, capture_output=True, text=True
    ).stdout


def alias_modules(mirror: Path) -> list[str]:
    """`recipes/<family>/<model>.py`: exactly two levels below recipes/, so the
    GPU-specific `h100/`, `gb200/`, `gb300/` modules are excluded by shape."""
    paths = git(mirror, "ls-tree", "-r", "--name-only", "HEAD", RECIPES_DIR).splitlines()
    out = []
    for path in paths:
        rel = path[len(RECIPES_DIR) + 1 :].split("/")
        if len(rel) == 2 and rel[1].endswith(".py") and rel[1] != "__init__.py" and rel[0] != "utils":
            out.append(path)
    return sorted(out)


def wrapped_call(func: ast.FunctionDef) -> str | None:
    """Name of the function a zero-argument wrapper returns unchanged, if `func`
    is just `[docstring] return target()`."""
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if func.args.args or len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    call = body[0].value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.args and not call.keywords:
        return call.func.id
    return None


def aliases_in(source: str) -> list[tuple[str, str]]:
    """(alias, target) pairs defined by one compatibility module."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}  # local name -> imported name
    pairs = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("megatron.bridge.recipes."):
            for name in node.names:
                imported[name.asname or name.name] = name.name
                if name.asname and name.asname != name.name and name.name.endswith("_config"):
                    pairs.append((name.asname, name.name))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.endswith("_config"):
            target = wrapped_call(node)
            if target is not None:
                pairs.append((node.name, imported.get(target, target)))
    return pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR, help="bare git dir of Megatron-Bridge")
    parser.add_argument("--recipes", type=Path, default=DEFAULT_RECIPES, help="derived recipe_parallelism.csv")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    commit = git(args.mirror, "rev-parse", "HEAD").strip()
    with args.recipes.open(newline="") as f:
        known = {row["recipe"] for row in csv.DictReader(f)}

    rows: dict[str, tuple[str, str]] = {}
    skipped: list[str] = []
    for path in alias_modules(args.mirror):
        for alias, target in aliases_in(git(args.mirror, "show", f"HEAD:{path}")):
            if alias in known:
                continue  # a canonical name re-exported unchanged is not an alias
            if target not in known:
                skipped.append(f"{alias} -> {target} ({path})")
                print(f"skipped {skipped[-1]}: target is not an exported recipe", file=sys.stderr)
                continue
            if alias in rows and rows[alias][0] != target:
                print(f"error: {alias} maps to both {rows[alias][0]} and {target}", file=sys.stderr)
                return 1
            rows[alias] = (target, path)

    with args.out.open("w", newline="") as f:
        f.write(f"# Legacy recipe names of Megatron Bridge (NVIDIA-NeMo/Megatron-Bridge @ {commit}),\n")
        f.write("# extracted by tools/extract_recipe_aliases.py from recipes/<family>/<model>.py. Do not edit by hand.\n")
        for line in sorted(skipped):
            f.write(f"# skipped, target not in the recipe table (private helper or raises NotImplementedError): {line}\n")
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["alias", "canonical", "source"])
        for alias in sorted(rows):
            target, path = rows[alias]
            writer.writerow([alias, target, f"{path}@{commit[:12]}"])
    print(f"wrote {len(rows)} aliases to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
