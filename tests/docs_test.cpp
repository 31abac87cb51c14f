// The README is for users and stays short; the rest lives in docs/. Every
// relative link of README.md and docs/*.md must lead somewhere: a file that
// exists and, for `page.md#anchor`, a heading of that page.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_support.h"

namespace fs = std::filesystem;
using mblint::test::read_file;
using mblint::test::source_dir;

namespace {

constexpr size_t kReadmeMaxBytes = 20000;  // issue 18: README.md <= 20 KB

bool is_fence(const std::string& line) {
  size_t start = line.find_first_not_of(' ');
  return start != std::string::npos && line.compare(start, 3, "```") == 0;
}

// The lines of a Markdown text outside fenced code blocks.
std::vector<std::string> prose_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  bool fenced = false;
  while (std::getline(in, line)) {
    if (is_fence(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) lines.push_back(line);
  }
  return lines;
}

// GitHub's anchor for a heading: lower case, markup and punctuation dropped
// (non-ASCII bytes too: no heading here needs them), spaces to hyphens.
std::string slug(const std::string& heading) {
  std::string out;
  for (char c : heading) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') {
      out += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      out += '-';
    }
  }
  return out;
}

// Every anchor a page offers: its headings' slugs, a repeated one numbered
// "-1", "-2" as GitHub does.
std::set<std::string> anchors(const std::string& text) {
  std::set<std::string> out;
  std::map<std::string, int> seen;
  for (const std::string& line : prose_lines(text)) {
    size_t hashes = line.find_first_not_of('#');
    if (hashes == 0 || hashes > 6 || hashes == std::string::npos || line[hashes] != ' ') continue;
    std::string base = slug(line.substr(hashes + 1));
    int n = seen[base]++;
    out.insert(n == 0 ? base : base + "-" + std::to_string(n));
  }
  return out;
}

// The targets of the inline links `[text](target)` of a page, code spans and
// fenced blocks left out.
std::vector<std::string> link_targets(const std::string& text) {
  std::vector<std::string> out;
  for (std::string line : prose_lines(text)) {
    std::string prose;
    bool code = false;
    for (char c : line) {
      if (c == '`') {
        code = !code;
        continue;
      }
      if (!code) prose += c;
    }
    size_t at = 0;
    while ((at = prose.find("](", at)) != std::string::npos) {
      size_t end = prose.find(')', at + 2);
      if (end == std::string::npos) break;
      out.push_back(prose.substr(at + 2, end - at - 2));
      at = end;
    }
  }
  return out;
}

// What is wrong with the relative links of `page`, one line per broken link.
std::vector<std::string> broken_links(const fs::path& page) {
  std::vector<std::string> problems;
  for (const std::string& target : link_targets(read_file(page))) {
    if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 || target.rfind("mailto:", 0) == 0) {
      continue;
    }
    size_t hash = target.find('#');
    std::string file = target.substr(0, hash);
    std::string anchor = hash == std::string::npos ? "" : target.substr(hash + 1);
    fs::path resolved = file.empty() ? page : page.parent_path() / file;
    if (!fs::exists(resolved)) {
      problems.push_back(page.filename().string() + ": " + target + ": no such file");
      continue;
    }
    if (anchor.empty()) continue;
    if (resolved.extension() != ".md" || !fs::is_regular_file(resolved)) {
      problems.push_back(page.filename().string() + ": " + target + ": an anchor into a file that is no Markdown page");
    } else if (anchors(read_file(resolved)).count(anchor) == 0) {
      problems.push_back(page.filename().string() + ": " + target + ": no such heading");
    }
  }
  return problems;
}

std::vector<fs::path> documentation_pages() {
  std::vector<fs::path> pages = {source_dir() / "README.md"};
  for (const fs::directory_entry& entry : fs::directory_iterator(source_dir() / "docs")) {
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  }
  std::sort(pages.begin(), pages.end());
  return pages;
}

}  // namespace

TEST_CASE("README.md stays within 20 KB", "[docs]") {
  fs::path readme = source_dir() / "README.md";
  INFO("README.md is " << fs::file_size(readme) << " bytes; move design notes and measurements to docs/");
  CHECK(fs::file_size(readme) <= kReadmeMaxBytes);
}

TEST_CASE("every relative link of README.md and docs/*.md leads to a file and heading that exist", "[docs]") {
  std::vector<fs::path> pages = documentation_pages();
  REQUIRE(pages.size() > 10);  // README.md, docs/README.md and the topic pages
  size_t links = 0;
  for (const fs::path& page : pages) {
    links += link_targets(read_file(page)).size();
    for (const std::string& problem : broken_links(page)) {
      FAIL_CHECK(problem);
    }
  }
  CHECK(links > 50);
}

TEST_CASE("the link check finds a missing file, a missing heading and ignores code", "[docs]") {
  fs::path dir = mblint::test::make_temp_dir("mblint-docs-links");
  std::ofstream(dir / "other.md") << "# Other page\n\n## What \"no problems found\" means\n\n## Twice\n\n## Twice\n";
  std::ofstream(dir / "page.md") << "# Page\n\n[ok](other.md) [ok](other.md#what-no-problems-found-means) "
                                    "[ok](other.md#twice-1) [ok](#page) [web](https://example.com/x.md)\n"
                                    "[gone](missing.md) [bad](other.md#nowhere) [bad](#nowhere)\n"
                                    "`[code](missing-in-code.md)`\n```\n[fenced](missing-in-fence.md)\n```\n";
  std::vector<std::string> problems = broken_links(dir / "page.md");
  fs::remove_all(dir);
  CHECK(problems == std::vector<std::string>{"page.md: missing.md: no such file", "page.md: other.md#nowhere: no such heading",
                                             "page.md: #nowhere: no such heading"});
}

TEST_CASE("the README's example output is the demo job's, and its commands exist", "[docs]") {
  std::string readme = read_file(source_dir() / "README.md");
  // The first code block is the example diagnostic: lines of the demo job's
  // golden output, in order, from its first line.
  size_t open = readme.find("```\n");
  REQUIRE(open != std::string::npos);
  size_t close = readme.find("```\n", open + 4);
  REQUIRE(close != std::string::npos);
  std::string example = readme.substr(open + 4, close - open - 4);
  std::string demo = read_file(source_dir() / "fixtures" / "examples" / "expected.txt");
  INFO(example);
  CHECK(demo.rfind(example, 0) == 0);
  // The two set-up commands.
  CHECK(readme.find("tools/setup.sh    # installs the Debian packages, builds mblint, runs it on the demo job") !=
        std::string::npos);
  CHECK(readme.find("tools/test.sh     # builds with warnings as errors and runs the whole test suite") !=
        std::string::npos);
  for (const char* script : {"tools/setup.sh", "tools/test.sh"}) {
    fs::perms perms = fs::status(source_dir() / script).permissions();
    INFO(script);
    CHECK((perms & fs::perms::owner_exec) != fs::perms::none);
  }
  // The pre-commit example names the hook the repository defines.
  CHECK(readme.find("      - id: mblint\n") != std::string::npos);
  CHECK(read_file(source_dir() / ".pre-commit-hooks.yaml").find("- id: mblint\n") != std::string::npos);
}
