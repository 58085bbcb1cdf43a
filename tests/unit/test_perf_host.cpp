// The performance model's host-resident terms, every figure worked by hand: llama.cpp layers and tensors the CPU
// computes with (host_weights at host bandwidth; from 32 tokens copied over PCIe, pcie_weights), KV in host memory
// (host_kv_read), vLLM --cpu-offload-gb (pcie_weights every forward pass), and --host-bandwidth.
#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "kvplan/core/perf.hpp"
#include "perf_helpers.hpp"
#include "plan_helpers.hpp"

using namespace kvplan;
using kvtest::find_term;
using kvtest::hand_params;
using kvtest::term;

namespace {

// llama-server -m llama-3.1-8b -c 8192 -np 1 -ngl N on one H100 SXM, f16 cache, --fit off
PlanSpec llama8b(i64 ngl, bool kv_offload = true) {
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 8192;
  e.ctx_given = true;
  e.parallel = 1;
  e.fit = false;
  e.n_gpu_layers = ngl;
  e.gpu_layers_given = true;
  e.kv_offload = kv_offload;
  return kvtest::spec("llama-3.1-8b", "h100-sxm", e, {}, ElemFormat::f16);
}

constexpr double kH100 = 3.35e12;                   // h100-sxm HBM3 bytes/s
constexpr double kPcie = 64e9;                      // h100-sxm pcie_bytes_per_s: PCIe 5.0 x16, one direction
constexpr double kDdr5 = 2.0 * 8 * 5600e6;          // default host: 2 channels x 8 B x 5600 MT/s = 89.6e9
constexpr double kRead8b = 2.0 * (8030261248.0 - 525336576.0);  // read per step: all but the untied embedding
constexpr double kKvToken8b = 32.0 * 8 * 128 * 2 * 2;           // layers x KV heads x head_dim x (K + V) x f16 = 131,072
// -ngl 16 of 33: the newest llama.cpp offloads the output layer first (#18148), then layers 17..31; layers 0..16 stay
// on the CPU. A block is q 4096 x 4096, k and v 4096 x 1024, o 4096 x 4096, the MLP 3 x 4096 x 14336 and two norms
// of 4096: 218,112,000 parameters x 2 B; the CPU computes with its 17 blocks = 7,415,808,000 B (token_embd is on
// the CPU too, but a step reads one row of it per token)
constexpr i64 kHost16 = 17LL * 218112000 * 2;

}  // namespace

