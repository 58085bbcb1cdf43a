// Shared probe pieces: element conversions, pool arithmetic, supported shapes, the block allocator
// and the double-precision reference.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "kvplan/core/error.hpp"
#include "kvplan/core/paging.hpp"
#include "kvplan/probe/probe.hpp"

namespace kvplan::probe {

const char* cache_dtype_name(CacheDtype d) {
  switch (d) {
    case CacheDtype::bf16: return "bf16";
    case CacheDtype::f16: return "f16";
    case CacheDtype::fp8_e4m3: return "fp8_e4m3";
    case CacheDtype::fp8_e5m2: return "fp8_e5m2";
    case CacheDtype::q8_0: return "q8_0";
    case CacheDtype::q4_0: return "q4_0";
  }
  return "?";
}

const std::vector<CacheDtype>& all_cache_dtypes() {
  static const std::vector<CacheDtype> v = {CacheDtype::bf16, CacheDtype::f16, CacheDtype::fp8_e4m3,
                                            CacheDtype::fp8_e5m2, CacheDtype::q8_0, CacheDtype::q4_0};
  return v;
}

i64 PoolSpec::row_bytes() const { return kernels::kv_row_bytes(dtype, head_dim); }

kernels::PagedKvLayout PoolSpec::layout() const {
  kernels::PagedKvLayout l;
  l.num_blocks = num_blocks;
  l.page_size = page_size;
  l.kv_heads = num_kv_heads;
  l.head_dim = head_dim;
  l.dtype = dtype;
  l.elem_bytes = kernels::kv_dtype_bytes(dtype);
  return l;
}

// One page of K and V for every KV head: 2 x page_size x kv_heads rows of kv_row_bytes; the pool is
// num_blocks of them (the same per-layer page the planner's vLLM rule counts).
i64 PoolSpec::pool_bytes() const {
  const i64 page = kvplan::mul(kvplan::mul(2LL * page_size, num_kv_heads), row_bytes(), "probe page bytes");
  return kvplan::pages_bytes(num_blocks, page);
}

i64 PageTable::tokens(int s, int page_size) const {
  const i64 pages = indptr[static_cast<size_t>(s) + 1] - indptr[static_cast<size_t>(s)];
  return pages == 0 ? 0 : (pages - 1) * page_size + last_page_len[static_cast<size_t>(s)];
}

void check_supported(const PoolSpec& s) {
  const bool hd = s.head_dim == 64 || s.head_dim == 128 || s.head_dim == 256;
  const bool ps = s.page_size == 16 || s.page_size == 32 || s.page_size == 64;
  if (!hd) throw InputError("probe shape", "head_dim " + std::to_string(s.head_dim) + " is not supported by the kernels", "supported head dims: 64, 128, 256");
  if (!ps) throw InputError("probe shape", "page size " + std::to_string(s.page_size) + " is not supported by the kernels", "supported page sizes: 16, 32, 64");
  if (s.num_kv_heads < 1 || s.num_q_heads < 1 || s.num_q_heads % s.num_kv_heads != 0)
    throw InputError("probe shape", "query heads " + std::to_string(s.num_q_heads) + " must be a multiple of KV heads " + std::to_string(s.num_kv_heads),
                     "use the model's per-rank heads");
  if (s.head_dim % kernels::kv_block_elems(s.dtype) != 0)
    throw InputError("probe shape", "head_dim " + std::to_string(s.head_dim) + " is not a multiple of the " + cache_dtype_name(s.dtype) + " block",
                     "use head_dim 64, 128 or 256");
  if (s.num_q_heads / s.num_kv_heads > 64) throw InputError("probe shape", "more than 64 query heads per KV head", "supported GQA groups: 1 to 64");
}

// ---- timing statistics ----
double relative_stdev(const std::vector<double>& s) {
  if (s.empty()) return 0;
  double mean = 0, var = 0;
  for (double x : s) mean += x;
  mean /= static_cast<double>(s.size());
  for (double x : s) var += (x - mean) * (x - mean);
  return mean > 0 ? std::sqrt(var / static_cast<double>(s.size())) / mean : 0;
}

TimingStats summarise_timings(std::vector<double> s) {
  TimingStats t;
  if (s.empty()) return t;
  t.repeats = static_cast<int>(s.size());
  double mean = 0;
  for (double x : s) mean += x;
  t.mean_s = mean / static_cast<double>(s.size());
  t.rel_stdev = relative_stdev(s);
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  t.median_s = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  t.min_s = s.front();
  t.max_s = s.back();
  return t;
}

// ---- conversions ----
std::uint16_t to_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isnan(x)) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

