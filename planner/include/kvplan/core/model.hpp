// The model description every calculation starts from: a list of layers, each with the cache it
// keeps (KvKind) and the weights it holds, plus the model-wide embedding and vocabulary facts.
// Filled from a Hugging Face config.json by io/hf_config, or built directly in tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/checked.hpp"
#include "kvplan/core/format.hpp"

namespace kvplan {

/// What a layer keeps per token (or per sequence) in the cache.
enum class KvKind {
  full,          // K and V for every token of the context
  sliding,       // K and V for the last `window` tokens
  chunked,       // K and V for the tokens of the current chunk (llama4 local attention)
  mla_latent,    // one latent of kv_lora_rank + qk_rope_head_dim elements per token (counted as K)
  mla_expanded,  // K = heads x (qk_nope + qk_rope), V = heads x v_head_dim (engines without MLA kernels)
  cross,         // K and V of a fixed number of encoder tokens (mllama)
  ssm,           // constant recurrent state per sequence (Mamba, Mamba2)
  none,          // no cache of its own (reuses another layer's KV, or an MLP-only layer)
};

const char* kv_kind_name(KvKind k);

/// An MLA cache, as the latent or expanded to per-head K and V.
inline bool is_mla(KvKind k) { return k == KvKind::mla_latent || k == KvKind::mla_expanded; }

/// The token mixer whose weights a layer holds.
enum class Mixer { attention, mla, mamba1, mamba2, gated_deltanet, short_conv, none };

/// Feed-forward block of a layer.
enum class MlpKind { gated, plain, moe, none };

struct Layer {
  KvKind kv = KvKind::full;
  // attention geometry (attention, cross, and MLA expanded)
  i64 q_heads = 0;
  i64 kv_heads = 0;
  i64 k_head_dim = 0;
  i64 v_head_dim = 0;
  i64 window = 0;  // sliding window or chunk length in tokens (sliding / chunked)
  // MLA
  i64 q_lora_rank = 0;  // 0: q projected directly
  i64 kv_lora_rank = 0;
  i64 qk_nope_head_dim = 0;
  i64 qk_rope_head_dim = 0;
  // DeepSeek-V3.2 sparse attention (DSA): the lightning indexer caches one key of indexer_head_dim per token per
  // layer, as fp8 with an fp32 scale per 128 (index_head_dim + index_head_dim / 128 x 4 B, whatever the KV dtype)
  i64 indexer_head_dim = 0;
  i64 indexer_heads = 0;       // index_n_heads
  i64 indexer_topk = 0;        // index_topk: the cached tokens each query's sparse attention reads
  i64 mla_record_bytes = 0;    // > 0: the engine stores each latent as a record of this size (vLLM fp8_ds_mla: 656 B)
  i64 indexer_record_bytes = 0;  // > 0: the engine prices the indexer key at this size (TensorRT-LLM: 132 x KV element)
  bool indexer_priced = true;    // the engine counts the indexer key in its KV pool (not llama.cpp, not SGLang 0.5.3)
  bool sparse_decode = true;     // decode runs the indexer and reads index_topk latents (not llama.cpp: dense MLA)
  bool kv_model_dtype = false;   // the engine keeps this layer's K and V in the model dtype whatever the KV cache dtype
                                 // (vLLM --kv-cache-dtype-skip-layers, TurboQuant's boundary layers: KvOptions::skip_format)
  // recurrent state (ssm): elements per sequence
  i64 conv_state_elems = 0;
  i64 ssm_state_elems = 0;

  // ---- weights ----
  Mixer mixer = Mixer::attention;
  bool qkv_bias = false;
  bool o_bias = false;
  bool qk_norm = false;       // per-head RMSNorm weights on q and k (qwen3, gemma3)
  bool qk_norm_whole = false; // with qk_norm: one RMSNorm over all of q and all of k (olmoe, minimax_m2), not one per head
  bool attn_sinks = false;    // one learned sink logit per query head (gpt-oss)
  // mamba weights
  i64 d_inner = 0, d_state = 0, d_conv = 0, dt_rank = 0, n_groups = 0, ssm_heads = 0;
  bool conv_bias = true, proj_bias = false;
  bool mamba_inner_norms = false;  // jamba: dt/B/C RMSNorms inside the mixer
  bool mamba_gated_norm = true;    // Mamba2: the gated RMSNorm over d_inner (Falcon-H1: only with mamba_rms_norm)
  // short_conv (LFM2): d_inner channels, a depthwise causal conv of d_conv taps gated by two projections
  // gated DeltaNet linear attention (qwen3_next)
  i64 lin_k_heads = 0, lin_v_heads = 0, lin_k_dim = 0, lin_v_dim = 0;
  bool q_gate = false;  // attention output gate packed into q_proj (qwen3_next): q_proj width doubles

