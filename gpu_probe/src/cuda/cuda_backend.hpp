// Factory for the CUDA backend (declared without CUDA types; defined in cuda_backend.cu).
#pragma once

#include <memory>

#include "kvplan/probe/backend.hpp"

namespace kvplan::probe {

/// True when the CUDA runtime finds at least one device.
bool cuda_device_present();
/// The CUDA backend on device 0 (reads NVML before creating the context). Throws RuntimeFailure.
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace kvplan::probe
