// The simulated workload as simulate and fit take it from flags (sim_options.hpp).
#include "sim_options.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "kvplan/io/files.hpp"

namespace kvplan::cli {

namespace {

std::string fmt_percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// "20", "20%" or "0.2"? Spreads are percentages: 20 and 20% mean +-20%.
double parse_percent(const std::string& s, const std::string& flag) {
  std::string t = s;
  const bool sign = !t.empty() && t.back() == '%';
  if (sign) t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v) || v < 0 || v > 1000)
    throw InputError(flag, "expected a percentage >= 0 (20 or 20% for +-20% of the mean), got '" + s + "'");
  // 0.2 is as likely a fraction (+-20%) as +-0.2%: a bare value between 0 and 1 must say which
  if (!sign && v > 0 && v < 1)
    throw InputError(flag, "'" + s + "' is a percentage, +-" + s + "% of the mean",
                     "write " + s + "% if that is meant, or " + fmt_percent(v * 100) + " for +-" +
                         fmt_percent(v * 100) + "%");
  return v / 100.0;
}

LengthDist length_dist(const std::string& dist_flag, const std::string& dist, const std::string& spread_flag,
                       const std::string& spread, const std::string& hist_flag, const std::string& hist, i64 mean) {
  LengthDist l;
  l.mean = static_cast<double>(mean);
  l.min = 1;
  const std::string kind = dist.empty() ? (hist.empty() ? "fixed" : "histogram") : dist;
  if (kind == "fixed")
    l.kind = LengthDist::Kind::fixed;
  else if (kind == "uniform")
    l.kind = LengthDist::Kind::uniform;
  else if (kind == "normal")
    l.kind = LengthDist::Kind::normal;
  else if (kind == "lognormal")
    l.kind = LengthDist::Kind::lognormal;
  else if (kind == "histogram")
    l.kind = LengthDist::Kind::histogram;
  else
    throw InputError(dist_flag, "unknown distribution '" + dist + "'",
                     "use fixed, uniform, normal, lognormal or histogram");
  if (l.kind == LengthDist::Kind::histogram) {
    if (hist.empty())
      throw InputError(dist_flag, "histogram needs a file", "give " + hist_flag + " FILE (tokens,weight rows)");
    if (!spread.empty()) throw InputError(spread_flag, "a histogram has no spread", "leave " + spread_flag + " out");
    l.histogram = io::read_length_histogram(hist);
    double w = 0, sum = 0;
    for (const auto& [t, x] : l.histogram) {
      w += x;
      sum += x * static_cast<double>(t);
    }
    l.mean = sum / w;
    return l;
  }
  if (!hist.empty())
    throw InputError(hist_flag, "a histogram file with " + dist_flag + " " + kind,
                     "leave " + dist_flag + " out or give histogram");
  if (l.kind == LengthDist::Kind::fixed) {
    if (!spread.empty())
      throw InputError(spread_flag, "a fixed length has no spread",
                       "give " + dist_flag + " uniform, normal or lognormal");
  } else {
    if (spread.empty())
      throw InputError(dist_flag, kind + " needs a spread", "give " + spread_flag + " P (+-P% of the mean)");
    l.spread = parse_percent(spread, spread_flag);
    if (l.kind == LengthDist::Kind::uniform && l.spread > 1)  // mean +- more than the mean: negative lengths
      throw InputError(spread_flag, "a uniform spread is at most 100 (+-100% of the mean), got '" + spread + "'",
                       "give a spread from 0 to 100, or a lognormal distribution for a longer tail");
    // a normal length is drawn and held at 1 token or more: past a standard deviation of half the mean that floor moves
    // the mean (by +8% at 100%, +76% at 300%), so the distribution would not be the one asked for
    if (l.kind == LengthDist::Kind::normal && l.spread > 0.5)
      throw InputError(spread_flag, "a normal spread is at most 50 (a standard deviation of half the mean), got '" + spread + "'",
                       "give a spread from 0 to 50, or a lognormal distribution (positive, any spread)");
  }
  return l;
}

