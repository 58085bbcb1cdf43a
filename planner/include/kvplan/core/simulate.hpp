// Serving simulation: requests through one engine's scheduler and paged KV block manager, one
// discrete step at a time, with the step's duration from the performance model (StepTimeModel)
// or a calibration. Latency definitions follow `vllm bench serve`: TTFT = first token - arrival;
// TPOT per request = (e2e - TTFT) / (output tokens - 1), averaged over requests with > 1 token;
// ITL = every gap between consecutive tokens of a request, pooled over requests; E2E = last
// token - arrival. Formulas and engine sources: docs/simulation.md.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/engine.hpp"
#include "kvplan/core/perf.hpp"

namespace kvplan {

/// One request as a workload generator or a trace gives it.
/// Prefix caching sees request content through one model: token t of a request is token t of its
/// prefix group when t < prefix_tokens (prefix_group >= 0); otherwise token t of its session when
/// session >= 0 (turn k's prompt repeats every earlier prompt and output of the session, so the
/// turns of a session share their history); otherwise a token no other request has.
struct SimRequest {
  i64 id = 0;
  double arrival_s = 0;     // open loop: arrival time (non-decreasing); closed loop: ignored
  i64 prompt_tokens = 0;    // >= 1
  i64 output_tokens = 0;    // >= 1 (tokens the client asks for; ignore_eos as in vllm bench serve)
  i64 prefix_group = -1;    // requests of one group share their first prefix_tokens tokens (-1: none)
  i64 prefix_tokens = 0;    // <= prompt_tokens
  i64 session = -1;         // multi-turn: turns of one session run in order; a turn arrives
  double think_s = 0;       //   think_s after the previous turn of its session finished
  i64 priority = 0;         // vLLM --scheduling-policy priority: lower runs first
};

/// Pulls requests in arrival order (a generator or a trace streamed from disk); false at the end.
/// Throws InputError for a bad row (one line naming the row and the field).
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  virtual bool next(SimRequest& out) = 0;
};

/// Duration of one step on one replica (seconds). Usually StepTimeModel::step_s.
using StepTimeFn = std::function<double(const StepBatch&)>;

enum class SchedulerKind { vllm_v1, vllm_v0, sglang, trtllm, llamacpp };  // vllm_v0: vLLM before 0.8 (V0 engine)

/// Bounds of a simulated workload. A run's clock is seconds in a double: past ~10^9 s (31 years) its
/// millisecond latencies lose digits, so arrivals, think times and the gaps a rate implies stay below it;
/// a generated run holds at most kMaxSimRequests requests (about half an hour at the simulator's speed), and
/// one that sends them all at once keeps every one waiting, so at most kMaxSimBurst (a few GB); the simulator stops any
/// run, a trace's too, that holds more than SimConfig::max_live_requests (kMaxSimBurst) requests at once.
constexpr i64 kMaxSimRequests = 100000000;
constexpr i64 kMaxSimBurst = 10000000;
constexpr double kMaxSimClockS = 1e9;
/// requests sent at `rate` per second span requests / rate seconds: past kMaxSimClockS the clock loses its
/// milliseconds. Every reader of a rate (simulate's --rate, a deployment file's traffic.rate, make_workload)
/// refuses such a pair with this problem and fix, each naming its own field.
inline bool arrivals_outrun_clock(double requests, double rate) { return rate > 0 && requests / rate > kMaxSimClockS; }
inline constexpr const char* kArrivalSpanProblem = "the requests at this rate span more than 10^9 s, where the clock loses its milliseconds";
inline constexpr const char* kArrivalSpanFix = "give a higher rate or fewer requests";

/// One kind of vLLM V1 KV cache group (v1/kv_cache_interface.py specs) as its manager charges a request
/// (v1/core/single_type_kv_cache_manager.py): a full-attention group a block per block_tokens tokens; a sliding-window
/// group frees the blocks wholly before computed - window + 1 (remove_skipped_blocks); a chunked-local group those
/// before the current chunk; a Mamba group one block per request; a cross-attention group the encoder's blocks.
struct SimCacheGroup {
  enum class Kind { full, sliding, chunked, state, fixed };
  Kind kind = Kind::full;
  i64 groups = 1;         // KV cache groups of this kind (each holds its own blocks)
  i64 block_tokens = 16;  // tokens per block of this kind
  i64 window = 0;         // sliding: window tokens; chunked: chunk tokens
  i64 blocks = 0;         // fixed: blocks per request
};

