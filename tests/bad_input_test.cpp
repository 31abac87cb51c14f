// Hostile input never crashes or hangs mblint: each case ends with a clear,
// located diagnostic (or silence) and a normal exit code.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

#include <fmt/format.h>

#include "lint/base/file_reader.h"
#include "lint/cli/cli.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

using Result = test::CliRun;

class Scratch {
 public:
  Scratch() {
    dir_ = test::make_temp_dir("mblint-bad");
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }

  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  Result check(std::vector<std::string> args) const {
    args.insert(args.begin(), "check");
    return test::run_mblint(args, dir_);
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

bool mentions(const Result& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

}  // namespace

TEST_CASE("empty files are empty configs and empty scripts", "[bad-input]") {
  Scratch s;
  s.write("empty.yaml", "");
  s.write("empty.sh", "");
  CHECK(s.check({"empty.yaml"}).code == 0);
  CHECK(s.check({"empty.sh"}).code == 0);
}

TEST_CASE("a binary file is reported, not parsed", "[bad-input]") {
  Scratch s;
  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes += static_cast<char>((i * 7919) & 0xFF);
  s.write("model.yaml", bytes);
  Result r = s.check({"model.yaml"});
  CHECK(r.code == 1);
  CHECK(mentions(r, "is a binary file"));
  CHECK(mentions(r, "[unreadable-file]"));
}

TEST_CASE("invalid UTF-8 in YAML is located at the first bad byte", "[bad-input]") {
  Scratch s;
  s.write("bad.yaml", "model:\n  name: caf\xe9\n");
  Result r = s.check({"bad.yaml"});
  CHECK(r.code == 1);
  CHECK(mentions(r, "bad.yaml:2:12: error: invalid UTF-8"));
  s.write("bad.sh", "#!/bin/bash\necho caf\xe9\n");
  CHECK(s.check({"bad.sh"}).code == 0);  // bash does not care
}

TEST_CASE("the first invalid UTF-8 byte is found at every offset", "[bad-input]") {
  // The scan skips ASCII eight bytes at a time: put the bad byte, and valid
  // multi-byte characters, at every position around those words.
  for (size_t at = 0; at < 40; ++at) {
    std::string text(48, 'a');
    text[at] = '\xe9';
    INFO("bad byte at " << at);
    CHECK(first_invalid_utf8(text) == at);
    std::string valid(48, 'a');
    const char rocket[] = "\xf0\x9f\x9a\x80";  // a 4-byte character
    std::copy(rocket, rocket + 4, valid.begin() + static_cast<std::ptrdiff_t>(at));
    CHECK_FALSE(first_invalid_utf8(valid).has_value());
    valid[at + 3] = 'a';  // cut short by the text that follows
    CHECK(first_invalid_utf8(valid) == at);
  }
  std::string cut(47, 'a');
  CHECK(first_invalid_utf8(cut.append("\xc3")) == 47);
  std::string whole(46, 'a');
  CHECK_FALSE(first_invalid_utf8(whole.append("\xc3\xa9")).has_value());
}

TEST_CASE("a FIFO named as a config is read without waiting for a writer", "[bad-input]") {
  // Opening a FIFO blocks until something writes to it; mblint must not hang.
  Scratch s;
  REQUIRE(::mkfifo((s.dir() / "pipe.yaml").c_str(), 0600) == 0);
  Result r = s.check({"pipe.yaml"});
  CHECK(r.code == 0);  // nothing written: an empty config
}

TEST_CASE("a 100 MB file is refused without being read", "[bad-input]") {
  Scratch s;
  {
    std::ofstream out(s.dir() / "huge.yaml", std::ios::binary);
    std::string line = "key_padding_padding_padding: value_padding_padding_padding_padding_padding\n";
    for (size_t written = 0; written < (100u << 20); written += line.size()) out << line;
  }
  Result r = s.check({"huge.yaml"});
  CHECK(r.code == 1);
  CHECK(mentions(r, "mblint reads files up to 8 MiB"));
}

TEST_CASE("10,000-deep nesting is a located diagnostic", "[bad-input]") {
  Scratch s;
  s.write("flow.yaml", "model: " + std::string(10000, '[') + std::string(10000, ']') + "\n");
  std::string deep_map;
  for (int i = 0; i < 10000; ++i) deep_map += "{a: ";
  deep_map.append("1").append(10000, '}').append("\n");
  s.write("map.yaml", "model: " + deep_map);
  for (const char* name : {"flow.yaml", "map.yaml"}) {
    INFO(name);
    Result r = s.check({name});
    CHECK(r.code == 1);
    CHECK(mentions(r, "[yaml-syntax]"));
  }
  std::string script = "#!/bin/bash\n";
  for (int i = 0; i < 10000; ++i) script += "( { ";
  s.write("deep.sh", script + "\n");
  Result r = s.check({"deep.sh"});
  CHECK(r.code == 1);
  CHECK(mentions(r, "[script-syntax]"));
}

TEST_CASE("a YAML alias bomb stops at the node limit", "[bad-input]") {
  Scratch s;
  std::string text = "a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n";
  const char* names = "abcdefghi";
  for (int i = 1; i < 9; ++i) {
    std::string previous(1, names[i - 1]);
    text += std::string(1, names[i]) + ": &" + names[i] + " [";
    for (int k = 0; k < 9; ++k) text += (k ? ", *" : "*") + previous;
    text += "]\n";
  }
  s.write("bomb.yaml", "model:\n  x: 1\n" + text);
  Result r = s.check({"bomb.yaml"});
  CHECK(r.code == 1);
  CHECK(mentions(r, "expands to more than"));
}

TEST_CASE("unterminated quotes and continuations in scripts are located", "[bad-input]") {
  Scratch s;
  s.write("quote.sh", "#!/bin/bash\nexport A=\"unterminated\ntorchrun --nproc-per-node 8 x.py\n");
  Result quote = s.check({"quote.sh"});
  CHECK(quote.code == 1);
  CHECK(mentions(quote, "quote.sh:2:10: error: unterminated double quote [script-syntax]"));
  s.write("single.sh", "#!/bin/bash\necho 'never closed\n");
  CHECK(mentions(s.check({"single.sh"}), "single.sh:2:6: error: unterminated single quote"));
  s.write("subst.sh", "#!/bin/bash\nX=$(hostname\n");
  CHECK(mentions(s.check({"subst.sh"}), "[script-syntax]"));
  s.write("heredoc.sh", "#!/bin/bash\ncat <<EOF\nnever ends\n");
  CHECK(mentions(s.check({"heredoc.sh"}), "[script-syntax]"));
  s.write("continued.sh", "#!/bin/bash\ntorchrun --nproc-per-node 8 x.py \\");
  Result continued = s.check({"continued.sh"});
  CHECK(continued.code == 0);  // bash accepts it: a warning
  CHECK(mentions(continued, "continued.sh:2:34: warning: line continuation `\\` at the end of the file"));
}

TEST_CASE("garbage in every input position does not crash", "[bad-input]") {
  Scratch s;
  std::string noise;
  for (int i = 0; i < 20000; ++i) noise += static_cast<char>(" \n\t\"'$`\\{}[]():=#,&|;<>!*?~-+.0aZ_@%^"[(i * 31 + i / 7) % 38]);
  s.write("noise.sh", "#!/bin/bash\n" + noise);
  s.write("noise.yaml", noise);
  for (const char* name : {"noise.sh", "noise.yaml"}) {
    INFO(name);
    Result r = s.check({name, "--set", noise.substr(0, 400), "--recipe", "llama3_8b_pretrain_config"});
    CHECK(r.code <= 1);
  }
}

TEST_CASE("more than 10,000 overrides in one launch stop with a located diagnostic", "[bad-input]") {
  Scratch s;
  std::string script = "#!/bin/bash\npython scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config";
  for (int i = 0; i < 10001; ++i) script += " train.train_iters=" + std::to_string(i + 1);
  s.write("many.sh", script + "\n");
  Result r = s.check({"many.sh"});
  CHECK(r.code == 1);
  // The 10,001st override starts after the 10,000 before it.
  size_t column = script.find(" train.train_iters=10001") + 2 - script.find('\n') - 1;
  CHECK(mentions(r, "many.sh:2:" + std::to_string(column) +
                        ": error: more than 10000 Hydra overrides in one launch; mblint stops reading them here"));
}

TEST_CASE("interpolation chains and copies of large maps stop at the work bound", "[bad-input]") {
  Scratch s;
  std::string chain = "model:\n";
  for (int i = 0; i < 100000; ++i) chain += "  k" + std::to_string(i) + ": ${model.k" + std::to_string(i + 1) + "}\n";
  s.write("chain.yaml", chain + "  k100000: 1\n");
  Result r = s.check({"chain.yaml"});
  CHECK(r.code == 1);
  CHECK(mentions(r, "chain.yaml:"));
  CHECK(mentions(r, "mblint stops resolving them here [yaml-syntax]"));

  std::string copies = "base:\n";
  for (int i = 0; i < 1000; ++i) copies += "  b" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  copies += "model:\n";
  for (int i = 0; i < 10000; ++i) copies += "  c" + std::to_string(i) + ": ${base}\n";
  s.write("copies.yaml", copies);
  Result c = s.check({"copies.yaml"});
  CHECK(c.code == 1);
  CHECK(mentions(c, "mblint stops resolving them here [yaml-syntax]"));
}

TEST_CASE("thousands of self references and missing keys in interpolations stay bounded", "[bad-input]") {
  Scratch s;
  // Under env_vars (a free-form dict) the keys are the file's own, so the
  // file stays a Megatron Bridge config whatever they are called.
  std::string selves = "model:\n  num_layers: 2\nenv_vars:\n";
  std::string missing = selves;
  for (int i = 0; i < 10000; ++i) {
    std::string number = std::to_string(i);
    selves += "  k" + number + ": ${.k" + number + "}\n";
    missing += "  k" + number + ": ${nothing.k" + number + "}\n";
  }
  s.write("selves.yaml", selves);
  s.write("missing.yaml", missing);
  s.write("nested.yaml", "model:\n  seq_length: " + std::string(5000, '$') + std::string(5000, '{') + "\n");
  Result r = s.check({"selves.yaml", "--recipe", "llama3_8b_pretrain_config"});
  CHECK(r.code == 1);
  CHECK(mentions(r, "selves.yaml:4:7: error: ${.k0} starts an interpolation cycle"));
  // The wide map exhausts the work bound: the rest stays unknown, and says so.
  CHECK(mentions(r, "mblint stops resolving them here [yaml-syntax]"));
  Result m = s.check({"missing.yaml", "--recipe", "llama3_8b_pretrain_config"});
  CHECK(m.code == 1);
  CHECK(mentions(m, "missing.yaml:4:7: error: ${nothing.k0} names a key that does not exist"));
  CHECK(s.check({"nested.yaml"}).code <= 1);
}

TEST_CASE("fuzz regression: env-var rules of two groups on one job (one-definition rule)", "[bad-input]") {
  // fuzz_check crashed here in the sanitizer build: two different structs
  // named mblint::EnvValue shared one destructor. Both rule groups that read
  // the environment run on this job.
  Scratch s;
  s.write("job.yaml",
          "ddp:\n  use_megatron_fsdp: true\n  fsdp_manual_registration: true\n  nccl_ub: true\n"
          "checkpoint:\n  ckpt_format: fsdp_dtensor\n");
  Result r = s.check({"job.yaml", "--recipe", "deepseek_v3_pretrain_config", "--format", "json"});
  CHECK(r.code <= 1);
  CHECK(mentions(r, "\"diagnostics\""));
}

TEST_CASE("fuzz regression: a dump merged onto a recipe with wide sections (key index of moved entries)", "[bad-input]") {
  // fuzz_check found a heap-use-after-free in the sanitizer build: merging a
  // wide map indexed views of its short keys, then grew the vector, which
  // moved the entries (and the characters of their keys) away from the views.
  Scratch s;
  s.write("job.yaml",
          "_target_: megatron.bridge.training.config.ConfigContainer\n"
          "model:\n  _target_: megatron.bridge.models.llama.llama_provider.Llama3ModelProvider8B\n"
          "  num_layers: 32\n  hidden_size: 4096\n  num_attention_heads: 32\n  num_query_groups: 8\n"
          "  num_moe_experts: null\n  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\n"
          "  context_parallel_size: 1\n  expert_model_parallel_size: 4\n  sequence_parallel: false\n"
          "  seq_length: 8192\n"
          "train:\n  _target_: megatron.bridge.training.config.TrainingConfig\n  global_batch_size: 64\n"
          "  micro_batch_size: 1\n");
  Result r = s.check({"job.yaml", "--recipe", "deepseek_v3_pretrain_config", "--format", "json"});
  CHECK(r.code <= 1);
  // The dump's values won over the recipe's: the overlay was merged key by key.
  CHECK(mentions(r, "\"diagnostics\""));
  Result text = s.check({"job.yaml", "--recipe", "deepseek_v3_pretrain_config"});
  CHECK(text.code <= 1);
}

TEST_CASE("fuzz regression: an mpirun option that ends the command without its value", "[bad-input]") {
  // fuzz_shell hung here: `--npernode` as mpirun's last word left the option
  // loop without advancing.
  Scratch s;
  s.write("run.sh", "#!/bin/bash\nmpirun -np 16 --npernode\nmpirun --hostfile\n");
  CHECK(s.check({"run.sh"}).code <= 1);
}

TEST_CASE("code strings that eval themselves several times stay bounded", "[bad-input]") {
  // Each level runs the string six times: 6^8 walks within the depth limit
  // alone. The depth limit stops the first path, the follow limit the rest;
  // the launch after it is still read.
  Scratch s;
  s.write("bomb.sh",
          "#!/bin/bash\nx='eval \"$x\";eval \"$x\";eval \"$x\";eval \"$x\";eval \"$x\";eval \"$x\"'\n"
          "eval \"$x\"\ntorchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 16\n");
  Result r = s.check({"bomb.sh"});
  CHECK(r.code == 1);
  CHECK(mentions(r, "is not followed: files and eval are nested more than 8 deep here"));
  CHECK(mentions(r, "world-size-divisibility"));
}

TEST_CASE("a script that evals 70 x 70 code strings two levels deep stops at the follow limit", "[bad-input]") {
  // Within the depth limit: only the count of follows bounds it.
  std::string inner, outer;
  for (int i = 0; i < 70; ++i) {
    inner += "eval \"$z\";";
    outer += "eval \"$y\";";
  }
  Scratch s;
  s.write("wide.sh", fmt::format("#!/bin/bash\nz='true'\ny='{}'\nx='{}'\neval \"$x\"\n"
                                 "torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 16\n",
                                 inner, outer));
  Result r = s.check({"wide.sh"});
  CHECK(r.code == 1);
  CHECK(mentions(r, "is not followed: this script follows more than 4096 files and code strings"));
  CHECK(mentions(r, "world-size-divisibility"));
}
