// The stages of mblint are folders, one CMake library each, declared from the
// base up by mblint_layer(NAME FOLDER DEPENDS ...) in CMakeLists.txt. A file
// may include headers of its own folder and of the folders its library links,
// directly or through them; an include that reaches up the pipeline (a rule
// calling the engine, the engine calling the command line) fails here even
// where it would still link.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_support.h"

namespace fs = std::filesystem;

namespace {

struct Layers {
  std::map<std::string, std::string> library_of;          // folder -> library
  std::map<std::string, std::vector<std::string>> links;  // library -> libraries it links
};

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// The mblint_layer calls of CMakeLists.txt; the rule groups' loop is one
// call per entry of MBLINT_RULE_GROUPS.
Layers read_layers(const std::string& cmake) {
  Layers layers;
  std::smatch groups_match;
  REQUIRE(std::regex_search(cmake, groups_match, std::regex(R"(set\(MBLINT_RULE_GROUPS ([^)]*)\))")));
  std::vector<std::string> groups = words(groups_match[1]);
  std::regex call(R"(mblint_layer\((\S+) (\S+)(?: DEPENDS ([^)]*))?\))");
  for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), call); it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1], folder = (*it)[2];
    std::vector<std::string> depends = words((*it)[3]);
    if (name.find("${group}") != std::string::npos) {
      for (const std::string& group : groups) {
        layers.library_of["rules/" + group] = "mblint_rules_" + group;
        layers.links["mblint_rules_" + group] = depends;
      }
      continue;
    }
    if (depends == std::vector<std::string>{"${MBLINT_RULE_GROUP_TARGETS}"}) {
      depends.clear();
      for (const std::string& group : groups) depends.push_back("mblint_rules_" + group);
    }
    layers.library_of[folder] = name;
    layers.links[name] = depends;
  }
  return layers;
}

void reachable(const Layers& layers, const std::string& library, std::set<std::string>& out) {
  auto it = layers.links.find(library);
  if (it == layers.links.end()) return;
  for (const std::string& next : it->second) {
    if (out.insert(next).second) reachable(layers, next, out);
  }
}

bool is_source(const fs::path& path) {
  std::string ext = path.extension().string();
  return ext == ".h" || ext == ".cpp" || ext == ".inc";
}

std::vector<fs::path> sources_under(const fs::path& root) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && is_source(entry.path())) out.push_back(entry.path());
  }
  return out;
}

// The project headers a file includes ("lint/base/source.h"), not the
// generated ones (mblint_version.h) nor system headers.
std::vector<std::string> project_includes(const fs::path& file) {
  std::istringstream in(mblint::test::read_file(file));
  std::vector<std::string> out;
  std::regex include(R"(^\s*#\s*include\s+"((?:lint|rules)/[^"]+)\")");
  for (std::string line; std::getline(in, line);) {
    if (line.find("include") == std::string::npos) continue;  // std::regex is slow unoptimised
    std::smatch m;
    if (std::regex_search(line, m, include)) out.push_back(m[1]);
  }
  return out;
}

const Layers& project_layers() {
  static const Layers layers = read_layers(mblint::test::read_file(mblint::test::source_dir() / "CMakeLists.txt"));
  return layers;
}

}  // namespace

TEST_CASE("every source folder of lint/ and rules/ is a declared layer", "[layers]") {
  const Layers& layers = project_layers();
  CHECK(layers.library_of.size() >= 20);
  fs::path root = mblint::test::source_dir();
  for (const char* top : {"lint", "rules"}) {
    for (const fs::path& file : sources_under(root / top)) {
      std::string folder = file.parent_path().lexically_relative(root).generic_string();
      INFO(file.lexically_relative(root).generic_string());
      CHECK(layers.library_of.count(folder) == 1);
    }
  }
}

TEST_CASE("no library links itself back through the stages above it", "[layers]") {
  const Layers& layers = project_layers();
  for (const auto& [library, links] : layers.links) {
    std::set<std::string> below;
    reachable(layers, library, below);
    INFO(library);
    CHECK(below.count(library) == 0);
  }
}

TEST_CASE("no file includes a header of a stage above its own", "[layers]") {
  const Layers& layers = project_layers();
  fs::path root = mblint::test::source_dir();
  size_t includes = 0;
  for (const char* top : {"lint", "rules"}) {
    for (const fs::path& file : sources_under(root / top)) {
      std::string folder = file.parent_path().lexically_relative(root).generic_string();
      auto mine = layers.library_of.find(folder);
      if (mine == layers.library_of.end()) continue;  // the test above reports it
      std::set<std::string> allowed{mine->second};
      reachable(layers, mine->second, allowed);
      for (const std::string& header : project_includes(file)) {
        ++includes;
        std::string header_folder = fs::path(header).parent_path().generic_string();
        auto theirs = layers.library_of.find(header_folder);
        INFO(file.lexically_relative(root).generic_string() << " includes " << header);
        REQUIRE(theirs != layers.library_of.end());
        CHECK(allowed.count(theirs->second) == 1);
      }
    }
  }
  CHECK(includes > 500);
}
