// A GPU (or Apple chip, unified-memory box or CPU host) as the planner sees it: exact memory in bytes (with which
// tool reported it), bandwidth, dense tensor throughput and its links, each with its source.
// Loaded from profiles/gpus/<id>.json (field reference: profiles/README-gpus.md).
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
  std::string memory_bytes_kind;   // cuda_reported | nvml_reported | datasheet | derived | metal_working_set | host_ram
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
  bool tflops_given = false;  // bf16 / fp16 rates set by the user (--gpu-tflops): the performance model keeps them as given
  std::optional<i64> sm_count;          // SMs (NVIDIA), compute units (AMD), GPU cores (Apple)
  std::optional<i64> boost_clock_mhz;   // the vendor's boost (or maximum graphics) clock; with sm_count, the
                                        // dequantising kernels' ALU rate (the perf model's `dequant` term)
  std::optional<i64> l2_bytes;
  std::optional<i64> dies;              // dies the GPU's cores and memory controllers span, where the model uses it
                                        // (Apple Ultra: two Max dies joined by UltraFusion); null: not stated
  std::string notes;

  // What kind of device this is and how its memory is shared.
  std::string device_class;       // datacenter | workstation | consumer | embedded | apple | cpu | unified
  bool unified_memory = false;    // memory shared with a CPU and the OS (Apple, DGX Spark, Jetson, MI300A, CPU hosts)
  std::string ecc_mode;           // on | off | none: the ECC state memory_bytes describes (GDDR6 ECC on loses 1/16)
  std::optional<double> int8_dense_tops;   // dense INT8 tensor TOPS
  std::optional<double> fp4_dense_tflops;  // dense FP4 tensor TFLOP/s (Blackwell, CDNA4)

  // Links: between devices of one node (the tensor-parallel all-reduce) and to the host.
  std::string interconnect;              // nvlink | pcie | xgmi | ethernet | none
  std::string interconnect_generation;   // e.g. "NVLink 4 (18 links via NVSwitch; 900 GB/s bidirectional)"
  double interconnect_bytes_per_s = 0;   // per device, one direction, nominal link rate; 0 when interconnect is none
  double pcie_bytes_per_s = 0;           // host link, one direction, raw (PCIe 5.0 x16 64e9; C2C 450e9; unified 0)
  // an NVLink bridge that joins two PCIe cards (H100 NVL, A100 PCIe, RTX A6000): one direction, nominal; 0 without one.
  // nvlink_bridge_default: the product ships bridged (H100 NVL); nvlink_bridged: this deployment's pairs are
  // (--nvlink-bridge, else the default): a TP 2 all-reduce then runs over the bridge
  double nvlink_bridge_bytes_per_s = 0;
  bool nvlink_bridge_default = false;
  bool nvlink_bridged = false;
  std::string interconnect_source;
};

/// An NVIDIA compute capability 10.x (B200, B300, GB200, GB300: SM100 / SM103), where the engines pick their own
/// attention backends and page sizes
/// What prose calls the device whose memory a plan budgets: "host" for a CPU host (`--gpu cpu`: RAM is the memory,
/// no GPU in the plan), else "GPU" (an Apple chip's and a unified-memory box's GPU included).
inline const char* device_noun(const GpuSpec& g) { return g.device_class == "cpu" ? "host" : "GPU"; }
inline bool is_sm10x(const std::string& compute_capability) { return compute_capability.rfind("10.", 0) == 0; }

}  // namespace kvplan
