// Patching a YAML parse for a value edit, an edit between siblings of a
// block collection, or an edit inside one top-level section
// (lint/load/yaml/yaml_patch.h): every
// patch the code accepts must equal a full parse of the edited text, value
// for value and span for span. Random edits over every fixture YAML.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "lint/load/yaml/yaml_patch.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

namespace fs = std::filesystem;

std::string show(Span span) { return fmt::format("{}:{}-{}", span.file, span.begin, span.end); }

std::string show(const Provenance& where) {
  std::string out = fmt::format("@{} v{} k{} s{} i{} o'{}'", static_cast<int>(where.layer), show(where.value),
                                show(where.key), show(where.statement), show(where.interpolated_at), where.origin);
  for (const Span& via : where.via) out += " via" + show(via);
  return out;
}

// Everything a ConfigValue holds, one node per line.
void dump(const ConfigValue& value, std::string& out, int depth = 0) {
  out += fmt::format("{:{}}kind{} b{} i{} r{} t'{}' q{} {}", "", depth, static_cast<int>(value.kind), value.boolean,
                     value.integer, value.real, value.text, value.quoted, show(value.where));
  for (const Provenance& earlier : value.earlier) out += " earlier " + show(earlier);
  out += '\n';
  for (const ConfigValue& item : value.items) dump(item, out, depth + 1);
  for (const MapEntry& entry : value.entries) {
    out += fmt::format("{:{}}key '{}'\n", "", depth + 1, entry.key);
    dump(entry.value, out, depth + 2);
  }
}

std::string dump(const YamlDocument& document) {
  std::string out = fmt::format("ok {} problems {}\n", document.ok, document.problems.size());
  for (const Diagnostic& problem : document.problems) {
    out += fmt::format("{} {} '{}' help '{}'", problem.rule, show(problem.where), problem.message, problem.help);
    for (const Note& note : problem.notes) out += fmt::format(" note {} '{}'", show(note.where), note.message);
    out += '\n';
  }
  dump(document.root, out);
  return out;
}

ParsedYaml parse(const std::string& text, YamlFlavor flavor, FileId id = 0) {
  SourceSet sources;
  for (FileId i = 0; i < id; ++i) add_source(sources, "other.yaml", "");
  FileId file = add_source(sources, "t.yaml", text);
  return ParsedYaml{text, flavor, Layer::ConfigFile, file, load_yaml(sources, file, flavor, Layer::ConfigFile)};
}

const std::vector<std::string> kValues = {
    "1", "2", "-3", "+4", "0.5", "-.5", "1e-4", "1.0e+3", "1_000", "0x1F", "0o17", "017", ".inf", "-.inf", ".nan",
    "true", "False", "yes", "NO", "on", "null", "~", "Null", "NULL", "abc", "a b", "a  b", "bf16-mixed",
    "/lustre/data/shard_1", "~foo", "$TP", "x.y.z", "'x'", "\"y\"", "'it''s'", "''", "\"\"", "'a # b'",
    "\"a: b\"", "'bad", "\"a\\tb\"", "foo#bar", "foo #bar", "a: b", "[1]", "{a: 1}", "&x 1", "*x", "- 1", "|",
    ">", "? x", "!!str 1", "%x", "@x", "`x", "12:30", "http://x", " ", "", "2 # c", "a,b", "2 ", "-", "---",
    "...", "<<", "1\t", "caf\xc3\xa9"};

const std::string kChars = "a1._-: #'\"&*[]{},!|>%@\\\t\n~/$";

