// The YAML loader with provenance: every flavor, on any bytes. Checks that
// it returns (no crash, hang or unbounded memory) and that each problem is
// located inside the file.
#include "fuzz/fuzz_support.h"
#include "lint/load/yaml/yaml_loader.h"

using namespace mblint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Selected input = fuzz::select(data, size);
  constexpr YamlFlavor kFlavors[] = {YamlFlavor::OmegaConf, YamlFlavor::PyYaml, YamlFlavor::Yaml12};
  SourceSet sources;
  FileId file = add_source(sources, "fuzz.yaml", std::string(input.text));
  YamlDocument document = load_yaml(sources, file, kFlavors[input.selector % 3], Layer::ConfigFile);
  fuzz::check_spans(sources, document.problems);
  return 0;
}