ojson dist_json(const LengthDist& l) {
  static const char* names[] = {"fixed", "uniform", "normal", "lognormal", "histogram"};
  ojson j = {{"distribution", names[static_cast<int>(l.kind)]}, {"mean_tokens", l.mean}};
  if (l.kind != LengthDist::Kind::fixed && l.kind != LengthDist::Kind::histogram) j["spread_fraction"] = l.spread;
  if (l.kind == LengthDist::Kind::histogram) {
    ojson h = ojson::array();
    for (const auto& [t, w] : l.histogram) h.push_back({t, w});
    j["histogram"] = h;
  }
  return j;
}


}  // namespace

std::string length_text(const LengthDist& l) {
  const auto pct = [](double f) { return fmt(f * 100.0, f * 100.0 < 10 ? 1 : 0) + "%"; };
  switch (l.kind) {
    case LengthDist::Kind::fixed:
      return grouped(static_cast<i64>(std::llround(l.mean)));
    case LengthDist::Kind::uniform:
      return grouped(static_cast<i64>(std::llround(l.mean))) + " +- " + pct(l.spread) + " (uniform)";
    case LengthDist::Kind::normal:
    case LengthDist::Kind::lognormal:
      return grouped(static_cast<i64>(std::llround(l.mean))) + " (" + (l.kind == LengthDist::Kind::normal ? "normal" : "lognormal") +
             ", sd " + pct(l.spread) + ")";
    case LengthDist::Kind::histogram:
      return "histogram (mean " + fmt(l.mean, 1) + ")";
  }
  return "";
}

std::string lengths_text(const WorkloadSpec& w) {
  return length_text(w.prompt) + " prompt + " + length_text(w.output) + " output tokens" +
         (w.shared_prefix_tokens > 0 ? " after a " + grouped(w.shared_prefix_tokens) + "-token shared prefix" : "");
}

ojson stats_ms(const LatencyStats& s) {
  // a statistic over no sample (TPOT when every output is one token) is null, not 0 ms
  const auto ms = [&](double v) { return s.count > 0 ? ojson(v * 1e3) : ojson(nullptr); };
  return {{"mean", ms(s.mean)}, {"p50", ms(s.p50)}, {"p90", ms(s.p90)}, {"p99", ms(s.p99)}, {"count", s.count}};
}

FailureText failure_text(Failure f, const SimConfig& cfg) {
  const bool llama = cfg.scheduler == SchedulerKind::llamacpp;
  switch (f) {
    case Failure::none: break;
    case Failure::over_context:
      if (llama)
        return {"prompt does not fit a slot's context: llama-server answers HTTP 400 (exceed_context_size_error)",
                "shorter prompts, a larger ctx-size or fewer parallel slots"};
      if (cfg.scheduler == SchedulerKind::sglang)  // the tokenizer manager refuses input + max_new_tokens >= context_len
        return {"prompt + output tokens reach the context length " + grouped(cfg.max_model_len) + ": SGLang answers HTTP 400",
                "shorter requests, or a larger --context-length"};
      return {"prompt + output tokens over max_model_len " + grouped(cfg.max_model_len) +
                  ": the engine answers HTTP 400",
              "shorter requests, or a larger max-model-len"};
    case Failure::over_pool: {
      // vLLM V1 keeps one block as its null block: requests use the others
      const bool null_block = cfg.scheduler == SchedulerKind::vllm_v1;
      if (!cfg.cache_groups.empty())  // a hybrid's groups hold different shares of a request: blocks, not tokens
        return {"needs more blocks than a replica's whole KV pool holds (" + grouped(cfg.pool_blocks) + " blocks shared by " +
                    grouped(sim_pool_groups(cfg)) + " KV cache groups, less vLLM's null block)",
                "shorter requests, more GPUs per replica (tp) or more memory for the KV cache"};
      const i64 usable = null_block ? cfg.pool_blocks - 1 : cfg.pool_blocks;
      return {"longer than a replica's whole KV pool (" + grouped(mul(usable, cfg.block_tokens, "pool tokens")) + " tokens" +
                  (null_block ? ", its " + grouped(cfg.pool_blocks) + " blocks less vLLM's null block" : std::string()) + ")",
              "shorter requests, more GPUs per replica (tp) or more memory for the KV cache"};
    }
    case Failure::over_step_budget:
      return {"prompt over max_num_batched_tokens " + grouped(cfg.max_num_batched_tokens) +
                  " with chunked prefill off",
              "a larger max-num-batched-tokens (TensorRT-LLM: max_num_tokens), or chunked prefill on"};
    case Failure::terminated:
      return {"terminated: the unified KV pool filled with every idle slot purged (llama-server)",
              "fewer parallel slots or a larger ctx-size"};
    case Failure::unschedulable:
      return {"could never be scheduled at the head of the queue", "shorter requests or a larger KV pool"};
  }
  return {};
}

