// The probe's flow over any backend (see probe.hpp).
#include "kvplan/probe/probe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "kvplan/core/error.hpp"
#include "kvplan/core/kv.hpp"
#include "kvplan/core/paging.hpp"

namespace kvplan::probe {

namespace {

using clk = std::chrono::steady_clock;

ElemFormat elem_format(CacheDtype d) {
  switch (d) {
    case CacheDtype::bf16: return ElemFormat::bf16;
    case CacheDtype::f16: return ElemFormat::f16;
    case CacheDtype::fp8_e4m3: return ElemFormat::fp8_e4m3;
    case CacheDtype::fp8_e5m2: return ElemFormat::fp8_e5m2;
    case CacheDtype::q8_0: return ElemFormat::q8_0;
    case CacheDtype::q4_0: return ElemFormat::q4_0;
  }
  return ElemFormat::bf16;
}

// The planner's arithmetic for one layer's pool: blocks x page_size x (K + V bytes per token)
// (core/kv.hpp layer_*_bytes_per_token, core/paging.hpp pages_bytes) - computed independently of
// PoolSpec::pool_bytes so the ledger is checked against the plan.
i64 planner_pool_bytes(const PoolSpec& s, i64 blocks) {
  Layer l;
  l.kv_heads = s.num_kv_heads;
  l.k_head_dim = l.v_head_dim = s.head_dim;
  const i64 per_token = add(layer_k_bytes_per_token(l, elem_format(s.dtype)), layer_v_bytes_per_token(l, elem_format(s.dtype)));
  return pages_bytes(blocks, mul(per_token, s.page_size));
}

// K/V of tokens [t0, t0 + count) of sequence `seq` ([count, kv_heads, head_dim] each): synthetic_value,
// so the reference regenerates them instead of holding gigabytes of floats.
void token_kv(std::uint64_t seed, i64 seq, i64 t0, i64 count, const PoolSpec& spec, std::vector<float>& k, std::vector<float>& v) {
  const size_t row = static_cast<size_t>(spec.num_kv_heads) * static_cast<size_t>(spec.head_dim);
  k.resize(static_cast<size_t>(count) * row);
  v.resize(k.size());
  for (i64 t = 0; t < count; ++t)
    for (int h = 0; h < spec.num_kv_heads; ++h)
      for (int d = 0; d < spec.head_dim; ++d) {
        const size_t i = static_cast<size_t>(t) * row + static_cast<size_t>(h) * static_cast<size_t>(spec.head_dim) + static_cast<size_t>(d);
        k[i] = synthetic_value(seed, seq, t0 + t, 0, h, d);
        v[i] = synthetic_value(seed, seq, t0 + t, 1, h, d);
      }
}

struct Seq {
  std::vector<std::int32_t> pages;
  i64 tokens = 0, target = 0, id = 0;
};

PageTable table_of(const std::vector<Seq>& seqs, int page) {
  PageTable pt;
  pt.indptr.push_back(0);
  for (const auto& s : seqs) {
    pt.indices.insert(pt.indices.end(), s.pages.begin(), s.pages.end());
    pt.indptr.push_back(static_cast<std::int32_t>(pt.indices.size()));
    pt.last_page_len.push_back(static_cast<std::int32_t>(s.tokens - (static_cast<i64>(s.pages.size()) - 1) * page));
  }
  return pt;
}

// Appends tokens [from, to) of sequence s (chunked so host memory stays small).
void append_range(Backend& b, const PoolSpec& spec, const Seq& s, i64 from, i64 to, std::uint64_t seed, const Fp8Scales& sc) {
  std::vector<float> kk, vv;
  for (i64 t0 = from; t0 < to; t0 += 1024) {
    const i64 n = std::min<i64>(1024, to - t0);
    token_kv(seed, s.id, t0, n, spec, kk, vv);
    std::vector<i64> slots;
    for (i64 t = t0; t < t0 + n; ++t) slots.push_back(static_cast<i64>(s.pages[static_cast<size_t>(t / spec.page_size)]) * spec.page_size + t % spec.page_size);
    b.append(kk, vv, slots, sc);
  }
}

// Max abs / rel error of `out` against the double reference on `pairs` sampled (sequence, q head).
void check_output(const std::vector<float>& q, const std::vector<float>& out, const std::vector<Seq>& seqs, const PoolSpec& spec,
                  std::uint64_t seed, const Fp8Scales& sc, int pairs, double& max_abs, double& max_rel, int& checked) {
  const int d = spec.head_dim, qh = spec.num_q_heads, group = spec.num_q_heads / spec.num_kv_heads;
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  for (int p = 0; p < pairs && !seqs.empty(); ++p) {
    const size_t s = rng() % seqs.size();
    const int h = static_cast<int>(rng() % static_cast<std::uint64_t>(qh));
    std::vector<float> ks, vs;
    token_kv(seed, seqs[s].id, 0, seqs[s].tokens, spec, ks, vs);
    const std::vector<float> qrow(q.begin() + static_cast<long>((s * static_cast<size_t>(qh) + static_cast<size_t>(h)) * static_cast<size_t>(d)),
                                  q.begin() + static_cast<long>((s * static_cast<size_t>(qh) + static_cast<size_t>(h) + 1) * static_cast<size_t>(d)));
    const auto ref = reference_attention(qrow, ks, vs, seqs[s].tokens, h / group, spec, sc);
    for (int i = 0; i < d; ++i) {
      const double got = out[(s * static_cast<size_t>(qh) + static_cast<size_t>(h)) * static_cast<size_t>(d) + static_cast<size_t>(i)];
      const double err = std::fabs(got - ref[static_cast<size_t>(i)]);
      max_abs = std::max(max_abs, err);
      max_rel = std::max(max_rel, err / std::max(1e-3, std::fabs(ref[static_cast<size_t>(i)])));
    }
    ++checked;
  }
}

std::vector<float> random_q(int seqs, const PoolSpec& spec, std::uint64_t seed) {
  std::mt19937_64 rng(seed + 17);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> q(static_cast<size_t>(seqs) * static_cast<size_t>(spec.num_q_heads) * static_cast<size_t>(spec.head_dim));
  for (auto& x : q) x = n(rng);
  return q;
}

}  // namespace

ProbeResult run_probe(Backend& b, const ProbeOptions& o, const std::function<void(const std::string&)>& progress) {
  ProbeResult r;
  r.device = b.device();
  const auto start = clk::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clk::now() - start).count(); };
  const Fp8Scales sc{0.05f, 0.05f};  // inputs ~N(0,1): |x|/scale stays well inside fp8's +-448
  for (size_t ci = 0; ci < o.cases.size(); ++ci) {
    if (elapsed() > o.time_cap_s) { r.time_capped = true; break; }
    const ProbeCase& c = o.cases[ci];
    PoolSpec spec = o.shape;
    spec.dtype = c.dtype;
    spec.num_blocks = mul(c.num_seqs, pages_for_tokens(c.context, spec.page_size), "probe blocks");
    progress("case " + std::to_string(ci + 1) + "/" + std::to_string(o.cases.size()) + ": " + std::to_string(c.num_seqs) + " x " +
             std::to_string(c.context) + " tokens, " + cache_dtype_name(c.dtype) + (c.shuffled ? "" : ", contiguous pages"));
    CaseResult cr;
    cr.c = c;
    cr.blocks = spec.num_blocks;
    cr.predicted_pool_bytes = planner_pool_bytes(spec, spec.num_blocks);
    const i64 free_before = b.free_bytes();
    b.allocate_pool(spec);
    for (const auto& e : b.ledger())
      if (e.what == "kv_pool") cr.ledger_pool_bytes = e.bytes;
    b.fill_nan();  // touches every page, so host memory is committed before it is measured
    if (ci == 0) {
      r.free_before_pool = free_before;
      r.free_after_pool = b.free_bytes();
      r.ledger_at_peak = b.ledger();
    }
    BlockAllocator alloc(spec.num_blocks, c.shuffled, o.seed + ci);
    std::vector<Seq> seqs(static_cast<size_t>(c.num_seqs));
    for (int s = 0; s < c.num_seqs; ++s) {
      seqs[static_cast<size_t>(s)].id = s;
      seqs[static_cast<size_t>(s)].tokens = c.context;
      seqs[static_cast<size_t>(s)].pages = alloc.allocate(c.context, spec.page_size);
    }
    const PageTable pt = table_of(seqs, spec.page_size);
    b.fill_synthetic(pt, o.seed + ci, sc);  // sequence s of the table is id s
    const std::vector<float> q = random_q(c.num_seqs, spec, o.seed + ci);
    std::vector<float> out;
    b.decode(q, pt, sc, out);
    cr.finite = std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); });
    check_output(q, out, seqs, spec, o.seed + ci, sc, o.check_pairs, cr.max_abs_err, cr.max_rel_err, cr.pairs_checked);
    cr.timing = b.time_decode(o.seconds_per_timing);
    const double kv_bytes = static_cast<double>(c.num_seqs) * static_cast<double>(c.context) * 2.0 * spec.num_kv_heads *
                            static_cast<double>(spec.row_bytes());
    cr.bytes_moved = kv_bytes + 2.0 * static_cast<double>(q.size()) * 4.0;
    cr.flops = 4.0 * static_cast<double>(c.num_seqs) * static_cast<double>(c.context) * spec.num_q_heads * spec.head_dim;
    cr.achieved_bytes_per_s = cr.bytes_moved / cr.timing.median_s;
    const TimingStats contiguous = b.time_contiguous_read(o.seconds_per_timing);
    const TimingStats paged = b.time_paged_gather(pt, o.seconds_per_timing);
    const double pool = static_cast<double>(spec.pool_bytes());
    const double contiguous_bw = pool / contiguous.median_s;
    const double paged_bw = kv_bytes / paged.median_s;
    if (ci == 0) {
      r.contiguous = contiguous;
      r.paged = paged;
      r.contiguous_bytes_per_s = contiguous_bw;
      r.paged_bytes_per_s = paged_bw;
    }
    cr.fraction_of_contiguous = cr.achieved_bytes_per_s / contiguous_bw;
    cr.fraction_of_paged = cr.achieved_bytes_per_s / paged_bw;
    const double bw = o.datasheet_bandwidth > 0 ? o.datasheet_bandwidth : contiguous_bw;
    cr.predicted_s = cr.bytes_moved / (bw * o.bandwidth_efficiency);
    cr.predicted_error = (cr.predicted_s - cr.timing.median_s) / cr.timing.median_s;
    r.cases.push_back(cr);
    b.release_all();
  }

  // live mode: sequences grow one token per step, finish, return their pages; new ones take them
  if (!o.cases.empty() && o.live_steps > 0 && elapsed() < o.time_cap_s) {
    const ProbeCase& c = o.cases.front();
    PoolSpec spec = o.shape;
    spec.dtype = c.dtype;
    const int n = std::max(4, std::min(c.num_seqs, 16));
    const i64 ctx = std::max<i64>(8, std::min<i64>(c.context, 2048));
    spec.num_blocks = mul(n, pages_for_tokens(ctx, spec.page_size) + 1);
    progress("live mode: " + std::to_string(o.live_steps) + " decode steps, " + std::to_string(n) + " sequences up to " + std::to_string(ctx) + " tokens");
    b.allocate_pool(spec);
    b.fill_nan();
    BlockAllocator alloc(spec.num_blocks, true, o.seed + 99);
    std::mt19937_64 rng(o.seed + 5);
    std::vector<Seq> seqs;
    i64 next_id = 1000;
    auto start_seq = [&] {
      Seq s;
      s.id = next_id++;
      s.tokens = std::max<i64>(1, static_cast<i64>(rng() % static_cast<std::uint64_t>(ctx / 2)));
      // lengths short enough that sequences finish during the run and their pages are reused
      s.target = std::min<i64>(ctx, s.tokens + 1 + static_cast<i64>(rng() % static_cast<std::uint64_t>(std::max(1, o.live_steps / 2))));
      s.pages = alloc.allocate(s.tokens, spec.page_size);
      if (s.pages.empty()) return false;
      append_range(b, spec, s, 0, s.tokens, o.seed, sc);
      seqs.push_back(std::move(s));
      ++r.live.sequences_started;
      return true;
    };
    while (static_cast<int>(seqs.size()) < n && start_seq()) {}
    double frag_sum = 0;
    std::vector<double> step_times;
    for (int step = 0; step < o.live_steps && elapsed() < o.time_cap_s; ++step) {
      for (auto& s : seqs) {  // one new token each; a new page when the last one is full
        if (s.tokens % spec.page_size == 0) {
          const std::int32_t p = alloc.allocate_one();
          if (p < 0) throw RuntimeFailure("probe live mode: the pool ran out of pages (allocator bug)");
          s.pages.push_back(p);
        }
        ++s.tokens;
        append_range(b, spec, s, s.tokens - 1, s.tokens, o.seed, sc);
      }
      const PageTable pt = table_of(seqs, spec.page_size);
      const std::vector<float> q = random_q(static_cast<int>(seqs.size()), spec, o.seed + static_cast<std::uint64_t>(step));
      std::vector<float> out;
      const auto t0 = clk::now();
      b.decode(q, pt, sc, out);
      step_times.push_back(std::chrono::duration<double>(clk::now() - t0).count());
      if (step % 16 == 0) {
        double rel = 0;
        int checked = 0;
        check_output(q, out, seqs, spec, o.seed, sc, 2, r.live.max_abs_err, rel, checked);
      }
      i64 slots = 0, used = 0;
      for (const auto& s : seqs) { slots += static_cast<i64>(s.pages.size()) * spec.page_size; used += s.tokens; }
      frag_sum += slots > 0 ? static_cast<double>(slots - used) / static_cast<double>(slots) : 0.0;
      r.live.peak_blocks_used = std::max(r.live.peak_blocks_used, alloc.used_blocks());
      for (size_t i = 0; i < seqs.size();) {  // finished sequences hand their pages back
        if (seqs[i].tokens >= seqs[i].target) {
          alloc.release(seqs[i].pages);
          seqs.erase(seqs.begin() + static_cast<long>(i));
          ++r.live.sequences_finished;
        } else {
          ++i;
        }
      }
      while (static_cast<int>(seqs.size()) < n && start_seq()) {}
      ++r.live.steps;
    }
    r.live.blocks_reused = alloc.reused();
    r.live.internal_fragmentation = r.live.steps > 0 ? frag_sum / r.live.steps : 0;
    r.live.step_timing = summarise_timings(std::move(step_times));
    b.release_all();
  }

  // capacity: the largest pool that allocates, never asking for more than is free
  if (!o.cases.empty()) {
    PoolSpec spec = o.shape;
    spec.dtype = o.cases.front().dtype;
    spec.num_blocks = 1;
    const i64 page = spec.pool_bytes();
    r.capacity.free_bytes = b.free_bytes();
    i64 hi = r.capacity.free_bytes / page;
    if (r.device.backend == "cpu") hi = std::min<i64>(hi, (1LL << 30) / page);  // host: probe at most 1 GiB
    i64 lo = 0;
    while (lo < hi) {
      const i64 mid = lo + (hi - lo + 1) / 2;
      spec.num_blocks = mid;
      try {
        b.allocate_pool(spec);
        b.release_all();
        lo = mid;
      } catch (const RuntimeFailure&) {
        b.release_all();
        hi = mid - 1;
      }
    }
    r.capacity.max_blocks = lo;
    r.capacity.max_concurrency = lo / std::max<i64>(1, pages_for_tokens(o.cases.front().context, spec.page_size));
  }
  return r;
}

}  // namespace kvplan::probe
