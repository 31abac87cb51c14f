#!/usr/bin/env bash
# Benchmark `mblint diff` on the case of its target: a repository of 200
# training jobs (100 launch scripts with two launches each) where a change
# touches 20 of them (10 scripts edited, and the sourced files of two groups
# of 5 scripts, 10 jobs). Prints the wall time of each run and the median against
# the 1 s budget.
# Usage: tools/bench_diff.sh [path/to/mblint] [runs]
set -euo pipefail
mblint=$(realpath "${1:-build/mblint}")
runs=${2:-5}
budget_ms=1000

repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
cd "$repo"
git init -q
git config user.name bench
git config user.email bench@example.com

script() {  # script DIR N TP: two launches, the second through a sourced file
  local dir=$1 n=$2 tp=$3
  mkdir -p "$dir"
  cat > "$dir/train_$n.sbatch" <<SCRIPT
#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
source ${dir}/env.sh
srun torchrun --nnodes 2 --nproc-per-node 8 scripts/training/run_recipe.py \\
  --recipe llama3_8b_pretrain_8gpu_h100_bf16_config model.tensor_model_parallel_size=$tp
srun torchrun --nnodes 2 --nproc-per-node 8 scripts/training/run_recipe.py \\
  --recipe llama3_8b_pretrain_8gpu_h100_bf16_config model.tensor_model_parallel_size=\$TP \\
  train.micro_batch_size=\$MBS
SCRIPT
}

for group in $(seq 0 19); do
  for k in $(seq 0 4); do script "group_$group" $((group * 5 + k)) 1; done
  printf 'TP=2\nMBS=1\n' > "group_$group/env.sh"
done
git add -A
git commit -q -m base
for n in $(seq 0 9); do sed -i 's/tensor_model_parallel_size=1/tensor_model_parallel_size=4/' "group_$((n / 5))/train_$n.sbatch"; done
printf 'TP=4\nMBS=2\n' > group_18/env.sh
printf 'TP=4\nMBS=2\n' > group_19/env.sh

jobs=$("$mblint" diff --all --format json | python3 -c 'import json,sys; d=json.load(sys.stdin)["summary"]; print(d["changed"], d["changed"] + d["unchanged"])')
echo "jobs: $jobs (changed, total)"

walls=()
for ((i = 0; i < runs; i++)); do
  start=$(date +%s%N)
  "$mblint" diff --format json > /dev/null || true
  walls+=($((($(date +%s%N) - start) / 1000000)))
done
median=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "wall ms per run: ${walls[*]}; median ${median} ms (budget ${budget_ms} ms)"
[ "$median" -le "$budget_ms" ]
