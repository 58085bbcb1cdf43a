// Launchers for paged decode attention (CUDA-only header: include from .cu / gpu_probe/src/cuda only).
// Plan on the host (plan_decode), size the caller-owned split workspace from the plan, then launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "paged_kv_layout.h"

namespace kvplan::kernels {

/// Plans a decode over `num_seqs` sequences whose host page indptr is `host_page_indptr`
/// ([num_seqs + 1]) on a device with `sm_count` SMs: query heads per CTA, occupancy, and the
/// split-KV chunks (written to host_chunk_indptr, [num_seqs + 1]). cudaErrorInvalidValue for a
/// shape the kernels lack. Never allocates device memory.
cudaError_t plan_decode(const PagedKvLayout& layout, int num_q_heads, const int32_t* host_page_indptr, int num_seqs,
                        int sm_count, SplitPlan* plan, int32_t* host_chunk_indptr);

/// Floats of DecodeArgs::tmp_out the plan needs (0 when it does not split).
inline int64_t decode_tmp_out_floats(const SplitPlan& p, int num_seqs, int num_q_heads, int head_dim) {
  return p.split(num_seqs) ? int64_t(p.total_chunks) * num_q_heads * head_dim : 0;
}
/// Floats of DecodeArgs::tmp_lse the plan needs (0 when it does not split).
inline int64_t decode_tmp_lse_floats(const SplitPlan& p, int num_seqs, int num_q_heads) {
  return p.split(num_seqs) ? int64_t(p.total_chunks) * num_q_heads : 0;
}

/// Enqueues the decode kernel (and, when the plan splits, the log-sum-exp merge) on `stream`.
/// Returns the launch status; never allocates.
cudaError_t launch_decode(const DecodeArgs& args, cudaStream_t stream);

/// Launches the decode kernel of `args`' shape with 2048 threads per block, over the 1024 every CUDA
/// device allows: returns the launch's real cudaErrorInvalidConfiguration (the GPU tests' injected
/// launch fault; non-sticky, the context stays usable). Never runs the kernel.
cudaError_t launch_decode_invalid_config(const DecodeArgs& args, cudaStream_t stream);

}  // namespace kvplan::kernels
