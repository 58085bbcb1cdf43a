// Property tests of the serving simulator over seeded random workloads and configs (fixed seeds):
// tokens and blocks are conserved, nothing leaks, FCFS engines keep first-token order, a free and
// instant engine has zero latency, results are deterministic per seed, and random configs over all
// four schedulers run to the end with their invariants.
#include <catch2/catch.hpp>
#include <random>

#include "kvplan/core/simulate.hpp"

using namespace kvplan;

namespace {

class Recorder {
 public:
  std::vector<RequestRecord> records;
  RequestObserver observer() {
    return [this](const RequestRecord& r) { records.push_back(r); };
  }
};

// A workload of `n` requests with random lengths, shared prefixes and (optionally) sessions.
WorkloadSpec random_workload(std::mt19937_64& g, i64 n) {
  WorkloadSpec w;
  w.requests = n;
  w.rate = g() % 2 ? 0 : 5.0 + static_cast<double>(g() % 200);
  w.arrival = static_cast<ArrivalKind>(g() % 3);
  w.burstiness = 0.3 + static_cast<double>(g() % 20) / 10.0;
  w.prompt.kind = static_cast<LengthDist::Kind>(g() % 4);
  w.prompt.mean = 4 + static_cast<double>(g() % 300);
  w.prompt.spread = static_cast<double>(g() % 10) / 10.0;
  w.prompt.max = 600;
  w.output.kind = static_cast<LengthDist::Kind>(g() % 4);
  w.output.mean = 1 + static_cast<double>(g() % 120);
  w.output.spread = static_cast<double>(g() % 10) / 10.0;
  w.output.max = 300;
  w.shared_prefix_tokens = g() % 2 ? static_cast<i64>(g() % 100) : 0;
  w.prefix_groups = 1 + static_cast<i64>(g() % 3);
  w.turns = g() % 3 ? 1 : 1 + static_cast<i64>(g() % 3);
  w.think_s = static_cast<double>(g() % 10) / 100.0;
  w.seed = g();
  return w;
}

SimConfig random_config(std::mt19937_64& g, SchedulerKind k) {
  SimConfig c;
  c.scheduler = k;
  c.replicas = 1 + static_cast<i64>(g() % 3);
  c.block_tokens = std::array<i64, 4>{1, 8, 16, 32}[g() % 4];
  if ((k == SchedulerKind::vllm_v1 || k == SchedulerKind::vllm_v0) && c.block_tokens == 1) c.block_tokens = 16;
  // pools from tight (a few long requests) to roomy
  const i64 tokens = 1500 + static_cast<i64>(g() % 20000);
  c.pool_blocks = std::max<i64>(tokens / c.block_tokens, 2);
  c.max_num_seqs = 1 + static_cast<i64>(g() % 64);
  c.max_num_batched_tokens = 64 + static_cast<i64>(g() % 2048);
  c.chunked_prefill = g() % 4 != 0;
  c.prefix_caching = g() % 3 != 0;
  c.closed_loop_concurrency = g() % 3 == 0 ? 1 + static_cast<i64>(g() % 16) : 0;
  c.max_model_len = g() % 2 ? 300 + static_cast<i64>(g() % 1500) : 0;
  switch (k) {
    case SchedulerKind::vllm_v1:
    case SchedulerKind::vllm_v0:
      c.policy = g() % 4 == 0 ? "priority" : "fcfs";
      if (!c.chunked_prefill) c.max_num_batched_tokens = c.max_model_len = 1024;  // a whole prompt must fit a step
      break;
    case SchedulerKind::sglang:
      c.policy = g() % 2 ? "lpm" : "fcfs";
      break;
    case SchedulerKind::trtllm:
      c.capacity_policy = g() % 2 ? "MAX_UTILIZATION" : "GUARANTEED_NO_EVICT";
      break;
    case SchedulerKind::llamacpp:
      c.block_tokens = 1;
      c.slots = 1 + static_cast<i64>(g() % 6);
      c.unified = g() % 2;
      c.pool_blocks = 400 + static_cast<i64>(g() % 4000);
      break;
  }
  return c;
}

// A step time that grows with the work, like a real engine (5 ms + 20 us per token + KV reads).
double modelled_step(const StepBatch& b) {
  return 0.005 + 2e-5 * static_cast<double>(b.prefill_tokens + b.decode_seqs) + 1e-8 * b.decode_context_tokens +
         1e-9 * b.prefill_attention_pairs;
}

void check_invariants(const SimConfig& cfg, const WorkloadSpec& w, const SimResult& r,
                      const std::vector<RequestRecord>& recs) {
  INFO("scheduler " << static_cast<int>(cfg.scheduler) << " pool " << cfg.pool_blocks << " x " << cfg.block_tokens);
  CHECK(r.requests == w.requests);
  CHECK(static_cast<i64>(recs.size()) == w.requests);
  CHECK(r.completed + r.failed == r.requests);
  CHECK(r.blocks_leaked == 0);
  const i64 usable = cfg.scheduler == SchedulerKind::vllm_v1 ? cfg.pool_blocks - 1 : cfg.pool_blocks;  // V1's null block
  CHECK(r.peak_blocks_used <= usable);
  i64 out = 0, in = 0, truncated = 0;
  for (const auto& rec : recs) {
    if (rec.failed) continue;
    in += rec.prompt_tokens;
    out += rec.output_tokens;
    truncated += rec.truncated;
    CHECK(rec.first_token_s >= rec.arrival_s);
    CHECK(rec.finish_s >= rec.first_token_s);
    CHECK(rec.cached_prompt_tokens < rec.prompt_tokens);
    CHECK(rec.output_tokens >= 1);
  }
  CHECK(r.input_tokens == in);
  CHECK(r.output_tokens == out);
  CHECK(r.truncated == truncated);
  CHECK(r.prefix_hit_rate >= 0);
  CHECK(r.prefix_hit_rate < 1);
  for (const auto& p : r.timeline) {
    CHECK(p.kv_used_fraction >= 0);
    CHECK(p.kv_used_fraction <= 1);
  }
}

}  // namespace

