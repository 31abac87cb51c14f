#!/usr/bin/env python3
"""Build the fuzzers' seed corpora from fixtures/ and ../shared/corpus.

Writes build-asan/fuzz-seeds/<harness>/ (gitignored; rebuilt from scratch each
run). Seeds of harnesses that read a leading selector byte (see
fuzz/fuzz_support.h) get one. A new harness gets a section here.

  tools/fuzz_seeds.py [OUT_DIR]          default build-asan/fuzz-seeds
  MBLINT_SHARED_DIR=/path/to/shared tools/fuzz_seeds.py
"""
import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 65536  # tools/fuzz.sh's -max_len: larger files would only be cut
YAML = {".yaml", ".yml", ".json"}
SCRIPTS = {".sh", ".sbatch", ".slurm", ".bash"}


def files_under(directory: Path, suffixes):
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.rglob("*")
                  if p.is_file() and p.suffix in suffixes and p.stat().st_size <= MAX_BYTES)


def put(directory: Path, data: bytes, selector=None) -> None:
    if selector is not None:
        data = bytes([selector]) + data
    (directory / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


LSP_ROOT = "file:///nonexistent-mblint-fuzz"


def frame(message) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def lsp_session(name: str, text: str, i: int) -> bytes:
    """What an editor sends: open a fixture, edit it, hover, ask for actions."""
    uri = f"{LSP_ROOT}/{name}"
    lines = text.split("\n")
    line = i % max(1, len(lines))
    end = len(lines[line].encode("utf-16-le")) // 2
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"rootUri": LSP_ROOT, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "shellscript" if name.endswith((".sh", ".sbatch")) else "yaml",
            "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": line, "character": max(0, end - 1)},
                                          "end": {"line": line, "character": end}}, "text": str(i % 10)}]}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": line, "character": end // 2}}},
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": len(lines), "character": 0}},
            "context": {"diagnostics": []}}},
        {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}},
        {"jsonrpc": "2.0", "id": 4, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    return b"".join(frame(m) for m in messages)


# Framing a client gets wrong: lengths too small and too large, a missing
# header, junk between frames, a body that is not JSON-RPC.
LSP_BROKEN_STREAMS = [
    b"Content-Length: 5\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}",
    b"Content-Length: 400\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}"
    b"Content-Length: 2\r\n\r\n{}",
    b"Content-Type: application/json\r\n\r\n{}\r\n\r\nContent-Length: 2\r\n\r\n[]",
    b"garbage\r\n\r\nContent-Length: 12\r\n\r\n{not json}!!",
    b"Content-Length: 99999999999999999999\r\n\r\n",
]


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build-asan/fuzz-seeds"
    shared = Path(os.environ.get("MBLINT_SHARED_DIR", ROOT.parent / "shared"))
    if not (shared / "corpus").is_dir() and os.environ.get("MBLINT_REQUIRE_SHARED") == "1":
        sys.exit(f"fuzz_seeds: {shared / 'corpus'} is absent and MBLINT_REQUIRE_SHARED=1")
    shutil.rmtree(out, ignore_errors=True)
    dirs = {name: out / name for name in
            ("yaml_loader", "nemo_yaml", "hydra_override", "shell", "megatron_lm_args", "check", "lsp")}
    for d in dirs.values():
        d.mkdir(parents=True)

    yaml_files = files_under(ROOT / "fixtures", YAML) + files_under(shared / "corpus", YAML)
    for i, path in enumerate(yaml_files):
        data = path.read_bytes()
        put(dirs["yaml_loader"], data, i % 3)       # YAML flavor
        put(dirs["nemo_yaml"], data)
        put(dirs["check"], data, (i % 8) << 2)      # kind 0 (.yaml), option set i % 8
        if b"MODEL_ARGS" in data:                   # Megatron-LM functional test: `--flag: value` as argv
            words = []
            for flag, value in re.findall(rb"^ +(--[a-z0-9-]+): *(.*)$", data, re.M):
                words.append(flag)
                if value and value != b"true":
                    words.append(value)
            put(dirs["megatron_lm_args"], b"\n".join(words))

    overrides = set()
    for i, path in enumerate(files_under(ROOT / "fixtures", SCRIPTS)):
        data = path.read_bytes()
        put(dirs["shell"], data)
        put(dirs["check"], data, ((i % 8) << 2) | (1 + i % 2))  # kind .sh or .sbatch
        if b"pretrain_gpt" in data or b"--tensor-model-parallel-size" in data:
            put(dirs["megatron_lm_args"], b"\n".join(re.split(rb"[ \t\\\n]+", data)))
        overrides.update(re.findall(rb"(?:\+\+|\+|~)?[A-Za-z_][A-Za-z0-9_.@/]*=[^ \"\\\n]*", data))
    for cmd in [*(ROOT / "fixtures").rglob("cmd"), *(ROOT / "fixtures").rglob("*.cmd")]:
        overrides.update(re.findall(rb"(?:\+\+|\+|~)?[A-Za-z_][A-Za-z0-9_.@/]*=[^ \"\\\n]*", cmd.read_bytes()))
    ordered = sorted(overrides)
    for start in range(0, len(ordered), 20):
        put(dirs["hydra_override"], b"\n".join(ordered[start:start + 20]))
    put(dirs["hydra_override"], b"\n".join([
        b"model.seq_length=[1,2,{a:b}]", b"+x=choice(1,2,3)", b"~optimizer", b"a='q\\'s'",
        b"b=${oc.env:HOME}", b"c=interval(0,1)", b"++d=range(1,10,2)", b"e=int(3.0)", b"f= spaced "]))

    lsp_files = files_under(ROOT / "fixtures", YAML | SCRIPTS)
    for i, path in enumerate(lsp_files[::max(1, len(lsp_files) // 300)]):
        put(dirs["lsp"], lsp_session(path.name, path.read_text(errors="replace"), i))
    for broken in LSP_BROKEN_STREAMS:
        put(dirs["lsp"], broken)

    for name, d in dirs.items():
        print(f"{name}: {sum(1 for _ in d.iterdir())} seeds")


if __name__ == "__main__":
    main()
