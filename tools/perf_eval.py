#!/usr/bin/env python3
"""Accuracy of the step-time model of `mblint estimate` against NVIDIA's
published Megatron Bridge throughput.

Every row of shared/data/perf_published.csv that names a catalogued recipe
(`current_recipe_v060`) is estimated as

    mblint estimate ROW.yaml --recipe RECIPE --nodes N --gpus-per-node G --gpu TYPE --format json

where ROW.yaml sets the row's published layout (TP, PP, CP, VPP, EP, MBS, GBS,
sequence length, FSDP) and the knobs of the preset the row ran at its release
(perf_recipe_presets.csv: recompute, CUDA graphs, dispatcher backend, EP
overlap, pipeline layout), over the recipe's other settings. The predicted
tokens/s/GPU is compared with the published one.

Rows of the newest release (26.04.01) are held back: the model's constants
are calibrated on the older ones only (`--fit` runs tools/speed_fit on them)
and both sets are reported. Beside the model, the naive anchor: one MFU per
GPU type and precision (the median over the calibration rows of published
tokens/s x the model's FLOPs per token / peak), applied to every row.

    tools/perf_eval.py [--mblint build/mblint] [--shared ../shared] [--rows] [--markdown]
                       [--max-median 0.08 --max-p90 0.25 --max-declined 29] [--fit build-dev/speed_fit]
                       [--plan 5 [--plan-all] [--why-missed] [--min-plan-hits 14]]

--why-missed classifies each planned row whose published layout is not in
the plan's top N, by planning again with that layout fixed (--set): (a)
outside the search space, (b) rejected by a rule, (c) estimated out of
memory, (d) ranked lower (docs/plan-and-layout.md).

Hybrid (Mamba) models are not modelled: their rows are declined and
counted apart; the figures are over the modelled rows. Exit 1 when a gate
is not met; 77 when ../shared is
absent (1 under MBLINT_REQUIRE_SHARED=1).
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from eval_common import failures_exit, missing_shared_exit, percentile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HOLDOUT = {"26.04.01"}
GPUS = {"DGX-H100": ("h100", 8), "DGX-B200": ("b200", 8), "DGX-B300": ("b300", 8),
        "DGX-GB200": ("gb200", 4), "DGX-GB300": ("gb300", 4)}
PEAK = {  # dense TFLOP/s (lint/facts/speed_constants.inc), for the naive anchor
    "h100": {"BF16": 989.5, "FP8": 1979},
    "b200": {"BF16": 2250, "FP8": 4500, "NVFP4": 9000},
    "b300": {"BF16": 2250, "FP8": 4500, "NVFP4": 13500},
    "gb200": {"BF16": 2500, "FP8": 5000, "NVFP4": 10000},
    "gb300": {"BF16": 2500, "FP8": 5000, "NVFP4": 15000},
}


def pct(x):
    if math.isinf(x):
        return "inf"
    if math.isnan(x):
        return "n/a"
    return f"{x:.1%}"


def number(text):
    return None if text in ("", "n/a", "None") else int(float(text))


def family(model_key):
    for prefix in ("llama", "qwen3", "deepseek", "gpt_oss", "nemotron", "kimi"):
        if model_key.startswith(prefix):
            return prefix
    return model_key


def gemm_precision(precision):
    return {"BF16": "BF16", "NVFP4": "NVFP4"}.get(precision, "FP8")


def load_presets(shared):
    with open(os.path.join(shared, "data", "perf_recipe_presets.csv")) as f:
        return {(p["release"], p["recipe_name"]): p for p in csv.DictReader(f)}


def yaml_list(text):
    """"['mla_up_proj', 'mlp']" -> ["mla_up_proj", "mlp"]."""
    return [x.strip().strip("'\"") for x in text.strip("[]").split(",") if x.strip()]


def row_yaml(row, preset):
    """The YAML override of one row: its published layout and its preset's knobs."""
    model = {"tensor_model_parallel_size": number(row["tp"]) or 1,
             "pipeline_model_parallel_size": number(row["pp"]) or 1,
             "context_parallel_size": number(row["cp"]) or 1,
             "seq_length": number(row["seq_len"])}
    vp = number(row["vp"])
    model["virtual_pipeline_model_parallel_size"] = vp if vp and vp > 1 else None
    if number(row["ep"]):
        model["expert_model_parallel_size"] = number(row["ep"])
    if number(row["etp"]):
        model["expert_tensor_parallel_size"] = number(row["etp"])
    ddp = {}
    if (number(row["fsdp"]) or 0) > 0:
        ddp = {"use_megatron_fsdp": True, "data_parallel_sharding_strategy": "optim_grads_params"}
    comm = {}
    if preset:
        if preset["recompute_modules"] not in ("", "[]"):
            model["recompute_granularity"] = "selective"
            model["recompute_modules"] = yaml_list(preset["recompute_modules"])
        elif number(preset["recompute_num_layers"]):
            model["recompute_granularity"] = "full"
            model["recompute_method"] = "block"
            model["recompute_num_layers"] = number(preset["recompute_num_layers"])
        if preset["cuda_graph_impl"]:
            model["cuda_graph_impl"] = preset["cuda_graph_impl"]
        if preset["moe_flex_dispatcher_backend"] not in ("", "None"):
            model["moe_token_dispatcher_type"] = "flex"
            model["moe_flex_dispatcher_backend"] = preset["moe_flex_dispatcher_backend"]
        if preset["moe_a2a_overlap"]:
            comm["overlap_moe_expert_parallel_comm"] = preset["moe_a2a_overlap"] == "True"
        if preset["pp_layout"]:
            model["pipeline_model_parallel_layout"] = preset["pp_layout"]
    # A published run benchmarks the model's own shape: the performance
    # recipes keep the model's vocabulary (perf_recipes/_common.py turns
    # use_tokenizer_vocab_size off), where a library recipe of the same name
    # would size it to its 32,000-token NullTokenizer.
    document = {"model": model, "dataset": {"seq_length": number(row["seq_len"])},
                "train": {"global_batch_size": number(row["gbs"]), "micro_batch_size": number(row["mbs"])},
                "tokenizer": {"use_tokenizer_vocab_size": False}}
    if ddp:
        document["ddp"] = ddp
    if comm:
        document["comm_overlap"] = comm
    return json.dumps(document, indent=1)  # JSON is YAML


