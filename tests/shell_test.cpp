// Tests of the static bash reader (lint/load/shell/shell.h): lexing and parsing with
// exact positions, expansion, the walk's rules for certain and unknown
// values, #SBATCH directives, the launch-script patterns mblint must read,
// and hostile input that must stay bounded.
#include "lint/load/shell/shell.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

namespace mblint {
namespace {

struct Run {
  SourceSet sources;
  FileId id = kNoFile;
  ShellScript script;
};

Run run(std::string text, const ShellEnvironment& initial = {}, const ShellLimits& limits = {}) {
  Run r;
  r.id = add_source(r.sources, "job.sh", std::move(text));
  r.script = walk_shell_script(r.sources, r.id, initial, limits);
  return r;
}

using Argv = std::vector<std::string>;

Argv argv_of(const ShellCommand& command) {
  Argv argv;
  for (const MappedString& word : command.argv) argv.push_back(word.text);
  return argv;
}

std::vector<Argv> all_argv(const ShellScript& script) {
  std::vector<Argv> out;
  for (const ShellCommand& command : script.commands) out.push_back(argv_of(command));
  return out;
}

// The nth command whose first word is `name`.
const ShellCommand& command(const ShellScript& script, const std::string& name, size_t nth = 0) {
  for (const ShellCommand& c : script.commands) {
    if (!c.argv.empty() && c.argv[0].text == name && nth-- == 0) return c;
  }
  FAIL("no command " << name);
  return script.commands.front();
}

size_t count_command(const ShellScript& script, const Argv& argv) {
  auto all = all_argv(script);
  return static_cast<size_t>(std::count(all.begin(), all.end(), argv));
}

bool has_command(const ShellScript& script, const Argv& argv) {
  return count_command(script, argv) > 0;
}

std::string text(const Run& r, Span span) {
  REQUIRE(span.file == r.id);
  return r.sources.files[r.id].text.substr(span.begin, span.end - span.begin);
}

LineCol at(const Run& r, uint32_t offset) { return line_col(r.sources.files[r.id], offset); }

const ShellVariable& var(const ShellScript& script, const std::string& name) {
  auto it = script.final_environment.find(name);
  if (it == script.final_environment.end()) FAIL("no variable " << name);
  return it->second;
}

std::string value(const ShellScript& script, const std::string& name) {
  const ShellVariable& v = var(script, name);
  REQUIRE(v.known);
  return v.value.text;
}

Argv elements(const ShellScript& script, const std::string& name) {
  const ShellVariable& v = var(script, name);
  REQUIRE(v.is_array);
  Argv out;
  for (const MappedString& e : v.elements) out.push_back(e.text);
  return out;
}

ShellVariable env_value(const std::string& text, bool exported = true) {
  ShellVariable v;
  v.value.text = text;
  v.exported = exported;
  return v;
}

std::vector<std::string> messages(const ShellScript& script) {
  std::vector<std::string> out;
  for (const Diagnostic& d : script.problems) out.push_back(d.message);
  return out;
}

bool has_message(const ShellScript& script, const std::string& part) {
  for (const Diagnostic& d : script.problems) {
    if (d.message.find(part) != std::string::npos) return true;
  }
  return false;
}

// The one problem of a script, checked for its place and rule.
const Diagnostic& only_problem(const Run& r, Severity severity = Severity::Error) {
  INFO("problems: " << messages(r.script).size());
  REQUIRE(r.script.problems.size() == 1);
  const Diagnostic& d = r.script.problems[0];
  CHECK(d.rule == "script-syntax");
  CHECK(d.severity == severity);
  CHECK(d.code.empty());
  CHECK_FALSE(d.help.empty());
  return d;
}

}  // namespace

// ================================================================ lexing

TEST_CASE("shell: quotes, escapes and empty words", "[shell]") {
  Run r = run(R"SH(X=1 EMPTY=
echo 'a  b' "c $X" d\ e "" '' "$EMPTY" $EMPTY $'' x)SH");
  CHECK(r.script.problems.empty());
  CHECK(argv_of(command(r.script, "echo")) ==
        Argv{"echo", "a  b", "c 1", "d e", "", "", "", "", "x"});
}

TEST_CASE("shell: escapes inside double quotes", "[shell]") {
  Run r = run(R"SH(echo "a\"b\\c\$d\`e\x\
f")SH");
  CHECK(argv_of(command(r.script, "echo")) == Argv{"echo", "a\"b\\c$d`e\\xf"});
  // The escaped quote maps to the backslash and the quote.
  const MappedString& word = command(r.script, "echo").argv[1];
  CHECK(text(r, span_of(word, 1, 2)) == "\\\"");
  CHECK(text(r, span_of(word, 0, 1)) == "a");
}

TEST_CASE("shell: ANSI-C strings", "[shell]") {
  Run r = run(R"SH(echo $'a\tb\nc\\d\'e\"f\x41\101\u00e9' $'\q')SH");
  CHECK(argv_of(command(r.script, "echo")) == Argv{"echo", "a\tb\nc\\d'e\"fAA\xc3\xa9", "\\q"});
  const MappedString& word = command(r.script, "echo").argv[1];
  CHECK(text(r, span_of(word, 1, 2)) == "\\t");
}

TEST_CASE("shell: line continuations and comments", "[shell]") {
  Run r = run("echo a \\\n   b\\\nc # a comment $(ignored\necho a#b\n# whole line\n");
  CHECK(r.script.problems.empty());
  CHECK(all_argv(r.script) == std::vector<Argv>{{"echo", "a", "bc"}, {"echo", "a#b"}});
}

TEST_CASE("shell: operators and redirections", "[shell]") {
  Run r = run(R"SH(true && echo and; false || echo or
maybe || echo fallback
echo p1 | echo p2 |& echo p3
echo bg & echo fg
torchrun a > log 2>&1 < in >> out 2>/dev/null &> all b
cat <<< "here string" -n
)SH");
  CHECK(r.script.problems.empty());
  CHECK(command(r.script, "echo", 0).certain);
  CHECK(argv_of(command(r.script, "echo", 1)) == Argv{"echo", "or"});
  CHECK(command(r.script, "echo", 1).certain);  // false is known to fail
  CHECK(argv_of(command(r.script, "echo", 2)) == Argv{"echo", "fallback"});
  CHECK_FALSE(command(r.script, "echo", 2).certain);
  CHECK(has_command(r.script, {"echo", "p3"}));
  CHECK(has_command(r.script, {"echo", "bg"}));
  CHECK(has_command(r.script, {"echo", "fg"}));
  CHECK(argv_of(command(r.script, "torchrun")) == Argv{"torchrun", "a", "b"});
  CHECK(argv_of(command(r.script, "cat")) == Argv{"cat", "-n"});
}

TEST_CASE("shell: heredoc bodies are skipped, not read as commands", "[shell]") {
  Run r =
      run("cat <<EOF > out.txt\n$(rm -rf /)\n  EOF\nEOF\n"
          "cat <<'Q' | tee x\necho inside\nQ\n"
          "cat <<-T\n\techo tabbed\n\tT\n"
          "echo after\n");
  CHECK(r.script.problems.empty());
  CHECK(all_argv(r.script) ==
        std::vector<Argv>{{"cat"}, {"cat"}, {"tee", "x"}, {"cat"}, {"echo", "after"}});
}

TEST_CASE("shell: command substitution is parsed to its end but never run", "[shell]") {
  Run r = run(R"SH(X=$(echo "a)b" $(date +%s) 'c)' `uname` $((1+2)) # c)
)
Y=`echo \`nested\``
Z=$(case y in y) echo z;; (w) echo w;; esac)
W=$(cat <<EOF
)
EOF
)
diff <(sort a) >(tee b)
echo end $X
)SH");
  CHECK(r.script.problems.empty());
  CHECK(r.script.commands.size() == 2);
  const ShellCommand& diff = command(r.script, "diff");
  CHECK(argv_of(diff) == Argv{"diff", "<(sort a)", ">(tee b)"});
  CHECK(has_unknown(diff.argv[1]));
  const ShellCommand& echo = command(r.script, "echo");
  CHECK(echo.argv[1].text == "end");
  CHECK(has_unknown(echo.argv[2]));
  CHECK_FALSE(var(r.script, "X").known);
  CHECK_FALSE(var(r.script, "Y").known);
  CHECK_FALSE(var(r.script, "Z").known);
}

