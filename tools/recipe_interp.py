"""A small abstract interpreter for Megatron Bridge recipe builders.

Used by tools/extract_recipe_facts.py. It reads Python source with `ast` and
follows a recipe function through its base recipes, helpers, model providers
and config constructors, keeping the attribute writes it sees; it never
imports or runs the code it reads. What it cannot know statically (the GPU at
run time, a Hugging Face config, a file system path) becomes an `Unknown`
value, and a write under a condition it cannot decide becomes a `Cond` of the
candidates, so nothing unknown can pass for a known value.

Semantics kept deliberately small (what the recipe modules use):
  * statements: assignment (also tuple and chained targets), augmented
    assignment, expression calls, if/else, for over known sequences, return,
    raise, assert, try (body only), with (body only), nested def, imports;
  * expressions: constants, names, attributes, calls, containers (with `**`),
    subscripts, arithmetic, comparisons, boolean operators, f-strings,
    comprehensions over known sequences, conditional expressions, lambda;
  * classes: dataclass fields and their defaults (Bridge and Megatron-Core
    classes), methods and properties of Bridge classes; `__post_init__` is not
    run (Bridge defers it to finalize()).
Functions under megatron/bridge/models/ are not interpreted (only their
classes' field defaults are read), except the few listed in the extractor.
"""

from __future__ import annotations

import ast
import operator
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable


# ---------------------------------------------------------------- values


class Unknown:
    """A value the interpreter cannot know statically."""

    __slots__ = ("why",)

    def __init__(self, why: str):
        self.why = why

    def __repr__(self) -> str:
        return f"Unknown({self.why})"


class Cond:
    """One of several values, chosen by a condition that cannot be decided."""

    __slots__ = ("options", "why")

    def __init__(self, options: list, why: str):
        self.options = options
        self.why = why

    def __repr__(self) -> str:
        return f"Cond({self.options!r}, {self.why})"


def unknown(v: Any) -> bool:
    return isinstance(v, (Unknown, Cond))


@dataclass(frozen=True)
class Where:
    path: str  # relative to the tree root (src/megatron/bridge/... or megatron/core/...)
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Slot:
    value: Any
    where: Where | None
    defaulted: bool = False  # a class default kept so that writes into it persist


class Sym:
    """An opaque name from outside the interpreted trees (torch.bfloat16, os.path)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Sym({self.name})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sym) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Sym", self.name))


class Obj:
    """An instance: a dataclass of the trees, or the opaque result of a call.

    `slots` holds what was written (constructor keywords and attribute writes);
    unwritten fields read as the class default. `kind` names special objects
    ("hf_provider", "autobridge", "opaque")."""

    def __init__(self, cls: "ClassInfo | None", kind: str = "", desc: str = ""):
        self.cls = cls
        self.kind = kind
        self.desc = desc
        self.slots: dict[str, Slot] = {}
        self.tags: dict[str, Any] = {}
        self.frozen = False

    def __repr__(self) -> str:
        name = self.cls.name if self.cls else self.kind or "opaque"
        return f"<{name} {self.desc}>"


class Function:
    def __init__(self, node: ast.FunctionDef | ast.Lambda, module: "Module", closure: dict | None = None):
        self.node = node
        self.module = module
        self.closure = closure or {}
        self.name = getattr(node, "name", "<lambda>")
        self.is_property = False
        self.is_classmethod = False
        self.is_staticmethod = False

    def __repr__(self) -> str:
        return f"<function {self.module.name}.{self.name}>"


class BoundMethod:
    def __init__(self, func: Function, self_value: Any):
        self.func = func
        self.self_value = self_value


class Builtin:
    def __init__(self, name: str, fn: Callable):
        self.name = name
        self.fn = fn

    def __repr__(self) -> str:
        return f"<builtin {self.name}>"


class Partial:
    def __init__(self, func: Any, args: list, kwargs: dict):
        self.func = func
        self.args = args
        self.kwargs = kwargs


class LazyRef:
    """`from module import name`, resolved on first use (imports are circular)."""

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name


class ClassInfo:
    def __init__(self, name: str, module: "Module", node: ast.ClassDef):
        self.name = name
        self.module = module
        self.node = node
        self.bases: list[Any] = []
        self.fields: dict[str, ast.expr | None] = {}  # annotated fields, in order
        self.attrs: dict[str, ast.expr] = {}  # plain class attributes
        self.methods: dict[str, Function] = {}
        self.where: dict[str, Where] = {}
        self.dataclass = False

    def __repr__(self) -> str:
        return f"<class {self.module.name}.{self.name}>"

    def mro(self) -> list["ClassInfo"]:
        out: list[ClassInfo] = []
        for c in [self] + [b for base in self.bases if isinstance(base, ClassInfo) for b in base.mro()]:
            if c not in out:
                out.append(c)
        return out

    def opaque_bases(self) -> bool:
        return any(not isinstance(b, ClassInfo) for c in self.mro() for b in c.bases if not _is_plain_base(b))

    def defining(self, name: str) -> "ClassInfo | None":
        for c in self.mro():
            if name in c.fields or name in c.attrs or name in c.methods:
                return c
        return None

    def field_order(self) -> list[str]:
        names: list[str] = []
        for c in reversed(self.mro()):
            for n in c.fields:
                if n not in names:
                    names.append(n)
        return names

    def is_subclass_of(self, other: "ClassInfo") -> bool:
        return other in self.mro()


def _is_plain_base(b: Any) -> bool:
    return isinstance(b, Sym) and b.name in ("object", "typing.Generic", "abc.ABC", "enum.Enum", "str")


class Module:
    def __init__(self, name: str, path: str, tree: ast.Module | None):
        self.name = name
        self.path = path
        self.tree = tree
        self.globals: dict[str, Any] = {}
        self.loaded = False
        self.loading = False


# ---------------------------------------------------------------- control flow


class EvalError(Exception):
    """The interpreter met something it does not support, or the code raises."""


class _Return(Exception):
    def __init__(self, value: Any):
        self.value = value


class _Raise(Exception):
    """The interpreted code raises (a `raise` statement or a failing operation);
    `exc` names the exception's class, for `except` clauses."""

    def __init__(self, what: str, where: Where | None, exc: str = "Exception"):
        self.what = what
        self.where = where
        self.exc = exc


MISSING = object()


# ---------------------------------------------------------------- sources


class GitTree:
    """Python files of one commit of a bare git directory, read with `git cat-file`."""

    def __init__(self, git_dir: str, rev: str, prefix: str):
        self.git_dir = git_dir
        self.rev = rev
        self.prefix = prefix.rstrip("/") + "/"
        listing = subprocess.run(
            ["git", "-C", git_dir, "ls-tree", "-r", "--name-only", rev, self.prefix],
            check=True, capture_output=True, text=True,
        ).stdout.splitlines()
        self.files = {p for p in listing if p.endswith(".py")}
        self._cache: dict[str, str] = {}
        self._proc: subprocess.Popen | None = None

    def has(self, path: str) -> bool:
        return path in self.files

    def read(self, path: str) -> str:
        if path not in self._cache:
            if self._proc is None:
                self._proc = subprocess.Popen(
                    ["git", "-C", self.git_dir, "cat-file", "--batch"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                )
            assert self._proc.stdin and self._proc.stdout
            self._proc.stdin.write(f"{self.rev}:{path}\n".encode())
            self._proc.stdin.flush()
            header = self._proc.stdout.readline().decode().split()
            if len(header) < 3 or header[1] != "blob":
                raise EvalError(f"cannot read {path} at {self.rev}")
            size = int(header[2])
            data = self._proc.stdout.read(size)
            self._proc.stdout.readline()
            self._cache[path] = data.decode("utf-8")
        return self._cache[path]

    def close(self) -> None:
        if self._proc:
            assert self._proc.stdin
            self._proc.stdin.close()
            self._proc.wait()
            self._proc = None


# ---------------------------------------------------------------- the interpreter


BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
CMPOPS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
PY_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list, "tuple": tuple,
            "set": set, "type": type}


