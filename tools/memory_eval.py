#!/usr/bin/env python3
"""Acceptance test of `mblint estimate` against measured peak memory.

For every row of shared/data/megatron_golden_memory.csv (788 Megatron-LM CI
runs, peak max-allocated memory measured on the last rank), runs

    mblint estimate <model_config.yaml> --nodes N --gpus-per-node G --gpu TYPE --format json

and compares the last pipeline stage's peak_allocated with the measurement.
Two sets, each with its own figures:

* the 217 evaluation rows of shared/data/memory_eval_rows.csv, next to
  Megatron's own formula (theoretical_memory_usage.py, from the same CSV):
  gated by --max-median, --max-p90, --max-error and --max-declined;
* the other 571 rows, grouped by why memory_eval_rows.md leaves them out (no
  world size in the row: mblint then assumes one data-parallel replica and
  says so; families the formula does not cover; GRPO, CUDA graphs,
  distillation; peaks below 1 GiB; a second row of an evaluated case). Their
  accuracy is printed, not gated: most of them are not comparable runs (the
  world size is unknown, or memory the estimate does not model dominates);
  only --max-other-declined gates how many of them mblint declines.

A declined estimate is a failure: it counts as an infinite error in the
median and the p90, and in the declined counts.

Also prints the published Llama3-70B 32xH100 peaks (megatron-core-checks.md
section 6.2) as a second check, from the configs in tools/memory_eval/.

    tools/memory_eval.py [--mblint build/mblint] [--shared ../shared] [--markdown]
                         [--max-median 0.02 --max-p90 0.10 --max-error 0.25 --max-declined 0]
                         [--max-p90-under 0.0865]
                         [--max-other-declined 0]

Exit 1 when a gate is not met; 77 when ../shared is absent (ctest skips),
1 then too under MBLINT_REQUIRE_SHARED=1 (CI).
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from eval_common import failures_exit, missing_shared_exit, percentile

BAND = 0.0865  # the memory rules' error band, kEstimateErrorBand in lint/facts/estimate.h
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GB = 1e9 / 2**30  # published GB -> GiB


def gpu_of(platform):
    """The GPU of a CI platform (dgx_h100, dgx_h100_2nd, dgxa100_dracooci, ...)."""
    for gpu in ("gb200", "h100", "a100"):
        if gpu in platform:
            return gpu
    raise KeyError(platform)


def run_estimate(mblint, path, nodes, gpus_per_node, gpu, recipe=None):
    """The estimate object (None when mblint declines) and why it declined."""
    cmd = [mblint, "estimate", path, "--gpu", gpu, "--format", "json", "--fail-on", "note"]
    if nodes and gpus_per_node:
        cmd += ["--nodes", str(nodes), "--gpus-per-node", str(gpus_per_node)]
    if recipe:
        cmd += ["--recipe", recipe]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr}")
    document = json.loads(out.stdout)
    why = "; ".join(document.get("estimate_unavailable", [])) or "no estimate"
    return document.get("estimate"), why


def find_config(corpus, test_case):
    base = os.path.join(corpus, "NVIDIA__Megatron-LM", "tests", "functional_tests", "test_cases")
    for family in sorted(os.listdir(base)):
        path = os.path.join(base, family, test_case, "model_config.yaml")
        if os.path.exists(path):
            return path
    return None


class Row:
    """One measured run and mblint's estimate of it (None: declined, with why)."""

    def __init__(self, golden, measured, group, formula=None):
        self.golden = golden
        self.case = golden["test_case"]
        self.platform = golden["platform"]
        self.env = golden["env"]
        self.measured = measured
        self.group = group
        self.formula = formula
        self.estimate = None
        self.why = ""

    @property
    def error(self):
        """estimate / measured - 1; None when declined."""
        return None if self.estimate is None else self.estimate / self.measured - 1


def estimate_rows(args, rows):
    corpus = os.path.join(args.shared, "corpus")

    def one(row):
        g = row.golden
        path = find_config(corpus, row.case)
        if path is None:
            row.why = "no model_config.yaml in the corpus"
            return row
        e, why = run_estimate(args.mblint, path, g["nodes"], g["gpus_per_node"], gpu_of(row.platform))
        if e:
            row.estimate = e["stages"][-1]["peak_allocated"]
        else:
            row.why = why
        return row

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(one, rows))