// ================================================================ expansion

TEST_CASE("shell: parameter expansion operators", "[shell]") {
  Run r = run(R"SH(SET=value
EMPTY=
GONE=x
unset GONE
A=(x "y z" w)
P=/a/b/c.tar.gz
echo $SET ${SET} ${SET:-d} ${EMPTY:-d} ${GONE:-d} ${NEVER:-d}
echo ${SET-d} "${EMPTY-d}" ${GONE-d} ${NEVER-d}
echo ${SET:+alt} "${EMPTY:+alt}" ${GONE+alt} ${EMPTY+alt}
echo ${#SET} ${#A[@]} ${#A} ${#GONE}
echo ${A[1]} ${A[@]} "${A[@]}" ${A[-1]} ${A}
echo "${A[*]}" ${A[*]}
echo ${P%.gz} ${P#/a} ${P%%.tar.gz} ${P##/a/} "${P%".gz"}"
echo ${NEW:=assigned} $NEW ${SET:?oops}
)SH");
  CHECK(r.script.problems.empty());
  auto all = all_argv(r.script);
  REQUIRE(all.size() == 8);
  CHECK(all[0] == Argv{"echo", "value", "value", "value", "d", "d", "d"});
  CHECK(all[1] == Argv{"echo", "value", "", "d", "d"});
  CHECK(all[2] == Argv{"echo", "alt", "", "alt"});
  CHECK(all[3] == Argv{"echo", "5", "3", "1", "0"});
  CHECK(all[4] == Argv{"echo", "y", "z", "x", "y", "z", "w", "x", "y z", "w", "w", "x"});
  CHECK(all[5] == Argv{"echo", "x y z w", "x", "y", "z", "w"});
  CHECK(all[6] == Argv{"echo", "/a/b/c.tar", "/b/c.tar.gz", "/a/b/c", "b/c.tar.gz", "/a/b/c.tar"});
  CHECK(all[7] == Argv{"echo", "assigned", "assigned", "value"});
  CHECK(value(r.script, "NEW") == "assigned");
}

TEST_CASE("shell: expansions that cannot be known keep their text", "[shell]") {
  Run r = run(R"SH(P=/a/b.c
echo ${P%.*} ${P/a/b} ${P:1:2} ${!P} $$ $? $! $0 $- ${UNSET_VAR} ${UNSET_VAR:+x} $(hostname) `date`
)SH");
  const ShellCommand& echo = command(r.script, "echo");
  Argv expected{"echo",        "${P%.*}", "${P/a/b}", "${P:1:2}", "${!P}",        "$$",
                "$?",          "$!",      "$0",       "$-",       "${UNSET_VAR}", "${UNSET_VAR:+x}",
                "$(hostname)", "`date`"};
  CHECK(argv_of(echo) == expected);
  for (size_t i = 1; i < echo.argv.size(); ++i) {
    INFO(echo.argv[i].text);
    CHECK(has_unknown(echo.argv[i]));
    CHECK(text(r, span_of(echo.argv[i], 0, echo.argv[i].text.size())) == echo.argv[i].text);
  }
}

TEST_CASE("shell: word splitting of unquoted expansions, no globbing or tilde", "[shell]") {
  Run r = run(R"SH(V="  a   b  "
echo x${V}y "x${V}y" *.py ~/data [ab] ?
echo ${V:-p q} "${U:-p q}" ${U:-"p q"} ${U:-p q}
)SH");
  CHECK(argv_of(command(r.script, "echo", 0)) ==
        Argv{"echo", "x", "a", "b", "y", "x  a   b  y", "*.py", "~/data", "[ab]", "?"});
  CHECK(argv_of(command(r.script, "echo", 1)) == Argv{"echo", "a", "b", "p q", "p q", "p", "q"});
}

TEST_CASE("shell: positional parameters", "[shell]") {
  Run r = run(R"SH(echo $1 "$@" $# ${1:-first}
f() { echo "$1" $2 "$@" $# ${3:-three} "$*"; shift; echo $1; }
f a "b c"
set -- p q
echo $2 $#
)SH");
  const ShellCommand& top = command(r.script, "echo", 0);
  CHECK(argv_of(top) == Argv{"echo", "$1", "$@", "$#", "first"});
  CHECK(has_unknown(top.argv[1]));
  CHECK(has_unknown(top.argv[2]));
  CHECK_FALSE(has_unknown(top.argv[4]));
  CHECK(argv_of(command(r.script, "f")) == Argv{"f", "a", "b c"});
  CHECK(argv_of(command(r.script, "echo", 1)) ==
        Argv{"echo", "a", "b", "c", "a", "b c", "2", "three", "a b c"});
  CHECK(argv_of(command(r.script, "echo", 2)) == Argv{"echo", "b", "c"});
  CHECK(argv_of(command(r.script, "echo", 3)) == Argv{"echo", "q", "2"});
}

TEST_CASE("shell: arithmetic expansion", "[shell]") {
  Run r = run(R"SH(A=6 B=4
echo $((A+B)) $(( $A * $B )) $((A/B)) $((A%B)) $((2**10)) $((-A)) $(((A+B)*2)) $((A>B)) $((A==B))
echo $((A/0)) $((NOPE+1)) $((9223372036854775807+1)) $((1<<3)) $((0x10)) $((010)) $((2#101)) $((A?1:2))
echo $((1 +)) $(( )) $((A && 0 || 3)) $((B=A+1)) $B
(( C = 3 )); ((C++)); let D=C*2 "E=D+1"
)SH");
  CHECK(r.script.problems.empty());
  CHECK(argv_of(command(r.script, "echo", 0)) ==
        Argv{"echo", "10", "24", "1", "2", "1024", "-6", "20", "1", "0"});
  const ShellCommand& second = command(r.script, "echo", 1);
  CHECK(argv_of(second) == Argv{"echo", "$((A/0))", "$((NOPE+1))", "$((9223372036854775807+1))",
                                "8", "16", "8", "5", "1"});
  CHECK(has_unknown(second.argv[1]));
  CHECK(has_unknown(second.argv[2]));
  CHECK(has_unknown(second.argv[3]));
  CHECK(argv_of(command(r.script, "echo", 2)) == Argv{"echo", "$((1 +))", "0", "1", "7", "7"});
  CHECK(value(r.script, "C") == "4");
  CHECK(value(r.script, "D") == "8");
  CHECK(value(r.script, "E") == "9");
}

TEST_CASE("shell: arithmetic records where its variables were defined", "[shell]") {
  Run r = run(
      "GPUS_PER_NODE=8\nNUM_NODES=2\nWORLD_SIZE=$(($GPUS_PER_NODE*NUM_NODES))\necho $WORLD_SIZE\n");
  CHECK(value(r.script, "WORLD_SIZE") == "16");
  const MappedString& world = var(r.script, "WORLD_SIZE").value;
  std::vector<std::string> defined;
  for (Span s : definitions_in(world, 0, world.text.size())) defined.push_back(text(r, s));
  CHECK(std::count(defined.begin(), defined.end(), "GPUS_PER_NODE=8") == 1);
  CHECK(std::count(defined.begin(), defined.end(), "NUM_NODES=2") == 1);
  const MappedString& echoed = command(r.script, "echo").argv[1];
  CHECK(echoed.text == "16");
  CHECK(text(r, span_of(echoed, 0, 2)) == "$WORLD_SIZE");
}

// ================================================================ compound commands

TEST_CASE("shell: if on known values takes one branch", "[shell]") {
  Run r = run(R"SH(MODE=b
if [ "$MODE" = a ]; then echo A; elif [[ $MODE == b ]]; then echo B; X=1; else echo C; fi
if test -z "$MODE"; then echo empty; fi
if ! false; then echo negated; fi
)SH");
  // [[ ]] is a construct, not a command; `[` and `test` are commands.
  CHECK(all_argv(r.script) == std::vector<Argv>{{"[", "b", "=", "a", "]"},
                                                {"echo", "B"},
                                                {"test", "-z", "b"},
                                                {"false"},
                                                {"echo", "negated"}});
  CHECK(command(r.script, "echo", 0).certain);
  CHECK(value(r.script, "X") == "1");
}

TEST_CASE("shell: an undecidable if walks every branch and forgets what differs", "[shell]") {
  Run r = run(R"SH(if [ -f /etc/foo ]; then
  X=1; SAME=1; echo then
elif grep -q x y; then
  X=2; SAME=1; echo elif
else
  X=3; SAME=1; echo else
fi
echo $X $SAME
if [ -d /tmp ]; then ONLY=1; fi
)SH");
  CHECK_FALSE(command(r.script, "echo", 0).certain);
  CHECK_FALSE(command(r.script, "echo", 1).certain);
  CHECK_FALSE(command(r.script, "echo", 2).certain);
  // `echo $X` reads a variable the branches set to 1, 2 or 3: it is walked
  // once per value, each a certain command of one arm of the same fork.
  for (size_t arm = 0; arm < 3; ++arm) {
    const ShellCommand& after = command(r.script, "echo", 3 + arm);
    CHECK(after.certain);
    CHECK(after.fork_group == 1);
    CHECK(after.fork_arm == arm);
    CHECK(after.argv[1].text == std::to_string(arm + 1));
    CHECK(after.argv[2].text == "1");
  }
  CHECK(r.script.fork_arms.at(1) == 3);
  const ShellVariable& x = var(r.script, "X");
  CHECK_FALSE(x.known);
  CHECK(text(r, x.definition) == "X=3");
  CHECK(value(r.script, "SAME") == "1");
  CHECK_FALSE(var(r.script, "ONLY").known);
}

TEST_CASE("shell: case takes the matching arm of a known word", "[shell]") {
  Run r = run(R"SH(S=8B
case "$S" in
  800M|1B) H=1 ;;
  8*) H=2 ;;
  *) H=3 ;;
esac
case $U in a) echo a;; *) echo any;; esac
case x in
  (x) Q=1
esac
)SH");
  CHECK(r.script.problems.empty());
  CHECK(value(r.script, "H") == "2");
  CHECK(value(r.script, "Q") == "1");
  CHECK_FALSE(command(r.script, "echo", 0).certain);
  CHECK_FALSE(command(r.script, "echo", 1).certain);
}

