// Deployment -> plan input, workload resolution and sweep points (see deployment.hpp).
#include "kvplan/core/deployment.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace kvplan {

namespace {

// The dtype each engine computes in before the GPU's own limits (resolve_dtype).
ElemFormat engine_dtype(const DeploymentSpec& d, double cc, bool no_fp16, bool no_bf16) {
  if (d.dtype) return *d.dtype;
  const std::string& t = d.model.model_type;
  const ElemFormat stored = d.model.dtype;
  // vLLM from 0.10 (_resolve_auto_dtype): a checkpoint dtype the GPU lacks runs as the first dtype it supports that
  // the model allows: float16, or float32 for the models float16 destabilises
  if (stored == ElemFormat::bf16 && no_bf16 && engine_rules(EngineKind::vllm, d.engine.version).float32_to_bf16)
    return no_fp16 ? ElemFormat::f32 : ElemFormat::f16;
  if (stored != ElemFormat::f32) return stored;
  switch (d.engine.kind) {
    case EngineKind::vllm:
      // vLLM 0.8-0.9 (_get_and_verify_dtype): float32 -> fp16 "following common practice", gemma2 bf16
      if (!engine_rules(EngineKind::vllm, d.engine.version).float32_to_bf16) return t == "gemma2" ? ElemFormat::bf16 : ElemFormat::f16;
      [[fallthrough]];
    case EngineKind::generic:
      if (cc >= 8.0) return ElemFormat::bf16;
      return no_fp16 ? ElemFormat::f32 : ElemFormat::f16;
    case EngineKind::sglang:
      return t.rfind("gemma", 0) == 0 ? ElemFormat::bf16 : ElemFormat::f16;
    case EngineKind::llamacpp:
      // llama.cpp runs the GGUF convert_hf_to_gguf.py writes: its default --outtype (f16, later auto) makes a float32
      // checkpoint F16 (the auto heuristic finds no bf16 / f16 tensor and falls back to MOSTLY_F16:
      // ggml-org/llama.cpp conversion/base.py)
      return ElemFormat::f16;
    default:
      return stored;
  }
}

}  // namespace

ElemFormat resolve_dtype(const DeploymentSpec& d) {
  const std::string& t = d.model.model_type;
  // vLLM _FLOAT16_NOT_SUPPORTED_MODELS (config.py), by exact model_type: numerical instability in float16
  const bool no_fp16 = t == "gemma2" || t == "gemma3" || t == "gemma3_text" || t == "glm4" || t == "plamo2";
  double cc = 0;
  try {
    cc = d.gpu.compute_capability.empty() ? 8.0 : std::stod(d.gpu.compute_capability);
  } catch (const std::exception&) {
    cc = 8.0;
  }
  // vLLM on an NVIDIA GPU below compute capability 8.0 (Volta, Turing) has no bfloat16 (platforms/cuda.py
  // supported_dtypes [float16, float32]): --dtype bfloat16 is refused (check_if_supports_dtype), and so is a bfloat16
  // that vLLM 0.8-0.9 resolve under auto (a bfloat16 checkpoint, a float32 gemma2), by their worker at start-up
  // (_check_if_gpu_supports_dtype); from 0.10 auto falls back (engine_dtype)
  const bool no_bf16 = d.engine.kind == EngineKind::vllm && d.gpu.vendor == "nvidia" && cc < 8.0;
  const ElemFormat r = engine_dtype(d, cc, no_fp16, no_bf16);
  // vLLM 0.10 on refuses float16 for those models (_check_valid_dtype: "does not support float16")
  if (d.dtype && r == ElemFormat::f16 && no_fp16 && d.engine.kind == EngineKind::vllm && engine_rules(EngineKind::vllm, d.engine.version).float32_to_bf16)
    throw InputError("dtype", "vLLM refuses float16 for model_type '" + t + "' (numerical instability)", "use bfloat16 or float32");
  if (r == ElemFormat::bf16 && no_bf16) {
    const std::string gpu_cc = "the " + d.gpu.id + " has compute capability " + d.gpu.compute_capability;
    if (d.dtype)
      throw InputError("dtype", "vLLM runs bfloat16 only on GPUs of compute capability 8.0 or more (" + gpu_cc + ")",
                       no_fp16 ? "use --dtype float32 (this model is unstable in float16)" : "use --dtype half");
    throw InputError("model", "vLLM " + d.engine.version + " runs this " + std::string(format_info(d.model.dtype).name) +
                                  " checkpoint in bfloat16, which it refuses on GPUs below compute capability 8.0 (" + gpu_cc + ")",
                     no_fp16 ? "set the dtype to float32 (this model is unstable in float16)" : "set the dtype to half (--dtype half)");
  }
  return r;
}

