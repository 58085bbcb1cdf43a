// The performance model term by term, with every figure worked by hand from the formulas in
// docs/performance-model.md and the coefficients set in the test (so a refit cannot move them).
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "kvplan/core/perf.hpp"
#include "kvplan/core/transform.hpp"
#include "kvplan/core/weights.hpp"
#include "perf_helpers.hpp"
#include "plan_helpers.hpp"

using namespace kvplan;
using kvtest::find_term;
using kvtest::hand_params;
using kvtest::term;

namespace {

Planner planner(const std::string& model, const std::string& gpu, Parallel par = {}, const std::string& version = "") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.version = version;
  PlanSpec s = kvtest::spec(model, gpu, e);
  s.parallel = par;
  return Planner(s);
}

// Llama-3.1-8B: 8,030,261,248 parameters, of which the untied embedding 128,256 x 4,096 = 525,336,576
// is looked up, not read; 32 layers; KV 131,072 B per token in bf16.
constexpr double kLlama8bRead = 2.0 * (8030261248.0 - 525336576.0);
constexpr double kH100 = 3.35e12;
// its GEMM work: the 7,504,924,672 parameters a token runs through besides the lookup, of which the output head
// (lm_head 128,256 x 4,096 = 525,336,576) runs once per sequence in a step (the row sampled), not once per prompt token
constexpr double kLlama8bHead = 525336576.0;
constexpr double kLlama8bBody = 8030261248.0 - 525336576.0 - kLlama8bHead;
// a prefill of n tokens of one sequence: 2 x body x n + 2 x head x 1
constexpr double llama8b_prefill_flops(double n) { return 2.0 * kLlama8bBody * n + 2.0 * kLlama8bHead; }

}  // namespace

TEST_CASE("decode step of a dense model: weights and KV read once per step plus launches and engine time", "[perf]") {
  const Planner p = planner("llama-3.1-8b", "h100-sxm");
  const PerfResult r = estimate_perf(p, 1000, 0, 1, hand_params());
  const double t_w = kLlama8bRead / (kH100 * 0.5);
  const double t_kv = 1000.0 * 131072 / (kH100 * 0.5);
  CHECK(r.weight_bytes_read == Approx(kLlama8bRead));
  CHECK(r.kv_bytes_read == Approx(1000.0 * 131072));
  CHECK(term(r.decode_terms, "weights") == Approx(t_w));
  CHECK(term(r.decode_terms, "kv_read") == Approx(t_kv));
  // 9 kernels per layer x 32 + 4 per step, 1 us each with CUDA graphs; vLLM V1 100 us per step
  CHECK(term(r.decode_terms, "kernel_launches") == Approx((9 * 32 + 4) * 1e-6));
  CHECK(term(r.decode_terms, "engine_step") == Approx(100e-6));
  CHECK(term(r.decode_terms, "tp_all_reduce") == -1);  // one GPU: no collective term
  // the GEMMs (2 x 8.03e9 FLOP at 989e12 x 0.5) hide under the weight read; attention under the KV read
  CHECK(r.tpot_s == Approx(t_w + t_kv + (9 * 32 + 4) * 1e-6 + 100e-6));
  CHECK(r.decode_bound == "memory bandwidth");
  CHECK(r.decode_tokens_per_s_per_gpu == Approx(1.0 / r.tpot_s));
  // a bigger batch reads the same weights once: throughput rises
  CHECK(estimate_perf(p, 1000, 0, 64, hand_params()).decode_tokens_per_s_per_gpu > 20 * r.decode_tokens_per_s_per_gpu);
}

TEST_CASE("vLLM and SGLang join the linear layers' weight read and GEMM as a p-norm, TensorRT-LLM takes the larger", "[perf]") {
  // Llama-3.1-8B on an H100 at batch 256, 1,000 tokens each: weights 15.01 GB / (3.35e12 x 0.5) = 8.96 ms; GEMMs
  // 2 x 8.03e9 x 256 FLOP / (989e12 x 0.5) = 8.31 ms. vLLM: sqrt(8.96^2 + 8.31^2) = 12.22 ms for the linear layers;
  // TensorRT-LLM: 8.96 ms. KV 256 x 1000 x 131,072 B / (3.35e12 x 0.5) = 20.03 ms against attention FLOPs far below.
  const double t_w = kLlama8bRead / (kH100 * 0.5), t_lin = 2.0 * (kLlama8bBody + kLlama8bHead) * 256 / (989e12 * 0.5);
  const double t_kv = 256.0 * 1000 * 131072 / (kH100 * 0.5);
  const auto fixed = [](const PerfResult& r) { return term(r.decode_terms, "kernel_launches") + term(r.decode_terms, "engine_step"); };
  const PerfResult v = estimate_perf(planner("llama-3.1-8b", "h100-sxm"), 1000, 0, 256, hand_params());
  CHECK(term(v.decode_terms, "weights") == Approx(t_w));
  CHECK(term(v.decode_terms, "linear_compute") == Approx(t_lin));
  CHECK(v.tpot_s == Approx(std::sqrt(t_w * t_w + t_lin * t_lin) + t_kv + fixed(v)));
  CHECK(find_term(v.decode_terms, "linear_compute")->basis.find("p = 2 (gemm_overlap_p)") != std::string::npos);
  PerfParams cubic = hand_params();
  cubic.coefficients.gemm_overlap_p = 3;
  const PerfResult v3 = estimate_perf(planner("llama-3.1-8b", "h100-sxm"), 1000, 0, 256, cubic);
  CHECK(v3.tpot_s == Approx(std::cbrt(t_w * t_w * t_w + t_lin * t_lin * t_lin) + t_kv + fixed(v3)));
  const PerfResult t = estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::trtllm))), 1000, 0,
                                     256, hand_params());
  CHECK(t.tpot_s == Approx(t_w + t_kv + fixed(t)));
}

TEST_CASE("the output head runs once per sequence in a step: a prompt pays it once, each decode token once", "[perf]") {
  // Llama-3.2-1B, tied embeddings: 16 layers x (attention 2048 x 2048 x 2 + 2048 x 512 x 2 = 10,485,760; MLP
  // 3 x 2048 x 8192 = 50,331,648; two norms 4,096) + final norm 2,048 = 973,146,112 parameters a token runs through;
  // the embedding 128,256 x 2,048 = 262,668,288 is looked up, and as the tied output head it runs on the sampled rows
  const double body = 16.0 * (10485760 + 50331648 + 4096) + 2048, head = 128256.0 * 2048;
  const double rate = 989e12 * 0.5;  // H100 bf16 x compute_eff (hand_params)
  const Planner p = planner("llama-3.2-1b", "h100-sxm");
  const PerfResult pre = estimate_perf(p, 1000, 0, 1, hand_params());  // one 1,000-token prompt
  CHECK(term(pre.prefill_terms, "linear_compute") == Approx((2.0 * body * 1000 + 2.0 * head * 1) / rate));
  const PerfResult dec = estimate_perf(p, 1000, 0, 8, hand_params());  // 8 sequences decoding one token each
  CHECK(term(dec.decode_terms, "linear_compute") == Approx(2.0 * (body + head) * 8 / rate));
  CHECK(find_term(pre.prefill_terms, "linear_compute")->basis.find("output head x 1 sequences") != std::string::npos);
}

