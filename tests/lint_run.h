// A whole lint run over files written to a temporary directory, for the unit
// tests of the job builder and the dialects.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "lint/run/lint.h"
#include "rules/registry.h"
#include "tests/test_support.h"

namespace mblint::test {

struct LintRun {
  std::filesystem::path dir;
  SourceSet sources;
  LintOptions options;
  LintResult result;

  explicit LintRun(const std::string& prefix = "mblint-job") : dir(make_temp_dir(prefix)) {
    options.base_dir = dir;
    options.command_line_file = add_source(sources, "<command-line>", "mblint check", true);
  }
  ~LintRun() { std::filesystem::remove_all(dir); }
  LintRun(const LintRun&) = delete;
  LintRun& operator=(const LintRun&) = delete;

  void write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories((dir / name).parent_path());
    std::ofstream(dir / name, std::ios::binary) << text;
  }
  // A command-line value located in the synthetic command-line file.
  CommandLineValue value(const std::string& text) {
    SourceFile& line = sources.files[options.command_line_file];
    uint32_t at = static_cast<uint32_t>(line.text.size() + 1);
    line.text += " " + text;
    line.line_starts = {0};
    return CommandLineValue{text, make_span(options.command_line_file, at, at + text.size())};
  }
  // --nodes and --gpus-per-node, located like any command-line value.
  void set_cluster(const std::string& nodes, const std::string& gpus_per_node) {
    options.nodes = value(nodes);
    options.gpus_per_node = value(gpus_per_node);
  }
  const Job& lint(const std::string& path) {
    options.paths = {path};
    result = run_lint(sources, options, all_rules());
    REQUIRE(result.jobs.size() == 1);
    return result.jobs[0];
  }
  const Derived& derived() const { return result.derived.at(0); }
  std::string text(Span span) const { return sources.files[span.file].text.substr(span.begin, span.end - span.begin); }
  bool fired(std::string_view rule) const {
    for (const Diagnostic& d : result.diagnostics) {
      if (d.rule == rule) return true;
    }
    return false;
  }
  int errors() const {
    int n = 0;
    for (const Diagnostic& d : result.diagnostics) n += d.severity == Severity::Error;
    return n;
  }
};

}  // namespace mblint::test
