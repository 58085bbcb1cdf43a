// The typed settings table (see settings.hpp). One row per setting; adding a setting is adding a
// row here, its field in the core struct, and its effect in core (docs/architecture.md).
//
// Spelling strings: "|" separates spellings; a spelling may end in "@engines" (kvplan flags that
// belong to some engines: "--mem-fraction-static@sglang") or ":conv" (engine flags whose value is
// converted: "--max-model-len:vllm_int"), and "=false" for a switch that sets false.
#include "kvplan/io/settings.hpp"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "kvplan/core/format.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/engine_flags.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::io {

bool sglang_chunking_off(std::string_view value) {
  long long n = 1;
  return std::from_chars(value.data(), value.data() + value.size(), n).ptr == value.data() + value.size() && n <= 0;
}

std::vector<std::string> split_list(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(sep, start), s.size());
    if (end > start) out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

namespace {

using E = EngineKind;

// vLLM --limit-mm-per-prompt: the items of each modality one prompt may carry. vLLM 0.8 takes
// key=value pairs (image=16,video=2; vllm-project/vllm v0.8.3 vllm/engine/arg_utils.py, nullable_kvs);
// 0.10 on a JSON object ({"image": 16}; later also {"image": {"count": 16, ...}}, vllm/config/multimodal.py).
// The image and video counts reach the plan (EngineSettings::mm_image_limit, mm_video_limit); every count 0 is
// vLLM's text-only mode.
void apply_limit_mm(const SettingsBag& bag, DeploymentSpec& s) {
  const std::string key = "limit_mm_per_prompt";
  const std::string text = bag.text(key).value_or("");
  const std::string& version = s.engine.version;
  const bool pairs = version_before(version, "0.10.0");
  auto count_of = [](const std::string& t) -> std::optional<i64> {
    if (t.empty() || t.size() > 9 || !std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); }))
      return std::nullopt;
    return std::stoll(t);
  };
  std::optional<i64> image, video;
  if (pairs) {
    const std::string fix = "vLLM " + version + " takes modality=count pairs such as image=16,video=2";
    if (!text.empty() && text.front() == '{') bag.fail(key, "'" + text + "' is JSON", fix);
    if (text.empty()) bag.fail(key, "empty value", fix);
    for (const auto& part : split_list(text, ',')) {
      const auto eq = part.find('=');
      const auto n = eq == std::string::npos ? std::nullopt : count_of(part.substr(eq + 1));
      if (eq == 0 || !n) bag.fail(key, "'" + part + "' is not modality=count", fix);
      if (part.substr(0, eq) == "image") image = *n;
      if (part.substr(0, eq) == "video") video = *n;
    }
  } else {
    const std::string fix =
        "vLLM 0.10 and later take a JSON object such as '{\"image\": 16}' (image=16 is vLLM 0.8's form)";
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) bag.fail(key, "'" + text + "' is not JSON", fix);
    if (!j.is_object()) bag.fail(key, "expected a JSON object of counts per modality, got " + describe_value(j), fix);
    for (auto it = j.begin(); it != j.end(); ++it) {
      const json& v = it.value().is_object() && it.value().contains("count") ? it.value()["count"] : it.value();
      if (!v.is_number_integer() || v.get<i64>() < 0)
        bag.fail(key, "\"" + it.key() + "\": expected a count >= 0 or {\"count\": N}, got " + describe_value(it.value()),
                 fix);
      if (it.key() == "image") image = v.get<i64>();
      if (it.key() == "video") video = v.get<i64>();
    }
  }
  if (image) s.engine.mm_image_limit = *image;
  if (video) s.engine.mm_video_limit = *video;
}

// vLLM --mm-processor-kwargs: JSON keyword arguments for the Hugging Face processor, which vLLM also builds
// its profiling inputs with (vllm/config/multimodal.py mm_processor_kwargs; InputProcessingContext
// get_hf_processor merges them). kvplan reads max_pixels, the Qwen2/2.5/3-VL image processor's largest image
// (EngineSettings::mm_max_pixels); other keys are left to vLLM.
void apply_mm_processor_kwargs(const SettingsBag& bag, DeploymentSpec& s) {
  const std::string key = "mm_processor_kwargs";
  const std::string text = bag.text(key).value_or("");
  const std::string fix = "pass a JSON object such as '{\"max_pixels\": 1003520}'";
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) bag.fail(key, "'" + text + "' is not JSON", fix);
  if (!j.is_object()) bag.fail(key, "expected a JSON object of processor arguments, got " + describe_value(j), fix);
  if (!j.contains("max_pixels")) return;
  const json& v = j["max_pixels"];
  if (!v.is_number_integer() || v.get<i64>() < 1 || v.get<i64>() > (i64(1) << 40))
    bag.fail(key, "\"max_pixels\": expected an integer from 1 to 2^40, got " + describe_value(v), fix);
  s.engine.mm_max_pixels = v.get<i64>();
}

// vLLM --scheduling-policy takes fcfs or priority (vllm/config/scheduler.py SchedulerPolicy, every release since 0.6);
// SGLang's --schedule-policy choices change between releases and only the simulator reads the order, which checks
// the ones it simulates (cli/sim_options.cpp sim_config).
void apply_scheduling_policy(const SettingsBag& bag, DeploymentSpec& s) {
  const std::string key = "scheduling_policy";
  const std::string v = bag.text(key).value_or("");
  if (v.empty()) bag.fail(key, "empty value", "give fcfs, or priority (vLLM) / lpm (SGLang)");
  if (s.engine.kind == EngineKind::vllm && v != "fcfs" && v != "priority")
    bag.fail(key, "'" + v + "' is not a vLLM scheduling policy", "use fcfs or priority");
  s.engine.scheduling_policy = v;
}

// vLLM --usage-context serve | llm | engine (kvplan's own: vLLM takes it from how it is started)
void apply_usage_context(const SettingsBag& bag, DeploymentSpec& s) {
  const std::string key = "usage_context";
  const std::string v = bag.choice(key).value_or("");
  if (s.engine.kind != EngineKind::vllm) bag.fail(key, "applies to vLLM only", "drop it, or plan with --engine vllm");
  s.engine.usage_context = v;
}

// TensorRT-LLM scheduler_config.capacity_scheduler_policy: one of CapacitySchedulerPolicy's three values
// (tensorrt_llm/llmapi/llm_args.py; the YAML gives the upper-case name), kept upper-case.
void apply_capacity_policy(const SettingsBag& bag, DeploymentSpec& s) {
  const std::string key = "capacity_scheduler_policy";
  std::string v = bag.text(key).value_or("");
  // TensorRT-LLM's option YAML validates the enum by its value (llm_args.py CapacitySchedulerPolicy, a StrEnum):
  // only the upper-case names load there; kvplan's own flag takes any case
  auto known = [](const std::string& p) { return p == "GUARANTEED_NO_EVICT" || p == "MAX_UTILIZATION" || p == "STATIC_BATCH"; };
  const SettingValue* given = bag.get(key);
  if (given && given->origin.spelling.find("scheduler_config.") == 0 && !known(v))
    bag.fail(key, "'" + v + "' is not a CapacitySchedulerPolicy value TensorRT-LLM loads from its options YAML",
             "write GUARANTEED_NO_EVICT, MAX_UTILIZATION or STATIC_BATCH, upper case");
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (!known(v))
    bag.fail(key, "'" + bag.text(key).value_or("") + "' is not a TensorRT-LLM capacity scheduler policy",
             "use GUARANTEED_NO_EVICT, MAX_UTILIZATION or STATIC_BATCH");
  s.engine.capacity_scheduler_policy = v;
}

// --host-bandwidth: host memory bytes/s, as a number (8.96e10) or a byte unit per second (89.6GB/s, 100GiB/s); the
// performance model's host_weights and host_kv_read terms read at it (docs/performance-model.md).
void apply_host_bandwidth(const SettingsBag& bag, DeploymentSpec& s) {
  if (const auto v = bag.bandwidth("host_bandwidth", "give bytes/s or a rate such as 89.6GB/s (dual-channel DDR5-5600) or 8.96e10"))
    s.perf.host_bandwidth = *v;
}

