// The probe on the CPU backend, end to end: its ledger equals the planner's prediction exactly,
// attention matches a naive reference, NaN-filled unused slots are never read, pages are reused.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <set>

#include "kvplan/core/error.hpp"
#include "kvplan/probe/probe.hpp"

using namespace kvplan::probe;

TEST_CASE("fp8 e4m3 and bf16 conversions", "[probe][convert]") {
  CHECK(to_fp8_e4m3(1.0f) == 0x38);      // exponent 0 -> biased 7 = 0b0111, mantissa 0
  CHECK(to_fp8_e4m3(-2.0f) == 0xC0);
  CHECK(to_fp8_e4m3(448.0f) == 0x7E);    // largest finite: 1.75 x 2^8
  CHECK(to_fp8_e4m3(1e6f) == 0x7E);      // saturates
  CHECK(to_fp8_e4m3(std::ldexp(1.0f, -9)) == 0x01);  // smallest subnormal
  CHECK(to_fp8_e4m3(std::nanf("")) == 0x7F);
  CHECK(std::isnan(from_fp8_e4m3(0x7F)));
  CHECK(from_fp8_e4m3(0x38) == 1.0f);
  CHECK(from_fp8_e4m3(0x7E) == 448.0f);
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7f) == 0x7f) continue;
    const float f = from_fp8_e4m3(static_cast<std::uint8_t>(b));
    if (f == 0.0f) continue;  // +0 / -0
    CHECK(to_fp8_e4m3(f) == b);  // every finite code round-trips
  }
  CHECK(to_bf16(1.0f) == 0x3F80);
  CHECK(to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);  // tie -> even
  CHECK(to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);
  CHECK(from_f16(to_f16(0.5f)) == 0.5f);
}

TEST_CASE("block allocator: a permutation without repeats; released blocks are reused", "[probe][allocator]") {
  BlockAllocator a(100, true, 7);
  const auto p = a.allocate(16 * 50, 16);
  REQUIRE(p.size() == 50);
  CHECK(std::set<std::int32_t>(p.begin(), p.end()).size() == 50);
  CHECK(a.allocate(16 * 51, 16).empty());  // only 50 left
  a.release(p);
  const auto q = a.allocate(16 * 100, 16);
  CHECK(q.size() == 100);
  CHECK(a.reused() == 50);
  BlockAllocator c(10, false, 7);
  CHECK(c.allocate(33, 16) == std::vector<std::int32_t>{0, 1, 2});  // contiguous control
}

TEST_CASE("unsupported shapes say which are supported", "[probe]") {
  PoolSpec s;
  s.head_dim = 96;
  CHECK_THROWS_WITH(check_supported(s), "probe shape: head_dim 96 is not supported by the kernels; supported head dims: 64, 128, 256");
  s.head_dim = 128;
  s.page_size = 8;
  CHECK_THROWS_WITH(check_supported(s), "probe shape: page size 8 is not supported by the kernels; supported page sizes: 16, 32, 64");
}