void check_kv_format(EngineKind engine, ElemFormat f, const std::string& key, const std::string& version) {
  // weight-only ggml types (super-blocks of 256, ternary): no engine caches K or V in them
  // (llama.cpp common/arg.cpp kv_cache_types: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)
  if (!kv_capable(f))
    throw InputError(key, std::string(format_info(f).name) + " is a weight format, not a KV cache type",
                     "use f16, bf16, fp8_e4m3, q8_0, q4_0 (llama.cpp), nvfp4 (vLLM, TensorRT-LLM) or fp4_e2m1 (SGLang)");
  // no engine caches MXFP4 (a scale per 32): SGLang's FP4 cache, fp4_e2m1, has a scale per 16
  if (f == ElemFormat::mxfp4)
    throw InputError(key, "no engine keeps an mxfp4 KV cache", "use fp4_e2m1 on SGLang (a scale per 16 values) or nvfp4 on vLLM and TensorRT-LLM");
  // SGLang --kv-cache-dtype fp4_e2m1: server_args.py choices from v0.5.5 (#10078; MHA pools from v0.5.6, #13547)
  if (f == ElemFormat::fp4_e2m1 && engine != EngineKind::sglang)
    throw InputError(key, std::string("fp4_e2m1 is SGLang's FP4 KV cache, not ") + engine_name(engine) + "'s",
                     "use nvfp4 on vLLM and TensorRT-LLM");
  if (f == ElemFormat::fp4_e2m1 && version_before(version, "0.5.5"))
    throw InputError(key, "fp4_e2m1 is not a --kv-cache-dtype choice of SGLang " + version + " (from 0.5.5)", "use fp8_e4m3, or plan SGLang 0.5.5 or later");
  // NVFP4 KV cache: vLLM --kv-cache-dtype nvfp4 (vllm/config/cache.py CacheDType from #37332, merged 2026-04-17: 0.20
  // assumed; head_size / 2 B of e2m1 + head_size / 16 fp8 scales, the 9 B per 16 of ElemFormat::nvfp4) and
  // TensorRT-LLM (kv_cache_config dtype nvfp4); llama.cpp has none
  if (f == ElemFormat::nvfp4 && engine != EngineKind::vllm && engine != EngineKind::trtllm)
    throw InputError(key, std::string("an nvfp4 KV cache is not available in ") + engine_name(engine),
                     engine == EngineKind::sglang ? "SGLang's FP4 cache is fp4_e2m1" : "nvfp4 KV runs on vLLM and TensorRT-LLM; use fp8_e4m3 here");
  // vLLM: the spelling from #37332 (merged 2026-04-17), an attention backend that takes it from #40177 (FlashInfer,
  // merged 2026-04-30, after v0.20.0): 0.21
  if (f == ElemFormat::nvfp4 && engine == EngineKind::vllm && version_before(version, "0.21"))
    throw InputError(key, "vLLM " + version + " has no attention backend for an nvfp4 KV cache (FlashInfer takes it from 0.21: #40177)", "use fp8, or plan vLLM 0.21 or later");
  // vLLM's per-row caches (CacheDType, vllm/config/cache.py): TurboQuant presets from #38479 (merged 2026-04-15, v0.20.0);
  // int8 / fp8_per_token_head from #38378 (merged 2026-04-02, a day before v0.19.0: 0.20 assumed; the v0.18.1 docs lack
  // them, the v0.21.0 docs list them); int4_per_token_head from #40835 (merged 2026-06-24, five days before v0.24.0:
  // 0.25 assumed; the v0.26.0 docs list it)
  if (format_info(f).row_bits > 0) {
    const bool tq = is_turboquant(f);
    const std::string spelled = tq ? "TurboQuant" : std::string(format_info(f).name);
    if (engine != EngineKind::vllm)
      throw InputError(key, spelled + " is a vLLM KV cache dtype, not " + engine_name(engine) + "'s", "use fp8_e4m3");
    const char* first = f == ElemFormat::int4_pth ? "0.25" : "0.20";
    if (version_before(version, first))
      throw InputError(key, spelled + " is not a --kv-cache-dtype choice of vLLM " + version + " (from " + first + ")",
                       "use fp8, or plan vLLM " + std::string(first) + " or later");
  }
  const std::string name(format_info(f).name);
  const bool fp8 = f == ElemFormat::fp8_e4m3 || f == ElemFormat::fp8_e5m2;
  // llama.cpp caches K and V in its own types only (common/arg.cpp kv_cache_types): no fp8, no int8
  if (engine == EngineKind::llamacpp && (fp8 || f == ElemFormat::int8))
    throw InputError(key, "llama.cpp has no " + name + " KV cache (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)",
                     "use q8_0 (8.5 bits a value) or f16");
}

namespace {
bool holds_sliding(const Layer& l) { return l.kv == KvKind::sliding; }
}  // namespace

