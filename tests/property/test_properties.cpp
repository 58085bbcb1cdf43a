// Property tests over random models (Catch2 random generators; the seed is Catch's fixed default):
// monotone in context, GQA with kv_heads == heads equals MHA, windows never exceed full attention,
// and sizes beyond 2^63 are overflow errors, never wrapped numbers.
#include <catch2/catch.hpp>

#include "helpers.hpp"

using namespace kvplan;

namespace {
ModelSpec random_model(i64 layers, i64 heads, i64 group, i64 head_dim, i64 window) {
  ModelSpec m;
  m.hidden = heads * head_dim;
  m.vocab = 1000;
  for (i64 i = 0; i < layers; ++i) {
    Layer l;
    l.q_heads = heads;
    l.kv_heads = std::max<i64>(1, heads / group);
    l.k_head_dim = l.v_head_dim = head_dim;
    l.intermediate = 4 * m.hidden;
    if (window > 0 && i % 2 == 0) { l.kv = KvKind::sliding; l.window = window; }
    m.layers.push_back(l);
  }
  return m;
}
}  // namespace

TEST_CASE("sequence KV is monotone in context and bounded by full attention", "[property]") {
  const i64 layers = GENERATE(take(8, random(1, 128)));
  const i64 heads = GENERATE(take(4, random(1, 64)));
  const i64 window = GENERATE(0, 128, 4096);
  const i64 head_dim = 64 * GENERATE(1, 2);
  const ModelSpec m = random_model(layers, heads, 1, head_dim, window);
  i64 prev = -1;
  for (i64 ctx : {0, 1, 17, 127, 128, 129, 4095, 4096, 4097, 100000}) {
    const auto r = kvtest::kv(m, ctx);
    CHECK(r.sequence_kv_bytes >= prev);
    CHECK(r.sequence_kv_bytes <= r.kv_bytes_per_token * ctx);
    if (window == 0 || ctx <= window) CHECK(r.sequence_kv_bytes == r.kv_bytes_per_token * ctx);
    prev = r.sequence_kv_bytes;
  }
}

TEST_CASE("GQA with kv_heads == heads equals the MHA formula 2 x layers x heads x head_dim x bytes", "[property]") {
  const i64 layers = GENERATE(take(10, random(1, 200)));
  const i64 heads = GENERATE(take(5, random(1, 128)));
  const ModelSpec m = random_model(layers, heads, 1, 128, 0);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 2 * layers * heads * 128 * 2);
  // grouping divides the cache by the group size
  const ModelSpec g = random_model(layers, heads * 4, 4, 128, 0);
  CHECK(kvtest::kv(g, 1).kv_bytes_per_token == 2 * layers * heads * 128 * 2);
}

TEST_CASE("bytes beyond 2^63 are overflow errors", "[property][overflow]") {
  const ModelSpec m = random_model(GENERATE(take(5, random(64, 100000))), 64, 1, 128, 0);
  // 10^12 tokens x (layers x 32 KiB) exceeds 2^63 for every layer count here
  CHECK_THROWS_AS(kvtest::kv(m, 1'000'000'000'000LL * 1000), OverflowError);
  try {
    kvtest::kv(m, std::numeric_limits<i64>::max() / 2);
    FAIL("expected overflow");
  } catch (const OverflowError& e) {
    CHECK(std::string(e.what()).find("overflows 64-bit bytes") != std::string::npos);
  }
}

TEST_CASE("checked arithmetic", "[overflow]") {
  CHECK(mul(1LL << 31, 1LL << 31) == 1LL << 62);
  CHECK_THROWS_AS(mul(1LL << 32, 1LL << 31), OverflowError);
  CHECK_THROWS_AS(add(std::numeric_limits<i64>::max(), 1), OverflowError);
  CHECK(ceil_div(10, 3) == 4);
  CHECK(round_up(17, 16) == 32);
}

#include "kvplan/core/deployment.hpp"
#include "plan_helpers.hpp"

TEST_CASE("plan fit and sweep agree: a cell fits exactly when the largest concurrency and context allow it", "[property]") {
  // The answers of plan (cell), fit (max_concurrency, max_context) and sweep (run_sweep) come from one
  // Planner; check's requirements read the same cells. A deployment that does not start fits nothing.
  static const char* models[] = {"llama-3.1-8b", "qwen3-8b", "gemma-3-27b-it", "mixtral-8x7b", "qwen3-30b-a3b", "gpt-oss-20b", "deepseek-v2-lite"};
  static const char* gpus[] = {"l4", "rtx-4090", "a100-sxm-80gb", "h100-sxm", "h200", "l40s"};
  static const EngineKind engines[] = {EngineKind::vllm, EngineKind::sglang, EngineKind::trtllm, EngineKind::llamacpp, EngineKind::generic};
  const int mi = GENERATE(take(12, random(0, 6)));
  const int gi = GENERATE(take(3, random(0, 5)));
  const int ei = GENERATE(range(0, 5));
  const i64 tokens = GENERATE(take(2, random(1, 40000)));
  const i64 conc = GENERATE(take(2, random(1, 300)));
  DeploymentSpec d;
  d.model = kvtest::load(models[mi]);
  d.gpu = kvtest::profiles().gpu(gpus[gi]);
  d.engine.kind = engines[ei];
  if (d.engine.kind == EngineKind::llamacpp) d.engine.ctx_size = 32768;
  INFO(models[mi] << " on " << gpus[gi] << " under " << engine_name(d.engine.kind) << ": " << conc << " x " << tokens);
  PlanSpec s;
  try {
    s = plan_spec(d);
  } catch (const InputError&) {
    return;  // a combination the engine's rules refuse (e.g. no max_position_embeddings)
  }
  const Planner p(s);
  const Cell c = p.cell(tokens, conc);
  CHECK(c.fits == (p.max_concurrency(tokens) >= conc));
  CHECK(c.fits == (p.max_context(conc) >= tokens));
  if (!p.engine().startup_ok && d.engine.kind == EngineKind::vllm) CHECK_FALSE(c.fits);
  SweepAxes axes;
  axes.contexts = {tokens};
  axes.concurrencies = {conc};
  int rows = 0;
  run_sweep(d, axes, [](const Planner&) {}, [&](const SweepRow& r) {
    ++rows;
    CHECK(r.cell.fits == c.fits);
    CHECK(r.cell.limiting == c.limiting);
    CHECK(r.cell.kv_bytes == c.kv_bytes);
  });
  CHECK(rows == 1);
}
