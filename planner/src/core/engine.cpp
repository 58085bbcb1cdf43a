// Engine names, versions and defaults. Sources for each default are in the comments and in
// docs/engine-rules.md.
#include "kvplan/core/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <cmath>
#include <limits>

#include "kvplan/core/gpu.hpp"

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

std::vector<long> version_components(const std::string& v) {
  std::vector<long> out;
  long cur = -1;
  for (char c : v) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
      if (cur > 1000000000L) cur = 1000000000L;
    } else if (cur >= 0) {
      out.push_back(cur);
      cur = -1;
    }
  }
  if (cur >= 0) out.push_back(cur);
  return out;
}

int compare_versions(const std::string& a, const std::string& b) {
  const auto x = version_components(a), y = version_components(b);
  for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const long p = i < x.size() ? x[i] : 0, q = i < y.size() ? y[i] : 0;
    if (p != q) return p < q ? -1 : 1;
  }
  return 0;
}

bool is_newest_version(const std::string& v) { return v.empty() || v == "latest" || version_components(v).empty(); }

bool version_before(const std::string& version, const std::string& first) {
  return !is_newest_version(version) && compare_versions(version, first) < 0;
}

namespace {

// The rule ranges, oldest first per engine. Each row's source is in docs/engine-rules.md ("Rules by version").
std::vector<EngineRules> make_rule_table() {
  std::vector<EngineRules> t;
  auto row = [&](EngineKind k, const char* first, const char* label, const char* source) -> EngineRules& {
    EngineRules r;
    r.kind = k;
    r.first = first;
    r.label = label;
    r.source = source;
    t.push_back(r);
    return t.back();
  };
  // ---- vLLM: V0 engine before 0.8, V1 from 0.8 ----
  {
    EngineRules& r = row(EngineKind::vllm, "", "vLLM before 0.8 (V0 engine: prompts before decodes, chunked prefill only above 32K context, max_num_seqs 256, prefix caching off)",
                         "vllm-project/vllm v0.8.x (V0 beside V1): engine/arg_utils.py EngineArgs._set_default_args_v0, config.py SchedulerConfig.__post_init__, core/scheduler.py Scheduler._schedule_default, core/block_manager.py can_allocate (watermark 0.01)");
    r.v0_engine = true;
    r.uniform_type_group = false;
    r.skip_block_align = false;
    r.float32_to_bf16 = false;
    r.sliding_window_kept = false;
    r.blackwell_mla_128 = false;
    r.small_gpu_256_seqs = false;
    r.offload_cpu_bytes = false;
  }
  {
    EngineRules& r = row(EngineKind::vllm, "0.8.0", "vLLM 0.8-0.9 (sliding layers cached at full length; float32 -> fp16)",
                         "vllm-project/vllm v0.8.3: v1/worker/gpu_worker.py, v1/core/kv_cache_utils.py unify_hybrid_kv_cache_specs, config.py _get_and_verify_dtype, engine/arg_utils.py _set_default_args_v1");
    r.float32_to_bf16 = false;
    r.sliding_window_kept = false;
    r.blackwell_mla_128 = false;
    r.small_gpu_256_seqs = false;
    r.offload_cpu_bytes = false;
    r.v1_chunked_optional = false;
    r.uniform_type_group = false;
    r.skip_block_align = false;
  }
  {
    EngineRules& r = row(EngineKind::vllm, "0.10.0", "vLLM 0.10 (hybrid KV cache manager; float32 -> bf16 on SM >= 8.0)",
                         "vllm-project/vllm v0.10.0: v1/worker/gpu_worker.py determine_available_memory, v1/core/kv_cache_utils.py, config.py _resolve_auto_dtype, platforms/cuda.py");
    r.blackwell_mla_128 = false;
    r.offload_cpu_bytes = false;
    r.v1_chunked_optional = false;
    r.uniform_type_group = false;
    r.skip_block_align = false;
  }
  {
    EngineRules& r = row(EngineKind::vllm, "0.11.0", "vLLM 0.11 (CUTLASS MLA block 128 on Blackwell; OffloadingConnector num_cpu_blocks; V1 always chunks prompts)",
                         "vllm-project/vllm v0.11.0 (main 96ebcaa): platforms/cuda.py check_and_update_config, v1/core/kv_cache_utils.py get_kv_cache_config_from_groups; "
                         "v1/kv_offload/cpu.py CPUOffloadingSpec (num_cpu_blocks); engine/arg_utils.py _set_default_args (enable_chunked_prefill = True)");
    r.offload_cpu_bytes = false;
    r.v1_chunked_optional = false;
    r.skip_block_align = false;
  }
  {
    EngineRules& r = row(EngineKind::vllm, "0.12.0", "vLLM 0.12-0.13 (--no-enable-chunked-prefill honoured; OffloadingConnector num_cpu_blocks)",
                         "vllm-project/vllm #26623 (engine/arg_utils.py _set_default_chunked_prefill_and_prefix_caching_args, "
                         "_set_default_max_num_seqs_and_batched_tokens_args; merged after 2025-11-20, release not pinned); v1/kv_offload/cpu.py (num_cpu_blocks)");
    r.offload_cpu_bytes = false;
    r.skip_block_align = false;
  }
  row(EngineKind::vllm, "0.14.0", "vLLM 0.14-0.20 (OffloadingConnector cpu_bytes_to_use)",
      "vllm-project/vllm #24498 (v1/kv_offload CPUOffloadingSpec: cpu_bytes_to_use replaces num_cpu_blocks), merged January 2026")
      .skip_block_align = false;
  for (const char* first : {"0.21.0", "0.25.0"}) {
    const bool aligned = std::string(first) == "0.25.0";
    EngineRules& r = row(EngineKind::vllm, first,
                         aligned ? "vLLM >= 0.25 (utilization 0.92; CUDA graph memory estimated before the KV pool; layers kept in the model dtype raise the block size)"
                                 : "vLLM 0.21-0.24 (utilization 0.92; CUDA graph memory estimated before the KV pool)",
                         aligned ? "vllm-project/vllm #38284, #41069 (as 0.21); #42890 (platforms/interface.py _align_heterogeneous_kv_block_size, merged "
                                   "2026-07-03, eight days before v0.25.0: assumed in it)"
                                 : "vllm-project/vllm #38284 (config/cache.py gpu_memory_utilization 0.92, v1/worker/gpu_worker.py determine_available_memory), #41069 (kv_cache_utils.py)");
    r.default_fraction = 0.92;
    r.cuda_graphs_in_budget = true;
    r.kv_tokens_from_concurrency = true;
    r.skip_block_align = aligned;
  }
  // ---- SGLang ----
  row(EngineKind::sglang, "", "SGLang <= 0.4.5 (mem_fraction_static by TP size)",
      "sgl-project/sglang v0.4.0: python/sglang/srt/server_args.py ServerArgs.__post_init__")
      .sglang_fraction = SglangFractionRule::tp_table;
  row(EngineKind::sglang, "0.4.6", "SGLang 0.4.6 (TP table; GPUs above 80 GiB reserve 13 GiB)",
      "sgl-project/sglang v0.4.6 (84022c0): server_args.py ServerArgs.__post_init__")
      .sglang_fraction = SglangFractionRule::tp_table_or_13g;
  row(EngineKind::sglang, "0.4.7", "SGLang 0.4.7-0.5.2 (reserve tiered by GPU memory)",
      "sgl-project/sglang #7054, read at v0.5.2 (b0d25e7): server_args.py ServerArgs.__post_init__")
      .sglang_fraction = SglangFractionRule::tiered_reserve;
  row(EngineKind::sglang, "0.5.3", "SGLang >= 0.5.3 (reserve from chunked prefill and CUDA graph batch size)",
      "sgl-project/sglang #10975, read at v0.5.6 (7ae368e): server_args.py _handle_gpu_memory_settings")
      .sglang_fraction = SglangFractionRule::graph_reserve;
  // ---- TensorRT-LLM ----
  {
    EngineRules& r = row(EngineKind::trtllm, "", "TensorRT-LLM 0.x (trtllm-build engine, C++ runtime)",
                         "NVIDIA/TensorRT-LLM 0.x: cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, tensorrt_llm/plugin/plugin.py PluginConfig tokens_per_block");
    r.tokens_per_block = 64;
    r.trt_graphs_outside_torch = false;
  }
  row(EngineKind::trtllm, "1.0.0", "TensorRT-LLM 1.x (PyTorch backend, trtllm-serve)",
      "NVIDIA/TensorRT-LLM 1.x: tensorrt_llm/_torch/pyexecutor/_util.py KvCacheCreator, tensorrt_llm/llmapi/llm_args.py KvCacheConfig");
  // ---- llama.cpp (named by build number) ----
  row(EngineKind::llamacpp, "", "llama.cpp before b6900 (-c 4096, one slot, -np N divides -c)",
      "ggml-org/llama.cpp #10136 (common/common.h n_ctx 4096), src/llama-context.cpp, src/llama-kv-cache-iswa.cpp");
  {
    EngineRules& r = row(EngineKind::llamacpp, "b6900", "llama.cpp b6900-b7375 (4 auto slots sharing one unified cache)",
                         "ggml-org/llama.cpp #16736 (tools/server/server.cpp: n_parallel 1 and no -kvu -> 4 slots, kv_unified), #17046 (n_ctx padded to 256)");
    r.auto_parallel = true;
    r.np1_is_auto = true;
  }
  {
    EngineRules& r = row(EngineKind::llamacpp, "b7376", "llama.cpp >= b7376 (--fit on: -c 0 = training context, fitted to the GPU)",
                         "ggml-org/llama.cpp #16653 (common/common.h n_ctx 0, common/arg.cpp --fit/--fit-ctx/--fit-target, src/llama.cpp llama_params_fit)");
    r.auto_parallel = true;
    r.fit = true;
    r.default_ctx = 0;
  }
  {
    EngineRules& r = row(EngineKind::llamacpp, "b7830", "llama.cpp >= b7830 (--fit; MLA caches K only: the V-less cache)",
                         "ggml-org/llama.cpp #19067 (src/llama-kv-cache.cpp llama_kv_cache::llama_kv_cache: has_v = !is_mla), merged 2026-01-24");
    r.auto_parallel = true;
    r.fit = true;
    r.default_ctx = 0;
    r.mla_v_cache = false;
    r.output_layer_first = true;  // #18148 (opened 2025-12-17; in the 2026 sources, not in 0034230): builds b7376-b7829 may have it
  }
  // ---- generic ----
  row(EngineKind::generic, "", "generic paged engine (kvplan)", "kvplan docs/engine-rules.md");
  return t;
}

const std::vector<EngineRules>& rule_table() {
  static const std::vector<EngineRules> t = make_rule_table();
  return t;
}

}  // namespace