TEST_CASE("a prompt longer than the token budget is prefilled in chunks, each a step of its own", "[perf]") {
  // vLLM with max_num_batched_tokens 8192 and a 20,000-token prompt: steps of 8,192, 8,192 and 3,616 tokens, the k-th
  // attending over the 8,192 (k - 1) tokens before it: n x (before + (n + 1) / 2) query-key pairs
  EngineSettings e = kvtest::engine(EngineKind::vllm);
  e.max_num_batched_tokens = 8192;
  const Planner p(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  const PerfParams hp = hand_params();
  const PerfResult r = estimate_perf(p, 20000, 0, 1, hp);
  const StepTimeModel m(p, hp);
  double sum = 0;
  std::map<std::string, double> term_sum;  // each term's seconds over the three chunks
  for (const double before : {0.0, 8192.0, 16384.0}) {
    const double n = std::min(8192.0, 20000.0 - before);
    StepBatch b;
    b.prefill_tokens = static_cast<i64>(n);
    b.prefill_seqs = 1;
    b.prefill_attention_pairs = n * (before + (n + 1) / 2);
    sum += m.step_s(b);
    for (const PerfTerm& t : m.terms(b)) term_sum[t.name] += t.seconds;
  }
  CHECK(r.prefill_chunks == 3);
  CHECK(r.ttft_s == Approx(sum));
  REQUIRE(r.prefill_terms.size() == term_sum.size());
  for (const PerfTerm& t : r.prefill_terms) CHECK(t.seconds == Approx(term_sum[t.name]));
  // one step of the whole prompt would read the weights once: the chunks cost more
  e.max_num_batched_tokens = 32768;
  const PerfResult whole = estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", e)), 20000, 0, 1, hp);
  CHECK(whole.prefill_chunks == 1);
  CHECK(whole.ttft_s < r.ttft_s);
  CHECK(find_term(r.prefill_terms, "weights")->basis.rfind("summed over 3 chunks", 0) == 0);
  CHECK(term(r.prefill_terms, "weights") == Approx(3 * term(whole.prefill_terms, "weights")));
}

TEST_CASE("vLLM V0 releases carry their own per-step overhead", "[perf]") {
  const PerfResult v0 = estimate_perf(planner("llama-3.1-8b", "h100-sxm", {}, "0.6.3"), 1000, 0, 1, hand_params());
  const PerfResult v1 = estimate_perf(planner("llama-3.1-8b", "h100-sxm", {}, "0.11.0"), 1000, 0, 1, hand_params());
  CHECK(term(v0.decode_terms, "engine_step") == Approx(1e-3));
  CHECK(v0.tpot_s - v1.tpot_s == Approx(1e-3 - 100e-6));
}

TEST_CASE("tensor parallel adds two all-reduces per layer over the GPU's link", "[perf][tp]") {
  // llama-3.1-70b at TP2 on H100 SXM: NVLink 450e9 B/s per direction x link_eff 0.5; one hop of 10 us;
  // each all-reduce moves 2 (n - 1) / n x hidden 8192 x 2 B = 16,384 B per token; 80 layers x 2 = 160
  const Planner p = planner("llama-3.1-70b", "h100-sxm", Parallel{2, 1, 1, 1});
  const PerfResult r = estimate_perf(p, 1000, 0, 1, hand_params());
  const double one = 10e-6 + 1.0 * 16384.0 / (450e9 * 0.5);
  CHECK(term(r.decode_terms, "tp_all_reduce") == Approx(160 * one));
  CHECK(r.comm_time_s == Approx(160 * one));
  // TP8 in one NVLink node: still one latency (the engines' one-shot all-reduce kernel reads the 7 peers at
  // once), 2 x 7/8 of the message
  const PerfResult r8 = estimate_perf(planner("llama-3.1-70b", "h100-sxm", Parallel{8, 1, 1, 1}), 1000, 0, 1, hand_params());
  CHECK(term(r8.decode_terms, "tp_all_reduce") == Approx(160 * (10e-6 + 2.0 * 7 / 8 * 16384.0 / (450e9 * 0.5))));
  CHECK(find_term(r8.decode_terms, "tp_all_reduce")->basis.find("one-shot") != std::string::npos);
  // over PCIe (L40S: no NVLink, PCIe 4.0 x16 32e9 B/s x link_eff 0.5) NCCL's ring: 20 us + 2 (8 - 1) = 14 steps x 2 us
  const PerfResult pcie = estimate_perf(planner("llama-3.1-70b", "l40s", Parallel{8, 1, 1, 1}), 1000, 0, 1, hand_params());
  CHECK(term(pcie.decode_terms, "tp_all_reduce") == Approx(160 * (20e-6 + 14 * 2e-6 + 2.0 * 7 / 8 * 16384.0 / (32e9 * 0.5))));
  CHECK(find_term(pcie.decode_terms, "tp_all_reduce")->basis.find("14 ring steps") != std::string::npos);
  const PerfResult pcie2 = estimate_perf(planner("llama-3.1-70b", "l40s", Parallel{2, 1, 1, 1}), 1000, 0, 1, hand_params());
  CHECK(term(pcie2.decode_terms, "tp_all_reduce") == Approx(160 * (20e-6 + 2 * 2e-6 + 1.0 * 16384.0 / (32e9 * 0.5))));
}

TEST_CASE("the fitted PCIe all-reduce latency stays within the published nccl-tests spread", "[perf][tp]") {
  // nccl-tests all_reduce_perf, 16 KB, out of place, one process driving the GPUs (graph 0), PCIe only; the twelve
  // runs of docs/performance-model.md "PCIe all-reduce latency", lowest and highest per GPU count:
  // 2 GPUs 17.11 us (2 x RTX 2080 Ti, Anthony-Hoo.github.io posts/AutoDL_Multi-GPU_Interconnection_Test.md) to
  // 23.77 us (2 x RTX 4090, NCCL 2.21.5, SHM); 4 GPUs 21.03 us (4 x RTX 4090 with P2P, pptest_driver README) to
  // 32.21 us (4 x RTX 4090, kalavai-net/kalavai-client scripts/README.md); 8 GPUs 38.06 us (8 x RTX 5090,
  // aikitoria/open-gpu-kernel-modules README.md) to 43.19 us (8 x RTX 4090, "RTX4090 GPUDirect P2P Unlocked!",
  // 2025-02-07). Each all-reduce the model prices for one token of Llama-3.1-70B (16,384 B) on RTX 4090s lies in
  // the published range of its GPU count
  const struct {
    int tp;
    double lo_us, hi_us;
  } published[] = {{2, 17.11, 23.77}, {4, 21.03, 32.21}, {8, 38.06, 43.19}};
  for (const auto& row : published) {
    const PerfResult r = estimate_perf(planner("llama-3.1-70b", "rtx-4090", Parallel{row.tp, 1, 1, 1}), 1000, 0, 1, PerfParams{});
    const double one_us = term(r.decode_terms, "tp_all_reduce") / 160 * 1e6;
    INFO("TP " << row.tp << ": " << one_us << " us a 16 KB all-reduce");
    CHECK(one_us >= row.lo_us);
    CHECK(one_us <= row.hi_us);
  }
}

TEST_CASE("TP16 spans two nodes and its step is dominated by collectives", "[perf][tp]") {
  // llama-3.1-8b --tp 16: a sixteenth of the weights is ~0.94 GB (0.56 ms at 3.35e12 x 0.5), but 64
  // all-reduces, handed to NCCL across nodes, each pay 3 NVLink hops and 1 network hop: 64 x (30 + 20) us = 3.2 ms plus bytes
  const Planner p = planner("llama-3.1-8b", "h100-sxm", Parallel{16, 1, 1, 1});
  const PerfResult r = estimate_perf(p, 1000, 0, 1, hand_params());
  const double msg = 4096.0 * 2;
  const double one = 3 * 10e-6 + 2.0 * 7 / 8 * msg / (450e9 * 0.5) + 1 * 20e-6 + 2.0 * 1 / 2 * (msg / 8) / (50e9 * 0.5);
  CHECK(term(r.decode_terms, "tp_all_reduce") == Approx(64 * one));
  CHECK(find_term(r.decode_terms, "tp_all_reduce")->basis.find("2 nodes over the network, 1 hop(s) x 20 us") != std::string::npos);
  CHECK(r.decode_bound == "communication");
  CHECK(r.comm_time_s > 2 * r.memory_time_s);
  // with the fitted coefficients too
  const PerfResult fitted = estimate_perf(p, 1000, 0, 1, PerfParams{});
  CHECK(fitted.decode_bound == "communication");
}

TEST_CASE("quantised weights are read at their kernel's efficiency and fp8 GEMMs at the fp8 peak", "[perf]") {
  auto e = kvtest::engine(EngineKind::vllm);
  PlanSpec s = kvtest::spec("llama-3.1-8b", "h100-sxm", e);
  apply_weight_format(s.model, "int8", "test");
  const PerfResult r = estimate_perf(Planner(s), 1000, 0, 1, hand_params());
  CHECK(r.weight_kernel == "int8");
  // every linear layer at 1 B per weight read at 0.25; norms (and the lm_head) bf16 at 0.5
  double quant = 0, dense = 0;
  for (const auto& part : count_params(Planner(s).rank_model()).parts) {
    if (part.name == "embedding") continue;
    const double b = static_cast<double>(part_weight_bytes(Planner(s).rank_model(), part));
    const bool packed = part.quantisable;
    (packed ? quant : dense) += packed ? static_cast<double>(part.matrix) + 2.0 * static_cast<double>(part.vector) : b;
  }
  CHECK(term(r.decode_terms, "weights") == Approx(quant / (kH100 * 0.25) + dense / (kH100 * 0.5)));

  PlanSpec f = kvtest::spec("llama-3.1-8b", "h100-sxm", e);
  apply_weight_format(f.model, "fp8", "test");
  // prefill of 4096 tokens: 2 x body x 4096 + 2 x head x 1 at the fp8 peak 1979e12 x 0.25
  const PerfResult pf = estimate_perf(Planner(f), 4096, 0, 1, hand_params());
  CHECK(term(pf.prefill_terms, "linear_compute") == Approx(llama8b_prefill_flops(4096) / (1979e12 * 0.25)));
  // prefill runs eagerly: 292 kernels x 10 us
  CHECK(term(pf.prefill_terms, "kernel_launches") == Approx(292 * 10e-6));
}

TEST_CASE("NVFP4 weights run their GEMMs at the fp4 tensor rate on Blackwell and at the bf16 rate on Hopper", "[perf][fp4]") {
  auto e = kvtest::engine(EngineKind::vllm);
  // prefill of 4096 tokens: 2 x 6,979,588,096 x 4096 + the output head once
  const double flops = llama8b_prefill_flops(4096);
  PlanSpec b = kvtest::spec("llama-3.1-8b", "b200", e);
  apply_weight_format(b.model, "nvfp4", "test");
  const PerfResult rb = estimate_perf(Planner(b), 4096, 0, 1, hand_params());
  CHECK(term(rb.prefill_terms, "linear_compute") == Approx(flops / (9000e12 * 0.25)));  // B200 fp4 9 PFLOP/s x compute_eff_fp8
  PlanSpec h = kvtest::spec("llama-3.1-8b", "h100-sxm", e);
  apply_weight_format(h.model, "nvfp4", "test");
  const PerfResult rh = estimate_perf(Planner(h), 4096, 0, 1, hand_params());
  CHECK(term(rh.prefill_terms, "linear_compute") == Approx(flops / (989e12 * 0.5)));  // no fp4 cores: W4A16 at bf16 x compute_eff
}

TEST_CASE("a GPU without bf16 tensor cores (Turing) runs a bf16 model's GEMMs at its fp16 rate", "[perf][turing]") {
  // TITAN RTX: bf16 null, fp16 (FP32 accumulate) 72 SM x 1024 x 1.77 GHz = 130.5 TFLOP/s;
  // its 24 GB hold Llama-3.1-8B in bf16
  const Planner p = planner("llama-3.1-8b", "titan-rtx");
  REQUIRE_FALSE(p.spec().gpu.bf16_dense_tflops.has_value());
  const PerfResult r = estimate_perf(p, 4096, 0, 1, hand_params());
  CHECK(r.peak_flops == Approx(130.5e12));
  CHECK(r.ttft_s > 0);  // -1 would mean "no TFLOP/s figure"
  // prefill of 4096 tokens at 130.5e12 x compute_eff 0.5: vLLM's default token budget on a 24 GB GPU is 2,048, so two
  // chunks, each a step running the output head on its one sequence: 2 x body x 4096 + 2 x head x 2
  CHECK(r.prefill_chunks == 2);
  CHECK(term(r.prefill_terms, "linear_compute") == Approx((llama8b_prefill_flops(4096) + 2.0 * kLlama8bHead) / (130.5e12 * 0.5)));
  for (const auto& t : r.prefill_terms)
    if (t.name == "linear_compute") CHECK(t.basis.find("130.5 TFLOP/s fp16 peak") != std::string::npos);
}

TEST_CASE("LPDDR unified memory reaches a share of its datasheet bandwidth", "[perf]") {
  // DGX Spark: 273 GB/s LPDDR5x x unified 0.5 x dense 0.5
  const PerfResult r = estimate_perf(planner("llama-3.1-8b", "dgx-spark"), 1000, 0, 1, hand_params());
  CHECK(term(r.decode_terms, "weights") == Approx(kLlama8bRead / (273e9 * 0.5 * 0.5)));
}

TEST_CASE("on a GDDR card the serving engines read weights and KV at gddr_read_gain times their share, llama.cpp as fitted", "[perf]") {
  // RTX 4090: 1008 GB/s GDDR6X; vLLM: dense 0.5 and KV 0.5, each x gddr_read_gain 1.5 = 0.75
  constexpr double k4090 = 1008e9;
  const PerfResult r = estimate_perf(planner("llama-3.1-8b", "rtx-4090"), 1000, 0, 1, hand_params());
  CHECK(term(r.decode_terms, "weights") == Approx(kLlama8bRead / (k4090 * 0.75)));
  CHECK(term(r.decode_terms, "kv_read") == Approx(1000.0 * 131072 / (k4090 * 0.75)));
  CHECK(find_term(r.decode_terms, "weights")->basis.find("GDDR x 1.5 included") != std::string::npos);
  // a share above 1 is held at 1: the card's whole bandwidth
  PerfParams big = hand_params();
  big.coefficients.gddr_read_gain = 3;
  CHECK(term(estimate_perf(planner("llama-3.1-8b", "rtx-4090"), 1000, 0, 1, big).decode_terms, "weights") == Approx(kLlama8bRead / k4090));
  // --bw-efficiency states the share itself: no gain on top
  PerfParams stated = hand_params();
  stated.bandwidth_efficiency = 0.6;
  CHECK(term(estimate_perf(planner("llama-3.1-8b", "rtx-4090"), 1000, 0, 1, stated).decode_terms, "weights") == Approx(kLlama8bRead / (k4090 * 0.6)));
  // llama.cpp's weight_eff_ggml (0.5 here) is fitted on GDDR and HBM cards alike: no gain
  PlanSpec s = kvtest::spec("llama-3.1-8b", "rtx-4090", kvtest::engine(EngineKind::llamacpp));
  const PerfResult l = estimate_perf(Planner(s), 1000, 0, 1, hand_params());
  CHECK(term(l.decode_terms, "weights") == Approx(kLlama8bRead / (k4090 * 0.5)));
  // an HBM card keeps the fitted shares (H100 SXM, HBM3: dense 0.5)
  CHECK(term(estimate_perf(planner("llama-3.1-8b", "h100-sxm"), 1000, 0, 1, hand_params()).decode_terms, "weights") == Approx(kLlama8bRead / (kH100 * 0.5)));
}

TEST_CASE("on an AMD GPU vLLM and SGLang read weights and KV at rocm_read_gain times their share, llama.cpp as fitted", "[perf][rocm]") {
  // MI300X: 5.3 TB/s HBM3; vLLM: dense 0.5 and KV 0.5, each x rocm_read_gain 0.8 = 0.4
  constexpr double kMi300x = 5.3e12;
  const PerfResult r = estimate_perf(planner("llama-3.1-8b", "mi300x"), 1000, 0, 1, hand_params());
  CHECK(term(r.decode_terms, "weights") == Approx(kLlama8bRead / (kMi300x * 0.4)));
  CHECK(term(r.decode_terms, "kv_read") == Approx(1000.0 * 131072 / (kMi300x * 0.4)));
  CHECK(find_term(r.decode_terms, "weights")->basis.find("ROCm x 0.8 included") != std::string::npos);
  CHECK(r.notes.empty());  // a GQA model: no note
  // fitted on Instinct (CDNA) rows only: a Radeon (RDNA 3, GDDR6) keeps the GDDR gain alone
  CHECK(find_term(estimate_perf(planner("llama-3.1-8b", "rx-7900-xt"), 1000, 0, 1, hand_params()).decode_terms, "weights")->basis.find("ROCm") ==
        std::string::npos);
  // llama.cpp's own HIP kernels are in its fitted weight_eff_ggml (0.5 here)
  PlanSpec s = kvtest::spec("llama-3.1-8b", "mi300x", kvtest::engine(EngineKind::llamacpp));
  CHECK(term(estimate_perf(Planner(s), 1000, 0, 1, hand_params()).decode_terms, "weights") == Approx(kLlama8bRead / (kMi300x * 0.5)));
  // an MLA model on CDNA 3 carries the note of the published runs 2-4 x slower; on CDNA 4 (MI355X) it does not
  CHECK(estimate_perf(planner("deepseek-v2-lite", "mi300x"), 1000, 0, 1, hand_params()).notes.size() == 1);
  CHECK(estimate_perf(planner("deepseek-v2-lite", "mi355x"), 1000, 0, 1, hand_params()).notes.empty());
  CHECK(estimate_perf(planner("deepseek-v2-lite", "h100-sxm"), 1000, 0, 1, hand_params()).notes.empty());
}

TEST_CASE("MoE decode reads only the experts a batch touches", "[perf][moe]") {
  const Planner p = planner("qwen3-30b-a3b", "h100-sxm");
  const PerfResult one = estimate_perf(p, 100, 0, 1, {});
  const PerfResult many = estimate_perf(p, 100, 0, 256, {});
  // batch 1 touches 8 of 128 experts per layer; batch 256 touches 1 - (1 - 8/128)^256 of them, almost all
  CHECK(one.weight_bytes_read < 0.2 * many.weight_bytes_read);
}

TEST_CASE("the serving engines' fused-MoE path adds a fixed time per MoE layer that fades as a batch touches every expert", "[perf][moe]") {
  // Qwen3-30B-A3B: 48 MoE layers, 8 of 128 experts per token; moe_layer_s 50 us (hand_params)
  const Planner p = planner("qwen3-30b-a3b", "h100-sxm");
  const PerfResult one = estimate_perf(p, 100, 0, 1, hand_params());
  // batch 1 touches 8 / 128 of the experts: 48 x 50 us x (1 - 0.0625) = 2.25 ms
  CHECK(term(one.decode_terms, "moe_layers") == Approx(48 * 50e-6 * (1 - 8.0 / 128)));
  CHECK(find_term(one.decode_terms, "moe_layers")->basis.find("48 MoE layers x 50 us x (1 - 0.0625") != std::string::npos);
  // batch 64 touches 1 - (1 - 8/128)^64 of them (98.4%): the term all but vanishes
  const PerfResult many = estimate_perf(p, 100, 0, 64, hand_params());
  CHECK(term(many.decode_terms, "moe_layers") == Approx(48 * 50e-6 * std::pow(1 - 8.0 / 128, 64)));
  // it adds to the step like the launches; without it the step is that much shorter
  PerfParams none = hand_params();
  none.coefficients.moe_layer_s = 0;
  const PerfResult zero = estimate_perf(p, 100, 0, 1, none);
  CHECK(term(zero.decode_terms, "moe_layers") == -1);
  CHECK(one.tpot_s - zero.tpot_s == Approx(48 * 50e-6 * (1 - 8.0 / 128)));
  // it is a fixed time, so the deployment's overhead holds it
  CHECK(one.overhead_time_s - zero.overhead_time_s == Approx(48 * 50e-6 * (1 - 8.0 / 128)));
  // SGLang and TensorRT-LLM have it too; llama.cpp's mul_mat_id path, the generic engines and dense models do not
  for (const EngineKind k : {EngineKind::sglang, EngineKind::trtllm}) {
    const Planner q(kvtest::spec("qwen3-30b-a3b", "h100-sxm", kvtest::engine(k)));
    CHECK(term(estimate_perf(q, 100, 0, 1, hand_params()).decode_terms, "moe_layers") == Approx(48 * 50e-6 * (1 - 8.0 / 128)));
  }
  for (const EngineKind k : {EngineKind::llamacpp, EngineKind::generic}) {
    const Planner q(kvtest::spec("qwen3-30b-a3b", "h100-sxm", kvtest::engine(k)));
    CHECK(term(estimate_perf(q, 100, 0, 1, hand_params()).decode_terms, "moe_layers") == -1);
  }
  CHECK(term(estimate_perf(planner("llama-3.1-8b", "h100-sxm"), 100, 0, 1, hand_params()).decode_terms, "moe_layers") == -1);
  // nor MXFP4 experts (gpt-oss: another MoE kernel path in every serving engine), whatever the engine
  CHECK(term(estimate_perf(planner("gpt-oss-20b", "h100-sxm"), 100, 0, 1, hand_params()).decode_terms, "moe_layers") == -1);
  PlanSpec bf = kvtest::spec("qwen3-30b-a3b", "h100-sxm", kvtest::engine(EngineKind::vllm));
  apply_weight_format(bf.model, "mxfp4", "test");
  CHECK(term(estimate_perf(Planner(bf), 100, 0, 1, hand_params()).decode_terms, "moe_layers") == -1);
}

TEST_CASE("expert parallelism leaves the share of the experts a step touches at the model's k / E", "[perf][moe]") {
  // Mixtral 8x7B (8 experts, top 2) at TP4 x EP4: each rank holds 2 experts, each hit by a token with probability
  // 2/8, so at batch 1 a rank reads a quarter of its routed bytes (on average half an expert) and the MoE term keeps
  // 1 - 2/8 of its time (with the rank's own 2 experts and top-2 the share would be 1: every expert read, no term)
  PlanSpec s = kvtest::spec("mixtral-8x7b", "h100-sxm", kvtest::engine(EngineKind::vllm));
  s.parallel = Parallel{4, 1, 1, 4};
  const Planner ep4(s);
  const PerfResult r = estimate_perf(ep4, 100, 0, 1, hand_params());
  CHECK(term(r.decode_terms, "moe_layers") == Approx(32 * 50e-6 * (1 - 2.0 / 8)));
  CHECK(find_term(r.decode_terms, "weights")->basis.find("routed experts x 0.25 touched") != std::string::npos);
  // the rank's routed bytes: 32 layers x 2 experts x 3 x 4096 x 14336 x 2 B; a quarter of them read per step
  double dense = 0;
  for (const auto& part : count_params(ep4.rank_model()).parts)
    if (part.name != "routed_experts" && part.name != "embedding") dense += static_cast<double>(part_weight_bytes(ep4.rank_model(), part));
  const double routed = 32.0 * 2 * 3 * 4096 * 14336 * 2;
  CHECK(r.weight_bytes_read == Approx(dense + routed * 0.25));
}

TEST_CASE("expert parallelism over data-parallel replicas routes every replica's tokens to a rank's experts", "[perf][moe]") {
  // Mixtral 8x7B at TP2 x DP2 with EP4 (vLLM --data-parallel-size 2 --enable-expert-parallel): each rank holds 2 of the
  // 8 experts and receives the tokens of both replicas (they step together). At 1 sequence per replica a rank's
  // expert is hit by either replica's token: 1 - (1 - 2/8)^2 = 0.4375 of its routed bytes, not 1 - (1 - 2/8)^1
  PlanSpec s = kvtest::spec("mixtral-8x7b", "h100-sxm", kvtest::engine(EngineKind::vllm));
  s.parallel = Parallel{2, 1, 2, 4};
  const Planner dpep(s);
  const PerfResult r = estimate_perf(dpep, 100, 0, 2, hand_params());  // 2 requests: one per replica
  const double touched = 1 - (1 - 2.0 / 8) * (1 - 2.0 / 8);
  CHECK(find_term(r.decode_terms, "weights")->basis.find("routed experts x 0.438 touched") != std::string::npos);  // 3 digits
  double dense = 0;
  for (const auto& part : count_params(dpep.rank_model()).parts)
    if (part.name != "routed_experts" && part.name != "embedding") dense += static_cast<double>(part_weight_bytes(dpep.rank_model(), part));
  const double routed = 32.0 * 2 * 3 * 4096 * 14336 * 2;  // the rank's 2 experts, 32 layers, bf16
  CHECK(r.weight_bytes_read == Approx(dense + routed * touched));
}

TEST_CASE("vLLM V0's TTFT holds the first token one decode step (async output processor)", "[perf]") {
  // 0.6+ V0 hands a step's tokens over when the next step ends: TTFT = prefill + one decode step; with
  // --disable-async-output-proc (or before 0.6.0) the prefill alone
  const auto perf = [](const std::string& version, bool disable) {
    EngineSettings e = kvtest::engine(EngineKind::vllm);
    e.version = version;
    e.disable_async_output_proc = disable;
    return estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", e)), 1000, 100, 1, hand_params());
  };
  const PerfResult on = perf("0.7.3", false), off = perf("0.7.3", true), old = perf("0.5.4", false);
  CHECK(on.tpot_s == Approx(off.tpot_s));
  CHECK(on.ttft_s == Approx(off.ttft_s + off.tpot_s));
  CHECK(find_term(on.prefill_terms, "async_output")->seconds == Approx(off.tpot_s));
  CHECK(find_term(off.prefill_terms, "async_output") == nullptr);
  CHECK(find_term(old.prefill_terms, "async_output") == nullptr);
}

TEST_CASE("an NVLink-bridged pair all-reduces over the bridge at TP 2, over PCIe beyond", "[perf]") {
  // H100 NVL ships as bridged pairs (300 GB/s each way, link_eff 0.5 here): Llama-3.1-70B at TP 2, 4 sequences:
  // 160 all-reduces (2 per layer) of 8192 x 4 x 2 B, each one-shot alpha 10 us + 2 (2 - 1) / 2 x bytes / (300e9 x 0.5)
  const auto at = [](i64 tp, std::optional<bool> bridge) {
    PlanSpec s = kvtest::spec("llama-3.1-70b", "h100-nvl", kvtest::engine(EngineKind::vllm), Parallel{tp, 1, 1, 1});
    if (bridge) s.gpu.nvlink_bridged = *bridge;
    return estimate_perf(Planner(s), 1000, 100, 4, hand_params());
  };
  const double bytes = 8192.0 * 4 * 2;
  const PerfResult bridged = at(2, true), pcie = at(2, false);
  CHECK(term(bridged.decode_terms, "tp_all_reduce") == Approx(160 * (10e-6 + bytes / (300e9 * 0.5))));
  CHECK(find_term(bridged.decode_terms, "tp_all_reduce")->basis.find("NVLink bridge of a pair") != std::string::npos);
  CHECK(find_term(pcie.decode_terms, "tp_all_reduce")->basis.find("PCIe") != std::string::npos);
  CHECK(term(pcie.decode_terms, "tp_all_reduce") > term(bridged.decode_terms, "tp_all_reduce"));
  // TP 4 spans two pairs: PCIe whatever the bridges
  CHECK(find_term(at(4, true).decode_terms, "tp_all_reduce")->basis.find("PCIe") != std::string::npos);
}

TEST_CASE("the simulator's step model is the plan's decode step", "[perf]") {
  const Planner p = planner("llama-3.1-70b", "h100-sxm", Parallel{4, 2, 1, 1});
  const PerfParams pp = hand_params();
  const PerfResult r = estimate_perf(p, 2000, 200, 16, pp);
  const StepTimeModel m(p, pp);
  StepBatch b;
  b.decode_seqs = 16;
  b.decode_context_tokens = 16.0 * (2000 + 100);
  CHECK(m.step_s(b) == Approx(r.tpot_s));
  CHECK(m.stages() == 2);
  StepBatch pre;
  pre.prefill_tokens = 2000;
  pre.prefill_seqs = 1;
  pre.prefill_attention_pairs = 2000.0 * 2001 / 2;
  CHECK(m.step_s(pre) == Approx(r.ttft_s));
  CHECK(m.step_s(StepBatch{}) == 0);
}

TEST_CASE("a static batch: chunked prefill of every prompt then the decode steps", "[perf]") {
  const Planner p = planner("llama-3.1-8b", "h100-sxm");
  const PerfParams pp = hand_params();
  REQUIRE(p.spec().engine.max_num_batched_tokens >= 4096);
  const PerfResult r = estimate_perf(p, 512, 128, 8, pp);
  // 8 x 512 = 4096 prompt tokens fit one chunk of max_num_batched_tokens: one prefill step, then 128 decode steps
  const StepTimeModel m(p, pp);
  StepBatch pre;
  pre.prefill_tokens = 4096;
  pre.prefill_seqs = 1;
  pre.prefill_attention_pairs = 8.0 * 512 * 513 / 2;
  CHECK(r.batch_time_s == Approx(m.step_s(pre) + 128 * r.tpot_s));
  CHECK(r.output_tokens_per_s == Approx(8.0 * 128 / r.batch_time_s));
}

TEST_CASE("weight-only quantised kernels pay for dequantising every weight on the SMs", "[perf][dequant]") {
  auto e = kvtest::engine(EngineKind::generic);  // gpt-fast / MLC kernels (llama.cpp's likewise)
  PerfParams hp = hand_params();
  hp.coefficients.dequant_per_sm_cycle = 4;
  hp.coefficients.step_generic_s = 100e-6;
  PlanSpec s = kvtest::spec("llama-3.1-8b", "h100-sxm", e);
  apply_weight_format(s.model, "int8", "test");
  s.gpu.sm_count = 100;  // a made-up GPU: 100 SMs at 1000 MHz, H100's bandwidth
  s.gpu.boost_clock_mhz = 1000;
  const PerfResult r = estimate_perf(Planner(s), 1000, 0, 1, hp);
  // Llama-3.1-8B's linear layers, per layer q 4096 x 4096, k and v 4096 x 1024, o 4096 x 4096, gate, up and down
  // 3 x 4096 x 14336: 218,103,808 weights x 32 layers (the lm_head stays bf16 under --weight-format int8)
  const double elems = 32.0 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336);
  const double t_dq = elems / (100 * 1000e6 * 4);  // 17.4 ms
  CHECK(term(r.decode_terms, "dequant") == Approx(t_dq));
  // the linear layers take the larger of the read (int8 at 0.25 of 3.35 TB/s: 8.3 ms + the lm_head) and dequantising
  REQUIRE(term(r.decode_terms, "weights") < t_dq);
  CHECK(r.tpot_s == Approx(t_dq + term(r.decode_terms, "kv_read") + term(r.decode_terms, "kernel_launches") + 100e-6));
  CHECK(r.decode_bound == "compute");
  // an 8x faster GPU (800 SMs) hides the dequantisation under the weight read
  s.gpu.sm_count = 800;
  const PerfResult fast = estimate_perf(Planner(s), 1000, 0, 1, hp);
  CHECK(term(fast.decode_terms, "dequant") == Approx(t_dq / 8));
  CHECK(fast.tpot_s == Approx(term(fast.decode_terms, "weights") + term(fast.decode_terms, "kv_read") +
                              term(fast.decode_terms, "kernel_launches") + 100e-6));

  // no term: fp8 W8A8 and bf16 go to the tensor cores as they are; a profile without a clock leaves it out
  PlanSpec f = s;
  f.model = kvtest::spec("llama-3.1-8b", "h100-sxm", e).model;
  apply_weight_format(f.model, "fp8", "test");
  CHECK(term(estimate_perf(Planner(f), 1000, 0, 1, hp).decode_terms, "dequant") == -1);
  PlanSpec noclock = s;
  noclock.gpu.boost_clock_mhz.reset();
  CHECK(term(estimate_perf(Planner(noclock), 1000, 0, 1, hp).decode_terms, "dequant") == -1);
  // vLLM's Marlin-family kernels stay bound by the read: no term
  PlanSpec v = kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::vllm));
  v.model = s.model;
  v.gpu = s.gpu;
  CHECK(term(estimate_perf(Planner(v), 1000, 0, 1, hp).decode_terms, "dequant") == -1);
  // NVFP4 is W4A4 on Blackwell's fp4 tensor cores (no term) and W4A16 on Hopper (dequantised: the term)
  PlanSpec b = kvtest::spec("llama-3.1-8b", "b200", e);
  apply_weight_format(b.model, "nvfp4", "test");
  b.gpu.sm_count = 100;
  b.gpu.boost_clock_mhz = 1000;
  CHECK(term(estimate_perf(Planner(b), 1000, 0, 1, hp).decode_terms, "dequant") == -1);
  PlanSpec h = s;
  h.model = b.model;
  h.gpu.sm_count = 100;
  CHECK(term(estimate_perf(Planner(h), 1000, 0, 1, hp).decode_terms, "dequant") == Approx(t_dq));

  // before Volta (compute capability 6.1, a P40's) INT32 and FP32 share the cores: the SMs reach dequant_pre_volta of
  // the rate; Volta (7.0) keeps all of it; an AMD CU (64 shared lanes against a Pascal SM's 128) half the Pascal rate
  hp.coefficients.dequant_pre_volta = 0.5;
  PlanSpec pascal = s;
  pascal.gpu.sm_count = 100;
  pascal.gpu.compute_capability = "6.1";
  const PerfResult pr = estimate_perf(Planner(pascal), 1000, 0, 1, hp);
  CHECK(term(pr.decode_terms, "dequant") == Approx(elems / (100 * 1000e6 * 4 * 0.5)));
  CHECK(find_term(pr.decode_terms, "dequant")->basis.find("compute capability 6.1") != std::string::npos);
  pascal.gpu.compute_capability = "7.0";
  CHECK(term(estimate_perf(Planner(pascal), 1000, 0, 1, hp).decode_terms, "dequant") == Approx(t_dq));
  pascal.gpu.compute_capability = "gfx942";
  pascal.gpu.vendor = "amd";
  CHECK(term(estimate_perf(Planner(pascal), 1000, 0, 1, hp).decode_terms, "dequant") == Approx(elems / (100 * 1000e6 * 4 * 0.5 * 0.5)));
}

