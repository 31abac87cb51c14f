#!/usr/bin/env bash
# Benchmark `mblint plan` on the largest sizing questions: wall-clock and CPU
# (user + sys) time of each case over several runs (min and median), against
# the 1 s budget. On a loaded machine wall time exceeds CPU time; the budget
# applies to the median wall time.
# Usage: tools/bench_plan.sh [path/to/mblint] [runs]
set -euo pipefail
mblint=${1:-build/mblint}
runs=${2:-5}
budget_ms=1000
status=0

cases=(
  "deepseek-v3 671B on 1024 H100|--recipe deepseek_v3_pretrain_1024gpu_h100_bf16_config --gpus 1024"
  "deepseek-v3 671B on 256 H100|--recipe deepseek_v3_pretrain_1024gpu_h100_bf16_config --gpus 256"
  "kimi-k2-like 1T on 1024 H100|--num-layers 61 --hidden-size 7168 --num-attention-heads 64 --ffn-hidden-size 18432 --num-experts 384 --moe-topk 8 --moe-ffn-hidden-size 2048 --vocab-size 163840 --seq-length 4096 --global-batch-size 4096 --gpus 1024 --gpu h100"
  "llama 3.1 405B on 1024 H100|--recipe llama31_405b_pretrain_1024gpu_h100_bf16_config --gpus 1024"
  "qwen3 235B-A22B on 512 GB200|--recipe qwen3_235b_a22b_pretrain_256gpu_gb200_bf16_config --gpus 512 --global-batch-size 2048"
)

# "wall_ms cpu_ms" of one run.
measure() {
  local TIMEFORMAT='%R %U %S' out
  out=$({ time "$mblint" plan "$@" > /dev/null 2>&1 || true; } 2>&1)
  read -r wall user sys <<< "$out"
  awk -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN { printf "%d %d\n", w * 1000, (u + s) * 1000 }'
}

median_of() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
min_of() { printf '%s\n' "$@" | sort -n | head -1; }

printf '%-32s %8s %11s %8s %10s %s\n' case wall_min wall_median cpu_min cpu_median result
for entry in "${cases[@]}"; do
  name=${entry%%|*}
  # shellcheck disable=SC2206
  args=(${entry#*|})
  walls=()
  cpus=()
  for ((i = 0; i < runs; i++)); do
    read -r wall cpu <<< "$(measure "${args[@]}")"
    walls+=("$wall")
    cpus+=("$cpu")
  done
  median=$(median_of "${walls[@]}")
  result=ok
  if ((median > budget_ms)); then
    result="over the ${budget_ms} ms budget"
    status=1
  fi
  printf '%-32s %8s %11s %8s %10s %s\n' "$name" "$(min_of "${walls[@]}")" "$median" "$(min_of "${cpus[@]}")" \
    "$(median_of "${cpus[@]}")" "$result"
done
exit $status