ojson failures_json(const SimResult& r) {
  ojson j = ojson::object();
  for (int k = 1; k < kFailureKinds; ++k) j[failure_name(static_cast<Failure>(k))] = r.failed_by[static_cast<size_t>(k)];
  return j;
}

std::string failures_line(const SimResult& r, const SimConfig& cfg) {
  std::string s;
  for (int k = 1; k < kFailureKinds; ++k) {
    const i64 n = r.failed_by[static_cast<size_t>(k)];
    if (n == 0) continue;
    const auto f = static_cast<Failure>(k);
    s += (s.empty() ? "" : "; ") + grouped(n) + " " + failure_name(f) + " (" + failure_text(f, cfg).why + ")";
  }
  return s;
}

std::string commonest_failure_fix(const SimResult& r, const SimConfig& cfg) {
  if (r.failed == 0) return "";
  int worst = 1;
  for (int k = 2; k < kFailureKinds; ++k)
    if (r.failed_by[static_cast<size_t>(k)] > r.failed_by[static_cast<size_t>(worst)]) worst = k;
  return failure_text(static_cast<Failure>(worst), cfg).fix;
}

SimConfig sim_config(const Deployment& d, const Planner& p) {
  const EngineKind k = p.spec().engine.kind;
  if (k == EngineKind::generic) return sim_config_for(p, d.perf);  // which refuses the generic engine
  // vLLM's two policies were checked when the deployment was built (settings.cpp apply_scheduling_policy)
  if (const auto v = d.bag.text("scheduling_policy"); v && k != EngineKind::vllm && *v != "fcfs" && !(k == EngineKind::sglang && *v == "lpm"))
    d.bag.fail("scheduling_policy", "'" + *v + "' is not a policy kvplan simulates for " + engine_name(k),
               k == EngineKind::sglang ? "use fcfs or lpm" : "use fcfs");
  return sim_config_for(p, d.perf);
}

void require_completions(const SimResult& r, const SimConfig& cfg, const std::string& where) {
  if (r.requests == 0)  // only a trace can be empty: --requests is at least 1
    throw InputError(where, "no request to simulate: the trace has no rows", "give it at least one row after its header");
  if (r.completed > 0) return;
  throw InputError(where, "no request completed: " + failures_line(r, cfg), commonest_failure_fix(r, cfg));
}

void check_slo_ms(const std::optional<double>& ms, const char* flag) {
  if (ms && !(*ms > 0 && *ms <= 1e9)) throw InputError(flag, "must be > 0 and at most 10^9 ms");
}

