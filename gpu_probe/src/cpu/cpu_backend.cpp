// CPU backend: the same flow in host memory, multi-threaded; the numerical reference for the CUDA
// backend and a measurement of host memory and CPU bandwidth in its own right (llama.cpp CPU users).
#include "cpu_backend.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <new>
#include <thread>

#include "kvplan/core/error.hpp"
#include "kvplan/probe/probe.hpp"

namespace kvplan::probe {

namespace {

using clk = std::chrono::steady_clock;

i64 meminfo(const char* key) {
  std::ifstream in("/proc/meminfo");
  std::string k;
  i64 v = 0;
  std::string unit;
  while (in >> k >> v >> unit)
    if (k == key) return v * 1024;
  return 0;
}

// Runs f(i) for i in [0, n) on `threads` threads.
template <class F>
void parallel_for(int threads, i64 n, F f) {
  std::atomic<i64> next{0};
  auto work = [&] {
    for (i64 i = next++; i < n; i = next++) f(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

TimingStats time_repeats(const std::function<void()>& run, const std::function<void()>& flush, double max_seconds) {
  std::vector<double> s;
  const auto start = clk::now();
  for (int i = 0; i < 200; ++i) {
    flush();
    const auto t0 = clk::now();
    run();
    s.push_back(std::chrono::duration<double>(clk::now() - t0).count());
    if (s.size() >= 5 && relative_stdev(s) < 0.02) break;
    if (std::chrono::duration<double>(clk::now() - start).count() > max_seconds && s.size() >= 3) break;
  }
  return summarise_timings(std::move(s));
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads) : threads_(threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency())) {
    info_.backend = "cpu";
    info_.name = "host CPU (" + std::to_string(threads_) + " threads)";
    info_.sm_count = threads_;
    info_.runtime_total_bytes = meminfo("MemTotal:");
    info_.runtime_free_bytes = meminfo("MemAvailable:");
    info_.runtime_version = "C++ std::thread";
  }

  DeviceInfo device() const override { return info_; }

  std::vector<LedgerEntry> ledger() const override {
    std::vector<LedgerEntry> l;
    if (pool_) l.push_back({"kv_pool", pool_bytes_});
    if (!flush_.empty()) l.push_back({"cache_flush_buffer", static_cast<i64>(flush_.size())});
    if (!q_.empty()) l.push_back({"queries", static_cast<i64>(q_.size() * sizeof(float))});
    if (!out_.empty()) l.push_back({"outputs", static_cast<i64>(out_.size() * sizeof(float))});
    return l;
  }

  i64 free_bytes() const override { return meminfo("MemAvailable:"); }

  void allocate_pool(const PoolSpec& spec) override {
    check_supported(spec);
    release_all();
    const i64 bytes = spec.pool_bytes();
    if (bytes > free_bytes()) throw RuntimeFailure("probe: the pool needs " + std::to_string(bytes) + " bytes but only " + std::to_string(free_bytes()) + " are free");
    pool_.reset(new (std::nothrow) std::uint8_t[static_cast<size_t>(bytes)]);
    if (!pool_) throw RuntimeFailure("probe: host allocation of " + std::to_string(bytes) + " bytes failed");
    pool_bytes_ = bytes;
    spec_ = spec;
    flush_.assign(32u << 20, 1);  // larger than the last-level cache of this class of CPU
  }

  void release_all() override {
    pool_.reset();
    pool_bytes_ = 0;
    std::vector<std::uint8_t>().swap(flush_);
    std::vector<float>().swap(q_);
    std::vector<float>().swap(out_);
  }

  void fill_nan() override {
    need_pool();
    const std::uint8_t byte = 0xff;  // bf16/f16 0xffff is NaN; fp8 e4m3 0xff is NaN
    std::memset(pool_.get(), byte, static_cast<size_t>(pool_bytes_));
  }

  void append(const std::vector<float>& k, const std::vector<float>& v, const std::vector<i64>& slots, const Fp8Scales& sc) override {
    need_pool();
    const size_t row = static_cast<size_t>(spec_.num_kv_heads) * static_cast<size_t>(spec_.head_dim);
    if (k.size() != slots.size() * row || v.size() != k.size()) throw InputError("probe append", "K/V sizes do not match the slots");
    for (size_t t = 0; t < slots.size(); ++t) {
      const i64 block = slots[t] / spec_.page_size;
      const int slot = static_cast<int>(slots[t] % spec_.page_size);
      if (block < 0 || block >= spec_.num_blocks) throw InputError("probe append", "slot outside the pool");
      for (int h = 0; h < spec_.num_kv_heads; ++h)
        for (int d = 0; d < spec_.head_dim; ++d) {
          const size_t i = t * row + static_cast<size_t>(h) * static_cast<size_t>(spec_.head_dim) + static_cast<size_t>(d);
          store(offset(block, 0, slot, h, d), k[i], sc.k);
          store(offset(block, 1, slot, h, d), v[i], sc.v);
        }
    }
  }

  void fill_synthetic(const PageTable& pt, std::uint64_t seed, const Fp8Scales& sc) override {
    need_pool();
    parallel_for(threads_, pt.num_seqs(), [&](i64 s) {
      const i64 tokens = pt.tokens(static_cast<int>(s), spec_.page_size);
      for (i64 t = 0; t < tokens; ++t) {
        const i64 block = pt.indices[static_cast<size_t>(pt.indptr[static_cast<size_t>(s)] + t / spec_.page_size)];
        const int slot = static_cast<int>(t % spec_.page_size);
        for (int kv = 0; kv < 2; ++kv)
          for (int h = 0; h < spec_.num_kv_heads; ++h)
            for (int d = 0; d < spec_.head_dim; ++d)
              store(offset(block, kv, slot, h, d), synthetic_value(seed, s, t, kv, h, d), kv == 0 ? sc.k : sc.v);
      }
    });
  }

  void decode(const std::vector<float>& q, const PageTable& pt, const Fp8Scales& sc, std::vector<float>& out) override {
    need_pool();
    q_ = q;
    pt_ = pt;
    sc_ = sc;
    run_decode();
    out = out_;
  }

  TimingStats time_decode(double max_seconds) override {
    return time_repeats([&] { run_decode(); }, [&] { flush(); }, max_seconds);
  }

  TimingStats time_contiguous_read(double max_seconds) override {
    need_pool();
    return time_repeats([&] { sink_.fetch_add(contiguous_sum()); }, [&] { flush(); }, max_seconds);
  }

  TimingStats time_paged_gather(const PageTable& pt, double max_seconds) override {
    need_pool();
    return time_repeats([&] { sink_.fetch_add(gather_sum(pt)); }, [&] { flush(); }, max_seconds);
  }

 private:
  void need_pool() const {
    if (!pool_) throw RuntimeFailure("probe: no pool allocated");
  }
  i64 offset(i64 block, int kv, int slot, int head, int dim) const {
    return ((block * 2 + kv) * spec_.page_size + slot) * static_cast<i64>(spec_.num_kv_heads) * spec_.head_dim +
           static_cast<i64>(head) * spec_.head_dim + dim;
  }
  void store(i64 elem, float x, float scale) {
    switch (spec_.dtype) {
      case CacheDtype::bf16: reinterpret_cast<std::uint16_t*>(pool_.get())[elem] = to_bf16(x); break;
      case CacheDtype::f16: reinterpret_cast<std::uint16_t*>(pool_.get())[elem] = to_f16(x); break;
      case CacheDtype::fp8_e4m3: pool_.get()[elem] = to_fp8_e4m3(x / scale); break;
    }
  }

  // Converts `n` stored elements starting at element `elem` to float (one switch per row, not per element).
  void load_row(i64 elem, int n, float scale, float* out) const {
    switch (spec_.dtype) {
      case CacheDtype::bf16: {
        const auto* p = reinterpret_cast<const std::uint16_t*>(pool_.get()) + elem;
        for (int i = 0; i < n; ++i) {
          const std::uint32_t u = static_cast<std::uint32_t>(p[i]) << 16;
          std::memcpy(&out[i], &u, 4);
        }
        return;
      }
      case CacheDtype::f16: {
        const auto* p = reinterpret_cast<const _Float16*>(pool_.get()) + elem;
        for (int i = 0; i < n; ++i) out[i] = static_cast<float>(p[i]);
        return;
      }
      case CacheDtype::fp8_e4m3: {
        static const std::vector<float> lut = [] {
          std::vector<float> t(256);
          for (int b = 0; b < 256; ++b) t[static_cast<size_t>(b)] = from_fp8_e4m3(static_cast<std::uint8_t>(b));
          return t;
        }();
        const auto* p = pool_.get() + elem;
        for (int i = 0; i < n; ++i) out[i] = lut[p[i]] * scale;
        return;
      }
    }
  }

  // One task per (sequence, KV head): the group of query heads reads each K/V row once; online
  // softmax in fp32 (running max m, sum l, accumulator acc).
  void run_decode() {
    const int seqs = pt_.num_seqs(), kvh = spec_.num_kv_heads, qh = spec_.num_q_heads, d = spec_.head_dim;
    const int group = qh / kvh;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    out_.assign(static_cast<size_t>(seqs) * static_cast<size_t>(qh) * static_cast<size_t>(d), 0.0f);
    parallel_for(threads_, static_cast<i64>(seqs) * kvh, [&](i64 task) {
      const int s = static_cast<int>(task / kvh), h = static_cast<int>(task % kvh);
      std::vector<float> m(static_cast<size_t>(group), -INFINITY), l(static_cast<size_t>(group), 0.0f);
      std::vector<float> acc(static_cast<size_t>(group) * static_cast<size_t>(d), 0.0f), krow(static_cast<size_t>(d)), vrow(static_cast<size_t>(d));
      const i64 tokens = pt_.tokens(s, spec_.page_size);
      for (i64 t = 0; t < tokens; ++t) {
        const i64 block = pt_.indices[static_cast<size_t>(pt_.indptr[static_cast<size_t>(s)] + t / spec_.page_size)];
        const int slot = static_cast<int>(t % spec_.page_size);
        load_row(offset(block, 0, slot, h, 0), d, sc_.k, krow.data());
        load_row(offset(block, 1, slot, h, 0), d, sc_.v, vrow.data());
        for (int g = 0; g < group; ++g) {
          const float* qv = &q_[(static_cast<size_t>(s) * qh + static_cast<size_t>(h * group + g)) * static_cast<size_t>(d)];
          float dot = 0;
          for (int i = 0; i < d; ++i) dot += qv[i] * krow[static_cast<size_t>(i)];
          const float logit = dot * scale;
          const float mn = std::max(m[static_cast<size_t>(g)], logit);
          const float corr = std::exp(m[static_cast<size_t>(g)] - mn), p = std::exp(logit - mn);
          l[static_cast<size_t>(g)] = l[static_cast<size_t>(g)] * corr + p;
          float* a = &acc[static_cast<size_t>(g) * static_cast<size_t>(d)];
          for (int i = 0; i < d; ++i) a[i] = a[i] * corr + p * vrow[static_cast<size_t>(i)];
          m[static_cast<size_t>(g)] = mn;
        }
      }
      for (int g = 0; g < group; ++g) {
        float* o = &out_[(static_cast<size_t>(s) * qh + static_cast<size_t>(h * group + g)) * static_cast<size_t>(d)];
        for (int i = 0; i < d; ++i) o[i] = l[static_cast<size_t>(g)] > 0 ? acc[static_cast<size_t>(g) * static_cast<size_t>(d) + static_cast<size_t>(i)] / l[static_cast<size_t>(g)] : 0.0f;
      }
    });
  }

  std::uint64_t contiguous_sum() const {
    const i64 words = pool_bytes_ / 8;
    std::vector<std::uint64_t> part(static_cast<size_t>(threads_), 0);
    const i64 chunk = (words + threads_ - 1) / threads_;
    parallel_for(threads_, threads_, [&](i64 t) {
      const auto* w = reinterpret_cast<const std::uint64_t*>(pool_.get());
      std::uint64_t s = 0;
      for (i64 i = t * chunk; i < std::min(words, (t + 1) * chunk); ++i) s += w[i];
      part[static_cast<size_t>(t)] = s;
    });
    std::uint64_t s = 0;
    for (auto p : part) s += p;
    return s;
  }

  std::uint64_t gather_sum(const PageTable& pt) const {
    const i64 page_bytes = 2LL * spec_.page_size * spec_.num_kv_heads * spec_.head_dim * cache_dtype_bytes(spec_.dtype);
    std::vector<std::uint64_t> part(static_cast<size_t>(pt.num_seqs()), 0);
    parallel_for(threads_, pt.num_seqs(), [&](i64 s) {
      std::uint64_t sum = 0;
      for (i64 p = pt.indptr[static_cast<size_t>(s)]; p < pt.indptr[static_cast<size_t>(s) + 1]; ++p) {
        const auto* w = reinterpret_cast<const std::uint64_t*>(pool_.get() + static_cast<i64>(pt.indices[static_cast<size_t>(p)]) * page_bytes);
        for (i64 i = 0; i < page_bytes / 8; ++i) sum += w[i];
      }
      part[static_cast<size_t>(s)] = sum;
    });
    std::uint64_t s = 0;
    for (auto p : part) s += p;
    return s;
  }

  void flush() {
    for (size_t i = 0; i < flush_.size(); i += 64) flush_[i] = static_cast<std::uint8_t>(flush_[i] + 1);
  }

  int threads_;
  DeviceInfo info_;
  std::unique_ptr<std::uint8_t[]> pool_;
  i64 pool_bytes_ = 0;
  PoolSpec spec_;
  std::vector<std::uint8_t> flush_;
  std::vector<float> q_, out_;
  PageTable pt_;
  Fp8Scales sc_;
  std::atomic<std::uint64_t> sink_{0};
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace kvplan::probe