TEST_CASE("llama.cpp -ngl 16 of 33: the CPU reads its layers' weights and KV at host bandwidth", "[perf][host]") {
  const PerfParams pp = hand_params();
  const Planner full(llama8b(99));
  const Planner part(llama8b(16));
  REQUIRE(full.spec().gpu.pcie_bytes_per_s == kPcie);
  REQUIRE(part.engine().gpu_layers == 16);
  REQUIRE(part.engine().total_layers == 33);
  CHECK(full.engine().cpu_weight_bytes == 0);
  CHECK(part.engine().cpu_weight_bytes == kHost16);
  CHECK(part.engine().cpu_expert_bytes == 0);
  // layers 0..16 keep their KV on the host: 17 x 8192 cells x 8 KV heads x 128 x f16 x (K + V)
  CHECK(part.engine().host_kv_bytes == 17LL * 8192 * 8 * 128 * 2 * 2);

  const PerfResult f = estimate_perf(full, 1000, 0, 1, pp);
  const PerfResult r = estimate_perf(part, 1000, 0, 1, pp);
  // all on the GPU: no host term
  CHECK(term(f.decode_terms, "host_weights") == -1);
  CHECK(term(f.decode_terms, "host_kv_read") == -1);
  CHECK(term(f.decode_terms, "pcie_weights") == -1);
  CHECK(term(f.decode_terms, "weights") == Approx(kRead8b / (kH100 * 0.5)));
  // -ngl 16: the GPU reads what it holds, the CPU the rest from host memory (89.6 GB/s by default)
  const double host_w = static_cast<double>(kHost16) / kDdr5;  // 7.4158 GB / 89.6 GB/s = 82.8 ms
  const double gpu_w = (kRead8b - static_cast<double>(kHost16)) / (kH100 * 0.5);
  CHECK(term(r.decode_terms, "host_weights") == Approx(host_w));
  CHECK(term(r.decode_terms, "weights") == Approx(gpu_w));
  // decode at 1000 tokens of context: 17 of the 32 layers' KV is read on the host
  const double kv = 1000 * kKvToken8b, host_kv = kv * 17 / 32;
  CHECK(term(r.decode_terms, "host_kv_read") == Approx(host_kv / kDdr5));
  CHECK(term(r.decode_terms, "kv_read") == Approx((kv - host_kv) / (kH100 * 0.5)));
  CHECK(r.host_weight_bytes_read == Approx(static_cast<double>(kHost16)));
  CHECK(r.host_bandwidth_bytes_per_s == kDdr5);
  // partial offload is slower than full by the host terms less the GPU time those bytes no longer take
  const double slower = host_w - static_cast<double>(kHost16) / (kH100 * 0.5) + host_kv / kDdr5 - host_kv / (kH100 * 0.5);
  CHECK(r.tpot_s > f.tpot_s);
  CHECK(r.tpot_s - f.tpot_s == Approx(slower));
  CHECK(r.decode_tokens_per_s == Approx(1.0 / r.tpot_s));
  const PerfTerm* t = find_term(r.decode_terms, "host_weights");
  REQUIRE(t != nullptr);
  CHECK(t->basis.find("7.416 GB") != std::string::npos);
  CHECK(t->basis.find("host 89.6 GB/s (default: dual-channel DDR5-5600, 2 x 8 B x 5600 MT/s)") != std::string::npos);
}

TEST_CASE("llama.cpp prefill: chunks of 32 tokens or more copy the host weights over PCIe once per ubatch", "[perf][host]") {
  const PerfParams pp = hand_params();
  const Planner full(llama8b(99));
  const Planner part(llama8b(16));
  // TTFT of a 1000-token prompt: 2 ubatches of 512 (-ub 512), each copying the CPU layers' weights to the GPU
  // (ggml op offload, batch >= 32); the GPU then computes every layer, as with full offload
  REQUIRE(part.spec().engine.ubatch_size == 512);
  const PerfResult f = estimate_perf(full, 1000, 0, 1, pp);
  const PerfResult r = estimate_perf(part, 1000, 0, 1, pp);
  const double upload = 2.0 * static_cast<double>(kHost16) / kPcie;  // 2 x 7.4158 GB / 64 GB/s = 231.7 ms
  CHECK(term(r.prefill_terms, "pcie_weights") == Approx(upload));
  CHECK(term(r.prefill_terms, "host_weights") == -1);
  CHECK(r.ttft_s - f.ttft_s == Approx(upload));
  // a chunk of 31 tokens stays under GGML_OP_OFFLOAD_MIN_BATCH: the CPU computes its layers, reading them once
  const StepTimeModel m(part, pp);
  StepBatch small;
  small.prefill_tokens = kLlamaOpOffloadMinBatch - 1;
  small.prefill_seqs = 1;
  small.prefill_attention_pairs = 31.0 * 32 / 2;
  const auto st = m.terms(small);
  CHECK(term(st, "host_weights") == Approx(static_cast<double>(kHost16) / kDdr5));
  CHECK(term(st, "pcie_weights") == -1);
  // 32 tokens: one copy over PCIe instead
  small.prefill_tokens = kLlamaOpOffloadMinBatch;
  small.prefill_attention_pairs = 32.0 * 33 / 2;
  const auto big = m.terms(small);
  CHECK(term(big, "pcie_weights") == Approx(static_cast<double>(kHost16) / kPcie));
  CHECK(term(big, "host_weights") == -1);
}