Conv conv_named(const std::string& n) {
  if (n == "vllm_int") return Conv::vllm_int;
  if (n == "auto_count") return Conv::auto_count;
  if (n == "gpu_layers") return Conv::gpu_layers;
  if (n == "quantization") return Conv::quantization;
  if (n == "rope_json") return Conv::rope_json;
  if (n == "negate") return Conv::negate;
  if (n == "sglang_chunk") return Conv::sglang_chunk;
  throw std::logic_error("settings table: unknown conversion " + n);
}

// "--a@vllm,generic|-b:vllm_int|--no-x=false"
std::vector<Spelling> spellings(std::string_view list) {
  std::vector<Spelling> out;
  for (std::string s : split_list(list, '|')) {
    Spelling sp;
    if (s.size() > 6 && s.ends_with("=false")) {
      s.erase(s.size() - 6);
      sp.conv = Conv::negate;
    }
    if (const auto at = s.find('@'); at != std::string::npos) {
      for (const auto& e : split_list(s.substr(at + 1), ',')) {
        const auto k = parse_engine(e);
        if (!k) throw std::logic_error("settings table: unknown engine " + e);
        sp.engines.push_back(*k);
      }
      s.erase(at);
    }
    if (const auto colon = s.find(':'); colon != std::string::npos) {
      sp.conv = conv_named(s.substr(colon + 1));
      s.erase(colon);
    }
    sp.name = s;
    out.push_back(sp);
  }
  return out;
}

struct Row {
  SettingDef d;
  Row(const char* key, SettingType t, const char* group, const char* help) {
    d.key = key;
    d.type = t;
    d.group = group;
    d.help = help;
  }
  Row& flags(const char* s) { d.kvplan = spellings(s); return *this; }
  Row& on(E e, const char* s) { d.engine[e] = spellings(s); return *this; }
  Row& yaml(const char* s) { d.trtllm_yaml = spellings(s); return *this; }
  Row& env(const char* s) { d.env = spellings(s); return *this; }
  Row& choices(std::vector<std::string> c) { d.choices = std::move(c); return *this; }
  Row& autos() { d.allows_auto = true; return *this; }
  Row& sweep() { d.sweepable = true; return *this; }
  Row& list() { d.list = true; return *this; }
  // A value that needs its own parse: `f` reads it from the bag into the DeploymentSpec.
  Row& apply(std::function<void(const SettingsBag&, DeploymentSpec&)> f) { d.apply = std::move(f); return *this; }
  // The field of EngineSettings the value sets (its type decides how the text is read).
  Row& into(std::optional<i64> EngineSettings::*field) {
    const std::string key = d.key;
    const SettingType type = d.type;
    d.apply = [key, type, field](const SettingsBag& bag, DeploymentSpec& s) {
      const auto v = type == SettingType::bytes ? bag.bytes(key) : type == SettingType::signed_count ? bag.signed_count(key) : bag.count(key);
      if (v) s.engine.*field = *v;
    };
    return *this;
  }
  // a switch: a bool, or std::optional<bool> where unset means the engine's own default
  template <class B>
    requires std::is_same_v<B, bool> || std::is_same_v<B, std::optional<bool>>
  Row& into(B EngineSettings::*field) {
    const std::string key = d.key;
    d.apply = [key, field](const SettingsBag& bag, DeploymentSpec& s) {
      if (const auto v = bag.boolean(key)) s.engine.*field = *v;
    };
    return *this;
  }
};

using T = SettingType;