// A random edit inside one line of `text` (sometimes crossing lines).
ByteEdit random_edit(const std::string& text, std::mt19937& random, std::string& replacement) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(random() % n); };
  std::vector<size_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  // Mostly lines with a `key: value` to edit.
  std::vector<size_t> entries;
  for (size_t start : starts) {
    size_t colon = text.find(": ", start);
    if (colon != std::string::npos && colon < text.find('\n', start)) entries.push_back(start);
  }
  size_t begin = !entries.empty() && pick(4) != 0 ? entries[pick(entries.size())] : starts[pick(starts.size())];
  size_t end = text.find('\n', begin);
  if (end == std::string::npos) end = text.size();
  size_t colon = text.find(": ", begin);
  bool has_value = colon != std::string::npos && colon < end;
  const std::vector<std::string> kLines = {"  new_key: 1\n", "  - item\n", "    nested: x\n", "# comment\n", "\n",
                                           "  lr: 3e-4\n", "top: 1\n", "  block: |\n    text\n", "  q: \"a\n",
                                           "  flow: [1, 2]\n", "- 1\n", "\tbad: 1\n", "  sub:\n    a: 1\n    b: 2\n"};
  switch (pick(13)) {
    case 9: {  // a sibling before this line: the line again, its key renamed (any depth)
      size_t indent = text.find_first_not_of(' ', begin);
      indent = indent == std::string::npos ? end : std::min(indent, end);
      std::string line = text.substr(begin, end - begin);
      size_t key = indent - begin;
      if (key < line.size() && line[key] == '-' && key + 2 < line.size()) key += 2;
      line.insert(std::min(key, line.size()), pick(2) ? "n_" : "");
      replacement = line + "\n";
      return ByteEdit{static_cast<uint32_t>(begin), static_cast<uint32_t>(begin), replacement};
    }
    case 10:
    case 11:
    case 12: {  // a new top-level key before a top-level line, or replacing that line
      std::vector<size_t> top;
      for (size_t start : starts) {
        if (start < text.size() && text[start] != ' ' && text[start] != '\n' && text[start] != '#') top.push_back(start);
      }
      size_t at = top.empty() ? begin : top[pick(top.size())];
      const std::vector<std::string> kTop = {"new_top: 1\n", "new_top:\n  a: 1\n  b: [1, 2]\n", "new_list:\n- x\n- y: 1\n",
                                             "train: 2\n", "new_top: 'q'\n# c\n", "new_top: a\n  b\n", "new_top:\n"};
      replacement = kTop[pick(kTop.size())];
      size_t name = replacement.find("new_");  // a fresh key most of the time, so not a duplicate
      if (name != std::string::npos && pick(4) != 0) replacement.insert(name + 4, std::to_string(pick(100000)) + "_");
      size_t to = at;
      if (pick(3) == 0) {
        to = text.find('\n', at);
        to = to == std::string::npos ? text.size() : to + 1;
      }
      return ByteEdit{static_cast<uint32_t>(at), static_cast<uint32_t>(to), replacement};
    }
    case 6: {  // insert whole lines at a line start
      replacement = kLines[pick(kLines.size())];
      return ByteEdit{static_cast<uint32_t>(begin), static_cast<uint32_t>(begin), replacement};
    }
    case 7: {  // delete this line, or this and the next
      size_t to = end;
      if (pick(2) && to < text.size()) to = text.find('\n', to + 1);
      to = to == std::string::npos ? text.size() : std::min(text.size(), to + 1);
      replacement.clear();
      return ByteEdit{static_cast<uint32_t>(begin), static_cast<uint32_t>(to), replacement};
    }
    case 8: {  // Enter at the end of the line, then a new entry or a copy of this line
      replacement = "\n";
      replacement.append(pick(2) ? std::string_view(text).substr(begin, end - begin) : std::string_view("  added: 2"));
      return ByteEdit{static_cast<uint32_t>(end), static_cast<uint32_t>(end), replacement};
    }
    case 0:
    case 1:
    case 2: {  // rewrite the value, the common edit
      size_t at = has_value ? colon + 2 : begin + pick(end - begin + 1);
      replacement = kValues[pick(kValues.size())];
      return ByteEdit{static_cast<uint32_t>(at), static_cast<uint32_t>(end), replacement};
    }
    case 3: {  // type one character
      size_t at = begin + pick(end - begin + 1);
      replacement = std::string(1, pick(2) ? kChars[pick(kChars.size())] : static_cast<char>('0' + pick(10)));
      return ByteEdit{static_cast<uint32_t>(at), static_cast<uint32_t>(at), replacement};
    }
    case 4: {  // delete a few characters, now and then across the line end
      size_t at = begin + pick(end - begin + 1);
      size_t to = std::min(text.size(), at + 1 + pick(pick(8) == 0 ? 6 : 3));
      replacement.clear();
      return ByteEdit{static_cast<uint32_t>(at), static_cast<uint32_t>(to), replacement};
    }
    default: {  // replace part of the value
      size_t from = has_value ? colon + 2 + pick(end - std::min(end, colon + 2) + 1) : begin;
      from = std::min(from, end);
      size_t to = from + pick(end - from + 1);
      replacement = kValues[pick(kValues.size())];
      return ByteEdit{static_cast<uint32_t>(from), static_cast<uint32_t>(to), replacement};
    }
  }
}

