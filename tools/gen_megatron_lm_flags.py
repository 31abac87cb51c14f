#!/usr/bin/env python3
"""Generate lint/load/dialects/megatron_lm_flags_data.inc: every option Megatron-LM's
argparse parser accepts, per release, read statically from a git clone of
NVIDIA/Megatron-LM (nothing is imported or executed).

What is read, at each revision in RELEASES:
  * megatron/training/arguments.py: the functions add_megatron_arguments()
    calls, and the functions those call (in that module or imported from
    megatron/), for `*.add_argument('--flag', ...)` and for
    `ArgumentGroupFactory(SomeConfig, exclude=[...])`, which turns each field
    of a dataclass into `--field-name` (a bool that defaults to anything but
    False into `--no-field-name` and `--disable-field-name`), as
    megatron/training/argument_utils.py does;
  * each entry script in ENTRY_SCRIPTS that exists at the revision: the
    function it passes as `extra_args_provider` and the flags that adds;
  * tests/test_utils/recipes/**.yaml: which entry script the functional-test
    harness runs for each test family (`spec.model`).

Anything the reader does not understand (a flag name that is not a string
literal, a dataclass field whose type or default cannot be read, a change of
the factory's naming logic) stops the generator with an error: a flag table
that silently misses flags would turn into false errors.

Usage: python3.12 tools/gen_megatron_lm_flags.py --repo PATH [--check]
PATH is a clone of https://github.com/NVIDIA/Megatron-LM holding the tags
below and commit DEVELOPMENT. --check exits 1 when the committed file
differs from what would be generated.
"""
import argparse
import ast
import os
import re
import subprocess
import sys

from gen_support import write_or_check

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUTPUT = os.path.join(ROOT, "lint", "load", "dialects", "megatron_lm_flags_data.inc")

# main after core_v0.19.0, as mblint's other Megatron-Core tables call it.
DEVELOPMENT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
RELEASES = [
    ("0.12.0", "core_v0.12.0"), ("0.12.1", "core_v0.12.1"), ("0.12.2", "core_v0.12.2"),
    ("0.12.3", "core_v0.12.3"), ("0.13.0", "core_v0.13.0"), ("0.13.1", "core_v0.13.1"),
    ("0.14.0", "core_v0.14.0"), ("0.15.0", "core_v0.15.0"), ("0.15.1", "core_v0.15.1"),
    ("0.15.2", "core_v0.15.2"), ("0.15.3", "core_v0.15.3"), ("0.16.0", "core_v0.16.0"),
    ("0.16.1", "core_v0.16.1"), ("0.17.0", "core_v0.17.0"), ("0.17.1", "core_v0.17.1"),
    ("0.18.0", "core_v0.18.0"), ("0.18.2", "core_v0.18.2"), ("0.19.0", "core_v0.19.0"),
    ("0.20.0", DEVELOPMENT),
]
# Releases before 0.12.0: their flags are known as one group (a flag only
# they accept is reported as such, not as unknown to every release).
OLDER = ["v2.0", "v2.5", "v2.6", "23.04", "23.06", "core_v0.4.0", "core_v0.5.0", "core_v0.6.0",
         "core_v0.7.0", "core_v0.8.0", "core_v0.9.0", "core_v0.10.0", "core_v0.11.0"]
OLDER_BIT = 31

# Entry scripts whose command line mblint checks: Megatron-LM's own training
# scripts and the scripts its functional-test recipes run.
ENTRY_SCRIPTS = [
    "pretrain_gpt.py", "pretrain_hybrid.py", "pretrain_mamba.py", "pretrain_bert.py",
    "pretrain_t5.py", "pretrain_vlm.py", "pretrain_retro.py", "pretrain_ict.py",
    "pretrain_vision_classify.py", "pretrain_vision_dino.py", "pretrain_vision_inpaint.py",
    "train_rl.py", "examples/bert/pretrain_bert.py", "examples/t5/pretrain_t5.py",
    "examples/mimo/train.py", "examples/multimodal/train.py",
    "megatron/elastification/pretrain_hybrid_flex.py",
    "examples/inference/advanced/gpt_dynamic_inference.py",
    "examples/inference/advanced/gpt_dynamic_inference_with_coordinator.py",
    "examples/inference/advanced/gpt_static_inference.py",
    "examples/inference/offline_inference.py",
]