TEST_CASE("simulate properties: tokens conserved and no block leaks across schedulers", "[simulate][property]") {
  std::mt19937_64 g(20240611);
  const SchedulerKind kinds[] = {SchedulerKind::vllm_v1, SchedulerKind::sglang, SchedulerKind::trtllm,
                                 SchedulerKind::llamacpp, SchedulerKind::vllm_v0};
  i64 preemptions[5] = {}, failed[5] = {}, truncated = 0;
  double hits[5] = {};
  for (int i = 0; i < 250; ++i) {
    const SchedulerKind k = kinds[i % 5];
    const WorkloadSpec w = random_workload(g, 40 + static_cast<i64>(g() % 160));
    const SimConfig cfg = random_config(g, k);
    Recorder rec;
    auto src = make_workload(w);
    const SimResult r = simulate(cfg, *src, modelled_step, {}, rec.observer());
    check_invariants(cfg, w, r, rec.records);
    // every request the engine accepted produced exactly what it asked for (llama.cpp and SGLang may truncate)
    auto again = make_workload(w);
    std::vector<SimRequest> asked;
    SimRequest s;
    while (again->next(s)) asked.push_back(s);
    for (const auto& rr : rec.records)
      if (!rr.failed && !rr.truncated) CHECK(rr.output_tokens == asked[static_cast<size_t>(rr.id)].output_tokens);
    // llama.cpp stops at a full slot; SGLang clips max_new_tokens to its pool's max_req_len
    if (k != SchedulerKind::llamacpp && k != SchedulerKind::sglang) CHECK(r.truncated == 0);
    preemptions[i % 5] += r.preemptions;
    failed[i % 5] += r.failed;
    hits[i % 5] += r.prefix_hit_rate;
    truncated += r.truncated;
  }
  // the random configs reach every path: preemption / retraction / pausing, rejections, cache hits
  for (int k : {0, 1, 2, 4}) CHECK(preemptions[k] > 0);
  for (int k = 0; k < 5; ++k) {
    INFO("scheduler " << k);
    CHECK(failed[k] > 0);
  }
  for (int k = 0; k < 5; ++k) CHECK(hits[k] > 0);
  CHECK(truncated > 0);
}

