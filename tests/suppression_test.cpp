// Inline suppressions: the comment scanners, the parser, and the post-processing
// step end to end (what is hidden, what is reported about suppressions).
#include <catch2/catch.hpp>

#include "lint/engine/suppression.h"
#include "rules/registry.h"
#include "tests/gate_support.h"

using namespace mblint;
using mblint::test::run_mblint;
using mblint::test::ScratchDir;

namespace {

std::vector<std::string> comment_texts(std::string_view text, CommentSyntax syntax) {
  std::vector<std::string> out;
  for (const Comment& c : scan_comments(text, syntax)) out.emplace_back(text.substr(c.begin, c.end - c.begin));
  return out;
}

// The cp-seq-length-divisibility example: seq_length 8190 with CP = 2 (an error on line 7).
std::string launch(const std::string& seq_line_suffix) {
  std::string text =
      "#!/bin/bash\n#SBATCH --nodes=1\n"
      "CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
      "    --recipe llama3_8b_pretrain_config \\\n    model.context_parallel_size=2 \\\n"
      "    dataset.seq_length=8190";
  text += seq_line_suffix;
  text += "\n";
  return text;
}

// The unknown-key example: a warning on line 2.
const std::vector<std::string> kYamlArgs = {"check", "override.yaml", "--recipe", "qwen3_8b_pretrain_config",
                                            "--nodes", "1", "--gpus-per-node", "8"};

}  // namespace

TEST_CASE("shell comments: quotes, expansions, escapes and here-documents are no comments", "[suppression]") {
  std::string script =
      "#!/bin/bash\n"
      "echo \"a # b\" 'c # d' $'e \\' # f' # one\n"
      "n=${#x} m=$# p=a#b \\# q  # two\n"
      "cat <<EOF\n# not a comment\nEOF\n"
      "cat <<-'END'\n\t# nor this\n\tEND\n"
      "x=1;# three\n";
  CHECK(comment_texts(script, CommentSyntax::Shell) ==
        std::vector<std::string>{"#!/bin/bash", "# one", "# two", "# three"});
  std::vector<Comment> comments = scan_comments(script, CommentSyntax::Shell);
  CHECK(comments[0].alone);
  CHECK_FALSE(comments[1].alone);
  CHECK(comments[1].line == 2);
  CHECK(comments[3].line == 10);
}

TEST_CASE("YAML comments: quoted scalars, apostrophes and block scalars", "[suppression]") {
  std::string yaml =
      "a: \"x # y\"  # one\n"
      "b: 'it''s # z'  # two\n"
      "c: don't # three\n"
      "d: url#frag\n"
      "e: |\n  # body, not a comment\n  more\n"
      "f: >-\n    # folded body\n"
      "g: [\"h # i\", 'j'] # four\n"
      "  # five\n";
  CHECK(comment_texts(yaml, CommentSyntax::Yaml) ==
        std::vector<std::string>{"# one", "# two", "# three", "# four", "# five"});
  CHECK(scan_comments(yaml, CommentSyntax::Yaml).back().alone);
}

TEST_CASE("parsing suppressions: names, codes, reasons, unknown names, file-wide, the line above", "[suppression]") {
  SourceSet sources;
  std::string text =
      "model:\n"
      "  # mblint: disable=MB401, unknown-kye -- why\n"
      "  # another comment\n"
      "\n"
      "  tensor_model_parallel_size: 4  # mblint: disable=unknown-key\n"
      "# mblint: disable-file=pipeline-bubble -- team decision\n"
      "# mblint: enable=foo\n";
  FileId id = add_source(sources, "x.yaml", text);
  std::vector<Suppression> found = find_suppressions(sources.files[id], id, all_rules());
  REQUIRE(found.size() == 4);
  CHECK(found[0].target_line == 5);  // skips the comment and the blank line
  REQUIRE(found[0].rules.size() == 2);
  CHECK(found[0].rules[0].rule->name == "cp-seq-length-divisibility");
  CHECK(found[0].rules[1].rule == nullptr);
  CHECK(found[0].reason == "why");
  Span name = found[0].rules[1].where;
  CHECK(text.substr(name.begin, name.end - name.begin) == "unknown-kye");
  CHECK(found[1].target_line == 5);
  CHECK(found[1].reason.empty());
  CHECK(found[2].file_wide);
  CHECK(found[2].reason == "team decision");
  CHECK(found[3].malformed);
}

TEST_CASE("a suppression with a reason hides an error at the end of its line", "[suppression]") {
  ScratchDir dir("mblint-suppress");
  dir.write("launch.sh", launch(""));
  auto before = run_mblint({"check", "launch.sh"}, dir.path);
  REQUIRE(before.code == 1);
  REQUIRE(before.out.find("[cp-seq-length-divisibility]") != std::string::npos);

  dir.write("launch.sh", launch("  # mblint: disable=cp-seq-length-divisibility -- padded by our collator"));
  auto after = run_mblint({"check", "launch.sh"}, dir.path);
  CHECK(after.code == 0);
  CHECK(after.out == "mblint: no problems found in 1 file; 1 job checked\n");

  dir.write("launch.sh", launch("  # mblint: disable=MB401 -- by code"));
  CHECK(run_mblint({"check", "launch.sh"}, dir.path).code == 0);
}