# Why a row of megatron_golden_memory.csv is not among the 217 (the subset
# rule of shared/data/memory_eval_rows.md, first failing step).
def other_group(g):
    if not (g["nodes"] and g["gpus_per_node"]):
        return "no world size in the row"
    if g["model_family"] not in ("gpt", "moe", "mixtral"):
        return "model family outside the formula (t5, bert, hybrid, multimodal)"
    if re.search("grpo|cudagraph|distill|reruns", g["test_case"]):
        return "GRPO, CUDA graphs, distillation or reruns"
    if float(g["peak_max_allocated_GiB"]) < 1.0:
        return "measured peak below 1 GiB"
    return "second row of an evaluated case (lts, or another env)"


def load_rows(args):
    data = os.path.join(args.shared, "data")
    with open(os.path.join(data, "megatron_golden_memory.csv")) as f:
        golden = list(csv.DictReader(f))
    index = {(g["test_case"], g["platform"], g["env"]): g for g in golden}
    with open(os.path.join(data, "memory_eval_rows.csv")) as f:
        chosen = list(csv.DictReader(f))
    evaluated = []
    for row in chosen:
        g = index[(row["test_case"], row["platform"], row["environment"])]
        evaluated.append(Row(g, float(row["measured_peak_GiB"]), "evaluated", float(row["megatron_theoretical_GiB"])))
    keys = {(r.case, r.platform, r.env) for r in evaluated}
    others = [Row(g, float(g["peak_max_allocated_GiB"]), other_group(g)) for g in golden
              if (g["test_case"], g["platform"], g["env"]) not in keys]
    return golden, evaluated, others


class Figures:
    """|error| over rows; a declined estimate counts as an infinite error, so
    it moves the median and the p90 instead of vanishing from them.

    Under-estimation is the dangerous direction for an OOM check, so it is
    reported on its own: the share of rows whose estimate is more than 5%
    below the measurement, and the p90 of the under-estimation (max(0,
    -error) per row: 90% of the rows are under-estimated by at most this
    much; a declined row counts as infinite)."""

    def __init__(self, rows):
        self.rows = len(rows)
        self.declined = sum(1 for r in rows if r.error is None)
        errors = [math.inf if r.error is None else abs(r.error) for r in rows]
        self.median = percentile(errors, 0.5)
        self.p90 = percentile(errors, 0.9)
        estimated = [abs(r.error) for r in rows if r.error is not None]
        self.max = max(estimated) if estimated else math.nan
        self.within10 = sum(1 for x in errors if x <= 0.10) / len(errors) if errors else math.nan
        under = [math.inf if r.error is None else max(0.0, -r.error) for r in rows]
        self.under5 = sum(1 for r in rows if r.error is not None and r.error < -0.05) / len(rows) if rows else math.nan
        self.p90_under = percentile(under, 0.9)
        self.beyond_band = sum(1 for x in under if x > BAND) / len(rows) if rows else math.nan

    def line(self):
        return (f"{self.rows} rows, {self.declined} declined (counted as failures): median |error| "
                f"{pct(self.median)}, p90 {pct(self.p90)}, max of the estimated {pct(self.max)}, "
                f"within 10%: {pct(self.within10, 0)}, under-estimated by more than 5%: {pct(self.under5, 0)}, "
                f"p90 of under-estimation {pct(self.p90_under)}, under-estimated beyond the band ({pct(BAND, 2)}) "
                f"or declined: {pct(self.beyond_band, 0)}")

    def cells(self):
        """The Markdown table cells of these figures."""
        return (f"{self.rows} | {self.declined} | {pct(self.median)} | {pct(self.p90)} | {pct(self.under5, 0)} | "
                f"{pct(self.p90_under)} | {pct(self.beyond_band, 0)} | {pct(self.max)}")


FIGURE_HEADER = ("| rows | declined | median abs(error) | p90 abs(error) | under-estimated by >5% | "
                 "p90 of under-estimation | under-estimated beyond the band, or declined | max abs(error) of the estimated |")
FIGURE_RULE = "|---|---|---|---|---|---|---|---|"