void check_turboquant_model(ModelSpec& m, std::optional<ElemFormat> dtype, const std::string& key) {
  // no MLA backend offers TURBOQUANT (CUDA lists it among the non-MLA backends only)
  if (caches_mla(m))
    throw InputError(key, "vLLM has no MLA attention backend for TurboQuant (" + m.id + " caches an MLA latent)", "use fp8 (or auto)");
  // the TURBOQUANT backend's validation (turboquant_attn.py): no attention sinks, no sliding window; and no way around
  // the second: "sliding_window" in the skip list breaks TurboQuant's merge of its boundary layers into the list
  // (arg_utils.py: sorted(..., key=int)), and sliding layers named by index keep bf16 pages that TurboQuant's slot
  // pages do not divide (kv_cache_utils.py unify_kv_cache_spec_page_size raises)
  if (std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.attn_sinks; }))
    throw InputError(key, "vLLM's TurboQuant backend refuses attention sinks (" + m.id + ")", "use fp8");
  if (std::any_of(m.layers.begin(), m.layers.end(), holds_sliding))
    throw InputError(key, "vLLM's TurboQuant backend refuses sliding-window layers, and skipping them leaves pages vLLM cannot unify (" + m.id + ")",
                     "use fp8 for this model");
  // Llama 4's chunked local attention builds a plain ChunkedLocalAttentionSpec (no TurboQuant slot) whose page does
  // not match the TurboQuant backend's cache shape
  if (std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.kv == KvKind::chunked; }))
    throw InputError(key, "vLLM's TurboQuant has no page for chunked local attention layers (" + m.id + ")", "use fp8 for this model");
  if (dtype && *dtype != ElemFormat::f16 && *dtype != ElemFormat::bf16)
    throw InputError(key, "vLLM's TurboQuant backend takes fp16 or bf16 models, not " + std::string(format_info(*dtype).name), "give --dtype bfloat16");
  const auto attn = std::find_if(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.kv == KvKind::full && l.k_head_dim > 0; });
  if (attn != m.layers.end() && (attn->k_head_dim & (attn->k_head_dim - 1)) != 0)
    m.notes.push_back("head size " + std::to_string(attn->k_head_dim) + " is not a power of two: TurboQuant's Hadamard rotation (Sylvester construction, "
                      "turboquant_attn.py) is built for powers of two; whether vLLM runs it is not checked here");
}

