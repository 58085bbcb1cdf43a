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

TEST_CASE("ggml super-block, ternary and fp4 formats have their published sizes", "[format]") {
  // ggml/src/ggml-common.h (ggml-org/llama.cpp, commit 01243c58), QK_K = 256:
  // block_q2_K {scales[16]; qs[64]; ggml_half d, dmin} = 16 + 64 + 4: 84 B per 256 weights (2.625 bits)
  CHECK(row_bytes(ElemFormat::q2_k, 256) == 16 + 64 + 4);
  // block_q3_K {hmask[32]; qs[64]; scales[12]; ggml_half d}
  CHECK(row_bytes(ElemFormat::q3_k, 256) == 32 + 64 + 12 + 2);
  // block_q4_K {ggml_half d, dmin; scales[12]; qs[128]}
  CHECK(row_bytes(ElemFormat::q4_k, 256) == 4 + 12 + 128);
  // block_q5_K {ggml_half d, dmin; scales[12]; qh[32]; qs[128]}
  CHECK(row_bytes(ElemFormat::q5_k, 256) == 4 + 12 + 32 + 128);
  // block_q6_K {ql[128]; qh[64]; scales[16]; ggml_half d}
  CHECK(row_bytes(ElemFormat::q6_k, 256) == 128 + 64 + 16 + 2);
  // block_q8_K {float d; qs[256]; int16 bsums[16]}
  CHECK(row_bytes(ElemFormat::q8_k, 256) == 4 + 256 + 16 * 2);
  // block_iq1_s {ggml_half d; qs[32]; uint16 qh[8]}; block_iq1_m {qs[32]; qh[16]; scales[8]}
  CHECK(row_bytes(ElemFormat::iq1_s, 256) == 2 + 32 + 8 * 2);
  CHECK(row_bytes(ElemFormat::iq1_m, 256) == 32 + 16 + 8);
  // block_iq2_xxs {d; uint16 qs[32]}; iq2_xs {d; uint16 qs[32]; scales[8]}; iq2_s {d; qs[64]; qh[8]; scales[8]}
  CHECK(row_bytes(ElemFormat::iq2_xxs, 256) == 2 + 32 * 2);
  CHECK(row_bytes(ElemFormat::iq2_xs, 256) == 2 + 32 * 2 + 8);
  CHECK(row_bytes(ElemFormat::iq2_s, 256) == 2 + 64 + 8 + 8);
  // block_iq3_xxs {d; qs[96]}; iq3_s {d; qs[64]; qh[8]; signs[32]; scales[4]}
  CHECK(row_bytes(ElemFormat::iq3_xxs, 256) == 2 + 96);
  CHECK(row_bytes(ElemFormat::iq3_s, 256) == 2 + 64 + 8 + 32 + 4);
  // block_iq4_xs {d; uint16 scales_h; scales_l[4]; qs[128]}
  CHECK(row_bytes(ElemFormat::iq4_xs, 256) == 2 + 2 + 4 + 128);
  // block_tq1_0 {qs[(256 - 4 * 4) / 5 = 48]; qh[4]; d}; block_tq2_0 {qs[64]; d}
  CHECK(row_bytes(ElemFormat::tq1_0, 256) == 48 + 4 + 2);
  CHECK(row_bytes(ElemFormat::tq2_0, 256) == 64 + 2);
  // block_mxfp4 {uint8 e (e8m0); qs[16]}: 17 B per 32 = 4.25 bits
  CHECK(row_bytes(ElemFormat::mxfp4, 32) == 1 + 16);
  // NVFP4 (ModelOpt / vLLM / TensorRT-LLM layout): 16 e2m1 in 8 B + one fp8 e4m3 scale = 9 B per 16 = 4.5 bits;
  // ggml's block_nvfp4 {d[4]; qs[32]} is four of these: 36 B per 64
  CHECK(row_bytes(ElemFormat::nvfp4, 64) == 4 + 32);
  // a row the super-block does not divide is an error, as for the 32-blocks
  CHECK_THROWS_AS(row_bytes(ElemFormat::q4_k, 2880), InputError);
  CHECK(parse_format("Q2_K") == ElemFormat::q2_k);
  CHECK(parse_format("iq2_xxs") == ElemFormat::iq2_xxs);
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
  CHECK_FALSE(parse_format("q3_k_m").has_value());  // a llama-quantize mix, not a ggml type
  CHECK_FALSE(parse_format("").has_value());
  // every name but the halves of vLLM's TurboQuant presets, which are spelled as pairs (parse_turboquant)
  for (const auto& fi : all_formats()) CHECK(parse_format(fi.name) == (is_turboquant(fi.format) ? std::nullopt : std::optional<ElemFormat>(fi.format)));
}
