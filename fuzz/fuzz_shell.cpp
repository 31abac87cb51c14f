// The launch-script parser: #SBATCH directives, the static shell walk and
// launch detection (wrappers, launchers, entry-point arguments) on any text.
#include "fuzz/fuzz_support.h"
#include "lint/launch.h"
#include "lint/shell.h"

using namespace mblint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SourceSet sources;
  FileId file = add_source(sources, "fuzz.sh", std::string(fuzz::as_text(data, size)));
  std::vector<SbatchDirective> directives = read_sbatch_directives(sources.files[file], file);
  ShellScript script = walk_shell_script(sources, file, slurm_environment(directives));
  fuzz::check_spans(sources, script.problems);
  for (const Launch& launch : find_launches(script, directives)) fuzz::check_spans(sources, launch.problems);
  return 0;
}
