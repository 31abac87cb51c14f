#!/usr/bin/env python3
"""Acceptance test of `mblint estimate` against measured peak memory.

For every row of shared/data/memory_eval_rows.csv (217 Megatron-LM CI runs,
peak max-allocated memory measured on the last rank), runs

    mblint estimate <model_config.yaml> --nodes N --gpus-per-node G --gpu TYPE --format json

and compares the last pipeline stage's peak_allocated with the measurement,
next to Megatron's own formula (theoretical_memory_usage.py, from the same
CSV). Also prints the published Llama3-70B 32xH100 peaks (megatron-core-checks.md
section 6.2) as a second check, from the configs in tools/memory_eval/.

    tools/memory_eval.py [--mblint build/mblint] [--shared ../shared] [--markdown]
                         [--max-median 0.10 --max-p90 0.25]

Exit 1 when --max-median/--max-p90 are given and not met; 77 when ../shared
is absent (ctest skips).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GPU = {"dgx_h100": "h100", "dgx_a100": "a100", "dgx_gb200": "gb200"}
GB = 1e9 / 2**30  # published GB -> GiB


def percentile(values, q):
    """Linear interpolation, as the reference table uses."""
    values = sorted(values)
    if not values:
        return float("nan")
    pos = (len(values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def run_estimate(mblint, path, nodes, gpus_per_node, gpu, recipe=None):
    cmd = [mblint, "estimate", path, "--nodes", str(nodes), "--gpus-per-node", str(gpus_per_node),
           "--gpu", gpu, "--format", "json", "--fail-on", "note"]
    if recipe:
        cmd += ["--recipe", recipe]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr}")
    document = json.loads(out.stdout)
    return document.get("estimate")


def find_config(corpus, test_case):
    base = os.path.join(corpus, "NVIDIA__Megatron-LM", "tests", "functional_tests", "test_cases")
    for family in sorted(os.listdir(base)):
        path = os.path.join(base, family, test_case, "model_config.yaml")
        if os.path.exists(path):
            return path
    return None


def eval_rows(args):
    data = os.path.join(args.shared, "data")
    golden = {}
    with open(os.path.join(data, "megatron_golden_memory.csv")) as f:
        for row in csv.DictReader(f):
            golden[(row["test_case"], row["platform"], row["env"])] = row
    with open(os.path.join(data, "memory_eval_rows.csv")) as f:
        rows = list(csv.DictReader(f))
    jobs = []
    for row in rows:
        g = golden[(row["test_case"], row["platform"], row["environment"])]
        path = find_config(os.path.join(args.shared, "corpus"), row["test_case"])
        jobs.append((row, g, path))

    def one(job):
        row, g, path = job
        e = run_estimate(args.mblint, path, g["nodes"], g["gpus_per_node"], GPU[row["platform"]])
        return row, e

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(one, jobs))


LLAMA = [  # megatron-core-checks.md 6.2: Llama3 70B SFT, 32x H100, FP8-CS, s4096 MBS1 GBS32
    ("llama3_70b_tp4_pp4_vpp5.yaml", "TP4 PP4 VPP5 DP2 [core_attn]", 58.8),
    ("llama3_70b_tp4_pp8_vpp5.yaml", "TP4 PP8 VPP5 DP1", 53.2),
    ("llama3_70b_tp8_pp4_vpp5.yaml", "TP8 PP4 VPP5 DP1", 50.2),
    ("llama3_70b_tp4_pp4_vpp10.yaml", "TP4 PP4 VPP10 DP2", 60.2),
    ("llama3_70b_tp4_pp4_vpp5_mlp.yaml", "TP4 PP4 VPP5 DP2 [mlp]", 55.6),
    ("llama3_70b_tp4_pp4_vpp5_mlp_core_attn.yaml", "TP4 PP4 VPP5 DP2 [mlp, core_attn]", 55.6),
    ("llama3_70b_tp4_pp4_vpp5_core_attn_layernorm.yaml", "TP4 PP4 VPP5 DP2 [core_attn, layernorm]", 59.6),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mblint", default=os.path.join(ROOT, "build", "mblint"))
    parser.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--max-median", type=float)
    parser.add_argument("--max-p90", type=float)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.shared, "data")):
        print(f"skipped: {args.shared} is absent")
        return 77

    results = eval_rows(args)
    ours, theirs = [], []
    lines = []
    for row, e in results:
        measured = float(row["measured_peak_GiB"])
        formula = float(row["megatron_theoretical_GiB"])
        estimate = e["stages"][-1]["peak_allocated"] if e else float("nan")
        err = estimate / measured - 1
        ferr = formula / measured - 1
        ours.append(abs(err))
        theirs.append(abs(ferr))
        lines.append((row["test_case"], row["platform"], measured, estimate, err, formula, ferr))

    sep = "|" if args.markdown else " "
    if args.markdown:
        print("| case | platform | measured GiB | mblint GiB | error | Megatron formula GiB | error |")
        print("|---|---|---|---|---|---|---|")
    for case, platform, measured, estimate, err, formula, ferr in lines:
        if args.markdown:
            print(f"| {case} | {platform} | {measured:.2f} | {estimate:.2f} | {err:+.1%} | {formula:.2f} | {ferr:+.1%} |")
        else:
            print(f"{case[:70]:70} {platform:9} {measured:7.2f} {estimate:7.2f} {err:+7.1%}   {formula:7.2f} {ferr:+7.1%}")

    llama = []
    for name, label, published in LLAMA:
        e = run_estimate(args.mblint, os.path.join(HERE, "memory_eval", name), 4, 8, "h100",
                         "llama3_70b_sft_32gpu_h100_fp8cs_config")
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

    med, p90 = statistics.median(ours), percentile(ours, 0.9)
    fmed, fp90 = statistics.median(theirs), percentile(theirs, 0.9)
    within10 = sum(1 for x in ours if x <= 0.10) / len(ours)
    print()
    print(f"rows: {len(ours)}")
    print(f"mblint:           median |error| {med:.1%}, p90 {p90:.1%}, max {max(ours):.1%}, within 10%: {within10:.0%}")
    print(f"Megatron formula: median |error| {fmed:.1%}, p90 {fp90:.1%}, max {max(theirs):.1%}")
    failed = False
    if args.max_median is not None and not (med <= args.max_median and med < fmed):
        print(f"FAIL: median {med:.1%} above {args.max_median:.1%} or not better than the formula")
        failed = True
    if args.max_p90 is not None and not (p90 <= args.max_p90 and p90 < fp90):
        print(f"FAIL: p90 {p90:.1%} above {args.max_p90:.1%} or not better than the formula")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