TEST_CASE("in a launch script, a suppression above a command covers its continuation lines", "[suppression]") {
  ScratchDir dir("mblint-suppress");
  std::string script = launch("");
  size_t command = script.find("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun");
  script.insert(command, "# mblint: disable=cp-seq-length-divisibility -- padded by our collator\n");
  dir.write("launch.sh", script);
  auto run = run_mblint({"check", "launch.sh"}, dir.path);
  CHECK(run.code == 0);
  CHECK(run.out == "mblint: no problems found in 1 file; 1 job checked\n");

  // The range: the command's first line to its last continuation line (shell
  // only; in YAML just the next line).
  SourceSet sources;
  std::string above = "# mblint: disable=MB401 -- r\n";
  FileId id;
  std::vector<Suppression> found;
  id = add_source(sources, "launch2.sh", std::string(above) + "a \\\n  b \\\n  c\nd\n");
  found = find_suppressions(sources.files[id], id, all_rules());
  REQUIRE(found.size() == 1);
  CHECK(found[0].target_line == 2);
  CHECK(found[0].target_end_line == 4);
  id = add_source(sources, "conf.yaml", std::string(above) + "a: 1\nb: 2\n");
  found = find_suppressions(sources.files[id], id, all_rules());
  REQUIRE(found.size() == 1);
  CHECK(found[0].target_end_line == 2);
}

TEST_CASE("an error suppressed without a reason stays, and the suppression is reported", "[suppression]") {
  ScratchDir dir("mblint-suppress");
  dir.write("launch.sh", launch("  # mblint: disable=cp-seq-length-divisibility"));
  auto run = run_mblint({"check", "launch.sh"}, dir.path);
  CHECK(run.code == 1);
  CHECK(run.out.find("launch.sh:6:5: error:") != std::string::npos);
  CHECK(run.out.find("launch.sh:6:48: warning: cp-seq-length-divisibility reports an error") != std::string::npos);
  CHECK(run.out.find("[suppression-without-reason]") != std::string::npos);
  CHECK(run.out.find("[unused-suppression]") == std::string::npos);
}

TEST_CASE("warnings need no reason; the line above; disable-file; unused and unknown names", "[suppression]") {
  ScratchDir dir("mblint-suppress");
  dir.write("override.yaml", "optimizer:\n  finetune_lr: 0.000005  # mblint: disable=unknown-key\n");
  CHECK(run_mblint(kYamlArgs, dir.path).code == 0);
  CHECK(run_mblint(kYamlArgs, dir.path).out == "mblint: no problems found in 1 file; 1 job checked\n");

  dir.write("override.yaml", "optimizer:\n  # mblint: disable=unknown-key -- a recipe argument\n  finetune_lr: 0.000005\n");
  CHECK(run_mblint(kYamlArgs, dir.path).out == "mblint: no problems found in 1 file; 1 job checked\n");

  dir.write("override.yaml", "# mblint: disable-file=MB010 -- whole file\noptimizer:\n  finetune_lr: 0.000005\n");
  CHECK(run_mblint(kYamlArgs, dir.path).out == "mblint: no problems found in 1 file; 1 job checked\n");

  // On another line it hides nothing: the finding stays and the suppression is unused.
  dir.write("override.yaml", "optimizer:  # mblint: disable=unknown-key,unknwn-key\n  finetune_lr: 0.000005\n");
  auto run = run_mblint(kYamlArgs, dir.path);
  CHECK(run.out.find("override.yaml:2:3: warning:") != std::string::npos);
  CHECK(run.out.find("override.yaml:1:31: warning: suppression of unknown-key matches no finding on line 1 "
                     "[unused-suppression]") != std::string::npos);
  CHECK(run.out.find("override.yaml:1:43: warning: 'unknwn-key' is not an mblint rule") != std::string::npos);
  CHECK(run.out.find("help: did you mean unknown-key?") != std::string::npos);

  // A '#' inside a quoted scalar is no suppression.
  dir.write("override.yaml", "optimizer:\n  finetune_lr: 0.000005\nlogger:\n  wandb_exp_name: \"x # mblint: disable=unknown-key\"\n");
  CHECK(run_mblint(kYamlArgs, dir.path).out.find("[unknown-key]") != std::string::npos);
}

TEST_CASE("findings about suppressions can be suppressed themselves", "[suppression]") {
  ScratchDir dir("mblint-suppress");
  dir.write("override.yaml",
            "# mblint: disable-file=unused-suppression -- shared by several jobs\n"
            "optimizer:\n  lr: 0.0001  # mblint: disable=unknown-key\n");
  auto run = run_mblint(kYamlArgs, dir.path);
  CHECK(run.out == "mblint: no problems found in 1 file; 1 job checked\n");
}
