// kvplan simulate against published load tests (tests/data/sim/cases.json, run in full by
// scripts/sim-cases.py; table in docs/simulation.md "Accuracy against published load tests").
// Only the cases whose compared figures were within the floor of issue #13 when the table was made
// are asserted here, so that a regression of the simulator or the performance model fails. The
// floor: output throughput and median ITL (TPOT where ITL is not published) within 20%, median
// TTFT (mean where no median is published) within 35%. The published figures are read from
// cases.json (one copy); for reference:
//   E1  MLPerf Inference 4.1 server, TensorRT-LLM, 8 x H100 SXM, Llama-2-70B: 21,605.79 out tok/s, TPOT p50
//       156.4 ms, TTFT p50 273.0 ms (mlcommons/inference_results_v4.1 @ a2f5d66 closed/NVIDIA/results/
//       DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99.9/Server/performance/run_1/mlperf_log_summary.txt)
//   E4  vLLM main, GB200, Qwen2.5-7B, c128, in ~1000 / out ~5000: 11,582 out tok/s, TTFT p50 6,560 ms
//       (github.com/vllm-project/vllm/pull/44594, watermark-off row)
//   E5  vLLM 0.19.0, RTX PRO 6000, Llama-3.1-8B, 300 ShareGPT requests replayed: 2,969.3 out tok/s
//       (computed from requests.jsonl), TPOT p50 33.4 ms, TTFT p50 9,442.7 ms
//       (casys-kaist/LLMServingSim @ 5daddb2 bench/examples/RTXPRO6000/Llama-3.1-8B)
//   E6  vLLM 0.19.0, RTX 4090, Llama-3.1-8B, the same trace with 2,588 blocks: 1,066.4 out tok/s, TPOT p50
//       30.8 ms, TTFT p50 60,110.9 ms (casys-kaist/LLMServingSim @ 5daddb2 bench/examples/RTX4090/Llama-3.1-8B)
//   E10 vLLM nightly CI, H200 TP4, Llama-3-70B, ShareGPT at 1 req/s: 0.9897 req/s, ITL p50 15.91 ms,
//       TTFT p50 58.7 ms (buildkite.com/vllm/performance-benchmark/builds/9513)
//   E11 vLLM nightly CI, H100 TP4, Llama-3-70B, ShareGPT at 1 req/s: 0.9845 req/s, ITL mean 19.39 ms,
//       TTFT p50 57.0 ms (buildkite.com/vllm/performance-benchmark/builds/9555)
//       (E10, E11 and E13b set the front-end coefficient frontend_s: their TTFTs are not held out)
//   E14 vLLM 0.12.0, H100 TP2, Qwen3-32B, 1024/1024 at c64: TPOT 26.09 ms, TTFT 380.7 ms
//   E16 TRT-LLM 1.0.0rc3, H100, Llama-3.1-8B, 1024/128 at c64: TPOT 20.05 ms, TTFT 176.9 ms
//   E18 vLLM 0.18.0, H100 TP4, gpt-oss-120b, 1024/1024 at c64: TPOT 9.70 ms, TTFT 116.4 ms
//   held out (added after the simulator was set): vLLM 0.12.0, H100 TP4, Qwen3-32B, 1024/1024 at c64: TPOT
//       17.31 ms, TTFT 243.0 ms
//       (E14, E16, E18 and the held-out case: ai-dynamo/aiconfigurator @ 095f58a aic-core/.../systems/silicon_sample.csv)
//   IB-c4 vLLM 0.21.0, H100, Llama-3.1-8B, chatbot-short at c4: 580.3 out tok/s, TPOT p50 6.59 ms
//       (yobitelcomm/bench docs/recipes/concurrency-sweep.md @ eb9dc5c)
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_run.hpp"

using nlohmann::json;

