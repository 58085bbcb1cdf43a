// Element formats of KV caches and weights: bytes per block of elements.
// Plain types are blocks of one element; ggml block formats pack 32 elements with scales.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/core/checked.hpp"

namespace kvplan {

enum class ElemFormat {
  f32, f16, bf16, fp8_e4m3, fp8_e5m2, int8, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl,
  // ggml super-block types (256 weights), ternary types, OCP / NVIDIA 4-bit floats
  q2_k, q3_k, q4_k, q5_k, q6_k, q8_k, iq1_s, iq1_m, iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq4_xs, tq1_0, tq2_0,
  mxfp4, nvfp4,
  fp4_e2m1,  // SGLang's FP4 KV cache: e2m1 pairs and a 1-byte (UE8M0) scale per 16 values, 9 B per 16
  // vLLM's per-row KV formats (a head's row of K or of V, with its own scale or norm): the per-token-head caches
  // and the halves of the TurboQuant presets (row_bytes below)
  int8_pth, fp8_pth, int4_pth, tq_k8, tq_k4, tq_k3, tq_v4, tq_v3
};

struct FormatInfo {
  ElemFormat format;
  std::string_view name;   // canonical name, as printed and accepted
  i64 block_elems;         // elements per block (1 for plain types)
  i64 block_bytes;         // bytes per block
  i64 row_bits = 0;        // > 0: a per-row format: a row of n elements is ceil(n x row_bits / 8) + row_extra bytes
  i64 row_extra = 0;       // bytes each row carries beside its elements (a scale, a norm, a zero point)
};

/// Size table. ggml block sizes from ggml/src/ggml-common.h (ggml-org/llama.cpp, commit 01243c58; the struct
/// layouts there carry static_asserts on these sums): blocks of 32: q8_0 = f16 scale + 32 int8 = 34 B;
/// q4_0 = f16 + 16 B = 18; q4_1 = 2 f16 + 16 B = 20; q5_0 = f16 + 4 B high bits + 16 B = 22;
/// q5_1 = 2 f16 + 4 + 16 = 24; iq4_nl = f16 + 16 B = 18; mxfp4 = e8m0 exponent + 16 B = 17.
/// Super-blocks of 256 (QK_K): q2_K 16 scales + 64 quants + 2 f16 = 84; q3_K 32 hmask + 64 + 12 scales + f16 = 110;
/// q4_K 2 f16 + 12 + 128 = 144; q5_K 2 f16 + 12 + 32 + 128 = 176; q6_K 128 + 64 + 16 + f16 = 210;
/// q8_K f32 + 256 + 16 int16 sums = 292; iq1_s f16 + 32 + 16 = 50; iq1_m 32 + 16 + 8 = 56; iq2_xxs f16 + 64 = 66;
/// iq2_xs f16 + 64 + 8 = 74; iq2_s f16 + 64 + 8 + 8 = 82; iq3_xxs f16 + 96 = 98; iq3_s f16 + 64 + 8 + 32 + 4 = 110;
/// iq4_xs f16 + 2 + 4 + 128 = 136; tq1_0 48 + 4 + f16 = 54; tq2_0 64 + f16 = 66.
/// nvfp4 is NVIDIA's layout as ModelOpt / vLLM / TensorRT-LLM store it: 16 e2m1 weights (8 B) + one fp8 e4m3 scale
/// = 9 B per 16 (4.5 bits; the fp32 per-tensor scale is counted by the weight formats, not here). ggml's own
/// block_nvfp4 packs four of these (64 weights, 4 scales + 32 B = 36 B), the same 4.5 bits.
/// vLLM's per-row KV formats, per head row of head_size D (vllm/v1/kv_cache_interface.py AttentionSpec
/// unpadded_page_size_bytes, FullAttentionSpec.real_page_size_bytes; model_executor/layers/quantization/turboquant/
/// config.py TurboQuantConfig key_packed_size / value_packed_size; read at main 5ac2684, 2026-08-07):
/// int8_per_token_head and fp8_per_token_head D + 4 (an fp32 scale per token and head, inline in the page);
/// int4_per_token_head D / 2 + 4 (its zero point hides in the scale's low mantissa bits); TurboQuant keys: fp8 D,
/// 4- or 3-bit Lloyd-Max indices ceil(D x bits / 8) + 2 (an fp16 norm); values ceil(D x bits / 8) + 4 (fp16 scale and
/// zero). A TurboQuant slot (K + V of one head) is rounded up to an even size (slot_size_aligned): tq_slot_pad.
const FormatInfo& format_info(ElemFormat f);

/// The halves of vLLM's TurboQuant presets (--kv-cache-dtype turboquant_k8v4 / turboquant_4bit_nc /
/// turboquant_k3v4_nc / turboquant_3bit_nc: TQ_PRESETS in turboquant/config.py): K and V formats, or nothing.
struct KvPair {
  ElemFormat k, v;
};
std::optional<KvPair> parse_turboquant(std::string_view name);
/// Whether a format is half of a TurboQuant preset (tq_k8 ... tq_v3).
bool is_turboquant(ElemFormat f);
/// The name a K / V pair is written with: the TurboQuant preset's, else "k/v" (or the one name when they agree).
std::string kv_pair_name(ElemFormat k, ElemFormat v);
/// A K / V pair in a title: the TurboQuant preset's name, else "k<sep>v" (both names, even when they agree).
std::string kv_pair_label(ElemFormat k, ElemFormat v, std::string_view sep);
/// Bytes a TurboQuant slot of K and V rows (k_row + v_row bytes) is padded by to be even; 0 for other pairs.
i64 tq_slot_pad(ElemFormat k, ElemFormat v, i64 k_row, i64 v_row);

/// Every format, in enum order.
const std::vector<FormatInfo>& all_formats();

/// Parses a canonical name or an alias (float16, half, bfloat16, float32, fp8 = fp8_e4m3, fp8_e4m3fn,
/// q8, fp4_e2m1 = mxfp4 …). Case-insensitive. Empty optional when unknown.
std::optional<ElemFormat> parse_format(std::string_view name);

/// Whether some engine caches K or V in this format: every format but the weight-only ggml types (the super-blocks
/// of 256 and the ternary types). Which engine takes which is checked per engine (check_kv_format, deployment.hpp).
bool kv_capable(ElemFormat f);
/// A recurrent (Mamba) state is kept in a float type: vLLM --mamba-ssm-cache-dtype auto|float32|float16|bfloat16.
inline bool state_capable(ElemFormat f) { return f == ElemFormat::f32 || f == ElemFormat::f16 || f == ElemFormat::bf16; }
/// Throws InputError at `key` unless `text` is "auto" or names a state_capable format.
void check_state_dtype(const std::string& text, const std::string& key);

/// Canonical names of the KV-capable formats joined with ", " (for KV cache error messages), and vLLM's TurboQuant
/// K/V pairs after them where the setting takes a pair (--kv-cache-dtype, not a K or V cache alone).
std::string format_names(bool with_pairs = true);

/// Bytes of a row of n elements: n / block_elems * block_bytes (per-row formats: ceil(n x row_bits / 8) + row_extra).
/// Throws InputError when n is not a multiple of the block ("row of 100 elements is not a multiple
/// of q8_0's block of 32").
i64 row_bytes(ElemFormat f, i64 n, std::string_view what = "row");

}  // namespace kvplan
