// GPU tests: the CUDA backend against the CPU backend (the numerical reference) on the same random
// inputs with named tolerances, NaN-filled unused slots and randomly permuted pages; the memory
// ledger against cudaMemGetInfo; the timing paths. Tagged [gpu]; each test warns and returns when
// there is no CUDA device (or the build has no CUDA backend).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kvplan/core/error.hpp"
#include "kvplan/probe/backend.hpp"

using namespace kvplan;
using namespace kvplan::probe;

namespace {

// Largest |cuda - cpu| allowed per output element. Outputs are softmax-weighted means of V values
// in [-1, 1). The CPU backend accumulates in a different order and uses exp where the kernel uses
// exp2 with a pre-scaled q, so the two differ by float rounding of the scores and sums; bf16/f16
// caches hold the same rounded values on both sides. fp8 adds per-element rounding of 2^-4
// relative, so a one-step difference in a single quantised value moves the output most.
constexpr double kTolBf16 = 2e-2;
constexpr double kTolF16 = 5e-3;
constexpr double kTolFp8 = 6e-2;

constexpr i64 kMiB = 1 << 20;
constexpr i64 kLedgerSlack = 2 * kMiB;  // allocation granularity of one cudaMalloc

double tolerance(CacheDtype d) {
  switch (d) {
    case CacheDtype::bf16: return kTolBf16;
    case CacheDtype::f16: return kTolF16;
    case CacheDtype::fp8_e4m3: return kTolFp8;
    default: break;  // the CUDA kernels have no other dtype
  }
  return 0;
}

bool have_cuda() {
  const auto b = available_backends();
  return std::find(b.begin(), b.end(), "cuda") != b.end();
}

#define KVPLAN_REQUIRE_CUDA()                                                          \
  do {                                                                                 \
    if (!have_cuda()) {                                                                \
      WARN("no CUDA device (or kvplan built without CUDA): GPU test skipped");         \
      return;                                                                          \
    }                                                                                  \
  } while (0)

/// Sequences of the given lengths on pages drawn from a random permutation of the pool's blocks
/// (with spare blocks left unused, so never-written pages exist too).
struct Layout {
  PoolSpec spec;
  PageTable pt;
  std::vector<i64> lengths;
  std::vector<i64> slots;  // per token of every sequence, in order
};

Layout make_layout(PoolSpec spec, const std::vector<i64>& lengths, std::mt19937_64& rng) {
  Layout l;
  l.lengths = lengths;
  i64 pages = 0;
  for (i64 n : lengths) pages += (n + spec.page_size - 1) / spec.page_size;
  spec.num_blocks = pages + 13;
  std::vector<std::int32_t> perm(static_cast<size_t>(spec.num_blocks));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  l.pt.indptr.push_back(0);
  size_t next = 0;
  for (i64 n : lengths) {
    const i64 np = (n + spec.page_size - 1) / spec.page_size;
    for (i64 p = 0; p < np; ++p) l.pt.indices.push_back(perm[next++]);
    l.pt.indptr.push_back(static_cast<std::int32_t>(l.pt.indices.size()));
    l.pt.last_page_len.push_back(static_cast<std::int32_t>(n - (np - 1) * spec.page_size));
    const size_t first = l.pt.indices.size() - static_cast<size_t>(np);
    for (i64 t = 0; t < n; ++t)
      l.slots.push_back(static_cast<i64>(l.pt.indices[first + static_cast<size_t>(t / spec.page_size)]) * spec.page_size +
                        t % spec.page_size);
  }
  l.spec = spec;
  return l;
}

std::vector<float> uniform(size_t n, float lo, float hi, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

std::vector<float> normal(size_t n, float sigma, std::mt19937_64& rng) {
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

struct Diff {
  double max_abs = 0;
  bool finite = true;
};

Diff compare(const std::vector<float>& got, const std::vector<float>& want) {
  Diff d;
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) d.finite = false;
    d.max_abs = std::max(d.max_abs, std::fabs(static_cast<double>(got[i]) - want[i]));
  }
  return d;
}

std::string shape_name(const PoolSpec& s) {
  return std::string(cache_dtype_name(s.dtype)) + " head_dim " + std::to_string(s.head_dim) + " page " + std::to_string(s.page_size) +
         " heads " + std::to_string(s.num_q_heads) + "/" + std::to_string(s.num_kv_heads);
}

}  // namespace