# Calls that run the parser with a script's extra_args_provider.
PARSER_CALLS = {"pretrain", "parse_and_validate_args", "parse_args", "initialize_megatron"}

# The lines of argument_utils.py whose logic this generator mirrors.
FACTORY_LOGIC = [
    'arg_name = "--" + arg_name.replace("_", "-")',
    'argparse_kwargs["action"] = "store_true" if attribute.default == False else "store_false"',
    'self._format_arg_name(attribute.name, prefix="no"), self._format_arg_name(attribute.name, prefix="disable")',
    "if attr.name in self.exclude or attr.init is False:",
]

NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version",
                    "append_const"}


class Unreadable(Exception):
    pass


class Repo:
    def __init__(self, path, rev):
        self.path = path
        self.rev = rev
        self.cache = {}
        files = subprocess.run(["git", "-C", path, "ls-tree", "-r", "--name-only", rev],
                               check=True, capture_output=True, text=True).stdout
        self.files = set(files.split("\n"))

    def text(self, file):
        return subprocess.run(["git", "-C", self.path, "show", f"{self.rev}:{file}"], check=True,
                              capture_output=True, text=True).stdout

    def module(self, file):
        if file not in self.cache:
            self.cache[file] = ast.parse(self.text(file), filename=f"{self.rev}:{file}")
        return self.cache[file]

    def module_file(self, dotted, importer=None):
        """The file of a module: from the repository root, else (a script
        run directly has its own directory on sys.path) next to `importer`."""
        base = dotted.replace(".", "/")
        roots = [""]
        if importer and "/" in importer:
            roots.append(importer.rsplit("/", 1)[0] + "/")
        for root in roots:
            for candidate in (root + base + ".py", root + base + "/__init__.py"):
                if candidate in self.files:
                    return candidate
        return None


def where(repo, file, node):
    return f"{repo.rev[:12]}:{file}:{getattr(node, 'lineno', '?')}"


def package_of(file):
    parts = file.split("/")[:-1]
    return ".".join(parts)


def absolute_module(file, node):
    """The dotted module an ImportFrom names, relative imports resolved."""
    if node.level == 0:
        return node.module
    parts = package_of(file).split(".")
    if file.endswith("/__init__.py"):
        parts = parts  # the package itself
    keep = len(parts) - (node.level - 1)
    base = ".".join(parts[:keep])
    return f"{base}.{node.module}" if node.module else base


def imports_in(file, tree_nodes):
    """name -> (module, original name) for every `from X import Y` in the nodes."""
    found = {}
    for top in tree_nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.ImportFrom):
                module = absolute_module(file, node)
                for alias in node.names:
                    found[alias.asname or alias.name] = (module, alias.name)
    return found


def top_level(repo, file):
    tree = repo.module(file)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    return tree, functions, classes


def resolve(repo, file, name, extra_nodes=(), depth=0):
    """(file, FunctionDef | ClassDef) that `name` means in `file`, or None
    when it is defined outside megatron/ (or not at all)."""
    if depth > 10:
        raise Unreadable(f"import chain too long for {name} in {file}")
    tree, functions, classes = top_level(repo, file)
    if name in functions:
        return file, functions[name]
    if name in classes:
        return file, classes[name]
    imported = imports_in(file, list(extra_nodes) + [n for n in tree.body if isinstance(n, (ast.ImportFrom, ast.If, ast.Try))])
    if name not in imported:
        return None
    module, original = imported[name]
    target = repo.module_file(module, file) if module else None
    if target is None:
        return None
    return resolve(repo, target, original, (), depth + 1)


# --- literal values -------------------------------------------------------------------