class Row:
    def __init__(self, csv_row, preset):
        self.csv = csv_row
        self.preset = preset
        self.gpu, self.gpus_per_node = GPUS[csv_row["system"]]
        self.release = csv_row["release"]
        self.held_back = self.release in HOLDOUT
        self.family = family(csv_row["model_key"])
        self.precision = gemm_precision(csv_row["precision"])
        self.measured = float(csv_row["tokens_per_sec_per_gpu"])
        self.label = (f"{self.release} {csv_row['model_key']} {self.gpu} {csv_row['precision']} "
                      f"{csv_row['num_gpus']}gpu tp{csv_row['tp']} pp{csv_row['pp']} cp{csv_row['cp']} "
                      f"vp{csv_row['vp']} ep{csv_row['ep']} mbs{csv_row['mbs']} gbs{csv_row['gbs']}")
        self.performance = None
        self.why = ""
        self.anchor = None
        self.plan_layouts = []
        self.in_top = False
        self.plan_first = None
        self.published_in_plan = None  # the published layout's throughput as the plan predicts it
        self.pinned_plan = {}  # the plan with the published layout pinned (rows not in the top N)
        self.plan = {}
        self.miss = None

    def args(self, path):
        nodes = int(self.csv["num_gpus"]) // self.gpus_per_node
        return [path, "--recipe", self.csv["current_recipe_v060"], "--nodes", str(nodes),
                "--gpus-per-node", str(self.gpus_per_node), "--gpu", self.gpu]

    @property
    def error(self):
        return None if self.performance is None else self.performance["tokens_per_sec_per_gpu"] / self.measured - 1


