// The launchers of one job disagree: torchrun's processes per node against
// the GPUs Slurm gives each node, torchrun started by several srun tasks per
// node, or torchrun --nnodes against the Slurm node count.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kLauncherGpuMismatch;

namespace {

bool given(const LocatedInt& value) { return value.value.has_value(); }

Note note_at(const LocatedInt& value, std::string text) { return Note{std::move(text), primary_span(value.where)}; }

// Tasks srun starts on each node, as far as the script says: --ntasks-per-node,
// or --ntasks spread over --nodes, else srun's one task per node.
std::optional<int64_t> srun_tasks_per_node(const LauncherRequests& r, const LocatedInt** source) {
  *source = nullptr;
  if (given(r.slurm_ntasks_per_node)) {
    *source = &r.slurm_ntasks_per_node;
    return *r.slurm_ntasks_per_node.value;
  }
  if (!r.slurm_ntasks_per_node.unknown_because.empty()) return std::nullopt;
  if (given(r.slurm_ntasks)) {
    if (!given(r.slurm_nodes) || *r.slurm_nodes.value <= 0 || *r.slurm_ntasks.value % *r.slurm_nodes.value != 0) {
      return std::nullopt;
    }
    *source = &r.slurm_ntasks;
    return *r.slurm_ntasks.value / *r.slurm_nodes.value;
  }
  if (!r.slurm_ntasks.unknown_because.empty()) return std::nullopt;
  return 1;
}

// Several torchrun agents on one node: each starts nproc_per_node workers
// and all of them claim the same rendezvous port and GPU ordinals.
void check_tasks_times_torchrun(const LauncherRequests& r, std::vector<Diagnostic>& out) {
  if (!r.torchrun || !r.srun || !given(r.torchrun_nproc_per_node)) return;
  const LocatedInt* tasks_source = nullptr;
  auto tasks = srun_tasks_per_node(r, &tasks_source);
  if (!tasks || *tasks <= 1 || *r.torchrun_nproc_per_node.value <= 1 || !tasks_source) return;
  int64_t nproc = *r.torchrun_nproc_per_node.value;
  Diagnostic diag = make_diagnostic(
      kLauncherGpuMismatch,
      fmt::format("srun starts {} tasks per node and each runs torchrun with --nproc-per-node {}: {} processes per "
                  "node, and the torchrun agents on one node collide on the rendezvous port (EADDRINUSE) and on "
                  "the GPUs",
                  *tasks, nproc, *tasks * nproc),
      primary_span(r.torchrun_nproc_per_node.where));
  diag.severity = Severity::Error;
  diag.notes.push_back(note_at(*tasks_source, fmt::format("Slurm starts {} tasks per node here", *tasks)));
  report(out, std::move(diag),
         "with torchrun use one Slurm task per node (--ntasks-per-node=1); or drop torchrun and let srun start "
         "one task per GPU");
}

void check_processes_against_gpus(const LauncherRequests& r, std::vector<Diagnostic>& out) {
  if (!given(r.slurm_gpus_per_node)) return;
  int64_t gpus = *r.slurm_gpus_per_node.value;
  std::optional<int64_t> processes;
  const LocatedInt* primary = nullptr;
  const LocatedInt* tasks_source = nullptr;
  std::string how;
  if (r.torchrun) {
    if (!given(r.torchrun_nproc_per_node)) return;
    auto tasks = r.srun ? srun_tasks_per_node(r, &tasks_source) : std::optional<int64_t>(1);
    if (!tasks) return;
    processes = *tasks * *r.torchrun_nproc_per_node.value;
    primary = &r.torchrun_nproc_per_node;
    how = *tasks > 1 ? fmt::format("{} srun tasks x torchrun --nproc-per-node {}", *tasks,
                                   *r.torchrun_nproc_per_node.value)
                     : fmt::format("torchrun --nproc-per-node {}", *r.torchrun_nproc_per_node.value);
  } else if (r.srun) {
    if (!given(r.slurm_ntasks_per_node)) return;
    processes = *r.slurm_ntasks_per_node.value;
    primary = &r.slurm_ntasks_per_node;
    how = fmt::format("srun --ntasks-per-node {}", *processes);
  } else {
    return;
  }
  if (*processes == gpus) return;
  // Several torchrun agents per node are reported on their own.
  if (r.torchrun && tasks_source && *processes > *r.torchrun_nproc_per_node.value &&
      *r.torchrun_nproc_per_node.value > 1) {
    return;
  }
  bool over = *processes > gpus;
  Diagnostic diag = make_diagnostic(
      kLauncherGpuMismatch,
      over ? fmt::format("{} processes per node ({}) but Slurm gives each node {}: the extra ranks have no GPU of "
                         "their own (invalid device ordinal, or two ranks sharing a GPU)",
                         *processes, how, count_of(gpus, "GPU"))
           : fmt::format("{} processes per node ({}) on nodes with {} allocated: {} of them stay idle", *processes,
                         how, count_of(gpus, "GPU"), gpus - *processes),
      primary_span(primary->where));
  diag.severity = over ? Severity::Error : Severity::Warning;
  diag.notes.push_back(note_at(r.slurm_gpus_per_node, fmt::format("Slurm allocates {} per node here",
                                                                  count_of(gpus, "GPU"))));
  report(out, std::move(diag),
         over ? fmt::format("start at most {} processes per node (one per GPU)", gpus)
              : fmt::format("start {} processes per node, or request only {} per node", gpus,
                            count_of(*processes, "GPU")));
}

void check_node_counts(const LauncherRequests& r, std::vector<Diagnostic>& out) {
  if (!r.torchrun || !given(r.torchrun_nnodes) || !given(r.slurm_nodes)) return;
  int64_t torchrun_nodes = *r.torchrun_nnodes.value;
  int64_t slurm_nodes = *r.slurm_nodes.value;
  std::string message;
  if (!r.srun && slurm_nodes > 1) {
    // In a batch script the command runs on the first node only.
    message = fmt::format("torchrun (--nnodes {}) is not started with srun: in a batch script it runs only on the "
                          "first of the {} allocated nodes{}",
                          torchrun_nodes, slurm_nodes,
                          torchrun_nodes > 1 ? ", and the rendezvous waits for the other nodes until it times out"
                                             : ", the others stay idle");
  } else if (torchrun_nodes != slurm_nodes) {
    message = fmt::format(
        "torchrun --nnodes {} but Slurm allocates {}: {}", torchrun_nodes, count_of(slurm_nodes, "node"),
        torchrun_nodes > slurm_nodes
            ? "the rendezvous waits for nodes that never come and the job times out"
            : "the agents on the extra nodes cannot join the rendezvous, or the run uses fewer nodes than it pays for");
  } else {
    return;
  }
  Diagnostic diag = make_diagnostic(kLauncherGpuMismatch, std::move(message), primary_span(r.torchrun_nnodes.where));
  diag.severity = Severity::Warning;
  diag.notes.push_back(note_at(r.slurm_nodes, fmt::format("Slurm allocates {} here", count_of(slurm_nodes, "node"))));
  report(out, std::move(diag),
         "pass --nnodes $SLURM_NNODES (or the same number as #SBATCH --nodes) and start torchrun on every node "
         "with srun");
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.kind != InputKind::LaunchScript) return;
  const LauncherRequests& r = job.cluster.requests;
  check_tasks_times_torchrun(r, out);
  check_processes_against_gpus(r, out);
  check_node_counts(r, out);
}

}  // namespace

