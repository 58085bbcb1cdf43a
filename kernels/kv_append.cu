// KV append: writes new tokens' K and V rows into their pages, converting device floats to the cache
// type (bf16/f16 round to nearest even; fp8 e4m3 x / scale, round to nearest even, saturated to
// +-448). Grid-stride over 16-byte output units: each thread reads 8 (16-bit) or 16 (fp8) floats of
// a row with float4 loads and writes them as one 16-byte store, for K and for V. The synthetic fill
// writes the same conversion of synthetic_value(seed, s, t, kv, head, dim), one CTA per page.
#include <cuda_runtime.h>

#include "kernel_common.cuh"
#include "kv_append.cuh"

namespace kvplan::kernels {

namespace {

constexpr int kThreads = 256;

template <KvDtype DT>
__global__ void __launch_bounds__(kThreads) kv_append_kernel(const KvAppendArgs a) {
  constexpr int EPU = elems_per_16b<DT>();  // elements per 16-byte unit
  const int32_t hd = a.layout.head_dim;
  const int32_t row = a.layout.kv_heads * hd;
  const int32_t units_per_token = row / EPU;
  const int64_t total = a.num_tokens * units_per_token;
  const int64_t capacity = a.layout.num_blocks * a.layout.page_size;
  auto* pool = static_cast<unsigned char*>(a.pool);
  for (int64_t u = int64_t(blockIdx.x) * kThreads + threadIdx.x; u < total; u += int64_t(gridDim.x) * kThreads) {
    const int64_t t = u / units_per_token;
    const int32_t e0 = static_cast<int32_t>(u % units_per_token) * EPU;
    const int64_t slot_id = a.slot_mapping[t];
    if (slot_id < 0 || slot_id >= capacity) continue;  // padding (the host rejects out-of-range slots)
    const int64_t block = slot_id / a.layout.page_size;
    const int32_t slot = static_cast<int32_t>(slot_id % a.layout.page_size);
    const int32_t head = e0 / hd, dim = e0 % hd;
#pragma unroll
    for (int kv = 0; kv < 2; ++kv) {
      const float4* src = reinterpret_cast<const float4*>((kv == 0 ? a.k_new : a.v_new) + t * row + e0);
      const float scale = kv == 0 ? a.k_scale : a.v_scale;
      uint32_t w[4];
      if constexpr (EPU == 8) {  // 16-bit: 8 floats -> 4 words
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const float4 f = src[i];
          w[2 * i] = float_to_bits<DT>(f.x, scale) | (float_to_bits<DT>(f.y, scale) << 16);
          w[2 * i + 1] = float_to_bits<DT>(f.z, scale) | (float_to_bits<DT>(f.w, scale) << 16);
        }
      } else {  // fp8: 16 floats -> 4 words
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float4 f = src[i];
          w[i] = float_to_bits<DT>(f.x, scale) | (float_to_bits<DT>(f.y, scale) << 8) |
                 (float_to_bits<DT>(f.z, scale) << 16) | (float_to_bits<DT>(f.w, scale) << 24);
        }
      }
      const int64_t dst = a.layout.offset(block, kv, slot, head, dim) * kv_dtype_bytes(DT);
      *reinterpret_cast<uint4*>(pool + dst) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

template <KvDtype DT, int PS>
__global__ void __launch_bounds__(kThreads) fill_synthetic_kernel(const FillSyntheticArgs a) {
  constexpr int EPU = elems_per_16b<DT>();
  const int32_t hd = a.layout.head_dim, kvh = a.layout.kv_heads;
  const int page = static_cast<int>(blockIdx.x);  // index into page_indices
  int seq = 0;                                     // the sequence owning it: page_indptr[seq] <= page < page_indptr[seq + 1]
  {
    int lo = 0, hi = a.num_seqs - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (__ldg(a.page_indptr + mid) <= page) lo = mid;
      else hi = mid - 1;
    }
    seq = lo;
  }
  const int first = __ldg(a.page_indptr + seq);
  const int pages = __ldg(a.page_indptr + seq + 1) - first;
  const int j = page - first;  // page of the sequence
  const int tokens = j < pages - 1 ? PS : __ldg(a.last_page_len + seq);
  const int64_t block = __ldg(a.page_indices + page);
  const int units_per_row = kvh * hd / EPU;
  const int units = tokens * 2 * units_per_row;  // (slot, kv, head, dim chunk)
  auto* pool = static_cast<unsigned char*>(a.pool);
  for (int u = threadIdx.x; u < units; u += kThreads) {
    const int within = u % units_per_row;
    const int kv = (u / units_per_row) & 1;
    const int slot = u / (2 * units_per_row);
    const int head = within * EPU / hd, d0 = within * EPU % hd;
    const int64_t t = int64_t(j) * PS + slot;
    const float scale = kv == 0 ? a.k_scale : a.v_scale;
    uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
    for (int e = 0; e < EPU; ++e) {
      const uint32_t bits = float_to_bits<DT>(synthetic_value(a.seed, seq, t, kv, head, d0 + e), scale);
      w[e / (EPU / 4)] |= bits << (32 / (EPU / 4) * (e % (EPU / 4)));
    }
    const int64_t dst = a.layout.offset(block, kv, slot, head, d0) * kv_dtype_bytes(DT);
    *reinterpret_cast<uint4*>(pool + dst) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

}  // namespace

cudaError_t launch_kv_append(const KvAppendArgs& a, cudaStream_t stream) {
  if (a.num_tokens < 0 || a.layout.kv_heads <= 0) return cudaErrorInvalidValue;
  if (a.num_tokens == 0) return cudaSuccess;
  if (a.k_new == nullptr || a.v_new == nullptr || a.slot_mapping == nullptr || a.pool == nullptr) return cudaErrorInvalidValue;
  return dispatch_shape(a.layout, [&](auto shape) -> cudaError_t {
    using S = decltype(shape);
    constexpr int EPU = elems_per_16b<S::dtype>();
    const int64_t units = a.num_tokens * (int64_t(a.layout.kv_heads) * S::head_dim / EPU);
    const int64_t blocks = (units + kThreads - 1) / kThreads;
    const unsigned grid = static_cast<unsigned>(blocks < (1 << 20) ? blocks : (1 << 20));  // grid-stride beyond
    kv_append_kernel<S::dtype><<<grid, kThreads, 0, stream>>>(a);
    return cudaGetLastError();
  });
}

cudaError_t launch_fill_synthetic(const FillSyntheticArgs& a, cudaStream_t stream) {
  if (a.num_seqs <= 0 || a.total_pages < 0 || a.layout.kv_heads <= 0 || a.page_indptr == nullptr ||
      a.page_indices == nullptr || a.last_page_len == nullptr || a.pool == nullptr)
    return cudaErrorInvalidValue;
  return dispatch_shape(a.layout, [&](auto shape) -> cudaError_t {
    using S = decltype(shape);
    if (a.total_pages == 0) return cudaSuccess;
    fill_synthetic_kernel<S::dtype, S::page_size><<<static_cast<unsigned>(a.total_pages), kThreads, 0, stream>>>(a);
    return cudaGetLastError();
  });
}

}  // namespace kvplan::kernels
