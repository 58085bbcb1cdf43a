// Launchers for the two bandwidth-ceiling kernels (CUDA-only header: include from .cu /
// gpu_probe/src/cuda only): a contiguous streaming read, and the decode's paged gather without the math.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "paged_kv_layout.h"

namespace kvplan::kernels {

/// CTAs of the contiguous read that fill `sm_count` SMs once (occupancy x SMs).
cudaError_t contiguous_read_ctas(int sm_count, int32_t* ctas);

/// Reads args.bytes (a multiple of 16) once with 16-byte loads, XOR-reducing into *args.sink.
cudaError_t launch_contiguous_read(const ContiguousReadArgs& args, cudaStream_t stream);

/// Plans the paged gather like plan_decode (one CTA per chunk and KV head, one wave): fills
/// plan and host_chunk_indptr ([num_seqs + 1]) from the host page indptr.
cudaError_t plan_paged_gather(const PagedKvLayout& layout, const int32_t* host_page_indptr, int num_seqs, int sm_count,
                              SplitPlan* plan, int32_t* host_chunk_indptr);

/// Reads every K and V row of every sequence's tokens through the page table, XOR-reducing into
/// *args.sink. cudaErrorInvalidValue for a shape the kernels lack. Never allocates.
cudaError_t launch_paged_gather(const PagedGatherArgs& args, cudaStream_t stream);

}  // namespace kvplan::kernels