Workload build_workload(const WorkloadArgs& a, const Deployment& d, bool closed) {
  const auto given = [&](const char* key) { return d.bag.has(key); };
  const bool traced = !a.trace.empty();
  if (a.rate && closed)
    throw InputError("--rate", "a rate and --concurrency together",
                     "give --rate R (open loop) or --concurrency N (closed loop), not both");
  if (a.rate && !(*a.rate > 0 && *a.rate <= 1e9))
    throw InputError("--rate", "must be > 0 and at most 10^9 requests/s",
                     "give --rate 10, or leave it out to send every request at once");
  if (a.requests && *a.requests < 1) throw InputError("--requests", "must be >= 1", "give the number of requests to send, such as 1000");
  if (a.burstiness && !(*a.burstiness > 0)) throw InputError("--burstiness", "must be > 0 (1 = Poisson; < 1 burstier)");
  const std::string arrival = a.arrival.empty() ? (a.burstiness ? "gamma" : "poisson") : a.arrival;
  if (arrival != "poisson" && arrival != "constant" && arrival != "gamma")
    throw InputError("--arrival", "unknown arrival process '" + a.arrival + "'", "use poisson, constant or gamma");
  if (a.burstiness && arrival != "gamma")
    throw InputError("--burstiness", "applies to gamma arrivals", "give --arrival gamma or leave --arrival out");
  if (!a.arrival.empty() && !a.rate)
    throw InputError("--arrival", "an arrival process needs a rate", "give --rate R (requests/s)");
  if (a.think_s && !(*a.think_s >= 0 && *a.think_s <= kMaxSimClockS)) throw InputError("--think-s", "must be from 0 to 10^9 seconds");
  if (a.requests && *a.requests > kMaxSimRequests)
    throw InputError("--requests", "at most " + std::to_string(kMaxSimRequests) + " in one run",
                     "simulate fewer requests (the percentiles settle long before), or replay a trace");
  if (a.requests && *a.requests > kMaxSimBurst && !a.rate && !closed && !traced)
    throw InputError("--requests", "at most " + std::to_string(kMaxSimBurst) + " sent all at once (each waits in memory)",
                     "give --rate R or --concurrency N to send them over time");
  if (a.rate && arrivals_outrun_clock(static_cast<double>(a.requests.value_or(1000)), *a.rate))
    throw InputError("--rate", kArrivalSpanProblem, kArrivalSpanFix);
  if (a.turns && *a.turns < 1) throw InputError("--turns", "must be >= 1", "give the turns of each conversation (1: single requests)");
  if (a.prefix_groups && *a.prefix_groups < 1)
    throw InputError("--prefix-groups", "must be >= 1", "give the number of distinct shared prefixes (1: one system prompt)");
  // options that only shape something else: alone they would be ignored without a word
  if (a.burstiness && !a.rate && !traced)
    throw InputError("--burstiness", "shapes the gaps between arrivals at a rate", "give --rate R (requests/s), or leave --burstiness out");
  if (a.think_s && !traced && a.turns.value_or(1) < 2)
    throw InputError("--think-s", "is the pause between the turns of a session", "give --turns T (2 or more), or leave --think-s out");
  if (a.prefix_groups && !traced && d.shared_prefix <= 0)
    throw InputError("--prefix-groups", "splits the shared system prompt into groups",
                     "give --shared-prefix-tokens N, or leave --prefix-groups out");
  if (!traced && !a.prompt_hist.empty() && (given("prompt_tokens") || given("context")))
    throw InputError("--prompt-histogram", "draws the prompt lengths that --prompt-tokens / --context also give",
                     "give the histogram or the lengths, not both");
  if (!traced && !a.output_hist.empty() && given("output_tokens"))
    throw InputError("--output-histogram", "draws the output lengths that --output-tokens also gives",
                     "give the histogram or --output-tokens, not both");
  if (traced) {
    // the trace gives arrivals and lengths: generator options would be silently ignored
    const std::vector<std::pair<bool, const char*>> clash = {{a.rate.has_value(), "--rate"},
                                                             {!a.arrival.empty(), "--arrival"},
                                                             {a.burstiness.has_value(), "--burstiness"},
                                                             {given("prompt_tokens"), "--prompt-tokens"},
                                                             {given("output_tokens"), "--output-tokens"},
                                                             {given("context"), "--context"},
                                                             {!a.prompt_dist.empty(), "--prompt-dist"},
                                                             {!a.output_dist.empty(), "--output-dist"},
                                                             {!a.prompt_hist.empty(), "--prompt-histogram"},
                                                             {!a.output_hist.empty(), "--output-histogram"},
                                                             {a.turns.has_value(), "--turns"},
                                                             {a.think_s.has_value(), "--think-s"},
                                                             {a.prefix_groups.has_value(), "--prefix-groups"}};
    if (a.seed) throw InputError("--seed", "seeds the workload generator, which the trace replaces", "leave --seed out with --trace");
    for (const auto& [on, flag] : clash)
      if (on)
        throw InputError(flag, "the trace gives arrivals and lengths",
                         std::string("leave ") + flag + " out with --trace (or drop --trace)");
  }

  Workload out;
  out.closed = closed;
  out.traced = traced;
  out.arrival = arrival;
  WorkloadSpec& w = out.spec;
  w.requests = a.requests.value_or(1000);
  w.seed = a.seed.value_or(0);
  w.rate = a.rate.value_or(0);
  w.arrival = arrival == "constant" ? ArrivalKind::constant
              : arrival == "gamma"  ? ArrivalKind::gamma
                                    : ArrivalKind::poisson;
  w.burstiness = a.burstiness.value_or(1.0);
  i64& prompt = out.prompt;
  i64& output = out.output;
  prompt = kDefaultPrompt;
  output = kDefaultOutput;
  {
    const auto& wk = d.base.work;
    if (wk.output) output = *wk.output;
    if (wk.prompt) prompt = *wk.prompt;
    if (wk.context && !wk.prompt) prompt = *wk.context - output - d.shared_prefix;  // the prefix comes before it
    if (wk.context && wk.prompt && !wk.output) output = *wk.context - prompt - d.shared_prefix;
    if (prompt < 1 && wk.prompt) throw InputError("--prompt-tokens", "must be >= 1 (a request has a prompt)");
    if (prompt < 1)
      throw InputError(
          "--context",
          "leaves " + std::to_string(prompt) + " prompt tokens after " + std::to_string(output) + " output tokens" +
              (d.shared_prefix > 0 ? " and the " + std::to_string(d.shared_prefix) + "-token shared prefix" : ""),
          "give --prompt-tokens and --output-tokens");
    if (output < 1) throw InputError("--output-tokens", "must be >= 1");
  }
  if (!traced) {
    w.prompt = length_dist("--prompt-dist", a.prompt_dist, "--prompt-spread", a.prompt_spread, "--prompt-histogram",
                           a.prompt_hist, prompt);
    w.output = length_dist("--output-dist", a.output_dist, "--output-spread", a.output_spread, "--output-histogram",
                           a.output_hist, output);
  } else if (!a.prompt_spread.empty() || !a.output_spread.empty()) {
    throw InputError(!a.prompt_spread.empty() ? "--prompt-spread" : "--output-spread", "the trace gives the lengths",
                     "leave it out with --trace");
  }
  w.shared_prefix_tokens = d.shared_prefix;
  w.prefix_groups = a.prefix_groups.value_or(1);
  w.turns = a.turns.value_or(1);
  w.think_s = a.think_s.value_or(0);

  return out;
}