TEST_CASE("llama.cpp's K-quant weights cost more ALU work in the dequant term, by the recipe's tensor types", "[perf][dequant][llamacpp]") {
  PerfParams hp = hand_params();
  hp.coefficients.dequant_per_sm_cycle = 4;
  hp.coefficients.dequant_k = 1.5;
  hp.coefficients.dequant_k_low = 2;
  const auto dequant = [&](const std::string& format, EngineKind kind = EngineKind::llamacpp) {
    PlanSpec s = kvtest::spec("llama-2-7b", "rtx-4090", kvtest::engine(kind));
    apply_weight_format(s.model, format, "test");
    s.gpu.sm_count = 100;  // a made-up GPU: 100 SMs at 1000 MHz
    s.gpu.boost_clock_mhz = 1000;
    return term(estimate_perf(Planner(s), 1000, 0, 1, hp).decode_terms, "dequant");
  };
  // LLaMA-2-7B's matrices the step multiplies: 32 x (4 x 4096 x 4096 + 3 x 4096 x 11008) + the output head 32000 x 4096
  // (the token embedding is looked up, not read)
  const double layers = 32.0 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008), head = 32000.0 * 4096;
  const double rate = 100 * 1000e6 * 4;
  // --pure: every tensor at one type
  CHECK(dequant("pure:q4_0") == Approx((layers + head) / rate));
  CHECK(dequant("pure:q8_0") == Approx((layers + head) / rate));
  CHECK(dequant("pure:q3_k") == Approx(2 * (layers + head) / rate));
  CHECK(dequant("pure:q6_k") == Approx(1.5 * (layers + head) / rate));
  // q2_K between q4_K (1.5 here) and q3_K (2) where its vec_dot's instructions are: 156 per 32 weights, 118 and 240
  CHECK(dequant("pure:q2_k") == Approx((1.5 + 0.5 * (156.0 - 118) / (240 - 118)) * (layers + head) / rate));
  // Q4_0: llama-quantize gives the output head q6_K, every other matrix q4_0
  CHECK(dequant("Q4_0") == Approx((layers + 1.5 * head) / rate));
  // Q4_K_M: q4_K, and q6_K for half of attn_v and ffn_down and the head: K-quants throughout
  CHECK(dequant("Q4_K_M") == Approx(1.5 * (layers + head) / rate));
  // Q3_K_S: q3_K throughout but the q6_K head
  CHECK(dequant("Q3_K_S") == Approx((2 * layers + 1.5 * head) / rate));
  // not llama.cpp (gpt-fast / MLC with the same GGUF weights): no type cost
  CHECK(dequant("Q3_K_S", EngineKind::generic) == Approx((layers + head) / rate));
}

