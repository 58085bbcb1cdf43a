// Launcher for the KV append kernel (CUDA-only header: include from .cu / gpu_probe/src/cuda only).
#pragma once

#include <cuda_runtime.h>

#include "paged_kv_layout.h"

namespace kvplan::kernels {

/// Appends args.num_tokens tokens; returns the launch status. Never allocates.
cudaError_t launch_kv_append(const KvAppendArgs& args, cudaStream_t stream);

}  // namespace kvplan::kernels
