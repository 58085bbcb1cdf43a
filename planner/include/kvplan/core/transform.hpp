// Model transforms that engines apply before sizing the cache.
#pragma once

#include "kvplan/core/model.hpp"

namespace kvplan {

/// MLA layers cached expanded (engines without MLA kernels): K = heads x (qk_nope + qk_rope),
/// V = heads x v_head_dim per token per layer, instead of one kv_lora_rank + qk_rope latent.
void expand_mla(ModelSpec& m);

/// Sliding and chunked layers treated as full attention (vLLM --disable-hybrid-kv-cache-manager,
/// llama.cpp --swa-full, older engines without SWA support).
void disable_windows(ModelSpec& m);

/// --weight-format W: the weights priced in another format. f32 / f16 / bf16 change the dtype; fp8 / int8 / int4
/// (g128, f16 scale + 4-bit zero) pack the linear layers; a ggml type (q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl) is
/// quantized as llama-quantize's pure ftype does (every matrix at the type, the output head and a tied embedding at
/// q6_K unless the type is q8_0, norms and biases f32). Drops the exact bytes of a weights file. Throws InputError
/// at `where` for an unknown format.
void apply_weight_format(ModelSpec& m, const std::string& w, const std::string& where);

}  // namespace kvplan