/// The scheduler and pool of one replica; sim_config_for fills it from a plan.
struct SimConfig {
  SchedulerKind scheduler = SchedulerKind::vllm_v1;
  i64 replicas = 1;                  // data-parallel replicas; requests are dealt round-robin
  i64 pool_blocks = 0;               // KV pool per replica in blocks (llama.cpp: cells, block_tokens 1);
                                     // vLLM: num_gpu_blocks, one of them the null block no request gets
  i64 block_tokens = 16;             // vLLM block_size / SGLang page_size / TRT tokens_per_block
  // vLLM V1 models with sliding-window, chunked-local, Mamba or cross-attention layers: the KV cache groups by kind.
  // pool_blocks then counts physical blocks (num_gpu_blocks), each group takes its own blocks from it, and the prefix
  // cache hashes the first full-attention kind's blocks (block_tokens is its block size; the others' cached blocks
  // are taken as hit wherever it hits). Empty: every group holds a block per block_tokens tokens, and pool_blocks
  // counts request blocks (one block of every group).
  std::vector<SimCacheGroup> cache_groups;
  i64 report_tokens = 0;             // with cache_groups: the KV cache size in tokens vLLM prints (EngineReport::kv_cache_tokens)
  i64 max_num_seqs = 256;            // vLLM max_num_seqs / SGLang max_running_requests / TRT max_batch_size
  i64 max_num_batched_tokens = 8192; // vLLM / TRT max_num_tokens / SGLang chunked_prefill_size
  i64 max_model_len = 0;             // requests longer than this fail (vLLM/SGLang/TRT reject; llama.cpp HTTP 400)
  bool chunked_prefill = true;
  // vLLM V0's async output processor (0.6.0+, on unless --disable-async-output-proc, --enforce-eager, pipeline
  // parallel or speculative decoding; vllm/engine/llm_engine.py LLMEngine.step): a step's sampled tokens are
  // processed during the next step, so the client gets them when that step ends, and the engine, not yet knowing
  // that a request stopped, decodes it once more (the token discarded) before freeing it
  bool async_output = false;
  bool prefix_caching = true;        // vLLM prefix caching / SGLang radix cache / TRT block reuse / llama.cpp cache_prompt
  std::string policy = "fcfs";       // vLLM fcfs|priority; SGLang fcfs|lpm; TRT and llama.cpp fcfs
  i64 max_prefill_tokens = kSglangMaxPrefillTokens;  // SGLang --max-prefill-tokens (input tokens of one extend batch)
  bool mixed_chunk = false;          // SGLang --enable-mixed-chunk: running decodes join each extend batch
  // SGLang: admission reserves new_token_ratio x remaining output; the ratio decays per step
  double init_new_token_ratio = 0.7;
  double min_new_token_ratio = 0.098;   // 0.7 x 0.14 (SGLang defaults)
  i64 new_token_ratio_decay_steps = 600;
  // TensorRT-LLM capacity scheduler: GUARANTEED_NO_EVICT (reserve the whole output) or MAX_UTILIZATION
  std::string capacity_policy = "GUARANTEED_NO_EVICT";
  // llama.cpp: slots (-np), cells per slot (n_ctx_seq), one unified pool of pool_blocks cells or not
  i64 slots = 4;
  i64 n_ctx_seq = 0;                 // 0: pool_blocks / slots (unified: pool_blocks)
  bool unified = true;
  // workload shape
  i64 closed_loop_concurrency = 0;   // > 0: N clients, each sends its next request when the last finished
  double timeline_interval_s = 0;    // spacing of timeline samples (0: duration / 200)
  // the API server between client and engine (HTTP, tokenisation, hand-off, the stream back): added to
  // each request's TTFT and E2E and to the run's duration. The scheduler sees a request when it is sent,
  // and a closed-loop client's next request when the previous one finishes in the engine: delaying those
  // by the front end makes fixed-length clients queue behind each other's prefill steps, which published
  // closed-loop runs do not show (docs/simulation.md "Front end")
  double frontend_s = 0;
  // requests held at once (waiting or running, every replica): past it the run stops with an InputError, since each
  // one waiting costs memory (a trace whose rows share one arrival time, or a rate far past the deployment's)
  i64 max_live_requests = kMaxSimBurst;
};

struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
  i64 count = 0;
};

/// One sample of the engine's state over time (summed over replicas).
struct TimelinePoint {
  double t_s = 0;
  double kv_used_fraction = 0;   // blocks in use / pool blocks
  i64 running = 0, waiting = 0;
  i64 preemptions = 0;           // cumulative
  double prefix_hit_rate = 0;    // cumulative: prompt tokens found cached / prompt tokens
};

/// Why a request left without completing. The first three are refused on arrival (the engine's
/// own checks); `terminated` and `unschedulable` happen while it waits or runs.
enum class Failure : int {
  none = 0,
  over_context,      // prompt + output over max_model_len (vLLM, SGLang, TensorRT-LLM: HTTP 400), or a
                     // prompt that does not fit a llama.cpp slot's n_ctx (exceed_context_size_error)
  over_pool,         // more tokens than the whole KV pool of a replica holds
  over_step_budget,  // a prompt over max_num_batched_tokens with chunked prefill off
  terminated,        // llama.cpp: the unified pool filled with every idle slot purged
  unschedulable,     // waited at the head of the line with nothing that could ever run it
};
constexpr int kFailureKinds = 6;
/// The JSON / CSV name of a failure ("over_context" ...); "" for none.
const char* failure_name(Failure f);