def print_summary(ours, others, groups):
    """The two sets and the other rows' groups as one Markdown table."""
    print()
    print("| set " + FIGURE_HEADER)
    print("|---" + FIGURE_RULE)
    print(f"| the 217 evaluation rows | {ours.cells()} |")
    print(f"| the other 571 rows | {Figures(others).cells()} |")
    for group, rows in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"| · {group} | {Figures(rows).cells()} |")


def print_families(args, evaluated, others):
    """Both sets by model family (the CSV's model_family column); the other
    rows split by whether the row gives the world size, without which they
    are not comparable runs."""
    print()
    if args.markdown:
        print("| set | family " + FIGURE_HEADER)
        print("|---|---" + FIGURE_RULE)
    with_world = [r for r in others if r.group != "no world size in the row"]
    without_world = [r for r in others if r.group == "no world size in the row"]
    sets = (("217 evaluation rows", evaluated), (f"{len(with_world)} other rows with a world size", with_world),
            (f"{len(without_world)} other rows without (DP 1 assumed)", without_world))
    for name, rows in sets:
        families = {}
        for r in rows:
            families.setdefault(r.golden["model_family"], []).append(r)
        for family, members in sorted(families.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            figures = Figures(members)
            if args.markdown:
                print(f"| {name} | {family} | {figures.cells()} |")
            else:
                print(f"{name}, family {family}: {figures.line()}")


def pct(x, digits=1):
    if math.isinf(x):
        return "inf (declined)"
    if math.isnan(x):
        return "n/a"
    return f"{x:.{digits}%}"


LLAMA = [  # megatron-core-checks.md 6.2: Llama3 70B SFT, 32x H100, FP8-CS, s4096 MBS1 GBS32
    ("llama3_70b_tp4_pp4_vpp5.yaml", "TP4 PP4 VPP5 DP2 [core_attn]", 58.8),
    ("llama3_70b_tp4_pp8_vpp5.yaml", "TP4 PP8 VPP5 DP1", 53.2),
    ("llama3_70b_tp8_pp4_vpp5.yaml", "TP8 PP4 VPP5 DP1", 50.2),
    ("llama3_70b_tp4_pp4_vpp10.yaml", "TP4 PP4 VPP10 DP2", 60.2),
    ("llama3_70b_tp4_pp4_vpp5_mlp.yaml", "TP4 PP4 VPP5 DP2 [mlp]", 55.6),
    ("llama3_70b_tp4_pp4_vpp5_mlp_core_attn.yaml", "TP4 PP4 VPP5 DP2 [mlp, core_attn]", 55.6),
    ("llama3_70b_tp4_pp4_vpp5_core_attn_layernorm.yaml", "TP4 PP4 VPP5 DP2 [core_attn, layernorm]", 59.6),
]


def print_rows(args, rows, with_formula):
    if args.markdown:
        if with_formula:
            print("| case | platform | measured GiB | mblint GiB | error | Megatron formula GiB | error |")
            print("|---|---|---|---|---|---|---|")
        else:
            print("| case | platform | env | why not evaluated | measured GiB | mblint GiB | error |")
            print("|---|---|---|---|---|---|---|")
    for r in rows:
        est = "declined" if r.estimate is None else f"{r.estimate:.2f}"
        err = "-" if r.error is None else f"{r.error:+.1%}"
        if with_formula:
            ferr = r.formula / r.measured - 1
            if args.markdown:
                print(f"| {r.case} | {r.platform} | {r.measured:.2f} | {est} | {err} | {r.formula:.2f} | {ferr:+.1%} |")
            else:
                print(f"{r.case[:70]:70} {r.platform:9} {r.measured:7.2f} {est:>8} {err:>7}   {r.formula:7.2f} {ferr:+7.1%}")
        elif args.markdown:
            print(f"| {r.case} | {r.platform} | {r.env} | {r.group} | {r.measured:.2f} | {est} | {err} |")
        else:
            print(f"{r.case[:70]:70} {r.platform:9} {r.env:4} {r.measured:7.2f} {est:>8} {err:>7}  {r.group}")
        if r.estimate is None and not args.markdown:
            print(f"    declined: {r.why}")


def print_llama(args):
    llama = []
    for name, label, published in LLAMA:
        e, why = run_estimate(args.mblint, os.path.join(HERE, "memory_eval", name), 4, 8, "h100",
                              "llama3_70b_sft_32gpu_h100_fp8cs_config")
        if e is None:
            raise RuntimeError(f"{name}: {why}")
        llama.append((label, published, e))
    print()
    if args.markdown:
        print("| Llama3-70B 32xH100 (Bridge published) | published GB | mblint peak allocated (GB) | error | mblint total incl. overhead (GB) |")
        print("|---|---|---|---|---|")
    for label, published, e in llama:
        peak = max(s["peak_allocated"] for s in e["stages"]) / GB
        total = e["total"] / GB
        err = peak / published - 1
        if args.markdown:
            print(f"| {label} | {published:.1f} | {peak:.1f} | {err:+.1%} | {total:.1f} |")
        else:
            print(f"llama3-70b {label:42} published {published:5.1f} GB  mblint {peak:5.1f} GB ({err:+.1%}), total {total:5.1f} GB")


def gate(name, value, limit):
    """A failure message when value exceeds limit (None: no gate)."""
    if limit is None or value <= limit:
        return None
    return f"FAIL: {name} {pct(value) if isinstance(value, float) else value} above {pct(limit) if isinstance(limit, float) else limit}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mblint", default=os.path.join(ROOT, "build", "mblint"))
    parser.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    parser.add_argument("--max-median", type=float, help="gate: median |error| of the 217 rows")
    parser.add_argument("--max-p90", type=float, help="gate: p90 |error| of the 217 rows")
    parser.add_argument("--max-error", type=float, help="gate: largest |error| of the 217 rows")
    parser.add_argument("--max-p90-under", type=float,
                        help="gate: p90 of the under-estimation of the 217 rows (the memory rules' error band, "
                             "kEstimateErrorBand in lint/facts/estimate.h, must cover it)")
    parser.add_argument("--max-declined", type=int, help="gate: rows of the 217 mblint declines to estimate")
    parser.add_argument("--max-other-declined", type=int, help="gate: rows of the other 571 that mblint declines")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    missing = missing_shared_exit(args.shared)
    if missing is not None:
        return missing

    golden, evaluated, others = load_rows(args)
    evaluated = estimate_rows(args, evaluated)
    others = estimate_rows(args, others)
    print_rows(args, evaluated, with_formula=True)
    print_llama(args)
    print()
    print_rows(args, others, with_formula=False)

    ours = Figures(evaluated)
    formula = [abs(r.formula / r.measured - 1) for r in evaluated]
    print()
    print(f"megatron_golden_memory.csv: {len(golden)} rows = {len(evaluated)} evaluated + {len(others)} others")
    print(f"evaluated, mblint:           {ours.line()}")
    print(f"evaluated, Megatron formula: median |error| {pct(percentile(formula, 0.5))}, "
          f"p90 {pct(percentile(formula, 0.9))}, max {pct(max(formula))}")
    groups = {}
    for r in others:
        groups.setdefault(r.group, []).append(r)
    print(f"others, mblint:              {Figures(others).line()}")
    for group, rows in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {group}: {Figures(rows).line()}")
    with_world = [r for r in others if r.group != "no world size in the row"]
    other_declined = sum(1 for r in with_world if r.estimate is None)
    print(f"others with a world size: {len(with_world)} rows, {other_declined} declined")
    if args.markdown:
        print_summary(ours, others, groups)
    print_families(args, evaluated, others)

    failures = [
        gate("median |error|", ours.median, args.max_median),
        gate("p90 |error|", ours.p90, args.max_p90),
        gate("max |error|", ours.max if ours.declined == 0 else math.inf, args.max_error),
        gate("p90 of under-estimation (the memory rules' error band)", ours.p90_under, args.max_p90_under),
        gate("declined estimates", ours.declined, args.max_declined),
        gate("declined estimates among the other rows", Figures(others).declined, args.max_other_declined),
    ]
    if args.max_median is not None and not ours.median < percentile(formula, 0.5):
        failures.append("FAIL: median |error| not better than Megatron's formula")
    if args.max_p90 is not None and not ours.p90 < percentile(formula, 0.9):
        failures.append("FAIL: p90 |error| not better than Megatron's formula")
    failures = [f for f in failures if f]
    return failures_exit(failures)


if __name__ == "__main__":
    sys.exit(main())