@dataclass
class Frame:
    locals: dict[str, Any]
    module: Module
    closure: dict[str, Any] = field(default_factory=dict)
    # Undecidable branches that returned while the other went on: (value,
    # changes of the returning branch, why, the log to restore at the end).
    splits: list = field(default_factory=list)
    speculating: int = 0


class Interpreter:
    """Evaluate functions of the Megatron Bridge and Megatron-Core trees.

    `special_calls` maps a fully qualified name (module.function or
    module.Class.method) to a Python function (interp, args, kwargs, where)
    implementing it; `opaque_modules` are prefixes whose functions are never
    interpreted (their classes' fields still are)."""

    def __init__(self, roots: list[tuple[str, GitTree, str]], special_calls: dict[str, Callable],
                 special_names: dict[str, Callable], uninterpreted: tuple[str, ...]):
        # roots: (module prefix, tree, path prefix inside the tree)
        self.roots = roots
        self.special_calls = special_calls
        self.special_names = special_names
        self.uninterpreted = uninterpreted
        self.modules: dict[str, Module] = {}
        self.log: list | None = None  # write log while a branch is evaluated speculatively
        self.lost_writes: list[tuple[str, Where]] = []
        self.opaque_calls: dict[str, int] = {}
        self.context: dict[str, Any] = {}  # per-recipe facts special calls may consult
        self.depth = 0
        self.resolving: set[tuple[str, str]] = set()

    # ----------------------------------------------------------- modules

    def find_source(self, name: str) -> tuple[GitTree, str] | None:
        for prefix, tree, path_prefix in self.roots:
            if name == prefix or name.startswith(prefix + "."):
                rel = name.replace(".", "/")
                for candidate in (f"{path_prefix}{rel}.py", f"{path_prefix}{rel}/__init__.py"):
                    if tree.has(candidate):
                        return tree, candidate
        return None

    def module(self, name: str) -> Module | None:
        if name in self.modules:
            return self.modules[name]
        found = self.find_source(name)
        if not found:
            return None
        tree, path = found
        mod = Module(name, path, ast.parse(tree.read(path), filename=path))
        self.modules[name] = mod
        return mod

    def load(self, mod: Module) -> Module:
        if mod.loaded or mod.loading:
            return mod
        mod.loading = True
        saved_log, self.log = self.log, None
        try:
            frame = Frame(mod.globals, mod)
            mod.globals.setdefault("__name__", mod.name)
            for stmt in mod.tree.body:
                self.exec_module_stmt(stmt, frame)
        finally:
            self.log = saved_log
            mod.loading = False
            mod.loaded = True
        for value in mod.globals.values():
            self.freeze(value)
        return mod

    def freeze(self, value: Any, seen: set | None = None) -> None:
        seen = seen if seen is not None else set()
        if id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, Obj):
            value.frozen = True
            for slot in value.slots.values():
                self.freeze(slot.value, seen)
        elif isinstance(value, (list, dict, set)):
            FROZEN.add(id(value))
            KEEP.append(value)
            items = value.values() if isinstance(value, dict) else value
            for item in items:
                self.freeze(item, seen)

    def exec_module_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        """Top-level statements: what cannot be evaluated binds Unknown names."""
        try:
            self.exec_stmt(stmt, frame)
        except (EvalError, _Raise) as e:
            for name in _assigned_names(stmt):
                frame.locals[name] = Unknown(f"{frame.module.name}.{name}: {e}")
        except _Return:
            pass

    def resolve(self, value: Any) -> Any:
        seen: list[tuple[str, str]] = []
        while isinstance(value, LazyRef):
            key = (value.module, value.name)
            if key in seen or key in self.resolving:
                return Unknown(f"circular import of {value.module}.{value.name}")
            seen.append(key)
            self.resolving.add(key)
            try:
                value = self.import_name(value.module, value.name)
            finally:
                self.resolving.discard(key)
        return value

    def import_name(self, module: str, name: str) -> Any:
        qualified = f"{module}.{name}"
        if qualified in self.special_names:
            return self.special_names[qualified](self)
        if name in ("TYPE_CHECKING",):
            return False
        mod = self.module(module)
        if mod is None:
            sub = self.module(qualified)
            if sub is not None:
                return sub
            return Sym(qualified)
        self.load(mod)
        if name in mod.globals:
            return self.resolve(mod.globals[name])
        sub = self.module(qualified)
        if sub is not None:
            return sub
        return Unknown(f"{qualified} is not defined statically")

    def import_module(self, name: str) -> Any:
        mod = self.module(name)
        if mod is None:
            return Sym(name)
        return mod

    # ----------------------------------------------------------- logged writes

    def set_slot(self, obj: Obj, name: str, value: Any, where: Where | None) -> None:
        if obj.frozen:
            raise EvalError(f"a recipe writes {name} on the module-level object {obj!r}")
        if self.log is not None:
            self.log.append(("slot", obj, name, obj.slots.get(name, MISSING)))
        obj.slots[name] = Slot(value, where)

    def set_item(self, container: Any, key: Any, value: Any) -> None:
        if id(container) in FROZEN:
            raise EvalError("a recipe changes a module-level container")
        if self.log is not None:
            if isinstance(container, dict):
                self.log.append(("item", container, key, container.get(key, MISSING)))
            else:
                self.log.append(("list", container, None, list(container)))
        container[key] = value

    def mutate_list(self, container: list, fn: Callable[[], Any]) -> Any:
        if id(container) in FROZEN:
            raise EvalError("a recipe changes a module-level list")
        if self.log is not None:
            self.log.append(("list", container, None, list(container)))
        return fn()

    def set_local(self, frame: Frame, name: str, value: Any) -> None:
        if self.log is not None:
            self.log.append(("item", frame.locals, name, frame.locals.get(name, MISSING)))
        frame.locals[name] = value

    @staticmethod
    def undo(entries: list) -> list:
        """Undo a write log; return (kind, container, key, new value) for each location."""
        changed = []
        seen = set()
        for kind, container, key, old in reversed(entries):
            if kind == "slot":
                new = container.slots.get(key, MISSING)
                if (id(container), key) not in seen:
                    changed.append((kind, container, key, new))
                    seen.add((id(container), key))
                if old is MISSING:
                    container.slots.pop(key, None)
                else:
                    container.slots[key] = old
            elif kind == "item":
                new = container.get(key, MISSING)
                if (id(container), key) not in seen:
                    changed.append((kind, container, key, new))
                    seen.add((id(container), key))
                if old is MISSING:
                    container.pop(key, None)
                else:
                    container[key] = old
            else:
                new = list(container)
                if (id(container), None) not in seen:
                    changed.append((kind, container, None, new))
                    seen.add((id(container), None))
                container[:] = old
        return changed

    # ----------------------------------------------------------- statements

    def exec_block(self, stmts: list[ast.stmt], frame: Frame) -> None:
        for stmt in stmts:
            self.exec_stmt(stmt, frame)

    def where(self, frame: Frame, node: ast.AST) -> Where:
        return Where(frame.module.path, getattr(node, "lineno", 0))

    def exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        if isinstance(stmt, ast.Expr):
            self.eval(stmt.value, frame)
        elif isinstance(stmt, ast.Assign):
            value = self.eval(stmt.value, frame)
            for target in stmt.targets:
                self.assign(target, value, frame, stmt)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value, frame), frame, stmt)
        elif isinstance(stmt, ast.AugAssign):
            load = _as_load(stmt.target)
            current = self.eval(load, frame)
            value = self.binop(stmt.op, current, self.eval(stmt.value, frame), self.where(frame, stmt))
            self.assign(stmt.target, value, frame, stmt)
        elif isinstance(stmt, ast.If):
            self.exec_if(stmt, frame)
        elif isinstance(stmt, ast.Return):
            raise _Return(self.eval(stmt.value, frame) if stmt.value is not None else None)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = Function(stmt, frame.module, closure=_closure_of(frame))
            value: Any = func
            for deco in reversed(stmt.decorator_list):
                value = self.apply_decorator(deco, value, frame)
            self.set_local(frame, stmt.name, value)
        elif isinstance(stmt, ast.ClassDef):
            self.set_local(frame, stmt.name, self.define_class(stmt, frame))
        elif isinstance(stmt, ast.ImportFrom):
            base = _import_base(frame.module, stmt)
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                self.set_local(frame, alias.asname or alias.name, LazyRef(base, alias.name))
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.set_local(frame, alias.asname, self.import_module(alias.name))
                else:
                    top = alias.name.split(".")[0]
                    self.set_local(frame, top, self.import_module(top))
        elif isinstance(stmt, ast.Raise):
            what = ast.unparse(stmt.exc) if stmt.exc is not None else "raise"
            exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            raise _Raise(what, self.where(frame, stmt), ast.unparse(exc).rsplit(".", 1)[-1] if exc else "Exception")
        elif isinstance(stmt, ast.Assert):
            test = self.truth(self.eval(stmt.test, frame))
            if test is False:
                raise _Raise(f"assert {ast.unparse(stmt.test)}", self.where(frame, stmt), "AssertionError")
        elif isinstance(stmt, ast.For):
            self.exec_for(stmt, frame)
        elif isinstance(stmt, ast.Try):
            self.exec_try(stmt, frame)
        elif isinstance(stmt, ast.With):
            for item in stmt.items:
                value = self.eval(item.context_expr, frame)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, Unknown("a context manager's value"), frame, stmt)
                del value
            self.exec_block(stmt.body, frame)
        elif isinstance(stmt, (ast.Pass, ast.Global, ast.Nonlocal)):
            pass
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self.set_local(frame, target.id, Unknown(f"{target.id} was deleted"))
                else:
                    raise EvalError(f"del {ast.unparse(target)} at {self.where(frame, stmt)}")
        else:
            raise EvalError(f"unsupported statement {type(stmt).__name__} at {self.where(frame, stmt)}")

    def exec_try(self, stmt: ast.Try, frame: Frame) -> None:
        try:
            try:
                self.exec_block(stmt.body, frame)
            except _Raise as r:
                handler = next((h for h in stmt.handlers if _handles(h, r.exc)), None)
                if handler is None:
                    raise
                if handler.name:
                    self.set_local(frame, handler.name, Unknown(f"the {r.exc} raised at {r.where}"))
                self.exec_block(handler.body, frame)
            else:
                self.exec_block(stmt.orelse, frame)
        finally:
            self.exec_block(stmt.finalbody, frame)

    def apply_decorator(self, deco: ast.expr, func: Any, frame: Frame) -> Any:
        text = ast.unparse(deco)
        if text == "property":
            func.is_property = True
            return func
        if text == "classmethod":
            func.is_classmethod = True
            return func
        if text == "staticmethod":
            func.is_staticmethod = True
            return func
        try:
            d = self.resolve(self.eval(deco, frame))
        except EvalError:
            return func
        if isinstance(d, (Function, BoundMethod)):
            result = self.call(d, [func], {}, self.where(frame, deco))
            return func if unknown(result) or isinstance(result, Obj) and result.kind == "opaque" else result
        return func  # an opaque decorator is assumed to keep the function's behaviour

    def define_class(self, node: ast.ClassDef, frame: Frame) -> ClassInfo:
        cls = ClassInfo(node.name, frame.module, node)
        for base in node.bases:
            try:
                cls.bases.append(self.resolve(self.eval(base, frame)))
            except EvalError:
                cls.bases.append(Sym(ast.unparse(base)))
        cls.dataclass = any("dataclass" in ast.unparse(d) for d in node.decorator_list) or any(
            isinstance(b, ClassInfo) and b.dataclass for b in cls.bases)
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if "ClassVar" in ast.unparse(stmt.annotation):
                    if stmt.value is not None:
                        cls.attrs[stmt.target.id] = stmt.value
                else:
                    cls.fields[stmt.target.id] = stmt.value
                cls.where[stmt.target.id] = Where(frame.module.path, stmt.lineno)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        cls.attrs[target.id] = stmt.value
                        cls.where[target.id] = Where(frame.module.path, stmt.lineno)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                func = Function(stmt, frame.module)
                for deco in stmt.decorator_list:
                    text = ast.unparse(deco)
                    if text == "property" or text.endswith(".getter"):
                        func.is_property = True
                    elif text == "classmethod":
                        func.is_classmethod = True
                    elif text == "staticmethod":
                        func.is_staticmethod = True
                    elif text.endswith(".setter"):
                        func = None  # property setters: writes go to the slot
                        break
                if func is not None:
                    cls.methods[stmt.name] = func
        return cls

    def exec_if(self, stmt: ast.If, frame: Frame) -> None:
        test = self.truth(self.eval(stmt.test, frame))
        if test is True:
            self.exec_block(stmt.body, frame)
            return
        if test is False:
            self.exec_block(stmt.orelse, frame)
            return
        why = (f"the condition `{ast.unparse(stmt.test)}` at {self.where(frame, stmt)} is not known statically "
               f"({reason(self.eval(stmt.test, frame))})")
        outcomes = []
        for body in (stmt.body, stmt.orelse):
            saved, self.log = self.log, []
            outcome: tuple = ("normal", None)
            frame.speculating += 1
            try:
                self.exec_block(body, frame)
            except _Return as r:
                outcome = ("return", r.value)
            except _Raise as r:
                outcome = ("raise", r)
            finally:
                frame.speculating -= 1
            entries, self.log = self.log, saved
            outcomes.append((outcome, self.undo(entries)))
        (o1, c1), (o2, c2) = outcomes
        if o1[0] == "raise" and o2[0] == "raise":
            raise o1[1]
        if o1[0] == "raise" or o2[0] == "raise":
            outcome, changes = (o2, c2) if o1[0] == "raise" else (o1, c1)
            for kind, container, key, new in changes:
                self.replay(kind, container, key, new)
            if outcome[0] == "return":
                raise _Return(outcome[1])
            return
        if o1[0] != o2[0]:
            # One branch returns, the other goes on: the rest of the function
            # runs on the other path; the two are joined when it returns.
            if frame.speculating or frame.locals is frame.module.globals:
                raise EvalError(f"a branch returns and the other does not, and {why}")
            (value, returned), going_on = (o1[1], c1), c2
            if o2[0] == "return":
                (value, returned), going_on = (o2[1], c2), c1
            frame.splits.append((value, returned, why, self.log))
            self.log = []
            for kind, container, key, new in going_on:
                self.replay(kind, container, key, new)
            return
        self.merge(c1, c2, why)
        if o1[0] == "return":
            raise _Return(join(o1[1], o2[1], why))

    def replay(self, kind: str, container: Any, key: Any, new: Any) -> None:
        if kind == "slot":
            if new is MISSING:
                if key in container.slots:
                    if self.log is not None:
                        self.log.append(("slot", container, key, container.slots[key]))
                    del container.slots[key]
            else:
                self.set_slot(container, key, new.value, new.where)
        elif kind == "item":
            if new is MISSING:
                if key in container:
                    if self.log is not None:
                        self.log.append(("item", container, key, container[key]))
                    del container[key]
            else:
                self.set_item(container, key, new)
        else:
            self.mutate_list(container, lambda: container.__setitem__(slice(None), new))

    def merge(self, c1: list, c2: list, why: str) -> None:
        """After an undecidable branch: locations both branches agree on take the
        value, the others a Cond of the candidates."""
        def index(changes: list) -> dict:
            return {(id(c), k): (kind, c, k, new) for kind, c, k, new in changes}
        i1, i2 = index(c1), index(c2)
        for key in list(i1) + [k for k in i2 if k not in i1]:
            kind, container, name, _ = i1.get(key) or i2[key]
            a = i1[key][3] if key in i1 else _current(kind, container, name)
            b = i2[key][3] if key in i2 else _current(kind, container, name)
            if kind == "slot":
                av = a.value if isinstance(a, Slot) else a
                bv = b.value if isinstance(b, Slot) else b
                where = (a.where if isinstance(a, Slot) else None) or (b.where if isinstance(b, Slot) else None)
                if same(av, bv):
                    self.replay(kind, container, name, a if isinstance(a, Slot) else b)
                else:
                    self.set_slot(container, name, join(_unmissing(av), _unmissing(bv), why), where)
            elif kind == "item":
                if same(a, b):
                    self.replay(kind, container, name, a)
                else:
                    self.set_item(container, name, join(_unmissing(a), _unmissing(b), why))
            else:
                if same(a, b):
                    self.replay(kind, container, name, a)
                else:
                    self.mutate_list(container, lambda: container.__setitem__(
                        slice(None), [Cond([list(a), list(b)], why)]))

    def exec_for(self, stmt: ast.For, frame: Frame) -> None:
        iterable = self.resolve(self.eval(stmt.iter, frame))
        items = self.iterate(iterable, self.where(frame, stmt))
        for item in items:
            self.assign(stmt.target, item, frame, stmt)
            self.exec_block(stmt.body, frame)
        self.exec_block(stmt.orelse, frame)

    def iterate(self, value: Any, where: Where) -> list:
        if isinstance(value, (list, tuple, set, frozenset, range, str)):
            return list(value)
        if isinstance(value, dict):
            return list(value.keys())
        if isinstance(value, _DictView):
            return value.items()
        raise EvalError(f"iteration over {value!r} at {where}")

    def assign(self, target: ast.expr, value: Any, frame: Frame, stmt: ast.AST) -> None:
        where = self.where(frame, stmt)
        if isinstance(target, ast.Name):
            self.set_local(frame, target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            value = self.resolve(value)
            if unknown(value) or isinstance(value, Obj):
                for elt in target.elts:
                    self.assign(elt, Unknown(f"unpacked from {reason(value)}"), frame, stmt)
                return
            values = list(value)
            if len(values) != len(target.elts):
                raise EvalError(f"cannot unpack {len(values)} values at {where}")
            for elt, v in zip(target.elts, values):
                self.assign(elt, v, frame, stmt)
        elif isinstance(target, ast.Attribute):
            obj = self.resolve(self.eval(target.value, frame))
            self.set_attr(obj, target.attr, value, where, ast.unparse(target))
        elif isinstance(target, ast.Subscript):
            container = self.resolve(self.eval(target.value, frame))
            key = self.eval(target.slice, frame)
            if isinstance(container, (dict, list)) and not unknown(key):
                self.set_item(container, key, value)
            else:
                self.lost_writes.append((ast.unparse(target), where))
        else:
            raise EvalError(f"unsupported assignment target at {where}")

    def set_attr(self, obj: Any, name: str, value: Any, where: Where, text: str = "") -> None:
        if isinstance(obj, Obj):
            self.set_slot(obj, name, value, where)
        elif isinstance(obj, Module):
            self.load(obj)
            obj.globals[name] = value
        else:
            self.lost_writes.append((text or name, where))

    # ----------------------------------------------------------- expressions

    def truth(self, value: Any) -> bool | None:
        value = self.resolve(value)
        if unknown(value):
            if isinstance(value, Cond):
                truths = {self.truth(v) for v in value.options}
                if len(truths) == 1:
                    return truths.pop()
            return None
        if isinstance(value, (Obj, Function, ClassInfo, Module, BoundMethod, Builtin, Sym, Partial)):
            if isinstance(value, Obj) and value.kind == "opaque":
                return None
            return True
        try:
            return bool(value)
        except Exception:  # noqa: BLE001
            return None

    def eval(self, node: ast.expr, frame: Frame) -> Any:
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise EvalError(f"unsupported expression {type(node).__name__} at {self.where(frame, node)}")
        return method(node, frame)

    def eval_Constant(self, node: ast.Constant, frame: Frame) -> Any:
        return node.value

    def eval_Name(self, node: ast.Name, frame: Frame) -> Any:
        name = node.id
        if name in frame.locals:
            return self.resolve(frame.locals[name])
        if name in frame.closure:
            return self.resolve(frame.closure[name])
        if name in frame.module.globals:
            return self.resolve(frame.module.globals[name])
        if name in BUILTINS:
            return BUILTINS[name]
        if name in PY_TYPES:
            return PY_TYPES[name]
        if name in ("Exception", "ValueError", "TypeError", "KeyError", "RuntimeError", "NotImplementedError",
                    "ImportError", "AttributeError", "AssertionError", "ModuleNotFoundError", "object"):
            return Sym(name)
        raise EvalError(f"name {name} is not defined at {self.where(frame, node)}")

    def eval_Attribute(self, node: ast.Attribute, frame: Frame) -> Any:
        base = self.resolve(self.eval(node.value, frame))
        return self.get_attr(base, node.attr, self.where(frame, node))

    def get_attr(self, base: Any, name: str, where: Where | None) -> Any:
        base = self.resolve(base)
        if isinstance(base, Obj):
            return self.obj_attr(base, name, where)
        if isinstance(base, Module):
            self.load(base)
            if name in base.globals:
                return self.resolve(base.globals[name])
            sub = self.module(f"{base.name}.{name}")
            if sub is not None:
                return sub
            return Unknown(f"{base.name}.{name} is not defined statically")
        if isinstance(base, Sym):
            full = f"{base.name}.{name}"
            if full in self.special_names:
                return self.special_names[full](self)
            return Sym(full)
        if isinstance(base, ClassInfo):
            owner = base.defining(name)
            if owner is None:
                return Unknown(f"{base.name}.{name}")
            if name in owner.methods:
                func = owner.methods[name]
                return BoundMethod(func, base) if func.is_classmethod else func
            expr = owner.attrs.get(name, owner.fields.get(name))
            return self.eval_default(owner, expr)
        if unknown(base):
            return Unknown(f"{name} of {reason(base)}")
        if isinstance(base, (str, list, dict, tuple, set, int, float)):
            return self.builtin_method(base, name, where)
        if isinstance(base, (Function, BoundMethod)) and name == "__name__":
            return base.name if isinstance(base, Function) else base.func.name
        if isinstance(base, type) and name == "__name__":
            return base.__name__
        return Unknown(f"attribute {name} of {base!r}")

    def obj_attr(self, obj: Obj, name: str, where: Where | None) -> Any:
        if name in obj.slots:
            return obj.slots[name].value
        if name == "__class__" and obj.cls:
            return obj.cls
        if obj.kind == "hf_provider":
            return self.special_calls["<hf_provider_attr>"](self, obj, name)
        if obj.kind in ("autobridge", "opaque") or obj.cls is None:
            method = self.special_calls.get(f"<{obj.kind}>.{name}")
            if method:
                return Builtin(f"{obj.kind}.{name}", lambda args, kwargs, w, m=method: m(self, obj, args, kwargs, w))
            return Unknown(f"{obj.desc}.{name}")
        owner = obj.cls.defining(name)
        if owner is None:
            if obj.cls.opaque_bases():
                return Unknown(f"{obj.cls.name}.{name} (a base class outside the source trees)")
            raise EvalError(f"{obj.cls.name} has no attribute {name} (at {where})")
        if name in owner.methods:
            func = owner.methods[name]
            qualified = f"{owner.module.name}.{owner.name}.{name}"
            if qualified in self.special_calls:
                special = self.special_calls[qualified]
                return Builtin(qualified, lambda args, kwargs, w: special(self, [obj, *args], kwargs, w))
            if func.is_property:
                return self.call(func, [obj], {}, where)
            if func.is_staticmethod:
                return func
            return BoundMethod(func, obj.cls if func.is_classmethod else obj)
        expr = owner.fields.get(name, owner.attrs.get(name))
        value = self.eval_default(owner, expr)
        if isinstance(value, (Obj, list, dict, set)) and not obj.frozen and name in owner.fields:
            # A dataclass builds its default objects once per instance: keep
            # this one, so that writes into it persist (not a write, not logged).
            obj.slots[name] = Slot(value, None, defaulted=True)
        return value

    def eval_default(self, owner: ClassInfo, expr: ast.expr | None) -> Any:
        if expr is None:
            return Unknown(f"a required field of {owner.name}")
        frame = Frame({}, owner.module)
        self.load(owner.module)
        if isinstance(expr, ast.Call) and ast.unparse(expr.func) in ("field", "dataclasses.field"):
            for kw in expr.keywords:
                if kw.arg == "default":
                    return self.eval(kw.value, frame)
                if kw.arg == "default_factory":
                    factory = self.resolve(self.eval(kw.value, frame))
                    return self.call(factory, [], {}, Where(owner.module.path, expr.lineno))
            return Unknown(f"a required field of {owner.name}")
        saved, self.log = self.log, None
        try:
            value = self.eval(expr, frame)
        finally:
            self.log = saved
        return value

    def default_of(self, obj: Obj, name: str) -> tuple[Any, ClassInfo | None]:
        """The class default of an unwritten field and the class that defines it."""
        if obj.cls is None:
            return Unknown(f"{obj.desc}.{name}"), None
        owner = obj.cls.defining(name)
        if owner is None:
            return MISSING, None
        expr = owner.fields.get(name, owner.attrs.get(name))
        return self.eval_default(owner, expr), owner

    def eval_Call(self, node: ast.Call, frame: Frame) -> Any:
        func = self.resolve(self.eval(node.func, frame))
        args: list = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.resolve(self.eval(a.value, frame))
                if unknown(v):
                    return Unknown(f"call with *{ast.unparse(a.value)}")
                args.extend(self.iterate(v, self.where(frame, node)))
            else:
                args.append(self.eval(a, frame))
        kwargs: dict = {}
        kw_where: dict = {}
        for kw in node.keywords:
            if kw.arg is None:
                v = self.resolve(self.eval(kw.value, frame))
                if not isinstance(v, dict):
                    return Unknown(f"call with **{ast.unparse(kw.value)}")
                kwargs.update(v)
            else:
                kwargs[kw.arg] = self.eval(kw.value, frame)
                kw_where[kw.arg] = Where(frame.module.path, kw.value.lineno)
        return self.call(func, args, kwargs, self.where(frame, node), kw_where, text=ast.unparse(node.func))

    def call(self, func: Any, args: list, kwargs: dict, where: Where | None, kw_where: dict | None = None,
             text: str = "") -> Any:
        func = self.resolve(func)
        if isinstance(func, Builtin):
            return func.fn(args, kwargs, where)
        if isinstance(func, Partial):
            return self.call(func.func, func.args + args, {**func.kwargs, **kwargs}, where, kw_where, text)
        if isinstance(func, BoundMethod):
            return self.call_function(func.func, [func.self_value, *args], kwargs, where)
        if isinstance(func, Function):
            qualified = f"{func.module.name}.{func.name}"
            if qualified in self.special_calls:
                return self.special_calls[qualified](self, args, kwargs, where)
            if func.module.name.startswith(self.uninterpreted):
                return self.opaque_call(qualified, where)
            return self.call_function(func, args, kwargs, where)
        if isinstance(func, ClassInfo):
            qualified = f"{func.module.name}.{func.name}"
            if qualified in self.special_calls:
                return self.special_calls[qualified](self, args, kwargs, where)
            return self.construct(func, args, kwargs, where, kw_where or {})
        if isinstance(func, Sym):
            if func.name in self.special_calls:
                return self.special_calls[func.name](self, args, kwargs, where)
            return self.opaque_call(func.name, where)
        if isinstance(func, type):
            try:
                return func(*[self.concrete(a) for a in args])
            except (TypeError, ValueError) as e:
                culprit = next((a for a in args if unknown(a) or isinstance(a, Obj)), None)
                if culprit is not None:
                    return Unknown(f"{func.__name__}() of {reason(culprit)}")
                raise _Raise(f"{func.__name__}(): {e}", where, type(e).__name__) from None
        if unknown(func) or isinstance(func, Obj):
            return self.opaque_call(text or repr(func), where)
        raise EvalError(f"cannot call {func!r} at {where}")

    def concrete(self, value: Any) -> Any:
        value = self.resolve(value)
        if unknown(value):
            raise TypeError("unknown")
        return value

    def opaque_call(self, name: str, where: Where | None) -> Obj:
        self.opaque_calls[name] = self.opaque_calls.get(name, 0) + 1
        return Obj(None, "opaque", f"{name}() at {where}")

    def call_function(self, func: Function, args: list, kwargs: dict, where: Where | None) -> Any:
        self.depth += 1
        if self.depth > 60:
            raise EvalError(f"recursion too deep in {func!r}")
        try:
            frame = Frame({}, func.module, func.closure)
            self.load(func.module)
            self.bind(func, frame, args, kwargs, where)
            if isinstance(func.node, ast.Lambda):
                return self.eval(func.node.body, frame)
            if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(func.node)):
                return self.opaque_call(f"{func.module.name}.{func.name} (a generator)", where)
            outcome: tuple = ("return", None)
            try:
                self.exec_block(func.node.body, frame)
            except _Return as r:
                outcome = ("return", r.value)
            except _Raise as r:
                if not frame.splits:
                    raise
                outcome = ("raise", r)
            return self.join_splits(frame, outcome)
        finally:
            self.depth -= 1

    def join_splits(self, frame: Frame, outcome: tuple) -> Any:
        """Join the paths of branches that returned early with the path that
        went on to `outcome`, innermost first."""
        while frame.splits:
            value, returned, why, saved = frame.splits.pop()
            went_on = self.undo(self.log)
            self.log = saved
            if outcome[0] == "raise":
                for kind, container, key, new in returned:
                    self.replay(kind, container, key, new)
                outcome = ("return", value)
                continue
            self.merge(returned, went_on, why)
            outcome = ("return", join(value, outcome[1], why))
        if outcome[0] == "raise":
            raise outcome[1]
        return outcome[1]

    def bind(self, func: Function, frame: Frame, args: list, kwargs: dict, where: Where | None) -> None:
        a = func.node.args
        positional = a.posonlyargs + a.args
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        # Function parameters are ordinary locals: not logged (a new frame).
        for i, param in enumerate(positional):
            if i < len(args):
                frame.locals[param.arg] = args[i]
            elif param.arg in kwargs:
                frame.locals[param.arg] = kwargs.pop(param.arg)
            elif defaults[i] is not None:
                frame.locals[param.arg] = self.eval(defaults[i], Frame({}, func.module, func.closure))
            else:
                raise EvalError(f"{func!r}: missing argument {param.arg} at {where}")
        extra = args[len(positional):]
        if a.vararg:
            frame.locals[a.vararg.arg] = tuple(extra)
        elif extra:
            raise EvalError(f"{func!r}: too many arguments at {where}")
        for param, default in zip(a.kwonlyargs, a.kw_defaults):
            if param.arg in kwargs:
                frame.locals[param.arg] = kwargs.pop(param.arg)
            elif default is not None:
                frame.locals[param.arg] = self.eval(default, Frame({}, func.module, func.closure))
            else:
                raise EvalError(f"{func!r}: missing keyword {param.arg} at {where}")
        if a.kwarg:
            frame.locals[a.kwarg.arg] = dict(kwargs)
        elif kwargs:
            raise EvalError(f"{func!r}: unexpected keywords {sorted(kwargs)} at {where}")

    def construct(self, cls: ClassInfo, args: list, kwargs: dict, where: Where | None, kw_where: dict) -> Any:
        init = cls.defining("__init__")
        if init is not None and "__init__" in init.methods and not init.dataclass:
            obj = Obj(cls, desc=f"{cls.name}() at {where}")
            if init.module.name.startswith(self.uninterpreted):
                for name, value in kwargs.items():
                    obj.slots[name] = Slot(value, kw_where.get(name, where))
                return obj
            self.call_function(init.methods["__init__"], [obj, *args], dict(kwargs), where)
            return obj
        obj = Obj(cls, desc=f"{cls.name}() at {where}")
        names = cls.field_order()
        if len(args) > len(names):
            raise EvalError(f"{cls.name}: too many positional arguments at {where}")
        for name, value in zip(names, args):
            obj.slots[name] = Slot(value, where)
        for name, value in kwargs.items():
            obj.slots[name] = Slot(value, kw_where.get(name, where))
        return obj

    def eval_Dict(self, node: ast.Dict, frame: Frame) -> Any:
        out: dict = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                spread = self.resolve(self.eval(v, frame))
                if not isinstance(spread, dict):
                    return Unknown(f"a dict spreading {ast.unparse(v)}")
                out.update(spread)
            else:
                key = self.eval(k, frame)
                if unknown(key):
                    return Unknown(f"a dict with the key {ast.unparse(k)}")
                out[key] = self.eval(v, frame)
        return out

    def eval_List(self, node: ast.List, frame: Frame) -> Any:
        return self.sequence(node.elts, frame)

    def eval_Tuple(self, node: ast.Tuple, frame: Frame) -> Any:
        return tuple(self.sequence(node.elts, frame))

    def eval_Set(self, node: ast.Set, frame: Frame) -> Any:
        items = self.sequence(node.elts, frame)
        try:
            return set(items)
        except TypeError:
            return Unknown("a set of unhashable values")

    def sequence(self, elts: list[ast.expr], frame: Frame) -> list:
        out: list = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.resolve(self.eval(e.value, frame))
                out.extend(self.iterate(v, self.where(frame, e)))
            else:
                out.append(self.eval(e, frame))
        return out

    def eval_Subscript(self, node: ast.Subscript, frame: Frame) -> Any:
        base = self.resolve(self.eval(node.value, frame))
        key = self.eval(node.slice, frame)
        if unknown(base) or unknown(key) or isinstance(base, (Obj, Sym, ClassInfo)):
            return Unknown(f"{ast.unparse(node)} of {reason(key if unknown(key) else base)}")
        try:
            return base[key]
        except (KeyError, IndexError, TypeError) as e:
            raise _Raise(f"{ast.unparse(node)}: {type(e).__name__} {e}", self.where(frame, node),
                         type(e).__name__) from None

    def eval_Slice(self, node: ast.Slice, frame: Frame) -> Any:
        parts = [self.eval(p, frame) if p is not None else None for p in (node.lower, node.upper, node.step)]
        if any(unknown(p) for p in parts):
            return Unknown("a slice")
        return slice(*parts)

    def binop(self, op: ast.operator, left: Any, right: Any, where: Where) -> Any:
        left, right = self.resolve(left), self.resolve(right)
        if unknown(left) or unknown(right):
            return Unknown(f"arithmetic at {where} on {reason(left if unknown(left) else right)}")
        if isinstance(left, (Obj, Sym)) or isinstance(right, (Obj, Sym)):
            if isinstance(op, ast.BitOr):
                return Unknown("a type union")
            return Unknown(f"arithmetic on an object at {where}")
        try:
            return BINOPS[type(op)](left, right)
        except (TypeError, ZeroDivisionError, KeyError) as e:
            raise _Raise(f"{type(e).__name__}: {e}", where, type(e).__name__) from None

    def eval_BinOp(self, node: ast.BinOp, frame: Frame) -> Any:
        return self.binop(node.op, self.eval(node.left, frame), self.eval(node.right, frame),
                          self.where(frame, node))

    def eval_UnaryOp(self, node: ast.UnaryOp, frame: Frame) -> Any:
        v = self.resolve(self.eval(node.operand, frame))
        if isinstance(node.op, ast.Not):
            t = self.truth(v)
            return Unknown(f"not of {reason(v)}") if t is None else not t
        if unknown(v) or isinstance(v, (Obj, Sym)):
            return Unknown(f"an operator on {reason(v)}")
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return +v
        return ~v

    def eval_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Any:
        is_and = isinstance(node.op, ast.And)
        value: Any = None
        for operand in node.values:
            value = self.resolve(self.eval(operand, frame))
            t = self.truth(value)
            if t is None:
                return Unknown(f"`{ast.unparse(node)}` at {self.where(frame, node)} on {reason(value)}")
            if is_and and not t:
                return value
            if not is_and and t:
                return value
        return value

    def eval_Compare(self, node: ast.Compare, frame: Frame) -> Any:
        left = self.resolve(self.eval(node.left, frame))
        for op, comp in zip(node.ops, node.comparators):
            right = self.resolve(self.eval(comp, frame))
            result = self.compare(op, left, right, self.where(frame, node))
            if result is None:
                culprit = left if unknown(left) or isinstance(left, Obj) else right
                return Unknown(f"`{ast.unparse(node)}` at {self.where(frame, node)} on {reason(culprit)}")
            if not result:
                return False
            left = right
        return True

    def compare(self, op: ast.cmpop, left: Any, right: Any, where: Where) -> bool | None:
        if isinstance(op, (ast.Is, ast.IsNot)):
            if unknown(left) or unknown(right):
                if isinstance(left, Cond) and right is None:
                    results = {o is None for o in left.options}
                    if len(results) == 1:
                        r = results.pop()
                        return r if isinstance(op, ast.Is) else not r
                return None
            if isinstance(left, Obj) and left.kind == "opaque" or isinstance(right, Obj) and right.kind == "opaque":
                return None
            r = left is right or (left is None and right is None) or (isinstance(left, Sym) and left == right)
            return r if isinstance(op, ast.Is) else not r
        if isinstance(op, (ast.In, ast.NotIn)):
            if unknown(right) or isinstance(right, (Obj, Sym)):
                return None
            if unknown(left):
                if isinstance(left, Cond):
                    results = {self.compare(op, o, right, where) for o in left.options}
                    return results.pop() if len(results) == 1 else None
                return None
            if isinstance(right, dict):
                right = list(right.keys())
            try:
                r = any(same(left, item) for item in right) if not isinstance(right, str) else left in right
            except TypeError:
                return None
            return r if isinstance(op, ast.In) else not r
        if unknown(left) or unknown(right):
            if isinstance(left, Cond) and not unknown(right):
                results = {self.compare(op, o, right, where) for o in left.options}
                return results.pop() if len(results) == 1 else None
            return None
        if isinstance(left, (Obj, Sym, ClassInfo)) or isinstance(right, (Obj, Sym, ClassInfo)):
            if isinstance(op, (ast.Eq, ast.NotEq)):
                if isinstance(left, Obj) and left.kind == "opaque" or isinstance(right, Obj) and right.kind == "opaque":
                    return None
                r = same(left, right)
                return r if isinstance(op, ast.Eq) else not r
            return None
        try:
            return bool(CMPOPS[type(op)](left, right))
        except TypeError:
            raise _Raise(f"comparison of {left!r} and {right!r}", where, "TypeError") from None

    def eval_IfExp(self, node: ast.IfExp, frame: Frame) -> Any:
        t = self.truth(self.eval(node.test, frame))
        if t is True:
            return self.eval(node.body, frame)
        if t is False:
            return self.eval(node.orelse, frame)
        why = f"the condition `{ast.unparse(node.test)}` at {self.where(frame, node)} is not known statically"
        return join(self.eval(node.body, frame), self.eval(node.orelse, frame), why)

    def eval_JoinedStr(self, node: ast.JoinedStr, frame: Frame) -> Any:
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                x = self.resolve(self.eval(v.value, frame))
                if unknown(x) or isinstance(x, (Obj, Sym, ClassInfo, Function)):
                    return Unknown(f"an f-string at {self.where(frame, node)}")
                spec = ""
                if v.format_spec is not None:
                    spec = self.eval_JoinedStr(v.format_spec, frame)
                    if unknown(spec):
                        return spec
                conv = {115: str, 114: repr, 97: ascii}.get(v.conversion)
                parts.append(format(conv(x) if conv else x, spec))
        return "".join(parts)

    def eval_FormattedValue(self, node: ast.FormattedValue, frame: Frame) -> Any:
        return self.eval_JoinedStr(ast.JoinedStr(values=[node]), frame)

    def comprehension(self, generators: list[ast.comprehension], frame: Frame, emit: Callable) -> None:
        def loop(i: int, inner: Frame) -> None:
            if i == len(generators):
                emit(inner)
                return
            gen = generators[i]
            items = self.iterate(self.resolve(self.eval(gen.iter, inner)), self.where(frame, gen.iter))
            for item in items:
                self.assign(gen.target, item, inner, gen.iter)
                ok = True
                for cond in gen.ifs:
                    t = self.truth(self.eval(cond, inner))
                    if t is None:
                        raise EvalError(f"comprehension filter not known at {self.where(frame, cond)}")
                    ok = ok and t
                if ok:
                    loop(i + 1, inner)
        inner = Frame(dict(frame.locals), frame.module, frame.closure)
        saved, self.log = self.log, None
        try:
            loop(0, inner)
        finally:
            self.log = saved

    def eval_ListComp(self, node: ast.ListComp, frame: Frame) -> Any:
        out: list = []
        self.comprehension(node.generators, frame, lambda f: out.append(self.eval(node.elt, f)))
        return out

    eval_GeneratorExp = eval_ListComp

    def eval_SetComp(self, node: ast.SetComp, frame: Frame) -> Any:
        return set(self.eval_ListComp(node, frame))

    def eval_DictComp(self, node: ast.DictComp, frame: Frame) -> Any:
        out: dict = {}
        self.comprehension(node.generators, frame,
                           lambda f: out.__setitem__(self.eval(node.key, f), self.eval(node.value, f)))
        return out

    def eval_Lambda(self, node: ast.Lambda, frame: Frame) -> Any:
        return Function(node, frame.module, closure=_closure_of(frame))

    def eval_Starred(self, node: ast.Starred, frame: Frame) -> Any:
        raise EvalError(f"starred expression at {self.where(frame, node)}")

    def eval_NamedExpr(self, node: ast.NamedExpr, frame: Frame) -> Any:
        value = self.eval(node.value, frame)
        self.set_local(frame, node.target.id, value)
        return value

    # ----------------------------------------------------------- builtins on values

    def builtin_method(self, base: Any, name: str, where: Where | None) -> Any:
        interp = self
        if isinstance(base, list):
            mutating = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"}
            if name in mutating:
                def run(args, kwargs, w, base=base, name=name):
                    args = [interp.resolve(a) for a in args]
                    if name == "extend" and not isinstance(args[0], (list, tuple)):
                        if unknown(args[0]):
                            args = [[args[0]]]
                        else:
                            args = [interp.iterate(args[0], w)]
                    return interp.mutate_list(base, lambda: getattr(base, name)(*args, **kwargs))
                return Builtin(f"list.{name}", run)
        if isinstance(base, dict):
            if name in ("update", "setdefault", "pop", "clear"):
                def run_dict(args, kwargs, w, base=base, name=name):
                    if id(base) in FROZEN:
                        raise EvalError("a recipe changes a module-level dict")
                    if name == "update":
                        src = dict(interp.resolve(args[0])) if args else {}
                        src.update(kwargs)
                        for k, v in src.items():
                            interp.set_item(base, k, v)
                        return None
                    if name == "setdefault":
                        if args[0] not in base:
                            interp.set_item(base, args[0], args[1] if len(args) > 1 else None)
                        return base[args[0]]
                    if name == "pop":
                        value = base.get(args[0], args[1] if len(args) > 1 else MISSING)
                        if args[0] in base:
                            if interp.log is not None:
                                interp.log.append(("item", base, args[0], base[args[0]]))
                            del base[args[0]]
                        if value is MISSING:
                            raise _Raise(f"KeyError {args[0]!r}", w, "KeyError")
                        return value
                    for k in list(base):
                        if interp.log is not None:
                            interp.log.append(("item", base, k, base[k]))
                        del base[k]
                    return None
                return Builtin(f"dict.{name}", run_dict)
            if name == "items":
                return Builtin("dict.items", lambda a, k, w, base=base: _DictView(list(base.items())))
            if name == "keys":
                return Builtin("dict.keys", lambda a, k, w, base=base: list(base.keys()))
            if name == "values":
                return Builtin("dict.values", lambda a, k, w, base=base: list(base.values()))
            if name == "get":
                return Builtin("dict.get", lambda a, k, w, base=base: base.get(a[0], a[1] if len(a) > 1 else None))
            if name == "copy":
                return Builtin("dict.copy", lambda a, k, w, base=base: dict(base))
        method = getattr(base, name, None)
        if method is None or not callable(method):
            return Unknown(f"{type(base).__name__}.{name}")

        def run_pure(args, kwargs, w, method=method):
            args = [interp.resolve(a) for a in args]
            if any(unknown(a) or isinstance(a, (Obj, Sym)) for a in args) or any(unknown(v) for v in kwargs.values()):
                return Unknown(f"{type(base).__name__}.{name} of an unknown value")
            try:
                return method(*args, **kwargs)
            except Exception as e:  # noqa: BLE001
                raise _Raise(f"{type(base).__name__}.{name}: {e}", w, type(e).__name__) from None
        return Builtin(f"{type(base).__name__}.{name}", run_pure)