// clang-format off
std::vector<SettingDef> build_table() {
  std::vector<Row> r;
  // ---- model ----
  r.push_back(Row("model", T::text, "model", "Built-in model id, config.json path, snapshot folder, GGUF file or Hugging Face id")
      .on(E::vllm, "--model").on(E::sglang, "--model-path|--model").on(E::trtllm, "--model_path")
      .on(E::llamacpp, "--model|--hf-repo|--model-url|--docker-repo")
      .env("LLAMA_ARG_MODEL|LLAMA_ARG_HF_REPO|LLAMA_ARG_MODEL_URL"));
  r.push_back(Row("kv_cache_dtype", T::kv_format, "model", "KV cache element format for K and V (auto = the model dtype, or the FP8 cache a ModelOpt checkpoint declares where the engine version follows it; f16, bf16, fp8, fp8_e5m2, q8_0, nvfp4 on vLLM and TensorRT-LLM, vLLM's int8/fp8/int4_per_token_head and turboquant_k8v4/4bit_nc/k3v4_nc/3bit_nc, ...)")
      .flags("--kv-dtype|--kv-cache-dtype").on(E::vllm, "--kv-cache-dtype").on(E::sglang, "--kv-cache-dtype")
      .yaml("kv_cache_config.dtype").sweep());
  r.push_back(Row("kv_cache_dtype_skip_layers", T::text, "engine", "vLLM: layers whose KV cache stays in the model dtype whatever --kv-cache-dtype says: layer indices and/or sliding_window (every sliding-window layer), comma-separated (3,4,sliding_window; a pasted vLLM command line or a YAML list takes them as vLLM does); TurboQuant adds its own: the first and last min(2, layers / 2), none in a hybrid model")
      .flags("--kv-cache-dtype-skip-layers@vllm").on(E::vllm, "--kv-cache-dtype-skip-layers").list());
  r.push_back(Row("cache_type_k", T::kv_format, "model", "K cache format (llama.cpp style: f16, q8_0, q4_0, ...)")
      .flags("--cache-type-k|-ctk").on(E::llamacpp, "--cache-type-k").env("LLAMA_ARG_CACHE_TYPE_K"));
  r.push_back(Row("cache_type_v", T::kv_format, "model", "V cache format")
      .flags("--cache-type-v|-ctv").on(E::llamacpp, "--cache-type-v").env("LLAMA_ARG_CACHE_TYPE_V"));
  r.push_back(Row("state_dtype", T::kv_format, "model", "Recurrent (Mamba) state format; default: the model dtype")
      .flags("--state-dtype"));
  r.push_back(Row("mla_layout", T::choice, "model", "MLA cache layout: latent (kv_lora_rank + rope, vLLM/SGLang/llama.cpp) or expanded (per-head K and V)")
      .flags("--mla-layout").choices({"latent", "expanded"}));
  r.push_back(Row("ignore_windows", T::boolean, "model", "Treat sliding-window and chunked layers as full attention")
      .flags("--ignore-windows"));
  r.push_back(Row("weight_format", T::text, "model", "Override weight format: f32, f16, bf16, fp8, fp8_block (f32 scale per 128x128), int8, int4 / awq / gptq (g128, f16 scale + 4-bit zero), nvfp4, mxfp4 (MoE experts), a llama-quantize type priced tensor by tensor by its recipe (Q8_0, Q4_K_M, Q3_K_M, Q2_K, IQ2_XS, IQ4_XS, MXFP4_MOE, ...; name:imatrix with an importance matrix) or pure:<ggml type>")
      .flags("--weight-format").on(E::vllm, "--quantization:quantization").on(E::sglang, "--quantization:quantization"));
  r.push_back(Row("dtype", T::text, "model", "Weight and activation dtype: auto (the engine's resolution of torch_dtype), float16/half, bfloat16, float32/float")
      .flags("--dtype").on(E::vllm, "--dtype").on(E::sglang, "--dtype"));
  r.push_back(Row("hf_overrides", T::json, "model", "JSON merged into the model config (rope_scaling, max_position_embeddings, ...)")
      .flags("--hf-overrides").on(E::vllm, "--hf-overrides|--rope-scaling:rope_json").on(E::sglang, "--json-model-override-args"));
  // ---- deployment ----
  r.push_back(Row("gpu", T::text, "deployment", "GPU profile id, alias or nvidia-smi name (kvplan gpus), cpu (a desktop host), or host (this machine, measured now: RAM and read bandwidth); default h100-sxm")
      .flags("--gpu").sweep());
  r.push_back(Row("gpu_memory_bytes", T::bytes, "deployment", "GPU total instead of the profile's (as your driver reports it), or the memory of a GPU with no profile")
      .flags("--gpu-memory-bytes"));
  r.push_back(Row("ram_gb", T::count, "deployment", "Apple silicon: the Mac's unified memory in GB; the GPU gets macOS's default working set (2/3 up to 32 GB, 3/4 above). CPU host: its installed RAM in GiB, all of it the budget")
      .flags("--ram-gb"));
  r.push_back(Row("nvlink_bridge", T::boolean, "deployment", "PCIe cards joined in NVLink-bridged pairs (H100 NVL, H100 / A100 PCIe, A30, A40, RTX A6000): a TP 2 all-reduce runs over the bridge (nvlink_bridge_bytes_per_s in kvplan gpus); default: the profile's (on for H100 NVL, which ships bridged; off for the others); --nvlink-bridge=false for unbridged cards")
      .flags("--nvlink-bridge"));
  r.push_back(Row("ecc", T::choice, "deployment", "GDDR GPU: ECC on or off (nvidia-smi -e); on GDDR6 / GDDR6X ECC on keeps 1/16 of the DRAM for check bits, so a profile taken in the other mode moves by the datasheet memory / 16 (GDDR7 and HBM report the same total either way)")
      .flags("--ecc").choices({"on", "off"}));
  r.push_back(Row("cpu_sockets", T::count, "deployment", "CPU host (--gpu cpu or a CPU profile): sockets; each has --memory-channels (default: the profile's one socket); llama.cpp reads every socket's memory only with --numa distribute or numactl")
      .flags("--cpu-sockets"));
  r.push_back(Row("memory_channels", T::count, "deployment", "CPU host: DDR memory channels per socket (64-bit; a DDR5 DIMM's two 32-bit subchannels are one); bandwidth = sockets x channels x --memory-speed x 8 B")
      .flags("--memory-channels"));
  r.push_back(Row("memory_speed", T::count, "deployment", "CPU host: DDR data rate in MT/s (DDR5-5600: 5600), with --memory-channels")
      .flags("--memory-speed"));
  r.push_back(Row("wired_limit_mb", T::count, "deployment", "Apple silicon: sysctl iogpu.wired_limit_mb; Metal's working set becomes that many MiB")
      .flags("--wired-limit-mb"));
  r.push_back(Row("gpu_bandwidth", T::text, "deployment", "Memory bandwidth of a GPU with no profile: bytes/s or a rate (3.35e12, 3.35TB/s)")
      .flags("--gpu-bandwidth"));
  r.push_back(Row("gpu_tflops", T::number, "deployment",
                  "Dense bf16 / fp16 tensor TFLOP/s the GPU's GEMMs run at (FP32 accumulate), for a GPU whose profile has none "
                  "(kvplan gpus: '-') or to replace the profile's (e.g. 71)")
      .flags("--gpu-tflops"));
  r.push_back(Row("engine", T::choice, "deployment", "vllm | sglang | trtllm | llama.cpp | generic, optionally @VERSION (vllm@0.11)")
      .flags("--engine").choices({"vllm", "sglang", "trtllm", "llama.cpp", "generic"}));
  r.push_back(Row("engine_version", T::text, "deployment", "Engine version whose flags are read (default: the newest kvplan knows)")
      .flags("--engine-version"));
  r.push_back(Row("tensor_parallel_size", T::count, "deployment", "Tensor-parallel GPUs per stage")
      .flags("--tensor-parallel-size|--tp|--tp-size|-tp").on(E::vllm, "--tensor-parallel-size").on(E::sglang, "--tp-size")
      .on(E::trtllm, "--tp_size|--tensor_parallel_size").yaml("tensor_parallel_size").sweep());
  r.push_back(Row("pipeline_parallel_size", T::count, "deployment", "Pipeline stages")
      .flags("--pipeline-parallel-size|--pp|--pp-size|-pp").on(E::vllm, "--pipeline-parallel-size").on(E::sglang, "--pp-size")
      .on(E::trtllm, "--pp_size|--pipeline_parallel_size").yaml("pipeline_parallel_size"));
  r.push_back(Row("data_parallel_size", T::count, "deployment", "Data-parallel replicas")
      .flags("--data-parallel-size|--dp|--dp-size|-dp").on(E::vllm, "--data-parallel-size").on(E::sglang, "--dp-size"));
  r.push_back(Row("expert_parallel_size", T::count, "deployment", "Ranks the routed experts are split across (1: split by TP)")
      .flags("--expert-parallel-size|--ep-size").on(E::sglang, "--ep-size").on(E::trtllm, "--ep_size|--expert_parallel_size")
      .yaml("moe_expert_parallel_size"));
  r.push_back(Row("enable_dp_attention", T::boolean, "deployment", "SGLang: attention data parallel over --dp-size groups of the TP GPUs (GPUs = TP; each group its own requests and KV pool)")
      .flags("--enable-dp-attention@sglang").on(E::sglang, "--enable-dp-attention"));
  r.push_back(Row("enable_attention_dp", T::boolean, "deployment", "TensorRT-LLM: each TP rank runs attention for its own requests with its own KV pool (enable_attention_dp)")
      .flags("--enable-attention-dp@trtllm").yaml("enable_attention_dp"));
  r.push_back(Row("enable_expert_parallel", T::boolean, "deployment", "vLLM: experts split across TP x DP ranks")
      .flags("--enable-expert-parallel@vllm,generic").on(E::vllm, "--enable-expert-parallel"));
  // ---- engine ----
  r.push_back(Row("memory_fraction", T::fraction, "engine", "Fraction of GPU memory the engine may use: vLLM --gpu-memory-utilization (default 0.92 from 0.21, 0.9 before), SGLang --mem-fraction-static (default by TP), TensorRT-LLM --kv-cache-free-gpu-mem-fraction (of free memory, default 0.9)")
      .flags("--gpu-memory-utilization@vllm,generic|--mem-fraction-static@sglang|--kv-cache-free-gpu-mem-fraction@trtllm")
      .on(E::vllm, "--gpu-memory-utilization").on(E::sglang, "--mem-fraction-static")
      .on(E::trtllm, "--kv_cache_free_gpu_memory_fraction|--free_gpu_memory_fraction")
      .yaml("kv_cache_config.free_gpu_memory_fraction"));
  r.push_back(Row("max_model_len", T::count, "engine", "Longest request (default: the model's max_position_embeddings; vLLM auto = the longest that fits; 16k = 16384 here, while a pasted vLLM command reads 16k as 16000 and 16K as 16384, as vLLM does)")
      .flags("--max-model-len@vllm,sglang,trtllm,generic|--context-length@vllm,sglang,trtllm,generic|--max-seq-len@vllm,sglang,trtllm,generic")
      .on(E::vllm, "--max-model-len:vllm_int").on(E::sglang, "--context-length").on(E::trtllm, "--max_seq_len").yaml("max_seq_len").autos());
  r.push_back(Row("max_num_seqs", T::count, "engine", "Concurrent sequences per replica (vLLM serve default 1024 on >=70 GiB GPUs other than the A100, else 256)")
      .flags("--max-num-seqs@vllm,sglang,trtllm,generic|--max-running-requests@vllm,sglang,trtllm,generic|--max-batch-size@vllm,sglang,trtllm,generic")
      .on(E::vllm, "--max-num-seqs").on(E::sglang, "--max-running-requests").on(E::trtllm, "--max_batch_size").yaml("max_batch_size"));
  r.push_back(Row("max_num_batched_tokens", T::count, "engine", "Tokens per forward pass (vLLM serve default 8192 on >=70 GiB GPUs other than the A100, else 2048)")
      .flags("--max-num-batched-tokens@vllm,sglang,trtllm,generic|--chunked-prefill-size@vllm,sglang,trtllm,generic|--max-num-tokens@vllm,sglang,trtllm,generic")
      .on(E::vllm, "--max-num-batched-tokens:vllm_int").on(E::sglang, "--chunked-prefill-size:sglang_chunk").on(E::trtllm, "--max_num_tokens")
      .yaml("max_num_tokens"));
  r.push_back(Row("block_size", T::count, "engine", "Tokens per KV block: vLLM --block-size (default 16), SGLang --page-size (1), TensorRT-LLM --tokens-per-block (32)")
      .flags("--block-size@vllm,generic|--page-size@sglang|--tokens-per-block@trtllm").on(E::vllm, "--block-size").on(E::sglang, "--page-size")
      .yaml("kv_cache_config.tokens_per_block"));
  r.push_back(Row("cpu_offload_gb", T::number, "engine", "GiB of weights per GPU kept in host memory (vLLM / SGLang --cpu-offload-gb): the GPU holds that much less")
      .flags("--cpu-offload-gb@vllm,sglang,generic").on(E::vllm, "--cpu-offload-gb").on(E::sglang, "--cpu-offload-gb"));
  r.push_back(Row("kv_offloading_size", T::number, "engine", "vLLM: GiB of host memory for offloaded KV blocks, summed over the TP ranks (--kv-offloading-size): a host tier")
      .flags("--kv-offloading-size@vllm,generic").on(E::vllm, "--kv-offloading-size"));
  r.push_back(Row("kv_offloading_backend", T::text, "engine", "vLLM: the connector --kv-offloading-size selects: native (OffloadingConnector, summed over TP ranks) or lmcache (LMCacheConnectorV1, split over the ranks)")
      .flags("--kv-offloading-backend@vllm").on(E::vllm, "--kv-offloading-backend").choices({"native", "lmcache"}));
  r.push_back(Row("kv_transfer_config", T::text, "engine", "vLLM: the KV connector as JSON (--kv-transfer-config); OffloadingConnector's cpu_bytes_to_use / num_cpu_blocks and LMCacheConnectorV1 make host (and disk) KV tiers")
      .flags("--kv-transfer-config@vllm").on(E::vllm, "--kv-transfer-config"));
  r.push_back(Row("lmcache_max_local_cpu_size", T::number, "engine", "LMCache: GiB of pinned host memory per rank for KV chunks (LMCACHE_MAX_LOCAL_CPU_SIZE; default 5.0) with LMCacheConnectorV1")
      .flags("--lmcache-max-local-cpu-size@vllm").env("LMCACHE_MAX_LOCAL_CPU_SIZE"));
  r.push_back(Row("lmcache_local_disk", T::text, "engine", "LMCache: a local disk KV tier at this path (LMCACHE_LOCAL_DISK, file:///...; unset: none)")
      .flags("--lmcache-local-disk@vllm").env("LMCACHE_LOCAL_DISK"));
  r.push_back(Row("lmcache_max_local_disk_size", T::number, "engine", "LMCache: GiB of the local disk tier per rank (LMCACHE_MAX_LOCAL_DISK_SIZE; default 0)")
      .flags("--lmcache-max-local-disk-size@vllm").env("LMCACHE_MAX_LOCAL_DISK_SIZE"));
  r.push_back(Row("lmcache_chunk_size", T::count, "engine", "LMCache: tokens per KV chunk (LMCACHE_CHUNK_SIZE; default 256): tiers hold whole chunks")
      .flags("--lmcache-chunk-size@vllm").env("LMCACHE_CHUNK_SIZE"));
  r.push_back(Row("lmcache_local_cpu", T::boolean, "engine", "LMCache: keep KV chunks in the pinned host buffer (LMCACHE_LOCAL_CPU; default true; false: a staging buffer only)")
      .flags("--lmcache-local-cpu@vllm").env("LMCACHE_LOCAL_CPU"));
  r.push_back(Row("lmcache_config_file", T::text, "engine", "LMCache: a YAML config file (LMCACHE_CONFIG_FILE): chunk_size, local_cpu, max_local_cpu_size, local_disk, max_local_disk_size; LMCACHE_* variables override it")
      .flags("--lmcache-config-file@vllm").env("LMCACHE_CONFIG_FILE"));
  r.push_back(Row("hierarchical_cache", T::boolean, "engine", "SGLang: a host KV tier (HiCache) of --hicache-ratio x the device pool (--enable-hierarchical-cache)")
      .flags("--enable-hierarchical-cache@sglang").on(E::sglang, "--enable-hierarchical-cache"));
  r.push_back(Row("swa_full_tokens_ratio", T::number, "engine", "SGLang: tokens of the sliding-window layers' pool per token of the full layers' pool in the hybrid SWA pool of gpt-oss and Llama-4 (0.5.8+) and Gemma 4 (newest) (--swa-full-tokens-ratio; default 0.8)")
      .flags("--swa-full-tokens-ratio@sglang").on(E::sglang, "--swa-full-tokens-ratio"));
  r.push_back(Row("disable_hybrid_swa_memory", T::boolean, "engine", "SGLang: no hybrid SWA pool; every layer keeps the full length (--disable-hybrid-swa-memory)")
      .flags("--disable-hybrid-swa-memory@sglang").on(E::sglang, "--disable-hybrid-swa-memory"));
  r.push_back(Row("hicache_ratio", T::number, "engine", "SGLang: the host tier's size as a ratio of the device pool (--hicache-ratio; default 2.0)")
      .flags("--hicache-ratio@sglang").on(E::sglang, "--hicache-ratio"));
  r.push_back(Row("hicache_size", T::number, "engine", "SGLang: the host tier in GB (10^9 bytes) per rank (--hicache-size; 0: by ratio)")
      .flags("--hicache-size@sglang").on(E::sglang, "--hicache-size"));
  r.push_back(Row("kv_cache_memory_bytes", T::bytes, "engine", "KV memory per GPU, skipping the budget (vLLM --kv-cache-memory-bytes, TRT max_gpu_total_bytes)")
      .flags("--kv-cache-memory-bytes@vllm,sglang,trtllm,generic|--max-gpu-total-bytes@vllm,sglang,trtllm,generic")
      .on(E::vllm, "--kv-cache-memory-bytes:vllm_int").yaml("kv_cache_config.max_gpu_total_bytes"));
  r.push_back(Row("num_gpu_blocks_override", T::count, "engine", "vLLM: use this many KV blocks instead of what memory profiling finds (V1 keeps one as its null block: requests get the others)")
      .flags("--num-gpu-blocks-override@vllm").on(E::vllm, "--num-gpu-blocks-override").into(&EngineSettings::num_gpu_blocks_override));
  r.push_back(Row("limit_mm_per_prompt", T::text, "engine", "vLLM: multimodal items per prompt, '{\"image\": 4}' (0.10+) or image=4 (0.8); sizes the encoder cache vLLM profiles; '{\"image\": 0}' = text-only, no encoder profiling")
      .flags("--limit-mm-per-prompt@vllm,generic").on(E::vllm, "--limit-mm-per-prompt").apply(apply_limit_mm));
  r.push_back(Row("mm_processor_kwargs", T::text, "engine", "vLLM: Hugging Face processor arguments as JSON; '{\"max_pixels\": N}' sets the largest Qwen2/2.5/3-VL image, and so the encoder cache vLLM profiles")
      .flags("--mm-processor-kwargs@vllm,generic").on(E::vllm, "--mm-processor-kwargs").apply(apply_mm_processor_kwargs));
  r.push_back(Row("max_prefill_tokens", T::count, "engine", "SGLang: input tokens one prefill batch admits (--max-prefill-tokens; default 16384): how many prompts share a prefill step in kvplan simulate")
      .flags("--max-prefill-tokens@sglang").on(E::sglang, "--max-prefill-tokens").into(&EngineSettings::max_prefill_tokens));
  r.push_back(Row("enable_mixed_chunk", T::boolean, "engine", "SGLang: running decodes join every prefill batch instead of waiting for it (--enable-mixed-chunk; default off; needs chunked prefill): kvplan simulate")
      .flags("--enable-mixed-chunk@sglang").on(E::sglang, "--enable-mixed-chunk").into(&EngineSettings::mixed_chunk));
  r.push_back(Row("enable_chunked_prefill", T::boolean, "engine", "Split prompts into chunks that fit the step's token budget beside the decodes: vLLM (default on; off from 0.12: max_num_batched_tokens defaults to at least max_model_len and must hold it; 0.8-0.11 ignore the flag), TensorRT-LLM enable_chunked_prefill (default false), SGLang (default on; --chunked-prefill-size -1 turns it off)")
      .flags("--enable-chunked-prefill@vllm,sglang,trtllm|--no-enable-chunked-prefill@vllm,sglang,trtllm=false")
      .on(E::vllm, "--enable-chunked-prefill|--no-enable-chunked-prefill=false")
      .yaml("enable_chunked_prefill").into(&EngineSettings::chunked_prefill));
  // the simulator's scheduler (kvplan simulate, fit --find-max-rate, check with traffic); plan reads enable_prefix_caching
  // only for a --shared-prefix (held once with it on: Planner::shared_units)
  r.push_back(Row("enable_prefix_caching", T::boolean, "engine", "Prefix cache: a request reuses the cached KV blocks of a prompt prefix it shares (vLLM --enable-prefix-caching, SGLang radix cache (--disable-radix-cache: off), TensorRT-LLM kv_cache_config.enable_block_reuse, llama.cpp server's cache_prompt; default on in each): kvplan simulate's hits, and whether plan / fit / check hold a --shared-prefix once (on) or per request (off)")
      .flags("--enable-prefix-caching|--no-enable-prefix-caching=false")
      .on(E::vllm, "--enable-prefix-caching|--no-enable-prefix-caching=false").on(E::sglang, "--disable-radix-cache=false")
      .yaml("kv_cache_config.enable_block_reuse").into(&EngineSettings::prefix_caching));
  r.push_back(Row("scheduling_policy", T::text, "engine", "Order of the waiting queue in kvplan simulate: vLLM --scheduling-policy fcfs | priority (a trace's priority column, lower first); SGLang --schedule-policy fcfs | lpm (longest cached prefix first); TensorRT-LLM and llama.cpp fcfs (default fcfs)")
      .flags("--scheduling-policy|--schedule-policy@sglang").on(E::vllm, "--scheduling-policy").on(E::sglang, "--schedule-policy")
      .apply(apply_scheduling_policy));
  r.push_back(Row("usage_context", T::choice, "engine",
                  "vLLM: how the engine is started, which sets the max_num_seqs / max_num_batched_tokens defaults: serve (vllm serve, "
                  "default), llm (offline LLM(...): 16384 batched tokens on a GPU of 70 GiB or more that is not an A100, else 8192), "
                  "engine (AsyncLLMEngine.from_engine_args, no listed context: 128 sequences, 2048 tokens); V0 (< 0.8) ignores it")
      .flags("--usage-context@vllm").choices({"serve", "llm", "engine"}).apply(apply_usage_context));
  r.push_back(Row("capacity_scheduler_policy", T::choice, "engine", "TensorRT-LLM capacity scheduler (scheduler_config.capacity_scheduler_policy): GUARANTEED_NO_EVICT (default: a request starts only with blocks for its whole output), MAX_UTILIZATION (starts on the blocks its next step needs; pauses the latest started when they run out) or STATIC_BATCH (as GUARANTEED_NO_EVICT, but no request starts while any is generating)")
      .flags("--capacity-scheduler-policy@trtllm").yaml("scheduler_config.capacity_scheduler_policy")
      .choices({"GUARANTEED_NO_EVICT", "MAX_UTILIZATION", "STATIC_BATCH"}).apply(apply_capacity_policy));
  r.push_back(Row("max_total_tokens", T::count, "engine", "SGLang: cap on the KV pool in tokens")
      .flags("--max-total-tokens@sglang").on(E::sglang, "--max-total-tokens"));
  r.push_back(Row("max_tokens", T::count, "engine", "TensorRT-LLM: cap on tokens in the paged KV cache")
      .flags("--max-tokens@trtllm").yaml("kv_cache_config.max_tokens"));
  r.push_back(Row("enable_lora", T::boolean, "engine", "LoRA adapters: GPU buffers for --max-loras adapters of --max-lora-rank on every attention and MLP projection (vLLM / SGLang --enable-lora)")
      .flags("--enable-lora@vllm,sglang,generic").on(E::vllm, "--enable-lora").on(E::sglang, "--enable-lora"));
  r.push_back(Row("max_loras", T::count, "engine", "LoRA adapters held on the GPU at once (vLLM --max-loras, default 1; SGLang --max-loras-per-batch, default 8)")
      .flags("--max-loras@vllm,generic|--max-loras-per-batch@sglang").on(E::vllm, "--max-loras").on(E::sglang, "--max-loras-per-batch"));
  r.push_back(Row("max_cpu_loras", T::count, "engine", "vLLM: LoRA adapters kept in the CPU cache (--max-cpu-loras; default --max-loras): a host tier of whole adapters per rank")
      .flags("--max-cpu-loras@vllm").on(E::vllm, "--max-cpu-loras"));
  r.push_back(Row("max_lora_rank", T::count, "engine", "Rank the LoRA buffers are sized for (vLLM --max-lora-rank, default 16; SGLang --max-lora-rank)")
      .flags("--max-lora-rank@vllm,sglang,generic").on(E::vllm, "--max-lora-rank").on(E::sglang, "--max-lora-rank"));
  r.push_back(Row("enforce_eager", T::boolean, "engine", "No CUDA graphs (no graph memory; llama.cpp: a build without GGML_CUDA_GRAPHS, or GGML_CUDA_DISABLE_GRAPHS set)")
      .flags("--enforce-eager").on(E::vllm, "--enforce-eager").on(E::sglang, "--disable-cuda-graph"));
  r.push_back(Row("disable_async_output_proc", T::boolean, "engine", "vLLM V0 (before 0.8): no async output processor, which from 0.6 hands a step's tokens to the client when the next step ends and decodes a finished request once more (--disable-async-output-proc; simulate)")
      .flags("--disable-async-output-proc@vllm").on(E::vllm, "--disable-async-output-proc"));
  r.push_back(Row("allow_long_context", T::boolean, "engine",
                  "Allow --max-model-len above the model's (vLLM VLLM_ALLOW_LONG_MAX_MODEL_LEN, SGLang SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN)")
      .flags("--allow-long-context").env("VLLM_ALLOW_LONG_MAX_MODEL_LEN@vllm|SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN@sglang"));
  r.push_back(Row("decode_context_parallel_size", T::count, "deployment", "vLLM: tensor-parallel ranks a sequence's KV tokens are sharded over (each holds 1/dcp of them; divides --tensor-parallel-size)")
      .flags("--decode-context-parallel-size@vllm,generic|-dcp@vllm,generic").on(E::vllm, "--decode-context-parallel-size|-dcp")
      .into(&EngineSettings::decode_context_parallel));
  // ---- speculative decoding ----
  r.push_back(Row("speculative_config", T::json, "speculative", "Speculative decoding, vLLM --speculative-config JSON: method (draft_model, eagle, eagle3, mtp, ngram), model (the draft: built-in id, config.json folder or known HF id), num_speculative_tokens, draft_tensor_parallel_size; or TensorRT-LLM speculative_config (decoding_type MTP, Eagle, Eagle3, NGram, DraftTarget; max_draft_len; num_nextn_predict_layers; speculative_model_dir)")
      .flags("--speculative-config@vllm,trtllm,generic").on(E::vllm, "--speculative-config|-sc").yaml("speculative_config"));
  // vLLM >= 0.2x shortcuts for three keys of --speculative-config (help: "The name of the speculative method to use")
  r.push_back(Row("spec_method", T::text, "speculative", "vLLM --spec-method: --speculative-config's method").on(E::vllm, "--spec-method"));
  r.push_back(Row("spec_model", T::text, "speculative", "vLLM --spec-model: --speculative-config's model").on(E::vllm, "--spec-model"));
  r.push_back(Row("spec_tokens", T::count, "speculative", "vLLM --spec-tokens: --speculative-config's num_speculative_tokens").on(E::vllm, "--spec-tokens"));
  r.push_back(Row("speculative_algorithm", T::text, "speculative", "SGLang speculative decoding: EAGLE, EAGLE3, NEXTN (the checkpoint's MTP layers), STANDALONE (a draft LLM), NGRAM")
      .flags("--speculative-algorithm@sglang").on(E::sglang, "--speculative-algorithm"));
  r.push_back(Row("speculative_draft_model_path", T::text, "speculative", "SGLang: the draft (EAGLE head or STANDALONE LLM): built-in id, config.json folder or known HF id")
      .flags("--speculative-draft-model-path@sglang").on(E::sglang, "--speculative-draft-model-path|--speculative-draft-model"));
  r.push_back(Row("speculative_num_steps", T::count, "speculative", "SGLang: draft steps per round (default by model: 5, DeepSeek 3)")
      .flags("--speculative-num-steps@sglang").on(E::sglang, "--speculative-num-steps"));
  r.push_back(Row("speculative_eagle_topk", T::count, "speculative", "SGLang: draft branches per step (default 4, DeepSeek 1)")
      .flags("--speculative-eagle-topk@sglang").on(E::sglang, "--speculative-eagle-topk"));
  r.push_back(Row("speculative_num_draft_tokens", T::count, "speculative", "SGLang: tokens verified per round (default 8, DeepSeek 4; steps + 1 when topk is 1)")
      .flags("--speculative-num-draft-tokens@sglang").on(E::sglang, "--speculative-num-draft-tokens"));
  // ---- llama.cpp ----
  r.push_back(Row("ctx_size", T::count, "llama.cpp", "llama.cpp: context cells (-c; default 4096, from b7376 0 = the model's, lowered by --fit)")
      .flags("--ctx-size@llama.cpp|-c@llama.cpp").on(E::llamacpp, "--ctx-size").env("LLAMA_ARG_CTX_SIZE"));
  r.push_back(Row("parallel", T::count, "llama.cpp", "llama.cpp: slots (-np; default 1, from b6900 4 auto slots sharing a unified cache)")
      .flags("--parallel@llama.cpp|-np@llama.cpp").on(E::llamacpp, "--parallel:auto_count").env("LLAMA_ARG_N_PARALLEL:auto_count"));
  r.push_back(Row("n_gpu_layers", T::signed_count, "llama.cpp", "llama.cpp: layers offloaded to the GPU (-ngl; -1 = all)")
      .flags("--n-gpu-layers@llama.cpp|--gpu-layers@llama.cpp|-ngl@llama.cpp").on(E::llamacpp, "--n-gpu-layers:gpu_layers")
      .env("LLAMA_ARG_N_GPU_LAYERS:gpu_layers"));
  r.push_back(Row("ubatch_size", T::count, "llama.cpp", "llama.cpp: physical batch (-ub; default 512)")
      .flags("--ubatch-size@llama.cpp|-ub@llama.cpp").on(E::llamacpp, "--ubatch-size").env("LLAMA_ARG_UBATCH"));
  r.push_back(Row("batch_size", T::count, "llama.cpp", "llama.cpp: logical batch (-b; default 2048); the physical batch is min(-b, -ub)")
      .flags("--batch-size@llama.cpp|-b@llama.cpp").on(E::llamacpp, "--batch-size").env("LLAMA_ARG_BATCH"));
  r.push_back(Row("swa_full", T::boolean, "llama.cpp", "llama.cpp: full-size cache for sliding-window layers")
      .flags("--swa-full@llama.cpp").on(E::llamacpp, "--swa-full").env("LLAMA_ARG_SWA_FULL"));
  r.push_back(Row("n_cpu_moe", T::count, "llama.cpp", "llama.cpp: keep the MoE expert weights of the first N layers in host memory (--n-cpu-moe)")
      .flags("--n-cpu-moe@llama.cpp|-ncmoe@llama.cpp").on(E::llamacpp, "--n-cpu-moe|-ncmoe").env("LLAMA_ARG_N_CPU_MOE"));
  r.push_back(Row("cpu_moe", T::boolean, "llama.cpp", "llama.cpp: keep every MoE expert weight in host memory (--cpu-moe)")
      .flags("--cpu-moe@llama.cpp|-cmoe@llama.cpp").on(E::llamacpp, "--cpu-moe|-cmoe").env("LLAMA_ARG_CPU_MOE"));
  r.push_back(Row("kv_offload", T::boolean, "llama.cpp", "llama.cpp: KV cache on the GPU with its layers (default); --no-kv-offload keeps it in host memory")
      .flags("--kv-offload@llama.cpp|--no-kv-offload@llama.cpp=false|-nkvo@llama.cpp=false")
      .on(E::llamacpp, "--kv-offload|-kvo|--no-kv-offload=false|-nkvo=false").env("LLAMA_ARG_KV_OFFLOAD"));
  r.push_back(Row("mmap", T::boolean, "llama.cpp", "llama.cpp: CPU-resident weights are the model file's mapped pages (default; reclaimable page cache); --no-mmap reads them into host RAM")
      .flags("--mmap@llama.cpp|--no-mmap@llama.cpp=false").on(E::llamacpp, "--mmap|--no-mmap=false").env("LLAMA_ARG_MMAP"));
  r.push_back(Row("mlock", T::boolean, "llama.cpp", "llama.cpp: lock the CPU-resident weights in RAM (--mlock): not reclaimable or swappable")
      .flags("--mlock@llama.cpp").on(E::llamacpp, "--mlock").env("LLAMA_ARG_MLOCK"));
  r.push_back(Row("fit", T::boolean, "llama.cpp", "llama.cpp: fit to the GPU by lowering an unset -c, then moving layers to the host (default on from b7376)")
      .flags("--fit@llama.cpp").on(E::llamacpp, "--fit|-fit").env("LLAMA_ARG_FIT"));
  r.push_back(Row("fit_ctx", T::count, "llama.cpp", "llama.cpp: the smallest context --fit lowers to (--fit-ctx; default 4096)")
      .flags("--fit-ctx@llama.cpp").on(E::llamacpp, "--fit-ctx|-fitc").env("LLAMA_ARG_FIT_CTX"));
  r.push_back(Row("fit_target_mib", T::count, "llama.cpp", "llama.cpp: MiB --fit leaves free per GPU (--fit-target; default 1024)")
      .flags("--fit-target@llama.cpp").on(E::llamacpp, "--fit-target|-fitt").env("LLAMA_ARG_FIT_TARGET"));
  r.push_back(Row("kv_unified", T::boolean, "llama.cpp", "llama.cpp: one KV cache shared by all slots (default: on when the slots are auto); --no-kv-unified: one stream per slot")
      .flags("--kv-unified@llama.cpp|-kvu@llama.cpp|--no-kv-unified@llama.cpp=false|-no-kvu@llama.cpp=false")
      .on(E::llamacpp, "--kv-unified|--no-kv-unified=false").env("LLAMA_ARG_KV_UNIFIED"));
  r.push_back(Row("flash_attn", T::choice, "llama.cpp", "llama.cpp: flash attention (on, off, auto: on from b6325); a quantized V cache needs it; the decode step's kernels are counted with it")
      .flags("--flash-attn@llama.cpp|-fa@llama.cpp").on(E::llamacpp, "--flash-attn").env("LLAMA_ARG_FLASH_ATTN").choices({"on", "off", "auto"}));
  r.push_back(Row("numa", T::choice, "llama.cpp", "llama.cpp: NUMA placement on a CPU host (distribute: threads and pages over every node; isolate: the starting node only; numactl: numactl's CPU map); without it kvplan counts one socket's memory bandwidth")
      .flags("--numa@llama.cpp").on(E::llamacpp, "--numa").env("LLAMA_ARG_NUMA").choices({"distribute", "isolate", "numactl"}));
  r.push_back(Row("gpu_count", T::count, "llama.cpp", "llama.cpp: GPUs it splits the model over (default: the --device or --tensor-split entries, else 1); a deployment file's gpus:")
      .flags("--gpu-count@llama.cpp"));
  r.push_back(Row("split_mode", T::choice, "llama.cpp", "llama.cpp: layer (layers and their KV over the GPUs, the default), row (weight rows over the GPUs, KV and compute on --main-gpu) or none (--main-gpu only)")
      .flags("--split-mode@llama.cpp|-sm@llama.cpp").on(E::llamacpp, "--split-mode|-sm").env("LLAMA_ARG_SPLIT_MODE").choices({"layer", "row", "none"}));
  r.push_back(Row("tensor_split", T::text, "llama.cpp", "llama.cpp: proportion of the model per GPU, comma-separated (3,1 or 0,1,1,1); default: by free memory (equal on identical GPUs)")
      .flags("--tensor-split@llama.cpp|-ts@llama.cpp").on(E::llamacpp, "--tensor-split|-ts").env("LLAMA_ARG_TENSOR_SPLIT").list());
  r.push_back(Row("main_gpu", T::count, "llama.cpp", "llama.cpp: the GPU (index into the model's GPUs) for --split-mode none, or for the KV and compute with row (default 0)")
      .flags("--main-gpu@llama.cpp|-mg@llama.cpp").on(E::llamacpp, "--main-gpu|-mg").env("LLAMA_ARG_MAIN_GPU"));
  r.push_back(Row("device", T::text, "llama.cpp", "llama.cpp: the GPUs to offload to, comma-separated (CUDA0,CUDA2; none = no offload); default: all")
      .flags("--device@llama.cpp|-dev@llama.cpp").on(E::llamacpp, "--device|-dev").env("LLAMA_ARG_DEVICE").list());
  r.push_back(Row("override_tensor", T::text, "llama.cpp", "llama.cpp: PATTERN=BUFFER,... (-ot): tensors whose name the regular expression matches go to host memory (=CPU) or a GPU (=CUDA1)")
      .flags("--override-tensor@llama.cpp|-ot@llama.cpp").on(E::llamacpp, "--override-tensor|-ot"));
  r.push_back(Row("lora", T::text, "llama.cpp", "llama.cpp: LoRA adapter GGUF files, comma-separated (a.gguf,b.gguf; a pasted llama-server command may repeat --lora): their tensors sit with the tensors they adapt")
      .flags("--lora@llama.cpp").on(E::llamacpp, "--lora").list());
  r.push_back(Row("lora_scaled", T::text, "llama.cpp", "llama.cpp: LoRA adapters with a scale (--lora-scaled FILE SCALE, or FILE:SCALE,...): sized as --lora")
      .flags("--lora-scaled@llama.cpp").on(E::llamacpp, "--lora-scaled"));
  r.push_back(Row("mmproj", T::text, "llama.cpp", "llama.cpp: multimodal projector GGUF (--mmproj): its tensors on the first GPU, or in host memory with --no-mmproj-offload")
      .flags("--mmproj@llama.cpp|-mm@llama.cpp").on(E::llamacpp, "--mmproj|-mm").env("LLAMA_ARG_MMPROJ"));
  r.push_back(Row("mmproj_offload", T::boolean, "llama.cpp", "llama.cpp: the projector on the GPU (default); --no-mmproj-offload keeps it in host memory")
      .flags("--mmproj-offload@llama.cpp|--no-mmproj-offload@llama.cpp=false").on(E::llamacpp, "--mmproj-offload|--no-mmproj-offload=false")
      .env("LLAMA_ARG_MMPROJ_OFFLOAD"));
  r.push_back(Row("model_draft", T::text, "llama.cpp", "llama.cpp: draft model for speculative decoding (a GGUF file or a model kvplan knows): its weights, and a KV cache per slot")
      .flags("--model-draft@llama.cpp|-md@llama.cpp").on(E::llamacpp, "--model-draft|-md").env("LLAMA_ARG_MODEL_DRAFT"));
  r.push_back(Row("n_gpu_layers_draft", T::signed_count, "llama.cpp", "llama.cpp: draft model layers offloaded to the GPUs (-ngld; -1 = all)")
      .flags("--n-gpu-layers-draft@llama.cpp|--gpu-layers-draft@llama.cpp|-ngld@llama.cpp")
      .on(E::llamacpp, "--n-gpu-layers-draft:gpu_layers|--gpu-layers-draft:gpu_layers|-ngld:gpu_layers").env("LLAMA_ARG_N_GPU_LAYERS_DRAFT:gpu_layers"));
  r.push_back(Row("ctx_size_draft", T::count, "llama.cpp", "llama.cpp: draft context cells per slot (-cd; default: the slot's context)")
      .flags("--ctx-size-draft@llama.cpp|-cd@llama.cpp").on(E::llamacpp, "--ctx-size-draft|-cd").env("LLAMA_ARG_CTX_SIZE_DRAFT"));
  r.push_back(Row("cache_type_k_draft", T::kv_format, "llama.cpp", "llama.cpp: draft K cache format (-ctkd; default f16)")
      .flags("--cache-type-k-draft@llama.cpp|-ctkd@llama.cpp").on(E::llamacpp, "--cache-type-k-draft|-ctkd").env("LLAMA_ARG_CACHE_TYPE_K_DRAFT"));
  r.push_back(Row("cache_type_v_draft", T::kv_format, "llama.cpp", "llama.cpp: draft V cache format (-ctvd; default f16)")
      .flags("--cache-type-v-draft@llama.cpp|-ctvd@llama.cpp").on(E::llamacpp, "--cache-type-v-draft|-ctvd").env("LLAMA_ARG_CACHE_TYPE_V_DRAFT"));
  r.push_back(Row("draft_max", T::count, "llama.cpp", "llama.cpp: tokens drafted per step (--draft-max; default 16); a batch, no memory of its own")
      .flags("--draft-max@llama.cpp").on(E::llamacpp, "--draft-max|--draft|--draft-n").env("LLAMA_ARG_DRAFT_MAX"));
  r.push_back(Row("device_draft", T::text, "llama.cpp", "llama.cpp: the GPUs of the draft model (--device-draft; default: all)")
      .flags("--device-draft@llama.cpp|-devd@llama.cpp").on(E::llamacpp, "--device-draft|-devd"));
  // ---- budget overrides ----
  r.push_back(Row("overheads", T::text, "budget", "JSON of measured overhead terms (kvplan log --save-overheads): activation, non-torch, CUDA graphs, CUDA context; a term given on its own wins")
      .flags("--overheads"));
  r.push_back(Row("weight_bytes", T::bytes, "budget", "Weights on the most loaded GPU").flags("--weight-bytes"));
  r.push_back(Row("activation_bytes", T::bytes, "budget", "Activation peak (llama.cpp: compute buffer)").flags("--activation-bytes"));
  r.push_back(Row("non_torch_bytes", T::bytes, "budget", "Library workspaces and NCCL buffers").flags("--non-torch-bytes"));
  r.push_back(Row("cuda_context_bytes", T::bytes, "budget", "CUDA context").flags("--cuda-context-bytes"));
  r.push_back(Row("cuda_graph_bytes", T::bytes, "budget", "CUDA graph pool").flags("--cuda-graph-bytes"));
  r.push_back(Row("overhead_bytes", T::bytes, "budget", "Anything else reserved per GPU").flags("--overhead-bytes"));
  // ---- workload ----
  r.push_back(Row("context", T::count, "workload", "Tokens per request, prompt + output (default: prompt + output, else max-model-len; sweep: 1k,4k,16k,32k); with one of --prompt-tokens / --output-tokens the other is what it leaves")
      .flags("--context").sweep());
  r.push_back(Row("prompt_tokens", T::count, "workload", "Prompt tokens per request").flags("--prompt-tokens"));
  r.push_back(Row("output_tokens", T::count, "workload", "Generated tokens per request").flags("--output-tokens"));
  r.push_back(Row("concurrency", T::count, "workload", "Concurrent requests (whole deployment; default 1; simulate: a closed loop of N clients, and without it every request is sent at t = 0 or at --rate; sweep: 1,8,32,128)").flags("--concurrency").sweep());
  r.push_back(Row("shared_prefix", T::count, "workload", "Tokens of a prompt prefix (system prompt) every request shares, held once (with the prefix cache on, each engine's default)")
      .flags("--shared-prefix"));
  // ---- performance model ----
  r.push_back(Row("bw_efficiency", T::fraction, "performance", "Fraction of datasheet memory bandwidth reading bf16 weights and the KV cache (default: fitted, docs/performance-model.md)").flags("--bw-efficiency"));
  r.push_back(Row("compute_efficiency", T::fraction, "performance", "Fraction of the dense tensor peak the GEMMs reach (default: fitted)").flags("--compute-efficiency"));
  r.push_back(Row("step_overhead_us", T::number, "performance", "Engine time per step in microseconds (default: fitted per engine)").flags("--step-overhead-us"));
  r.push_back(Row("host_bandwidth", T::text, "performance", "Host memory bandwidth for weights and KV held in host memory (llama.cpp -ngl / --n-cpu-moe / -ot =CPU / -nkvo): bytes/s or a rate such as 89.6GB/s (default: a CPU or unified-memory profile's own, else dual-channel DDR5-5600, 89.6 GB/s)")
      .flags("--host-bandwidth").apply(apply_host_bandwidth));
  r.push_back(Row("calibration", T::text, "performance", "A kvplan calibrate file: measured attention bandwidth and step overhead replace the defaults")
      .flags("--calibration"));
  r.push_back(Row("perf_coefficients", T::text, "performance",
                  "Performance-model coefficients replacing the fitted ones (docs/performance-model.md): a JSON object written inline or the path of a JSON file holding one")
      .flags("--perf-coefficients"));
  std::vector<SettingDef> out;
  for (auto& row : r) out.push_back(std::move(row.d));
  return out;
}
// clang-format on

