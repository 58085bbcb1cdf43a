// `kvplan fit MODEL`: the largest concurrency at a context, the longest context at a concurrency,
// or (--fewest-gpus) the fewest GPUs and the parallel layout for a target. Each answer fits and the
// next step up does not. Latency targets (--slo-ttft-ms / --slo-tpot-ms at --slo-percentile) make
// the layout search also require them: from the static performance model at --concurrency, or
// from the simulator with --rate / --trace. --find-max-rate bisects the Poisson arrival rate that
// meets them for the deployment as given; --gpu A,B,C compares GPUs; --price-per-gpu-hour or
// --prices FILE add the cost. Exit 0 when an answer exists, 1 when nothing fits (or meets the
// targets), 2 bad input.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <regex>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "kvplan/core/sweep.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/json_read.hpp"
#include "output.hpp"
#include "sim_options.hpp"

namespace kvplan::cli {

namespace {

// GPU-hour prices kvplan reads: a tenth of a cent to a million dollars (below it the tokens per dollar run to hundreds
// of digits)
constexpr double kMinPrice = 0.001, kMaxPrice = 1e6;

// The --find-max-rate search: geometric bisection between these rates (requests/s) until the first
// failing rate is within kRateTolerance of the passing one, at most kMaxSimulations runs.
constexpr double kRateLow = 0.01;
constexpr double kRateHigh = 10000.0;
constexpr double kRateTolerance = 0.01;  // relative: first failing <= 1.01 x the rate reported
constexpr int kMaxSimulations = 20;

struct FitArgs {
  DeployArgs d;
  bool fewest_gpus = false;
  std::string max_gpus = "64";
  std::string max_tp = "8";
  std::string format = "table";
  // latency targets, rate search, hardware comparison, cost
  std::optional<double> slo_ttft_ms, slo_tpot_ms;
  int slo_percentile = 99;
  bool slo_percentile_given = false, max_gpus_given = false, max_tp_given = false;
  bool find_max_rate = false;
  bool no_pipeline_parallel = false;
  std::optional<double> price_per_gpu_hour;
  std::string prices;
  WorkloadArgs w;
};


ojson num_or_null(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

// the layout column of a search: TP x PP x DP, or llama.cpp's layers split over its GPUs
// No layout: why, in the answer's words: a CPU host is one host (llama.cpp splits over GPUs, not hosts), and layouts
// that fit in memory but miss the latency targets are not "none within N GPUs"
std::string no_layout_text(const GpuSpec& gpu, i64 slo_rejected, const std::string& max_gpus) {
  if (gpu.device_class == "cpu") return "none: it does not fit one " + gpu.id + " host";
  if (slo_rejected > 0) return "none within " + max_gpus + " GPUs meets the targets (" + std::to_string(slo_rejected) + " layouts fit but miss them)";
  return "none within " + max_gpus + " GPUs";
}

std::string search_layout_text(const LayoutSearch& s) {
  return s.layer_split ? "llama.cpp layers split over " + std::to_string(s.gpus) + " GPU" + (s.gpus == 1 ? "" : "s")
                       : "TP " + std::to_string(s.parallel.tp) + ", PP " + std::to_string(s.parallel.pp) + ", DP " +
                             std::to_string(s.parallel.dp) + (s.parallel.ep > 1 ? ", EP " + std::to_string(s.parallel.ep) : "");
}

/// Latency targets at one percentile.
struct Slo {
  std::optional<double> ttft_ms, tpot_ms;
  int percentile = 99;
  bool any() const { return ttft_ms || tpot_ms; }
};

double at_percentile(const LatencyStats& s, int pct) {
  if (s.count == 0) return std::numeric_limits<double>::quiet_NaN();
  return (pct == 50 ? s.p50 : pct == 90 ? s.p90 : s.p99) * 1e3;
}

/// What one layout achieved: the static model's single values, or the simulated percentile.
struct Achieved {
  bool simulated = false;
  double ttft_ms = std::numeric_limits<double>::quiet_NaN();
  double tpot_ms = std::numeric_limits<double>::quiet_NaN();
  double output_tokens_per_s = 0;  // static: decode tokens/s of the deployment; simulated: output tokens/s
  i64 requests = 0, completed = 0, failed = 0;
  // an open loop at a rate: the median TTFT of the first and of the last quarter of its arrivals; a queue that grows
  // through the run (the rate is past what the deployment serves) shows as the late one far above the early one
  double early_ttft_ms = 0, late_ttft_ms = 0;
  bool falling_behind = false;
  bool pass = true;
};

// An open loop falls behind when the median TTFT of its last quarter of arrivals passes kBehindRatio x that of its first
// quarter plus kBehindSteps decode steps (its median TPOT): a loop that keeps up has one TTFT distribution through the
// run (its first arrivals find an emptier engine, hence the ratio), one past its capacity queues more with every
// arrival, so its latencies are the run length's, whatever the targets say (a TPOT target alone passes at any rate:
// the running batch is capped)
constexpr double kBehindRatio = 2.0;
constexpr double kBehindSteps = 10.0;

/// Targets met? A missing figure (no TFLOP/s in the profile, no request with two tokens) fails its target.
bool meets(const Achieved& r, const Slo& s) {
  if (r.simulated && (r.completed == 0 || r.failed > 0)) return false;
  if (r.falling_behind) return false;
  if (s.ttft_ms && !(r.ttft_ms <= *s.ttft_ms)) return false;
  if (s.tpot_ms && !(r.tpot_ms <= *s.tpot_ms)) return false;
  return true;
}

/// Why a result misses: failed requests first, then a queue that grows through the run, else the targets.
std::string miss_reason(const Achieved& r) {
  if (r.simulated && (r.completed == 0 || r.failed > 0)) return "failed_requests";
  if (r.falling_behind) return "falling_behind";
  return "slo";
}

/// The static roofline (estimate_perf) at the deployment's prompt, output and concurrency.
Achieved static_perf(const Deployment& d, const Planner& p, const Slo& s) {
  const PerfResult r = estimate_perf(p, d.prompt, d.output, d.concurrency, d.perf);
  Achieved a;
  a.ttft_ms = r.ttft_s >= 0 ? r.ttft_s * 1e3 : std::numeric_limits<double>::quiet_NaN();
  a.tpot_ms = r.tpot_s * 1e3;
  a.output_tokens_per_s = r.decode_tokens_per_s;
  a.pass = meets(a, s);
  return a;
}

/// One simulation of `w` on the deployment `p` plans (open loop; the step time from the model).
Achieved simulated_perf(const Deployment& d, const Planner& p, const Workload& w, const WorkloadArgs& wa, const Slo& s) {
  SimConfig cfg = sim_config(d, p);
  cfg.closed_loop_concurrency = 0;
  const StepTimeModel model(p, d.perf);
  const StepTimeFn step = [&model](const StepBatch& b) { return model.step_s(b); };
  const auto src = open_requests(w, wa, d);
  SimSlo slo;
  if (s.ttft_ms) slo.ttft_s = *s.ttft_ms * 1e-3;
  if (s.tpot_ms) slo.tpot_s = *s.tpot_ms * 1e-3;
  std::vector<std::pair<double, double>> ttfts;  // (arrival, TTFT) of each completed request, for the trend below
  const bool rated = !w.traced && w.spec.rate > 0;
  const RequestObserver observe = [&](const RequestRecord& q) {
    if (!q.failed && q.first_token_s >= 0) ttfts.emplace_back(q.arrival_s, q.first_token_s - q.arrival_s);
  };
  const SimResult r = rated ? simulate(cfg, *src, step, slo, observe) : simulate(cfg, *src, step, slo);
  Achieved a;
  a.simulated = true;
  a.ttft_ms = at_percentile(r.ttft_s, s.percentile);
  a.tpot_ms = at_percentile(r.tpot_s, s.percentile);
  a.output_tokens_per_s = r.output_tokens_per_s;
  a.requests = r.requests;
  a.completed = r.completed;
  a.failed = r.failed;
  if (rated && ttfts.size() >= 8) {
    std::sort(ttfts.begin(), ttfts.end());
    const size_t q = ttfts.size() / 4;
    const auto median_ms = [&](size_t from) {
      std::vector<double> v;
      for (size_t i = from; i < from + q; ++i) v.push_back(ttfts[i].second);
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      return v[v.size() / 2] * 1e3;
    };
    a.early_ttft_ms = median_ms(0);
    a.late_ttft_ms = median_ms(ttfts.size() - q);
    const double step_ms = r.tpot_s.count > 0 ? r.tpot_s.p50 * 1e3 : 0.0;
    a.falling_behind = a.late_ttft_ms > kBehindRatio * a.early_ttft_ms + kBehindSteps * step_ms;
  }
  a.pass = meets(a, s);
  return a;
}

/// A price of one GPU type, with where it came from.
struct Price {
  double usd_per_gpu_hour = 0;
  std::string date, source;
};

/// --prices FILE: {"h100-sxm": {"usd_per_gpu_hour": 2.5, "date": "2026-11-01", "source": "..."}, ...}.
/// Keys are GPU ids or names kvplan resolves; every price carries its date and source.
std::map<std::string, Price> read_prices(const std::string& path, const io::Profiles& profiles) {
  const io::json j = io::parse_json_file(path);
  if (!j.is_object() || j.empty())
    throw InputError(path, "expected an object of GPU id -> {usd_per_gpu_hour, date, source}");
  std::map<std::string, Price> out;
  static const std::regex date_re("^[0-9]{4}-[0-9]{2}-[0-9]{2}$");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string where = path + ": /" + it.key();
    std::string id;
    try {
      id = profiles.gpu(it.key()).id;
    } catch (const InputError& e) {
      throw InputError(where, e.problem(), e.fix());
    }
    const io::json& v = it.value();
    if (!v.is_object()) throw InputError(where, "expected an object {usd_per_gpu_hour, date, source}");
    for (auto f = v.begin(); f != v.end(); ++f)
      if (f.key() != "usd_per_gpu_hour" && f.key() != "date" && f.key() != "source")
        throw InputError(where + "/" + f.key(), "unknown key", "a price has usd_per_gpu_hour, date and source");
    Price p;
    if (!v.contains("usd_per_gpu_hour") || !v["usd_per_gpu_hour"].is_number() ||
        !(v["usd_per_gpu_hour"].get<double>() >= kMinPrice && v["usd_per_gpu_hour"].get<double>() <= kMaxPrice))
      throw InputError(where + "/usd_per_gpu_hour", "expected a number from 0.001 to 10^6 (US dollars per GPU-hour)");
    p.usd_per_gpu_hour = v["usd_per_gpu_hour"].get<double>();
    if (!v.contains("date") || !v["date"].is_string() || !std::regex_search(v["date"].get<std::string>(), date_re))
      throw InputError(where + "/date", "missing or not YYYY-MM-DD", "every price needs the date it was quoted");
    p.date = v["date"].get<std::string>();
    {  // a calendar date (2026-02-30 is none)
      const int y = std::stoi(p.date.substr(0, 4)), mo = std::stoi(p.date.substr(5, 2)), day = std::stoi(p.date.substr(8, 2));
      const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
      const int days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      if (y < 1 || mo < 1 || mo > 12 || day < 1 || day > days[mo - 1])
        throw InputError(where + "/date", "'" + p.date + "' is not a calendar date", "give the date the price was quoted, YYYY-MM-DD");
    }
    if (!v.contains("source") || !v["source"].is_string() || v["source"].get<std::string>().empty())
      throw InputError(where + "/source", "missing or empty", "every price needs its source (a URL or a quote)");
    p.source = v["source"].get<std::string>();
    // two keys naming one GPU (h100 and h100-sxm) would leave the price used to the file's order
    if (const auto seen = out.find(id); seen != out.end())
      throw InputError(where, "names " + id + ", which an earlier key names too", "give each GPU one price");
    out[id] = p;
  }
  return out;
}

/// $/hour, $ per million output tokens and output tokens per dollar of `gpus` GPUs at `tokens_per_s`.
ojson cost_json(const std::string& gpu, i64 gpus, const Price& price, double tokens_per_s, const std::string& basis) {
  const double usd_per_hour = price.usd_per_gpu_hour * static_cast<double>(gpus);
  const bool have = tokens_per_s > 0 && std::isfinite(tokens_per_s);
  ojson c = {{"gpu", gpu},
             {"gpus", gpus},
             {"usd_per_gpu_hour", price.usd_per_gpu_hour},
             {"price_date", price.date.empty() ? ojson(nullptr) : ojson(price.date)},
             {"price_source", price.source.empty() ? ojson(nullptr) : ojson(price.source)},
             {"usd_per_hour", usd_per_hour},
             {"output_tokens_per_s", tokens_per_s},
             {"tokens_basis", basis},
             // $/Mtok = price x gpus / (tokens/s x 3600) x 1e6
             {"usd_per_million_output_tokens", have ? ojson(usd_per_hour / (tokens_per_s * 3600.0) * 1e6) : ojson(nullptr)},
             {"output_tokens_per_usd", have ? ojson(tokens_per_s * 3600.0 / usd_per_hour) : ojson(nullptr)}};
  return c;
}

/// The fewest-GPU layout that fits in memory and (with targets) meets them; the targets are checked
/// only on layouts that fit, and a layout that misses them is skipped as the engine's refusals are.
struct SloSearch {
  LayoutSearch search;
  Achieved achieved;       // of the layout found (static model when there are no targets)
  i64 slo_rejected = 0;    // layouts that fit in memory but missed the targets
};

SloSearch search_layout(const Deployment& given, const FitArgs& a, const Slo& slo, const std::optional<Workload>& wl,
                        i64 max_gpus, i64 max_tp, bool want_perf) {
  SloSearch out;
  // a simulated workload with no --context / --prompt-tokens / --output-tokens is sized in memory at the lengths it
  // simulates (its prompt and output means: 1,024 + 128 by default), not at max_model_len
  Deployment d = given;
  if (wl && !wl->traced && d.tokens_source == "max_model_len") {
    const double mean = wl->spec.prompt.mean + wl->spec.output.mean + static_cast<double>(wl->spec.shared_prefix_tokens);
    if (mean >= 1) d.tokens = std::min<i64>(d.tokens, static_cast<i64>(std::ceil(mean)));
  }
  std::map<std::tuple<i64, i64, i64>, Achieved> seen;
  // a tensor or pipeline parallel size the deployment gives is kept: the search varies the rest
  const std::optional<i64> fixed_tp = d.bag.has("tensor_parallel_size") ? std::optional<i64>(d.base.parallel.tp) : std::nullopt;
  const std::optional<i64> fixed_pp = d.bag.has("pipeline_parallel_size") ? std::optional<i64>(d.base.parallel.pp) : std::nullopt;
  if (fixed_tp && *fixed_tp > max_tp)
    throw InputError("--max-tp", std::to_string(max_tp) + " is below the deployment's tensor parallel size " + std::to_string(*fixed_tp),
                     "raise --max-tp or leave --tensor-parallel-size out to search it");
  // a layout's TTFT / TPOT against the targets: simulated with a workload, else the static model
  const auto judged = [&](const Planner& p) { return wl ? simulated_perf(d, p, *wl, a.w, slo) : static_perf(d, p, slo); };
  const auto make = [&](const Parallel& par) {
    if (a.no_pipeline_parallel && par.pp > 1) throw InputError("--no-pipeline-parallel", "layout skipped");
    if ((fixed_tp && par.tp != *fixed_tp) || (fixed_pp && par.pp != *fixed_pp)) throw InputError("--tensor-parallel-size", "layout skipped");
    // a given --ep-size holds in every layout tried: those whose tensor x data parallel GPUs it cannot split are refused
    Parallel q = par;
    if (d.bag.has("expert_parallel_size")) q.ep = d.base.parallel.ep;
    Planner p = plan_variant(d, q);
    if (slo.any()) {
      const Cell c = p.cell(d.tokens, d.concurrency, d.shared_prefix);
      if (c.fits) {
        const Achieved r = judged(p);
        seen[{par.tp, par.pp, par.dp}] = r;
        if (!r.pass) {
          ++out.slo_rejected;
          throw InputError("--slo", "layout misses the targets");
        }
      }
    }
    return p;
  };
  if (d.base.engine.kind == EngineKind::llamacpp) {
    // llama.cpp has no tensor or pipeline parallelism: one process splits the model's layers over --gpu-count GPUs
    // (--split-mode layer). The fewest is the smallest count that holds the requests with every layer on the GPUs
    // (unless -ngl was given: then as given); --fit moving layers to the CPU does not count as fitting.
    for (i64 n = 1; n <= max_gpus && !out.search.found; ++n) {
      DeploymentSpec x = d.base;
      x.engine.gpu_count = n;
      x.parallel = Parallel{1, 1, 1, 1};
      ++out.search.layouts_tried;
      std::optional<Planner> made;
      try {
        made.emplace(plan_variant(d, x));
      } catch (const OverflowError&) {
        throw;
      } catch (const InputError&) {
        continue;
      }
      const Cell c = made->cell(d.tokens, d.concurrency, d.shared_prefix);
      const EngineReport& r = made->engine();
      if (!c.fits || (!x.engine.gpu_layers_given && r.gpu_layers < r.total_layers)) continue;
      if (slo.any()) {
        const Achieved got = judged(*made);
        if (!got.pass) {
          ++out.slo_rejected;
          continue;
        }
        out.achieved = got;
      } else if (want_perf) {
        out.achieved = static_perf(d, *made, slo);
      }
      out.search.found = true;
      out.search.cell = c;
      out.search.gpus = n;
      out.search.layer_split = true;
    }
    return out;
  }
  out.search = fewest_gpus(make, d.spec.model, d.tokens, d.concurrency, d.shared_prefix, max_gpus, max_tp);
  if (out.search.found && d.bag.has("expert_parallel_size")) out.search.parallel.ep = d.base.parallel.ep;
  if (out.search.found && d.base.enable_expert_parallel) out.search.parallel.ep = out.search.parallel.tp * out.search.parallel.dp;  // vLLM: TP x DP
  if (out.search.found && (want_perf || slo.any())) {
    const Parallel& par = out.search.parallel;
    const auto it = seen.find({par.tp, par.pp, par.dp});
    out.achieved = it != seen.end() ? it->second : static_perf(d, plan_variant(d, par), slo);
  }
  return out;
}

ojson slo_targets_json(const Slo& s) {
  return {{"ttft_ms", s.ttft_ms ? ojson(*s.ttft_ms) : ojson(nullptr)},
          {"tpot_ms", s.tpot_ms ? ojson(*s.tpot_ms) : ojson(nullptr)}};
}

std::string slo_text(const Slo& s) {
  std::string t = "p" + std::to_string(s.percentile) + " ";
  if (s.ttft_ms) t += "TTFT <= " + fmt(*s.ttft_ms, 1) + " ms";
  if (s.ttft_ms && s.tpot_ms) t += ", ";
  if (s.tpot_ms) t += "TPOT <= " + fmt(*s.tpot_ms, 1) + " ms";
  return t;
}

std::string achieved_text(const Achieved& r) {
  return "TTFT " + fmt(r.ttft_ms, 1) + " ms, TPOT " + fmt(r.tpot_ms, 2) + " ms" +
         (r.falling_behind ? ", falling behind (median TTFT " + fmt(r.early_ttft_ms, 0) + " ms early, " + fmt(r.late_ttft_ms, 0) + " ms late)" : "") +
         (r.simulated ? " (simulated)" : " (static model)");
}

/// The layout search's bounds, --max-gpus and --max-tp, each >= 1.
std::pair<i64, i64> search_bounds(const FitArgs& a) {
  const i64 max_gpus = parse_count(a.max_gpus, "--max-gpus"), max_tp = parse_count(a.max_tp, "--max-tp");
  if (max_gpus < 1 || max_tp < 1) throw InputError(max_gpus < 1 ? "--max-gpus" : "--max-tp", "must be >= 1");
  return {max_gpus, max_tp};
}

/// The GPUs of --gpu A,B,C: one deployment source per GPU (the flag's other settings unchanged).
std::vector<std::string> gpu_list(const DeploymentSource& src) {
  for (const auto& [key, text, origin] : src.settings)
    if (key == "gpu" && (text.find(',') != std::string::npos || text.empty())) return split_names(text, "--gpu");
  return {};
}

DeploymentSource with_gpu(DeploymentSource src, const std::string& gpu) {
  for (auto& [key, text, origin] : src.settings)
    if (key == "gpu") text = gpu;
  return src;
}

void run_fit(const FitArgs& a, Globals& g) {
  const Format fmt_out = parse_format_flag(a.format);
  const auto profiles = io::Profiles::load(g.profiles_dir);

  // ---- the new options: checked before anything runs ----
  Slo slo;
  slo.ttft_ms = a.slo_ttft_ms;
  slo.tpot_ms = a.slo_tpot_ms;
  slo.percentile = a.slo_percentile;
  check_slo_ms(a.slo_ttft_ms, "--slo-ttft-ms");
  check_slo_ms(a.slo_tpot_ms, "--slo-tpot-ms");
  if (a.slo_percentile != 50 && a.slo_percentile != 90 && a.slo_percentile != 99)
    throw InputError("--slo-percentile", "expected 50, 90 or 99, got " + std::to_string(a.slo_percentile));
  const bool simulated = a.w.rate.has_value() || !a.w.trace.empty();
  const bool workload_flags = simulated || !a.w.arrival.empty() || a.w.burstiness || !a.w.prompt_dist.empty() ||
                              !a.w.output_dist.empty() || !a.w.prompt_hist.empty() || !a.w.output_hist.empty() ||
                              a.w.turns || a.w.prefix_groups || a.w.requests;
  if (a.find_max_rate) {
    if (!slo.any())
      throw InputError("--find-max-rate", "needs a target", "give --slo-ttft-ms and/or --slo-tpot-ms");
    if (a.w.rate) throw InputError("--rate", "--find-max-rate searches the rate", "leave --rate out");
    if (!a.w.trace.empty())
      throw InputError("--trace", "--find-max-rate searches a generated workload's rate", "leave --trace out");
    if (a.fewest_gpus)
      throw InputError("--fewest-gpus", "--find-max-rate takes the deployment as given",
                       "run fit --fewest-gpus --slo-... --rate R to size for a rate");
  } else if (!slo.any() && workload_flags) {
    throw InputError(a.w.rate ? "--rate" : !a.w.trace.empty() ? "--trace" : "workload options",
                     "a simulated workload needs targets to check",
                     "give --slo-ttft-ms / --slo-tpot-ms (or run kvplan simulate)");
  } else if (!simulated) {
    // targets without --rate / --trace are checked by the static model at --concurrency: the generator's options would
    // be ignored without a word
    const std::vector<std::pair<bool, const char*>> generator = {
        {!a.w.arrival.empty(), "--arrival"},         {a.w.burstiness.has_value(), "--burstiness"},
        {a.w.requests.has_value(), "--requests"},    {a.w.turns.has_value(), "--turns"},
        {a.w.think_s.has_value(), "--think-s"},      {a.w.prefix_groups.has_value(), "--prefix-groups"},
        {!a.w.prompt_dist.empty(), "--prompt-dist"}, {!a.w.output_dist.empty(), "--output-dist"},
        {!a.w.prompt_hist.empty(), "--prompt-histogram"}, {!a.w.output_hist.empty(), "--output-histogram"}};
    for (const auto& [on, flag] : generator)
      if (on)
        throw InputError(flag, "shapes a simulated workload, and the targets are checked by the static model at --concurrency",
                         "give --rate R or --trace FILE to simulate, or leave " + std::string(flag) + " out");
  }
  if (a.slo_percentile_given && !slo.any())
    throw InputError("--slo-percentile", "applies to latency targets", "give --slo-ttft-ms / --slo-tpot-ms, or leave it out");
  if (a.price_per_gpu_hour && !a.prices.empty())
    throw InputError("--price-per-gpu-hour", "given with --prices", "give one of them");
  if (a.price_per_gpu_hour && !(*a.price_per_gpu_hour >= kMinPrice && *a.price_per_gpu_hour <= kMaxPrice))
    throw InputError("--price-per-gpu-hour", "must be from 0.001 (a tenth of a cent) to 10^6 US dollars an hour");
  const std::map<std::string, Price> prices = a.prices.empty() ? std::map<std::string, Price>{} : read_prices(a.prices, profiles);
  const bool costed = a.price_per_gpu_hour || !a.prices.empty();

  DeploymentSource src = flags_source(a.d, g.pasted);
  src.prefix_before_prompt = simulated || a.find_max_rate;  // the simulator's workload: the prefix before each prompt
  const std::vector<std::string> gpus = gpu_list(src);
  const bool compare = gpus.size() > 1;
  src.layout_searched = !a.find_max_rate && (compare || a.fewest_gpus || slo.any());
  if (!src.layout_searched)
    for (const auto& [on, flag] : {std::pair{a.max_gpus_given, "--max-gpus"}, std::pair{a.max_tp_given, "--max-tp"},
                                   std::pair{a.no_pipeline_parallel, "--no-pipeline-parallel"}})
      if (on)
        throw InputError(flag, "bounds the layout search, and this fit searches no layout",
                         "add --fewest-gpus, --slo-ttft-ms / --slo-tpot-ms or a --gpu list, or leave " + std::string(flag) + " out");
  if (compare && a.find_max_rate)
    throw InputError("--gpu", "--find-max-rate takes one GPU type", "run it once per GPU");
  if (compare && a.price_per_gpu_hour)
    throw InputError("--price-per-gpu-hour", "one price for several GPU types",
                     "give --prices FILE with a price per GPU");
  const auto price_for = [&](const std::string& gpu_id) -> Price {
    if (a.price_per_gpu_hour) return {*a.price_per_gpu_hour, "", ""};
    const auto it = prices.find(gpu_id);
    if (it == prices.end())
      throw InputError(a.prices, "no price for GPU '" + gpu_id + "'", "add \"" + gpu_id + "\" to the file");
    return it->second;
  };

  // comparing GPUs, one the engine refuses (vLLM's bfloat16 below compute capability 8.0, ...) is a row saying why, not
  // the end of the comparison: the deployment the options are checked on is the first GPU that resolves
  std::map<std::string, std::string> refused;  // GPU name as given -> the engine's refusal
  const auto resolve_gpu = [&](const std::string& name) -> std::optional<Deployment> {
    try {
      return resolve_source(with_gpu(src, name), profiles);
    } catch (const InputError& e) {
      refused.emplace(name, e.what());
      return std::nullopt;
    }
  };
  const Deployment d = [&] {
    if (!compare) return resolve_source(src, profiles);
    for (const auto& name : gpus) {  // an unknown GPU name is bad input, not a GPU the engine refuses
      try {
        (void)profiles.gpu(name);
      } catch (const InputError& e) {
        throw InputError("--gpu", e.problem(), e.fix());
      }
    }
    for (const auto& name : gpus)
      if (auto dg = resolve_gpu(name)) return *dg;
    return resolve_source(with_gpu(src, gpus.front()), profiles);  // every GPU refused: the first one's error
  }();
  if (a.no_pipeline_parallel && d.bag.has("pipeline_parallel_size") && d.base.parallel.pp > 1)
    throw InputError("--no-pipeline-parallel", "given with --pipeline-parallel-size " + std::to_string(d.base.parallel.pp) + ": no layout is both",
                     "drop one of them");
  for (const auto& w : d.warnings) warn(w);
  const auto strict = strict_failures(d, a.d.strict);
  warn_strict(strict);
  // the static model's TTFT needs the GPU's TFLOP/s: without them no layout can be judged against a TTFT target, which
  // is an input to give, not "none within N GPUs" (a simulated run prices prefill at its reads and says so)
  if (slo.ttft_ms && !simulated && !a.find_max_rate && !compare && !StepTimeModel(Planner(d.spec), d.perf).prices_compute())
    throw InputError("--gpu", "the " + d.spec.gpu.id + " profile has no TFLOP/s for this weight format, so prefill (TTFT) is not estimated",
                     "give --gpu-tflops (the dense tensor rate), or leave the TTFT target out");
  if (compare) {
    // one figure for one GPU type would be applied to every GPU of the list, and a GPU named twice compared with itself
    for (const auto& [key, flag] : {std::pair{"gpu_memory_bytes", "--gpu-memory-bytes"}, std::pair{"gpu_bandwidth", "--gpu-bandwidth"},
                                    std::pair{"gpu_tflops", "--gpu-tflops"}})
      if (d.bag.has(key))
        throw InputError(flag, "one value for several GPU types", "compare without it, or run fit once per GPU with its own value");
    std::map<std::string, std::string> seen;  // profile id -> the name given
    for (const auto& name : gpus) {
      if (refused.count(name)) continue;
      const auto resolved = resolve_gpu(name);
      if (!resolved) continue;
      const Deployment& dg = *resolved;
      if (const auto [it, fresh] = seen.emplace(dg.spec.gpu.id, name); !fresh)
        throw InputError("--gpu", "'" + it->second + "' and '" + name + "' are the same GPU (" + dg.spec.gpu.id + ")", "list it once");
      if (slo.ttft_ms && !simulated && !StepTimeModel(Planner(dg.spec), dg.perf).prices_compute())
        throw InputError("--gpu", "the " + dg.spec.gpu.id + " profile has no TFLOP/s for this weight format, so prefill (TTFT) is not estimated",
                         "drop " + name + " from the list, or leave the TTFT target out");
    }
  }
  std::optional<Workload> wl;
  if (simulated) wl = build_workload(a.w, d, false);
  if (wl && wl->traced) {
    // the trace is read through once before the search: a missing file or a bad row is bad input (exit 2), not a
    // layout the search skips (every layout would, and the answer would read "none within N GPUs")
    const auto rows = open_requests(*wl, a.w, d);
    for (SimRequest r; rows->next(r);) {
    }
  }
  if (a.find_max_rate) {
    WorkloadArgs at = a.w;
    at.rate = 1.0;  // a placeholder the search replaces; checks the arrival options as simulate does
    wl = build_workload(at, d, false);
  }
  // what the answer is for: the requests held at once, or (simulated) the traffic
  const std::string demand =
      !simulated || !wl ? grouped(d.concurrency) + " x " + grouped(d.tokens) + " tokens"
      : wl->traced      ? "the requests of " + std::filesystem::path(a.w.trace).filename().string()
                        : fmt(wl->spec.rate, 2) + " req/s of " + lengths_text(wl->spec);
  const bool have_ctx = d.bag.has("context") || d.bag.has("prompt_tokens") || d.bag.has("output_tokens");
  const bool have_conc = d.bag.has("concurrency");
  if (a.find_max_rate && have_conc)
    throw InputError("--concurrency", "--find-max-rate runs an open loop at a rate", "leave --concurrency out");
  ojson results;
  Table t;
  t.columns = {"question", "answer", "next_limited_by"};
  t.right_align = {false, true, false};
  const bool human = fmt_out == Format::table || fmt_out == Format::md;
  bool ok = true;
  std::optional<Table> extra;
  std::string priced_note;  // the compare table's prices, dated and sourced, under the terminal table
  const std::string basis_static = "decode tokens/s of the static model at --concurrency";
  const std::string basis_sim = "simulated output tokens/s";
  const auto workload_inputs = [&]() {
    ojson w = workload_json(*wl, a.w, d);
    if (!a.w.trace.empty()) w["trace"] = a.w.trace;
    return w;
  };

  if (a.find_max_rate) {
    // ---- the highest Poisson rate that meets the targets, for the deployment as given ----
    const Planner p(d.spec);
    ojson mr;
    if (!p.engine().startup_ok) {
      ok = false;
      mr = {{"found", false}, {"reason", "the deployment does not start"}, {"simulations", 0}};
      t.rows.push_back({"highest rate meeting " + slo_text(slo), "none: the deployment does not start", "does_not_start"});
    } else {
      int sims = 0;
      const auto run_at = [&](double rate) {
        Workload w = *wl;
        w.spec.rate = rate;
        ++sims;
        return simulated_perf(d, p, w, a.w, slo);
      };
      double lo = kRateLow, hi = kRateHigh;
      Achieved at_lo = run_at(lo), at_hi;
      std::optional<double> first_fail;
      bool found = at_lo.pass;
      if (!found) {
        first_fail = lo;
        at_hi = at_lo;
      } else {
        at_hi = run_at(hi);
        if (at_hi.pass) {
          lo = hi;
          at_lo = at_hi;
        } else {
          first_fail = hi;
          while (hi / lo > 1.0 + kRateTolerance && sims < kMaxSimulations) {
            const double mid = std::sqrt(lo * hi);
            const Achieved r = run_at(mid);
            if (r.pass) {
              lo = mid;
              at_lo = r;
            } else {
              hi = mid;
              at_hi = r;
              first_fail = mid;
            }
          }
        }
      }
      ok = found;
      const auto pj = [](const Achieved& r) {
        return ojson{{"ttft_ms", num_or_null(r.ttft_ms)},
                     {"tpot_ms", num_or_null(r.tpot_ms)},
                     {"output_tokens_per_s", r.output_tokens_per_s},
                     {"completed", r.completed},
                     {"failed", r.failed},
                     {"falling_behind", r.falling_behind},
                     {"median_ttft_ms_first_quarter", r.early_ttft_ms},
                     {"median_ttft_ms_last_quarter", r.late_ttft_ms}};
      };
      mr = {{"found", found},
            {"rate_per_s", found ? ojson(lo) : ojson(nullptr)},
            {"first_failing_rate_per_s", first_fail ? ojson(*first_fail) : ojson(nullptr)},
            {"percentile", slo.percentile},
            {"targets", slo_targets_json(slo)},
            {"at_rate", found ? pj(at_lo) : ojson(nullptr)},
            {"at_first_failing_rate", first_fail ? pj(at_hi) : ojson(nullptr)},
            {"simulations", sims},
            {"search",
             {{"method", "geometric bisection on the Poisson arrival rate, one simulation per rate, the same seed"},
              {"low_per_s", kRateLow},
              {"high_per_s", kRateHigh},
              {"relative_tolerance", kRateTolerance},
              {"max_simulations", kMaxSimulations}}}};
      if (found && !first_fail) {
        // the search's bound passes: the run's requests (sessions) arrive about at once there, so the answer is a burst
        // the deployment absorbs, not a rate it sustains; a longer run is what finds the rate
        const WorkloadSpec& ws = wl->spec;
        const std::string load =
            grouped(ws.requests) + " requests" +
            (ws.turns > 1 ? " (" + grouped((ws.requests + ws.turns - 1) / ws.turns) + " sessions of " + grouped(ws.turns) + " turns)" : "");
        const std::string note = "every rate up to the search's bound (" + fmt(kRateHigh, 0) + " req/s) meets the targets: the run's " +
                                 load + " arrive about at once there, a burst the deployment absorbs, not a rate it sustains; "
                                 "give more --requests to find the rate";
        warn("--find-max-rate: " + note);
        mr["note"] = note;
      }
      // csv / jsonl: the answer a number, the unit in the question (as the cost rows)
      if (human)
        t.rows.push_back({"highest rate meeting " + slo_text(slo),
                          found ? fmt(lo, 3) + " req/s" + (first_fail ? "" : " (the search's bound)") : "none", ""});
      else
        t.rows.push_back({"highest rate (req/s) meeting " + slo_text(slo) + (found && !first_fail ? " (the search's bound)" : ""),
                          found ? fmt(lo, 3) : "", ""});
      if (found) t.rows.push_back({"at that rate", achieved_text(at_lo), ""});
      if (first_fail) {
        t.rows.push_back({human ? "first failing rate" : "first failing rate (req/s)", fmt(*first_fail, 3) + (human ? " req/s" : ""),
                          miss_reason(at_hi)});
        t.rows.push_back({"at the failing rate", achieved_text(at_hi), ""});
      }
      t.rows.push_back({"simulations", std::to_string(sims), ""});
      if (found && costed) {
        results["cost"] = cost_json(d.spec.gpu.id, deployment_gpus(d.spec), price_for(d.spec.gpu.id),
                                    at_lo.output_tokens_per_s, basis_sim + " at the rate found");
      }
    }
    results["max_rate"] = mr;
  } else if (compare) {
    // ---- one row per GPU: its fewest-GPU layout and whether it meets the targets ----
    const auto [max_gpus, max_tp] = search_bounds(a);
    ojson rows = ojson::array();
    Table c;
    c.title = "fewest GPUs per GPU type for " + demand +
              (slo.any() ? ", " + slo_text(slo) : "");
    c.columns = {"gpu", "gpus", "layout", "ttft_ms", "tpot_ms", "meets"};
    if (costed) c.columns.insert(c.columns.end(), {"usd_per_hour", "usd_per_mtok"});
    if (!a.prices.empty()) {
      // every price carries its date and source: columns in md / csv / jsonl and with --verbose, a line under the table
      c.columns.insert(c.columns.end(), {"price_date", "price_source"});
      c.verbose_only.assign(c.columns.size(), false);
      c.verbose_only[c.columns.size() - 2] = c.verbose_only[c.columns.size() - 1] = true;
    }
    bool any = false;
    for (const auto& name : gpus) {
      if (const auto r = refused.find(name); r != refused.end()) {
        const std::string& why = r->second;
        const std::string id = profiles.gpu(name).id;
        rows.push_back({{"gpu", id}, {"found", false}, {"gpus", 0}, {"meets_slo", slo.any() ? ojson(false) : ojson(nullptr)}, {"refused", why}});
        std::vector<std::string> cells = {id, "none", "refused: " + why, "", "", "no"};
        cells.resize(c.columns.size());
        c.rows.push_back(cells);
        continue;
      }
      const Deployment dg = resolve_source(with_gpu(src, name), profiles);
      std::optional<Workload> wg;
      if (simulated) wg = build_workload(a.w, dg, false);
      const SloSearch s = search_layout(dg, a, slo, wg, max_gpus, max_tp, true);
      any = any || s.search.found;
      const Parallel& par = s.search.parallel;
      ojson row = {{"gpu", dg.spec.gpu.id},
                   {"found", s.search.found},
                   {"gpus", s.search.found ? s.search.gpus : 0},
                   {"llamacpp_layer_split", s.search.layer_split},
                   {"tensor_parallel_size", s.search.found ? ojson(par.tp) : ojson(nullptr)},
                   {"pipeline_parallel_size", s.search.found ? ojson(par.pp) : ojson(nullptr)},
                   {"data_parallel_size", s.search.found ? ojson(par.dp) : ojson(nullptr)},
                   {"expert_parallel_size", s.search.found ? ojson(par.ep) : ojson(nullptr)},
                   {"meets_slo", slo.any() ? ojson(s.search.found) : ojson(nullptr)},
                   {"ttft_ms", s.search.found ? num_or_null(s.achieved.ttft_ms) : ojson(nullptr)},
                   {"tpot_ms", s.search.found ? num_or_null(s.achieved.tpot_ms) : ojson(nullptr)},
                   {"output_tokens_per_s", s.search.found ? ojson(s.achieved.output_tokens_per_s) : ojson(nullptr)},
                   {"layouts_tried", s.search.layouts_tried},
                   {"slo_rejected_layouts", s.slo_rejected}};
      std::vector<std::string> cells = {dg.spec.gpu.id,
                                        s.search.found ? std::to_string(s.search.gpus) : "none",
                                        s.search.found ? search_layout_text(s.search) : no_layout_text(dg.spec.gpu, s.slo_rejected, a.max_gpus),
                                        s.search.found ? fmt(s.achieved.ttft_ms, 1) : "",
                                        s.search.found ? fmt(s.achieved.tpot_ms, 2) : "",
                                        s.search.found ? (slo.any() ? "yes" : "fits") : "no"};
      if (costed) {
        if (s.search.found) {
          row["cost"] = cost_json(dg.spec.gpu.id, s.search.gpus, price_for(dg.spec.gpu.id), s.achieved.output_tokens_per_s,
                                  s.achieved.simulated ? basis_sim : basis_static);
          cells.push_back(fmt(row["cost"]["usd_per_hour"].get<double>(), 2));
          cells.push_back(row["cost"]["usd_per_million_output_tokens"].is_null()
                              ? "n/a"
                              : fmt(row["cost"]["usd_per_million_output_tokens"].get<double>(), 3));
        } else {
          row["cost"] = nullptr;
          cells.insert(cells.end(), {"", ""});
        }
        if (!a.prices.empty()) {
          const Price pr = price_for(dg.spec.gpu.id);
          cells.insert(cells.end(), {pr.date, pr.source});
          priced_note += std::string(priced_note.empty() ? "prices: " : "; ") + dg.spec.gpu.id + " " + pr.date + ", " + pr.source;
        }
      }
      rows.push_back(row);
      c.rows.push_back(cells);
    }
    ok = any;
    results["comparison"] = rows;
    if (slo.any())
      results["slo"] = {{"method", simulated ? "simulation" : "static_model"},
                        {"percentile", slo.percentile},
                        {"targets", slo_targets_json(slo)}};
    extra = c;
  } else if (a.fewest_gpus || slo.any()) {
    const auto [max_gpus, max_tp] = search_bounds(a);
    const SloSearch ss = search_layout(d, a, slo, wl, max_gpus, max_tp, costed);
    const LayoutSearch& search = ss.search;
    ok = search.found;
    results["fewest_gpus"] = {{"found", search.found},
                              {"gpus", search.found ? search.gpus : 0},
                              {"llamacpp_layer_split", search.layer_split},
                              {"tensor_parallel_size", search.parallel.tp},
                              {"pipeline_parallel_size", search.parallel.pp},
                              {"expert_parallel_size", search.parallel.ep},
                              {"data_parallel_size", search.parallel.dp},
                              {"headroom_bytes", search.cell.headroom_bytes},
                              {"layouts_tried", search.layouts_tried}};
    if (slo.any() || a.no_pipeline_parallel) {
      results["fewest_gpus"]["pipeline_parallel_allowed"] = !a.no_pipeline_parallel;
      results["fewest_gpus"]["slo_rejected_layouts"] = ss.slo_rejected;
    }
    t.rows.push_back({"fewest " + d.spec.gpu.id + " for " + demand +
                          (slo.any() ? " meeting " + slo_text(slo) : ""),
                      search.found ? (human ? std::to_string(search.gpus) + " (" + search_layout_text(search) + ")" : std::to_string(search.gpus))
                                   : (human ? no_layout_text(d.spec.gpu, ss.slo_rejected, a.max_gpus) : "0"),
                      ""});
    if (!human && search.found)  // csv / jsonl: the layout as its own numbers, so the answer is the same in every format
      for (const auto& [what, v] : {std::pair{"tensor parallel size", search.parallel.tp}, std::pair{"pipeline parallel size", search.parallel.pp},
                                    std::pair{"data parallel size", search.parallel.dp}, std::pair{"expert parallel size", search.parallel.ep}})
        t.rows.push_back({std::string(what) + " of that layout", std::to_string(v), ""});
    if (slo.any()) {
      ojson sj = {{"method", simulated ? "simulation" : "static_model"},
                  {"percentile", slo.percentile},
                  {"targets", slo_targets_json(slo)},
                  {"achieved",
                   search.found ? ojson{{"ttft_ms", num_or_null(ss.achieved.ttft_ms)},
                                        {"tpot_ms", num_or_null(ss.achieved.tpot_ms)}}
                                : ojson(nullptr)},
                  {"pass", search.found}};
      if (simulated) {
        sj["workload"] = workload_inputs();
        if (search.found) {
          sj["achieved"]["completed"] = ss.achieved.completed;
          sj["achieved"]["failed"] = ss.achieved.failed;
        }
      } else {
        sj["concurrency"] = d.concurrency;
        sj["note"] = "the static model gives one value per layout (every percentile alike); --rate or --trace simulates";
      }
      results["slo"] = sj;
      if (search.found) t.rows.push_back({"performance of that layout", achieved_text(ss.achieved), ""});
    }
    if (search.found && costed)
      results["cost"] = cost_json(d.spec.gpu.id, search.gpus, price_for(d.spec.gpu.id),
                                  ss.achieved.output_tokens_per_s, ss.achieved.simulated ? basis_sim : basis_static);
  } else {
    const Planner p(d.spec);
    if (!p.engine().startup_ok) {
      // one contract with plan, sweep and check: a deployment that does not start fits nothing; say what would start
      const i64 longest = p.engine().estimated_max_model_len;
      results["starts"] = {{"startup_ok", false}, {"largest_max_model_len_that_starts", longest}};
      const bool llama = p.engine().kind == EngineKind::llamacpp;
      t.rows.push_back({llama ? "does not start; largest ctx-size that starts" : "does not start; largest max-model-len that starts",
                        human ? grouped(longest) : std::to_string(longest), "does_not_start"});
      if (llama && p.engine().suggested_gpu_layers >= 0) {
        results["starts"]["most_gpu_layers_that_start"] = p.engine().suggested_gpu_layers;
        t.rows.push_back({"does not start; most n-gpu-layers that start", std::to_string(p.engine().suggested_gpu_layers), "does_not_start"});
      }
    }
    if (p.engine().kind == EngineKind::llamacpp) {
      // llama.cpp's own answer to "how many layers fit at this context": its --fit with -ngl unset
      const LlamaFit lf = llamacpp_fit(d.spec);
      results["llama_fit"] = {{"n_ctx", lf.n_ctx},
                              {"n_gpu_layers", lf.n_gpu_layers},
                              {"total_layers", lf.total_layers},
                              {"n_cpu_moe", lf.n_cpu_moe},
                              {"fit_target_bytes", lf.margin_bytes},
                              {"fullest_gpu_bytes", lf.fullest_gpu_bytes},
                              {"leaves_fit_target", lf.fits}};
      std::string v = "-ngl " + std::to_string(lf.n_gpu_layers) + (lf.n_cpu_moe > 0 ? " --n-cpu-moe " + std::to_string(lf.n_cpu_moe) : "");
      t.rows.push_back({"llama.cpp --fit at -c " + grouped(lf.n_ctx) + " (" + human_bytes(lf.margin_bytes) + " left free)", v,
                        lf.fits ? "" : "gpu_memory"});
    }
    i64 full = 0;  // the max concurrency found, when that is the answer: the cost is priced there
    i64 n_found = -1, L_found = -1;  // the answers, when asked: the cost never prices a load that does not fit
    if (have_ctx || !have_conc) {
      const i64 n = p.max_concurrency(d.tokens, d.shared_prefix);
      n_found = n;
      if (!have_conc) full = n;
      const Cell next = p.cell(d.tokens, n + 1, d.shared_prefix);
      results["max_concurrency"] = {{"tokens_per_request", d.tokens}, {"max_concurrency", n}, {"next_limited_by", next.limiting}};
      t.rows.push_back({"max concurrency at " + grouped(d.tokens) + " tokens", human ? grouped(n) : std::to_string(n), next.limiting});
      ok = ok && n > 0;
    }
    if (have_conc) {
      const i64 L = p.max_context(d.concurrency, d.shared_prefix);
      L_found = L;
      const Cell next = p.cell(L + 1, d.concurrency, d.shared_prefix);
      results["max_context"] = {{"concurrency", d.concurrency}, {"max_tokens_per_request", L}, {"next_limited_by", next.limiting}};
      t.rows.push_back({"max tokens per request at " + grouped(d.concurrency) + " requests", human ? grouped(L) : std::to_string(L), next.limiting});
      ok = ok && L > 0;
    }
    if (costed) {
      // a deployment that does not start, or holds no request of this size, serves no tokens: its hours still cost
      const bool serves = p.engine().startup_ok && ok;
      // priced at the load the answer holds: the max concurrency found; with both a length and --concurrency, the
      // requests of that length that fit (when fewer than asked); with --concurrency alone, the longest requests that fit
      Deployment at = d;
      std::string basis = basis_static;
      if (full > 0) {
        at.concurrency = full;
        basis = "decode tokens/s of the static model at the max concurrency found (" + std::to_string(full) + ")";
      } else if (have_conc && have_ctx && n_found > 0 && n_found < d.concurrency) {
        at.concurrency = n_found;
        basis = "decode tokens/s of the static model at the " + std::to_string(n_found) + " requests that fit (of --concurrency " +
                std::to_string(d.concurrency) + ")";
      } else if (have_conc && !have_ctx && L_found > 0 && L_found < d.tokens) {
        at.tokens = L_found;
        at.output = std::min(at.output, L_found - 1);
        at.prompt = L_found - at.output;
        basis = "decode tokens/s of the static model at --concurrency with the max tokens per request found (" + std::to_string(L_found) + ")";
      }
      results["cost"] = cost_json(d.spec.gpu.id, deployment_gpus(d.spec), price_for(d.spec.gpu.id),
                                  serves ? static_perf(at, p, slo).output_tokens_per_s : 0.0,
                                  !serves ? "none: the deployment serves no request of this size" : basis);
    }
  }
  if (results.contains("cost")) {
    const ojson& c = results["cost"];
    const bool have = !c["usd_per_million_output_tokens"].is_null();
    const std::string what = std::to_string(c["gpus"].get<i64>()) + " x " + c["gpu"].get<std::string>();
    const double tps = c["output_tokens_per_s"].get<double>();
    std::string priced = "";  // the price's date and source, where the prices file gives them
    if (!c["price_date"].is_null()) priced += c["price_date"].get<std::string>();
    if (!c["price_source"].is_null()) priced += (priced.empty() ? "" : ", ") + c["price_source"].get<std::string>();
    if (human) {
      t.rows.push_back({"cost of " + what + (priced.empty() ? "" : " (priced " + priced + ")"), fmt(c["usd_per_hour"].get<double>(), 2) + " $/h", ""});
      t.rows.push_back({have ? "at " + fmt(tps, 1) + " output tokens/s" : "output tokens/s", have ? fmt(c["usd_per_million_output_tokens"].get<double>(), 3) + " $/Mtok" : "n/a (serves none)",
                        ""});
      if (have) t.rows.push_back({"output tokens per dollar", fmt(c["output_tokens_per_usd"].get<double>(), 0), ""});
    } else {
      // csv / jsonl: plain numbers, the unit in the question
      t.rows.push_back({"usd per hour of " + what + (priced.empty() ? "" : " (priced " + priced + ")"), fmt(c["usd_per_hour"].get<double>(), 4), ""});
      t.rows.push_back({"output tokens per second", fmt(tps, 2), ""});
      if (have) {
        t.rows.push_back({"usd per million output tokens", fmt(c["usd_per_million_output_tokens"].get<double>(), 4), ""});
        t.rows.push_back({"output tokens per usd", fmt(c["output_tokens_per_usd"].get<double>(), 0), ""});
      }
    }
  }
  g.exit_code = ok && strict.empty() ? 0 : 1;
  if (fmt_out == Format::json) {
    std::cout << envelope("kvplan.fit", "1.0.0", g.argv, profiles.sources(), deployment_inputs_json(d), results).dump(2, ' ', false, ojson::error_handler_t::replace) << "\n";
    return;
  }
  if (extra) {
    if (!t.rows.empty()) std::cout << render(t, fmt_out) << "\n";
    std::cout << render(*extra, fmt_out);
    if (fmt_out == Format::table && !priced_note.empty()) std::cout << priced_note << "\n";
    return;
  }
  std::cout << render(t, fmt_out);
}

}  // namespace

void register_fit(CLI::App& app, Globals& g) {
  auto a = std::make_shared<FitArgs>();
  auto* c = app.add_subcommand("fit",
                               "Largest concurrency at --context, longest context at --concurrency, or --fewest-gpus for both; "
                               "with --slo-ttft-ms / --slo-tpot-ms the fewest GPUs that also meet them, --find-max-rate the "
                               "highest request rate that does, --gpu A,B,C a comparison, --price-per-gpu-hour / --prices the cost "
                               "(exit 1 when nothing fits or meets the targets, 2 bad input)");
  add_deploy_options(c, a->d);
  c->add_flag("--fewest-gpus", a->fewest_gpus, "Search GPU counts and TP x PP x DP layouts for the smallest that fits");
  c->add_option("--max-gpus", a->max_gpus, "Upper bound of the search")->capture_default_str();
  c->add_option("--max-tp", a->max_tp, "Largest tensor-parallel size (GPUs per node)")->capture_default_str();
  c->add_flag("--no-pipeline-parallel", a->no_pipeline_parallel, "Layout searches try pipeline-parallel size 1 only");
  auto* s = c->add_option_group("latency targets and cost");
  s->add_option("--slo-ttft-ms", a->slo_ttft_ms,
                "Target time to first token: the layout search (implied) keeps layouts meeting it; the static model "
                "at --concurrency, or the simulator with --rate / --trace");
  s->add_option("--slo-tpot-ms", a->slo_tpot_ms, "Target time per output token (as --slo-ttft-ms)");
  s->add_option("--slo-percentile", a->slo_percentile,
                "50 | 90 | 99: the simulated percentile the targets apply to (the static model gives one value)")
      ->capture_default_str();
  s->add_flag("--find-max-rate", a->find_max_rate,
              "Highest Poisson arrival rate (req/s) meeting the targets for the deployment as given: geometric "
              "bisection over 0.01..10000 req/s to 1% with at most 20 simulations (same --seed each)");
  s->add_option("--price-per-gpu-hour", a->price_per_gpu_hour,
                "US dollars per GPU-hour (one GPU type): $/hour, $ per million output tokens, output tokens per $");
  s->add_option("--prices", a->prices,
                "JSON FILE of prices per GPU id: {\"h100-sxm\": {\"usd_per_gpu_hour\": 2.5, \"date\": \"YYYY-MM-DD\", "
                "\"source\": \"...\"}}; every price needs its date and source (kvplan ships none)");
  auto* wl = c->add_option_group("simulated workload (with --slo-*: --rate / --trace simulate; --find-max-rate)");
  add_workload_options(wl, a->w, a->d, false);
  c->add_option("--format", a->format, "table | md | csv | json | jsonl")->capture_default_str();
  c->callback([a, &g, c] {
    a->slo_percentile_given = c->count("--slo-percentile") > 0;
    a->max_gpus_given = c->count("--max-gpus") > 0;
    a->max_tp_given = c->count("--max-tp") > 0;
    run_fit(*a, g);
  });
}

}  // namespace kvplan::cli