namespace {

const std::string kSim = std::string(KVPLAN_TEST_DATA) + "/sim";

const json& cases() {
  static const json doc = json::parse(kvtest::slurp(kSim + "/cases.json"));
  return doc;
}

const json& find_case(const std::string& id) {
  for (const auto& c : cases()["cases"])
    if (c["id"] == id) return c;
  FAIL("no case " << id << " in tests/data/sim/cases.json");
  return cases();  // not reached
}

// A figure of results by its JSON path ("ttft_ms.p50"); input tok/s = total - output.
double lookup(const json& results, const std::string& key) {
  if (key == "input_tokens_per_s")
    return results["total_tokens_per_s"].get<double>() - results["output_tokens_per_s"].get<double>();
  const json* v = &results;
  for (std::size_t start = 0;;) {
    const auto dot = key.find('.', start);
    v = &(*v)[key.substr(start, dot == std::string::npos ? std::string::npos : dot - start)];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return v->get<double>();
}

// The three compared figures, in scripts/sim-cases.py's order of preference.
const std::vector<std::pair<std::string, std::vector<std::string>>> kColumns = {
    {"throughput", {"output_tokens_per_s", "request_throughput_per_s", "input_tokens_per_s"}},
    {"itl", {"itl_ms.p50", "itl_ms.mean", "tpot_ms.p50", "tpot_ms.mean"}},
    {"ttft", {"ttft_ms.p50", "ttft_ms.mean"}},
};

// A case's `kvplan simulate` command line, its files under tests/data/sim, with JSON output.
std::vector<std::string> simulate_args(const json& c) {
  std::vector<std::string> args = {"simulate"};
  for (const auto& a : c["args"]) {
    std::string s = a.get<std::string>();
    const bool path = s.size() > 5 && (s.ends_with(".json") || s.ends_with(".csv")) && s.front() != '/';
    args.push_back(path ? kSim + "/" + s : s);
  }
  args.push_back("--format");
  args.push_back("json");
  return args;
}

void check_case(const std::string& id) {
  const json& c = find_case(id);
  const auto r = kvtest::kvplan(simulate_args(c));
  INFO(id << ": " << r.err);
  REQUIRE(r.exit == 0);
  const json results = json::parse(r.out)["results"];
  for (const auto& [column, keys] : kColumns) {
    for (const auto& key : keys) {
      if (!c["measured"].contains(key)) continue;
      const double published = c["measured"][key].get<double>();
      const double simulated = lookup(results, key);
      const double floor = cases()["floor"][column].get<double>();
      INFO(id << " " << key << ": published " << published << ", simulated " << simulated);
      CHECK(std::abs(simulated - published) / published <= floor);
      break;
    }
  }
}

}  // namespace

TEST_CASE("published load tests within the floor: MLPerf 4.1 TensorRT-LLM server, 8 x H100, Llama-2-70B (E1)", "[sim_cases]") {
  // within the floor since the 2026-12-03 refit of the performance model (TPOT -17%)
  check_case("E1-mlperf41-trtllm-8xh100-llama2-70b-server");
}

TEST_CASE("published load tests within the floor: vLLM GB200 preemption run (E4)", "[sim_cases]") {
  check_case("E4-vllm-gb200-qwen25-7b-preemption");
}

TEST_CASE("published load tests within the floor: vLLM replayed ShareGPT trace (E5 and E6)", "[sim_cases]") {
  check_case("E5-vllm0190-rtxpro6000-llama31-8b-sharegpt");
  // the same trace on an RTX 4090 with 2,588 blocks: within the floor since gddr_read_gain (2026-12-06; TPOT +22%
  // before it, docs/performance-model.md "GDDR cards")
  check_case("E6-vllm0190-rtx4090-llama31-8b-kvbound");
}

TEST_CASE("published load tests within the floor: vLLM nightly CI TP4 at 1 req/s (E10 and E11)", "[sim_cases]") {
  check_case("E10-vllm-ci-h200-llama3-70b-tp4-sharegpt-qps1");
  check_case("E11-vllm-ci-h100-llama3-70b-tp4-sharegpt-qps1");
}

TEST_CASE("published load tests within the floor: AccelMark vLLM 0.7.3 (V0) in-process engine at concurrency 8", "[sim_cases]") {
  // the V0 async output processor's step before each token reaches the client (docs/simulation.md "vLLM V0's async
  // output processor"): the ShareGPT runs' TTFT was -36% and -24% without it (the 28k run's -2% is +9% with it)
  check_case("accelmark-vllm073-h100-sxm-llama3-8b-sharegpt-c8-sustained");
  check_case("accelmark-vllm073-rtx-3090-llama3-8b-sharegpt-c8-sustained");
  check_case("accelmark-vllm073-a100-40gb-llama31-8b-longctx28k-c8-sustained");
}

TEST_CASE("published load tests within the floor: closed loops at concurrency 64 (E14 E16)", "[sim_cases]") {
  check_case("E14-aic-vllm0120-h100-qwen3-32b-tp2-c64");
  check_case("E16-aic-trtllm100rc3-h100-llama31-8b-c64");
  // E18 (gpt-oss-120b TP4) left the TTFT floor on 2026-12-06 (-34% -> -36%) when the output head stopped being priced
  // for every prompt token (docs/performance-model.md "GEMM work per token")
}

TEST_CASE("published load tests within the floor: InferenceBench vLLM H100 at concurrency 4", "[sim_cases]") {
  check_case("IB-c4-vllm0210-h100-llama31-8b-chatbot-short");
}

TEST_CASE("held-out load tests within the floor: vLLM 0.12 Qwen3-32B TP4 on H100 at concurrency 64", "[sim_cases]") {
  // added 2026-12-03 after the simulator was set (docs/simulation.md "Held-out load tests"): TPOT -15%, TTFT +4%
  check_case("aic-h100-vllm012-qwen3-32b-1024x1024-c64-tp4");
}

TEST_CASE("held-out load tests within the floor: NIM 1.8.0 Llama-3.3-70B FP8 TP2 on H100 at concurrency 25", "[sim_cases]") {
  // NVIDIA NIM benchmarking page, 5000 -> 500 tokens: 623.4 out tok/s, ITL 38.75 ms, TTFT 688.69 ms; within the
  // floor with the FP8 KV cache of NIM's ModelOpt FP8 checkpoint (2026-12-03): throughput -10%, TPOT +12%, TTFT -31%
  check_case("nim-1.8.0-llama33-70b-fp8-2xh100-5000x500-c25");
}

TEST_CASE("load tests within the floor: vLLM 0.10.1 Qwen2-7B on one A100, 50 to 100 requests at once", "[sim_cases]") {
  // dennislee22/vLLM-benchmarking @ b474d1e (README Test 5), 1,024 -> 1,024 tokens: out tok/s 2,356 / 2,991 / 3,352,
  // ITL p50 17.04 / 19.98 / 21.76 ms, TTFT p50 2,490 / 2,544 / 3,897 ms at 50 / 75 / 100 requests. Within the floor
  // since gemm_overlap_p (2026-12-05), which these runs helped choose (docs/performance-model.md "The linear layers of
  // vLLM and SGLang"): throughput +19% at 50 requests is near the edge
  check_case("dl22-a100-vllm0.10.1.1-qwen2-7b-1024x1024-burst50");
  check_case("dl22-a100-vllm0.10.1.1-qwen2-7b-1024x1024-burst75");
  check_case("dl22-a100-vllm0.10.1.1-qwen2-7b-1024x1024-burst100");
}

TEST_CASE("load tests within the floor: trtllm-bench at max load on H100 and H200 (TensorRT-LLM 1.0)", "[sim_cases]") {
  // NVIDIA/TensorRT-LLM perf-overview.md (v1.0 edition, commit 00f37686), Total Output Throughput at max load with the
  // batch limits trtllm-bench's heuristic picks (tests/data/sim/cases.json TB1-TB5): Llama-3.1-8B FP8 on one H100 at
  // 128/128, 2048/2048, 20000/2000: 28,312, 9,305, 1,351 tok/s; Llama-3.3-70B FP8 on one H200 at 1000/1000: 2,909;
  // on two H100 (TP2) at 128/2048: 6,651. Added 2026-12-05 after the last refit: -12%, -12%, -16%, -12%, +1%
  for (const char* id : {"TB1-trtllm10-bench-h100-llama31-8b-fp8-128x128", "TB2-trtllm10-bench-h100-llama31-8b-fp8-2048x2048",
                         "TB3-trtllm10-bench-h100-llama31-8b-fp8-20000x2000", "TB4-trtllm10-bench-h200-llama33-70b-fp8-1000x1000",
                         "TB5-trtllm10-bench-2xh100-llama33-70b-fp8-tp2-128x2048"})
    check_case(id);
}

TEST_CASE("AIConfigurator corpus: median TPOT of closed loops within 20% across engines, models and GPUs", "[sim_cases]") {
  // Every 20th row of tests/data/sim/aic-corpus.csv (68 published runs of vLLM, SGLang and TensorRT-LLM:
  // Llama-3.1-8B / 70B, Qwen3-32B, Qwen3-235B-A22B FP8, gpt-oss-120b on H100, H200, B200, TP 1-8, concurrency
  // 4-512; ai-dynamo/aiconfigurator @ 095f58a silicon_sample.csv), each a closed loop of C clients with 4
  // requests each, as scripts/aic-corpus.py --every 20 runs them. The counts are those within 20% on
  // 2026-12-04 (docs/simulation.md "The AIConfigurator corpus"): a regression of the simulator or the
  // performance model that moves runs out of the floor fails here.
  std::ifstream in(kSim + "/aic-corpus.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  REQUIRE(line ==
          "id,engine,model,gpu,weight_format,tp,concurrency,isl,osl,max_num_seqs,max_num_batched_tokens,max_model_len,"
          "max_prefill_tokens,ttft_ms,tpot_ms");
  std::map<std::string, int> runs, within;
  for (int row = 0; std::getline(in, line); ++row) {
    if (row % 20 != 0) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string v; std::getline(ss, v, ',');) f.push_back(v);
    if (line.back() == ',') f.push_back("");
    REQUIRE(f.size() == 15);
    const long clients = std::stol(f[6]);
    std::vector<std::string> args = {"simulate", f[2], "--gpu", f[3], "--tp", f[5], "--engine", f[1],
                                     "--concurrency", f[6], "--prompt-tokens", f[7], "--output-tokens", f[8],
                                     "--requests", std::to_string(4 * clients), "--seed", "1", "--format", "json"};
    if (!f[4].empty()) args.insert(args.end(), {"--weight-format", f[4]});
    const auto r = kvtest::kvplan(args);
    INFO(f[0] << ": " << r.err);
    REQUIRE(r.exit == 0);
    const double simulated = json::parse(r.out)["results"]["tpot_ms"]["p50"].get<double>();
    const double published = std::stod(f[14]);  // run with the engines' defaults, not the generator limits (f[9..12])
    const std::string engine = f[1].substr(0, f[1].find('@'));
    ++runs[engine];
    within[engine] += std::abs(simulated - published) / published <= 0.20;
  }
  CHECK(runs["vllm"] == 23);
  CHECK(runs["sglang"] == 9);
  CHECK(runs["trtllm"] == 36);
  CHECK(within["vllm"] >= 21);
  CHECK(within["sglang"] >= 7);
  CHECK(within["trtllm"] >= 22);
}

TEST_CASE("the unseen load tests still run: every held-out case gives its compared figures", "[sim_cases]") {
  // tests/data/sim/heldout.json is kept out of every choice of the simulator (docs/simulation.md "Unseen load
  // tests"); no count is asserted on it, but a renamed option or profile must not leave a case unrunnable
  const json doc = json::parse(kvtest::slurp(kSim + "/heldout.json"));
  REQUIRE(doc["cases"].size() >= 12);
  for (const auto& c : doc["cases"]) {
    const auto r = kvtest::kvplan(simulate_args(c));
    INFO(c["id"].get<std::string>() << ": " << r.err);
    REQUIRE(r.exit == 0);
    const json results = json::parse(r.out)["results"];
    for (const auto& [key, published] : c["measured"].items()) {
      INFO(key);
      CHECK(published.get<double>() > 0);
      CHECK(std::isfinite(lookup(results, key)));
    }
  }
}