  MlpKind mlp = MlpKind::gated;
  i64 intermediate = 0;       // dense MLP width
  bool mlp_bias = false;
  i64 experts = 0;            // routed experts
  i64 experts_active = 0;     // experts per token
  i64 expert_intermediate = 0;
  i64 shared_intermediate = 0;  // total width of shared experts (0 = none)
  bool shared_expert_gate = false;  // qwen2_moe: sigmoid gate hidden -> 1
  bool router_bias = false;
  bool expert_bias = false;   // gpt-oss experts carry biases
  bool router_score_bias = false;  // deepseek-v3 e_score_correction_bias
  int norms = 2;              // norm modules in the layer (input, post-attention, ...)
  // attention projections of K and V: k_proj and v_proj (2); k_proj alone, its output used as V too (1: Gemma 4
  // attention_k_eq_v full-attention layers, which still cache V apart); none (0: Gemma 4 layers that read an earlier
  // layer's cache). A layer reading another's cache is kv none with the attention mixer and that cache's geometry.
  int kv_projections = 2;
  // per-layer paths beside attention and the MLP (Gemma 3n / Gemma 4 per-layer-input gate and projection, Gemma 3n
  // AltUp and Laurel; io/hf_config.cpp read_gemma_ple): linear-layer parameters and vectors
  i64 side_matrix = 0, side_vector = 0;
  // the second half of one decoder layer whose mixers run side by side (Falcon-H1: attention, then this Mamba2 entry
  // with the MLP); vLLM and llama.cpp give each half its own cache. Pipeline stages and layer counts go by decoder layer.
  bool joins_previous = false;
};

/// Decoder layers (entries that join the previous one are part of it).
inline i64 decoder_layers(const std::vector<Layer>& layers) {
  return static_cast<i64>(std::count_if(layers.begin(), layers.end(), [](const Layer& l) { return !l.joins_previous; }));
}

/// A layer that reads another layer's cache (Gemma 3n / Gemma 4 KV sharing): attention without a cache of its own.
inline bool shares_kv(const Layer& l) { return l.kv == KvKind::none && l.mixer == Mixer::attention; }

/// The layer as if it kept its own cache (its donor's geometry: sliding when it has a window), for what reads the
/// donor's cache (decode attention) and for engines that allocate a buffer for it anyway (SGLang).
inline Layer with_own_cache(Layer l) {
  if (shares_kv(l)) l.kv = l.window > 0 ? KvKind::sliding : KvKind::full;
  return l;
}

/// KV sharing (Gemma 3n / Gemma 4): layers from `first` on keep no cache of their own and read the cache of the last
/// earlier layer of their kind (their window kept; Gemma 4's, `drop_projections`, have no k/v projections either).
/// Returns the first layer that has no such earlier layer (nothing is changed then), or -1 when all were marked.
inline i64 share_kv_from(std::vector<Layer>& layers, i64 first, bool drop_projections) {
  const i64 n = static_cast<i64>(layers.size());
  for (i64 i = first; i < n; ++i) {
    bool donor = false;
    for (i64 j = first - 1; j >= 0 && !donor; --j) donor = layers[static_cast<size_t>(j)].kv == layers[static_cast<size_t>(i)].kv;
    if (!donor) return i;
  }
  for (i64 i = first; i < n; ++i) {
    layers[static_cast<size_t>(i)].kv = KvKind::none;
    if (drop_projections) layers[static_cast<size_t>(i)].kv_projections = 0;
  }
  return -1;
}

/// Each entry's decoder layer (an entry that joins the previous one shares its index).
inline std::vector<i64> decoder_block_of(const std::vector<Layer>& layers) {
  std::vector<i64> block(layers.size());
  i64 b = -1;
  for (size_t i = 0; i < layers.size(); ++i) block[i] = layers[i].joins_previous ? b : ++b;
  return block;
}

enum class NormKind { rms, layer };  // RMSNorm: weight only; LayerNorm: weight + bias

struct VisionTower {
  bool present = false;
  i64 params = 0;           // from vision_config (io/vision_config.cpp): exact per family, else estimated
  std::string basis;        // "exact: ..." (what was counted) or "estimate: ..."
  // vLLM's encoder cache (core/plan.cpp vllm_mm_encoder_bytes; each family's numbers in io/vision_config.cpp)
  i64 tokens_per_item = 0;  // placeholder tokens the largest image takes (what vLLM's budget counts); 0 = not modelled
  i64 embeds_per_item = 0;  // embeddings the encoder outputs for it, when fewer (separator tokens); 0 = tokens_per_item
  i64 embed_width = 0;      // width of one cached embedding (Qwen3-VL: merger + deepstack levels); 0 = text hidden
  // Qwen2/2.5/3-VL dynamic resolution: the largest image is the largest square whose side is a multiple of
  // patch x merge within max_pixels; videos add frames (grid_t = frames rounded up to temporal / temporal)
  i64 patch = 0, merge = 0, temporal = 0;  // 0: fixed-size items, no video modality
  i64 max_pixels = 0;                      // the preprocessor's default (--mm-processor-kwargs overrides it)
  std::string tokens_basis;                // how tokens_per_item was derived, with its source
};

/// Qwen2-VL smart_resize of the largest image (transformers image_processing_qwen2_vl.py, as vLLM's
/// Qwen2VLProcessingInfo.get_image_size_with_most_features calls it on a 9999999 x 9999999 image):
/// side = floor(sqrt(max_pixels) / (patch x merge)) x patch x merge; tokens = (side / patch)^2 / merge^2.
inline i64 dynamic_image_tokens(i64 max_pixels, i64 patch, i64 merge) {
  i64 root = i64(std::sqrt(double(max_pixels)));  // integer square root (max_pixels <= 2^40: no overflow)
  while ((root + 1) * (root + 1) <= max_pixels) ++root;
  while (root * root > max_pixels) --root;
  const i64 factor = patch * merge, side = std::max(factor, root / factor * factor);
  return (side / patch) * (side / patch) / (merge * merge);
}

/// Quantisation of the linear layers, from quantization_config or --weight-format.
struct WeightQuant {
  std::string method = "none";  // none, fp8, awq, gptq, compressed-tensors, bitsandbytes, mxfp4, override
  double linear_bits = 0;       // effective bits per quantised weight including scales/zeros; 0 = model dtype
  bool attention_quantised = true;  // false when the method leaves attention in the model dtype
  double embedding_bits = 0;    // token embedding (the output head too when tied); 0 = model dtype
  double lm_head_bits = 0;      // untied output head; 0 = model dtype
  double vector_bits = 0;       // norms and biases; 0 = model dtype (GGUF: f32)
  bool experts_only = false;    // only routed experts packed (vLLM's mxfp4 quantizes FusedMoE layers only)
  i64 per_module_bytes = 0;     // scalars kept per packed linear module (nvfp4: two fp32 scales = 8 B)
  // a GGUF file type as llama-quantize makes it (Q4_K_M, IQ2_XS, MXFP4_MOE, pure:q6_k ...): each tensor's type
  // comes from its recipe (core/gguf_recipe.hpp); empty otherwise
  std::string gguf_recipe;
  std::string detail;           // e.g. "4-bit, group 128, f16 scale + 4-bit zero"
  // the KV cache quantisation a ModelOpt checkpoint declares (kv_cache_quant_algo "FP8" / "NVFP4", or a
  // kv_cache_scheme of 8-bit floats): "FP8", "NVFP4", or empty. Engines whose --kv-cache-dtype auto follows it
  // are in plan_spec (core/deployment.cpp; docs/engine-rules.md "KV cache dtype auto")
  std::string checkpoint_kv;
};

struct ModelSpec {
  std::string id;          // profile id or path
  std::string model_type;  // HF model_type (text model)
  std::string architecture;
  ElemFormat dtype = ElemFormat::bf16;  // torch_dtype; default KV and weight format
  bool dtype_from_config = false;
  i64 hidden = 0;
  i64 vocab = 0;
  i64 max_context = 0;  // max_position_embeddings, RoPE-scaled by vLLM's rule (0 = unknown)
  i64 max_context_sglang = 0;  // the context SGLang derives (get_context_length; 0 = as max_context)
  bool sparse_mla = false;     // DeepSeek sparse attention (config index_topk): vLLM's sparse MLA backends
  bool tied_embeddings = false;
  bool lm_head_bias = false;  // a bias of vocab on the output layer (phi, phimoe with lm_head_bias)
  i64 learned_positions = 0;  // rows of a learned position embedding (gpt2)
  NormKind norm = NormKind::rms;
  bool final_norm = true;
  bool has_embedding = true;  // false on pipeline stages after the first
  bool has_lm_head = true;    // false on pipeline stages before the last
  std::vector<Layer> layers;
  // Gemma 3n / Gemma 4 per-layer embeddings (PLE): a second token table (vocab_size_per_layer_input x layers x
  // hidden_size_per_layer_input) looked up per token like the embedding, and the model-level parameters beside it
  // (per_layer_model_projection, Gemma 3n's AltUp projections): matrices and vectors; on the first pipeline stage
  i64 ple_table = 0, ple_matrix = 0, ple_vector = 0;
  i64 ple_width = 0;  // hidden_size_per_layer_input: each layer's per_layer_input_gate is hidden x this
  i64 mtp_layers = 0;  // multi-token-prediction layers after num_hidden_layers (num_nextn_predict_layers);
                       // not in `layers`: engines load them only with MTP speculation
  std::optional<i64> mtp_weight_bytes;  // those layers' bytes in the snapshot's safetensors (no embedding/head copies, no fc)
  VisionTower vision;
  // Exact figures from a weights file (GGUF tensor table) when known; the geometric count is kept
  // for the per-component split and for sharding (a rank's share scales by its computed share).
  std::optional<i64> exact_weight_bytes;
  std::optional<i64> exact_params;
  std::string exact_weight_basis;  // where exact_weight_bytes came from ("" = a tensor table: safetensors headers, GGUF)
  // The same table by llama.cpp layer: [0] the input layer (token_embd, position_embd, token_types), [1 + i] every
  // tensor of blk.i, [n_layer + 1] the rest (output, output_norm ...). Empty unless a GGUF file was read and nothing
  // changed its weights since.
  std::vector<i64> exact_layer_bytes;
  std::vector<i64> exact_expert_bytes;  // per block, its blk.i.ffn_(up|down|gate)_(ch|)exps tensors (what --n-cpu-moe moves)
  i64 exact_embedding_bytes = 0;        // token_embd.weight (loaded again as the head when there is no output.weight)
  // A weight format or a derived model (a draft head) replaces what a weights file holds: drop its exact figures.
  void forget_file_weights() {
    exact_weight_bytes.reset();
    exact_params.reset();
    exact_weight_basis.clear();
    exact_layer_bytes.clear();
    exact_expert_bytes.clear();
    exact_embedding_bytes = 0;
  }
  bool sharded = false;  // set by rank_shard: this is one rank's part of the model
  WeightQuant quant;
  std::vector<std::string> warnings;  // assumptions the reader made (fallbacks)
  std::vector<std::string> notes;     // facts worth printing (e.g. sliding window ignored)
};

/// Whether any layer caches an MLA latent (or its expansion).
inline bool caches_mla(const ModelSpec& m) {
  return std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return is_mla(l.kv); });
}

