// The probe's device boundary: a Backend owns every buffer it allocates (so it can count every
// byte in its ledger), runs KV append, paged decode attention and the two bandwidth ceilings, and
// times them. The CPU backend is always built and is the numerical reference; the CUDA backend is
// built when nvcc is found. No CUDA types appear here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvplan/core/error.hpp"
#include "paged_kv_layout.h"

namespace kvplan::probe {

using i64 = std::int64_t;

/// The cache element type: the kernels' one enum (kernels/paged_kv_layout.h), whose kv_row_bytes
/// sizes every pool, page and row on host and device.
using CacheDtype = kernels::KvDtype;
const char* cache_dtype_name(CacheDtype d);
/// Every dtype, in enum order (for name lookups and sweeps).
const std::vector<CacheDtype>& all_cache_dtypes();

/// One attention layer's paged cache: [num_blocks, 2 (K,V), page_size, kv_heads, head_dim] elements.
struct PoolSpec {
  int num_q_heads = 32;
  int num_kv_heads = 8;
  int head_dim = 128;   // 64, 128 or 256
  int page_size = 16;   // 16, 32 or 64
  CacheDtype dtype = CacheDtype::bf16;
  i64 num_blocks = 0;
  i64 row_bytes() const;   // kernels::kv_row_bytes(dtype, head_dim)
  i64 pool_bytes() const;  // num_blocks x 2 x page_size x kv_heads x row_bytes()
  kernels::PagedKvLayout layout() const;  // the pool as the kernels address it (CPU and CUDA backends)
};

/// Page tables in CSR form: sequence s owns pages indices[indptr[s] .. indptr[s+1]), and its last
/// page holds last_page_len[s] tokens (1..page_size).
struct PageTable {
  std::vector<std::int32_t> indptr;
  std::vector<std::int32_t> indices;
  std::vector<std::int32_t> last_page_len;
  int num_seqs() const { return static_cast<int>(last_page_len.size()); }
  i64 tokens(int s, int page_size) const;
};

struct DeviceInfo {
  std::string backend;  // "cpu" or "cuda"
  std::string name;
  int sm_count = 0;     // CUDA SMs, or CPU threads used
  i64 l2_bytes = 0;
  i64 memory_clock_khz = 0;
  int bus_width_bits = 0;
  i64 runtime_total_bytes = 0;  // cudaMemGetInfo total, or host MemTotal
  i64 runtime_free_bytes = 0;   // at backend creation (after the CUDA context exists)
  i64 nvml_total_bytes = 0;     // NVML, read before the context exists (0 if unavailable)
  i64 nvml_used_before_bytes = 0;
  i64 context_bytes = 0;        // what creating the context cost, when measurable
  std::string runtime_version;
};

struct LedgerEntry {
  std::string what;
  i64 bytes = 0;
};

struct TimingStats {
  double median_s = 0, mean_s = 0, min_s = 0, max_s = 0, rel_stdev = 0;
  int repeats = 0;
};

/// Statistics of repeated timings: median (the mean of the middle two for an even count), mean,
/// min, max and the relative standard deviation (population). Shared by every backend and the probe.
TimingStats summarise_timings(std::vector<double> seconds);
/// Relative standard deviation of `seconds` (0 for an empty or zero-mean sample): the stop rule of repeats.
double relative_stdev(const std::vector<double>& seconds);

/// Scales of an fp8 cache (per tensor); ignored for bf16/f16 and for q8_0/q4_0 (whose scales are in their blocks).
struct Fp8Scales {
  float k = 1.0f, v = 1.0f;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceInfo device() const = 0;
  /// Every allocation the backend holds, in order.
  virtual std::vector<LedgerEntry> ledger() const = 0;
  /// Memory free now (device or host), bytes.
  virtual i64 free_bytes() const = 0;
  /// Allocates the pool in ONE allocation (plain device memory, never managed). Throws RuntimeFailure
  /// (having released everything) when it does not fit or the shape is unsupported.
  virtual void allocate_pool(const PoolSpec& spec) = 0;
  /// Frees every buffer; the ledger becomes empty.
  virtual void release_all() = 0;
  /// Fills every element of the pool with NaN (bytes 0xff: bf16/f16/fp8 NaN, q8_0/q4_0 a NaN block scale),
  /// so slots never written prove they are never read.
  virtual void fill_nan() = 0;
  /// Writes tokens' K and V ([tokens, kv_heads, head_dim] floats) into slots (block * page_size + slot),
  /// quantising to the cache dtype (fp8: x / scale).
  virtual void append(const std::vector<float>& k, const std::vector<float>& v, const std::vector<i64>& slots,
                      const Fp8Scales& scales) = 0;
  /// Writes every token of every sequence of `pt` with synthetic_value(seed, s, t, kv, head, dim)
  /// (probe.hpp), quantised to the cache dtype: the bulk fill of large cases, done where the pool is.
  virtual void fill_synthetic(const PageTable& pt, std::uint64_t seed, const Fp8Scales& scales) = 0;
  /// Decode attention, one query token per sequence: q [seqs, q_heads, head_dim] -> out (same shape),
  /// softmax in fp32 with scale 1/sqrt(head_dim); GQA: q head h reads KV head h / (q_heads / kv_heads).
  virtual void decode(const std::vector<float>& q, const PageTable& pt, const Fp8Scales& scales, std::vector<float>& out) = 0;
  /// Times repeated decode calls on the inputs of the last decode() (median of repeats until the
  /// relative standard deviation is below 2% or max_seconds pass).
  virtual TimingStats time_decode(double max_seconds) = 0;
  /// Ceilings: a contiguous read of the whole pool, and the paged gather of `pt`'s pages without the math.
  virtual TimingStats time_contiguous_read(double max_seconds) = 0;
  virtual TimingStats time_paged_gather(const PageTable& pt, double max_seconds) = 0;