std::vector<const EngineRules*> engine_rule_ranges(EngineKind k) {
  std::vector<const EngineRules*> out;
  for (const auto& r : rule_table())
    if (r.kind == k) out.push_back(&r);
  return out;
}

const EngineRules& engine_rules(EngineKind k, const std::string& version) {
  const auto ranges = engine_rule_ranges(k);
  const EngineRules* pick = ranges.front();
  const bool newest = is_newest_version(version);
  for (const EngineRules* r : ranges)
    if (newest || compare_versions(r->first, version) <= 0) pick = r;
  return *pick;
}

const std::vector<i64>& vllm_block_sizes() {
  static const std::vector<i64> v = {1, 8, 16, 32, 64, 128};  // vllm/config/cache.py BlockSize
  return v;
}

namespace {
constexpr i64 kGiB = 1LL << 30;
constexpr i64 kMiB = 1LL << 20;

double round3(double x) { return std::round(x * 1000.0) / 1000.0; }

// SGLang server_args.py: the default --chunked-prefill-size by release and GPU memory (MiB)
i64 sglang_chunked_prefill(const EngineRules& r, double gpu_mib) {
  const double gib = gpu_mib / 1024.0;
  switch (r.sglang_fraction) {
    case SglangFractionRule::tp_table:
    case SglangFractionRule::tp_table_or_13g: return gpu_mib < 25000 ? 2048 : 8192;
    case SglangFractionRule::tiered_reserve: return gib < 35 ? 2048 : gib < 160 ? 8192 : 16384;
    case SglangFractionRule::graph_reserve: return gib < 35 ? 2048 : gib < 60 ? 4096 : gib < 160 ? 8192 : 16384;
  }
  return 8192;
}

// SGLang >= 0.5.3 server_args.py: the default --cuda-graph-max-bs by GPU memory and TP size
i64 sglang_cuda_graph_bs(double gpu_mib, i64 tp) {
  const double gib = gpu_mib / 1024.0;
  if (gib < 20) return 8;
  if (gib < 35) return tp < 4 ? 24 : 80;
  if (gib < 60) return tp < 4 ? 32 : 160;
  if (gib < 160) return tp < 4 ? 256 : 512;
  return 512;
}
}  // namespace

