// Model transforms (see transform.hpp).
#include "kvplan/core/transform.hpp"

#include <cctype>
#include <optional>

#include "kvplan/core/error.hpp"
#include "kvplan/core/format.hpp"
#include "kvplan/core/weights.hpp"

namespace kvplan {

void expand_mla(ModelSpec& m) {
  for (Layer& l : m.layers) {
    if (l.kv != KvKind::mla_latent) continue;
    l.kv = KvKind::mla_expanded;
    l.kv_heads = l.q_heads;
    l.k_head_dim = add(l.qk_nope_head_dim, l.qk_rope_head_dim);
    // v_head_dim already holds the per-head V width
  }
}

void disable_windows(ModelSpec& m) {
  for (Layer& l : m.layers) {
    if (l.kv == KvKind::sliding || l.kv == KvKind::chunked) {
      l.kv = KvKind::full;
      l.window = 0;
    }
  }
}

namespace {

// llama-quantize's K-quant file types (src/llama-quant.cpp llama_tensor_get_type; block bytes per 256
// weights from ggml: q4_K 144, q5_K 176, q6_K 210): every matrix at the base type, attn_v and ffn_down
// promoted on the layers use_more_bits picks (_M), or on the first layers (Q4_K_S). Checked against
// llama-quantize's own sizes for Llama-3-8B (tests/unit/test_weights.cpp).
std::optional<WeightQuant> kquant_mix(std::string w) {
  for (auto& ch : w) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const double q4k = 8.0 * 144 / 256, q5k = 8.0 * 176 / 256, q6k = 8.0 * 210 / 256;
  WeightQuant q;
  q.method = "gguf";
  q.vector_bits = 32;
  if (w == "q4_k_m" || w == "q4_k") {
    q.linear_bits = q4k;
    q.more_bits = q6k;
    q.detail = "Q4_K_M: q4_K, attn_v and ffn_down q6_K on use_more_bits layers, output head q6_K, norms f32";
  } else if (w == "q4_k_s") {
    q.linear_bits = q4k;
    q.early_v_bits = q5k;
    q.early_down_bits = q5k;
    q.detail = "Q4_K_S: q4_K, attn_v of layers < 4 and ffn_down of the first eighth q5_K, output head q6_K, norms f32";
  } else if (w == "q5_k_m" || w == "q5_k") {
    q.linear_bits = q5k;
    q.more_bits = q6k;
    q.detail = "Q5_K_M: q5_K, attn_v and ffn_down q6_K on use_more_bits layers, output head q6_K, norms f32";
  } else if (w == "q5_k_s") {
    q.linear_bits = q5k;
    q.detail = "Q5_K_S: q5_K, output head q6_K, norms f32";
  } else if (w == "q6_k") {
    q.linear_bits = q6k;
    q.detail = "Q6_K: q6_K, norms f32";
  } else {
    return std::nullopt;
  }
  return q;
}

}  // namespace

void apply_weight_format(ModelSpec& m, const std::string& w, const std::string& where) {
  WeightQuant q;
  q.method = "override";
  if (w == "int4") {
    q.linear_bits = group_quant_bits(4, 128, 16, 4);
    q.detail = "int4 g128 (f16 scale + 4-bit zero)";
  } else if (w == "fp8" || w == "int8") {
    q.linear_bits = 8;
    q.detail = w + " (per-channel scales not counted)";
  } else if (const auto k = kquant_mix(w)) {
    q = *k;
    q.embedding_bits = q.linear_bits;                   // token_embd at the base type
    q.lm_head_bits = 8.0 * 210 / 256;                   // output.weight q6_K
    if (m.tied_embeddings) q.embedding_bits = q.lm_head_bits;
  } else if (const auto g = parse_format(w); g && format_info(*g).block_elems > 1) {
    // llama-quantize, pure ftype (src/llama-quant.cpp llama_tensor_get_type): the output tensor, and the token
    // embedding when tied (it is the output), become q6_K unless the type is q8_0; 1-D tensors stay f32
    const FormatInfo& fi = format_info(*g);
    const double bits = 8.0 * static_cast<double>(fi.block_bytes) / static_cast<double>(fi.block_elems);
    const double head = *g == ElemFormat::q8_0 ? bits : 8.0 * 210 / 256;  // q6_K: 210 bytes per 256 weights
    q.method = "gguf";
    q.linear_bits = bits;
    q.embedding_bits = m.tied_embeddings ? head : bits;
    q.lm_head_bits = head;
    q.vector_bits = 32;
    q.detail = std::string(fi.name) + ", output head " + (*g == ElemFormat::q8_0 ? "q8_0" : "q6_K") + ", norms f32";
  } else if (const auto f = parse_format(w); f && format_info(*f).block_elems == 1 && format_info(*f).block_bytes >= 2) {
    m.dtype = *f;
    q = WeightQuant{};
  } else {
    throw InputError(where, "unknown weight format '" + w + "'",
                     "use f32, f16, bf16, fp8, int8, int4, a ggml type (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl) or a K-quant mix (q4_k_m, q4_k_s, q5_k_m, q5_k_s, q6_k)");
  }
  m.quant = q;
  m.exact_weight_bytes.reset();  // the format given replaces what a weights file holds
  m.exact_params.reset();
}

}  // namespace kvplan
