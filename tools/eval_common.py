"""What the accuracy evaluations share (memory_eval.py, perf_eval.py,
memory_published.py): the percentile their figures use, the check for
../shared that lets ctest skip them where the measured data is absent, and
how a failed limit ends the run."""

import os


def percentile(values, q):
    """Linear interpolation, as the reference tables use."""
    values = sorted(values)
    if not values:
        return float("nan")
    pos = (len(values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    if pos == lo or values[lo] == values[hi]:
        return values[lo]  # also keeps inf - inf (two declined rows) out of the arithmetic
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def missing_shared_exit(shared):
    """None when `shared`/data is there; otherwise the exit code, after saying
    why: 77 (ctest skips), or 1 under MBLINT_REQUIRE_SHARED=1 (CI, where a
    skip would pass unseen)."""
    if os.path.isdir(os.path.join(shared, "data")):
        return None
    if os.environ.get("MBLINT_REQUIRE_SHARED") == "1":
        print(f"FAIL: {shared}/data is absent and MBLINT_REQUIRE_SHARED=1")
        return 1
    print(f"skipped: {shared} is absent")
    return 77


def failures_exit(failures):
    """Prints each failed limit ("FAIL: ..."); the exit code, 1 when any failed."""
    for f in failures:
        print(f)
    return 1 if failures else 0
