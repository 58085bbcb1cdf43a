// Paged KV-cache layout and the kernels' argument structs, shared by host code and CUDA kernels
// (no CUDA types here) and by the CPU backend. One layer's pool is [num_blocks, 2 (K,V), page_size,
// kv_heads] rows of kv_row_bytes(dtype, head_dim) bytes; a sequence's pages are listed in CSR form:
// pages of sequence s are page_indices[page_indptr[s] .. page_indptr[s+1]), its last page holding
// last_page_len[s] tokens.
// The host builds these structs and passes them by value; every pointer is caller-owned device memory.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define KVPLAN_HD __host__ __device__
#else
#define KVPLAN_HD
#endif

namespace kvplan::kernels {

/// The ONE cache-dtype enum (the probe's CacheDtype is this type). fp8 is OCP e4m3 (FN) or e5m2 with
/// one scale per tensor (K and V). q8_0 and q4_0 are llama.cpp's blocks of 32 elements
/// (ggml/src/ggml-common.h): q8_0 = f16 scale d + 32 int8 q, x = d * q (34 B); q4_0 = f16 d + 16 B
/// of nibbles, element j < 16 in the low nibble of byte j, element j + 16 in its high nibble,
/// x = d * (nibble - 8) (18 B). A K or V row of head_dim elements is head_dim / 32 such blocks.
enum class KvDtype : int32_t { bf16 = 0, f16 = 1, fp8_e4m3 = 2, fp8_e5m2 = 3, q8_0 = 4, q4_0 = 5 };

/// Elements per storage block: 32 for the llama.cpp block types, 1 for plain element types.
KVPLAN_HD constexpr int32_t kv_block_elems(KvDtype d) { return d == KvDtype::q8_0 || d == KvDtype::q4_0 ? 32 : 1; }

/// Bytes per storage block: bf16/f16 2, fp8 1, q8_0 2 + 32 = 34, q4_0 2 + 16 = 18.
KVPLAN_HD constexpr int32_t kv_block_bytes(KvDtype d) {
  return d == KvDtype::bf16 || d == KvDtype::f16 ? 2 : d == KvDtype::q8_0 ? 34 : d == KvDtype::q4_0 ? 18 : 1;
}

/// The ONE bytes-per-row function: bytes of one token's K (or V) row of one KV head,
/// head_dim / block_elems x block_bytes (head_dim must be a multiple of 32 for the block types).
/// Pool, page and offset arithmetic on host and device all go through it.
KVPLAN_HD constexpr int64_t kv_row_bytes(KvDtype d, int32_t head_dim) {
  return int64_t(head_dim) / kv_block_elems(d) * kv_block_bytes(d);
}

/// Bytes of one element for the plain element types (bf16, f16, fp8); 0 for the block types,
/// which have no per-element size. kv_row_bytes(d, n) == n * kv_dtype_bytes(d) when it is not 0.
KVPLAN_HD constexpr int32_t kv_dtype_bytes(KvDtype d) { return kv_block_elems(d) == 1 ? kv_block_bytes(d) : 0; }

struct PagedKvLayout {
  int64_t num_blocks = 0;
  int32_t page_size = 16;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int32_t elem_bytes = 2;                // CUDA launchers: must equal kv_dtype_bytes(dtype), and they check
  KvDtype dtype = KvDtype::bf16;

