// Element formats of KV caches and weights: bytes per block of elements.
// Plain types are blocks of one element; ggml block formats pack 32 elements with scales.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/core/checked.hpp"

namespace kvplan {

enum class ElemFormat { f32, f16, bf16, fp8_e4m3, fp8_e5m2, int8, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl };

struct FormatInfo {
  ElemFormat format;
  std::string_view name;   // canonical name, as printed and accepted
  i64 block_elems;         // elements per block (1 for plain types)
  i64 block_bytes;         // bytes per block
};

/// Size table. ggml block sizes from ggml/src/ggml-common.h: block_q8_0 = f16 scale + 32 int8 = 34 B;
/// q4_0 = f16 + 16 B = 18; q4_1 = 2 f16 + 16 B = 20; q5_0 = f16 + 4 B high bits + 16 B = 22;
/// q5_1 = 2 f16 + 4 + 16 = 24; iq4_nl = f16 + 16 B = 18.
const FormatInfo& format_info(ElemFormat f);

/// Every format, in enum order.
const std::vector<FormatInfo>& all_formats();

/// Parses a canonical name or an alias (float16, half, bfloat16, float32, fp8 = fp8_e4m3, fp8_e4m3fn,
/// q8 …). Case-insensitive. Empty optional when unknown.
std::optional<ElemFormat> parse_format(std::string_view name);

/// Canonical names joined with ", " (for error messages).
std::string format_names();

/// Bytes of a row of n elements: n / block_elems * block_bytes.
/// Throws InputError when n is not a multiple of the block ("row of 100 elements is not a multiple
/// of q8_0's block of 32").
i64 row_bytes(ElemFormat f, i64 n, std::string_view what = "row");

}  // namespace kvplan
