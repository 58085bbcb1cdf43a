// Performance model: the time of one engine step on the most loaded GPU, term by term (weights
// read, KV read, compute, kernel launches, tensor-parallel all-reduce, expert all-to-all, pipeline
// hand-off, engine overhead), and from it TPOT, decode tokens/s, TTFT and a static batch's output
// throughput. Coefficients are fitted to published measurements (scripts/perf-fit.py over
// tests/data/perf/cases.json; docs/performance-model.md has the formulas, the fit and its error
// table) and can be overridden per run (--bw-efficiency, --compute-efficiency, --step-overhead-us,
// --perf-coefficients FILE, or a probe calibration).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kvplan/core/plan.hpp"

namespace kvplan {

/// The model's fitted constants (scripts/perf-cases.py --fit over tests/data/perf/cases.json, 2026-12-02;
/// docs/performance-model.md). Efficiencies are fractions of the GPU profile's datasheet figure.
struct PerfCoefficients {
  // fraction of memory bandwidth a decode GEMV reaches reading weights, by kernel family
  double weight_eff_dense = 0.729;  // bf16 / fp16 / fp32
  double weight_eff_fp8 = 0.755;    // fp8 W8A8 (per-tensor or block scales)
  double weight_eff_int8 = 0.696;   // int8 weight-only (dequantised in the GEMV)
  double weight_eff_int4 = 0.878;   // int4 group-quantised (AWQ / GPTQ / Marlin / bitsandbytes)
  double weight_eff_ggml = 0.95;    // llama.cpp block types (q8_0, q4_0, k-quants ...)
  double weight_eff_fp4 = 0.600;    // mxfp4 / nvfp4
  double kv_eff = 0.746;            // paged decode attention reading the KV cache
  double compute_eff = 0.708;       // fraction of the dense bf16/fp16 tensor peak the GEMMs and attention reach
  double compute_eff_fp8 = 0.477;   // fraction of the dense fp8 tensor peak fp8 W8A8 GEMMs reach
  // vLLM and SGLang: the linear layers take (weights^p + GEMM^p + dequant^p)^(1/p), not the largest of the three: their
  // PyTorch GEMMs overlap the weight stream with the tensor-core work imperfectly near the ridge point (batch 16-128);
  // TensorRT-LLM, llama.cpp and other engines keep the largest. Chosen on the vLLM load tests (docs/performance-model.md
  // "The linear layers of vLLM and SGLang")
  double gemm_overlap_p = 1.5;
  double unified_bw_eff = 0.893;    // LPDDR unified memory (Apple, DGX Spark, Strix Halo, Jetson): share of the bandwidth the GPU reaches
  double die_link_bw_eff = 0.920;   // on top of it, a GPU of two dies on LPDDR (Apple Ultra: half the memory behind UltraFusion)
  // a CPU host's llama.cpp decode: share of its DRAM channels' datasheet bandwidth (docs/performance-model.md "CPU hosts")
  double cpu_bw_eff = 0.60;
  // GDDR cards (GeForce, RTX workstation, L4 / L40 / A10 / A40): the serving engines' weight GEMVs and decode attention,
  // whose efficiencies above are fitted on HBM datacenter GPUs, reach this many times their share of a GDDR card's
  // bandwidth (at most 1); not llama.cpp, whose weight_eff_ggml is fitted on both (docs/performance-model.md "GDDR")
  double gddr_read_gain = 1.18;  // fitted 2026-12-06 (--fit-only gddr_read_gain) with the AccelMark and club-3090 rows
  double rocm_read_gain = 0.80;   // vLLM / SGLang on an AMD Instinct (CDNA) GPU: factor on the weight and KV read efficiencies; fitted 2026-12-07 (--fit-only rocm_read_gain) with the ROCm rows
  // weight-only quantised kernels of llama.cpp and other engines (gpt-fast, MLC) turn every weight back into a number
  // on the SMs' integer and FP32 lanes: weights dequantised per SM (AMD CU, Apple GPU core) per clock cycle
  double dequant_per_sm_cycle = 12.5;
  // NVIDIA GPUs below compute capability 7.0 (Pascal, Maxwell) issue INT32 and FP32 work on the same cores, where Volta
  // and later have a separate INT32 pipe (NVIDIA, Volta Tuning Guide 4.1.1; Volta whitepaper): their SMs dequantise this
  // share of dequant_per_sm_cycle; an AMD compute unit, with half a Pascal SM's shared lanes, half of that
  // (docs/performance-model.md "GPUs before Volta")
  double dequant_pre_volta = 0.72;  // fitted 2026-12-06 with dequant_k_low
  // llama.cpp's super-block types cost its mul_mat_vec_q more ALU work per weight than q4_0 / q8_0 (the 6-bit scales and
  // mins of a 256-weight super-block unpacked, q3_K's and q6_K's high bits merged in): the dequant term's weights count
  // this many times (docs/performance-model.md "Weight types in llama.cpp's kernels")
  double dequant_k = 1.0;       // q4_K, q5_K, q6_K: not refit, the cases that would move it disagree
  double dequant_k_low = 1.98;  // q3_K (q2_K 0.311 of the way from dequant_k): fitted 2026-12-06 with dequant_pre_volta
  // llama.cpp builds before b4114: f16 / bf16 / f32 weights its DMMV kernel multiplies per SM per clock cycle (fitted on
  // the May 2024 and January 2024 f16 llama-bench rows of A100, H100 PCIe and RTX 3090; docs/performance-model.md
  // "llama.cpp's DMMV")
  double dmmv_per_sm_cycle = 2.93;
  // llama.cpp's quantised matrix-matrix kernel (ggml-cuda MMQ: the activations quantised to q8_1, int8 tensor-core MMA,
  // compute capability 7.5 and later): the prompt's GEMM operations an SM completes per clock cycle. The geometric mean
  // of the four CUDA rows of llama.cpp's scoreboard, Llama-2-7B Q4_0 pp512 on H100, A100, RTX 4090 and RTX 3090
  // (docs/performance-model.md "llama.cpp's prompt GEMMs"), which the dense tensor peak misses by -41% to +296%
  double mmq_per_sm_cycle = 542;
  // the same kernel on NVIDIA GPUs of compute capability 6.1-6.x (Pascal with DP4A, no fp16 MMA: ggml-cuda's
  // ggml_cuda_should_use_mmq takes MMQ's dp4a path there at any batch): the geometric mean of the P40 rows of
  // JohannesGaessler's PR tables it was set on (docs/performance-model.md "llama.cpp's prompt GEMMs")
  double mmq_dp4a_per_sm_cycle = 261;
  // the same kernel on AMD GPUs with matrix cores (CDNA, RDNA 3 and later; ggml-cuda's HIP build: dp4a, MFMA or WMMA
  // MMQ, or rocBLAS where its switch picks it), per compute unit per clock cycle: the geometric mean of six ROCm
  // scoreboard rows (RX 7900 XTX, PRO W7900, MI100, MI210, MI300X, RX 9070 before b7148), which the dense fp16/bf16
  // peak misses by -44% to -74% (docs/performance-model.md "llama.cpp's prompt GEMMs")
  double mmq_amd_per_cu_cycle = 203;
  // RDNA 4 from b7148 (ggml-org/llama.cpp PR #17156, WMMA-MMQ kernels for RDNA 4): the geometric mean of the RX 9070 XT
  // and AI PRO R9700 scoreboard rows
  double mmq_rdna4_wmma_per_cu_cycle = 334;
  // per kernel launch (with CUDA graphs the launch gap and tail of each kernel; eager adds the launch;
  // steps that prefill run eagerly: engines capture graphs for decode batches)
  double kernel_s = 3.40e-6;
  double eager_kernel_s = 1.56e-5;
  // llama.cpp's own decode graphs on CUDA / ROCm, per kernel of llamacpp_decode_kernels' count for the build (its
  // prefill ubatches launch eagerly); refit 2026-12-06 with the count by build (docs/performance-model.md "llama.cpp's
  // kernels per token")
  double kernel_llamacpp_s = 1.62e-6;
  // what each decode kernel adds when llama.cpp launches them one by one (a build or GPU without its CUDA / HIP
  // graphs, see llamacpp_graphless_reason): the mean of six published before / after pairs of the PRs that turned
  // graphs on, each saved time over its build's kernels (docs/performance-model.md "llama.cpp without graphs");
  // derived, not fitted
  double eager_llamacpp_extra_s = 0.528e-6;
  // what each decode kernel adds in llama.cpp builds before b5922 (#14482, graph reuse), which built and allocated the
  // ggml graph again for every token (and before b5036, #9017, updated the captured CUDA graph too: the K / V copy
  // kernels' pointers and cudaGraphExecUpdate over every node): CPU work ahead of each token's launch
  // (docs/performance-model.md "llama.cpp's kernels per token")
  double graph_build_llamacpp_s = 0.311e-6;
  // Apple GPUs (Metal: no graphs; each kernel is encoded and dispatched in a command buffer), any engine
  double metal_kernel_s = 1.26e-5;
  // the serving engines' fused-MoE path (vLLM, SGLang, TensorRT-LLM), per MoE layer per step: routing (top-k), the
  // sort of tokens by expert and the grouped GEMMs' latency when each expert's slice is small (a few tokens, narrow
  // experts), beyond the kernel launches and the weight read (docs/performance-model.md "MoE layers")
  double moe_layer_s = 56.2e-6;
  // engine per-step overhead (scheduler, input preparation, sampling, detokenisation)
  double step_vllm_s = 0.000293;      // vLLM V1 (>= 0.10)
  double step_vllm_v0_s = 0.000970;   // vLLM V0 (< 0.10)
  double step_sglang_s = 0.00035;
  double step_trtllm_s = 0.000268;
  double step_llamacpp_s = 0.000470;
  double step_generic_s = 0.0003;
  // collectives: all-reduce latency (once per all-reduce in one NVLink / xGMI node; per hop, log2 ranks, across
  // nodes; over PCIe NCCL's ring, a fixed latency plus one per each of its 2 (n - 1) steps) and fraction of link
  // bandwidth reached
  double ar_alpha_nvlink_s = 10.1e-6;
  // fitted 2026-12-07 (least squares, the ring's form) to twelve published nccl-tests all_reduce_perf runs at 16 KB
  // on 2, 4 and 8 PCIe GPUs, less their bandwidth term (docs/performance-model.md "PCIe all-reduce latency")
  double ar_alpha_pcie_s = 17.1e-6;
  double ar_step_pcie_s = 1.71e-6;
  double ar_alpha_network_s = 30.0e-6;  // between nodes (InfiniBand / RoCE)
  double link_eff = 0.70;
  double network_bytes_per_s = 50e9;    // per GPU between nodes: 400 Gb/s (ConnectX-7 NDR)
  // serving (kvplan simulate, not the static plan): the API server's share of each request's TTFT and
  // E2E (HTTP, tokenisation, the hand-off to the engine process and the stream back) for the Python
  // servers (vLLM, SGLang, TensorRT-LLM): the median gap of the unsaturated vLLM open-loop cases
  // (scripts/sim-cases.py --fit-frontend; docs/simulation.md "Front end")
  double frontend_s = 0.0232;
  // llama-server parses, tokenises and streams in C++ in the engine's own process: not measured, 0
  double frontend_llamacpp_s = 0;
  // vLLM V0 (before 0.8): once the simulator holds each token for the async output processor's next step
  // (SimConfig::async_output), the two V0 open-loop cases leave +4.5 and -8.4 ms (mean -2 ms): nothing measurable
  double frontend_vllm_v0_s = 0;
};

/// The coefficients used when nothing overrides them.
const PerfCoefficients& default_perf_coefficients();

/// Every coefficient by its name (the keys of a --perf-coefficients file, in declaration order).
struct PerfCoefficientField {
  const char* name;
  double PerfCoefficients::*member;
  const char* meaning;
  bool zero_allowed = false;  // 0 is meaningful (an absent time, or a rate whose 0 turns its term off); the rest divide or scale
  bool share = false;         // a share of a peak (bandwidth, TFLOP/s, link): at most 1, as --bw-efficiency
  bool exponent = false;      // the exponent of a p-norm: at least 1
};
const std::vector<PerfCoefficientField>& perf_coefficient_fields();

/// Host memory bandwidth when neither --host-bandwidth nor the profile gives one: a desktop with dual-channel
/// DDR5-5600, 2 channels x 8 B x 5600e6 transfers/s = 89.6e9 B/s (profiles/gpus/cpu-desktop-ddr5.json).
constexpr double kDefaultHostBandwidth = 2.0 * 8.0 * 5600e6;

/// Why llama.cpp launches its decode kernels one by one on `gpu` (a build before its CUDA / HIP graphs reached that
/// GPU), or "" when it replays them as one graph. Graphs: NVIDIA compute capability >= 8.0 from b2822 (#6766),
/// 7.x from b10042 (#25749); AMD from b8893 (#22254, GGML_HIP_GRAPHS on by default); an unversioned llama.cpp is the
/// newest. Apple GPUs (Metal) and CPU hosts have no graphs to speak of: "". `moe`: the model has MoE layers, whose
/// mul_mat_id switched CUDA graphs off before b5170 (#13014).
std::string llamacpp_graphless_reason(const GpuSpec& gpu, const EngineSettings& engine, bool moe = false);

/// Whether llama.cpp runs decode attention as FLASH_ATTN_EXT: -fa on / off as given; auto (the default) is on from
/// b6325 (#15434, FA by default; on a GPU holding each layer's KV it resolves to on) and off before, when -fa
/// defaulted to off (and before b2771 llama.cpp had no flash attention). llama-bench kept -fa 0 until b9439: its
/// measurements give -fa explicitly.
bool llamacpp_flash_attention(const EngineSettings& engine);

/// The kernels llama.cpp's CUDA / HIP backend launches for one decode token of a llama-style layer (norm, q / k / v,
/// rope, KV store, attention, o, residual, norm, gate / up / act, down, residual), by build: each fusion that
/// landed takes its kernels off (docs/performance-model.md "llama.cpp's kernels per token").
struct LlamacppKernels {
  i64 per_layer = 0;  // one attention + MLP layer
  i64 per_moe_layer = 0;  // what an MoE layer's FFN block (router to residual add) adds to the dense one
  i64 per_token = 0;  // outside the layers: final norm, output matmul, the last layer's output-row gathers, mask cast
  std::string basis;  // the era and its counts, for the printed term
};
/// `quantised`: the layers' matrices go through MMVQ (a quantize_q8_1 kernel before each); else f16 / bf16 / f32
/// mat-vec kernels. `gqa`: fewer KV heads than query heads (builds before b4114 ran attention through batched cuBLAS
/// on GPUs of compute capability 7.0 and up, which needs a pointer-table kernel then; Pascal took one mat-vec kernel).
/// `experts_active`: the MoE layers' top-k (0: a dense model).
LlamacppKernels llamacpp_decode_kernels(const GpuSpec& gpu, const EngineSettings& engine, bool quantised, bool gqa,
                                        i64 experts_active = 0);

/// llama.cpp runs an op whose weights sit in host memory on the GPU (copying the weights over PCIe) when its batch
/// has at least this many tokens, else on the CPU (ggml-cuda.cu ggml_backend_cuda_device_offload_op,
/// GGML_OP_OFFLOAD_MIN_BATCH, default 32).
constexpr long long kLlamaOpOffloadMinBatch = 32;

struct PerfParams {
  double bandwidth_efficiency = 0;  // replaces weight_eff_dense and kv_eff (quantised kernels keep their ratio); 0: fitted
  double host_bandwidth = 0;        // host memory bytes/s (--host-bandwidth); 0: a CPU or unified profile's, else kDefaultHostBandwidth
  double compute_efficiency = 0;    // replaces compute_eff; 0: fitted
  double step_overhead_s = -1;      // replaces the engine's per-step overhead; < 0: fitted
  PerfCoefficients coefficients = default_perf_coefficients();
};

/// One named part of a step's time, with the formula that gave it.
struct PerfTerm {
  std::string name;
  double seconds = 0;
  std::string basis;
};

struct PerfResult;

/// Work of one engine iteration (step) on one replica, as a scheduler forms it.
struct StepBatch {
  i64 decode_seqs = 0;                  // sequences producing one token this step
  i64 prefill_tokens = 0;               // prompt tokens computed this step (all chunks)
  i64 prefill_seqs = 0;                 // sequences with a prefill chunk this step
  double decode_context_tokens = 0;     // sum over decode sequences of the tokens in their cache (KV read)
  double prefill_attention_pairs = 0;   // sum over chunks of chunk x (tokens already cached + (chunk + 1) / 2)
};

/// Time of one engine step on one replica for any mix of decode sequences and prefill chunks: the
/// terms estimate_perf shows (the simulator's clock). Built once per deployment; step_s is cheap.
class StepTimeModel {
 public:
  StepTimeModel(const Planner& p, const PerfParams& params);
  /// Seconds for the whole step through every pipeline stage.
  double step_s(const StepBatch& b) const;
  /// The same, term by term (one stage; `stages` = pipeline stages the time is multiplied by).
  std::vector<PerfTerm> terms(const StepBatch& b) const;
  i64 stages() const;
  /// False when the GPU profile has no dense TFLOP/s: GEMMs and attention FLOPs are then left out of every step
  /// (prefill and batched decode priced at their reads only).
  bool prices_compute() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
  friend PerfResult estimate_perf(const Planner&, i64, i64, i64, const PerfParams&);
};

struct PerfResult {
  i64 batch_per_replica = 0;
  i64 decode_context = 0;        // tokens per sequence the decode estimate uses (prompt + output / 2)
  double weight_bytes_read = 0;  // per decode step on the most loaded GPU
  double kv_bytes_read = 0;
  double decode_flops = 0;
  double memory_time_s = 0, compute_time_s = 0;
  double comm_time_s = 0;        // tensor-parallel all-reduce + expert all-to-all + pipeline hand-off per token
  double overhead_time_s = 0;    // kernel launches + the MoE layers' fixed time + engine step overhead
  double decode_step_s = 0;      // one stage
  double tpot_s = 0;             // time per output token (all pipeline stages)
  double decode_tokens_per_s_per_gpu = 0;
  double decode_tokens_per_s = 0;  // whole deployment
  double prefill_flops = 0;
  double ttft_s = 0;             // -1 when the GPU profile has no TFLOP/s
  i64 prefill_chunks = 1;        // steps one prompt's prefill takes (max_num_batched_tokens chunks; llama.cpp: 1)
  double batch_time_s = 0;       // a static batch: prefill of every prompt, then output_tokens decode steps (-1 as ttft_s)
  double output_tokens_per_s = 0;  // that batch's output tokens / batch_time_s (whole deployment; -1 as ttft_s)
  std::string decode_bound;      // "memory bandwidth", "compute", "communication" or "overhead"
  std::string prefill_bound;
  double bandwidth_efficiency = 0, compute_efficiency = 0, step_overhead_s = 0;
  double weight_efficiency = 0;  // of the weight kernel family used
  std::string weight_kernel;     // dense, fp8, int8, int4, ggml, fp4
  double peak_flops = 0;
  double bandwidth_bytes_per_s = 0;
  double host_bandwidth_bytes_per_s = 0;  // host memory, for weights and KV held there (host_weights, host_kv_read)
  double host_weight_bytes_read = 0;      // per decode step: by the CPU (llama.cpp) or over PCIe (--cpu-offload-gb)
  std::vector<PerfTerm> decode_terms;   // one decode step of one stage
  std::vector<PerfTerm> prefill_terms;  // one prompt's prefill on one stage
  PerfCoefficients coefficients;        // as used (fitted defaults or overrides)
  /// Where published runs say the figures are optimistic beyond the model's terms (docs/performance-model.md):
  /// vLLM / SGLang running an MLA model on an AMD GPU.
  std::vector<std::string> notes;
};

/// Estimates decode and prefill for `concurrency` requests of prompt + output tokens (formulas in
/// StepTimeModel; docs/performance-model.md): decode step at B = concurrency / dp sequences of
/// prompt + output / 2 tokens, TPOT = stages x step; TTFT = one prompt's prefill step; batch time =
/// prefill of B prompts in chunks of max_num_batched_tokens + output_tokens decode steps.
PerfResult estimate_perf(const Planner& p, i64 prompt_tokens, i64 output_tokens, i64 concurrency, const PerfParams& params);

}  // namespace kvplan