def load_rows(shared):
    presets = load_presets(shared)
    with open(os.path.join(shared, "data", "perf_published.csv")) as f:
        published = list(csv.DictReader(f))
    return [Row(r, presets.get((r["release"], r["recipe_name"]))) for r in published if r["current_recipe_v060"]]


def write_yaml(directory, index, row, text=None):
    path = os.path.join(directory, f"row{index:03d}.yaml")
    with open(path, "w") as f:
        f.write(row_yaml(row.csv, row.preset) if text is None else text)
    return path


def run_estimates(mblint, rows, directory, jobs, take, yaml_text=None):
    """`mblint estimate` on every row with its override file (row_yaml, or
    yaml_text(row)), in parallel; take(row, document) keeps what the caller
    reads from the JSON. The reason a row is declined goes to row.why."""
    def one(item):
        index, row = item
        text = yaml_text(row) if yaml_text else None
        cmd = [mblint, "estimate"] + row.args(write_yaml(directory, index, row, text)) + ["--format", "json", "--fail-on", "note"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr}")
        why = take(row, json.loads(out.stdout))
        if why is not None:
            row.why = why.split(": cannot estimate: ", 1)[-1]  # without the temporary file's name
        return row

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, enumerate(rows)))


def take_performance(row, document):
    e = document.get("estimate")
    row.performance = e.get("performance") if e else None
    if row.performance is None:
        return (e or {}).get("performance_unavailable") or "; ".join(document.get("estimate_unavailable", []))
    return None


def estimate(mblint, rows, directory, jobs):
    run_estimates(mblint, rows, directory, jobs, take_performance)


def anchor(rows):
    """One MFU per GPU type and precision, from the calibration rows."""
    mfus = {}
    for r in rows:
        if r.held_back or r.performance is None:
            continue
        flops = r.performance["model_tflops_per_gpu"] * 1e12 / r.performance["tokens_per_sec_per_gpu"]
        peak = PEAK[r.gpu][r.precision] * 1e12
        mfus.setdefault((r.gpu, r.precision), []).append(r.measured * flops / peak)
    mfu = {k: percentile(v, 0.5) for k, v in mfus.items()}
    for r in rows:
        if r.performance is None or (r.gpu, r.precision) not in mfu:
            continue
        flops = r.performance["model_tflops_per_gpu"] * 1e12 / r.performance["tokens_per_sec_per_gpu"]
        r.anchor = mfu[(r.gpu, r.precision)] * PEAK[r.gpu][r.precision] * 1e12 / flops / r.measured - 1


def figures(rows, attr="error"):
    errors = [math.inf if getattr(r, attr) is None else abs(getattr(r, attr)) for r in rows]
    return percentile(errors, 0.5), percentile(errors, 0.9)


def print_table(rows, markdown):
    groups = [("all modelled rows", rows),
              ("calibration rows (25.09-26.04)", [r for r in rows if not r.held_back]),
              ("held-back rows (26.04.01)", [r for r in rows if r.held_back])]
    for gpu in ("h100", "b200", "b300", "gb200", "gb300"):
        groups.append((f"GPU {gpu}", [r for r in rows if r.gpu == gpu]))
    for fam in sorted({r.family for r in rows}):
        groups.append((f"family {fam}", [r for r in rows if r.family == fam]))
    if markdown:
        print("| rows | n | model median | model p90 | naive anchor median | anchor p90 |")
        print("|---|---|---|---|---|---|")
    else:
        print(f"{'rows':34} {'n':>4}  {'median':>7} {'p90':>7}   {'anchor':>7} {'p90':>7}")
    for name, group in groups:
        if not group:
            continue
        med, p90 = figures(group)
        amed, ap90 = figures(group, "anchor")
        if markdown:
            print(f"| {name} | {len(group)} | {pct(med)} | {pct(p90)} | {pct(amed)} | {pct(ap90)} |")
        else:
            print(f"{name:34} {len(group):4}  {pct(med):>7} {pct(p90):>7}   {pct(amed):>7} {pct(ap90):>7}")


