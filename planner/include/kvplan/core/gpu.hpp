// A GPU as the planner sees it: exact memory in bytes (with which tool reported it), bandwidth and
// dense tensor throughput, each with its source. Loaded from profiles/gpus/<id>.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/checked.hpp"

namespace kvplan {

struct GpuSpec {
  std::string id;
  std::string name;
  std::vector<std::string> aliases;
  std::string vendor;
  std::string architecture;
  std::string compute_capability;
  std::string memory_type;
  i64 memory_bytes = 0;            // what the planner budgets from
  std::string memory_bytes_kind;   // cuda_reported | nvml_reported | datasheet | derived
  std::string memory_source;
  std::optional<i64> cuda_total_bytes;
  std::optional<i64> nvml_total_bytes;
  double datasheet_memory_gb = 0;
  std::optional<bool> ecc_default_on;
  i64 memory_bandwidth_bytes_per_s = 0;
  std::optional<double> bf16_dense_tflops;
  std::optional<double> fp16_dense_tflops;
  std::optional<double> fp8_dense_tflops;
  std::string compute_source;
  std::optional<i64> sm_count;
  std::optional<i64> l2_bytes;
  std::string notes;
};

}  // namespace kvplan