TEST_CASE("the dequant term counts the routed experts a step touches", "[perf][dequant]") {
  PerfParams hp = hand_params();
  hp.coefficients.dequant_per_sm_cycle = 4;
  PlanSpec s = kvtest::spec("qwen3-30b-a3b", "h100-sxm", kvtest::engine(EngineKind::generic));
  apply_weight_format(s.model, "int4", "test");
  s.gpu.sm_count = 100;
  s.gpu.boost_clock_mhz = 1000;
  const Planner p(s);
  // the dense quantised matrices as the planner counts them (attention, router where packed, ...); the routed
  // experts by hand: 48 layers x 128 experts x 3 x 2048 x 768 = 28,991,029,248 weights
  double dense = 0;
  for (const auto& part : count_params(p.rank_model()).parts)
    if (part.name != "routed_experts" && part.name != "embedding" && part_packed(p.rank_model().quant, part))
      dense += static_cast<double>(part.matrix);
  const double routed = 48.0 * 128 * 3 * 2048 * 768;
  const double rate = 100 * 1000e6 * 4;
  // batch 1: exactly the 8 active experts of 128 in each layer
  const PerfResult one = estimate_perf(p, 100, 0, 1, hp);
  CHECK(term(one.decode_terms, "dequant") == Approx((dense + routed * 8 / 128) / rate));
  // batch 16: 1 - (1 - 8/128)^16 of them
  const PerfResult sixteen = estimate_perf(p, 100, 0, 16, hp);
  CHECK(term(sixteen.decode_terms, "dequant") == Approx((dense + routed * (1 - std::pow(1 - 8.0 / 128, 16))) / rate));
}

