// Hugging Face config.json ingestion. Each family rule cites the transformers modeling file whose
// module shapes it mirrors; keys are read strictly (type and range checked, errors name the path).
#include "kvplan/io/hf_config.hpp"

#include "kvplan/io/limits.hpp"
#include "vision_config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "kvplan/core/transform.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/core/weights.hpp"

namespace kvplan::io {

namespace {

using namespace limits;  // kMaxLayers, kMaxHeads, ... (io/limits.hpp)

enum class Family {
  llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3, phi3, falcon, gpt2,
  gpt_neox, gptj, gpt_bigcode, deepseek, gpt_oss, llama4, jamba, nemotron_h, mamba, mamba2, mllama, qwen3_next, cohere, cohere2,
  glm4_moe, granitemoe, granitemoehybrid, lfm2, lfm2_moe, falcon_h1, minimax_m2, ernie4_5_moe, olmoe, olmo2, olmo3, starcoder2,
  nemotron, phimoe, dbrx, exaone, glm4, chatglm, phi, stablelm, internlm2, seed_oss, arcee, apertus, exaone4, ernie4_5, hunyuan, bailing,
  gemma3n, gemma4, generic
};

struct TypeRule {
  const char* model_type;
  Family family;
};

// Text model types (and flat multimodal configs whose text keys sit at the top level).
const TypeRule kTypes[] = {
    {"llama", Family::llama},         {"mistral", Family::mistral},       {"mixtral", Family::mixtral},
    {"qwen2", Family::qwen2},         {"qwen2_vl", Family::qwen2},        {"qwen2_vl_text", Family::qwen2},
    {"qwen2_5_vl", Family::qwen2},    {"qwen2_5_vl_text", Family::qwen2}, {"qwen2_moe", Family::qwen2_moe},
    {"qwen3", Family::qwen3},         {"qwen3_vl", Family::qwen3},        {"qwen3_vl_text", Family::qwen3},
    {"qwen3_moe", Family::qwen3_moe}, {"qwen3_vl_moe", Family::qwen3_moe}, {"qwen3_vl_moe_text", Family::qwen3_moe},
    {"gemma", Family::gemma},         {"gemma2", Family::gemma2},         {"gemma3", Family::gemma3},
    {"gemma3_text", Family::gemma3},  {"phi3", Family::phi3},             {"falcon", Family::falcon},
    {"gpt2", Family::gpt2},           {"gpt_neox", Family::gpt_neox},     {"gptj", Family::gptj},             {"gpt_bigcode", Family::gpt_bigcode},
    {"deepseek_v2", Family::deepseek}, {"deepseek_v3", Family::deepseek}, {"deepseek_v32", Family::deepseek}, {"kimi_k2", Family::deepseek},
    {"gpt_oss", Family::gpt_oss},     {"llama4", Family::llama4},         {"llama4_text", Family::llama4},
    {"jamba", Family::jamba},         {"nemotron_h", Family::nemotron_h}, {"mamba", Family::mamba},
    {"falcon_mamba", Family::mamba},  {"mamba2", Family::mamba2},         {"mllama", Family::mllama},
    {"mllama_text_model", Family::mllama}, {"llava", Family::llama},     {"llava_next", Family::llama},
    {"mistral3", Family::mistral},    {"qwen3_next", Family::qwen3_next}, {"cohere", Family::cohere},
    {"cohere2", Family::cohere2},     {"glm4_moe", Family::glm4_moe},
    {"granite", Family::llama},       {"granitemoe", Family::granitemoe}, {"granitemoeshared", Family::granitemoe},
    {"granitemoehybrid", Family::granitemoehybrid}, {"lfm2", Family::lfm2}, {"lfm2_moe", Family::lfm2_moe},
    {"falcon_h1", Family::falcon_h1}, {"minimax_m2", Family::minimax_m2}, {"ernie4_5_moe", Family::ernie4_5_moe},
    {"olmoe", Family::olmoe},         {"olmo2", Family::olmo2},           {"olmo3", Family::olmo3},
    {"starcoder2", Family::starcoder2}, {"nemotron", Family::nemotron}, {"dots1", Family::glm4_moe},
    {"phimoe", Family::phimoe},       {"dbrx", Family::dbrx},             {"exaone", Family::exaone},
    {"glm4", Family::glm4},           {"chatglm", Family::chatglm},       {"phi", Family::phi},
    {"stablelm", Family::stablelm},   {"internlm2", Family::internlm2},   {"seed_oss", Family::seed_oss},
    {"smollm3", Family::llama},       {"arcee", Family::arcee},           {"apertus", Family::apertus},
    {"exaone4", Family::exaone4},     {"ernie4_5", Family::ernie4_5},
    {"hunyuan_v1_moe", Family::hunyuan}, {"hunyuan_v1_dense", Family::hunyuan}, {"hunyuan", Family::hunyuan},
    {"bailing_moe", Family::bailing}, {"bailing_moe_v2", Family::bailing},
    {"gemma3n", Family::gemma3n},     {"gemma3n_text", Family::gemma3n},  {"gemma4", Family::gemma4},
    {"gemma4_text", Family::gemma4},
};

// Wrappers whose text model lives in text_config: the text model_type when text_config has none.
const std::pair<const char*, const char*> kWrapperText[] = {
    {"gemma3", "gemma3_text"},       {"mllama", "mllama_text_model"}, {"llama4", "llama4_text"},
    {"qwen2_5_vl", "qwen2_5_vl_text"}, {"qwen2_vl", "qwen2_vl_text"},   {"qwen3_vl", "qwen3_vl_text"},
    {"qwen3_vl_moe", "qwen3_vl_moe_text"}, {"llava", "llama"},          {"llava_next", "llama"},
    {"mistral3", "mistral"},          {"gemma3n", "gemma3n_text"},       {"gemma4", "gemma4_text"},
};

// Defaults of the transformers config classes that multimodal wrappers instantiate from a sparse
// text_config (LlamaConfig, Gemma3TextConfig __init__ defaults).
std::vector<std::pair<std::string, json>> text_config_defaults(const std::string& text_type) {
  if (text_type == "llama")
    return {{"hidden_size", 4096}, {"intermediate_size", 11008}, {"num_hidden_layers", 32},
            {"num_attention_heads", 32}, {"vocab_size", 32000}, {"max_position_embeddings", 2048}};
  if (text_type == "gemma3_text")
    return {{"vocab_size", 262208}, {"hidden_size", 2304}, {"intermediate_size", 9216}, {"num_hidden_layers", 26},
            {"num_attention_heads", 8}, {"num_key_value_heads", 4}, {"head_dim", 256}, {"max_position_embeddings", 131072},
            {"sliding_window", 4096}, {"sliding_window_pattern", 6}};
  if (text_type == "gemma3n_text")  // Gemma3nTextConfig (transformers configuration_gemma3n.py)
    return {{"vocab_size", 262400}, {"hidden_size", 2048}, {"intermediate_size", 16384}, {"num_hidden_layers", 35},
            {"num_attention_heads", 8}, {"num_key_value_heads", 2}, {"head_dim", 256}, {"max_position_embeddings", 32768},
            {"sliding_window", 512}, {"vocab_size_per_layer_input", 262144}, {"hidden_size_per_layer_input", 256},
            {"altup_num_inputs", 4}, {"laurel_rank", 64}, {"num_kv_shared_layers", 15}};
  if (text_type == "gemma4_text")  // Gemma4TextConfig (transformers configuration_gemma4.py; global_head_dim a kwarg)
    return {{"vocab_size", 262144}, {"hidden_size", 2304}, {"intermediate_size", 9216}, {"num_hidden_layers", 30},
            {"num_attention_heads", 8}, {"num_key_value_heads", 4}, {"head_dim", 256}, {"max_position_embeddings", 131072},
            {"sliding_window", 512}, {"vocab_size_per_layer_input", 262144}, {"hidden_size_per_layer_input", 256},
            {"global_head_dim", 512}};
  return {};
}

std::optional<Family> family_of(const std::string& t) {
  for (const auto& r : kTypes)
    if (t == r.model_type) return r.family;
  return std::nullopt;
}

ElemFormat dtype_of(const JsonView& v, const std::string& key) {
  const std::string s = v.string_or(key, "");
  if (s == "float32") return ElemFormat::f32;
  if (s == "float16") return ElemFormat::f16;
  if (s == "bfloat16") return ElemFormat::bf16;
  if (auto f = parse_format(s); f && format_info(*f).block_elems == 1) return *f;
  v.fail(key, "unknown dtype \"" + s + "\"", "use float32, float16 or bfloat16");
}

struct Reader {
  const JsonView& root;
  const JsonView& t;  // text model keys
  Family fam;
  ModelSpec& m;

  i64 hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, inter = 0;

  void warn(const std::string& s) { m.warnings.push_back(s); }
  // tie_word_embeddings, else the family's config-class default
  void tie(bool family_default) { m.tied_embeddings = t.bool_or("tie_word_embeddings", family_default); }

