#include "lint/base/input_rules.h"
#include "lint/load/yaml/yaml_loader.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <streambuf>
#include <istream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

namespace mblint {

namespace {

// Read the source bytes in place: yaml-cpp wants an istream.
class MemoryBuffer : public std::streambuf {
 public:
  MemoryBuffer(const char* data, size_t size) {
    char* begin = const_cast<char*>(data);
    setg(begin, begin, begin + size);
  }
};

// Thrown from the event handler to stop yaml-cpp when a limit is hit.
struct LimitReached {
  std::string message;
  YAML::Mark mark;
};

bool is_space(char c) { return c == ' ' || c == '\t'; }

// yaml-cpp reports where a node starts but not where it ends. Recover the
// extent of a scalar from the text: quoted scalars end at their closing
// quote; plain scalars at a comment, the end of the line or (in flow
// collections) a flow indicator.
Span scalar_span(const SourceFile& file, FileId id, size_t pos, bool in_flow) {
  const std::string& text = file.text;
  size_t n = text.size();
  // Skip a node's anchor (&a) and tag (!!str) properties.
  while (pos < n && (text[pos] == '&' || text[pos] == '!')) {
    while (pos < n && !is_space(text[pos]) && text[pos] != '\n') ++pos;
    while (pos < n && is_space(text[pos])) ++pos;
  }
  if (pos >= n) return make_span(id, n, n);
  char first = text[pos];
  if (first == '"' || first == '\'') {
    size_t i = pos + 1;
    while (i < n) {
      if (first == '"' && text[i] == '\\') {
        i += 2;
        continue;
      }
      if (text[i] == first) {
        if (first == '\'' && i + 1 < n && text[i + 1] == '\'') {
          i += 2;
          continue;
        }
        return make_span(id, pos, i + 1);
      }
      ++i;
    }
    return make_span(id, pos, n);
  }
  size_t end = pos;
  while (end < n && text[end] != '\n' && text[end] != '\r') {
    char c = text[end];
    if (c == '#' && end > pos && is_space(text[end - 1])) break;
    if (in_flow && (c == ',' || c == ']' || c == '}')) break;
    if (c == ':' && (end + 1 >= n || is_space(text[end + 1]) || text[end + 1] == '\n' ||
                     (in_flow && (text[end + 1] == ',' || text[end + 1] == '}' || text[end + 1] == ']')))) {
      break;
    }
    ++end;
  }
  while (end > pos && is_space(text[end - 1])) --end;
  return make_span(id, pos, end);
}

struct Frame {
  ConfigValue node;
  bool flow = false;
  bool have_key = false;       // map: a key was read, its value is next
  std::string key;
  Span key_span;
  bool key_mergeable = false;  // the key is a plain `<<`
  YAML::anchor_t anchor = YAML::NullAnchor;
  size_t nodes_at_start = 0;
  std::vector<ConfigValue> merge_sources;  // values of `<<` keys
  // Map keys -> index in node.entries, built once the map has
  // kIndexedMapSize entries: duplicate-key checks stay linear in the file.
  std::unordered_map<std::string, size_t> index;
};

constexpr size_t kIndexedMapSize = 16;

// How a scalar was tagged: plain ("?"), a core type tag that types it like a
// plain scalar (!!int, !!float, !!bool, !!null), or anything else (quoted, !!str, ...).
enum class ScalarTag : uint8_t { Plain, CoreTyped, Other };

ScalarTag classify_tag(const std::string& tag) {
  if (tag == "?") return ScalarTag::Plain;
  if (tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" || tag == "tag:yaml.org,2002:bool" ||
      tag == "tag:yaml.org,2002:null") {
    return ScalarTag::CoreTyped;
  }
  return ScalarTag::Other;
}

// Builds the value tree from the parser's events (replayed by EventLog).
class TreeBuilder {
 public:
  TreeBuilder(const SourceFile& source, FileId file, YamlFlavor flavor, Layer layer,
              const YamlLimits& limits, std::vector<Diagnostic>& problems)
      : source_(source), file_(file), flavor_(flavor), layer_(layer),
        limits_(limits), problems_(problems) {
    stack_.reserve(16);  // typical nesting depth: frames are not moved as the stack grows
  }

