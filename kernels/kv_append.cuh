// Launchers for the KV append and synthetic fill kernels (CUDA-only header: include from .cu / gpu_probe/src/cuda only).
#pragma once

#include <cuda_runtime.h>

#include "paged_kv_layout.h"

namespace kvplan::kernels {

/// Writes args.num_tokens tokens' K and V rows (device floats) into their slots, converted to
/// args.layout.dtype; returns the launch status (cudaErrorInvalidValue for a shape the kernels
/// lack). Never allocates.
cudaError_t launch_kv_append(const KvAppendArgs& args, cudaStream_t stream);

/// Fills every token of every sequence of args' page table with synthetic_value (the bulk fill of
/// large probe cases, so no host data crosses the bus). Never allocates.
cudaError_t launch_fill_synthetic(const FillSyntheticArgs& args, cudaStream_t stream);

}  // namespace kvplan::kernels