TEST_CASE("llama.cpp --n-cpu-moe: the CPU reads the experts a step touches from host memory", "[perf][host][moe]") {
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 4096;
  e.ctx_given = true;
  e.parallel = 1;
  e.fit = false;
  e.n_gpu_layers = 99;
  e.gpu_layers_given = true;
  const Planner gpu(kvtest::spec("qwen3-30b-a3b", "h100-sxm", e));
  e.n_cpu_moe = 48;
  const Planner cpu(kvtest::spec("qwen3-30b-a3b", "h100-sxm", e));
  // qwen3-30b-a3b: 48 layers x gate/up/down x 128 experts x 2048 x 768 parameters x bf16 = 57,982,058,496 B on the host
  const double experts = 48.0 * 3 * 128 * 2048 * 768 * 2;
  CHECK(cpu.engine().cpu_expert_bytes == static_cast<i64>(experts));
  CHECK(cpu.engine().cpu_weight_bytes == static_cast<i64>(experts));
  const PerfParams pp = hand_params();
  const PerfResult g = estimate_perf(gpu, 100, 0, 1, pp);
  const PerfResult r = estimate_perf(cpu, 100, 0, 1, pp);
  // batch 1 touches 8 of 128 experts per layer: 1 - (1 - 8/128)^1
  const double touched = 8.0 / 128;
  CHECK(term(r.decode_terms, "host_weights") == Approx(experts * touched / kDdr5));  // 3.62 GB / 89.6 GB/s = 40.4 ms
  CHECK(term(g.decode_terms, "weights") - term(r.decode_terms, "weights") == Approx(experts * touched / (kH100 * 0.5)));
  CHECK(r.tpot_s - g.tpot_s == Approx(experts * touched / kDdr5 - experts * touched / (kH100 * 0.5)));
  CHECK(find_term(r.decode_terms, "host_weights")->basis.find("routed experts x 0.0625 touched") != std::string::npos);
}

TEST_CASE("llama.cpp -nkvo: every layer's KV is read in host memory", "[perf][host]") {
  const PerfParams pp = hand_params();
  const PerfResult on = estimate_perf(Planner(llama8b(99)), 1000, 0, 1, pp);
  const PerfResult off = estimate_perf(Planner(llama8b(99, false)), 1000, 0, 1, pp);
  const double kv = 1000 * kKvToken8b;  // 131 MB at 1000 tokens of context
  CHECK(term(off.decode_terms, "host_kv_read") == Approx(kv / kDdr5));
  CHECK(term(off.decode_terms, "kv_read") == Approx(0).margin(1e-15));
  CHECK(term(off.decode_terms, "host_weights") == -1);
  // the GPU's attention FLOPs stay (they stand in for the CPU's attention, not modelled): with no KV read on the
  // GPU they are its attention time, 4 x 32 layers x 32 heads x 128 x 1000 tokens / (989 TFLOP/s x 0.5)
  const double attn = 4.0 * 32 * 32 * 128 * 1000 / (989e12 * 0.5);
  CHECK(off.tpot_s - on.tpot_s == Approx(kv / kDdr5 + attn - kv / (kH100 * 0.5)));
}

