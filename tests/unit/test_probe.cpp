// The probe on the CPU backend, end to end: its ledger equals the planner's prediction exactly,
// attention matches a naive reference, NaN-filled unused slots are never read, pages are reused.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
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

TEST_CASE("block allocator: a permutation without repeats, released blocks are reused", "[probe][allocator]") {
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

// A naive softmax(q K^T / sqrt(d)) V in double over the values the cache reads back (quantise_row).
std::vector<double> naive_attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int T, int h,
                                    const PoolSpec& s, const Fp8Scales& sc) {
  const int d = s.head_dim, row = s.num_kv_heads * d, kvh = h / (s.num_q_heads / s.num_kv_heads);
  std::vector<float> kq(static_cast<size_t>(d)), vq(static_cast<size_t>(d));
  std::vector<double> logit(static_cast<size_t>(T)), o(static_cast<size_t>(d), 0.0);
  double mx = -1e300;
  for (int t = 0; t < T; ++t) {
    quantise_row(&k[static_cast<size_t>(t * row + kvh * d)], d, s.dtype, sc.k, kq.data());
    double dot = 0;
    for (int i = 0; i < d; ++i) dot += q[static_cast<size_t>(h * d + i)] * static_cast<double>(kq[static_cast<size_t>(i)]);
    logit[static_cast<size_t>(t)] = dot / std::sqrt(static_cast<double>(d));
    mx = std::max(mx, logit[static_cast<size_t>(t)]);
  }
  double sum = 0;
  for (auto& l : logit) sum += (l = std::exp(l - mx));
  for (int t = 0; t < T; ++t) {
    quantise_row(&v[static_cast<size_t>(t * row + kvh * d)], d, s.dtype, sc.v, vq.data());
    for (int i = 0; i < d; ++i) o[static_cast<size_t>(i)] += logit[static_cast<size_t>(t)] / sum * vq[static_cast<size_t>(i)];
  }
  return o;
}

// The attention shape of a decode check.
struct DecodeShape {
  int q_heads, kv_heads, head_dim, page_size;
};

// One sequence of T tokens on pages in a scrambled order, every dtype; T = 600 is cut into several
// split-K chunks (their LSE merge is checked too). `isa` forces the instruction set (KVPLAN_CPU_ISA).
// The default shape has a GQA group of 6: one full and one partial group of four query heads.
void check_decode_against_naive(const char* isa, int T, DecodeShape shape = {12, 2, 64, 16}) {
  if (isa) setenv("KVPLAN_CPU_ISA", isa, 1);
  auto b = make_backend("cpu", 2);
  if (isa) unsetenv("KVPLAN_CPU_ISA");
  for (CacheDtype dt : all_cache_dtypes()) {
    PoolSpec s;
    s.num_q_heads = shape.q_heads;
    s.num_kv_heads = shape.kv_heads;
    s.head_dim = shape.head_dim;
    s.page_size = shape.page_size;
    s.dtype = dt;
    const int P = shape.page_size, D = shape.head_dim;
    const int pages_used = (T + P - 1) / P;
    s.num_blocks = pages_used + 3;
    b->allocate_pool(s);
    b->fill_nan();
    const int row = s.num_kv_heads * s.head_dim;
    std::mt19937 rng(3);
    std::normal_distribution<float> n(0, 1);
    std::vector<float> k(static_cast<size_t>(T * row)), v(k.size()), q(static_cast<size_t>(s.num_q_heads * s.head_dim));
    for (auto& x : k) x = n(rng);
    for (auto& x : v) x = n(rng);
    for (auto& x : q) x = n(rng);
    std::vector<std::int32_t> pages;
    for (int p = 0; p < pages_used; ++p) pages.push_back(static_cast<std::int32_t>((p * 7 + 5) % s.num_blocks));
    REQUIRE(std::set<std::int32_t>(pages.begin(), pages.end()).size() == pages.size());
    std::vector<kvplan::probe::i64> slots;
    for (int t = 0; t < T; ++t) slots.push_back(pages[static_cast<size_t>(t / P)] * P + t % P);
    const Fp8Scales sc{0.05f, 0.05f};
    b->append(k, v, slots, sc);
    PageTable pt;
    pt.indptr = {0, pages_used};
    pt.indices = pages;
    pt.last_page_len = {T - (pages_used - 1) * P};
    std::vector<float> out;
    b->decode(q, pt, sc, out);
    for (int h = 0; h < s.num_q_heads; ++h) {
      const auto o = naive_attention(q, k, v, T, h, s, sc);
      for (int i = 0; i < D; ++i) {
        INFO(cache_dtype_name(dt) << " isa " << (isa ? isa : "best") << " T " << T << " heads " << shape.q_heads << "/" << shape.kv_heads << " D " << D
                                  << " page " << P << " head " << h << " dim " << i);
        CHECK(out[static_cast<size_t>(h * D + i)] == Approx(o[static_cast<size_t>(i)]).margin(1e-4));  // fp32 softmax vs double
      }
    }
    b->release_all();
    CHECK(b->ledger().empty());
  }
}

