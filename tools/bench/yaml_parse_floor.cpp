// The benchmark's floor: read each file named on the command line and run
// yaml-cpp's event parser over it with a handler that does nothing, the
// least any YAML linter must do. Prints the number of files parsed.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <iostream>
#include <sstream>

namespace {

struct Discard : YAML::EventHandler {
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

int main(int argc, char** argv) {
  int parsed = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    try {
      YAML::Parser parser(text);
      Discard discard;
      while (parser.HandleNextDocument(discard)) {
      }
      ++parsed;
    } catch (const YAML::Exception&) {
      // A syntax error still cost the parse up to it.
    }
  }
  std::cout << parsed << " files parsed\n";
  return 0;
}
