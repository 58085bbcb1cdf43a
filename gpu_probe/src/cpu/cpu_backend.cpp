// CPU backend: the same flow in host memory, and the numerical reference for the CUDA backend; a
// measurement of host memory and CPU bandwidth in its own right (llama.cpp CPU users). Decode runs
// on a fixed thread pool over (sequence, split-K chunk) tasks, each reading every K/V row once for
// its whole GQA group, then merges the chunks' softmax states (LSE). Two kernels, picked at run time:
// the register-blocked AVX-512 one (decode_avx512.inc) and the row-at-a-time one (decode_simd.inc,
// compiled for AVX2 and portable C++; AVX-512 CPUs use it for a head_dim that is not a multiple of 64).
// Layout: kernels/paged_kv_layout.h.
#include "cpu_backend.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <iterator>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <new>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#include "kvplan/core/error.hpp"
#include "kvplan/probe/probe.hpp"

namespace kvplan::probe {

namespace {

using clk = std::chrono::steady_clock;

i64 meminfo(const char* key) {
  std::ifstream in("/proc/meminfo");
  std::string k;
  i64 v = 0;
  std::string unit;
  while (in >> k >> v >> unit)
    if (k == key) return v * 1024;
  return 0;
}

// A fixed set of worker threads (created once per backend; a decode step must not pay for thread
// creation): run(n, f) calls f(i, thread) for i in [0, n), handed out dynamically, and returns when all are done.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { loop(t); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  void run(i64 n, const std::function<void(i64, int)>& f) {
    {
      std::lock_guard<std::mutex> g(mu_);
      job_ = &f;
      n_ = n;
      next_ = 0;
      busy_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    cv_.notify_all();
    work(0);
    std::unique_lock<std::mutex> g(mu_);
    done_.wait(g, [&] { return busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void work(int t) {
    for (i64 i = next_++; i < n_; i = next_++) (*job_)(i, t);
  }
  void loop(int t) {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work(t);
      std::lock_guard<std::mutex> g(mu_);
      if (--busy_ == 0) done_.notify_one();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_;
  const std::function<void(i64, int)>* job_ = nullptr;
  std::atomic<i64> next_{0};
  i64 n_ = 0;
  int busy_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

// Host-built arguments of one decode (the CPU twin of kernels::DecodeArgs): the pages of sequence s
// are cut into chunks (split-K); chunk c covers page-table entries [chunk_begin[c], chunk_end[c]) of
// sequence chunk_seq[c] and leaves its partial softmax state in the workspace for the LSE merge.
struct CpuDecodeArgs {
  kernels::PagedKvLayout layout;
  const std::uint8_t* pool = nullptr;
  int q_heads = 0;
  const float* q = nullptr;  // [seqs, q_heads, head_dim]
  const PageTable* pt = nullptr;
  float sm_scale = 0, k_scale = 1, v_scale = 1;
  int prefetch_tiles = 2;     // software prefetch distance, in tiles of 16 tokens
  const std::int32_t* chunk_seq = nullptr;
  const std::int32_t* chunk_begin = nullptr;
  const std::int32_t* chunk_end = nullptr;
  float* part_acc = nullptr;  // [chunks, q_heads, head_dim], unnormalised
  float* part_m = nullptr;    // [chunks, q_heads], running max of the logits
  float* part_l = nullptr;    // [chunks, q_heads], sum of exp(logit - max)
};

// Per-thread tiles: 16 tokens of K and V of every KV head as floats, and [group][16] logits.
struct Scratch {
  std::vector<float> ktile, vtile, logits, corr;
  std::vector<float> qperm, pbuf;  // the blocked AVX-512 kernel: the query in chunk order; [16 tokens][4 heads] probabilities
  void size_for(int head_dim, int kv_heads, int group) {
    qperm.resize(static_cast<size_t>(kv_heads) * static_cast<size_t>(group) * static_cast<size_t>(head_dim));
    pbuf.resize(64);
    ktile.resize(16u * static_cast<size_t>(kv_heads) * static_cast<size_t>(head_dim));
    vtile.resize(ktile.size());
    logits.resize(16u * static_cast<size_t>(group));
    corr.resize(static_cast<size_t>(group));
  }
};

// ---- the kernel, once per instruction set (runtime dispatch below) ----
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KVPLAN_CPU_X86 1
#else
#define KVPLAN_CPU_X86 0
#endif

#if defined(__aarch64__) && defined(__ARM_NEON)
#define KVPLAN_CPU_NEON 1
#else
#define KVPLAN_CPU_NEON 0
#endif

// The SIMD exp of every instruction set: 2^f on |f| <= 1/2 by its degree-6 Taylor polynomial, highest power first
[[maybe_unused]] constexpr float kExp2Poly[] = {1.5403530e-4f, 1.3333558e-3f, 9.6181291e-3f, 5.5504109e-2f, 2.4022651e-1f, 6.9314718e-1f, 1.0f};
[[maybe_unused]] constexpr float kLog2e = 1.44269504f;
[[maybe_unused]] constexpr float kExpFloor = -87.0f;  // below it e^x is taken as 0 (a float's smallest normal is e^-87.3)

#if KVPLAN_CPU_X86
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's avx512fintrin.h _mm512_undefined_* false positive
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
namespace isa_avx512 {
// e^x = 2^(x log2 e): 2^n by the exponent field, 2^f (|f| <= 1/2) by kExp2Poly (relative error below 2e-7);
// x below kExpFloor (and -inf) gives 0.
inline __m512 vexp(__m512 x) {
  const __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpFloor), _CMP_LT_OQ);
  const __m512 y = _mm512_mul_ps(_mm512_max_ps(x, _mm512_set1_ps(kExpFloor)), _mm512_set1_ps(kLog2e));
  const __m512 n = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(y, n);
  __m512 p = _mm512_set1_ps(kExp2Poly[0]);
  for (std::size_t i = 1; i < std::size(kExp2Poly); ++i) p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2Poly[i]));
  const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~tiny), _mm512_mul_ps(p, _mm512_castsi512_ps(e)));
}
#include "decode_avx512.inc"
// XOR of every 8-byte word of [p, p + bytes) (bytes a multiple of 256): the streaming-read ceiling.
inline std::uint64_t read_xor(const std::uint8_t* p, i64 bytes) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (i64 i = 0; i < bytes; i += 256) {
    a0 = _mm512_xor_si512(a0, _mm512_loadu_si512(p + i));
    a1 = _mm512_xor_si512(a1, _mm512_loadu_si512(p + i + 64));
    a2 = _mm512_xor_si512(a2, _mm512_loadu_si512(p + i + 128));
    a3 = _mm512_xor_si512(a3, _mm512_loadu_si512(p + i + 192));
  }
  const __m512i x = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
  alignas(64) std::uint64_t w[8];
  _mm512_store_si512(w, x);
  return w[0] ^ w[1] ^ w[2] ^ w[3] ^ w[4] ^ w[5] ^ w[6] ^ w[7];
}
}  // namespace isa_avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
namespace isa_avx2 {
using vf = __m256;
constexpr int KV_W = 8;
#define KV_X86 1
inline vf vzero() { return _mm256_setzero_ps(); }
inline vf vset1(float x) { return _mm256_set1_ps(x); }
inline vf vload(const float* p) { return _mm256_loadu_ps(p); }
inline vf vload_bf16(const std::uint16_t* p) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
}
inline void vstore(float* p, vf v) { _mm256_storeu_ps(p, v); }
inline vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
inline vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
inline vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
inline float vsum(vf v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}
inline float vhmax(vf v) {
  const __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(t, _mm_shuffle_ps(t, t, 1)));
}
inline void vsum4(vf a0, vf a1, vf a2, vf a3, float* out) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}
inline vf vexp(vf x) {  // as isa_avx512::vexp
  const vf keep = _mm256_cmp_ps(x, _mm256_set1_ps(kExpFloor), _CMP_GE_OQ);
  const vf y = _mm256_mul_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpFloor)), _mm256_set1_ps(kLog2e));
  const vf n = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const vf f = _mm256_sub_ps(y, n);
  vf p = _mm256_set1_ps(kExp2Poly[0]);
  for (std::size_t i = 1; i < std::size(kExp2Poly); ++i) p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2Poly[i]));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(keep, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}