TEST_CASE("CPU backend decode equals a naive softmax(qK)V over the stored values", "[probe][cpu]") {
  const char* isa = GENERATE(static_cast<const char*>(nullptr), "avx2", "portable");
  check_decode_against_naive(isa, 37);
  check_decode_against_naive(isa, 600);
}

// The blocked AVX-512 kernel's other paths: multi-head attention (groups of one), a group of 8 (two
// full groups of four), head_dim 128 and 256 (two and four passes over V), pages of 32 (two tiles per
// page) and of 64 with 77 tokens (a last tile of 13), each against the double reference.
TEST_CASE("CPU backend decode over other head counts and head and page sizes", "[probe][cpu]") {
  const char* isa = GENERATE(static_cast<const char*>(nullptr), "avx2");
  check_decode_against_naive(isa, 203, {4, 4, 64, 16});
  check_decode_against_naive(isa, 203, {16, 2, 128, 32});
  check_decode_against_naive(isa, 77, {6, 2, 256, 64});
}

TEST_CASE("the CPU backend names the instruction set it runs and honours KVPLAN_CPU_ISA", "[probe][cpu]") {
  const char* forced = std::getenv("KVPLAN_CPU_ISA");
  if (!forced) {
    const std::string best = make_backend("cpu", 1)->device().name;
#if defined(__aarch64__)
    CHECK(best.find("neon") != std::string::npos);  // Advanced SIMD is in every aarch64 CPU
#else
    CHECK((best.find("avx512") != std::string::npos || best.find("avx2") != std::string::npos || best.find("portable") != std::string::npos));
#endif
  }
  setenv("KVPLAN_CPU_ISA", "portable", 1);
  const std::string portable = make_backend("cpu", 1)->device().name;
  if (forced) setenv("KVPLAN_CPU_ISA", forced, 1); else unsetenv("KVPLAN_CPU_ISA");
  CHECK(portable.find("portable") != std::string::npos);
}

TEST_CASE("a slot never written reads as NaN in every dtype (the NaN fill proves what is read)", "[probe][cpu]") {
  auto b = make_backend("cpu", 2);
  for (CacheDtype dt : all_cache_dtypes()) {
    PoolSpec s;
    s.num_q_heads = 4;
    s.num_kv_heads = 1;
    s.head_dim = 64;
    s.dtype = dt;
    s.num_blocks = 2;
    b->allocate_pool(s);
    b->fill_nan();
    std::vector<float> k(10 * 64, 0.5f), v(k.size(), 0.25f), q(4 * 64, 0.1f), out;
    std::vector<kvplan::probe::i64> slots;
    for (int t = 0; t < 10; ++t) slots.push_back(16 + t);  // block 1, slots 0..9
    b->append(k, v, slots, {1.0f, 1.0f});
    PageTable pt;
    pt.indptr = {0, 1};
    pt.indices = {1};
    pt.last_page_len = {10};
    b->decode(q, pt, {1.0f, 1.0f}, out);
    INFO(cache_dtype_name(dt));
    CHECK(out[0] == Approx(0.25).margin(1e-3));  // every written V is 0.25 (exact in every dtype)
    pt.last_page_len = {11};                      // one slot past what was written
    b->decode(q, pt, {1.0f, 1.0f}, out);
    CHECK(std::isnan(out[0]));
    b->release_all();
  }
}