class _DictView(list):
    def items(self) -> list:
        return list(self)


FROZEN: set[int] = set()
KEEP: list = []  # keeps frozen containers alive so their ids stay unique


def reason(value: Any) -> str:
    """Where an unknown value comes from, for messages."""
    if isinstance(value, (Unknown, Cond)):
        return value.why
    if isinstance(value, Obj):
        return value.desc
    return repr(value)


def contains_unknown(value: Any, seen: set | None = None) -> Any:
    """The first unknown inside a value (lists, dicts), or None."""
    if unknown(value):
        return value
    seen = seen if seen is not None else set()
    if id(value) in seen:
        return None
    seen.add(id(value))
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else []
    for item in items:
        found = contains_unknown(item, seen)
        if found is not None:
            return found
    return None


# Exception classes by their base, for `except` clauses (the builtins the
# interpreted code can raise; anything else is matched by name or Exception).
_EXCEPTION_BASES = {"KeyError": "LookupError", "IndexError": "LookupError", "ZeroDivisionError": "ArithmeticError",
                    "ModuleNotFoundError": "ImportError", "NotImplementedError": "RuntimeError"}


def _handles(handler: ast.ExceptHandler, exc: str) -> bool:
    if handler.type is None:
        return True
    names = [ast.unparse(t).rsplit(".", 1)[-1] for t in
             (handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])]
    chain = {exc, _EXCEPTION_BASES.get(exc, ""), "Exception", "BaseException"}
    return any(n in chain for n in names)


