"""What the generators of lint/ and rules/ tables share (tools/gen_*.py):
reading an upstream checkout's Python sources at a revision, its classes,
and handing over the generated text (written, or compared under --check)."""

import ast
import io
import subprocess
import sys
import tarfile

DEFAULT_BRIDGE = "/work/.mirror/NVIDIA-NeMo+Megatron-Bridge/repo"
DEFAULT_MLM = "/work/.mirror/NVIDIA+Megatron-LM/repo"


def add_upstream_arguments(parser):
    """--bridge and --megatron-lm: the git checkouts read (default: the mirrors)."""
    parser.add_argument("--bridge", default=DEFAULT_BRIDGE)
    parser.add_argument("--megatron-lm", default=DEFAULT_MLM)


def git(repo, *args, binary=False):
    out = subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout
    return out if binary else out.decode()


def python_sources(repo, rev, prefixes):
    """(path, text) of the .py files under `prefixes` at `rev` of a git repo."""
    data = git(repo, "archive", rev, *prefixes, binary=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".py"):
                yield member.name, tar.extractfile(member).read().decode("utf-8", "replace")


def class_defs(sources):
    """The class definitions of (path, text) sources; a file Python cannot
    parse is passed over. Nothing is executed."""
    for _path, text in sources:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                yield node


def write_or_check(path, text, check, script):
    """Write `text` to `path` and return 0; with `check`, only compare: 1
    when the committed file differs (naming `script`, the generator to run)."""
    if check:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{path} is out of date: run tools/{script}", file=sys.stderr)
                return 1
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return 0
