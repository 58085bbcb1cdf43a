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

}  // namespace kvplan