TEST_CASE("CUDA decode matches the CPU backend", "[gpu]") {
  KVPLAN_REQUIRE_CUDA();
  const CacheDtype dtype = GENERATE(CacheDtype::bf16, CacheDtype::f16, CacheDtype::fp8_e4m3);
  const int head_dim = GENERATE(64, 128, 256);
  const int page_size = GENERATE(16, 64);
  const bool gqa = GENERATE(true, false);  // 32 query / 8 KV heads, or MHA 8 / 8
  PoolSpec spec;
  spec.dtype = dtype;
  spec.head_dim = head_dim;
  spec.page_size = page_size;
  spec.num_q_heads = gqa ? 32 : 8;
  spec.num_kv_heads = 8;
  std::mt19937_64 rng(0x6b7670u + static_cast<unsigned>(head_dim * 7 + page_size * 3 + static_cast<int>(dtype)) + (gqa ? 1u : 0u));
  // One token, partial and full pages, a sequence just past the smallest split chunk, long ones
  // that the planner splits across CTAs (merged by log-sum-exp), in a random order.
  std::vector<i64> lengths = {1, 5, page_size, page_size + 1, 3 * page_size - 1, 127, 129, 777, 2000, 4500};
  std::shuffle(lengths.begin(), lengths.end(), rng);
  const Layout l = make_layout(spec, lengths, rng);
  const i64 tokens = static_cast<i64>(l.slots.size());
  const size_t row = static_cast<size_t>(spec.num_kv_heads) * static_cast<size_t>(head_dim);
  const auto k = uniform(static_cast<size_t>(tokens) * row, -1.0f, 1.0f, rng);
  const auto v = uniform(static_cast<size_t>(tokens) * row, -1.0f, 1.0f, rng);
  const auto q = normal(lengths.size() * static_cast<size_t>(spec.num_q_heads) * static_cast<size_t>(head_dim), 3.0f, rng);
  const Fp8Scales scales{0.5f, 0.25f};  // |x / scale| <= 4: well inside e4m3's +-448

  std::vector<float> want, got;
  {
    auto cpu = make_backend("cpu");
    cpu->allocate_pool(l.spec);
    cpu->fill_nan();
    cpu->append(k, v, l.slots, scales);
    cpu->decode(q, l.pt, scales, want);
  }
  auto cuda = make_backend("cuda");
  cuda->allocate_pool(l.spec);
  cuda->fill_nan();
  cuda->append(k, v, l.slots, scales);
  cuda->decode(q, l.pt, scales, got);
  const Diff d = compare(got, want);
  INFO(shape_name(l.spec) << ": max |cuda - cpu| = " << d.max_abs << ", tolerance " << tolerance(dtype));
  CHECK(d.finite);  // NaN-filled unused slots and pages were never read
  CHECK(d.max_abs <= tolerance(dtype));
  cuda->release_all();
  CHECK(cuda->ledger().empty());
}

