#!/usr/bin/env python3
"""Latency of `mblint lsp`: from a didChange to its publishDiagnostics, on a
3,000-line ConfigContainer dump, for two kinds of change: typing in a value
(`tensor_model_parallel_size: 1` -> `2`, the common edit) and a structural
edit (a line added, then replaced) in a small section, in the largest
section, and at the top level.

The dump starts from the fixture dump of moe-router-padding-invalid (a real
dump layout: `_target_` per section), every section filled with the
dataclass defaults from the Megatron Bridge schema in ../shared (when
present), and a data blend of shard paths, as large training runs list.

    tools/lsp_bench.py [build/mblint] [--iterations 100] [--server-arg=--fix-check-delay-ms=-1]

The server publishes an edit's findings before it re-checks their fixes
(docs/editors.md); the typist's 10 ms between changes is shorter than the
quiet time it waits for that, so the changes time the first publish. The
last line times what re-checking costs when the editor asks for the fixes:
a code action request over the whole document right after each value edit.
With --server-arg=--fix-check-delay-ms=-1 every publish carries checked fixes
(the server before the two steps).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "fixtures/rules/moe-router-padding-invalid/fires-dump-no-fp8/config.yaml")
SCHEMA = os.path.join(ROOT, "../shared/corpus/megatron-bridge/derived/configcontainer_schema.json")
SECTIONS = ["model[GPTModelProvider]", "train", "validation", "scheduler", "optimizer", "ddp", "checkpoint",
            "logger", "dist", "rng", "rerun_state_machine", "profiling", "tokenizer", "dataset[GPTDatasetConfig]"]


def literal(text):
    if text in ("None", "True", "False"):
        return {"None": "null", "True": "true", "False": "false"}[text]
    try:
        float(text)
        return text
    except ValueError:
        pass
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return json.dumps(text[1:-1])
    return None


def make_dump(lines):
    # The fixture's values, by section.
    fixture = {}
    section = None
    for line in open(FIXTURE).read().splitlines():
        if line and not line.startswith(" "):
            key, _, value = line.partition(":")
            section = key
            fixture.setdefault(section, [])
            if value.strip():
                fixture[section] = value.strip()
        elif section:
            fixture[section].append(line)
    out = ["_target_: megatron.bridge.training.config.ConfigContainer"]
    schema = json.load(open(SCHEMA)) if os.path.exists(SCHEMA) else {}
    for name in SECTIONS:
        key = name.split("[")[0]
        given = fixture.get(key, []) if isinstance(fixture.get(key), list) else []
        out.append(f"{key}:")
        out.extend(given)
        seen = {line.strip().split(":")[0] for line in given}
        for field in schema.get(name, {}).get("fields", []):
            if not field.get("init", True) or field["name"] in seen or field["name"].startswith("_"):
                continue
            value = literal(field.get("default") or "")
            if value is not None:
                out.append(f"  {field['name']}: {value}")
                seen.add(field["name"])
        if key == "dataset":
            out.append("  blend:")
            out.append("  - - /lustre/data/shard_00000_text_document")
            shard = 1
            while len(out) < lines - 1:
                out.append(f"    - /lustre/data/shard_{shard:05d}_text_document")
                shard += 1
            out.append("  - null")
    return "\n".join(out) + "\n"


def server_cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Client:
    def __init__(self, binary, server_args):
        self.process = subprocess.Popen([binary, "lsp", *server_args], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 1

    def send(self, message):
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def read(self):
        length = None
        while True:
            line = self.process.stdout.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.process.stdout.read(length))

    def request(self, method, params):
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.next_id += 1
        while True:
            message = self.read()
            if message.get("id") == self.next_id - 1:
                return message

    def publish(self, uri, version):
        while True:
            message = self.read()
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri \
                    and message["params"].get("version") == version:
                return message["params"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=os.path.join(ROOT, "build/mblint"))
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--lines", type=int, default=3000)
    parser.add_argument("--server-arg", action="append", default=[], help="an argument for `mblint lsp`")
    args = parser.parse_args()
    text = make_dump(args.lines)
    workspace = tempfile.mkdtemp(prefix="mblint-lsp-bench-")
    path = os.path.join(workspace, "dump.yaml")
    uri = "file://" + path
    client = Client(args.binary, args.server_arg)
    client.request("initialize", {"processId": None, "rootUri": "file://" + workspace, "capabilities": {}})
    client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    start = time.perf_counter()
    client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                 "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}})
    first = client.publish(uri, 1)
    open_ms = (time.perf_counter() - start) * 1000
    lines = text.splitlines()
    line = next(i for i, l in enumerate(lines) if l.startswith("  tensor_model_parallel_size:"))
    column = len("  tensor_model_parallel_size: ")
    train = next(i for i, l in enumerate(lines) if l == "train:")
    version = [1]

    def timed(changes):
        """Send each change as one didChange; wall ms to its publish, and server CPU ms per change."""
        latencies = []
        cpu_before = server_cpu_seconds(client.process.pid)
        for change in changes:
            version[0] += 1
            start = time.perf_counter()
            client.send({"jsonrpc": "2.0", "method": "textDocument/didChange",
                         "params": {"textDocument": {"uri": uri, "version": version[0]}, "contentChanges": [change]}})
            published = client.publish(uri, version[0])
            latencies.append((time.perf_counter() - start) * 1000)
            # A broken document would time the parser's early exit, not a lint.
            assert not any(d.get("code") == "yaml-syntax" for d in published["diagnostics"]), change
            time.sleep(0.01)  # a typist, not a burst
        cpu_ms = (server_cpu_seconds(client.process.pid) - cpu_before) * 1000 / len(changes)
        return sorted(latencies), cpu_ms, published

    # Typing in a value: tensor_model_parallel_size 1 -> 2 -> 3 ... Every text
    # is new (a server may remember texts it has seen; an undo would be free).
    value_edits = []
    width = len(lines[line]) - column
    for i in range(args.iterations):
        value_edits.append({"range": {"start": {"line": line, "character": column},
                                      "end": {"line": line, "character": column + width}},
                            "text": str(i + 2)})
        width = len(str(i + 2))
    # Structural edits: a new line, then that line replaced by another new one
    # (lines are added and removed; every text new). mblint re-parses only the
    # lines between the untouched siblings around an edit, or failing that the
    # top-level section it stays in, so where it lands matters: the 30-line
    # train section, inside the 2,300-line dataset section (the data blend),
    # and a new top-level key between two sections.
    def line_edits(at, make):
        edits = []
        for i in range(args.iterations):
            end_line = at + (0 if i == 0 else 1)
            edits.append({"range": {"start": {"line": at, "character": 0}, "end": {"line": end_line, "character": 0}},
                          "text": make(i)})
        return edits

    # Inside the blend list (one line lower: the train edits leave a line).
    blend = next(i for i, l in enumerate(lines) if l == "  blend:") + 2 + 1
    kinds = [
        ("value edit", value_edits),
        ("structural, train (30 lines)", line_edits(train + 1, lambda i: f"  bench_added_key_{i}: 1\n")),
        ("structural, dataset (2,300 lines)", line_edits(blend, lambda i: f"    - /lustre/data/bench_{i}_text_document\n")),
        ("new top-level key", line_edits(train, lambda i: f"bench_section_{i}: 1\n")),
    ]
    results = [(name, timed(edits)) for name, edits in kinds]

    # A value edit, its publish, then the quick fixes of the whole document
    # (every finding's fixes re-checked before they are offered).
    action_ms = []
    cpu_before = server_cpu_seconds(client.process.pid)
    actions = []
    for i in range(args.iterations):
        version[0] += 1
        change = {"range": {"start": {"line": line, "character": column},
                            "end": {"line": line, "character": column + width}}, "text": str(1000 + i)}
        width = len(str(1000 + i))
        client.send({"jsonrpc": "2.0", "method": "textDocument/didChange",
                     "params": {"textDocument": {"uri": uri, "version": version[0]}, "contentChanges": [change]}})
        client.publish(uri, version[0])
        start = time.perf_counter()
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0},
                                                    "end": {"line": len(lines), "character": 0}},
            "context": {"diagnostics": []}})["result"]
        action_ms.append((time.perf_counter() - start) * 1000)
        time.sleep(0.01)
    action_cpu_ms = (server_cpu_seconds(client.process.pid) - cpu_before) * 1000 / args.iterations
    action_ms.sort()
    start = time.perf_counter()
    client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": 4}})
    hover_ms = (time.perf_counter() - start) * 1000
    client.request("shutdown", None)
    client.send({"jsonrpc": "2.0", "method": "exit"})
    client.process.wait(timeout=10)
    print(f"document: {len(lines)} lines, {len(text)} bytes; {len(first['diagnostics'])} diagnostics on open, "
          f"{len(results[0][1][2]['diagnostics'])} after the value edits")
    print(f"open -> diagnostics: {open_ms:.2f} ms")
    print("didChange -> publishDiagnostics, wall ms (client included) and server CPU ms per change "
          "(user + system from /proc, independent of machine load):")
    for name, (latencies, cpu_ms, _) in results:
        print(f"  {name:34s} n={len(latencies)}: median {statistics.median(latencies):6.2f} ms, "
              f"p90 {latencies[max(0, int(len(latencies) * 0.9) - 1)]:6.2f} ms, min {latencies[0]:6.2f} ms, "
              f"max {latencies[-1]:6.2f} ms; CPU {cpu_ms:6.2f} ms")
    print(f"  {'value edit, then its quick fixes':34s} n={len(action_ms)}: codeAction median "
          f"{statistics.median(action_ms):6.2f} ms, p90 {action_ms[max(0, int(len(action_ms) * 0.9) - 1)]:6.2f} ms; "
          f"CPU {action_cpu_ms:6.2f} ms per edit and request ({len(actions)} actions)")
    print(f"hover: {hover_ms:.2f} ms")


if __name__ == "__main__":
    sys.exit(main())
