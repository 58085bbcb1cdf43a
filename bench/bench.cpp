// Benchmarks (not tests): a 1,000 x 1,000-cell sweep on one core, and a whole plan computed in
// process. Prints one line per measurement; scripts/bench.sh adds the end-to-end CLI timing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "kvplan/core/perf.hpp"
#include "kvplan/core/plan.hpp"
#include "kvplan/io/profiles.hpp"

using namespace kvplan;
using clk = std::chrono::steady_clock;

static double seconds_since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

int main() {
  const auto profiles = io::Profiles::load(std::nullopt);
  auto make_spec = [&](const char* model, const char* gpu, EngineKind k) {
    PlanSpec s;
    s.model = profiles.model(model);
    s.kv.k_format = s.kv.v_format = s.kv.state_format = s.model.dtype;
    s.gpu = profiles.gpu(gpu);
    EngineSettings e;
    e.kind = k;
    s.engine = resolve_engine_defaults(e, s.model.max_context, 1, s.gpu.memory_bytes, s.gpu.architecture);
    return s;
  };
  for (const auto& [model, engine] : std::vector<std::pair<const char*, EngineKind>>{
           {"llama-3.1-8b", EngineKind::vllm}, {"gemma-3-27b-it", EngineKind::vllm}, {"qwen3-30b-a3b", EngineKind::sglang}}) {
    const Planner p(make_spec(model, "h200", engine));
    std::vector<double> runs;
    long long fits = 0;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = clk::now();
      for (i64 i = 1; i <= 1000; ++i)
        for (i64 j = 1; j <= 1000; ++j) fits += p.cell(i * 128, j).fits;
      runs.push_back(seconds_since(t0));
    }
    std::sort(runs.begin(), runs.end());
    std::printf("sweep 1000x1000 cells  %-16s %-7s median %.3f s  (%.0f ns/cell, %lld fitting cells)\n", model,
                engine_name(engine), runs[2], runs[2] * 1e3, fits / 5);
  }
  std::vector<double> runs;
  for (int rep = 0; rep < 51; ++rep) {
    const auto t0 = clk::now();
    const Planner p(make_spec("llama-3.1-70b", "h100-sxm", EngineKind::vllm));
    volatile i64 a = p.max_concurrency(32768);
    volatile i64 b = p.max_context(64);
    volatile double c = estimate_perf(p, 32768, 0, 64, {}).tpot_s;
    (void)a, (void)b, (void)c;
    runs.push_back(seconds_since(t0));
  }
  std::sort(runs.begin(), runs.end());
  std::printf("plan in process (llama-3.1-70b, h100, vllm: budget, engine, fit, performance) median %.3f ms\n", runs[25] * 1e3);
  return 0;
}