std::string normalize_key(std::string_view k) {
  std::string s(k);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

}  // namespace

const std::vector<SettingDef>& settings_table() {
  static const std::vector<SettingDef> t = build_table();
  return t;
}

const SettingDef* find_setting(std::string_view key) {
  const std::string k = normalize_key(key);
  for (const auto& d : settings_table())
    if (d.key == k) return &d;
  return nullptr;
}

std::optional<EngineBinding> engine_flag_binding(EngineKind engine, std::string_view flag) {
  const std::string f = normalize_flag_name(std::string(flag));
  for (const auto& d : settings_table()) {
    const auto it = d.engine.find(engine);
    if (it == d.engine.end()) continue;
    for (const auto& s : it->second)
      if (normalize_flag_name(s.name) == f) return EngineBinding{&d, s.conv};
  }
  return std::nullopt;
}

std::optional<EngineBinding> env_binding(std::string_view variable, std::optional<EngineKind> engine) {
  for (const auto& d : settings_table())
    for (const auto& s : d.env)
      if (s.name == variable && (!engine || s.engines.empty() || std::find(s.engines.begin(), s.engines.end(), *engine) != s.engines.end()))
        return EngineBinding{&d, s.conv};
  return std::nullopt;
}

std::optional<EngineBinding> trtllm_yaml_binding(std::string_view key) {
  for (const auto& d : settings_table())
    for (const auto& s : d.trtllm_yaml)
      if (s.name == key) return EngineBinding{&d, s.conv};
  return std::nullopt;
}