std::vector<fs::path> fixture_yamls() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(mblint::test::source_dir() / "fixtures")) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("yaml patch: random edits of every fixture YAML, patched, equal a full re-parse", "[yaml][lsp]") {
  // MBLINT_PATCH_SEED=N explores other edits; the default keeps runs reproducible.
  const char* seed = std::getenv("MBLINT_PATCH_SEED");
  std::mt19937 random(seed ? static_cast<unsigned>(std::strtoul(seed, nullptr, 10)) : 20261129u);
  const YamlFlavor flavors[] = {YamlFlavor::PyYaml, YamlFlavor::OmegaConf, YamlFlavor::Yaml12};
  size_t patched = 0, block_patched = 0, section_patched = 0, refused = 0, files = 0, top_keys = 0, nested = 0;
  for (const fs::path& path : fixture_yamls()) {
    std::string text = mblint::test::read_file(path);
    if (text.size() > 200'000) continue;
    YamlFlavor flavor = flavors[files++ % 3];
    ParsedYaml current = parse(text, flavor, static_cast<FileId>(files % 2));
    for (int round = 0; round < 100; ++round) {
      std::string replacement;
      ByteEdit edit = random_edit(current.text, random, replacement);
      std::string after = current.text;
      after.replace(edit.begin, edit.end - edit.begin, replacement);
      // Each patch on its own copy: every one is checked whenever it applies.
      ParsedYaml scalar = current, block = current, section = current;
      bool scalar_ok = patch_scalar_edit(scalar, edit);
      bool block_ok = patch_block_edit(block, edit);
      bool section_ok = patch_section_edit(section, edit);
      patched += scalar_ok;
      block_patched += block_ok;
      if (block_ok) {  // which block edits: a new top-level key, or lines inside nested collections
        bool at_line_start = edit.begin == 0 || current.text[edit.begin - 1] == '\n';
        char first = replacement.empty() ? ' ' : replacement.front();
        top_keys += at_line_start && edit.begin == edit.end && (std::isalnum(static_cast<unsigned char>(first)) || first == '_');
        size_t line = current.text.rfind('\n', edit.begin == 0 ? 0 : edit.begin - 1);
        line = edit.begin == 0 || line == std::string::npos ? 0 : line + 1;
        nested += line < current.text.size() && current.text[line] == ' ' && (replacement.empty() || first == ' ' || !at_line_start);
      }
      section_patched += section_ok;
      if (scalar_ok || block_ok || section_ok) {
        ParsedYaml full = parse(after, flavor, current.file);
        INFO(path.string() << "\nbefore:\n" << current.text << "\nafter:\n" << after);
        for (ParsedYaml* candidate : {&scalar, &block, &section}) {
          if (candidate == &scalar ? !scalar_ok : candidate == &block ? !block_ok : !section_ok) continue;
          INFO((candidate == &scalar ? "value patch" : candidate == &block ? "block patch" : "section patch"));
          REQUIRE(candidate->text == after);
          REQUIRE(dump(candidate->document) == dump(full.document));
        }
        current = std::move(scalar_ok ? scalar : block_ok ? block : section);
      } else {
        ++refused;
        REQUIRE(scalar.text == current.text);
        REQUIRE(block.text == current.text);
        REQUIRE(section.text == current.text);
        // Go on from the edited text unless it broke the file (then no later
        // edit could patch): structure changes between value edits.
        ParsedYaml full = parse(after, flavor, current.file);
        bool broken = !full.document.ok || std::any_of(full.document.problems.begin(), full.document.problems.end(),
                                                       [](const Diagnostic& d) { return d.rule != "duplicate-key"; });
        if (!broken && after.find_first_of("&*") == std::string::npos) current = std::move(full);
      }
    }
  }
  INFO(patched << " value patches, " << block_patched << " block patches (" << top_keys << " new top-level keys, "
                << nested << " nested edits), " << section_patched << " section patches, " << refused << " refused");
  CHECK(files > 100);
  CHECK(patched > 3000);  // the property was exercised, not refused away
  CHECK(block_patched > 5000);
  CHECK(top_keys > 1000);
  CHECK(nested > 3000);
  CHECK(section_patched > 3000);
  CHECK(refused > 2000);
}

TEST_CASE("yaml patch: a value edit patches; structure, comments and anchors re-parse", "[yaml][lsp]") {
  std::string text = "model:\n  tensor_model_parallel_size: 8\n  seq_length: 4096  # long\ntrain:\n  lr: 1e-4\n";
  auto edit_at = [&](const std::string& from_text, std::string_view old_value, std::string_view value) {
    ParsedYaml parsed = parse(from_text, YamlFlavor::OmegaConf);
    size_t at = from_text.find(old_value);
    bool ok = patch_scalar_edit(parsed, ByteEdit{static_cast<uint32_t>(at), static_cast<uint32_t>(at + old_value.size()), value});
    return std::make_pair(ok, parsed);
  };
  auto [ok, parsed] = edit_at(text, "8", "16");
  REQUIRE(ok);
  const ConfigValue* tp = find_path(parsed.document.root, "model.tensor_model_parallel_size");
  REQUIRE(tp);
  CHECK(tp->kind == ValueKind::Int);
  CHECK(tp->integer == 16);
  const ConfigValue* lr = find_path(parsed.document.root, "train.lr");
  REQUIRE(lr);
  CHECK(parsed.text.substr(lr->where.value.begin, lr->where.value.end - lr->where.value.begin) == "1e-4");
  CHECK(edit_at(text, "1e-4", "'3e-4'").first);
  CHECK_FALSE(edit_at(text, "4096", "8192").first);            // a comment follows on the line
  CHECK_FALSE(edit_at(text, "8", "[8]").first);                // a flow list
  CHECK_FALSE(edit_at(text, "8", "8\n  extra: 1").first);      // a new line
  CHECK_FALSE(edit_at(text, "tensor", "pipeline").first);      // the key changed
  CHECK_FALSE(edit_at(text, "8", "").first);                   // the value became null
  std::string anchored = "a: &x\n  b: 1\nc: *x\n";
  CHECK_FALSE(edit_at(anchored, "1", "2").first);              // b is copied into c
  std::string multiline = "a: one\n  two\nb: 1\n";
  CHECK_FALSE(edit_at(multiline, "one", "three").first);       // a plain scalar over two lines
}

TEST_CASE("yaml patch: the cache answers the same text, re-stamps the file id, and follows edits", "[yaml][lsp]") {
  YamlCache cache;
  SourceSet first;
  std::string text = "a: 1\nb: x\n";
  FileId one = add_source(first, "t.yaml", text);
  YamlDocument parsed = load_yaml_cached(&cache, first, one, YamlFlavor::OmegaConf, Layer::ConfigFile);
  CHECK(cache.parses == 1);
  SourceSet second;
  add_source(second, "<command-line>", "", true);
  FileId two = add_source(second, "t.yaml", text);
  YamlDocument again = load_yaml_cached(&cache, second, two, YamlFlavor::OmegaConf, Layer::ConfigFile);
  CHECK(cache.hits == 1);
  CHECK(again.root.entries[0].value.where.value.file == two);
  CHECK(dump(again) == dump(load_yaml(second, two, YamlFlavor::OmegaConf, Layer::ConfigFile)));
  // Another flavor is another parse.
  (void)load_yaml_cached(&cache, second, two, YamlFlavor::PyYaml, Layer::ConfigFile);
  CHECK(cache.parses == 2);
  // A value edit moves the entry to the new text.
  note_edit(cache, text, ByteEdit{3, 4, "42"});
  CHECK(cache.patches == 2);  // both flavors' entries
  SourceSet third;
  FileId three = add_source(third, "t.yaml", "a: 42\nb: x\n");
  YamlDocument edited = load_yaml_cached(&cache, third, three, YamlFlavor::OmegaConf, Layer::ConfigFile);
  CHECK(cache.hits == 2);
  CHECK(dump(edited) == dump(load_yaml(third, three, YamlFlavor::OmegaConf, Layer::ConfigFile)));
  CHECK(edited.root.entries[0].value.integer == 42);
}

TEST_CASE("yaml patch: an edit between nested siblings re-parses those lines alone", "[yaml][lsp]") {
  // The shape of a data blend in a dump: a list of lists, a duplicate key
  // before it (the `blend: null` a dataclass default leaves).
  std::string text =
      "model:\n  a: 1\ntrain:\n  b: 2\ndataset:\n  blend: null\n  seq: 4\n  blend:\n  - - /d/s0\n    - /d/s1\n"
      "    - /d/s2\n    - /d/s3\n  - null\n";
  auto try_edit = [&](const std::string& from_text, size_t begin, size_t end, std::string_view replacement,
                      YamlFlavor flavor = YamlFlavor::PyYaml) {
    ParsedYaml parsed = parse(from_text, flavor);
    bool ok = patch_block_edit(parsed, ByteEdit{static_cast<uint32_t>(begin), static_cast<uint32_t>(end), replacement});
    std::string after = from_text;
    after.replace(begin, end - begin, replacement);
    if (ok) CHECK(dump(parsed.document) == dump(parse(after, flavor).document));
    CHECK(parsed.text == (ok ? after : from_text));
    return ok;
  };
  size_t s2 = text.find("    - /d/s2");
  CHECK(try_edit(text, s2, s2, "    - /d/new\n"));                      // an item inserted
  CHECK(try_edit(text, s2, s2 + 12, "    - /d/other\n    - /d/more\n"));  // an item replaced by two
  CHECK(try_edit(text, s2 + 6, s2 + 10, "x"));                          // an item's text (after the line before)
  size_t train = text.find("train:");
  CHECK(try_edit(text, train, train, "new_section: 1\n"));              // a new top-level key
  CHECK(try_edit(text, train, train, "new_section:\n  x: [1, 2]\n"));
  size_t b = text.find("  b: 2");
  CHECK(try_edit(text, b + 6, b + 6, "\n  c: 3"));                        // Enter at the end of a nested entry
  // Refused, for the section patch or a full parse.
  CHECK_FALSE(try_edit(text, train, train, "model: 2\n"));              // a duplicate top-level key
  CHECK_FALSE(try_edit(text, b, b, "  b: 5\n"));                        // a duplicate nested key
  CHECK_FALSE(try_edit(text, train, train, "  deeper: 1\n"));           // not at the children's column
  CHECK_FALSE(try_edit(text, train, train, "- item\n"));                // a list item in a map
  CHECK_FALSE(try_edit(text, s2, s2, "  seq2: 1\n"));                    // closes the inner list
  CHECK_FALSE(try_edit(text, s2, s2, "    - 'open\n"));                  // an unclosed quote
  std::string empty_value = "a:\n  k:\n  j: 1\nb: 2\n";
  size_t j = empty_value.find("  j");
  CHECK_FALSE(try_edit(empty_value, j, j, "  - x\n"));                   // would be k's value (indentless list)
  size_t last = text.find("    - /d/s3");
  CHECK_FALSE(try_edit(text, last, last + 12, "    - /d/s4\n"));       // the last item: the list around it is indentless
  // An empty list item's span is the token after it: here the line the edit inserts before.
  std::string null_item = "a:\n  - 1\n  -\nb: 2\nc: 3\n";
  size_t b_line = null_item.find("b: 2");
  CHECK_FALSE(try_edit(null_item, b_line, b_line, "d: 4\n"));
  CHECK(try_edit(null_item, null_item.find("c: 3"), null_item.find("c: 3"), "d: 4\n"));
  std::string anchored = "a:\n  k: &x 1\n  j: 1\nb: *x\n";
  CHECK_FALSE(try_edit(anchored, anchored.find("  j"), anchored.find("  j"), "  i: 2\n"));
}