TEST_CASE("simulate properties: vLLM hybrid cache groups conserve tokens and leak no blocks", "[simulate][property]") {
  // random mixes of full, sliding-window, chunked, Mamba and cross-attention groups (windows from a block to past the
  // longest request, block sizes that differ between kinds)
  std::mt19937_64 g(20261208);
  i64 preemptions = 0, hits = 0;
  for (int i = 0; i < 120; ++i) {
    const WorkloadSpec w = random_workload(g, 40 + static_cast<i64>(g() % 160));
    SimConfig cfg = random_config(g, SchedulerKind::vllm_v1);
    using K = SimCacheGroup::Kind;
    const bool sliding_first = g() % 4 == 0;  // every attention layer slides (Mistral): the window's blocks are hashed
    SimCacheGroup first{sliding_first ? K::sliding : K::full, 1 + static_cast<i64>(g() % 2), cfg.block_tokens,
                        sliding_first ? 1 + static_cast<i64>(g() % 400) : 0, 0};
    cfg.cache_groups = {first};
    for (int k = 0, n = 1 + static_cast<int>(g() % 3); k < n; ++k) {
      SimCacheGroup o;
      o.kind = std::array<K, 5>{K::sliding, K::chunked, K::state, K::fixed, K::full}[g() % (sliding_first ? 4 : 5)];
      o.groups = 1 + static_cast<i64>(g() % 6);
      o.block_tokens = cfg.block_tokens * (g() % 3 == 0 ? 2 : 1);
      o.window = 1 + static_cast<i64>(g() % 700);
      o.blocks = static_cast<i64>(g() % 4);
      cfg.cache_groups.push_back(o);
    }
    cfg.pool_blocks = std::max<i64>(cfg.pool_blocks, 3 * (first.groups + 1));
    Recorder rec;
    auto src = make_workload(w);
    const SimResult r = simulate(cfg, *src, modelled_step, {}, rec.observer());
    check_invariants(cfg, w, r, rec.records);
    CHECK(r.truncated == 0);
    preemptions += r.preemptions;
    hits += r.prefix_hit_rate > 0;
  }
  CHECK(preemptions > 0);
  CHECK(hits > 0);
}

