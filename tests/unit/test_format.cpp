// Element formats: block sizes (ggml-common.h), row arithmetic, names.
#include <catch2/catch.hpp>

#include "kvplan/core/format.hpp"

using namespace kvplan;

TEST_CASE("ggml block formats have their published sizes", "[format]") {
  // ggml/src/ggml-common.h: block_q8_0 {ggml_half d; int8_t qs[32]} = 2 + 32
  CHECK(row_bytes(ElemFormat::q8_0, 32) == 2 + 32);
  // block_q4_0 {ggml_half d; uint8_t qs[16]} = 2 + 16
  CHECK(row_bytes(ElemFormat::q4_0, 32) == 2 + 16);
  // block_q4_1 {ggml_half d, m; uint8_t qs[16]} = 4 + 16
  CHECK(row_bytes(ElemFormat::q4_1, 32) == 4 + 16);
  // block_q5_0 {ggml_half d; uint8_t qh[4]; uint8_t qs[16]} = 2 + 4 + 16
  CHECK(row_bytes(ElemFormat::q5_0, 32) == 2 + 4 + 16);
  // block_q5_1 {ggml_half d, m; uint8_t qh[4]; uint8_t qs[16]} = 4 + 4 + 16
  CHECK(row_bytes(ElemFormat::q5_1, 32) == 4 + 4 + 16);
  // block_iq4_nl {ggml_half d; uint8_t qs[16]} = 2 + 16
  CHECK(row_bytes(ElemFormat::iq4_nl, 32) == 2 + 16);
}

TEST_CASE("plain formats are bytes per element", "[format]") {
  CHECK(row_bytes(ElemFormat::f32, 128) == 128 * 4);
  CHECK(row_bytes(ElemFormat::f16, 128) == 128 * 2);
  CHECK(row_bytes(ElemFormat::bf16, 128) == 128 * 2);
  CHECK(row_bytes(ElemFormat::fp8_e4m3, 128) == 128);
  CHECK(row_bytes(ElemFormat::fp8_e5m2, 128) == 128);
  CHECK(row_bytes(ElemFormat::int8, 128) == 128);
  CHECK(row_bytes(ElemFormat::q8_0, 128) == 4 * 34);
}

TEST_CASE("a block format needs a row that is a multiple of its block", "[format]") {
  REQUIRE_THROWS_AS(row_bytes(ElemFormat::q8_0, 80), InputError);
  try {
    row_bytes(ElemFormat::q4_0, 100, "K head row (head_dim)");
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "K head row (head_dim): row of 100 elements is not a multiple of q4_0's block of 32; choose a plain cache "
          "type (f16, bf16, fp8_e4m3) for this model");
  }
}

TEST_CASE("format names and aliases parse", "[format]") {
  CHECK(parse_format("q8_0") == ElemFormat::q8_0);
  CHECK(parse_format("Q4_0") == ElemFormat::q4_0);
  CHECK(parse_format("float16") == ElemFormat::f16);
  CHECK(parse_format("bfloat16") == ElemFormat::bf16);
  CHECK(parse_format("fp8") == ElemFormat::fp8_e4m3);
  CHECK(parse_format("fp8_e5m2") == ElemFormat::fp8_e5m2);
  CHECK_FALSE(parse_format("q3_k").has_value());
  CHECK_FALSE(parse_format("").has_value());
  for (const auto& fi : all_formats()) CHECK(parse_format(fi.name) == fi.format);
}
