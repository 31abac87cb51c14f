#include "lint/base/made_word.h"

#include <string>

namespace mblint {

MappedString word_at(std::string_view text, Span at) {
  MappedString word;
  word.file = at.file;
  for (char c : text) append_char(word, c, at.begin, at.end);
  return word;
}

MappedString unknown_word_at(std::string_view what, Span at) {
  MappedString word = word_at(what, at);
  Expansion unknown;
  unknown.end = word.text.size();
  unknown.expression = at;
  unknown.name = std::string(what);
  unknown.known = false;
  word.expansions.push_back(std::move(unknown));
  return word;
}

}  // namespace mblint
