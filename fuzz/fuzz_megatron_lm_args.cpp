// Megatron-LM's argparse model: each line of the input is one argv word.
// Also the --moe-layer-freq pattern evaluator on the first line, and the
// unknown-flag check of the words for a known and an unknown entry script.
#include "fuzz/fuzz_support.h"
#include "lint/load/dialects/megatron_lm_args.h"
#include "lint/load/dialects/megatron_lm_flags.h"

using namespace mblint;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  SourceSet sources;
  FileId file = add_source(sources, "<argv>", std::string(text), true);
  MegatronArgv argv;
  for (auto [offset, line] : fuzz::lines_of(text)) argv.words.push_back(mapped_verbatim(file, offset, line));
  MegatronLmArgs args = read_megatron_lm_args(argv);
  fuzz::check_spans(sources, args.problems);
  (void)evaluate_layer_pattern(text.substr(0, text.find('\n')));
  for (std::string_view program : {"pretrain_gpt.py", "my/train.py"}) {
    FlagCheck check = check_megatron_lm_flags(argv, parser_for_program(program), {}, sources, Span{});
    fuzz::check_spans(sources, check.diagnostics);
  }
  return 0;
}
