// The framework dialects read from YAML: NeMo 1.x / NeMo-Framework-Launcher
// configs (OmegaConf typing, self-references resolved) and Megatron-LM
// functional-test configs (YAML 1.2 typing, MODEL_ARGS as argv).
#include "fuzz/fuzz_support.h"
#include "lint/base/config_value.h"
#include "lint/load/dialects/megatron_lm_test_config.h"
#include "lint/load/dialects/nemo_yaml.h"
#include "lint/load/yaml/yaml_loader.h"

using namespace mblint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SourceSet sources;
  FileId file = add_source(sources, "fuzz.yaml", std::string(fuzz::as_text(data, size)));
  YamlDocument nemo = load_yaml(sources, file, YamlFlavor::OmegaConf, Layer::ConfigFile);
  if (nemo.ok && is_nemo_config(nemo.root)) (void)read_nemo_config(nemo.root);
  YamlDocument test = load_yaml(sources, file, YamlFlavor::Yaml12, Layer::ConfigFile);
  if (test.ok && is_megatron_lm_test_config(test.root)) {
    const ConfigValue* args = find_child(test.root, "MODEL_ARGS");
    MegatronTestConfig config = read_megatron_lm_test_config(sources, test.root, *args);
    fuzz::check_spans(sources, config.problems);
  }
  return 0;
}