extern const RuleInfo kLauncherGpuMismatch = {
    .code = "MB015",
    .name = "launcher-gpu-mismatch",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Error,
    .summary = "torchrun, srun and the Slurm allocation disagree on processes, GPUs or nodes",
    .doc = R"md(A job is started by up to three layers that each say how many processes run where: the
Slurm allocation (`#SBATCH --nodes`, `--gpus-per-node` or `--gres=gpu:N`), `srun` (one task per
node unless `--ntasks-per-node`/`--ntasks` say otherwise) and `torchrun` (`--nnodes`,
`--nproc-per-node`). Megatron takes its world size from whatever was started, so a mismatch is
not caught by any config check:

* **error**: more processes per node than allocated GPUs. With torchrun, each worker calls
  `torch.cuda.set_device(LOCAL_RANK)`; ranks past the node's GPU count fail with "invalid device
  ordinal", or (when more GPUs are visible than allocated) share a GPU and run out of memory.
  Likewise `srun --ntasks-per-node 8` with torchrun `--nproc-per-node 8` starts 64 processes per
  node, and the eight torchrun agents on a node collide on the rendezvous port (EADDRINUSE).
  With torchrun, use one Slurm task per node; without torchrun, one task per GPU.
* **warning**: fewer processes than allocated GPUs (the rest stay idle while being paid for), and
  `torchrun --nnodes` different from the Slurm node count (the rendezvous waits for nodes that
  never start, or surplus agents cannot join). Without `srun`, torchrun runs only on the batch
  host, the first node of the allocation.

There are two readings of `--ntasks-per-node`: with torchrun it counts torchrun agents (it
should be 1); with `srun` alone it counts ranks (it should equal the GPUs per node). mblint
applies the one that matches the launcher it found. Values that come from the environment
(`$SLURM_GPUS_PER_NODE` without a directive) are unknown and not compared.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=4\n#SBATCH --ntasks-per-node=1\n"
     "srun torchrun --nnodes 2 --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n#SBATCH --ntasks-per-node=1\n"
     "srun torchrun --nnodes 2 --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
     "    --recipe qwen3_8b_pretrain_config\n"},
    .check = check,
    .checks = "PS 88",
};

}  // namespace mblint
