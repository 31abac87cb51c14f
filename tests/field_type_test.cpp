// Field types read from the compiled schema's annotations, and the Literal
// choices of older Megatron Bridge releases.
#include <catch2/catch.hpp>

#include "lint/model/field_type.h"

using namespace mblint;

namespace {

std::vector<TypeKind> kinds(const FieldType& type) {
  std::vector<TypeKind> out;
  for (const DeclaredType& t : type.alternatives) out.push_back(t.kind);
  return out;
}

std::vector<std::string> choices(const DeclaredType& literal) {
  std::vector<std::string> out;
  for (const ConfigValue& c : literal.choices) {
    out.push_back(c.kind == ValueKind::String ? c.text : std::to_string(c.integer));
  }
  return out;
}

}  // namespace

TEST_CASE("annotations parse into unions of scalar, Literal, list and opaque types", "[field-type]") {
  CHECK(kinds(parse_annotation("int")) == std::vector{TypeKind::Int});
  CHECK(kinds(parse_annotation("int | None")) == std::vector{TypeKind::Int, TypeKind::None});
  CHECK(kinds(parse_annotation("Optional[float]")) == std::vector{TypeKind::Float, TypeKind::None});
  CHECK(kinds(parse_annotation("Optional[Union[int, List[int]]]")) ==
        std::vector{TypeKind::Int, TypeKind::List, TypeKind::None});
  CHECK(kinds(parse_annotation("str | Path | None")) == std::vector{TypeKind::Str, TypeKind::Str, TypeKind::None});
  CHECK(kinds(parse_annotation("dict[str, str | int | float | bool]")) == std::vector{TypeKind::Dict});

  FieldType list = parse_annotation("list[int] | None");
  REQUIRE(list.alternatives.size() == 2);
  REQUIRE(list.alternatives[0].item.size() == 1);
  CHECK(list.alternatives[0].item[0].kind == TypeKind::Int);

  // Literal: quotes of either kind, a trailing comma, negative ints, None inside.
  FieldType strict = parse_annotation("Literal[ \"assume_ok_unexpected\", 'log_all', ]");
  REQUIRE(kinds(strict) == std::vector{TypeKind::Literal});
  CHECK(choices(strict.alternatives[0]) == std::vector<std::string>{"assume_ok_unexpected", "log_all"});
  FieldType levels = parse_annotation("Literal[-1, 0, 1, 2]");
  CHECK(choices(levels.alternatives[0]) == std::vector<std::string>{"-1", "0", "1", "2"});
  CHECK(joined_choices(levels.alternatives[0]) == "-1|0|1|2");
  CHECK(parse_annotation("Optional[Literal['full', 'selective']]").optional());

  // Classes, callables, tuples, enums: anything goes.
  for (const char* opaque : {"torch.dtype", "Optional[Callable]", "Optional[Tuple[int, int]]", "AttnBackend",
                             "Tuple[str, ...]", "Union[ModuleSpec, Callable[[\"GPTModelProvider\"], ModuleSpec]]",
                             "Literal[AttnBackend.auto]", "", "int]", "Optional[int"}) {
    INFO(opaque);
    CHECK(parse_annotation(opaque).takes_anything());
  }
}

TEST_CASE("a field's type joins every variant the schema describes", "[field-type]") {
  // Declared by every model variant of the schema (GPT, hybrid, MLA), always int.
  FieldType tp = declared_type("model", "tensor_model_parallel_size");
  CHECK(tp.alternatives.size() == 3);
  CHECK(kinds(tp) == std::vector(tp.alternatives.size(), TypeKind::Int));
  CHECK(kinds(declared_type("train", "micro_batch_size")) == std::vector{TypeKind::Int, TypeKind::None});
  // GPT and Hybrid providers declare different position embeddings.
  FieldType position = declared_type("model", "position_embedding_type");
  REQUIRE(position.alternatives.size() == 2);
  CHECK(position.alternatives[0].kind == TypeKind::Literal);
  CHECK(position.alternatives[1].kind == TypeKind::Literal);
  CHECK(declared_type("model", "no_such_field").takes_anything());
}

TEST_CASE("Literal choices follow the Megatron Bridge release", "[field-type]") {
  const std::string_view now = "torch|torch_dist|torch_dcp|fsdp_dtensor";
  auto old = literal_choices_in("checkpoint", "ckpt_format", now, Version{0, 3, 1});
  REQUIRE(old);
  CHECK(*old == std::vector<std::string>{"torch_dist", "zarr", "fsdp_dtensor"});
  CHECK_FALSE(literal_choices_in("checkpoint", "ckpt_format", now, Version{0, 4, 0}));
  CHECK_FALSE(literal_choices_in("checkpoint", "ckpt_format", now, Version{0, 6, 0}));
  // Two runs: not a Literal up to 0.2.2, two choices up to 0.5.1, three since.
  const std::string_view backends = "deepep|hybridep|ncclep";
  auto first = literal_choices_in("model", "moe_flex_dispatcher_backend", backends, Version{0, 2, 0});
  REQUIRE(first);
  CHECK(first->empty());
  auto second = literal_choices_in("model", "moe_flex_dispatcher_backend", backends, Version{0, 5, 1});
  REQUIRE(second);
  CHECK(*second == std::vector<std::string>{"deepep", "hybridep"});
  CHECK_FALSE(literal_choices_in("model", "moe_flex_dispatcher_backend", backends, Version{0, 6, 0}));
  // The development branch after 0.6 added gdn and gdn2.
  auto v06 = literal_choices_in("model", "experimental_attention_variant", "gdn|gdn2|dsa|gated_delta_net",
                                Version{0, 6, 0});
  REQUIRE(v06);
  CHECK(*v06 == std::vector<std::string>{"gated_delta_net", "dsa"});
  CHECK_FALSE(literal_choices_in("model", "experimental_attention_variant", "gdn|gdn2|dsa|gated_delta_net",
                                 Version{0, 7, 0}));
}