def literal(node, names=None):
    """A Python literal (constants, lists, tuples, dicts, `+` of lists)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(e, names) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {literal(k, names): literal(v, names) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return literal(node.left, names) + literal(node.right, names)
    if isinstance(node, ast.Name) and names is not None and node.id in names:
        return names[node.id]
    raise Unreadable(f"not a literal: {ast.unparse(node)}")


# --- dataclass fields (ArgumentGroupFactory) --------------------------------------------

def is_dataclass(cls):
    for d in cls.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
        if name == "dataclass":
            return True
    return False


def uses_future_annotations(repo, file):
    for node in repo.module(file).body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            if any(a.name == "annotations" for a in node.names):
                return True
    return False


def dataclass_fields(repo, file, cls, seen=None):
    """Ordered {name: (file, AnnAssign)} as dataclasses.fields() lists them."""
    seen = seen or set()
    if (file, cls.name) in seen:
        raise Unreadable(f"class cycle at {cls.name}")
    seen.add((file, cls.name))
    fields = {}
    for base in reversed(cls.bases):
        if not isinstance(base, ast.Name):
            raise Unreadable(f"base class {ast.unparse(base)} of {cls.name} ({file})")
        found = resolve(repo, file, base.id)
        if found is None:
            if base.id in ("object", "Generic", "ABC"):
                continue
            raise Unreadable(f"base class {base.id} of {cls.name} not found ({file})")
        base_file, base_cls = found
        if not isinstance(base_cls, ast.ClassDef):
            raise Unreadable(f"base {base.id} of {cls.name} is not a class")
        if is_dataclass(base_cls):
            for name, entry in dataclass_fields(repo, base_file, base_cls, seen).items():
                fields.pop(name, None)
                fields[name] = entry
        elif any(isinstance(n, ast.AnnAssign) for n in base_cls.body):
            raise Unreadable(f"annotated non-dataclass base {base.id} of {cls.name}")
    if not is_dataclass(cls):
        raise Unreadable(f"{cls.name} ({file}) is not a dataclass")
    if uses_future_annotations(repo, file):
        raise Unreadable(f"{file} uses postponed annotations: field types are strings")
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        annotation = ast.unparse(node.annotation)
        if annotation.startswith(("ClassVar", "typing.ClassVar", "KW_ONLY", "dataclasses.KW_ONLY")):
            continue
        if annotation.startswith(("InitVar", "dataclasses.InitVar")):
            continue
        name = node.target.id
        if name in fields:
            # A redefinition keeps the base's position.
            fields[name] = (file, node)
        else:
            fields[name] = (file, node)
    return fields


def field_call(node):
    value = node.value
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name == "field":
            return value
    return None


def keyword(call, name):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


MISSING = object()


def field_default(node):
    """(default literal or MISSING, has a default_factory, init, argparse_meta)."""
    call = field_call(node)
    if node.value is None:
        return MISSING, False, True, None
    if call is None:
        try:
            return literal(node.value), False, True, None
        except Unreadable:
            return "<expression>", False, True, None
    init = keyword(call, "init")
    init = True if init is None else literal(init)
    default = keyword(call, "default")
    factory = keyword(call, "default_factory")
    meta = keyword(call, "metadata")
    argparse_meta = None
    if meta is not None:
        if not isinstance(meta, ast.Dict):
            raise Unreadable(f"metadata is not a dict literal: {ast.unparse(meta)}")
        for k, v in zip(meta.keys, meta.values):
            if isinstance(k, ast.Constant) and k.value == "argparse_meta":
                argparse_meta = v
    if default is not None:
        try:
            value = literal(default)
        except Unreadable:
            value = "<expression>"
        return value, False, init, argparse_meta
    return MISSING, factory is not None, init, argparse_meta


def bool_type(annotation):
    """True when ArgumentGroupFactory._extract_type gives `type=bool`; False
    for another type; raises when it cannot tell."""
    text = ast.unparse(annotation)
    if isinstance(annotation, ast.Constant):
        raise Unreadable(f"string annotation {text!r}")
    if text == "bool":
        return True
    # Optional[X] / Union[X, None] / X | None: the first member decides; a
    # union whose second member is not None is rejected upstream (unless the
    # field's metadata says what to do).
    members = None
    if isinstance(annotation, ast.Subscript):
        head = ast.unparse(annotation.value)
        inner = annotation.slice
        if head in ("Optional", "typing.Optional"):
            members = [inner, ast.Constant(None)]
        elif head in ("Union", "typing.Union"):
            members = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    elif isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        members = flatten_union(annotation)
    if members is not None:
        if len(members) >= 2 and ast.unparse(members[1]) == "None":
            return bool_type(members[0])
        return None  # not inferable upstream: only metadata can say
    return False


def flatten_union(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return flatten_union(node.left) + flatten_union(node.right)
    return [node]


def dashed(name, prefix=None):
    if prefix:
        name = prefix + "_" + name
    return "--" + name.replace("_", "-")


def factory_flags(repo, file, cls, exclude, origin):
    """[(flag, takes_value)] ArgumentGroupFactory adds for a dataclass."""
    out = []
    for name, (field_file, node) in dataclass_fields(repo, file, cls).items():
        default, has_factory, init, meta_node = field_default(node)
        if name in exclude or init is False:
            continue
        meta = None
        if meta_node is not None:
            meta = literal(meta_node) if not isinstance(meta_node, ast.Dict) else dict_meta(meta_node)
        is_bool = bool_type(node.annotation)
        if is_bool is None and meta is None:
            raise Unreadable(f"{origin}: field {name} ({field_file}:{node.lineno}) has a union type "
                             "and no argparse_meta; upstream would fail too")
        if default is MISSING and not has_factory:
            raise Unreadable(f"{origin}: field {name} ({field_file}:{node.lineno}) has no default")
        names = [dashed(name)]
        takes_value = True
        if is_bool:
            if default is MISSING or default == "<expression>":
                raise Unreadable(f"{origin}: bool field {name} ({field_file}:{node.lineno}) default unreadable")
            if default == False:  # noqa: E712  (argparse_utils compares with ==)
                takes_value = False
            else:
                takes_value = False
                names = [dashed(name, "no"), dashed(name, "disable")]
        if meta:
            if "arg_names" in meta:
                names = list(meta["arg_names"])
            if "action" in meta:
                takes_value = meta["action"] not in NO_VALUE_ACTIONS
            elif "type" in meta or "nargs" in meta:
                takes_value = meta.get("nargs", 1) != 0
        for flag in names:
            if not isinstance(flag, str) or not flag.startswith("-"):
                raise Unreadable(f"{origin}: field {name}: arg name {flag!r}")
            out.append((flag, takes_value))
    return out


def dict_meta(node):
    """argparse_meta as a dict of what matters here; non-literal values
    (type=int, a function) become their source text."""
    out = {}
    for k, v in zip(node.keys, node.values):
        key = literal(k)
        try:
            out[key] = literal(v)
        except Unreadable:
            out[key] = ast.unparse(v)
    return out


# --- add_argument calls and the functions that make them --------------------------------

def local_lists(function):
    """Names assigned a list literal in a function (for `exclude=exclude`)."""
    names = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                value = literal(node.value, names)
            except Unreadable:
                continue
            if isinstance(value, list):
                names[node.targets[0].id] = value
        # exclude.append("x") / exclude.extend([...]) / exclude += [...]; a
        # change that is no literal makes the list unknown (used as an
        # exclude list, that stops the generator).
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in names:
            try:
                names[node.target.id] = names[node.target.id] + literal(node.value, names)
            except (Unreadable, TypeError):
                del names[node.target.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id in names and \
                node.func.attr in ("append", "extend"):
            try:
                value = literal(node.args[0], names)
                names[node.func.value.id] = names[node.func.value.id] + (
                    [value] if node.func.attr == "append" else value)
            except (Unreadable, TypeError, IndexError):
                del names[node.func.value.id]
    return names


def add_argument_flags(call, origin):
    flags = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            raise Unreadable(f"{origin}: add_argument(*...) {ast.unparse(call)[:80]}")
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            raise Unreadable(f"{origin}: flag name is not a string literal: {ast.unparse(arg)}")
        flags.append(arg.value)
    if not flags:
        dest = keyword(call, "dest")
        raise Unreadable(f"{origin}: add_argument without a name ({ast.unparse(dest) if dest else ''})")
    if not all(f.startswith("-") for f in flags):
        return []  # a positional argument: no flag
    action = keyword(call, "action")
    nargs = keyword(call, "nargs")
    takes_value = True
    if action is not None:
        if isinstance(action, ast.Constant):
            takes_value = action.value not in NO_VALUE_ACTIONS
        elif ast.unparse(action) in ("argparse.BooleanOptionalAction", "BooleanOptionalAction"):
            # argparse adds `--no-x` for every `--x`; neither takes a value.
            negated = ["--no-" + f[2:] for f in flags if f.startswith("--")]
            return [(f, False) for f in flags + negated]
        else:
            raise Unreadable(f"{origin}: custom action {ast.unparse(action)}")
    if nargs is not None and isinstance(nargs, ast.Constant) and nargs.value == 0:
        takes_value = False
    return [(f, takes_value) for f in flags]


class Collector:
    """Walks functions from a root, following calls into megatron/ code."""

    def __init__(self, repo):
        self.repo = repo
        self.visited = set()
        self.flags = {}  # flag -> takes_value

    def add(self, flag, takes_value, origin):
        previous = self.flags.get(flag)
        if previous is not None and previous != takes_value:
            # argparse would reject a second definition; different kinds
            # of the same flag mean the reader got something wrong.
            raise Unreadable(f"{origin}: {flag} defined twice with different arity")
        self.flags[flag] = takes_value

    def function(self, file, function):
        key = (file, function.name, function.lineno)
        if key in self.visited:
            return
        self.visited.add(key)
        lists = local_lists(function)
        local_imports = [n for n in ast.walk(function) if isinstance(n, ast.ImportFrom)]
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            origin = where(self.repo, file, node)
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "add_argument":
                for flag, takes_value in add_argument_flags(node, origin):
                    self.add(flag, takes_value, origin)
                continue
            name = func.id if isinstance(func, ast.Name) else None
            if name is None:
                continue
            found = resolve(self.repo, file, name, local_imports)
            if found is None:
                continue
            target_file, target = found
            if name == "ArgumentGroupFactory" or (isinstance(target, ast.ClassDef) and target.name == "ArgumentGroupFactory"):
                self.factory(file, node, lists, local_imports, origin)
            elif isinstance(target, ast.FunctionDef):
                self.function(target_file, target)

    def factory(self, file, call, lists, local_imports, origin):
        if not call.args or not isinstance(call.args[0], ast.Name):
            raise Unreadable(f"{origin}: ArgumentGroupFactory of {ast.unparse(call)[:80]}")
        exclude_node = keyword(call, "exclude")
        if exclude_node is None and len(call.args) > 1:
            exclude_node = call.args[1]
        exclude = set(literal(exclude_node, lists)) if exclude_node is not None else set()
        found = resolve(self.repo, file, call.args[0].id, local_imports)
        if found is None or not isinstance(found[1], ast.ClassDef):
            raise Unreadable(f"{origin}: config class {call.args[0].id} not found")
        cls_file, cls = found
        for flag, takes_value in factory_flags(self.repo, cls_file, cls, exclude, origin):
            self.add(flag, takes_value, origin)


def check_factory_logic(repo):
    file = "megatron/training/argument_utils.py"
    if file not in repo.files:
        return
    text = repo.text(file)
    for line in FACTORY_LOGIC:
        if line not in text:
            raise Unreadable(f"{repo.rev}:{file}: ArgumentGroupFactory changed; expected {line!r}")


def base_flags(repo):
    check_factory_logic(repo)
    file = "megatron/training/arguments.py"
    if file not in repo.files:
        file = "megatron/arguments.py"  # before core_v0.6.0
    _, functions, _ = top_level(repo, file)
    root = functions.get("add_megatron_arguments") or functions.get("parse_args")
    collector = Collector(repo)
    collector.function(file, root)
    collector.add("-h", False, "argparse")
    collector.add("--help", False, "argparse")
    return collector.flags


def provider_expressions(repo, file):
    """The extra_args_provider expressions of the parser calls in a script."""
    tree = repo.module(file)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name not in PARSER_CALLS:
            continue
        value = keyword(node, "extra_args_provider")
        if value is not None:
            found.append(value)
        elif name == "pretrain" and len(node.args) > 5:
            raise Unreadable(f"{where(repo, file, node)}: pretrain() with extra_args_provider positional?")
        elif name in ("parse_args", "parse_and_validate_args", "initialize_megatron") and node.args:
            found.append(node.args[0])
    return found


def provider_functions(expression):
    """Names of the functions an extra_args_provider expression may be; an
    IfExp gives both branches (the condition is an installed package)."""
    if isinstance(expression, ast.Name):
        return [expression.id]
    if isinstance(expression, ast.Constant) and expression.value is None:
        return []
    if isinstance(expression, ast.IfExp):
        return provider_functions(expression.body) + provider_functions(expression.orelse)
    if isinstance(expression, ast.Lambda):
        raise Unreadable(f"lambda extra_args_provider: {ast.unparse(expression)}")
    if isinstance(expression, ast.Call) and ast.unparse(expression.func) in ("partial", "functools.partial"):
        return provider_functions(expression.args[0])
    raise Unreadable(f"extra_args_provider {ast.unparse(expression)}")


def delegate_of(repo, file):
    """The script a wrapper runs with runpy.run_path(... "other.py" ...)
    (pretrain_mamba.py runs pretrain_hybrid.py from core_v0.18.0)."""
    for node in ast.walk(repo.module(file)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("runpy.run_path", "run_path"):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and inner.value.endswith(".py"):
                    sibling = (file.rsplit("/", 1)[0] + "/" if "/" in file else "") + inner.value
                    if sibling in repo.files:
                        return sibling
                    raise Unreadable(f"{repo.rev}:{file} runs {inner.value}, not found")
    return None


def entry_flags(repo, file, base, depth=0):
    """Flags an entry script adds on top of the base parser."""
    delegate = delegate_of(repo, file)
    if delegate is not None:
        if depth > 3:
            raise Unreadable(f"{repo.rev}:{file}: runpy chain too long")
        return entry_flags(repo, delegate, base, depth + 1)
    collector = Collector(repo)
    for expression in provider_expressions(repo, file):
        for name in provider_functions(expression):
            found = resolve(repo, file, name)
            if found is None:
                # A name bound by assignment in the script: `provider = f`.
                raise Unreadable(f"{repo.rev}:{file}: extra_args_provider {name} not found")
            collector.function(*found)
    return {f: v for f, v in collector.flags.items() if f not in base}


SCRIPT_RE = re.compile(r'TRAINING_SCRIPT_PATH=([^"\s]+)')
MODEL_RE = re.compile(r"^\s*model:\s*([\w.-]+)\s*$", re.M)


def test_families(repo):
    """test family (recipe spec.model) -> set of entry scripts."""
    families = {}
    for file in repo.files:
        if not (file.startswith("tests/test_utils/recipes/") and file.endswith(".yaml")):
            continue
        text = repo.text(file)
        model = MODEL_RE.search(text)
        script = SCRIPT_RE.search(text)
        if not model or not script:
            continue
        path = script.group(1).strip("\\")
        path = path[2:] if path.startswith("./") else path
        if not path.endswith(".py") or path not in repo.files:
            continue  # not a Megatron-LM script (gpt-nemo runs NeMo's)
        families.setdefault(model.group(1), set()).add(path)
    return families


# --- output ------------------------------------------------------------------------------

def collect(repo_path):
    releases = []
    for version, rev in [(None, rev) for rev in OLDER] + RELEASES:
        repo = Repo(repo_path, rev)
        base = base_flags(repo)
        families = test_families(repo)
        # The recipes' scripts are entry points too (the harness runs them).
        scripts = set(ENTRY_SCRIPTS) | {s for paths in families.values() for s in paths}
        entries = {}
        for script in sorted(scripts):
            if script not in repo.files:
                continue
            try:
                repo.module(script)
            except SyntaxError as error:  # the script cannot run at this release
                print(f"gen_megatron_lm_flags: {rev}:{script} does not parse ({error.msg}, line "
                      f"{error.lineno}); left out", file=sys.stderr)
                continue
            entries[script] = entry_flags(repo, script, base)
        releases.append((version, rev, base, entries, families))
    return releases


def mask_of(bits):
    return "0x%08x" % sum(1 << i for i in bits)


def bit_of(i, releases):
    """Bit of the i-th collected revision: the older ones share OLDER_BIT."""
    older = len(releases) - len(RELEASES)
    return OLDER_BIT if i < older else i - older


def add_release_flags(table, flags, bit):
    """Add release `bit` to each flag's releases in `table` (flag -> (bits,
    takes a value)); releases come oldest first, so the newest one's answer
    to "takes a value" is the one kept."""
    for flag, takes_value in flags.items():
        bits, _ = table.get(flag, (set(), None))
        bits.add(bit)
        table[flag] = (bits, takes_value)


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(releases):
    older = len(releases) - len(RELEASES)
    lines = [
        "// Generated by tools/gen_megatron_lm_flags.py from NVIDIA/Megatron-LM; do not edit.",
        "// Releases (bit i of a mask is release i):",
    ]
    for i, (version, rev) in enumerate(RELEASES):
        lines.append(f"//   {i:2}: {version} = {rev}")
    lines.append(f"// Bit {OLDER_BIT}: any release before them ({', '.join(OLDER)}).")
    lines.append("constexpr MegatronLmRelease kMegatronLmReleases[] = {")
    for version, rev in RELEASES:
        major, minor, patch = (int(p) for p in version.split("."))
        label = rev if rev.startswith("core_v") else f"main {rev[:10]}"
        lines.append(f"    {{{{{major}, {minor}, {patch}}}, {c_string(label)}}},")
    lines.append("};")
    lines.append(f"constexpr uint32_t kOlderReleases = 1u << {OLDER_BIT};")
    lines.append(f"constexpr const char* kOlderReleasesLabel = {c_string(OLDER[0] + ' to ' + OLDER[-1])};")
    lines.append("")

    # flag -> (releases, takes a value in the newest release that has it)
    table = {}
    for i, (_v, _r, base, _e, _f) in enumerate(releases):
        add_release_flags(table, base, bit_of(i, releases))
    lines.append("// Megatron-LM's parser (megatron/training/arguments.py): flag, releases, takes a value.")
    lines.append("constexpr MegatronLmKnownFlag kMegatronLmBaseFlags[] = {")
    for flag in sorted(table):
        bits, takes_value = table[flag]
        lines.append(f"    {{{c_string(flag)}, {mask_of(bits)}, {'true' if takes_value else 'false'}}},")
    lines.append("};")
    lines.append("")

    scripts = {}
    for i, (_v, _r, _b, entries, _f) in enumerate(releases):
        for script, flags in entries.items():
            present, extra = scripts.setdefault(script, (set(), {}))
            present.add(bit_of(i, releases))
            add_release_flags(extra, flags, bit_of(i, releases))
    lines.append("// Entry scripts: path in the repository, releases that have it.")
    lines.append("constexpr MegatronLmEntryScript kMegatronLmEntryScripts[] = {")
    for script in sorted(scripts):
        lines.append(f"    {{{c_string(script)}, {mask_of(scripts[script][0])}}},")
    lines.append("};")
    lines.append("")
    lines.append("// What each entry script's extra_args_provider adds: script, flag, releases, takes a value.")
    lines.append("constexpr MegatronLmEntryFlag kMegatronLmEntryFlags[] = {")
    for script in sorted(scripts):
        for flag in sorted(scripts[script][1]):
            bits, takes_value = scripts[script][1][flag]
            lines.append(f"    {{{c_string(script)}, {c_string(flag)}, {mask_of(bits)}, "
                         f"{'true' if takes_value else 'false'}}},")
    lines.append("};")
    lines.append("")

    families = {}
    for i, (_v, _r, _b, _e, fams) in enumerate(releases):
        if i < older:
            continue  # the harness of the releases checked is what matters
        for family, paths in fams.items():
            for path in paths:
                families.setdefault((family, path), set()).add(bit_of(i, releases))
    lines.append("// Functional-test families (tests/test_utils/recipes spec.model) and the entry")
    lines.append("// scripts their recipes run: family, script, releases.")
    lines.append("constexpr MegatronLmTestFamily kMegatronLmTestFamilies[] = {")
    for family, path in sorted(families):
        lines.append(f"    {{{c_string(family)}, {c_string(path)}, {mask_of(families[(family, path)])}}},")
    lines.append("};")
    return "\n".join(lines) + "\n"


def main():
    if sys.version_info < (3, 12):
        # Upstream files use PEP 701 f-strings, which older ast cannot parse.
        print("gen_megatron_lm_flags: needs Python 3.12 or later to parse Megatron-LM's sources", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--repo", required=True, help="a git clone of NVIDIA/Megatron-LM")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--output", default=OUTPUT)
    options = parser.parse_args()
    try:
        text = render(collect(options.repo))
    except Unreadable as error:
        print(f"gen_megatron_lm_flags: cannot read upstream: {error}", file=sys.stderr)
        return 2
    return write_or_check(options.output, text, options.check, "gen_megatron_lm_flags.py")


if __name__ == "__main__":
    sys.exit(main())
