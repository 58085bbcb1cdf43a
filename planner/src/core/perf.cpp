// Roofline performance model (formulas in perf.hpp).
#include "kvplan/core/perf.hpp"

#include <algorithm>
#include <cmath>

#include "kvplan/core/weights.hpp"

namespace kvplan {

namespace {

double part_bytes(const ModelSpec& m, const ParamPart& part) {
  const double elem = static_cast<double>(format_info(m.dtype).block_bytes);
  const bool packed = m.quant.linear_bits > 0 && part.quantisable && (part.name != "attention" || m.quant.attention_quantised);
  const double mat = packed ? static_cast<double>(part.matrix) * m.quant.linear_bits / 8.0 : static_cast<double>(part.matrix) * elem;
  return mat + static_cast<double>(part.vector) * elem;
}

}  // namespace

PerfResult estimate_perf(const Planner& p, i64 prompt_tokens, i64 output_tokens, i64 concurrency, const PerfParams& params) {
  const PlanSpec& s = p.spec();
  const ModelSpec& rank = p.rank_model();
  PerfResult r;
  r.bandwidth_efficiency = params.bandwidth_efficiency > 0 ? params.bandwidth_efficiency : 0.80;
  r.compute_efficiency = params.compute_efficiency > 0 ? params.compute_efficiency : 0.60;
  r.step_overhead_s = params.step_overhead_s >= 0 ? params.step_overhead_s : 300e-6;
  r.bandwidth_bytes_per_s = static_cast<double>(s.gpu.memory_bandwidth_bytes_per_s);
  const auto tflops = s.gpu.bf16_dense_tflops ? s.gpu.bf16_dense_tflops : s.gpu.fp16_dense_tflops;
  r.peak_flops = tflops ? *tflops * 1e12 : 0;

  const i64 B = std::max<i64>(1, ceil_div(std::max<i64>(concurrency, 1), s.parallel.dp));
  r.batch_per_replica = B;
  r.decode_context = prompt_tokens + output_tokens / 2;

  // bytes of weights read per step: everything but routed experts, plus the experts a batch touches
  const ParamCount pc = count_params(rank);
  double routed = 0, other = 0;
  for (const auto& part : pc.parts) (part.name == "routed_experts" ? routed : other) += part_bytes(rank, part);
  double touched = 1.0;
  i64 experts = 0, k = 0;
  for (const Layer& l : rank.layers)
    if (l.mlp == MlpKind::moe) { experts = l.experts; k = l.experts_active; break; }
  if (experts > 0) touched = 1.0 - std::pow(1.0 - static_cast<double>(k) / static_cast<double>(experts), static_cast<double>(B));
  r.weight_bytes_read = other + routed * touched;

  KvOptions o = s.kv;
  o.context = r.decode_context;
  const KvResult kv = compute_kv(rank, o);
  r.kv_bytes_read = static_cast<double>(B) * static_cast<double>(add(kv.sequence_kv_bytes, kv.state_bytes));

  double attn_width = 0, held_width = 0;  // sum over layers of q_heads x head_dim (x tokens held)
  for (const Layer& l : rank.layers) {
    if (l.kv == KvKind::ssm || l.kv == KvKind::none) continue;
    const double w = static_cast<double>(l.q_heads) * static_cast<double>(l.kv == KvKind::mla_latent ? l.kv_lora_rank + l.qk_rope_head_dim : l.k_head_dim);
    attn_width += w;
    held_width += w * static_cast<double>(layer_tokens_held(l, r.decode_context, s.kv.encoder_tokens));
  }
  const double active = static_cast<double>(pc.active);
  r.decode_flops = 2.0 * active * static_cast<double>(B) + 4.0 * static_cast<double>(B) * held_width;
  r.memory_time_s = (r.weight_bytes_read + r.kv_bytes_read) / (r.bandwidth_bytes_per_s * r.bandwidth_efficiency);
  r.compute_time_s = r.peak_flops > 0 ? r.decode_flops / (r.peak_flops * r.compute_efficiency) : 0;
  r.decode_bound = r.compute_time_s > r.memory_time_s ? "compute" : "memory bandwidth";
  if (r.peak_flops == 0) r.decode_bound = "memory bandwidth (compute not checked: no TFLOP/s in the GPU profile)";
  r.decode_step_s = std::max(r.memory_time_s, r.compute_time_s) + r.step_overhead_s;
  r.tpot_s = r.decode_step_s * static_cast<double>(s.parallel.pp);
  const double gpus_per_replica = static_cast<double>(s.parallel.tp * s.parallel.pp);
  r.decode_tokens_per_s = static_cast<double>(B) / r.tpot_s * static_cast<double>(s.parallel.dp);
  r.decode_tokens_per_s_per_gpu = static_cast<double>(B) / r.tpot_s / gpus_per_replica;

  const double P = static_cast<double>(prompt_tokens);
  r.prefill_flops = 2.0 * active * P + 2.0 * P * P * attn_width;
  const double prefill_compute = r.peak_flops > 0 ? r.prefill_flops / (r.peak_flops * r.compute_efficiency) : 0;
  const double prefill_memory = (other + routed) / (r.bandwidth_bytes_per_s * r.bandwidth_efficiency);
  r.prefill_bound = prefill_compute > prefill_memory ? "compute" : "memory bandwidth";
  r.ttft_s = std::max(prefill_compute, prefill_memory) * static_cast<double>(s.parallel.pp) + r.step_overhead_s;
  if (r.peak_flops == 0) {
    r.prefill_bound = "unknown (no TFLOP/s in the GPU profile)";
    r.ttft_s = -1;  // prefill is compute bound: without a peak there is no estimate
  }
  return r;
}

}  // namespace kvplan