TEST_CASE("shell: case on an unknown word walks every arm", "[shell]") {
  Run r = run(R"SH(case "${MODEL_SCALE}" in
  "800M") HIDDEN=1024 ;;
  "8B") HIDDEN=4096 ;;
  *) echo "unknown scale"; exit 1 ;;
esac
echo $HIDDEN
)SH");
  CHECK_FALSE(var(r.script, "HIDDEN").known);
  CHECK(text(r, var(r.script, "HIDDEN").definition) == "HIDDEN=4096");
  CHECK(command(r.script, "echo", 1).certain);  // the exit arm does not reach it
}

TEST_CASE("shell: a loop over a known list is walked per value; other loops once, their variables unknown",
          "[shell]") {
  Run r = run(R"SH(for f in a b c; do echo "$f"; LAST=$f; STEP=1; done
echo $LAST
for ((i=0; i<3; i++)); do echo $i; done
while true; do echo loop; COUNT=1; done
until false; do :; done
for none in $NOTHING_SET_EMPTY; do echo never; done
EMPTY=
for none in $EMPTY; do echo never; done
while false; do echo never; done
select s in a b; do echo sel; done
for x; do echo arg; done
)SH");
  for (size_t i = 0; i < 3; ++i) {  // for f in a b c: one walk per value
    const ShellCommand& body = command(r.script, "echo", i);
    CHECK(body.certain);
    CHECK(body.argv[1].text == std::string(1, static_cast<char>('a' + i)));
  }
  CHECK(command(r.script, "echo", 3).argv[1].text == "c");  // $LAST keeps the last value
  CHECK(command(r.script, "echo", 3).certain);
  CHECK(var(r.script, "STEP").known);
  CHECK(has_unknown(command(r.script, "echo", 4).argv[1]));  // $i of the arithmetic loop
  CHECK(has_command(r.script, {"echo", "loop"}));
  CHECK_FALSE(var(r.script, "COUNT").known);
  CHECK_FALSE(var(r.script, "i").known);
  CHECK(count_command(r.script, Argv{"echo", "never"}) == 1);
  CHECK(has_command(r.script, {"echo", "sel"}));
  CHECK(has_command(r.script, {"echo", "arg"}));
}

TEST_CASE("shell: IFS=, read of a known here-string splits it; after a break later iterations are uncertain",
          "[shell]") {
  Run r = run(R"SH(for c in "1,2,x" "3,4"; do
  IFS=, read -r A B <<< "$c"
  echo $A $B
  if [ "$A" = 1 ]; then break; fi
done
read -r U <<< "$UNSET_ELSEWHERE"
)SH");
  const ShellCommand& first = command(r.script, "echo", 0);
  CHECK(first.certain);
  CHECK(first.argv.size() == 3);
  CHECK(first.argv[1].text == "1");
  CHECK(first.argv[2].text == "2,x");  // the last name takes the rest
  CHECK_FALSE(command(r.script, "echo", 1).certain);  // the break may have ended the loop
  CHECK(command(r.script, "echo", 1).argv[1].text == "3");
  CHECK_FALSE(var(r.script, "U").known);  // an unknown line: unknown fields
}

TEST_CASE("shell: a loop over a long list is walked once, uncertain", "[shell]") {
  std::string items;
  for (int i = 0; i < 300; ++i) items += " v" + std::to_string(i);
  Run r = run("for x in" + items + "; do echo $x; done\n");
  CHECK(count_command(r.script, Argv{"echo", "v0"}) == 0);
  CHECK_FALSE(command(r.script, "echo", 0).certain);
}

TEST_CASE("shell: groups keep variables, subshells and pipelines do not", "[shell]") {
  Run r = run(R"SH({ G=1; echo group; }
( S=1; export E=1; echo sub )
P=0; echo x | P=1
B=0; B=1 &
echo $G $S $P $B
)SH");
  CHECK(value(r.script, "G") == "1");
  CHECK(r.script.final_environment.count("S") == 0);
  CHECK(r.script.final_environment.count("E") == 0);
  CHECK(value(r.script, "P") == "0");
  CHECK(value(r.script, "B") == "0");
  CHECK(command(r.script, "echo", 1).certain);
}

TEST_CASE("shell: functions are walked when called, with locals and arguments", "[shell]") {
  Run r = run(R"SH(setup() {
  local L=inner
  GLOBAL=$1
  echo in $L
}
L=outer
setup value
echo $L $GLOBAL
function other { echo other "$@"; return 0; echo unreachable; }
other x
never_called() { echo never; }
unset -f other
other y
)SH");
  CHECK(r.script.problems.empty());
  CHECK(has_command(r.script, {"setup", "value"}));
  CHECK(has_command(r.script, {"echo", "in", "inner"}));
  CHECK(has_command(r.script, {"echo", "outer", "value"}));
  CHECK(has_command(r.script, {"echo", "other", "x"}));
  CHECK_FALSE(has_command(r.script, {"echo", "unreachable"}));
  CHECK_FALSE(has_command(r.script, {"echo", "never"}));
  CHECK(has_command(r.script, {"other", "y"}));
  CHECK(count_command(r.script, Argv{"echo", "other", "y"}) == 0);
}

TEST_CASE("shell: conditions with [[ ]], [ ] and test", "[shell]") {
  Run r = run(R"SH(X=abc
[[ $X == a* ]] && echo glob
[[ $X == "a*" ]] && echo literal
[[ -n $X && $X != b ]] && echo both
[[ ! -z $X ]] && echo notz
[[ $X =~ ^a(b|c)$ ]] && echo regex
[[ 3 -lt 10 ]] && echo num
[[ ( $X == abc || $X == x ) ]] && echo paren
[[ $X < b ]] && echo less
[[ $X == [a-c]?? ]] && echo class
[ "$X" = abc ] && echo eq
test -n "" && echo never
[ 2 -gt 1 -a abc != x ] && echo and
[ -d /tmp ] && echo maybe
[ "$UNSET_THING" = x ] || echo unknown_or
)SH");
  CHECK(r.script.problems.empty());
  for (std::string word : {"glob", "both", "notz", "num", "paren", "less", "class", "eq", "and"}) {
    INFO(word);
    CHECK(command(r.script, "echo", 0).certain);
    CHECK(has_command(r.script, {"echo", word}));
  }
  CHECK_FALSE(has_command(r.script, {"echo", "literal"}));
  CHECK_FALSE(has_command(r.script, {"echo", "never"}));
  for (const ShellCommand& c : r.script.commands) {
    if (c.argv.size() == 2 && (c.argv[1].text == "regex" || c.argv[1].text == "maybe" ||
                               c.argv[1].text == "unknown_or")) {
      CHECK_FALSE(c.certain);
    }
  }
}