  /// Elements of one page of K (or V): page_size * kv_heads * head_dim.
  KVPLAN_HD int64_t page_elems() const { return int64_t(page_size) * kv_heads * head_dim; }
  /// Element offset of (block, kv = 0 for K / 1 for V, slot, head, dim); plain element types only.
  KVPLAN_HD int64_t offset(int64_t block, int kv, int32_t slot, int32_t head, int32_t dim) const {
    return ((block * 2 + kv) * page_size + slot) * int64_t(kv_heads) * head_dim + int64_t(head) * head_dim + dim;
  }
  /// Bytes of one K (or V) row: kv_row_bytes(dtype, head_dim).
  KVPLAN_HD int64_t row_bytes() const { return kv_row_bytes(dtype, head_dim); }
  /// Bytes of one block (page): K and V of page_size tokens x kv_heads rows.
  KVPLAN_HD int64_t block_bytes() const { return 2 * int64_t(page_size) * kv_heads * row_bytes(); }
  /// Byte offset of the row (block, kv, slot, head); every dtype.
  KVPLAN_HD int64_t row_offset_bytes(int64_t block, int kv, int32_t slot, int32_t head) const {
    return (((block * 2 + kv) * page_size + slot) * int64_t(kv_heads) + head) * row_bytes();
  }
};

/// Arguments of the append kernel: token t's K and V rows go to slot slot_mapping[t]
/// (= block * page_size + slot; negative = padding, skipped), converted to layout.dtype
/// (bf16/f16: round to nearest even; fp8: x / scale, round to nearest even, saturated to +-448).
struct KvAppendArgs {
  PagedKvLayout layout;
  const float* k_new = nullptr;           // [num_tokens, kv_heads, head_dim]
  const float* v_new = nullptr;           // [num_tokens, kv_heads, head_dim]
  const int64_t* slot_mapping = nullptr;  // [num_tokens]
  int64_t num_tokens = 0;
  void* pool = nullptr;                   // the layer's pool
  float k_scale = 1.0f, v_scale = 1.0f;   // fp8 only
};

/// Arguments of the synthetic fill: every token t of every sequence s of the page table gets, at
/// (kv, head, dim), synthetic_value(seed, s, t, kv, head, dim) (kvplan/probe/backend.hpp; the device
/// copy is in kernel_common.cuh), converted like the append kernel. One CTA per page.
struct FillSyntheticArgs {
  PagedKvLayout layout;
  int32_t num_seqs = 0;
  const int32_t* page_indptr = nullptr;    // [num_seqs + 1]
  const int32_t* page_indices = nullptr;   // [page_indptr[num_seqs]]
  const int32_t* last_page_len = nullptr;  // [num_seqs]
  int32_t total_pages = 0;                 // page_indptr[num_seqs] (the grid: one CTA per page)
  uint64_t seed = 0;
  void* pool = nullptr;
  float k_scale = 1.0f, v_scale = 1.0f;    // fp8 only
};

/// How decode work is cut into CTAs (host-computed by plan_decode / plan_paged_gather).
/// Sequence s is cut into chunks of pages_per_chunk pages; its chunks are
/// [chunk_indptr[s], chunk_indptr[s+1]) (at least one, even for an empty sequence).
struct SplitPlan {
  int32_t pages_per_chunk = 0;
  int32_t total_chunks = 0;     // chunk_indptr[num_seqs]
  int32_t heads_per_cta = 1;    // query heads one decode CTA serves (all of a KV head's group when they fit)
  int32_t head_groups = 1;      // CTAs per KV head per chunk (1 unless the GQA group is wider than a CTA)
  int32_t ctas_per_sm = 0;      // occupancy the plan assumed
  /// True when some sequence has more than one chunk: the decode needs the workspace and the merge.
  KVPLAN_HD bool split(int32_t num_seqs) const { return total_chunks > num_seqs; }
};

/// Decode attention: one query token per sequence, softmax(q K^T * sm_scale) V in fp32.
struct DecodeArgs {
  PagedKvLayout layout;
  int32_t num_q_heads = 0;      // a multiple of layout.kv_heads; q head h reads KV head h / group
  int32_t num_seqs = 0;
  const void* pool = nullptr;
  const float* q = nullptr;     // [num_seqs, num_q_heads, head_dim]
  float* out = nullptr;         // [num_seqs, num_q_heads, head_dim]
  const int32_t* page_indptr = nullptr;    // [num_seqs + 1]
  const int32_t* page_indices = nullptr;   // [page_indptr[num_seqs]]
  const int32_t* last_page_len = nullptr;  // [num_seqs], 1..page_size
  float sm_scale = 0.0f;        // usually 1 / sqrt(head_dim)
  float k_scale = 1.0f, v_scale = 1.0f;    // fp8 dequantisation scales (ignored for bf16/f16)
  SplitPlan plan;
  const int32_t* chunk_indptr = nullptr;   // [num_seqs + 1], device copy of the plan's chunks
  float* tmp_out = nullptr;     // workspace when plan.split(): [total_chunks, num_q_heads, head_dim]
  float* tmp_lse = nullptr;     // workspace when plan.split(): [total_chunks, num_q_heads] (log2 domain)
};

/// The paged gather without the math: reads every K and V row of every token of every sequence
/// (the same pages, rows and CTA split as the decode), XOR-reducing them into *sink.
struct PagedGatherArgs {
  PagedKvLayout layout;
  int32_t num_seqs = 0;
  const void* pool = nullptr;
  const int32_t* page_indptr = nullptr;
  const int32_t* page_indices = nullptr;
  const int32_t* last_page_len = nullptr;
  SplitPlan plan;
  const int32_t* chunk_indptr = nullptr;
  uint32_t* sink = nullptr;     // one word, XOR-accumulated
};

/// A contiguous streaming read of `bytes` (a multiple of 16) at `data`, XOR-reduced into *sink.
struct ContiguousReadArgs {
  const void* data = nullptr;
  int64_t bytes = 0;
  uint32_t* sink = nullptr;
  int32_t num_ctas = 0;         // grid size; contiguous_read_ctas() gives one full wave
};

}  // namespace kvplan::kernels
