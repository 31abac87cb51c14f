// Which global ranks form each parallel group, the way Megatron-Core's
// parallel_state builds them (RankGenerator): ranks are laid out on a grid
// whose first axis varies fastest. The decoder (attention/dense) grid is
// TP x CP x DP x PP (EP is 1 there), the expert grid ETP x EP x EDP x PP (the
// same order string with CP left out: CP is folded into expert DP); with
// dist.use_tp_pp_dp_mapping the last two axes swap (order tp-cp-ep-pp-dp).
// A group is every rank that differs only along the group's axes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mblint {

enum class RankOrder {
  TpCpEpDpPp,  // Megatron's default
  TpCpEpPpDp,  // dist.use_tp_pp_dp_mapping = true
};

std::string_view rank_order_name(RankOrder order);

// One axis of a grid: "tp", "cp", "ep", "dp", "pp".
struct GridAxis {
  std::string name;
  int64_t size = 1;
};

// Axes from fastest-varying (stride 1) to slowest.
struct RankGrid {
  std::vector<GridAxis> axes;
  int64_t world() const;
};

// Every group of `grid` spanning the axes named in `group_axes` ("tp-pp":
// the model-parallel group), in Megatron's group order. The callback gets
// each group's ranks in rank-in-group order. Unknown axis names are ignored.
void for_each_group(const RankGrid& grid, std::string_view group_axes,
                    const std::function<void(std::span<const int64_t>)>& visit);
std::vector<std::vector<int64_t>> rank_groups(const RankGrid& grid, std::string_view group_axes);

struct ParallelSizes {
  int64_t world = 0;
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t cp = 1;
  int64_t ep = 1;
  int64_t etp = 1;
  RankOrder order = RankOrder::TpCpEpDpPp;
};

struct RankLayout {
  ParallelSizes sizes;
  int64_t dp = 0;   // world / (TP·CP·PP)
  int64_t edp = 0;  // world / (ETP·EP·PP)
  RankGrid decoder;
  RankGrid expert;
};

// The two grids alone (for checks that need only one of them).
RankGrid decoder_grid(int64_t tp, int64_t cp, int64_t dp, int64_t pp, RankOrder order);
RankGrid expert_grid(int64_t etp, int64_t ep, int64_t edp, int64_t pp, RankOrder order);

// nullopt (with the reason) when Megatron would refuse the sizes: a size
// below 1, or a world size not divisible by TP·CP·PP or by ETP·EP·PP.
std::optional<RankLayout> make_rank_layout(const ParallelSizes& sizes, std::string* why_not = nullptr);

// The groups Megatron creates, by kind.
struct GroupKind {
  const char* key;          // "tp", "model-parallel", "ep" ...
  const char* description;  // "tensor-parallel"
  bool expert;              // on the expert grid
  const char* axes;         // axes of that grid the group spans ("tp-pp")
};
std::span<const GroupKind> group_kinds();
const GroupKind* find_group_kind(std::string_view key);

const RankGrid& grid_for(const RankLayout& layout, const GroupKind& kind);

// How groups sit on the machines: consecutive blocks of `block` ranks form
// one node (or one NVLink domain).
struct Crossing {
  int64_t groups = 0;
  int64_t crossing = 0;     // groups spanning more than one block
  int64_t max_blocks = 0;   // blocks one group touches at most
};
Crossing count_crossings(const RankGrid& grid, std::string_view group_axes, int64_t block);

}  // namespace mblint