TEST_CASE("vLLM --cpu-offload-gb 10 on an H100: 10 GiB cross PCIe every forward pass", "[perf][host]") {
  auto e = kvtest::engine(EngineKind::vllm);
  const Planner plain(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  e.cpu_offload_bytes = 10 * kvtest::GiB;
  const Planner off(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  REQUIRE(off.engine().host_weight_bytes == 10 * kvtest::GiB);
  const PerfParams pp = hand_params();
  const PerfResult a = estimate_perf(plain, 1000, 0, 1, pp);
  const PerfResult b = estimate_perf(off, 1000, 0, 1, pp);
  const double stream = 10.0 * (1LL << 30) / kPcie;  // 10,737,418,240 B / 64 GB/s = 167.8 ms
  CHECK(term(b.decode_terms, "pcie_weights") == Approx(stream));
  CHECK(term(b.prefill_terms, "pcie_weights") == Approx(stream));
  CHECK(term(a.decode_terms, "pcie_weights") == -1);
  CHECK(b.tpot_s - a.tpot_s == Approx(stream));
  CHECK(b.ttft_s - a.ttft_s == Approx(stream));
  CHECK(find_term(b.decode_terms, "pcie_weights")->basis == "(10.74 GB --cpu-offload-gb weights, every forward pass) / PCIe 64 GB/s");
}

TEST_CASE("host bandwidth: --host-bandwidth scales the host terms and CPU or unified profiles read at their own bandwidth",
          "[perf][host]") {
  PerfParams pp = hand_params();
  const Planner part(llama8b(16));
  const double at_default = term(estimate_perf(part, 1000, 0, 1, pp).decode_terms, "host_weights");
  pp.host_bandwidth = kDdr5 / 2;  // 44.8 GB/s: twice the time
  const PerfResult half = estimate_perf(part, 1000, 0, 1, pp);
  CHECK(term(half.decode_terms, "host_weights") == Approx(2 * at_default));
  CHECK(term(half.decode_terms, "host_weights") == Approx(static_cast<double>(kHost16) / 44.8e9));
  CHECK(find_term(half.decode_terms, "host_weights")->basis.find("host 44.8 GB/s (--host-bandwidth)") != std::string::npos);
  // DGX Spark: the CPU and GPU share one LPDDR5X; host terms read at the profile's bandwidth
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 8192;
  e.ctx_given = true;
  e.parallel = 1;
  e.fit = false;
  e.n_gpu_layers = 16;
  e.gpu_layers_given = true;
  const Planner spark(kvtest::spec("llama-3.1-8b", "dgx-spark", e, {}, ElemFormat::f16));
  REQUIRE(spark.spec().gpu.unified_memory);
  const PerfResult s = estimate_perf(spark, 1000, 0, 1, hand_params());
  CHECK(s.host_bandwidth_bytes_per_s == static_cast<double>(spark.spec().gpu.memory_bandwidth_bytes_per_s));
  // a CPU host profile: EPYC 9004, 12 channels x 8 B x 4800 MT/s = 460.8e9 B/s, read at cpu_bw_eff 0.5; every layer
  // is in that one RAM, so -ngl 16 leaves no layer to a second memory: no host_weights term, all in weights
  const Planner epyc(kvtest::spec("llama-3.1-8b", "cpu-epyc-9004", e, {}, ElemFormat::f16));
  const PerfResult h = estimate_perf(epyc, 1000, 0, 1, hand_params());
  CHECK(h.host_bandwidth_bytes_per_s == 12.0 * 8 * 4800e6 * 0.5);
  CHECK(find_term(h.decode_terms, "host_weights") == nullptr);
  CHECK(epyc.engine().gpu_layers == 33);
  CHECK(std::any_of(epyc.engine().notes.begin(), epyc.engine().notes.end(),
                    [](const std::string& n) { return n.find("is a CPU host: every layer is in its RAM") != std::string::npos; }));
}

TEST_CASE("a CPU host's decode reads its weights at cpu_bw_eff of the DRAM channels' rate", "[perf][host]") {
  // llama.cpp on one EPYC 9004 socket, every layer in its RAM (no GPU): the weights term is the f16 weights /
  // (460.8e9 B/s x cpu_bw_eff 0.5 x weight_eff_ggml 0.5)
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 8192;
  e.ctx_given = true;
  e.parallel = 1;
  e.fit = false;
  const Planner epyc(kvtest::spec("llama-3.1-8b", "cpu-epyc-9004", e, {}, ElemFormat::f16));
  const PerfResult r = estimate_perf(epyc, 1000, 0, 1, hand_params());
  const double weights = term(r.decode_terms, "weights");
  REQUIRE(weights > 0);
  CHECK(find_term(r.decode_terms, "weights")->basis.find("461 GB/s x CPU 0.5") != std::string::npos);
  PerfParams full = hand_params();
  full.coefficients.cpu_bw_eff = 1.0;
  CHECK(term(estimate_perf(epyc, 1000, 0, 1, full).decode_terms, "weights") == Approx(weights / 2));
  // no FLOP rate for a CPU host: TTFT is unknown (-1), and so are a static batch's time and throughput, which
  // begin with the same prefill (they counted it as 0 s)
  const PerfResult batch = estimate_perf(epyc, 1000, 200, 4, hand_params());
  CHECK(batch.ttft_s == -1);
  CHECK(batch.batch_time_s == -1);
  CHECK(batch.output_tokens_per_s == -1);
  // llama.cpp reads f16 matrices at weight_eff_ggml, and the summary's weight_efficiency says so (not weight_eff_dense)
  PerfParams dense = hand_params();
  dense.coefficients.weight_eff_dense = 0.3;
  const PerfResult rd = estimate_perf(epyc, 1000, 0, 1, dense);
  CHECK(rd.weight_kernel == "dense");
  CHECK(rd.weight_efficiency == Approx(0.5));
}

TEST_CASE("kvplan plan --host-bandwidth 44.8GB/s reaches the host_weights term of a llama-server command", "[perf][host][cli]") {
  auto run = [](const std::string& bw) {
    std::vector<std::string> a = {"plan", "--gpu", "h100-sxm", "--format", "json"};
    if (!bw.empty()) a.insert(a.end(), {"--host-bandwidth", bw});
    a.insert(a.end(), {"--", "llama-server", "-m", "llama-3.1-8b", "-ngl", "16", "-c", "8192", "-np", "1", "--fit", "off"});
    const auto r = kvtest::kvplan(a);
    REQUIRE(r.exit == 0);
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& t : j["results"]["performance"]["decode_terms"])
      if (t["term"] == "host_weights") return t;
    FAIL("no host_weights term");
    return nlohmann::json();
  };
  const auto d = run("");
  const auto h = run("44.8GB/s");
  CHECK(h["seconds"].get<double>() == Approx(2 * d["seconds"].get<double>()));
  CHECK(h["basis"].get<std::string>().find("(--host-bandwidth)") != std::string::npos);
  CHECK(run("4.48e10")["seconds"].get<double>() == Approx(h["seconds"].get<double>()));
}

TEST_CASE("a perf-coefficients file may set 0 only where 0 turns a term off", "[perf][dequant]") {
  // llama.cpp Q4_0 on an H100 SXM (132 SMs, 1980 MHz): the dequant term is printed unless its rate is 0
  const std::vector<std::string> cmd = {"plan", "llama-2-7b", "--gpu", "h100-sxm", "--engine", "llama.cpp",
                                        "--weight-format", "q4_0", "--format", "json", "--perf-coefficients"};
  const auto terms_of = [](const kvtest::Run& r) {
    std::vector<std::string> names;
    const auto j = nlohmann::json::parse(r.out);  // kept alive for the loop
    for (const auto& t : j["results"]["performance"]["decode_terms"]) names.push_back(t["term"].get<std::string>());
    return names;
  };
  auto with = [&](const std::string& file) {
    auto a = cmd;
    a.push_back(file);
    return kvtest::kvplan(a);
  };
  const auto on = with(kvtest::write_temp("perf-zero", "on.json", R"({"dequant_per_sm_cycle": 11.8})"));
  REQUIRE(on.exit == 0);
  const auto on_terms = terms_of(on);
  CHECK(std::find(on_terms.begin(), on_terms.end(), "dequant") != on_terms.end());
  const auto off = with(kvtest::write_temp("perf-zero", "off.json", R"({"dequant_per_sm_cycle": 0, "frontend_s": 0})"));
  REQUIRE(off.exit == 0);
  const auto off_terms = terms_of(off);
  CHECK(std::find(off_terms.begin(), off_terms.end(), "dequant") == off_terms.end());
  // every other coefficient divides or scales: 0 is refused with the field named
  const std::string path = kvtest::write_temp("perf-zero", "kv.json", R"({"kv_eff": 0})");
  const auto bad = with(path);
  CHECK(bad.exit == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "kvplan: error: " + path + ": /kv_eff: expected a number > 0; give the coefficient as a positive number\n");
  // one that may be 0 says so when it is negative
  const std::string neg = kvtest::write_temp("perf-zero", "neg.json", R"({"dequant_per_sm_cycle": -1})");
  const auto below = with(neg);
  CHECK(below.exit == 2);
  CHECK(below.out.empty());
  CHECK(below.err == "kvplan: error: " + neg + ": /dequant_per_sm_cycle: expected a number >= 0; give the coefficient as a number, 0 to leave its term out\n");
}

TEST_CASE("perf-coefficients may be written inline as a JSON object", "[perf][cli]") {
  // kv_read = KV bytes / (bandwidth x kv_eff): halving kv_eff doubles the term, whether the object is inline or a file
  auto kv_read = [](const std::string& coeffs) {
    std::vector<std::string> a = {"plan", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "32768", "--format", "json"};
    if (!coeffs.empty()) a.insert(a.end(), {"--perf-coefficients", coeffs});
    const auto r = kvtest::kvplan(a);
    REQUIRE(r.exit == 0);
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& t : j["results"]["performance"]["decode_terms"])
      if (t["term"] == "kv_read") return t["seconds"].get<double>();
    FAIL("no kv_read term");
    return 0.0;
  };
  const double half_eff = default_perf_coefficients().kv_eff / 2;
  const std::string obj = "{\"kv_eff\": " + std::to_string(half_eff) + "}";
  const double base = kv_read("");
  CHECK(kv_read(" " + obj) == Approx(2 * base).epsilon(1e-5));
  CHECK(kv_read(kvtest::write_temp("perf-inline", "kv.json", obj)) == Approx(2 * base).epsilon(1e-5));
  // an inline object's errors name the option, not a file
  const auto bad = kvtest::kvplan({"plan", "llama-3.1-8b", "--perf-coefficients", R"({"kv_ef": 0.5})"});
  CHECK(bad.exit == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "kvplan: error: --perf-coefficients: /kv_ef: unknown coefficient; see docs/performance-model.md for the names\n");
}