std::string kvplan_flag_for(const SettingDef& def, EngineKind engine) {
  for (const auto& s : def.kvplan)
    if (s.conv != Conv::negate && (s.engines.empty() || std::find(s.engines.begin(), s.engines.end(), engine) != s.engines.end()))
      return s.name;
  return def.kvplan.empty() ? def.key : def.kvplan.front().name;
}

// ---------------------------------------------------------------------------------------------------
// SettingsBag
// ---------------------------------------------------------------------------------------------------

void SettingsBag::set(const std::string& key, std::string text, Origin origin) {
  const SettingDef* d = find_setting(key);
  if (!d) throw InputError(origin.where, "unknown setting '" + key + "'", "kvplan plan --help lists the settings");
  // one layer naming a setting twice with two values (two spellings in one settings map, --tp beside --set
  // tensor_parallel_size=4, --set given twice): which one was meant is not known. An engine command line may repeat a
  // flag (the engine takes the last, as here); a later layer overrides an earlier one by design.
  using K = Origin::Kind;
  const auto layer = [](K k) { return k == K::set ? K::flag : k; };
  if (const auto it = values_.find(d->key); it != values_.end() && it->second.text != text &&
                                            (origin.kind == K::flag || origin.kind == K::set || origin.kind == K::file) &&
                                            layer(it->second.origin.kind) == layer(origin.kind) &&
                                            (origin.kind != K::file || it->second.origin.where.substr(0, it->second.origin.where.find(':')) ==
                                                                          origin.where.substr(0, origin.where.find(':'))))
    throw InputError(origin.where, "'" + d->key + "' is given twice: '" + it->second.text + "' (" + it->second.origin.where + ") and '" + text + "' here",
                     "give it once");
  values_[d->key] = SettingValue{std::move(text), std::move(origin)};
}

