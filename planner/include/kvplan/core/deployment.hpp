// A deployment as the core receives it: typed, fully parsed, with the engine settings as the user
// gave them (defaults are filled per plan, because they depend on the GPU and the parallel layout).
// Sweeps and searches copy a DeploymentSpec, change typed fields and plan again; nothing here parses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/perf.hpp"
#include "kvplan/core/plan.hpp"
#include "kvplan/core/search.hpp"

namespace kvplan {

/// The traffic a deployment is asked to serve (0 / unset: derived, see resolve_workload).
struct Workload {
  std::optional<i64> context;  // tokens per request (prompt + output)
  std::optional<i64> prompt, output;
  i64 concurrency = 1;
  i64 shared_prefix = 0;
  // simulate (and fit's simulated targets): the shared prefix comes before --prompt-tokens, as vllm bench serve's
  // --random-prefix-len before --random-input-len, so a request holds prefix + prompt + output tokens and a
  // --context is that total. Otherwise (plan, fit, check) the prefix is part of the request's tokens.
  bool prefix_before_prompt = false;
  // traffic that is simulated (check's simulated requirements): output tokens without a prompt length take this prompt
  // (the simulator's default); 0: such traffic is refused, a request having a prompt
  i64 default_prompt = 0;
};

struct DeploymentSpec {
  ModelSpec model;  // after the model options (MLA layout, windows, weight format, config overrides)
  std::optional<ElemFormat> k_format, v_format, state_format;  // nullopt: the engine's default ("auto")
  std::vector<std::string> kv_skip_layers;  // vLLM --kv-cache-dtype-skip-layers: layer indices and/or "sliding_window"
  std::optional<ElemFormat> dtype;  // --dtype / --weight-format f16|bf16|f32; nullopt: the engine resolves the config's
  GpuSpec gpu;
  Parallel parallel;
  bool enable_expert_parallel = false;  // vLLM --enable-expert-parallel: routed experts over TP x DP ranks
  std::optional<ModelSpec> draft;  // speculative decoding's draft model (engine.spec says the method)
  EngineSettings engine;         // as given: zero / unset fields take the engine's defaults per plan
  bool max_model_len_auto = false;  // vLLM --max-model-len auto: the longest that starts
  BudgetOverrides overrides;
  std::optional<LlamaDraft> llama_draft;  // llama.cpp --model-draft (the draft model after its own reader)
  std::vector<LlamaTensorMove> llama_tensor_moves;  // llama.cpp --override-tensor, matched against the tensor names
  std::vector<LlamaTensorMove> llama_lora_tensors;  // llama.cpp --lora adapters' tensors (from their GGUF headers)
  i64 llama_mmproj_bytes = 0;                       // llama.cpp --mmproj tensor bytes (from its GGUF header)
  bool llama_mmproj_offload = true;
  PerfParams perf;
  Workload work;
};

/// The dtype the engine computes and stores weights in, from the config's torch_dtype:
/// vLLM >= 0.10: float32 checkpoints run in the platform's first dtype, bf16 on SM >= 8.0 and fp16 below,
/// except gemma2 / gemma3 / glm4, never fp16 (fp32 below SM 8.0) (vllm/config/model.py _resolve_auto_dtype);
/// SGLang: float32 runs in fp16, gemma families in bf16 (model_config.py _get_and_verify_dtype);
/// llama.cpp and TensorRT-LLM: as stored.
ElemFormat resolve_dtype(const DeploymentSpec& d);

/// Throws InputError at `key` when `engine` cannot cache K or V in format `f`: ggml weight-only types anywhere;
/// nvfp4 outside vLLM and TensorRT-LLM; mxfp4 outside SGLang; fp8 or int8 in llama.cpp.
void check_kv_format(EngineKind engine, ElemFormat f, const std::string& key, const std::string& version = "");

/// vLLM's per-layer KV rules: marks the layers that keep the model dtype (Layer::kv_model_dtype: the
/// --kv-cache-dtype-skip-layers list, TurboQuant's first and last two layers of a dense model) and throws InputError
/// where vLLM refuses the KV cache dtype for the model or GPU or does not start with it (docs/engine-rules.md §8:
/// per-row dtypes or nvfp4 with MLA, nvfp4 off SM 10.x, TurboQuant with sinks, sliding-window or chunked layers or
/// fp32 models, int4_per_token_head with sliding-window layers, kept layers whose pages vLLM cannot unify).
void vllm_kv_layers(ModelSpec& m, const DeploymentSpec& d, KvOptions& kv, ElemFormat dtype);

/// Throws InputError at `key` where vLLM's TurboQuant backend refuses the model itself, whatever the version or GPU:
/// an MLA latent, attention sinks, sliding-window or chunked local attention layers, a model dtype other than fp16 or
/// bf16 (`dtype`, the dtype vLLM runs the model in; nullopt where no engine resolves it: `kvplan kv`, whose float32
/// checkpoint vLLM would run in bf16). vllm_kv_layers and `kvplan kv --kv-dtype turboquant_*` both ask it.
/// Also notes (Model::notes) a head size that is not a power of two, which TurboQuant's rotation is not built for.
void check_turboquant_model(ModelSpec& m, std::optional<ElemFormat> dtype, const std::string& key);

/// A KV cache type the engine does not have but kvplan can still size (a ggml block type on vLLM, SGLang or
/// TensorRT-LLM; int8 on vLLM or SGLang): the warning to print, "" when the engine has it.
std::string foreign_kv_format(EngineKind engine, ElemFormat f);

/// The KV cache format an engine's --kv-cache-dtype auto takes from a ModelOpt checkpoint's kv_cache_quant_algo
/// (WeightQuant::checkpoint_kv) at its version; nullopt when it keeps the model dtype.
std::optional<ElemFormat> checkpoint_kv_format(const WeightQuant& q, const EngineSettings& e);

/// The engines (and first versions) whose auto KV dtype follows a checkpoint's kv_cache_quant_algo `algo` ("FP8",
/// "NVFP4"), as text: "TensorRT-LLM, vLLM >= 0.14.0 and SGLang >= 0.5.3".
std::string checkpoint_kv_adopters(const std::string& algo);

/// The plan input for this deployment: KV formats resolved, engine defaults filled for its GPU and
/// tensor-parallel size (resolve_engine_defaults), and vLLM's auto max_model_len applied.
/// Throws InputError naming settings by key (max_model_len, tensor_parallel_size, ...).
PlanSpec plan_spec(const DeploymentSpec& d);

/// Tokens per request and how they were chosen.
struct ResolvedWorkload {
  i64 tokens = 0, prompt = 0, output = 0, concurrency = 1, shared_prefix = 0;
  std::string tokens_source;  // "context", "prompt_tokens + output_tokens", "max_model_len", "per-slot context"
};
/// context if given; else prompt + output if either is given; else the longest request the engine
/// accepts (max_model_len, or llama.cpp's per-slot context). Errors name the workload keys.
ResolvedWorkload resolve_workload(const Workload& w, const Planner& p);

/// What the engine's scheduler makes of the workload that the memory plan cannot show, one line each: a TensorRT-LLM
/// prompt (chunked context off) that does not fit max_num_tokens, or fits it only beside fewer decoding requests than
/// the concurrency keeps running (its micro-batch scheduler stops at the first request past max_num_tokens, so the
/// prompt waits until enough of them finish).
std::vector<std::string> workload_warnings(const ResolvedWorkload& w, const Planner& p);

/// The axes of a sweep, in row order: GPU, tensor-parallel size, KV format, context, concurrency
/// (the last varies fastest). An empty axis keeps the deployment's own value.
struct SweepAxes {
  std::vector<GpuSpec> gpus;
  std::vector<i64> tensor_parallel;
  std::vector<std::optional<KvPair>> kv_formats;  // K and V (one format, or a TurboQuant pair); nullopt: auto (the model dtype)
  std::vector<i64> contexts;
  std::vector<i64> concurrencies;
  i64 cells() const;  // product of the axis lengths (empty axes count 1); OverflowError past 2^63
};

/// One sweep cell with the plan it came from.
struct SweepRow {
  const Planner* plan = nullptr;
  const GpuSpec* gpu = nullptr;
  i64 tensor_parallel = 1;
  ElemFormat kv_format = ElemFormat::bf16;    // K
  ElemFormat kv_v_format = ElemFormat::bf16;  // V (kv_pair_name names the pair)
  i64 context = 0, concurrency = 0;
  Cell cell;
};

/// Runs the sweep, calling on_plan(planner) once per (GPU, TP, KV format) and on_row(row) for every
/// cell in order, as each is computed (memory stays flat). Layout errors throw before the first row
/// of the combination that causes them; callers validate the whole grid first with validate_sweep.
template <class OnPlan, class OnRow>
void run_sweep(const DeploymentSpec& base, const SweepAxes& axes, OnPlan on_plan, OnRow on_row);

/// Plans every (GPU, TP, KV format) combination once without emitting rows: every error the sweep
/// could raise is raised here, before any output.
void validate_sweep(const DeploymentSpec& base, const SweepAxes& axes);

// ---- implementation ----
DeploymentSpec sweep_point(const DeploymentSpec& base, const SweepAxes& axes, std::size_t g, std::size_t t, std::size_t k);

/// Calls f(deployment) for every (GPU, TP, KV format) of the sweep, in row order.
template <class F>
void for_each_sweep_point(const DeploymentSpec& base, const SweepAxes& axes, F f) {
  const std::size_t ng = std::max<std::size_t>(axes.gpus.size(), 1), nt = std::max<std::size_t>(axes.tensor_parallel.size(), 1),
                    nk = std::max<std::size_t>(axes.kv_formats.size(), 1);
  for (std::size_t g = 0; g < ng; ++g)
    for (std::size_t t = 0; t < nt; ++t)
      for (std::size_t k = 0; k < nk; ++k) f(sweep_point(base, axes, g, t, k));
}

template <class OnPlan, class OnRow>
void run_sweep(const DeploymentSpec& base, const SweepAxes& axes, OnPlan on_plan, OnRow on_row) {
  for_each_sweep_point(base, axes, [&](const DeploymentSpec& d) {
        const Planner p(plan_spec(d));
        on_plan(p);
        SweepRow row;
        row.plan = &p;
        row.gpu = &p.spec().gpu;
        row.tensor_parallel = d.parallel.tp;
        row.kv_format = p.spec().kv.k_format;
        row.kv_v_format = p.spec().kv.v_format;
        for (i64 ctx : axes.contexts)
          for (i64 conc : axes.concurrencies) {
            row.context = ctx;
            row.concurrency = conc;
            row.cell = p.cell(ctx, conc, d.work.shared_prefix);
            on_row(row);
          }
  });
}

}  // namespace kvplan