TEST_CASE("CUDA synthetic fill writes what the CPU backend writes", "[gpu]") {
  KVPLAN_REQUIRE_CUDA();
  const CacheDtype dtype = GENERATE(CacheDtype::bf16, CacheDtype::f16, CacheDtype::fp8_e4m3);
  const int page_size = GENERATE(16, 32);
  PoolSpec spec;
  spec.dtype = dtype;
  spec.head_dim = 128;
  spec.page_size = page_size;
  spec.num_q_heads = 32;
  spec.num_kv_heads = 8;
  std::mt19937_64 rng(99 + static_cast<unsigned>(dtype) + static_cast<unsigned>(page_size));
  const Layout l = make_layout(spec, {3, 700, 1, 2 * page_size, 1500}, rng);
  const auto q = normal(l.lengths.size() * static_cast<size_t>(spec.num_q_heads) * static_cast<size_t>(spec.head_dim), 3.0f, rng);
  const Fp8Scales scales{0.05f, 0.05f};  // synthetic values lie in [-2, 2): |x / scale| <= 40
  const std::uint64_t seed = 1234;
  std::vector<float> want, got;
  {
    auto cpu = make_backend("cpu");
    cpu->allocate_pool(l.spec);
    cpu->fill_nan();
    cpu->fill_synthetic(l.pt, seed, scales);
    cpu->decode(q, l.pt, scales, want);
  }
  auto cuda = make_backend("cuda");
  cuda->allocate_pool(l.spec);
  cuda->fill_nan();
  cuda->fill_synthetic(l.pt, seed, scales);
  cuda->decode(q, l.pt, scales, got);
  const Diff d = compare(got, want);
  INFO(shape_name(l.spec) << ": max |cuda - cpu| = " << d.max_abs);
  CHECK(d.finite);
  // synthetic values span [-2, 2), twice the range of the decode test's inputs
  CHECK(d.max_abs <= 2 * tolerance(dtype));
}

TEST_CASE("CUDA pool allocation is counted exactly in the ledger", "[gpu]") {
  KVPLAN_REQUIRE_CUDA();
  auto b = make_backend("cuda");
  PoolSpec spec;  // 32/8 heads, head_dim 128, pages of 16, bf16: 2 * 16 * 8 * 128 * 2 = 64 KiB a page
  spec.num_blocks = (1024 * kMiB) / (2 * 16 * 8 * 128 * 2);  // 1 GiB
  const i64 before = b->free_bytes();
  b->allocate_pool(spec);
  const i64 after = b->free_bytes();
  const auto ledger = b->ledger();
  REQUIRE(ledger.size() == 1);  // the pool is ONE allocation
  CHECK(ledger[0].what == "kv_pool");
  CHECK(ledger[0].bytes == spec.pool_bytes());
  i64 sum = 0;
  for (const auto& e : ledger) sum += e.bytes;
  INFO("cudaMemGetInfo dropped by " << (before - after) << " bytes; the ledger holds " << sum);
  CHECK(std::llabs((before - after) - sum) <= kLedgerSlack);
  b->release_all();
  CHECK(b->ledger().empty());
  CHECK(std::llabs(b->free_bytes() - before) <= kLedgerSlack);
}

TEST_CASE("a CUDA pool larger than free memory fails and leaves nothing allocated", "[gpu]") {
  KVPLAN_REQUIRE_CUDA();
  auto b = make_backend("cuda");
  PoolSpec spec;
  spec.num_blocks = 1;
  const i64 page = spec.pool_bytes();
  const i64 before = b->free_bytes();
  spec.num_blocks = before / page + 16;
  CHECK_THROWS_AS(b->allocate_pool(spec), RuntimeFailure);
  CHECK(b->ledger().empty());
  CHECK(std::llabs(b->free_bytes() - before) <= kLedgerSlack);
}

TEST_CASE("CUDA rejects a page table that points outside the pool", "[gpu]") {
  KVPLAN_REQUIRE_CUDA();
  auto b = make_backend("cuda");
  PoolSpec spec;
  spec.num_blocks = 4;
  b->allocate_pool(spec);
  PageTable pt;
  pt.indptr = {0, 2};
  pt.indices = {1, 4};  // block 4 of a 4-block pool
  pt.last_page_len = {3};
  std::vector<float> q(static_cast<size_t>(spec.num_q_heads) * static_cast<size_t>(spec.head_dim), 0.0f), out;
  CHECK_THROWS_AS(b->decode(q, pt, Fp8Scales{}, out), InputError);
  CHECK(b->ledger().size() == 1);  // the pool is still there; nothing else was allocated
}