void vllm_kv_layers(ModelSpec& m, const DeploymentSpec& d, KvOptions& kv, ElemFormat dtype) {
  const bool tq = is_turboquant(kv.k_format) && is_turboquant(kv.v_format);
  const bool per_row = format_info(kv.k_format).row_bits > 0 || format_info(kv.v_format).row_bits > 0;
  const bool quantised = kv.k_format != dtype || kv.v_format != dtype;
  const std::string& version = d.engine.version;
  const std::string spelled = kv_pair_name(kv.k_format, kv.v_format);
  const bool hybrid = std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.kv == KvKind::ssm; });
  const bool mla = caches_mla(m);
  const bool sliding = std::any_of(m.layers.begin(), m.layers.end(), holds_sliding);
  // vLLM takes one --kv-cache-dtype for K and V: a per-row format on one side only has no spelling there
  if (per_row && !tq && kv.k_format != kv.v_format)
    throw InputError("kv_cache_dtype", "vLLM keeps K and V in one --kv-cache-dtype; " + spelled + " has no vLLM spelling",
                     "give --kv-cache-dtype " + std::string(format_info(format_info(kv.k_format).row_bits > 0 ? kv.k_format : kv.v_format).name));
  // no MLA backend lists the per-row dtypes (TurboQuant: CUDA offers TURBOQUANT among the non-MLA backends only;
  // per-token-head: TRITON_ATTN only); nvfp4 with MLA is refused by config/vllm.py
  if (mla && (per_row || kv.k_format == ElemFormat::nvfp4))
    throw InputError("kv_cache_dtype", "vLLM has no MLA attention backend for a " + spelled + " KV cache (" + m.id + " caches an MLA latent)",
                     "use fp8 (or auto)");
  // nvfp4: FlashInfer's TRT-LLM kernels on the SM 10.x family only (flashinfer.py supports_kv_cache_dtype)
  if (kv.k_format == ElemFormat::nvfp4 && !is_sm10x(d.gpu.compute_capability))
    throw InputError("kv_cache_dtype", "vLLM's nvfp4 KV cache runs on FlashInfer's SM 10.x kernels; " + d.gpu.name + " is compute capability " +
                     (d.gpu.compute_capability.empty() ? std::string("unknown") : d.gpu.compute_capability),
                     "use fp8, or a B200 / GB200 / B300");
  // int4_per_token_head: SlidingWindowSpec.real_page_size_bytes does not halve the row (2D + 8 budgeted, D + 8 laid out):
  // the pages do not unify and the engine stops (vllm-project/vllm#48842, open 2026-07-16)
  if (kv.k_format == ElemFormat::int4_pth && sliding)
    throw InputError("kv_cache_dtype", "vLLM sizes int4_per_token_head sliding-window pages as int8 (vllm#48842): " + m.id + " has sliding-window layers and does not start",
                     "use int8_per_token_head or fp8");
  if (tq) {
    check_turboquant_model(m, dtype, "kv_cache_dtype");
    if (std::find(d.kv_skip_layers.begin(), d.kv_skip_layers.end(), "sliding_window") != d.kv_skip_layers.end())
      throw InputError("kv_cache_dtype_skip_layers", "'sliding_window' stops vLLM's TurboQuant setup (it sorts the list as layer indices: int('sliding_window') fails)",
                       "give layer indices only");
    if (hybrid && version_before(version, "0.21"))
      throw InputError("kv_cache_dtype", "vLLM " + version + " refuses TurboQuant for hybrid models (" + m.id + " has recurrent layers; from 0.21: #39931)",
                       "use fp8, or plan vLLM 0.21 or later");
    // a hybrid's Mamba page aligns to lcm(TurboQuant page, model-dtype page) with a skip list (#39931,
    // _align_hybrid_block_size), which both pages divide; from 0.25 the block alignment (#42890) resizes the primary as
    // a 1-byte cache of 2 x H x D, whose block of TurboQuant slots no longer divides the kept layers' pages
    if (hybrid && !d.kv_skip_layers.empty() && engine_rules(EngineKind::vllm, version).skip_block_align)
      throw InputError("kv_cache_dtype_skip_layers", "with TurboQuant on a hybrid model leaves pages vLLM " + version + " cannot unify (" + m.id + ")",
                       "drop --kv-cache-dtype-skip-layers");
  }
  // the layers kept in the model dtype: the ones named (vLLM compares str(layer index): "03" names none), every
  // sliding-window layer for "sliding_window", and TurboQuant's boundary layers (TurboQuantConfig.get_boundary_skip_layers:
  // the first and last min(2, L / 2) of a dense model; none in a hybrid one)
  std::set<i64> skip;
  bool skip_sliding = false;
  for (const auto& w : d.kv_skip_layers) {
    if (w == "sliding_window") skip_sliding = true;
    else skip.insert(std::stoll(w));
  }
  const i64 L = static_cast<i64>(m.layers.size());
  const std::vector<i64> boundary = tq ? turboquant_boundary_layers(m) : std::vector<i64>{};
  kv.skip_list = !d.kv_skip_layers.empty() || !boundary.empty();
  skip.insert(boundary.begin(), boundary.end());
  if (!d.kv_skip_layers.empty() && version_before(version, "0.19"))
    throw InputError("kv_cache_dtype_skip_layers", "is not a flag of vLLM " + version + " (from 0.19: #33695)", "drop it, or plan vLLM 0.19 or later");
  if (!d.kv_skip_layers.empty() && !quantised)
    m.notes.push_back("--kv-cache-dtype-skip-layers changes nothing: the KV cache is already the model dtype (" + std::string(format_info(dtype).name) + ")");
  i64 kept = 0;
  bool kept_full = false;
  for (i64 i = 0; i < L; ++i) {
    Layer& l = m.layers[static_cast<size_t>(i)];
    if (l.kv == KvKind::ssm || l.kv == KvKind::none || l.kv == KvKind::cross) continue;
    l.kv_model_dtype = quantised && (skip.count(i) > 0 || (skip_sliding && holds_sliding(l)));
    if (!l.kv_model_dtype) continue;
    ++kept;
    kept_full = kept_full || !holds_sliding(l);
    // a kept MLA layer caches its latent in the model dtype (mla_attention.py sets its kv_cache_dtype to "auto"):
    // not the fp8_ds_mla record of the others
    if (l.kv == KvKind::mla_latent) l.mla_record_bytes = 0;
  }
  // from 0.25 the sliding-window layers pad to the shared page (block x quantised page) at 16 tokens, while a kept
  // full-attention layer's page is its block of model-dtype rows, larger: unify_kv_cache_spec_page_size scales the
  // padded sliding spec's block and its fixed padding fails the page assertion
  if (kept_full && sliding && engine_rules(EngineKind::vllm, version).skip_block_align)
    throw InputError("kv_cache_dtype_skip_layers", "keeps a full-attention layer of " + m.id + " in " + std::string(format_info(dtype).name) +
                     " beside padded sliding-window pages: vLLM " + (version.empty() ? std::string("(newest)") : version) + " does not start",
                     "skip sliding-window layers only, or plan vLLM 0.24");
  if (kept > 0)
    m.notes.push_back(std::to_string(kept) + " layer" + (kept == 1 ? "" : "s") + " keep" + (kept == 1 ? "s" : "") + " a " +
                      std::string(format_info(dtype).name) + " KV cache beside the " + spelled + " ones" +
                      (!boundary.empty() ? " (TurboQuant leaves the first and last " + std::to_string(boundary.size() / 2) + " unquantised)" : "") +
                      (!d.kv_skip_layers.empty() ? " (--kv-cache-dtype-skip-layers)" : ""));
}

std::string foreign_kv_format(EngineKind engine, ElemFormat f) {
  // the ggml block types are llama.cpp's: vLLM (fp8 / fp8_e4m3 / fp8_e5m2, nvfp4), SGLang (fp8_e4m3 / fp8_e5m2,
  // fp4_e2m1) and TensorRT-LLM (fp8, int8, nvfp4) quantise their caches otherwise; an int8 cache is TensorRT-LLM's
  const bool server = engine == EngineKind::vllm || engine == EngineKind::sglang || engine == EngineKind::trtllm;
  const bool ggml_block = format_info(f).block_elems == 32;
  if (server && ggml_block)
    return std::string(format_info(f).name) + " is a llama.cpp KV cache type that " + engine_name(engine) +
           " does not have: planned at its size as if it did (use fp8_e4m3, or --engine llama.cpp)";
  if ((engine == EngineKind::vllm || engine == EngineKind::sglang) && f == ElemFormat::int8)
    return std::string("an int8 KV cache is TensorRT-LLM's; ") + engine_name(engine) + " has none: planned at its size as if it did (use fp8_e4m3)";
  return "";
}