TEST_CASE("shell: && after an ordinary command is certain, after a test it is not", "[shell]") {
  Run r = run(R"SH(cd /workspace && torchrun train.py
[ -z "$TP" ] && TP=1
mkdir -p out || exit 1
echo $TP
)SH");
  CHECK(command(r.script, "torchrun").certain);
  CHECK_FALSE(command(r.script, "exit").certain);
  CHECK(command(r.script, "echo").certain);
  CHECK_FALSE(var(r.script, "TP").known);
}

TEST_CASE("shell: time, !, and [[ ]] as commands", "[shell]") {
  Run r = run("time -p torchrun a\n! grep x y\ntime ! false && echo ok\n");
  CHECK(r.script.problems.empty());
  CHECK(argv_of(command(r.script, "torchrun")) == Argv{"torchrun", "a"});
  CHECK(has_command(r.script, {"grep", "x", "y"}));
  CHECK(command(r.script, "echo").certain);
}

// ================================================================ environment

TEST_CASE("shell: assignments, export and the environment a command sees", "[shell]") {
  Run r = run(R"SH(export A=1
B=2
X=1
export X
Y=2; export Y; Y=3
declare -x Z=4
export W=5; export -n W
readonly R=6
typeset T=7
declare -i I=2*3
export LATER
LATER=8
CUDA_DEVICE_MAX_CONNECTIONS=1 NCCL_X=$B torchrun x
echo $CUDA_DEVICE_MAX_CONNECTIONS
)SH");
  const ShellCommand& torchrun = command(r.script, "torchrun");
  REQUIRE(torchrun.assignments.size() == 2);
  CHECK(torchrun.assignments[0].first == "CUDA_DEVICE_MAX_CONNECTIONS");
  CHECK(torchrun.assignments[0].second.text == "1");
  CHECK(torchrun.assignments[1].second.text == "2");
  std::vector<std::string> names;
  for (const auto& [name, variable] : torchrun.variables()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"A", "CUDA_DEVICE_MAX_CONNECTIONS", "LATER", "NCCL_X",
                                          "X", "Y", "Z"});
  CHECK(torchrun.variables().at("Y").value.text == "3");
  CHECK(torchrun.variables().at("LATER").value.text == "8");
  CHECK(text(r, torchrun.variables().at("CUDA_DEVICE_MAX_CONNECTIONS").definition) ==
        "CUDA_DEVICE_MAX_CONNECTIONS=1");
  CHECK(has_unknown(command(r.script, "echo").argv[1]));  // prefix assignments do not persist
  CHECK(value(r.script, "R") == "6");
  CHECK(value(r.script, "T") == "7");
  CHECK(value(r.script, "I") == "6");
  CHECK_FALSE(var(r.script, "W").exported);
  CHECK(text(r, var(r.script, "A").definition) == "A=1");
}

TEST_CASE("shell: arrays", "[shell]") {
  Run r = run(R"SH(V="p q"
A=(x "y z" $V # comment
   'w')
A+=(more)
A[1]=Y
A[9]=sparse
B=scalar
B+=(more)
C=()
C+=("${A[@]}" end)
S=one
S+=two
S[1]=x
unset 'C[0]'
)SH");
  CHECK(r.script.problems.empty());
  CHECK_FALSE(var(r.script, "A").known);  // A[9] on a 6-element array: sparse, not followed
  CHECK(elements(r.script, "B") == Argv{"scalar", "more"});
  CHECK_FALSE(var(r.script, "C").known);
  CHECK(elements(r.script, "S") == Argv{"onetwo", "x"});
  Run simple = run("A=(x \"y z\" $V 'w')\nA+=(more)\nA[1]=Y\nB=(\"${A[@]}\" end)\n",
                   {{"V", env_value("p q")}});
  CHECK(elements(simple.script, "A") == Argv{"x", "Y", "p", "q", "w", "more"});
  CHECK(elements(simple.script, "B") == Argv{"x", "Y", "p", "q", "w", "more", "end"});
}

TEST_CASE("shell: declarations inside functions are local", "[shell]") {
  Run r = run(R"SH(G=global
f() {
  declare G=inner
  declare -g H=global_h
  local -a A=(x y)
  typeset T=t
  readonly R=r
  echo "$G" "${A[1]}" "$T"
}
f
echo "$G" "$H" "${A[1]-none}" "${T-none}" "$R"
declare -a EMPTY_ARRAY
echo "${#EMPTY_ARRAY[@]}"
declare -A ASSOC=([k]=v)
declare -n REF=G
)SH");
  CHECK(has_command(r.script, {"echo", "inner", "y", "t"}));
  CHECK(has_command(r.script, {"echo", "global", "global_h", "none", "none", "r"}));
  CHECK(has_command(r.script, {"echo", "0"}));
  CHECK_FALSE(var(r.script, "ASSOC").known);
  CHECK_FALSE(var(r.script, "REF").known);
}

TEST_CASE("shell: exit inside subshells, exec without a command, return at top level", "[shell]") {
  Run r = run(R"SH(( exit 1 )
echo one
exec > log.txt 2>&1
echo two
return 0
echo three
f() { return 1; echo never; }
f
echo four
)SH");
  CHECK(has_command(r.script, {"echo", "one"}));
  CHECK(has_command(r.script, {"echo", "two"}));
  CHECK(has_command(r.script, {"echo", "three"}));
  CHECK(has_command(r.script, {"echo", "four"}));
  CHECK_FALSE(has_command(r.script, {"echo", "never"}));
}

TEST_CASE("shell: unset, read and source", "[shell]") {
  Run r = run(R"SH(export GONE=1
unset GONE
echo ${GONE-unset}
read -r LINE
read -a PARTS
TP=4
source conf.sh
. "$HOME/other.sh"
echo $TP $LINE
)SH");
  CHECK(argv_of(command(r.script, "echo", 0)) == Argv{"echo", "unset"});
  CHECK(command(r.script, "echo", 0).variables().count("GONE") == 0);
  CHECK(has_command(r.script, {"source", "conf.sh"}));
  CHECK(command(r.script, ".").argv[1].text == "$HOME/other.sh");
  const ShellCommand& echo = command(r.script, "echo", 1);
  CHECK(echo.argv[1].text == "4");  // source does not change known variables
  CHECK(has_unknown(echo.argv[2]));
  CHECK_FALSE(var(r.script, "PARTS").known);
}

TEST_CASE("shell: exit and exec end the walk only when certain", "[shell]") {
  Run r = run(R"SH(echo a
[ -f x ] || exit 1
if [ -z "$U" ]; then X=1; exit 1; fi
echo $X
exec torchrun train.py
echo never
)SH");
  CHECK(has_command(r.script, {"echo", "a"}));
  CHECK(command(r.script, "echo", 1).certain);
  CHECK(has_unknown(command(r.script, "echo", 1).argv[1]));  // the exiting branch is gone
  CHECK(argv_of(command(r.script, "exec")) == Argv{"exec", "torchrun", "train.py"});
  CHECK_FALSE(has_command(r.script, {"echo", "never"}));
  Run stop = run("echo a; exit 0; echo b\n");
  CHECK(all_argv(stop.script) == std::vector<Argv>{{"echo", "a"}, {"exit", "0"}});
}

TEST_CASE("shell: an unknown value kept in a variable is never split", "[shell]") {
  Run r = run(R"SH(DATETIME=`date +'%y %m'`
HOSTS="-w $(scontrol show hostnames)"
srun --output=logs/$DATETIME.log $HOSTS
)SH");
  const ShellCommand& srun = command(r.script, "srun");
  CHECK(argv_of(srun) ==
        Argv{"srun", "--output=logs/`date +'%y %m'`.log", "-w", "$(scontrol show hostnames)"});
  CHECK(has_unknown(srun.argv[1]));
  CHECK_FALSE(has_unknown(srun.argv[2]));
  CHECK(has_unknown(srun.argv[3]));
}