  bool finished() const { return finished_; }
  ConfigValue take_root() { return std::move(root_); }

  void OnDocumentStart(const YAML::Mark&) {}
  void OnDocumentEnd() { finished_ = true; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) {
    // An empty value (`key:`) has no text of its own: point just after the
    // key's colon, where a value would be written.
    Span span = empty_value_span();
    if (!span.valid()) {
      span = scalar_span(source_, file_, position(mark), in_flow());
    } else if (auto word = written_null_at(span.end)) {
      span = scalar_span(source_, file_, *word, in_flow());
    }
    ConfigValue value = make_null(provenance(span));
    count_nodes(1, mark);
    complete(std::move(value), anchor, mark, /*plain_text=*/"~", /*plain=*/true);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) return;  // yaml-cpp reports unknown anchors itself
    count_nodes(it->second.node_count, mark);
    ConfigValue copy = it->second.value;
    complete(std::move(copy), YAML::NullAnchor, mark, "", false);
  }

  void OnScalar(const YAML::Mark& mark, ScalarTag tag, YAML::anchor_t anchor, std::string_view text) {
    count_nodes(1, mark);
    Span span = scalar_span(source_, file_, position(mark), in_flow());
    bool plain = tag == ScalarTag::Plain;
    if (anchor == YAML::NullAnchor && expecting_key()) {
      // Half the scalars of a config are keys: only their text and place are
      // kept, so they are neither typed nor built into a value.
      set_key(text, span, plain);
      return;
    }
    // Explicit core tags type the text like a plain scalar; anything else is a string.
    bool typed = tag != ScalarTag::Other;
    ConfigValue value = typed ? type_plain_scalar(text, flavor_) : make_string(std::string(text));
    value.quoted = !typed;
    value.where = provenance(span);
    complete(std::move(value), anchor, mark, text, plain);
  }

  // `size`: how many items or entries the container will hold, at most (a
  // replayed parse knows): its vector is allocated once.
  void OnSequenceStart(const YAML::Mark& mark, YAML::anchor_t anchor, YAML::EmitterStyle::value style,
                       size_t size) {
    open(ValueKind::List, mark, anchor, style).node.items.reserve(size);
  }
  void OnSequenceEnd() { close(); }

  void OnMapStart(const YAML::Mark& mark, YAML::anchor_t anchor, YAML::EmitterStyle::value style,
                  size_t size) {
    open(ValueKind::Map, mark, anchor, style).node.entries.reserve(size);
  }
  void OnMapEnd() {
    apply_merge_keys(stack_.back());
    close();
  }

 private:
  struct Anchored {
    ConfigValue value;
    size_t node_count = 0;
  };

  size_t position(const YAML::Mark& mark) const {
    if (mark.is_null() || mark.pos < 0) return source_.text.size();
    return static_cast<size_t>(mark.pos);
  }

  bool in_flow() const { return !stack_.empty() && stack_.back().flow; }

  Span empty_value_span() const {
    if (stack_.empty() || stack_.back().node.kind != ValueKind::Map || !stack_.back().have_key) return {};
    size_t at = stack_.back().key_span.end;
    const std::string& text = source_.text;
    while (at < text.size() && is_space(text[at])) ++at;
    if (at < text.size() && text[at] == ':') ++at;
    return make_span(file_, at, at);
  }

  // `key: null` / `key: ~` spell the null out: its span is that word, so a
  // fix replaces it rather than inserting before it.
  std::optional<size_t> written_null_at(size_t at) const {
    const std::string& text = source_.text;
    while (at < text.size() && is_space(text[at])) ++at;
    for (std::string_view word : {"null", "Null", "NULL", "~"}) {
      if (text.compare(at, word.size(), word) != 0) continue;
      size_t after = at + word.size();
      char c = after < text.size() ? text[after] : '\n';
      if (is_space(c) || c == '\n' || c == '\r' || c == '#' || c == ',' || c == '}' || c == ']') return at;
    }
    return std::nullopt;
  }

