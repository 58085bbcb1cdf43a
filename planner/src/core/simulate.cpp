// The serving simulator's driver: releases requests (open loop, closed loop, session turns), deals
// them round-robin to the replicas, always advances the replica or arrival that comes first, and
// turns what happened into vllm bench serve's metrics, a timeline and per-request records. The
// schedulers are in sim_engines.cpp, the block pool and quantiles in sim_blocks.cpp.
#include "kvplan/core/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "kvplan/core/error.hpp"
#include "kvplan/core/paging.hpp"
#include "kvplan/core/plan.hpp"
#include "sim_detail.hpp"

namespace kvplan {

namespace {

using namespace sim;

constexpr double kNever = std::numeric_limits<double>::infinity();

void require(bool ok, const std::string& field, const std::string& what, const std::string& fix = {}) {
  if (!ok) throw InputError(field, what, fix);
}

// The cache groups of a vLLM V1 hybrid model: each kind's fields in range, and a kind whose blocks the prefix cache
// hashes (full attention, else a sliding window or chunk) at the scheduler's block size.
void check_cache_groups(const SimConfig& c) {
  if (c.cache_groups.empty()) return;
  using K = SimCacheGroup::Kind;
  require(c.scheduler == SchedulerKind::vllm_v1, "cache_groups", "are vLLM V1's KV cache groups; the other schedulers take one pool");
  for (const SimCacheGroup& g : c.cache_groups) {
    require(g.groups >= 1, "cache_groups", "a kind must hold >= 1 group (got " + std::to_string(g.groups) + ")");
    require(g.block_tokens >= 1, "cache_groups", "block_tokens must be >= 1 (got " + std::to_string(g.block_tokens) + ")");
    require(g.window >= 1 || (g.kind != K::sliding && g.kind != K::chunked), "cache_groups", "a sliding window or chunk must be >= 1 token");
    require(g.blocks >= 0, "cache_groups", "fixed blocks must be >= 0");
  }
  const size_t i = sim::primary_cache_group(c.cache_groups);
  require(i < c.cache_groups.size(), "cache_groups", "need an attention kind (full, sliding or chunked) whose blocks hold tokens");
  const SimCacheGroup& first = c.cache_groups[i];
  require(first.block_tokens == c.block_tokens, "cache_groups",
          "the first attention kind's block_tokens " + std::to_string(first.block_tokens) + " must equal block_tokens " + std::to_string(c.block_tokens));
  require(c.pool_blocks - 1 >= first.groups, "pool_blocks", "must hold one block of each group beside the null block");
}

// Checks the config and fills what depends on other fields (llama.cpp's per-slot context).
SimConfig checked(SimConfig c) {
  const bool llama = c.scheduler == SchedulerKind::llamacpp;
  require(c.replicas >= 1, "replicas", "must be >= 1 (got " + std::to_string(c.replicas) + ")");
  require(c.block_tokens >= 1, "block_tokens", "must be >= 1 (got " + std::to_string(c.block_tokens) + ")");
  if (llama) c.block_tokens = 1;
  const i64 min_pool = c.scheduler == SchedulerKind::vllm_v1 ? 2 : 1;  // vLLM V1 keeps one null block
  require(c.pool_blocks >= min_pool, "pool_blocks",
          "must be >= " + std::to_string(min_pool) + " (got " + std::to_string(c.pool_blocks) + ")",
          "the deployment has no KV cache to serve from; check the plan's memory budget");
  require(c.max_num_seqs >= 1, "max_num_seqs", "must be >= 1 (got " + std::to_string(c.max_num_seqs) + ")");
  require(c.max_num_batched_tokens >= 1, "max_num_batched_tokens",
          "must be >= 1 (got " + std::to_string(c.max_num_batched_tokens) + ")");
  require(c.max_model_len >= 0, "max_model_len", "must be >= 0 (0: no limit)");
  require(c.closed_loop_concurrency >= 0, "closed_loop_concurrency", "must be >= 0");
  require(c.max_live_requests >= 1, "max_live_requests", "must be >= 1");
  require(c.timeline_interval_s >= 0 && std::isfinite(c.timeline_interval_s), "timeline_interval_s", "must be >= 0");
  check_cache_groups(c);
  switch (c.scheduler) {
    case SchedulerKind::vllm_v1:
    case SchedulerKind::vllm_v0:
      require(c.policy == "fcfs" || c.policy == "priority", "policy",
              "vLLM schedules fcfs or priority, not '" + c.policy + "'");
      // vLLM's SchedulerConfig check: without chunked prefill a whole prompt must fit one step
      require(c.chunked_prefill || c.max_model_len == 0 || c.max_num_batched_tokens >= c.max_model_len,
              "max_num_batched_tokens", "is smaller than max_model_len with chunked prefill disabled",
              "raise max_num_batched_tokens or enable chunked prefill");
      break;
    case SchedulerKind::sglang:
      require(c.policy == "fcfs" || c.policy == "lpm", "policy",
              "SGLang schedules fcfs or lpm here, not '" + c.policy + "'");
      require(
          c.init_new_token_ratio > 0 && c.min_new_token_ratio >= 0 && c.min_new_token_ratio <= c.init_new_token_ratio,
          "new_token_ratio", "needs 0 <= min_new_token_ratio <= init_new_token_ratio and init > 0");
      require(c.new_token_ratio_decay_steps >= 1, "new_token_ratio_decay_steps", "must be >= 1");
      require(c.max_prefill_tokens >= 1, "max_prefill_tokens", "must be >= 1");
      break;
    case SchedulerKind::trtllm:
      require(c.policy == "fcfs", "policy", "TensorRT-LLM schedules fcfs, not '" + c.policy + "'");
      require(c.capacity_policy == "GUARANTEED_NO_EVICT" || c.capacity_policy == "MAX_UTILIZATION" || c.capacity_policy == "STATIC_BATCH",
              "capacity_policy", "must be GUARANTEED_NO_EVICT, MAX_UTILIZATION or STATIC_BATCH, not '" + c.capacity_policy + "'");
      break;
    case SchedulerKind::llamacpp:
      require(c.policy == "fcfs", "policy", "llama.cpp serves slots fcfs, not '" + c.policy + "'");
      require(c.slots >= 1, "slots", "must be >= 1 (got " + std::to_string(c.slots) + ")");
      require(c.n_ctx_seq >= 0, "n_ctx_seq", "must be >= 0 (0: from the pool)");
      if (c.n_ctx_seq == 0) c.n_ctx_seq = c.unified ? c.pool_blocks : c.pool_blocks / c.slots;
      require(c.n_ctx_seq >= 2, "n_ctx_seq",
              "a slot must hold at least 2 tokens (got " + std::to_string(c.n_ctx_seq) + ")");
      if (c.unified) c.n_ctx_seq = std::min(c.n_ctx_seq, c.pool_blocks);
      c.max_num_seqs = c.slots;
      break;
  }
  return c;
}

struct SessionState {
  bool in_flight = false, has_prev = false;
  double last_finish = 0;
  i64 history = 0, epoch = 0;  // the last turn's tokens (prompt + output); Req::epoch
  std::deque<std::pair<i32, double>> pending;  // turns released while an earlier one runs
};

struct Arrival {
  double t;
  i64 seq;
  i32 req;
  bool operator>(const Arrival& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Driver final : public Sink {
 public:
  Driver(const SimConfig& cfg, RequestSource& src, const StepTimeFn& step_time, const SimSlo& slo,
         const RequestObserver& obs)
      : cfg_(cfg),
        src_(src),
        step_time_(step_time),
        slo_(slo),
        obs_(obs),
        ttft_(kPerRequest),
        tpot_(kPerRequest),
        e2e_(kPerRequest) {
    for (i64 i = 0; i < cfg.replicas; ++i) engines_.push_back(make_engine(cfg, *this));
    clock_.assign(static_cast<size_t>(cfg.replicas), 0.0);
    tl_auto_ = cfg.timeline_interval_s <= 0;
    tl_dt_ = tl_auto_ ? 1e-3 : cfg.timeline_interval_s;
  }

  SimResult run();

  Req& req(i32 r) override { return reqs_[static_cast<size_t>(r)]; }
  void token(i32 ri, double t) override {
    Req& r = req(ri);
    if (r.first_token < 0) {
      r.first_token = t;
      r.gaps.reserve(static_cast<size_t>(std::max<i64>(r.output - 1, 0)));  // one allocation, freed when it finishes
    } else {
      r.gaps.push_back(t - r.last_token);  // vllm bench serve pools the ITLs of successful requests only
    }
    r.last_token = t;
  }
  void finish(i32 ri, double t, Failure failure) override;
  void preempted() override { ++res_.preemptions; }
  void prompt_hit(i64 prompt, i64 hit) override {
    prompt_seen_ += prompt;
    prompt_hit_ += hit;
  }

 private:
  static constexpr size_t kPerRequest = size_t{1} << 22;  // per-request values kept exactly up to 4M requests
  static constexpr size_t kMaxTimeline = 100000;          // samples a given --timeline-interval-s keeps at most

  i32 new_req(const SimRequest& s, int client);
  bool pull(SimRequest& s);
  bool release(i32 r, double t);
  bool send_next(int client, double t);
  void deliver(i32 r, double t);
  void sample_until(double t, bool through = false);
  TimelinePoint sample(double t) const;

  const SimConfig& cfg_;
  RequestSource& src_;
  const StepTimeFn& step_time_;
  const SimSlo& slo_;
  const RequestObserver& obs_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::vector<double> clock_;
  std::deque<Req> reqs_;  // stable references while requests come and go
  std::vector<i32> free_reqs_;
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> arrivals_;
  std::unordered_map<i64, SessionState> sessions_;
  i64 seq_ = 0, uid_ = 0, next_replica_ = 0;
  bool have_look_ = false, src_done_ = false;
  SimRequest look_;
  double last_source_t_ = -kNever;
  double first_arrival_ = kNever, last_finish_ = -kNever;
  Quantiles ttft_, tpot_, e2e_, itl_;
  i64 prompt_seen_ = 0, prompt_hit_ = 0;
  SimResult res_;
  // timeline: a grid of t0 + k x dt; with the automatic interval dt doubles (every other point kept)
  // whenever the grid passes 400 points, so a run ends with 200-400 points whatever its length
  bool tl_auto_ = true;
  double tl_dt_ = 0, tl_t0_ = kNever;
  i64 tl_k_ = 0;
};

bool Driver::pull(SimRequest& s) {
  if (src_done_) return false;
  if (!src_.next(s)) {
    src_done_ = true;
    return false;
  }
  const std::string where = "request " + std::to_string(s.id);
  require(s.prompt_tokens >= 1, where, "prompt_tokens must be >= 1 (got " + std::to_string(s.prompt_tokens) + ")");
  require(s.output_tokens >= 1, where, "output_tokens must be >= 1 (got " + std::to_string(s.output_tokens) + ")");
  require(s.prefix_tokens >= 0 && s.prefix_tokens <= s.prompt_tokens, where,
          "prefix_tokens must be within 0..prompt_tokens");
  require(std::isfinite(s.arrival_s) && s.arrival_s >= 0, where, "arrival_s must be a time >= 0");
  require(s.think_s >= 0, where, "think_s must be >= 0");
  return true;
}

i32 Driver::new_req(const SimRequest& s, int client) {
  i32 ri;
  if (!free_reqs_.empty()) {
    ri = free_reqs_.back();
    free_reqs_.pop_back();
  } else {
    require(static_cast<i64>(reqs_.size()) < cfg_.max_live_requests, "requests",
            "more than " + std::to_string(cfg_.max_live_requests) + " waiting or running at once (each is held in memory)",
            "spread the arrivals (a lower --rate, a trace whose rows do not share one arrival time) or send fewer requests");
    ri = static_cast<i32>(reqs_.size());
    reqs_.emplace_back();
  }
  Req& r = req(ri);
  std::vector<i32> blocks = std::move(r.blocks);  // keep the allocation
  r = Req{};
  blocks.clear();
  r.blocks = std::move(blocks);
  r.id = s.id;
  r.uid = uid_++;
  r.arrival = s.arrival_s;
  r.prompt = s.prompt_tokens;
  r.output = s.output_tokens;
  r.group = s.prefix_group;
  r.group_tokens = s.prefix_group >= 0 ? s.prefix_tokens : 0;
  r.session = s.session;
  r.think = s.think_s;
  r.priority = s.priority;
  r.client = client;
  ++res_.requests;
  return ri;
}

// A turn starts once the one before it has finished: its prompt repeats that turn's prompt and output (the session's
// content), unless it is shorter than them, when the client cut the conversation (a chat window dropping its oldest
// messages) and the turn starts a new content epoch that shares nothing with the turns before.
void begin_turn(SessionState& s, Req& r) {
  if (s.has_prev && r.prompt < s.history) ++s.epoch;
  r.epoch = s.epoch;
}

// A request is sent at t; a session turn waits for the previous turn to finish plus its think time (false: it waits
// among its session's pending turns).
bool Driver::release(i32 ri, double t) {
  Req& r = req(ri);
  if (r.session >= 0) {
    SessionState& s = sessions_[r.session];
    if (s.in_flight) {
      s.pending.emplace_back(ri, t);
      return false;
    }
    s.in_flight = true;
    if (s.has_prev) t = std::max(t, s.last_finish + r.think);
    begin_turn(s, r);
  }
  arrivals_.push({t, seq_++, ri});  // the front end is counted in the latencies, not here (SimConfig::frontend_s)
  return true;
}

// A closed-loop client's next request: the next one the source gives; a later turn of a session another client is
// running waits for that client (which sends it after the earlier turn) while this one takes the request after it,
// so every client keeps one request in flight, each conversation on one client. False when the source is done.
bool Driver::send_next(int client, double t) {
  SimRequest s;
  while (pull(s)) {
    const i32 ri = new_req(s, client);
    if (release(ri, t)) return true;
    req(ri).client = -1;  // the session's client takes it on
  }
  return false;
}

void Driver::deliver(i32 ri, double t) {
  Req& r = req(ri);
  r.arrival = t;
  first_arrival_ = std::min(first_arrival_, r.arrival);
  // a closed loop's think times (and a slow engine's queue) move the clock on without an arrival span to check
  // up front: past 10^9 s a double's clock no longer resolves the milliseconds the latencies are made of
  if (r.arrival - first_arrival_ > kMaxSimClockS)
    throw InputError("think_s", "the simulation's clock passes 10^9 s from its first request, where it loses its milliseconds",
                     "give shorter think times (--think-s, the trace's think_s), fewer turns or fewer requests");
  if (tl_t0_ == kNever) tl_t0_ = r.arrival;
  const auto rep = static_cast<size_t>(next_replica_++ % cfg_.replicas);
  Engine& e = *engines_[rep];
  if (const Failure f = e.admit_check(r); f != Failure::none) {
    finish(ri, t, f);
    return;
  }
  e.arrive(ri);
  clock_[rep] = std::max(clock_[rep], t);
}

void Driver::finish(i32 ri, double t, Failure failure) {
  const bool failed = failure != Failure::none;
  Req& r = req(ri);
  last_finish_ = std::max(last_finish_, t);
  RequestRecord rec;
  rec.id = r.id;
  rec.arrival_s = r.arrival;
  // what the client sees: the engine's times plus the API server's path (SimConfig::frontend_s)
  const double fe = cfg_.frontend_s;
  rec.first_token_s = r.first_token >= 0 ? r.first_token + fe : r.first_token;
  rec.finish_s = t + fe;
  rec.prompt_tokens = r.prompt;
  rec.output_tokens = r.out;
  rec.cached_prompt_tokens = std::max<i64>(r.cached_prompt, 0);
  rec.preemptions = r.preemptions;
  rec.failed = failed;
  rec.failure = failure;
  rec.truncated = !failed && r.truncated;
  if (failed) {
    ++res_.failed;
    ++res_.failed_by[static_cast<size_t>(failure)];
  } else {
    ++res_.completed;
    res_.truncated += rec.truncated;
    res_.input_tokens += r.prompt;
    res_.output_tokens += r.out;
    const double ttft = r.first_token - r.arrival + fe, e2e = r.last_token - r.arrival + fe;
    ttft_.add(ttft);
    e2e_.add(e2e);
    for (const double g : r.gaps) itl_.add(g);
    double tpot = 0;  // vllm bench serve: a request with one token counts tpot 0 for goodput
    if (r.out >= 2) {
      tpot = (e2e - ttft) / static_cast<double>(r.out - 1);
      tpot_.add(tpot);
    }
    if (slo_.ttft_s || slo_.tpot_s)
      res_.good_requests += (!slo_.ttft_s || ttft <= *slo_.ttft_s) && (!slo_.tpot_s || tpot <= *slo_.tpot_s);
  }
  std::vector<double>().swap(r.gaps);  // spent: the slot, reused by a request still waiting, holds none
  if (obs_) obs_(rec);
  const i64 session = r.session, history = r.prompt + r.out;
  const int client = r.client;
  free_reqs_.push_back(ri);  // r is dead from here on
  if (session >= 0) {
    SessionState& s = sessions_[session];
    s.in_flight = false;
    s.has_prev = true;
    s.last_finish = t;
    s.history = history;
    if (!s.pending.empty()) {
      const auto [next, released] = s.pending.front();
      s.pending.pop_front();
      s.in_flight = true;
      begin_turn(s, req(next));
      arrivals_.push({std::max(released, t + req(next).think), seq_++, next});
      if (client >= 0) {  // closed loop: this client goes on with its conversation
        req(next).client = client;
        return;
      }
    }
  }
  if (client >= 0) send_next(client, t);  // closed loop: the client sends its next request now
}

TimelinePoint Driver::sample(double t) const {
  TimelinePoint p;
  p.t_s = t;
  i64 used = 0, pool = 0;
  for (const auto& e : engines_) {
    used += e->used_blocks();
    pool += e->pool_blocks();
    p.running += e->running();
    p.waiting += e->waiting();
  }
  p.kv_used_fraction = pool > 0 ? static_cast<double>(used) / static_cast<double>(pool) : 0;
  p.preemptions = res_.preemptions;
  p.prefix_hit_rate = prompt_seen_ > 0 ? static_cast<double>(prompt_hit_) / static_cast<double>(prompt_seen_) : 0;
  return p;
}

// Samples the grid points before t (through t when `through`): the driver calls it before each event, so a point at
// an event's time is taken after every arrival and step start at that time, not between two arrivals of one burst.
void Driver::sample_until(double t, bool through) {
  if (tl_t0_ == kNever) return;
  auto& tl = res_.timeline;
  while (tl_t0_ + static_cast<double>(tl_k_) * tl_dt_ < t ||
         (through && tl_t0_ + static_cast<double>(tl_k_) * tl_dt_ == t)) {
    tl.push_back(sample(tl_t0_ + static_cast<double>(tl_k_) * tl_dt_));
    ++tl_k_;
    // auto: about 200-400 samples; a given interval is kept up to kMaxTimeline samples, then coarsened the same way
    // (a 1 us interval over an hour-long run would otherwise hold 3.6e9 samples)
    if (tl.size() > (tl_auto_ ? size_t{400} : kMaxTimeline)) {
      size_t kept = 0;
      for (size_t i = 0; i < tl.size(); i += 2) tl[kept++] = tl[i];
      tl.resize(kept);
      tl_dt_ *= 2;
      tl_k_ = static_cast<i64>(kept);
    }
  }
}

SimResult Driver::run() {
  const bool closed = cfg_.closed_loop_concurrency > 0;
  if (closed)
    for (i64 c = 0; c < cfg_.closed_loop_concurrency; ++c)
      if (!send_next(static_cast<int>(c), 0.0)) break;
  std::vector<Work> work;
  for (;;) {
    if (!closed && !have_look_ && pull(look_)) {
      have_look_ = true;
      require(look_.arrival_s >= last_source_t_, "request " + std::to_string(look_.id), "arrival_s goes back in time",
              "sort the requests by arrival time");
      last_source_t_ = look_.arrival_s;
    }
    const double t_src = have_look_ ? look_.arrival_s : kNever;
    const double t_heap = arrivals_.empty() ? kNever : arrivals_.top().t;
    size_t rep = 0;
    double ts = kNever;
    for (size_t i = 0; i < engines_.size(); ++i)
      if (clock_[i] < ts && engines_[i]->busy()) {
        ts = clock_[i];
        rep = i;
      }
    const double ta = std::min(t_src, t_heap);
    if (ta == kNever && ts == kNever) break;
    if (ta <= ts) {
      if (t_heap <= t_src) {
        const Arrival a = arrivals_.top();
        arrivals_.pop();
        sample_until(a.t);
        deliver(a.req, a.t);
      } else {
        have_look_ = false;
        release(new_req(look_, -1), look_.arrival_s);
      }
      continue;
    }
    sample_until(ts);
    Engine& e = *engines_[rep];
    work.clear();
    StepBatch batch;
    const bool changed = e.schedule(work, batch, ts);
    if (work.empty()) {
      if (!changed) {  // nothing can ever run: fail the request at the head of the line
        const i32 r = e.drop_stuck();
        if (r < 0) throw std::logic_error("kvplan simulate: a replica has requests but can neither run nor drop one");
        finish(r, ts, Failure::unschedulable);
      }
      continue;
    }
    const double d = step_time_(batch);
    require(std::isfinite(d) && d >= 0, "step_time",
            "returned " + std::to_string(d) + " s for a step; durations must be finite and >= 0");
    clock_[rep] = ts + d;
    ++res_.steps;
    e.commit(work, ts + d);
  }
  if (res_.requests > 0) sample_until(last_finish_, true);

  res_.ttft_s = ttft_.stats();
  res_.tpot_s = tpot_.stats();
  res_.e2e_s = e2e_.stats();
  res_.itl_s = itl_.stats();
  res_.timeline_interval_s = tl_dt_;
  res_.prefix_hit_rate = prompt_seen_ > 0 ? static_cast<double>(prompt_hit_) / static_cast<double>(prompt_seen_) : 0;
  res_.duration_s = res_.requests > 0 ? last_finish_ + cfg_.frontend_s - first_arrival_ : 0;
  if (res_.duration_s > 0) {
    const double d = res_.duration_s;
    res_.request_throughput_per_s = static_cast<double>(res_.completed) / d;
    res_.output_tokens_per_s = static_cast<double>(res_.output_tokens) / d;
    res_.total_tokens_per_s = static_cast<double>(res_.input_tokens + res_.output_tokens) / d;
    if (slo_.ttft_s || slo_.tpot_s) res_.goodput_per_s = static_cast<double>(res_.good_requests) / d;
  }
  for (const auto& e : engines_) {
    res_.peak_blocks_used = std::max(res_.peak_blocks_used, e->peak_blocks());
    res_.usable_blocks = e->pool_blocks();
    res_.blocks_leaked += e->used_blocks();
  }
  return res_;
}

}  // namespace

const char* failure_name(Failure f) {
  switch (f) {
    case Failure::none: return "";
    case Failure::over_context: return "over_context";
    case Failure::over_pool: return "over_pool";
    case Failure::over_step_budget: return "over_step_budget";
    case Failure::terminated: return "terminated";
    case Failure::unschedulable: return "unschedulable";
  }
  return "";
}

SimResult simulate(const SimConfig& config, RequestSource& source, const StepTimeFn& step_time, const SimSlo& slo,
                   const RequestObserver& observer) {
  require(static_cast<bool>(step_time), "step_time", "no step-time model was given");
  const SimConfig cfg = checked(config);
  Driver d(cfg, source, step_time, slo, observer);
  return d.run();
}

i64 sim_pool_groups(const SimConfig& cfg) {
  i64 n = 0;
  for (const SimCacheGroup& g : cfg.cache_groups) n += g.groups;
  return std::max<i64>(n, 1);
}

i64 sim_pool_tokens(const SimConfig& cfg) {
  return cfg.cache_groups.empty() ? mul(cfg.pool_blocks, cfg.block_tokens, "pool tokens") : cfg.report_tokens;
}

// ---------------------------------------------------------------- config from a plan

namespace {

// vLLM V1's cache groups by kind for the simulator, the kind whose blocks the prefix cache hashes first (full
// attention, else a sliding window or chunk); empty when every group is full attention (a request block of
// every group then stands for them) or none holds tokens (an attention-free Mamba model keeps that form).
std::vector<SimCacheGroup> sim_cache_groups(const Planner& p) {
  using K = SimCacheGroup::Kind;
  std::vector<SimCacheGroup> out;
  bool other = false;
  for (const CacheGroup& g : p.groups()) {
    SimCacheGroup s;
    s.groups = g.groups;
    s.block_tokens = p.group_block_tokens(g);
    switch (g.kind) {
      case KvKind::sliding: s.kind = K::sliding; s.window = g.window; break;
      case KvKind::chunked: s.kind = K::chunked; s.window = g.window; break;
      case KvKind::ssm: s.kind = K::state; break;
      case KvKind::cross: s.kind = K::fixed; s.blocks = pages_for_tokens(p.spec().kv.encoder_tokens, s.block_tokens); break;
      default: s.kind = K::full; break;
    }
    other = other || s.kind != K::full;
    out.push_back(s);
  }
  const size_t primary = sim::primary_cache_group(out);
  if (!other || primary == out.size()) return {};
  const auto first = out.begin() + static_cast<std::ptrdiff_t>(primary);
  std::rotate(out.begin(), first, first + 1);
  return out;
}

}  // namespace

SimConfig sim_config_for(const Planner& p, const PerfParams& perf) {
  const EngineReport& rep = p.engine();
  const EngineSettings& e = p.spec().engine;
  SimConfig c;
  c.frontend_s = e.kind == EngineKind::llamacpp ? perf.coefficients.frontend_llamacpp_s
                 : e.kind == EngineKind::vllm && e.rules && e.rules->v0_engine ? perf.coefficients.frontend_vllm_v0_s
                                                                               : perf.coefficients.frontend_s;
  if (vllm_in_process(e)) c.frontend_s = 0;
  c.replicas = std::max<i64>(p.spec().parallel.dp, 1);
  c.max_num_seqs = p.max_seqs();
  c.max_num_batched_tokens = e.max_num_batched_tokens;
  c.max_model_len = p.max_len();
  c.prefix_caching = e.prefix_caching.value_or(true);
  if (!e.scheduling_policy.empty()) c.policy = e.scheduling_policy;
  if (!e.capacity_scheduler_policy.empty()) c.capacity_policy = e.capacity_scheduler_policy;
  switch (e.kind) {
    case EngineKind::vllm:
      // a request takes one block per KV cache group (hybrid models): the pool in request blocks
      c.scheduler = e.rules && e.rules->v0_engine ? SchedulerKind::vllm_v0 : SchedulerKind::vllm_v1;
      c.block_tokens = rep.block_size;
      // V1's null block is one block of the shared pool, not one per group: the groups share the other N - 1, and the
      // engine (Vllm) takes its one request block back off ((N - 1) / groups + 1, less one)
      c.pool_blocks = c.scheduler == SchedulerKind::vllm_v1 && rep.num_gpu_blocks > 0
                          ? (rep.num_gpu_blocks - 1) / std::max<i64>(rep.num_groups, 1) + 1
                          : rep.num_gpu_blocks / std::max<i64>(rep.num_groups, 1);
      // V1 with sliding-window, chunked-local, Mamba or cross-attention groups: each kind takes blocks from the shared
      // pool by its own manager's rule (the windows give blocks back), so the pool is simulated in physical blocks
      if (c.scheduler == SchedulerKind::vllm_v1) c.cache_groups = sim_cache_groups(p);
      if (!c.cache_groups.empty()) {
        c.pool_blocks = rep.num_gpu_blocks;
        c.block_tokens = c.cache_groups.front().block_tokens;
        c.report_tokens = rep.kv_cache_tokens;
      }
      // V1 chunks unless --no-enable-chunked-prefill on 0.12 or later (0.8-0.11 ignore the flag); V0 only where
      // resolve_engine_defaults turned it on (context above 32K, or the flag)
      c.chunked_prefill = (c.scheduler == SchedulerKind::vllm_v1 && !(e.rules && e.rules->v1_chunked_optional)) || e.chunked_prefill.value_or(true);
      c.async_output = vllm_v0_async_output(e, p.spec().parallel.pp, p.spec().gpu.device_class == "cpu");
      break;
    case EngineKind::sglang:
      c.scheduler = SchedulerKind::sglang;
      // the context length the tokenizer checks; the scheduler's pool cap (max_req_len) is the engine's own
      if (e.max_model_len > 0) c.max_model_len = e.max_model_len;
      c.block_tokens = std::max<i64>(rep.block_size, 1);
      c.pool_blocks = rep.max_total_num_tokens / c.block_tokens;
      // PrefillAdder's rem_input_tokens (python/sglang/srt/managers/schedule_policy.py): --max-prefill-tokens
      if (e.max_prefill_tokens) c.max_prefill_tokens = *e.max_prefill_tokens;
      c.chunked_prefill = e.chunked_prefill.value_or(true);  // --chunked-prefill-size -1 disables chunking
      if (!c.chunked_prefill) c.max_num_batched_tokens = std::max<i64>(p.max_len(), 1);
      // Scheduler.init_chunked_prefill: is_mixed_chunk = chunked_prefill_size is not None and enable_mixed_chunk
      // and server_args.py turns it off under EAGLE speculative decoding ("Mixed chunked prefill is disabled because of
      // using eagle speculative decoding")
      c.mixed_chunk = e.mixed_chunk && c.chunked_prefill && e.spec.method != SpecMethod::eagle && e.spec.method != SpecMethod::eagle3;
      // SchedulePolicy._validate_and_adjust_policy (python/sglang/srt/managers/schedule_policy.py): without the radix
      // cache a cache-aware policy (lpm, dfs-weight) runs as fcfs
      if (!c.prefix_caching && c.policy == "lpm") c.policy = "fcfs";
      break;
    case EngineKind::trtllm:
      c.scheduler = SchedulerKind::trtllm;
      c.block_tokens = rep.block_size;
      c.pool_blocks = rep.num_gpu_blocks;
      c.chunked_prefill = e.chunked_prefill.value_or(false);  // enable_chunked_prefill defaults to False (TorchLlmArgs)
      break;
    case EngineKind::llamacpp:
      c.scheduler = SchedulerKind::llamacpp;
      c.block_tokens = 1;
      c.pool_blocks = rep.kv_cells;
      c.unified = rep.kv_streams == 1;
      c.slots = std::max<i64>(e.parallel, 1);
      c.n_ctx_seq = rep.n_ctx_seq;
      c.max_num_seqs = c.slots;
      c.max_num_batched_tokens = std::max(e.batch_size, e.ubatch_size);  // -b (n_batch, default 2048); -ub is at most it
      break;
    case EngineKind::generic:
      throw InputError("engine",
                       "simulate replays the schedulers of vllm, sglang, trtllm and llamacpp, not the generic engine",
                       "choose --engine vllm|sglang|trtllm|llamacpp");
  }
  // attention data parallel (SGLang --enable-dp-attention, TensorRT-LLM enable_attention_dp): each of the replica's
  // attention groups schedules its own requests into its own pool with its own token budget, and the groups step
  // together (the MoE exchange joins them). One scheduler over the groups' pools, request slots and budgets together
  // stands for them; the step model reads the busiest group's share of the KV (StepTimeModel, attention_groups).
  if (e.attention_dp > 1) {
    c.pool_blocks = mul(c.pool_blocks, e.attention_dp, "KV pool blocks");
    c.max_num_seqs = mul(c.max_num_seqs, e.attention_dp, "max_num_seqs");
    c.max_num_batched_tokens = mul(c.max_num_batched_tokens, e.attention_dp, "max_num_batched_tokens");
  }
  return c;
}

}  // namespace kvplan
