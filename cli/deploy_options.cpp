// Deployment options (see deploy_options.hpp).
#include "deploy_options.hpp"

#include <map>

#include "kvplan/core/units.hpp"

namespace kvplan::cli {

namespace {

// Engine-specific flags: each row lists one setting under every engine's own name ("" where the
// engine has none). A flag given with another engine is an error that names that engine's flag.
struct FlagFamily {
  const char* vllm;
  const char* sglang;
  const char* trtllm;
  const char* llamacpp;
  const char* generic;
  const char* name(EngineKind k) const {
    switch (k) {
      case EngineKind::vllm: return vllm;
      case EngineKind::sglang: return sglang;
      case EngineKind::trtllm: return trtllm;
      case EngineKind::llamacpp: return llamacpp;
      case EngineKind::generic: return generic;
    }
    return "";
  }
};

const std::vector<FlagFamily>& flag_families() {
  static const std::vector<FlagFamily> f = {
      {"--gpu-memory-utilization", "--mem-fraction-static", "--kv-cache-free-gpu-mem-fraction", "", "--gpu-memory-utilization"},
      {"--block-size", "--page-size", "--tokens-per-block", "", "--block-size"},
      {"--kv-cache-memory-bytes", "--kv-cache-memory-bytes", "--kv-cache-memory-bytes", "", "--kv-cache-memory-bytes"},
      {"", "--max-total-tokens", "--max-tokens", "", ""},
      {"--max-model-len", "--max-model-len", "--max-model-len", "--ctx-size", "--max-model-len"},
      {"--max-num-seqs", "--max-num-seqs", "--max-num-seqs", "--parallel", "--max-num-seqs"},
      {"--max-num-batched-tokens", "--max-num-batched-tokens", "--max-num-batched-tokens", "--ubatch-size", "--max-num-batched-tokens"},
      {"", "", "", "--n-gpu-layers", ""},
      {"", "", "", "--swa-full", ""},
      {"", "", "", "--no-kv-unified", ""},
  };
  return f;
}

const char* engine_label(EngineKind k) {
  switch (k) {
    case EngineKind::vllm: return "vLLM";
    case EngineKind::sglang: return "SGLang";
    case EngineKind::trtllm: return "TensorRT-LLM";
    case EngineKind::llamacpp: return "llama.cpp";
    case EngineKind::generic: return "generic";
  }
  return "?";
}

void check_engine_flags(const CLI::App* c, EngineKind kind) {
  for (const auto& fam : flag_families()) {
    for (EngineKind owner : {EngineKind::vllm, EngineKind::sglang, EngineKind::trtllm, EngineKind::llamacpp, EngineKind::generic}) {
      const std::string flag = fam.name(owner);
      if (flag.empty() || c->count(flag) == 0 || flag == fam.name(kind)) continue;
      const std::string mine = fam.name(kind);
      throw InputError(flag, std::string("is not a ") + engine_label(kind) + " setting",
                       mine.empty() ? std::string(engine_label(kind)) + " has no equivalent; drop it"
                                    : "with --engine " + std::string(engine_name(kind)) + " use " + mine);
    }
  }
}

std::optional<i64> opt_count(const std::string& v, const char* flag) {
  if (v.empty()) return std::nullopt;
  return parse_count(v, flag);
}

std::optional<i64> opt_bytes(const std::string& v, const char* flag) {
  if (v.empty()) return std::nullopt;
  return parse_bytes(v, flag);
}

double parse_fraction(const std::string& v, const char* flag) {
  try {
    size_t used = 0;
    const double f = std::stod(v, &used);
    if (used != v.size()) throw std::invalid_argument("trailing");
    return f;
  } catch (const std::exception&) {
    throw InputError(flag, "'" + v + "' is not a number", "use a fraction such as 0.9");
  }
}

i64 parse_signed(const std::string& v, const char* flag) {
  if (!v.empty() && v[0] == '-') return -parse_count(v.substr(1), flag);
  return parse_count(v, flag);
}

}  // namespace

void add_deploy_options(CLI::App* c, DeployArgs& a, bool workload) {
  add_model_options(c, a.model);
  c->add_option("--gpu", a.gpu, "GPU profile id or alias (kvplan gpus)")->capture_default_str();
  c->add_option("--engine", a.engine, "vllm | sglang | trtllm | llama.cpp | generic")->capture_default_str();
  auto* g = c->add_option_group("engine flags", "Each engine's own flag names");
  g->add_option("--gpu-memory-utilization", a.gpu_memory_utilization, "vLLM: fraction of GPU memory the instance may use (default 0.9)");
  g->add_option("--mem-fraction-static", a.mem_fraction_static, "SGLang: static memory fraction (default by TP: 0.88 ... 0.79)");
  g->add_option("--kv-cache-free-gpu-mem-fraction", a.free_gpu_mem_fraction, "TensorRT-LLM: fraction of free memory for KV (default 0.9)");
  g->add_option("--max-model-len,--context-length,--max-seq-len", a.max_model_len, "Longest request (default: the model's max_position_embeddings)");
  g->add_option("--max-num-seqs,--max-running-requests,--max-batch-size", a.max_num_seqs, "Concurrent sequences per replica (vLLM default 1024 on >=70 GiB GPUs, else 256)");
  g->add_option("--max-num-batched-tokens,--chunked-prefill-size,--max-num-tokens", a.max_num_batched_tokens, "Tokens per forward pass (vLLM default 8192 on >=70 GiB GPUs, else 2048)");
  g->add_option("--block-size", a.block_size, "vLLM: tokens per KV block (1, 8, 16, 32, 64, 128; default 16)");
  g->add_option("--page-size", a.page_size, "SGLang: tokens per page (default 1)");
  g->add_option("--tokens-per-block", a.tokens_per_block, "TensorRT-LLM: tokens per block, a power of two (default 32)");
  g->add_option("--tensor-parallel-size,--tp,--tp-size", a.tp, "Tensor-parallel GPUs per stage")->capture_default_str();
  g->add_option("--pipeline-parallel-size,--pp,--pp-size", a.pp, "Pipeline stages")->capture_default_str();
  g->add_option("--data-parallel-size,--dp,--dp-size", a.dp, "Data-parallel replicas")->capture_default_str();
  g->add_option("--expert-parallel-size", a.ep, "Ranks the routed experts are split across (1: split by TP)")->capture_default_str();
  g->add_flag("--enable-expert-parallel", a.enable_expert_parallel, "vLLM: experts split across TP x DP ranks");
  g->add_option("--kv-cache-memory-bytes,--max-gpu-total-bytes", a.kv_cache_memory_bytes,
                "KV memory per GPU, skipping the budget (vLLM --kv-cache-memory-bytes, TRT max_gpu_total_bytes; bytes or 12GiB)");
  g->add_option("--max-total-tokens", a.max_total_tokens, "SGLang: cap on the KV pool in tokens");
  g->add_option("--max-tokens", a.max_tokens, "TensorRT-LLM: cap on tokens in the paged KV cache");
  g->add_option("--ctx-size,-c", a.ctx_size, "llama.cpp: context cells (default 4096; 0 = the model's)");
  g->add_option("--parallel", a.parallel, "llama.cpp: slots sharing the context (-np)")->capture_default_str();
  g->add_option("--n-gpu-layers", a.n_gpu_layers, "llama.cpp: layers offloaded to the GPU (-ngl; -1 = all)")->capture_default_str();
  g->add_option("--ubatch-size", a.ubatch_size, "llama.cpp: physical batch (-ub)")->capture_default_str();
  g->add_flag("--swa-full", a.swa_full, "llama.cpp: full-size cache for sliding-window layers");
  g->add_flag("--no-kv-unified", a.no_kv_unified, "llama.cpp: one cache stream per slot (n_ctx / parallel cells each)");
  g->add_flag("--enforce-eager", a.enforce_eager, "No CUDA graphs (no graph memory)");
  g->add_flag("--allow-long-context", a.allow_long_context, "Allow --max-model-len above the model's (VLLM_ALLOW_LONG_MAX_MODEL_LEN)");
  auto* b = c->add_option_group("budget overrides", "Replace a modelled budget term (bytes, or with a unit: 512MiB, 1.5GiB)");
  b->add_option("--weight-bytes", a.weight_bytes, "Weights on the most loaded GPU");
  b->add_option("--activation-bytes", a.activation_bytes, "Activation peak (llama.cpp: compute buffer)");
  b->add_option("--non-torch-bytes", a.non_torch_bytes, "Library workspaces and NCCL buffers");
  b->add_option("--cuda-context-bytes", a.cuda_context_bytes, "CUDA context");
  b->add_option("--cuda-graph-bytes", a.cuda_graph_bytes, "CUDA graph pool");
  b->add_option("--overhead-bytes", a.overhead_bytes, "Anything else reserved per GPU");
  b->add_option("--gpu-memory-bytes", a.gpu_memory_bytes, "GPU total instead of the profile's (e.g. as your driver reports it)");
  if (workload) {
    auto* w = c->add_option_group("workload");
    w->add_option("--context", a.context, "Tokens per request, prompt + output (default: prompt + output, else max-model-len)");
    w->add_option("--prompt-tokens", a.prompt_tokens, "Prompt tokens per request");
    w->add_option("--output-tokens", a.output_tokens, "Generated tokens per request");
    w->add_option("--concurrency", a.concurrency, "Concurrent requests (whole deployment; default 1)");
    w->add_option("--shared-prefix", a.shared_prefix, "Tokens of a prompt prefix (system prompt) every request shares, held once");
  }
  auto* p = c->add_option_group("performance model");
  p->add_option("--bw-efficiency", a.bw_efficiency, "Fraction of datasheet memory bandwidth reached (default 0.80)");
  p->add_option("--compute-efficiency", a.compute_efficiency, "Fraction of dense bf16 peak reached (default 0.60)");
  p->add_option("--step-overhead-us", a.step_overhead_us, "Fixed time per decode step in microseconds (default 300)");
  p->add_option("--calibration", a.calibration, "A kvplan calibrate file: measured attention bandwidth and step overhead replace the defaults");
}

Deployment resolve_deployment(const DeployArgs& a, const CLI::App* c, const io::Profiles& profiles) {
  Deployment d;
  const auto kind = parse_engine(a.engine);
  if (!kind) throw InputError("--engine", "unknown engine '" + a.engine + "'", "use vllm, sglang, trtllm, llama.cpp or generic");
  check_engine_flags(c, *kind);
  d.model = resolve_model(a.model, profiles);
  const GpuSpec& gpu = profiles.gpu(a.gpu);
  Parallel par;
  par.tp = parse_count(a.tp, "--tensor-parallel-size");
  par.pp = parse_count(a.pp, "--pipeline-parallel-size");
  par.dp = parse_count(a.dp, "--data-parallel-size");
  par.ep = parse_count(a.ep, "--expert-parallel-size");
  if (a.enable_expert_parallel) par.ep = mul(par.tp, par.dp);
  d.spec = respec(d, a, gpu, par, std::nullopt);

  const EngineSettings& e = d.spec.engine;
  const i64 max_len = e.kind == EngineKind::llamacpp ? 0 : e.max_model_len;
  d.prompt = opt_count(a.prompt_tokens, "--prompt-tokens").value_or(0);
  d.output = opt_count(a.output_tokens, "--output-tokens").value_or(0);
  if (auto t = opt_count(a.context, "--context")) {
    d.tokens = *t;
    d.tokens_source = "--context";
    if (!a.prompt_tokens.empty() || !a.output_tokens.empty()) {
      if (d.prompt + d.output != d.tokens)
        throw InputError("--context", std::to_string(d.tokens) + " differs from --prompt-tokens + --output-tokens = " +
                                          std::to_string(d.prompt + d.output), "give --context or the two parts, not both");
    } else {
      d.prompt = d.tokens;
    }
  } else if (!a.prompt_tokens.empty() || !a.output_tokens.empty()) {
    d.tokens = add(d.prompt, d.output);
    d.tokens_source = "--prompt-tokens + --output-tokens";
  } else {
    d.tokens = max_len > 0 ? max_len : Planner(d.spec).max_len();
    d.prompt = d.tokens;
    d.tokens_source = e.kind == EngineKind::llamacpp ? "per-slot context" : "--max-model-len";
  }
  if (d.tokens < 1) throw InputError("--context", "must be >= 1 token");
  d.concurrency = opt_count(a.concurrency, "--concurrency").value_or(1);
  if (d.concurrency < 1) throw InputError("--concurrency", "must be >= 1");
  d.shared_prefix = opt_count(a.shared_prefix, "--shared-prefix").value_or(0);
  if (d.shared_prefix > d.tokens)
    throw InputError("--shared-prefix", std::to_string(d.shared_prefix) + " exceeds the " + std::to_string(d.tokens) + " tokens per request",
                     "the prefix is part of each request's prompt");
  auto check_eff = [](double v, const char* flag) {
    if (v != 0 && !(v > 0 && v <= 1)) throw InputError(flag, "must be in (0, 1]", "use a fraction such as 0.8");
  };
  check_eff(a.bw_efficiency, "--bw-efficiency");
  check_eff(a.compute_efficiency, "--compute-efficiency");
  d.perf.bandwidth_efficiency = a.bw_efficiency;
  d.perf.compute_efficiency = a.compute_efficiency;
  d.perf.step_overhead_s = a.step_overhead_us >= 0 ? a.step_overhead_us * 1e-6 : -1;
  if (!a.calibration.empty()) {
    // calibrated on a device: efficiency = measured attention bandwidth / the profile's datasheet bandwidth
    const auto j = io::parse_json_file(a.calibration);
    const io::JsonView root(j, a.calibration);
    const auto schema = root.object("schema");
    if (!schema || schema->string_or("name", "") != "kvplan.calibration")
      throw InputError("--calibration", "'" + a.calibration + "' is not a kvplan calibration (schema.name kvplan.calibration)", "pass what kvplan calibrate wrote");
    const auto res = root.object("results");
    if (!res) throw InputError(a.calibration, "/results: missing", "pass what kvplan calibrate wrote");
    if (res->string_or("backend", "") != "cuda")
      throw InputError("--calibration", "'" + a.calibration + "' was measured on the " + res->string_or("backend", "?") + " backend, not a GPU",
                       "calibrate with kvplan probe --backend cuda on the GPU you plan for");
    const double bw = res->get_number("attention_bandwidth_bytes_per_s");
    const double t0 = res->get_number("step_overhead_s");
    const std::string measured_on = res->string_or("gpu", "");
    if (!measured_on.empty() && measured_on != d.spec.gpu.id)
      d.model.spec.warnings.push_back("calibration measured on " + measured_on + ", applied to " + d.spec.gpu.id);
    const double eff = bw / static_cast<double>(d.spec.gpu.memory_bandwidth_bytes_per_s);
    if (!(eff > 0.05 && eff <= 1.5)) throw InputError(a.calibration, "/results/attention_bandwidth_bytes_per_s: " + std::to_string(bw) + " is not plausible for " + d.spec.gpu.id, "calibrate on this GPU");
    if (a.bw_efficiency == 0) d.perf.bandwidth_efficiency = std::min(eff, 1.0);
    if (a.step_overhead_us < 0) d.perf.step_overhead_s = t0;
  }
  return d;
}

PlanSpec respec(const Deployment& d, const DeployArgs& a, const GpuSpec& gpu, const Parallel& par,
                const std::optional<std::string>& kv_dtype) {
  PlanSpec s;
  s.model = d.model.spec;
  s.kv = d.model.kv_options;
  if (kv_dtype && *kv_dtype != "auto") {
    const auto f = parse_format(*kv_dtype);
    if (!f) throw InputError("--kv-dtype", "unknown format '" + *kv_dtype + "'", "use one of " + format_names());
    s.kv.k_format = s.kv.v_format = *f;
  }
  s.gpu = gpu;
  s.parallel = par;
  EngineSettings e;
  e.kind = *parse_engine(a.engine);
  if (!a.gpu_memory_utilization.empty()) e.memory_fraction = parse_fraction(a.gpu_memory_utilization, "--gpu-memory-utilization");
  if (!a.mem_fraction_static.empty()) e.memory_fraction = parse_fraction(a.mem_fraction_static, "--mem-fraction-static");
  if (!a.free_gpu_mem_fraction.empty()) e.memory_fraction = parse_fraction(a.free_gpu_mem_fraction, "--kv-cache-free-gpu-mem-fraction");
  e.max_model_len = opt_count(a.max_model_len, "--max-model-len").value_or(0);
  e.max_num_seqs = opt_count(a.max_num_seqs, "--max-num-seqs").value_or(0);
  e.max_num_batched_tokens = opt_count(a.max_num_batched_tokens, "--max-num-batched-tokens").value_or(0);
  if (!a.block_size.empty()) e.block_size = parse_count(a.block_size, "--block-size");
  if (!a.page_size.empty()) e.block_size = parse_count(a.page_size, "--page-size");
  if (!a.tokens_per_block.empty()) e.block_size = parse_count(a.tokens_per_block, "--tokens-per-block");
  if ((!a.block_size.empty() || !a.page_size.empty()) && e.block_size < 1)
    throw InputError(a.page_size.empty() ? "--block-size" : "--page-size", "must be >= 1");
  e.kv_cache_memory_bytes = opt_bytes(a.kv_cache_memory_bytes, "--kv-cache-memory-bytes");
  e.max_total_tokens = opt_count(a.max_total_tokens, "--max-total-tokens");
  e.max_tokens = opt_count(a.max_tokens, "--max-tokens");
  if (!a.ctx_size.empty()) e.ctx_size = parse_count(a.ctx_size, "--ctx-size");
  e.parallel = parse_count(a.parallel, "--parallel");
  e.n_gpu_layers = parse_signed(a.n_gpu_layers, "--n-gpu-layers");
  e.ubatch_size = parse_count(a.ubatch_size, "--ubatch-size");
  e.swa_full = a.swa_full;
  e.kv_unified = !a.no_kv_unified;
  e.enforce_eager = a.enforce_eager;
  e.allow_long_context = a.allow_long_context;
  const i64 gpu_mem = opt_bytes(a.gpu_memory_bytes, "--gpu-memory-bytes").value_or(gpu.memory_bytes);
  s.engine = resolve_engine_defaults(e, s.model.max_context, par.tp, gpu_mem, gpu.architecture);
  s.overrides.weights = opt_bytes(a.weight_bytes, "--weight-bytes");
  s.overrides.activation = opt_bytes(a.activation_bytes, "--activation-bytes");
  s.overrides.non_torch = opt_bytes(a.non_torch_bytes, "--non-torch-bytes");
  s.overrides.cuda_context = opt_bytes(a.cuda_context_bytes, "--cuda-context-bytes");
  s.overrides.cuda_graph = opt_bytes(a.cuda_graph_bytes, "--cuda-graph-bytes");
  s.overrides.extra = opt_bytes(a.overhead_bytes, "--overhead-bytes");
  s.overrides.gpu_memory = opt_bytes(a.gpu_memory_bytes, "--gpu-memory-bytes");
  return s;
}

ojson engine_json(const Planner& p) {
  const EngineReport& r = p.engine();
  ojson j = {{"engine", engine_name(r.kind)}, {"rules_version", r.rules_version}};
  switch (r.kind) {
    case EngineKind::vllm:
      j["available_kv_bytes"] = r.available_kv_bytes;
      j["block_size"] = r.block_size;
      j["page_bytes_per_layer"] = r.page_bytes;
      j["kv_cache_groups"] = r.num_groups;
      j["layers_per_group"] = r.group_size;
      j["padding_layers"] = r.padding_layers;
      j["num_gpu_blocks"] = r.num_gpu_blocks;
      j["kv_cache_tokens"] = r.kv_cache_tokens;
      j["max_concurrency"] = r.max_concurrency;
      j["max_model_len"] = p.spec().engine.max_model_len;
      break;
    case EngineKind::sglang:
      j["available_kv_bytes"] = r.available_kv_bytes;
      j["cell_size_bytes"] = r.cell_size;
      j["page_size"] = r.block_size;
      j["max_total_num_tokens"] = r.max_total_num_tokens;
      break;
    case EngineKind::trtllm:
      j["available_kv_bytes"] = r.available_kv_bytes;
      j["bytes_per_token"] = r.page_bytes;
      j["tokens_per_block"] = r.block_size;
      j["num_blocks"] = r.num_gpu_blocks;
      j["max_tokens"] = r.max_tokens;
      break;
    case EngineKind::llamacpp:
      j["n_ctx"] = r.n_ctx;
      j["n_ctx_seq"] = r.n_ctx_seq;
      j["kv_cells"] = r.kv_cells;
      j["swa_cells"] = r.swa_cells;
      j["kv_bytes"] = r.kv_bytes;
      j["k_bytes"] = r.k_bytes;
      j["v_bytes"] = r.v_bytes;
      j["state_bytes"] = r.state_bytes;
      j["gpu_kv_bytes"] = r.gpu_kv_bytes;
      break;
    case EngineKind::generic:
      j["available_kv_bytes"] = r.available_kv_bytes;
      j["block_size"] = r.block_size;
      break;
  }
  j["kv_pool_bytes"] = r.kv_pool_bytes;
  j["startup_ok"] = r.startup_ok;
  if (!r.startup_ok && r.estimated_max_model_len > 0) j["estimated_max_model_len"] = r.estimated_max_model_len;
  j["notes"] = r.notes;
  return j;
}

ojson budget_json(const Planner& p) {
  ojson arr = ojson::array();
  for (const auto& t : p.budget())
    arr.push_back({{"term", t.name}, {"bytes", t.bytes}, {"basis", t.basis}, {"overridden", t.overridden}});
  return arr;
}

ojson deployment_inputs_json(const Deployment& d) {
  ojson j = model_inputs_json(d.model);
  const PlanSpec& s = d.spec;
  j["gpu"] = s.gpu.id;
  j["gpu_memory_bytes"] = s.overrides.gpu_memory.value_or(s.gpu.memory_bytes);
  j["engine"] = engine_name(s.engine.kind);
  j["tensor_parallel_size"] = s.parallel.tp;
  j["pipeline_parallel_size"] = s.parallel.pp;
  j["data_parallel_size"] = s.parallel.dp;
  j["expert_parallel_size"] = s.parallel.ep;
  j["gpus"] = s.parallel.gpus();
  const EngineSettings& e = s.engine;
  j["memory_fraction"] = e.memory_fraction;
  j["max_model_len"] = e.max_model_len;
  j["max_num_seqs"] = e.max_num_seqs;
  j["max_num_batched_tokens"] = e.max_num_batched_tokens;
  j["block_size"] = e.block_size;
  if (e.kind == EngineKind::llamacpp) {
    j["ctx_size"] = e.ctx_size;
    j["parallel"] = e.parallel;
    j["n_gpu_layers"] = e.n_gpu_layers;
    j["ubatch_size"] = e.ubatch_size;
    j["swa_full"] = e.swa_full;
    j["kv_unified"] = e.kv_unified;
  }
  j["tokens_per_request"] = d.tokens;
  j["tokens_source"] = d.tokens_source;
  j["prompt_tokens"] = d.prompt;
  j["output_tokens"] = d.output;
  j["concurrency"] = d.concurrency;
  j["shared_prefix_tokens"] = d.shared_prefix;
  return j;
}

}  // namespace kvplan::cli