LAYOUT_KEYS = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
               "virtual_pipeline_model_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size",
               "recompute_granularity", "recompute_modules", "recompute_method", "recompute_num_layers",
               "pipeline_model_parallel_layout")


def published_layout(row):
    """(tp, pp, cp, ep, vpp, mbs) as published; vpp 1 for none."""
    c = row.csv
    return (number(c["tp"]) or 1, number(c["pp"]) or 1, number(c["cp"]) or 1, number(c["ep"]) or 1,
            max(number(c["vp"]) or 1, 1), number(c["mbs"]) or 1)


def run_plan(mblint, row, directory, name, top, pins=()):
    """`mblint plan --top N` for the row's job (recipe, GPUs, batch, sequence,
    the preset's CUDA graph and dispatcher settings) with the layout keys left
    to the planner, except those in `pins` (passed as --set); its JSON."""
    document = json.loads(row_yaml(row.csv, row.preset))
    for key in LAYOUT_KEYS:
        document["model"].pop(key, None)
    document["train"].pop("micro_batch_size", None)
    document.pop("ddp", None)
    document.pop("comm_overlap", None)  # the recipe's: the preset's flag alone can contradict it
    path = os.path.join(directory, f"{name}.yaml")
    with open(path, "w") as f:
        f.write(json.dumps(document, indent=1))
    sets = []
    for key, value in pins:
        sets += ["--set", f"{key}={value}"]
    cmd = [mblint, "plan"] + row.args(path) + ["--top", str(top), "--format", "json"] + sets
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return json.loads(out.stdout) if out.stdout.strip().startswith("{") else {}


def plan_rows(mblint, rows, directory, jobs, top):
    """For each row: whether `mblint plan` lists the published layout in its top N,
    and whether its #1 is predicted no slower than the published layout."""
    def one(item):
        index, row = item
        plan = run_plan(mblint, row, directory, f"plan{index:03d}", top)
        row.plan = plan
        layouts = [(x["tp"], x["pp"], x["cp"], x["ep"], x["vpp"] or 1, x["mbs"]) for x in plan.get("layouts", [])]
        row.plan_layouts = layouts
        row.in_top = published_layout(row) in layouts
        first = (plan.get("layouts") or [{}])[0].get("performance")
        row.plan_first = first["tokens_per_sec_per_gpu"] if first else None
        # The published layout as the plan predicts it, under the plan's own
        # settings (the recipe's comm_overlap, its recompute choice): listed,
        # or planned alone with every layout key pinned.
        if row.in_top:
            listed = plan["layouts"][layouts.index(published_layout(row))]
        else:
            row.pinned_plan = run_plan(mblint, row, directory, f"pinned{index:03d}", 1, published_pins(row))
            listed = (row.pinned_plan.get("layouts") or [{}])[0]
        performance = listed.get("performance")
        row.published_in_plan = performance["tokens_per_sec_per_gpu"] if performance else None
        return row

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, enumerate(rows)))


PIN_KEYS = (("TP", "model.tensor_model_parallel_size"), ("PP", "model.pipeline_model_parallel_size"),
            ("CP", "model.context_parallel_size"), ("EP", "model.expert_model_parallel_size"),
            ("VPP", "model.virtual_pipeline_model_parallel_size"), ("MBS", "train.micro_batch_size"))
BREAKDOWN = ("compute", "tp", "cp", "ep", "pp", "dp", "bubble", "optimizer", "other")


