#!/usr/bin/env python3
"""Does `mblint estimate` call NVIDIA's own layouts out of memory?

Every row of shared/data/perf_published.csv is a layout NVIDIA ran with
Megatron Bridge: it fit on its GPU. Each row that names a catalogued recipe
is estimated exactly as tools/perf_eval.py estimates its speed (the row's
published layout and its preset's knobs over the recipe, the row's
allocation and GPU), and its estimate is judged as the memory rules judge
one (lint/facts/estimate.h, kEstimateErrorBand; docs/memory.md "The verdict
and the estimate's error"):

  error    the low end of the estimate's range is above the GPU's memory
           (`estimated-oom` would be an error: a wrong verdict on these rows)
  warning  the range straddles the GPU's memory (`estimated-oom` warning)

and as a job on a catalog recipe is judged: an error when its weights,
gradients and optimizer state alone are beyond the band, or when the low end
of its whole estimate is above kRecipeOverEstimateBound times the GPU's
memory. That bound is the largest total / capacity over these rows: the gate
fails when a row is estimated above it (the bound would be stale).

These rows only bound the truth from above (they fit, by how much is not
published), so they can show an estimate is too high, never what it should
be: nothing is fitted to them.

    tools/memory_published.py [--mblint build/mblint] [--shared ../shared] [--rows]
                              [--max-errors N] [--max-warnings N] [--max-recipe-errors N]

Exit 1 when a gate is not met; 77 when ../shared is absent (1 under
MBLINT_REQUIRE_SHARED=1).
"""
import argparse
import json
import os
import re
import sys
import tempfile

from eval_common import failures_exit, missing_shared_exit
from perf_eval import load_rows, number, row_yaml, run_estimates

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def estimate_constants():
    """kEstimateErrorBand and the overhead terms, read from the C++ so the
    verdict here cannot drift from the rules'."""
    with open(os.path.join(ROOT, "lint", "facts", "estimate.h")) as f:
        header = f.read()
    band = float(re.search(r"kEstimateErrorBand = ([0-9.]+);", header).group(1))
    bound = float(re.search(r"kRecipeOverEstimateBound = ([0-9.]+);", header).group(1))
    with open(os.path.join(ROOT, "lint", "facts", "estimate.cpp")) as f:
        text = f.read()
    value = {name: float(re.search(name + r" = ([0-9.]+);", text).group(1))
             for name in ("kContextGiB", "kNcclGiB", "kFragmentation")}
    return band, bound, value["kContextGiB"] + value["kNcclGiB"], value["kFragmentation"]


BAND, RECIPE_BOUND, FIXED_GIB, FRAGMENTATION = estimate_constants()


def total_range(peak):
    """total_range() of estimate.cpp: the total when the peak allocated is off
    by the band either way."""
    low, high = peak / (1 + BAND), peak / (1 - BAND)
    return low + FIXED_GIB + FRAGMENTATION * low, high + FIXED_GIB + FRAGMENTATION * high


def fixed_part(e):
    """What estimated-oom judges of a job on a catalog recipe: the weights,
    gradients and optimizer state (rules/memory/estimated_oom.cpp)."""
    return e["weights"] + e["gradients"] + e["optimizer"]


def verdict(e, peak=None):
    low, high = total_range(e["peak_allocated"] if peak is None else peak)
    if low > e["capacity"]:
        return "error"
    if high > e["capacity"]:
        return "warning"
    return "fits"


def recipe_verdict(e):
    """estimated-oom's verdict on a job on a catalog recipe: its weights,
    gradients and optimizer state judged with the band, else its whole
    estimate beyond kRecipeOverEstimateBound times the GPU's memory (an
    error only)."""
    fixed = verdict(e, fixed_part(e))
    if fixed != "fits":
        return fixed
    low, _ = total_range(e["peak_allocated"])
    return "error" if low > RECIPE_BOUND * e["capacity"] else "fits"


def memory_yaml(row):
    """perf_eval's override of the row (its layout and its preset's knobs) with
    what the row says of memory beyond it: Megatron-FSDP on or off as published
    (a current recipe may use it where the published run did not), and the
    preset's CPU activation offloading."""
    document = json.loads(row_yaml(row.csv, row.preset))
    if not (number(row.csv["fsdp"]) or 0) > 0:
        document.setdefault("ddp", {})["use_megatron_fsdp"] = False
    if row.preset:
        layers = number(row.preset["cpu_offload_layers"]) or 0
        document["model"]["cpu_offloading"] = layers > 0
        if layers > 0:
            document["model"]["cpu_offloading_num_layers"] = layers
    return json.dumps(document, indent=1)


