// Rank groups against Megatron-Core's RankGenerator semantics: expected
// lists worked out by hand from the algorithm (rank = sum of index x stride,
// first axis fastest; group index over the other axes, first fastest).
#include <catch2/catch.hpp>

#include <algorithm>

#include "lint/facts/rank_layout.h"

using namespace mblint;
using Groups = std::vector<std::vector<int64_t>>;

namespace {

RankLayout layout_of(ParallelSizes sizes) {
  std::string why;
  auto layout = make_rank_layout(sizes, &why);
  INFO(why);
  REQUIRE(layout.has_value());
  return *layout;
}

Groups groups(const RankLayout& layout, std::string_view key) {
  const GroupKind* kind = find_group_kind(key);
  REQUIRE(kind != nullptr);
  return rank_groups(grid_for(layout, *kind), kind->axes);
}

}  // namespace

TEST_CASE("Megatron's documented examples of the masked orthogonal groups", "[layout]") {
  // parallel_size [tp 2, dp 3, pp 4], mask dp: dp_group[0] = [0, 2, 4],
  // dp_group[1] = [1, 3, 5], dp_group[7] = [19, 21, 23].
  RankGrid grid{{{"tp", 2}, {"dp", 3}, {"pp", 4}}};
  Groups dp = rank_groups(grid, "dp");
  REQUIRE(dp.size() == 8);
  CHECK(dp[0] == std::vector<int64_t>{0, 2, 4});
  CHECK(dp[1] == std::vector<int64_t>{1, 3, 5});
  CHECK(dp[7] == std::vector<int64_t>{19, 21, 23});
  // order tp-pp-dp, sizes 2-2-2: dp groups [[0,4],[1,5],[2,6],[3,7]].
  RankLayout l = layout_of({.world = 8, .tp = 2, .pp = 2, .etp = 2, .order = RankOrder::TpCpEpPpDp});
  CHECK(groups(l, "dp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
}

TEST_CASE("world 16, TP 2, CP 2, PP 2 in the default order tp-cp-ep-dp-pp", "[layout]") {
  RankLayout l = layout_of({.world = 16, .tp = 2, .pp = 2, .cp = 2});
  CHECK(l.dp == 2);
  CHECK(groups(l, "tp") == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(groups(l, "cp") == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(groups(l, "dp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
  CHECK(groups(l, "pp") == Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  CHECK(groups(l, "dp-cp") == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}});
  CHECK(groups(l, "model-parallel") == Groups{{0, 1, 8, 9}, {2, 3, 10, 11}, {4, 5, 12, 13}, {6, 7, 14, 15}});
  CHECK(groups(l, "tp-cp") == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
}

TEST_CASE("world 16, TP 2, CP 2, PP 2, EP 2, ETP 2 with use_tp_pp_dp_mapping (tp-cp-ep-pp-dp)", "[layout]") {
  RankLayout l = layout_of({.world = 16, .tp = 2, .pp = 2, .cp = 2, .ep = 2, .etp = 2, .order = RankOrder::TpCpEpPpDp});
  CHECK(rank_groups(l.expert, "pp") == groups(l, "pp"));
  CHECK(groups(l, "pp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
  CHECK(groups(l, "dp") == Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  CHECK(groups(l, "tp")[1] == std::vector<int64_t>{2, 3});
}

TEST_CASE("the expert grid folds CP into expert DP", "[layout]") {
  // world 16, TP 2, CP 2, PP 2, EP 4, ETP 1: EDP = 16 / (1 x 4 x 2) = 2.
  RankLayout l = layout_of({.world = 16, .tp = 2, .pp = 2, .cp = 2, .ep = 4, .etp = 1});
  CHECK(l.edp == 2);
  CHECK(groups(l, "ep") == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(groups(l, "edp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
  CHECK(groups(l, "etp").size() == 16);
  CHECK(groups(l, "expert-model-parallel") ==
        Groups{{0, 1, 2, 3, 8, 9, 10, 11}, {4, 5, 6, 7, 12, 13, 14, 15}});
}

TEST_CASE("uneven sizes: world 24, TP 2, PP 2, EP 3, ETP 2", "[layout]") {
  RankLayout l = layout_of({.world = 24, .tp = 2, .pp = 2, .ep = 3, .etp = 2});
  CHECK(l.dp == 6);
  CHECK(l.edp == 2);
  CHECK(groups(l, "ep") == Groups{{0, 2, 4}, {1, 3, 5}, {6, 8, 10}, {7, 9, 11},
                                  {12, 14, 16}, {13, 15, 17}, {18, 20, 22}, {19, 21, 23}});
  CHECK(groups(l, "etp")[0] == std::vector<int64_t>{0, 1});
  CHECK(groups(l, "etp-ep")[1] == std::vector<int64_t>{6, 7, 8, 9, 10, 11});
  // Megatron asserts that both grids give the same pipeline groups.
  CHECK(groups(l, "pp") == rank_groups(l.expert, "pp"));
  CHECK(groups(l, "pp")[11] == std::vector<int64_t>{11, 23});
}

TEST_CASE("uneven sizes: world 12, TP 3, CP 2", "[layout]") {
  RankLayout l = layout_of({.world = 12, .tp = 3, .cp = 2});
  CHECK(groups(l, "tp") == Groups{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}});
  CHECK(groups(l, "cp") == Groups{{0, 3}, {1, 4}, {2, 5}, {6, 9}, {7, 10}, {8, 11}});
  CHECK(groups(l, "dp") == Groups{{0, 6}, {1, 7}, {2, 8}, {3, 9}, {4, 10}, {5, 11}});
}

TEST_CASE("pipeline groups agree between the grids for pp-last and dp-last orders", "[layout]") {
  for (RankOrder order : {RankOrder::TpCpEpDpPp, RankOrder::TpCpEpPpDp}) {
    for (ParallelSizes s : {ParallelSizes{.world = 64, .tp = 2, .pp = 4, .cp = 2, .ep = 8, .etp = 1},
                            ParallelSizes{.world = 48, .tp = 4, .pp = 2, .cp = 1, .ep = 6, .etp = 2},
                            ParallelSizes{.world = 32, .tp = 1, .pp = 2, .cp = 4, .ep = 16, .etp = 1},
                            ParallelSizes{.world = 32, .tp = 2, .pp = 2, .cp = 2, .ep = 4, .etp = 1}}) {
      s.order = order;
      INFO("order " << rank_order_name(order) << " world " << s.world);
      bool equal_dp = s.world / (s.tp * s.cp * s.pp) == s.world / (s.etp * s.ep * s.pp);
      if (order == RankOrder::TpCpEpPpDp && !equal_dp) {
        // Megatron asserts EDP == DP when pp is not the last axis and PP > 1.
        CHECK_FALSE(make_rank_layout(s));
        continue;
      }
      RankLayout l = layout_of(s);
      CHECK(rank_groups(l.decoder, "pp") == rank_groups(l.expert, "pp"));
      // Every kind partitions the ranks.
      for (const GroupKind& kind : group_kinds()) {
        std::vector<int> seen(static_cast<size_t>(s.world), 0);
        for (const auto& g : rank_groups(grid_for(l, kind), kind.axes)) {
          for (int64_t r : g) seen[static_cast<size_t>(r)]++;
        }
        INFO("group " << kind.key);
        CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
      }
    }
  }
}

TEST_CASE("sizes Megatron refuses give no layout, with the reason", "[layout]") {
  std::string why;
  CHECK_FALSE(make_rank_layout({.world = 12, .tp = 8}, &why));
  CHECK(why == "world size 12 is not divisible by TP 8 x CP 1 x PP 1 = 8");
  CHECK_FALSE(make_rank_layout({.world = 16, .tp = 2, .ep = 3}, &why));
  CHECK(why == "world size 16 is not divisible by ETP 1 x EP 3 x PP 1 = 3");
  CHECK_FALSE(make_rank_layout({.world = 0}, &why));
  // A dense model (ETP = TP) with CP 2 and pp not last: expert DP 4 != DP 2.
  CHECK_FALSE(make_rank_layout({.world = 16, .tp = 2, .pp = 2, .cp = 2, .etp = 2, .order = RankOrder::TpCpEpPpDp}, &why));
  CHECK(why.find("expert data-parallel size (4) to equal the data-parallel size (2)") != std::string::npos);
}

TEST_CASE("crossings count groups that span more than one block of ranks", "[layout]") {
  RankLayout l = layout_of({.world = 24, .tp = 3});
  Crossing c = count_crossings(l.decoder, "tp", 8);
  CHECK(c.groups == 8);
  CHECK(c.crossing == 2);  // [6, 7, 8] and [15, 16, 17]
  CHECK(c.max_blocks == 2);
  RankLayout e = layout_of({.world = 32, .ep = 16, .etp = 1});
  Crossing ec = count_crossings(e.expert, "ep", 8);
  CHECK(ec.groups == 2);
  CHECK(ec.crossing == 2);
  CHECK(ec.max_blocks == 2);
  CHECK(count_crossings(e.decoder, "tp", 8).crossing == 0);
}

TEST_CASE("groups match the coordinate definition on a table of uneven configurations", "[layout]") {
  // Oracle: a rank's coordinate on axis i is (rank / stride_i) % size_i;
  // two ranks share a group when every coordinate outside the group's axes
  // is equal. Checked as partitions (Megatron's order is checked above).
  std::vector<ParallelSizes> table = {
      {.world = 24, .tp = 3, .pp = 2, .cp = 1, .ep = 4, .etp = 1},
      {.world = 36, .tp = 3, .pp = 3, .cp = 2, .ep = 6, .etp = 2},
      {.world = 60, .tp = 5, .pp = 2, .cp = 3, .ep = 10, .etp = 1},
      {.world = 48, .tp = 2, .pp = 4, .cp = 3, .ep = 3, .etp = 4},
      {.world = 90, .tp = 3, .pp = 5, .cp = 1, .ep = 6, .etp = 3},
      {.world = 16, .tp = 2, .pp = 2, .cp = 2, .ep = 2, .etp = 2, .order = RankOrder::TpCpEpPpDp},
      {.world = 72, .tp = 3, .pp = 2, .cp = 2, .ep = 3, .etp = 2, .order = RankOrder::TpCpEpPpDp},
  };
  for (const ParallelSizes& s : table) {
    auto layout = make_rank_layout(s);
    INFO("world " << s.world << " tp " << s.tp << " pp " << s.pp << " cp " << s.cp << " ep " << s.ep << " etp "
                  << s.etp << " order " << rank_order_name(s.order));
    REQUIRE(layout.has_value());
    for (const GroupKind& kind : group_kinds()) {
      const RankGrid& grid = grid_for(*layout, kind);
      std::string axes = kind.axes;
      auto coordinates_outside = [&](int64_t rank) {
        std::vector<int64_t> key;
        int64_t stride = 1;
        for (const GridAxis& a : grid.axes) {
          bool inside = ("-" + axes + "-").find("-" + a.name + "-") != std::string::npos;
          if (!inside) key.push_back((rank / stride) % a.size);
          stride *= a.size;
        }
        return key;
      };
      INFO("group " << kind.key);
      for (const auto& group : rank_groups(grid, kind.axes)) {
        // Same outside coordinates inside a group...
        for (int64_t r : group) CHECK(coordinates_outside(r) == coordinates_outside(group.front()));
        // ...and the group holds every rank with them.
        int64_t expected = 0;
        for (int64_t r = 0; r < s.world; ++r) expected += coordinates_outside(r) == coordinates_outside(group.front());
        CHECK(static_cast<int64_t>(group.size()) == expected);
      }
    }
  }
}