TEST_CASE("shell: unknown values propagate, known initial values are used", "[shell]") {
  Run unknown = run("NODES=$SLURM_NNODES\nHOST=$(hostname)\nsrun -N $NODES --host $HOST\n");
  const ShellCommand& srun = command(unknown.script, "srun");
  CHECK(srun.argv[2].text == "$SLURM_NNODES");
  REQUIRE(srun.argv[2].expansions.size() >= 1);
  CHECK(has_unknown(srun.argv[2]));
  CHECK(has_unknown(srun.argv[4]));
  CHECK_FALSE(var(unknown.script, "NODES").known);
  CHECK_FALSE(var(unknown.script, "HOST").known);

  ShellVariable nodes = env_value("4");
  nodes.definition = Span{0, 0, 0};
  Run known = run("NODES=$SLURM_NNODES\nsrun -N $NODES\n", {{"SLURM_NNODES", nodes}});
  CHECK(command(known.script, "srun").argv[2].text == "4");
  CHECK(value(known.script, "NODES") == "4");
  CHECK(command(known.script, "srun").variables().count("SLURM_NNODES") == 1);

  ShellVariable opaque;
  opaque.known = false;
  Run opaque_run = run("echo ${SLURM_NNODES:-1}\n", {{"SLURM_NNODES", opaque}});
  CHECK(has_unknown(command(opaque_run.script, "echo").argv[1]));

  // A caller's value with an unknown part (marked by an expansion record)
  // keeps its known part; `export X` alone adds nothing to the environment.
  ShellVariable partial = env_value("--nodes $N");
  partial.known = false;
  partial.value.expansions.push_back(Expansion{8, 10, Span{}, Span{}, "N", false});
  Run partial_run = run("export ONLY_EXPORTED\nsrun $ARGS\n", {{"ARGS", partial}});
  const ShellCommand& partial_srun = command(partial_run.script, "srun");
  CHECK(argv_of(partial_srun) == Argv{"srun", "--nodes", "$N"});
  CHECK_FALSE(has_unknown(partial_srun.argv[1]));
  CHECK(has_unknown(partial_srun.argv[2]));
  CHECK(partial_srun.variables().count("ONLY_EXPORTED") == 0);
}

// ================================================================ positions

TEST_CASE("shell: argv characters map to their exact source bytes", "[shell]") {
  std::string script;
  for (int line = 1; line <= 21; ++line) script += "# filler line " + std::to_string(line) + "\n";
  script += "uv run python scripts/training/run_recipe.py --recipe llama32_1b_pretrain_config \\\n";
  script += "    dataset.seq_length=8190 \\\n";
  script += "    model.tensor_model_parallel_size=$TP\n";
  Run r = run("TP=2\n" + script.substr(script.find('\n') + 1));
  const ShellCommand& uv = command(r.script, "uv");
  const MappedString& override_word = uv.argv[6];
  REQUIRE(override_word.text == "dataset.seq_length=8190");
  Span value = span_of(override_word, 19, 23);
  CHECK(text(r, value) == "8190");
  CHECK(at(r, value.begin).line == 23);
  CHECK(at(r, value.begin).column == 24);
  const MappedString& tp = uv.argv[7];
  REQUIRE(tp.text == "model.tensor_model_parallel_size=2");
  CHECK(text(r, span_of(tp, 33, 34)) == "$TP");
  REQUIRE(tp.expansions.size() == 1);
  CHECK(tp.expansions[0].begin == 33);
  CHECK(tp.expansions[0].name == "TP");
  CHECK(tp.expansions[0].known);
  CHECK(text(r, tp.expansions[0].expression) == "$TP");
  CHECK(text(r, tp.expansions[0].definition) == "TP=2");
  CHECK(text(r, uv.span).starts_with("uv run"));
  CHECK(text(r, uv.span).ends_with("=$TP"));
}

TEST_CASE("shell: defaults are defined at the default's text", "[shell]") {
  Run r = run("TP=${TP:-4}\nPP=${PP:=2}\ntorchrun --tp $TP --tp2 ${TP} --pp $PP\n");
  const ShellVariable& tp = var(r.script, "TP");
  CHECK(tp.value.text == "4");
  CHECK(text(r, tp.definition) == "TP=${TP:-4}");
  REQUIRE(tp.value.expansions.size() == 1);
  CHECK(text(r, tp.value.expansions[0].expression) == "${TP:-4}");
  CHECK(text(r, tp.value.expansions[0].definition) == "4");
  const ShellCommand& torchrun = command(r.script, "torchrun");
  const MappedString& four = torchrun.argv[2];
  CHECK(text(r, span_of(four, 0, 1)) == "$TP");
  std::vector<std::string> defined;
  for (Span s : definitions_in(four, 0, 1)) defined.push_back(text(r, s));
  CHECK(defined == std::vector<std::string>{"4", "TP=${TP:-4}"});
  CHECK(text(r, span_of(torchrun.argv[4], 0, 1)) == "${TP}");
  CHECK(torchrun.argv[6].text == "2");
  CHECK(text(r, var(r.script, "PP").definition) == "PP=${PP:=2}");
}

TEST_CASE("shell: command spans and certainty flags", "[shell]") {
  Run r = run("  FOO=1 torchrun \\\n   --a b  # c\n");
  const ShellCommand& c = command(r.script, "torchrun");
  CHECK(text(r, c.span) == "FOO=1 torchrun \\\n   --a b");
  CHECK(c.certain);
}

// ================================================================ problems

TEST_CASE("shell: unterminated constructs are reported where they open", "[shell]") {
  struct Case {
    std::string script;
    std::string message;
    uint32_t column;
    std::string span_text;
    Severity severity = Severity::Error;
  };
  std::vector<Case> cases = {
      {"echo \"abc\n", "unterminated double quote", 6, "\""},
      {"echo 'abc\n", "unterminated single quote", 6, "'"},
      {"echo $'abc\n", "unterminated `$'` string", 6, "$'"},
      {"echo ${X\n", "unterminated `${`", 6, "${"},
      {"echo ${X:-$(ls}\n", "unterminated `$(`", 11, "$("},
      {"echo $(ls\n", "unterminated `$(`", 6, "$("},
      {"echo $((1+2)\n", "unterminated `$((`", 6, "$(("},
      {"echo `ls\n", "unterminated backtick command substitution", 6, "`"},
      {"cat <<EOF\nline\n", "here-document is never closed: no line `EOF` follows", 5, "<<"},
      // bash accepts a trailing continuation: a warning, not an error.
      {"echo a \\", "line continuation `\\` at the end of the file", 8, "\\", Severity::Warning},
      {"echo a \\\n", "line continuation `\\` at the end of the file", 8, "\\", Severity::Warning},
      {"A=(x y\n", "unterminated array: `(` without `)`", 3, "("},
  };
  for (const Case& c : cases) {
    INFO(c.script);
    Run r = run(c.script);
    const Diagnostic& d = only_problem(r, c.severity);
    CHECK(d.message == c.message);
    CHECK(at(r, d.where.begin).line == 1);
    CHECK(at(r, d.where.begin).column == c.column);
    CHECK(text(r, d.where) == c.span_text);
  }
}

TEST_CASE("shell: unexpected and missing keywords", "[shell]") {
  struct Case {
    std::string script;
    std::string message;
    std::string span_text;
  };
  std::vector<Case> cases = {
      {"echo a\nfi\necho b\n", "unexpected `fi`", "fi"},
      {"done\n", "unexpected `done`", "done"},
      {"esac\n", "unexpected `esac`", "esac"},
      {"}\n", "unexpected `}`", "}"},
      {"echo a )\n", "unexpected `)`", ")"},
      {"then echo\n", "unexpected `then`", "then"},
      {"echo a ;; echo b\n", "unexpected `;;`", ";;"},
      {"if true; then echo a\n", "`if` without a matching `fi`", "if"},
      {"if true\necho a\n", "`if` without a matching `then`", "if"},
      {"while true; do echo a\n", "`while` without a matching `done`", "while"},
      {"until true\n", "`until` without a matching `do`", "until"},
      {"for x in a; do echo\n", "`for` without a matching `done`", "for"},
      {"case x in a) echo;;\n", "`case` without a matching `esac`", "case"},
      {"{ echo a\n", "`{` without a matching `}`", "{"},
      {"( echo a\n", "`(` without a matching `)`", "("},
      {"[[ -n x\n", "`[[` without a matching `]]`", "[["},
  };
  for (const Case& c : cases) {
    INFO(c.script);
    Run r = run(c.script);
    const Diagnostic& d = only_problem(r);
    CHECK(d.message == c.message);
    CHECK(text(r, d.where) == c.span_text);
  }
}