// DeepSeek-V3.2 (DSA) per engine: the indexer key is cached beside the latent by vLLM, SGLang and TensorRT-LLM; not
// by llama.cpp (its deepseek2 GGUF graph has no indexer). vLLM stores an fp8 latent as fp8_ds_mla, FlashMLA-sparse's
// record: kv_lora_rank fp8 + an fp32 scale per 128 + the rope part in bf16 = 512 + 16 + 128 = 656 B
// (MLAAttentionSpec.real_page_size_bytes; DeepseekV32ForCausalLM turns any fp8 cache dtype into fp8_ds_mla). SGLang
// sizes its pool with the plain latent row (model_runner.py cell_size) though it stores the same 656-B record.
static void sparse_mla_layout(ModelSpec& m, ElemFormat k_format, const EngineSettings& e, bool notes) {
  const EngineKind engine = e.kind;
  const bool fp8 = k_format == ElemFormat::fp8_e4m3 || k_format == ElemFormat::fp8_e5m2;
  // SGLang sized its pool without the indexer until #11309 (2025-10-08, first in v0.5.3.post1)
  const bool old_sglang = engine == EngineKind::sglang && version_before(e.version, "0.5.3.post1");
  i64 record = 0;
  for (Layer& l : m.layers) {
    if (l.kv != KvKind::mla_latent) continue;
    if (engine == EngineKind::llamacpp || old_sglang) l.indexer_priced = false;  // the indexer weights stay
    if (engine == EngineKind::llamacpp) l.sparse_decode = false;
    // TensorRT-LLM DSACacheManager.get_cache_bytes_per_token: kv_factor 1 + (index_head_dim + scales) / (kv_lora_rank
    // + rope) over the latent's elements, in the KV dtype: the 132-element indexer key priced at the KV element size
    // (264 B in bf16; the pool it allocates is uint8)
    if (engine == EngineKind::trtllm && l.indexer_head_dim > 0 && format_info(k_format).block_elems == 1)
      l.indexer_record_bytes = row_bytes(k_format, layer_indexer_key_bytes(l), "indexer key priced in the KV dtype");
    if (engine == EngineKind::vllm && fp8)
      record = l.mla_record_bytes = mla_fp8_record_bytes(l);
  }
  if (!notes) return;
  if (engine == EngineKind::llamacpp) m.notes.push_back("DeepSeek sparse attention: llama.cpp keeps no indexer key cache");
  if (old_sglang) m.notes.push_back("DeepSeek NSA: SGLang before 0.5.3.post1 leaves the indexer key out of its cell size (#11309)");
  if (record > 0)
    m.notes.push_back("vLLM stores the fp8 latent as fp8_ds_mla: " + std::to_string(record) +
                      " B per token per layer (fp8 latent + an fp32 scale per 128 + the rope part in bf16)");
}

namespace {

// The engines whose --kv-cache-dtype auto follows a ModelOpt checkpoint's kv_cache_quant_algo, and from which version
// ("" every version kvplan knows), for FP8 and NVFP4 caches.
struct CheckpointKvRule {
  EngineKind kind;
  const char* label;  // as the engine calls itself
  const char* first;
  bool fp8, nvfp4;  // the cache each follows from this version
};
constexpr CheckpointKvRule kCheckpointKvRules[] = {
    // TensorRT-LLM reads kv_cache_quant_algo into its QuantConfig and sizes an FP8 or NVFP4 cache under
    // kv_cache_config dtype "auto" (ModelLoader._update_from_hf_quant_config; tests/unittest/llmapi)
    {EngineKind::trtllm, "TensorRT-LLM", "", true, true},
    // vLLM resolve_kv_cache_dtype_string: MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP has fp8 -> fp8_e4m3; #29980,
    // reverted (#30653) and landed again as #30785 in the week to 2025-12-19, after v0.13.0's branch: v0.14.0 on;
    // "nvfp4" -> nvfp4 (and a 4-bit float kv_cache_scheme) with the nvfp4 cache itself, #37332 (merged 2026-04-17: 0.20)
    {EngineKind::vllm, "vLLM", "0.20.0", false, true},
    {EngineKind::vllm, "vLLM", "0.14.0", true, false},
    // SGLang ModelRunner.configure_kv_cache_dtype: "auto" and kv_cache_quant_algo FP8 -> float8_e4m3fn, anything
    // else the model dtype; from #10336 (2025-09-15), first in v0.5.3
    {EngineKind::sglang, "SGLang", "0.5.3", true, false},
};

}  // namespace

std::optional<ElemFormat> checkpoint_kv_format(const WeightQuant& q, const EngineSettings& e) {
  if (q.checkpoint_kv.empty()) return std::nullopt;
  const bool fp8 = q.checkpoint_kv == "FP8";
  for (const auto& r : kCheckpointKvRules) {
    if (r.kind != e.kind || !(fp8 ? r.fp8 : r.nvfp4)) continue;
    if (*r.first && version_before(e.version, r.first)) return std::nullopt;
    return fp8 ? ElemFormat::fp8_e4m3 : ElemFormat::nvfp4;
  }
  return std::nullopt;
}

