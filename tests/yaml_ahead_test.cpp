// Parsing ahead on worker threads must hand back exactly what parsing on the
// caller's thread gives, in order, whatever the number of threads, while the
// caller keeps adding files to the SourceSet (its vector moves as it grows).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lint/load/yaml/config_yaml.h"
#include "lint/load/yaml/yaml_ahead.h"
#include "tests/lint_run.h"

using namespace mblint;
using mblint::test::LintRun;

namespace {

// prefix + i + suffix (GCC 12 warns falsely on `"literal" + std::string`).
std::string numbered(std::string prefix, int i, const char* suffix) {
  prefix.append(std::to_string(i)).append(suffix);
  return prefix;
}

// Config texts of every kind the builder meets: typed per flavour, broken,
// duplicated keys, not UTF-8, empty, anchors and merges.
std::string config_text(int i) {
  switch (i % 9) {
    case 0: return numbered("model:\n  tensor_model_parallel_size: ", i % 8 + 1, "\n  seq_length: 4096\n");
    case 1: return "_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n  fp16: yes\n  x: 0o17\n";
    case 2: return numbered("MODEL_ARGS:\n  --tensor-model-parallel-size: ", i, "\n  --bf16: true\n");
    case 3: return "model: [1, 2\n";
    case 4: return numbered("model:\n  tensor_model_parallel_size: 2\n  tensor_model_parallel_size: ", i, "\n");
    case 5: return std::string("model:\n  name: caf\xC3\xA9\n  bad: \xFF\n");
    case 6: return "";
    case 7: return "base: &b {tensor_model_parallel_size: 4, seq_length: 8192}\nmodel:\n  <<: *b\n  seq_length: 2048\n";
    default: return "a: 1\n---\nb: 2\n";
  }
}

std::vector<std::string> described(const LoadedYaml& yaml) {
  std::vector<std::string> out = {std::to_string(yaml.ok) + std::to_string(yaml.dump) + to_display(yaml.root)};
  std::string path;
  for_each_leaf(yaml.root, path, [&](const std::string& at, const ConfigValue& value) {
    out.push_back(at + "@" + std::to_string(value.where.value.file) + ":" + std::to_string(value.where.value.begin) +
                  "-" + std::to_string(value.where.value.end));
  });
  for (const Diagnostic& d : yaml.problems) {
    out.push_back(d.rule + "|" + d.message + "|" + std::to_string(d.where.file) + ":" +
                  std::to_string(d.where.begin) + "-" + std::to_string(d.where.end));
  }
  return out;
}

}  // namespace

TEST_CASE("parsing ahead on threads hands back each file's own parse, in order", "[threads]") {
  for (unsigned threads : {2u, 3u, 8u}) {
    INFO("threads " << threads);
    SourceSet sources;
    std::vector<FileId> files;
    for (int i = 0; i < 90; ++i) files.push_back(add_source(sources, numbered("c", i, ".yaml"), config_text(i)));
    YamlAhead ahead(sources, files, threads);
    for (size_t i = 0; i < files.size(); ++i) {
      INFO("file " << i);
      LoadedYaml got = ahead.take(i);
      CHECK(described(got) == described(load_config_yaml(sources, files[i], nullptr)));
      // The caller's thread grows the SourceSet between takes, as the job
      // builder does when a config names other files.
      for (int k = 0; k < 7; ++k) add_source(sources, "extra.yaml", std::string(40, 'x'));
    }
  }
}

TEST_CASE("parsing ahead stops cleanly when its owner leaves before taking everything", "[threads]") {
  SourceSet sources;
  std::vector<FileId> files;
  for (int i = 0; i < 200; ++i) files.push_back(add_source(sources, "c.yaml", config_text(i)));
  {
    YamlAhead ahead(sources, files, 4);
    CHECK(described(ahead.take(0)) == described(load_config_yaml(sources, files[0], nullptr)));
  }  // the destructor joins workers that may be mid-parse
}

TEST_CASE("a check of many files reports the same with one thread and with several", "[threads]") {
  auto lint = [](unsigned threads) {
    LintRun run("mblint-threads");
    std::vector<std::string> paths;
    for (int i = 0; i < 60; ++i) {
      run.write(numbered("tree/", i / 10, "/") + numbered("c", i, ".yaml"), config_text(i));
    }
    run.write("tree/launch.sh",
              "#!/bin/bash\ntorchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe "
              "llama3_8b_pretrain_config --config-file tree/0/c0.yaml\n");
    run.options.paths = {"tree", "tree/1/c13.yaml"};
    run.options.keep_jobs = false;
    run.options.threads = threads;
    run.result = run_lint(run.sources, run.options, all_rules());
    std::vector<std::string> out;
    for (const Diagnostic& d : run.result.diagnostics) {
      out.push_back(d.rule + "|" + d.message + "|" + run.sources.files[d.where.file].path + ":" +
                    std::to_string(d.where.begin) + "|notes " + std::to_string(d.notes.size()));
    }
    out.push_back(numbered("files ", static_cast<int>(run.result.files_checked), ""));
    return out;
  };
  std::vector<std::string> one = lint(1);
  CHECK(one.size() > 20);
  CHECK(lint(2) == one);
  CHECK(lint(5) == one);
}