  // Containers end where their last child ends (block style) or at their
  // closing bracket (flow style).
  void set_container_end(Frame& frame) const {
    ConfigValue& node = frame.node;
    uint32_t end = node.where.value.begin;
    if (node.kind == ValueKind::List && !node.items.empty()) end = node.items.back().where.value.end;
    if (node.kind == ValueKind::Map && !node.entries.empty()) {
      for (const MapEntry& entry : node.entries) end = std::max(end, entry.value.where.value.end);
    }
    if (frame.flow) {
      const std::string& text = source_.text;
      char close = node.kind == ValueKind::List ? ']' : '}';
      size_t at = end;
      // Only separators, blank space and comments can stand before the bracket.
      while (at < text.size() && text[at] != close) {
        char c = text[at];
        if (c == '#') {
          while (at < text.size() && text[at] != '\n') ++at;
          continue;
        }
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',') break;
        ++at;
      }
      if (at < text.size() && text[at] == close) end = static_cast<uint32_t>(at + 1);
    }
    node.where.value.end = std::max(end, node.where.value.begin);
  }

  Provenance provenance(Span value_span) const {
    Provenance where;
    where.layer = layer_;
    where.value = value_span;
    return where;
  }

  void count_nodes(size_t count, const YAML::Mark& mark) {
    nodes_ += count;
    if (nodes_ > limits_.max_nodes) {
      throw LimitReached{fmt::format("the document expands to more than {} nodes (aliases of aliases?); "
                                     "mblint stops reading it here",
                                     limits_.max_nodes),
                         mark};
    }
  }

  // The frame is built in place on the stack: a node is moved once, when it is complete.
  Frame& open(ValueKind kind, const YAML::Mark& mark, YAML::anchor_t anchor,
              YAML::EmitterStyle::value style) {
    count_nodes(1, mark);  // the depth limit stopped the parser already (EventLog::open)
    Span start = make_span(file_, position(mark), position(mark));
    Frame& frame = stack_.emplace_back();
    frame.node.kind = kind;
    frame.node.where = provenance(start);
    frame.flow = style == YAML::EmitterStyle::Flow ||
                 (position(mark) < source_.text.size() &&
                  (source_.text[position(mark)] == '[' || source_.text[position(mark)] == '{'));
    frame.anchor = anchor;
    frame.nodes_at_start = nodes_;
    return frame;
  }

  void close() {
    Frame& frame = stack_.back();
    set_container_end(frame);
    ConfigValue node = std::move(frame.node);
    if (frame.anchor != YAML::NullAnchor) {
      anchors_[frame.anchor] = Anchored{node, nodes_ - frame.nodes_at_start + 1};
    }
    stack_.pop_back();
    complete(std::move(node), YAML::NullAnchor, YAML::Mark(), "", false);
  }

