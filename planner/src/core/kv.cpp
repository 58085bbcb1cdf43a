// KV-cache byte arithmetic (formulas in kv.hpp; engines.md "Per-token bytes").
#include "kvplan/core/kv.hpp"

#include <algorithm>

namespace kvplan {

const char* kv_kind_name(KvKind k) {
  switch (k) {
    case KvKind::full: return "full";
    case KvKind::sliding: return "sliding";
    case KvKind::chunked: return "chunked";
    case KvKind::mla_latent: return "mla_latent";
    case KvKind::mla_expanded: return "mla_expanded";
    case KvKind::cross: return "cross";
    case KvKind::ssm: return "ssm";
    case KvKind::none: return "none";
  }
  return "?";
}

namespace {
bool stores_kv(KvKind k) { return k != KvKind::ssm && k != KvKind::none; }
}  // namespace

i64 layer_indexer_key_bytes(const Layer& l) {
  if (l.kv != KvKind::mla_latent || l.indexer_head_dim <= 0) return 0;
  // fp8 values and an fp32 scale per 128 (vLLM deepseek_v2.py Indexer: head_dim + head_dim // quant_block_size * 4,
  // uint8; SGLang NSATokenToKVPool index_k_with_scale_buffer; TensorRT-LLM DSACacheManager indexer K cache)
  return add(l.indexer_head_dim, mul(l.indexer_head_dim / 128, 4, "indexer scales"), "indexer key bytes");
}

i64 mla_fp8_record_bytes(const Layer& l) {
  return add(add(l.kv_lora_rank, mul(l.kv_lora_rank / 128, 4, "latent scales"), "fp8 latent record"),
             mul(l.qk_rope_head_dim, 2, "rope part"), "fp8 latent record");
}

i64 layer_indexer_bytes_per_token(const Layer& l) {
  if (!l.indexer_priced) return 0;
  if (l.indexer_record_bytes > 0 && layer_indexer_key_bytes(l) > 0) return l.indexer_record_bytes;
  return layer_indexer_key_bytes(l);
}

i64 layer_k_bytes_per_token(const Layer& l, ElemFormat f) {
  if (!stores_kv(l.kv)) return 0;
  if (l.kv == KvKind::mla_latent) {
    const i64 latent = l.mla_record_bytes > 0
                           ? l.mla_record_bytes
                           : row_bytes(f, add(l.kv_lora_rank, l.qk_rope_head_dim), "MLA latent row (kv_lora_rank + qk_rope_head_dim)");
    return add(latent, layer_indexer_bytes_per_token(l), "MLA latent + indexer key bytes");
  }
  return mul(l.kv_heads, row_bytes(f, l.k_head_dim, "K head row (head_dim)"), "K bytes per token");
}

i64 layer_v_bytes_per_token(const Layer& l, ElemFormat f) {
  if (!stores_kv(l.kv) || l.kv == KvKind::mla_latent) return 0;
  return mul(l.kv_heads, row_bytes(f, l.v_head_dim, "V head row (v_head_dim)"), "V bytes per token");
}

namespace {
// the K / V format of a layer kept in the model dtype (kept) or not
ElemFormat k_of(bool kept, const KvOptions& o) { return kept ? o.skip_format : o.k_format; }
ElemFormat v_of(bool kept, const KvOptions& o) { return kept ? o.skip_format : o.v_format; }
ElemFormat k_of(const Layer& l, const KvOptions& o) { return k_of(l.kv_model_dtype, o); }
ElemFormat v_of(const Layer& l, const KvOptions& o) { return v_of(l.kv_model_dtype, o); }
}  // namespace

i64 layer_k_bytes_per_token(const Layer& l, const KvOptions& o) { return layer_k_bytes_per_token(l, k_of(l, o)); }

i64 layer_v_bytes_per_token(const Layer& l, const KvOptions& o) {
  const i64 v = layer_v_bytes_per_token(l, v_of(l, o));
  if (v == 0) return 0;
  // TurboQuant pads each head's K + V slot to an even size (TurboQuantConfig.slot_size_aligned): counted with V
  const i64 k_row = row_bytes(k_of(l, o), l.k_head_dim, "K head row (head_dim)");
  const i64 v_row = row_bytes(v_of(l, o), l.v_head_dim, "V head row (v_head_dim)");
  return add(v, mul(l.kv_heads, tq_slot_pad(k_of(l, o), v_of(l, o), k_row, v_row)), "V bytes per token");
}

std::vector<i64> turboquant_boundary_layers(const ModelSpec& m) {
  if (std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.kv == KvKind::ssm; })) return {};
  const i64 L = static_cast<i64>(m.layers.size());
  std::vector<i64> out;
  for (i64 i = 0; i < L; ++i)
    if (i < std::min<i64>(2, L / 2) || i >= L - std::min<i64>(2, L / 2)) out.push_back(i);
  return out;
}