TEST_CASE("CUDA timings are positive and below physical bandwidth", "[gpu]") {
  KVPLAN_REQUIRE_CUDA();
  auto b = make_backend("cuda");
  PoolSpec spec;  // bf16, 32/8 heads, head_dim 128, pages of 16: 64 KiB a page
  const i64 seqs = 16, context = 4096;
  spec.num_blocks = seqs * context / spec.page_size;  // 1 GiB
  b->allocate_pool(spec);
  PageTable pt;
  pt.indptr.push_back(0);
  std::vector<std::int32_t> perm(static_cast<size_t>(spec.num_blocks));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(7));
  for (i64 s = 0; s < seqs; ++s) {
    for (i64 p = 0; p < context / spec.page_size; ++p) pt.indices.push_back(perm[static_cast<size_t>(s * context / spec.page_size + p)]);
    pt.indptr.push_back(static_cast<std::int32_t>(pt.indices.size()));
    pt.last_page_len.push_back(spec.page_size);
  }
  b->fill_synthetic(pt, 5, Fp8Scales{});
  std::mt19937_64 rng(3);
  const auto q = normal(static_cast<size_t>(seqs * spec.num_q_heads * spec.head_dim), 1.0f, rng);
  std::vector<float> out;
  b->decode(q, pt, Fp8Scales{}, out);
  CHECK(std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); }));
  const double kv_bytes = static_cast<double>(spec.pool_bytes());  // every page is read once
  const double too_fast = 20e12;                                   // bytes/s: beyond any HBM of this decade
  for (const TimingStats& t : {b->time_decode(0.5), b->time_contiguous_read(0.5), b->time_paged_gather(pt, 0.5)}) {
    INFO("median " << t.median_s << " s over " << t.repeats << " repeats, rel stdev " << t.rel_stdev);
    CHECK(t.repeats >= 1);
    CHECK(t.median_s > 0);
    CHECK(t.min_s <= t.median_s);
    CHECK(t.median_s <= t.max_s);
    CHECK(kv_bytes / t.median_s < too_fast);  // the reads were not optimised away
  }
  // the flush buffer, the sink and the decode buffers are in the ledger next to the pool
  i64 sum = 0;
  for (const auto& e : b->ledger()) sum += e.bytes;
  CHECK(sum > spec.pool_bytes());
  b->release_all();
  CHECK(b->ledger().empty());
}

// The fault paths: a cudaMalloc the driver refuses and a launch the driver refuses (both real CUDA
// errors, armed by inject_fault) must throw RuntimeFailure having freed every buffer, and leave the
// device usable: a fresh pool and decode afterwards work.
static void check_fault_releases_everything(Backend::Fault fault) {
  auto b = make_backend("cuda");
  std::mt19937_64 rng(11);
  PoolSpec spec;  // bf16, 32/8 heads, head_dim 128, pages of 16
  const Layout l = make_layout(spec, {300, 45}, rng);
  const i64 before = b->free_bytes();
  b->allocate_pool(l.spec);
  b->fill_synthetic(l.pt, 3, Fp8Scales{});
  const auto q = normal(static_cast<size_t>(2 * l.spec.num_q_heads * l.spec.head_dim), 1.0f, rng);
  std::vector<float> out;
  b->inject_fault(fault);  // allocation: the decode's own buffers are the next cudaMalloc
  CHECK_THROWS_AS(b->decode(q, l.pt, Fp8Scales{}, out), RuntimeFailure);
  CHECK(b->ledger().empty());
  CHECK(std::llabs(b->free_bytes() - before) <= kLedgerSlack);
  b->allocate_pool(l.spec);  // the context survived
  b->fill_synthetic(l.pt, 3, Fp8Scales{});
  b->decode(q, l.pt, Fp8Scales{}, out);
  CHECK(std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); }));
  b->release_all();
  CHECK(b->ledger().empty());
}

TEST_CASE("a cudaMalloc the driver refuses releases everything and throws", "[gpu]") {
  KVPLAN_REQUIRE_CUDA();
  check_fault_releases_everything(Backend::Fault::allocation);
}

TEST_CASE("a kernel launch the driver refuses releases everything and throws", "[gpu]") {
  KVPLAN_REQUIRE_CUDA();
  check_fault_releases_everything(Backend::Fault::launch);
}

TEST_CASE("fault injection is refused by the CPU backend", "[gpu]") {
  auto b = make_backend("cpu", 1);
  CHECK_THROWS_AS(b->inject_fault(Backend::Fault::launch), RuntimeFailure);
}