  // A node is finished: it is a map key, a map value, a list item or the root.
  void complete(ConfigValue&& value, YAML::anchor_t anchor, const YAML::Mark&, std::string_view text, bool plain) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchored{value, 1};
    if (stack_.empty()) {
      root_ = std::move(value);
      return;
    }
    Frame& top = stack_.back();
    if (top.node.kind == ValueKind::List) {
      top.node.items.push_back(std::move(value));
      return;
    }
    if (!top.have_key) {
      set_key(key_text(value, text), value.where.value, plain && text == "<<");
      return;
    }
    top.have_key = false;
    value.where.key = top.key_span;
    add_entry(top, std::move(value));
  }

  bool expecting_key() const {
    return !stack_.empty() && stack_.back().node.kind == ValueKind::Map && !stack_.back().have_key;
  }

  // The next value of the map on top of the stack belongs to this key.
  void set_key(std::string_view text, Span span, bool plain) {
    Frame& top = stack_.back();
    top.have_key = true;
    top.key = text;
    top.key_span = span;
    top.key_mergeable = plain && text == "<<";
  }

  static std::string key_text(const ConfigValue& key, std::string_view text) {
    if (key.kind == ValueKind::Map || key.kind == ValueKind::List) return to_display(key);
    return std::string(text);
  }

  void add_entry(Frame& frame, ConfigValue&& value) {
    if (frame.key_mergeable) {
      frame.merge_sources.push_back(std::move(value));
      return;
    }
    if (MapEntry* entry = find_entry(frame, frame.key)) {
      report_duplicate(frame, *entry);
      entry->value = std::move(value);  // the last value wins (PyYAML, yq)
      return;
    }
    MapEntry& added = frame.node.entries.emplace_back();  // the key moves in: read again only at the next key
    added.key = std::move(frame.key);
    added.value = std::move(value);
    if (!frame.index.empty()) frame.index.emplace(added.key, frame.node.entries.size() - 1);
  }

  static MapEntry* find_entry(Frame& frame, const std::string& key) {
    std::vector<MapEntry>& entries = frame.node.entries;
    if (entries.size() < kIndexedMapSize) {
      for (MapEntry& entry : entries) {
        if (entry.key == key) return &entry;
      }
      return nullptr;
    }
    if (frame.index.empty()) {
      for (size_t i = 0; i < entries.size(); ++i) frame.index.emplace(entries[i].key, i);
    }
    auto found = frame.index.find(key);
    return found == frame.index.end() ? nullptr : &entries[found->second];
  }

  void report_duplicate(const Frame& frame, const MapEntry& first) {
    bool fatal = flavor_ == YamlFlavor::OmegaConf;
    Diagnostic d = input_finding(input_rule::kDuplicateKey, "", frame.key_span, "keep one of the two entries");
    // PyYAML and yq load the file (the later value wins): a mistake, not a refusal.
    if (!fatal) d = demoted(std::move(d), Severity::Warning);
    d.message = fatal ? fmt::format("duplicate key '{}': OmegaConf refuses to load this file "
                                    "(\"found duplicate key\")",
                                    frame.key)
                      : fmt::format("duplicate key '{}': the earlier value {} is silently replaced",
                                    frame.key, to_display(first.value));
    d.notes.push_back(Note{fmt::format("'{}' first set here", frame.key), first.value.where.key});
    problems_.push_back(std::move(d));
  }

  // YAML merge keys (`<<: *base`): keys written in the map win over merged
  // ones, earlier merge sources win over later ones.
  void apply_merge_keys(Frame& frame) {
    if (frame.merge_sources.empty()) return;
    ConfigValue& map = frame.node;
    std::unordered_set<std::string> present;
    for (const MapEntry& entry : map.entries) present.insert(entry.key);
    for (const ConfigValue& source : frame.merge_sources) {
      if (source.kind == ValueKind::Map) {
        merge_missing(map, source, present);
      } else if (source.kind == ValueKind::List) {
        for (const ConfigValue& item : source.items) {
          if (item.kind == ValueKind::Map) merge_missing(map, item, present);
        }
      }
    }
  }

  static void merge_missing(ConfigValue& map, const ConfigValue& source, std::unordered_set<std::string>& present) {
    for (const MapEntry& entry : source.entries) {
      if (present.insert(entry.key).second) map.entries.push_back(entry);
    }
  }

  const SourceFile& source_;
  FileId file_;
  YamlFlavor flavor_;
  Layer layer_;
  const YamlLimits& limits_;
  std::vector<Diagnostic>& problems_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, Anchored> anchors_;
  ConfigValue root_;
  size_t nodes_ = 0;
  bool finished_ = false;
};

