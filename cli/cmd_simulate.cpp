// `kvplan simulate MODEL`: requests through the engine's scheduler and paged KV pool, step by step, on the
// deployment `plan` describes (same flags, pasted engine command, --set). Workloads: closed loop
// (--concurrency), open loop (--rate, Poisson / constant / gamma), length distributions, shared prefixes,
// multi-turn sessions, or a trace file streamed row by row. Outputs the vllm bench serve metrics (TTFT, TPOT,
// ITL, E2E; throughputs; goodput), preemptions, prefix hits and a timeline. Exit 0 ran, 1 the deployment does
// not start, 2 bad input, 3 runtime failure.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "kvplan/core/simulate.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/files.hpp"
#include "kvplan/io/trace.hpp"
#include "output.hpp"
#include "report.hpp"
#include "report_build.hpp"
#include "sim_options.hpp"
#include "version.hpp"

namespace kvplan::cli {

namespace {

// The coefficient behind SimConfig::frontend_s for this engine (sim_config_for)
std::string frontend_coefficient(const EngineSettings& e) {
  if (vllm_in_process(e))
    return "in-process, --usage-context " + e.usage_context + ": no API server";
  return e.kind == EngineKind::llamacpp ? "frontend_llamacpp_s" : "frontend_s";
}

constexpr const char* kDefinitions =
    "vllm bench serve definitions: TTFT = first token - arrival; TPOT = (E2E - "
    "TTFT) / (output tokens - 1) per request "
    "(excludes the first token; requests with one token are left out); ITL = "
    "every gap between consecutive tokens, pooled "
    "over requests; E2E = last token - arrival; percentiles by linear "
    "interpolation (numpy); throughputs = completed "
    "requests / tokens over the run (first arrival to last finish); goodput = "
    "requests meeting every given SLO / duration";

struct SimArgs {
  DeployArgs d;
  std::string format = "table";
  OutputFiles out;
  WorkloadArgs w;
  std::optional<double> slo_ttft_ms, slo_tpot_ms, timeline_interval_s;
  std::string per_request;
};


// One latency row in milliseconds; "n/a" where no request gave the metric (every request failed, or one
// output token each: no TPOT).
std::vector<std::string> latency_row(const std::string& name, const LatencyStats& st, bool with_count) {
  const auto v = [&](double x) { return st.count > 0 ? fmt(x * 1e3, 2) : std::string("n/a"); };
  std::vector<std::string> row{name, v(st.mean), v(st.p50), v(st.p90), v(st.p99)};
  if (with_count) row.push_back(grouped(st.count));
  return row;
}

const char* cache_kind_name(SimCacheGroup::Kind k) {
  switch (k) {
    case SimCacheGroup::Kind::full:
      return "full";
    case SimCacheGroup::Kind::sliding:
      return "sliding";
    case SimCacheGroup::Kind::chunked:
      return "chunked";
    case SimCacheGroup::Kind::state:
      return "state";
    case SimCacheGroup::Kind::fixed:
      return "fixed";
  }
  return "?";
}

// The pool of one replica: "N blocks x B tokens", or for a hybrid vLLM model the physical blocks, the groups drawing
// on them and the size vLLM prints ("N blocks shared by 2 KV cache groups (1 full, 1 sliding-window 128 tokens), blocks
// of 16 tokens; KV cache size T tokens").
std::string pool_text(const SimConfig& cfg) {
  if (cfg.cache_groups.empty()) return grouped(cfg.pool_blocks) + " blocks x " + grouped(cfg.block_tokens) + " tokens";
  std::string kinds;
  bool one_block = true;
  for (const SimCacheGroup& g : cfg.cache_groups) {
    kinds += (kinds.empty() ? "" : ", ") + grouped(g.groups) + " " + cache_kind_name(g.kind);
    if (g.kind == SimCacheGroup::Kind::sliding) kinds += "-window " + grouped(g.window) + " tokens";
    if (g.kind == SimCacheGroup::Kind::chunked) kinds += " " + grouped(g.window) + "-token chunks";
    if (g.block_tokens != cfg.block_tokens) kinds += " in " + grouped(g.block_tokens) + "-token blocks";
    one_block = one_block && g.block_tokens == cfg.block_tokens;
  }
  const i64 n = sim_pool_groups(cfg);
  return grouped(cfg.pool_blocks) + " blocks shared by " + grouped(n) + " KV cache group" + (n == 1 ? "" : "s") + " (" + kinds + ")" +
         (one_block ? ", blocks of " + grouped(cfg.block_tokens) + " tokens" : "") + "; KV cache size " + grouped(cfg.report_tokens) + " tokens";
}

const char* scheduler_name(SchedulerKind k) {
  switch (k) {
    case SchedulerKind::vllm_v1:
      return "vllm-v1";
    case SchedulerKind::vllm_v0:
      return "vllm-v0";
    case SchedulerKind::sglang:
      return "sglang";
    case SchedulerKind::trtllm:
      return "trtllm";
    case SchedulerKind::llamacpp:
      return "llama.cpp";
  }
  return "?";
}

/// The --per-request CSV, streamed to a temporary file beside the target and renamed into place only when the
/// run succeeds (no partial file after an error; an existing file stays untouched).
class PerRequestWriter {
 public:
  explicit PerRequestWriter(const std::string& path) : path_(path) {
    if (path.empty()) return;
    // a device or FIFO (/dev/null, /dev/stdout, a pipe) is streamed into as it is, never replaced by a renamed file
    target_ = io::write_target(path);  // a symbolic link keeps pointing at the file, which is replaced
    direct_ = io::is_special_file(target_);
    if (!direct_) {
      tmp_ = target_ + ".tmp-" + std::to_string(::getpid());
      guard_ = std::make_unique<io::TempFileGuard>(tmp_);  // Ctrl-C or a kill during the run removes it
    }
    f_ = std::fopen(direct_ ? path.c_str() : tmp_.c_str(), "wb");
    if (!f_) throw RuntimeFailure("--per-request: " + path + ": cannot write");
    std::fputs(
        "id,arrival_s,first_token_s,finish_s,ttft_s,e2e_s,prompt_tokens,output_"
        "tokens,cached_prompt_tokens,preemptions,failed,truncated,failure\n",
        f_);
  }
  ~PerRequestWriter() {
    if (f_) std::fclose(f_);
    if (!tmp_.empty() && !committed_) std::remove(tmp_.c_str());
  }
  PerRequestWriter(const PerRequestWriter&) = delete;
  PerRequestWriter& operator=(const PerRequestWriter&) = delete;
  bool active() const { return f_ != nullptr; }
  void write(const RequestRecord& r) {
    const bool started = r.first_token_s >= 0, done = r.finish_s >= 0;
    // clock times to the microsecond (fixed: a run's clock reaches 10^9 s, where 9 significant digits keep only tenths);
    // the latencies beside them to 9 significant digits
    std::fprintf(f_, "%lld,%.6f,%s,%s,%s,%s,%lld,%lld,%lld,%lld,%d,%d,%s\n", static_cast<long long>(r.id), r.arrival_s,
                 started ? num("%.6f", r.first_token_s).c_str() : "", done ? num("%.6f", r.finish_s).c_str() : "",
                 started ? num("%.9g", r.first_token_s - r.arrival_s).c_str() : "",
                 done ? num("%.9g", r.finish_s - r.arrival_s).c_str() : "", static_cast<long long>(r.prompt_tokens),
                 static_cast<long long>(r.output_tokens), static_cast<long long>(r.cached_prompt_tokens),
                 static_cast<long long>(r.preemptions), r.failed ? 1 : 0, r.truncated ? 1 : 0,
                 failure_name(r.failure));
  }
  void commit() {
    if (!f_) return;
    const bool bad = std::fflush(f_) != 0 || std::ferror(f_);
    std::fclose(f_);
    f_ = nullptr;
    if (bad) throw RuntimeFailure("--per-request: " + path_ + ": write failed");
    if (direct_) return;
    std::error_code ec;
    std::filesystem::rename(tmp_, target_, ec);
    if (ec) throw RuntimeFailure("--per-request: " + path_ + ": " + ec.message());
    committed_ = true;
    guard_.reset();
  }

