// Benchmark of the serving simulator (not a test): 100,000 ShareGPT-like requests (lognormal prompts
// mean 220, outputs mean 200) arriving as a Poisson process through one engine's scheduler for
// llama-3.1-8b on one H100 with the StepTimeModel clock. Prints wall time and what was simulated.
// Usage: kvplan_sim_bench [requests] [rate/s] [vllm|sglang|trtllm|llamacpp] [gpu] [pool blocks]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kvplan/core/perf.hpp"
#include "kvplan/core/plan.hpp"
#include "kvplan/core/simulate.hpp"
#include "kvplan/io/profiles.hpp"

using namespace kvplan;
using clk = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const i64 requests = argc > 1 ? std::atoll(argv[1]) : 100000;
  const double rate = argc > 2 ? std::atof(argv[2]) : 90;
  const std::string engine = argc > 3 ? argv[3] : "vllm";
  const std::string gpu = argc > 4 ? argv[4] : "h100-sxm";
  const auto profiles = io::Profiles::load(std::nullopt);
  PlanSpec s;
  s.model = profiles.model("llama-3.1-8b");
  s.kv.k_format = s.kv.v_format = s.kv.state_format = s.model.dtype;
  s.gpu = profiles.gpu(gpu);
  EngineSettings e;
  e.kind = *parse_engine(engine);
  e.max_model_len = 8192;
  e.ctx_size = 8192 * 4;
  s.engine = resolve_engine_defaults(e, s.model.max_context, 1, s.gpu.memory_bytes, s.gpu.architecture);
  const Planner p(s);
  const StepTimeModel model(p, {});
  SimConfig cfg = sim_config_for(p);
  if (argc > 5) cfg.pool_blocks = std::atoll(argv[5]);  // a smaller pool: preemption under load

  WorkloadSpec w;
  w.requests = requests;
  w.rate = rate;
  w.prompt.kind = LengthDist::Kind::lognormal;
  w.prompt.mean = 220;
  w.prompt.spread = 1.0;
  w.prompt.min = 4;
  w.prompt.max = 1024;  // vllm bench serve's ShareGPT filter
  w.output.kind = LengthDist::Kind::lognormal;
  w.output.mean = 200;
  w.output.spread = 1.0;
  w.output.min = 4;
  w.output.max = 1024;
  w.seed = 1;

  double best = 1e30;
  SimResult r;
  for (int rep = 0; rep < 3; ++rep) {
    auto src = make_workload(w);
    const auto t0 = clk::now();
    r = simulate(cfg, *src, [&](const StepBatch& b) { return model.step_s(b); });
    best = std::min(best, std::chrono::duration<double>(clk::now() - t0).count());
  }
  double kv = 0;
  for (const auto& pt : r.timeline) kv += pt.kv_used_fraction;
  kv /= std::max<double>(1, static_cast<double>(r.timeline.size()));
  std::printf(
      "simulate %lld requests (%s, llama-3.1-8b, %s, pool %lld x %lld tokens, max_num_seqs %lld, Poisson %.0f/s): "
      "best of 3 %.3f s wall\n",
      static_cast<long long>(requests), engine.c_str(), gpu.c_str(), static_cast<long long>(cfg.pool_blocks),
      static_cast<long long>(cfg.block_tokens), static_cast<long long>(cfg.max_num_seqs), rate, best);
  std::printf(
      "  simulated %.1f s, %lld steps, %lld output tokens (%.0f tok/s), %lld preemptions, peak %lld blocks, "
      "mean KV use %.0f%%, TTFT p50 %.3f s p99 %.3f s, TPOT p50 %.1f ms, ITL gaps %lld\n",
      r.duration_s, static_cast<long long>(r.steps), static_cast<long long>(r.output_tokens), r.output_tokens_per_s,
      static_cast<long long>(r.preemptions), static_cast<long long>(r.peak_blocks_used), 100 * kv, r.ttft_s.p50,
      r.ttft_s.p99, 1e3 * r.tpot_s.p50, static_cast<long long>(r.itl_s.count));
  return 0;
}