  void read_core() {
    hidden = t.get_int_any({"hidden_size", "n_embd", "d_model"}, 1, kMaxDim);
    layers = t.get_int_any({"num_hidden_layers", "n_layer", "num_layers", "n_layers"}, 1, kMaxLayers);
    m.hidden = hidden;
    m.vocab = t.get_int_any({"vocab_size", "padded_vocab_size"}, 1, kMaxVocab);
    if (auto k = t.first_present({"max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "max_seq_len"}))
      m.max_context = t.get_int(*k, 1, kMaxTokens);
    sglang_context();
    apply_rope_scaling();
    if (auto k = t.first_present({"intermediate_size", "n_inner", "ffn_hidden_size"}); k && !(fam == Family::gemma3n && t.raw()[*k].is_array()))
      inter = t.get_int(*k, 1, kMaxDim);
  }

  // RoPE scaling extends the usable context (vLLM ModelConfig _get_and_verify_max_len, v0.10-v0.11):
  // rope_scaling (or the newer rope_parameters) with rope_type / type other than su, longrope,
  // llama3 and default multiplies the derived length by `factor`; yarn starts from
  // original_max_position_embeddings. Gemma 3 configs are already scaled and are left alone.
  // SGLang's context length (python/sglang/srt/hf_transformers_utils.py get_context_length): the first of
  // max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings, times
  // rope_scaling.factor unless rope_scaling has original_max_position_embeddings or rope_type llama3.
  void sglang_context() {
    i64 base = 0;
    for (const char* k : {"max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings"})
      if (t.has(k) && t.raw()[k].is_number_integer()) {
        base = t.get_int(k, 1, kMaxTokens);
        break;
      }
    if (base == 0) return;
    double factor = 1;
    if (t.has("rope_scaling") && t.raw()["rope_scaling"].is_object() && !t.raw()["rope_scaling"].empty()) {
      const auto rs = t.object("rope_scaling");
      factor = rs->opt_number("factor").value_or(1.0);
      if (t.raw()["rope_scaling"].contains("original_max_position_embeddings") || rs->string_or("rope_type", "") == "llama3") factor = 1;
      if (!(factor > 0 && factor <= 1024.0)) factor = 1;
    }
    const double scaled = static_cast<double>(base) * factor;
    if (scaled < static_cast<double>(kMaxTokens)) m.max_context_sglang = static_cast<i64>(scaled);
  }

  void apply_rope_scaling() {
    const char* key = t.has("rope_scaling") ? "rope_scaling" : t.has("rope_parameters") ? "rope_parameters" : nullptr;
    if (!key || m.max_context == 0 || t.raw()[key].type() != json::value_t::object) return;
    if (m.model_type.rfind("gemma3", 0) == 0) return;
    const auto rs = t.object(key);
    const std::string type = rs->string_or("rope_type", rs->string_or("type", "default"));
    if (type == "su" || type == "longrope" || type == "llama3" || type == "default" || type == "mrope") return;
    const auto factor = rs->opt_number("factor");
    if (!factor || !(*factor >= 1.0) || !(*factor <= 1024.0)) return;
    i64 base = m.max_context;
    if (type == "yarn") {
      if (const auto orig = rs->opt_int("original_max_position_embeddings", 1, kMaxTokens)) base = *orig;
    }
    const double scaled = static_cast<double>(base) * *factor;
    if (scaled >= static_cast<double>(kMaxTokens)) return;
    const i64 ctx = static_cast<i64>(scaled);
    if (ctx != m.max_context)
      m.notes.push_back(std::string(key) + " " + type + " x" + json(*factor).dump() + ": usable context " + std::to_string(ctx) +
                        " tokens (max_position_embeddings " + std::to_string(m.max_context) + ")");
    m.max_context = ctx;
  }

  // heads, KV heads (missing -> heads), head_dim (explicit wins over hidden / heads).
  void read_attention() {
    heads = t.get_int_any({"num_attention_heads", "n_head"}, 1, kMaxHeads);
    if (auto k = t.first_present({"num_key_value_heads", "n_head_kv", "multi_query_group_num"})) {
      kv_heads = t.get_int(*k, 1, kMaxHeads);
    } else {
      kv_heads = heads;
      m.notes.push_back("num_key_value_heads absent: KV heads = num_attention_heads = " + std::to_string(heads));
    }
    if (heads % kv_heads != 0)
      t.fail("num_key_value_heads", "num_attention_heads " + std::to_string(heads) + " is not divisible by " +
                                        std::to_string(kv_heads) + " KV heads",
             "fix the head counts");
    if (auto k = t.first_present({"head_dim", "attention_head_dim", "kv_channels"})) {
      head_dim = t.get_int(*k, 1, kMaxDim);
    } else {
      if (hidden % heads != 0)
        t.fail("hidden_size", "hidden_size " + std::to_string(hidden) + " is not divisible by num_attention_heads " +
                                  std::to_string(heads) + " and no head_dim is given",
               "add head_dim");
      head_dim = hidden / heads;
    }
  }

  Layer attention_layer() const {
    Layer l;
    l.kv = KvKind::full;
    l.mixer = Mixer::attention;
    l.q_heads = heads;
    l.kv_heads = kv_heads;
    l.k_head_dim = head_dim;
    l.v_head_dim = head_dim;
    l.mlp = MlpKind::gated;
    l.intermediate = inter;
    return l;
  }

  i64 need_inter() {
    if (inter <= 0) t.fail("intermediate_size", "missing; expected integer >= 1", "add it to the config");
    return inter;
  }

  // ---- windows: layer_types first, then each family's own rule ----
  i64 sliding_window() const { return t.get_int("sliding_window", 1, kMaxTokens); }

  bool sliding_enabled() const { return t.bool_or("use_sliding_window", true) && t.has("sliding_window"); }

  void apply_layer_types() {
    const auto types = t.string_list("layer_types");
    if ((i64)types.size() != layers)
      t.fail("layer_types", "has " + std::to_string(types.size()) + " entries but num_hidden_layers is " +
                                std::to_string(layers), "make them agree");
    for (size_t i = 0; i < types.size(); ++i) {
      Layer& l = m.layers[i];
      const auto& s = types[i];
      if (s == "full_attention") {
        l.kv = KvKind::full;
      } else if (s == "sliding_attention") {
        l.kv = KvKind::sliding;
        l.window = sliding_window();
      } else if (s == "linear_attention" || s == "mamba") {
        if (l.kv != KvKind::ssm)
          throw InputError(t.where("layer_types") + "/" + std::to_string(i), "\"" + s + "\" is not supported for model_type '" +
                               m.model_type + "'", "supported here: full_attention, sliding_attention, chunked_attention");
      } else if (s == "chunked_attention") {
        l.kv = KvKind::chunked;
        l.window = t.get_int("attention_chunk_size", 1, kMaxTokens);
      } else {
        throw InputError(t.where("layer_types") + "/" + std::to_string(i), "unsupported layer type \"" + s + "\"",
                         "supported: full_attention, sliding_attention, chunked_attention");
      }
    }
  }

  void set_sliding(size_t i) {
    m.layers[i].kv = KvKind::sliding;
    m.layers[i].window = sliding_window();
  }

  // sliding unless (layer_idx + 1) % period == 0: one full-attention layer closes every period
  void sliding_except_every(i64 period) {
    for (size_t i = 0; i < m.layers.size(); ++i)
      if ((i64(i) + 1) % period != 0) set_sliding(i);
  }

  // families whose layer_types names each layer's mixer (read with the family), not its attention window
  bool layer_types_are_mixers() const {
    return fam == Family::granitemoehybrid || fam == Family::lfm2 || fam == Family::lfm2_moe;
  }

  void apply_windows() {
    if (layer_types_are_mixers()) return;
    if (t.has("layer_types")) { apply_layer_types(); return; }
    switch (fam) {
      case Family::gemma2:  // modeling_gemma2: is_sliding = not bool(layer_idx % 2)
        for (size_t i = 0; i < m.layers.size(); i += 2) set_sliding(i);
        return;
      case Family::gemma3:  // modeling_gemma3: sliding unless (layer_idx + 1) % sliding_window_pattern == 0
        sliding_except_every(t.int_or("sliding_window_pattern", 6, 1, kMaxLayers));
        return;
      case Family::gemma3n:  // Gemma3nTextConfig.__post_init__: full attention when (i + 1) % 5 == 0
        sliding_except_every(5);
        return;
      case Family::gemma4:  // Gemma4TextConfig.__post_init__: sliding_window_pattern 6, the last layer full (read_gemma_ple)
        sliding_except_every(6);
        return;
      case Family::cohere2:  // modeling_cohere2 (transformers 4.48): sliding unless (layer_idx + 1) % sliding_window_pattern == 0
        sliding_except_every(t.int_or("sliding_window_pattern", 4, 1, kMaxLayers));
        return;
      case Family::gpt_oss:  // alternating, sliding first (the layer_types gpt-oss ships)
        for (size_t i = 0; i < m.layers.size(); i += 2) set_sliding(i);
        return;
      case Family::llama4: {  // chunked local attention on RoPE layers; NoPE layers are global
        if (!t.has("attention_chunk_size")) return;
        const i64 chunk = t.get_int("attention_chunk_size", 1, kMaxTokens);
        std::vector<i64> rope = t.int_list("no_rope_layers", 0, 1);
        if (!rope.empty() && (i64)rope.size() != layers)
          t.fail("no_rope_layers", "has " + std::to_string(rope.size()) + " entries for " + std::to_string(layers) +
                                       " layers", "make them agree");
        const i64 interval = t.int_or("no_rope_layer_interval", 4, 1, kMaxLayers);
        for (size_t i = 0; i < m.layers.size(); ++i) {
          const bool uses_rope = rope.empty() ? ((i64(i) + 1) % interval != 0) : rope[i] != 0;
          if (uses_rope) { m.layers[i].kv = KvKind::chunked; m.layers[i].window = chunk; }
        }
        return;
      }
      case Family::qwen2:
      case Family::qwen2_moe:
      case Family::qwen3:
      case Family::qwen3_moe: {  // sliding only with use_sliding_window, on layers >= max_window_layers
        if (!t.bool_or("use_sliding_window", false) || !t.has("sliding_window")) {
          if (t.has("sliding_window"))
            m.notes.push_back("sliding_window present but use_sliding_window is false: all layers full attention");
          return;
        }
        const i64 first = t.int_or("max_window_layers", 0, 0, kMaxLayers);
        for (size_t i = 0; i < m.layers.size(); ++i)
          if ((i64)i >= first) set_sliding(i);
        return;
      }
      case Family::mistral:
      case Family::mixtral:
      case Family::phi3:
      case Family::llama:
      case Family::starcoder2:
      case Family::phimoe:
      case Family::generic:  // a sliding_window given applies to every attention layer
        if (sliding_enabled())
          for (size_t i = 0; i < m.layers.size(); ++i)
            if (m.layers[i].kv == KvKind::full) set_sliding(i);
        return;
      default:
        return;
    }
  }

  // ---- families ----
  void llama_like(bool qkv_bias_default) {
    read_attention();
    need_inter();
    const bool ab = t.bool_or("attention_bias", false);
    const bool mb = t.bool_or("mlp_bias", false);
    for (i64 i = 0; i < layers; ++i) {
      Layer l = attention_layer();
      l.qkv_bias = qkv_bias_default || ab;
      l.o_bias = ab;
      l.mlp_bias = mb;
      m.layers.push_back(l);
    }
  }

  // num_nextn_predict_layers: DeepSeek-V3-style MTP layers after the last one (weights counted only with MTP speculation)
  void read_mtp() {
    m.mtp_layers = t.int_or("num_nextn_predict_layers", 0, 0, kMaxLayers);
    if (m.mtp_layers > 0)
      m.notes.push_back("num_nextn_predict_layers = " + std::to_string(m.mtp_layers) +
                        ": the MTP layer weights are counted only with MTP speculation (vLLM --speculative-config method mtp, SGLang NEXTN)");
  }

  void moe_layer(Layer& l, i64 experts, i64 active, i64 expert_inter) {
    l.mlp = MlpKind::moe;
    l.experts = experts;
    l.experts_active = active;
    l.expert_intermediate = expert_inter;
    if (active > experts)
      t.fail("num_experts_per_tok", std::to_string(active) + " experts per token exceeds " +
                                        std::to_string(experts) + " experts", "fix the expert counts");
  }

  void read() {
    read_core();
    switch (fam) {
      case Family::llama:
      case Family::mistral:
      case Family::phi3:
      case Family::generic:
        llama_like(false);
        tie(false);
        break;
      case Family::qwen2:
        llama_like(true);  // modeling_qwen2: q/k/v Linear(bias=True), o_proj bias=False
        tie(false);
        break;
      case Family::qwen3:
        llama_like(false);
        for (auto& l : m.layers) l.qk_norm = true;  // q_norm, k_norm RMSNorm(head_dim)
        tie(false);
        break;
      case Family::mixtral: {
        llama_like(false);
        const i64 e = t.get_int("num_local_experts", 1, kMaxExperts);
        const i64 k = t.get_int("num_experts_per_tok", 1, kMaxExperts);
        for (auto& l : m.layers) moe_layer(l, e, k, inter);
        tie(false);
        break;
      }
      case Family::qwen2_moe:
      case Family::qwen3_moe: {
        llama_like(fam == Family::qwen2_moe);
        if (fam == Family::qwen3_moe) for (auto& l : m.layers) l.qk_norm = true;
        const i64 e = t.get_int("num_experts", 1, kMaxExperts);
        const i64 k = t.get_int("num_experts_per_tok", 1, kMaxExperts);
        const i64 mi = t.get_int("moe_intermediate_size", 1, kMaxDim);
        const i64 step = t.int_or("decoder_sparse_step", 1, 1, kMaxLayers);
        const auto dense = t.int_list("mlp_only_layers", 0, layers - 1);
        const i64 shared = fam == Family::qwen2_moe ? t.int_or("shared_expert_intermediate_size", 0, 0, kMaxDim) : 0;
        for (i64 i = 0; i < layers; ++i) {
          Layer& l = m.layers[i];
          const bool is_dense = std::find(dense.begin(), dense.end(), i) != dense.end();
          if (is_dense || (i + 1) % step != 0) continue;  // modeling_qwen*_moe: sparse when (i+1) % step == 0
          moe_layer(l, e, k, mi);
          l.shared_intermediate = shared;
          l.shared_expert_gate = shared > 0;
        }
        tie(false);
        break;
      }
      case Family::cohere:
      case Family::cohere2:
        // modeling_cohere / modeling_cohere2: attention and MLP in parallel off one input_layernorm (a LayerNorm with
        // a weight and no bias: hidden parameters, as an RMSNorm's), tied embeddings by default; use_qk_norm
        // (Command R+) adds per-head LayerNorm weights, (q heads + kv heads) x head_dim
        llama_like(false);
        for (auto& l : m.layers) l.norms = 1;
        if (fam == Family::cohere && t.bool_or("use_qk_norm", false))
          m.notes.push_back("use_qk_norm: per-head q/k norm weights not counted (under 0.01% of a layer)");
        tie(true);
        break;
      case Family::gemma:
      case Family::gemma2:
      case Family::gemma3:
        llama_like(false);
        for (auto& l : m.layers) {
          l.norms = fam == Family::gemma ? 2 : 4;  // gemma2/3: input, post_attn, pre_ff, post_ff norms
          l.qk_norm = fam == Family::gemma3;
        }
        tie(true);
        break;
      case Family::gemma3n:
      case Family::gemma4: read_gemma_layers(); break;
      case Family::mllama: {
        llama_like(false);
        for (i64 i : t.int_list("cross_attention_layers", 0, layers - 1)) {
          Layer& l = m.layers[i];
          l.kv = KvKind::cross;  // K/V of the vision encoder's tokens (modeling_mllama)
          l.qk_norm = true;
        }
        tie(false);
        break;
      }
      case Family::falcon: read_falcon(); break;
      case Family::gpt2:
      case Family::gpt_bigcode: read_gpt2(); break;
      case Family::gpt_neox: read_neox(); break;
      case Family::gptj: read_neox(true); break;
      case Family::deepseek: read_deepseek(); break;
      case Family::glm4_moe: read_glm4_moe(); break;
      case Family::gpt_oss: {
        llama_like(false);
        const i64 e = t.get_int("num_local_experts", 1, kMaxExperts);
        const i64 k = t.get_int_any({"num_experts_per_tok", "experts_per_token"}, 1, kMaxExperts);
        const bool ab = t.bool_or("attention_bias", true);
        for (auto& l : m.layers) {
          l.qkv_bias = l.o_bias = ab;
          l.attn_sinks = true;           // modeling_gpt_oss: sinks = Parameter(num_attention_heads)
          moe_layer(l, e, k, inter);     // experts gate_up (2*I) and down with biases; router with bias
          l.expert_bias = true;
          l.router_bias = true;
        }
        tie(false);
        break;
      }
      case Family::llama4: read_llama4(); break;
      case Family::jamba: read_jamba(); break;
      case Family::nemotron_h: read_nemotron_h(); break;
      case Family::mamba: read_mamba1(); break;
      case Family::mamba2: read_mamba2(); break;
      case Family::qwen3_next: read_qwen3_next(); break;
      case Family::granitemoe: read_granitemoe(); break;
      case Family::granitemoehybrid: read_granitemoehybrid(); break;
      case Family::lfm2:
      case Family::lfm2_moe: read_lfm2(); break;
      case Family::falcon_h1: read_falcon_h1(); break;
      case Family::minimax_m2: read_minimax_m2(); break;
      case Family::ernie4_5_moe: read_ernie4_5_moe(); break;
      case Family::olmoe: read_olmoe(); break;
      case Family::olmo2:
      case Family::olmo3: read_olmo2(); break;
      case Family::starcoder2: read_starcoder2(); break;
      case Family::nemotron: read_nemotron(); break;
      case Family::phimoe: read_phimoe(); break;
      case Family::dbrx: read_dbrx(); break;
      case Family::exaone:  // EXAONE 3.x (trust_remote_code): llama-shaped under num_layers / activation_function;
        llama_like(false);  // ExaoneConfig ties the embeddings unless the config says otherwise
        tie(true);
        break;
      case Family::glm4: read_glm4(); break;
      case Family::chatglm: read_chatglm(); break;
      case Family::phi: read_phi(); break;
      case Family::stablelm: read_stablelm(); break;
      case Family::seed_oss: {  // modeling_seed_oss: q/k/v biases with attention_bias, o_proj's with attention_out_bias
        llama_like(false);
        const bool qkv_bias = t.bool_or("attention_bias", true), o_bias = t.bool_or("attention_out_bias", false);
        for (auto& l : m.layers) {
          l.qkv_bias = qkv_bias;
          l.o_bias = o_bias;
        }
        tie(false);
        break;
      }
      case Family::arcee:  // modeling_arcee (AFM): llama-shaped with a plain MLP (up_proj, down_proj, relu squared)
        llama_like(false);
        for (auto& l : m.layers) l.mlp = MlpKind::plain;
        tie(false);
        break;
      case Family::apertus: {  // modeling_apertus: per-head q/k RMSNorms, a plain MLP (up_proj, down_proj, xIELU whose
                               // two scalars a layer are not counted)
        llama_like(false);
        const bool qk = t.bool_or("qk_norm", true);
        for (auto& l : m.layers) {
          l.mlp = MlpKind::plain;
          l.qk_norm = qk;
        }
        tie(false);
        break;
      }
      case Family::exaone4: read_exaone4(); break;
      case Family::hunyuan: read_hunyuan(); break;
      case Family::bailing: read_bailing(); break;
      case Family::ernie4_5: {  // modeling_ernie4_5 (dense ERNIE-4.5): biases on q/k/v/o and the MLP with use_bias;
                                // tied embeddings by default (Ernie4_5Config)
        llama_like(false);
        const bool bias = t.bool_or("use_bias", false);
        for (auto& l : m.layers) l.qkv_bias = l.o_bias = l.mlp_bias = bias;
        tie(true);
        break;
      }
      case Family::internlm2: {  // InternLM2 / 2.5 (trust_remote_code): llama-shaped, fused wqkv; `bias`
                                 // (InternLM2Config default true) on wqkv and wo
        llama_like(false);
        const bool bias = t.bool_or("bias", true);
        for (auto& l : m.layers) l.qkv_bias = l.o_bias = bias;
        tie(false);
        break;
      }
    }
    apply_windows();
    if (fam == Family::gemma3n || fam == Family::gemma4) read_gemma_ple();
  }

  // ---- Gemma 3n (transformers modeling_gemma3n) and Gemma 4 (modeling_gemma4) ----
  // Layers as Gemma 3 (4 norms, per-head q and k norms, v_norm without a weight, a gated MLP, tied embeddings), with:
  //  - Gemma 3n: intermediate_size an int or one width per layer;
  //  - Gemma 4 with enable_moe_block: every layer adds num_experts routed experts of moe_intermediate_size
  //    (top_k_experts per token) beside its dense MLP (counted as an always-on shared expert), a router (proj hidden x
  //    E; scale hidden and per_expert_scale E) and 3 more norms (post_feedforward_layernorm_1/_2,
  //    pre_feedforward_layernorm_2).
  void read_gemma_layers() {
    read_attention();
    std::vector<i64> widths;
    if (t.has("intermediate_size") && t.raw()["intermediate_size"].is_array()) {
      widths = t.int_list("intermediate_size", 1, kMaxDim);
      if ((i64)widths.size() != layers)
        t.fail("intermediate_size", "has " + std::to_string(widths.size()) + " entries but num_hidden_layers is " + std::to_string(layers),
               "give one width per layer, or one for all");
    } else {
      widths.assign(static_cast<size_t>(layers), need_inter());
    }
    const bool moe = fam == Family::gemma4 && t.bool_or("enable_moe_block", false);
    i64 experts = 0, active = 0, expert_width = 0;
    if (moe) {
      experts = t.get_int("num_experts", 1, kMaxExperts);
      active = t.get_int("top_k_experts", 1, kMaxExperts);
      if (active > experts)
        t.fail("top_k_experts", std::to_string(active) + " experts per token exceeds " + std::to_string(experts) + " experts",
               "fix the expert counts");
      expert_width = t.get_int_any({"moe_intermediate_size", "expert_intermediate_size"}, 1, kMaxDim);
    }
    const bool ab = t.bool_or("attention_bias", false);
    for (i64 i = 0; i < layers; ++i) {
      Layer l = attention_layer();
      l.intermediate = widths[static_cast<size_t>(i)];
      l.qkv_bias = l.o_bias = ab;
      l.norms = 4;  // input, post_attention, pre_feedforward, post_feedforward
      l.qk_norm = true;
      if (moe) {
        moe_layer(l, experts, active, expert_width);
        l.shared_intermediate = l.intermediate;  // the dense MLP beside the experts
        l.intermediate = 0;
        l.router_bias = true;                    // per_expert_scale: one per expert
        l.side_vector = hidden;                  // the router's scale
        l.norms += 3;
      }
      m.layers.push_back(l);
    }
    tie(true);
  }

  // After the windows (layer_types or the family's pattern):
  //  - Gemma 4 forces its last layer to full attention (Gemma4TextConfig.__post_init__); its full-attention layers take
  //    head_dim global_head_dim (default 512) and, with attention_k_eq_v, num_global_key_value_heads KV heads and no
  //    v_proj (V is k_proj's output; it is cached apart all the same: K after k_norm and RoPE, V after v_norm);
  //  - KV sharing: the last num_kv_shared_layers layers keep no cache of their own; each reads the cache of the last
  //    earlier layer of its type (Gemma3nTextAttention / Gemma4TextAttention; vLLM kv_sharing_target_layer_name,
  //    which allocates nothing for them; llama.cpp n_layer_kv_from_start). Gemma 4's have no k/v projections
  //    (use_double_wide_mlp: a doubled MLP instead); Gemma 3n's keep theirs, unused;
  //  - per-layer embeddings, hidden_size_per_layer_input P > 0: embed_tokens_per_layer vocab_size_per_layer_input x
  //    (layers x P); per_layer_model_projection hidden x (layers x P) and its norm P; per layer per_layer_input_gate
  //    hidden x P, per_layer_projection P x hidden and post_per_layer_input_norm hidden;
  //  - Gemma 3n per layer: AltUp of altup_num_inputs n (correct_output_scale and router_norm hidden each, modality_router
  //    hidden x n, correction_coefs n x n, prediction_coefs n x n^2) and Laurel of laurel_rank r (linear_left hidden x
  //    r, linear_right r x hidden, post_laurel_norm hidden); altup_projections and altup_unembed_projections, 2 (n - 1)
  //    matrices of hidden x hidden, at model level.
  void read_gemma_ple() {
    const bool g4 = fam == Family::gemma4;
    if (g4) {
      Layer& last = m.layers.back();
      if (last.kv != KvKind::full) {
        last.kv = KvKind::full;
        last.window = 0;
        m.notes.push_back("gemma4: the last layer is full attention whatever layer_types says (Gemma4TextConfig)");
      }
      const i64 global_dim = t.int_or("global_head_dim", 512, 1, kMaxDim);
      const bool k_eq_v = t.bool_or("attention_k_eq_v", false);
      const i64 global_kv = k_eq_v && t.has("num_global_key_value_heads") && !t.raw()["num_global_key_value_heads"].is_null()
                                ? t.get_int("num_global_key_value_heads", 1, kMaxHeads) : kv_heads;
      if (heads % global_kv != 0)
        t.fail("num_global_key_value_heads", "num_attention_heads " + std::to_string(heads) + " is not divisible by " + std::to_string(global_kv),
               "fix the head counts");
      for (Layer& l : m.layers)
        if (l.kv == KvKind::full) {
          l.k_head_dim = l.v_head_dim = global_dim;
          l.kv_heads = global_kv;
          if (k_eq_v) l.kv_projections = 1;
        }
    }
    const i64 shared = t.int_or("num_kv_shared_layers", 0, 0, kMaxLayers);
    if (shared >= layers)
      t.fail("num_kv_shared_layers", std::to_string(shared) + " is not below num_hidden_layers " + std::to_string(layers),
             "leave at least one layer with its own cache");
    const i64 first = layers - shared;
    if (const i64 i = share_kv_from(m.layers, first, g4); i >= 0) {
      const char* kind = kv_kind_name(m.layers[static_cast<size_t>(i)].kv);
      t.fail("num_kv_shared_layers", "layer " + std::to_string(i) + " (" + kind + ") would reuse the cache of an earlier " + kind +
                                         " layer, and layers 0-" + std::to_string(first - 1) + " have none",
             "lower num_kv_shared_layers or fix layer_types");
    }
    if (g4 && t.bool_or("use_double_wide_mlp", false))
      for (i64 i = first; i < layers; ++i) {
        Layer& l = m.layers[static_cast<size_t>(i)];
        (l.mlp == MlpKind::moe ? l.shared_intermediate : l.intermediate) *= 2;
      }
    if (shared > 0)
      m.notes.push_back("num_kv_shared_layers = " + std::to_string(shared) + ": layers " + std::to_string(first) + "-" + std::to_string(layers - 1) +
                        " read the cache of the last earlier layer of their type and keep none");
    if (const i64 p = t.int_or("hidden_size_per_layer_input", 0, 0, kMaxDim); p > 0)
      add_per_layer_embeddings(m, t.int_or("vocab_size_per_layer_input", m.vocab, 1, kMaxVocab), p);
    if (!g4) {
      add_altup_laurel(m, t.int_or("altup_num_inputs", 4, 1, 64), t.int_or("laurel_rank", 64, 0, kMaxDim));
      if (root.has("vision_config") || root.has("audio_config"))
        m.notes.push_back("gemma3n: the vision (MobileNet-V5) and audio towers are not counted");
    } else if (root.has("audio_config") && !root.raw()["audio_config"].is_null()) {
      m.notes.push_back("gemma4: the audio tower is not counted");
    }
  }

  // modeling_falcon: multi_query without new_decoder_architecture means ONE KV head, whatever
  // num_kv_heads says; new_decoder_architecture uses num_kv_heads. query_key_value packs q, k, v.
  void read_falcon() {
    heads = t.get_int_any({"num_attention_heads", "n_head"}, 1, kMaxHeads);
    const bool new_arch = t.bool_or("new_decoder_architecture", false);
    const bool mq = t.bool_or("multi_query", true);
    if (new_arch) kv_heads = t.get_int_any({"num_kv_heads", "n_head_kv"}, 1, kMaxHeads);
    else kv_heads = mq ? 1 : heads;
    if (!new_arch && mq && t.has("num_kv_heads") && t.get_int("num_kv_heads", 1, kMaxHeads) != 1)
      m.notes.push_back("falcon: multi_query=true without new_decoder_architecture: 1 KV head (num_kv_heads ignored)");
    if (heads % kv_heads != 0) t.fail("num_kv_heads", "num_attention_heads not divisible by KV heads", "fix the head counts");
    if (hidden % heads != 0) t.fail("hidden_size", "not divisible by num_attention_heads", "fix hidden_size");
    head_dim = t.int_or("head_dim", hidden / heads, 1, kMaxDim);
    if (inter == 0) inter = t.int_or("ffn_hidden_size", 4 * hidden, 1, kMaxDim);
    const bool bias = t.bool_or("bias", false);
    const bool parallel = t.bool_or("parallel_attn", true);
    const int norms = new_arch ? int(t.int_or("num_ln_in_parallel_attn", 2, 1, 2)) : (parallel ? 1 : 2);
    for (i64 i = 0; i < layers; ++i) {
      Layer l = attention_layer();
      l.mlp = MlpKind::plain;
      l.qkv_bias = l.o_bias = l.mlp_bias = bias;
      l.norms = norms;
      m.layers.push_back(l);
    }
    m.norm = NormKind::layer;
    tie(true);
  }

  // modeling_gpt2 / gpt_bigcode: learned positions, LayerNorm, biases everywhere, plain GELU MLP
  // (n_inner, default 4*n_embd); bigcode multi_query -> 1 KV head.
  void read_gpt2() {
    heads = t.get_int_any({"n_head", "num_attention_heads"}, 1, kMaxHeads);
    kv_heads = (fam == Family::gpt_bigcode && t.bool_or("multi_query", true)) ? 1 : heads;
    if (hidden % heads != 0) t.fail("n_embd", "not divisible by n_head", "fix n_embd");
    head_dim = hidden / heads;
    if (inter == 0) inter = 4 * hidden;
    for (i64 i = 0; i < layers; ++i) {
      Layer l = attention_layer();
      l.mlp = MlpKind::plain;
      l.qkv_bias = l.o_bias = l.mlp_bias = true;
      m.layers.push_back(l);
    }
    m.norm = NormKind::layer;
    m.learned_positions = m.max_context;
    if (m.learned_positions == 0) t.fail("n_positions", "missing; expected integer >= 1", "add it to the config");
    tie(true);
  }

  // modeling_gpt_neox: fused qkv and dense with bias (attention_bias, default true), plain MLP with
  // bias, LayerNorm, untied embed_out. modeling_gptj: the same block without attention biases,
  // n_inner null = 4 x n_embd.
  void read_neox(bool gptj = false) {
    read_attention();
    if (gptj && inter == 0) inter = 4 * hidden;
    need_inter();
    const bool ab = !gptj && t.bool_or("attention_bias", true);
    for (i64 i = 0; i < layers; ++i) {
      Layer l = attention_layer();
      l.mlp = MlpKind::plain;
      l.qkv_bias = l.o_bias = ab;
      l.mlp_bias = true;
      m.layers.push_back(l);
    }
    m.norm = NormKind::layer;
    tie(false);
  }

  // modeling_deepseek_v2/v3: MLA attention (latent cached), first_k_dense_replace dense layers,
  // then MoE every moe_layer_freq layers with n_shared_experts shared experts.
  void read_deepseek() {
    heads = t.get_int("num_attention_heads", 1, kMaxHeads);
    kv_heads = t.int_or("num_key_value_heads", heads, 1, kMaxHeads);
    const i64 kv_lora = t.get_int("kv_lora_rank", 1, kMaxDim);
    // DeepSeek-V3.2 sparse attention (DSA): its model_type, or the indexer's keys on another (GLM-5 says glm_moe_dsa);
    // a deepseek_v32 config without them is refused by the index_* reads below, not read as V3's dense MLA
    m.sparse_mla = t.has("index_topk") || m.model_type == "deepseek_v32";
    const i64 q_lora = t.int_or("q_lora_rank", 0, 0, kMaxDim);
    const i64 nope = t.get_int("qk_nope_head_dim", 0, kMaxDim);
    const i64 rope = t.get_int("qk_rope_head_dim", 0, kMaxDim);
    const i64 v_dim = t.get_int("v_head_dim", 1, kMaxDim);
    need_inter();
    const i64 experts = t.int_or("n_routed_experts", 0, 0, kMaxExperts);
    const i64 first_dense = t.int_or("first_k_dense_replace", 0, 0, kMaxLayers);
    const i64 freq = t.int_or("moe_layer_freq", 1, 1, kMaxLayers);
    const bool score_bias = t.string_or("topk_method", "") == "noaux_tc";
    // DeepSeek-V3.2 (modeling_deepseek_v32 / vLLM deepseek_v2.py Indexer): every layer's lightning indexer
    const i64 index_dim = m.sparse_mla ? t.get_int("index_head_dim", 1, kMaxDim) : 0;
    const i64 index_heads = m.sparse_mla ? t.get_int("index_n_heads", 1, kMaxHeads) : 0;
    const i64 index_topk = m.sparse_mla ? t.get_int("index_topk", 1, kMaxTokens) : 0;
    for (i64 i = 0; i < layers; ++i) {
      Layer l;
      l.kv = KvKind::mla_latent;
      l.indexer_head_dim = index_dim;
      l.indexer_heads = index_heads;
      l.indexer_topk = index_topk;
      l.mixer = Mixer::mla;
      l.q_heads = heads;
      l.kv_heads = 1;
      l.kv_lora_rank = kv_lora;
      l.q_lora_rank = q_lora;
      l.qk_nope_head_dim = nope;
      l.qk_rope_head_dim = rope;
      l.k_head_dim = kv_lora + rope;
      l.v_head_dim = v_dim;
      l.mlp = MlpKind::gated;
      l.intermediate = inter;
      if (experts > 0 && i >= first_dense && i % freq == 0) {
        moe_layer(l, experts, t.get_int("num_experts_per_tok", 1, kMaxExperts), t.get_int("moe_intermediate_size", 1, kMaxDim));
        l.shared_intermediate = mul(t.int_or("n_shared_experts", 0, 0, kMaxExperts), l.expert_intermediate);
        l.router_score_bias = score_bias;
      }
      m.layers.push_back(l);
    }
    read_mtp();
    tie(false);
  }

  // modeling_glm4_moe (GLM-4.5 / 4.6): GQA attention with explicit head_dim, q/k/v biases when attention_bias (o_proj
  // none), q/k RMSNorm when use_qk_norm; the first first_k_dense_replace layers dense MLPs of intermediate_size, the
  // rest MoE (n_routed_experts of moe_intermediate_size, top num_experts_per_tok, n_shared_experts shared of the same
  // width, a sigmoid router with an e_score_correction_bias) as in DeepSeek-V3; num_nextn_predict_layers MTP layers
  void read_glm4_moe() {
    read_attention();
    need_inter();
    const bool ab = t.bool_or("attention_bias", false);
    // dots1 (dots.llm1): the same layout with Qwen3's per-head q/k RMSNorms on every layer (modeling_dots1)
    const bool qk_norm = m.model_type == "dots1" || t.bool_or("use_qk_norm", false);
    const i64 experts = t.get_int("n_routed_experts", 1, kMaxExperts);
    const i64 active = t.get_int("num_experts_per_tok", 1, kMaxExperts);
    const i64 expert_inter = t.get_int("moe_intermediate_size", 1, kMaxDim);
    const i64 shared = t.int_or("n_shared_experts", 0, 0, kMaxExperts);
    const i64 first_dense = t.int_or("first_k_dense_replace", 0, 0, kMaxLayers);
    for (i64 i = 0; i < layers; ++i) {
      Layer l = attention_layer();
      l.qkv_bias = ab;
      l.qk_norm = qk_norm;
      if (i >= first_dense) {
        moe_layer(l, experts, active, expert_inter);
        l.shared_intermediate = mul(shared, expert_inter);
        l.router_score_bias = true;
      }
      m.layers.push_back(l);
    }
    read_mtp();
    tie(false);
  }

  // modeling_llama4: MoE every interleave_moe_layer_step layers (or the listed moe_layers); each MoE
  // layer has num_local_experts routed experts of intermediate_size plus one shared expert of the
  // same width; dense layers use intermediate_size_mlp. QK norm is an L2 norm without weights.
  void read_llama4() {
    read_attention();
    const i64 e = t.get_int("num_local_experts", 1, kMaxExperts);
    const i64 k = t.int_or("num_experts_per_tok", 1, 1, kMaxExperts);
    const i64 ei = need_inter();
    const i64 dense_inter = t.int_or("intermediate_size_mlp", ei, 1, kMaxDim);
    const i64 step = t.int_or("interleave_moe_layer_step", 1, 1, kMaxLayers);
    auto moe_list = t.int_list("moe_layers", 0, layers - 1);
    for (i64 i = 0; i < layers; ++i) {
      Layer l = attention_layer();
      l.qkv_bias = l.o_bias = t.bool_or("attention_bias", false);
      const bool is_moe = moe_list.empty() ? ((i + 1) % step == 0)
                                           : std::find(moe_list.begin(), moe_list.end(), i) != moe_list.end();
      if (is_moe) {
        moe_layer(l, e, k, ei);
        l.shared_intermediate = ei;
      } else {
        l.intermediate = dense_inter;
      }
      m.layers.push_back(l);
    }
    tie(false);
  }

  // absent, null or "auto": the size the config class derives
  bool auto_size(const std::string& key) const {
    return !t.has(key) || (t.raw()[key].is_string() && t.raw()[key].get<std::string>() == "auto");
  }

  i64 dt_rank_of(const std::string& key, i64 h) {
    return auto_size(key) ? (h + 15) / 16 : t.get_int(key, 1, kMaxDim);  // "auto": ceil(hidden / 16)
  }

  Layer mamba1_layer(i64 d_inner, i64 d_state, i64 d_conv, i64 dt_rank) const {
    Layer l;
    l.kv = KvKind::ssm;
    l.mixer = Mixer::mamba1;
    l.d_inner = d_inner;
    l.d_state = d_state;
    l.d_conv = d_conv;
    l.dt_rank = dt_rank;
    // cache: conv (d_conv - 1) x d_inner and ssm d_inner x d_state (vLLM MambaStateShapeCalculator)
    l.conv_state_elems = mul(d_conv - 1, d_inner);
    l.ssm_state_elems = mul(d_inner, d_state);
    l.mlp = MlpKind::none;
    l.norms = 1;
    return l;
  }

  Layer mamba2_layer(i64 nheads, i64 hdim, i64 d_state, i64 groups, i64 d_conv) const {
    Layer l;
    l.kv = KvKind::ssm;
    l.mixer = Mixer::mamba2;
    l.ssm_heads = nheads;
    l.d_inner = mul(nheads, hdim);
    l.d_state = d_state;
    l.n_groups = groups;
    l.d_conv = d_conv;
    const i64 conv_dim = add(l.d_inner, mul(2, mul(groups, d_state)));
    // cache: conv (d_conv - 1) x conv_dim and ssm heads x head_dim x d_state (vLLM mamba2 state shapes)
    l.conv_state_elems = mul(d_conv - 1, conv_dim);
    l.ssm_state_elems = mul(mul(nheads, hdim), d_state);
    l.mlp = MlpKind::none;
    l.norms = 1;
    return l;
  }

  // modeling_jamba: attention where i % attn_layer_period == attn_layer_offset, Mamba elsewhere;
  // MoE where i % expert_layer_period == expert_layer_offset (num_experts > 1).
  void read_jamba() {
    read_attention();
    need_inter();
    // an offset at or past its period never matches: no attention (or no MoE) layer at all
    const i64 ap = t.int_or("attn_layer_period", 8, 1, kMaxLayers), ao = t.int_or("attn_layer_offset", 4, 0, ap - 1);
    const i64 ep = t.int_or("expert_layer_period", 2, 1, kMaxLayers), eo = t.int_or("expert_layer_offset", 1, 0, ep - 1);
    const i64 e = t.int_or("num_experts", 16, 1, kMaxExperts), k = t.int_or("num_experts_per_tok", 2, 1, kMaxExperts);
    const i64 d_inner = mul(t.int_or("mamba_expand", 2, 1, 64), hidden);
    const i64 d_state = t.int_or("mamba_d_state", 16, 1, kMaxDim), d_conv = t.int_or("mamba_d_conv", 4, 2, 1024);
    const i64 dt_rank = dt_rank_of("mamba_dt_rank", hidden);
    for (i64 i = 0; i < layers; ++i) {
      Layer l;
      if (i % ap == ao) {
        l = attention_layer();
      } else {
        l = mamba1_layer(d_inner, d_state, d_conv, dt_rank);
        l.conv_bias = t.bool_or("mamba_conv_bias", true);
        l.proj_bias = t.bool_or("mamba_proj_bias", false);
        l.mamba_inner_norms = true;
      }
      l.norms = 2;
      l.mlp = MlpKind::gated;
      l.intermediate = inter;
      if (e > 1 && i % ep == eo) moe_layer(l, e, k, inter);
      m.layers.push_back(l);
    }
    tie(false);
  }

  // modeling_nemotron_h: hybrid_override_pattern, one char per layer: M = Mamba2, * = attention,
  // - = MLP (relu^2, up/down), E = MoE. Each block has one RMSNorm.
  void read_nemotron_h() {
    const std::string pat = t.get_string("hybrid_override_pattern");
    if ((i64)pat.size() != layers)
      t.fail("hybrid_override_pattern", "has " + std::to_string(pat.size()) + " characters but num_hidden_layers is " +
                                            std::to_string(layers), "make them agree");
    read_attention();
    const i64 mh = t.get_int("mamba_num_heads", 1, kMaxHeads), mhd = t.get_int("mamba_head_dim", 1, kMaxDim);
    const i64 ds = t.get_int("ssm_state_size", 1, kMaxDim), g = t.int_or("n_groups", 1, 1, kMaxHeads);
    const i64 dc = t.int_or("conv_kernel", 4, 2, 1024);
    for (i64 i = 0; i < layers; ++i) {
      Layer l;
      switch (pat[i]) {
        case 'M':
          l = mamba2_layer(mh, mhd, ds, g, dc);
          l.conv_bias = t.bool_or("use_conv_bias", true);
          l.proj_bias = t.bool_or("use_bias", false);
          break;
        case '*':
          l = attention_layer();
          l.qkv_bias = l.o_bias = t.bool_or("attention_bias", false);
          l.mlp = MlpKind::none;
          break;
        case '-':
          l.kv = KvKind::none;
          l.mixer = Mixer::none;
          l.mlp = MlpKind::plain;
          l.intermediate = need_inter();
          l.mlp_bias = t.bool_or("mlp_bias", false);
          break;
        case 'E':
          l.kv = KvKind::none;
          l.mixer = Mixer::none;
          moe_layer(l, t.get_int("n_routed_experts", 1, kMaxExperts), t.get_int("num_experts_per_tok", 1, kMaxExperts),
                    t.get_int("moe_intermediate_size", 1, kMaxDim));
          l.shared_intermediate = t.int_or("moe_shared_expert_intermediate_size", 0, 0, kMaxDim);
          break;
        default:
          t.fail("hybrid_override_pattern", std::string("unknown block '") + pat[i] + "' at layer " + std::to_string(i),
                 "use M, *, - or E");
      }
      l.norms = 1;
      m.layers.push_back(l);
    }
    tie(false);
  }

  // modeling_qwen3_next: layer_types, or every full_attention_interval-th layer full attention (gated
  // q_proj, q/k norms), the rest Gated DeltaNet with a constant recurrent state; MoE with a shared expert.
  void read_qwen3_next() {
    read_attention();
    need_inter();
    const i64 interval = t.int_or("full_attention_interval", 4, 1, kMaxLayers);
    const auto types = t.string_list("layer_types");
    const i64 kh = t.get_int("linear_num_key_heads", 1, kMaxHeads), vh = t.get_int("linear_num_value_heads", 1, kMaxHeads);
    const i64 kd = t.get_int("linear_key_head_dim", 1, kMaxDim), vd = t.get_int("linear_value_head_dim", 1, kMaxDim);
    const i64 dc = t.int_or("linear_conv_kernel_dim", 4, 2, 1024);
    const i64 e = t.get_int("num_experts", 1, kMaxExperts), k = t.get_int("num_experts_per_tok", 1, kMaxExperts);
    const i64 mi = t.get_int("moe_intermediate_size", 1, kMaxDim);
    const i64 shared = t.int_or("shared_expert_intermediate_size", 0, 0, kMaxDim);
    const i64 step = t.int_or("decoder_sparse_step", 1, 1, kMaxLayers);
    const auto dense = t.int_list("mlp_only_layers", 0, layers - 1);
    for (i64 i = 0; i < layers; ++i) {
      const bool full = types.size() == size_t(layers) ? types[i] == "full_attention" : (i + 1) % interval == 0;
      Layer l = attention_layer();
      if (full) {
        l.q_gate = true;
        l.qk_norm = true;
      } else {
        l.kv = KvKind::ssm;
        l.mixer = Mixer::gated_deltanet;
        l.lin_k_heads = kh;
        l.lin_v_heads = vh;
        l.lin_k_dim = kd;
        l.lin_v_dim = vd;
        l.d_conv = dc;
        // state: conv (d_conv - 1) x (2*key_dim + value_dim), recurrent v_heads x k_dim x v_dim
        l.conv_state_elems = mul(dc - 1, add(mul(2, mul(kh, kd)), mul(vh, vd)));
        l.ssm_state_elems = mul(vh, mul(kd, vd));
      }
      const bool is_dense = std::find(dense.begin(), dense.end(), i) != dense.end();
      if (!is_dense && (i + 1) % step == 0) {
        moe_layer(l, e, k, mi);
        l.shared_intermediate = shared;
        l.shared_expert_gate = shared > 0;
      }
      m.layers.push_back(l);
    }
    tie(false);
    // the checkpoint ships mtp.* (one full-attention MoE layer + fc); vLLM qwen3_next_mtp.py reads num_nextn_predict_layers, default 1
    m.mtp_layers = t.int_or("num_nextn_predict_layers", 1, 0, kMaxLayers);
  }

  // A per-layer list of mixer names (layer_types, or its alias) checked against the names the family accepts.
  std::vector<std::string> mixer_list(const char* key, std::initializer_list<const char*> allowed) {
    auto types = t.string_list(key);
    if ((i64)types.size() != layers)
      t.fail(key, "has " + std::to_string(types.size()) + " entries but num_hidden_layers is " + std::to_string(layers), "make them agree");
    std::string names;
    for (const char* a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
    for (size_t i = 0; i < types.size(); ++i)
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return types[i] == a; }))
        throw InputError(t.where(key) + "/" + std::to_string(i), "unknown layer type \"" + types[i] + "\" for model_type '" + m.model_type + "'",
                         "use " + names);
    return types;
  }

  // mamba_d_head, or "auto" (absent too): the Mamba2 width / mamba_n_heads; the config classes of Granite 4.0-H and
  // Falcon-H1 require mamba_n_heads x mamba_d_head to be that width
  i64 mamba_head_dim(i64 width, i64 heads, const std::string& width_name) {
    const i64 hd = auto_size("mamba_d_head") ? width / heads : t.get_int("mamba_d_head", 1, kMaxDim);
    if (mul(heads, hd) != width)
      t.fail("mamba_n_heads", "mamba_n_heads x mamba_d_head is " + std::to_string(mul(heads, hd)) + " but " + width_name + " is " +
                                  std::to_string(width), "make mamba_n_heads x mamba_d_head equal " + width_name);
    return hd;
  }

  // modeling_granitemoe / modeling_granitemoeshared (Granite 3.x MoE): llama attention (head_dim = hidden / heads,
  // biases with attention_bias) and on every layer num_local_experts experts of intermediate_size (input_linear
  // [E, 2I, H] gate and up, output_linear [E, H, I]) routed top num_experts_per_tok by a bias-free router [E, H];
  // granitemoeshared adds an always-on gated MLP of shared_intermediate_size (0: none). tie_word_embeddings
  // defaults to false (configuration_granitemoe.py).
  void read_granitemoe() {
    llama_like(false);
    const i64 e = t.int_or("num_local_experts", 8, 1, kMaxExperts), k = t.int_or("num_experts_per_tok", 2, 1, kMaxExperts);
    const i64 shared = t.int_or("shared_intermediate_size", 0, 0, kMaxDim);
    for (auto& l : m.layers) {
      moe_layer(l, e, k, inter);
      l.shared_intermediate = shared;
    }
    tie(false);
  }

  // modeling_granitemoehybrid (Granite 4.0 / 4.0-H): layer_types (alias layers_block_type) names each layer "mamba"
  // or "attention" (absent: every layer Mamba, GraniteMoeHybridConfig.layers_block_type). Attention as granitemoe; the
  // Mamba2 mixer is mamba_expand x hidden wide (the config requires mamba_n_heads x mamba_d_head to equal it; "auto"
  // head dim = that width / heads), mamba_n_groups B/C groups of mamba_d_state, a conv of mamba_d_conv taps. Every
  // layer has input and post-attention RMSNorms, a gated shared_mlp of shared_intermediate_size, and with
  // num_local_experts > 0 the granitemoe experts beside it (0 experts: the shared MLP is the dense MLP; Granite
  // 4.0-H-Micro). vLLM sizes the Mamba state as mamba_utils.py mamba2_state_shape from the same keys.
  void read_granitemoehybrid() {
    read_attention();
    std::vector<std::string> types;
    if (const auto key = t.first_present({"layer_types", "layers_block_type"})) {
      types = mixer_list(key->c_str(), {"mamba", "attention"});
    } else {
      types.assign(size_t(layers), "mamba");
      m.notes.push_back("layer_types absent: every layer Mamba (GraniteMoeHybridConfig.layers_block_type)");
    }
    const i64 e = t.int_or("num_local_experts", 8, 0, kMaxExperts);
    const i64 k = t.int_or("num_experts_per_tok", 2, 0, kMaxExperts);
    const i64 shared = t.int_or("shared_intermediate_size", 1024, 0, kMaxDim);
    if (e > 0) need_inter();
    if (e > 0 && k < 1) t.fail("num_experts_per_tok", "is 0 with " + std::to_string(e) + " experts", "give the experts each token is routed to");
    const bool ab = t.bool_or("attention_bias", false);
    const bool any_mamba = std::find(types.begin(), types.end(), "mamba") != types.end();
    i64 nh = 0, hd = 0, ds = 0, g = 0, dc = 0;
    if (any_mamba) {  // granite-4.0-micro (all attention) ships Mamba keys that fail this check: read them only when used
      nh = t.int_or("mamba_n_heads", 128, 1, kMaxHeads);
      hd = mamba_head_dim(mul(t.int_or("mamba_expand", 2, 1, 64), hidden), nh, "mamba_expand x hidden_size");
      ds = t.int_or("mamba_d_state", 256, 1, kMaxDim);
      g = t.int_or("mamba_n_groups", 1, 1, kMaxHeads);
      dc = t.int_or("mamba_d_conv", 4, 2, 1024);
    }
    for (i64 i = 0; i < layers; ++i) {
      Layer l;
      if (types[size_t(i)] == "mamba") {
        l = mamba2_layer(nh, hd, ds, g, dc);
        l.conv_bias = t.bool_or("mamba_conv_bias", true);
        l.proj_bias = t.bool_or("mamba_proj_bias", false);
      } else {
        l = attention_layer();
        l.qkv_bias = l.o_bias = ab;
      }
      l.norms = 2;
      if (e > 0) {
        moe_layer(l, e, k, inter);
        l.shared_intermediate = shared;
      } else {
        l.mlp = shared > 0 ? MlpKind::gated : MlpKind::none;
        l.intermediate = shared;
      }
      m.layers.push_back(l);
    }
    tie(false);
  }

  // LFM2's feed-forward width (vLLM models/lfm2.py Lfm2MLP, llama.cpp convert_hf_to_gguf LFM2): block_ff_dim (else
  // intermediate_size); with block_auto_adjust_ff_dim (default true) int(2f/3), times block_ffn_dim_multiplier
  // (default 1), rounded up to block_multiple_of (default 256). LFM2-1.2B: 12288 -> 8192; LFM2-350M: 6656 -> 4608.
  i64 lfm2_ff_width() {
    i64 f = t.has("block_ff_dim") ? t.get_int("block_ff_dim", 1, kMaxDim) : need_inter();
    if (!t.bool_or("block_auto_adjust_ff_dim", true)) return f;
    f = 2 * f / 3;
    if (const auto mult = t.opt_number("block_ffn_dim_multiplier")) {
      if (!(*mult > 0 && *mult <= 64)) t.fail("block_ffn_dim_multiplier", "must be in (0, 64]", "fix the multiplier");
      f = static_cast<i64>(*mult * static_cast<double>(f));
    }
    const i64 multiple = t.int_or("block_multiple_of", 256, 1, kMaxDim);
    return mul(ceil_div(std::max<i64>(f, 1), multiple), multiple);
  }

  // modeling_lfm2 / modeling_lfm2_moe (Liquid LFM2): layer_types names each layer "conv" or "full_attention"
  // (LFM2: else the full_attn_idxs listed, else every layer attention, Lfm2Config). Attention layers are GQA with
  // per-head q/k RMSNorms and no biases; conv layers a short convolution over conv_dim (default hidden_size) channels
  // with conv_L_cache taps, whose per-sequence state is (conv_L_cache - 1) x conv_dim (vLLM mamba_utils.py
  // short_conv_state_shape; llama.cpp n_embd_r). Every layer: operator_norm, ffn_norm and a SwiGLU MLP
  // (lfm2_ff_width); LFM2-MoE keeps intermediate_size as is on its first num_dense_layers layers and elsewhere routes
  // num_experts experts of moe_intermediate_size top num_experts_per_tok with a sigmoid router and an expert_bias.
  // Tied embeddings by default (tie_word_embeddings, or the original key tie_embedding).
  void read_lfm2() {
    read_attention();
    const bool moe = fam == Family::lfm2_moe;
    std::vector<std::string> types;
    if (t.has("layer_types")) {
      types = mixer_list("layer_types", {"conv", "full_attention"});
    } else if (moe) {
      t.fail("layer_types", "missing", "add layer_types (\"conv\" or \"full_attention\" per layer)");
    } else {
      const auto attn = t.int_list("full_attn_idxs", 0, layers - 1);
      types.assign(size_t(layers), t.has("full_attn_idxs") ? "conv" : "full_attention");
      for (i64 i : attn) types[size_t(i)] = "full_attention";
      if (!t.has("full_attn_idxs")) m.notes.push_back("layer_types and full_attn_idxs absent: every layer attention (Lfm2Config)");
    }
    const i64 conv_dim = t.int_or("conv_dim", hidden, 1, kMaxDim);
    const i64 taps = t.int_or("conv_L_cache", 3, 1, 1024);
    const bool conv_bias = t.bool_or("conv_bias", false);
    const i64 ff = moe ? need_inter() : lfm2_ff_width();
    const i64 dense_layers = moe ? t.int_or("num_dense_layers", 2, 0, kMaxLayers) : layers;
    for (i64 i = 0; i < layers; ++i) {
      Layer l = attention_layer();
      if (types[size_t(i)] == "full_attention") {
        l.qk_norm = true;
      } else {
        l.kv = KvKind::ssm;
        l.mixer = Mixer::short_conv;
        l.q_heads = l.kv_heads = l.k_head_dim = l.v_head_dim = 0;
        l.d_inner = conv_dim;
        l.d_conv = taps;
        l.conv_bias = conv_bias;
        l.conv_state_elems = mul(taps - 1, conv_dim);
      }
      l.intermediate = ff;
      if (i >= dense_layers) {
        moe_layer(l, t.int_or("num_experts", 32, 1, kMaxExperts), t.int_or("num_experts_per_tok", 4, 1, kMaxExperts),
                  t.int_or("moe_intermediate_size", 1792, 1, kMaxDim));
        l.router_score_bias = t.bool_or("use_expert_bias", true);
      }
      m.layers.push_back(l);
    }
    m.tied_embeddings = t.bool_or("tie_embedding", t.bool_or("tie_word_embeddings", true));  // Lfm2Config: tie_embedding wins
  }

  // modeling_falcon_h1 (Falcon-H1): every decoder layer runs GQA attention (head_dim from the config, which is not
  // hidden / heads in the released models) and a Mamba2 mixer side by side off one input RMSNorm, then a SwiGLU MLP
  // of intermediate_size after pre_ff_layernorm. The Mamba2 width is mamba_d_ssm (else mamba_expand x hidden), which
  // must equal mamba_n_heads x mamba_d_head ("auto": width / heads); its gated RMSNorm exists only with
  // mamba_rms_norm. vLLM (models/falcon_h1.py) registers an attention layer and a Mamba layer per decoder layer, and
  // llama.cpp keeps a KV cache and a recurrent state on every layer: each decoder layer is two entries here, the
  // Mamba2 one joining the attention one. Untied embeddings by default; the muP multipliers change no shape.
  void read_falcon_h1() {
    read_attention();
    need_inter();
    const i64 d_ssm = t.opt_int("mamba_d_ssm", 1, kMaxDim).value_or(mul(t.int_or("mamba_expand", 2, 1, 64), hidden));
    const i64 nh = t.int_or("mamba_n_heads", 128, 1, kMaxHeads);
    const i64 hd = mamba_head_dim(d_ssm, nh, "the Mamba width (mamba_d_ssm)");
    const i64 ds = t.int_or("mamba_d_state", 256, 1, kMaxDim), g = t.int_or("mamba_n_groups", 1, 1, kMaxHeads);
    const i64 dc = t.int_or("mamba_d_conv", 4, 2, 1024);
    const bool ab = t.bool_or("attention_bias", false), mb = t.bool_or("mlp_bias", false);
    for (i64 i = 0; i < layers; ++i) {
      Layer a = attention_layer();
      a.qkv_bias = a.o_bias = ab;
      a.mlp = MlpKind::none;
      a.norms = 1;  // input_layernorm, shared with the Mamba branch
      Layer s = mamba2_layer(nh, hd, ds, g, dc);
      s.conv_bias = t.bool_or("mamba_conv_bias", true);
      s.proj_bias = t.bool_or("mamba_proj_bias", false);
      s.mamba_gated_norm = t.bool_or("mamba_rms_norm", false);
      s.mlp = MlpKind::gated;
      s.intermediate = inter;
      s.mlp_bias = mb;
      s.norms = 1;  // pre_ff_layernorm
      s.joins_previous = true;
      m.layers.push_back(a);
      m.layers.push_back(s);
    }
    tie(false);
  }

  // modeling_minimax_m2 (MiniMax-M2): GQA with an explicit head_dim (48 x 128 is twice the hidden size), no biases;
  // use_qk_norm with qk_norm_type "per_layer" is one RMSNorm over all of q (heads x head_dim) and one over all of k;
  // every layer routes num_local_experts gated experts of intermediate_size, top num_experts_per_tok, by a sigmoid
  // router with an e_score_correction_bias when use_routing_bias; shared_intermediate_size 0: no shared expert.
  // attn_type_list must be all 1 (full attention; 0 is MiniMax-M1's lightning attention). The num_mtp_modules MTP
  // layers are skipped by vLLM's loader and not counted. Untied embeddings by default.
  void read_minimax_m2() {
    llama_like(false);
    for (i64 a : t.int_list("attn_type_list", 0, 1))
      if (a != 1) t.fail("attn_type_list", "has a linear-attention layer (0)", "minimax_m2 layers are all full attention (1)");
    const i64 e = t.get_int_any({"num_local_experts", "num_experts"}, 1, kMaxExperts), k = t.get_int("num_experts_per_tok", 1, kMaxExperts);
    const bool qk = t.bool_or("use_qk_norm", true), whole = t.string_or("qk_norm_type", "per_layer") == "per_layer";
    const i64 shared = t.int_or("shared_intermediate_size", 0, 0, kMaxDim);
    const bool routing_bias = t.bool_or("use_routing_bias", false);
    for (auto& l : m.layers) {
      l.qk_norm = qk;
      l.qk_norm_whole = whole;
      moe_layer(l, e, k, inter);
      l.shared_intermediate = shared;
      l.router_score_bias = routing_bias;
    }
    tie(false);
  }

  // modeling_ernie4_5_moe (ERNIE-4.5 MoE): GQA (head_dim = hidden / heads unless given), biases on q/k/v/o and the MLPs
  // with use_bias; layer i routes moe_num_experts gated experts of moe_intermediate_size, top moe_k, when
  // (i + 1) % moe_layer_interval == 0 and moe_layer_start_index <= i <= moe_layer_end_index (-1 or absent: the last
  // layer), beside moe_num_shared_experts x moe_intermediate_size of shared expert, with a router correction bias
  // (moe_statics); the other layers are dense MLPs of intermediate_size. Tied embeddings by default.
  void read_ernie4_5_moe() {
    llama_like(false);
    const i64 e = t.int_or("moe_num_experts", 64, 1, kMaxExperts), k = t.int_or("moe_k", 6, 1, kMaxExperts);
    const i64 width = t.int_or("moe_intermediate_size", 1536, 1, kMaxDim);
    const i64 shared = mul(t.int_or("moe_num_shared_experts", 2, 0, kMaxExperts), width);
    const i64 start = t.int_or("moe_layer_start_index", 1, 0, kMaxLayers), step = t.int_or("moe_layer_interval", 1, 1, kMaxLayers);
    i64 end = t.int_or("moe_layer_end_index", -1, -1, kMaxLayers);
    if (end < 0) end = layers - 1;
    const bool bias = t.bool_or("use_bias", false);
    for (i64 i = 0; i < layers; ++i) {
      Layer& l = m.layers[size_t(i)];
      l.qkv_bias = l.o_bias = l.mlp_bias = bias;
      if ((i + 1) % step == 0 && i >= start && i <= end) {
        moe_layer(l, e, k, width);
        l.shared_intermediate = shared;
        l.router_score_bias = true;
      }
    }
    tie(true);
  }

  // modeling_olmoe (OLMoE): MHA/GQA without biases, q_norm over all of q and k_norm over all of k; every layer routes
  // num_experts gated experts of intermediate_size, top num_experts_per_tok, no shared expert. Untied by default.
  void read_olmoe() {
    llama_like(false);
    const i64 e = t.int_or("num_experts", 64, 1, kMaxExperts), k = t.int_or("num_experts_per_tok", 8, 1, kMaxExperts);
    for (auto& l : m.layers) {
      l.qk_norm = l.qk_norm_whole = true;
      moe_layer(l, e, k, inter);
    }
    tie(false);
  }

  // modeling_olmo2 / modeling_olmo3 (OLMo 2, Olmo 3): q_norm an RMSNorm over all of q (heads x head_dim), k_norm over all
  // of k; the two norms per layer come after attention and after the MLP (post_attention_layernorm,
  // post_feedforward_layernorm), a gated MLP, attention_bias (default false) on q/k/v/o. Olmo 3's sliding layers come
  // from its layer_types; without them, as Olmo3Config.__post_init__ derives them: sliding_window (default 4096) on the
  // layers where (i + 1) % 4 != 0. Untied embeddings by default.
  void read_olmo2() {
    llama_like(false);
    for (auto& l : m.layers) l.qk_norm = l.qk_norm_whole = true;
    tie(false);
    if (fam == Family::olmo3) periodic_windows(4);
  }

  // modeling_starcoder2 (StarCoder2): q/k/v/o and a plain MLP (c_fc hidden x I, c_proj I x hidden, gelu) with biases
  // when use_bias (default true); LayerNorms with weight and bias (input, post-attention, final). sliding_window, when
  // given, applies to every layer (vLLM starcoder2.py hands it to each Attention). Tied embeddings unless the config
  // says otherwise (Starcoder2Config sets no default: PretrainedConfig's true).
  void read_starcoder2() {
    llama_like(false);
    const bool bias = t.bool_or("use_bias", true);
    for (auto& l : m.layers) {
      l.qkv_bias = l.o_bias = l.mlp_bias = bias;
      l.mlp = MlpKind::plain;
    }
    m.norm = NormKind::layer;
    tie(true);
  }

  // modeling_nemotron (Nemotron-4, Minitron): a plain MLP (up_proj hidden x I, down_proj I x hidden, relu squared)
  // with mlp_bias, attention_bias on q/k/v/o (both default false), head_dim given or hidden / heads; LayerNorm1P norms
  // (weight and bias: input, post-attention, final). Untied embeddings by default.
  void read_nemotron() {
    llama_like(false);
    for (auto& l : m.layers) l.mlp = MlpKind::plain;
    m.norm = NormKind::layer;
    tie(false);
  }

  // modeling_phimoe (Phi-3.5-MoE): GQA with q/k/v/o biases when attention_bias; every layer routes num_local_experts
  // gated experts of intermediate_size, top num_experts_per_tok, by a router without bias; LayerNorms with weight and
  // bias (input, post-attention, final); lm_head_bias: a bias of vocab on the output layer.
  void read_phimoe() {
    llama_like(false);
    const i64 e = t.get_int("num_local_experts", 1, kMaxExperts), k = t.get_int("num_experts_per_tok", 1, kMaxExperts);
    for (auto& l : m.layers) moe_layer(l, e, k, inter);
    m.lm_head_bias = t.bool_or("lm_head_bias", false);
    m.norm = NormKind::layer;
    tie(false);
  }

  // modeling_dbrx (DBRX): d_model, n_heads, n_layers, max_seq_len at the top; KV heads in attn_config.kv_n_heads, the
  // experts in ffn_config (moe_num_experts gated experts w1 / v1 / w2 of ffn_hidden_size, top moe_top_k, a router
  // without bias) on every layer; fused Wqkv and out_proj without biases; LayerNorms without bias (norm_1, norm_2,
  // norm_f: weight only, as RMSNorm counts). Untied embeddings by default.
  void read_dbrx() {
    heads = t.get_int("n_heads", 1, kMaxHeads);
    const auto attn = t.object("attn_config");
    const auto ffn = t.object("ffn_config");
    if (!ffn) t.fail("ffn_config", "missing; expected an object with moe_num_experts, moe_top_k and ffn_hidden_size", "add it");
    kv_heads = attn ? attn->int_or("kv_n_heads", heads, 1, kMaxHeads) : heads;
    if (heads % kv_heads != 0)
      t.fail("attn_config", "n_heads " + std::to_string(heads) + " is not divisible by kv_n_heads " + std::to_string(kv_heads),
             "fix the head counts");
    if (hidden % heads != 0) t.fail("d_model", "d_model is not divisible by n_heads", "fix the sizes");
    head_dim = hidden / heads;
    inter = ffn->get_int("ffn_hidden_size", 1, kMaxDim);
    const i64 e = ffn->get_int("moe_num_experts", 1, kMaxExperts), k = ffn->get_int("moe_top_k", 1, kMaxExperts);
    for (i64 i = 0; i < layers; ++i) {
      Layer l = attention_layer();
      moe_layer(l, e, k, inter);
      m.layers.push_back(l);
    }
    tie(false);
  }

  // modeling_glm4 (GLM-4-0414): explicit head_dim, q/k/v biases with attention_bias (default true), o_proj without;
  // a gated MLP (fused gate_up_proj); four RMSNorms per layer (input, post_self_attn, post_attention, post_mlp).
  // Untied embeddings by default.
  void read_glm4() {
    llama_like(false);
    const bool ab = t.bool_or("attention_bias", true);
    for (auto& l : m.layers) {
      l.qkv_bias = ab;
      l.o_bias = false;
      l.norms = 4;
    }
    tie(false);
  }

  // ChatGLM2 / ChatGLM3 / GLM-4-9B-chat (chatglm, trust_remote_code; vLLM chatglm.py): num_layers, kv_channels as
  // head_dim, multi_query_group_num KV heads when multi_query_attention (else every head), ffn_hidden_size for a gated
  // MLP (dense_h_to_4h packs gate and up), padded_vocab_size; a fused query_key_value with a bias when add_qkv_bias or
  // add_bias_linear, dense and the MLP with biases when add_bias_linear; RMSNorm when rmsnorm (default true), else
  // LayerNorm; the final norm when post_layer_norm (default true). Untied output layer by default.
  void read_chatglm() {
    llama_like(false);
    if (!t.bool_or("multi_query_attention", false))
      for (auto& l : m.layers) l.kv_heads = l.q_heads;
    const bool linear_bias = t.bool_or("add_bias_linear", false), qkv_bias = t.bool_or("add_qkv_bias", false) || linear_bias;
    for (auto& l : m.layers) {
      l.qkv_bias = qkv_bias;
      l.o_bias = l.mlp_bias = linear_bias;
    }
    if (!t.bool_or("rmsnorm", true)) m.norm = NormKind::layer;
    m.final_norm = t.bool_or("post_layer_norm", true);
    tie(false);
  }

  // modeling_phi (Phi-1, Phi-1.5, Phi-2): attention and a plain MLP (fc1, fc2, gelu) side by side off one LayerNorm
  // (weight and bias), biases on q/k/v, dense, the MLP and the lm_head; a final LayerNorm; untied by default.
  // qk_layernorm's shared LayerNorms over head_dim count as weights only (their 2 x head_dim biases left out).
  void read_phi() {
    llama_like(false);
    const bool qk = t.bool_or("qk_layernorm", false);
    for (auto& l : m.layers) {
      l.qkv_bias = l.o_bias = l.mlp_bias = true;
      l.mlp = MlpKind::plain;
      l.norms = 1;
      l.qk_norm = qk;
    }
    m.lm_head_bias = true;
    m.norm = NormKind::layer;
    tie(false);
  }

  // modeling_stablelm (StableLM, StableLM 2): q/k/v biases with use_qkv_bias, o_proj without; qk_layernorm: one
  // weight-only LayerNorm over head_dim per query head and per KV head ((heads + KV heads) x head_dim, counted as a
  // norm over the whole projection); a gated MLP; LayerNorms with bias, one per layer with use_parallel_residual
  // (attention and MLP off the same norm), else two. Untied by default.
  void read_stablelm() {
    llama_like(false);
    const bool qkv_bias = t.bool_or("use_qkv_bias", false), qk = t.bool_or("qk_layernorm", false);
    const bool parallel = t.bool_or("use_parallel_residual", false);
    for (auto& l : m.layers) {
      l.qkv_bias = qkv_bias;
      l.qk_norm = l.qk_norm_whole = qk;
      l.norms = parallel ? 1 : 2;
    }
    m.norm = NormKind::layer;
    tie(false);
  }

  // modeling_exaone4 (EXAONE 4.0): per-head q/k RMSNorms, norms after attention and after the MLP, a gated MLP.
  // Windows from layer_types; else as Exaone4Config.__post_init__ derives them: sliding_window (default 4096; null: every
  // layer full) on the layers where (i + 1) % sliding_window_pattern != 0 (default 4), or, for the "LLLG" string form
  // some checkpoints carry, on the layers whose letter is L. Untied by default.
  void read_exaone4() {
    llama_like(false);
    for (auto& l : m.layers) l.qk_norm = true;
    tie(false);
    if (t.raw().contains("sliding_window_pattern") && t.raw()["sliding_window_pattern"].is_string()) {
      if (t.has("layer_types") || (t.raw().contains("sliding_window") && t.raw()["sliding_window"].is_null())) return;
      const i64 window = t.int_or("sliding_window", 4096, 1, kMaxTokens);
      const std::string pattern = t.string_or("sliding_window_pattern", "");
      if (pattern.empty() || pattern.find_first_not_of("LG") != std::string::npos)
        t.fail("sliding_window_pattern", "is \"" + pattern + "\"", "use a string of L (sliding) and G (global) layers");
      for (size_t i = 0; i < m.layers.size(); ++i)
        if (pattern[i % pattern.size()] == 'L') { m.layers[i].kv = KvKind::sliding; m.layers[i].window = window; }
      return;
    }
    periodic_windows(t.int_or("sliding_window_pattern", 4, 1, kMaxLayers));
  }

  // Windows a config class derives when layer_types is absent (Exaone4Config, Olmo3Config __post_init__):
  // sliding_window (default 4096; null: every layer full) on the layers where (i + 1) % period != 0.
  void periodic_windows(i64 period) {
    if (t.has("layer_types") || (t.raw().contains("sliding_window") && t.raw()["sliding_window"].is_null())) return;
    const i64 window = t.int_or("sliding_window", 4096, 1, kMaxTokens);
    for (size_t i = 0; i < m.layers.size(); ++i)
      if ((i64(i) + 1) % period != 0) { m.layers[i].kv = KvKind::sliding; m.layers[i].window = window; }
  }

  // A key that is one integer for every layer or a list of one per layer (Hunyuan's moe_topk, num_experts, ...).
  std::vector<i64> per_layer(const std::string& key, i64 fallback, i64 lo, i64 hi) const {
    if (!t.has(key)) return std::vector<i64>(size_t(layers), fallback);
    if (!t.raw()[key].is_array()) return std::vector<i64>(size_t(layers), t.get_int(key, lo, hi));
    std::vector<i64> v = t.int_list(key, lo, hi);
    if (i64(v.size()) != layers)
      t.fail(key, "has " + std::to_string(v.size()) + " entries for " + std::to_string(layers) + " layers", "give one per layer");
    return v;
  }

  // modeling_hunyuan_v1_moe / _dense (Hunyuan-A13B, Hunyuan-7B; "hunyuan" in Tencent's copies and Hunyuan-Large):
  // per-head q/k RMSNorms (query_layernorm,
  // key_layernorm) when use_qk_norm, attention_bias on q/k/v/o; MoE layers (hunyuan_v1_moe) hold num_experts gated
  // experts of moe_intermediate_size (else intermediate_size), top moe_topk, a bias-free router, and with
  // use_mixed_mlp_moe a shared MLP of intermediate_size x num_shared_expert (vLLM hunyuan_v1.py); each of these may be
  // one number or a list of one per layer. Cross-layer
  // attention (use_cla: layers sharing a KV cache, cla_share_factor) is not modelled: refused.
  void read_hunyuan() {
    llama_like(false);
    if (t.bool_or("use_cla", false))
      t.fail("use_cla", "is true: cross-layer attention (layers sharing one KV cache) is not modelled", "plan a checkpoint without CLA");
    const bool qk = t.bool_or("use_qk_norm", true);
    for (auto& l : m.layers) l.qk_norm = qk;
    if (t.has("num_experts")) {  // hunyuan_v1_moe (Tencent's own copies say model_type "hunyuan"); dense: no experts
      const auto experts = per_layer("num_experts", 1, 1, kMaxExperts), topk = per_layer("moe_topk", 1, 1, kMaxExperts);
      const auto width = per_layer("moe_intermediate_size", inter, 1, kMaxDim), shared = per_layer("num_shared_expert", 1, 0, kMaxExperts);
      const bool mixed = t.bool_or("use_mixed_mlp_moe", true);
      for (i64 i = 0; i < layers; ++i) {
        const size_t k = size_t(i);
        if (experts[k] <= 1) continue;  // one expert: a plain MLP
        moe_layer(m.layers[k], experts[k], topk[k], width[k]);
        if (mixed) m.layers[k].shared_intermediate = mul(shared[k], inter);
      }
    }
    tie(true);
  }

  // Ling / Ring (bailing_moe, bailing_moe_v2; vLLM bailing_moe.py): a fused query_key_value with a bias when use_bias or
  // use_qkv_bias, dense (o) and the MLPs with use_bias; per-head q/k RMSNorms with use_qk_norm (Ling 2.0); the first
  // first_k_dense_replace layers dense MLPs of intermediate_size, the others num_experts gated experts of
  // moe_intermediate_size, top num_experts_per_tok, a router without bias (with an expert bias under
  // moe_router_enable_expert_bias), and num_shared_experts x moe_intermediate_size shared. Untied by default. Ling 2.0's
  // official configs say model_type "bailing_moe" (architecture BailingMoeV2ForCausalLM): the keys decide, not the type.
  void read_bailing() {
    llama_like(false);
    const bool bias = t.bool_or("use_bias", false), qkv_bias = bias || t.bool_or("use_qkv_bias", false);
    const i64 e = t.get_int("num_experts", 1, kMaxExperts), k = t.get_int("num_experts_per_tok", 1, kMaxExperts);
    const i64 width = t.get_int("moe_intermediate_size", 1, kMaxDim);
    // vLLM sizes the shared MLP by moe_shared_expert_intermediate_size when the config gives it
    const i64 shared = mul(t.int_or("num_shared_experts", 0, 0, kMaxExperts), t.int_or("moe_shared_expert_intermediate_size", width, 1, kMaxDim));
    const i64 first_dense = t.int_or("first_k_dense_replace", 0, 0, kMaxLayers);
    const bool qk = t.bool_or("use_qk_norm", false), expert_bias = t.bool_or("moe_router_enable_expert_bias", false);
    for (i64 i = 0; i < layers; ++i) {
      Layer& l = m.layers[size_t(i)];
      l.qkv_bias = qkv_bias;
      l.o_bias = l.mlp_bias = bias;
      l.qk_norm = qk;
      if (i < first_dense) continue;
      moe_layer(l, e, k, width);
      l.shared_intermediate = shared;
      l.router_score_bias = expert_bias;
    }
    read_mtp();
    tie(false);
  }

  // modeling_mamba / modeling_falcon_mamba: every layer a Mamba mixer with one RMSNorm, no MLP.
  void read_mamba1() {
    const i64 d_inner = t.has("intermediate_size") ? inter : mul(t.int_or("expand", 2, 1, 64), hidden);
    const i64 d_state = t.int_or("state_size", 16, 1, kMaxDim), d_conv = t.int_or("conv_kernel", 4, 2, 1024);
    const i64 dt_rank = dt_rank_of("time_step_rank", hidden);
    for (i64 i = 0; i < layers; ++i) {
      Layer l = mamba1_layer(d_inner, d_state, d_conv, dt_rank);
      l.conv_bias = t.bool_or("use_conv_bias", true);
      l.proj_bias = t.bool_or("use_bias", false);
      m.layers.push_back(l);
    }
    tie(true);
  }

  // modeling_mamba2: num_heads x head_dim inner width, n_groups B/C groups.
  void read_mamba2() {
    const i64 nh = t.get_int("num_heads", 1, kMaxHeads), hd = t.int_or("head_dim", 64, 1, kMaxDim);
    const i64 ds = t.int_or("state_size", 128, 1, kMaxDim), g = t.int_or("n_groups", 1, 1, kMaxHeads);
    const i64 dc = t.int_or("conv_kernel", 4, 2, 1024);
    for (i64 i = 0; i < layers; ++i) {
      Layer l = mamba2_layer(nh, hd, ds, g, dc);
      l.conv_bias = t.bool_or("use_conv_bias", true);
      l.proj_bias = t.bool_or("use_bias", false);
      m.layers.push_back(l);
    }
    tie(false);
  }
};

// The KV cache quantisation a ModelOpt config declares, as the engines read it (vLLM torch_utils.py
// get_kv_cache_quant_algo_string; SGLang modelopt_quant.py ModelOptFp8Config / ModelOptFp4Config.from_config): a
// kv_cache_scheme {type float, num_bits 8} (config.json, ModelOpt >= 0.29) first, else kv_cache_quant_algo, at the
// top of quantization_config or under "quantization" (hf_quant_config.json). "FP8", "NVFP4" or empty; a scheme of
// other bits or a dynamic one is none (the engines fall back to the model dtype).
std::string modelopt_kv(const JsonView& q, const JsonView& src) {
  for (const JsonView* v : {&src, &q}) {
    if (auto scheme = v->object("kv_cache_scheme")) {
      const bool fp8 = scheme->string_or("type", "") == "float" && scheme->int_or("num_bits", 0, 0, 64) == 8 &&
                       !scheme->bool_or("dynamic", false);
      return fp8 ? "FP8" : "";
    }
  }
  for (const JsonView* v : {&src, &q}) {
    if (!v->has("kv_cache_quant_algo")) continue;
    std::string algo = v->string_or("kv_cache_quant_algo", "");
    for (auto& c : algo) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return algo == "FP8" || algo == "NVFP4" ? algo : "";
  }
  return "";
}

// quantization_config -> effective bits on linear layers.
WeightQuant read_quant(const JsonView& q) {
  WeightQuant w;
  // vLLM reads it lower-cased (get_quant_config / _verify_quantization: quant_cfg.get("quant_method", "").lower())
  w.method = ascii_lower(q.string_or("quant_method", ""));
  auto ignored_attention = [&](const std::string& key) {
    for (const auto& s : q.string_list(key))
      if (s.find("self_attn") != std::string::npos || s.find("attn") != std::string::npos) return true;
    return false;
  };
  if (w.method == "fp8") {
    // block-wise fp8 (weight_block_size [128,128]): one f32 scale per 128x128 block
    i64 block = 0;
    if (q.has("weight_block_size")) {
      auto b = q.int_list("weight_block_size", 1, 1 << 20);
      if (b.size() == 2) block = b[0] * b[1];
    }
    w.linear_bits = block > 0 ? 8.0 + 32.0 / double(block) : 8.0;
    w.detail = block > 0 ? "8-bit, f32 scale per " + std::to_string(block) + " weights" : "8-bit, per-tensor scale";
  } else if (w.method == "awq" || w.method == "gptq") {
    // vLLM's GPTQConfig / AWQConfig.from_config require both (get_from_keys: bits, AWQ's w_bit; group_size, AWQ's
    // q_group_size, as AutoAWQ's quant_config.json spells them): a config without one does not load
    const bool awq = w.method == "awq";
    const i64 bits = awq && !q.has("bits") && q.has("w_bit") ? q.get_int("w_bit", 1, 16) : q.get_int("bits", 1, 16);
    // vLLM's AWQ kernels take 4-bit weights only (AWQConfig: "Currently, only 4-bit weight quantization is supported");
    // GPTQ 2, 3, 4 and 8 (GPTQConfig.__init__: pack_factor 32 // bits over those)
    if (awq && bits != 4)
      q.fail(q.has("bits") ? "bits" : "w_bit", "vLLM runs AWQ with 4-bit weights only, got " + std::to_string(bits), "use a 4-bit AWQ checkpoint");
    if (!awq && bits != 2 && bits != 3 && bits != 4 && bits != 8)
      q.fail("bits", "vLLM runs GPTQ with 2, 3, 4 or 8-bit weights, got " + std::to_string(bits), "use a checkpoint of one of those");
    const i64 group = awq && !q.has("group_size") && q.has("q_group_size") ? q.get_int("q_group_size", -1, 1 << 20) : q.get_int("group_size", -1, 1 << 20);
    // f16 scale and a packed `bits`-wide zero point per group (AWQ zero_point; GPTQ stores qzeros)
    w.linear_bits = group_quant_bits(int(bits), group, 16, int(bits));
    w.detail = std::to_string(bits) + "-bit, group " + std::to_string(group) + ", f16 scale + zero";
  } else if (w.method == "compressed-tensors") {
    i64 bits = 8, group = 0;
    std::string type = "int";
    if (auto groups = q.object("config_groups")) {
      for (auto it = groups->raw().begin(); it != groups->raw().end(); ++it) {
        JsonView g(it.value(), q.file(), groups->path_of(it.key()));
        if (auto wts = g.object("weights")) {
          bits = wts->int_or("num_bits", 8, 1, 16);
          group = wts->int_or("group_size", 0, 0, 1 << 20);
          type = wts->string_or("type", "int");
        }
        break;
      }
    }
    if (type == "float" && bits == 4 && group == 16) {
      // NVFP4 (compressed-tensors nvfp4-pack-quantized; vLLM compressed_tensors_w4a4_nvfp4.py): e2m1 weights, an
      // fp8 e4m3 scale per 16, fp32 global scales per module
      set_nvfp4(w);
    } else {
      w.linear_bits = group_quant_bits(int(bits), group, 16, 0);
      w.detail = std::to_string(bits) + "-bit" + (group > 0 ? ", group " + std::to_string(group) : "");
    }
    w.attention_quantised = !ignored_attention("ignore");
  } else if (w.method == "modelopt") {
    // NVIDIA ModelOpt (vLLM modelopt.py ModelOptFp8Config / ModelOptNvFp4Config): quant_algo at the top of
    // quantization_config, or under "quantization" as hf_quant_config.json writes it
    const std::optional<JsonView> inner = q.object("quantization");
    const bool nested = !q.has("quant_algo") && inner;
    const JsonView& src = nested ? *inner : q;
    const std::string algo = src.string_or("quant_algo", "");
    if (algo == "FP8") {
      w.method = "fp8";
      w.linear_bits = 8;
      w.detail = "fp8 e4m3, per-tensor scale (ModelOpt FP8)";
    } else if (algo == "NVFP4") {
      set_nvfp4(w, "ModelOpt NVFP4");
    } else if (algo.empty()) {
      w.method = "none";  // a KV-only export (quant_algo null): the weights stay in the model dtype
    } else {
      src.fail("quant_algo", "unsupported ModelOpt quant_algo \"" + algo + "\"", "supported: FP8, NVFP4 (or pass --weight-format)");
    }
    for (const auto& s : src.string_list("exclude_modules"))
      if (s.find("self_attn") != std::string::npos || s.find("attn") != std::string::npos) w.attention_quantised = false;
    w.checkpoint_kv = modelopt_kv(q, src);
  } else if (w.method == "bitsandbytes") {
    if (q.bool_or("load_in_4bit", false)) {
      // NF4/FP4 blocks of 64 with an absmax each: f32 (32 bits), or 8 bits with double quantisation
      const bool dq = q.bool_or("bnb_4bit_use_double_quant", false);
      w.linear_bits = 4.0 + (dq ? 8.0 : 32.0) / 64.0;
      w.detail = dq ? "4-bit, block 64, double-quantised absmax" : "4-bit, block 64, f32 absmax";
    } else {
      w.linear_bits = 8.0;
      w.detail = "8-bit (LLM.int8)";
    }
  } else if (w.method == "mxfp4") {
    // OCP MX: 4-bit e2m1 elements, one 8-bit shared exponent per 32
    w.linear_bits = 4.0 + 8.0 / 32.0;
    w.detail = "4-bit e2m1, 8-bit scale per 32";
    w.attention_quantised = !ignored_attention("modules_to_not_convert");
  } else {
    q.fail("quant_method", "unsupported quantization method \"" + w.method + "\"",
           "supported: fp8, awq, gptq, compressed-tensors, modelopt, bitsandbytes, mxfp4 (or pass --weight-format)");
  }
  return w;
}

}  // namespace

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out;
    for (const auto& r : kTypes) out.push_back(r.model_type);
    std::sort(out.begin(), out.end());
    return out;
  }();
  return v;
}