TEST_CASE("the experts' all-to-all sends each rank's own tokens, over the network for the ranks on other nodes", "[perf][ep]") {
  // Qwen3-30B-A3B (48 MoE layers, 8 of 128 experts a token, hidden 2048, bf16 activations) under SGLang DP attention
  // with one rank per group: each rank dispatches its group's tokens (the busiest group's), k = 8 copies of 2048 x 2 B
  const PerfParams hp = hand_params();  // NVLink 10 us + H100's 450 GB/s x 0.5; network 20 us + 50 GB/s x 0.5
  const auto run = [&](i64 ranks, i64 concurrency) {
    EngineSettings e = kvtest::engine(EngineKind::sglang);
    e.attention_dp = ranks;
    return estimate_perf(Planner(kvtest::spec("qwen3-30b-a3b", "h100-sxm", e, Parallel{ranks, 1, 1, ranks})), 1000, 0, concurrency, hp);
  };
  const double copies = 2.0 * 2048 * 2 * 8;  // 2 tokens a rank: 16 requests over 8 groups, 32 over 16
  // 8 ranks, one node: 7 / 8 of the copies to the other GPUs over NVLink
  CHECK(term(run(8, 16).decode_terms, "ep_all_to_all") == Approx(2 * 48 * (10e-6 + copies * 7 / 8 / (450e9 * 0.5))));
  // 16 ranks over two nodes of 8: 7 / 16 over NVLink and, at once, 8 / 16 over the network; the slower sets the time
  const double nvlink = 10e-6 + copies * 7 / 16 / (450e9 * 0.5), network = 20e-6 + copies * 8 / 16 / (50e9 * 0.5);
  const PerfResult two = run(16, 32);
  CHECK(term(two.decode_terms, "ep_all_to_all") == Approx(2 * 48 * std::max(nvlink, network)));
  CHECK(find_term(two.decode_terms, "ep_all_to_all")->basis.find("16 ranks over 2 nodes") != std::string::npos);
}

TEST_CASE("expert parallelism exchanges tokens all-to-all only across attention groups, DP attention reads its own group's KV", "[perf][ep]") {
  // Qwen3-30B-A3B: 48 layers, all MoE (128 experts, 8 active), hidden 2048, 4 KV heads x 128, on H100 SXM (3.35 TB/s)
  const PerfParams hp = hand_params();
  const auto run = [&](EngineKind k, Parallel par, i64 attention_dp) {
    EngineSettings e = kvtest::engine(k);
    e.attention_dp = attention_dp;
    return estimate_perf(Planner(kvtest::spec("qwen3-30b-a3b", "h100-sxm", e, par)), 1000, 0, 4, hp);
  };
  const auto basis = [](const PerfResult& r, const char* name) {
    const PerfTerm* t = find_term(r.decode_terms, name);
    return t ? t->basis : std::string();
  };
  // vLLM --enable-expert-parallel at DP 1 (EP = TP = 4): attention is tensor parallel, every rank holds every token and
  // runs its own experts on them; an all-reduce sums the outputs, two per layer as without EP, and nothing goes all-to-all
  const PerfResult tp_ep = run(EngineKind::vllm, Parallel{4, 1, 1, 4}, 1);
  CHECK(basis(tp_ep, "tp_all_reduce").rfind("96 x all-reduce", 0) == 0);
  CHECK(find_term(tp_ep.decode_terms, "ep_all_to_all") == nullptr);
  // vLLM DP 2 x TP 4 with EP 8: the expert group spans two attention groups; the 48 MoE layers dispatch and combine
  // all-to-all, only the attention outputs are all-reduced
  const PerfResult dp_ep = run(EngineKind::vllm, Parallel{4, 1, 2, 8}, 1);
  CHECK(basis(dp_ep, "tp_all_reduce").rfind("48 x all-reduce", 0) == 0);
  CHECK(basis(dp_ep, "ep_all_to_all").rfind("2 x 48 MoE layers", 0) == 0);
  // SGLang --enable-dp-attention --dp-size 4 on TP 4 with EP 4: one rank per attention group, whole attention weights,
  // no all-reduce at all; the experts' exchange is all-to-all
  const PerfResult dpa = run(EngineKind::sglang, Parallel{4, 1, 1, 4}, 4);
  CHECK(term(dpa.decode_terms, "tp_all_reduce") == 0);
  CHECK(basis(dpa, "ep_all_to_all").rfind("2 x 48 MoE layers", 0) == 0);
  // and each rank reads the KV of its own group's sequences: 4 sequences over 4 groups, one each, of 1,000 tokens x
  // 48 layers x 4 KV heads x 128 x 2 (K, V) x 2 B = 98,304 B a token (attention TP 1: every KV head on the rank)
  CHECK(term(dpa.decode_terms, "kv_read") == Approx(1000.0 * 98304 / (3.35e12 * 0.5)));
  // attention TP 4 splits the KV heads instead (one per rank) and reads all four sequences: the same bytes
  CHECK(term(tp_ep.decode_terms, "kv_read") == Approx(4 * 1000.0 * 98304 / 4 / (3.35e12 * 0.5)));
  // the attention projections run for the busiest group's tokens (one of the four decode sequences), the experts for
  // all: 2 x ((active - attention) x 4 + attention x 1) FLOP. Attention (whole on the rank): 48 x (2048 x 32 x 128
  // (q) + 2 x 2048 x 4 x 128 (k, v) + 32 x 128 x 2048 (o)) weights, and its q / k norms (128 each)
  const double attention = 48.0 * (2048.0 * 4096 + 2 * 2048.0 * 512 + 4096.0 * 2048 + 2 * 128);
  const ParamCount pc = count_params(Planner(kvtest::spec("qwen3-30b-a3b", "h100-sxm", [] {
                                           EngineSettings e = kvtest::engine(EngineKind::sglang);
                                           e.attention_dp = 4;
                                           return e;
                                         }(), Parallel{4, 1, 1, 4})).rank_model());
  // the embedding is looked up; the output head (lm_head) runs once per sequence, as every other matrix for a decode token
  double lookup = 0;
  for (const auto& part : pc.parts)
    if (part.name == "embedding") lookup = static_cast<double>(part.total());
  // the rank holds 128 / 4 = 32 whole experts (3 x 2048 x 768 each, 48 layers) and its own count takes 8 of them a
  // token; each is routed a token with probability 8 / 128, so a token costs it 32 x 8 / 128 = 2 on average
  const double routed = 48.0 * 32 * 3 * 2048 * 768;
  for (const auto& part : pc.parts)
    if (part.name == "routed_experts") CHECK(static_cast<double>(part.total()) == routed);
  const double active = static_cast<double>(pc.active) - lookup - routed * 8 / 32 + routed * 8 / 128;
  const double one_token = 2.0 * active;  // the 4-sequence step over a 1-token step, same peak and efficiency
  const double four = 2.0 * ((active - attention) * 4 + attention * 1);
  const PerfResult dpa1 = estimate_perf(Planner(kvtest::spec("qwen3-30b-a3b", "h100-sxm", [] {
                                          EngineSettings e = kvtest::engine(EngineKind::sglang);
                                          e.attention_dp = 4;
                                          return e;
                                        }(), Parallel{4, 1, 1, 4})), 1000, 0, 1, hp);
  CHECK(term(dpa.decode_terms, "linear_compute") / term(dpa1.decode_terms, "linear_compute") == Approx(four / one_token));
}

