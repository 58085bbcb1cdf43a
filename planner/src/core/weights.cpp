// Parameter counting per component (formulas inline, HF modeling_*.py module shapes) and weight bytes.
#include "kvplan/core/weights.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "kvplan/core/gguf_recipe.hpp"

namespace kvplan {

namespace {

constexpr i64 kAllLayers = -2;  // gguf_part_bytes: tensors of every layer

struct Acc {
  ParamPart embedding{"embedding"}, positions{"position_embedding"}, lm_head{"lm_head"},
      attention{"attention", 0, 0, true}, mamba{"mamba", 0, 0, true}, mlp{"mlp", 0, 0, true},
      routed{"routed_experts", 0, 0, true}, shared{"shared_experts", 0, 0, true}, router{"router"},
      norms{"norms"}, vision{"vision"}, ple_table{"per_layer_embedding"}, side{"per_layer_inputs", 0, 0, true};
  i64 inactive = 0;  // routed-expert parameters a token does not touch
};

i64 norm_size(const ModelSpec& m, i64 width) { return m.norm == NormKind::layer ? mul(2, width) : width; }

// q: hidden x (q_heads*k_hd); k: hidden x (kv*k_hd); v: hidden x (kv*v_hd); o: (q_heads*v_hd) x hidden.
// k and v only as far as the layer has them (kv_projections: Gemma 4's k = v and KV-sharing layers).
void attention_params(const ModelSpec& m, const Layer& l, Acc& a) {
  const i64 h = m.hidden;
  const i64 q = mul(l.q_heads, l.k_head_dim), k = l.kv_projections > 0 ? mul(l.kv_heads, l.k_head_dim) : 0,
            v = l.kv_projections > 1 ? mul(l.kv_heads, l.v_head_dim) : 0;
  const i64 o = mul(l.q_heads, l.v_head_dim);
  const i64 q_out = l.q_gate ? mul(2, q) : q;
  a.attention.matrix = add(a.attention.matrix, mul(h, add(add(q_out, k), add(v, o))), "attention params");
  if (l.qkv_bias) a.attention.vector = add(a.attention.vector, add(add(q, k), v));
  if (l.o_bias) a.attention.vector = add(a.attention.vector, h);
  if (l.qk_norm)  // per head: q_norm, and k_norm where the layer projects k
    a.attention.vector = add(a.attention.vector, l.qk_norm_whole ? add(q, k) : mul(l.kv_projections > 0 ? 2 : 1, l.k_head_dim));
  if (l.attn_sinks) a.attention.vector = add(a.attention.vector, l.q_heads);
}

// DeepSeek MLA: q = q_lora ? (hidden x q_lora, norm q_lora, q_lora x H*(nope+rope)) : hidden x H*(nope+rope);
// kv_a = hidden x (kv_lora + rope); kv_a_norm = kv_lora; kv_b = kv_lora x H*(nope + v); o = H*v x hidden.
void mla_params(const ModelSpec& m, const Layer& l, Acc& a) {
  const i64 h = m.hidden;
  const i64 qk = add(l.qk_nope_head_dim, l.qk_rope_head_dim);
  i64 mat = 0, vec = 0;
  if (l.q_lora_rank > 0) {
    mat = add(mul(h, l.q_lora_rank), mul(l.q_lora_rank, mul(l.q_heads, qk)));
    vec = l.q_lora_rank;
  } else {
    mat = mul(h, mul(l.q_heads, qk));
  }
  mat = add(mat, mul(h, add(l.kv_lora_rank, l.qk_rope_head_dim)));
  vec = add(vec, l.kv_lora_rank);
  mat = add(mat, mul(l.kv_lora_rank, mul(l.q_heads, add(l.qk_nope_head_dim, l.v_head_dim))));
  mat = add(mat, mul(mul(l.q_heads, l.v_head_dim), h));
  if (l.indexer_head_dim > 0) {
    // DeepSeek-V3.2 lightning indexer (vLLM deepseek_v2.py Indexer): wq_b q_lora_rank x (index_n_heads x
    // index_head_dim), wk hidden x index_head_dim, weights_proj hidden x index_n_heads, k_norm LayerNorm (weight + bias)
    const i64 q_in = l.q_lora_rank > 0 ? l.q_lora_rank : h;
    mat = add(mat, add(mul(q_in, mul(l.indexer_heads, l.indexer_head_dim)), add(mul(h, l.indexer_head_dim), mul(h, l.indexer_heads))));
    vec = add(vec, mul(2, l.indexer_head_dim));
  }
  a.attention.matrix = add(a.attention.matrix, mat);
  a.attention.vector = add(a.attention.vector, vec);
}

// Mamba (HF MambaMixer): in_proj hidden x 2*d_inner; conv1d d_inner x d_conv (+ d_inner bias);
// x_proj d_inner x (dt_rank + 2*d_state); dt_proj dt_rank x d_inner + d_inner bias; A_log d_inner x d_state;
// D d_inner; out_proj d_inner x hidden. Jamba adds dt/B/C RMSNorms (dt_rank + 2*d_state).
void mamba1_params(const ModelSpec& m, const Layer& l, Acc& a) {
  const i64 h = m.hidden, di = l.d_inner;
  i64 mat = mul(h, mul(2, di));
  mat = add(mat, mul(di, add(l.dt_rank, mul(2, l.d_state))));
  mat = add(mat, mul(l.dt_rank, di));
  mat = add(mat, mul(di, h));
  i64 vec = mul(di, l.d_conv);  // conv weights are depthwise: kept with vectors (not packed)
  if (l.conv_bias) vec = add(vec, di);
  vec = add(vec, di);                   // dt_proj bias
  vec = add(vec, mul(di, l.d_state));   // A_log
  vec = add(vec, di);                   // D
  if (l.proj_bias) vec = add(vec, add(mul(2, di), h));
  if (l.mamba_inner_norms) vec = add(vec, add(l.dt_rank, mul(2, l.d_state)));
  a.mamba.matrix = add(a.mamba.matrix, mat);
  a.mamba.vector = add(a.mamba.vector, vec);
}

// Mamba2 (HF Mamba2Mixer): conv_dim = d_inner + 2*n_groups*d_state;
// in_proj hidden x (d_inner + conv_dim + heads); conv1d conv_dim x d_conv (+ conv_dim);
// dt_bias, A_log, D: heads each; gated norm d_inner (Falcon-H1: only with mamba_rms_norm); out_proj d_inner x hidden.
void mamba2_params(const ModelSpec& m, const Layer& l, Acc& a) {
  const i64 h = m.hidden, di = l.d_inner;
  const i64 conv_dim = add(di, mul(2, mul(l.n_groups, l.d_state)));
  const i64 proj = add(add(di, conv_dim), l.ssm_heads);
  i64 mat = add(mul(h, proj), mul(di, h));
  i64 vec = mul(conv_dim, l.d_conv);
  if (l.conv_bias) vec = add(vec, conv_dim);
  vec = add(vec, mul(3, l.ssm_heads));
  if (l.mamba_gated_norm) vec = add(vec, di);
  if (l.proj_bias) vec = add(vec, add(proj, h));
  a.mamba.matrix = add(a.mamba.matrix, mat);
  a.mamba.vector = add(a.mamba.vector, vec);
}

// Gated DeltaNet (HF Qwen3NextGatedDeltaNet): key_dim = k_heads*k_dim, value_dim = v_heads*v_dim;
// in_proj_qkvz hidden x (2*key_dim + 2*value_dim); in_proj_ba hidden x 2*v_heads; depthwise conv1d
// (2*key_dim + value_dim) x d_conv, no bias; dt_bias and A_log v_heads each; gated norm v_dim;
// out_proj value_dim x hidden.
void deltanet_params(const ModelSpec& m, const Layer& l, Acc& a) {
  const i64 h = m.hidden;
  const i64 kd = mul(l.lin_k_heads, l.lin_k_dim), vd = mul(l.lin_v_heads, l.lin_v_dim);
  i64 mat = mul(h, add(mul(2, kd), mul(2, vd)));
  mat = add(mat, mul(h, mul(2, l.lin_v_heads)));
  mat = add(mat, mul(vd, h));
  i64 vec = mul(add(mul(2, kd), vd), l.d_conv);
  vec = add(vec, add(mul(2, l.lin_v_heads), l.lin_v_dim));
  a.mamba.matrix = add(a.mamba.matrix, mat);
  a.mamba.vector = add(a.mamba.vector, vec);
}

// LFM2 short convolution (HF Lfm2ShortConv, vLLM layers/mamba/short_conv.py): in_proj hidden x 3*D (B, C, x),
// depthwise conv1d D x L_cache, out_proj D x hidden; with conv_bias each of the three carries a bias.
void short_conv_params(const ModelSpec& m, const Layer& l, Acc& a) {
  const i64 h = m.hidden, d = l.d_inner;
  a.mamba.matrix = add(a.mamba.matrix, add(mul(h, mul(3, d)), mul(d, h)), "short conv params");
  i64 vec = mul(d, l.d_conv);
  if (l.conv_bias) vec = add(vec, add(mul(4, d), h));
  a.mamba.vector = add(a.mamba.vector, vec);
}

// gated: gate, up (hidden x I) and down (I x hidden) = 3*hidden*I; plain: up and down = 2*hidden*I.
i64 ffn_matrix(i64 hidden, i64 inter, bool gated) { return mul(mul(gated ? 3 : 2, hidden), inter, "MLP params"); }
i64 ffn_bias(i64 hidden, i64 inter, bool gated) { return add(mul(gated ? 2 : 1, inter), hidden); }

void mlp_params(const ModelSpec& m, const Layer& l, Acc& a) {
  const i64 h = m.hidden;
  switch (l.mlp) {
    case MlpKind::none: return;
    case MlpKind::gated:
    case MlpKind::plain: {
      const bool g = l.mlp == MlpKind::gated;
      a.mlp.matrix = add(a.mlp.matrix, ffn_matrix(h, l.intermediate, g));
      if (l.mlp_bias) a.mlp.vector = add(a.mlp.vector, ffn_bias(h, l.intermediate, g));
      return;
    }
    case MlpKind::moe: {
      // each routed expert is a gated MLP of width expert_intermediate; router hidden x experts.
      const i64 per_expert_mat = ffn_matrix(h, l.expert_intermediate, true);
      const i64 per_expert_vec = l.expert_bias ? ffn_bias(h, l.expert_intermediate, true) : 0;
      a.routed.matrix = add(a.routed.matrix, mul(l.experts, per_expert_mat, "routed expert params"));
      a.routed.vector = add(a.routed.vector, mul(l.experts, per_expert_vec));
      a.inactive = add(a.inactive, mul(l.experts - l.experts_active, add(per_expert_mat, per_expert_vec)));
      a.router.matrix = add(a.router.matrix, mul(h, l.experts));
      if (l.router_bias || l.router_score_bias) a.router.vector = add(a.router.vector, l.experts);
      if (l.shared_intermediate > 0)
        a.shared.matrix = add(a.shared.matrix, ffn_matrix(h, l.shared_intermediate, true));
      if (l.shared_expert_gate) a.shared.matrix = add(a.shared.matrix, h);
      return;
    }
  }
}

}  // namespace

i64 expert_params(const ModelSpec& m, const Layer& l) {
  if (l.mlp != MlpKind::moe) return 0;
  Acc a;
  mlp_params(m, l, a);
  return a.routed.total();
}

ParamCount count_params(const ModelSpec& m) {
  Acc a;
  if (m.has_embedding) {
    a.embedding.matrix = mul(m.vocab, m.hidden, "embedding params");
    a.positions.matrix = mul(m.learned_positions, m.hidden, "position embedding params");
  }
  // a tied lm_head shares the embedding matrix, unless the embedding lives on another pipeline stage
  if (m.has_lm_head && (!m.tied_embeddings || !m.has_embedding)) a.lm_head.matrix = mul(m.vocab, m.hidden, "lm_head params");
  if (m.has_lm_head && m.lm_head_bias) a.lm_head.vector = m.vocab;
  for (const Layer& l : m.layers) {
    switch (l.mixer) {
      case Mixer::attention: attention_params(m, l, a); break;
      case Mixer::mla: mla_params(m, l, a); break;
      case Mixer::mamba1: mamba1_params(m, l, a); break;
      case Mixer::mamba2: mamba2_params(m, l, a); break;
      case Mixer::gated_deltanet: deltanet_params(m, l, a); break;
      case Mixer::short_conv: short_conv_params(m, l, a); break;
      case Mixer::none: break;
    }
    mlp_params(m, l, a);
    a.norms.vector = add(a.norms.vector, mul(l.norms, norm_size(m, m.hidden)));
    a.side.matrix = add(a.side.matrix, l.side_matrix, "per-layer input params");
    a.side.vector = add(a.side.vector, l.side_vector, "per-layer input params");
  }
  if (m.has_embedding) {  // Gemma 3n / 4 per-layer embeddings: the table and its model-level projections
    a.ple_table.matrix = m.ple_table;
    a.side.matrix = add(a.side.matrix, m.ple_matrix, "per-layer input params");
    a.side.vector = add(a.side.vector, m.ple_vector, "per-layer input params");
  }
  if (m.final_norm && m.has_lm_head) a.norms.vector = add(a.norms.vector, norm_size(m, m.hidden));
  a.vision.matrix = m.vision.params;

  ParamCount p;
  p.parts = {a.embedding, a.positions, a.lm_head, a.attention, a.mamba, a.mlp, a.routed, a.shared, a.router, a.norms, a.vision};
  // parts only Gemma 3n / 4 have: listed when present, so other models' breakdowns keep their shape
  for (const ParamPart* part : {&a.ple_table, &a.side})
    if (part->total() > 0) p.parts.push_back(*part);
  for (const auto& part : p.parts) {
    p.total = add(p.total, part.total(), "total params");
    if (part.name != "vision") p.text_total = add(p.text_total, part.total(), "text params");
  }
  // a token reads one row of Gemma's per-layer embedding table, as of the token embedding: the table is not active
  p.active = sub(sub(p.total, a.inactive), a.ple_table.total());
  return p;
}

double group_quant_bits(int bits, i64 group, int scale_bits, int zero_bits) {
  if (group <= 0) return bits;  // per-channel: scales are negligible per weight
  return bits + static_cast<double>(scale_bits + zero_bits) / static_cast<double>(group);
}

bool part_packed(const WeightQuant& q, const ParamPart& part) {
  return q.linear_bits > 0 && part.quantisable && (part.name != "attention" || q.attention_quantised) &&
         (!q.experts_only || part.name == "routed_experts");
}

namespace {

i64 at_bits(i64 n, double bits, const std::string& what) {
  const long double b = std::ceil(static_cast<long double>(n) * bits / 8.0L);
  if (b > 9.2e18L) throw OverflowError("weight bytes of " + what + " overflow 64-bit bytes");
  return static_cast<i64>(b);
}

// A GGUF file as llama-quantize makes it (core/gguf_recipe.hpp): each listed tensor at the type its recipe gives,
// rows x slices x row_bytes(type, cols); matrices the listing does not name (SSM mixers) at the base type; the
// router and learned positions f32 and 1-D tensors f32, as convert_hf_to_gguf.py writes them and llama-quantize
// leaves them; the vision tower (a separate mmproj file) at the model dtype.
i64 gguf_part_bytes(const ModelSpec& m, const ParamPart& part, const GgufRecipe& r, const std::vector<GgufTensor>& ts, i64 layer) {
  const i64 vec = mul(part.vector, 4, "weight bytes");
  if (part.name == "router" || part.name == "position_embedding" || part.name == "norms")
    return add(mul(part.matrix, 4, "weight bytes"), vec, "weight bytes");
  if (part.name == "vision") return add(mul(part.matrix, format_info(m.dtype).block_bytes, "weight bytes"), vec, "weight bytes");
  i64 bytes = 0, elems = 0;
  for (const auto& t : ts) {
    if (t.part != part.name || (layer != kAllLayers && t.layer != layer)) continue;
    bytes = add(bytes, gguf_tensor_bytes(t), "weight bytes");
    elems = add(elems, mul(mul(t.cols, t.rows), t.slices), "weight elements");
  }
  if (part.matrix > elems) {
    const FormatInfo& base = format_info(r.base);
    bytes = add(bytes, ceil_div(mul(part.matrix - elems, base.block_bytes, "weight bytes"), base.block_elems), "weight bytes");
  }
  return add(bytes, vec, "weight bytes");
}

GgufRecipe recipe_of(const ModelSpec& m) {
  const auto r = parse_gguf_recipe(m.quant.gguf_recipe);
  if (!r) throw InputError("weight_format", "unknown llama-quantize type '" + m.quant.gguf_recipe + "'");
  return *r;
}

// fp32 scalars a format keeps per linear module (nvfp4: weight_scale_2 and input_scale, 8 B): modules of `part`
// counted from the GGUF tensor listing, each routed expert its own module
i64 per_module_bytes(const ModelSpec& m, const ParamPart& part) {
  if (m.quant.per_module_bytes <= 0) return 0;
  i64 modules = 0;
  for (const auto& t : gguf_tensors(m))
    if (t.part == part.name && t.role != TensorRole::token_embd && t.role != TensorRole::output) modules = add(modules, t.slices);
  return mul(modules, m.quant.per_module_bytes, "per-module scale bytes");
}

}  // namespace

i64 part_weight_bytes(const ModelSpec& m, const ParamPart& part) {
  if (!m.quant.gguf_recipe.empty()) {
    const GgufRecipe r = recipe_of(m);
    return gguf_part_bytes(m, part, r, gguf_typed_tensors(r, m), kAllLayers);
  }
  const i64 elem = format_info(m.dtype).block_bytes;
  const bool packed = part_packed(m.quant, part);
  i64 mat_bytes;
  if (packed) mat_bytes = add(at_bits(part.matrix, m.quant.linear_bits, part.name), per_module_bytes(m, part), "weight bytes");
  else if (part.name == "embedding" && m.quant.embedding_bits > 0) mat_bytes = at_bits(part.matrix, m.quant.embedding_bits, part.name);
  else if (part.name == "lm_head" && m.quant.lm_head_bits > 0) mat_bytes = at_bits(part.matrix, m.quant.lm_head_bits, part.name);
  else mat_bytes = mul(part.matrix, elem, "weight bytes");
  const i64 vec_bytes = m.quant.vector_bits > 0 ? at_bits(part.vector, m.quant.vector_bits, part.name) : mul(part.vector, elem);
  return add(mat_bytes, vec_bytes, "weight bytes");
}

WeightBytes weight_bytes(const ModelSpec& m, const ParamCount& p) {
  const i64 elem = format_info(m.dtype).block_bytes;
  WeightBytes w;
  if (m.exact_weight_bytes) {
    // a weights file's tensor table: exact for the whole model; a rank's share is its parameters at
    // the file's average bytes per parameter
    if (!m.sharded || !m.exact_params || *m.exact_params <= 0) {
      w.total = *m.exact_weight_bytes;
      w.basis = m.exact_weight_basis.empty() ? "tensor table of the weights file (exact)" : m.exact_weight_basis;
    } else {
      w.total = static_cast<i64>(std::ceil(static_cast<long double>(*m.exact_weight_bytes) * p.total / *m.exact_params));
      w.basis = "this rank's parameters at the weights file's average bytes per parameter";
    }
    return w;
  }
  const bool quant = m.quant.linear_bits > 0;
  for (const auto& part : p.parts) w.total = add(w.total, part_weight_bytes(m, part), "weight bytes");
  const std::string dt = std::string(format_info(m.dtype).name) + " (" + std::to_string(elem) + " B/param)";
  if (m.quant.method == "gguf") {
    w.basis = "llama-quantize " + m.quant.detail;
    return w;
  }
  w.basis = quant ? m.quant.method + " " + m.quant.detail + " on linear layers" +
                        (m.quant.attention_quantised ? "" : " except attention") + ", " + dt + " elsewhere"
                  : dt;
  return w;
}

LayerWeights layer_weight_bytes(const ModelSpec& m) {
  // by llama.cpp layer: a decoder block's entries (Falcon-H1's attention and Mamba2 halves) sum into one
  const i64 n = static_cast<i64>(m.layers.size());
  const std::vector<i64> block_of = decoder_block_of(m.layers);
  const i64 blocks = decoder_layers(m.layers);
  LayerWeights w;
  w.blocks.assign(static_cast<size_t>(blocks), 0);
  w.experts.assign(static_cast<size_t>(blocks), 0);
  if (static_cast<i64>(m.exact_layer_bytes.size()) == blocks + 2 && static_cast<i64>(m.exact_expert_bytes.size()) == blocks) {
    w.input = m.exact_layer_bytes.front();
    for (i64 i = 0; i < blocks; ++i) w.blocks[static_cast<size_t>(i)] = m.exact_layer_bytes[static_cast<size_t>(i + 1)];
    w.experts = m.exact_expert_bytes;
    // a tied head is token_embd loaded again where the output layer runs (TENSOR_DUPLICATED)
    w.output_copy = m.tied_embeddings ? m.exact_embedding_bytes : 0;
    w.output = add(m.exact_layer_bytes.back(), w.output_copy, "tensor bytes");
    w.basis = "GGUF tensor table by layer";
    return w;
  }
  const bool gguf = !m.quant.gguf_recipe.empty();
  std::optional<GgufRecipe> recipe;
  // the recipe's tensor listing bucketed by layer (bucket 0: no layer, i + 1: block i), so pricing every block
  // scans the listing once rather than once per block
  std::vector<std::vector<GgufTensor>> by_layer(static_cast<size_t>(n + 1));
  if (gguf) {
    recipe = recipe_of(m);
    for (auto& t : gguf_typed_tensors(*recipe, m))
      if (t.layer >= -1 && t.layer < n) by_layer[static_cast<size_t>(t.layer + 1)].push_back(std::move(t));
  }
  // a part as the whole model's weight_bytes prices it; `layer` picks one block's tensors from the recipe's listing
  auto price = [&](const ModelSpec& s, const ParamPart& part, i64 layer) {
    return gguf ? gguf_part_bytes(m, part, *recipe, by_layer[static_cast<size_t>(layer + 1)], layer) : part_weight_bytes(s, part);
  };
  const ParamCount pc = count_params(m);
  auto part_of = [&](const char* name) {
    for (const auto& p : pc.parts)
      if (p.name == name) return p;
    return ParamPart{name};
  };
  const ParamPart embedding = part_of("embedding");
  w.input = add(price(m, embedding, -1), price(m, part_of("position_embedding"), -1), "weight bytes");
  // Gemma's per-layer embedding table is an input-layer tensor too (per_layer_token_embd, LLM_TENSOR_LAYER_INPUT);
  // per_layer_model_proj and per_layer_proj_norm, outside the blocks, go with the output layer as the GGUF table has it
  w.input = add(w.input, price(m, part_of("per_layer_embedding"), -1), "weight bytes");
  ParamPart ple_model{"per_layer_inputs", m.has_embedding ? m.ple_matrix : 0, m.has_embedding ? m.ple_vector : 0, true};
  // the head: a tied one is the embedding again; the final norm at the vectors' width (f32 in a GGUF)
  const i64 head = m.tied_embeddings ? price(m, embedding, -1) : price(m, part_of("lm_head"), -1);
  ParamPart final_norm{"norms"};
  if (m.final_norm && m.has_lm_head) final_norm.vector = norm_size(m, m.hidden);  // as count_params counts it
  const i64 norm = add(price(m, final_norm, -1), price(m, ple_model, -1), "weight bytes");
  w.output = add(head, norm, "weight bytes");
  if (m.tied_embeddings) w.output_copy = head;
  i64 sum = add(w.input, m.tied_embeddings ? norm : w.output, "weight bytes");
  for (i64 i = 0; i < n; ++i) {
    ModelSpec one = m;  // block i alone: no embedding, head, final norm or vision tower
    one.layers = {m.layers[static_cast<size_t>(i)]};
    one.has_embedding = false;
    one.has_lm_head = false;
    one.final_norm = false;
    one.vision = VisionTower{};
    const size_t k = static_cast<size_t>(block_of[static_cast<size_t>(i)]);
    for (const auto& part : count_params(one).parts) {
      const i64 x = price(one, part, i);
      w.blocks[k] = add(w.blocks[k], x, "weight bytes");
      sum = add(sum, x, "weight bytes");
      if (part.name == "routed_experts") w.experts[k] = add(w.experts[k], x, "weight bytes");
    }
  }
  w.basis = gguf ? "each layer its own tensors at the recipe's types" : "each layer its own parameters";
  // a weights file's exact total without a per-layer table (a safetensors snapshot, its MTP layers already left
  // out): every layer scaled by the file's total / the computed one, the vision tower counted in both
  const i64 vision = price(m, part_of("vision"), -1);
  const i64 file = m.exact_weight_bytes.value_or(0);
  if (m.exact_weight_bytes && sum > 0 && file != add(sum, vision, "weight bytes")) {
    const long double f = static_cast<long double>(file) / static_cast<long double>(add(sum, vision, "weight bytes"));
    auto scale = [&](i64 x) { return static_cast<i64>(std::llround(static_cast<long double>(x) * f)); };
    w.input = scale(w.input);
    w.output = scale(w.output);
    w.output_copy = scale(w.output_copy);
    for (auto& b : w.blocks) b = scale(b);
    for (auto& x : w.experts) x = scale(x);
    w.basis += ", scaled to the weights file's total";
  }
  return w;
}

}  // namespace kvplan