  /// Faults the GPU tests inject to check the failure paths (tests/gpu): the backend's NEXT device
  /// allocation asks the driver for twice the device's memory, past the free-memory check (a real
  /// cudaErrorMemoryAllocation); its NEXT decode launches with a block of 2048 threads (a real
  /// cudaErrorInvalidConfiguration). Either must release everything and throw RuntimeFailure.
  enum class Fault { allocation, launch };
  /// Arms one fault; RuntimeFailure on a backend that has no device to fail (the CPU backend).
  virtual void inject_fault(Fault) { throw RuntimeFailure("probe: fault injection needs a GPU backend, not " + device().backend); }
};

/// The value token t of sequence s holds in K (kv = 0) or V (kv = 1) at (head, dim): splitmix64 of
/// the coordinates mapped to [-2, 2). Host and device compute the same bits.
inline float synthetic_value(std::uint64_t seed, std::int64_t s, std::int64_t t, int kv, int head, int dim) {
  std::uint64_t z = seed ^ (static_cast<std::uint64_t>(s) * 0x9E3779B97F4A7C15ULL) ^ (static_cast<std::uint64_t>(t) * 0xC2B2AE3D27D4EB4FULL) ^
                    (static_cast<std::uint64_t>((kv << 20) | (head << 10) | dim) * 0x165667B19E3779F9ULL);
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (4.0f / 16777216.0f) - 2.0f;
}

/// Backends this build has ("cpu" always; "cuda" when built with CUDA and a device is present).
std::vector<std::string> available_backends();
/// Creates a backend by name; throws RuntimeFailure("no CUDA device ...") when it cannot.
std::unique_ptr<Backend> make_backend(const std::string& name, int threads = 0);

/// Shapes the kernels support: head_dim 64/128/256, page_size 16/32/64, q_heads a multiple of kv_heads
/// (every dtype on the CPU backend; the CUDA backend adds its own dtype check).
/// Throws InputError naming what is supported.
void check_supported(const PoolSpec& spec);

}  // namespace kvplan::probe
