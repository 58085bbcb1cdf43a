// Device helpers shared by the kernels: the ONE shape switch (head dim x page size x dtype), element
// conversions to and from the cache types, 16-byte async copies and warp reductions.
// CUDA-only header: include from kernels/*.cu and gpu_probe/src/cuda only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "paged_kv_layout.h"

namespace kvplan::kernels {

/// A compiled shape: head dim, page size (tokens) and cache element type.
template <int HD, int PS, KvDtype DT>
struct Shape {
  static constexpr int head_dim = HD;
  static constexpr int page_size = PS;
  static constexpr KvDtype dtype = DT;
  static constexpr int elem_bytes = kv_dtype_bytes(DT);
};

// Every shape the kernels are compiled for. Adding one here is the only change a new shape needs.
#define KVPLAN_KV_SHAPES_DT(X, HD, PS) X(HD, PS, KvDtype::bf16) X(HD, PS, KvDtype::f16) X(HD, PS, KvDtype::fp8_e4m3)
#define KVPLAN_KV_SHAPES_PS(X, HD) KVPLAN_KV_SHAPES_DT(X, HD, 16) KVPLAN_KV_SHAPES_DT(X, HD, 32) KVPLAN_KV_SHAPES_DT(X, HD, 64)
#define KVPLAN_KV_SHAPES(X) KVPLAN_KV_SHAPES_PS(X, 64) KVPLAN_KV_SHAPES_PS(X, 128) KVPLAN_KV_SHAPES_PS(X, 256)

constexpr int shape_key(int head_dim, int page_size, KvDtype dtype) {
  return (head_dim * 1000 + page_size) * 8 + static_cast<int>(dtype);
}

/// The one switch from run-time shape to compiled kernels: calls f(Shape<...>{}) and returns its
/// status, or cudaErrorInvalidValue for a shape (or an elem_bytes/dtype mismatch) it lacks.
template <class F>
cudaError_t dispatch_shape(const PagedKvLayout& l, F&& f) {
  if (l.elem_bytes != kv_dtype_bytes(l.dtype)) return cudaErrorInvalidValue;
  switch (shape_key(l.head_dim, l.page_size, l.dtype)) {
#define KVPLAN_SHAPE_CASE(HD, PS, DT) \
  case shape_key(HD, PS, DT):         \
    return f(Shape<HD, PS, DT>{});
    KVPLAN_KV_SHAPES(KVPLAN_SHAPE_CASE)
#undef KVPLAN_SHAPE_CASE
    default:
      return cudaErrorInvalidValue;
  }
}

// ---- element conversions ----

/// Elements of type DT in 16 bytes.
template <KvDtype DT>
__host__ __device__ constexpr int elems_per_16b() { return 16 / kv_dtype_bytes(DT); }

__device__ __forceinline__ float2 bf16x2_to_float2(uint32_t w) {
  return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
}

__device__ __forceinline__ float2 f16x2_to_float2(uint32_t w) {
  __half2_raw r;
  r.x = static_cast<unsigned short>(w & 0xffffu);
  r.y = static_cast<unsigned short>(w >> 16);
  return __half22float2(__half2(r));
}

__device__ __forceinline__ float2 fp8x2_to_float2(uint32_t pair) {  // low byte is the first element
  const __half2_raw r = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(pair & 0xffffu), __NV_E4M3);
  return __half22float2(__half2(r));
}

/// Converts the 32-bit words w[0..N) of cache elements to floats (2 per word for 16-bit types, 4 for fp8).
template <KvDtype DT, int N>
__device__ __forceinline__ void words_to_float(const uint32_t (&w)[N], float* f) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if constexpr (DT == KvDtype::bf16) {
      const float2 a = bf16x2_to_float2(w[i]);
      f[2 * i] = a.x;
      f[2 * i + 1] = a.y;
    } else if constexpr (DT == KvDtype::f16) {
      const float2 a = f16x2_to_float2(w[i]);
      f[2 * i] = a.x;
      f[2 * i + 1] = a.y;
    } else {
      const float2 a = fp8x2_to_float2(w[i]);
      const float2 b = fp8x2_to_float2(w[i] >> 16);
      f[4 * i] = a.x;
      f[4 * i + 1] = a.y;
      f[4 * i + 2] = b.x;
      f[4 * i + 3] = b.y;
    }
  }
}

/// One float to the cache's 8 or 16 bits (bf16/f16: round to nearest even; fp8: x / scale, round
/// to nearest even, saturated to +-448, NaN stays NaN), matching the CPU backend's conversions.
template <KvDtype DT>
__device__ __forceinline__ uint32_t float_to_bits(float x, float scale) {
  if constexpr (DT == KvDtype::bf16) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  } else if constexpr (DT == KvDtype::f16) {
    return __half_as_ushort(__float2half_rn(x));
  } else {
    return static_cast<uint32_t>(__nv_cvt_float_to_fp8(x / scale, __NV_SATFINITE, __NV_E4M3));
  }
}

// ---- synthetic cache contents ----

/// Device copy of kvplan::probe::synthetic_value (gpu_probe/include/kvplan/probe/backend.hpp): the
/// value token t of sequence s holds in K (kv = 0) or V (kv = 1) at (head, dim), splitmix64 of the
/// coordinates mapped to [-2, 2). Must stay bit-identical to the host function: the GPU tests fill
/// both backends with it and compare.
__device__ __forceinline__ float synthetic_value(uint64_t seed, int64_t s, int64_t t, int kv, int head, int dim) {
  uint64_t z = seed ^ (static_cast<uint64_t>(s) * 0x9E3779B97F4A7C15ULL) ^ (static_cast<uint64_t>(t) * 0xC2B2AE3D27D4EB4FULL) ^
               (static_cast<uint64_t>((kv << 20) | (head << 10) | dim) * 0x165667B19E3779F9ULL);
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  // (z >> 40) has 24 bits, so the product is exact and the difference too: no rounding to differ
  return __fsub_rn(__fmul_rn(static_cast<float>(z >> 40), 4.0f / 16777216.0f), 2.0f);
}

// ---- 16-byte async copies (sm_80+) ----

/// Copies 16 bytes global -> shared without blocking; when !valid the 16 shared bytes are zeroed
/// and nothing is read (src may then be any mapped address).
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  const size_t src = __cvta_generic_to_global(gmem_src);
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

/// Waits until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- warp reductions ----

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

__device__ __forceinline__ uint32_t warp_xor(uint32_t x) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x ^= __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

/// The sequence owning chunk `chunk`: the largest s with chunk_indptr[s] <= chunk (chunk_indptr is
/// strictly increasing: every sequence has at least one chunk).
__device__ __forceinline__ int find_seq(const int32_t* chunk_indptr, int num_seqs, int chunk) {
  int lo = 0, hi = num_seqs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (__ldg(chunk_indptr + mid) <= chunk) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/// Token range [begin, end) of chunk `c_in_seq` of a sequence of `pages` pages.
struct ChunkRange {
  int64_t begin = 0, end = 0;
};

template <int PS>
__device__ __forceinline__ ChunkRange chunk_range(int pages, int32_t last_len, int c_in_seq, int pages_per_chunk) {
  const int64_t len = pages == 0 ? 0 : int64_t(pages - 1) * PS + last_len;
  ChunkRange r;
  r.begin = int64_t(c_in_seq) * pages_per_chunk * PS;
  r.end = r.begin + int64_t(pages_per_chunk) * PS;
  if (r.end > len) r.end = len;
  if (r.begin > r.end) r.begin = r.end;
  return r;
}

}  // namespace kvplan::kernels
