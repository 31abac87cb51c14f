// The launch-script parser: #SBATCH directives, the static shell walk and
// launch detection (wrappers, launchers, entry-point arguments) on any text.
// Every file the script sources or runs is the input again, so `source`,
// `bash FILE` and `eval` nest until their limits stop them.
#include "fuzz/fuzz_support.h"
#include "lint/load/shell/launch.h"
#include "lint/load/shell/shell.h"

using namespace mblint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SourceSet sources;
  std::string text(fuzz::as_text(data, size));
  FileId file = add_source(sources, "fuzz.sh", text);
  std::vector<SbatchDirective> directives = read_sbatch_directives(sources.files[file], file);
  ShellFiles files;
  files.script_directory = "/fuzz";
  files.read = [&](const std::string& path, const std::string&, std::string& why) -> std::optional<ShellFile> {
    if (path.find("missing") != std::string::npos) {
      why = "no such file";
      return std::nullopt;
    }
    FileId copy = add_source(sources, "sourced.sh", text);  // a new file each time: only the limits stop it
    return ShellFile{copy, text, "/fuzz", "/fuzz/sourced.sh"};
  };
  ShellScript script = walk_shell_script(sources, file, slurm_environment(directives), {}, &files);
  fuzz::check_spans(sources, script.problems);
  for (const Launch& launch : find_launches(script, directives)) fuzz::check_spans(sources, launch.problems);
  return 0;
}