i64 layer_tokens_held(const Layer& l, i64 context, i64 encoder_tokens) {
  switch (l.kv) {
    case KvKind::full:
    case KvKind::mla_latent:
    case KvKind::mla_expanded: return context;
    case KvKind::sliding:
    case KvKind::chunked: return std::min(context, l.window);
    case KvKind::cross: return encoder_tokens;
    case KvKind::ssm:
    case KvKind::none: return 0;
  }
  return 0;
}

i64 layer_state_bytes(const Layer& l, ElemFormat f) {
  if (l.kv != KvKind::ssm) return 0;
  return add(row_bytes(f, l.conv_state_elems, "conv state"), row_bytes(f, l.ssm_state_elems, "ssm state"),
             "recurrent state bytes");
}

namespace {

bool same_geometry(const KvGroup& g, const Layer& l) {
  return g.kind == l.kv && g.kv_heads == l.kv_heads && g.k_head_dim == l.k_head_dim &&
         g.v_head_dim == l.v_head_dim && g.window == l.window && g.model_dtype == l.kv_model_dtype;
}

std::string bytes_word(ElemFormat f) {
  const auto& fi = format_info(f);
  if (fi.row_bits > 0)
    return std::to_string(fi.row_bits) + " bits" + (fi.row_extra > 0 ? " + " + std::to_string(fi.row_extra) + " B a row" : "") +
           " (" + std::string(fi.name) + ")";
  if (fi.block_elems == 1) return std::to_string(fi.block_bytes) + " B (" + std::string(fi.name) + ")";
  return std::to_string(fi.block_bytes) + "/" + std::to_string(fi.block_elems) + " B (" + std::string(fi.name) + ")";
}

// One group's derivation: the bytes of one layer, then times the group's layers ("... = 4096 B/token/layer, x 32
// layers = 131072 B/token").
std::string describe(const KvGroup& g, const KvOptions& o) {
  const i64 layers = static_cast<i64>(g.layer_indices.size());
  const auto times_layers = [&](i64 per_layer, const char* unit) {
    return ", x " + std::to_string(layers) + " layers = " + std::to_string(mul(per_layer, layers, "KV bytes")) + " " + unit;
  };
  switch (g.kind) {
    case KvKind::mla_latent: {
      std::string latent = g.record_bytes > 0 ? std::to_string(g.record_bytes) + " B record (fp8_ds_mla)"
                                              : "(" + std::to_string(g.k_elems_per_token) + " latent elems x " + bytes_word(o.k_format) + ")";
      if (g.indexer_bytes > 0) latent += " + " + std::to_string(g.indexer_bytes) + " B indexer key (fp8 + fp32 scale per 128)";
      return latent + " = " + std::to_string(g.k_bytes_per_token) + " B/token/layer" + times_layers(g.k_bytes_per_token, "B/token");
    }
    case KvKind::ssm:
      return "state " + std::to_string(g.state_bytes_per_layer) + " B/sequence/layer (" + std::string(format_info(o.state_format).name) + ")" +
             times_layers(g.state_bytes_per_layer, "B/sequence");
    case KvKind::none:
      return "no cache (" + std::to_string(layers) + " layers)";
    default: {
      const ElemFormat k = k_of(g.model_dtype, o), v = v_of(g.model_dtype, o);
      const i64 per_layer = g.k_bytes_per_token + g.v_bytes_per_token;
      std::string s = std::to_string(g.kv_heads) + " kv_heads x (K " + std::to_string(g.k_head_dim) + " x " +
                      bytes_word(k) + " + V " + std::to_string(g.v_head_dim) + " x " + bytes_word(v) +
                      (is_turboquant(k) && is_turboquant(v) ? ", the slot rounded up to even" : "") + ") = " +
                      std::to_string(per_layer) + " B/token/layer" + times_layers(per_layer, "B/token");
      if (g.model_dtype) s += ", kept in the model dtype";
      if (g.kind == KvKind::sliding) s += ", window " + std::to_string(g.window);
      if (g.kind == KvKind::chunked) s += ", chunk " + std::to_string(g.window);
      if (g.kind == KvKind::cross) s += ", encoder tokens only";
      return s;
    }
  }
}

}  // namespace

