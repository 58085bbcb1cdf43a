// The backend registry: the one file that asks whether CUDA was built (KVPLAN_HAS_CUDA).
#include "cpu/cpu_backend.hpp"
#include "kvplan/core/error.hpp"
#if KVPLAN_HAS_CUDA
#include "cuda/cuda_backend.hpp"
#endif

namespace kvplan::probe {

std::vector<std::string> available_backends() {
  std::vector<std::string> v = {"cpu"};
#if KVPLAN_HAS_CUDA
  if (cuda_device_present()) v.push_back("cuda");
#endif
  return v;
}

std::unique_ptr<Backend> make_backend(const std::string& name, int threads) {
  if (name == "cpu") return make_cpu_backend(threads);
  if (name == "cuda") {
#if KVPLAN_HAS_CUDA
    if (!cuda_device_present()) throw RuntimeFailure("no CUDA device found; pass --backend cpu to probe the host instead");
    return make_cuda_backend();
#else
    throw RuntimeFailure("this kvplan was built without CUDA (nvcc not found at build time); pass --backend cpu, or rebuild with -DKVPLAN_CUDA=ON");
#endif
  }
  throw InputError("--backend", "unknown backend '" + name + "'", "use cuda or cpu");
}

}  // namespace kvplan::probe
