// Synthetic workloads for the simulator: arrivals (Poisson, constant, gamma with vllm bench serve's
// burstiness), prompt and output lengths, shared system prompts and multi-turn sessions. Sampling is
// our own inverse-CDF / Box-Muller / Marsaglia-Tsang over std::mt19937_64 (whose output the standard
// fixes), not std::*_distribution (whose output differs between standard libraries).
#include <algorithm>
#include <cmath>
#include <random>

#include "kvplan/core/error.hpp"
#include "kvplan/core/simulate.hpp"

namespace kvplan {

namespace {

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  double open01() { return (static_cast<double>(g_() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  double normal() {                                                                // Box-Muller, one value per call
    const double u1 = open01(), u2 = open01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // Gamma(shape k, scale 1): Marsaglia-Tsang; k < 1 through Gamma(k + 1) x U^(1/k).
  double gamma(double k) {
    if (k < 1) return gamma(k + 1) * std::pow(open01(), 1.0 / k);
    const double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      const double x = normal(), v0 = 1 + c * x;
      if (v0 <= 0) continue;
      const double v = v0 * v0 * v0, u = open01();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }

 private:
  std::mt19937_64 g_;
};

void check_length(const LengthDist& d, const std::string& name) {
  using K = LengthDist::Kind;
  if (d.kind == K::histogram) {
    if (d.histogram.empty()) throw InputError(name + ".histogram", "is empty", "give (tokens, weight) pairs");
    double total = 0;
    for (const auto& [tokens, w] : d.histogram) {
      if (tokens < 1 || !(w >= 0)) throw InputError(name + ".histogram", "needs tokens >= 1 and weights >= 0");
      total += w;
    }
    if (!(total > 0)) throw InputError(name + ".histogram", "has no positive weight");
  } else {
    if (!(d.mean >= 1)) throw InputError(name + ".mean", "must be >= 1 token (got " + std::to_string(d.mean) + ")");
    if (!(d.spread >= 0) || (d.kind == K::uniform && d.spread > 1))
      throw InputError(name + ".spread", "must be >= 0 (uniform: at most 1)");
  }
  if (d.min < 1 || (d.max != 0 && d.max < d.min))
    throw InputError(name + ".min", "needs 1 <= min <= max (max 0: none)");
}

i64 sample_length(const LengthDist& d, Rng& rng) {
  using K = LengthDist::Kind;
  double x = d.mean;
  switch (d.kind) {
    case K::fixed:
      break;
    case K::uniform:
      x = d.mean * (1 + d.spread * (2 * rng.open01() - 1));
      break;
    case K::normal:
      x = d.mean * (1 + d.spread * rng.normal());
      break;
    case K::lognormal:
      if (d.spread > 0) {  // mean m, standard deviation spread x m: sigma^2 = ln(1 + cv^2), mu = ln m - sigma^2 / 2
        const double s2 = std::log1p(d.spread * d.spread);
        x = std::exp(std::log(d.mean) - s2 / 2 + std::sqrt(s2) * rng.normal());
      }
      break;
    case K::histogram: {
      double total = 0;
      for (const auto& bin : d.histogram) total += bin.second;
      double u = rng.open01() * total;
      x = static_cast<double>(d.histogram.back().first);
      for (const auto& [tokens, w] : d.histogram) {
        if (u < w) {
          x = static_cast<double>(tokens);
          break;
        }
        u -= w;
      }
      break;
    }
  }
  i64 n = std::isfinite(x) ? std::llround(std::clamp(x, -1e15, 1e15)) : d.min;
  n = std::max(n, d.min);
  if (d.max > 0) n = std::min(n, d.max);
  return n;
}

class Workload final : public RequestSource {
 public:
  explicit Workload(const WorkloadSpec& w)
      : w_(w),
        turns_(std::max<i64>(w.turns, 1)),
        units_((w.requests + turns_ - 1) / turns_),
        arrival_rng_(splitmix(w.seed ^ 0xA5A5A5A5ULL)),
        length_rng_(splitmix(w.seed ^ 0x5A5A5A5A00000000ULL)) {
    if (w_.rate > 0 && w_.arrival != ArrivalKind::constant && units_ > 0) {
      // vllm bench serve rescales the cumulative delays so the last arrival lands at N / rate
      Rng probe = arrival_rng_;
      double total = 0;
      for (i64 i = 0; i < units_; ++i) total += delay(probe);
      scale_ = total > 0 ? static_cast<double>(units_) / unit_rate() / total : 1;
    }
  }

  bool next(SimRequest& out) override {
    if (emitted_ >= w_.requests) return false;
    if (turn_ == 0 || turn_ >= turns_) {  // a new session (or a single request)
      turn_ = 0;
      history_ = 0;
      if (w_.rate > 0) t_ += w_.arrival == ArrivalKind::constant ? 1.0 / unit_rate() : delay(arrival_rng_) * scale_;
      ++unit_;
    }
    const i64 u = unit_ - 1;
    const i64 prompt = sample_length(w_.prompt, length_rng_), output = sample_length(w_.output, length_rng_);
    out = SimRequest{};
    out.id = emitted_;
    out.arrival_s = t_;
    out.prompt_tokens = w_.shared_prefix_tokens + history_ + prompt;
    out.output_tokens = output;
    if (w_.shared_prefix_tokens > 0) {
      out.prefix_group = u % std::max<i64>(w_.prefix_groups, 1);
      out.prefix_tokens = w_.shared_prefix_tokens;
    }
    if (turns_ > 1) {
      out.session = u;
      out.think_s = turn_ > 0 ? w_.think_s : 0;
    }
    history_ += prompt + output;
    ++turn_;
    ++emitted_;
    return true;
  }

 private:
  double unit_rate() const { return w_.rate / static_cast<double>(turns_); }
  double delay(Rng& rng) const {
    const double r = unit_rate();
    if (w_.arrival == ArrivalKind::poisson) return -std::log(rng.open01()) / r;
    // gamma: shape = burstiness, scale = 1 / (rate x burstiness), so the mean stays 1 / rate
    return rng.gamma(w_.burstiness) / (r * w_.burstiness);
  }

  WorkloadSpec w_;
  i64 turns_, units_;
  Rng arrival_rng_, length_rng_;
  double scale_ = 1, t_ = 0;
  i64 emitted_ = 0, unit_ = 0, turn_ = 0, history_ = 0;
};

}  // namespace

std::unique_ptr<RequestSource> make_workload(const WorkloadSpec& w) {
  if (w.requests < 0) throw InputError("requests", "must be >= 0");
  if (w.requests > kMaxSimRequests)
    throw InputError("requests", "must be at most " + std::to_string(kMaxSimRequests) + " in one run",
                     "simulate fewer requests (the percentiles settle long before), or replay a trace");
  if (!(w.rate >= 0) || !std::isfinite(w.rate)) throw InputError("rate", "must be a finite rate >= 0 (0: all at once)");
  if (arrivals_outrun_clock(static_cast<double>(w.requests), w.rate)) throw InputError("rate", kArrivalSpanProblem, kArrivalSpanFix);
  if (w.arrival == ArrivalKind::gamma && !(w.burstiness > 0)) throw InputError("burstiness", "must be > 0");
  if (w.shared_prefix_tokens < 0) throw InputError("shared_prefix_tokens", "must be >= 0");
  if (w.prefix_groups < 1) throw InputError("prefix_groups", "must be >= 1");
  if (w.turns < 1) throw InputError("turns", "must be >= 1");
  if (!(w.think_s >= 0) || w.think_s > kMaxSimClockS) throw InputError("think_s", "must be from 0 to 10^9 seconds");
  check_length(w.prompt, "prompt");
  check_length(w.output, "output");
  return std::make_unique<Workload>(w);
}

}  // namespace kvplan