float from_bf16(std::uint16_t x) {
  const std::uint32_t u = static_cast<std::uint32_t>(x) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// IEEE binary16 as the compiler has it: __fp16 on aarch64 (GCC 12 has no C++ _Float16 there), _Float16 elsewhere.
#if defined(__aarch64__)
using half_t = __fp16;
#else
using half_t = _Float16;
#endif

std::uint16_t to_f16(float x) {
  const half_t h = static_cast<half_t>(x);
  std::uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

float from_f16(std::uint16_t x) {
  half_t h;
  std::memcpy(&h, &x, 2);
  return static_cast<float>(h);
}

// OCP fp8 e4m3 (FN): bias 7, no infinities, 0x7f/0xff NaN, largest finite 448.
std::uint8_t to_fp8_e4m3(float x) {
  if (std::isnan(x)) return 0x7f;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  float a = std::fabs(x);
  if (a >= 448.0f) return sign | 0x7e;
  if (a < std::ldexp(1.0f, -6)) {  // subnormal: m x 2^-9
    const int m = static_cast<int>(std::nearbyint(a / std::ldexp(1.0f, -9)));
    if (m >= 8) return sign | 0x08;  // rounds up to the smallest normal
    return sign | static_cast<std::uint8_t>(m);
  }
  int e = 0;
  const float f = std::frexp(a, &e);  // a = f x 2^e, f in [0.5, 1)
  int E = e - 1;                      // a = (2f) x 2^E, 2f in [1, 2)
  int m = static_cast<int>(std::nearbyint((2.0f * f - 1.0f) * 8.0f));
  if (m == 8) { m = 0; ++E; }
  if (E > 8 || (E == 8 && m > 6)) return sign | 0x7e;
  return sign | static_cast<std::uint8_t>(((E + 7) << 3) | m);
}

float from_fp8_e4m3(std::uint8_t x) {
  const int e = (x >> 3) & 0xf, m = x & 7;
  const float s = (x & 0x80) ? -1.0f : 1.0f;
  if (e == 15 && m == 7) return std::nanf("");
  if (e == 0) return s * std::ldexp(static_cast<float>(m), -9);
  return s * std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
}

// OCP fp8 e5m2: bias 15, 2 mantissa bits, the top byte of an IEEE f16 (so inf and NaN exist);
// stored values saturate to the largest finite, 57344 = 1.75 x 2^15 (0x7b).
std::uint8_t to_fp8_e5m2(float x) {
  if (std::isnan(x)) return 0x7f;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const float a = std::fabs(x);
  if (a < std::ldexp(1.0f, -14)) return sign | static_cast<std::uint8_t>(std::nearbyint(a * 65536.0f));  // m x 2^-16; 4 = smallest normal
  if (a >= 57344.0f) return sign | 0x7b;
  std::uint32_t u;
  std::memcpy(&u, &a, 4);
  u += 0xfffffu + ((u >> 21) & 1u);  // round to nearest even at 2 mantissa bits
  const int e = static_cast<int>(u >> 23) - 127;
  if (e > 15) return sign | 0x7b;
  return sign | static_cast<std::uint8_t>(((e + 15) << 2) | ((u >> 21) & 3u));
}

float from_fp8_e5m2(std::uint8_t x) { return from_f16(static_cast<std::uint16_t>(x << 8)); }

float quantise(float x, CacheDtype d, float scale) {
  switch (d) {
    case CacheDtype::bf16: return from_bf16(to_bf16(x));
    case CacheDtype::f16: return from_f16(to_f16(x));
    case CacheDtype::fp8_e4m3: return from_fp8_e4m3(to_fp8_e4m3(x / scale)) * scale;
    case CacheDtype::fp8_e5m2: return from_fp8_e5m2(to_fp8_e5m2(x / scale)) * scale;
    case CacheDtype::q8_0:
    case CacheDtype::q4_0: throw InputError("probe", std::string(cache_dtype_name(d)) + " quantises whole rows", "use quantise_row");
  }
  return x;
}

void encode_row(const float* x, int n, CacheDtype d, float scale, std::uint8_t* out) {
  switch (d) {
    case CacheDtype::bf16:
    case CacheDtype::f16:
      for (int i = 0; i < n; ++i) {
        const std::uint16_t h = d == CacheDtype::bf16 ? to_bf16(x[i]) : to_f16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case CacheDtype::fp8_e4m3:
      for (int i = 0; i < n; ++i) out[i] = to_fp8_e4m3(x[i] / scale);
      return;
    case CacheDtype::fp8_e5m2:
      for (int i = 0; i < n; ++i) out[i] = to_fp8_e5m2(x[i] / scale);
      return;
    case CacheDtype::q8_0:  // ggml quantize_row_q8_0_ref: d = amax / 127, q = round(x / d)
      for (int b = 0; b < n / 32; ++b, out += 34) {
        const float* xb = x + 32 * b;
        float amax = 0;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(xb[i]));
        const float dd = amax / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
        const std::uint16_t h = to_f16(dd);
        std::memcpy(out, &h, 2);
        for (int i = 0; i < 32; ++i) out[2 + i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::nearbyint(xb[i] * id)));
      }
      return;
    case CacheDtype::q4_0:  // ggml quantize_row_q4_0_ref: d = (signed max by magnitude) / -8, q = min(15, (int8)(x / d + 8.5))
      for (int b = 0; b < n / 32; ++b, out += 18) {
        const float* xb = x + 32 * b;
        float amax = 0, mx = 0;
        for (int i = 0; i < 32; ++i)
          if (std::fabs(xb[i]) > amax) { amax = std::fabs(xb[i]); mx = xb[i]; }
        const float dd = mx / -8.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
        const std::uint16_t h = to_f16(dd);
        std::memcpy(out, &h, 2);
        for (int j = 0; j < 16; ++j) {
          const int lo = std::min(15, static_cast<int>(static_cast<std::int8_t>(xb[j] * id + 8.5f)));
          const int hi = std::min(15, static_cast<int>(static_cast<std::int8_t>(xb[j + 16] * id + 8.5f)));
          out[2 + j] = static_cast<std::uint8_t>(lo | (hi << 4));
        }
      }
      return;
  }
}

void decode_row(const std::uint8_t* in, int n, CacheDtype d, float scale, float* out) {
  switch (d) {
    case CacheDtype::bf16:
    case CacheDtype::f16:
      for (int i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        out[i] = d == CacheDtype::bf16 ? from_bf16(h) : from_f16(h);
      }
      return;
    case CacheDtype::fp8_e4m3:
      for (int i = 0; i < n; ++i) out[i] = from_fp8_e4m3(in[i]) * scale;
      return;
    case CacheDtype::fp8_e5m2:
      for (int i = 0; i < n; ++i) out[i] = from_fp8_e5m2(in[i]) * scale;
      return;
    case CacheDtype::q8_0:
      for (int b = 0; b < n / 32; ++b, in += 34) {
        std::uint16_t h;
        std::memcpy(&h, in, 2);
        const float dd = from_f16(h);
        for (int i = 0; i < 32; ++i) out[32 * b + i] = dd * static_cast<float>(static_cast<std::int8_t>(in[2 + i]));
      }
      return;
    case CacheDtype::q4_0:
      for (int b = 0; b < n / 32; ++b, in += 18) {
        std::uint16_t h;
        std::memcpy(&h, in, 2);
        const float dd = from_f16(h);
        for (int j = 0; j < 16; ++j) {
          out[32 * b + j] = dd * static_cast<float>((in[2 + j] & 0xf) - 8);
          out[32 * b + j + 16] = dd * static_cast<float>((in[2 + j] >> 4) - 8);
        }
      }
      return;
  }
}

void quantise_row(const float* x, int n, CacheDtype d, float scale, float* out) {
  std::vector<std::uint8_t> bytes(static_cast<size_t>(kernels::kv_row_bytes(d, n)));
  encode_row(x, n, d, scale, bytes.data());
  decode_row(bytes.data(), n, d, scale, out);
}

// ---- block allocator ----
BlockAllocator::BlockAllocator(i64 num_blocks, bool shuffled, std::uint64_t seed)
    : total_(num_blocks), free_(static_cast<size_t>(num_blocks)), ever_used_(static_cast<size_t>(num_blocks), false) {
  std::iota(free_.begin(), free_.end(), 0);
  if (shuffled) std::shuffle(free_.begin(), free_.end(), std::mt19937_64(seed));
  std::reverse(free_.begin(), free_.end());  // pop_back hands out the permutation in order
}

std::int32_t BlockAllocator::allocate_one() {
  if (free_.empty()) return -1;
  const std::int32_t b = free_.back();
  free_.pop_back();
  if (ever_used_[static_cast<size_t>(b)]) ++reused_;
  ever_used_[static_cast<size_t>(b)] = true;
  return b;
}

std::vector<std::int32_t> BlockAllocator::allocate(i64 tokens, int page_size) {
  const i64 n = pages_for_tokens(tokens, page_size);
  if (n > free_blocks()) return {};
  std::vector<std::int32_t> out;
  out.reserve(static_cast<size_t>(n));
  for (i64 i = 0; i < n; ++i) out.push_back(allocate_one());
  return out;
}

void BlockAllocator::release(const std::vector<std::int32_t>& pages) {
  for (auto it = pages.rbegin(); it != pages.rend(); ++it) free_.push_back(*it);
}

// ---- reference ----
std::vector<double> reference_attention(const std::vector<float>& q_row, const std::vector<float>& k_tokens,
                                        const std::vector<float>& v_tokens, i64 tokens, int kv_head, const PoolSpec& spec,
                                        const Fp8Scales& scales) {
  const int d = spec.head_dim;
  const size_t row = static_cast<size_t>(spec.num_kv_heads) * static_cast<size_t>(d);
  std::vector<double> logits(static_cast<size_t>(tokens));
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<float> kq(static_cast<size_t>(d)), vq(static_cast<size_t>(d));
  double mx = -INFINITY;
  for (i64 t = 0; t < tokens; ++t) {
    double s = 0;
    quantise_row(&k_tokens[static_cast<size_t>(t) * row + static_cast<size_t>(kv_head) * static_cast<size_t>(d)], d, spec.dtype, scales.k, kq.data());
    for (int i = 0; i < d; ++i) s += static_cast<double>(q_row[static_cast<size_t>(i)]) * kq[static_cast<size_t>(i)];
    logits[static_cast<size_t>(t)] = s * scale;
    mx = std::max(mx, logits[static_cast<size_t>(t)]);
  }
  double sum = 0;
  for (auto& l : logits) { l = std::exp(l - mx); sum += l; }
  std::vector<double> out(static_cast<size_t>(d), 0.0);
  for (i64 t = 0; t < tokens; ++t) {
    quantise_row(&v_tokens[static_cast<size_t>(t) * row + static_cast<size_t>(kv_head) * static_cast<size_t>(d)], d, spec.dtype, scales.v, vq.data());
    const double p = logits[static_cast<size_t>(t)] / sum;
    for (int i = 0; i < d; ++i) out[static_cast<size_t>(i)] += p * vq[static_cast<size_t>(i)];
  }
  return out;
}

}  // namespace kvplan::probe
