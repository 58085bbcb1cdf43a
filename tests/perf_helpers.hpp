// Test helpers for the performance model: round coefficients, so that each expected figure can be written out
// by hand, and a step's term by name.
#pragma once

#include <string>
#include <vector>

#include "kvplan/core/perf.hpp"

namespace kvtest {

inline kvplan::PerfParams hand_params() {
  kvplan::PerfParams pp;
  kvplan::PerfCoefficients& c = pp.coefficients;
  c.weight_eff_dense = 0.5;
  c.weight_eff_int8 = 0.25;
  c.weight_eff_ggml = 0.5;  // llama.cpp reads every tensor (f16 too) through its own kernels: the dense figure here
  c.kv_eff = 0.5;
  c.compute_eff = 0.5;
  c.compute_eff_fp8 = 0.25;
  c.gemm_overlap_p = 2;  // vLLM / SGLang linear layers: (weights^2 + GEMM^2 + dequant^2)^(1/2)
  c.unified_bw_eff = 0.5;
  c.die_link_bw_eff = 0.8;
  c.cpu_bw_eff = 0.5;  // a CPU host reads its DRAM at half the channels' rate
  c.gddr_read_gain = 1.5;  // GDDR cards, engines other than llama.cpp: the weight and KV efficiencies x 1.5 (at most 1)
  c.rocm_read_gain = 0.8;  // vLLM / SGLang on AMD GPUs: the weight and KV efficiencies x 0.8
  c.dequant_per_sm_cycle = 0;  // no dequant term: the test of that term sets its own rate
  c.kernel_s = 1e-6;
  c.eager_kernel_s = 10e-6;
  c.kernel_llamacpp_s = 2e-6;
  c.eager_llamacpp_extra_s = 3e-6;
  c.graph_build_llamacpp_s = 1e-6;
  c.metal_kernel_s = 20e-6;
  c.moe_layer_s = 50e-6;
  c.step_vllm_s = 100e-6;
  c.step_vllm_v0_s = 1e-3;
  c.step_llamacpp_s = 100e-6;
  c.ar_alpha_nvlink_s = 10e-6;
  c.ar_alpha_pcie_s = 20e-6;  // NCCL over PCIe: 20 us + 2 us per ring step
  c.ar_step_pcie_s = 2e-6;
  c.ar_alpha_network_s = 20e-6;
  c.link_eff = 0.5;
  c.network_bytes_per_s = 50e9;
  return pp;
}

inline const kvplan::PerfTerm* find_term(const std::vector<kvplan::PerfTerm>& t, const std::string& name) {
  for (const auto& x : t)
    if (x.name == name) return &x;
  return nullptr;
}

/// the term's seconds, -1 when the step has no such term
inline double term(const std::vector<kvplan::PerfTerm>& t, const std::string& name) {
  const kvplan::PerfTerm* x = find_term(t, name);
  return x ? x->seconds : -1;
}

}  // namespace kvtest