// An unknown model_type is read as a decoder of full-attention layers. A config that carries a key which changes
// its KV cache or its weights under rules kvplan only applies to the architectures it knows would be priced wrong
// without a sign (Step-3's 64 query heads taken for KV heads: 64x the cache; MiniMax-M2's 256 experts dropped:
// 4.8 B parameters of 230 B): refuse it, naming the key.
static void refuse_unread_layout(const JsonView& root, const JsonView& t, const std::string& type) {
  struct Key {
    const char* name;
    const char* sets;
    double above;  // a number counts when above this (one routed expert is a plain MLP)
  };
  static const std::vector<Key> keys = {
      {"num_attention_groups", "KV head groups (multi-query / multi-matrix factorised attention)", 0},
      {"kv_lora_rank", "a compressed latent KV cache (MLA)", 0},
      {"attn_type_list", "a per-layer choice of softmax or linear attention", 0},
      {"full_attn_idxs", "the layers that keep a KV cache, the others a recurrent state", 0},
      {"linear_attn_config", "linear-attention layers with a recurrent state", 0},
      {"num_kv_shared_layers", "layers that reuse another layer's KV cache", 0},
      {"use_cla", "cross-layer attention (layers sharing one KV cache)", 0},
      {"mamba_d_state", "Mamba layers with a recurrent state", 0},
      {"ssm_state_size", "SSM layers with a recurrent state", 0},
      {"num_local_experts", "routed experts", 1},
      {"num_experts", "routed experts", 1},
      {"moe_num_experts", "routed experts", 1},
      {"n_routed_experts", "routed experts", 1},
  };
  for (const JsonView* v : {&t, &root})
    for (const Key& k : keys) {
      if (!v->has(k.name)) continue;
      const json& value = v->raw()[k.name];
      const bool set = value.is_boolean() ? value.get<bool>() : value.is_number() ? value.get<double>() > k.above : !value.empty();
      if (!set) continue;
      std::string types;
      for (const auto& known : supported_model_types()) types += (types.empty() ? "" : ", ") + known;
      throw InputError(v->where(k.name),
                       "model_type '" + type + "' is not one kvplan knows, and this key sets " + k.sets +
                           ", which its full-attention reading would not count",
                       "kvplan reads it for these model_types only: " + types);
    }
}