def published_pins(row, leave_out=None):
    tp, pp, cp, ep, vpp, mbs = published_layout(row)
    values = {"TP": tp, "PP": pp, "CP": cp, "EP": ep, "VPP": vpp if vpp > 1 else "null", "MBS": mbs}
    return [(key, values[label]) for label, key in PIN_KEYS if label != leave_out]


def classify_miss(mblint, row, directory, index, top):
    """Why the published layout is not in the plan's top N: (a) outside the
    search space, (b) rejected by a rule, (c) estimated out of memory, (d)
    ranked below the top N. Sets row.miss = (cause, detail)."""
    pinned = row.pinned_plan  # planned by plan_rows with every layout key pinned
    fsdp = (number(row.csv["fsdp"]) or 0) > 0
    if pinned.get("layouts"):
        mine = pinned["layouts"][0]["performance"]
        listed = [x["performance"] for x in row.plan.get("layouts", []) if x.get("performance")]
        if mine and listed:
            gap = listed[-1]["tokens_per_sec_per_gpu"] / mine["tokens_per_sec_per_gpu"] - 1
            first = listed[0]
            diff = {k: mine["breakdown"].get(k, 0) / mine["step_time_s"] * first["step_time_s"] -
                    first["breakdown"].get(k, 0) for k in BREAKDOWN}
            worst = max(diff, key=lambda k: diff[k])
            share = diff[worst] / first["step_time_s"]
            row.miss = ("d", f"{gap:+.1%} to #{len(listed)}; vs #1 its {worst} {share:+.1%} of #1's step")
        else:
            row.miss = ("d", "no prediction")
        return
    if fsdp:
        row.miss = ("a", "Megatron-FSDP")
        return
    if pinned.get("searched", 0) == 0:
        knobs = []
        for label, _ in PIN_KEYS:
            if run_plan(mblint, row, directory, f"why{index:03d}", 1, published_pins(row, label)).get("searched", 0):
                knobs.append(label)
        layout = " (the preset writes a pipeline layout)" if row.preset and row.preset["pp_layout"] else ""
        row.miss = ("a", f"knob not searched: {'/'.join(knobs) or 'several'}{layout}")
        return
    rules = pinned.get("rejections") or {}
    if rules:
        row.miss = ("b", ", ".join(f"{k} ({v})" for k, v in sorted(rules.items())))
        return
    closest = pinned.get("closest") or {}
    memory = closest.get("memory") or {}
    if pinned.get("over_memory", 0) > 0:
        recompute = ""
        if row.preset and (row.preset["recompute_num_layers"] or row.preset["recompute_modules"] not in ("", "[]")):
            recompute = f"; the preset recomputes {row.preset['recompute_modules'] or 'full ' + row.preset['recompute_num_layers']}"
        ratio = f"{memory['total_gib'] / memory['capacity_gib']:.2f}x the GPU" if memory else "over"
        row.miss = ("c", f"estimate {ratio}{recompute}")
        return
    row.miss = ("?", "nothing listed, no reason found")


MISS_CAUSES = (("a", "outside the search space"), ("b", "rejected by a rule"), ("c", "estimated out of memory"),
               ("d", "ranked below the top N"), ("?", "unexplained"))


def why_missed(mblint, rows, directory, jobs, top):
    missed = [(i, r) for i, r in enumerate(rows) if not r.in_top]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda item: classify_miss(mblint, item[1], directory, item[0], top), missed))


def print_why_missed(rows, top):
    for name, group in (("held-back", [r for r in rows if r.held_back]),
                        ("calibration", [r for r in rows if not r.held_back])):
        missed = [r for r in group if not r.in_top]
        if not group:
            continue
        counts = ", ".join(f"({c}) {what}: {sum(1 for r in missed if r.miss and r.miss[0] == c)}"
                           for c, what in MISS_CAUSES)
        print(f"why missed, {name} rows ({len(missed)} of {len(group)} not in the top {top}): {counts}")
    for r in rows:
        if not r.in_top and r.miss:
            print(f"  ({r.miss[0]}) {r.label}: {r.miss[1]}")