#include "decode_simd.inc"
#undef KV_X86
inline std::uint64_t read_xor(const std::uint8_t* p, i64 bytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (i64 i = 0; i < bytes; i += 128) {
    a0 = _mm256_xor_si256(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_xor_si256(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_xor_si256(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_xor_si256(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i x = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
  alignas(32) std::uint64_t w[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(w), x);
  return w[0] ^ w[1] ^ w[2] ^ w[3];
}
}  // namespace isa_avx2
#pragma GCC pop_options
#pragma GCC diagnostic pop
#endif  // KVPLAN_CPU_X86

#if KVPLAN_CPU_NEON
// NEON (every aarch64 CPU): 4 lanes, the row-at-a-time kernel, NEON row conversions (KV_NEON in cvt_row).
namespace isa_neon {
using vf = float32x4_t;
constexpr int KV_W = 4;
#define KV_X86 0
#define KV_NEON 1
inline vf vzero() { return vdupq_n_f32(0.0f); }
inline vf vset1(float x) { return vdupq_n_f32(x); }
inline vf vload(const float* p) { return vld1q_f32(p); }
inline vf vload_bf16(const std::uint16_t* p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
inline void vstore(float* p, vf v) { vst1q_f32(p, v); }
inline vf vfma(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
inline vf vmul(vf a, vf b) { return vmulq_f32(a, b); }
inline vf vmax(vf a, vf b) { return vmaxq_f32(a, b); }
inline float vsum(vf v) { return vaddvq_f32(v); }
inline float vhmax(vf v) { return vmaxvq_f32(v); }
inline void vsum4(vf a0, vf a1, vf a2, vf a3, float* out) { vst1q_f32(out, vpaddq_f32(vpaddq_f32(a0, a1), vpaddq_f32(a2, a3))); }
inline vf vexp(vf x) {  // as isa_avx512::vexp
  const uint32x4_t keep = vcgeq_f32(x, vdupq_n_f32(kExpFloor));
  const vf y = vmulq_f32(vmaxq_f32(x, vdupq_n_f32(kExpFloor)), vdupq_n_f32(kLog2e));
  const vf n = vrndnq_f32(y);
  const vf f = vsubq_f32(y, n);
  vf p = vdupq_n_f32(kExp2Poly[0]);
  for (std::size_t i = 1; i < std::size(kExp2Poly); ++i) p = vfmaq_f32(vdupq_n_f32(kExp2Poly[i]), p, f);
  const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23);
  return vreinterpretq_f32_u32(vandq_u32(keep, vreinterpretq_u32_f32(vmulq_f32(p, vreinterpretq_f32_s32(e)))));
}
#include "decode_simd.inc"
#undef KV_NEON
#undef KV_X86
inline std::uint64_t read_xor(const std::uint8_t* p, i64 bytes) {
  uint64x2_t a0 = vdupq_n_u64(0), a1 = a0, a2 = a0, a3 = a0;
  for (i64 i = 0; i < bytes; i += 64) {
    a0 = veorq_u64(a0, vreinterpretq_u64_u8(vld1q_u8(p + i)));
    a1 = veorq_u64(a1, vreinterpretq_u64_u8(vld1q_u8(p + i + 16)));
    a2 = veorq_u64(a2, vreinterpretq_u64_u8(vld1q_u8(p + i + 32)));
    a3 = veorq_u64(a3, vreinterpretq_u64_u8(vld1q_u8(p + i + 48)));
  }
  const uint64x2_t x = veorq_u64(veorq_u64(a0, a1), veorq_u64(a2, a3));
  return vgetq_lane_u64(x, 0) ^ vgetq_lane_u64(x, 1);
}
}  // namespace isa_neon
#endif  // KVPLAN_CPU_NEON

// The portable path (any CPU; scalar C++).
namespace isa_portable {
using vf = float;
constexpr int KV_W = 1;
#define KV_X86 0
inline vf vzero() { return 0.0f; }
inline vf vset1(float x) { return x; }
inline vf vload(const float* p) { return *p; }
inline vf vload_bf16(const std::uint16_t* p) { return from_bf16(*p); }
inline void vstore(float* p, vf v) { *p = v; }
inline vf vfma(vf a, vf b, vf c) { return a * b + c; }
inline vf vmul(vf a, vf b) { return a * b; }
inline vf vmax(vf a, vf b) { return std::max(a, b); }
inline float vsum(vf v) { return v; }
inline float vhmax(vf v) { return v; }
inline void vsum4(vf a0, vf a1, vf a2, vf a3, float* out) { out[0] = a0, out[1] = a1, out[2] = a2, out[3] = a3; }
inline vf vexp(vf x) { return std::exp(x); }
#include "decode_simd.inc"
#undef KV_X86
inline std::uint64_t read_xor(const std::uint8_t* p, i64 bytes) {
  std::uint64_t a[4] = {0, 0, 0, 0};
  for (i64 i = 0; i < bytes; i += 32)
    for (int k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      a[k] ^= w;
    }
  return a[0] ^ a[1] ^ a[2] ^ a[3];
}
}  // namespace isa_portable

// The instruction set this CPU runs (KVPLAN_CPU_ISA=avx512|avx2|neon|portable forces a lower one).
enum class Isa { portable, neon, avx2, avx512 };

Isa detect_isa() {
  Isa best = Isa::portable;
#if KVPLAN_CPU_NEON
  best = Isa::neon;  // Advanced SIMD is part of every aarch64 CPU
#endif
#if KVPLAN_CPU_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) best = Isa::avx2;
  if (best == Isa::avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    best = Isa::avx512;
#endif
  if (const char* env = std::getenv("KVPLAN_CPU_ISA")) {
    const std::string e = env;
    const Isa want = e == "avx512" ? Isa::avx512 : e == "avx2" ? Isa::avx2 : e == "neon" ? Isa::neon : Isa::portable;
    if (want < best) best = want;
    if (best == Isa::neon && !KVPLAN_CPU_NEON) best = Isa::portable;  // "neon" asked for on x86
  }
  return best;
}

const char* isa_name(Isa i) { return i == Isa::avx512 ? "avx512" : i == Isa::avx2 ? "avx2" : i == Isa::neon ? "neon" : "portable"; }

void run_chunk(Isa isa, const CpuDecodeArgs& a, int c, Scratch& w) {
#if KVPLAN_CPU_X86
  if (isa == Isa::avx512 && isa_avx512::run_chunk_blocked(a, c, w)) return;
  if (isa >= Isa::avx2) return isa_avx2::run_chunk(a, c, w);  // and AVX-512 with a head_dim it does not block
#endif
#if KVPLAN_CPU_NEON
  if (isa == Isa::neon) return isa_neon::run_chunk(a, c, w);
#endif
  (void)isa;
  isa_portable::run_chunk(a, c, w);
}

std::uint64_t read_xor(Isa isa, const std::uint8_t* p, i64 bytes) {
#if KVPLAN_CPU_X86
  if (isa == Isa::avx512) return isa_avx512::read_xor(p, bytes);
  if (isa == Isa::avx2) return isa_avx2::read_xor(p, bytes);
#endif
#if KVPLAN_CPU_NEON
  if (isa == Isa::neon) return isa_neon::read_xor(p, bytes);
#endif
  (void)isa;
  return isa_portable::read_xor(p, bytes);
}

TimingStats time_repeats(const std::function<void()>& run, const std::function<void()>& flush, double max_seconds) {
  std::vector<double> s;
  const auto start = clk::now();
  for (int i = 0; i < 200; ++i) {
    flush();
    const auto t0 = clk::now();
    run();
    s.push_back(std::chrono::duration<double>(clk::now() - t0).count());
    if (s.size() >= 5 && relative_stdev(s) < 0.02) break;
    if (std::chrono::duration<double>(clk::now() - start).count() > max_seconds && s.size() >= 3) break;
  }
  return summarise_timings(std::move(s));
}

// Host memory of the pool: 2 MiB aligned and advised to use transparent huge pages (random page
// order must not turn into TLB misses), never touched here, so the first touch places it (fill_nan).
struct PoolFree {
  void operator()(std::uint8_t* p) const { std::free(p); }
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads)
      : threads_(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))), workers_(threads_), isa_(detect_isa()) {
    info_.backend = "cpu";
    info_.name = "host CPU " + cpu_model() + " (" + std::to_string(threads_) + " threads, " + isa_name(isa_) + ")";
    info_.sm_count = threads_;
    info_.runtime_total_bytes = meminfo("MemTotal:");
    info_.runtime_free_bytes = meminfo("MemAvailable:");
    info_.runtime_version = "C++ std::thread";
  }

  DeviceInfo device() const override { return info_; }

  std::vector<LedgerEntry> ledger() const override {
    std::vector<LedgerEntry> l;
    if (pool_) l.push_back({"kv_pool", pool_bytes_});
    if (!flush_.empty()) l.push_back({"cache_flush_buffer", static_cast<i64>(flush_.size())});
    if (!q_.empty()) l.push_back({"queries", static_cast<i64>(q_.size() * sizeof(float))});
    if (!out_.empty()) l.push_back({"outputs", static_cast<i64>(out_.size() * sizeof(float))});
    if (!part_acc_.empty())
      l.push_back({"decode_workspace", static_cast<i64>((part_acc_.size() + part_m_.size() + part_l_.size()) * sizeof(float))});
    return l;
  }

  i64 free_bytes() const override { return meminfo("MemAvailable:"); }

  void allocate_pool(const PoolSpec& spec) override {
    check_supported(spec);
    release_all();
    const i64 bytes = spec.pool_bytes();
    if (bytes > free_bytes()) throw RuntimeFailure("probe: the pool needs " + std::to_string(bytes) + " bytes but only " + std::to_string(free_bytes()) + " are free");
    constexpr i64 kHuge = 2 << 20;
    const i64 rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    pool_.reset(static_cast<std::uint8_t*>(std::aligned_alloc(static_cast<size_t>(kHuge), static_cast<size_t>(rounded))));
    if (!pool_) throw RuntimeFailure("probe: host allocation of " + std::to_string(bytes) + " bytes failed");
#ifdef MADV_HUGEPAGE
    madvise(pool_.get(), static_cast<size_t>(rounded), MADV_HUGEPAGE);
#endif
    pool_bytes_ = bytes;
    spec_ = spec;
    layout_ = spec.layout();
    flush_.assign(static_cast<size_t>(flush_bytes()), 1);
  }

  void release_all() override {
    pool_.reset();
    pool_bytes_ = 0;
    std::vector<std::uint8_t>().swap(flush_);
    std::vector<float>().swap(q_);
    std::vector<float>().swap(out_);
    std::vector<float>().swap(part_acc_);
    std::vector<float>().swap(part_m_);
    std::vector<float>().swap(part_l_);
  }

  // First touch: each thread writes its own share of the blocks, so on a NUMA host the pages are
  // spread over the nodes of the threads that read them.
  void fill_nan() override {
    need_pool();
    const i64 bb = layout_.block_bytes(), n = spec_.num_blocks, per = (n + threads_ - 1) / threads_;
    workers_.run(threads_, [&](i64 t, int) {
      const i64 b0 = std::min(n, t * per), b1 = std::min(n, (t + 1) * per);
      if (b1 > b0) std::memset(pool_.get() + b0 * bb, 0xff, static_cast<size_t>((b1 - b0) * bb));  // NaN in every dtype
    });
  }

  void append(const std::vector<float>& k, const std::vector<float>& v, const std::vector<i64>& slots, const Fp8Scales& sc) override {
    need_pool();
    const size_t row = static_cast<size_t>(spec_.num_kv_heads) * static_cast<size_t>(spec_.head_dim);
    if (k.size() != slots.size() * row || v.size() != k.size()) throw InputError("probe append", "K/V sizes do not match the slots");
    for (size_t t = 0; t < slots.size(); ++t) {
      const i64 block = slots[t] / spec_.page_size;
      const int slot = static_cast<int>(slots[t] % spec_.page_size);
      if (block < 0 || block >= spec_.num_blocks) throw InputError("probe append", "slot outside the pool");
      for (int h = 0; h < spec_.num_kv_heads; ++h) {
        const size_t i = t * row + static_cast<size_t>(h) * static_cast<size_t>(spec_.head_dim);
        encode_row(&k[i], spec_.head_dim, spec_.dtype, sc.k, pool_.get() + layout_.row_offset_bytes(block, 0, slot, h));
        encode_row(&v[i], spec_.head_dim, spec_.dtype, sc.v, pool_.get() + layout_.row_offset_bytes(block, 1, slot, h));
      }
    }
  }

  void fill_synthetic(const PageTable& pt, std::uint64_t seed, const Fp8Scales& sc) override {
    need_pool();
    workers_.run(pt.num_seqs(), [&](i64 s, int) {
      std::vector<float> x(static_cast<size_t>(spec_.head_dim));
      const i64 tokens = pt.tokens(static_cast<int>(s), spec_.page_size);
      for (i64 t = 0; t < tokens; ++t) {
        const i64 block = pt.indices[static_cast<size_t>(pt.indptr[static_cast<size_t>(s)] + t / spec_.page_size)];
        const int slot = static_cast<int>(t % spec_.page_size);
        for (int kv = 0; kv < 2; ++kv)
          for (int h = 0; h < spec_.num_kv_heads; ++h) {
            for (int d = 0; d < spec_.head_dim; ++d) x[static_cast<size_t>(d)] = synthetic_value(seed, s, t, kv, h, d);
            encode_row(x.data(), spec_.head_dim, spec_.dtype, kv == 0 ? sc.k : sc.v, pool_.get() + layout_.row_offset_bytes(block, kv, slot, h));
          }
      }
    });
  }

  void decode(const std::vector<float>& q, const PageTable& pt, const Fp8Scales& sc, std::vector<float>& out) override {
    need_pool();
    q_ = q;
    pt_ = pt;
    sc_ = sc;
    plan_chunks(pt_);
    run_decode();
    out = out_;
  }

  TimingStats time_decode(double max_seconds) override {
    return time_repeats([&] { run_decode(); }, [&] { flush(); }, max_seconds);
  }

  TimingStats time_contiguous_read(double max_seconds) override {
    need_pool();
    return time_repeats([&] { sink_.fetch_xor(contiguous_xor()); }, [&] { flush(); }, max_seconds);
  }

  TimingStats time_paged_gather(const PageTable& pt, double max_seconds) override {
    need_pool();
    plan_chunks(pt);
    return time_repeats([&] { sink_.fetch_xor(gather_xor(pt)); }, [&] { flush(); }, max_seconds);
  }

 private:
  static std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("model name", 0) == 0) {
        const auto c = line.find(':');
        std::string m = c == std::string::npos ? "" : line.substr(c + 1);
        m.erase(0, m.find_first_not_of(' '));
        return m;
      }
    return "unknown";
  }
  void need_pool() const {
    if (!pool_) throw RuntimeFailure("probe: no pool allocated");
  }

  // Split-K plan: enough chunks that every thread has about four (long sequences are cut, short ones
  // are not), a chunk at least 8 pages so its fixed cost is small. Chunk c: entries [chunk_begin,
  // chunk_end) of the page table, of sequence chunk_seq.
  void plan_chunks(const PageTable& pt) {
    const int seqs = pt.num_seqs();
    i64 total_pages = 0;
    for (int s = 0; s < seqs; ++s) total_pages += pt.indptr[static_cast<size_t>(s) + 1] - pt.indptr[static_cast<size_t>(s)];
    const i64 target = 4LL * threads_;
    const i64 per_chunk = std::max<i64>(8, (total_pages + target - 1) / std::max<i64>(1, target));
    chunk_seq_.clear();
    chunk_begin_.clear();
    chunk_end_.clear();
    for (int s = 0; s < seqs; ++s) {
      const std::int32_t b = pt.indptr[static_cast<size_t>(s)], e = pt.indptr[static_cast<size_t>(s) + 1];
      std::int32_t p = b;
      do {  // at least one chunk, even for an empty sequence
        const std::int32_t pe = static_cast<std::int32_t>(std::min<i64>(e, p + per_chunk));
        chunk_seq_.push_back(s);
        chunk_begin_.push_back(p);
        chunk_end_.push_back(pe);
        p = pe;
      } while (p < e);
    }
  }

  // Every chunk on the thread pool, then the LSE merge of each (sequence, q head):
  // out = sum_c e^(m_c - M) acc_c / sum_c e^(m_c - M) l_c with M = max_c m_c.
  void run_decode() {
    const int seqs = pt_.num_seqs(), qh = spec_.num_q_heads, d = spec_.head_dim, group = qh / spec_.num_kv_heads;
    const size_t chunks = chunk_seq_.size(), qd = static_cast<size_t>(qh) * static_cast<size_t>(d);
    out_.assign(static_cast<size_t>(seqs) * qd, 0.0f);
    part_acc_.resize(chunks * qd);
    part_m_.resize(chunks * static_cast<size_t>(qh));
    part_l_.resize(part_m_.size());
    if (scratch_.size() != static_cast<size_t>(threads_)) scratch_.resize(static_cast<size_t>(threads_));
    for (auto& w : scratch_) w.size_for(d, spec_.num_kv_heads, group);
    CpuDecodeArgs a;
    a.layout = layout_;
    a.pool = pool_.get();
    a.q_heads = qh;
    a.q = q_.data();
    a.pt = &pt_;
    a.sm_scale = 1.0f / std::sqrt(static_cast<float>(d));
    a.k_scale = sc_.k;
    a.v_scale = sc_.v;
    a.chunk_seq = chunk_seq_.data();
    a.chunk_begin = chunk_begin_.data();
    a.chunk_end = chunk_end_.data();
    a.part_acc = part_acc_.data();
    a.part_m = part_m_.data();
    a.part_l = part_l_.data();
    workers_.run(static_cast<i64>(chunks), [&](i64 c, int t) { run_chunk(isa_, a, static_cast<int>(c), scratch_[static_cast<size_t>(t)]); });
    size_t c0 = 0;
    for (int s = 0; s < seqs; ++s) {
      size_t c1 = c0;
      while (c1 < chunks && chunk_seq_[c1] == s) ++c1;
      for (int h = 0; h < qh; ++h) {
        float mx = -INFINITY;
        for (size_t c = c0; c < c1; ++c) mx = std::max(mx, part_m_[c * static_cast<size_t>(qh) + static_cast<size_t>(h)]);
        float lsum = 0;
        float* o = &out_[static_cast<size_t>(s) * qd + static_cast<size_t>(h) * static_cast<size_t>(d)];
        for (size_t c = c0; c < c1; ++c) {
          const size_t i = c * static_cast<size_t>(qh) + static_cast<size_t>(h);
          if (part_l_[i] == 0.0f) continue;
          const float w = std::exp(part_m_[i] - mx);
          lsum += w * part_l_[i];
          const float* acc = &part_acc_[i * static_cast<size_t>(d)];
          for (int k = 0; k < d; ++k) o[k] += w * acc[k];
        }
        const float inv = lsum > 0 ? 1.0f / lsum : 0.0f;
        for (int k = 0; k < d; ++k) o[k] *= inv;
      }
      c0 = c1;
    }
  }

  // The contiguous ceiling: the whole pool read once, in 1 MiB pieces shared by the threads.
  std::uint64_t contiguous_xor() {
    constexpr i64 kPiece = 1 << 20;
    const i64 pieces = (pool_bytes_ + kPiece - 1) / kPiece;
    std::vector<std::uint64_t> part(static_cast<size_t>(pieces), 0);
    workers_.run(pieces, [&](i64 i, int) {
      const i64 b = i * kPiece, n = std::min(kPiece, pool_bytes_ - b) / 256 * 256;
      part[static_cast<size_t>(i)] = read_xor(isa_, pool_.get() + b, n);
    });
    std::uint64_t x = 0;
    for (auto p : part) x ^= p;
    return x;
  }

  // The paged ceiling: every page of `pt` read whole, with the decode's chunks (plan_chunks).
  std::uint64_t gather_xor(const PageTable& pt) {
    const i64 bb = layout_.block_bytes();
    std::vector<std::uint64_t> part(chunk_seq_.size(), 0);
    workers_.run(static_cast<i64>(chunk_seq_.size()), [&](i64 c, int) {
      std::uint64_t x = 0;
      for (std::int32_t p = chunk_begin_[static_cast<size_t>(c)]; p < chunk_end_[static_cast<size_t>(c)]; ++p)
        x ^= read_xor(isa_, pool_.get() + static_cast<i64>(pt.indices[static_cast<size_t>(p)]) * bb, bb / 256 * 256);
      part[static_cast<size_t>(c)] = x;
    });
    std::uint64_t x = 0;
    for (auto p : part) x ^= p;
    return x;
  }

  // Twice the largest cache the OS lists (sysfs), at least 32 MiB: what one walk of the flush buffer evicts.
  static i64 flush_bytes() {
    i64 largest = 0;
    for (int i = 0; i < 8; ++i) {
      std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
      std::string v;
      if (!(in >> v) || v.empty()) continue;
      const char unit = v.back();
      const i64 n = std::atoll(v.c_str()) * (unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1);
      largest = std::max(largest, n);
    }
    return std::max<i64>(32LL << 20, 2 * largest);
  }

  // Every thread reads the whole flush buffer before a timed repeat, so every cache the next repeat's
  // threads read through starts without the pool (the threads of a VM may sit on different chiplets,
  // each with its own L3, and one thread's walk evicts only its own). Each thread takes exactly one
  // task: a task waits until all threads hold one.
  void flush() {
    std::atomic<int> arrived{0};
    workers_.run(threads_, [&](i64, int) {
      arrived.fetch_add(1);
      while (arrived.load() < threads_) std::this_thread::yield();
      sink_.fetch_xor(read_xor(isa_, flush_.data(), static_cast<i64>(flush_.size()) / 256 * 256));
    });
  }

  int threads_;
  ThreadPool workers_;
  Isa isa_;
  DeviceInfo info_;
  std::unique_ptr<std::uint8_t[], PoolFree> pool_;
  i64 pool_bytes_ = 0;
  PoolSpec spec_;
  kernels::PagedKvLayout layout_;
  std::vector<std::uint8_t> flush_;
  std::vector<float> q_, out_, part_acc_, part_m_, part_l_;
  std::vector<std::int32_t> chunk_seq_, chunk_begin_, chunk_end_;
  std::vector<Scratch> scratch_;
  PageTable pt_;
  Fp8Scales sc_;
  std::atomic<std::uint64_t> sink_{0};
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace kvplan::probe