/// Gemma 3n / Gemma 4 per-layer embeddings of `width` (hidden_size_per_layer_input) over a table of `rows` tokens:
/// embed_tokens_per_layer rows x (layers x width), per_layer_model_projection hidden x (layers x width) and its norm
/// (width); per layer per_layer_input_gate hidden x width, per_layer_projection width x hidden and
/// post_per_layer_input_norm (hidden).
inline void add_per_layer_embeddings(ModelSpec& m, i64 rows, i64 width) {
  const i64 h = m.hidden, n = static_cast<i64>(m.layers.size());
  m.ple_table = mul(rows, mul(n, width), "per-layer embedding params");
  m.ple_matrix = add(m.ple_matrix, mul(h, mul(n, width)), "per-layer embedding params");
  m.ple_vector = add(m.ple_vector, width, "per-layer embedding params");
  m.ple_width = width;
  for (Layer& l : m.layers) {
    l.side_matrix = add(l.side_matrix, mul(2, mul(h, width)), "per-layer embedding params");
    l.side_vector = add(l.side_vector, h, "per-layer embedding params");
  }
}

/// Gemma 3n's AltUp of `inputs` (per layer: router hidden x n, correct_output_scale and router_norm hidden each,
/// correction n x n and prediction n x n^2 coefficients; altup_projections and altup_unembed_projections, 2 (n - 1)
/// matrices of hidden x hidden) and Laurel of `rank` (per layer: hidden x rank, rank x hidden, a norm of hidden).
inline void add_altup_laurel(ModelSpec& m, i64 inputs, i64 rank) {
  const i64 h = m.hidden, n = inputs;
  m.ple_matrix = add(m.ple_matrix, mul(2, mul(n - 1, mul(h, h))), "AltUp params");
  for (Layer& l : m.layers) {
    l.side_matrix = add(l.side_matrix, add(mul(h, n), mul(2, mul(h, rank))), "AltUp params");
    l.side_vector = add(l.side_vector, add(mul(3, h), add(mul(n, n), mul(n, mul(n, n)))), "AltUp params");
  }
}

}  // namespace kvplan