def print_plan(rows, top):
    groups = [("planned rows", rows), ("of them held back (26.04.01)", [r for r in rows if r.held_back])]
    for name, group in groups:
        listed = [r for r in group if r.plan_layouts]
        inside = sum(1 for r in group if r.in_top)
        # Both predicted under the plan's settings; the row's own estimate
        # (the preset's flags) where the plan could not predict the layout.
        faster = sum(1 for r in listed if r.plan_first is not None and
                     r.plan_first >= (r.published_in_plan or r.performance["tokens_per_sec_per_gpu"]))
        print(f"{name}: published layout in plan's top {top}: {inside} of {len(group)} ({inside / max(len(group), 1):.0%}); "
              f"plan's #1 predicted no slower than the published layout: {faster} of {len(listed)} with a plan")


def layout_sets(settings):
    return [x for key, value in settings.items() for x in ("--set", f"{key}={value}")]


def choice_rows(mblint, rows, directory, jobs, top):
    """NVIDIA's choices as revealed preferences, calibration rows only: for
    each, the published layout and the plan's top N others, each as the plan
    writes it (the row's job without its layout keys, the layout's settings):
    (group, role, args) lines for speed_fit, role "pub" or "alt"."""
    out = []

    def one(item):
        index, row = item
        plan = run_plan(mblint, row, directory, f"choice{index:03d}", top)
        pinned = run_plan(mblint, row, directory, f"choicepub{index:03d}", 1, published_pins(row))
        if not pinned.get("layouts") or not plan.get("layouts"):
            return []
        path = os.path.join(directory, f"choice{index:03d}.yaml")
        published = published_layout(row)
        lines = [(index, "pub", row.args(path) + layout_sets(pinned["layouts"][0]["settings"]))]
        for x in plan["layouts"]:
            if (x["tp"], x["pp"], x["cp"], x["ep"], x["vpp"] or 1, x["mbs"]) == published:
                continue
            lines.append((index, "alt", row.args(path) + layout_sets(x["settings"])))
        return lines

    calibration = [(i, r) for i, r in enumerate(rows) if not r.held_back]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for lines in pool.map(one, calibration):
            out.extend(lines)
    return out


