// `--gpu host`: this machine as the device the plan is for. RAM from the OS, read bandwidth from the
// probe's own contiguous-read ceiling on the CPU backend (so plan, probe and calibrate speak of one
// device).
#pragma once

#include "kvplan/core/gpu.hpp"

namespace kvplan::cli {

/// Measures this machine: MemTotal (the CPU backend's runtime_total_bytes) and the median of timed
/// contiguous reads of a 512 MiB pool (several times any last-level cache). About half a second.
/// Throws RuntimeFailure when the pool cannot be allocated.
GpuSpec measure_host();

}  // namespace kvplan::cli
