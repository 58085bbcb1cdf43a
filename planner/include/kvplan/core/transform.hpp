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

/// --weight-format W: the weights priced in another format. f32 / f16 / bf16 change the dtype; fp8 / int8 pack the
/// linear layers at 8 bits; fp8_block adds an f32 scale per 128x128 block; int4 / awq / gptq are 4-bit group 128 with
/// an f16 scale and 4-bit zero per group; nvfp4 is e2m1 + fp8 scale per 16 (+ two fp32 scalars per module); mxfp4
/// packs the routed experts at e2m1 + e8m0 per 32 (vLLM: MoE layers only). A llama-quantize type name (Q4_K_M,
/// IQ2_XS, MXFP4_MOE, Q8_0 ...) or pure:<ggml type> prices each tensor at the type llama-quantize's recipe gives it
/// (core/gguf_recipe.hpp). Drops the exact bytes of a weights file. Throws InputError at `where` for an unknown
/// format, with one line naming the valid ones.
void apply_weight_format(ModelSpec& m, const std::string& w, const std::string& where);

/// The linear layers as NVFP4 (e2m1 weights, an fp8 e4m3 scale per 16 = 4.5 bits, two fp32 scalars per module):
/// what --weight-format nvfp4, a ModelOpt NVFP4 and a compressed-tensors nvfp4 config all mean. `source`, when
/// given, ends the detail in parentheses.
void set_nvfp4(WeightQuant& q, const std::string& source = "");

/// Every --weight-format spelling, for help and error text.
std::string weight_format_names();

}  // namespace kvplan