const SettingValue* SettingsBag::get(const std::string& key) const {
  const auto it = values_.find(normalize_key(key));
  return it == values_.end() ? nullptr : &it->second;
}

std::string SettingsBag::where(const std::string& key, EngineKind engine) const {
  if (const auto* v = get(key)) return v->origin.where;
  if (const auto* d = find_setting(key)) return kvplan_flag_for(*d, engine);
  return key;
}

void SettingsBag::fail(const std::string& key, const std::string& problem, const std::string& fix) const {
  const auto* v = get(key);
  throw InputError(v ? v->origin.where : key, problem, fix);
}

bool SettingsBag::is_auto(const std::string& key) const {
  const auto* v = get(key);
  if (!v) return false;
  const std::string l = ascii_lower(v->text);
  return l == "auto" || (l == "-1" && find_setting(key)->allows_auto);
}

std::optional<i64> SettingsBag::count(const std::string& key) const {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  return parse_count(v->text, v->origin.where);
}

std::optional<i64> SettingsBag::signed_count(const std::string& key) const {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  if (!v->text.empty() && v->text[0] == '-') return -parse_count(v->text.substr(1), v->origin.where);
  return parse_count(v->text, v->origin.where);
}

std::optional<i64> SettingsBag::bytes(const std::string& key) const {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  return parse_bytes(v->text, v->origin.where);
}