TEST_CASE("llama.cpp before b4114 multiplies f16 weights in DMMV, bound by the SMs", "[perf][llamacpp]") {
  // Llama-3.1-8B bf16 matrices: 32 x (4096 x 4096 x 2 + 4096 x 1024 x 2 + 4096 x 14336 x 3) + lm_head 128,256 x 4,096
  const double matrices = 32.0 * (4096.0 * 4096 * 2 + 4096.0 * 1024 * 2 + 4096.0 * 14336 * 3) + 128256.0 * 4096;
  PerfParams hp = hand_params();
  hp.coefficients.dmmv_per_sm_cycle = 2;
  const auto dequant = [&](const std::string& version) {
    EngineSettings e = kvtest::engine(EngineKind::llamacpp);
    e.version = version;
    return term(estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "a100-sxm-80gb", e)), 1000, 0, 1, hp).decode_terms, "dequant");
  };
  // A100 SXM: 108 SMs x 1410 MHz x 2 a cycle; from b3916 (#9816, vectorised loads) x 1.27; from b4114 no DMMV
  CHECK(dequant("b2837") == Approx(matrices / (108 * 1410e6 * 2)));
  CHECK(dequant("b3916") == Approx(matrices / (108 * 1410e6 * 2 * 1.27)));
  CHECK(dequant("b4114") == -1);
  CHECK(dequant("") == -1);  // unversioned: the newest build
  // not llama.cpp: no DMMV
  EngineSettings v = kvtest::engine(EngineKind::vllm);
  v.version = "0.5.0";
  CHECK(term(estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "a100-sxm-80gb", v)), 1000, 0, 1, hp).decode_terms, "dequant") == -1);
}

TEST_CASE("llama.cpp without graphs: builds and GPUs its CUDA / HIP graphs did not reach launch each decode kernel", "[perf][llamacpp]") {
  // Llama-3.1-8B bf16 (32 layers, f16 mat-vec kernels): kernel_llamacpp_s 2 us a kernel, + eager_llamacpp_extra_s 3 us
  // without graphs, + graph_build_llamacpp_s 1 us before b5922 (the graph built every token). Kernels
  // (llamacpp_decode_kernels): newest build, flash attention on (auto from b6325): 15 a layer + 4 a token = 484;
  // b8892 / b8893 (before #23764 the FA mask is cast: 5 a token) 485; b2821 / b2822 (flash attention off by default
  // then; GQA through batched cuBLAS): 29 a layer + 5 = 933
  const PerfParams hp = hand_params();
  const auto launches = [&](const std::string& gpu, const std::string& version) {
    EngineSettings e = kvtest::engine(EngineKind::llamacpp);
    e.version = version;
    const PerfResult r = estimate_perf(Planner(kvtest::spec("llama-3.1-8b", gpu, e)), 1000, 0, 1, hp);
    return std::make_pair(term(r.decode_terms, "kernel_launches"), find_term(r.decode_terms, "kernel_launches")->basis);
  };
  const auto graphs = [](double kernels) { return kernels * 2e-6; };
  const auto eager = [](double kernels) { return kernels * 5e-6; };
  // Ampere and newer: graphs from b2822 (#6766); before it every kernel is launched
  CHECK(launches("a100-sxm-80gb", "").first == Approx(graphs(484)));
  CHECK(launches("a100-sxm-80gb", "b2822").first == Approx(933 * (2e-6 + 1e-6)));
  CHECK(launches("a100-sxm-80gb", "b2821").first == Approx(933 * (5e-6 + 1e-6)));
  CHECK(launches("a100-sxm-80gb", "b2822").second.find("its graph built every token before b5922") != std::string::npos);
  // from #14482 (b5922) the graph is reused
  CHECK(launches("a100-sxm-80gb", "b5922").second.find("built every token") == std::string::npos);
  CHECK(launches("a100-sxm-80gb", "b2821").second.find("without graphs: CUDA graphs from b2822") != std::string::npos);
  CHECK(launches("a100-sxm-80gb", "b2821").second.find("933 kernels: 29 a layer (f16 mat-vec, flash attention off) + 5 a token") !=
        std::string::npos);
  // Turing (T4, compute capability 7.5): graphs only from b10042 (#25749); Pascal (P40, 6.1) never
  CHECK(launches("t4", "b10041").first == Approx(eager(484)));
  CHECK(launches("t4", "b10042").first == Approx(graphs(484)));
  CHECK(launches("t4", "").first == Approx(graphs(484)));
  CHECK(launches("p40", "").first == Approx(eager(484)));
  CHECK(launches("p40", "").second.find("below compute capability 7.0") != std::string::npos);
  // AMD: GGML_HIP_GRAPHS on by default from b8893 (#22254)
  CHECK(launches("mi300x", "b8892").first == Approx(eager(485)));
  CHECK(launches("mi300x", "b8893").first == Approx(graphs(485)));
  CHECK(launches("mi300x", "").first == Approx(graphs(484)));
  // not llama.cpp, or Metal: the rule does not apply
  EngineSettings v = kvtest::engine(EngineKind::vllm);
  CHECK(llamacpp_graphless_reason(kvtest::spec("llama-3.1-8b", "p40", v).gpu, v).empty());
  EngineSettings l = kvtest::engine(EngineKind::llamacpp);
  l.version = "b1000";
  CHECK(llamacpp_graphless_reason(kvtest::spec("llama-3.1-8b", "m2-ultra", l).gpu, l).empty());
}

