#include "lint/resolve/job_alternatives.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace mblint {

namespace {

bool same_program(const Launch& a, const Launch& b) {
  auto text = [](const std::optional<MappedString>& word) { return word ? word->text : std::string(); };
  return a.entry == b.entry && a.reads == b.reads && a.wrapper == b.wrapper && a.program.text == b.program.text &&
         text(a.recipe) == text(b.recipe);
}

// The launches of one fork, per arm in order.
std::vector<std::vector<const Launch*>> arms_of(const std::vector<Launch>& launches, uint32_t group, uint32_t arms) {
  std::vector<std::vector<const Launch*>> per_arm(arms);
  for (const Launch& launch : launches) {
    if (launch.fork_group == group && launch.fork_arm < arms) per_arm[launch.fork_arm].push_back(&launch);
  }
  return per_arm;
}

// Every arm runs the same programs in the same order.
bool aligned(const std::vector<std::vector<const Launch*>>& per_arm) {
  const std::vector<const Launch*>& first = per_arm.front();
  if (first.empty()) return false;
  return std::all_of(per_arm.begin(), per_arm.end(), [&](const std::vector<const Launch*>& arm) {
    if (arm.size() != first.size()) return false;
    for (size_t i = 0; i < arm.size(); ++i) {
      if (!same_program(*arm[i], *first[i])) return false;
    }
    return true;
  });
}

void add_fork(const std::vector<Launch>& launches, uint32_t group, uint32_t arms, std::vector<LaunchUnit>& units) {
  std::vector<std::vector<const Launch*>> per_arm = arms_of(launches, group, arms);
  if (!per_arm.empty() && aligned(per_arm)) {
    for (size_t i = 0; i < per_arm.front().size(); ++i) {
      LaunchUnit unit;
      unit.certain = per_arm.front()[i]->certain;
      for (const std::vector<const Launch*>& arm : per_arm) unit.arms.push_back(arm[i]);
      units.push_back(std::move(unit));
    }
    return;
  }
  for (const Launch& launch : launches) {
    if (launch.fork_group == group) units.push_back(LaunchUnit{{&launch}, false});
  }
}

bool agree(const ConfigValue& a, const ConfigValue& b) {
  return a.kind == b.kind && to_display(a) == to_display(b);
}

ConfigValue disagreement(const ConfigValue& mine, const ConfigValue* theirs, const Provenance& where) {
  return make_unknown(fmt::format("{} or {}", to_display(mine), theirs ? to_display(*theirs) : "unset"), where);
}

void keep_agreed_value(ConfigValue& mine, const ConfigValue* theirs) {
  if (mine.is_map() && theirs && theirs->is_map()) {
    for (MapEntry& entry : mine.entries) keep_agreed_value(entry.value, find_child(*theirs, entry.key));
    for (const MapEntry& entry : theirs->entries) {
      if (find_child(mine, entry.key)) continue;
      mine.entries.push_back(MapEntry{entry.key, make_unknown(fmt::format("unset or {}", to_display(entry.value)),
                                                              entry.value.where)});
    }
    return;
  }
  if (theirs && agree(mine, *theirs)) return;
  mine = disagreement(mine, theirs, mine.where);
}

void keep_agreed_count(LocatedInt& mine, const LocatedInt& theirs) {
  if (mine.value == theirs.value) return;
  if (mine.value && theirs.value) {
    mine.unknown_because = fmt::format("it is {} or {}, set by branches mblint cannot decide", *mine.value,
                                       *theirs.value);
  } else if (mine.value) {
    mine.unknown_because = theirs.unknown_because;
  }
  mine.value.reset();
}

void keep_agreed_cluster(Cluster& mine, const Cluster& theirs) {
  keep_agreed_count(mine.nodes, theirs.nodes);
  keep_agreed_count(mine.gpus_per_node, theirs.gpus_per_node);
  keep_agreed_count(mine.world_size, theirs.world_size);
  if (mine.gpu != theirs.gpu) mine.gpu.clear();
  LauncherRequests& requests = mine.requests;
  const LauncherRequests& other = theirs.requests;
  for (auto member : {&LauncherRequests::torchrun_nnodes, &LauncherRequests::torchrun_nproc_per_node,
                      &LauncherRequests::slurm_nodes, &LauncherRequests::slurm_ntasks,
                      &LauncherRequests::slurm_ntasks_per_node, &LauncherRequests::slurm_gpus_per_node}) {
    keep_agreed_count(requests.*member, other.*member);
  }
}

void keep_agreed_env(std::vector<EnvSetting>& mine, const std::vector<EnvSetting>& theirs) {
  for (EnvSetting& setting : mine) {
    auto other = std::find_if(theirs.begin(), theirs.end(), [&](const EnvSetting& e) { return e.name == setting.name; });
    if (other == theirs.end() || other->value != setting.value) setting.value.reset();
  }
  for (const EnvSetting& setting : theirs) {
    bool known = std::any_of(mine.begin(), mine.end(), [&](const EnvSetting& e) { return e.name == setting.name; });
    if (!known) mine.push_back(EnvSetting{setting.name, std::nullopt, setting.where});
  }
}

template <typename T, typename Same>
void join(std::vector<T>& mine, const std::vector<T>& theirs, Same same) {
  for (const T& item : theirs) {
    if (std::none_of(mine.begin(), mine.end(), [&](const T& m) { return same(m, item); })) mine.push_back(item);
  }
}

}  // namespace

std::vector<LaunchUnit> launch_units(const std::vector<Launch>& launches,
                                     const std::map<uint32_t, uint32_t>& fork_arms) {
  std::vector<LaunchUnit> units;
  std::vector<uint32_t> done;
  for (const Launch& launch : launches) {
    if (launch.fork_group == 0) {
      units.push_back(LaunchUnit{{&launch}, launch.certain});
      continue;
    }
    if (std::find(done.begin(), done.end(), launch.fork_group) != done.end()) continue;
    done.push_back(launch.fork_group);
    auto arms = fork_arms.find(launch.fork_group);
    add_fork(launches, launch.fork_group, arms == fork_arms.end() ? 0 : arms->second, units);
  }
  return units;
}

void keep_agreed(Job& job, const Job& other) {
  keep_agreed_value(job.config, &other.config);
  keep_agreed_cluster(job.cluster, other.cluster);
  keep_agreed_env(job.env, other.env);
  join(job.files, other.files, [](FileId a, FileId b) { return a == b; });
  auto same_diagnostic = [](const Diagnostic& a, const Diagnostic& b) {
    return a.rule == b.rule && a.where == b.where && a.message == b.message;
  };
  join(job.problems, other.problems, same_diagnostic);
  join(job.bridge_problems, other.bridge_problems, same_diagnostic);
  join(job.unresolved, other.unresolved, [](const Unresolved& a, const Unresolved& b) {
    return a.what == b.what && a.why == b.why && a.where == b.where;
  });
}

}  // namespace mblint
