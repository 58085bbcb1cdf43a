// Performance model: decode step time from bytes moved and FLOPs on the most loaded GPU, TPOT,
// decode tokens/s per GPU, and TTFT from prefill FLOPs. Efficiencies default per GPU and are
// overridable (and later calibrated from the probe).
#pragma once

#include <memory>
#include <string>

#include "kvplan/core/plan.hpp"

namespace kvplan {

struct PerfParams {
  double bandwidth_efficiency = 0;  // fraction of datasheet bandwidth reached (0: default 0.80)
  double compute_efficiency = 0;    // fraction of dense bf16 peak reached (0: default 0.60)
  double step_overhead_s = -1;      // fixed time per decode step (<0: default 300 us)
};

struct PerfResult {
  i64 batch_per_replica = 0;
  i64 decode_context = 0;        // tokens per sequence the decode estimate uses (prompt + output / 2)
  double weight_bytes_read = 0;  // per decode step on the most loaded GPU
  double kv_bytes_read = 0;
  double decode_flops = 0;
  double memory_time_s = 0, compute_time_s = 0;
  double decode_step_s = 0;      // one stage
  double tpot_s = 0;             // time per output token (all pipeline stages)
  double decode_tokens_per_s_per_gpu = 0;
  double decode_tokens_per_s = 0;  // whole deployment
  double prefill_flops = 0;
  double ttft_s = 0;             // -1 when the GPU profile has no TFLOP/s
  std::string decode_bound;      // "memory bandwidth" or "compute"
  std::string prefill_bound;
  double bandwidth_efficiency = 0, compute_efficiency = 0, step_overhead_s = 0;
  double peak_flops = 0;
  double bandwidth_bytes_per_s = 0;
};

/// Work of one engine iteration (step) on one replica, as a scheduler forms it.
struct StepBatch {
  i64 decode_seqs = 0;                  // sequences producing one token this step
  i64 prefill_tokens = 0;               // prompt tokens computed this step (all chunks)
  i64 prefill_seqs = 0;                 // sequences with a prefill chunk this step
  double decode_context_tokens = 0;     // sum over decode sequences of the tokens in their cache (KV read)
  double prefill_attention_pairs = 0;   // sum over chunks of chunk x (tokens already cached + (chunk + 1) / 2)
};

/// Time of one engine step on one replica: the same terms estimate_perf shows, for any mix of
/// decode sequences and prefill chunks (the simulator's clock). Built once per deployment.
class StepTimeModel {
 public:
  StepTimeModel(const Planner& p, const PerfParams& params);
  double step_s(const StepBatch& b) const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

/// Estimates decode and prefill for `concurrency` requests of prompt + output tokens.
/// decode step = max((weights read + KV read) / (bandwidth x eff), FLOPs / (peak x eff)) + overhead;
/// weights read counts only the experts a batch touches: E x (1 - (1 - k/E)^B) per MoE layer;
/// FLOPs = 2 x active params x B + 4 x B x sum over layers (q_heads x head_dim x tokens held);
/// TTFT = max(prefill FLOPs / (peak x eff), weights / (bandwidth x eff)) x pipeline stages + overhead,
/// prefill FLOPs = 2 x active params x P + 2 x P^2 x sum over layers (q_heads x head_dim).
PerfResult estimate_perf(const Planner& p, i64 prompt_tokens, i64 output_tokens, i64 concurrency, const PerfParams& params);

}  // namespace kvplan