std::string checkpoint_kv_adopters(const std::string& algo) {
  std::vector<std::string> names;
  for (const auto& r : kCheckpointKvRules)
    if (algo == "FP8" ? r.fp8 : r.nvfp4) names.push_back(r.label + (*r.first ? std::string(" >= ") + r.first : ""));
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

PlanSpec plan_spec(const DeploymentSpec& d) {
  PlanSpec s;
  s.model = d.model;
  const ElemFormat dtype = resolve_dtype(d);
  if (dtype != d.model.dtype && d.model.quant.method != "override")
    s.model.notes.push_back("torch_dtype " + std::string(format_info(d.model.dtype).name) + " runs as " + std::string(format_info(dtype).name) +
                            " under " + engine_name(d.engine.kind) + " (its dtype resolution)");
  if (dtype != d.model.dtype && s.model.exact_weight_bytes && d.model.quant.method == "none" && d.engine.kind != EngineKind::llamacpp) {
    // weight files read in one dtype and cast to another at load: the bytes scale with the element size
    const long double scaled = static_cast<long double>(*s.model.exact_weight_bytes) * format_info(dtype).block_bytes /
                               format_info(d.model.dtype).block_bytes;
    s.model.exact_weight_bytes = static_cast<i64>(scaled);
  }
  s.model.dtype = dtype;
  if (d.draft) {  // vLLM / SGLang load the draft in the target's dtype (SpeculativeConfig: draft dtype = target dtype)
    s.draft = d.draft;
    s.draft->dtype = dtype;
  }
  // KV "auto": the dtype the engine computes in; llama.cpp caches f16 unless -ctk/-ctv say otherwise; a ModelOpt
  // checkpoint's own KV quantisation where the engine follows it
  ElemFormat kv_default = d.engine.kind == EngineKind::llamacpp ? ElemFormat::f16 : dtype;
  if (const auto ckpt = checkpoint_kv_format(d.model.quant, d.engine); ckpt && !d.k_format && !d.v_format) {
    kv_default = *ckpt;
    s.model.notes.push_back("KV cache " + std::string(format_info(*ckpt).name) + ": the checkpoint declares a ModelOpt " +
                            d.model.quant.checkpoint_kv + ", which " + engine_name(d.engine.kind) +
                            " follows under --kv-cache-dtype auto (give --kv-cache-dtype to choose another)");
  }
  // SGLang, DeepSeek NSA (V3.2) on Blackwell: "Setting KV cache dtype to fp8_e4m3 for DeepSeek NSA." under auto
  // (server_args.py _handle_model_specific_adjustments: fp8_e4m3 if the compute capability's major >= 10)
  if (d.engine.kind == EngineKind::sglang && d.model.sparse_mla && !d.k_format && !d.v_format &&
      std::atoi(d.gpu.compute_capability.c_str()) >= 10) {
    kv_default = ElemFormat::fp8_e4m3;
    s.model.notes.push_back("KV cache fp8_e4m3: SGLang's DeepSeek NSA default on a GPU of compute capability 10 or more");
  }
  s.kv.k_format = d.k_format.value_or(kv_default);
  s.kv.v_format = d.v_format.value_or(kv_default);
  if (d.model.sparse_mla) sparse_mla_layout(s.model, s.kv.k_format, d.engine, true);
  if (s.draft && s.draft->sparse_mla) sparse_mla_layout(*s.draft, s.kv.k_format, d.engine, false);  // an MTP draft of V3.2
  s.kv.state_format = d.state_format.value_or(dtype);
  s.kv.skip_format = dtype;
  check_kv_format(d.engine.kind, s.kv.k_format, d.engine.kind == EngineKind::llamacpp ? "cache_type_k" : "kv_cache_dtype", d.engine.version);
  check_kv_format(d.engine.kind, s.kv.v_format, d.engine.kind == EngineKind::llamacpp ? "cache_type_v" : "kv_cache_dtype", d.engine.version);
  if (d.engine.kind == EngineKind::vllm) vllm_kv_layers(s.model, d, s.kv, dtype);
  s.gpu = d.gpu;
  s.parallel = d.parallel;
  if (d.enable_expert_parallel) s.parallel.ep = mul(d.parallel.tp, d.parallel.dp, "expert-parallel ranks");
  s.overrides = d.overrides;
  s.llama_draft = d.llama_draft;
  s.llama_tensor_moves = d.llama_tensor_moves;
  s.llama_lora_tensors = d.llama_lora_tensors;
  s.llama_mmproj_bytes = d.llama_mmproj_bytes;
  s.llama_mmproj_offload = d.llama_mmproj_offload;
  const i64 gpu_mem = d.overrides.gpu_memory.value_or(d.gpu.memory_bytes);
  EngineSettings e = d.engine;
  if (d.max_model_len_auto) e.max_model_len = 0;
  // SGLang and DeepSeek NSA (V3.2), server_args.py _handle_model_specific_adjustments: from 0.5.3 to #13646
  // (2025-11-30, first in 0.5.6) "DP attention is enabled for DeepSeek NSA" with dp_size = tp_size, at this point's TP;
  // 0.5.3 itself also set mem_fraction_static 0.8 ("Setting mem fraction static to 0.8 for DeepSeek NSA.", dropped in
  // 0.5.3.post1), over any given
  if (e.kind == EngineKind::sglang && d.model.sparse_mla && !is_newest_version(e.version) && !version_before(e.version, "0.5.3") &&
      version_before(e.version, "0.5.6")) {
    if (e.attention_dp == 1 && d.parallel.tp > 1 && d.parallel.dp == 1) {
      e.attention_dp = d.parallel.tp;
      s.model.notes.push_back("SGLang " + e.version + " turns DP attention on for DeepSeek NSA with dp_size = tp_size (" +
                              std::to_string(d.parallel.tp) + " attention groups of one GPU each)");
    }
    if (compare_versions(e.version, "0.5.3.post1") < 0) {
      if (e.memory_fraction != 0 && e.memory_fraction != 0.8)
        s.model.notes.push_back("SGLang 0.5.3 sets mem_fraction_static 0.8 for DeepSeek NSA, over the given " + std::to_string(e.memory_fraction).substr(0, 5));
      e.memory_fraction = 0.8;
    }
  }
  const bool mla = std::any_of(d.model.layers.begin(), d.model.layers.end(), [](const Layer& l) { return l.kv == KvKind::mla_latent; });
  // SGLang derives its context length by its own rule (get_context_length), not vLLM's
  const i64 model_context = e.kind == EngineKind::sglang && d.model.max_context_sglang > 0 ? d.model.max_context_sglang : d.model.max_context;
  s.engine = resolve_engine_defaults(e, model_context, d.parallel.tp, gpu_mem, d.gpu.architecture, mla, d.gpu.compute_capability,
                                     d.parallel.pp, d.model.sparse_mla, d.model.architecture);
  if (d.max_model_len_auto && s.engine.kind == EngineKind::vllm) {
    // vLLM max_model_len auto (-1): the longest length whose KV fits one request, at most the model's
    const Planner probe(s);
    if (!probe.engine().startup_ok && probe.engine().estimated_max_model_len > 0)
      s.engine.max_model_len = probe.engine().estimated_max_model_len;
  }
  return s;
}

ResolvedWorkload resolve_workload(const Workload& w, const Planner& p) {
  ResolvedWorkload r;
  r.prompt = w.prompt.value_or(0);
  r.output = w.output.value_or(0);
  if (w.prefix_before_prompt && w.shared_prefix > 0 && (w.prompt || w.output)) {
    // the prefix before each prompt: a request holds prefix + prompt + output tokens; a --context is that total
    const i64 own = w.context ? sub(*w.context, w.shared_prefix, "context - shared prefix") : 0;
    if (w.context && !w.prompt) r.prompt = own - r.output;
    if (w.context && !w.output) r.output = own - r.prompt;
    r.tokens = add(w.shared_prefix, add(r.prompt, r.output, "prompt + output"), "shared prefix + prompt + output");
    if (w.context && r.tokens != *w.context)
      throw InputError("context", std::to_string(*w.context) + " tokens but shared prefix + prompt + output = " + std::to_string(r.tokens),
                       "give context or prompt and output tokens, not both");
    if (w.context && (r.prompt < 1 || r.output < 1))
      throw InputError("context", std::to_string(*w.context) + " tokens leave no " + (r.prompt < 1 ? "prompt" : "output") +
                                      " after the " + std::to_string(w.shared_prefix) + "-token shared prefix",
                       "give a longer context or a shorter prefix");
    r.tokens_source = w.context ? "context" : "shared prefix + prompt_tokens + output_tokens";
  } else if (w.context) {
    r.tokens = *w.context;
    r.tokens_source = "context";
    // a context with one of the two lengths: the other is what the context leaves (--context 8192 --prompt-tokens 7000
    // is 1,192 output tokens); with both, they must add up to it
    if (!w.prompt && !w.output) r.prompt = r.tokens;
    if (w.prompt && !w.output) r.output = sub(r.tokens, r.prompt, "context - prompt tokens");
    if (w.output && !w.prompt) r.prompt = sub(r.tokens, r.output, "context - output tokens");
    if (add(r.prompt, r.output, "prompt + output") != r.tokens)
      throw InputError("context", std::to_string(r.tokens) + " tokens but prompt_tokens + output_tokens = " +
                                      std::to_string(add(r.prompt, r.output, "prompt + output")),
                       "give context or prompt and output tokens, not both");
    if (r.prompt < 1 || r.output < 0)
      throw InputError("context", std::to_string(r.tokens) + " tokens leave no room for " +
                                      (r.prompt < 1 ? "a prompt after " + std::to_string(r.output) + " output tokens"
                                                    : std::to_string(r.prompt) + " prompt tokens"),
                       "give a longer context or fewer tokens");
  } else if (w.prompt || w.output) {
    // a request has a prompt (every engine refuses an empty one): output tokens alone do not say how long it is (a
    // simulated workload has its own default prompt length: simulate's, prefix_before_prompt, or default_prompt)
    if (!w.prompt && r.output >= 1 && w.default_prompt > 0) r.prompt = w.default_prompt;
    if (!w.prompt && r.output >= 1 && !w.prefix_before_prompt && w.default_prompt <= 0)
      throw InputError("output_tokens", std::to_string(r.output) + " output tokens without a prompt length",
                       "give the prompt tokens too, or the context (prompt + output tokens)");
    r.tokens = add(r.prompt, r.output, "prompt + output");
    r.tokens_source = "prompt_tokens + output_tokens";
  } else {
    r.tokens = p.max_len();
    r.prompt = r.tokens;
    r.tokens_source = p.spec().engine.kind == EngineKind::llamacpp ? "per-slot context" : "max_model_len";
  }
  // name what was given: a request has a prompt (--prompt-tokens 0 is refused whatever the output), and
  // --output-tokens 0 alone leaves nothing
  if (w.prompt && *w.prompt < 1) throw InputError("prompt_tokens", "must be >= 1 (a request has a prompt)");
  if (r.tokens < 1)
    throw InputError(w.context ? "context" : "output_tokens", w.context ? "must be >= 1 token" : "must be >= 1 when no prompt is given",
                     w.context ? "" : "give --prompt-tokens too, or a positive --output-tokens");
  r.concurrency = w.concurrency;
  if (r.concurrency < 1) throw InputError("concurrency", "must be >= 1");
  r.shared_prefix = w.shared_prefix;
  if (r.shared_prefix > r.tokens)
    throw InputError("shared_prefix", std::to_string(r.shared_prefix) + " exceeds the " + std::to_string(r.tokens) + " tokens per request",
                     "the prefix is part of each request's prompt");
  return r;
}

i64 SweepAxes::cells() const {
  i64 n = 1;
  for (std::size_t len : {gpus.size(), tensor_parallel.size(), kv_formats.size(), contexts.size(), concurrencies.size()})
    n = mul(n, std::max<i64>(static_cast<i64>(len), 1), "sweep cells");
  return n;
}

DeploymentSpec sweep_point(const DeploymentSpec& base, const SweepAxes& axes, std::size_t g, std::size_t t, std::size_t k) {
  DeploymentSpec d = base;
  if (!axes.gpus.empty()) d.gpu = axes.gpus[g];
  if (!axes.tensor_parallel.empty()) d.parallel.tp = axes.tensor_parallel[t];
  if (!axes.kv_formats.empty()) {
    const auto& f = axes.kv_formats[k];
    d.k_format = f ? std::optional<ElemFormat>(f->k) : std::nullopt;
    d.v_format = f ? std::optional<ElemFormat>(f->v) : std::nullopt;
  }
  return d;
}

void validate_sweep(const DeploymentSpec& base, const SweepAxes& axes) {
  (void)axes.cells();
  // cells grow with context and concurrency: the largest of each raises any overflow
  const i64 ctx = axes.contexts.empty() ? 1 : *std::max_element(axes.contexts.begin(), axes.contexts.end());
  const i64 conc = axes.concurrencies.empty() ? 1 : *std::max_element(axes.concurrencies.begin(), axes.concurrencies.end());
  for_each_sweep_point(base, axes, [&](const DeploymentSpec& d) { (void)Planner(plan_spec(d)).cell(ctx, conc, d.work.shared_prefix); });
}

std::vector<std::string> workload_warnings(const ResolvedWorkload& w, const Planner& p) {
  std::vector<std::string> out;
  const EngineSettings& e = p.spec().engine;
  const i64 budget = e.max_num_batched_tokens;
  const bool asked = w.tokens_source == "context" || w.tokens_source == "prompt_tokens + output_tokens";
  if (e.kind != EngineKind::trtllm || e.chunked_prefill.value_or(false) || budget <= 0 || !asked || w.prompt <= 0) return out;
  const std::string prompt = std::to_string(w.prompt), tokens = std::to_string(budget);
  if (w.prompt > budget) {
    out.push_back("TensorRT-LLM: a " + prompt + "-token prompt is longer than max_num_tokens " + tokens +
                  " and chunked context is off: no step can hold it; set max_num_tokens to at least " + prompt +
                  " or enable_chunked_prefill: true");
  } else if (w.concurrency > 1 && w.prompt + (w.concurrency - 1) > budget) {
    const i64 beside = budget - w.prompt;
    out.push_back("TensorRT-LLM: a " + prompt + "-token prompt fits max_num_tokens " + tokens + " beside at most " +
                  std::to_string(beside) + " decoding request" + (beside == 1 ? "" : "s") + " (chunked context off): at " +
                  "concurrency " + std::to_string(w.concurrency) +
                  " a new prompt waits for running requests to finish (the micro-batch scheduler stops at the first "
                  "request past max_num_tokens); set max_num_tokens to at least " +
                  std::to_string(w.prompt + w.concurrency - 1) + " (prompt + concurrency - 1) or enable_chunked_prefill: true");
  }
  return out;
}

}  // namespace kvplan
