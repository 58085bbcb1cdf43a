// Factory for the CPU backend (always built).
#pragma once

#include <memory>

#include "kvplan/probe/backend.hpp"

namespace kvplan::probe {

/// The host backend with `threads` threads (0: all hardware threads).
std::unique_ptr<Backend> make_cpu_backend(int threads);

}  // namespace kvplan::probe
