// Performance model (formulas in perf.hpp and docs/performance-model.md).
#include "kvplan/core/perf.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "kvplan/core/gguf_recipe.hpp"
#include "kvplan/core/weights.hpp"

namespace kvplan {

const PerfCoefficients& default_perf_coefficients() {
  static const PerfCoefficients c{};
  return c;
}

const std::vector<PerfCoefficientField>& perf_coefficient_fields() {
  using C = PerfCoefficients;
  static const std::vector<PerfCoefficientField> f = {
      {"weight_eff_dense", &C::weight_eff_dense, "fraction of bandwidth reading bf16/fp16/fp32 weights", false, true},
      {"weight_eff_fp8", &C::weight_eff_fp8, "fraction of bandwidth reading fp8 W8A8 weights", false, true},
      {"weight_eff_int8", &C::weight_eff_int8, "fraction of bandwidth reading int8 weight-only weights", false, true},
      {"weight_eff_int4", &C::weight_eff_int4, "fraction of bandwidth reading int4 group-quantised weights", false, true},
      {"weight_eff_ggml", &C::weight_eff_ggml, "fraction of bandwidth reading llama.cpp block-quantised weights", false, true},
      {"weight_eff_fp4", &C::weight_eff_fp4, "fraction of bandwidth reading mxfp4/nvfp4 weights", false, true},
      {"kv_eff", &C::kv_eff, "fraction of bandwidth reading the KV cache in decode attention", false, true},
      {"compute_eff", &C::compute_eff, "fraction of the dense bf16/fp16 tensor peak the GEMMs and attention reach", false, true},
      {"compute_eff_fp8", &C::compute_eff_fp8, "fraction of the dense fp8 tensor peak fp8 GEMMs reach", false, true},
      {"gemm_overlap_p", &C::gemm_overlap_p, "vLLM, SGLang: p of (weights^p + GEMM^p + dequant^p)^(1/p), the linear layers' time (other engines: the largest; a large p approaches it)", false, false, true},
      {"unified_bw_eff", &C::unified_bw_eff, "share of the bandwidth a GPU on LPDDR unified memory reaches", false, true},
      {"die_link_bw_eff", &C::die_link_bw_eff, "share of unified_bw_eff a GPU of two or more dies on LPDDR keeps (Apple Ultra over UltraFusion)", false, true},
      {"cpu_bw_eff", &C::cpu_bw_eff, "share of a CPU host's DRAM bandwidth (channels x data rate x 8 B) llama.cpp's CPU decode reaches", false, true},
      {"gddr_read_gain", &C::gddr_read_gain, "vLLM, SGLang, TensorRT-LLM and other non-llama.cpp engines on a GDDR GPU: factor on the weight and KV read efficiencies (their result at most 1)"},
      {"rocm_read_gain", &C::rocm_read_gain, "vLLM and SGLang on an AMD GPU (ROCm): factor on the weight and KV read efficiencies"},
      {"dequant_per_sm_cycle", &C::dequant_per_sm_cycle, "weights a weight-only quantised kernel dequantises per SM per clock cycle", true},
      {"dequant_pre_volta", &C::dequant_pre_volta, "share of dequant_per_sm_cycle an NVIDIA GPU below compute capability 7.0 (INT32 and FP32 on the same cores) reaches; an AMD CU half of it", false, true},
      {"dequant_k", &C::dequant_k, "llama.cpp: ALU cost of a q4_K / q5_K / q6_K weight in the dequant term, relative to q4_0"},
      {"dequant_k_low", &C::dequant_k_low, "llama.cpp: ALU cost of a q3_K weight in the dequant term, relative to q4_0 (q2_K: 0.311 of the way from dequant_k to it)"},
      {"dmmv_per_sm_cycle", &C::dmmv_per_sm_cycle, "f16 / bf16 / f32 weights llama.cpp's DMMV kernel (builds before b4114) multiplies per SM per clock cycle", true},
      {"mmq_per_sm_cycle", &C::mmq_per_sm_cycle, "llama.cpp on NVIDIA GPUs of compute capability 7.5 and later: GEMM operations its quantised matrix-matrix kernel (MMQ) completes per SM per clock cycle", true},
      {"mmq_dp4a_per_sm_cycle", &C::mmq_dp4a_per_sm_cycle, "llama.cpp on NVIDIA GPUs of compute capability 6.1-6.x (Pascal: DP4A, no fp16 MMA): GEMM operations its quantised matrix-matrix kernel (MMQ, dp4a path) completes per SM per clock cycle", true},
      {"mmq_amd_per_cu_cycle", &C::mmq_amd_per_cu_cycle, "llama.cpp on AMD GPUs with matrix cores (CDNA, RDNA 3 and later): GEMM operations its quantised matrix-matrix path completes per compute unit per clock cycle", true},
      {"mmq_rdna4_wmma_per_cu_cycle", &C::mmq_rdna4_wmma_per_cu_cycle, "llama.cpp b7148 and later on RDNA 4 (WMMA-MMQ kernels): GEMM operations per compute unit per clock cycle", true},
      {"kernel_s", &C::kernel_s, "seconds per kernel with CUDA graphs"},
      {"eager_kernel_s", &C::eager_kernel_s, "seconds per kernel launched eagerly"},
      {"kernel_llamacpp_s", &C::kernel_llamacpp_s, "seconds per kernel of llama.cpp's decode graphs (CUDA / ROCm)"},
      {"eager_llamacpp_extra_s", &C::eager_llamacpp_extra_s, "added per kernel when llama.cpp launches its decode kernels without graphs", true},
      {"graph_build_llamacpp_s", &C::graph_build_llamacpp_s, "added per kernel when llama.cpp (builds before b5922) builds its graph again every token", true},
      {"metal_kernel_s", &C::metal_kernel_s, "seconds per kernel on an Apple GPU (Metal dispatch), any engine"},
      {"moe_layer_s", &C::moe_layer_s, "vLLM, SGLang, TensorRT-LLM: fixed time per MoE layer per step (routing, token sort, grouped-GEMM latency)", true},
      {"step_vllm_s", &C::step_vllm_s, "vLLM V1 (>= 0.10) per-step overhead"},
      {"step_vllm_v0_s", &C::step_vllm_v0_s, "vLLM V0 (< 0.10) per-step overhead"},
      {"step_sglang_s", &C::step_sglang_s, "SGLang per-step overhead"},
      {"step_trtllm_s", &C::step_trtllm_s, "TensorRT-LLM per-step overhead"},
      {"step_llamacpp_s", &C::step_llamacpp_s, "llama.cpp per-step overhead"},
      {"step_generic_s", &C::step_generic_s, "per-step overhead of other engines"},
      {"ar_alpha_nvlink_s", &C::ar_alpha_nvlink_s, "all-reduce latency over NVLink / xGMI: once per all-reduce in one node, per hop across nodes"},
      {"ar_alpha_pcie_s", &C::ar_alpha_pcie_s, "NCCL all-reduce over PCIe: fixed latency of one all-reduce"},
      {"ar_step_pcie_s", &C::ar_step_pcie_s, "NCCL all-reduce over PCIe: latency of each of its ring's 2 (n - 1) steps"},
      {"ar_alpha_network_s", &C::ar_alpha_network_s, "all-reduce latency per hop between nodes"},
      {"link_eff", &C::link_eff, "fraction of link bandwidth a collective reaches", false, true},
      {"network_bytes_per_s", &C::network_bytes_per_s, "per-GPU network bandwidth between nodes"},
      {"frontend_s", &C::frontend_s, "API server time in each request's TTFT and E2E: vLLM, SGLang, TensorRT-LLM (simulate)", true},
      {"frontend_llamacpp_s", &C::frontend_llamacpp_s, "llama-server time in each request's TTFT and E2E (simulate)", true},
      {"frontend_vllm_v0_s", &C::frontend_vllm_v0_s, "vLLM V0 (before 0.8) API server time in each request's TTFT and E2E, beside its async output processor's one-step delay (simulate)", true},
  };
  return f;
}

namespace {

// The GEMV family that reads the quantised matrices (docs/performance-model.md, "Weight kernels").
std::string weight_kernel(const WeightQuant& q) {
  if (q.linear_bits <= 0) return "dense";
  const std::string& m = q.method;
  if (m == "gguf") return "ggml";
  if (m == "mxfp4" || m == "nvfp4") return "fp4";
  if (m == "fp8") return "fp8";
  if (m == "override") {
    if (q.detail.rfind("fp8", 0) == 0) return "fp8";
    if (q.detail.rfind("int8", 0) == 0) return "int8";
    return "int4";
  }
  if (m == "compressed-tensors") return q.linear_bits >= 8 ? "fp8" : "int4";  // W8A8 runs on the 8-bit tensor cores
  return q.linear_bits >= 8 ? "int8" : "int4";                                 // awq, gptq, bitsandbytes
}

double kernel_eff(const PerfCoefficients& c, const std::string& k) {
  if (k == "fp8") return c.weight_eff_fp8;
  if (k == "int8") return c.weight_eff_int8;
  if (k == "int4") return c.weight_eff_int4;
  if (k == "ggml") return c.weight_eff_ggml;
  if (k == "fp4") return c.weight_eff_fp4;
  return c.weight_eff_dense;
}

// the planned engine is a release before `version` (an unversioned engine is the newest kvplan knows)
bool built_before(const EngineSettings& e, const char* version) { return version_before(e.version, version); }

// An Apple GPU core's shader ALUs: 128 FP32 lanes (FP16 at the same rate), a fused multiply-add each per clock
constexpr double kAppleFlopsPerCoreClock = 128.0 * 2.0;

// Apple GPUs with a Neural Accelerator in each core: Metal GPU family apple10 (M5, A19) and later
bool apple_neural_accelerators(const GpuSpec& g) {
  return g.vendor == "apple" && g.compute_capability.rfind("apple", 0) == 0 && compare_versions(g.compute_capability, "10") >= 0;
}

// SM clock cycles a second: SMs (AMD compute units, Apple GPU cores) x boost clock; 0 when the profile lacks either.
// The per-SM-cycle rates (dequant, DMMV, MMQ, Apple's shader lanes) multiply it.
double sm_cycles_per_s(const GpuSpec& g) {
  return g.sm_count && g.boost_clock_mhz ? static_cast<double>(*g.sm_count) * static_cast<double>(*g.boost_clock_mhz) * 1e6 : 0.0;
}

// "132 SMs x 1980 MHz" ("CUs" on AMD, "GPU cores" on Apple): the basis of sm_cycles_per_s
std::string sm_cycles_basis(const GpuSpec& g) {
  const char* const units = g.vendor == "amd" ? " CUs x " : g.vendor == "apple" ? " GPU cores x " : " SMs x ";
  return std::to_string(g.sm_count.value_or(0)) + units + std::to_string(g.boost_clock_mhz.value_or(0)) + " MHz";
}

double engine_step_overhead(const PerfCoefficients& c, const EngineSettings& e) {
  switch (e.kind) {
    case EngineKind::vllm:
      return built_before(e, "0.10.0") ? c.step_vllm_v0_s : c.step_vllm_s;
    case EngineKind::sglang: return c.step_sglang_s;
    case EngineKind::trtllm: return c.step_trtllm_s;
    case EngineKind::llamacpp: return c.step_llamacpp_s;
    case EngineKind::generic: return c.step_generic_s;
  }
  return c.step_generic_s;
}

std::string gb_s(double bytes_per_s) { return std::to_string(static_cast<long long>(std::llround(bytes_per_s / 1e9))) + " GB/s"; }
std::string num(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// an NVIDIA GPU before Volta (compute capability 6.x or lower): no CUDA graphs in llama.cpp, no fast fp16 in its
// ggml-cuda paths, INT32 and FP32 on the same cores
bool nvidia_before_volta(const GpuSpec& gpu) {
  const int major = std::atoi(gpu.compute_capability.c_str());
  return gpu.vendor == "nvidia" && major > 0 && major < 7;
}

// an AMD GPU with matrix cores: CDNA's MFMA (MI100 on), RDNA 3's and 3.5's WMMA, RDNA 4's; not GCN or RDNA 1-2 (the
// profile's architecture field)
bool amd_matrix_cores(const GpuSpec& gpu) {
  const std::string& a = gpu.architecture;
  return gpu.vendor == "amd" && (a.rfind("cdna", 0) == 0 || a.rfind("rdna3", 0) == 0 || a.rfind("rdna4", 0) == 0);
}

}  // namespace

std::string llamacpp_graphless_reason(const GpuSpec& gpu, const EngineSettings& engine, bool moe) {
  if (engine.kind != EngineKind::llamacpp || gpu.device_class == "cpu") return "";
  const auto before = [&](const char* build) { return built_before(engine, build); };
  if (gpu.vendor == "amd") return before("b8893") ? "HIP graphs off by default before b8893" : "";
  if (gpu.vendor != "nvidia") return "";
  // ggml-cuda disables graphs below a compute capability (disable_due_to_gpu_arch): Ampere until b10042, Volta since
  if (nvidia_before_volta(gpu)) return "no CUDA graphs below compute capability 7.0";
  const int major = std::atoi(gpu.compute_capability.c_str());
  if (major > 0 && major < 8 && before("b10042")) return "CUDA graphs on compute capability 7.x from b10042";
  if (before("b2822")) return "CUDA graphs from b2822";
  // ggml-cuda's graph check refused any MUL_MAT_ID node until #13014 (b5170), then only those of several tokens
  if (moe && before("b5170")) return "mul_mat_id kept CUDA graphs off before b5170";
  return "";
}

bool llamacpp_flash_attention(const EngineSettings& engine) {
  const auto before = [&](const char* build) { return built_before(engine, build); };
  if (before("b2771") || engine.flash_attn == "off") return false;  // #5021 (b2771) brought -fa
  return engine.flash_attn == "on" || !before("b6325");              // #15434 (b6325): auto, on where the KV is
}

// Counted from the graph builder and ggml-cuda's fusions at each build (docs/performance-model.md "llama.cpp's kernels
// per token"): the newest build's counts, then each PR that took kernels off added back for the builds before it.
LlamacppKernels llamacpp_decode_kernels(const GpuSpec& gpu, const EngineSettings& engine, bool quantised, bool gqa,
                                        i64 experts_active) {
  const auto before = [&](const char* build) { return built_before(engine, build); };
  const bool fa = llamacpp_flash_attention(engine);
  // newest: fused norm (1), q / k / v (MMVQ: quantize_q8_1 + mul_mat_vec_q, 2 each; f16: 1), rope q, rope k fused with
  // the K store, V store, attention (FA: vec + combine = 2; else KQ, softmax, KQV, cont = 4), o, add, fused norm, one
  // fused gate / up / swiglu GEMV, down, add
  const i64 mm = quantised ? 2 : 1;
  LlamacppKernels k;
  k.per_layer = 1 + 3 * mm + 1 + 1 + 1 + (fa ? 2 : 4) + mm + 1 + 1 + mm + mm + 1;
  k.per_token = 1 + mm + 2;  // fused final norm, output matmul, the last layer's two get_rows of the output rows
  if (fa && before("b9410")) k.per_token += 1;  // #23764: the KQ mask built as f16, no cast kernel
  if (before("b7044")) k.per_layer += 1;        // #16884: rope + K store fused
  if (before("b6841")) k.per_layer += mm + 1;   // #16715: gate, up and swiglu in one GEMV
  if (before("b5965")) {                        // #14800: rms_norm + mul fused
    k.per_layer += 2;
    k.per_token += 1;
  }
  if (before("b5776")) k.per_layer += 1;  // #14158: swiglu, not silu then mul
  // #10318 (b4114): KQ and KQV through mul_mat_vec, not batched cuBLAS (f32 -> f16 of the input, the GEMM and, for
  // GQA, a pointer-table kernel, each); #10015 (b3983): KQ at f32, no output conversion. Below compute capability 7.0
  // (fp16_performance_good false) those builds took mul_mat_vec_p021 / mul_mat_vec_nc instead: one kernel each
  const bool batched_cublas = !nvidia_before_volta(gpu);
  if (!fa && batched_cublas && before("b4114")) k.per_layer += gqa ? 5 : 3;
  if (!fa && batched_cublas && before("b3983")) k.per_layer += 1;
  if (before("b2540")) k.per_token -= 2;  // #6122 added the output-row gathers
  // an MoE layer's FFN block against the dense one (Qwen3-MoE's path: softmax gating, the top-k weights normalised),
  // newest: the F32 router (1), fused top-k (1), gate / up / GLU with the expert ids (quantize + mmvq: 2), down (2), the
  // weights (1), the k experts summed (1), the residual add (1) = 9 against 5: 4 more
  if (experts_active > 0) {
    const i64 kk = experts_active;
    k.per_moe_layer = 4;
    // #16130 (b6583) fused softmax, argsort, get_rows, sum_rows and div into one top-k kernel: before it 4 more
    if (before("b6583")) k.per_moe_layer += 4;
    // #15631 (b6316): the k experts' outputs added in one kernel, before it k - 1 adds
    if (before("b6316")) k.per_moe_layer += std::max<i64>(0, kk - 2);
    // #13014 (b5170): one mul_mat_vec_q over the expert ids; before it one per selected expert in each of the three
    // expert matmuls
    if (before("b5170")) k.per_moe_layer += 3 * mm * std::max<i64>(0, kk - 1);
  }
  k.basis = std::to_string(k.per_layer) + " a layer (" + (quantised ? "MMVQ" : "f16 mat-vec") + ", flash attention " +
            (fa ? "on" : "off") + ")" + (k.per_moe_layer > 0 ? " + " + std::to_string(k.per_moe_layer) + " an MoE layer (top-" +
                                                                   std::to_string(experts_active) + ")"
                                                             : std::string()) +
            " + " + std::to_string(k.per_token) + " a token, llama.cpp " + (is_newest_version(engine.version) ? std::string("newest") : engine.version);
  return k;
}

// Everything a step's time depends on, computed once per deployment.
struct StepTimeModel::Impl {
  PerfCoefficients c;
  std::string kernel;                 // weight kernel family of the quantised matrices
  double weight_eff = 0, dense_eff = 0, kv_eff = 0, compute_eff = 0;
  double gddr_gain = 1;  // gddr_read_gain x rocm_read_gain where they apply (in weight_eff, dense_eff, kv_eff), else 1
  std::string gain_basis;  // ", GDDR x 1.18 included" / ", ROCm x 0.8 included" ("" when none applies)
  bool rocm = false;       // vLLM / SGLang on an Instinct (CDNA) GPU at the fitted efficiencies (rocm_read_gain)
  double dense_bytes = 0;             // read every step: all but the routed experts and the embedding table
  double quant_bytes = 0;             // of those, the matrices the quantised kernel reads
  double routed_bytes = 0, routed_quant_fraction = 0;
  // weight-only quantised kernels: the weights they dequantise per step (dense matrices; routed experts apart) and
  // the GPU's rate (SMs x clock x dequant_per_sm_cycle; 0 without an SM count and clock in the profile, or when the
  // kernel is not weight-only)
  double quant_elems = 0, routed_quant_elems = 0, dequant_rate = 0;
  std::string dequant_basis;
  // llama.cpp: the ALU cost of those weights' ggml types relative to q4_0 (dequant_k, dequant_k_low), averaged over the
  // GGUF recipe's tensors by elements, the routed experts apart; 1 for every other kernel
  double dq_cost = 1, routed_dq_cost = 1;
  std::string dq_cost_basis;
  // llama.cpp before b4114: its f16 / bf16 / f32 matrices through DMMV at dmmv_rate (0: not that build), elements
  double dense_elems = 0, routed_dense_elems = 0, dmmv_rate = 0;
  std::string dmmv_basis;
  i64 experts = 0, experts_active = 0, moe_layers = 0;
  // the GEMM parameters a token runs through (active, less the lookup tables, the vision tower and the output head), and
  // the output head, which the engines run only on the rows they sample: one per sequence in the step
  double body_params = 0, head_params = 0;
  double bandwidth = 0, peak = 0, attn_peak = 0, linear_eff = 0;
  std::string peak_basis, attn_peak_basis, bandwidth_basis;
  i64 layers = 0, kernels = 0;
  double kernel_s = 0, prefill_kernel_s = 0, step_overhead = 0;
  double moe_layer_s = 0;             // the serving engines' fixed time per MoE layer (0: llama.cpp, other engines)
  std::string launch_basis, prefill_launch_basis = " (prefill: eager)";
  std::string kernel_count_basis;     // llama.cpp on CUDA / ROCm: how its kernels were counted
  i64 tp = 1, pp = 1, ep = 1, hidden = 0;
  double gemm_p = 0;  // vLLM, SGLang: gemm_overlap_p (Work::linear)
  // the routed experts' exchange: all-to-all dispatch and combine when the expert-parallel group spans more than one
  // attention group (DP attention, vLLM's DP x TP); within one attention-TP group every rank holds every token, runs its
  // own experts on them and an all-reduce sums the outputs, as with experts split by TP
  bool ep_dispatch = false;
  // replicas whose tokens reach one rank's experts: an expert-parallel group over ep ranks spans ep / tp data-parallel
  // replicas (vLLM --data-parallel-size with --enable-expert-parallel), all stepping together; 1 otherwise (SGLang's DP
  // attention groups are one replica's batch already)
  double ep_replicas = 1;
  // attention data parallel (SGLang --enable-dp-attention, TensorRT-LLM enable_attention_dp) with one rank per
  // attention group: each rank runs attention on its own requests with whole attention weights, so no all-reduce
  bool attention_local = false;
  i64 attention_groups = 1;  // attention data-parallel groups: each rank's attention reads its own group's sequences
  double attention_params = 0;  // the rank's attention projections (q, k, v, o): under DP attention for its group's tokens
  double act_bytes = 2;
  // collectives
  double ar_alpha = 0, ar_beta = 0;   // one hop's latency, link bytes/s reached
  i64 ar_hops = 0;
  double ar_latency = 0;  // one all-reduce's latency within a node: ar_hops x ar_alpha, or NCCL's PCIe ring
  double net_alpha = 0, net_beta = 0;
  i64 nodes = 1, per_node = 8;
  i64 net_hops = 0;  // the network part of a multi-node all-reduce: ceil(log2(nodes)) latencies
  std::string link_basis;
  struct KvLayer {
    double bytes_per_token;
    i64 window;
    double width;  // q_heads x head dim
    double reads = 1;  // times the decode attention reads the layer's cache: q_heads / kv_heads in llama.cpp's Metal mat-vec
  };
  std::string kv_read_basis;  // why the cache is read more than once (empty: once)
  std::vector<KvLayer> kv_layers;
  double attn_width = 0;
  // weights and KV in host memory (docs/performance-model.md "Host-resident weights and KV")
  double host_bw = 0, pcie = 0;
  std::string host_bw_basis, pcie_basis;
  double cpu_dense = 0, cpu_routed = 0;  // llama.cpp: weights the CPU computes with, routed experts (all) apart
  double host_kv_share = 0;              // llama.cpp: share of the KV cache in host memory (CPU layers, -nkvo)
  i64 ubatch = 0;                        // llama.cpp: tokens per graph evaluation (-ub); each copies host weights once
  double streamed = 0;                   // vLLM / SGLang --cpu-offload-gb: weights that cross PCIe every forward pass

