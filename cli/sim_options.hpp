// The simulated workload as simulate and fit take it from flags: options (rate, arrival process,
// length distributions, shared prefixes, turns, trace, requests, seed), their checks, the typed
// WorkloadSpec, the request source (generator or streamed trace) and the workload's JSON.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "deploy_options.hpp"
#include "kvplan/core/simulate.hpp"
#include "kvplan/io/trace.hpp"
#include "output.hpp"

namespace kvplan::cli {

/// A simulated request's lengths when none are given: vllm bench serve's random dataset defaults
/// (--random-input-len 1024, --random-output-len 128); simulate, fit and check's traffic alike
constexpr i64 kDefaultPrompt = 1024;
constexpr i64 kDefaultOutput = 128;

/// The workload flags as given.
struct WorkloadArgs {
  std::optional<double> rate, burstiness, think_s;
  std::string arrival, prompt_dist, output_dist, prompt_spread, output_spread, prompt_hist, output_hist;
  std::optional<i64> prefix_groups, turns, requests;
  std::string trace;
  std::optional<std::uint64_t> seed;  // the generator's (default 0); a trace has none to seed
};

/// Registers the workload flags on `group` (--shared-prefix-tokens fills the deployment's
/// shared_prefix). `closed_loop` says whether --concurrency means a closed loop (simulate) or
/// only the memory target (fit); it changes the --rate help.
void add_workload_options(CLI::App* group, WorkloadArgs& a, DeployArgs& d, bool closed_loop);

/// A checked workload: the generator's spec (unused for a trace) and how it was described.
struct Workload {
  WorkloadSpec spec;
  bool closed = false;      // closed loop of d.concurrency clients
  bool traced = false;      // requests from a.trace
  std::string arrival;      // poisson | constant | gamma
  i64 prompt = 0, output = 0;  // mean lengths the generator centres on
};

/// Checks the flags (InputError naming the flag, exit 2) and builds the workload of `d`.
Workload build_workload(const WorkloadArgs& a, const Deployment& d, bool closed);

/// The workload's requests: the seeded generator, or the trace streamed from disk (`trace` set to it).
std::unique_ptr<RequestSource> open_requests(const Workload& w, const WorkloadArgs& a, const Deployment& d,
                                             io::TraceSource** trace = nullptr);

/// inputs.workload of simulate's JSON, before the run (a trace's rows are added after it).
ojson workload_json(const Workload& w, const WorkloadArgs& a, const Deployment& d);

/// A length distribution in words for the table and report headers: "1,024", "346 +- 48% (uniform)",
/// "1,024 (normal, sd 2.5%)", "histogram (mean 250.6)".
std::string length_text(const LengthDist& l);

/// A generated workload's lengths in words: "1,024 prompt + 128 output tokens", with " after a N-token shared
/// prefix" when it has one (the simulate and fit headers).
std::string lengths_text(const WorkloadSpec& w);

/// A latency summary in milliseconds: mean, p50, p90, p99, count.
ojson stats_ms(const LatencyStats& s);

/// Why the requests of one kind failed, with the deployment's figure ("prompt + output over max_model_len
/// 131,072: the engine answers HTTP 400"), and what to change.
struct FailureText {
  std::string why, fix;
};
FailureText failure_text(Failure f, const SimConfig& cfg);
/// results.failures: every Failure kind by its name, with its count.
ojson failures_json(const SimResult& r);
/// "3 over_context (prompt + output ...), 1 terminated (...)": the failed requests by kind; "" when none failed.
std::string failures_line(const SimResult& r, const SimConfig& cfg);
/// What to change for the commonest kind of failure; "" when none failed.
std::string commonest_failure_fix(const SimResult& r, const SimConfig& cfg);
/// A run in which no request completed cannot report latencies: InputError (exit 2) naming the workload
/// (`where`) and the commonest failure's fix. Returns normally when at least one request completed.
void require_completions(const SimResult& r, const SimConfig& cfg, const std::string& where);

/// The simulator's configuration for the deployment `p` plans (sim_config_for), after checking the settings only the
/// simulator reads where they were given: a waiting-queue order or capacity scheduler kvplan does not simulate for
/// the engine is one line naming the flag (or file line), exit 2.
SimConfig sim_config(const Deployment& d, const Planner& p);

/// --slo-ttft-ms / --slo-tpot-ms as simulate and fit take them: > 0 and at most 10^9 ms.
void check_slo_ms(const std::optional<double>& ms, const char* flag);

}  // namespace kvplan::cli
