// Model transforms (see transform.hpp).
#include "kvplan/core/transform.hpp"

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

void apply_weight_format(ModelSpec& m, const std::string& w, const std::string& where) {
  WeightQuant q;
  q.method = "override";
  if (w == "int4") {
    q.linear_bits = group_quant_bits(4, 128, 16, 4);
    q.detail = "int4 g128 (f16 scale + 4-bit zero)";
  } else if (w == "fp8" || w == "int8") {
    q.linear_bits = 8;
    q.detail = w + " (per-channel scales not counted)";
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
                     "use f32, f16, bf16, fp8, int8, int4 or a ggml type (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl)");
  }
  m.quant = q;
  m.exact_weight_bytes.reset();  // the format given replaces what a weights file holds
  m.exact_params.reset();
}

}  // namespace kvplan
