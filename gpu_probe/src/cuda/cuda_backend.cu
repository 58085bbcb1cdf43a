// CUDA backend: the probe's Backend on device 0. Reads NVML (dlopen, no link dependency) before the
// CUDA context exists so the context's cost can be measured, then owns every device buffer through
// a ledger (plain cudaMalloc, never more than cudaMemGetInfo reports free, the pool in one
// allocation) that frees everything on release_all, on any CUDA error and on destruction. Timing:
// CUDA events around the launch, a 2 x L2 read between repeats so every repeat starts cold, median
// of repeats until the relative stdev is under 2% or the time cap passes.
#include "cuda_backend.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bandwidth.cuh"
#include "decode_attention.cuh"
#include "kv_append.cuh"
#include "kvplan/core/error.hpp"

namespace kvplan::probe {

namespace {

namespace kk = kvplan::kernels;
using clk = std::chrono::steady_clock;

constexpr int kDevice = 0;
constexpr i64 kAlign = 256;                         // sub-buffer alignment inside one allocation
constexpr i64 kAppendStagingBytes = 64LL << 20;     // device staging for append() batches
constexpr int kMinRepeats = 10;
constexpr int kMaxRepeats = 100000;
constexpr double kTargetRelStdev = 0.02;

// ---- NVML, loaded at run time ----

struct NvmlDeviceSt;
using NvmlDevice = NvmlDeviceSt*;
struct NvmlMemory {  // nvmlMemory_t (v1): total, free, used
  unsigned long long total, free, used;
};

struct NvmlReading {
  bool ok = false;
  i64 total = 0, used = 0;
};

/// Memory of the device with PCI bus id `bus` (or NVML index 0 when null or not found); ok=false
/// when libnvidia-ml.so.1 or a symbol is missing or a call fails. Creates no CUDA context.
NvmlReading read_nvml(const char* bus) {
  NvmlReading r;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return r;
  using InitFn = int (*)();
  using ShutdownFn = int (*)();
  using ByIndexFn = int (*)(unsigned, NvmlDevice*);
  using ByPciFn = int (*)(const char*, NvmlDevice*);
  using MemFn = int (*)(NvmlDevice, NvmlMemory*);
  const auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  const auto shutdown = reinterpret_cast<ShutdownFn>(dlsym(lib, "nvmlShutdown"));
  const auto by_index = reinterpret_cast<ByIndexFn>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  const auto by_pci = reinterpret_cast<ByPciFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  const auto mem = reinterpret_cast<MemFn>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
  if (init != nullptr && by_index != nullptr && mem != nullptr && init() == 0) {
    NvmlDevice dev = nullptr;
    bool found = bus != nullptr && by_pci != nullptr && by_pci(bus, &dev) == 0;
    if (!found) found = by_index(0, &dev) == 0;
    NvmlMemory m{};
    if (found && mem(dev, &m) == 0) {
      r.ok = true;
      r.total = static_cast<i64>(m.total);
      r.used = static_cast<i64>(m.used);
    }
    if (shutdown != nullptr) shutdown();
  }
  dlclose(lib);
  return r;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

i64 round_up(i64 x, i64 m) { return (x + m - 1) / m * m; }

/// Offsets of sub-buffers packed into one allocation, each aligned to kAlign.
struct Packing {
  i64 size = 0;
  i64 take(i64 bytes) {
    const i64 at = size;
    size = round_up(at + std::max<i64>(bytes, 1), kAlign);
    return at;
  }
};

template <class T>
T* at(void* base, i64 offset) {
  return reinterpret_cast<T*>(static_cast<unsigned char*>(base) + offset);
}

/// Every device allocation the backend holds, in allocation order; frees them all when destroyed.
class Ledger {
 public:
  Ledger() = default;
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;
  ~Ledger() { release_all(); }

  void reserve_one() { entries_.reserve(entries_.size() + 1); }  // so add() cannot throw after a cudaMalloc
  void add(const char* what, i64 bytes, void* p) { entries_.push_back({what, bytes, p}); }
  /// Frees one allocation; a pointer the ledger no longer holds is ignored.
  void release(void* p) noexcept {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->ptr == p) {
        cudaFree(p);
        entries_.erase(it);
        return;
      }
  }
  void release_all() noexcept {
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) cudaFree(it->ptr);
    entries_.clear();
  }
  std::vector<LedgerEntry> entries() const {
    std::vector<LedgerEntry> v;
    for (const auto& e : entries_) v.push_back({e.what, e.bytes});
    return v;
  }

