// The renderers of `mblint diff`: JSON (the contract in docs/diff.md), a
// compact before -> after text per job, and Markdown for a pull-request
// comment. --format github and sarif render the new findings with the
// check renderers (lint/report/render.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "lint/diff/diff_gate.h"
#include "lint/diff/job_diff.h"

namespace mblint {

struct DiffView {
  const DiffSide& base;
  const DiffSide& head;
  const DiffReport& report;
  const std::vector<Regression>& regressions;
  size_t new_errors = 0;
  bool all = false;  // --all: the unchanged jobs too
};

void render_diff_json(std::ostream& out, const DiffView& view);
void render_diff_text(std::ostream& out, const DiffView& view, bool color);
void render_diff_markdown(std::ostream& out, const DiffView& view);

// What the renderers share.
// "12", "38.5": an integer without a point, a real as short as it is exact.
std::string number_text(double value, bool integer);
// The job's file and launch line ("launch/train.sbatch:5"): the head side's, a removed job's base side's.
std::string job_location(const JobDiff& job);
// Where a side wrote a setting: "launch/train.sbatch:7", or its layer when written nowhere ("default").
std::string setting_origin(const SourceSet& sources, const ResolvedSetting& setting);
bool shown(const JobDiff& job, bool all);

}  // namespace mblint