std::unique_ptr<RequestSource> open_requests(const Workload& w, const WorkloadArgs& a, const Deployment& d,
                                             io::TraceSource** trace) {
  if (!w.traced) return make_workload(w.spec);
  io::TraceOptions o;
  o.max_rows = a.requests.value_or(-1);
  o.require_sorted = !w.closed;
  o.default_prefix_tokens = d.shared_prefix;
  auto t = std::make_unique<io::TraceSource>(a.trace, o);
  if (trace) *trace = t.get();
  return t;
}

ojson workload_json(const Workload& wl, const WorkloadArgs& a, const Deployment& d) {
  const WorkloadSpec& w = wl.spec;
  const bool closed = wl.closed, traced = wl.traced;
  const std::string& arrival = wl.arrival;
  ojson wj;
  wj["mode"] = closed ? "closed_loop" : "open_loop";
  wj["source"] = traced ? "trace" : "generator";
  wj["requests"] = traced ? (a.requests ? ojson(*a.requests) : ojson(nullptr)) : ojson(w.requests);
  wj["concurrency"] = closed ? ojson(d.concurrency) : ojson(nullptr);
  if (!traced) {
    // rate null: every request at t = 0 (vllm bench serve --request-rate inf)
    wj["rate_per_s"] = closed || !a.rate ? ojson(nullptr) : ojson(w.rate);
    wj["arrival"] = closed ? "closed_loop" : (a.rate ? arrival : "all_at_once");
    wj["burstiness"] = w.burstiness;
    wj["prompt"] = dist_json(w.prompt);
    wj["output"] = dist_json(w.output);
    wj["shared_prefix_tokens"] = w.shared_prefix_tokens;
    wj["prefix_groups"] = w.prefix_groups;
    wj["turns"] = w.turns;
    wj["think_s"] = w.think_s;
    wj["seed"] = w.seed;
  }
  return wj;
}

