// Serving-engine settings and the rules each engine sizes its KV cache by (vLLM V1, SGLang,
// TensorRT-LLM, llama.cpp, and a generic paged engine). Formulas and sources: engine.cpp and
// docs/engine-rules.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/checked.hpp"

namespace kvplan {

enum class EngineKind { vllm, sglang, trtllm, llamacpp, generic };

const char* engine_name(EngineKind k);
std::optional<EngineKind> parse_engine(const std::string& s);
/// The engine version whose rules kvplan models (printed with every result).
const char* engine_rules_version(EngineKind k);

/// Engine settings, named after the engines' own flags. Zero / empty means "the engine's default".
struct EngineSettings {
  EngineKind kind = EngineKind::vllm;
  double memory_fraction = 0;      // vLLM --gpu-memory-utilization, SGLang --mem-fraction-static,
                                   // TensorRT-LLM --kv-cache-free-gpu-mem-fraction, generic fraction
  i64 max_model_len = 0;           // vLLM --max-model-len / SGLang --context-length / TRT --max-seq-len
  i64 max_num_seqs = 0;            // vLLM --max-num-seqs / SGLang --max-running-requests / TRT --max-batch-size
  i64 max_num_batched_tokens = 0;  // vLLM --max-num-batched-tokens / SGLang --chunked-prefill-size / TRT --max-num-tokens
  i64 block_size = 0;              // vLLM --block-size / SGLang --page-size / TRT --tokens-per-block
  std::optional<i64> kv_cache_memory_bytes;  // vLLM --kv-cache-memory-bytes: the KV pool per GPU, no profiling
  std::optional<i64> max_total_tokens;       // SGLang --max-total-tokens
  std::optional<i64> max_tokens;             // TensorRT-LLM --max-tokens (KvCacheConfig.max_tokens)
  std::optional<i64> num_gpu_blocks_override;  // vLLM --num-gpu-blocks-override: the block count, not the profiled one
  // llama.cpp
  i64 ctx_size = -1;       // -c / --ctx-size (-1: not given = 4096; 0: the model's training context)
  i64 parallel = 1;        // -np / --parallel
  bool swa_full = false;   // --swa-full
  i64 n_gpu_layers = -1;   // -ngl (-1: all)
  i64 ubatch_size = 512;   // -ub
  bool kv_unified = true;  // --kv-unified
  bool enforce_eager = false;        // no CUDA graphs
  bool allow_long_context = false;   // max-model-len above the model's (VLLM_ALLOW_LONG_MAX_MODEL_LEN)
};

/// Fills every default the engine would pick (documented per engine in engine.cpp) and checks
/// ranges; throws InputError naming the engine's flag.
/// `mla`: the model caches an MLA latent; `compute_capability`: the GPU's ("9.0"), for vLLM's MLA block size.
EngineSettings resolve_engine_defaults(EngineSettings e, i64 model_max_context, i64 tp, i64 gpu_memory_bytes,
                                       const std::string& gpu_arch, bool mla = false, const std::string& compute_capability = "");

/// vLLM's allowed --block-size values (CacheConfig BlockSize literal).
const std::vector<i64>& vllm_block_sizes();

}  // namespace kvplan
