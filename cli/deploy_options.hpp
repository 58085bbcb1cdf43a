// Options shared by plan, sweep and fit: the model options, the GPU, the engine and its own flags
// (named as each engine names them), budget overrides, workload and performance parameters.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "kvplan/core/perf.hpp"
#include "kvplan/core/plan.hpp"
#include "model_options.hpp"

namespace kvplan::cli {

struct DeployArgs {
  ModelArgs model;
  std::string gpu = "h100-sxm";
  std::string engine = "vllm";
  // engine flags (strings so "not given" is empty and values parse with units)
  std::string gpu_memory_utilization, mem_fraction_static, free_gpu_mem_fraction;
  std::string max_model_len, max_num_seqs, max_num_batched_tokens, block_size, page_size, tokens_per_block;
  std::string tp = "1", pp = "1", dp = "1", ep = "1";
  bool enable_expert_parallel = false;
  std::string kv_cache_memory_bytes, max_total_tokens, max_tokens;
  std::string ctx_size, parallel = "1", n_gpu_layers = "-1", ubatch_size = "512";
  bool swa_full = false, no_kv_unified = false, enforce_eager = false, allow_long_context = false;
  // budget overrides
  std::string weight_bytes, activation_bytes, non_torch_bytes, cuda_context_bytes, cuda_graph_bytes, overhead_bytes, gpu_memory_bytes;
  // workload
  std::string context, prompt_tokens, output_tokens, concurrency, shared_prefix;
  // performance
  double bw_efficiency = 0, compute_efficiency = 0, step_overhead_us = -1;
  std::string calibration;  // kvplan calibrate output
};

/// Registers every deployment option on `c` (workload options only when `workload`).
void add_deploy_options(CLI::App* c, DeployArgs& a, bool workload = true);

/// A resolved deployment: the model, the plan spec (engine defaults applied) and the workload.
struct Deployment {
  ResolvedModel model;
  PlanSpec spec;
  i64 tokens = 0;         // tokens per request (prompt + output)
  i64 prompt = 0, output = 0;
  i64 concurrency = 1;
  i64 shared_prefix = 0;
  PerfParams perf;
  std::string tokens_source;
};

/// Resolves the arguments (throws InputError naming the flag; engine flags given to the wrong
/// engine are errors that name the right flag). `c` tells which options were given.
Deployment resolve_deployment(const DeployArgs& a, const CLI::App* c, const io::Profiles& profiles);

/// Re-resolves the spec for another GPU / tensor-parallel size / KV dtype (sweeps, layout search).
PlanSpec respec(const Deployment& d, const DeployArgs& a, const GpuSpec& gpu, const Parallel& par,
                const std::optional<std::string>& kv_dtype);

/// JSON of the engine report (stable keys under results.engine) and of the budget terms.
ojson engine_json(const Planner& p);
ojson budget_json(const Planner& p);
ojson deployment_inputs_json(const Deployment& d);

}  // namespace kvplan::cli
