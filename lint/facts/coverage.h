// How much of a job mblint could check. The core checks need the allocation,
// the parallel sizes, the model shape and the batch; each of those mblint
// does not know is a gap, with why it is unknown and how to supply it. A
// job without gaps is checked fully; otherwise partly, and the
// `unchecked-job` note says so (a quiet run must mean a checked job).
#pragma once

#include <string>
#include <vector>

#include "lint/base/source.h"

namespace mblint {

struct Job;
struct Derived;

struct CoverageGap {
  std::string what;    // for the summary line: "recipe unknown"
  std::string why;     // "no --recipe given"
  std::string supply;  // "pass --recipe NAME"
  Span where;          // where the unknown was written; invalid when nowhere
  std::vector<std::string> unknown;  // the settings it leaves unknown
};

struct Coverage {
  std::vector<CoverageGap> gaps;
  bool complete() const { return gaps.empty(); }
};

// One job of a run and how completely it was checked, for the summary line
// and the JSON report (which outlive the job itself).
struct JobCoverage {
  Span where;  // the launch command, or the start of the job's file
  std::string entry;    // "run_recipe.py", "Megatron-LM", "none" (a YAML file)
  std::string dialect;  // "bridge", "megatron-lm", "nemo"
  std::string recipe;   // the recipe's name when one was selected
  Coverage coverage;
};

// A job the rules run on: a config, or a launch of an entry point mblint
// reads (not a script that launches nothing, not a YAML of another tool).
bool is_checked_job(const Job& job);

JobCoverage coverage_entry(const Job& job, const Derived& derived);

// The gaps of a job whose derived quantities are `derived` (whose own
// `coverage` is not read).
Coverage job_coverage(const Job& job, const Derived& derived);

// "recipe unknown, allocation unknown": the gaps' `what`, distinct, in order.
std::string coverage_labels(const Coverage& coverage);

}  // namespace mblint
