#include "lint/facts/rank_layout.h"

#include <algorithm>

#include <fmt/format.h>

namespace mblint {

namespace {

// Split "tp-pp" into its axis names.
std::vector<std::string_view> split_axes(std::string_view text) {
  std::vector<std::string_view> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t dash = text.find('-', start);
    std::string_view name = text.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start);
    if (!name.empty()) names.push_back(name);
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return names;
}

struct Digit {
  int64_t size;
  int64_t stride;  // stride of the axis in the global rank
};

// The ranks of one group are the mixed-radix numbers over the group's axes
// added to a base formed by the group index over the remaining axes.
int64_t offset_of(int64_t index, const std::vector<Digit>& digits) {
  int64_t offset = 0;
  for (const Digit& d : digits) {
    offset += (index % d.size) * d.stride;
    index /= d.size;
  }
  return offset;
}

}  // namespace

std::string_view rank_order_name(RankOrder order) {
  return order == RankOrder::TpCpEpDpPp ? "tp-cp-ep-dp-pp" : "tp-cp-ep-pp-dp";
}

int64_t RankGrid::world() const {
  int64_t w = 1;
  for (const GridAxis& a : axes) w *= a.size;
  return w;
}

void for_each_group(const RankGrid& grid, std::string_view group_axes,
                    const std::function<void(std::span<const int64_t>)>& visit) {
  std::vector<std::string_view> wanted = split_axes(group_axes);
  std::vector<Digit> inside, outside;
  int64_t stride = 1;
  for (const GridAxis& axis : grid.axes) {
    bool in_group = std::find(wanted.begin(), wanted.end(), axis.name) != wanted.end();
    (in_group ? inside : outside).push_back(Digit{axis.size, stride});
    stride *= axis.size;
  }
  int64_t group_size = 1;
  for (const Digit& d : inside) group_size *= d.size;
  int64_t groups = stride / std::max<int64_t>(group_size, 1);
  std::vector<int64_t> ranks(static_cast<size_t>(group_size));
  for (int64_t g = 0; g < groups; ++g) {
    int64_t base = offset_of(g, outside);
    for (int64_t r = 0; r < group_size; ++r) ranks[static_cast<size_t>(r)] = base + offset_of(r, inside);
    visit(ranks);
  }
}

std::vector<std::vector<int64_t>> rank_groups(const RankGrid& grid, std::string_view group_axes) {
  std::vector<std::vector<int64_t>> groups;
  for_each_group(grid, group_axes, [&](std::span<const int64_t> ranks) {
    groups.emplace_back(ranks.begin(), ranks.end());
  });
  return groups;
}

// The dense grid carries EP as 1 and the expert grid CP as 1: size-1 axes
// change no rank, so they are left out.
RankGrid decoder_grid(int64_t tp, int64_t cp, int64_t dp, int64_t pp, RankOrder order) {
  if (order == RankOrder::TpCpEpDpPp) return RankGrid{{{"tp", tp}, {"cp", cp}, {"dp", dp}, {"pp", pp}}};
  return RankGrid{{{"tp", tp}, {"cp", cp}, {"pp", pp}, {"dp", dp}}};
}

RankGrid expert_grid(int64_t etp, int64_t ep, int64_t edp, int64_t pp, RankOrder order) {
  if (order == RankOrder::TpCpEpDpPp) return RankGrid{{{"tp", etp}, {"ep", ep}, {"dp", edp}, {"pp", pp}}};
  return RankGrid{{{"tp", etp}, {"ep", ep}, {"pp", pp}, {"dp", edp}}};
}

std::optional<RankLayout> make_rank_layout(const ParallelSizes& sizes, std::string* why_not) {
  auto fail = [&](std::string reason) -> std::optional<RankLayout> {
    if (why_not) *why_not = std::move(reason);
    return std::nullopt;
  };
  const ParallelSizes& s = sizes;
  if (s.world < 1 || s.tp < 1 || s.pp < 1 || s.cp < 1 || s.ep < 1 || s.etp < 1) {
    return fail("every parallel size and the world size must be at least 1");
  }
  if (s.world % (s.tp * s.cp * s.pp) != 0) {
    return fail(fmt::format("world size {} is not divisible by TP {} x CP {} x PP {} = {}", s.world, s.tp, s.cp,
                            s.pp, s.tp * s.cp * s.pp));
  }
  if (s.world % (s.etp * s.ep * s.pp) != 0) {
    return fail(fmt::format("world size {} is not divisible by ETP {} x EP {} x PP {} = {}", s.world, s.etp, s.ep,
                            s.pp, s.etp * s.ep * s.pp));
  }
  RankLayout layout;
  layout.sizes = s;
  layout.dp = s.world / (s.tp * s.cp * s.pp);
  layout.edp = s.world / (s.etp * s.ep * s.pp);
  // With pp not last the pipeline stride differs between the grids unless
  // both data-parallel sizes agree; Megatron asserts it.
  if (s.order == RankOrder::TpCpEpPpDp && s.pp > 1 && layout.dp != layout.edp) {
    return fail(fmt::format("with use_tp_pp_dp_mapping and PP {} > 1, Megatron requires the expert data-parallel "
                            "size ({}) to equal the data-parallel size ({})",
                            s.pp, layout.edp, layout.dp));
  }
  layout.decoder = decoder_grid(s.tp, s.cp, layout.dp, s.pp, s.order);
  layout.expert = expert_grid(s.etp, s.ep, layout.edp, s.pp, s.order);
  return layout;
}

namespace {

// Megatron-Core's groups (parallel_state.initialize_model_parallel).
constexpr GroupKind kGroupKinds[] = {
    {"tp", "tensor-parallel", false, "tp"},
    {"cp", "context-parallel", false, "cp"},
    {"dp", "data-parallel (without CP)", false, "dp"},
    {"dp-cp", "data-parallel with CP (gradient reduction)", false, "dp-cp"},
    {"pp", "pipeline-parallel", false, "pp"},
    {"tp-cp", "tensor + context parallel", false, "tp-cp"},
    {"model-parallel", "model-parallel (TP x PP)", false, "tp-pp"},
    {"ep", "expert-parallel", true, "ep"},
    {"etp", "expert tensor-parallel", true, "tp"},
    {"etp-ep", "expert tensor + expert parallel", true, "tp-ep"},
    {"edp", "expert data-parallel", true, "dp"},
    {"expert-model-parallel", "expert model-parallel (ETP x EP x PP)", true, "tp-ep-pp"},
};

}  // namespace

std::span<const GroupKind> group_kinds() { return kGroupKinds; }

const GroupKind* find_group_kind(std::string_view key) {
  for (const GroupKind& kind : kGroupKinds) {
    if (key == kind.key) return &kind;
  }
  return nullptr;
}

const RankGrid& grid_for(const RankLayout& layout, const GroupKind& kind) {
  return kind.expert ? layout.expert : layout.decoder;
}

Crossing count_crossings(const RankGrid& grid, std::string_view group_axes, int64_t block) {
  Crossing c;
  if (block <= 0) return c;
  std::vector<int64_t> blocks;
  for_each_group(grid, group_axes, [&](std::span<const int64_t> ranks) {
    blocks.clear();
    for (int64_t rank : ranks) blocks.push_back(rank / block);
    std::sort(blocks.begin(), blocks.end());
    int64_t distinct = std::unique(blocks.begin(), blocks.end()) - blocks.begin();
    ++c.groups;
    if (distinct > 1) ++c.crossing;
    c.max_blocks = std::max(c.max_blocks, distinct);
  });
  return c;
}

}  // namespace mblint