ModelSpec model_from_hf_config(const json& root_json, const std::string& label, const std::string& id) {
  if (!root_json.is_object()) throw InputError(label, "expected a JSON object at the top level", "pass a config.json");
  JsonView root(root_json, label);
  ModelSpec m;
  m.id = id;
  const std::string outer = root.string_or("model_type", "");
  std::optional<JsonView> text_cfg = root.object("text_config");
  std::string text_type = outer;
  if (text_cfg) {
    text_type = text_cfg->string_or("model_type", "");
    if (text_type.empty())
      for (const auto& [w, tt] : kWrapperText)
        if (outer == w) text_type = tt;
  }
  auto fam = family_of(text_type);
  // A wrapper's text_config is instantiated as the text model's config class, so keys it omits take
  // that class's defaults (transformers LlamaConfig, Gemma3TextConfig); record each one used.
  json filled;
  if (text_cfg) {
    filled = text_cfg->raw();
    for (const auto& [key, value] : text_config_defaults(text_type))
      if (!filled.contains(key) || filled[key].is_null()) {
        filled[key] = value;
        m.notes.push_back("text_config." + key + " absent: " + text_type + " default " + value.dump() + " used");
      }
    text_cfg = JsonView(filled, label, "/text_config");
  }
  const JsonView& t = text_cfg ? *text_cfg : root;
  if (!fam && text_cfg) fam = family_of(outer);
  m.model_type = text_type.empty() ? outer : text_type;
  if (auto arch = root.string_list("architectures"); !arch.empty()) m.architecture = arch.front();

  // dtype: the wrapper's, then the text model's; bf16 when absent
  for (const JsonView* v : std::initializer_list<const JsonView*>{&root, &t})
    for (const char* key : {"torch_dtype", "dtype"})
      if (!m.dtype_from_config && v->has(key)) {
        m.dtype = dtype_of(*v, key);
        m.dtype_from_config = true;
      }

  Reader r{root, t, fam.value_or(Family::generic), m};
  if (!fam) {
    const std::string shown = m.model_type.empty() ? std::string("(none)") : m.model_type;
    refuse_unread_layout(root, t, shown);
    r.warn("unknown model_type '" + shown +
           "': assumed a decoder of full-attention layers (hidden_size, num_hidden_layers, num_attention_heads, "
           "num_key_value_heads, head_dim, intermediate_size, vocab_size) with a gated MLP, RMSNorm, untied "
           "embeddings, and sliding_window on every layer if given");
  }
  r.read();

  if (auto v = root.object("vision_config"); v && (fam == Family::qwen2 || fam == Family::qwen3 ||
                                                   fam == Family::qwen3_moe || fam == Family::gemma3 || fam == Family::gemma4 ||
                                                   fam == Family::mllama || fam == Family::llama ||
                                                   fam == Family::llama4 || fam == Family::mistral))
    m.vision = read_vision_tower(root, *v, outer, m.hidden);
  if (auto q = root.object("quantization_config")) m.quant = read_quant(*q);
  else if (auto q2 = t.object("quantization_config")) m.quant = read_quant(*q2);
  // no length key at all (Falcon-7B, Mamba): vLLM's ModelConfig._get_and_verify_max_len assumes 2048 with a warning
  // (default_max_len), as SGLang's get_context_length does (its default)
  if (m.max_context <= 0) {
    m.max_context = 2048;
    r.warn("the config has no max_position_embeddings (nor n_positions, max_sequence_length, seq_length, max_seq_len): "
           "its maximum length is taken as 2048, as vLLM and SGLang assume; pass --max-model-len N for another");
  }
  return m;
}

std::string resolve_config_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const fs::path c = fs::path(path) / "config.json";
    if (!fs::exists(c, ec))
      throw InputError(path, "directory has no config.json", "pass a model snapshot folder or the config.json itself");
    return c.string();
  }
  if (!fs::exists(path, ec)) throw InputError(path, "no such file", "check the path");
  return path;
}

}  // namespace kvplan::io