namespace kvplan {

// Interim step-time model: the decode formula of estimate_perf applied to a mixed batch.
struct StepTimeModel::Impl {
  double other_bytes = 0, routed_bytes = 0;
  i64 experts = 0, experts_active = 0;
  double active_params = 0, attn_width = 0;
  double bandwidth = 0, peak = 0, overhead = 0;
  i64 pp = 1;
  struct KvLayer { double bytes_per_token; i64 window; double width; };
  std::vector<KvLayer> layers;
  double state_bytes = 0;
};

StepTimeModel::StepTimeModel(const Planner& p, const PerfParams& params) {
  auto m = std::make_shared<Impl>();
  const PlanSpec& s = p.spec();
  const ModelSpec& rank = p.rank_model();
  const ParamCount pc = count_params(rank);
  for (const auto& part : pc.parts) (part.name == "routed_experts" ? m->routed_bytes : m->other_bytes) += part_bytes(rank, part);
  for (const Layer& l : rank.layers)
    if (l.mlp == MlpKind::moe) { m->experts = l.experts; m->experts_active = l.experts_active; break; }
  m->active_params = static_cast<double>(pc.active);
  for (const Layer& l : rank.layers) {
    if (l.kv == KvKind::ssm || l.kv == KvKind::none) continue;
    const double w = static_cast<double>(l.q_heads) * static_cast<double>(l.kv == KvKind::mla_latent ? l.kv_lora_rank + l.qk_rope_head_dim : l.k_head_dim);
    m->attn_width += w;
    const i64 window = (l.kv == KvKind::sliding || l.kv == KvKind::chunked) ? l.window : 0;
    m->layers.push_back({static_cast<double>(layer_k_bytes_per_token(l, s.kv.k_format) + layer_v_bytes_per_token(l, s.kv.v_format)), window, w});
  }
  const double eff_bw = params.bandwidth_efficiency > 0 ? params.bandwidth_efficiency : 0.80;
  const double eff_c = params.compute_efficiency > 0 ? params.compute_efficiency : 0.60;
  m->bandwidth = static_cast<double>(s.gpu.memory_bandwidth_bytes_per_s) * eff_bw;
  const auto tflops = s.gpu.bf16_dense_tflops ? s.gpu.bf16_dense_tflops : s.gpu.fp16_dense_tflops;
  m->peak = tflops ? *tflops * 1e12 * eff_c : 0;
  m->overhead = params.step_overhead_s >= 0 ? params.step_overhead_s : 300e-6;
  m->pp = s.parallel.pp;
  impl_ = std::move(m);
}

double StepTimeModel::step_s(const StepBatch& b) const {
  const Impl& m = *impl_;
  const double tokens = static_cast<double>(b.decode_seqs + b.prefill_tokens);
  if (tokens <= 0) return 0;
  double touched = 1.0;
  if (m.experts > 0)
    touched = 1.0 - std::pow(1.0 - static_cast<double>(m.experts_active) / static_cast<double>(m.experts), tokens);
  const double seqs = static_cast<double>(std::max<i64>(b.decode_seqs, 1));
  const double avg_ctx = b.decode_context_tokens / seqs;
  double kv = 0, attn = 0;
  for (const auto& l : m.layers) {
    const double held = l.window > 0 ? std::min(avg_ctx, static_cast<double>(l.window)) * static_cast<double>(b.decode_seqs) : b.decode_context_tokens;
    kv += l.bytes_per_token * held;
    attn += 4.0 * l.width * held;
  }
  const double bytes = m.other_bytes + m.routed_bytes * touched + kv;
  const double flops = 2.0 * m.active_params * tokens + attn + 4.0 * m.attn_width * b.prefill_attention_pairs;
  const double t_mem = m.bandwidth > 0 ? bytes / m.bandwidth : 0;
  const double t_cmp = m.peak > 0 ? flops / m.peak : 0;
  return (std::max(t_mem, t_cmp) + m.overhead) * static_cast<double>(m.pp);
}

}  // namespace kvplan
