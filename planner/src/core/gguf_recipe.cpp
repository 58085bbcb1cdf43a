// llama-quantize's per-tensor recipe (see gguf_recipe.hpp). Source: ggml-org/llama.cpp src/llama-quant.cpp at
// commit 007dbbf3 (tensor_get_category, llama_tensor_get_type_impl, tensor_type_fallback,
// llama_ftype_get_default_type, tensor_requires_imatrix) and tools/quantize/quantize.cpp (QUANT_OPTIONS names).
// Written from reading those functions; the rules are restated below in kvplan's terms, not copied.
#include "kvplan/core/gguf_recipe.hpp"

#include <algorithm>
#include <cctype>

#include "kvplan/core/error.hpp"

namespace kvplan {

namespace {

using F = Ftype;
using E = ElemFormat;

struct FtypeName {
  std::string_view name;  // llama-quantize's spelling
  Ftype ftype;
  ElemFormat base;     // llama_ftype_get_default_type
  bool needs_imatrix;  // the recipe makes a tensor type tensor_requires_imatrix names (iq1/iq2/iq3_xxs, Q2_K_S q2_K)
};

// clang-format off
const FtypeName kFtypes[] = {
    {"Q4_0", F::q4_0, E::q4_0, false},       {"Q4_1", F::q4_1, E::q4_1, false},
    {"Q5_0", F::q5_0, E::q5_0, false},       {"Q5_1", F::q5_1, E::q5_1, false},
    {"Q8_0", F::q8_0, E::q8_0, false},       {"MXFP4_MOE", F::mxfp4_moe, E::mxfp4, false},
    {"Q2_K", F::q2_k, E::q2_k, false},       {"Q2_K_S", F::q2_k_s, E::q2_k, true},
    {"Q3_K_S", F::q3_k_s, E::q3_k, false},   {"Q3_K_M", F::q3_k_m, E::q3_k, false},
    {"Q3_K_L", F::q3_k_l, E::q3_k, false},   {"Q3_K", F::q3_k_m, E::q3_k, false},
    {"Q4_K_S", F::q4_k_s, E::q4_k, false},   {"Q4_K_M", F::q4_k_m, E::q4_k, false},
    {"Q4_K", F::q4_k_m, E::q4_k, false},     {"Q5_K_S", F::q5_k_s, E::q5_k, false},
    {"Q5_K_M", F::q5_k_m, E::q5_k, false},   {"Q5_K", F::q5_k_m, E::q5_k, false},
    {"Q6_K", F::q6_k, E::q6_k, false},
    {"IQ1_S", F::iq1_s, E::iq1_s, true},     {"IQ1_M", F::iq1_m, E::iq1_m, true},
    {"IQ2_XXS", F::iq2_xxs, E::iq2_xxs, true}, {"IQ2_XS", F::iq2_xs, E::iq2_xs, true},
    {"IQ2_S", F::iq2_s, E::iq2_xs, true},    {"IQ2_M", F::iq2_m, E::iq2_s, true},
    {"IQ3_XXS", F::iq3_xxs, E::iq3_xxs, true}, {"IQ3_XS", F::iq3_xs, E::iq3_s, true},
    {"IQ3_S", F::iq3_s, E::iq3_s, false},    {"IQ3_M", F::iq3_m, E::iq3_s, false},
    {"IQ4_NL", F::iq4_nl, E::iq4_nl, false}, {"IQ4_XS", F::iq4_xs, E::iq4_xs, false},
    {"TQ1_0", F::tq1_0, E::tq1_0, false},    {"TQ2_0", F::tq2_0, E::tq2_0, false},
};
// clang-format on

std::string upper(std::string_view s) {
  std::string o(s);
  for (auto& c : o) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return o;
}

bool is_block_format(ElemFormat f) { return format_info(f).block_elems > 1; }

}  // namespace

std::optional<GgufRecipe> parse_gguf_recipe(std::string_view name) {
  std::string s = upper(name);
  bool imatrix = false;
  if (const auto p = s.rfind(":IMATRIX"); p != std::string::npos && p + 8 == s.size()) {
    imatrix = true;
    s.resize(p);
  }
  GgufRecipe r;
  if (s.rfind("PURE:", 0) == 0) {
    const auto f = parse_format(s.substr(5));
    if (!f || !is_block_format(*f) || *f == E::nvfp4) return std::nullopt;
    r.ftype = F::pure;
    r.base = *f;
    r.imatrix = imatrix;
    r.name = "pure " + std::string(format_info(*f).name);
    return r;
  }
  for (const auto& f : kFtypes) {
    if (s != f.name) continue;
    r.ftype = f.ftype;
    r.base = f.base;
    r.imatrix = imatrix || f.needs_imatrix;
    // the alias prints as the mix it stands for, as llama-quantize does
    r.name = s == "Q3_K" ? "Q3_K_M" : s == "Q4_K" ? "Q4_K_M" : s == "Q5_K" ? "Q5_K_M" : std::string(f.name);
    return r;
  }
  if (s == "Q8_K") {  // a ggml type with no file type of its own: every tensor at it
    r.ftype = F::pure;
    r.base = E::q8_k;
    r.imatrix = imatrix;
    r.name = "pure q8_k";
    return r;
  }
  return std::nullopt;
}

std::optional<GgufRecipe> gguf_recipe_from_printed(std::string_view printed) {
  // llama_model_ftype_name (src/llama-model-loader.cpp): "<TYPE>[ mix] - <Small|Medium|Large|bits bpw ...>"
  std::string s = upper(printed);
  if (s == "MXFP4 MOE") return parse_gguf_recipe("MXFP4_MOE");
  const auto dash = s.find(" - ");
  std::string head = s.substr(0, dash), tail = dash == std::string::npos ? "" : s.substr(dash + 3);
  if (head == "IQ3_S MIX") return parse_gguf_recipe("IQ3_M");
  if (tail == "SMALL")
    head += "_S";
  else if (tail == "MEDIUM")
    head += head == "Q2_K" ? "" : "_M";
  else if (tail == "LARGE")
    head += "_L";
  return parse_gguf_recipe(head);
}

std::string gguf_recipe_names() {
  std::string out;
  for (const auto& f : kFtypes) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

std::vector<GgufTensor> gguf_tensors(const ModelSpec& m) {
  std::vector<GgufTensor> ts;
  const i64 h = m.hidden;
  // non-block tensors come first in the loader's order ("output.weight" < "token_embd.weight")
  const bool tied = m.tied_embeddings && m.has_embedding;
  if (m.has_lm_head && !tied) ts.push_back({"lm_head", TensorRole::output, -1, h, m.vocab, 1});
  if (m.has_embedding) ts.push_back({"embedding", TensorRole::token_embd, -1, h, m.vocab, 1});
  // llama.cpp architectures whose converter writes one fused attn_qkv tensor (convert_hf_to_gguf.py)
  const std::string& mt = m.model_type;
  const bool fused_qkv = mt == "phi3" || mt == "falcon" || mt == "gpt2" || mt == "gpt_neox" || mt == "bloom" ||
                         mt == "mpt" || mt == "gpt_bigcode" || mt == "chatglm" || mt == "dbrx";
  for (size_t li = 0; li < m.layers.size(); ++li) {
    const Layer& l = m.layers[li];
    const i64 i = static_cast<i64>(li);
    if (l.mixer == Mixer::attention) {
      const i64 q = mul(l.q_heads, l.k_head_dim), k = mul(l.kv_heads, l.k_head_dim), v = mul(l.kv_heads, l.v_head_dim);
      const i64 q_out = l.q_gate ? mul(2, q) : q;
      if (fused_qkv) {
        ts.push_back({"attention", TensorRole::attn_qkv, i, h, add(add(q_out, k), v), 1});
      } else {  // attn_k and attn_v as far as the layer has them (Gemma 4: k = v full layers, KV-sharing layers)
        if (l.kv_projections > 0) ts.push_back({"attention", TensorRole::attn_k, i, h, k, 1});
        ts.push_back({"attention", TensorRole::attn_q, i, h, q_out, 1});
        if (l.kv_projections > 1) ts.push_back({"attention", TensorRole::attn_v, i, h, v, 1});
      }
      ts.push_back({"attention", TensorRole::attn_output, i, mul(l.q_heads, l.v_head_dim), h, 1});
    } else if (l.mixer == Mixer::mla) {
      // DeepSeek-V2/V3 as convert_hf_to_gguf.py writes them with attn_kv_b (the split k_b / v_b are not modelled)
      const i64 qk = add(l.qk_nope_head_dim, l.qk_rope_head_dim);
      ts.push_back({"attention", TensorRole::other, i, h, add(l.kv_lora_rank, l.qk_rope_head_dim), 1});  // kv_a_mqa
      ts.push_back({"attention", TensorRole::attn_kv_b, i, l.kv_lora_rank,
                    mul(l.q_heads, add(l.qk_nope_head_dim, l.v_head_dim)), 1});
      ts.push_back({"attention", TensorRole::attn_output, i, mul(l.q_heads, l.v_head_dim), h, 1});
      if (l.q_lora_rank > 0) {
        ts.push_back({"attention", TensorRole::other, i, h, l.q_lora_rank, 1});                   // q_a
        ts.push_back({"attention", TensorRole::other, i, l.q_lora_rank, mul(l.q_heads, qk), 1});  // q_b
      } else {
        ts.push_back({"attention", TensorRole::attn_q, i, h, mul(l.q_heads, qk), 1});
      }
    }
    switch (l.mlp) {
      case MlpKind::gated:
        ts.push_back({"mlp", TensorRole::ffn_down, i, l.intermediate, h, 1});
        ts.push_back({"mlp", TensorRole::ffn_gate, i, h, l.intermediate, 1});
        ts.push_back({"mlp", TensorRole::ffn_up, i, h, l.intermediate, 1});
        break;
      case MlpKind::plain:
        ts.push_back({"mlp", TensorRole::ffn_down, i, l.intermediate, h, 1});
        ts.push_back({"mlp", TensorRole::ffn_up, i, h, l.intermediate, 1});
        break;
      case MlpKind::moe:
        ts.push_back({"routed_experts", TensorRole::ffn_down, i, l.expert_intermediate, h, l.experts});
        if (l.shared_intermediate > 0)
          ts.push_back({"shared_experts", TensorRole::ffn_down, i, l.shared_intermediate, h, 1});
        ts.push_back({"routed_experts", TensorRole::ffn_gate, i, h, l.expert_intermediate, l.experts});
        if (l.shared_intermediate > 0)
          ts.push_back({"shared_experts", TensorRole::ffn_gate, i, h, l.shared_intermediate, 1});
        ts.push_back({"routed_experts", TensorRole::ffn_up, i, h, l.expert_intermediate, l.experts});
        if (l.shared_intermediate > 0)
          ts.push_back({"shared_experts", TensorRole::ffn_up, i, h, l.shared_intermediate, 1});
        break;
      case MlpKind::none:
        break;
    }
  }
  return ts;
}

namespace {

bool attn_v_like(TensorRole r) {
  return r == TensorRole::attn_v || r == TensorRole::attn_qkv || r == TensorRole::attn_kv_b;
}

// use_more_bits: the first and last eighth of the layers and every third layer between them
bool use_more_bits(i64 i, i64 n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

struct Counters {
  i64 n_attn_v = 0, i_attn_v = 0, n_layer = 0, i_down = 0, i_gate = 0, i_up = 0;
};

// What the model's hyperparameters say to the recipe: n_gqa() of the first attention layer, n_expert, the
// architecture checks it makes (LLM_ARCH_FALCON; LLM_TYPE_70B, which llama-model.cpp gives an 80-layer llama
// with grouped-query attention).
struct Hparams {
  i64 gqa = 1, n_expert = 0;
  bool falcon = false, is_70b = false;
};

Hparams hparams_of(const ModelSpec& m) {
  Hparams hp;
  for (const Layer& l : m.layers) {
    if (hp.gqa == 1 && l.mixer == Mixer::attention && l.kv_heads > 0) hp.gqa = l.q_heads / l.kv_heads;
    hp.n_expert = std::max(hp.n_expert, l.experts);
  }
  hp.falcon = m.model_type == "falcon";
  hp.is_70b = m.model_type == "llama" && m.layers.size() == 80 && hp.gqa > 1;
  return hp;
}

// llama_tensor_get_type_impl: the type a mixture gives one tensor, before the shape fallback.
ElemFormat mixture_type(const GgufRecipe& r, const Hparams& hp, bool tied, const GgufTensor& t, Counters& c) {
  const F f = r.ftype;
  ElemFormat nt = r.base;
  auto any = [f](std::initializer_list<F> l) { return std::find(l.begin(), l.end(), f) != l.end(); };
  const bool iq2_family = any({F::iq2_xxs, F::iq2_xs, F::iq1_s, F::iq2_s, F::iq2_m, F::iq1_m});
  const bool iq2_s_m = any({F::iq2_s, F::iq2_m});
  // the layer a tensor belongs to: for MoE models its block index, else its position among tensors of its kind
  auto layer_of = [&](i64 counter) { return hp.n_expert > 1 ? t.layer : counter; };

  if (t.role == TensorRole::output || (tied && t.role == TensorRole::token_embd)) {
    if (f == F::mxfp4_moe) return E::q8_0;
    if (hp.falcon || t.cols % format_info(nt).block_elems != 0) return E::q8_0;
    if (any({F::iq2_xxs, F::iq2_xs, F::iq3_xxs, F::iq1_s, F::iq2_s, F::iq2_m, F::iq1_m})) return E::q5_k;
    return nt != E::q8_0 ? E::q6_k : nt;
  }
  if (f == F::mxfp4_moe) return t.slices > 1 ? E::mxfp4 : E::q8_0;  // merged expert tensors MXFP4, the rest q8_0
  if (t.role == TensorRole::token_embd) {
    if (any({F::iq2_xxs, F::iq2_xs, F::iq1_s, F::iq1_m})) return E::q2_k;
    if (any({F::iq2_s, F::iq2_m, F::iq3_xxs})) return E::iq3_s;
    if (any({F::tq1_0, F::tq2_0})) return E::q4_k;
    return nt;
  }
  if (iq2_family) {
    if (attn_v_like(t.role)) {
      nt = hp.gqa >= 4 || hp.n_expert >= 4 ? E::q4_k : iq2_s_m ? E::iq3_s : E::q2_k;
      ++c.i_attn_v;
    } else if (hp.n_expert == 8 && t.role == TensorRole::attn_k) {
      nt = E::q4_k;
    } else if (t.role == TensorRole::ffn_down) {
      if (c.i_down < c.n_layer / 8) nt = iq2_s_m ? E::iq3_s : E::q2_k;
      ++c.i_down;
    } else if (t.role == TensorRole::attn_output) {
      if (hp.n_expert == 8)
        nt = E::q5_k;
      else if (any({F::iq1_s, F::iq1_m}))
        nt = E::iq2_xxs;
      else if (iq2_s_m)
        nt = E::iq3_s;
    }
    return nt;
  }
  if (attn_v_like(t.role)) {
    const i64 i = c.i_attn_v, n = c.n_attn_v;
    if (f == F::q2_k)
      nt = hp.gqa >= 4 ? E::q4_k : E::q3_k;
    else if (f == F::q2_k_s && hp.gqa >= 4)
      nt = E::q4_k;
    else if (f == F::iq3_xxs)
      nt = hp.gqa >= 4 ? E::q4_k : !r.imatrix ? E::iq3_s : E::iq3_xxs;
    else if (any({F::iq3_xs, F::iq3_s}) && hp.gqa >= 4)
      nt = E::q4_k;
    else if (f == F::iq3_m)
      nt = E::q4_k;
    else if (f == F::q3_k_m)
      nt = i < 2 ? E::q5_k : E::q4_k;
    else if (f == F::q3_k_l)
      nt = E::q5_k;
    else if (any({F::iq4_nl, F::iq4_xs}) && hp.gqa >= 4)
      nt = E::q5_k;
    else if (any({F::q4_k_m, F::q5_k_m}) && use_more_bits(i, n))
      nt = E::q6_k;
    else if (f == F::q4_k_s && i < 4)
      nt = E::q5_k;
    // 70B: attn_v is 8x smaller than attn_q, so a q3_K / q4_K choice is raised to q5_K
    if (hp.is_70b && (nt == E::q3_k || nt == E::q4_k)) nt = E::q5_k;
    if (hp.n_expert == 8) nt = E::q8_0;
    ++c.i_attn_v;
    return nt;
  }
  if (t.role == TensorRole::attn_k) {
    if (hp.n_expert == 8) return E::q8_0;
    if (f == F::iq3_xs) return E::iq3_xxs;
    if (f == F::iq3_xxs) return E::iq2_s;
    return nt;
  }
  if (t.role == TensorRole::attn_q) {
    if (f == F::iq3_xs) return E::iq3_xxs;
    if (f == F::iq3_xxs) return E::iq2_s;
    return nt;
  }
  if (t.role == TensorRole::ffn_down) {
    const i64 i = layer_of(c.i_down), n = c.n_layer;
    const bool umb = use_more_bits(i, n);
    if (f == F::q2_k)
      nt = E::q3_k;
    else if (f == F::q2_k_s) {
      if (i < n / 8) nt = E::q4_k;
    } else if (f == F::iq3_xxs && !r.imatrix)
      nt = i < n / 8 ? E::q4_k : E::q3_k;
    else if (f == F::q3_k_m)
      nt = i < n / 16 ? E::q5_k : !hp.falcon || umb ? E::q4_k : E::q3_k;
    else if (f == F::iq3_m && (i < n / 8 || (hp.n_expert == 8 && umb)))
      nt = E::q4_k;
    else if (f == F::q3_k_l)
      nt = hp.falcon ? E::q4_k : E::q5_k;
    else if (f == F::q4_k_m) {
      if (hp.falcon)
        nt = i < n / 16 ? E::q6_k : umb ? E::q5_k : E::q4_k;
      else if (umb)
        nt = E::q6_k;
    } else if (i < n / 8 && any({F::iq4_nl, F::iq4_xs}) && !r.imatrix)
      nt = E::q5_k;
    else if (f == F::q5_k_m && umb)
      nt = E::q6_k;
    else if (f == F::q4_k_s && !hp.falcon && i < n / 8)
      nt = E::q5_k;
    else if (any({F::q4_0, F::q5_0}) && r.imatrix && i < n / 8)
      nt = f == F::q4_0 ? E::q4_1 : E::q5_1;
    ++c.i_down;
    return nt;
  }
  if (t.role == TensorRole::attn_output) {
    if (!hp.falcon) {
      if (hp.n_expert == 8) {
        if (any({F::q2_k, F::iq3_xs, F::iq3_xxs, F::q3_k_s, F::q3_k_m, F::iq4_nl, F::q4_k_s, F::q4_k_m, F::iq3_s,
                 F::iq3_m, F::iq4_xs}))
          nt = E::q5_k;
      } else {
        if (f == F::q2_k)
          nt = E::q3_k;
        else if (f == F::iq3_xxs)
          nt = E::iq3_s;
        else if (f == F::q3_k_m)
          nt = E::q4_k;
        else if (f == F::q3_k_l)
          nt = E::q5_k;
        else if (f == F::iq3_m)
          nt = E::q4_k;
      }
    } else if (f == F::q3_k_l) {
      nt = E::q4_k;
    }
    return nt;
  }
  if (t.role == TensorRole::ffn_gate || t.role == TensorRole::ffn_up) {
    i64& counter = t.role == TensorRole::ffn_gate ? c.i_gate : c.i_up;
    const i64 i = layer_of(counter), n = c.n_layer;
    if (f == F::iq3_xs && i >= n / 8 && i < 7 * n / 8) nt = E::iq3_xxs;
    ++counter;
    return nt;
  }
  return nt;
}

// tensor_type_fallback: a row length the type's block does not divide falls back to a 32-block type, else f16.
ElemFormat shape_fallback(ElemFormat nt, i64 cols, const std::string& where) {
  if (cols % format_info(nt).block_elems == 0) return nt;
  ElemFormat rt;
  switch (nt) {
    case E::iq1_s:
    case E::iq1_m:
    case E::iq2_xxs:
    case E::iq2_xs:
    case E::iq2_s:
    case E::iq3_xxs:
    case E::iq3_s:
    case E::iq4_xs:
      rt = E::iq4_nl;
      break;
    case E::q2_k:
    case E::q3_k:
    case E::tq1_0:
    case E::tq2_0:
      rt = E::q4_0;
      break;
    case E::q4_k:
      rt = E::q5_0;
      break;
    case E::q5_k:
      rt = E::q5_1;
      break;
    case E::q6_k:
      rt = E::q8_0;
      break;
    default:
      throw InputError(where,
                       "llama-quantize has no fallback from " + std::string(format_info(nt).name) + " for rows of " +
                           std::to_string(cols) + " weights (not a multiple of " +
                           std::to_string(format_info(nt).block_elems) + ")",
                       "choose a file type whose block divides the row");
  }
  return cols % format_info(rt).block_elems == 0 ? rt : E::f16;
}

}  // namespace

void gguf_tensor_types(const GgufRecipe& r, const ModelSpec& m, std::vector<GgufTensor>& ts, const std::string& where) {
  const Hparams hp = hparams_of(m);
  const bool tied = m.tied_embeddings;  // no output.weight: token_embd is the output head
  Counters c;
  c.n_layer = decoder_layers(m.layers);  // hparams.n_layer: blocks (Falcon-H1's two entries per block are one)
  for (const auto& t : ts) c.n_attn_v += attn_v_like(t.role) ? 1 : 0;
  for (auto& t : ts) {
    const ElemFormat nt = r.ftype == F::pure ? r.base : mixture_type(r, hp, tied, t, c);
    t.type = shape_fallback(nt, t.cols, where);
  }
}

std::vector<GgufTensor> gguf_typed_tensors(const GgufRecipe& r, const ModelSpec& m, const std::string& where) {
  auto ts = gguf_tensors(m);
  gguf_tensor_types(r, m, ts, where);
  return ts;
}

i64 gguf_tensor_bytes(const GgufTensor& t) {
  return mul(mul(t.rows, t.slices, "GGUF tensor rows"), row_bytes(t.type, t.cols, "GGUF tensor row"),
             "GGUF tensor bytes");
}

}  // namespace kvplan