TEST_CASE("shell: reading goes on after a syntax error", "[shell]") {
  Run r = run("echo one\nfi\necho two\ndone\nif true; then echo three; fi\n");
  CHECK(r.script.problems.size() == 2);
  CHECK(has_command(r.script, {"echo", "one"}));
  CHECK(has_command(r.script, {"echo", "two"}));
  CHECK(has_command(r.script, {"echo", "three"}));
}

TEST_CASE("shell: limits are reported and respected", "[shell]") {
  ShellLimits words;
  words.max_words_per_command = 3;
  Run many = run("echo a b c d e\n", {}, words);
  CHECK(argv_of(command(many.script, "echo")) == Argv{"echo", "a", "b"});
  CHECK(has_message(many.script, "more than 3 words"));

  ShellLimits length;
  length.max_word_length = 10;
  Run longword = run("echo aaaaaaaaaaaaaaaa\n", {}, length);
  CHECK(command(longword.script, "echo").argv[1].text == "aaaaaaaaaa");
  CHECK(has_message(longword.script, "longer than 10"));

  ShellLimits commands;
  commands.max_commands = 2;
  Run stop = run("echo 1\necho 2\necho 3\necho 4\n", {}, commands);
  CHECK(stop.script.commands.size() == 2);
  CHECK(has_message(stop.script, "more than 2 commands"));

  ShellLimits depth;
  depth.max_call_depth = 3;
  Run recursion = run("f() { echo in; f; }\nf\necho after\n", {}, depth);
  CHECK(has_message(recursion.script, "called more than 3 levels deep"));
  CHECK(has_command(recursion.script, {"echo", "after"}));
  CHECK(count_command(recursion.script, Argv{"echo", "in"}) == 3);
}

TEST_CASE("shell: a script over 8 MiB is not read", "[shell]") {
  std::string big((8u << 20) + 1, '#');
  Run r = run(big);
  REQUIRE(r.script.problems.size() == 1);
  CHECK(r.script.problems[0].message == "script larger than 8 MiB; mblint does not read it");
  CHECK(r.script.commands.empty());
}

// ================================================================ #SBATCH

TEST_CASE("shell: #SBATCH directives", "[shell][sbatch]") {
  Run r = run(R"SH(#!/bin/bash
# a comment

#SBATCH --job-name="my job" -N 4 --ntasks-per-node=8 --gres=gpu:h100:8
#SBATCH -N4 --exclusive --time 0:30:00 -A <account> --nodes=your_own_num_nodes # trailing -N 9
#SBATCH --hold later -t 10 --mem=0 --overcommit --export=A,B $NOT_EXPANDED
 #SBATCH --indented=ignored
#SBATCHX --not=this
echo start
#SBATCH --after=ignored
)SH");
  std::vector<std::pair<std::string, std::string>> got;
  for (const SbatchDirective& d : r.script.directives) {
    got.emplace_back(d.option, d.value ? d.value->text : "<none>");
  }
  std::vector<std::pair<std::string, std::string>> expected = {
      {"--job-name", "my job"},   {"-N", "4"},         {"--ntasks-per-node", "8"},
      {"--gres", "gpu:h100:8"},   {"-N", "4"},         {"--exclusive", "<none>"},
      {"--time", "0:30:00"},      {"-A", "<account>"}, {"--nodes", "your_own_num_nodes"},
      {"--hold", "<none>"},       {"-t", "10"},        {"--mem", "0"},
      {"--overcommit", "<none>"}, {"--export", "A,B"}};
  CHECK(got == expected);
  const SbatchDirective& n = r.script.directives[1];
  CHECK(text(r, n.span) == "-N 4");
  CHECK(text(r, span_of(*n.value, 0, 1)) == "4");
  const SbatchDirective& attached = r.script.directives[4];
  CHECK(text(r, attached.span) == "-N4");
  CHECK(text(r, span_of(*attached.value, 0, 1)) == "4");
  CHECK(at(r, attached.span.begin).line == 5);
  CHECK(at(r, attached.span.begin).column == 9);
  const SbatchDirective& gres = r.script.directives[3];
  CHECK(text(r, span_of(*gres.value, 0, gres.value->text.size())) == "gpu:h100:8");
  const SbatchDirective& name = r.script.directives[0];
  CHECK(text(r, span_of(*name.value, 0, 2)) == "my");
  CHECK(has_command(r.script, {"echo", "start"}));
}

TEST_CASE("shell: #SBATCH reading from a file directly", "[shell][sbatch]") {
  SourceSet sources;
  FileId id = add_source(sources, "j.sh", "#SBATCH -N 2\n\n#SBATCH --gpus-per-node=8\nsrun x\n");
  auto directives = read_sbatch_directives(sources.files[id], id);
  REQUIRE(directives.size() == 2);
  CHECK(directives[1].option == "--gpus-per-node");
  CHECK(directives[1].value->text == "8");
  CHECK(directives[1].value->file == id);
  CHECK(read_sbatch_directives(sources.files[add_source(sources, "e.sh", "")], 1).empty());
}

// ================================================================ launch scripts

TEST_CASE("shell: gpt3-style distributed arrays and world size", "[shell][patterns]") {
  Run r = run(R"SH(#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
# Change for multinode config
MASTER_ADDR=localhost
MASTER_PORT=29500
NUM_NODES=1
NODE_RANK=0
WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))
CHECKPOINT_PATH=$1

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr $MASTER_ADDR
    --master_port $MASTER_PORT
)

GPT_MODEL_ARGS=(
    --num-layers 96 
    --hidden-size 12288 
    --attention-backend auto # Can use (flash/fused/unfused/local)
)

MODEL_PARALLEL_ARGS=(
	--tensor-model-parallel-size 8 \
	--pipeline-model-parallel-size 16 
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${GPT_MODEL_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    --save $CHECKPOINT_PATH
)SH");
  CHECK(r.script.problems.empty());
  CHECK(value(r.script, "WORLD_SIZE") == "8");
  const ShellCommand& torchrun = command(r.script, "torchrun");
  CHECK(torchrun.certain);
  Argv expected{"torchrun",
                "--nproc_per_node",
                "8",
                "--nnodes",
                "1",
                "--master_addr",
                "localhost",
                "--master_port",
                "29500",
                "pretrain_gpt.py",
                "--num-layers",
                "96",
                "--hidden-size",
                "12288",
                "--attention-backend",
                "auto",
                "--tensor-model-parallel-size",
                "8",
                "--pipeline-model-parallel-size",
                "16",
                "--save",
                "$1"};
  CHECK(argv_of(torchrun) == expected);
  CHECK(has_unknown(torchrun.argv.back()));
  CHECK(torchrun.variables().at("CUDA_DEVICE_MAX_CONNECTIONS").value.text == "1");
  // `--num-layers` came from the array: an element is a word as written, so it
  // maps to its own characters there (no definition to point back to).
  const MappedString& layers = torchrun.argv[10];
  CHECK(text(r, span_of(layers, 0, layers.text.size())) == "--num-layers");
  CHECK(line_col(r.sources.files[layers.file], span_of(layers, 0, 1).begin).line == 20);
  CHECK(definitions_in(layers, 0, layers.text.size()).empty());
  // An element that is itself an expansion keeps that expansion's location and definition.
  const MappedString& nproc = torchrun.argv[2];
  CHECK(text(r, span_of(nproc, 0, nproc.text.size())) == "$GPUS_PER_NODE");
  REQUIRE(definitions_in(nproc, 0, nproc.text.size()).size() == 1);
  CHECK(text(r, definitions_in(nproc, 0, nproc.text.size())[0]) == "GPUS_PER_NODE=8");
}

