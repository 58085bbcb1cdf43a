// Model transforms (see transform.hpp).
#include "kvplan/core/transform.hpp"
#include "kvplan/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "kvplan/core/error.hpp"
#include "kvplan/core/format.hpp"
#include "kvplan/core/gguf_recipe.hpp"
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
    if (shares_kv(l)) l.window = 0;  // a KV-sharing layer reads its donor whole
  }
}

namespace {

bool has_moe(const ModelSpec& m) {
  return std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.mlp == MlpKind::moe; });
}

// "Q3_K_M: 129 q3_k, 94 q4_k, 1 q6_k tensors, norms f32": the tensor types the recipe gives, as llama.cpp's loader
// lists them ("llama_model_loader: - type q4_K: 193 tensors")
std::string recipe_detail(const GgufRecipe& r, const ModelSpec& m, const std::string& where) {
  auto ts = gguf_tensors(m);
  gguf_tensor_types(r, m, ts, where);
  std::string out = r.name + ":";
  bool first = true;
  for (const auto& fi : all_formats()) {
    const auto n = std::count_if(ts.begin(), ts.end(), [&](const GgufTensor& t) { return t.type == fi.format; });
    if (n == 0) continue;
    out += std::string(first ? " " : ", ") + std::to_string(n) + " " + std::string(fi.name);
    first = false;
  }
  return out + " tensors, norms f32" + (has_moe(m) ? ", router f32" : "");
}

}  // namespace

void set_nvfp4(WeightQuant& q, const std::string& source) {
  q.method = "nvfp4";
  q.linear_bits = 4.0 + 8.0 / 16.0;
  q.per_module_bytes = 8;
  q.detail = "nvfp4: e2m1 + fp8 scale per 16 = 4.5 bits, + 2 fp32 scales per module" + (source.empty() ? "" : " (" + source + ")");
}

std::string weight_format_names() {
  return "f32, f16, bf16, fp8, fp8_block, int8, int4, awq, gptq, nvfp4, mxfp4, a llama-quantize type (" + gguf_recipe_names() +
         ", each optionally with :imatrix) or pure:<ggml type> (q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl, q2_k, q3_k, q4_k, q5_k, "
         "q6_k, q8_k, iq1_s, iq1_m, iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq4_xs, tq1_0, tq2_0, mxfp4)";
}

void apply_weight_format(ModelSpec& m, const std::string& format, const std::string& where) {
  const std::string w = ascii_lower(format);
  WeightQuant q;
  q.method = "override";
  if (w == "int4" || w == "awq" || w == "gptq") {
    // AutoAWQ / GPTQ 4-bit, group 128: qweight 4 bits per weight, an f16 scale and a packed 4-bit zero point per
    // group of 128 inputs (vLLM awq.py / gptq.py: scales and qzeros per group); embeddings, lm_head, norms and the
    // MoE router stay in the model dtype (not Linear layers the methods replace). GPTQ's g_idx (int32 per input
    // channel, about 0.03 bits per weight) is not counted.
    q.method = w == "int4" ? "override" : w;
    q.linear_bits = group_quant_bits(4, 128, 16, 4);
    q.detail = (w == "int4" ? std::string("int4") : w) + " g128: 4 + (f16 scale + 4-bit zero) / 128 = 4.15625 bits";
  } else if (w == "fp8" || w == "int8") {
    q.linear_bits = 8;
    q.detail = w + " (per-channel scales not counted)";
  } else if (w == "fp8_block" || w == "fp8-block") {
    // DeepSeek-V3 style (config weight_block_size [128, 128]; vLLM fp8.py block quantization): e4m3 weights and
    // an f32 scale per 128 x 128 block
    q.method = "fp8";
    q.linear_bits = 8.0 + 32.0 / (128.0 * 128.0);
    q.detail = "fp8 e4m3, f32 scale per 128x128 block: 8 + 32 / 16384 bits";
  } else if (w == "nvfp4") {
    // NVIDIA NVFP4 as ModelOpt and compressed-tensors store it and vLLM loads it (modelopt.py ModelOptNvFp4Config,
    // compressed_tensors_w4a4_nvfp4.py): e2m1 weights, an fp8 e4m3 scale per 16, and per module an fp32
    // weight_scale_2 and input_scale; lm_head, embeddings, norms and the router are left unquantized
    set_nvfp4(q);
  } else if (w == "mxfp4") {
    // OCP MX fp4 as gpt-oss ships it: e2m1 weights and an e8m0 scale per 32 (4.25 bits) on the routed experts;
    // vLLM's Mxfp4Config (mxfp4.py) quantizes FusedMoE layers only, so attention, shared experts, embeddings and
    // lm_head stay in the model dtype
    if (!has_moe(m))
      throw InputError(where, "mxfp4 packs MoE experts only (vLLM's Mxfp4Config) and this model has none",
                       "use nvfp4, or pure:mxfp4 for a llama.cpp file");
    q.method = "mxfp4";
    q.linear_bits = 4.0 + 8.0 / 32.0;
    q.attention_quantised = false;
    q.experts_only = true;
    q.detail = "mxfp4: e2m1 + e8m0 scale per 32 = 4.25 bits, routed experts only";
  } else if (const auto r = parse_gguf_recipe(w)) {
    // llama-quantize: every tensor's type from its recipe (core/gguf_recipe.cpp); norms, biases and the router f32
    q.method = "gguf";
    q.gguf_recipe = w;
    const FormatInfo& fi = format_info(r->base);
    q.linear_bits = 8.0 * static_cast<double>(fi.block_bytes) / static_cast<double>(fi.block_elems);
    q.vector_bits = 32;
    q.detail = recipe_detail(*r, m, where);
  } else if (const auto f = parse_format(w); f && format_info(*f).block_elems == 1 && format_info(*f).block_bytes >= 2) {
    m.dtype = *f;
    q = WeightQuant{};
  } else {
    throw InputError(where, "unknown weight format '" + format + "'", "use " + weight_format_names());
  }
  m.quant = q;
  m.forget_file_weights();  // the format given replaces what a weights file holds
}

}  // namespace kvplan