TEST_CASE("fp8 e5m2 and the llama.cpp block rows", "[probe][convert]") {
  CHECK(to_fp8_e5m2(1.0f) == 0x3C);        // exponent 0 -> biased 15 = 0b01111, mantissa 0
  CHECK(to_fp8_e5m2(-2.0f) == 0xC0);
  CHECK(to_fp8_e5m2(57344.0f) == 0x7B);    // largest finite: 1.75 x 2^15
  CHECK(to_fp8_e5m2(1e9f) == 0x7B);        // saturates
  CHECK(to_fp8_e5m2(std::ldexp(1.0f, -16)) == 0x01);  // smallest subnormal
  CHECK(to_fp8_e5m2(1.125f) == 0x3C);      // tie between 1.0 and 1.25 -> even
  CHECK(to_fp8_e5m2(1.375f) == 0x3E);      // tie between 1.25 and 1.5 -> even (1.5)
  CHECK(std::isnan(from_fp8_e5m2(0x7F)));
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7f) > 0x7b) continue;  // inf and NaN
    const float f = from_fp8_e5m2(static_cast<std::uint8_t>(b));
    if (f == 0.0f) continue;
    CHECK(to_fp8_e5m2(f) == b);  // every finite code round-trips
  }
  // bytes per row: head_dim / 32 blocks of 34 (q8_0) or 18 (q4_0) bytes (ggml-common.h)
  CHECK(kvplan::kernels::kv_row_bytes(CacheDtype::q8_0, 128) == 128 / 32 * (2 + 32));
  CHECK(kvplan::kernels::kv_row_bytes(CacheDtype::q4_0, 128) == 128 / 32 * (2 + 16));
  CHECK(kvplan::kernels::kv_row_bytes(CacheDtype::bf16, 128) == 128 * 2);
  CHECK(kvplan::kernels::kv_row_bytes(CacheDtype::fp8_e5m2, 128) == 128);
  // q8_0: d = amax / 127 as f16, q = round(x / d); x = -1, 0, 0.5, 1 and zeros
  std::vector<float> x(32, 0.0f);
  x[0] = -1.0f, x[2] = 0.5f, x[3] = 1.0f;
  std::vector<std::uint8_t> q8(34), q4(18);
  encode_row(x.data(), 32, CacheDtype::q8_0, 1.0f, q8.data());
  CHECK(from_f16(static_cast<std::uint16_t>(q8[0] | q8[1] << 8)) == from_f16(to_f16(1.0f / 127.0f)));
  CHECK(static_cast<std::int8_t>(q8[2 + 0]) == -127);
  CHECK(static_cast<std::int8_t>(q8[2 + 2]) == 64);  // 0.5 x 127 = 63.5 -> 64 (round half away from zero)
  CHECK(static_cast<std::int8_t>(q8[2 + 3]) == 127);
  // q4_0: the signed largest magnitude is -1 (first), d = -1 / -8 = 0.125; nibble = x / d + 8.5 truncated
  encode_row(x.data(), 32, CacheDtype::q4_0, 1.0f, q4.data());
  CHECK(from_f16(static_cast<std::uint16_t>(q4[0] | q4[1] << 8)) == 0.125f);
  CHECK((q4[2 + 0] & 0xf) == 0);           // -1 / 0.125 + 8.5 = 0.5 -> 0
  CHECK((q4[2 + 2] & 0xf) == 12);          // 0.5 / 0.125 + 8.5 = 12.5 -> 12
  CHECK((q4[2 + 3] & 0xf) == 15);          // 16.5 -> min(15, 16)
  CHECK((q4[2 + 0] >> 4) == 8);            // element 16 (0) in the high nibble: 8.5 -> 8
  std::vector<float> back(32);
  decode_row(q4.data(), 32, CacheDtype::q4_0, 1.0f, back.data());
  CHECK(back[0] == -1.0f);
  CHECK(back[2] == 0.5f);
  CHECK(back[3] == 0.875f);                // (15 - 8) x 0.125
  CHECK(back[16] == 0.0f);
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