// yaml-cpp's events, recorded as the parser reports them and replayed into a
// TreeBuilder once the parser is done. Building the tree at each event
// interleaves two large working sets, the parser's and the builder's (value
// trees, malloc), and each evicts the other's code from the CPU caches: with
// two passes cachegrind counts half the instruction-cache misses. The record
// also tells the builder each container's size before it is built.
class EventLog : public YAML::EventHandler {
 public:
  EventLog(size_t source_size, size_t max_depth) : max_depth_(max_depth) {
    texts_.reserve(source_size);
    events_.reserve(source_size / 16);  // about one event per 16 bytes of config
  }

  void OnDocumentStart(const YAML::Mark& mark) override { add(Kind::DocumentStart, mark); }
  void OnDocumentEnd() override { add(Kind::DocumentEnd, YAML::Mark()); }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { add(Kind::Null, mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override { add(Kind::Alias, mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    Event& event = add(Kind::Scalar, mark, anchor);
    event.tag = classify_tag(tag);
    event.text_begin = texts_.size();
    event.text_size = text.size();
    texts_.append(text);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open(Kind::SequenceStart, mark, anchor, style);
  }
  void OnSequenceEnd() override { close(Kind::SequenceEnd); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open(Kind::MapStart, mark, anchor, style);
  }
  void OnMapEnd() override { close(Kind::MapEnd); }

  // Feed the recorded events to `builder`, in order.
  void replay(TreeBuilder& builder) const {
    for (const Event& e : events_) {
      switch (e.kind) {
        case Kind::DocumentStart: builder.OnDocumentStart(e.mark); break;
        case Kind::DocumentEnd: builder.OnDocumentEnd(); break;
        case Kind::Null: builder.OnNull(e.mark, e.anchor); break;
        case Kind::Alias: builder.OnAlias(e.mark, e.anchor); break;
        case Kind::Scalar:
          builder.OnScalar(e.mark, e.tag, e.anchor, std::string_view(texts_).substr(e.text_begin, e.text_size));
          break;
        case Kind::SequenceStart: builder.OnSequenceStart(e.mark, e.anchor, e.style, e.children); break;
        case Kind::SequenceEnd: builder.OnSequenceEnd(); break;
        case Kind::MapStart: builder.OnMapStart(e.mark, e.anchor, e.style, e.children / 2); break;
        case Kind::MapEnd: builder.OnMapEnd(); break;
      }
    }
  }

 private:
  enum class Kind : uint8_t {
    DocumentStart, DocumentEnd, Null, Alias, Scalar, SequenceStart, SequenceEnd, MapStart, MapEnd
  };
  struct Event {
    Kind kind = Kind::Null;
    ScalarTag tag = ScalarTag::Plain;
    YAML::EmitterStyle::value style = YAML::EmitterStyle::Default;
    YAML::Mark mark;
    YAML::anchor_t anchor = YAML::NullAnchor;
    size_t text_begin = 0;  // a scalar's text in texts_
    size_t text_size = 0;
    size_t children = 0;  // a map or sequence start: the nodes directly inside (keys count)
  };

  Event& add(Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor = YAML::NullAnchor) {
    // A node directly inside the innermost open container (its end is no node).
    if (!open_.empty() && kind != Kind::MapEnd && kind != Kind::SequenceEnd) ++events_[open_.back()].children;
    Event& event = events_.emplace_back();
    event.kind = kind;
    event.mark = mark;
    event.anchor = anchor;
    return event;
  }

  // The depth limit stops the parser here, not in the replay: yaml-cpp
  // recurses per level and must not be let go arbitrarily deep.
  void open(Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor, YAML::EmitterStyle::value style) {
    if (open_.size() >= max_depth_) {
      throw LimitReached{fmt::format("nesting deeper than {} levels; mblint stops reading here", max_depth_),
                         mark};
    }
    add(kind, mark, anchor).style = style;
    open_.push_back(events_.size() - 1);
  }
  void close(Kind kind) {
    if (!open_.empty()) open_.pop_back();
    add(kind, YAML::Mark());
  }

  size_t max_depth_;
  std::vector<size_t> open_;  // the start events of the containers not closed yet
  std::vector<Event> events_;
  std::string texts_;  // the scalars' texts, one after another
};

Span mark_span(const SourceFile& file, FileId id, const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return make_span(id, file.text.size(), file.text.size());
  uint32_t offset = offset_of(file, LineCol{static_cast<uint32_t>(mark.line + 1),
                                            static_cast<uint32_t>(mark.column + 1)});
  uint32_t end = offset < file.text.size() && file.text[offset] != '\n' ? offset + 1 : offset;
  return make_span(id, offset, end);
}

Diagnostic syntax_problem(std::string message, Span where, std::string help) {
  return input_finding(input_rule::kYamlSyntax, std::move(message), where, std::move(help));
}

// yaml-cpp's messages are terse ("end of map not found"); say what it means.
std::string explain_parser_message(const std::string& message) {
  if (message.empty()) return "invalid YAML";
  return "invalid YAML: " + message;
}

}  // namespace

YamlDocument load_yaml(const SourceSet& sources, FileId file, YamlFlavor flavor, Layer layer,
                       const YamlLimits& limits) {
  return load_yaml(sources.files[file], file, flavor, layer, limits);
}

YamlDocument load_yaml(const SourceFile& source, FileId file, YamlFlavor flavor, Layer layer,
                       const YamlLimits& limits) {
  YamlDocument document;
  MemoryBuffer buffer(source.text.data(), source.text.size());
  std::istream stream(&buffer);
  TreeBuilder builder(source, file, flavor, layer, limits, document.problems);
  EventLog events(source.text.size(), limits.max_depth);
  std::optional<YAML::Parser> parser;
  bool has_document = false;
  std::optional<LimitReached> limit;
  std::optional<YAML::Exception> syntax_error;
  try {
    parser.emplace(stream);
    has_document = parser->HandleNextDocument(events);
  } catch (const LimitReached& reached) {
    limit = reached;
  } catch (const YAML::Exception& error) {
    syntax_error = error;
  }
  // The tree is built from what was read, up to any error.
  try {
    events.replay(builder);
  } catch (const LimitReached& reached) {
    limit = reached;  // it came before anything the parser stopped at
    syntax_error.reset();
  }
  if (!limit && !syntax_error && has_document) {
    document.ok = true;
    document.root = builder.take_root();
    // A second document: Bridge (PyYAML/OmegaConf load) refuses the file.
    struct Ignore : YAML::EventHandler {
      YAML::Mark start;
      bool seen = false;
      void OnDocumentStart(const YAML::Mark& mark) override {
        if (!seen) start = mark;
        seen = true;
      }
      void OnDocumentEnd() override {}
      void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
      void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
      void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
      void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                           YAML::EmitterStyle::value) override {}
      void OnSequenceEnd() override {}
      void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                      YAML::EmitterStyle::value) override {}
      void OnMapEnd() override {}
    } rest;
    try {
      if (parser->HandleNextDocument(rest) && rest.seen) {
        document.problems.push_back(syntax_problem(
            "a second YAML document: Megatron Bridge loads exactly one document per file",
            mark_span(source, file, rest.start), "remove the `---` and everything after it, or split the file"));
      }
    } catch (const YAML::Exception& error) {
      syntax_error = error;  // in the second document: the first one stands
    }
  } else if (!limit && !syntax_error) {
    document.ok = true;  // empty file: an empty config
  }
  if (limit) {
    document.ok = false;
    document.problems.push_back(syntax_problem(limit->message, mark_span(source, file, limit->mark),
                                               "simplify the file"));
  } else if (syntax_error) {
    if (!document.ok && builder.finished()) {
      document.ok = true;
      document.root = builder.take_root();
    }
    document.problems.push_back(syntax_problem(explain_parser_message(syntax_error->msg),
                                               mark_span(source, file, syntax_error->mark),
                                               "fix the YAML syntax at this position"));
  }
  return document;
}

}  // namespace mblint