def _current(kind: str, container: Any, key: Any) -> Any:
    if kind == "slot":
        return container.slots.get(key, MISSING)
    if kind == "item":
        return container.get(key, MISSING)
    return list(container)


def _unmissing(v: Any) -> Any:
    return Unknown("unset on one path") if v is MISSING else v


def same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, Slot) and isinstance(b, Slot):
        return same(a.value, b.value)
    opaque = (Obj, Function, ClassInfo, Module, Unknown)
    if isinstance(a, opaque) or isinstance(b, opaque):
        return False
    if isinstance(a, Cond) or isinstance(b, Cond):
        return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                       and not isinstance(a, bool) and not isinstance(b, bool)):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def join(a: Any, b: Any, why: str) -> Any:
    if same(a, b):
        return a
    options = []
    for v in (a, b):
        for o in (v.options if isinstance(v, Cond) else [v]):
            if not any(same(o, x) for x in options):
                options.append(o)
    return Cond(options, why) if len(options) > 1 else options[0]


def _as_load(target: ast.expr) -> ast.expr:
    node = ast.parse(ast.unparse(target), mode="eval").body
    ast.copy_location(node, target)
    for child in ast.walk(node):
        child.lineno = getattr(target, "lineno", 0)
    return node


def _closure_of(frame: Frame) -> dict:
    if frame.locals is frame.module.globals:
        return {}
    return {**frame.closure, **frame.locals}