 private:
  struct Entry {
    std::string what;
    i64 bytes;
    void* ptr;
  };
  std::vector<Entry> entries_;
};

/// Frees one ledger allocation when it goes out of scope (a transient buffer).
class ScopedRelease {
 public:
  ScopedRelease(Ledger& l, void* p) : l_(l), p_(p) {}
  ScopedRelease(const ScopedRelease&) = delete;
  ScopedRelease& operator=(const ScopedRelease&) = delete;
  ~ScopedRelease() { l_.release(p_); }

 private:
  Ledger& l_;
  void* p_;
};

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() = default;
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  ~EventPair() {
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  }
};

// The cache types the CUDA kernels are compiled for (kernel_common.cuh KVPLAN_KV_SHAPES_DT); the
// others (fp8 e5m2, q8_0, q4_0) run on the CPU backend only.
void check_cuda_dtype(CacheDtype d) {
  if (d == CacheDtype::bf16 || d == CacheDtype::f16 || d == CacheDtype::fp8_e4m3) return;
  throw InputError("probe shape", std::string("the CUDA kernels do not support a ") + cache_dtype_name(d) + " cache",
                   "supported on CUDA: bf16, f16, fp8_e4m3; pass --backend cpu for the others");
}

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
      cudaGetLastError();
      throw RuntimeFailure(std::string("cuda: no CUDA device: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "the runtime found none"));
    }
    // NVML first: the runtime calls below that create the context would otherwise be counted in "before".
    char bus[32] = {};
    const bool have_bus = cudaDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), kDevice) == cudaSuccess;
    if (!have_bus) cudaGetLastError();
    const NvmlReading before = read_nvml(have_bus ? bus : nullptr);
    check(cudaSetDevice(kDevice), "cudaSetDevice");
    check(cudaFree(nullptr), "creating the CUDA context");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const NvmlReading after = read_nvml(have_bus ? bus : nullptr);

    size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, kDevice), "cudaGetDeviceProperties");
    int sms = 0, l2 = 0, mem_khz = 0, bus_bits = 0, rt = 0, drv = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, kDevice), "cudaDeviceGetAttribute(SMs)");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, kDevice), "cudaDeviceGetAttribute(L2)");
    check(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, kDevice), "cudaDeviceGetAttribute(memory clock)");
    check(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, kDevice), "cudaDeviceGetAttribute(bus width)");
    check(cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion");
    check(cudaDriverGetVersion(&drv), "cudaDriverGetVersion");

    info_.backend = "cuda";
    info_.name = p.name;
    info_.sm_count = sms;
    info_.l2_bytes = l2;
    info_.memory_clock_khz = mem_khz;
    info_.bus_width_bits = bus_bits;
    info_.runtime_total_bytes = static_cast<i64>(total);
    info_.runtime_free_bytes = static_cast<i64>(free);
    if (before.ok) {
      info_.nvml_total_bytes = before.total;
      info_.nvml_used_before_bytes = before.used;
      if (after.ok && after.used >= before.used) info_.context_bytes = after.used - before.used;
    }
    info_.runtime_version = "CUDA runtime " + version_string(rt) + ", driver " + version_string(drv) + ", sm_" +
                            std::to_string(p.major) + std::to_string(p.minor);
  }

  ~CudaBackend() override { release_everything(); }

  DeviceInfo device() const override { return info_; }
  std::vector<LedgerEntry> ledger() const override { return ledger_.entries(); }

  i64 free_bytes() const override {
    size_t free = 0, total = 0;
    const cudaError_t e = cudaMemGetInfo(&free, &total);
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw RuntimeFailure(std::string("cuda: cudaMemGetInfo: ") + cudaGetErrorString(e));
    }
    return static_cast<i64>(free);
  }

  void allocate_pool(const PoolSpec& spec) override {
    check_supported(spec);
    check_cuda_dtype(spec.dtype);
    release_everything();
    if (spec.num_blocks < 1) throw InputError("probe pool", "num_blocks must be at least 1, got " + std::to_string(spec.num_blocks));
    if (spec.num_blocks > INT32_MAX)
      throw RuntimeFailure("cuda: a pool of " + std::to_string(spec.num_blocks) + " blocks: page ids are 32-bit, at most " +
                           std::to_string(INT32_MAX) + " blocks");
    const i64 bytes = spec.pool_bytes();
    pool_ = alloc("kv_pool", bytes);
    spec_ = spec;
    layout_ = spec.layout();
  }

  void release_all() override { release_everything(); }

  void fill_nan() override {
    need_pool();
    const int byte = spec_.dtype == CacheDtype::fp8_e4m3 ? 0x7f : 0xff;  // e4m3 0x7f; bf16/f16 0xffff
    check(cudaMemsetAsync(pool_, byte, static_cast<size_t>(spec_.pool_bytes()), nullptr), "filling the pool with NaN");
    check(cudaDeviceSynchronize(), "filling the pool with NaN");
  }

  void append(const std::vector<float>& k, const std::vector<float>& v, const std::vector<i64>& slots,
              const Fp8Scales& scales) override {
    need_pool();
    const i64 row = static_cast<i64>(spec_.num_kv_heads) * spec_.head_dim;
    const i64 n = static_cast<i64>(slots.size());
    if (static_cast<i64>(k.size()) != n * row || v.size() != k.size())
      throw InputError("probe append", "K/V sizes do not match the slots: " + std::to_string(k.size()) + " and " +
                                           std::to_string(v.size()) + " floats for " + std::to_string(n) + " tokens of " +
                                           std::to_string(row) + " elements");
    const i64 capacity = spec_.num_blocks * spec_.page_size;
    for (i64 s : slots)
      if (s < 0 || s >= capacity)
        throw InputError("probe append", "slot " + std::to_string(s) + " outside the pool (0.." + std::to_string(capacity - 1) + ")");
    check_scales(scales);
    if (n == 0) return;

    const i64 batch = std::clamp<i64>(kAppendStagingBytes / (2 * row * 4 + 8), 1, n);
    Packing pk;
    const i64 k_off = pk.take(batch * row * 4), v_off = pk.take(batch * row * 4), s_off = pk.take(batch * 8);
    void* staging = alloc("append_staging", pk.size);
    ScopedRelease free_staging(ledger_, staging);
    kk::KvAppendArgs a;
    a.layout = layout_;
    a.k_new = at<const float>(staging, k_off);
    a.v_new = at<const float>(staging, v_off);
    a.slot_mapping = at<const int64_t>(staging, s_off);
    a.pool = pool_;
    a.k_scale = scales.k;
    a.v_scale = scales.v;
    for (i64 t0 = 0; t0 < n; t0 += batch) {
      const i64 nb = std::min(batch, n - t0);
      const auto fbytes = static_cast<size_t>(nb * row) * sizeof(float);
      // the legacy default stream orders these copies after the previous batch's kernel
      check(cudaMemcpy(at<void>(staging, k_off), k.data() + t0 * row, fbytes, cudaMemcpyHostToDevice), "uploading K");
      check(cudaMemcpy(at<void>(staging, v_off), v.data() + t0 * row, fbytes, cudaMemcpyHostToDevice), "uploading V");
      check(cudaMemcpy(at<void>(staging, s_off), slots.data() + t0, static_cast<size_t>(nb) * sizeof(i64), cudaMemcpyHostToDevice),
            "uploading slots");
      a.num_tokens = nb;
      check(kk::launch_kv_append(a, nullptr), "KV append launch");
    }
    check(cudaDeviceSynchronize(), "KV append");
  }

  void fill_synthetic(const PageTable& pt, std::uint64_t seed, const Fp8Scales& scales) override {
    need_pool();
    const int seqs = validate_table(pt);
    check_scales(scales);
    Packing pk;
    const i64 ip_off = pk.take((seqs + 1) * 4), ix_off = pk.take(static_cast<i64>(pt.indices.size()) * 4);
    const i64 ll_off = pk.take(seqs * 4);
    void* table = alloc("fill_page_table", pk.size);
    ScopedRelease free_table(ledger_, table);
    upload(at<void>(table, ip_off), pt.indptr.data(), (seqs + 1) * 4, "uploading the page indptr");
    upload(at<void>(table, ix_off), pt.indices.data(), static_cast<i64>(pt.indices.size()) * 4, "uploading the page indices");
    upload(at<void>(table, ll_off), pt.last_page_len.data(), seqs * 4, "uploading the last page lengths");
    kk::FillSyntheticArgs a;
    a.layout = layout_;
    a.num_seqs = seqs;
    a.page_indptr = at<const int32_t>(table, ip_off);
    a.page_indices = at<const int32_t>(table, ix_off);
    a.last_page_len = at<const int32_t>(table, ll_off);
    a.total_pages = pt.indptr[static_cast<size_t>(seqs)];
    a.seed = seed;
    a.pool = pool_;
    a.k_scale = scales.k;
    a.v_scale = scales.v;
    check(kk::launch_fill_synthetic(a, nullptr), "synthetic fill launch");
    check(cudaDeviceSynchronize(), "synthetic fill");
  }

  void decode(const std::vector<float>& q, const PageTable& pt, const Fp8Scales& scales, std::vector<float>& out) override {
    need_pool();
    const int seqs = validate_table(pt);
    const i64 qh = spec_.num_q_heads, hd = spec_.head_dim;
    const i64 qn = seqs * qh * hd;
    if (static_cast<i64>(q.size()) != qn)
      throw InputError("probe decode", "q has " + std::to_string(q.size()) + " floats; sequences x query heads x head_dim is " +
                                           std::to_string(qn));
    check_scales(scales);

    std::vector<int32_t> chunk_indptr(static_cast<size_t>(seqs) + 1);
    kk::SplitPlan plan;
    check(kk::plan_decode(layout_, spec_.num_q_heads, pt.indptr.data(), seqs, info_.sm_count, &plan, chunk_indptr.data()),
          "planning the decode");

    free_decode();
    Packing pk;
    const i64 q_off = pk.take(qn * 4), out_off = pk.take(qn * 4);
    const i64 ip_off = pk.take((seqs + 1) * 4), ix_off = pk.take(static_cast<i64>(pt.indices.size()) * 4);
    const i64 ll_off = pk.take(seqs * 4), ci_off = pk.take((seqs + 1) * 4);
    dec_io_ = alloc("decode_io", pk.size);
    kk::DecodeArgs a;
    a.layout = layout_;
    a.num_q_heads = spec_.num_q_heads;
    a.num_seqs = seqs;
    a.pool = pool_;
    a.q = at<const float>(dec_io_, q_off);
    a.out = at<float>(dec_io_, out_off);
    a.page_indptr = at<const int32_t>(dec_io_, ip_off);
    a.page_indices = at<const int32_t>(dec_io_, ix_off);
    a.last_page_len = at<const int32_t>(dec_io_, ll_off);
    a.chunk_indptr = at<const int32_t>(dec_io_, ci_off);
    a.sm_scale = 1.0f / std::sqrt(static_cast<float>(hd));
    a.k_scale = scales.k;
    a.v_scale = scales.v;
    a.plan = plan;
    const i64 tmp_out = kk::decode_tmp_out_floats(plan, seqs, spec_.num_q_heads, spec_.head_dim);
    const i64 tmp_lse = kk::decode_tmp_lse_floats(plan, seqs, spec_.num_q_heads);
    if (plan.split(seqs)) {
      Packing ws;
      const i64 o_off = ws.take(tmp_out * 4), l_off = ws.take(tmp_lse * 4);
      dec_ws_ = alloc("decode_split_workspace", ws.size);
      a.tmp_out = at<float>(dec_ws_, o_off);
      a.tmp_lse = at<float>(dec_ws_, l_off);
    }
    upload(at<void>(dec_io_, q_off), q.data(), qn * 4, "uploading q");
    upload(at<void>(dec_io_, ip_off), pt.indptr.data(), (seqs + 1) * 4, "uploading the page indptr");
    upload(at<void>(dec_io_, ix_off), pt.indices.data(), static_cast<i64>(pt.indices.size()) * 4, "uploading the page indices");
    upload(at<void>(dec_io_, ll_off), pt.last_page_len.data(), seqs * 4, "uploading the last page lengths");
    upload(at<void>(dec_io_, ci_off), chunk_indptr.data(), (seqs + 1) * 4, "uploading the chunk indptr");
    if (fault_launch_) {
      fault_launch_ = false;
      check(kk::launch_decode_invalid_config(a, nullptr), "decode attention launch");
    }
    check(kk::launch_decode(a, nullptr), "decode attention launch");
    check(cudaDeviceSynchronize(), "decode attention");
    out.resize(static_cast<size_t>(qn));
    check(cudaMemcpy(out.data(), a.out, static_cast<size_t>(qn) * sizeof(float), cudaMemcpyDeviceToHost), "downloading the output");
    dec_args_ = a;
    dec_ready_ = true;
  }

  TimingStats time_decode(double max_seconds) override {
    if (!dec_ready_) throw RuntimeFailure("cuda: time_decode needs a decode() first");
    const kk::DecodeArgs a = dec_args_;
    return time_loop("decode attention", max_seconds, [a] { return kk::launch_decode(a, nullptr); });
  }

  TimingStats time_contiguous_read(double max_seconds) override {
    need_pool();
    ensure_timing_buffers();
    kk::ContiguousReadArgs a;
    a.data = pool_;
    a.bytes = spec_.pool_bytes();
    a.sink = sink_;
    a.num_ctas = read_ctas_;
    return time_loop("contiguous read", max_seconds, [a] { return kk::launch_contiguous_read(a, nullptr); });
  }

  void inject_fault(Fault f) override {
    if (f == Fault::allocation) fault_alloc_ = true;
    if (f == Fault::launch) fault_launch_ = true;
  }

  TimingStats time_paged_gather(const PageTable& pt, double max_seconds) override {
    need_pool();
    const int seqs = validate_table(pt);
    std::vector<int32_t> chunk_indptr(static_cast<size_t>(seqs) + 1);
    kk::SplitPlan plan;
    check(kk::plan_paged_gather(layout_, pt.indptr.data(), seqs, info_.sm_count, &plan, chunk_indptr.data()),
          "planning the paged gather");
    ensure_timing_buffers();
    Packing pk;
    const i64 ip_off = pk.take((seqs + 1) * 4), ix_off = pk.take(static_cast<i64>(pt.indices.size()) * 4);
    const i64 ll_off = pk.take(seqs * 4), ci_off = pk.take((seqs + 1) * 4);
    void* table = alloc("gather_page_table", pk.size);
    ScopedRelease free_table(ledger_, table);
    upload(at<void>(table, ip_off), pt.indptr.data(), (seqs + 1) * 4, "uploading the page indptr");
    upload(at<void>(table, ix_off), pt.indices.data(), static_cast<i64>(pt.indices.size()) * 4, "uploading the page indices");
    upload(at<void>(table, ll_off), pt.last_page_len.data(), seqs * 4, "uploading the last page lengths");
    upload(at<void>(table, ci_off), chunk_indptr.data(), (seqs + 1) * 4, "uploading the chunk indptr");
    kk::PagedGatherArgs a;
    a.layout = layout_;
    a.num_seqs = seqs;
    a.pool = pool_;
    a.page_indptr = at<const int32_t>(table, ip_off);
    a.page_indices = at<const int32_t>(table, ix_off);
    a.last_page_len = at<const int32_t>(table, ll_off);
    a.chunk_indptr = at<const int32_t>(table, ci_off);
    a.plan = plan;
    a.sink = sink_;
    return time_loop("paged gather", max_seconds, [a] { return kk::launch_paged_gather(a, nullptr); });
  }

 private:
  /// Releases everything, clears any non-sticky error, and throws RuntimeFailure naming `op`.
  [[noreturn]] void fail(const std::string& op, cudaError_t e) {
    cudaGetLastError();
    release_everything();
    throw RuntimeFailure("cuda: " + op + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
  }
  void check(cudaError_t e, const char* op) {
    if (e != cudaSuccess) fail(op, e);
  }

  /// One plain cudaMalloc, recorded in the ledger; never asks for more than is free.
  void* alloc(const char* what, i64 bytes) {
    size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    if (fault_alloc_) {  // inject_fault: past the free check, more than the device has
      fault_alloc_ = false;
      bytes = 2 * static_cast<i64>(total);
    } else if (bytes > static_cast<i64>(free)) {
      release_everything();
      throw RuntimeFailure(std::string("cuda: ") + what + " needs " + std::to_string(bytes) + " bytes but only " +
                           std::to_string(free) + " are free on the device");
    }
    ledger_.reserve_one();
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, static_cast<size_t>(bytes));
    if (e != cudaSuccess) fail(std::string("cudaMalloc ") + what + " (" + std::to_string(bytes) + " bytes)", e);
    ledger_.add(what, bytes, p);
    return p;
  }

  void upload(void* dst, const void* src, i64 bytes, const char* op) {
    if (bytes > 0) check(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyHostToDevice), op);
  }

  void release_everything() noexcept {
    ledger_.release_all();
    pool_ = nullptr;
    layout_ = {};
    flush_ = nullptr;
    flush_bytes_ = 0;
    sink_ = nullptr;
    dec_io_ = dec_ws_ = nullptr;
    dec_ready_ = false;
  }

  void free_decode() noexcept {
    if (dec_io_ != nullptr) ledger_.release(dec_io_);
    if (dec_ws_ != nullptr) ledger_.release(dec_ws_);
    dec_io_ = dec_ws_ = nullptr;
    dec_ready_ = false;
  }

  void need_pool() const {
    if (pool_ == nullptr) throw RuntimeFailure("cuda: no pool allocated");
  }

  void check_scales(const Fp8Scales& s) const {
    if (spec_.dtype != CacheDtype::fp8_e4m3) return;
    if (!(std::isfinite(s.k) && s.k > 0 && std::isfinite(s.v) && s.v > 0))
      throw InputError("probe fp8 scales", "k and v scales must be finite and > 0, got " + std::to_string(s.k) + " and " +
                                               std::to_string(s.v));
  }

  /// Checks a page table against the pool; returns its number of sequences.
  int validate_table(const PageTable& pt) const {
    const std::string where = "probe page table";
    const size_t n = pt.last_page_len.size();
    if (n == 0) throw InputError(where, "no sequences");
    if (n > static_cast<size_t>(INT32_MAX) - 1) throw InputError(where, "too many sequences");
    if (pt.indptr.size() != n + 1)
      throw InputError(where, "indptr has " + std::to_string(pt.indptr.size()) + " entries; expected sequences + 1 = " + std::to_string(n + 1));
    if (pt.indptr[0] != 0) throw InputError(where, "indptr[0] must be 0");
    for (size_t s = 0; s < n; ++s) {
      const i64 pages = static_cast<i64>(pt.indptr[s + 1]) - pt.indptr[s];
      if (pages < 0) throw InputError(where, "indptr decreases at sequence " + std::to_string(s));
      if (pages > 0 && (pt.last_page_len[s] < 1 || pt.last_page_len[s] > spec_.page_size))
        throw InputError(where, "sequence " + std::to_string(s) + ": last_page_len " + std::to_string(pt.last_page_len[s]) +
                                    " outside 1.." + std::to_string(spec_.page_size));
      if (pages * spec_.page_size > INT32_MAX) throw InputError(where, "sequence " + std::to_string(s) + " has more than 2^31 tokens");
    }
    if (static_cast<size_t>(pt.indptr[n]) != pt.indices.size())
      throw InputError(where, "indptr ends at " + std::to_string(pt.indptr[n]) + " but there are " + std::to_string(pt.indices.size()) + " indices");
    for (const std::int32_t b : pt.indices)
      if (b < 0 || b >= spec_.num_blocks)
        throw InputError(where, "page " + std::to_string(b) + " outside the pool (0.." + std::to_string(spec_.num_blocks - 1) + ")");
    return static_cast<int>(n);
  }

  /// The L2 flush buffer (2 x L2, read between repeats) and the reduction sink, allocated once.
  void ensure_timing_buffers() {
    if (read_ctas_ == 0) check(kk::contiguous_read_ctas(info_.sm_count, &read_ctas_), "sizing the read grid");
    if (flush_ == nullptr) {
      const i64 bytes = round_up(2 * std::max<i64>(info_.l2_bytes, 1 << 20), kAlign);
      flush_ = alloc("cache_flush_buffer", bytes);
      flush_bytes_ = bytes;
      check(cudaMemset(flush_, 0, static_cast<size_t>(bytes)), "clearing the flush buffer");
    }
    if (sink_ == nullptr) {
      sink_ = static_cast<uint32_t*>(alloc("reduction_sink", kAlign));
      check(cudaMemset(sink_, 0, kAlign), "clearing the sink");
    }
  }

  /// Times `launch` (returns cudaError_t): before each repeat a read of 2 x L2 evicts the previous
  /// repeat's lines (a read, so the timed kernel never pays for write-backs of dirty lines) and
  /// keeps the GPU busy while the host enqueues; CUDA events bracket the launch alone.
  template <class Launch>
  TimingStats time_loop(const char* op, double max_seconds, Launch launch) {
    if (!(max_seconds > 0)) throw InputError("probe timing", "the time cap must be > 0 seconds");
    ensure_timing_buffers();
    kk::ContiguousReadArgs flush;
    flush.data = flush_;
    flush.bytes = flush_bytes_;
    flush.sink = sink_;
    flush.num_ctas = read_ctas_;
    EventPair ev;
    check(cudaEventCreate(&ev.start), "cudaEventCreate");
    check(cudaEventCreate(&ev.stop), "cudaEventCreate");
    auto once = [&]() -> double {
      check(kk::launch_contiguous_read(flush, nullptr), "L2 flush launch");
      check(cudaEventRecord(ev.start, nullptr), "cudaEventRecord");
      check(launch(), op);
      check(cudaEventRecord(ev.stop, nullptr), "cudaEventRecord");
      check(cudaEventSynchronize(ev.stop), op);
      float ms = 0;
      check(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime");
      return static_cast<double>(ms) * 1e-3;
    };
    once();  // warm-up: lazy module loading, clocks
    std::vector<double> samples;
    const auto start = clk::now();
    for (;;) {
      samples.push_back(once());
      if (static_cast<int>(samples.size()) >= kMinRepeats && relative_stdev(samples) < kTargetRelStdev) break;
      if (std::chrono::duration<double>(clk::now() - start).count() >= max_seconds) break;
      if (static_cast<int>(samples.size()) >= kMaxRepeats) break;
    }
    return summarise_timings(std::move(samples));
  }

  DeviceInfo info_;
  Ledger ledger_;
  PoolSpec spec_;
  kk::PagedKvLayout layout_;
  void* pool_ = nullptr;
  void* flush_ = nullptr;
  i64 flush_bytes_ = 0;
  uint32_t* sink_ = nullptr;
  int32_t read_ctas_ = 0;
  void* dec_io_ = nullptr;
  void* dec_ws_ = nullptr;
  kk::DecodeArgs dec_args_;
  bool dec_ready_ = false;
  bool fault_alloc_ = false, fault_launch_ = false;  // inject_fault: armed for the next allocation / decode launch
};

}  // namespace

bool cuda_device_present() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace kvplan::probe