TEST_CASE("simulate properties: vLLM without preemption keeps FCFS first-token order", "[simulate][property]") {
  std::mt19937_64 g(7);
  for (int i = 0; i < 40; ++i) {
    const bool v0 = i % 2 == 1;  // V0 without chunked prefill: whole prompts, admitted before decodes
    WorkloadSpec w;
    w.requests = 200;
    w.rate = 20 + static_cast<double>(g() % 200);
    w.prompt.mean = 50 + static_cast<double>(g() % 500);
    w.output.mean = 10 + static_cast<double>(g() % 100);
    w.seed = g();
    SimConfig c;
    c.pool_blocks = 1'000'000;  // never preempts
    c.max_num_seqs = 1 + static_cast<i64>(g() % 64);
    c.max_num_batched_tokens = 64 + static_cast<i64>(g() % 4096);
    if (v0) {
      c.scheduler = SchedulerKind::vllm_v0;
      c.chunked_prefill = false;
      c.max_num_batched_tokens += 1000;  // every prompt (at most 550 tokens) fits a step
    }
    Recorder rec;
    auto src = make_workload(w);
    const SimResult r = simulate(c, *src, modelled_step, {}, rec.observer());
    CHECK(r.preemptions == 0);
    std::sort(rec.records.begin(), rec.records.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    for (size_t k = 1; k < rec.records.size(); ++k)
      CHECK(rec.records[k].first_token_s >= rec.records[k - 1].first_token_s);
  }
}

TEST_CASE("simulate properties: infinite memory and zero step time give zero latency in arrival order",
          "[simulate][property]") {
  std::mt19937_64 g(11);
  const SchedulerKind kinds[] = {SchedulerKind::vllm_v1, SchedulerKind::sglang, SchedulerKind::trtllm,
                                 SchedulerKind::llamacpp, SchedulerKind::vllm_v0};
  for (SchedulerKind k : kinds) {
    WorkloadSpec w;
    w.requests = 300;
    w.rate = 50;
    w.prompt.kind = LengthDist::Kind::lognormal;
    w.prompt.mean = 200;
    w.prompt.spread = 0.8;
    w.prompt.max = 2000;
    w.output.mean = 40;
    w.seed = g();
    SimConfig c;
    c.scheduler = k;
    c.pool_blocks = 10'000'000;
    c.block_tokens = k == SchedulerKind::llamacpp ? 1 : 16;
    c.slots = 1000;
    c.max_num_seqs = 1000;
    c.max_num_batched_tokens = 1'000'000;
    c.n_ctx_seq = 100'000;
    Recorder rec;
    auto src = make_workload(w);
    const SimResult r = simulate(
        c, *src, [](const StepBatch&) { return 0.0; }, {}, rec.observer());
    CHECK(r.completed == 300);
    CHECK(r.ttft_s.p99 == 0);
    CHECK(r.e2e_s.p99 == 0);
    CHECK(r.itl_s.p99 == 0);
    for (size_t i = 1; i < rec.records.size(); ++i)
      CHECK(rec.records[i].id > rec.records[i - 1].id);  // finish order = arrival order
    for (const auto& rr : rec.records) CHECK(rr.finish_s == rr.arrival_s);
  }
}

TEST_CASE("simulate properties: the same seed gives the same result, another seed another", "[simulate][property]") {
  auto run = [](std::uint64_t seed, SchedulerKind k) {
    WorkloadSpec w;
    w.requests = 500;
    w.rate = 40;
    w.arrival = ArrivalKind::gamma;
    w.burstiness = 0.5;
    w.prompt.kind = LengthDist::Kind::lognormal;
    w.prompt.mean = 220;
    w.prompt.spread = 1;
    w.output.kind = LengthDist::Kind::normal;
    w.output.mean = 100;
    w.output.spread = 0.3;
    w.shared_prefix_tokens = 64;
    w.prefix_groups = 3;
    w.seed = seed;
    SimConfig c;
    c.scheduler = k;
    c.pool_blocks = k == SchedulerKind::llamacpp ? 6000 : 400;
    c.block_tokens = k == SchedulerKind::llamacpp ? 1 : 16;
    auto src = make_workload(w);
    return simulate(c, *src, modelled_step);
  };
  const SchedulerKind kinds[] = {SchedulerKind::vllm_v1, SchedulerKind::sglang, SchedulerKind::trtllm,
                                 SchedulerKind::llamacpp, SchedulerKind::vllm_v0};
  for (SchedulerKind k : kinds) {
    const SimResult a = run(42, k), b = run(42, k), c = run(43, k);
    CHECK(a.ttft_s.mean == b.ttft_s.mean);
    CHECK(a.itl_s.p99 == b.itl_s.p99);
    CHECK(a.e2e_s.p90 == b.e2e_s.p90);
    CHECK(a.steps == b.steps);
    CHECK(a.preemptions == b.preemptions);
    CHECK(a.prefix_hit_rate == b.prefix_hit_rate);
    REQUIRE(a.timeline.size() == b.timeline.size());
    for (size_t i = 0; i < a.timeline.size(); ++i)
      CHECK(a.timeline[i].kv_used_fraction == b.timeline[i].kv_used_fraction);
    CHECK(a.ttft_s.mean != c.ttft_s.mean);
    CHECK(a.steps != c.steps);
  }
}

TEST_CASE("simulate properties: histogram percentiles stay within 0.1% of the exact ones", "[simulate][property]") {
  // More than 2^20 ITL gaps switch the quantiles to the log-bucketed histogram. One request at a time
  // (max_num_seqs 1), each 1 prompt token + 3 outputs: steps 3k, 3k+1, 3k+2 serve request k and the
  // gaps are the durations of steps 3k+1 and 3k+2; replay known durations and compare with numpy's rule.
  const i64 requests = (1 << 19) + 2500;
  std::mt19937_64 g(5);
  std::vector<double> xs;
  for (i64 i = 0; i < 3 * requests; ++i)
    xs.push_back(std::exp(-6.0 + 8.0 * static_cast<double>(g() >> 11) * 0x1.0p-53));
  size_t next = 0;
  const StepTimeFn replay = [&](const StepBatch&) { return xs[next++]; };
  struct Same : RequestSource {
    i64 n = 0, total;
    explicit Same(i64 t) : total(t) {}
    bool next(SimRequest& r) override {
      if (n >= total) return false;
      r = SimRequest{};
      r.id = n++;
      r.prompt_tokens = 1;
      r.output_tokens = 3;
      return true;
    }
  } src(requests);
  SimConfig c;
  c.pool_blocks = 100;
  c.max_num_seqs = 1;
  const SimResult r = simulate(c, src, replay);
  REQUIRE(r.itl_s.count == 2 * requests);
  std::vector<double> gaps;
  for (size_t i = 0; i < xs.size(); ++i)
    if (i % 3 != 0) gaps.push_back(xs[i]);
  std::sort(gaps.begin(), gaps.end());
  auto pct = [&](double p) {
    const double pos = p / 100.0 * static_cast<double>(gaps.size() - 1);
    const auto lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, gaps.size() - 1);
    return gaps[lo] + (gaps[hi] - gaps[lo]) * (pos - static_cast<double>(lo));
  };
  CHECK(r.itl_s.p50 == Approx(pct(50)).epsilon(0.001));
  CHECK(r.itl_s.p90 == Approx(pct(90)).epsilon(0.001));
  CHECK(r.itl_s.p99 == Approx(pct(99)).epsilon(0.001));
}
