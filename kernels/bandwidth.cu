// Bandwidth ceilings. contiguous_read_kernel: grid-stride 16-byte L2-only loads (ld.global.cg), four
// in flight per thread, XOR-reduced so the compiler must keep every load; one atomic per warp.
// paged_gather_kernel: the decode's access pattern (CTA per chunk and KV head, page ids looked up per
// token, 16-byte loads of exactly the sequence's K and V rows) with no math, so decode time over
// gather time isolates the attention math and gather over contiguous isolates the cost of paging.
#include <cuda_runtime.h>

#include "bandwidth.cuh"
#include "kernel_common.cuh"
#include "split_plan.cuh"

namespace kvplan::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // independent 16-byte loads per thread in flight

__device__ __forceinline__ uint32_t fold(const uint4& v) { return v.x ^ v.y ^ v.z ^ v.w; }

__device__ __forceinline__ void sink_xor(uint32_t acc, uint32_t* sink) {
  acc = warp_xor(acc);
  if ((threadIdx.x & 31) == 0) atomicXor(sink, acc);
}

__global__ void __launch_bounds__(kThreads) contiguous_read_kernel(const ContiguousReadArgs a) {
  const uint4* p = static_cast<const uint4*>(a.data);
  const int64_t n = a.bytes / 16;
  const int64_t stride = int64_t(gridDim.x) * kThreads;
  int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  uint32_t acc = 0;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) v[k] = __ldcg(p + i + k * stride);
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) acc ^= fold(v[k]);
  }
  for (; i < n; i += stride) acc ^= fold(__ldcg(p + i));
  sink_xor(acc, a.sink);
}

template <class S>
__global__ void __launch_bounds__(kThreads) paged_gather_kernel(const PagedGatherArgs a) {
  constexpr int PS = S::page_size;
  constexpr int ROW_BYTES = S::head_dim * S::elem_bytes;
  constexpr int CPR = ROW_BYTES / 16;
  const int kvh = a.layout.kv_heads;
  const int chunk = static_cast<int>(blockIdx.x) / kvh;
  const int kv_head = static_cast<int>(blockIdx.x) % kvh;
  const int seq = find_seq(a.chunk_indptr, a.num_seqs, chunk);
  const int c0 = __ldg(a.chunk_indptr + seq);
  const int page_begin = __ldg(a.page_indptr + seq);
  const int pages = __ldg(a.page_indptr + seq + 1) - page_begin;
  const ChunkRange cr = chunk_range<PS>(pages, __ldg(a.last_page_len + seq), chunk - c0, a.plan.pages_per_chunk);
  const int64_t units = (cr.end - cr.begin) * 2 * CPR;  // 16-byte units: (token, K/V, chunk of row)
  const unsigned char* pool = static_cast<const unsigned char*>(a.pool);
  const int64_t row_stride = int64_t(kvh) * ROW_BYTES;
  const int64_t kv_stride = int64_t(PS) * row_stride;
  const unsigned char* head_base = pool + int64_t(kv_head) * ROW_BYTES;
  const int32_t* pidx = a.page_indices + page_begin;
  uint32_t acc = 0;
  for (int64_t u0 = threadIdx.x; u0 < units; u0 += int64_t(kUnroll) * kThreads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t u = u0 + int64_t(k) * kThreads;
      v[k] = make_uint4(0, 0, 0, 0);
      if (u < units) {
        const int c = static_cast<int>(u % CPR);
        const int64_t rest = u / CPR;
        const int kv = static_cast<int>(rest & 1);
        const int64_t tok = cr.begin + (rest >> 1);
        const int32_t page = __ldg(pidx + tok / PS);
        const int slot = static_cast<int>(tok % PS);
        v[k] = __ldcg(reinterpret_cast<const uint4*>(head_base + int64_t(page) * 2 * kv_stride + kv * kv_stride +
                                                      slot * row_stride + c * 16));
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) acc ^= fold(v[k]);
  }
  sink_xor(acc, a.sink);
}

}  // namespace

cudaError_t contiguous_read_ctas(int sm_count, int32_t* ctas) {
  if (sm_count <= 0 || ctas == nullptr) return cudaErrorInvalidValue;
  int per_sm = 0;
  const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, contiguous_read_kernel, kThreads, 0);
  if (e != cudaSuccess) return e;
  *ctas = sm_count * (per_sm > 0 ? per_sm : 1);
  return cudaSuccess;
}

cudaError_t launch_contiguous_read(const ContiguousReadArgs& a, cudaStream_t stream) {
  if (a.data == nullptr || a.sink == nullptr || a.bytes < 0 || a.bytes % 16 != 0 || a.num_ctas <= 0) return cudaErrorInvalidValue;
  contiguous_read_kernel<<<static_cast<unsigned>(a.num_ctas), kThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t plan_paged_gather(const PagedKvLayout& layout, const int32_t* host_page_indptr, int num_seqs, int sm_count,
                              SplitPlan* plan, int32_t* host_chunk_indptr) {
  if (plan == nullptr || host_page_indptr == nullptr || host_chunk_indptr == nullptr || sm_count <= 0 || layout.kv_heads <= 0)
    return cudaErrorInvalidValue;
  return dispatch_shape(layout, [&](auto shape) -> cudaError_t {
    using S = decltype(shape);
    int per_sm = 0;
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, paged_gather_kernel<S>, kThreads, 0);
    if (e != cudaSuccess) return e;
    if (per_sm <= 0) return cudaErrorInvalidConfiguration;
    plan->heads_per_cta = 1;
    plan->head_groups = 1;
    plan->ctas_per_sm = per_sm;
    return plan_chunks(host_page_indptr, num_seqs, S::page_size, layout.kv_heads, int64_t(sm_count) * per_sm, plan,
                       host_chunk_indptr);
  });
}

cudaError_t launch_paged_gather(const PagedGatherArgs& a, cudaStream_t stream) {
  if (a.num_seqs <= 0 || a.layout.kv_heads <= 0 || a.pool == nullptr || a.page_indptr == nullptr ||
      a.page_indices == nullptr || a.last_page_len == nullptr || a.chunk_indptr == nullptr || a.sink == nullptr ||
      a.plan.pages_per_chunk <= 0 || a.plan.total_chunks < a.num_seqs)
    return cudaErrorInvalidValue;
  return dispatch_shape(a.layout, [&](auto shape) -> cudaError_t {
    using S = decltype(shape);
    const int64_t grid = int64_t(a.plan.total_chunks) * a.layout.kv_heads;
    if (grid > INT32_MAX) return cudaErrorInvalidConfiguration;
    paged_gather_kernel<S><<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(a);
    return cudaGetLastError();
  });
}

}  // namespace kvplan::kernels