  // The figures of one step, numbers only: the simulator's clock takes stage() per step, the printed
  // terms add their bases on top (terms()).
  struct Work {
    double tokens = 0, touched = 1, q_bytes = 0, d_bytes = 0, kv_bytes = 0, lin_flops = 0, attn_flops = 0, dq_elems = 0, dmmv_elems = 0;
    double t_w = 0, t_kv = 0, t_lin = 0, t_dq = 0, t_attn = 0, t_launch = 0, t_moe = 0, t_engine = 0, t_ar = 0, t_ep = 0, t_pp = 0;
    double act_msg = 0, ep_vol = 0, ep_net_vol = 0, launch_s = 0;
    double logit_rows = 0;  // rows the output head runs on: the sequences in the step
    double host_bytes = 0, host_kv_bytes = 0, pcie_bytes = 0, uploads = 0;  // host memory reads, PCIe crossings
    double t_host_w = 0, t_host_kv = 0, t_pcie = 0;
    i64 reductions = 0;
    // kernel by kernel: the linear layers take the largest of their weight read, their GEMM time and (weight-only
    // quantised kernels) their dequantisation (vLLM, SGLang: their p-norm, gemm_overlap_p), attention the larger of its KV read and its FLOPs; launches, engine overhead and collectives add, and
    // so do the CPU's part of the layers (host weights and KV) and weights crossing PCIe
    double host() const { return t_host_w + t_host_kv + t_pcie; }
    double p = 0;  // > 0: the linear layers' times join as a p-norm (gemm_overlap_p), else the largest
    double linear() const {
      const double m = std::max({t_w, t_lin, t_dq});
      if (p <= 0 || m <= 0) return m;
      // scaled by the largest, so a large p neither underflows nor overflows: m (sum (t / m)^p)^(1/p)
      return m * std::pow(std::pow(t_w / m, p) + std::pow(t_lin / m, p) + std::pow(t_dq / m, p), 1.0 / p);
    }
    double stage() const { return linear() + std::max(t_kv, t_attn) + t_launch + t_moe + t_engine + t_ar + t_ep + t_pp + host(); }
    // each term's seconds, the fields terms() reports
    static constexpr double Work::*kTimes[] = {&Work::t_w,      &Work::t_kv,     &Work::t_lin,  &Work::t_dq,     &Work::t_attn,
                                               &Work::t_launch, &Work::t_moe,    &Work::t_engine, &Work::t_ar,   &Work::t_ep,
                                               &Work::t_pp,     &Work::t_host_w, &Work::t_host_kv, &Work::t_pcie};
    void add_times(const Work& o) {
      for (double Work::*t : kTimes) this->*t += o.*t;
    }
    void take_times(const Work& o) {
      for (double Work::*t : kTimes) this->*t = o.*t;
    }
  };