 private:
  bool direct_ = false;
  static std::string num(const char* spec, double v) {  // %.6f of a clock up to 10^9 s is 17 characters
    char b[48];
    std::snprintf(b, sizeof b, spec, v);
    return b;
  }
  std::string path_, target_, tmp_;
  std::FILE* f_ = nullptr;
  bool committed_ = false;
  std::unique_ptr<io::TempFileGuard> guard_;
};

Report make_report(const Deployment& d, const SimResult& r, const SimConfig& cfg, const std::string& title,
                   const std::string& workload_line, bool slo) {
  Report rep;
  rep.title = "kvplan simulation: " + d.spec.model.id;
  rep.generated_by = std::string("kvplan ") + kVersion + " (" + kGitSha + ")";
  ReportSection s;
  s.title = title;
  s.summary = {{"workload", workload_line},
               {"requests", grouped(r.requests) + " (completed " + grouped(r.completed) + ", failed " +
                                grouped(r.failed) + ", truncated " + grouped(r.truncated) + ")"},
               {"duration", fmt(r.duration_s, 2) + " s simulated, " + grouped(r.steps) + " engine steps"},
               {"TTFT p50 / p99", fmt(r.ttft_s.p50 * 1e3, 1) + " / " + fmt(r.ttft_s.p99 * 1e3, 1) + " ms"},
               {"TPOT p50 / p99", r.tpot_s.count > 0 ? fmt(r.tpot_s.p50 * 1e3, 2) + " / " + fmt(r.tpot_s.p99 * 1e3, 2) + " ms"
                                                     : "n/a (no request produced two tokens)"},
               {"throughput", fmt(r.request_throughput_per_s, 2) + " req/s, " + fmt(r.output_tokens_per_s, 1) +
                                  " output tokens/s, " + fmt(r.total_tokens_per_s, 1) + " total tokens/s"}};
  if (slo)
    s.summary.emplace_back("goodput",
                           fmt(r.goodput_per_s, 2) + " req/s (" + grouped(r.good_requests) + " requests met the SLO)");
  if (r.failed > 0) s.summary.emplace_back("failed requests", failures_line(r, cfg));
  s.summary.emplace_back("preemptions", grouped(r.preemptions));
  s.summary.emplace_back("prefix cache hit rate", fmt(100.0 * r.prefix_hit_rate, 1) + "%");
  s.summary.emplace_back("KV pool", pool_text(cfg) + " per replica, " + grouped(cfg.replicas) + " replica" +
                                        (cfg.replicas > 1 ? "s" : "") + " (" + scheduler_name(cfg.scheduler) +
                                        " scheduler)");
  SeriesChart kv, q, pre, hit;
  kv.title = "KV-pool use";
  kv.x_label = q.x_label = pre.x_label = hit.x_label = "time (s)";
  kv.y_label = "blocks in use";
  kv.percent = true;
  kv.caption =
      "Blocks held by requests (and cached prefixes in use) over the "
      "pool, summed over replicas.";
  q.title = "Running and waiting requests";
  q.y_label = "requests";
  q.caption =
      "Requests in the running batch and in the waiting queue "
      "(preempted requests wait again).";
  pre.title = "Preemptions";
  pre.y_label = "preemptions (cumulative)";
  pre.caption =
      "Requests evicted from the KV pool to make room (recomputed "
      "when they run again).";
  hit.title = "Prefix cache hit rate";
  hit.y_label = "prompt tokens found cached";
  hit.percent = true;
  hit.caption = "Cumulative share of prompt tokens found in the prefix cache.";
  std::vector<double> kvu, run, wait, pr, hr;
  for (const auto& t : r.timeline) {
    kv.x.push_back(t.t_s);
    kvu.push_back(t.kv_used_fraction);
    run.push_back(static_cast<double>(t.running));
    wait.push_back(static_cast<double>(t.waiting));
    pr.push_back(static_cast<double>(t.preemptions));
    hr.push_back(t.prefix_hit_rate);
  }
  q.x = pre.x = hit.x = kv.x;
  kv.lines = {{"KV pool used", kvu}};
  q.lines = {{"running", run}, {"waiting", wait}};
  pre.lines = {{"preemptions", pr}};
  hit.lines = {{"prefix hit rate", hr}};
  s.charts = {kv, q, pre, hit};
  Table lat;
  lat.title = "Latency (ms)";
  lat.columns = {"metric", "mean", "p50", "p90", "p99", "count"};
  lat.right_align = {false, true, true, true, true, true};
  for (const auto& [name, st] : std::vector<std::pair<std::string, LatencyStats>>{
           {"TTFT", r.ttft_s}, {"TPOT", r.tpot_s}, {"ITL", r.itl_s}, {"E2E", r.e2e_s}})
    lat.rows.push_back(latency_row(name, st, true));
  s.tables.push_back(lat);
  s.assumptions = {kDefinitions,
                   "step time: the performance model's step (weights and KV read, compute, communication, overheads) "
                   "for each step's mix of decode sequences and prefill chunks (docs/performance-model.md)",
                   "engine rules: " + std::string(engine_name(d.spec.engine.kind)) +
                       " scheduler and paged KV pool as docs/simulation.md describes",
                   "front end: every TTFT and E2E holds the API server's " + fmt(cfg.frontend_s * 1e3, 1) +
                       " ms (coefficient " + frontend_coefficient(d.spec.engine) +
                       "; docs/simulation.md, Front end)"};
  rep.sections.push_back(std::move(s));
  return rep;
}

void run_simulate(const SimArgs& a, Globals& g) {
  const Format fmt_out = parse_format_flag(a.format);
  std::vector<std::string> read = files_named(a.d, g.pasted);
  for (const std::string* f : {&a.w.trace, &a.w.prompt_hist, &a.w.output_hist}) read.push_back(*f);
  a.out.check({{a.per_request, "--per-request"}}, read);
  const auto profiles = io::Profiles::load(g.profiles_dir);
  DeploymentSource from = flags_source(a.d, g.pasted);
  from.prefix_before_prompt = true;  // --shared-prefix comes before each prompt (docs/simulation.md)
  const Deployment d = resolve_source(from, profiles);
  // the deployment's warnings go out once the run has a result: bad input found on the way (the workload's
  // options, a run in which no request completes) is one line alone
  const auto deployment_warnings = [&] {
    for (const auto& w : d.warnings) warn(w);
  };
  const Planner p(d.spec);
  const EngineReport& er = p.engine();

  // ---- the workload ----
  const bool closed = d.bag.has("concurrency");
  const Workload wl = build_workload(a.w, d, closed);
  check_slo_ms(a.slo_ttft_ms, "--slo-ttft-ms");
  check_slo_ms(a.slo_tpot_ms, "--slo-tpot-ms");
  if (a.timeline_interval_s && !(*a.timeline_interval_s > 0))
    throw InputError("--timeline-interval-s", "must be > 0 seconds");
  const bool traced = wl.traced;
  const WorkloadSpec& w = wl.spec;
  const std::string& arrival = wl.arrival;

  SimSlo slo;
  if (a.slo_ttft_ms) slo.ttft_s = *a.slo_ttft_ms * 1e-3;
  if (a.slo_tpot_ms) slo.tpot_s = *a.slo_tpot_ms * 1e-3;
  const bool has_slo = a.slo_ttft_ms || a.slo_tpot_ms;

  // ---- inputs as JSON (the workload before the run; trace rows are added after it) ----
  ojson inputs = deployment_inputs_json(d);
  for (const char* k :
       {"tokens_per_request", "tokens_source", "prompt_tokens", "output_tokens", "concurrency", "shared_prefix_tokens"})
    inputs.erase(k);
  ojson wj = workload_json(wl, a.w, d);
  wj["slo"] = {{"ttft_ms", a.slo_ttft_ms ? ojson(*a.slo_ttft_ms) : ojson(nullptr)},
               {"tpot_ms", a.slo_tpot_ms ? ojson(*a.slo_tpot_ms) : ojson(nullptr)}};

  const std::string title = d.spec.model.id + " on " + std::to_string(deployment_gpus(d.spec)) + " x " + d.spec.gpu.id +
                            " (TP " + std::to_string(d.spec.parallel.tp) + ", PP " +
                            std::to_string(d.spec.parallel.pp) + ", DP " + std::to_string(d.spec.parallel.dp) + "), " +
                            engine_name(d.spec.engine.kind);

  // ---- a deployment that does not start runs nothing (exit 1, as plan) ----
  if (!er.startup_ok) {
    const Cell c = p.cell(std::max<i64>(p.max_len(), 1), 1);
    std::string suggestion;
    if (er.estimated_max_model_len > 0)
      suggestion = std::string(er.kind == EngineKind::llamacpp ? "ctx-size " : "max-model-len ") +
                   std::to_string(er.estimated_max_model_len) + " starts";
    if (er.suggested_gpu_layers >= 0)
      suggestion += (suggestion.empty() ? "" : "; or ") + std::string("n-gpu-layers ") +
                    std::to_string(er.suggested_gpu_layers) + " starts";
    const std::string why = c.limiting == "does_not_start" ? "one " + grouped(p.max_len()) +
                                                                 "-token request (the longest it "
                                                                 "accepts) does not fit the KV pool"
                            : c.limiting == "weights"    ? "the weights leave no memory for the KV pool"
                            : c.limiting == "gpu_memory" ? "the fixed terms exceed the GPU's memory"
                                                         : "limited by " + c.limiting;
    deployment_warnings();
    warn_strict(strict_failures(d, a.d.strict));
    warn("the deployment does not start: " + why + (suggestion.empty() ? "" : "; " + suggestion));
    g.exit_code = 1;
    ojson res = {
        {"starts", false}, {"limiting_factor", c.limiting}, {"suggestion", suggestion}, {"engine", engine_json(p)}};
    if (fmt_out == Format::json) {
      inputs["workload"] = wj;
      std::cout << envelope("kvplan.simulate", "1.0.0", g.argv, profiles.sources(), inputs, res)
                       .dump(2, ' ', false, ojson::error_handler_t::replace)
                << "\n";
    } else {
      Table t;
      t.title = title + ": does not start";
      t.columns = {"quantity", "value"};
      t.rows = {{"starts", "NO: " + why}};
      if (!suggestion.empty()) t.rows.push_back({"would start", suggestion});
      std::cout << render(t, fmt_out);
    }
    return;
  }

  // ---- the engine ----
  SimConfig cfg = sim_config(d, p);
  cfg.closed_loop_concurrency = closed ? d.concurrency : 0;
  if (a.timeline_interval_s) cfg.timeline_interval_s = *a.timeline_interval_s;
  const StepTimeModel step_model(p, d.perf);
  const StepTimeFn step = [&step_model](const StepBatch& b) { return step_model.step_s(b); };

  io::TraceSource* trace = nullptr;
  const std::unique_ptr<RequestSource> src = open_requests(wl, a.w, d, &trace);
  PerRequestWriter per(a.per_request);
  RequestObserver observer;
  if (per.active()) observer = [&per](const RequestRecord& r) { per.write(r); };
  const SimResult r = simulate(cfg, *src, step, slo, observer);
  require_completions(r, cfg, traced ? "--trace " + a.w.trace : "--prompt-tokens / --output-tokens");
  deployment_warnings();
  std::vector<std::string> warnings = d.warnings;
  if (!step_model.prices_compute()) {
    warnings.push_back("GPU profile " + d.spec.gpu.id +
                       " has no dense TFLOP/s: prefills and batched GEMMs are priced at their weight and KV reads only, so TTFT, "
                       "TPOT under load and the throughputs are optimistic (plan reports TTFT unknown); give its dense bf16 / fp16 "
                       "rate with --gpu-tflops");
    warn(warnings.back());
  }
  if (a.timeline_interval_s && r.timeline_interval_s > *a.timeline_interval_s) {
    char b[160];
    std::snprintf(b, sizeof b, "--timeline-interval-s %g s would keep more than 100,000 samples; the timeline keeps one every %g s",
                  *a.timeline_interval_s, r.timeline_interval_s);
    warnings.push_back(b);
    warn(warnings.back());
  }
  if (r.failed > 0) {
    warnings.push_back(grouped(r.failed) + " of " + grouped(r.requests) + " requests failed: " + failures_line(r, cfg) +
                       "; the latencies and throughputs count the completed requests only");
    warn(warnings.back());
  }
  // --strict: every warning fails the run, the deployment's and the run's own (failed requests, a coarser timeline)
  const std::vector<std::string> strict = a.d.strict ? warnings : std::vector<std::string>{};
  warn_strict(strict);

  if (trace) {
    wj["trace"] = {{"path", a.w.trace},
                   {"format", trace->format()},
                   {"layout", trace->layout()},
                   {"arrival_column", trace->arrival_column()},
                   {"arrival_unit", trace->arrival_unit()},
                   {"prompt_column", trace->prompt_column()},
                   {"output_column", trace->output_column()},
                   {"rows", trace->rows()}};
    wj["shared_prefix_tokens"] = d.shared_prefix;
  }
  inputs["workload"] = wj;
  inputs["scheduling_policy"] = cfg.policy;

  // ---- results ----
  ojson res;
  res["starts"] = true;
  res["ttft_ms"] = stats_ms(r.ttft_s);
  res["tpot_ms"] = stats_ms(r.tpot_s);
  res["itl_ms"] = stats_ms(r.itl_s);
  res["e2e_ms"] = stats_ms(r.e2e_s);
  res["request_throughput_per_s"] = r.request_throughput_per_s;
  res["output_tokens_per_s"] = r.output_tokens_per_s;
  res["total_tokens_per_s"] = r.total_tokens_per_s;
  if (has_slo) {
    res["goodput_per_s"] = r.goodput_per_s;
    res["good_requests"] = r.good_requests;
  }
  res["requests"] = r.requests;
  res["completed"] = r.completed;
  res["input_tokens"] = r.input_tokens;
  res["output_tokens"] = r.output_tokens;
  res["failed"] = r.failed;
  res["failures"] = failures_json(r);
  res["truncated"] = r.truncated;
  res["preemptions"] = r.preemptions;
  res["preemptions_per_request"] =
      r.requests > 0 ? static_cast<double>(r.preemptions) / static_cast<double>(r.requests) : 0.0;
  res["prefix_hit_rate"] = r.prefix_hit_rate;
  res["duration_s"] = r.duration_s;
  res["steps"] = r.steps;
  res["peak_blocks_used"] = r.peak_blocks_used;
  res["peak_kv_used_fraction"] =
      r.usable_blocks > 0 ? static_cast<double>(r.peak_blocks_used) / static_cast<double>(r.usable_blocks) : 0.0;
  res["pool"] = {{"scheduler", scheduler_name(cfg.scheduler)},
                 {"replicas", cfg.replicas},
                 {"blocks", cfg.pool_blocks},
                 {"block_tokens", cfg.block_tokens},
                 {"tokens", sim_pool_tokens(cfg)},
                 {"max_num_seqs", cfg.max_num_seqs},
                 {"max_num_batched_tokens", cfg.max_num_batched_tokens},
                 {"max_model_len", cfg.max_model_len},
                 {"chunked_prefill", cfg.chunked_prefill},
                 {"prefix_caching", cfg.prefix_caching},
                 {"frontend_s", cfg.frontend_s},
                 {"policy", cfg.policy}};
  if (!cfg.cache_groups.empty()) {
    ojson groups = ojson::array();
    for (const SimCacheGroup& cg : cfg.cache_groups) {
      ojson o = {{"kind", cache_kind_name(cg.kind)}, {"groups", cg.groups}, {"block_tokens", cg.block_tokens}};
      if (cg.kind == SimCacheGroup::Kind::sliding || cg.kind == SimCacheGroup::Kind::chunked) o["window"] = cg.window;
      if (cg.kind == SimCacheGroup::Kind::fixed) o["blocks"] = cg.blocks;
      groups.push_back(o);
    }
    res["pool"]["cache_groups"] = groups;
  }
  if (cfg.scheduler == SchedulerKind::trtllm) res["pool"]["capacity_scheduler_policy"] = cfg.capacity_policy;
  if (cfg.scheduler == SchedulerKind::sglang) {
    res["pool"]["max_prefill_tokens"] = cfg.max_prefill_tokens;
    res["pool"]["mixed_chunk"] = cfg.mixed_chunk;
  }
  ojson tl = ojson::array();
  for (const auto& t : r.timeline)
    tl.push_back({{"t_s", t.t_s},
                  {"kv_used_fraction", t.kv_used_fraction},
                  {"running", t.running},
                  {"waiting", t.waiting},
                  {"preemptions", t.preemptions},
                  {"prefix_hit_rate", t.prefix_hit_rate}});
  res["timeline"] = tl;
  res["timeline_interval_s"] = r.timeline_interval_s;
  res["metric_definitions"] = {{"source", "vllm bench serve"},
                               {"ttft", "first token time - arrival time"},
                               {"tpot",
                                "(e2e - ttft) / (output tokens - 1) per request, excluding the "
                                "first token; requests with one output token are left out"},
                               {"itl",
                                "every gap between consecutive output tokens of a request, "
                                "pooled over all requests"},
                               {"e2e", "last token time - arrival time"},
                               {"percentiles", "linear interpolation between closest ranks (numpy.percentile)"},
                               {"throughput",
                                "completed requests, output tokens, prompt + output tokens of completed "
                                "requests / duration (first arrival to last finish)"},
                               {"goodput", "completed requests meeting every given SLO (ttft, tpot) / duration"}};
  res["warnings"] = warnings;

  // ---- outputs: files first (atomically), then stdout ----
  const std::string workload_line =
      (traced ? "trace " + std::filesystem::path(a.w.trace).filename().string() + " (" + (trace ? trace->layout() : "") +
                    ", " + grouped(r.requests) + " rows)"
              : grouped(w.requests) + " requests of " + lengths_text(w) +
                    (w.turns > 1 ? ", " + grouped(w.turns) + "-turn sessions" : "")) +
      (closed   ? ", closed loop of " + grouped(d.concurrency) + " clients"
       : traced ? ", open loop at the trace's arrivals"
                : (a.w.rate ? ", open loop at " + fmt(w.rate, 2) + " req/s (" + arrival + ")" : ", all at t = 0"));
  if (!a.out.html.empty() || !a.out.markdown.empty()) {
    const Report rep = make_report(d, r, cfg, title, workload_line, has_slo);
    write_outputs({{a.out.html, a.out.html.empty() ? "" : render_html(rep)},
                   {a.out.markdown, a.out.markdown.empty() ? "" : render_markdown(rep)}});
  }
  per.commit();
  g.exit_code = strict.empty() ? 0 : 1;  // --strict: a warning fails, as in plan

  if (fmt_out == Format::json) {
    std::cout << envelope("kvplan.simulate", "1.0.0", g.argv, profiles.sources(), inputs, res)
                     .dump(2, ' ', false, ojson::error_handler_t::replace)
              << "\n";
    return;
  }
  if (fmt_out == Format::csv || fmt_out == Format::jsonl) {
    ojson flat = res;  // one row per value; the timeline and definitions stay in the JSON
    flat.erase("timeline");
    flat.erase("metric_definitions");
    flat.erase("warnings");
    std::cout << render(flatten(flat), fmt_out);
    return;
  }
  Table lat;
  lat.title = title + ": " + workload_line;
  lat.columns = {"metric (ms)", "mean", "p50", "p90", "p99"};
  lat.right_align = {false, true, true, true, true};
  for (const auto& [name, st] : std::vector<std::pair<std::string, LatencyStats>>{
           {"TTFT", r.ttft_s}, {"TPOT", r.tpot_s}, {"ITL", r.itl_s}, {"E2E", r.e2e_s}})
    lat.rows.push_back(latency_row(name, st, false));
  Table t;
  t.title = "throughput and engine";
  t.columns = {"quantity", "value"};
  t.right_align = {false, true};
  t.rows.push_back({"completed / failed / truncated",
                    grouped(r.completed) + " / " + grouped(r.failed) + " / " + grouped(r.truncated)});
  for (int k = 1; k < kFailureKinds; ++k)
    if (const i64 n = r.failed_by[static_cast<size_t>(k)]; n > 0)
      t.rows.push_back({std::string("failed: ") + failure_name(static_cast<Failure>(k)), grouped(n)});
  t.rows.push_back({"duration", fmt(r.duration_s, 2) + " s"});
  t.rows.push_back({"request throughput", fmt(r.request_throughput_per_s, 2) + " req/s"});
  t.rows.push_back({"output token throughput", fmt(r.output_tokens_per_s, 1) + " tokens/s"});
  t.rows.push_back({"total token throughput", fmt(r.total_tokens_per_s, 1) + " tokens/s"});
  if (has_slo)
    t.rows.push_back({"goodput", fmt(r.goodput_per_s, 2) + " req/s (" + grouped(r.good_requests) + " good)"});
  t.rows.push_back({"preemptions", grouped(r.preemptions)});
  t.rows.push_back({"prefix cache hit rate", fmt(100.0 * r.prefix_hit_rate, 1) + "%"});
  t.rows.push_back({"peak KV-pool use", fmt(100.0 * res["peak_kv_used_fraction"].get<double>(), 1) + "%"});
  t.rows.push_back(
      {"KV pool per replica", pool_text(cfg)});
  if (cfg.replicas > 1) t.rows.push_back({"replicas", grouped(cfg.replicas)});
  t.rows.push_back({"scheduler", std::string(scheduler_name(cfg.scheduler)) + ", " + cfg.policy +
                                     (cfg.scheduler == SchedulerKind::trtllm ? ", " + cfg.capacity_policy : "") +
                                     (cfg.prefix_caching ? "" : ", no prefix cache")});
  t.rows.push_back({"max_num_seqs / max_num_batched_tokens",
                    grouped(cfg.max_num_seqs) + " / " + grouped(cfg.max_num_batched_tokens)});
  t.rows.push_back({"API server in each TTFT and E2E", fmt(cfg.frontend_s * 1e3, 1) + " ms (" +
                                                         frontend_coefficient(d.spec.engine) + ")"});
  std::cout << render(lat, fmt_out) << "\n" << render(t, fmt_out);
  std::cout << (fmt_out == Format::md ? "\n" : "\nnote: ") << kDefinitions << "\n";
}

}  // namespace

void register_simulate(CLI::App& app, Globals& g) {
  auto a = std::make_shared<SimArgs>();
  auto* c = app.add_subcommand("simulate",
                               "Serving simulation: requests through the engine's scheduler and paged "
                               "KV pool on the deployment plan "
                               "describes; TTFT, TPOT, ITL, E2E (vllm bench serve definitions), "
                               "throughput, goodput, preemptions, "
                               "prefix hits and a timeline (exit 1 when the deployment does not start)");
  add_deploy_options(c, a->d);
  auto* wl = c->add_option_group("simulated workload");
  add_workload_options(wl, a->w, a->d, true);
  wl->add_option("--slo-ttft-ms", a->slo_ttft_ms, "Goodput: a good request's TTFT is at most this");
  wl->add_option("--slo-tpot-ms", a->slo_tpot_ms, "Goodput: a good request's TPOT is at most this");
  wl->add_option("--timeline-interval-s", a->timeline_interval_s,
                 "Spacing of timeline samples in seconds (default: 1 ms doubled until the run holds 200-400 samples)");
  wl->add_option("--per-request", a->per_request,
                 "Write one CSV row per request to FILE (times, tokens, cached "
                 "tokens, preemptions)");
  a->out.add_options(c, false);
  c->add_option("--format", a->format, "table | md | csv | json | jsonl")->capture_default_str();
  c->callback([a, &g] { run_simulate(*a, g); });
}

}  // namespace kvplan::cli