/// What happened to one request (for tests and per-request output).
struct RequestRecord {
  i64 id = 0;
  double arrival_s = 0, first_token_s = -1, finish_s = -1;
  i64 prompt_tokens = 0, output_tokens = 0;  // output_tokens: produced
  i64 cached_prompt_tokens = 0;              // prompt tokens found in the prefix cache (first admission)
  i64 preemptions = 0;
  bool failed = false;     // rejected (too long for the engine), terminated or unschedulable: `failure` says which
  Failure failure = Failure::none;
  bool truncated = false;  // stopped before output_tokens (llama.cpp: slot context full)
};

struct SimSlo {
  std::optional<double> ttft_s, tpot_s;  // goodput counts requests meeting every given target
};

struct SimResult {
  LatencyStats ttft_s, tpot_s, itl_s, e2e_s;
  i64 requests = 0, completed = 0, failed = 0, truncated = 0;
  std::array<i64, kFailureKinds> failed_by{};  // failed requests by Failure (index 0, none, stays 0)
  i64 input_tokens = 0, output_tokens = 0;  // prompt and produced tokens of the completed requests
  i64 preemptions = 0;
  double prefix_hit_rate = 0;
  double duration_s = 0;                 // first arrival to last finish
  double request_throughput_per_s = 0;   // completed / duration
  double output_tokens_per_s = 0;
  double total_tokens_per_s = 0;         // prompt + output tokens of completed requests / duration
  double goodput_per_s = 0;              // requests meeting the SLO / duration (0 without an SLO)
  i64 good_requests = 0;
  i64 steps = 0;
  i64 peak_blocks_used = 0;              // per replica, the largest
  i64 usable_blocks = 0;                 // per replica, the blocks requests can hold (vLLM: num_gpu_blocks less the null
                                         // block, the denominator of its own kv_cache_usage); the timeline's too
  i64 blocks_leaked = 0;                 // blocks still held after the last request (must be 0)
  std::vector<TimelinePoint> timeline;
  double timeline_interval_s = 0;        // spacing of the samples kept (a given interval doubles past 100,000 samples)
};

/// KV cache groups drawing on the pool (1 without cache_groups).
i64 sim_pool_groups(const SimConfig& cfg);
/// The pool's size in tokens as the engine reports it: pool_blocks x block_tokens, or with cache_groups report_tokens.
i64 sim_pool_tokens(const SimConfig& cfg);

/// Optional per-request callback (tests; --per-request output).
using RequestObserver = std::function<void(const RequestRecord&)>;

/// Runs the whole workload. Deterministic for a given source (no clocks, no hidden randomness).
/// Throws InputError for a config that cannot run (pool of 0 blocks, max_num_seqs < 1).
/// A request the engine can never serve (longer than max_model_len or than a llama.cpp slot, more
/// blocks than the pool, a prompt over the token budget without chunked prefill) fails on arrival.
SimResult simulate(const SimConfig& cfg, RequestSource& source, const StepTimeFn& step_time,
                   const SimSlo& slo = {}, const RequestObserver& observer = {});

// ---- workloads ----

enum class ArrivalKind { poisson, constant, gamma };

struct LengthDist {
  enum class Kind { fixed, uniform, normal, lognormal, histogram } kind = Kind::fixed;
  double mean = 0;
  double spread = 0;                                // uniform: +- fraction of mean (0.2 = +-20%);
                                                    // normal/lognormal: standard deviation / mean
  std::vector<std::pair<i64, double>> histogram;    // (tokens, weight)
  i64 min = 1, max = 0;                             // clamp (max 0: none)
};


struct WorkloadSpec {
  i64 requests = 1000;
  double rate = 0;                   // requests/s (open loop); 0 = all at t=0 unless closed loop.
                                     // Sessions (turns > 1) start at rate / turns per second.
  ArrivalKind arrival = ArrivalKind::poisson;
  double burstiness = 1.0;           // gamma shape (1 = Poisson; < 1 burstier), as vllm bench serve
  LengthDist prompt, output;
  i64 shared_prefix_tokens = 0;      // a common system prompt added before every (first-turn) prompt
  i64 prefix_groups = 1;             // that many distinct system prompts, dealt round-robin
  i64 turns = 1;                     // multi-turn sessions: turn k's prompt holds the history of turns < k
  double think_s = 0;
  std::uint64_t seed = 0;
};

/// A deterministic generator (seeded) of the requests `w` describes.
std::unique_ptr<RequestSource> make_workload(const WorkloadSpec& w);

/// The scheduler config of the deployment `p` plans: pool, block size and limits from its engine report.
class Planner;
/// `perf`: the engine's front end (coefficients.frontend_s, llama.cpp frontend_llamacpp_s) added to each request's TTFT and E2E.
SimConfig sim_config_for(const Planner& p, const PerfParams& perf = {});

}  // namespace kvplan