  double all_reduce_s(double bytes) const;
  Work work(const StepBatch& b) const;
  std::vector<PerfTerm> terms(const StepBatch& b) const { return terms(work(b), b); }
  // the terms of a step whose work w already holds (estimate_perf: a chunked prompt's summed seconds)
  std::vector<PerfTerm> terms(const Work& w, const StepBatch& b) const;
};

// All-reduce of `bytes` over tp ranks: the in-node latency ar_latency (one alpha in an NVLink / xGMI node, log2(tp)
// alphas for NCCL across nodes, NCCL's ring over PCIe) plus 2 (n - 1) / n x bytes
// over the link; across nodes the intra-node part runs over the scale-up link and the inter-node part
// (nodes ranks) over the network (hierarchical all-reduce, as NCCL does across nodes).
double StepTimeModel::Impl::all_reduce_s(double bytes) const {
  if (tp <= 1) return 0;
  const double n_in = static_cast<double>(std::min(tp, per_node));
  double t = ar_latency + 2.0 * (n_in - 1.0) / n_in * bytes / ar_beta;
  if (nodes > 1) {
    const double n = static_cast<double>(nodes);
    t += static_cast<double>(net_hops) * net_alpha + 2.0 * (n - 1.0) / n * (bytes / n_in) / net_beta;
  }
  return t;
}

StepTimeModel::Impl::Work StepTimeModel::Impl::work(const StepBatch& b) const {
  Work w;
  w.p = gemm_p;
  w.tokens = static_cast<double>(b.decode_seqs + b.prefill_tokens);
  if (w.tokens <= 0) return w;
  // weights: every matrix once, and of the routed experts those the step's tokens touch:
  // E x (1 - (1 - k / E)^T) distinct experts per MoE layer for T tokens routed independently; under expert
  // parallelism over data-parallel replicas, T is the tokens of every replica in the group (ep_replicas)
  if (experts > 0)
    w.touched = 1.0 - std::pow(1.0 - static_cast<double>(experts_active) / static_cast<double>(experts), w.tokens * ep_replicas);
  const double routed = routed_bytes * w.touched;
  // llama.cpp keeps cpu_dense + cpu_routed of the weights in host memory. A step of fewer than 32 tokens runs their
  // ops on the CPU, which reads them (the touched experts only) at host bandwidth, and the GPU reads the rest; from
  // 32 tokens the GPU takes those ops and ggml copies their weights (the used experts only) over PCIe once per
  // ubatch (ggml-cuda.cu ggml_backend_cuda_device_offload_op: batch >= GGML_OP_OFFLOAD_MIN_BATCH = 32)
  const bool offload_op = w.tokens >= static_cast<double>(kLlamaOpOffloadMinBatch);
  const double on_host = cpu_dense + cpu_routed * w.touched;
  const double gpu_dense = offload_op || dense_bytes <= 0 ? 1.0 : std::max(0.0, 1.0 - cpu_dense / dense_bytes);
  const double gpu_routed = offload_op || routed_bytes <= 0 ? 1.0 : std::max(0.0, 1.0 - cpu_routed / routed_bytes);
  w.q_bytes = quant_bytes * gpu_dense + routed * gpu_routed * routed_quant_fraction;
  w.d_bytes = (dense_bytes - quant_bytes) * gpu_dense + routed * gpu_routed * (1.0 - routed_quant_fraction);
  w.t_w = bandwidth > 0 ? w.q_bytes / (bandwidth * weight_eff) + w.d_bytes / (bandwidth * dense_eff) : 0;
  // the GPU's weight-only quantised matrices, each weight dequantised once per step on the SMs' ALUs
  if (dequant_rate > 0) {
    const double dense_dq = quant_elems * gpu_dense, routed_dq = routed_quant_elems * w.touched * gpu_routed;
    w.dq_elems = dense_dq + routed_dq;
    w.t_dq = (dense_dq * dq_cost + routed_dq * routed_dq_cost) / dequant_rate;
  }
  if (dmmv_rate > 0) {
    w.dmmv_elems = dense_elems * gpu_dense + routed_dense_elems * w.touched * gpu_routed;
    w.t_dq += w.dmmv_elems / dmmv_rate;
  }
  if (on_host > 0 && !offload_op) {
    w.host_bytes = on_host;
    w.t_host_w = w.host_bytes / host_bw;
  } else if (on_host > 0) {
    w.uploads = std::max(1.0, std::ceil(static_cast<double>(b.prefill_tokens) / static_cast<double>(std::max<i64>(ubatch, 1))));
    w.pcie_bytes = on_host * w.uploads;
  }
  // --cpu-offload-gb: the offloaded parameters cross PCIe in every forward pass (read through UVA, or copied in)
  w.pcie_bytes += streamed;
  w.t_pcie = w.pcie_bytes / pcie;
  // KV read by decode attention: each decode sequence's cached tokens per layer (windows cap it)
  const double seqs = static_cast<double>(std::max<i64>(b.decode_seqs, 1));
  const double avg_ctx = b.decode_context_tokens / seqs;
  double attn = 0;
  for (const auto& l : kv_layers) {
    const double held = l.window > 0 ? std::min(avg_ctx, static_cast<double>(l.window)) * static_cast<double>(b.decode_seqs) : b.decode_context_tokens;
    w.kv_bytes += l.bytes_per_token * held * l.reads;
    attn += 4.0 * l.width * held;
  }
  // attention data parallel: the sequences spread over the groups, the busiest holding ceil(D / groups) of the decode
  // sequences and ceil(prefill sequences / groups) of the prompts (a lone prompt is all one group's)
  double group_tokens = w.tokens, prefill_share = 1;
  if (attention_groups > 1) {
    const auto busiest = [&](i64 n) { return n > 0 ? static_cast<double>(ceil_div(n, attention_groups)) / static_cast<double>(n) : 0.0; };
    const double share = busiest(b.decode_seqs);
    prefill_share = b.prefill_seqs > 0 ? busiest(b.prefill_seqs) : 1.0;
    w.kv_bytes *= share;
    attn *= share;
    group_tokens = static_cast<double>(b.decode_seqs) * share + static_cast<double>(b.prefill_tokens) * prefill_share;
  }
  // the KV of layers whose cache is in host memory (llama.cpp CPU layers, -nkvo) is read there by the CPU's attention
  w.host_kv_bytes = w.kv_bytes * host_kv_share;
  w.t_kv = bandwidth > 0 ? (w.kv_bytes - w.host_kv_bytes) / (bandwidth * kv_eff) : 0;
  w.t_host_kv = w.host_kv_bytes / host_bw;
  // compute: the linear layers 2 x active params per token; attention 4 x width per cached token (decode)
  // and per causal pair (prefill)
  // (under DP attention the attention projections for the busiest group's tokens, the rest for every token)
  w.logit_rows = static_cast<double>(b.decode_seqs + b.prefill_seqs);
  w.lin_flops = 2.0 * ((body_params - attention_params) * w.tokens + attention_params * group_tokens + head_params * w.logit_rows);
  w.attn_flops = attn + 4.0 * attn_width * b.prefill_attention_pairs * prefill_share;
  w.t_lin = peak > 0 ? w.lin_flops / (peak * linear_eff) : 0;
  w.t_attn = attn_peak > 0 ? w.attn_flops / (attn_peak * compute_eff) : 0;
  // kernel launches (steps that prefill run eagerly) and the engine's own time
  w.launch_s = b.prefill_tokens > 0 ? prefill_kernel_s : kernel_s;
  w.t_launch = static_cast<double>(kernels) * w.launch_s;
  // the fused-MoE path's fixed time per layer, in full while the step's tokens touch few of the experts (each grouped
  // GEMM then streams a few narrow slices, latency-bound); it fades as they touch them all (a long bandwidth-bound read)
  w.t_moe = static_cast<double>(moe_layers) * moe_layer_s * (1.0 - w.touched);
  w.t_engine = step_overhead;
  // tensor-parallel all-reduce: two per layer (attention output, MLP output) of tokens x hidden activations; none
  // after attention that runs data parallel on whole weights, none after routed experts dispatched all-to-all
  w.act_msg = w.tokens * static_cast<double>(hidden) * act_bytes;
  if (tp > 1) {
    w.reductions = (attention_local ? 0 : layers) + layers - (ep_dispatch ? moe_layers : 0);
    w.t_ar = static_cast<double>(w.reductions) * all_reduce_s(w.act_msg);
  }
  // expert-parallel all-to-all: dispatch and combine, each rank sending k copies of its own tokens' activations (under
  // attention data parallel its group's: the busiest group's) to ranks spread evenly over the ep group: (local - 1) / ep
  // of them to the other GPUs of the node over the scale-up link and, when the group spans nodes (ep above the GPUs one
  // node joins), (ep - local) / ep over the network, the two at once (DeepEP's NVLink and RDMA paths): the slower of them
  if (ep_dispatch && moe_layers > 0) {
    const double e = static_cast<double>(ep), local = static_cast<double>(std::min(ep, per_node));
    const double copies = group_tokens * static_cast<double>(hidden) * act_bytes * static_cast<double>(experts_active);
    w.ep_vol = copies * (local - 1.0) / e;
    w.ep_net_vol = ep > per_node ? copies * (e - local) / e : 0.0;
    double t = ar_alpha + w.ep_vol / ar_beta;
    if (w.ep_net_vol > 0 && net_beta > 0) t = std::max(t, net_alpha + w.ep_net_vol / net_beta);
    w.t_ep = 2.0 * static_cast<double>(moe_layers) * t;
  }
  // pipeline: each stage hands the activations to the next
  if (pp > 1) w.t_pp = ar_alpha + w.act_msg / ar_beta;
  return w;
}

std::vector<PerfTerm> StepTimeModel::Impl::terms(const Work& w, const StepBatch& b) const {
  std::vector<PerfTerm> out;
  if (w.tokens <= 0) return out;
  std::string wb = "(" + num((w.q_bytes + w.d_bytes) / 1e9, 4) + " GB";
  if (experts > 0) wb += ", routed experts x " + num(w.touched, 3) + " touched";
  const std::string& gddr = gain_basis;
  // ggml-typed weights read at weight_eff_ggml without the gain (StepTimeModel): their basis does not name it
  wb += ") / (" + bandwidth_basis + " x " + (w.q_bytes > 0 ? kernel + " " + num(weight_eff, 2) : "dense " + num(dense_eff, 2)) +
        (w.q_bytes > 0 && kernel == "ggml" ? std::string() : gddr) + ")";
  out.push_back({"weights", w.t_w, wb});
  out.push_back({"kv_read", w.t_kv, "(" + num(w.kv_bytes / 1e9, 4) + " GB" + kv_read_basis + ") / (" + bandwidth_basis + " x " + num(kv_eff, 2) + gddr + ")"});
  out.push_back({"linear_compute", w.t_lin,
                 num(w.lin_flops / 1e12, 4) + " TFLOP (2 x " + num(body_params / 1e9, 4) + " G params x " + num(w.tokens, 6) +
                     " tokens + 2 x " + num(head_params / 1e9, 4) + " G output head x " + num(w.logit_rows, 6) + " sequences) / (" + peak_basis + " x " + num(linear_eff, 2) + ")" +
                     (gemm_p > 0 ? "; the step takes (weights^p + linear_compute^p + dequant^p)^(1/p), p = " + num(gemm_p, 3) +
                                       " (gemm_overlap_p), not the largest"
                                 : "")});
  if (w.dq_elems > 0 || w.dmmv_elems > 0) {
    std::string db;
    if (w.dq_elems > 0) db = num(w.dq_elems / 1e9, 4) + " G " + kernel + " weights" + dq_cost_basis + " / (" + dequant_basis + ")";
    if (w.dmmv_elems > 0)
      db += (db.empty() ? "" : " + ") + num(w.dmmv_elems / 1e9, 4) + " G f16/bf16/f32 weights through DMMV / (" + dmmv_basis + ")";
    out.push_back({"dequant", w.t_dq, db});
  }
  out.push_back({"attention_compute", w.t_attn,
                 num(w.attn_flops / 1e12, 4) + " TFLOP / (" + attn_peak_basis + " x " + num(compute_eff, 2) + ")"});
  out.push_back({"kernel_launches", w.t_launch,
                 std::to_string(kernels) + " kernels" + (kernel_count_basis.empty() ? "" : ": " + kernel_count_basis + ",") + " x " +
                     num(w.launch_s * 1e6, 3) + " us" + (b.prefill_tokens > 0 ? prefill_launch_basis : launch_basis)});
  if (w.t_moe > 0)
    out.push_back({"moe_layers", w.t_moe,
                   std::to_string(moe_layers) + " MoE layers x " + num(moe_layer_s * 1e6, 3) + " us x (1 - " + num(w.touched, 3) +
                       " of the experts touched) (routing, token sort, grouped-GEMM latency)"});
  out.push_back({"engine_step", w.t_engine, "per-step scheduler, input preparation and sampling"});
  if (tp > 1)
    out.push_back({"tp_all_reduce", w.t_ar,
                   std::to_string(w.reductions) + " x all-reduce of " + num(w.act_msg / 1e6, 3) + " MB over " + std::to_string(tp) + " ranks (" + link_basis + ")"});
  if (ep_dispatch && moe_layers > 0)
    out.push_back({"ep_all_to_all", w.t_ep,
                   "2 x " + std::to_string(moe_layers) + " MoE layers x (" + num(ar_alpha * 1e6, 3) + " us + " + num(w.ep_vol / 1e6, 3) + " MB / link" +
                       (w.ep_net_vol > 0 ? "; or, the slower, " + num(net_alpha * 1e6, 3) + " us + " + num(w.ep_net_vol / 1e6, 3) + " MB / network (" +
                                               std::to_string(ep) + " ranks over " + std::to_string(ceil_div(ep, per_node)) + " nodes)"
                                         : std::string()) +
                       ")"});
  if (pp > 1) out.push_back({"pp_send", w.t_pp, "activations " + num(w.act_msg / 1e6, 3) + " MB to the next stage"});
  if (w.t_host_w > 0)
    out.push_back({"host_weights", w.t_host_w,
                   "(" + num(w.host_bytes / 1e9, 4) + " GB the CPU computes with" + (cpu_routed > 0 ? ", routed experts x " + num(w.touched, 3) + " touched" : "") +
                       ") / host " + host_bw_basis + " (batch < " + std::to_string(kLlamaOpOffloadMinBatch) + " tokens: CPU)"});
  if (w.t_host_kv > 0)
    out.push_back({"host_kv_read", w.t_host_kv,
                   "(" + num(w.host_kv_bytes / 1e9, 4) + " GB, " + num(host_kv_share, 3) + " of the KV cache in host memory) / host " + host_bw_basis});
  if (w.t_pcie > 0) {
    std::string pb = "(";
    if (w.uploads > 0)
      pb += num(w.uploads, 3) + " ubatch(es) x " + num(w.pcie_bytes / w.uploads / 1e9, 4) + " GB of host weights copied to the GPU: batch >= " +
            std::to_string(kLlamaOpOffloadMinBatch) + " tokens";
    else
      pb += num(w.pcie_bytes / 1e9, 4) + " GB --cpu-offload-gb weights, every forward pass";
    out.push_back({"pcie_weights", w.t_pcie, pb + ") / " + pcie_basis});
  }
  return out;
}

namespace {

// The ALU cost per weight of a ggml type in llama.cpp's mat-vec kernels, relative to q4_0 (q8_0, q4_1, q5_0, q5_1,
// iq4_nl and mxfp4 count as q4_0: one scale per 32 weights): the K-quants unpack a 256-weight super-block's
// sub-block scales (and mins), q3_K also its 2-bit lows and high-bit mask. q2_K, 2-bit lows without the mask, sits
// between q4_K and q3_K where its vec_dot's instruction count does (156 per 32 weights against 118 and 240,
// docs/performance-model.md "Weight types in llama.cpp's kernels").
constexpr double kQ2kBetweenQ4kAndQ3k = (156.0 - 118.0) / (240.0 - 118.0);

double ggml_type_cost(ElemFormat f, const PerfCoefficients& c) {
  switch (f) {
    case ElemFormat::q4_k:
    case ElemFormat::q5_k:
    case ElemFormat::q6_k:
      return c.dequant_k;
    case ElemFormat::q2_k:
      return c.dequant_k + (c.dequant_k_low - c.dequant_k) * kQ2kBetweenQ4kAndQ3k;
    case ElemFormat::q3_k:
      return c.dequant_k_low;
    default:
      return 1.0;
  }
}

struct GgmlCost {
  double dense = 1, routed = 1;
  std::string basis;
};

// The recipe's tensors (as llama-quantize types them) the dequant term counts: all but the token embedding, which is
// looked up, unless it is the output head too; the routed experts apart (they are read as touched).
GgmlCost ggml_dequant_cost(const ModelSpec& rank, const PerfCoefficients& c, bool embedding_is_head) {
  const auto recipe = parse_gguf_recipe(rank.quant.gguf_recipe);
  GgmlCost out;
  if (!recipe) return out;
  double elems[2] = {0, 0}, cost[2] = {0, 0};
  for (const GgufTensor& t : gguf_typed_tensors(*recipe, rank)) {
    if (t.role == TensorRole::token_embd && !embedding_is_head) continue;
    const int routed = t.part == "routed_experts" ? 1 : 0;
    const double n = static_cast<double>(t.cols) * static_cast<double>(t.rows) * static_cast<double>(t.slices);
    elems[routed] += n;
    cost[routed] += n * ggml_type_cost(t.type, c);
  }
  if (elems[0] > 0) out.dense = cost[0] / elems[0];
  if (elems[1] > 0) out.routed = cost[1] / elems[1];
  if (out.dense != 1.0 || out.routed != 1.0)
    out.basis = " x " + num(elems[0] > 0 ? out.dense : out.routed, 3) + (elems[0] > 0 && elems[1] > 0 ? " (routed " + num(out.routed, 3) + ")" : "") +
                " " + recipe->name + " type cost (q4/5/6_K " + num(c.dequant_k, 3) + ", q3_K " + num(c.dequant_k_low, 3) + ", q2_K " +
                num(ggml_type_cost(ElemFormat::q2_k, c), 3) + " x q4_0)";
  return out;
}

}  // namespace

StepTimeModel::StepTimeModel(const Planner& p, const PerfParams& params) {
  auto m = std::make_shared<Impl>();
  const PlanSpec& s = p.spec();
  const ModelSpec& rank = p.rank_model();
  m->c = params.coefficients;
  const PerfCoefficients& c = m->c;
  const bool llamacpp = s.engine.kind == EngineKind::llamacpp;
  m->kernel = weight_kernel(rank.quant);
  // efficiencies: --bw-efficiency replaces the dense and KV figures; quantised kernels keep their ratio to dense
  const double scale = params.bandwidth_efficiency > 0 ? params.bandwidth_efficiency / c.weight_eff_dense : 1.0;
  // llama.cpp reads f16 / bf16 / f32 tensors through its own mat-vec kernels too (ggml-cuda mmv, the Metal
  // kernel_mul_mv_f16 family), not cuBLAS GEMMs: at decode they stream at its block types' efficiency
  // a GDDR card: the serving engines' kernels, their efficiencies fitted on HBM parts, read a larger share of it
  // (gddr_read_gain; not llama.cpp, not where --bw-efficiency sets the share)
  const bool gddr = !llamacpp && params.bandwidth_efficiency <= 0 && s.gpu.memory_type.rfind("GDDR", 0) == 0;
  // vLLM and SGLang on ROCm read at a smaller share of an Instinct (CDNA) GPU's bandwidth than their CUDA kernels reach on
  // the HBM parts the efficiencies were fitted on (rocm_read_gain, fitted on their MI300X / MI355X rows;
  // docs/performance-model.md "AMD Instinct GPUs")
  m->rocm = (s.engine.kind == EngineKind::vllm || s.engine.kind == EngineKind::sglang) && params.bandwidth_efficiency <= 0 &&
            s.gpu.vendor == "amd" && s.gpu.architecture.rfind("cdna", 0) == 0;
  m->gddr_gain = (gddr ? c.gddr_read_gain : 1.0) * (m->rocm ? c.rocm_read_gain : 1.0);
  if (gddr) m->gain_basis += ", GDDR x " + num(c.gddr_read_gain, 3) + " included";
  if (m->rocm) m->gain_basis += ", ROCm x " + num(c.rocm_read_gain, 3) + " included";
  m->dense_eff = std::min(1.0, (llamacpp ? c.weight_eff_ggml : c.weight_eff_dense) * scale * m->gddr_gain);
  m->weight_eff = std::min(1.0, kernel_eff(c, m->kernel) * scale * (m->kernel == "ggml" ? 1.0 : m->gddr_gain));
  // llama.cpp reads f16 / bf16 / f32 matrices through its own kernels at the ggml rate too (the dense read above):
  // the summary's weight_efficiency is the one the weights term uses
  if (llamacpp && m->kernel == "dense") m->weight_eff = m->dense_eff;
  m->kv_eff = params.bandwidth_efficiency > 0 ? params.bandwidth_efficiency : std::min(1.0, c.kv_eff * m->gddr_gain);
  m->compute_eff = params.compute_efficiency > 0 ? params.compute_efficiency : c.compute_eff;
  m->step_overhead = params.step_overhead_s >= 0 ? params.step_overhead_s : engine_step_overhead(c, s.engine);

  // weights read per step: the embedding table (and Gemma's per-layer embedding table) is looked up (a few rows), not
  // read, unless it is the output head
  const ParamCount pc = count_params(rank);
  // a tied head is the embedding table itself, read whole by the output projection where the rank runs it
  const bool embedding_is_head = rank.tied_embeddings && rank.has_embedding && rank.has_lm_head;
  // a weights file's exact bytes (safetensors or GGUF tensor table: weight_bytes gives the rank's share of them) over
  // what the format prices the same parts at: an FP8 checkpoint whose config names no quantization is read at 1 B a weight
  double priced = 0;
  for (const auto& part : pc.parts) priced += static_cast<double>(part_weight_bytes(rank, part));
  const double exact_scale =
      rank.exact_weight_bytes && priced > 0 ? static_cast<double>(weight_bytes(rank, pc).total) / priced : 1.0;
  double routed_quant = 0;
  for (const auto& part : pc.parts) {
    if (part.name == "vision" || part.name == "position_embedding" || part.name == "per_layer_embedding" ||
        (part.name == "embedding" && !embedding_is_head))
      continue;
    if (part.name == "attention") m->attention_params = static_cast<double>(part.total());
    const double bytes = static_cast<double>(part_weight_bytes(rank, part)) * exact_scale;
    const bool packed = part_packed(rank.quant, part);
    // matrices stored as f16 / bf16 / f32 (a GGUF recipe quantises the output head too: Q6_K in Q4_K_M)
    const bool head = part.name == "lm_head" || (part.name == "embedding" && embedding_is_head);
    const bool stored_float = !packed && !(rank.quant.method == "gguf" && head);
    const double elems = !stored_float ? static_cast<double>(part.matrix) : 0.0;
    const double plain = stored_float ? static_cast<double>(part.matrix) : 0.0;
    if (part.name == "routed_experts") {
      m->routed_bytes += bytes;
      m->routed_quant_elems += elems;
      m->routed_dense_elems += plain;
      if (packed) routed_quant += bytes;
    } else {
      m->dense_bytes += bytes;
      m->quant_elems += elems;
      m->dense_elems += plain;
      if (packed) m->quant_bytes += bytes;
    }
  }
  m->routed_quant_fraction = m->routed_bytes > 0 ? routed_quant / m->routed_bytes : 0;
  for (const Layer& l : rank.layers) m->moe_layers += l.mlp == MlpKind::moe;
  // the share of the experts a step touches is the model's, E and k before expert parallelism splits them: each of
  // a rank's E / ep experts is hit with probability 1 - (1 - k/E)^T whatever ep is (the rank's own k would be min(k, E / ep))
  for (const Layer& l : s.model.layers)
    if (l.mlp == MlpKind::moe) {
      m->experts = l.experts;
      m->experts_active = l.experts_active;
      break;
    }
  // GEMM work per token: the active parameters less what a token looks up (token and learned-position embeddings; the
  // per-layer table is not in active) and the vision tower (not run on text), and less the output head, which runs on
  // the rows sampled (vLLM's logits_indices, TensorRT-LLM without gather_context_logits, llama.cpp's output ids): one
  // per sequence in a step, not one per prompt token
  double lookups = 0, head = 0;
  for (const auto& part : pc.parts) {
    if (part.name == "embedding" || part.name == "position_embedding" || part.name == "vision") lookups += static_cast<double>(part.total());
    if (part.name == "lm_head") head += static_cast<double>(part.total());
  }
  if (embedding_is_head) head += static_cast<double>(rank.vocab) * static_cast<double>(rank.hidden);
  m->head_params = head;
  m->body_params = std::max(0.0, static_cast<double>(pc.active) - lookups - (embedding_is_head ? 0.0 : head));
  // expert parallelism: a rank holds E / ep whole experts and each is routed a token with probability k / E, so a token
  // costs the rank k / ep experts on average (the tokens of every attention group reach it), not the min(k, E / ep) a
  // rank's own count of active parameters holds
  if (s.parallel.ep > 1) {
    double routed = 0;
    for (const auto& part : pc.parts)
      if (part.name == "routed_experts") routed += static_cast<double>(part.total());
    for (const Layer& l : rank.layers)
      if (l.mlp == MlpKind::moe && l.experts > 0 && m->experts > 0) {
        const double counted = routed * static_cast<double>(l.experts_active) / static_cast<double>(l.experts);
        const double expected = routed * static_cast<double>(m->experts_active) / static_cast<double>(m->experts);
        m->body_params = std::max(0.0, m->body_params - counted + expected);
        break;
      }
  }
  const bool metal_mat_vec_attention = llamacpp && s.gpu.vendor == "apple" && !llamacpp_flash_attention(s.engine);
  for (const Layer& stored : rank.layers) {
    if (stored.kv == KvKind::ssm || (stored.kv == KvKind::none && !shares_kv(stored))) continue;
    // a layer reading an earlier layer's cache (Gemma 3n / 4 KV sharing) reads as much as that layer does
    const Layer l = with_own_cache(stored);
    const double w = static_cast<double>(l.q_heads) * static_cast<double>(l.kv == KvKind::mla_latent ? l.kv_lora_rank + l.qk_rope_head_dim : l.k_head_dim);
    m->attn_width += w;
    const i64 window = (l.kv == KvKind::sliding || l.kv == KvKind::chunked) ? l.window : 0;
    const i64 bytes = add(layer_k_bytes_per_token(l, s.kv), layer_v_bytes_per_token(l, s.kv), "KV bytes per token");
    if (const i64 key = layer_indexer_key_bytes(l); key > 0 && l.indexer_topk > 0 && l.sparse_decode) {
      // DeepSeek sparse attention: the indexer scores every cached token (its fp8 key read whole, whatever the engine
      // prices it at; one q.k per index head, half the 4 x width of attention's QK + PV), then attention reads the
      // index_topk latents it picked
      const i64 latent = bytes - layer_indexer_bytes_per_token(l);
      m->kv_layers.push_back({static_cast<double>(latent), l.indexer_topk, w});
      m->kv_layers.push_back({static_cast<double>(key), 0, static_cast<double>(l.indexer_heads) * static_cast<double>(l.indexer_head_dim) / 2.0});
      continue;
    }
    // llama.cpp on Metal without flash attention: KQ and KQV are ggml_mul_mat over the cache broadcast to the query heads
    // (kernel_mul_mv_f16_f32: each query head's threadgroups read the rows of its KV head), so a GQA layer's cache is read
    // q_heads / kv_heads times per token; the Apple GPUs' caches do not hold it between heads (XiongjieDai's llama-bench
    // tg512 -> tg8192 on three Macs: +1.4 to +3.4 us per token of context for LLaMA-3-8B, twice that per KV byte for
    // 70B's 8 query heads per KV head; docs/performance-model.md "llama.cpp's attention without flash attention")
    const double reads = metal_mat_vec_attention && l.kv_heads > 0 && l.q_heads > l.kv_heads && l.kv != KvKind::mla_latent
                             ? static_cast<double>(l.q_heads) / static_cast<double>(l.kv_heads)
                             : 1.0;
    m->kv_layers.push_back({static_cast<double>(bytes), window, w, reads});
    if (reads > 1) m->kv_read_basis = ", read once per query head (llama.cpp Metal mat-vec attention, flash attention off)";
  }

  // LPDDR unified memory: the GPU reaches a smaller share of the datasheet bandwidth than on HBM or GDDR
  const bool lpddr = s.gpu.device_class == "apple" || s.gpu.device_class == "unified" || s.gpu.device_class == "embedded";
  // and split over dies (Apple Ultra: two Max dies, each with half the memory controllers, over UltraFusion), less again
  const bool die_link = lpddr && s.gpu.dies.value_or(1) > 1;
  // a CPU host (llama.cpp's CPU backend): its threads reach a share of the DRAM channels' datasheet rate (published
  // llama-bench tg rows on Sapphire Rapids and Genoa: 0.56-0.65 of it; docs/performance-model.md "CPU hosts")
  const bool cpu_host = s.gpu.device_class == "cpu";
  m->bandwidth = static_cast<double>(s.gpu.memory_bandwidth_bytes_per_s) * (lpddr ? c.unified_bw_eff : 1.0) *
                 (die_link ? c.die_link_bw_eff : 1.0) * (cpu_host ? c.cpu_bw_eff : 1.0);
  m->bandwidth_basis = gb_s(static_cast<double>(s.gpu.memory_bandwidth_bytes_per_s)) +
                       (lpddr ? " x unified " + num(c.unified_bw_eff, 2) : "") + (cpu_host ? " x CPU " + num(c.cpu_bw_eff, 2) : "") +
                       (die_link ? " x " + std::to_string(*s.gpu.dies) + " dies " + num(c.die_link_bw_eff, 2) : "");
  // the linear layers run at the fp8 tensor rate for fp8 W8A8 weights, else at the bf16/fp16 rate; attention at
  // bf16/fp16. GPUs without bf16 tensor cores (Volta, Turing) have only the fp16 rate: a bf16 model runs there as fp16.
  const std::optional<double> half = s.gpu.bf16_dense_tflops ? s.gpu.bf16_dense_tflops : s.gpu.fp16_dense_tflops;
  m->attn_peak = half ? *half * 1e12 : 0;
  const char* const rate = s.gpu.bf16_dense_tflops ? " TFLOP/s bf16 peak" : " TFLOP/s fp16 peak";
  m->attn_peak_basis = half ? num(*half, 4) + rate : "no peak";
  // Apple GPUs from the M5 (Metal GPU family apple10) hold a Neural Accelerator in every core: the profile's fp16 rate.
  // llama.cpp reaches it through Metal 4's tensor API from b6970 (ggml-org/llama.cpp PR #16634); earlier builds
  // multiply on the shader ALUs, 128 lanes x 2 FLOP per core and clock (docs/performance-model.md "Apple's Neural
  // Accelerators"). A rate the user gave (--gpu-tflops) stands.
  if (llamacpp && apple_neural_accelerators(s.gpu) && built_before(s.engine, "b6970") && !s.gpu.tflops_given && sm_cycles_per_s(s.gpu) > 0) {
    m->attn_peak = sm_cycles_per_s(s.gpu) * kAppleFlopsPerCoreClock;
    m->attn_peak_basis = num(m->attn_peak / 1e12, 4) + " TFLOP/s fp16 shader peak (" + sm_cycles_basis(s.gpu) + " x " + num(kAppleFlopsPerCoreClock, 4) +
                         ": llama.cpp " + s.engine.version + " < b6970 has no Metal tensor API)";
  }
  m->peak = m->attn_peak;
  m->peak_basis = m->attn_peak_basis;
  m->linear_eff = m->compute_eff;
  if (m->kernel == "fp8" && s.gpu.fp8_dense_tflops) {
    m->peak = *s.gpu.fp8_dense_tflops * 1e12;
    m->peak_basis = num(*s.gpu.fp8_dense_tflops, 4) + " TFLOP/s fp8 peak";
    m->linear_eff = params.compute_efficiency > 0 ? params.compute_efficiency : c.compute_eff_fp8;
  } else if (rank.quant.method == "nvfp4" && s.gpu.fp4_dense_tflops) {
    // NVFP4 is W4A4: the activations are quantised to e2m1 too and the GEMMs run on the fp4 tensor cores
    // (Blackwell; vLLM compressed_tensors_w4a4_nvfp4.py / ModelOpt NVFP4 in TensorRT-LLM). The fp8 GEMMs'
    // efficiency stands in for them: no published fp4 case is in the fit. Without fp4 tensor cores (Hopper) the
    // weights are dequantised into bf16 GEMMs (W4A16), the rate above.
    m->peak = *s.gpu.fp4_dense_tflops * 1e12;
    m->peak_basis = num(*s.gpu.fp4_dense_tflops, 4) + " TFLOP/s fp4 peak";
    m->linear_eff = params.compute_efficiency > 0 ? params.compute_efficiency : c.compute_eff_fp8;
  }
  // llama.cpp multiplies a prompt (or a batch) by GGUF-quantised weights in its own kernels, not at the tensor peak:
  // MMQ (activations quantised to q8_1, int8 tensor-core MMA) on NVIDIA GPUs of compute capability 7.5 and later, about
  // the same per SM and clock from Ampere to Hopper (mmq_per_sm_cycle); the HIP build's quantised GEMMs (dp4a, MFMA or
  // WMMA MMQ, or rocBLAS where its switch picks it) on AMD GPUs with matrix cores, per compute unit and clock
  // (mmq_amd_per_cu_cycle; RDNA 4 from b7148, whose WMMA-MMQ kernels (PR #17156) do more a cycle:
  // mmq_rdna4_wmma_per_cu_cycle). AMD GPUs without matrix cores (GCN, RDNA 1-2) keep the fp16 rate: their one published
  // row (MI50) is not enough for a rate of its own (docs/performance-model.md "llama.cpp's prompt GEMMs"). Attention
  // keeps the fp16 rate (flash attention's fp16 MMA). A rate or efficiency the user gave (--gpu-tflops,
  // --compute-efficiency) prices them at the tensor peak instead.
  if (llamacpp && m->kernel == "ggml" && sm_cycles_per_s(s.gpu) > 0 && params.compute_efficiency <= 0 && !s.gpu.tflops_given) {
    const bool nvidia_mmq = s.gpu.vendor == "nvidia" && compare_versions(s.gpu.compute_capability, "7.5") >= 0;
    // Pascal with DP4A (6.1-6.x): MMQ's dp4a path at any batch (no fp16 MMA to hand large batches to cuBLAS; 6.0 has no
    // DP4A and goes to cuBLAS)
    const bool nvidia_dp4a = s.gpu.vendor == "nvidia" && compare_versions(s.gpu.compute_capability, "6.1") >= 0 &&
                             compare_versions(s.gpu.compute_capability, "7.0") < 0;
    const bool rdna4_wmma = amd_matrix_cores(s.gpu) && s.gpu.architecture.rfind("rdna4", 0) == 0 && !built_before(s.engine, "b7148");
    const double per_cycle = nvidia_mmq ? c.mmq_per_sm_cycle
                             : nvidia_dp4a ? c.mmq_dp4a_per_sm_cycle
                             : rdna4_wmma ? c.mmq_rdna4_wmma_per_cu_cycle
                             : amd_matrix_cores(s.gpu) ? c.mmq_amd_per_cu_cycle
                                                       : 0.0;
    if (per_cycle > 0) {
      m->peak = sm_cycles_per_s(s.gpu) * per_cycle;
      m->peak_basis = num(m->peak / 1e12, 4) + " TFLOP/s llama.cpp " +
                      (nvidia_mmq ? "MMQ" : nvidia_dp4a ? "MMQ (dp4a)" : rdna4_wmma ? "RDNA 4 WMMA-MMQ" : "HIP quantised GEMMs") + " (" + sm_cycles_basis(s.gpu) +
                      " x " + num(per_cycle, 4) + (nvidia_mmq || nvidia_dp4a ? " per SM-cycle, achieved)" : " per CU-cycle, achieved)");
      m->linear_eff = 1.0;
    }
  }
  // weight-only kernels dequantise every weight they read on the SMs' ALUs (llama.cpp's mul_mat_vec_q, gpt-fast's
  // int4 tinygemm and int8 GEMV, MLC's TVM kernels): at batch 1 on a GPU with much bandwidth per SM-cycle (H100,
  // A100) that, not the read, sets the kernel's time. Not for fp8 W8A8 or NVFP4 W4A4, which the tensor cores take
  // as they are, and not in vLLM, SGLang or TensorRT-LLM, whose mixed-input kernels (Marlin and its successors)
  // dequantise with a few bit operations per 8 weights and stay bound by the read up to batch 16-32 (Frantar et
  // al., "MARLIN: Mixed-Precision Auto-Regressive Parallel Inference on Large Language Models", 2024).
  const bool own_kernels = llamacpp || s.engine.kind == EngineKind::generic;
  if (s.engine.kind == EngineKind::vllm || s.engine.kind == EngineKind::sglang) m->gemm_p = c.gemm_overlap_p;
  const bool weight_only = m->kernel == "int8" || m->kernel == "int4" || m->kernel == "ggml" ||
                           (m->kernel == "fp4" && !(rank.quant.method == "nvfp4" && s.gpu.fp4_dense_tflops));
  if (own_kernels && weight_only && sm_cycles_per_s(s.gpu) > 0 && c.dequant_per_sm_cycle > 0) {
    // before Volta an SM's INT32 and FP32 instructions share its 128 cores: the unpacking and the scale arithmetic
    // queue (dequant_pre_volta). An AMD compute unit issues 64 lanes a cycle, integer and float alike (RDNA: two SIMD32,
    // CDNA / GCN: four SIMD16): half a Pascal SM's shared lanes, so half its rate (docs/performance-model.md "GPUs
    // before Volta")
    const bool pre_volta = nvidia_before_volta(s.gpu);
    const bool amd = s.gpu.vendor == "amd";
    constexpr double kAmdCuLanesPerPascalSm = 64.0 / 128.0;
    const double shared = pre_volta ? c.dequant_pre_volta : amd ? c.dequant_pre_volta * kAmdCuLanesPerPascalSm : 1.0;
    m->dequant_rate = sm_cycles_per_s(s.gpu) * c.dequant_per_sm_cycle * shared;
    m->dequant_basis = sm_cycles_basis(s.gpu) + " x " + num(c.dequant_per_sm_cycle, 3) + " per SM-cycle";
    if (pre_volta) m->dequant_basis += " x " + num(c.dequant_pre_volta, 3) + " (compute capability " + s.gpu.compute_capability + ": INT32 and FP32 share the cores)";
    if (amd) m->dequant_basis += " x " + num(c.dequant_pre_volta, 3) + " x 64 / 128 (a CU's 64 lanes shared by INT32 and FP32, half a Pascal SM's 128)";
  }
  if (m->dequant_rate > 0 && llamacpp && !rank.quant.gguf_recipe.empty()) {
    const GgmlCost g = ggml_dequant_cost(rank, c, embedding_is_head);
    m->dq_cost = g.dense;
    m->routed_dq_cost = g.routed;
    m->dq_cost_basis = g.basis;
  }
  // llama.cpp builds before b4114 multiplied f16 / bf16 / f32 matrices by the token's vector in DMMV
  // (dequantize_mul_mat_vec, one warp per row converting two halves per thread per step), a kernel bound by the SMs'
  // issue rate rather than the read on HBM GPUs; PR #10318 (b4114) replaced it with mul_mat_vec (mmv.cu). #9816
  // (b3916) vectorised its f16 loads: 1.27x on an H100 SXM, Llama-3-8B F16 at batch 1, the factor applied from then.
  if (llamacpp && (s.gpu.vendor == "nvidia" || s.gpu.vendor == "amd") && built_before(s.engine, "b4114") && sm_cycles_per_s(s.gpu) > 0 && c.dmmv_per_sm_cycle > 0) {
    const double vectorised = compare_versions(s.engine.version, "b3916") >= 0 ? 1.27 : 1.0;
    m->dmmv_rate = sm_cycles_per_s(s.gpu) * c.dmmv_per_sm_cycle * vectorised;
    m->dmmv_basis = sm_cycles_basis(s.gpu) + " x " + num(c.dmmv_per_sm_cycle * vectorised, 3) + " per SM-cycle, llama.cpp " + s.engine.version + " < b4114";
  }

  // kernels per step: 9 per transformer layer (2 norms, qkv, rope + cache write, attention, o, gate/up, act, down),
  // 5 more per MoE layer (router, top-k, permute, second grouped GEMM, unpermute), 4 per step (embedding,
  // final norm, lm_head, sampling)
  m->layers = static_cast<i64>(rank.layers.size());
  m->kernels = 9 * m->layers + 5 * m->moe_layers + 4;
  // llama.cpp on CUDA / ROCm: its own graph, counted by build (llamacpp_decode_kernels), MoE layers by their top-k too
  const bool llamacpp_gpu = llamacpp && (s.gpu.vendor == "nvidia" || s.gpu.vendor == "amd") && s.gpu.device_class != "cpu";
  if (llamacpp_gpu) {
    bool gqa = false;
    for (const Layer& l : rank.layers) gqa = gqa || (l.kv_heads > 0 && l.kv_heads < l.q_heads);
    const LlamacppKernels k = llamacpp_decode_kernels(s.gpu, s.engine, m->kernel != "dense", gqa, m->moe_layers > 0 ? m->experts_active : 0);
    m->kernels = k.per_layer * m->layers + k.per_moe_layer * m->moe_layers + k.per_token;
    m->kernel_count_basis = k.basis;
  }
  // Metal has no graphs: every kernel is encoded into a command buffer and dispatched, decode and prefill alike.
  // llama.cpp captures its own CUDA graphs for decode (ggml-cuda, GGML_CUDA_USE_GRAPHS) and launches prefill
  // ubatches eagerly; the other engines' decode graphs share kernel_s.
  if (s.gpu.vendor == "apple") {
    m->kernel_s = m->prefill_kernel_s = c.metal_kernel_s;
    m->launch_basis = m->prefill_launch_basis = " (Metal)";
  } else if (llamacpp) {
    // llama.cpp launches a graph's kernels one by one where its build has no CUDA / HIP graphs for the GPU
    // (or GGML_CUDA_DISABLE_GRAPHS, --enforce-eager here): each pays eager_llamacpp_extra_s more
    const std::string why = s.engine.enforce_eager ? "graphs disabled" : llamacpp_graphless_reason(s.gpu, s.engine, m->moe_layers > 0);
    m->kernel_s = c.kernel_llamacpp_s + (why.empty() ? 0.0 : c.eager_llamacpp_extra_s);
    // before #14482 (b5922) the ggml graph was built and allocated again for every token (and before #9017, b5036, the
    // captured CUDA graph updated): CPU work per node ahead of each token, graphs or not; priced where the kernels are
    // counted by build (CUDA / ROCm)
    const bool graph_rebuilt = llamacpp_gpu && built_before(s.engine, "b5922");
    if (graph_rebuilt) m->kernel_s += c.graph_build_llamacpp_s;
    // its prompt ubatches are launched one by one, by ggml's C++ loop (not PyTorch's eager_kernel_s)
    m->prefill_kernel_s = c.kernel_llamacpp_s + c.eager_llamacpp_extra_s + (graph_rebuilt ? c.graph_build_llamacpp_s : 0.0);
    m->prefill_launch_basis = " (prefill: llama.cpp launches each kernel)";
    m->launch_basis = s.gpu.device_class == "cpu" ? " (ggml CPU graph: one node after another; no CPU case in the fit)"
                      : !why.empty()                ? " (llama.cpp without graphs: " + why + ")" + (graph_rebuilt ? ", its graph built every token before b5922" : "")
                      : graph_rebuilt               ? " (llama.cpp CUDA graphs, its graph built every token before b5922)"
                      : s.gpu.vendor == "amd"       ? " (llama.cpp HIP graphs)"
                                                    : " (llama.cpp CUDA graphs)";
  } else {
    m->kernel_s = s.engine.enforce_eager ? c.eager_kernel_s : c.kernel_s;
    m->prefill_kernel_s = c.eager_kernel_s;
    m->launch_basis = s.engine.enforce_eager ? " (eager)" : " (CUDA graphs)";
  }

  // the serving engines' fused-MoE path on CUDA / ROCm GPUs: a fixed time per MoE layer on top of its kernels'
  // launches (fitted on NVIDIA cases). llama.cpp's mul_mat_id is priced by its launches and reads alone (its MoE cases
  // on the DGX Spark and the RTX PRO 6000 fit without it); the generic engines and Apple GPUs have no MoE case: left out.
  // MXFP4 experts (gpt-oss) run another path in every serving engine (OpenAI's triton_kernels matmul_ogs with its own
  // routing on Hopper, FlashInfer / TensorRT-LLM MXFP4 MoE on Blackwell, AITER on MI300X, Marlin MXFP4 elsewhere):
  // its 8 published cases (H100, B200, MI300X, RTX PRO 6000; vLLM, SGLang) are within -27..+27% without the term (6 of
  // them within 15%) and +18..+107% with it, so it is left out for them.
  const bool mxfp4_experts = rank.quant.method == "mxfp4";
  if (!llamacpp && s.engine.kind != EngineKind::generic && s.gpu.vendor != "apple" && !mxfp4_experts) m->moe_layer_s = c.moe_layer_s;

  // collectives
  m->tp = s.parallel.tp;
  m->pp = s.parallel.pp;
  m->ep = s.parallel.ep;
  const i64 attention_group = m->tp / std::max<i64>(1, s.engine.attention_dp);  // ranks sharing one set of requests
  m->ep_dispatch = m->ep > 1 && m->ep > attention_group;
  if (m->ep_dispatch && m->ep > m->tp) m->ep_replicas = static_cast<double>(m->ep) / static_cast<double>(std::max<i64>(m->tp, 1));
  m->attention_local = m->tp > 1 && attention_group == 1;
  m->attention_groups = std::max<i64>(1, s.engine.attention_dp);
  m->hidden = rank.hidden;
  m->act_bytes = static_cast<double>(std::max<i64>(2, std::min<i64>(4, format_info(rank.dtype).block_bytes)));
  const std::string link = s.gpu.interconnect;
  const bool scale_up = (link == "nvlink" || link == "xgmi" || link == "infinity-fabric" || link == "ethernet") && s.gpu.interconnect_bytes_per_s > 0;
  const bool bridged_pair = !scale_up && s.gpu.nvlink_bridged && m->tp == 2;  // two PCIe cards joined by an NVLink bridge
  if (scale_up) {
    m->ar_beta = s.gpu.interconnect_bytes_per_s * c.link_eff;
    m->ar_alpha = c.ar_alpha_nvlink_s;
    m->link_basis = s.gpu.interconnect_generation.empty() ? link : s.gpu.interconnect_generation;
  } else if (bridged_pair) {
    // a pair's all-reduce runs over the bridge with the engines' own
    // all-reduce kernels (vLLM's custom all-reduce needs every rank pair NVLink-connected: a pair is); wider TP
    // crosses PCIe between pairs
    m->ar_beta = s.gpu.nvlink_bridge_bytes_per_s * c.link_eff;
    m->ar_alpha = c.ar_alpha_nvlink_s;
    m->link_basis = "NVLink bridge of a pair " + gb_s(s.gpu.nvlink_bridge_bytes_per_s);
  } else {
    const double pcie = s.gpu.pcie_bytes_per_s > 0 ? s.gpu.pcie_bytes_per_s : 32e9;
    m->ar_beta = pcie * c.link_eff;
    m->ar_alpha = c.ar_alpha_pcie_s;
    m->link_basis = "PCIe " + gb_s(pcie);
  }
  // GPUs one scale-up domain joins: 72 on GB200/GB300 NVL72 racks, else 8 per node
  m->per_node = (s.gpu.id.find("gb200") != std::string::npos || s.gpu.id.find("gb300") != std::string::npos) ? 72 : 8;
  m->nodes = ceil_div(m->tp, m->per_node);
  m->net_hops = m->nodes > 1 ? static_cast<i64>(std::ceil(std::log2(static_cast<double>(m->nodes)))) : 0;
  // Within one NVLink / xGMI domain the engines' own all-reduce kernels (vLLM's and SGLang's custom all-reduce,
  // TensorRT-LLM's one-shot / two-shot) read every peer's buffer at once: one latency whatever the rank count.
  // Across nodes (where the engines hand the collective to NCCL) one latency per doubling of the ranks in the node.
  // Over PCIe the engines call NCCL (vLLM's custom all-reduce wants every pair NVLink-connected, or two P2P cards),
  // whose ring all-reduce takes 2 (n - 1) steps: a fixed latency plus one per step (ar_alpha_pcie_s,
  // ar_step_pcie_s: nccl-tests all_reduce_perf at 16 KB on 2 to 8 PCIe GPUs, docs/performance-model.md
  // "PCIe all-reduce latency").
  const bool one_shot = (scale_up || bridged_pair) && m->nodes == 1;
  const i64 in_node = std::min(m->tp, m->per_node);
  const bool pcie_ring = !scale_up && !bridged_pair && m->tp > 1;
  m->ar_hops = one_shot ? 1 : pcie_ring ? 2 * (in_node - 1) : static_cast<i64>(std::ceil(std::log2(static_cast<double>(in_node))));
  m->ar_latency = pcie_ring ? c.ar_alpha_pcie_s + static_cast<double>(m->ar_hops) * c.ar_step_pcie_s : static_cast<double>(m->ar_hops) * m->ar_alpha;
  // host memory and the host link (docs/performance-model.md "Host-resident weights and KV")
  const bool host_is_device = s.gpu.device_class == "cpu" || s.gpu.unified_memory;
  if (params.host_bandwidth > 0) {
    m->host_bw = params.host_bandwidth;
    m->host_bw_basis = num(m->host_bw / 1e9, 4) + " GB/s (--host-bandwidth)";
  } else if (host_is_device && s.gpu.memory_bandwidth_bytes_per_s > 0) {
    // a CPU host reads its own memory at the share its threads reach (cpu_bw_eff), whichever term names the layers
    m->host_bw = static_cast<double>(s.gpu.memory_bandwidth_bytes_per_s) * (cpu_host ? c.cpu_bw_eff : 1.0);
    m->host_bw_basis = gb_s(static_cast<double>(s.gpu.memory_bandwidth_bytes_per_s)) + (cpu_host ? " x CPU " + num(c.cpu_bw_eff, 2) : "") + " (" +
                       s.gpu.id + ": the host's own memory)";
  } else {
    m->host_bw = kDefaultHostBandwidth;
    m->host_bw_basis = num(m->host_bw / 1e9, 4) + " GB/s (default: dual-channel DDR5-5600, 2 x 8 B x 5600 MT/s)";
  }
  m->pcie = s.gpu.pcie_bytes_per_s > 0 ? s.gpu.pcie_bytes_per_s : 32e9;
  m->pcie_basis = "PCIe " + num(m->pcie / 1e9, 4) + " GB/s" + (s.gpu.pcie_bytes_per_s > 0 ? "" : " (no figure in the profile: PCIe 4.0 x16)");
  const EngineReport& er = p.engine();
  if (llamacpp) {
    m->cpu_routed = static_cast<double>(er.cpu_expert_bytes);
    m->cpu_dense = static_cast<double>(er.cpu_weight_bytes - er.cpu_expert_bytes);
    const i64 kv_all = add(add(er.k_bytes, er.v_bytes, "KV bytes"), er.state_bytes, "KV bytes");
    m->host_kv_share = kv_all > 0 ? std::clamp(static_cast<double>(er.host_kv_bytes) / static_cast<double>(kv_all), 0.0, 1.0) : 0.0;
    m->ubatch = std::max<i64>(1, s.engine.ubatch_size);
  } else {
    m->streamed = static_cast<double>(er.host_weight_bytes);
  }
  m->net_alpha = c.ar_alpha_network_s;
  m->net_beta = c.network_bytes_per_s * c.link_eff;
  m->link_basis += ", " + (one_shot    ? num(m->ar_alpha * 1e6, 3) + " us (one-shot all-reduce kernel)"
                           : pcie_ring ? num(c.ar_alpha_pcie_s * 1e6, 3) + " us + " + std::to_string(m->ar_hops) + " ring steps x " +
                                             num(c.ar_step_pcie_s * 1e6, 3) + " us (NCCL over PCIe)"
                                       : num(m->ar_alpha * 1e6, 3) + " us per hop x " + std::to_string(m->ar_hops) + " hops (NCCL)") +
                   ", " + gb_s(m->ar_beta);
  if (m->nodes > 1)
    m->link_basis += "; " + std::to_string(m->nodes) + " nodes over the network, " +
                     std::to_string(m->net_hops) + " hop(s) x " +
                     num(m->net_alpha * 1e6, 3) + " us, " + gb_s(m->net_beta);
  impl_ = std::move(m);
}

std::vector<PerfTerm> StepTimeModel::terms(const StepBatch& b) const { return impl_->terms(b); }
i64 StepTimeModel::stages() const { return impl_->pp; }

bool StepTimeModel::prices_compute() const { return impl_->peak > 0 && impl_->attn_peak > 0; }


double StepTimeModel::step_s(const StepBatch& b) const { return impl_->work(b).stage() * static_cast<double>(impl_->pp); }

PerfResult estimate_perf(const Planner& p, i64 prompt_tokens, i64 output_tokens, i64 concurrency, const PerfParams& params) {
  const PlanSpec& s = p.spec();
  const StepTimeModel model(p, params);
  const StepTimeModel::Impl& m = *model.impl_;
  PerfResult r;
  r.bandwidth_efficiency = m.dense_eff;
  r.weight_efficiency = m.weight_eff;
  r.weight_kernel = m.kernel;
  r.compute_efficiency = m.compute_eff;
  r.step_overhead_s = m.step_overhead;
  r.bandwidth_bytes_per_s = m.bandwidth;
  r.peak_flops = m.peak;
  r.coefficients = m.c;
  // every published vLLM / SGLang run of an MLA model on CDNA 3 (MI300X / MI325X) without AMD's ATOM kernels took 2 to 4 x the
  // step these terms price (docs/performance-model.md "AMD Instinct GPUs": dstack, InferenceX #890, the SGLang
  // cookbook); no term prices it, so say so unless the user set the rates measured (--bw-efficiency, --step-overhead-us)
  if (m.rocm && s.gpu.architecture == "cdna3" && params.step_overhead_s < 0 && caches_mla(s.model))
    r.notes.push_back("published vLLM and SGLang runs of MLA models (DeepSeek-R1 / V3.1, Kimi-K2) on CDNA 3 GPUs (MI300X, MI325X) took 2-4 x this step "
                      "(performance-model.md \"AMD Instinct GPUs\"): read TPOT and throughput as a best case");

  const i64 B = std::max<i64>(1, ceil_div(std::max<i64>(concurrency, 1), s.parallel.dp));
  r.batch_per_replica = B;
  r.decode_context = prompt_tokens + output_tokens / 2;
  StepBatch dec;
  dec.decode_seqs = B;
  dec.decode_context_tokens = static_cast<double>(B) * static_cast<double>(r.decode_context);
  const StepTimeModel::Impl::Work w = m.work(dec);
  r.decode_terms = m.terms(dec);
  r.memory_time_s = w.t_w + w.t_kv + w.host();
  r.compute_time_s = std::max(w.t_lin, w.t_dq) + w.t_attn;
  r.comm_time_s = w.t_ar + w.t_ep + w.t_pp;
  r.overhead_time_s = w.t_launch + w.t_moe + w.t_engine;
  r.decode_step_s = w.stage();
  r.weight_bytes_read = w.q_bytes + w.d_bytes;  // the figures behind the terms
  r.host_weight_bytes_read = w.host_bytes + w.pcie_bytes;
  r.host_bandwidth_bytes_per_s = m.host_bw;
  r.kv_bytes_read = w.kv_bytes;
  r.decode_flops = w.lin_flops + w.attn_flops;
  const double mem = r.memory_time_s, cmp = r.compute_time_s;
  const double biggest = std::max({mem, cmp, r.comm_time_s, r.overhead_time_s});
  r.decode_bound = biggest == r.comm_time_s ? "communication" : biggest == r.overhead_time_s ? "overhead" : cmp > mem ? "compute" : "memory bandwidth";
  if (m.peak == 0 && r.decode_bound == "memory bandwidth") r.decode_bound = "memory bandwidth (no TFLOP/s to check compute)";
  const double stages = static_cast<double>(m.pp);
  r.tpot_s = r.decode_step_s * stages;
  // llama.cpp splits one replica over its GPU count (layer split: the GPUs take turns, so the step is the model's)
  const double gpus_per_replica = static_cast<double>(s.engine.kind == EngineKind::llamacpp ? s.engine.gpu_count : s.parallel.tp * s.parallel.pp);
  // the deployment decodes its C sequences (the busiest replica's B = ceil(C / dp) sets the step; the others run
  // fewer), not B on every replica: C = 1 over dp 8 is one sequence's tokens; per GPU is that over every GPU
  const double seqs = static_cast<double>(std::max<i64>(concurrency, 1));
  r.decode_tokens_per_s = seqs / r.tpot_s;
  r.decode_tokens_per_s_per_gpu = r.decode_tokens_per_s / (gpus_per_replica * static_cast<double>(s.parallel.dp));

  // prefill of one prompt: the serving engines take at most max_num_batched_tokens of it a step (vLLM's token budget,
  // SGLang's chunked_prefill_size, TensorRT-LLM's max_num_tokens), so a longer prompt is prefilled in chunks, each a
  // step that reads the weights again and attends over the chunks before it; llama.cpp and the engines without a budget
  // in one step (attention over the causal triangle)
  const double P = static_cast<double>(std::max<i64>(prompt_tokens, 1));
  const i64 budget = s.engine.kind == EngineKind::llamacpp ? 0 : s.engine.max_num_batched_tokens;
  const i64 prompt = std::max<i64>(prompt_tokens, 1);
  const i64 n_chunks = budget > 0 ? ceil_div(prompt, budget) : 1;
  const i64 chunk_len = budget > 0 ? std::min(prompt, budget) : prompt;
  // the terms show the chunks' seconds summed (a term any chunk has is shown) beside the last chunk's quantities
  StepTimeModel::Impl::Work summed, last;
  StepBatch last_batch;
  r.prefill_flops = 0;
  r.ttft_s = 0;
  for (i64 i = 0; i < n_chunks; ++i) {
    StepBatch pre;
    const double before = static_cast<double>(i * chunk_len);
    const double n = static_cast<double>(std::min(chunk_len, prompt - i * chunk_len));
    pre.prefill_tokens = static_cast<i64>(n);
    pre.prefill_seqs = 1;
    pre.prefill_attention_pairs = n * (before + (n + 1.0) / 2.0);
    last = m.work(pre);
    last_batch = pre;
    summed.add_times(last);
    r.prefill_flops += last.lin_flops + last.attn_flops;
    r.ttft_s += last.stage() * stages;
  }
  last.take_times(summed);
  r.prefill_terms = m.terms(last, last_batch);
  if (n_chunks > 1)
    for (PerfTerm& t : r.prefill_terms)
      t.basis = "summed over " + std::to_string(n_chunks) + " chunks of max_num_batched_tokens " + std::to_string(budget) + "; the last chunk: " + t.basis;
  r.prefill_chunks = n_chunks;
  r.prefill_bound = last.t_lin + last.t_attn > last.t_w + last.t_kv + last.host() ? "compute" : "memory bandwidth";
  if (m.peak == 0) {
    r.prefill_bound = "unknown (no TFLOP/s in the GPU profile: give --gpu-tflops)";
    r.ttft_s = -1;  // prefill is compute bound: without a peak there is no estimate
  } else if (vllm_v0_async_output(s.engine, s.parallel.pp, s.gpu.device_class == "cpu")) {
    // vLLM V0's async output processor hands the first token over when the next step (the first decode) ends
    r.ttft_s += r.tpot_s;
    r.prefill_terms.push_back({"async_output", r.tpot_s, "vLLM V0 (0.6+): the first token reaches the client when the next step, one decode step, ends"});
  }

  // a static batch: B prompts prefilled in chunks of max_num_batched_tokens, then output_tokens decode steps
  const i64 chunk = s.engine.max_num_batched_tokens > 0 ? s.engine.max_num_batched_tokens : 8192;
  const double all_prompt = static_cast<double>(B) * P;
  const double chunks = std::ceil(all_prompt / static_cast<double>(chunk));
  StepBatch one;
  one.prefill_tokens = static_cast<i64>(std::min(all_prompt, static_cast<double>(chunk)));
  one.prefill_seqs = 1;
  one.prefill_attention_pairs = static_cast<double>(B) * P * (P + 1.0) / 2.0 / std::max(chunks, 1.0);
  const double prefill_all = m.peak > 0 ? m.work(one).stage() * stages * chunks : 0;
  r.batch_time_s = prefill_all + r.tpot_s * static_cast<double>(std::max<i64>(output_tokens, 0));
  r.output_tokens_per_s = r.batch_time_s > 0 ? static_cast<double>(B) * static_cast<double>(output_tokens) / r.batch_time_s * static_cast<double>(s.parallel.dp) : 0;
  if (m.peak == 0 && all_prompt > 0) r.batch_time_s = r.output_tokens_per_s = -1;  // its prefill is as unknown as TTFT
  return r;
}

}  // namespace kvplan
