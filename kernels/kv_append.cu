// KV append: writes new tokens' K and V rows into their pages (16-bit elements: f16/bf16 copy).
// One CTA per token, threads stride over kv_heads * head_dim. fp8 quantisation arrives with the probe.
#include <cuda_runtime.h>

#include "kv_append.cuh"

namespace kvplan::kernels {

namespace {

__global__ void kv_append_16bit(KvAppendArgs a) {
  const int64_t t = blockIdx.x;
  if (t >= a.num_tokens) return;
  const int64_t slot_id = a.slot_mapping[t];
  if (slot_id < 0) return;  // padding token
  const int64_t block = slot_id / a.layout.page_size;
  const int32_t slot = static_cast<int32_t>(slot_id % a.layout.page_size);
  const int32_t row = a.layout.kv_heads * a.layout.head_dim;
  const auto* k = static_cast<const uint16_t*>(a.k_new) + t * row;
  const auto* v = static_cast<const uint16_t*>(a.v_new) + t * row;
  auto* pool = static_cast<uint16_t*>(a.pool);
  for (int32_t i = threadIdx.x; i < row; i += blockDim.x) {
    const int32_t head = i / a.layout.head_dim, dim = i % a.layout.head_dim;
    pool[a.layout.offset(block, 0, slot, head, dim)] = k[i];
    pool[a.layout.offset(block, 1, slot, head, dim)] = v[i];
  }
}

}  // namespace

cudaError_t launch_kv_append(const KvAppendArgs& args, cudaStream_t stream) {
  if (args.layout.elem_bytes != 2) return cudaErrorInvalidValue;
  if (args.num_tokens == 0) return cudaSuccess;
  if (args.num_tokens > 0x7fffffff) return cudaErrorInvalidValue;
  kv_append_16bit<<<static_cast<unsigned>(args.num_tokens), 128, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace kvplan::kernels