TEST_CASE("shell: mixtral-style environment defaults", "[shell][patterns]") {
  std::string script = R"SH(GPUS_PER_NODE=8
MASTER_ADDR=${MASTER_ADDR:-"localhost"}
MASTER_PORT=${MASTER_PORT:-"29500"}
NNODES=${SLURM_NNODES:-"1"}
NODE_RANK=${RANK:-"0"}
WORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))
)SH";
  Run r = run(script);
  CHECK(value(r.script, "NNODES") == "1");
  CHECK(value(r.script, "WORLD_SIZE") == "8");
  CHECK(value(r.script, "MASTER_ADDR") == "localhost");
  Run slurm = run(script, {{"SLURM_NNODES", env_value("4")}});
  CHECK(value(slurm.script, "WORLD_SIZE") == "32");
}

TEST_CASE("shell: mamba-style option strings split when expanded unquoted", "[shell][patterns]") {
  Run r = run(R"SH(TENSOR_MODEL_PARALLEL_SIZE=2
HYBRID_LAYER_PATTERN="M-M-M*-"
options=" \
       --tensor-model-parallel-size ${TENSOR_MODEL_PARALLEL_SIZE} \
       --sequence-parallel \
       --hybrid-layer-pattern ${HYBRID_LAYER_PATTERN} \
       --data-path ${DATA_PATH} "
torchrun --nproc_per_node 8 ../../pretrain_hybrid.py ${options}
)SH");
  CHECK(r.script.problems.empty());
  const ShellCommand& torchrun = command(r.script, "torchrun");
  Argv expected{"torchrun",
                "--nproc_per_node",
                "8",
                "../../pretrain_hybrid.py",
                "--tensor-model-parallel-size",
                "2",
                "--sequence-parallel",
                "--hybrid-layer-pattern",
                "M-M-M*-",
                "--data-path",
                "${DATA_PATH}"};
  CHECK(argv_of(torchrun) == expected);
  CHECK_FALSE(has_unknown(torchrun.argv[5]));
  CHECK(has_unknown(torchrun.argv[10]));
  CHECK_FALSE(has_unknown(torchrun.argv[9]));
  // The words of an unquoted ${options} are located where they are written in
  // the options string; the 2 there still carries TENSOR_MODEL_PARALLEL_SIZE's definition.
  std::vector<std::string> defined;
  for (Span s : definitions_in(torchrun.argv[5], 0, 1)) defined.push_back(text(r, s));
  CHECK(std::count(defined.begin(), defined.end(), "TENSOR_MODEL_PARALLEL_SIZE=2") == 1);
  CHECK(text(r, span_of(torchrun.argv[5], 0, 1)) == "${TENSOR_MODEL_PARALLEL_SIZE}");
  CHECK(text(r, span_of(torchrun.argv[4], 0, torchrun.argv[4].text.size())) == "--tensor-model-parallel-size");
}

TEST_CASE("shell: llama-style conditional arrays with multi-token elements", "[shell][patterns]") {
  std::string script = R"SH(DTYPE=${DTYPE:-fp8}
DTYPE_ARGS=()
if [[ "$DTYPE" == "fp8" ]]; then
    DTYPE_ARGS+=(
        "--fp8-format hybrid"
        "--fp8-amax-history-len 1024"
        "--fp8-param-gather"
    )
else
    DTYPE_ARGS+=("--bf16")
fi
PRETRAIN_ARGS=(--lr 1)
PRETRAIN_ARGS=( "${PRETRAIN_ARGS[@]}" --use-megatron-fsdp )
python pretrain_gpt.py ${DTYPE_ARGS[@]} "${PRETRAIN_ARGS[@]}"
)SH";
  Run r = run(script);
  CHECK(argv_of(command(r.script, "python")) ==
        Argv{"python", "pretrain_gpt.py", "--fp8-format", "hybrid", "--fp8-amax-history-len",
             "1024", "--fp8-param-gather", "--lr", "1", "--use-megatron-fsdp"});
  CHECK(command(r.script, "python").certain);
  Run bf16 = run(script, {{"DTYPE", env_value("bf16")}});
  CHECK(argv_of(command(bf16.script, "python")) ==
        Argv{"python", "pretrain_gpt.py", "--bf16", "--lr", "1", "--use-megatron-fsdp"});
}

TEST_CASE("shell: srun bash -c keeps the inner command as one word", "[shell][patterns]") {
  Run r = run(
      R"SH(srun --nodes 2 --gpus-per-node 8 bash -c "uv run python -m torch.distributed.run --nnodes \$SLURM_NNODES --nproc-per-node $GPUS /path/train.py"
)SH",
      {{"GPUS", env_value("8")}});
  const ShellCommand& srun = command(r.script, "srun");
  REQUIRE(srun.argv.size() == 8);
  const MappedString& code = srun.argv[7];
  CHECK(code.text ==
        "uv run python -m torch.distributed.run --nnodes $SLURM_NNODES --nproc-per-node 8 "
        "/path/train.py");
  size_t dollar = code.text.find("$SLURM");
  CHECK(text(r, span_of(code, dollar, dollar + 1)) == "\\$");
  CHECK(text(r, span_of(code, dollar + 1, dollar + 2)) == "S");

  ShellScript inner = walk_shell_code(code, {});
  REQUIRE(inner.commands.size() == 1);
  const ShellCommand& uv = inner.commands[0];
  CHECK(argv_of(uv)[0] == "uv");
  const MappedString& nodes = uv.argv[6];
  CHECK(nodes.text == "$SLURM_NNODES");
  CHECK(has_unknown(nodes));
  CHECK(text(r, span_of(nodes, 0, nodes.text.size())) == "\\$SLURM_NNODES");
  const MappedString& gpus = uv.argv[8];
  CHECK(gpus.text == "8");
  CHECK(text(r, span_of(gpus, 0, 1)) == "$GPUS");
  // The outer expansion's record comes along, so GPUS's definition is known.
  REQUIRE(gpus.expansions.size() == 1);
  CHECK(gpus.expansions[0].name == "GPUS");
  CHECK(text(r, gpus.expansions[0].expression) == "$GPUS");
  CHECK(text(r, uv.span).starts_with("uv run"));

  ShellScript known = walk_shell_code(code, {{"SLURM_NNODES", env_value("2")}});
  CHECK(known.commands[0].argv[6].text == "2");
}

TEST_CASE("shell: problems inside bash -c code point into the file", "[shell][patterns]") {
  Run r = run("srun bash -c \"echo 'oops; fi\"\n");
  // The walk follows the code (the launcher's child shell) and reports it.
  REQUIRE(r.script.problems.size() == 1);
  CHECK(r.script.problems[0].message == "unterminated single quote");
  CHECK(at(r, r.script.problems[0].where.begin).column == 20);
  const MappedString& code = command(r.script, "srun").argv[3];
  ShellScript inner = walk_shell_code(code, {});
  REQUIRE(inner.problems.size() == 1);
  CHECK(inner.problems[0].message == "unterminated single quote");
  CHECK(text(r, inner.problems[0].where) == "'");
  CHECK(at(r, inner.problems[0].where.begin).column == 20);
}

TEST_CASE("shell: an sbatch heredoc is the job script it submits", "[shell][patterns]") {
  Run r = run(R"SH(TRAINING_CMD="python pretrain_gpt.py"
sbatch <<EOF
#!/bin/bash
#SBATCH --nodes=your_own_num_nodes --gres=gpu:your_own_gpu_per_node
srun --mpi=pmix -l bash -x -c "${TRAINING_CMD}"
EOF
echo submitted
)SH");
  CHECK(r.script.problems.empty());
  CHECK(all_argv(r.script) == std::vector<Argv>{{"sbatch"},
                                                {"srun", "--mpi=pmix", "-l", "bash", "-x", "-c", "python pretrain_gpt.py"},
                                                {"python", "pretrain_gpt.py"},
                                                {"echo", "submitted"}});
  CHECK(r.script.directives.empty());  // the heredoc's #SBATCH lines are the submitted job's
  const ShellCommand& python = command(r.script, "python");
  // The job runs under sbatch (with the heredoc's #SBATCH lines) and srun.
  std::vector<std::string> launcher;
  for (const MappedString& word : python.launcher) launcher.push_back(word.text);
  CHECK(launcher == std::vector<std::string>{"sbatch", "--nodes=your_own_num_nodes", "--gres=gpu:your_own_gpu_per_node",
                                             "srun", "--mpi=pmix", "-l"});
  CHECK(text(r, span_of(python.launcher[1], 0, 7)) == "--nodes=your_own_num_nodes");  // the #SBATCH option
}