namespace {
// server_args.py: speculative decoding reserves more outside mem_fraction_static (the draft model and its CUDA
// graphs): from #7054 (tiered) 2 GiB, STANDALONE 6 GiB; from #10975 (graph reserve) added after the 10 GiB floor,
// STANDALONE 6 GiB, NGRAM none, other algorithms 2 GiB (read at S056 and in index copies of later server_args.py)
double sglang_spec_reserve_mib(SglangFractionRule rule, SpecMethod m) {
  if (m == SpecMethod::none || rule == SglangFractionRule::tp_table || rule == SglangFractionRule::tp_table_or_13g) return 0;
  if (m == SpecMethod::draft_model) return 6 * 1024;
  if (m == SpecMethod::ngram && rule == SglangFractionRule::graph_reserve) return 0;
  return 2 * 1024;
}

// dp_attention: attention data-parallel groups (1: off); server_args.py reserves 4 GiB more (tiered rule), or
// cuda_graph_max_bs x dp x 3 (+ x 1.5 above 300) before the 10 GiB floor (graph-reserve rule)
double sglang_fraction(const EngineRules& r, i64 gpu_memory_bytes, i64 tp, i64 pp, i64 chunked_prefill, i64 cuda_graph_bs, SpecMethod spec,
                       i64 dp_attention = 1) {
  const double mib = static_cast<double>(gpu_memory_bytes) / static_cast<double>(kMiB);  // get_device_memory_capacity
  const double tp_table = tp >= 16 ? 0.79 : tp >= 8 ? 0.81 : tp >= 4 ? 0.85 : tp >= 2 ? 0.87 : 0.88;
  const double ranks = static_cast<double>(tp * pp);
  switch (r.sglang_fraction) {
    case SglangFractionRule::tp_table: return tp_table;
    case SglangFractionRule::tp_table_or_13g: return mib <= 81920 ? tp_table : (mib - 13 * 1024) / mib;
    case SglangFractionRule::tiered_reserve: {
      const double gib = mib / 1024.0;
      const double reserved = (gib < 35 ? (2.8 + ranks / 10) * 1024 : gib < 90 ? (9.5 + ranks / 2) * 1024
                               : gib < 160 ? (12 + ranks / 2) * 1024 : 32 * 1024) + sglang_spec_reserve_mib(r.sglang_fraction, spec) +
                              (dp_attention > 1 ? 4 * 1024 : 0);
      return round3((mib - reserved) / mib);
    }
    case SglangFractionRule::graph_reserve: {
      double reserved = 512 + static_cast<double>(std::max<i64>(chunked_prefill, 2048)) * 1.5 + static_cast<double>(cuda_graph_bs) * 2 +
                        ranks / 8 * 1024;
      if (dp_attention > 1) {
        const double bs_dp = static_cast<double>(cuda_graph_bs) * static_cast<double>(dp_attention);
        reserved += bs_dp * 3 + (cuda_graph_bs > 300 ? bs_dp * 1.5 : 0);
      }
      if (mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
      reserved += sglang_spec_reserve_mib(r.sglang_fraction, spec);
      return round3((mib - reserved) / mib);
    }
  }
  return tp_table;
}
}  // namespace

double sglang_default_fraction(const EngineRules& r, i64 gpu_memory_bytes, i64 tp, i64 pp, i64 chunked_prefill, i64 cuda_graph_bs) {
  return sglang_fraction(r, gpu_memory_bytes, tp, pp, chunked_prefill, cuda_graph_bs, SpecMethod::none);
}

namespace {
// vLLM's step limits once max_model_len is known. V1 (engine/arg_utils.py _set_default_args at 99d7eb5, 0.11;
// _set_default_max_num_seqs_and_batched_tokens_args on main): a defaulted max_num_seqs is at most
// max_num_batched_tokens. From 0.12 (#26623) a defaulted max_num_batched_tokens is at least max_model_len without
// chunked prefill and at most max_num_seqs x max_model_len; 0.8-0.11's V1 sets enable_chunked_prefill = True whatever
// the flag says. Then SchedulerConfig's checks (verify_max_model_len; _verify_args before) refuse to start.
void resolve_vllm_batch_limits(EngineSettings& e, const EngineRules& rules, bool seqs_unset, bool batched_unset) {
  if (!rules.v0_engine) {
    if (rules.v1_chunked_optional && batched_unset) {
      if (!e.chunked_prefill.value_or(true)) e.max_num_batched_tokens = std::max(e.max_num_batched_tokens, e.max_model_len);
      const i64 cap = e.max_num_seqs > 0 && e.max_model_len > std::numeric_limits<i64>::max() / e.max_num_seqs
                          ? std::numeric_limits<i64>::max()
                          : e.max_num_seqs * e.max_model_len;
      e.max_num_batched_tokens = std::min(e.max_num_batched_tokens, cap);
    }
    if (seqs_unset) e.max_num_seqs = std::min(e.max_num_seqs, e.max_num_batched_tokens);
  }
  const bool chunked = rules.v0_engine ? e.chunked_prefill.value_or(false) : (!rules.v1_chunked_optional || e.chunked_prefill.value_or(true));
  const std::string batched = std::to_string(e.max_num_batched_tokens), len = std::to_string(e.max_model_len);
  if (!chunked && e.max_num_batched_tokens < e.max_model_len)
    throw InputError("max_num_batched_tokens",
                     batched + " is smaller than max_model_len " + len +
                         " with chunked prefill off: vLLM refuses to start (SchedulerConfig: a whole prompt must fit one step)",
                     "raise --max-num-batched-tokens to at least " + len + ", lower --max-model-len, or " +
                         (rules.v0_engine ? "give --enable-chunked-prefill (V0 leaves it off up to a 32K context)" : "drop --no-enable-chunked-prefill"));
  if (e.max_num_seqs > 0 && e.max_num_batched_tokens < e.max_num_seqs)
    throw InputError("max_num_batched_tokens",
                     batched + " is below max_num_seqs " + std::to_string(e.max_num_seqs) +
                         ": vLLM refuses to start (SchedulerConfig: \"must be greater than or equal to max_num_seqs\")",
                     "raise --max-num-batched-tokens to at least " + std::to_string(e.max_num_seqs) + " or lower --max-num-seqs");
}
}  // namespace

i64 vllm_mla_block(const EngineRules& rules, const std::string& compute_capability, bool sparse_mla) {
  if (sparse_mla && rules.blackwell_mla_128) return 64;
  if (compute_capability == "9.0") return 64;
  if (rules.blackwell_mla_128 && is_sm10x(compute_capability)) return 128;
  return 16;
}

void check_fraction(double f, const char* key) {
  if (f > 0.0 && f <= 1.0) return;
  char shown[32];
  std::snprintf(shown, sizeof shown, "%g", f);
  throw InputError(key, std::string("must be in (0, 1], got ") + shown, "use a fraction such as 0.9");
}

bool sglang_warns_longer_context(const std::string& version) {
  return !is_newest_version(version) && compare_versions(version, "0.4.4") >= 0 && compare_versions(version, "0.5.1") < 0;
}

EngineSettings resolve_engine_defaults(EngineSettings e, i64 model_max_context, i64 tp, i64 gpu_memory_bytes,
                                       const std::string& gpu_arch, bool mla, const std::string& compute_capability, i64 pp,
                                       bool sparse_mla, const std::string& model_arch) {
  const EngineRules& rules = engine_rules(e.kind, e.version);
  e.rules = &rules;
  const bool seqs_unset = e.max_num_seqs == 0, batched_unset = e.max_num_batched_tokens == 0;
  // vLLM EngineArgs: GPUs with >= 70 GiB that are not A100 get the larger serving defaults
  const bool big_gpu = gpu_memory_bytes >= 70 * kGiB && gpu_arch != "ampere";
  switch (e.kind) {
    case EngineKind::vllm:
      if (e.memory_fraction == 0) e.memory_fraction = rules.default_fraction;  // --gpu-memory-utilization default
      check_fraction(e.memory_fraction, "memory_fraction");
      // MLA models: vLLM forces the block size of the MLA backend it picks - FlashMLA (Hopper, SM 9.0) 64
      // ("Forcing kv cache block size to 64 for FlashMLA backend."); from 0.11 CUTLASS MLA, the Blackwell (SM 10.x)
      // default, 128; elsewhere Triton MLA keeps 16 (vllm/platforms/cuda.py CudaPlatformBase.check_and_update_config;
      // >= 0.21 the backend's preferred size, the same numbers for these defaults)
      // sparse MLA (DeepSeek-V3.2, index_topk), from 0.11: FlashMLA-sparse supports 64 only, on every GPU
      if (e.block_size == 0 && mla) e.block_size = vllm_mla_block(rules, compute_capability, sparse_mla);
      if (e.block_size == 0) e.block_size = 16;
      // the choices --block-size lists: {8,...,128} in 0.8.3, {1,8,...,128} in 0.10-0.11 (their --help); later releases
      // take any size (0.26.0's --help: BLOCK_SIZE, BlockSize then adding 256), which the attention backend checks
      // (kvplan keeps them to 1, 8 and multiples of 16, the pages its attention backends take)
      if (version_before(e.version, "0.12")) {
        const bool v08 = compare_versions(e.version, "0.10") < 0;
        if (std::find(vllm_block_sizes().begin(), vllm_block_sizes().end(), e.block_size) == vllm_block_sizes().end() || (v08 && e.block_size == 1))
          throw InputError("block_size", std::to_string(e.block_size) + " is not a --block-size choice of vLLM " + e.version,
                           v08 ? "use 8, 16, 32, 64 or 128" : "use 1, 8, 16, 32, 64 or 128");
      } else if (e.block_size != 1 && e.block_size != 8 && e.block_size % 16 != 0) {
        throw InputError("block_size", std::to_string(e.block_size) + " is not supported by vLLM", "use 1, 8 or a multiple of 16");
      }
      // EngineArgs defaults for `vllm serve`: >= 70 GiB GPUs (not A100) get max_num_seqs 1024 and
      // max_num_batched_tokens 8192; others 256 (1024 in 0.8.3) and 2048.
      // by usage context (shared/reference engine-versions.md 1.5): the offline LLM class gets 16384 / 8192 batched tokens;
      // a context the tables do not list (AsyncLLMEngine.from_engine_args: ENGINE_CONTEXT) falls to SchedulerConfig's
      // 2048 tokens and, from the per-context tables of 0.8.5 (#17073), 128 sequences (0.8.3's one default: 1024)
      if (e.usage_context == "engine") {
        if (e.max_num_seqs == 0) e.max_num_seqs = rules.small_gpu_256_seqs ? 128 : 1024;
        if (e.max_num_batched_tokens == 0) e.max_num_batched_tokens = 2048;
      }
      if (e.max_num_seqs == 0) e.max_num_seqs = big_gpu || !rules.small_gpu_256_seqs ? 1024 : 256;
      if (e.max_num_batched_tokens == 0) e.max_num_batched_tokens = e.usage_context == "llm" ? (big_gpu ? 16384 : 8192) : (big_gpu ? 8192 : 2048);
      break;
    case EngineKind::sglang: {
      const double mib = static_cast<double>(gpu_memory_bytes) / static_cast<double>(kMiB);
      if (e.max_num_batched_tokens == 0) e.max_num_batched_tokens = sglang_chunked_prefill(rules, mib);  // --chunked-prefill-size
      // the activation reserve counts max(chunked_prefill_size, 2048) tokens, or with --chunked-prefill-size -1 (no
      // chunking) max(max_prefill_tokens, 2048) (server_args.py _handle_gpu_memory_settings); a step then holds whole
      // prompts, so the token budget becomes max_model_len below
      const i64 activation_tokens =
          sglang_unchunked(e) ? e.max_prefill_tokens.value_or(kSglangMaxPrefillTokens) : e.max_num_batched_tokens;
      if (e.memory_fraction == 0)
        e.memory_fraction = sglang_fraction(rules, gpu_memory_bytes, tp, pp, activation_tokens,
                                            e.enforce_eager ? 0 : sglang_cuda_graph_bs(mib, tp), e.spec.method, e.attention_dp);
      check_fraction(e.memory_fraction, "memory_fraction");
      // DeepSeek NSA (V3.2): "Setting page size to 64 for DeepSeek NSA." (server_args.py
      // _handle_model_specific_adjustments, v0.5.3 on; NSATokenToKVPool asserts page_size == 64)
      if (e.block_size == 0 && mla && sparse_mla) e.block_size = 64;
      // SM 10.x (B200, GB200, B300): MHA models default to the trtllm_mha attention backend, which takes pages of 16, 32
      // or 64 ("TensorRT-LLM MHA only supports page_size of 16, 32 or 64, changing page_size from 1 to 64"): every MHA
      // model from 0.5.7 ("1.2 Use trtllm_mha for SM100/SM103", without speculative top-k > 1), gpt-oss before that
      // (server_args.py _handle_model_specific_adjustments, v0.5.2 on)
      if (e.block_size == 0 && !mla && is_sm10x(compute_capability)) {
        const bool generic = !version_before(e.version, "0.5.7");
        if ((generic && (!e.spec.on() || e.spec.topk <= 1)) || model_arch == "GptOssForCausalLM") e.block_size = 64;
      }
      if (e.block_size == 0) e.block_size = 1;  // --page-size default 1
      // max_num_seqs 0: SGLang derives max_running_requests from the pool (Planner::build_sglang)
      break;
    }
    case EngineKind::trtllm:
      if (e.memory_fraction == 0) e.memory_fraction = rules.default_fraction;  // KvCacheConfig.free_gpu_memory_fraction
      check_fraction(e.memory_fraction, "memory_fraction");
      // DeepSeek-V3.2 (DSA): DSACacheManager asserts "tokens_per_block must be set to 64 for DeepSeek v3.2"
      if (mla && sparse_mla && e.block_size != 0 && e.block_size != 64)
        throw InputError("tokens_per_block", std::to_string(e.block_size) + " is not 64, which TensorRT-LLM requires for DeepSeek-V3.2 (DSA)",
                         "use 64 or leave it unset");
      if (e.block_size == 0 && mla && sparse_mla) e.block_size = 64;
      if (e.block_size == 0) e.block_size = rules.tokens_per_block;  // tokens_per_block
      if (e.block_size < 1 || (e.block_size & (e.block_size - 1)) != 0)
        throw InputError("block_size", std::to_string(e.block_size) + " is not a power of two", "use 16, 32, 64 or 128");
      if (e.max_num_seqs == 0) e.max_num_seqs = 2048;        // max_batch_size
      if (e.max_num_batched_tokens == 0) e.max_num_batched_tokens = 8192;  // max_num_tokens
      break;
    case EngineKind::llamacpp:
      e.ctx_given = e.ctx_given || e.ctx_size >= 0;
      if (e.ctx_size < 0) e.ctx_size = rules.default_ctx;  // common_params n_ctx: 4096, or 0 from the --fit builds
      if (e.ctx_size == 0) e.ctx_size = model_max_context;
      if (e.ctx_size <= 0) throw InputError("ctx_size", "the model has no training context length", "pass --ctx-size N");
      if (e.parallel < 0) throw InputError("parallel", "must be >= 1 (or -1 / auto)");
      // -np not given: 1 slot, or from #16736 auto = 4 slots with the cache unified unless --no-kv-unified
      // (b6900-b7375 tested n_parallel == 1 && !kv_unified, so an explicit -np 1 became 4 unified slots too, #17300)
      if (rules.np1_is_auto && e.parallel == 1 && !e.kv_unified) e.parallel = 0;
      if (!e.kv_unified) e.kv_unified = e.parallel == 0 && rules.auto_parallel;
      if (e.parallel == 0) e.parallel = rules.auto_parallel ? 4 : 1;
      if (!e.fit) e.fit = rules.fit;
      if (e.ubatch_size < 1) throw InputError("ubatch_size", "must be >= 1");
      if (e.fit_ctx < 1) throw InputError("fit_ctx", "must be >= 1");
      if (e.fit_target_bytes < 0) throw InputError("fit_target", "must be >= 0");
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
    // vLLM V0 (EngineArgs._set_default_args_v0): chunked prefill only for a context above 32K (MLA and multimodal
    // models never), max_num_seqs 256; SchedulerConfig: max_num_batched_tokens max(max_model_len, 2048) unchunked,
    // 2048 chunked; prefix caching off unless asked
    if (e.kind == EngineKind::vllm && rules.v0_engine) {
      if (!e.chunked_prefill) e.chunked_prefill = e.max_model_len > 32768 && !mla;
      if (seqs_unset) e.max_num_seqs = 256;
      if (batched_unset) e.max_num_batched_tokens = *e.chunked_prefill ? 2048 : std::max<i64>(e.max_model_len, 2048);
      if (!e.prefix_caching) e.prefix_caching = false;
    }
    if (e.kind == EngineKind::vllm) resolve_vllm_batch_limits(e, rules, seqs_unset, batched_unset);
    if (sglang_unchunked(e)) e.max_num_batched_tokens = e.max_model_len;
    // SGLang (configs/model_config.py ModelConfig._derive_context_length) raises unless
    // SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is on, its default from #4195 (0.4.4) until #9388 (0.5.1)
    const bool allowed = e.allow_long_context.value_or(e.kind == EngineKind::sglang && sglang_warns_longer_context(e.version));
    if (model_max_context > 0 && e.max_model_len > model_max_context && !allowed) {
      if (e.kind == EngineKind::sglang)
        throw InputError("max_model_len", std::to_string(e.max_model_len) + " exceeds the context length " + std::to_string(model_max_context) +
                                                " SGLang derives from the model config: it refuses to start",
                         "lower it, or pass --allow-long-context to override as SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 does");
      throw InputError("max_model_len", std::to_string(e.max_model_len) + " exceeds the model's max_position_embeddings " +
                                              std::to_string(model_max_context),
                       e.kind == EngineKind::vllm ? "lower it, or pass --allow-long-context to override as VLLM_ALLOW_LONG_MAX_MODEL_LEN does"
                                                  : "lower it, or pass --allow-long-context to plan past it");
    }
  }
  if (e.max_num_seqs < 0 || (e.max_num_seqs == 0 && e.kind != EngineKind::sglang)) throw InputError("max_num_seqs", "must be >= 1");
  if (e.max_num_batched_tokens < 1) throw InputError("max_num_batched_tokens", "must be >= 1");
  if (e.max_prefill_tokens && *e.max_prefill_tokens < 1) throw InputError("max_prefill_tokens", "must be >= 1");
  if (e.kv_cache_memory_bytes && *e.kv_cache_memory_bytes < 0)
    throw InputError("kv_cache_memory_bytes", "must be >= 0");
  return e;
}

}  // namespace kvplan
