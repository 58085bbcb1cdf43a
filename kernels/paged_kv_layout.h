// Paged KV-cache layout shared by host code and CUDA kernels (no CUDA types here).
// One layer's pool is [num_blocks, 2 (K,V), page_size, kv_heads, head_dim] elements; a sequence's
// pages are listed in CSR form: pages of sequence s are page_indices[page_indptr[s] .. page_indptr[s+1]).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KVPLAN_HD __host__ __device__
#else
#define KVPLAN_HD
#endif

namespace kvplan::kernels {

struct PagedKvLayout {
  int64_t num_blocks = 0;
  int32_t page_size = 16;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int32_t elem_bytes = 2;

  /// Elements of one page of K (or V): page_size * kv_heads * head_dim.
  KVPLAN_HD int64_t page_elems() const { return int64_t(page_size) * kv_heads * head_dim; }
  /// Element offset of (block, kv = 0 for K / 1 for V, slot, head, dim).
  KVPLAN_HD int64_t offset(int64_t block, int kv, int32_t slot, int32_t head, int32_t dim) const {
    return ((block * 2 + kv) * page_size + slot) * int64_t(kv_heads) * head_dim + int64_t(head) * head_dim + dim;
  }
};

/// Arguments of the append kernel, built on the host and passed by value.
struct KvAppendArgs {
  PagedKvLayout layout;
  const void* k_new = nullptr;          // [num_tokens, kv_heads, head_dim]
  const void* v_new = nullptr;          // [num_tokens, kv_heads, head_dim]
  const int64_t* slot_mapping = nullptr;  // per token: block * page_size + slot
  int64_t num_tokens = 0;
  void* pool = nullptr;                 // the layer's pool
};

}  // namespace kvplan::kernels
