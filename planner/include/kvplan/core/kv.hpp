// KV-cache bytes of a model: per token, per sequence of N tokens, the K/V split, the recurrent
// state, and a derivation per group of identical layers.
#pragma once

#include <string>
#include <vector>

#include "kvplan/core/model.hpp"

namespace kvplan {

struct KvOptions {
  ElemFormat k_format = ElemFormat::bf16;
  ElemFormat v_format = ElemFormat::bf16;
  ElemFormat state_format = ElemFormat::bf16;  // conv and SSM state of recurrent layers
  ElemFormat skip_format = ElemFormat::bf16;   // K and V of layers whose cache stays in the model dtype (kv_model_dtype)
  bool skip_list = false;  // vLLM: a kv_cache_dtype_skip_layers list is in force (given, or TurboQuant's boundary layers)
  i64 context = 0;          // tokens of one sequence
  i64 encoder_tokens = 0;   // tokens cross-attention layers attend to
};

/// Layers with identical cache geometry, with their bytes.
struct KvGroup {
  KvKind kind = KvKind::full;
  std::vector<i64> layer_indices;
  i64 kv_heads = 0, k_head_dim = 0, v_head_dim = 0, window = 0;
  i64 k_elems_per_token = 0, v_elems_per_token = 0;  // per layer
  i64 k_bytes_per_token = 0, v_bytes_per_token = 0;  // per layer
  i64 record_bytes = 0, indexer_bytes = 0;            // MLA: the engine's latent record (0: the row), DSA indexer key
  bool model_dtype = false;                            // the layers keep the model dtype (KvOptions::skip_format)
  i64 tokens_held = 0;                                 // per sequence at the requested context
  i64 k_bytes = 0, v_bytes = 0;                        // whole group, one sequence
  i64 state_bytes_per_layer = 0;                       // ssm
  i64 state_bytes = 0;                                 // whole group, one sequence
  std::string formula;                                 // human-readable derivation
};

struct KvResult {
  i64 context = 0;
  i64 kv_bytes_per_token = 0;  // all attention layers while context < every window (no cross, no state)
  i64 k_bytes_per_token = 0;
  i64 v_bytes_per_token = 0;
  i64 sequence_kv_bytes = 0;   // K + V of one sequence of `context` tokens
  i64 k_bytes = 0;
  i64 v_bytes = 0;
  i64 state_bytes = 0;         // recurrent state of one sequence
  std::vector<KvGroup> groups;
};

/// DeepSeek-V3.2 indexer key bytes one token adds to one layer: index_head_dim + index_head_dim / 128 x 4 (0 without).
i64 layer_indexer_key_bytes(const Layer& l);
/// FlashMLA's fp8 latent record per token per layer: kv_lora_rank fp8 + an fp32 scale per 128 + the rope part in bf16
/// (512 + 16 + 128 = 656 B for DeepSeek-V3.2: vLLM fp8_ds_mla, SGLang NSATokenToKVPool override_kv_cache_dim).
i64 mla_fp8_record_bytes(const Layer& l);
/// The indexer key bytes the engine prices in its KV pool: the key, or the engine's pricing (indexer_record_bytes), or 0
/// when it does not count it (indexer_priced false).
i64 layer_indexer_bytes_per_token(const Layer& l);
/// K bytes one token adds to one layer: kv_heads * row_bytes(k_format, k_head_dim);
/// MLA latent: row_bytes(k_format, kv_lora_rank + qk_rope_head_dim), or the engine's record (mla_record_bytes), plus
/// the DSA indexer key; 0 for ssm/none.
i64 layer_k_bytes_per_token(const Layer& l, ElemFormat k_format);
/// V bytes one token adds to one layer: kv_heads * row_bytes(v_format, v_head_dim); 0 for MLA latent.
i64 layer_v_bytes_per_token(const Layer& l, ElemFormat v_format);
/// The layer's K and V bytes under the options: its own format (k_format / v_format, or skip_format for a layer the
/// engine keeps in the model dtype, Layer::kv_model_dtype); V carries the TurboQuant slot's even padding (tq_slot_pad).
i64 layer_k_bytes_per_token(const Layer& l, const KvOptions& o);
i64 layer_v_bytes_per_token(const Layer& l, const KvOptions& o);
/// TurboQuant's boundary layers, kept in the model dtype (vLLM TurboQuantConfig.get_boundary_skip_layers): the first
/// and last min(2, L / 2) of a model's L layers; none in a hybrid (recurrent-layer) model.
std::vector<i64> turboquant_boundary_layers(const ModelSpec& m);
/// Tokens a layer holds for one sequence of `context` tokens: full/MLA N, sliding/chunked
/// min(N, window), cross encoder_tokens, none/ssm 0.
i64 layer_tokens_held(const Layer& l, i64 context, i64 encoder_tokens);
/// Recurrent state of one layer: conv_state_elems + ssm_state_elems, in state_format.
i64 layer_state_bytes(const Layer& l, ElemFormat state_format);

/// The whole calculation. Throws InputError for block formats that do not divide a head row,
/// OverflowError when a byte count does not fit in 64 bits.
KvResult compute_kv(const ModelSpec& m, const KvOptions& o);

}  // namespace kvplan
