// `--gpu host` (host_device.hpp).
#include "host_device.hpp"

#include <string>

#include "kvplan/probe/backend.hpp"

namespace kvplan::cli {

GpuSpec measure_host() {
  auto backend = probe::make_backend("cpu");
  probe::PoolSpec pool;  // bf16, 8 KV heads x 128: 4 KiB per token and page row pair
  pool.num_blocks = (512LL << 20) / (2LL * pool.page_size * pool.num_kv_heads * 256);
  backend->allocate_pool(pool);
  backend->fill_nan();  // touch every page before timing (first-touch placement)
  const probe::TimingStats t = backend->time_contiguous_read(0.5);
  const probe::DeviceInfo dev = backend->device();
  backend->release_all();
  GpuSpec g;
  g.id = "host";
  g.name = "this machine: " + dev.name;
  g.vendor = "cpu";
  g.architecture = "cpu";
  g.device_class = "cpu";
  g.unified_memory = true;
  g.memory_type = "host RAM";
  g.memory_bytes = dev.runtime_total_bytes;
  g.memory_bytes_kind = "host_ram";
  g.memory_source = "measured at run time: MemTotal of this machine";
  g.memory_bandwidth_bytes_per_s = t.median_s > 0 ? static_cast<i64>(static_cast<double>(pool.pool_bytes()) / t.median_s) : 0;
  g.compute_source = "not measured (no TFLOP/s: TTFT unknown)";
  g.sm_count = dev.sm_count;
  g.ecc_mode = "none";
  g.interconnect = "none";
  g.interconnect_generation = "none (one host)";
  g.interconnect_source = "one host";
  g.notes = "measured at run time by the probe's CPU backend: contiguous read of " + std::to_string(pool.pool_bytes() >> 20) +
            " MiB, median of " + std::to_string(t.repeats) + " repeats, " + std::to_string(dev.sm_count) + " threads";
  return g;
}

}  // namespace kvplan::cli