TEST_CASE("CPU backend decode equals a naive softmax(qK)V over the stored values", "[probe][cpu]") {
  auto b = make_backend("cpu", 2);
  for (CacheDtype dt : {CacheDtype::bf16, CacheDtype::f16, CacheDtype::fp8_e4m3}) {
    PoolSpec s;
    s.num_q_heads = 4;
    s.num_kv_heads = 2;
    s.head_dim = 64;
    s.page_size = 16;
    s.dtype = dt;
    s.num_blocks = 8;
    b->allocate_pool(s);
    b->fill_nan();
    // one sequence of 37 tokens on pages 5, 2, 7 (the rest of page 7 stays NaN)
    const int T = 37, row = s.num_kv_heads * s.head_dim;
    std::mt19937 rng(3);
    std::normal_distribution<float> n(0, 1);
    std::vector<float> k(static_cast<size_t>(T * row)), v(k.size()), q(static_cast<size_t>(s.num_q_heads * s.head_dim));
    for (auto& x : k) x = n(rng);
    for (auto& x : v) x = n(rng);
    for (auto& x : q) x = n(rng);
    const std::vector<std::int32_t> pages = {5, 2, 7};
    std::vector<kvplan::probe::i64> slots;
    for (int t = 0; t < T; ++t) slots.push_back(pages[static_cast<size_t>(t / 16)] * 16 + t % 16);
    const Fp8Scales sc{0.05f, 0.05f};
    b->append(k, v, slots, sc);
    PageTable pt;
    pt.indptr = {0, 3};
    pt.indices = pages;
    pt.last_page_len = {T - 32};
    std::vector<float> out;
    b->decode(q, pt, sc, out);
    for (int h = 0; h < s.num_q_heads; ++h) {
      const int kvh = h / 2;
      std::vector<double> logit(T);
      double mx = -1e300;
      for (int t = 0; t < T; ++t) {
        double dot = 0;
        for (int i = 0; i < 64; ++i) dot += q[static_cast<size_t>(h * 64 + i)] * quantise(k[static_cast<size_t>(t * row + kvh * 64 + i)], dt, sc.k);
        logit[static_cast<size_t>(t)] = dot / 8.0;  // 1 / sqrt(64)
        mx = std::max(mx, logit[static_cast<size_t>(t)]);
      }
      double sum = 0;
      for (auto& l : logit) sum += (l = std::exp(l - mx));
      for (int i = 0; i < 64; ++i) {
        double o = 0;
        for (int t = 0; t < T; ++t) o += logit[static_cast<size_t>(t)] / sum * quantise(v[static_cast<size_t>(t * row + kvh * 64 + i)], dt, sc.v);
        INFO(cache_dtype_name(dt) << " head " << h << " dim " << i);
        CHECK(out[static_cast<size_t>(h * 64 + i)] == Approx(o).margin(1e-4));  // fp32 softmax vs double
      }
    }
    b->release_all();
    CHECK(b->ledger().empty());
  }
}

TEST_CASE("probe on the CPU backend: ledger equals the plan, outputs finite, pages reused", "[probe][cpu]") {
  auto b = make_backend("cpu", 2);
  ProbeOptions o;
  o.shape.num_q_heads = 8;
  o.shape.num_kv_heads = 2;
  o.shape.head_dim = 128;
  o.shape.page_size = 16;
  o.cases = {{3, 100, CacheDtype::bf16, true}, {2, 64, CacheDtype::fp8_e4m3, false}};
  o.live_steps = 40;
  o.seconds_per_timing = 0.05;
  o.check_pairs = 8;
  const ProbeResult r = run_probe(*b, o, [](const std::string&) {});
  REQUIRE(r.cases.size() == 2);
  // 3 sequences x ceil(100 / 16) = 7 pages; a page holds 2 x 16 x 2 heads x 128 x 2 B
  CHECK(r.cases[0].blocks == 3 * 7);
  CHECK(r.cases[0].predicted_pool_bytes == 21LL * 2 * 16 * 2 * 128 * 2);
  CHECK(r.cases[0].ledger_pool_bytes == r.cases[0].predicted_pool_bytes);
  CHECK(r.cases[1].ledger_pool_bytes == 2LL * 4 * 2 * 16 * 2 * 128 * 1);  // fp8: 1 B per element
  for (const auto& c : r.cases) {
    CHECK(c.finite);
    CHECK(c.pairs_checked == 8);
    CHECK(c.max_abs_err < 1e-4);
    CHECK(c.timing.median_s > 0);
  }
  CHECK(r.live.steps == 40);
  CHECK(r.live.sequences_finished > 0);
  CHECK(r.live.blocks_reused > 0);
  CHECK(r.live.max_abs_err < 1e-4);
  CHECK(r.capacity.max_blocks > 0);
  CHECK(b->ledger().empty());  // everything released
}

TEST_CASE("no silent fallback: asking for CUDA without a device is a runtime failure", "[probe]") {
  const auto names = available_backends();
  REQUIRE(names.front() == "cpu");
  if (names.size() == 1) CHECK_THROWS_AS(make_backend("cuda"), kvplan::RuntimeFailure);
  CHECK_THROWS_AS(make_backend("tpu"), kvplan::InputError);
}