def fit(fitter, rows, directory, only=None, choices=None):
    path = os.path.join(directory, "rows.tsv")
    with open(path, "w") as f:
        for index, row in enumerate(rows):
            fields = ["holdout" if row.held_back else "fit", row.label.replace(" ", "_"), str(row.measured)]
            f.write("\t".join(fields + row.args(write_yaml(directory, index, row))) + "\n")
        for group, role, args in choices or []:
            f.write("\t".join([f"{role}:{group}", f"{role}_{group}", "0"] + args) + "\n")
    subprocess.run([fitter, path, "12"] + ([only or ""] if only or choices else []), check=True)  # rounds: the fit settles by the 8th


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mblint", default=os.path.join(ROOT, "build", "mblint"))
    parser.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--rows", action="store_true", help="print every row's prediction")
    parser.add_argument("--fit", metavar="SPEED_FIT", help="calibrate with this speed_fit binary instead")
    parser.add_argument("--fit-only", metavar="KNOB,KNOB", help="with --fit: move only these constants")
    parser.add_argument("--fit-choices", type=int, metavar="N",
                        help="with --fit: also learn from NVIDIA's choices on the calibration rows (the published "
                             "layout against the plan's top N others; speed_fit's SPEED_FIT_CHOICE_WEIGHT)")
    parser.add_argument("--plan", type=int, metavar="N",
                        help="also run `mblint plan --top N` on the modelled held-back rows (all with --plan-all)")
    parser.add_argument("--plan-all", action="store_true")
    parser.add_argument("--why-missed", action="store_true",
                        help="with --plan: classify each row whose published layout is not listed (a) outside the "
                             "search space, (b) rejected by a rule, (c) estimated out of memory, (d) ranked lower")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-median", type=float, help="gate: median |error| of the modelled rows")
    parser.add_argument("--max-p90", type=float, help="gate: p90 |error| of the modelled rows")
    parser.add_argument("--max-declined", type=int, help="gate: rows declined")
    parser.add_argument("--min-plan-hits", type=int,
                        help="gate (with --plan): planned rows whose published layout is in the plan's top N")
    args = parser.parse_args()
    missing = missing_shared_exit(args.shared)
    if missing is not None:
        return missing
    rows = load_rows(args.shared)
    with tempfile.TemporaryDirectory(prefix="perf-eval-") as directory:
        if args.fit:
            choices = choice_rows(args.mblint, rows, directory, args.jobs, args.fit_choices) if args.fit_choices else None
            fit(args.fit, rows, directory, args.fit_only, choices)
            return 0
        estimate(args.mblint, rows, directory, args.jobs)
        if args.plan:
            planned = [r for r in rows if r.performance is not None and (args.plan_all or r.held_back)]
            plan_rows(args.mblint, planned, directory, args.jobs, args.plan)
            if args.why_missed:
                why_missed(args.mblint, planned, directory, args.jobs, args.plan)
    declined = [r for r in rows if r.performance is None]
    modelled = [r for r in rows if r.performance is not None]
    anchor(rows)
    if args.rows:
        for r in rows:
            if r.performance is None:
                print(f"{r.label}: declined: {r.why}")
            else:
                print(f"{r.label}: published {r.measured:.0f}, predicted {r.performance['tokens_per_sec_per_gpu']:.0f} "
                      f"({r.error:+.1%}), anchor {r.anchor:+.1%}" if r.anchor is not None else f"{r.label}: {r.error:+.1%}")
        print()
    print(f"perf_published.csv: {len(rows)} rows name a catalogued recipe; {len(modelled)} estimated, "
          f"{len(declined)} declined")
    reasons = {}
    for r in declined:
        reasons.setdefault(r.why, []).append(r)
    for why, group in reasons.items():
        print(f"  declined ({len(group)}): {why[:160]}")
    print_table(modelled, args.markdown)
    if args.plan:
        planned = [r for r in modelled if args.plan_all or r.held_back]
        if args.rows:
            for r in planned:
                first = f"{r.plan_first:.0f}" if r.plan_first is not None else "none"
                published = f"{r.published_in_plan:.0f}" if r.published_in_plan is not None else "none"
                print(f"{r.label}: {'in' if r.in_top else 'NOT in'} top {args.plan}; plan: {r.plan_layouts}; "
                      f"#1 predicted {first} tokens/s/GPU, the published layout {published} under the plan's "
                      f"settings ({r.performance['tokens_per_sec_per_gpu']:.0f} under the preset's)")
        print_plan(planned, args.plan)
        if args.why_missed:
            print_why_missed(planned, args.plan)
    median, p90 = figures(modelled)
    failures = []
    if args.max_median is not None and not median <= args.max_median:
        failures.append(f"FAIL: median |error| {pct(median)} above {pct(args.max_median)}")
    if args.max_p90 is not None and not p90 <= args.max_p90:
        failures.append(f"FAIL: p90 |error| {pct(p90)} above {pct(args.max_p90)}")
    if args.max_declined is not None and len(declined) > args.max_declined:
        failures.append(f"FAIL: {len(declined)} rows declined, more than {args.max_declined}")
    if args.plan and args.min_plan_hits is not None:
        hits = sum(1 for r in modelled if (args.plan_all or r.held_back) and r.in_top)
        if hits < args.min_plan_hits:
            failures.append(f"FAIL: published layout in plan's top {args.plan} for {hits} rows, fewer than "
                            f"{args.min_plan_hits}")
    return failures_exit(failures)


if __name__ == "__main__":
    sys.exit(main())
