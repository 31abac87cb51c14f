#include "lint/base/input_rules.h"
#include "lint/base/text.h"
#include "lint/load/dialects/megatron_lm_flags.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "lint/model/schema.h"

namespace mblint {

namespace {

#include "lint/load/dialects/megatron_lm_flags_data.inc"

constexpr size_t kReleaseCount = std::size(kMegatronLmReleases);
static_assert(kReleaseCount < 31, "release masks are 32 bits, the last for the older releases");

// Did-you-mean is worked out for this many unrecognized flags of one command
// line (each compares against every flag); the rest are reported without it.
constexpr size_t kMaxSuggestions = 100;
constexpr size_t kMaxSuggestedLength = 200;
// Flags an unknown entry script's note lists by name.
constexpr size_t kListedInNote = 5;

struct Index {
  std::unordered_map<std::string_view, uint32_t> base;
  // script -> (flag -> releases)
  std::unordered_map<std::string_view, std::unordered_map<std::string_view, uint32_t>> extra;
  std::unordered_map<std::string_view, uint32_t> script_releases;
};

const Index& index() {
  static const Index built = [] {
    Index index;
    for (const MegatronLmKnownFlag& f : kMegatronLmBaseFlags) index.base.emplace(f.flag, f.releases);
    for (const MegatronLmEntryFlag& f : kMegatronLmEntryFlags) index.extra[f.script].emplace(f.flag, f.releases);
    for (const MegatronLmEntryScript& s : kMegatronLmEntryScripts) index.script_releases.emplace(s.path, s.releases);
    return index;
  }();
  return built;
}

// The releases in which `parser` accepts `flag`.
uint32_t accepted_in(std::string_view flag, const FlagParser& parser) {
  const Index& idx = index();
  uint32_t mask = 0;
  if (auto it = idx.base.find(flag); it != idx.base.end()) mask |= it->second;
  for (std::string_view script : parser.scripts) {
    auto extra = idx.extra.find(script);
    if (extra == idx.extra.end()) continue;
    if (auto it = extra->second.find(flag); it != extra->second.end()) mask |= it->second;
  }
  return mask;
}

// The release a version runs: the newest one at or before it. Versions older
// than the oldest release read, or past the development tree's minor, are
// not checked.
std::optional<size_t> release_index(Version version) {
  const Version oldest = kMegatronLmReleases[0].version;
  const Version newest = kMegatronLmReleases[kReleaseCount - 1].version;
  if (version < oldest) return std::nullopt;
  if (version.major == newest.major && version.minor == newest.minor) return kReleaseCount - 1;
  if (version > newest) return std::nullopt;
  size_t found = 0;
  for (size_t i = 0; i < kReleaseCount; ++i) {
    if (kMegatronLmReleases[i].version <= version) found = i;
  }
  return found;
}

std::string release_name(size_t i) {
  const MegatronLmRelease& r = kMegatronLmReleases[i];
  if (i + 1 == kReleaseCount) return fmt::format("{} (development, {})", to_string(r.version), r.label);
  return to_string(r.version);
}

// "0.14.0 to 0.17.1", "0.19.0 and 0.20.0 (development, ...)": the releases of a mask, in runs.
std::string releases_text(uint32_t mask) {
  std::vector<std::string> runs;
  for (size_t i = 0; i < kReleaseCount;) {
    if (!(mask & (1u << i))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < kReleaseCount && (mask & (1u << (j + 1)))) ++j;
    runs.push_back(i == j ? release_name(i) : fmt::format("{} to {}", release_name(i), release_name(j)));
    i = j + 1;
  }
  if (mask & kOlderReleases) {
    runs.insert(runs.begin(), fmt::format("releases before {} ({})", to_string(kMegatronLmReleases[0].version),
                                          kOlderReleasesLabel));
  }
  std::string out;
  for (size_t k = 0; k < runs.size(); ++k) {
    if (k > 0) out += k + 1 == runs.size() ? " and " : ", ";
    out += runs[k];
  }
  return out;
}

// The newest release before `at` in `mask`.
std::string last_release_with(uint32_t mask, size_t at) {
  for (size_t i = at; i-- > 0;) {
    if (mask & (1u << i)) return release_name(i);
  }
  return fmt::format("the releases before {} ({})", to_string(kMegatronLmReleases[0].version), kOlderReleasesLabel);
}

// The oldest release after `at` in `mask`.
std::string first_release_after(uint32_t mask, size_t at) {
  for (size_t i = at + 1; i < kReleaseCount; ++i) {
    if (mask & (1u << i)) return release_name(i);
  }
  return release_name(kReleaseCount - 1);
}

// Another entry script mblint knows has it (--freeze-ViT is pretrain_vlm.py's).
bool known_to_other_scripts(std::string_view flag) {
  for (const auto& [script, flags] : index().extra) {
    if (flags.count(flag)) return true;
  }
  return false;
}

// Every flag `parser` accepts at release `at`.
std::vector<std::string_view> flags_at(size_t at, const FlagParser& parser) {
  const Index& idx = index();
  std::vector<std::string_view> flags;
  for (const MegatronLmKnownFlag& f : kMegatronLmBaseFlags) {
    if (f.releases & (1u << at)) flags.push_back(f.flag);
  }
  for (std::string_view script : parser.scripts) {
    auto extra = idx.extra.find(script);
    if (extra == idx.extra.end()) continue;
    for (const auto& [flag, mask] : extra->second) {
      if (mask & (1u << at)) flags.push_back(flag);
    }
  }
  return flags;
}

struct Suggestion {
  std::string flag;
  bool abbreviation = false;   // `flag` starts with what was written
  bool underscores = false;    // written with '_' where Megatron-LM has '-'
  size_t distance = 0;         // edits from what was written
  // Close enough to call the flag a typo of this one: an abbreviation,
  // underscores, or one edit per ten characters (--use-mpi is two edits from
  // --use-mup, and a fork's own flag as well as a typo).
  bool certain(std::string_view written) const {
    return abbreviation || underscores || distance <= std::max<size_t>(1, written.size() / 10);
  }
};

std::optional<Suggestion> suggest(std::string_view written, const std::vector<std::string_view>& accepted) {
  if (written.size() > kMaxSuggestedLength) return std::nullopt;
  std::string dashed(written);
  std::replace(dashed.begin() + 2, dashed.end(), '_', '-');
  if (dashed != written && std::find(accepted.begin(), accepted.end(), dashed) != accepted.end()) {
    return Suggestion{dashed, false, true, 0};
  }
  // An abbreviation (allow_abbrev=False): only a unique completion is offered.
  std::vector<std::string_view> completions;
  for (std::string_view flag : accepted) {
    if (flag.size() > written.size() && flag.substr(0, written.size()) == written) completions.push_back(flag);
  }
  if (completions.size() == 1 && written.size() > 3) {
    return Suggestion{std::string(completions.front()), true, false, completions.front().size() - written.size()};
  }
  size_t threshold = std::max<size_t>(2, written.size() / 5);
  std::optional<std::string_view> best;
  size_t best_distance = threshold + 1;
  for (std::string_view flag : accepted) {
    size_t gap = flag.size() > written.size() ? flag.size() - written.size() : written.size() - flag.size();
    if (gap >= best_distance) continue;
    size_t distance = edit_distance(written, flag);
    if (distance < best_distance || (distance == best_distance && best && flag < *best)) {
      best_distance = distance;
      best = flag;
    }
  }
  if (!best) return std::nullopt;
  return Suggestion{std::string(*best), false, false, best_distance};
}

bool is_flag_word(const MappedString& word) {
  return word.text.size() > 2 && word.text.compare(0, 2, "--") == 0 && !has_unknown(word, 0, 2);
}

// One flag as written that the parser does not accept at the release.
struct Unrecognized {
  MappedString name;  // the `--name` part of the word
  Span entry;         // the YAML entry it came from (functional tests), else invalid
  uint32_t releases;  // where it is accepted, 0 when nowhere
};

std::vector<Unrecognized> unrecognized_flags(const MegatronArgv& argv, const FlagParser& parser, size_t at) {
  std::vector<Unrecognized> out;
  for (size_t i = 0; i < argv.words.size(); ++i) {
    const MappedString& word = argv.words[i];
    if (!is_flag_word(word)) continue;
    size_t eq = word.text.find('=');
    size_t length = eq == std::string::npos ? word.text.size() : eq;
    if (has_unknown(word, 0, length)) continue;  // --$NAME: not known statically
    std::string_view name = std::string_view(word.text).substr(0, length);
    uint32_t mask = accepted_in(name, parser);
    if (mask & (1u << at)) continue;
    Span entry = i < argv.entries.size() ? argv.entries[i] : Span{};
    out.push_back(Unrecognized{substring(word, 0, length), entry, mask});
  }
  return out;
}

// Where the flag's name is written, for the diagnostic and for a rename
// (only when the bytes there are the name itself).
Span name_span(const Unrecognized& u) {
  Span span = span_of(u.name, 0, u.name.text.size());
  return span.valid() ? span : u.entry;
}

bool written_verbatim(const Unrecognized& u, const SourceSet& sources) {
  Span span = span_of(u.name, 0, u.name.text.size());
  if (!span.valid() || !u.name.expansions.empty()) return false;
  if (span.file < 0 || static_cast<size_t>(span.file) >= sources.files.size()) return false;
  const SourceFile& file = sources.files[span.file];
  if (file.synthetic || span.end > file.text.size() || span.end - span.begin != u.name.text.size()) return false;
  return std::string_view(file.text).substr(span.begin, span.end - span.begin) == u.name.text;
}

Diagnostic unknown_flag(std::string message, Span where) {
  return input_finding(input_rule::kUnknownFlag, std::move(message), where);
}

void add_suggestion(Diagnostic& d, const Unrecognized& u, const std::optional<Suggestion>& s,
                    const SourceSet& sources) {
  if (!s) return;
  if (s->abbreviation) {
    d.help = fmt::format("write it in full, {}: Megatron-LM's parser does not accept abbreviations "
                         "(allow_abbrev=False)",
                         s->flag);
  } else if (s->underscores) {
    d.help = fmt::format("did you mean {}? Megatron-LM spells its flags with dashes", s->flag);
  } else {
    d.help = fmt::format("did you mean {}?", s->flag);
  }
  Fix fix;
  fix.description = fmt::format("replace {} with {}", u.name.text, s->flag);
  fix.safety = FixSafety::Unsafe;  // the value starts to apply
  if (written_verbatim(u, sources)) fix.edits.push_back(TextEdit{span_of(u.name, 0, u.name.text.size()), s->flag});
  d.fixes.push_back(std::move(fix));
}

std::string parser_name(const FlagParser& parser, size_t at) {
  return fmt::format("{} in Megatron-LM {}", parser.entry, release_name(at));
}

void report(const Unrecognized& u, const FlagParser& parser, const FlagCheckOptions& options, size_t at,
            const std::optional<Suggestion>& suggestion, const SourceSet& sources, std::vector<Diagnostic>& out,
            bool* fork) {
  const std::string& name = u.name.text;
  Span where = name_span(u);
  if (u.releases == 0) {
    // A misspelling of a flag, or another script's flag, is a mistake for
    // certain. A flag no release of any script has is one too for the
    // release the user names; under mblint's assumed release the script may
    // also be a fork of Megatron-LM that adds it (llm-jp's --use-mpi).
    bool certain = (suggestion && suggestion->certain(name)) || options.version_given || known_to_other_scripts(name);
    std::string message = fmt::format("unrecognized argument {}: {} stops with \"unrecognized arguments\"", name,
                                      parser_name(parser, at));
    if (!certain) {
      std::string_view oldest = kOlderReleasesLabel;
      message += fmt::format(" (no release from {} to main knows it; a fork of Megatron-LM may add it)",
                             oldest.substr(0, oldest.find(' ')));
    }
    Diagnostic d = unknown_flag(std::move(message), where);
    // A flag no release knows may still come from a fork of Megatron-LM.
    if (!certain) d = demoted(std::move(d), Severity::Warning);
    if (!certain) *fork = true;
    add_suggestion(d, u, suggestion, sources);
    if (d.help.empty()) {
      d.help = certain ? fmt::format("remove {}, or check its spelling against the entry script's --help", name)
                       : fmt::format("remove {}; if your Megatron-LM is a fork that adds it, say so with "
                                     "`# mblint: disable=unknown-flag -- fork flag` on its line",
                                     name);
    }
    for (const Span& definition : definitions_in(u.name, 0, name.size())) {
      d.notes.push_back(Note{"the flag comes from here", definition});
    }
    out.push_back(std::move(d));
    return;
  }
  // Accepted by other releases than the one checked.
  bool later = ((u.releases & ~kOlderReleases) >> at) != 0;
  std::string when = fmt::format("{} accepts it in {}", parser.entry, releases_text(u.releases));
  if (options.version_given) {
    Diagnostic d = unknown_flag(fmt::format("unrecognized argument {}: {} stops with \"unrecognized arguments\"; {}",
                                            name, parser_name(parser, at), when),
                                where);
    d.help = later ? fmt::format("remove {}, or run Megatron-LM {} or later", name, first_release_after(u.releases, at))
                   : fmt::format("remove {}: Megatron-LM dropped it after {}", name, last_release_with(u.releases, at));
    out.push_back(std::move(d));
    return;
  }
  // Another release accepts the flag and the job did not say which it runs:
  // information, not a fault.
  Diagnostic d = demoted(
      unknown_flag(fmt::format("{} is not an argument of {}, the release mblint assumes; {}", name,
                               parser_name(parser, at), when),
                   where),
      Severity::Note);
  d.help = "pass --megatron-core-version with the release the job runs to check its flags against it";
  out.push_back(std::move(d));
}

void note_unchecked(const std::vector<Unrecognized>& flags, const FlagParser& parser, std::string_view why,
                    Span program, std::vector<Diagnostic>& out) {
  if (flags.empty()) return;
  std::string listed;
  for (size_t i = 0; i < flags.size() && i < kListedInNote; ++i) {
    listed += (i == 0 ? "" : ", ") + flags[i].name.text;
  }
  if (flags.size() > kListedInNote) listed += fmt::format(" and {} more", flags.size() - kListedInNote);
  Diagnostic d = unknown_flag(
      fmt::format("{} flag{} that Megatron-LM's own parser does not accept ({}) {} not checked: {}", flags.size(),
                  flags.size() == 1 ? "" : "s", listed, flags.size() == 1 ? "is" : "are", why),
      program.valid() ? program : name_span(flags.front()));
  d = demoted(std::move(d), Severity::Note);  // mblint could not check them: not a finding about them
  (void)parser;
  d.help = "check their spelling against the script's --help";
  out.push_back(std::move(d));
}

// Megatron-DeepSpeed's pretrain_gpt.py has Megatron-LM's name and its own
// parser (DeepSpeed's --deepspeed, --deepspeed_config, --zero-stage, ...).
std::optional<std::string> deepspeed_flag(const MegatronArgv& argv) {
  for (const MappedString& word : argv.words) {
    if (!is_flag_word(word)) continue;
    std::string_view name = std::string_view(word.text).substr(0, word.text.find('='));
    if (name.substr(0, 11) == "--deepspeed" || name == "--zero-stage") return std::string(name);
  }
  return std::nullopt;
}

}  // namespace

bool megatron_deepspeed_argv(const MegatronArgv& argv) { return deepspeed_flag(argv).has_value(); }

std::span<const MegatronLmRelease> megatron_lm_releases() { return kMegatronLmReleases; }
std::span<const MegatronLmKnownFlag> megatron_lm_base_flags() { return kMegatronLmBaseFlags; }

FlagParser parser_for_program(std::string_view program) {
  FlagParser parser;
  std::string_view best;
  for (const MegatronLmEntryScript& script : kMegatronLmEntryScripts) {
    size_t n = script.path.size();
    bool match = ends_with(program, script.path) && (program.size() == n || program[program.size() - n - 1] == '/');
    if (match && script.path.size() > best.size()) best = script.path;
  }
  if (best.empty()) return parser;
  parser.known = true;
  parser.scripts.push_back(best);
  parser.entry = std::string(best.substr(best.rfind('/') == std::string_view::npos ? 0 : best.rfind('/') + 1));
  return parser;
}

FlagParser parser_for_test_config(std::string_view path) {
  FlagParser parser;
  parser.known = true;
  constexpr std::string_view kCases = "test_cases/";
  size_t at = path.rfind(kCases);
  std::string family;
  if (at != std::string_view::npos) {
    std::string_view rest = path.substr(at + kCases.size());
    family = std::string(rest.substr(0, rest.find('/')));
  }
  for (const MegatronLmTestFamily& f : kMegatronLmTestFamilies) {
    if (f.family == family) parser.scripts.push_back(f.script);
  }
  if (!parser.scripts.empty()) {
    parser.entry = fmt::format("the test's script ({} family)", family);
    return parser;
  }
  for (const MegatronLmEntryScript& script : kMegatronLmEntryScripts) parser.scripts.push_back(script.path);
  parser.entry = "the test's script (any entry script)";
  return parser;
}

FlagCheck check_megatron_lm_flags(const MegatronArgv& argv, const FlagParser& parser, const FlagCheckOptions& options,
                                  const SourceSet& sources, Span program) {
  FlagCheck out;
  std::optional<size_t> at = release_index(options.version);
  size_t newest = kReleaseCount - 1;
  std::optional<std::string> deepspeed = parser.known ? deepspeed_flag(argv) : std::nullopt;
  if (!parser.known || !at || deepspeed) {
    // Flags no release of Megatron-LM's own parser knows: listed, not judged.
    FlagParser base_only;
    std::vector<Unrecognized> flags = unrecognized_flags(argv, base_only, at.value_or(newest));
    flags.erase(std::remove_if(flags.begin(), flags.end(), [](const Unrecognized& u) { return u.releases != 0; }),
                flags.end());
    std::string why = deepspeed ? fmt::format("the command line has DeepSpeed's {}: a Megatron-DeepSpeed script, "
                                              "whose parser mblint does not know",
                                              *deepspeed)
                      : !parser.known
                          ? "the entry script is not one of Megatron-LM's that mblint knows, and it may add arguments "
                            "of its own (extra_args_provider)"
                          : fmt::format("mblint knows Megatron-LM's flags for {} to {}, not {}",
                                        to_string(kMegatronLmReleases[0].version), release_name(newest),
                                        to_string(options.version));
    note_unchecked(flags, parser, why, program, out.diagnostics);
    return out;
  }
  std::vector<Unrecognized> flags = unrecognized_flags(argv, parser, *at);
  std::vector<std::string_view> accepted;
  for (size_t i = 0; i < flags.size(); ++i) {
    std::optional<Suggestion> suggestion;
    if (flags[i].releases == 0 && i < kMaxSuggestions) {
      if (accepted.empty()) accepted = flags_at(*at, parser);
      suggestion = suggest(flags[i].name.text, accepted);
      if (suggestion && suggestion->certain(flags[i].name.text)) {
        out.intended.push_back(FlagCheck::Intended{suggestion->flag, name_span(flags[i])});
      }
    }
    report(flags[i], parser, options, *at, suggestion, sources, out.diagnostics, &out.fork_flags);
  }
  return out;
}

}  // namespace mblint