TEST_CASE("shell: modelopt-style TP defaults", "[shell][patterns]") {
  // Never set by the script: the test's body is its default, as `${TP:=1}`.
  Run unset = run("if [ -z ${TP} ]; then TP=1; fi\ntorchrun --tp $TP\n");
  const ShellVariable& tp = var(unset.script, "TP");
  CHECK(tp.known);
  CHECK(tp.value.text == "1");
  CHECK(text(unset, tp.definition) == "TP=1");
  Run preset = run("if [ -z ${TP} ]; then TP=1; fi\ntorchrun --tp $TP\n", {{"TP", env_value("4")}});
  CHECK(command(preset.script, "torchrun").argv[2].text == "4");
  Run dflt = run(
      "TP=${TP:-4}\nPP=${PP:-1}\nLAUNCH=\"torchrun --nproc_per_node=$((TP * PP))\"\n$LAUNCH x\n");
  CHECK(argv_of(command(dflt.script, "torchrun")) == Argv{"torchrun", "--nproc_per_node=4", "x"});
}

// ================================================================ hostile input

TEST_CASE("shell: empty and odd input", "[shell][hostile]") {
  Run empty = run("");
  CHECK(empty.script.commands.empty());
  CHECK(empty.script.problems.empty());

  Run blank = run("\n\n   \n# only comments\n");
  CHECK(blank.script.commands.empty());
  CHECK(blank.script.problems.empty());

  Run utf8 = run("echo \xff\xfe \"\xc3(\" caf\xc3\xa9\n");
  CHECK(argv_of(command(utf8.script, "echo")) == Argv{"echo", "\xff\xfe", "\xc3(", "caf\xc3\xa9"});

  Run crlf = run("if true; then\r\n  echo a\r\nfi\r\n");
  CHECK(crlf.script.problems.empty());
  CHECK(has_command(crlf.script, {"echo", "a"}));

  ShellScript none = walk_shell_code(MappedString{}, {});
  CHECK(none.commands.empty());
  CHECK(none.problems.empty());
}

TEST_CASE("shell: binary garbage never crashes", "[shell][hostile]") {
  std::mt19937 random(12345);
  const char special[] = "\0\x01\xff\n \t\"'`$(){}[];&|<>\\#=*?!:-";
  std::string alphabet = std::string(special, sizeof special - 1) + "abcXYZ019";
  for (int round = 0; round < 200; ++round) {
    std::string garbage;
    size_t size = random() % 400;
    for (size_t i = 0; i < size; ++i) {
      garbage += (random() % 3 == 0) ? static_cast<char>(random() % 256)
                                     : alphabet[random() % alphabet.size()];
    }
    Run r = run(garbage);
    for (const Diagnostic& d : r.script.problems) {
      CHECK(d.where.end <= garbage.size());
      CHECK(d.where.begin <= d.where.end);
    }
  }
  Run nul = run(std::string("echo a\0b\necho c\n", 16));
  CHECK(has_command(nul.script, {"echo", "c"}));
}

TEST_CASE("shell: deep nesting is cut off with one problem", "[shell][hostile]") {
  for (std::string unit :
       {"(", "{ ", "$(", "${X:-", "\"$(", "if true; then ", "((", "$((", "A=("}) {
    INFO(unit);
    std::string script;
    for (int i = 0; i < 10000; ++i) script += unit;
    script += "echo deep\n";
    Run r = run(script);
    // `$((((...` never closes as arithmetic: reported as unterminated instead.
    CHECK((has_message(r.script, "nested more than 200 deep") ||
           has_message(r.script, "unterminated")));
    CHECK_FALSE(r.script.problems.empty());
    CHECK(r.script.problems.size() <= 3);
  }
  std::string closers(10000, ')');
  Run stray = run(closers + "\necho ok\n");
  CHECK(stray.script.problems.size() <= 101);
}

TEST_CASE("shell: recursion and endless loops terminate", "[shell][hostile]") {
  Run bomb = run(":(){ :|:& };:\necho after\n");
  CHECK(has_message(bomb.script, "called more than 16 levels deep"));

  Run loop = run("while true; do :; done\necho after\n");
  CHECK(has_command(loop.script, {"echo", "after"}));

  Run mutual = run("a() { b; }\nb() { a; }\na\necho end\n");
  CHECK(has_command(mutual.script, {"echo", "end"}));

  Run growth = run(
      "X=ab\nwhile true; do X=\"$X$X\"; done\nfor i in 1 2 3 4 5 6 7 8; do X=\"$X$X$X$X\"; done\n");
  CHECK_FALSE(var(growth.script, "X").known);
  CHECK(growth.script.problems.empty());
}

TEST_CASE("shell: self-doubling strings stop at the length limit and work budget",
          "[shell][hostile]") {
  std::string script = "X=abcdefgh\n";
  for (int i = 0; i < 60; ++i) script += "X=\"$X$X\"\n";
  script += "echo end\n";
  Run r = run(script);
  CHECK(has_message(r.script, "longer than 1048576 characters"));
  CHECK(has_message(r.script, "more text than mblint follows"));
  CHECK_FALSE(has_command(r.script, {"echo", "end"}));
}


TEST_CASE("shell: a 5 MB script of assignments is read completely", "[shell][hostile]") {
  std::string script;
  for (int i = 0; script.size() < (5u << 20); ++i) {
    script += "VAR_" + std::to_string(i % 5000) + "=\"value ${VAR_" +
              std::to_string((i + 1) % 5000) + ":-x} " + std::to_string(i) + "\"\n";
  }
  // Speed is measured by the benchmark (tools/bench), not here.
  Run r = run(script);
  CHECK(r.script.problems.empty());
  CHECK(r.script.final_environment.size() == 5000);
}

TEST_CASE("shell: a 1 MB launch script is walked completely", "[shell][hostile]") {
  std::string block = R"SH(export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
NNODES=${SLURM_NNODES:-"1"}
WORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))
ARGS=(
    --num-layers 32 --hidden-size 4096 "--fp8-format hybrid" # comment
    --tensor-model-parallel-size ${TP:-2}
)
if [[ "$DTYPE" == "fp8" ]]; then ARGS+=(--fp8-param-gather); fi
case "$SCALE" in 8B) H=4096 ;; *) H=1024 ;; esac
options=" \
   --seq-length 8192 \
   --hidden-size $H "
torchrun --nproc_per_node $GPUS_PER_NODE ${ARGS[@]} pretrain_gpt.py ${options} 2>&1 | tee log.txt
)SH";
  std::string script;
  while (script.size() < (1u << 20)) script += block;
  Run r = run(script);
  CHECK(r.script.problems.empty());
  CHECK(r.script.commands.size() > 1000);
}

}  // namespace mblint

namespace mblint {

TEST_CASE("shell: broken continuations are warnings at the backslash", "[shell]") {
  Run spaces = run("torchrun a.py \\  \n  --flag\n");
  REQUIRE_FALSE(spaces.script.problems.empty());
  CHECK(spaces.script.problems[0].severity == Severity::Warning);
  CHECK(spaces.script.problems[0].message.find("followed by spaces") != std::string::npos);
  CHECK(at(spaces, spaces.script.problems[0].where.begin).column == 15);
  Run blank = run("torchrun a.py \\\n\n  --flag\n");
  REQUIRE(blank.script.problems.size() == 1);
  CHECK(blank.script.problems[0].message.find("into an empty line") != std::string::npos);
  CHECK(run("torchrun a.py \\\n  --flag\n").script.problems.empty());
  CHECK(run("echo 'a \\  \n'\n").script.problems.empty());  // inside single quotes a backslash is literal
}

TEST_CASE("shell: X=\"$X more\" appends (also in a branch, and reading X twice)", "[shell]") {
  Run r = run("X=a\nX=\"$X b\"\nX=\"${X} c $Y\"\nif [ -n \"$Z\" ]; then X=\"$X d\"; X=\"$X e\"; fi\n"
              "W=ab\nW=\"$W$W\"\n");
  CHECK(var(r.script, "W").value.text == "abab");
  CHECK_FALSE(var(r.script, "X").known);  // differs between the branch and the path around it
  Run known = run("X=a\nX=\"$X b\"\nX=\"${X} c\"\nif true; then X=\"$X d\"; X=\"$X e\"; fi\n");
  CHECK(var(known.script, "X").value.text == "a b c d e");
}

}  // namespace mblint
