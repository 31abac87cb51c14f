// Benchmark: how long one memory estimate and one fix search take.
//   cmake --build build --target bench_estimate
//   build/bench_estimate FILE [job options]   (e.g. fixtures/rules/estimated-oom/fires-7b-tp1-no-distributed-optimizer/model_config.yaml --nodes 1 --gpus-per-node 8 --gpu h100)
#include <chrono>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "lint/command_line/command_line.h"
#include "lint/facts/estimate.h"
#include "lint/run/lint.h"
#include "rules/registry.h"

using namespace mblint;

namespace {

template <typename F>
double per_call_us(int iterations, F&& call) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) call();
  std::chrono::duration<double, std::micro> spent = std::chrono::steady_clock::now() - start;
  return spent.count() / iterations;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_estimate FILE [--nodes N --gpus-per-node G --gpu TYPE ...]\n";
    return 2;
  }
  std::vector<std::string> args = {"check"};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::ostringstream out, err;
  CliEnvironment env{out, err, false, {}, std::filesystem::current_path()};
  SourceSet sources;
  CommandLine line = add_command_line(sources, args);
  LintOptions options;
  options.paths = {argv[1]};
  if (read_job_options(args, line, env, options)) {
    std::cerr << err.str();
    return 2;
  }
  LintResult result = run_lint(sources, options, all_rules());
  if (result.jobs.empty()) {
    std::cerr << "no job in " << argv[1] << "\n";
    return 1;
  }
  const Job& job = result.jobs.front();
  const Derived& derived = result.derived.front();
  std::string why;
  auto e = estimate_memory(job, derived, &why);
  if (!e) {
    std::cerr << "cannot estimate: " << why << "\n";
    return 1;
  }
  double estimate_us = per_call_us(20000, [&] { (void)estimate_memory(job, derived); });
  Derived rederived;
  double derive_us = per_call_us(2000, [&] { rederived = derive(job); });
  const RuleInfo* oom = find_rule(all_rules(), "estimated-oom");
  Thresholds thresholds;
  RuleContext context{job, derived, thresholds};
  std::vector<Diagnostic> found;
  double check_us = per_call_us(50, [&] {
    found.clear();
    oom->check(context, found);
  });
  size_t fixes = found.empty() ? 0 : found.front().fixes.size();
  std::cout << fmt::format("estimate: {:.1f} GiB of {:.1f} GiB\n", e->total, e->capacity);
  std::cout << fmt::format("one estimate (read + model):       {:8.2f} us\n", estimate_us);
  std::cout << fmt::format("derive (per candidate job):        {:8.2f} us\n", derive_us);
  std::cout << fmt::format("estimated-oom check + fix search:  {:8.2f} ms ({} finding, {} fixes offered)\n",
                           check_us / 1000, found.size(), fixes);
  return 0;
}