def take_memory(row, document):
    row.memory = document.get("estimate")
    return "; ".join(document.get("estimate_unavailable", [])) if row.memory is None else None


def run(mblint, rows, directory, jobs):
    run_estimates(mblint, rows, directory, jobs, take_memory, yaml_text=memory_yaml)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mblint", default=os.path.join(ROOT, "build", "mblint"))
    parser.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    parser.add_argument("--rows", action="store_true", help="print every row's estimate and verdict")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-errors", type=int, help="gate: rows `estimated-oom` would call an error")
    parser.add_argument("--max-warnings", type=int, help="gate: rows within the band of the GPU's memory")
    parser.add_argument("--max-recipe-errors", type=int,
                        help="gate: rows estimated-oom calls an error as it judges a job on a catalog recipe")
    args = parser.parse_args()
    missing = missing_shared_exit(args.shared)
    if missing is not None:
        return missing
    rows = load_rows(args.shared)
    with tempfile.TemporaryDirectory(prefix="memory-published-") as directory:
        run(args.mblint, rows, directory, args.jobs)
    modelled = [r for r in rows if r.memory is not None]
    counts = {"error": [], "warning": [], "fits": []}
    fixed_counts = {"error": [], "warning": [], "fits": []}
    for r in modelled:
        counts[verdict(r.memory)].append(r)
        fixed_counts[recipe_verdict(r.memory)].append(r)
    if args.rows:
        for r in rows:
            if r.memory is None:
                print(f"{r.label}: declined: {r.why[:120]}")
                continue
            e = r.memory
            low, high = total_range(e["peak_allocated"])
            print(f"{r.label} [{r.csv['current_recipe_v060']}]: {verdict(e)} "
                  f"(as a recipe job: {recipe_verdict(e)}): total {e['total']:.1f} GiB "
                  f"({low:.0f}-{high:.0f}) of {e['capacity']:.1f} ({e['total'] / e['capacity']:.0%}); "
                  f"weights {e['weights']:.1f}, gradients {e['gradients']:.1f}, optimizer {e['optimizer']:.1f}, "
                  f"activations {e['activations']:.1f}")
        print()
    ratios = sorted(r.memory["total"] / r.memory["capacity"] for r in modelled)
    print(f"perf_published.csv: {len(rows)} rows name a catalogued recipe; {len(modelled)} estimated, "
          f"{len(rows) - len(modelled)} declined")
    print(f"  estimated-oom error (the low end above the GPU's memory): {len(counts['error'])}")
    print(f"  estimated-oom warning (within the band): {len(counts['warning'])}")
    print(f"  fit: {len(counts['fits'])}")
    print(f"  judged as a recipe job (weights, gradients and optimizer state; the whole estimate beyond "
          f"{RECIPE_BOUND} times the GPU): {len(fixed_counts['error'])} errors, {len(fixed_counts['warning'])} warnings")
    for r in fixed_counts["error"] + fixed_counts["warning"]:
        print(f"    {recipe_verdict(r.memory)}: {r.label}")
    if ratios:
        print(f"  total / capacity: median {ratios[len(ratios) // 2]:.0%}, max {ratios[-1]:.1%} "
              f"(kRecipeOverEstimateBound {RECIPE_BOUND})")
    failures = []
    if args.max_errors is not None and len(counts["error"]) > args.max_errors:
        failures.append(f"FAIL: {len(counts['error'])} published layouts called out of memory, more than {args.max_errors}")
    if args.max_warnings is not None and len(counts["warning"]) > args.max_warnings:
        failures.append(f"FAIL: {len(counts['warning'])} published layouts within the band, more than {args.max_warnings}")
    if ratios and ratios[-1] > RECIPE_BOUND:
        failures.append(f"FAIL: a published layout is estimated at {ratios[-1]:.3f} times its GPU's memory, above "
                        f"kRecipeOverEstimateBound {RECIPE_BOUND} (lint/facts/estimate.h): the bound is stale")
    if args.max_recipe_errors is not None and len(fixed_counts["error"]) > args.max_recipe_errors:
        failures.append(f"FAIL: {len(fixed_counts['error'])} published layouts called out of memory as recipe jobs, "
                        f"more than {args.max_recipe_errors}")
    return failures_exit(failures)


if __name__ == "__main__":
    sys.exit(main())
