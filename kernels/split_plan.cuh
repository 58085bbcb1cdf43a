// Split-KV planning (host only): cut each sequence into chunks of whole pages so that the decode (or
// the paged gather) fills one wave of CTAs, FlashInfer's rule: no split when sequences x KV heads
// already fill the GPU, otherwise the smallest chunk (in pages, at least kMinChunkTokens tokens)
// whose chunk count still fits in one wave. CUDA-only header.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "paged_kv_layout.h"

namespace kvplan::kernels {

/// Below this many tokens per chunk the merge costs more than the extra parallelism gains.
inline constexpr int64_t kMinChunkTokens = 128;

/// Fills plan->pages_per_chunk, plan->total_chunks and chunk_indptr[0..num_seqs] (host memory)
/// from the host page indptr. `ctas_per_chunk` CTAs run per chunk, `wave_ctas` run at once.
inline cudaError_t plan_chunks(const int32_t* page_indptr, int num_seqs, int page_size, int64_t ctas_per_chunk,
                               int64_t wave_ctas, SplitPlan* plan, int32_t* chunk_indptr) {
  if (num_seqs <= 0 || page_size <= 0 || ctas_per_chunk <= 0 || plan == nullptr || chunk_indptr == nullptr)
    return cudaErrorInvalidValue;
  int64_t max_pages = 0;
  for (int s = 0; s < num_seqs; ++s) max_pages = std::max<int64_t>(max_pages, int64_t(page_indptr[s + 1]) - page_indptr[s]);
  auto chunks_for = [&](int64_t ppc) {
    int64_t n = 0;
    for (int s = 0; s < num_seqs; ++s) {
      const int64_t pages = int64_t(page_indptr[s + 1]) - page_indptr[s];
      n += std::max<int64_t>(1, (pages + ppc - 1) / ppc);
    }
    return n;
  };
  const int64_t min_ppc = std::max<int64_t>(1, (kMinChunkTokens + page_size - 1) / page_size);
  int64_t ppc = std::max<int64_t>(1, max_pages);
  if (int64_t(num_seqs) * ctas_per_chunk < wave_ctas && max_pages > min_ppc) {
    int64_t lo = min_ppc, hi = max_pages;  // chunks_for(max_pages) == num_seqs fits in the wave
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (chunks_for(mid) * ctas_per_chunk <= wave_ctas) hi = mid;
      else lo = mid + 1;
    }
    ppc = lo;
  }
  if (ppc > INT32_MAX) return cudaErrorInvalidValue;
  chunk_indptr[0] = 0;
  int64_t total = 0;
  for (int s = 0; s < num_seqs; ++s) {
    const int64_t pages = int64_t(page_indptr[s + 1]) - page_indptr[s];
    total += std::max<int64_t>(1, (pages + ppc - 1) / ppc);
    if (total > INT32_MAX) return cudaErrorInvalidConfiguration;
    chunk_indptr[s + 1] = static_cast<int32_t>(total);
  }
  if (total * ctas_per_chunk > INT32_MAX) return cudaErrorInvalidConfiguration;  // grid.x limit
  plan->pages_per_chunk = static_cast<int32_t>(ppc);
  plan->total_chunks = static_cast<int32_t>(total);
  return cudaSuccess;
}

}  // namespace kvplan::kernels