def _import_base(module: Module, stmt: ast.ImportFrom) -> str:
    if not stmt.level:
        return stmt.module or ""
    parts = module.name.split(".")
    is_package = module.path.endswith("__init__.py")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (stmt.level - 1)] if stmt.level > 1 else base
    return ".".join(base + ([stmt.module] if stmt.module else []))


def _assigned_names(stmt: ast.stmt) -> list[str]:
    names = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.alias):
            names.append((node.asname or node.name).split(".")[0])
    return names


# ---------------------------------------------------------------- Python builtins


def _b_isinstance(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
    value, types = interp.resolve(args[0]), interp.resolve(args[1])
    types = list(types) if isinstance(types, tuple) else [types]
    if unknown(value):
        return Unknown("isinstance of an unknown value")
    results = []
    for t in types:
        t = interp.resolve(t)
        if isinstance(t, type):
            if isinstance(value, Obj):
                results.append(False if t in (str, int, float, bool, list, dict, tuple, set) else None)
            else:
                results.append(isinstance(value, t))
        elif isinstance(t, ClassInfo):
            if isinstance(value, Obj) and value.cls is not None and value.kind == "":
                results.append(value.cls.is_subclass_of(t))
            elif isinstance(value, Obj):
                results.append(None)
            else:
                results.append(False)
        else:
            if isinstance(value, (str, int, float, bool, list, dict, tuple)) and value is not None:
                results.append(False)
            else:
                results.append(None)
    if any(r is True for r in results):
        return True
    if all(r is False for r in results):
        return False
    return Unknown(f"isinstance({value!r}, ...) at {where}")


def _b_getattr(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
    obj, name = interp.resolve(args[0]), interp.resolve(args[1])
    if unknown(name):
        return Unknown("getattr with an unknown name")
    if isinstance(obj, Obj) and obj.kind == "" and obj.cls is not None and name not in obj.slots:
        if obj.cls.defining(name) is None and not obj.cls.opaque_bases():
            if len(args) > 2:
                return args[2]
            raise _Raise(f"AttributeError {name}", where, "AttributeError")
    try:
        return interp.get_attr(obj, name, where)
    except EvalError:
        if len(args) > 2:
            return args[2]
        raise


def _b_hasattr(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
    obj, name = interp.resolve(args[0]), interp.resolve(args[1])
    if isinstance(obj, Obj):
        if name in obj.slots:
            return True
        if obj.kind == "hf_provider":
            return interp.special_calls["<hf_provider_hasattr>"](interp, obj, name)
        if obj.cls is not None and obj.kind == "":
            if obj.cls.defining(name) is not None:
                return True
            return Unknown(f"hasattr({obj!r}, {name})") if obj.cls.opaque_bases() else False
        return Unknown(f"hasattr({obj!r}, {name})")
    if isinstance(obj, (dict, list, str, int, float)) or obj is None:
        return hasattr(obj, name)
    return Unknown(f"hasattr({obj!r}, {name})")


def _b_setattr(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
    obj, name = interp.resolve(args[0]), interp.resolve(args[1])
    if unknown(name):
        interp.lost_writes.append(("setattr(..., <unknown>)", where))
        return None
    interp.set_attr(obj, name, args[2], where, f"setattr({name})")
    return None


def _pure(fn: Callable) -> Callable:
    def run(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
        args = [interp.resolve(a) for a in args]
        culprit = next((a for a in args if unknown(a) or isinstance(a, (Obj, Sym))), MISSING)
        if culprit is not MISSING:
            return Unknown(f"{fn.__name__}() of {reason(culprit)}")
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001
            raise _Raise(f"{fn.__name__}(): {e}", where, type(e).__name__) from None
    return run


def _b_len(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
    v = interp.resolve(args[0])
    if isinstance(v, (list, tuple, dict, str, set)):
        return len(v)
    return Unknown("len() of an unknown value")


def _b_print(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
    return None


def _b_partial(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
    return Partial(args[0], list(args[1:]), dict(kwargs))


def _b_super(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
    raise EvalError(f"super() at {where}")


def _b_any_all(fn: Callable) -> Callable:
    def run(interp: Interpreter, args: list, kwargs: dict, where: Where | None) -> Any:
        items = interp.resolve(args[0])
        if not isinstance(items, (list, tuple, set)):
            return Unknown(f"{fn.__name__}() of an unknown value")
        truths = [interp.truth(x) for x in items]
        if fn is any:
            if any(t is True for t in truths):
                return True
            return Unknown("any() of unknown values") if any(t is None for t in truths) else False
        if any(t is False for t in truths):
            return False
        return Unknown("all() of unknown values") if any(t is None for t in truths) else True
    return run


BUILTIN_IMPLS: dict[str, Callable] = {
    "isinstance": _b_isinstance, "getattr": _b_getattr, "hasattr": _b_hasattr, "setattr": _b_setattr,
    "len": _b_len, "print": _b_print, "super": _b_super,
    "max": _pure(max), "min": _pure(min), "abs": _pure(abs), "round": _pure(round), "sorted": _pure(sorted),
    "range": _pure(range), "divmod": _pure(divmod), "enumerate": _pure(lambda x: list(enumerate(x))),
    "zip": _pure(lambda *x: list(zip(*x))), "reversed": _pure(lambda x: list(reversed(x))), "repr": _pure(repr),
    "sum": _pure(sum), "any": _b_any_all(any), "all": _b_any_all(all),
}


BUILTINS: dict[str, Any] = {}


def install_builtins(interp: Interpreter) -> None:
    BUILTINS.clear()
    for name, impl in BUILTIN_IMPLS.items():
        BUILTINS[name] = Builtin(name, lambda a, k, w, impl=impl: impl(interp, a, k, w))
    BUILTINS["None"] = None
    BUILTINS["True"] = True
    BUILTINS["False"] = False


__all__ = [
    "Builtin", "ClassInfo", "Cond", "EvalError", "Function", "GitTree", "Interpreter", "Module", "Obj",
    "Partial", "Slot", "Sym", "Unknown", "Where", "install_builtins", "join", "same", "unknown", "MISSING",
    "_Raise", "_b_partial", "contains_unknown", "reason",
]