TEST_CASE("llama.cpp's decode kernels per layer follow its fusions build by build", "[perf][llamacpp]") {
  // Counted op by op from llama.cpp's graph builder and ggml-cuda at two builds (docs/performance-model.md "llama.cpp's
  // kernels per token"). b2879, one Llama-3-8B layer, quantised weights, flash attention off: rms_norm, mul; q, k, v
  // (quantize_q8_1 + mul_mat_vec_q each: 6); rope q, rope k; K store, V store; KQ through batched cuBLAS (src1 to
  // f16, pointer table, GEMM, output to f32: 4; MHA has no pointer table: 3); soft_max; KQV (4 / 3); cont; o (2); add;
  // rms_norm, mul; up, gate (4); silu; mul; down (2); add = 36 (MHA 34). A token adds the final rms_norm + mul, the
  // output matmul (2) and the last layer's two get_rows = 6. Flash attention replaces KQ .. cont (10) with vec +
  // combine (2) and the mask is cast (+1 a token): 28 and 7. f16 weights: each of the 7 matrices is one DMMV kernel,
  // 7 fewer (29 / 27 / 21), and the output matmul one (5 a token).
  const GpuSpec h100 = kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::llamacpp)).gpu;
  const auto count = [&](const GpuSpec& g, const std::string& version, const std::string& fa, bool quantised, bool gqa) {
    EngineSettings e = kvtest::engine(EngineKind::llamacpp);
    e.version = version;
    e.flash_attn = fa;
    const LlamacppKernels k = llamacpp_decode_kernels(g, e, quantised, gqa);
    return std::make_pair(k.per_layer, k.per_token);
  };
  using P = std::pair<i64, i64>;
  CHECK(count(h100, "b2879", "off", true, true) == P{36, 6});
  CHECK(count(h100, "b2879", "off", true, false) == P{34, 6});
  CHECK(count(h100, "b2879", "on", true, true) == P{28, 7});
  CHECK(count(h100, "b2879", "off", false, true) == P{29, 5});
  CHECK(count(h100, "b2879", "off", false, false) == P{27, 5});
  CHECK(count(h100, "b2879", "on", false, true) == P{21, 6});
  // b2879 with -fa auto: llama-cli / llama-server had flash attention off by default until b6325
  CHECK(count(h100, "b2879", "auto", true, true) == P{36, 6});
  // the newest build: fused rms_norm + mul (1); q (2), rope q, v (2), k (2), rope + K store fused, V store; attention
  // (flash: vec + combine; else KQ, soft_max, KQV, cont through mul_mat_vec_f: 4); o (2); add; fused norm; gate, up
  // and swiglu as one GEMV (2); down (2); add = 21 (FA on) / 23 (off); f16 15 / 17. A token: the fused final norm,
  // the output matmul (2 / 1), two get_rows = 5 / 4; the mask is built as f16 (no cast)
  CHECK(count(h100, "", "on", true, true) == P{21, 5});
  CHECK(count(h100, "", "off", true, true) == P{23, 5});
  CHECK(count(h100, "", "auto", true, false) == P{21, 5});
  CHECK(count(h100, "", "on", false, true) == P{15, 4});
  CHECK(count(h100, "", "off", false, false) == P{17, 4});
  // b6500, between the rms_norm + mul fusion (#14800, b5965) and the GEMV fusion (#16715, b6841): 21 + 1 (rope and the
  // K store apart, #16884 b7044) + 3 (gate, up, swiglu apart) = 25 with flash attention, 27 without; a token 5 + 1 cast
  CHECK(count(h100, "b6500", "on", true, true) == P{25, 6});
  CHECK(count(h100, "b6500", "off", true, true) == P{27, 5});
  // b1842 on a P40 (compute capability 6.1): KQ and KQV are one mat-vec kernel each there, so b2879's 34 less 2 x 2;
  // before #6122 (b2540) no output-row gathers: 4 a token
  const GpuSpec p40 = kvtest::spec("llama-2-7b", "p40", kvtest::engine(EngineKind::llamacpp)).gpu;
  CHECK(count(p40, "b1842", "off", true, false) == P{30, 4});
  // before #5021 (b2771) llama.cpp had no flash attention: -fa on changes nothing
  CHECK(count(h100, "b2770", "on", true, true) == P{36, 6});
  // an MoE layer (Qwen3-30B-A3B's path, top-8), its FFN block against the dense one. Newest: F32 router, fused top-k,
  // gate / up / GLU with the expert ids (2), down (2), the weights, one sum of the 8 experts, add = 9 against gate /
  // up / GLU (2), down (2), add = 5: 4. b6500 (before #16130's fused top-k, b6583): softmax, argsort, get_rows,
  // sum_rows, div instead of one kernel, and gate, up, swiglu apart (5) against the dense 8 = 16 - 8: 8. b6000 (before
  // #15631, b6316): 7 adds for the 8 experts, not 1: 14. b5100 (before #13014, b5170): each of the three expert
  // matmuls one MMVQ per expert, 8 x 2 kernels instead of 2: 14 + 3 x 14 = 56
  const auto moe = [&](const std::string& version) {
    EngineSettings e = kvtest::engine(EngineKind::llamacpp);
    e.version = version;
    return llamacpp_decode_kernels(h100, e, true, true, 8).per_moe_layer;
  };
  CHECK(moe("") == 4);
  CHECK(moe("b6500") == 8);
  CHECK(moe("b6000") == 14);
  CHECK(moe("b5100") == 56);
  CHECK(count(h100, "", "on", true, true) == P{21, 5});  // a dense model: no MoE term
  CHECK(llamacpp_decode_kernels(h100, kvtest::engine(EngineKind::llamacpp), true, true).per_moe_layer == 0);
  EngineSettings e = kvtest::engine(EngineKind::llamacpp);
  // before #13014 (b5170) a MUL_MAT_ID node kept ggml-cuda from capturing the graph
  e.version = "b5169";
  CHECK(llamacpp_graphless_reason(h100, e, true).find("mul_mat_id") != std::string::npos);
  CHECK(llamacpp_graphless_reason(h100, e, false).empty());
  e.version = "b5170";
  CHECK(llamacpp_graphless_reason(h100, e, true).empty());
  e.version = "b6324";
  CHECK_FALSE(llamacpp_flash_attention(e));  // auto, before #15434
  e.version = "b6325";
  CHECK(llamacpp_flash_attention(e));
  e.flash_attn = "off";
  CHECK_FALSE(llamacpp_flash_attention(e));
}

TEST_CASE("llama.cpp launches its own decode graphs, reads f16 at its ggml efficiency, and Metal dispatches every kernel", "[perf][llamacpp]") {
  // Llama-3.1-8B in bf16 (no quantised tensor): llama.cpp's newest CUDA graph, flash attention on, 15 x 32 + 4 = 484
  // kernels (llamacpp_decode_kernels); Metal and the other engines 9 x 32 + 4 = 292
  PerfParams hp = hand_params();
  hp.coefficients.weight_eff_ggml = 0.4;
  const PlanSpec cuda = kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::llamacpp));
  const PerfResult c = estimate_perf(Planner(cuda), 1000, 0, 1, hp);
  // decode: llama.cpp's CUDA graphs at 2 us a kernel; every weight through its mat-vec kernels at ggml 0.4
  CHECK(term(c.decode_terms, "kernel_launches") == Approx(484 * 2e-6));
  CHECK(term(c.decode_terms, "weights") == Approx(kLlama8bRead / (kH100 * 0.4)));
  CHECK(find_term(c.decode_terms, "kernel_launches")->basis.find("(llama.cpp CUDA graphs)") != std::string::npos);
  // --bw-efficiency 0.9 scales ggml by 0.9 / dense 0.5: 0.4 x 1.8 = 0.72; with ggml at 0.8 that would be 1.44, and a
  // share of the bandwidth stops at the whole of it
  PerfParams bw = hp;
  bw.bandwidth_efficiency = 0.9;
  CHECK(term(estimate_perf(Planner(cuda), 1000, 0, 1, bw).decode_terms, "weights") == Approx(kLlama8bRead / (kH100 * 0.72)));
  bw.coefficients.weight_eff_ggml = 0.8;
  CHECK(term(estimate_perf(Planner(cuda), 1000, 0, 1, bw).decode_terms, "weights") == Approx(kLlama8bRead / kH100));
  // prefill ubatches launch each kernel from ggml's loop: kernel_llamacpp_s 2 us + eager_llamacpp_extra_s 3 us (not
  // the engines' eager_kernel_s, 10 us)
  const PerfResult cp = estimate_perf(Planner(cuda), 0, 512, 1, hp);
  CHECK(term(cp.prefill_terms, "kernel_launches") == Approx(484 * 5e-6));
  // vLLM on the same GPU: the shared graph time (1 us) and the dense efficiency (0.5)
  const PerfResult v = estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::vllm))), 1000, 0, 1, hp);
  CHECK(term(v.decode_terms, "kernel_launches") == Approx(292 * 1e-6));
  CHECK(term(v.decode_terms, "weights") == Approx(kLlama8bRead / (kH100 * 0.5)));
  // an Apple GPU (M2 Ultra, 800 GB/s LPDDR5 x unified 0.5, two dies over UltraFusion x 0.8): 20 us a kernel
  // through Metal, decode and prefill alike
  const PlanSpec mac = kvtest::spec("llama-3.1-8b", "m2-ultra", kvtest::engine(EngineKind::llamacpp));
  const PerfResult m = estimate_perf(Planner(mac), 1000, 0, 1, hp);
  CHECK(term(m.decode_terms, "kernel_launches") == Approx(292 * 20e-6));
  CHECK(find_term(m.decode_terms, "kernel_launches")->basis.find("(Metal)") != std::string::npos);
  CHECK(term(m.decode_terms, "weights") == Approx(kLlama8bRead / (800e9 * 0.5 * 0.8 * 0.4)));
  CHECK(find_term(m.decode_terms, "weights")->basis.find("x 2 dies 0.8 ") != std::string::npos);
  // one die (M2 Max 38-core, 400 GB/s): no die link
  const PerfResult mx = estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "m2-max-38c", kvtest::engine(EngineKind::llamacpp))), 1000, 0, 1, hp);
  CHECK(term(mx.decode_terms, "weights") == Approx(kLlama8bRead / (400e9 * 0.5 * 0.4)));
  // HBM parts keep their bandwidth whatever their dies: the factor is for dies sharing LPDDR (a B200's two dies,
  // were the profile to state them, change nothing)
  PlanSpec two_die_hbm = kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::llamacpp));
  two_die_hbm.gpu.dies = 2;
  CHECK(term(estimate_perf(Planner(two_die_hbm), 1000, 0, 1, hp).decode_terms, "weights") == Approx(kLlama8bRead / (kH100 * 0.4)));
  const PerfResult mp = estimate_perf(Planner(mac), 0, 512, 1, hp);
  CHECK(term(mp.prefill_terms, "kernel_launches") == Approx(292 * 20e-6));
}

