// Reusing YAML parses between lint runs of the same text, and deriving the
// parse of an edited text from the previous one when the edit provably only
// rewrites one scalar value (`key: 1` -> `key: 2`) or a few lines between
// siblings of one block collection or inside one section. The language server
// types into 3,000-line dumps; yaml-cpp takes most of a full lint's time, and
// a value edit is by far the most common change.
//
// Soundness rule: a patched parse must equal what load_yaml returns for the
// new text (values, types, every span). Anything not covered by the simple
// cases below is left to a full parse (tests/lsp_test.cpp compares the two).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lint/load/yaml/yaml_loader.h"

namespace mblint {

// load_yaml's result for exactly `text`, read as `flavor` into `layer`.
struct ParsedYaml {
  std::string text;
  YamlFlavor flavor = YamlFlavor::OmegaConf;
  Layer layer = Layer::ConfigFile;
  FileId file = kNoFile;  // the id its spans carry
  YamlDocument document;
};

// Parses kept between runs, newest last. Owned by the caller (the language
// server); run_lint reads and fills it through LintOptions::yaml_cache.
struct YamlCache {
  std::vector<ParsedYaml> entries;
  size_t capacity = 8;
  size_t hits = 0, parses = 0, patches = 0, block_patches = 0, section_patches = 0;  // for tests
};

// load_yaml with the default limits, answered from `cache` when it holds a
// parse of the same text, flavor and layer (its spans re-stamped to `file`).
// A full parse is added to the cache. A null cache parses.
YamlDocument load_yaml_cached(YamlCache* cache, const SourceSet& sources, FileId file, YamlFlavor flavor,
                              Layer layer);

// One edit of a text: bytes [begin, end) replaced by `replacement`.
struct ByteEdit {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string_view replacement;
};

// Update `parsed` (of the text before `edit`) to the text after it when the
// edit only rewrites the value of one single-line `key: value` entry and the
// value stays a simple scalar. False when in doubt: `parsed` is then unchanged
// and the caller must parse the new text.
bool patch_scalar_edit(ParsedYaml& parsed, const ByteEdit& edit);

// Update `parsed` for an edit confined to one top-level section of a block
// mapping (the lines after a `section:` line and before the next top-level
// key, which both stay as they are): that section alone is re-parsed and
// put in place of the old one, later spans moved. Lines may be added or
// removed. False when in doubt (`parsed` unchanged).
bool patch_section_edit(ParsedYaml& parsed, const ByteEdit& edit);

// Update `parsed` for an edit between children of one block collection at
// any depth (a nested map's entries, a block sequence's items): the children
// from the last one whose first line the edit leaves alone (or from the
// child whose line the edit starts at) up to the next untouched child are
// re-parsed alone and put in place of the old ones, later spans moved. This
// also covers a new top-level key between sections. False when in doubt
// (`parsed` unchanged); never when the parse has problems.
bool patch_block_edit(ParsedYaml& parsed, const ByteEdit& edit);

// Bring the cache along with an edit of a text it may hold: the entry for
// `before` becomes the entry for the edited text when patch_scalar_edit,
// patch_block_edit or patch_section_edit succeeds (otherwise it stays, for an undo, until newer parses push it out).
void note_edit(YamlCache& cache, std::string_view before, const ByteEdit& edit);

}  // namespace mblint
