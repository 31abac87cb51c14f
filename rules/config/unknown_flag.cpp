// Rule metadata for a Megatron-LM flag the entry script's parser does not
// accept; the check runs where the command line is read
// (lint/load/dialects/megatron_lm_flags.cpp), the documentation is here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kUnknownFlag = {
    .code = "MB008",
    .name = input_rule::kUnknownFlag.name,
    .group = RuleGroup::Config,
    .severity = input_rule::kUnknownFlag.severity,
    .summary = "a Megatron-LM flag the entry script's argument parser does not accept",
    .doc = R"md(Megatron-LM's entry scripts (`pretrain_gpt.py`, `pretrain_hybrid.py`, `train_rl.py`, ...)
read their command line with one argparse parser, built by `parse_args` in
`megatron/training/arguments.py` plus the script's own `extra_args_provider`, and call
`parser.parse_args()` (not `parse_known_args`): a flag the parser does not know stops the job
with "error: unrecognized arguments: --tensor-model-parallel-szie 4" before anything is set
up. The parser is created with `allow_abbrev=False` (commit cf59548, April 2020; in every
release since v2.0 and in every `core_v0.12.0` ... `core_v0.19.0`), so an abbreviation such as
`--tensor-model-parallel` is unrecognized too, and flags are spelled with dashes
(`--seq_length` is unrecognized).

mblint's table of accepted flags is generated from upstream source
(`tools/gen_megatron_lm_flags.py`, Python `ast`, nothing imported): every `add_argument` reached
from `add_megatron_arguments`, every dataclass field `ArgumentGroupFactory` turns into a flag
(`megatron/training/argument_utils.py`, from `core_v0.16.0`: a bool field that defaults to
True becomes `--no-x` and `--disable-x`), and the flags each entry script's
`extra_args_provider` adds, at each release `core_v0.12.0` ... `core_v0.19.0` (patch releases
included) and at main `d98e8a64dd` (0.20 development). Flags that only an installed package
enables (ModelOpt's, Kitchen's) count as accepted. At main, `pretrain_gpt.py` and
`pretrain_hybrid.py` (and `pretrain_mamba.py`, which runs it) add ModelOpt's 22 flags when
`nvidia-modelopt` is installed, `pretrain_vlm.py` six VLM flags (`--freeze-ViT`, ...),
`train_rl.py` and the inference examples their serving flags, `examples/multimodal/train.py`,
`examples/mimo/train.py` and `megatron/elastification/pretrain_hybrid_flex.py` their own;
`examples/bert/pretrain_bert.py` and `examples/t5/pretrain_t5.py` add none.

What is reported, for an entry script mblint knows (by its path in the Megatron-LM repository;
a Megatron-LM functional-test `model_config.yaml` is checked against the scripts its family's
CI recipes run):

* a flag no release accepts: an error, with a did-you-mean and a rename fix where one flag is
  close (at most one edit per ten characters, an abbreviation, or underscores for dashes), and
  for a flag another entry script has
  (`--freeze-ViT` is `pretrain_vlm.py`'s); a flag no release of any script has and no flag is
  close to is an error for the release `--megatron-core-version` names and a warning under the
  default release, because a fork of Megatron-LM that keeps the script's name may add it
  (llm-jp's `--use-mpi`);
* a flag other releases accept: an error when `--megatron-core-version` names a release without
  it (with the releases that have it); a note when the release is mblint's default (0.19), since
  the job may run another.

A flag that only releases before 0.12 accept (`--DDP-impl`, `--no-query-key-layer-scaling`;
the generator also reads the tags from v2.0 to `core_v0.11.0`) is treated the same way: a note
under the default release, an error for a release given.

A script mblint does not know (your own `train.py` taking Megatron-LM flags, a fork's script
under another path) may add arguments of its own, so its flags that no release of Megatron-LM's
parser accepts are listed in one note and not judged; so are the flags of a Megatron-DeepSpeed
`pretrain_gpt.py` (recognised by DeepSpeed's `--deepspeed*` and `--zero-stage` flags, which its
parser adds) and all flags for a release before 0.12 or after 0.20.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-szie 4 --num-layers 32\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 4 --num-layers 32\n"},
    .check = nullptr,
};

}  // namespace mblint
