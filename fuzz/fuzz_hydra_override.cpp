// The Hydra override parser: each line of the input is one override word,
// mapped to its place in a synthetic file as the launch parser maps them.
#include "fuzz/fuzz_support.h"
#include "lint/load/hydra/hydra_override.h"

using namespace mblint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  SourceSet sources;
  FileId file = add_source(sources, "<overrides>", std::string(text), true);
  for (auto [offset, line] : fuzz::lines_of(text)) {
    HydraParse parse = parse_hydra_override(mapped_verbatim(file, offset, line), Layer::Override);
    fuzz::check_spans(sources, parse.problems);
  }
  return 0;
}
