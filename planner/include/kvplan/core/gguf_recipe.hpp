// llama-quantize's per-tensor type choice, so a GGUF file can be priced before it exists: which ggml type each
// weight tensor gets for a file type (Q4_K_M, IQ2_XS, MXFP4_MOE ...), and the bytes that makes per component.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/core/format.hpp"
#include "kvplan/core/model.hpp"

namespace kvplan {

/// llama-quantize's file types (include/llama.h LLAMA_FTYPE_MOSTLY_*), plus `pure` (llama-quantize --pure: every
/// tensor at one type, no mixture).
enum class Ftype {
  pure, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q2_k_s, q3_k_s, q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m, q6_k,
  iq2_xxs, iq2_xs, iq2_s, iq2_m, iq3_xxs, iq3_xs, iq3_s, iq3_m, iq1_s, iq1_m, iq4_nl, iq4_xs, tq1_0, tq2_0, mxfp4_moe
};

struct GgufRecipe {
  Ftype ftype = Ftype::pure;
  ElemFormat base = ElemFormat::q8_0;  // llama_ftype_get_default_type
  bool imatrix = false;                // quantized with an importance matrix (changes a few IQ4 / Q4_0 choices)
  std::string name;                    // as llama-quantize prints it: "Q4_K_M", "pure q2_k"
};

/// Parses a llama-quantize type name, case-insensitive, as its QUANT_OPTIONS table reads them (Q3_K, Q4_K, Q5_K are
/// its aliases of the _M mixes); "pure:<ggml type>" for --pure; a ggml type that is no file type (q8_k) is pure.
/// ":imatrix" after a name records an importance matrix (IQ1/IQ2/IQ3_XXS/IQ3_XS/Q2_K_S always have one).
std::optional<GgufRecipe> parse_gguf_recipe(std::string_view name);

/// The file type as llama.cpp prints it (llama_model_ftype_name: "Q4_K - Medium", "IQ2_XS - 2.3125 bpw",
/// "IQ3_S mix - 3.66 bpw", "MXFP4 MoE", "Q8_0"), without an importance matrix unless the type needs one.
std::optional<GgufRecipe> gguf_recipe_from_printed(std::string_view printed);

/// The accepted file-type names, joined with ", " (for error messages and --help).
std::string gguf_recipe_names();

/// llama-quant.cpp's tensor categories (tensor_get_category).
enum class TensorRole {
  token_embd, output, attn_q, attn_k, attn_v, attn_qkv, attn_kv_b, attn_output, ffn_gate, ffn_up, ffn_down, other
};

/// One quantisable weight tensor of a GGUF file: ne = {cols, rows, slices} (slices = experts of a merged 3-D
/// expert tensor, else 1); `part` is the ParamPart it belongs to (weights.hpp).
struct GgufTensor {
  std::string part;
  TensorRole role = TensorRole::other;
  i64 layer = -1;  // block index, -1 for token_embd / output
  i64 cols = 0, rows = 0, slices = 1;
  ElemFormat type = ElemFormat::f16;  // filled by gguf_tensor_types
};

/// The 2-D and 3-D weight tensors llama-quantize considers, in the loader's order (output, token_embd, then by
/// block): embeddings, attention (q/k/v/o, fused qkv, MLA q_a/q_b/kv_a/kv_b), dense MLP, merged experts, shared
/// experts. Mixer weights of SSM layers are not listed (they are priced at the base type by the caller).
std::vector<GgufTensor> gguf_tensors(const ModelSpec& m);

/// Assigns each tensor the ggml type llama-quantize gives it (llama_tensor_get_type_impl, then the shape fallback
/// tensor_type_fallback), walking the tensors in order as its counters do. Throws InputError at `where` when
/// llama-quantize would refuse (a type with no fallback for a row length).
void gguf_tensor_types(const GgufRecipe& r, const ModelSpec& m, std::vector<GgufTensor>& ts,
                       const std::string& where = "weight_format");

/// gguf_tensors(m) with each tensor typed by gguf_tensor_types(r, m, ...).
std::vector<GgufTensor> gguf_typed_tensors(const GgufRecipe& r, const ModelSpec& m, const std::string& where = "weight_format");

/// Bytes of one tensor: rows x slices x row_bytes(type, cols), overflow-checked.
i64 gguf_tensor_bytes(const GgufTensor& t);

}  // namespace kvplan