std::optional<double> SettingsBag::number(const std::string& key) const {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  try {
    std::size_t used = 0;
    const double f = std::stod(v->text, &used);
    if (used == v->text.size() && std::isfinite(f) && f >= 0) return f;
  } catch (const std::exception&) {
  }
  throw InputError(v->origin.where, "'" + v->text + "' is not a non-negative number", "give a decimal number >= 0, such as 0.5 or 71");
}

std::optional<double> SettingsBag::bandwidth(const std::string& key, const std::string& fix) const {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  std::string t = v->text;
  if (t.size() > 2 && (t.ends_with("/s") || t.ends_with("/S"))) t.erase(t.size() - 2);
  double r = -1;
  try {
    std::size_t used = 0;
    r = std::stod(t, &used);
    if (used != t.size()) r = static_cast<double>(parse_bytes(t, key));
  } catch (const std::exception&) {
    fail(key, "'" + v->text + "' is not a bandwidth", fix);
  }
  if (!std::isfinite(r) || r <= 0) fail(key, "'" + v->text + "' must be above 0 bytes/s", fix);
  return r;
}

std::optional<double> SettingsBag::fraction(const std::string& key) const {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  try {
    std::size_t used = 0;
    const double f = std::stod(v->text, &used);
    if (used == v->text.size()) return f;
  } catch (const std::exception&) {
  }
  throw InputError(v->origin.where, "'" + v->text + "' is not a number", "use a fraction such as 0.9");
}

