// Serving-engine settings and the rules each engine sizes its KV cache by (vLLM V1, SGLang,
// TensorRT-LLM, llama.cpp, and a generic paged engine). Formulas and sources: engine.cpp and
// docs/engine-rules.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/checked.hpp"
#include "kvplan/core/speculative.hpp"

namespace kvplan {

enum class EngineKind { vllm, sglang, trtllm, llamacpp, generic };

/// llama.cpp --split-mode: layers over the GPUs (layer), rows of every weight matrix over the GPUs with the KV
/// and compute on --main-gpu (row), or the one --main-gpu (none).
enum class LlamaSplitMode { layer, row, none };

const char* engine_name(EngineKind k);
std::optional<EngineKind> parse_engine(const std::string& s);

/// Compares versions component by component ("0.10.0" > "0.9.2"; "b7400" > "b6000"; a leading 'v' is ignored).
int compare_versions(const std::string& a, const std::string& b);
/// "", "latest" or a version without a number: the newest release kvplan knows.
bool is_newest_version(const std::string& v);
/// `version` names a release before `first` (never the newest).
bool version_before(const std::string& version, const std::string& first);
/// The numeric components of a version: "0.11.0" -> {0, 11, 0}; "b7400" -> {7400}; "1.1.0rc2" -> {1, 1, 0, 2}.
std::vector<long> version_components(const std::string& v);

/// How SGLang picks its default --mem-fraction-static (server_args.py, by release).
enum class SglangFractionRule {
  tp_table,         // <= 0.4.5: 0.88 / 0.87 / 0.85 / 0.81 / 0.79 by tensor-parallel size
  tp_table_or_13g,  // 0.4.6: the TP table up to 80 GiB GPUs, else (memory - 13 GiB) / memory
  tiered_reserve,   // 0.4.7-0.5.2: a reserve tiered by GPU memory and tp x pp
  graph_reserve,    // >= 0.5.3: 512 MiB + 1.5 x chunked prefill + 2 x CUDA graph batch + tp x pp / 8 GiB
};

/// One engine release range and the rules it sizes memory by. Where releases differ only in data the
/// difference is a field here; engine.cpp has the table, plan.cpp applies it. docs/engine-rules.md gives
/// each field's source (repository, tag, file, function).
struct EngineRules {
  EngineKind kind = EngineKind::generic;
  const char* first = "";   // first version of the range (inclusive); "" = every earlier version
  const char* label = "";   // printed with every result ("vLLM >= 0.21 ...")
  const char* source = "";  // where the rules were read
  // vLLM
  double default_fraction = 0.9;         // --gpu-memory-utilization / free_gpu_memory_fraction default
  bool cuda_graphs_in_budget = false;    // vLLM >= 0.21: the CUDA graph estimate is taken before the KV pool
  bool float32_to_bf16 = true;           // vLLM >= 0.10: float32 checkpoints run in bf16 on SM >= 8.0 (else fp16)
  bool sliding_window_kept = true;       // vLLM >= 0.10 hybrid allocator; 0.8-0.9 cache sliding layers at full length
  bool blackwell_mla_128 = true;         // vLLM >= 0.11: CUTLASS MLA (block 128) is the Blackwell default
  bool small_gpu_256_seqs = true;        // vLLM >= 0.8.5: max_num_seqs 256 below 70 GiB or on A100 (0.8.3: 1024)
  bool kv_tokens_from_concurrency = false;  // vLLM >= 0.21: "GPU KV cache size" = int(concurrency x max_model_len)
  bool offload_cpu_bytes = true;         // vLLM >= 0.14: OffloadingConnector reads cpu_bytes_to_use (#24498); before, num_cpu_blocks
  bool v1_chunked_optional = true;       // vLLM >= 0.12 (#26623): V1 honours --no-enable-chunked-prefill and clamps defaulted
                                         // limits; 0.8-0.11 V1 always chunks prompts (the flag has no effect)
  bool uniform_type_group = true;        // vLLM >= 0.11 (#25101): one attention type with differing pages is one KV cache group
  bool skip_block_align = true;          // vLLM >= 0.25 (#42890): layers kept in the model dtype raise the block size
  bool v0_engine = false;                // vLLM < 0.8: the V0 engine (prompts before decodes, chunked prefill only above 32K, max_num_seqs 256, no prefix caching)
  // SGLang
  SglangFractionRule sglang_fraction = SglangFractionRule::graph_reserve;
  // TensorRT-LLM
  i64 tokens_per_block = 32;             // 0.x engine builds 64, 1.x PyTorch backend 32
  bool trt_graphs_outside_torch = true;  // 1.x: CUDA graphs are captured before the KV budget is measured
  // llama.cpp
  i64 default_ctx = 4096;                // -c default; 0 = the training context (with --fit)
  bool auto_parallel = false;            // -np default -1 = auto: 4 slots sharing one unified cache
  bool np1_is_auto = false;              // b6900-b7375: an explicit -np 1 (without -kvu) also became 4 unified slots
  bool fit = false;                      // --fit on by default: lowers an unset -c, then moves layers to the host
  bool mla_v_cache = true;               // MLA models keep a V cache of kv_lora_rank; from #19067 (b7830) the V-less cache
  bool output_layer_first = false;       // #18148: -ngl N offloads the output layer first, then the last N - 1 repeating layers
};

/// The rules of `version` ("" or "latest": the newest range kvplan knows). A version older than every range
/// gets the oldest. Versions are compared with compare_versions.
const EngineRules& engine_rules(EngineKind k, const std::string& version = "");
/// Every rule range of an engine, oldest first.
std::vector<const EngineRules*> engine_rule_ranges(EngineKind k);

/// Engine settings, named after the engines' own flags. Zero / empty means "the engine's default".
struct EngineSettings {
  EngineKind kind = EngineKind::vllm;
  std::string version;             // the engine version planned ("" = the newest kvplan knows)
  const EngineRules* rules = nullptr;  // set by resolve_engine_defaults from kind + version
  double memory_fraction = 0;      // vLLM --gpu-memory-utilization, SGLang --mem-fraction-static,
                                   // TensorRT-LLM --kv-cache-free-gpu-mem-fraction, generic fraction
  i64 max_model_len = 0;           // vLLM --max-model-len / SGLang --context-length / TRT --max-seq-len
  i64 max_num_seqs = 0;            // vLLM --max-num-seqs / SGLang --max-running-requests / TRT --max-batch-size
  i64 max_num_batched_tokens = 0;  // vLLM --max-num-batched-tokens / SGLang --chunked-prefill-size / TRT --max-num-tokens
  i64 block_size = 0;              // vLLM --block-size / SGLang --page-size / TRT --tokens-per-block
  std::optional<i64> kv_cache_memory_bytes;  // vLLM --kv-cache-memory-bytes: the KV pool per GPU, no profiling
  i64 cpu_offload_bytes = 0;       // vLLM / SGLang --cpu-offload-gb (GiB): weights per GPU kept in host memory
  i64 kv_offload_bytes = 0;        // vLLM --kv-offloading-size (GiB, summed over TP ranks): host KV tier
  i64 kv_offload_rank_bytes = 0;   // vLLM host KV tier given per rank: LMCache LMCACHE_MAX_LOCAL_CPU_SIZE (GiB)
  i64 kv_offload_cpu_blocks = 0;   // vLLM OffloadingConnector num_cpu_blocks (older vLLM): offloaded blocks per rank
  i64 kv_offload_block_tokens = 0; // their block_size in tokens (kv_connector_extra_config.block_size; 0: the GPU block size)
  i64 disk_kv_bytes = 0;           // LMCache LMCACHE_LOCAL_DISK + LMCACHE_MAX_LOCAL_DISK_SIZE (GiB) per rank: disk tier
  i64 kv_chunk_tokens = 0;         // LMCache LMCACHE_CHUNK_SIZE when LMCache holds the tiers (whole chunks); 0: none
  bool kv_offload_holds = true;    // LMCache local_cpu: false keeps the pinned buffer as a staging area only (no chunks)
  std::string kv_offload_basis;    // where the host KV tier's size came from (flag, env, LMCACHE_CONFIG_FILE key)
  std::string disk_kv_basis;       // likewise for the disk tier
  bool hierarchical_cache = false; // SGLang --enable-hierarchical-cache: host KV tier (HiCache)
  double swa_full_tokens_ratio = 0.8;  // SGLang --swa-full-tokens-ratio: SWA-layer tokens per full-layer token (hybrid SWA pool)
  bool disable_hybrid_swa = false;     // SGLang --disable-hybrid-swa-memory: one full-length pool for every layer
  double hicache_ratio = 2.0;      // SGLang --hicache-ratio
  i64 hicache_bytes = 0;           // SGLang --hicache-size (GB = 10^9 bytes) per rank; 0: by ratio
  std::optional<i64> max_total_tokens;       // SGLang --max-total-tokens
  std::optional<i64> max_prefill_tokens;     // SGLang --max-prefill-tokens: input tokens of one prefill batch (default 16384)
  bool mixed_chunk = false;                  // SGLang --enable-mixed-chunk: running decodes join each prefill batch
  // prompts split into chunks that fit the step's token budget; unset: the engine's default (SGLang on,
  // off with --chunked-prefill-size -1; TensorRT-LLM enable_chunked_prefill, default False)
  std::optional<bool> chunked_prefill;
  // kvplan simulate's scheduler (the pool does not depend on them; a shared prefix is held once only with the prefix
  // cache on, Planner::shared_units): the prefix cache (vLLM
  // --enable-prefix-caching, SGLang radix cache, TensorRT-LLM kv_cache_config.enable_block_reuse, llama.cpp
  // server's cache_prompt; unset: on, every engine's default), the waiting queue's order (vLLM --scheduling-policy, SGLang
  // --schedule-policy; "": fcfs) and TensorRT-LLM's capacity scheduler ("": GUARANTEED_NO_EVICT)
  std::optional<bool> prefix_caching;
  std::string scheduling_policy;
  // vLLM: how the engine is started, which picks its batch defaults (EngineArgs.get_batch_defaults): "" or "serve"
  // (vllm serve), "llm" (offline LLM(...)), "engine" (AsyncLLMEngine.from_engine_args: no listed usage context)
  std::string usage_context;
  std::string capacity_scheduler_policy;
  std::optional<i64> max_tokens;             // TensorRT-LLM --max-tokens (KvCacheConfig.max_tokens)
  std::optional<i64> num_gpu_blocks_override;  // vLLM --num-gpu-blocks-override: the block count, not the profiled one
  i64 mm_image_limit = -1;  // vLLM --limit-mm-per-prompt image items per prompt (-1: the engine's default, 999; 0: text-only)
  i64 mm_video_limit = -1;  // its video items (-1: 999; 0: no video profiling); only models with a video input use it
  i64 mm_max_pixels = 0;    // vLLM --mm-processor-kwargs '{"max_pixels": N}' (Qwen-VL); 0: the preprocessor's
  // llama.cpp
  i64 ctx_size = -1;       // -c / --ctx-size (-1: not given = the build's default; 0: the model's training context)
  bool ctx_given = false;  // -c was given (--fit lowers only a context it chose)
  i64 parallel = 0;        // -np / --parallel (0: not given = the build's default: 1, or 4 auto slots)
  bool swa_full = false;   // --swa-full
  // -fa / --flash-attn: "on", "off" or "auto" (the default; llamacpp_flash_attention, core/perf.hpp, resolves it per build)
  std::string flash_attn = "auto";
  bool kv_offload = true;  // --no-kv-offload / -nkvo: the KV cache stays in host memory
  bool mmap = true;        // --mmap (default) / --no-mmap: CPU-resident weights are the file's mapped pages, else read into RAM
  bool mlock = false;      // --mlock: the CPU-resident weights are locked in RAM
  i64 n_cpu_moe = 0;       // --n-cpu-moe N: MoE experts of the first N layers in host memory (--cpu-moe: all)
  i64 n_gpu_layers = -1;   // -ngl (-1: all)
  bool gpu_layers_given = false;  // -ngl was given (--fit moves layers only when it was not)
  i64 ubatch_size = 512;   // -ub (at most -b)
  i64 batch_size = 2048;   // -b (n_batch): the most tokens one llama_decode takes, the server's step budget
  std::optional<bool> kv_unified;  // --kv-unified / --no-kv-unified; unset: on exactly when the slots are auto
  std::optional<bool> fit;         // --fit on|off; unset: the build's default
  i64 fit_ctx = 4096;              // --fit-ctx: the smallest context --fit lowers to
  i64 fit_target_bytes = 1LL << 30;  // --fit-target (MiB on the command line): memory --fit leaves free per GPU
  // llama.cpp on several GPUs (-sm, -ts, -mg, --device): the model's devices are indices into the deployment's
  // gpu_count GPUs (empty: all of them, in order); tensor_split gives one proportion per model device (empty or
  // all zero: llama.cpp splits by free memory, equal on identical GPUs)
  LlamaSplitMode split_mode = LlamaSplitMode::layer;
  i64 gpu_count = 1;
  std::vector<i64> devices;
  std::vector<double> tensor_split;
  i64 main_gpu = 0;  // index into the model's devices
  // LoRA (vLLM --enable-lora --max-loras --max-lora-rank; SGLang --enable-lora --max-loras-per-batch --max-lora-rank):
  // the GPU buffers of lora_slots adapters at lora_rank (0 slots: LoRA off)
  i64 lora_slots = 0;
  i64 lora_rank = 0;
  i64 lora_cpu_slots = 0;  // vLLM --max-cpu-loras: adapters kept in the CPU LRU cache (0: max_loras, vLLM's default)
  bool disable_async_output_proc = false;  // vLLM V0 --disable-async-output-proc (simulate: tokens reach the client at once)
  bool enforce_eager = false;        // no CUDA graphs
  SpeculativeSettings spec;          // speculative decoding (vLLM --speculative-config, SGLang --speculative-*, TRT speculative_config)
  i64 attention_dp = 1;  // SGLang --enable-dp-attention (= --dp-size), TensorRT-LLM enable_attention_dp (= TP): attention
                         // groups of TP / attention_dp ranks, each with its own requests and KV pool
  std::optional<i64> decode_context_parallel;  // vLLM --decode-context-parallel-size: TP ranks a sequence's KV tokens are sharded over
  // max-model-len above the model's (VLLM_ALLOW_LONG_MAX_MODEL_LEN, SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN); unset: the
  // engine's default (on only in SGLang 0.4.4-0.5.0)
  std::optional<bool> allow_long_context;
};

/// SGLang's --max-prefill-tokens default (ServerArgs): input tokens one prefill batch admits
constexpr i64 kSglangMaxPrefillTokens = 16384;
/// SGLang without chunked prefill (--chunked-prefill-size -1): a prefill batch holds whole prompts, up to
/// max_prefill_tokens of them
/// vLLM run in-process (--usage-context llm or engine): no API server in front of it
inline bool vllm_in_process(const EngineSettings& e) {
  return e.kind == EngineKind::vllm && (e.usage_context == "llm" || e.usage_context == "engine");
}
inline bool sglang_unchunked(const EngineSettings& e) { return e.kind == EngineKind::sglang && !e.chunked_prefill.value_or(true); }
/// vLLM V0's async output processor (#7049, 0.6.0 on; vllm/engine/llm_engine.py LLMEngine.step): a step's tokens reach
/// the client when the next step ends. ModelConfig.verify_async_output_proc turns it off under pipeline parallelism,
/// speculative decoding and on platforms without it (CUDA / ROCm with --enforce-eager, the CPU);
/// --disable-async-output-proc turns it off. Needs resolved rules (resolve_engine_defaults).
inline bool vllm_v0_async_output(const EngineSettings& e, i64 pp, bool cpu) {
  return e.kind == EngineKind::vllm && e.rules && e.rules->v0_engine && !version_before(e.version, "0.6.0") &&
         !e.disable_async_output_proc && !e.enforce_eager && pp <= 1 && e.spec.method == SpecMethod::none && !cpu;
}

/// The block size vLLM's MLA backend takes (the one size its kernel runs): FlashMLA 64 on SM 9.0 and, from 0.11,
/// FlashMLA-sparse 64 everywhere; CUTLASS MLA 128 on SM 10.x from 0.11; Triton MLA 16 elsewhere.
i64 vllm_mla_block(const EngineRules& rules, const std::string& compute_capability, bool sparse_mla);

/// Throws InputError at `key` unless 0 < f <= 1 (a memory fraction: gpu_memory_utilization, mem_fraction_static,
/// free_gpu_memory_fraction).
void check_fraction(double f, const char* key);

/// SGLang accepts a --context-length above the one it derives from the model config, warning, without
/// SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN: its default was True from 0.4.4 (#4195) until 0.5.1 (#9388), before and
/// after which SGLang raises (configs/model_config.py ModelConfig).
bool sglang_warns_longer_context(const std::string& version);

/// Fills every default the engine would pick (documented per engine in engine.cpp) and checks
/// ranges; throws InputError naming the engine's flag.
/// `mla`: the model caches an MLA latent; `compute_capability`: the GPU's ("9.0"), for vLLM's MLA block size.
EngineSettings resolve_engine_defaults(EngineSettings e, i64 model_max_context, i64 tp, i64 gpu_memory_bytes,
                                       const std::string& gpu_arch, bool mla = false, const std::string& compute_capability = "",
                                       i64 pp = 1, bool sparse_mla = false, const std::string& model_arch = "");

/// SGLang's default mem_fraction_static for a GPU of `gpu_memory_bytes` (its get_device_memory_capacity) under
/// `rules`, with the chunked-prefill size and CUDA-graph batch size that release picks.
double sglang_default_fraction(const EngineRules& rules, i64 gpu_memory_bytes, i64 tp, i64 pp, i64 chunked_prefill, i64 cuda_graph_bs);

/// vLLM's allowed --block-size values (CacheConfig BlockSize literal).
const std::vector<i64>& vllm_block_sizes();

}  // namespace kvplan