void add_workload_options(CLI::App* wl, WorkloadArgs& a, DeployArgs& d, bool closed_loop) {
  // --shared-prefix-tokens: the deployment's --shared-prefix under the name the workload options use
  DeployArgs* dp = &d;
  wl->add_option_function<std::string>(
      "--shared-prefix-tokens",
      [dp](const std::string& v) {
        set_flag(*dp, "shared_prefix", "--shared-prefix-tokens", v);
      },
      "same as --shared-prefix: tokens of a system prompt added before every "
      "(first-turn) prompt");
  wl->add_option("--rate", a.rate,
                 closed_loop ? "Open loop: requests per second (default: every request at t "
                               "= 0, as vllm bench serve --request-rate inf); "
                               "--concurrency N is the closed loop (N clients, each sends "
                               "its next request when the last finished)"
                             : "Open loop: requests per second of the simulated workload (the --slo-* targets "
                               "are then checked by simulation, not by the static model)");
  wl->add_option("--arrival", a.arrival, "poisson (default) | constant | gamma: inter-arrival times at --rate");
  wl->add_option("--burstiness", a.burstiness,
                 "Gamma shape (vllm bench serve --burstiness): 1 = Poisson, < "
                 "1 burstier; implies --arrival gamma");
  wl->add_option("--prompt-dist", a.prompt_dist,
                 "fixed (default) | uniform | normal | lognormal | histogram: "
                 "prompt lengths around --prompt-tokens (default 1024)");
  wl->add_option("--output-dist", a.output_dist,
                 "fixed (default) | uniform | normal | lognormal | histogram: "
                 "output lengths around --output-tokens (default 128)");
  wl->add_option("--prompt-spread", a.prompt_spread,
                 "+-P% of the mean prompt length (uniform: the range; normal "
                 "and lognormal: one standard deviation)");
  wl->add_option("--output-spread", a.output_spread, "+-P% of the mean output length");
  wl->add_option("--prompt-histogram", a.prompt_hist, "FILE of tokens,weight rows: prompt lengths drawn from it");
  wl->add_option("--output-histogram", a.output_hist, "FILE of tokens,weight rows: output lengths drawn from it");
  wl->add_option("--prefix-groups", a.prefix_groups,
                 "Distinct shared prefixes (system prompts) of --shared-prefix "
                 "tokens, dealt round-robin (default 1)");
  wl->add_option("--turns", a.turns,
                 "Multi-turn sessions: turn k's prompt holds the history of "
                 "turns < k (default 1)");
  wl->add_option("--think-s", a.think_s,
                 "Seconds between a turn's last token and the session's next "
                 "turn (default 0)");
  wl->add_option("--trace", a.trace,
                 "Replay a CSV or JSONL trace, streamed (arrival, prompt and "
                 "output tokens; Azure LLM inference, "
                 "BurstGPT and Mooncake layouts; docs/simulation.md)");
  wl->add_option("--requests", a.requests,
                 "Requests to simulate (default 1000; with --trace: the first "
                 "N rows, default all)");
  wl->add_option("--seed", a.seed,
                 "Seed of the workload generator: the same seed gives the same "
                 "output (default 0)")
      ->check(CLI::Validator(
          [](std::string& v) {  // -1 would wrap to 2^64 - 1
            return v.find('-') == std::string::npos ? std::string() : "must be >= 0 (got " + v + ")";
          },
          ""));
}

}  // namespace kvplan::cli
