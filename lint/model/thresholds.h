// Limits a team may tune per project (`.mblint.yaml` thresholds); every job
// carries the ones that govern it.
#pragma once

namespace mblint {

// Limits a team may tune (`.mblint.yaml` thresholds); the defaults are the
// documented ones.
struct Thresholds {
  // pipeline-bubble warns when the pipeline idles for more than this share of
  // the step: (PP-1) / (VPP·m + PP-1), not the bubble-to-compute ratio.
  double pipeline_bubble = 0.25;
  double memory_headroom = 0.90;  // warn above this fraction of GPU memory
  // A job mblint could check only partly is an error (--require-complete,
  // `require_complete: true`): for gates that want certainty.
  bool require_complete = false;
};

}  // namespace mblint