TEST_CASE("perf-coefficients refuses a share of a peak above 1, as --bw-efficiency does", "[perf][cli]") {
  // every *_eff is a share of a peak (bandwidth, TFLOP/s, link): 1.2 would read faster than the memory can
  for (const char* key : {"kv_eff", "weight_eff_ggml", "compute_eff_fp8", "link_eff", "die_link_bw_eff"}) {
    const auto bad = kvtest::kvplan({"plan", "llama-3.1-8b", "--perf-coefficients", std::string("{\"") + key + "\": 1.2}"});
    CHECK(bad.exit == 2);
    CHECK(bad.out.empty());
    CHECK(bad.err == std::string("kvplan: error: --perf-coefficients: /") + key +
                         ": 1.2 is more than the whole peak; give a share of the peak between 0 and 1 (0.8 for 80%)\n");
  }
  // exactly the whole peak is allowed, and a time or a rate above 1 is not a share
  CHECK(kvtest::kvplan({"plan", "llama-3.1-8b", "--perf-coefficients", R"({"kv_eff": 1})"}).exit == 0);
  CHECK(kvtest::kvplan({"plan", "llama-3.1-8b", "--perf-coefficients", R"({"dequant_per_sm_cycle": 20})"}).exit == 0);
}

TEST_CASE("perf-coefficients refuses a p-norm exponent below 1", "[perf][cli]") {
  // (a^p + b^p)^(1/p) below p = 1 would exceed the sum of the times
  const auto bad = kvtest::kvplan({"plan", "llama-3.1-8b", "--perf-coefficients", R"({"gemm_overlap_p": 0.5})"});
  CHECK(bad.exit == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "kvplan: error: --perf-coefficients: /gemm_overlap_p: 0.5 is below 1; give an exponent of at least 1 (1 adds "
                   "the times, a large one takes the largest)\n");
  CHECK(kvtest::kvplan({"plan", "llama-3.1-8b", "--perf-coefficients", R"({"gemm_overlap_p": 1})"}).exit == 0);
  CHECK(kvtest::kvplan({"plan", "llama-3.1-8b", "--perf-coefficients", R"({"gemm_overlap_p": 40})"}).exit == 0);
}