TEST_CASE("llama.cpp on Metal without flash attention reads a GQA layer's cache once per query head", "[perf][llamacpp]") {
  // Llama-3.1-8B: 32 query heads on 8 KV heads, 131,072 B of KV a token; 1,000 tokens cached. M2 Ultra: 800 GB/s x
  // unified 0.5 x two dies 0.8 x kv_eff 0.5 (hand_params)
  const double raw = 1000.0 * 131072, rate = 800e9 * 0.5 * 0.8 * 0.5;
  EngineSettings off = kvtest::engine(EngineKind::llamacpp);
  off.flash_attn = "off";
  const PerfResult m = estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "m2-ultra", off)), 1000, 0, 1, hand_params());
  CHECK(m.kv_bytes_read == Approx(4 * raw));  // each of the 4 query heads of a KV head reads its rows
  CHECK(term(m.decode_terms, "kv_read") == Approx(4 * raw / rate));
  CHECK(find_term(m.decode_terms, "kv_read")->basis.find("once per query head") != std::string::npos);
  // with flash attention (the default since b6325 where the cache allows it) one read serves the group
  EngineSettings on = kvtest::engine(EngineKind::llamacpp);
  on.flash_attn = "on";
  CHECK(estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "m2-ultra", on)), 1000, 0, 1, hand_params()).kv_bytes_read == Approx(raw));
  // CUDA without flash attention: measured between one read and one per head, GPU by GPU (docs/performance-model.md
  // "llama.cpp's attention without flash attention"): one read priced
  CHECK(estimate_perf(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", off)), 1000, 0, 1, hand_params()).kv_bytes_read == Approx(raw));
  // a model without GQA (Llama-2-7B: 32 KV heads for 32 query heads) reads once either way
  const PerfResult mha = estimate_perf(Planner(kvtest::spec("llama-2-7b", "m2-ultra", off)), 1000, 0, 1, hand_params());
  CHECK(mha.kv_bytes_read == Approx(1000.0 * 32 * 2 * 4096 * 2));
}

// Gemma 4 E2B: the 20 KV-sharing layers keep no cache but attend over their donor's, so a decode step reads 7 full
// layers' caches (1 KV head of 512: 2,048 B a token) and 28 sliding ones' windows (1 x 256: 1,024 B, 512 tokens);
// the per-layer embedding table is looked up like the token embedding, not read; the token embedding is the tied
// output head, read whole every step.
TEST_CASE("decode step of Gemma 4: KV-sharing layers read their donor's cache, the PLE table is not read", "[perf][gemma]") {
  const Planner p = planner("gemma-4-e2b-it", "h100-sxm");
  const PerfResult r = estimate_perf(p, 1000, 0, 1, hand_params());
  CHECK(r.kv_bytes_read == Approx(7.0 * 1000 * 2048 + 28.0 * 512 * 1024));
  const double table = 262144.0 * 35 * 256;  // vocab_size_per_layer_input x layers x hidden_size_per_layer_input
  CHECK(r.weight_bytes_read == Approx(2.0 * (static_cast<double>(count_params(p.spec().model).total) - table)));
}

TEST_CASE("an M5 GPU multiplies on its Neural Accelerators from llama.cpp b6970, on its shader ALUs before", "[perf][apple]") {
  auto at = [](const std::string& gpu, const std::string& build) {
    auto e = kvtest::engine(EngineKind::llamacpp);
    e.version = build;
    return estimate_perf(Planner(kvtest::spec("llama-3.1-8b", gpu, e)), 512, 1, 1, hand_params());
  };
  // the M5's profile: 10 GPU cores at 1,740 MHz, each 128 lanes x 2 FLOP a clock on its shaders = 4.4544 TFLOP/s; its
  // Neural Accelerators 4 x the M4's 3.76 TFLOP/s (Apple: over 4x the M4's peak GPU compute for AI) = 15.04 TFLOP/s
  CHECK(at("m5", "b6969").peak_flops == Approx(10.0 * 128 * 2 * 1740e6));
  CHECK(at("m5", "b6970").peak_flops == Approx(15.04e12));
  CHECK(at("m5", "").peak_flops == Approx(15.04e12));  // the newest build
  CHECK(find_term(at("m5", "b6969").prefill_terms, "linear_compute")->basis.find("no Metal tensor API") != std::string::npos);
  // a prompt's GEMMs take peak / efficiency: the shader build prefills 15.04 / 4.4544 times longer
  const double shader = term(at("m5", "b6969").prefill_terms, "linear_compute");
  const double tensor = term(at("m5", "b6970").prefill_terms, "linear_compute");
  CHECK(shader / tensor == Approx(15.04e12 / (10.0 * 128 * 2 * 1740e6)));
  // an M4 (apple9) has no Neural Accelerators: its shader peak whatever the build
  CHECK(at("m4", "b6969").peak_flops == at("m4", "b6970").peak_flops);
  // a rate the user gave (--gpu-tflops sets bf16 and fp16) stands on any build
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.version = "b6969";
  PlanSpec given = kvtest::spec("llama-3.1-8b", "m5", e);
  given.gpu.bf16_dense_tflops = given.gpu.fp16_dense_tflops = 6.0;
  given.gpu.tflops_given = true;
  CHECK(estimate_perf(Planner(given), 512, 1, 1, hand_params()).peak_flops == Approx(6.0e12));
}

namespace {
// a 512-token prompt of Llama-3.1-8B under llama.cpp (build "" = the latest) with these GGUF weights ("" = bf16);
// given: the GPU's rate came from --gpu-tflops
PerfResult llamacpp_prompt(const std::string& gpu, const std::string& build, const std::string& weights, bool given = false) {
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.version = build;
  PlanSpec s = kvtest::spec("llama-3.1-8b", gpu, e);
  if (!weights.empty()) apply_weight_format(s.model, weights, "test");
  s.gpu.tflops_given = given;
  return estimate_perf(Planner(s), 512, 1, 1, hand_params());
}
}  // namespace

TEST_CASE("llama.cpp multiplies a prompt by GGUF weights at its MMQ kernel's rate per SM and clock on NVIDIA GPUs", "[perf][llamacpp]") {
  auto run = [](const std::string& gpu, const std::string& weights, bool given = false) { return llamacpp_prompt(gpu, "", weights, given); };
  // an RTX 4090: 128 SMs x 2,520 MHz x mmq_per_sm_cycle (542) = 174.8 TFLOP/s, achieved (no further efficiency)
  const PerfResult q = run("rtx-4090", "Q4_0");
  CHECK(q.peak_flops == Approx(128.0 * 2520e6 * 542));
  CHECK(term(q.prefill_terms, "linear_compute") == Approx(llama8b_prefill_flops(512) / (128.0 * 2520e6 * 542)));
  CHECK(find_term(q.prefill_terms, "linear_compute")->basis.find("llama.cpp MMQ") != std::string::npos);
  // f16 weights go through cuBLAS at the tensor peak; a V100 (7.0) has no int8 MMA path; a rate the user gave stands
  CHECK(run("rtx-4090", "").peak_flops == Approx(*kvtest::profiles().gpu("rtx-4090").bf16_dense_tflops * 1e12));
  CHECK(run("v100-32gb", "Q4_0").peak_flops == Approx(*kvtest::profiles().gpu("v100-32gb").fp16_dense_tflops * 1e12));
  CHECK(run("rtx-4090", "Q4_0", true).peak_flops == Approx(*kvtest::profiles().gpu("rtx-4090").bf16_dense_tflops * 1e12));
}

TEST_CASE("llama.cpp's quantised prompt GEMMs on AMD GPUs with matrix cores run at a rate per compute unit and clock", "[perf][llamacpp]") {
  auto run = [](const std::string& gpu, const std::string& build, const std::string& weights = "Q4_0", bool given = false) {
    return llamacpp_prompt(gpu, build, weights, given);
  };
  // an RX 7900 XTX (RDNA 3): 96 CUs x 2,500 MHz x mmq_amd_per_cu_cycle (203) = 48.72 TFLOP/s, achieved
  const PerfResult xtx = run("rx-7900-xtx", "b6957");
  CHECK(xtx.peak_flops == Approx(96.0 * 2500e6 * 203));
  CHECK(term(xtx.prefill_terms, "linear_compute") == Approx(llama8b_prefill_flops(512) / (96.0 * 2500e6 * 203)));
  // an MI300X (CDNA 3, MFMA): 304 CUs x 2,100 MHz x 203, any build
  CHECK(run("mi300x", "").peak_flops == Approx(304.0 * 2100e6 * 203));
  // RDNA 4 from b7148 (WMMA-MMQ, PR #17156): 64 CUs x 2,970 MHz x 334 on an RX 9070 XT; the build before, 203
  CHECK(run("rx-9070-xt", "b7148").peak_flops == Approx(64.0 * 2970e6 * 334));
  CHECK(find_term(run("rx-9070-xt", "b7148").prefill_terms, "linear_compute")->basis.find("RDNA 4 WMMA-MMQ") != std::string::npos);
  CHECK(run("rx-9070-xt", "b7147").peak_flops == Approx(64.0 * 2970e6 * 203));
  CHECK(run("rx-9070-xt", "").peak_flops == Approx(64.0 * 2970e6 * 334));  // no build: the latest
  // no matrix cores (an MI50, gfx906): the fp16 rate x efficiency as before; f16 weights (rocBLAS) and a rate the user
  // gave keep the tensor peak
  CHECK(run("mi50-32gb", "b7045").peak_flops == Approx(*kvtest::profiles().gpu("mi50-32gb").fp16_dense_tflops * 1e12));
  CHECK(run("rx-7900-xtx", "b6957", "").peak_flops == Approx(*kvtest::profiles().gpu("rx-7900-xtx").fp16_dense_tflops * 1e12));
  CHECK(run("rx-7900-xtx", "b6957", "Q4_0", true).peak_flops == Approx(*kvtest::profiles().gpu("rx-7900-xtx").fp16_dense_tflops * 1e12));
}

TEST_CASE("deployment tokens/s counts the sequences asked for, not ceil(C / dp) on every replica", "[perf]") {
  // one request over 8 data-parallel replicas: one sequence's tokens, 1 / TPOT, spread over 8 GPUs; 9 requests: the
  // busiest replica runs 2 and sets the step, the deployment decodes 9 a step
  kvplan::PlanSpec s = kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(kvplan::EngineKind::vllm));
  s.parallel.dp = 8;
  const kvplan::Planner p(s);
  const auto one = kvplan::estimate_perf(p, 1024, 128, 1, {});
  CHECK(one.decode_tokens_per_s == Approx(1.0 / one.tpot_s));
  CHECK(one.decode_tokens_per_s_per_gpu == Approx(1.0 / one.tpot_s / 8));
  const auto nine = kvplan::estimate_perf(p, 1024, 128, 9, {});
  CHECK(nine.batch_per_replica == 2);
  CHECK(nine.decode_tokens_per_s == Approx(9.0 / nine.tpot_s));
}

TEST_CASE("expert parallelism costs a token k / ep experts a rank, as tensor-parallel experts do", "[perf][moe]") {
  // kimi-k2 on TP 8: 384 routed experts, top 8. Split by TP each rank runs the 8 experts at 1/8 width; with EP 8 a rank
  // holds 48 whole experts, each routed a token with probability 8 / 384: one expert a token on average, the same work
  // (the rank's own count of active parameters, 8 whole experts, was 8x that)
  const auto linear = [](bool ep) {
    EngineSettings e = kvtest::engine(EngineKind::vllm);
    PlanSpec s = kvtest::spec("kimi-k2-instruct", "h200", e, Parallel{8, 1, 1, ep ? 8 : 1});
    const PerfResult r = estimate_perf(Planner(s), 4096, 0, 16, {});
    return r.prefill_flops;
  };
  CHECK(linear(true) == Approx(linear(false)).epsilon(0.03));
}
