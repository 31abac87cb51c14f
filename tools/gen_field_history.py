#!/usr/bin/env python3
"""Generate lint/model/field_history.inc: how the Literal choices of the
ConfigContainer fields in lint/model/schema_data.inc differ in the Megatron Bridge
releases v0.2.0 .. v0.6.x (each release with the Megatron-LM commit its
3rdparty/Megatron-LM submodule pins).

lint/model/schema_data.inc describes the snapshot the catalog was built from
(Megatron Bridge 067f987df03b). For every field whose annotation there is a
Literal, this script reads the annotation the same class declares at each
release tag (Python AST; nothing is executed) and records the runs of
releases whose choices differ: the choices ("a|b|c"), or nullptr when the
field was not a Literal then (plain str: the choices were not declared).

Usage: tools/gen_field_history.py [--bridge PATH] [--megatron-lm PATH] [--check]
"""
import argparse
import ast
import io
import json
import os
import re
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUTPUT = os.path.join(ROOT, "lint", "model", "field_history.inc")
SCHEMA = os.path.join(ROOT, "..", "shared", "corpus", "megatron-bridge", "derived", "configcontainer_schema.json")
DEFAULT_BRIDGE = "/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo"
DEFAULT_MLM = "/work/.mirror/NVIDIA+Megatron-LM/repo"
RELEASE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
BRIDGE_PATHS = ["src/megatron/bridge"]
MLM_PATHS = ["megatron/core", "megatron/training/config"]


def git(repo, *args, binary=False):
    out = subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout
    return out if binary else out.decode()


def releases(bridge):
    tags = []
    for tag in git(bridge, "tag").split():
        m = RELEASE.match(tag)
        if m and (0, 2, 0) <= tuple(map(int, m.groups())) < (1, 0, 0):
            tags.append((tuple(map(int, m.groups())), tag))
    return sorted(tags)


def annotations(repo, rev, prefixes):
    """{(class short name, field): annotation source text} of every class
    under `prefixes` at `rev`."""
    present = [p for p in prefixes if git(repo, "ls-tree", rev, p).strip()]
    data = git(repo, "archive", rev, *present, binary=True)
    found = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if not (member.isfile() and member.name.endswith(".py")):
                continue
            try:
                tree = ast.parse(tar.extractfile(member).read().decode("utf-8", "replace"))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if not isinstance(node, ast.ClassDef):
                    continue
                for statement in node.body:
                    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                        found[(node.name, statement.target.id)] = ast.unparse(statement.annotation)
    return found


def literal_choices(annotation):
    """The choices of the Literal in an annotation, "a|b|c"; None when it has none."""
    try:
        tree = ast.parse(annotation, mode="eval")
    except SyntaxError:
        return None
    choices = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] == "Literal":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for item in items:
                if isinstance(item, ast.UnaryOp) and isinstance(item.op, ast.USub) and isinstance(item.operand, ast.Constant):
                    choices.append(f"-{item.operand.value}")
                elif isinstance(item, ast.Constant):
                    choices.append(str(item.value))
    return "|".join(choices) if choices else None


def schema_literals(schema):
    """[(section, field, declaring class short name, choices)] at the snapshot."""
    rows = set()
    for key, section in schema.items():
        if key == "_meta":
            continue
        name = "" if key == "ConfigContainer" else key.split("[", 1)[0]
        for field in section["fields"]:
            choices = literal_choices(field["type"])
            if choices:
                rows.add((name, field["name"], field["defined_in"].rsplit(".", 1)[-1], choices))
    return sorted(rows)


def same(a, b):
    """Choices compare as sets: a reordered Literal is the same Literal."""
    return (a is None and b is None) or (a is not None and b is not None and set(a.split("|")) == set(b.split("|")))


def c_string(text):
    return "nullptr" if text is None else '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(bridge, mlm, schema):
    literals = schema_literals(schema)
    tags = releases(bridge)
    per_tag = []
    for version, tag in tags:
        pin = git(bridge, "ls-tree", tag, "3rdparty/Megatron-LM").split()[2]
        found = annotations(bridge, tag, BRIDGE_PATHS)
        found.update({k: v for k, v in annotations(mlm, pin, MLM_PATHS).items() if k not in found})
        per_tag.append((version, tag, pin, found))
    lines = [
        "// Generated by tools/gen_field_history.py from the Megatron Bridge release tags and the",
        "// Megatron-LM commits they pin; do not edit. For each Literal field of lint/model/schema_data.inc,",
        "// the runs of releases whose choices differ from the snapshot's: section, field, the last",
        "// release of the run, its choices (\"a|b\"; nullptr: no Literal then, choices not declared).",
    ]
    for version, tag, pin, _ in per_tag:
        lines.append(f"// {tag}: Megatron-LM {pin[:12]}")
    lines.append("constexpr LiteralEra kLiteralEras[] = {")
    seen = set()
    for section, name, owner, head in literals:
        if (section, name, head) in seen:
            continue
        seen.add((section, name, head))
        runs = []  # [(last version, choices)]
        for version, _, _, found in per_tag:
            annotation = found.get((owner, name))
            if annotation is None:
                continue  # the field did not exist: unknown-key's business
            choices = literal_choices(annotation)
            if runs and same(runs[-1][1], choices):
                runs[-1] = (version, runs[-1][1])
            else:
                runs.append((version, choices))
        while runs and same(runs[-1][1], head):
            runs.pop()
        for version, choices in runs:
            lines.append("    {%s, %s, %s, {%d, %d, %d}, %s}," % (
                c_string(section), c_string(name), c_string(head), *version, c_string(choices)))
    lines.append("};")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", default=DEFAULT_BRIDGE)
    parser.add_argument("--megatron-lm", default=DEFAULT_MLM)
    parser.add_argument("--schema", default=SCHEMA)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    with open(args.schema) as f:
        text = render(args.bridge, args.megatron_lm, json.load(f))
    if args.check:
        with open(OUTPUT) as f:
            if f.read() != text:
                print(f"{OUTPUT} is stale: run tools/gen_field_history.py", file=sys.stderr)
                return 1
        return 0
    with open(OUTPUT, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
