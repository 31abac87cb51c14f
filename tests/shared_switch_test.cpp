// MBLINT_REQUIRE_SHARED=1 (set by .ci/run): a test that needs ../shared
// fails when it is absent, where a user's clone skips it with a message.
// Exercised for real: this test binary and tools/memory_eval.py run as child
// processes with MBLINT_SHARED_DIR naming an empty directory, which is what
// they see in a clone without ../shared.
#include <catch2/catch.hpp>

#include <unistd.h>

#include "tests/gate_support.h"
#include "tests/test_support.h"

using namespace mblint::test;

namespace {

std::string self_path() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  REQUIRE(n > 0);
  return std::string(buffer, static_cast<size_t>(n));
}

// `command` with ../shared absent, with or without the switch.
ToolRun without_shared(const std::string& command, bool required) {
  ScratchDir empty("mblint-no-shared");
  std::string env = std::string(required ? "env MBLINT_REQUIRE_SHARED=1" : "env -u MBLINT_REQUIRE_SHARED") +
                    " MBLINT_SHARED_DIR=" + shell_quote(empty.path.string()) + " ";
  return run_tool(env + command);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a [shared] test skips without ../shared, and fails under MBLINT_REQUIRE_SHARED=1", "[shared-switch]") {
  // A quick test that reads ../shared (the YAML typing vectors).
  // The compact reporter keeps each message on one line.
  std::string command =
      shell_quote(self_path()) + " " + shell_quote("typing matches the observed PyYAML and OmegaConf vectors") + " -r compact";
  ToolRun skipped = without_shared(command, false);
  INFO(skipped.output);
  CHECK(skipped.code == 0);
  CHECK(has(skipped.output, "is absent: skipping the YAML typing vectors"));

  ToolRun failed = without_shared(command, true);
  INFO(failed.output);
  CHECK(failed.code != 0);
  CHECK(has(failed.output, "is absent and MBLINT_REQUIRE_SHARED=1: the YAML typing vectors cannot run"));
}

TEST_CASE("the memory acceptance skips (77) without ../shared, and fails under MBLINT_REQUIRE_SHARED=1",
          "[shared-switch]") {
  if (!find_program("python3")) {
    if (shared_required()) FAIL("python3 not found: tools/memory_eval.py cannot run");
    WARN("python3 not found: skipped");
    return;
  }
  ScratchDir empty("mblint-no-shared");
  std::string command = "python3 " + shell_quote((source_dir() / "tools/memory_eval.py").string()) +
                        " --mblint " + shell_quote(MBLINT_BINARY) + " --shared " +
                        shell_quote((empty.path / "shared").string());
  ToolRun skipped = run_tool("env -u MBLINT_REQUIRE_SHARED " + command);
  INFO(skipped.output);
  CHECK(skipped.code == 77);
  ToolRun failed = run_tool("env MBLINT_REQUIRE_SHARED=1 " + command);
  INFO(failed.output);
  CHECK(failed.code == 1);
  CHECK(has(failed.output, "MBLINT_REQUIRE_SHARED=1"));
}