std::optional<bool> SettingsBag::boolean(const std::string& key) const {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  if (const auto b = parse_bool_text(v->text)) return b;
  throw InputError(v->origin.where, "expected true or false, got '" + v->text + "'");
}

std::optional<std::string> SettingsBag::text(const std::string& key) const {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  return v->text;
}

std::optional<std::string> SettingsBag::choice(const std::string& key) const {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  const std::vector<std::string>& c = find_setting(key)->choices;
  if (std::find(c.begin(), c.end(), v->text) != c.end()) return v->text;
  std::string list;
  for (const auto& x : c) list += (list.empty() ? "" : ", ") + x;
  throw InputError(v->origin.where, "'" + v->text + "' is not one of " + list, "give one of them");
}

std::optional<bool> parse_bool_text(std::string_view v) {
  const std::string l = ascii_lower(std::string(v));
  if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "0" || l == "no" || l == "off") return false;
  return std::nullopt;
}

std::string vllm_human_int(const std::string& v) {
  if (v.size() < 2) return v;
  const char suffix = v.back();
  const std::string number = v.substr(0, v.size() - 1);
  const std::string_view lowers = "kmgt", uppers = "KMGT";
  const std::size_t power = std::min(lowers.find(suffix), uppers.find(suffix));
  auto numeric = [](const std::string& s) {
    if (s.empty()) return false;
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
  };
  if (power == std::string_view::npos || !numeric(number) || number[0] == '-' || number[0] == '+') return v;
  try {
    if (lowers.find(suffix) != std::string_view::npos) {
      double scale = 1;
      for (std::size_t p = 0; p <= power; ++p) scale *= 1000;
      const double x = std::stod(number) * scale;
      if (!(x < 9.2e18)) return v;
      return std::to_string(static_cast<i64>(x));
    }
    if (number.find_first_not_of("0123456789") != std::string::npos) return v;  // 1.5K: vLLM refuses it too
    return std::to_string(mul(std::stoll(number), i64{1} << (10 * (power + 1)), "vLLM integer"));
  } catch (const std::exception&) {
    return v;
  }
}

}  // namespace kvplan::io
