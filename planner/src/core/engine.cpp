// Engine names, versions and defaults. Sources for each default are in the comments and in
// docs/engine-rules.md.
#include "kvplan/core/engine.hpp"

#include <algorithm>

namespace kvplan {

const char* engine_name(EngineKind k) {
  switch (k) {
    case EngineKind::vllm: return "vllm";
    case EngineKind::sglang: return "sglang";
    case EngineKind::trtllm: return "trtllm";
    case EngineKind::llamacpp: return "llama.cpp";
    case EngineKind::generic: return "generic";
  }
  return "?";
}

std::optional<EngineKind> parse_engine(const std::string& s) {
  if (s == "vllm") return EngineKind::vllm;
  if (s == "sglang") return EngineKind::sglang;
  if (s == "trtllm" || s == "tensorrt-llm" || s == "trt-llm") return EngineKind::trtllm;
  if (s == "llama.cpp" || s == "llamacpp" || s == "llama-cpp") return EngineKind::llamacpp;
  if (s == "generic") return EngineKind::generic;
  return std::nullopt;
}

const char* engine_rules_version(EngineKind k) {
  switch (k) {
    case EngineKind::vllm: return "vLLM V1 engine (0.10-0.11 kv_cache_utils rules)";
    case EngineKind::sglang: return "SGLang 0.4-0.5 (model_runner.profile_max_num_token)";
    case EngineKind::trtllm: return "TensorRT-LLM 0.x-1.0 KV cache manager (free-memory fraction)";
    case EngineKind::llamacpp: return "llama.cpp mainline b6xxx (unified KV cache, iSWA, 256-cell padding)";
    case EngineKind::generic: return "generic paged engine (kvplan)";
  }
  return "?";
}

const std::vector<i64>& vllm_block_sizes() {
  static const std::vector<i64> v = {1, 8, 16, 32, 64, 128};  // vllm/config/cache.py BlockSize
  return v;
}

namespace {
constexpr i64 kGiB = 1LL << 30;

void check_fraction(double f, const char* flag) {
  if (!(f > 0.0 && f <= 1.0))
    throw InputError(flag, "must be in (0, 1], got " + std::to_string(f), "use a fraction such as 0.9");
}
}  // namespace

EngineSettings resolve_engine_defaults(EngineSettings e, i64 model_max_context, i64 tp, i64 gpu_memory_bytes,
                                       const std::string& gpu_arch, bool mla, const std::string& compute_capability) {
  // vLLM EngineArgs: GPUs with >= 70 GiB that are not A100 get the larger serving defaults
  const bool big_gpu = gpu_memory_bytes >= 70 * kGiB && gpu_arch != "ampere";
  switch (e.kind) {
    case EngineKind::vllm:
      if (e.memory_fraction == 0) e.memory_fraction = 0.9;  // --gpu-memory-utilization default
      check_fraction(e.memory_fraction, "memory_fraction");
      // MLA models: vLLM 0.10-0.11 force the block size of the MLA backend it picks - FlashMLA (Hopper, SM 9.0) 64
      // ("Forcing kv cache block size to 64 for FlashMLA backend."), CUTLASS MLA (Blackwell SM 10.x, the 0.11 default)
      // 128; elsewhere Triton MLA keeps 16 (vllm/platforms/cuda.py CudaPlatformBase.check_and_update_config)
      if (e.block_size == 0 && mla && compute_capability == "9.0") e.block_size = 64;
      if (e.block_size == 0 && mla && compute_capability.rfind("10.", 0) == 0) e.block_size = 128;
      if (e.block_size == 0) e.block_size = 16;
      if (std::find(vllm_block_sizes().begin(), vllm_block_sizes().end(), e.block_size) == vllm_block_sizes().end())
        throw InputError("block_size", std::to_string(e.block_size) + " is not supported by vLLM", "use 1, 8, 16, 32, 64 or 128");
      // EngineArgs V1 defaults for `vllm serve`: >= 70 GiB GPUs (not A100) get max_num_seqs 1024 and
      // max_num_batched_tokens 8192; others 256 and 2048.
      if (e.max_num_seqs == 0) e.max_num_seqs = big_gpu ? 1024 : 256;
      if (e.max_num_batched_tokens == 0) e.max_num_batched_tokens = big_gpu ? 8192 : 2048;
      break;
    case EngineKind::sglang:
      // server_args: mem_fraction_static by tensor-parallel size (0.88 at tp 1 ... 0.79 at tp >= 16)
      if (e.memory_fraction == 0) e.memory_fraction = tp >= 16 ? 0.79 : tp >= 8 ? 0.81 : tp >= 4 ? 0.85 : tp >= 2 ? 0.87 : 0.88;
      check_fraction(e.memory_fraction, "memory_fraction");
      if (e.block_size == 0) e.block_size = 1;  // --page-size default 1
      if (e.max_num_batched_tokens == 0) e.max_num_batched_tokens = big_gpu ? 8192 : 2048;  // --chunked-prefill-size
      if (e.max_num_seqs == 0) e.max_num_seqs = 4096;  // req_to_token pool upper bound
      break;
    case EngineKind::trtllm:
      if (e.memory_fraction == 0) e.memory_fraction = 0.9;  // KvCacheConfig.free_gpu_memory_fraction (LLM API)
      check_fraction(e.memory_fraction, "memory_fraction");
      if (e.block_size == 0) e.block_size = 32;  // tokens_per_block
      if (e.block_size < 1 || (e.block_size & (e.block_size - 1)) != 0)
        throw InputError("block_size", std::to_string(e.block_size) + " is not a power of two", "use 16, 32, 64 or 128");
      if (e.max_num_seqs == 0) e.max_num_seqs = 2048;        // LLM API max_batch_size
      if (e.max_num_batched_tokens == 0) e.max_num_batched_tokens = 8192;  // max_num_tokens
      break;
    case EngineKind::llamacpp:
      if (e.ctx_size < 0) e.ctx_size = 4096;  // common_params n_ctx default
      if (e.ctx_size == 0) e.ctx_size = model_max_context;
      if (e.ctx_size <= 0) throw InputError("ctx_size", "the model has no training context length", "pass --ctx-size N");
      if (e.parallel < 1) throw InputError("parallel", "must be >= 1");
      if (e.ubatch_size < 1) throw InputError("ubatch_size", "must be >= 1");
      e.max_num_seqs = e.parallel;
      e.max_num_batched_tokens = e.ubatch_size;
      e.block_size = 1;
      break;
    case EngineKind::generic:
      if (e.memory_fraction == 0) e.memory_fraction = 0.9;
      check_fraction(e.memory_fraction, "memory_fraction");
      if (e.block_size == 0) e.block_size = 16;
      if (e.block_size < 1) throw InputError("block_size", "must be >= 1");
      if (e.max_num_seqs == 0) e.max_num_seqs = 256;
      if (e.max_num_batched_tokens == 0) e.max_num_batched_tokens = 8192;
      break;
  }
  if (e.kind != EngineKind::llamacpp) {
    if (e.max_model_len == 0) e.max_model_len = model_max_context;
    if (e.max_model_len <= 0)
      throw InputError("max_model_len", "the model config has no max_position_embeddings", "pass --max-model-len N");
    if (model_max_context > 0 && e.max_model_len > model_max_context && !e.allow_long_context)
      throw InputError("max_model_len", std::to_string(e.max_model_len) + " exceeds the model's max_position_embeddings " +
                                              std::to_string(model_max_context),
                       "lower it, or pass --allow-long-context to override as VLLM_ALLOW_LONG_MAX_MODEL_LEN does");
  }
  if (e.max_num_seqs < 1) throw InputError("max_num_seqs", "must be >= 1");
  if (e.max_num_batched_tokens < 1) throw InputError("max_num_batched_tokens", "must be >= 1");
  if (e.kv_cache_memory_bytes && *e.kv_cache_memory_bytes < 0)
    throw InputError("kv_cache_memory_bytes", "must be >= 0");
  return e;
}

}  // namespace kvplan