KvResult compute_kv(const ModelSpec& m, const KvOptions& o) {
  if (o.context < 0) throw InputError("--context", "must be >= 0");
  if (o.encoder_tokens < 0) throw InputError("--encoder-tokens", "must be >= 0");
  KvResult r;
  r.context = o.context;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    auto it = std::find_if(r.groups.begin(), r.groups.end(), [&](const KvGroup& g) { return same_geometry(g, l); });
    if (it == r.groups.end()) {
      KvGroup g;
      g.kind = l.kv;
      g.kv_heads = l.kv_heads;
      g.k_head_dim = l.k_head_dim;
      g.v_head_dim = l.v_head_dim;
      g.window = l.window;
      g.model_dtype = l.kv_model_dtype;
      g.k_bytes_per_token = layer_k_bytes_per_token(l, o);
      g.v_bytes_per_token = layer_v_bytes_per_token(l, o);
      if (l.kv == KvKind::mla_latent) {
        g.k_elems_per_token = l.kv_lora_rank + l.qk_rope_head_dim;
        g.record_bytes = l.mla_record_bytes;
        g.indexer_bytes = layer_indexer_bytes_per_token(l);
      } else if (stores_kv(l.kv)) {
        g.k_elems_per_token = mul(l.kv_heads, l.k_head_dim);
        g.v_elems_per_token = mul(l.kv_heads, l.v_head_dim);
      }
      g.tokens_held = layer_tokens_held(l, o.context, o.encoder_tokens);
      g.state_bytes_per_layer = layer_state_bytes(l, o.state_format);
      r.groups.push_back(g);
      it = r.groups.end() - 1;
    }
    it->layer_indices.push_back(static_cast<i64>(i));
  }
  for (auto& g : r.groups) {
    const i64 n = static_cast<i64>(g.layer_indices.size());
    g.k_bytes = mul(mul(g.k_bytes_per_token, g.tokens_held, "K bytes per layer"), n, "K bytes of group");
    g.v_bytes = mul(mul(g.v_bytes_per_token, g.tokens_held, "V bytes per layer"), n, "V bytes of group");
    g.state_bytes = mul(g.state_bytes_per_layer, n, "state bytes of group");
    g.formula = describe(g, o);
    r.k_bytes = add(r.k_bytes, g.k_bytes, "sequence K bytes");
    r.v_bytes = add(r.v_bytes, g.v_bytes, "sequence V bytes");
    r.state_bytes = add(r.state_bytes, g.state_bytes, "state bytes");
    if (g.kind != KvKind::cross) {
      r.k_bytes_per_token = add(r.k_bytes_per_token, mul(g.k_bytes_per_token, n), "K bytes per token");
      r.v_bytes_per_token = add(r.v_bytes_per_token, mul(g.v_bytes_per_token, n), "V bytes per token");
    }
  }
  r.kv_bytes_per_token = add(r.k_bytes_per_token, r.v_bytes_per_token, "KV bytes per token");
  r.sequence_kv_bytes = add(r.k_bytes, r.v_bytes, "sequence KV bytes");
  return r;
}

}  // namespace kvplan
