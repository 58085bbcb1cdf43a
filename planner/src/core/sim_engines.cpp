// The four schedulers the simulator replays, one class each, over the shared block pool: vLLM V1
// (token budget, running first, LIFO recompute preemption), SGLang (extend-or-decode steps,
// new_token_ratio reservations, retraction), TensorRT-LLM (GUARANTEED_NO_EVICT / MAX_UTILIZATION / STATIC_BATCH)
// and llama.cpp server (slots, unified or per-slot cells). Rules and sources: docs/simulation.md and
// the section numbers of the simulation research notes quoted at each rule.
#include <algorithm>
#include <deque>
#include <limits>

#include "sim_detail.hpp"

namespace kvplan::sim {

namespace {

constexpr i64 kInf = std::numeric_limits<i64>::max() / 4;

i64 cdiv(i64 a, i64 b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------- shared paged-engine helpers

class Paged : public Engine {
 public:
  // usable_blocks: request blocks, or with cache groups (vLLM V1) physical blocks: the pool then counts bundles, a block
  // of each of the first full-attention kind's groups (a sliding-window kind's when there is none), and the other
  // kinds' blocks, which the prefix cache does not hash, take bundles set aside from it (reserved_)
  Paged(const SimConfig& cfg, Sink& sink, i64 usable_blocks) : cfg_(cfg), sink_(sink), B_(cfg.block_tokens) {
    if (!cfg.cache_groups.empty()) {
      using K = SimCacheGroup::Kind;
      const size_t first = primary_cache_group(cfg.cache_groups);  // checked() found one
      primary_ = cfg.cache_groups[first];
      bundle_ = primary_.groups;
      primary_window_ = primary_.kind != K::full;
      for (size_t i = 0; i < cfg.cache_groups.size(); ++i)
        if (i != first) aux_.push_back(cfg.cache_groups[i]);
      windowed_ = primary_window_ || std::any_of(aux_.begin(), aux_.end(), [](const SimCacheGroup& g) { return g.kind == K::sliding || g.kind == K::chunked; });
      usable_blocks /= bundle_;
    }
    pool_.init(usable_blocks, cfg.prefix_caching);
  }
  // in physical blocks (bundles x the blocks a bundle spans)
  i64 used_blocks() const override { return pool_.used() * bundle_; }
  i64 pool_blocks() const override { return pool_.total() * bundle_; }
  i64 peak_blocks() const override { return pool_.peak() * bundle_; }

 protected:
  Req& R(i32 r) { return sink_.req(r); }

  // ---- cache groups (vLLM V1 hybrid models)
  // Blocks of g wholly before the tokens attention still reads with `computed` tokens cached (remove_skipped_blocks:
  // sliding num_computed_tokens - sliding_window + 1 tokens skipped, chunked-local the chunks before the current one).
  static i64 skipped_blocks(const SimCacheGroup& g, i64 computed) {
    const i64 skip = g.kind == SimCacheGroup::Kind::sliding ? computed - g.window + 1
                     : g.kind == SimCacheGroup::Kind::chunked ? computed / g.window * g.window
                                                               : 0;
    return skip > 0 ? skip / g.block_tokens : 0;
  }
  // Blocks one group of g holds with `computed` tokens cached and slots for `tokens`.
  static i64 group_blocks(const SimCacheGroup& g, i64 computed, i64 tokens) {
    if (tokens <= 0) return 0;
    switch (g.kind) {
      case SimCacheGroup::Kind::state: return 1;
      case SimCacheGroup::Kind::fixed: return g.blocks;
      default: return std::max<i64>(0, cdiv(tokens, g.block_tokens) - skipped_blocks(g, computed));
    }
  }
  // Physical blocks the other kinds hold for a request with `computed` tokens cached and slots for `tokens`.
  i64 aux_need(i64 computed, i64 tokens) const {
    i64 n = 0;
    for (const SimCacheGroup& g : aux_) n += group_blocks(g, computed, tokens) * g.groups;
    return n;
  }
  // Pool blocks (bundles) a request of `tokens` tokens cannot run without: its last decode step's (computed
  // tokens - 1 cached). A sliding window or chunk holds more while a prefill chunk is in flight (vLLM's start-up bound,
  // max_memory_usage_bytes), but how much depends on the chunks the budget gives it: a request between the two bounds
  // that never gets its blocks waits at the head of the line and fails as unschedulable.
  i64 least_bundles(i64 tokens) const {
    if (cfg_.cache_groups.empty()) return cdiv(tokens, B_);
    i64 aux = 0;
    for (const SimCacheGroup& g : aux_) aux += group_blocks(g, tokens - 1, tokens) * g.groups;
    return group_blocks(primary_, tokens - 1, tokens) + cdiv(aux, bundle_);
  }
  // Bundles beyond those set aside that r's other kinds holding `aux` blocks would take.
  i64 aux_extra(const Req& r, i64 aux) const {
    return std::max<i64>(0, cdiv(aux_phys_ - r.aux + aux, bundle_) - static_cast<i64>(reserved_.size()));
  }
  // r's other kinds now hold `aux` blocks: the set-aside bundles follow the total (the pool must have them free).
  void set_aux(Req& r, i64 aux) {
    aux_phys_ += aux - r.aux;
    r.aux = aux;
    const auto target = static_cast<size_t>(cdiv(aux_phys_, bundle_));
    while (reserved_.size() < target) reserved_.push_back(pool_.alloc());
    for (; reserved_.size() > target; reserved_.pop_back()) pool_.release(reserved_.back());
  }
  // Gives back the blocks r's sliding-window and chunked kinds no longer read (remove_skipped_blocks, which
  // allocate_slots calls first, even when it then finds too few free blocks): the first kind's go to the free queue
  // keeping their hashes, last block first (vLLM frees them in that order).
  void skip(Req& r) {
    if (!windowed_) return;
    if (!aux_.empty() && r.extent > 0) set_aux(r, aux_need(r.computed, r.extent));
    if (!primary_window_) return;
    const i64 k = std::min<i64>(skipped_blocks(primary_, r.computed), static_cast<i64>(r.blocks.size()));
    for (i64 i = k - 1; i >= r.skipped; --i) {
      i32& b = r.blocks[static_cast<size_t>(i)];
      if (b >= 0) pool_.release(b);
      b = -1;
    }
    r.skipped = std::max(r.skipped, k);
  }

  // Leading blocks of r found in the prefix cache, at most (num_tokens - 1) / B: the last token is
  // always recomputed to get logits (vLLM get_computed_blocks; SGLang max_prefix_len = input_len - 1).
  // The pool watches the last chain looked up: a request that stays at the queue's head (a preempted one
  // waiting for blocks) is answered from it until an eviction shortens it or `next` is cached.
  i64 lookup_hits(const Req& r, u64& last) {
    hits_.clear();
    hits_free_ = 0;
    hit_first_ = 0;
    last = 0;
    if (!pool_.caching()) return 0;
    if (primary_window_ && primary_.kind == SimCacheGroup::Kind::sliding) return lookup_window(r, last);
    if (pool_.watching() && watch_uid_ == r.uid) {
      const i64 n = pool_.watch_len();
      hits_.assign(pool_.watch_blocks().begin(), pool_.watch_blocks().begin() + n);
      hits_free_ = pool_.watch_free();
      last = n > 0 ? watch_hashes_[static_cast<size_t>(n - 1)] : 0;
      return n;
    }
    watch_hashes_.clear();
    u64 next = 0;
    const i64 max_blocks = (r.num_tokens() - 1) / B_;
    for (i64 i = 0; i < max_blocks; ++i) {
      const u64 h = block_hash(last, r, i, B_);
      const i32 b = pool_.lookup(h);
      if (b < 0) {
        next = h;
        break;
      }
      hits_.push_back(b);
      watch_hashes_.push_back(h);
      hits_free_ += pool_.ref(b) == 0;
      last = h;
    }
    watch_uid_ = r.uid;
    pool_.watch(hits_, next);
    return static_cast<i64>(hits_.size());
  }
  // Every attention layer slides (SlidingWindowManager.find_longest_cache_hit): the hit ends at the last run of
  // cdiv(window - 1, block) cached blocks, searched from the right, and the blocks before the run need not be cached
  // (they stay null); without such a run, a run from block 0 still hits. Returns the hit's length in blocks.
  i64 lookup_window(const Req& r, u64& last) {
    const i64 max_blocks = (r.num_tokens() - 1) / B_;
    chain_.resize(static_cast<size_t>(max_blocks));
    u64 h = 0;
    for (i64 i = 0; i < max_blocks; ++i) chain_[static_cast<size_t>(i)] = h = block_hash(h, r, i, B_);
    const i64 need = std::max<i64>(1, cdiv(primary_.window - 1, B_));
    i64 run = 0, end = -1;
    for (i64 i = max_blocks - 1; i >= 0 && end < 0; --i) {
      if (pool_.lookup(chain_[static_cast<size_t>(i)]) < 0) {
        run = 0;
      } else if (++run >= need) {
        end = i + run;
      }
    }
    if (end < 0) end = run;  // the run the scan ended in starts at block 0
    hit_first_ = end - run;
    for (i64 i = hit_first_; i < end; ++i) {
      const i32 b = pool_.lookup(chain_[static_cast<size_t>(i)]);
      hits_.push_back(b);
      hits_free_ += pool_.ref(b) == 0;
    }
    last = end > 0 ? chain_[static_cast<size_t>(end - 1)] : 0;
    return end;
  }
  // Free blocks taking the hits costs (hit blocks nobody holds sit in the free queue).
  i64 hits_from_free() const { return hits_free_; }
  // Starts r on the blocks of the last lookup: takes them, computed = hit tokens.
  void take_hits(Req& r, u64 last) {
    if (watch_uid_ == r.uid) pool_.unwatch();  // r leaves the queue: its length changes from here
    for (i32 b : hits_) pool_.touch(b);
    r.blocks.assign(static_cast<size_t>(hit_first_), -1);  // a sliding window's hit leaves the blocks before it null
    r.blocks.insert(r.blocks.end(), hits_.begin(), hits_.end());
    r.skipped = hit_first_;
    r.hashed = r.full = static_cast<i64>(r.blocks.size());
    r.last_hash = last;
    r.computed = r.hashed * B_;
    if (r.cached_prompt < 0) {
      r.cached_prompt = std::min(r.computed, r.prompt);
      sink_.prompt_hit(r.prompt, r.cached_prompt);
    }
  }
  // Blocks r must add to hold `tokens` tokens.
  i64 blocks_short(const Req& r, i64 tokens) const {
    return std::max<i64>(0, cdiv(tokens, B_) - static_cast<i64>(r.blocks.size()));
  }
  // Grows r to hold `tokens` tokens (allocate_slots); false, changing nothing but the skipped blocks given back, when
  // the pool is short.
  bool grow(Req& r, i64 tokens) {
    skip(r);
    const i64 n = blocks_short(r, tokens);
    if (aux_.empty()) {
      if (n > pool_.free_count()) return false;
    } else {
      const i64 aux = aux_need(r.computed, std::max(r.extent, tokens));
      if (n + aux_extra(r, aux) > pool_.free_count()) return false;
      set_aux(r, aux);
    }
    for (i64 i = 0; i < n; ++i) r.blocks.push_back(pool_.alloc());
    r.extent = std::max(r.extent, tokens);
    return true;
  }
  // Caches the full blocks of r's first `tokens` tokens (hashing continues the chain). A block holding tokens
  // only r has (after any shared group prefix, outside a session) can be hit by r alone, and only once r gave
  // its blocks back while it still runs: preempted by recompute. Such blocks are hashed then (publish_own),
  // not here, so a long unique prompt costs no hash-table traffic unless it is preempted; the cache holds
  // the same blocks when r looks them up again. Without `hash_own_` (SGLang) they are never cached.
  void cache_blocks(Req& r, i64 tokens) {
    if (!pool_.caching()) return;
    r.full = std::max(r.full, std::min<i64>(tokens / B_, static_cast<i64>(r.blocks.size())));
    for (; r.hashed < r.full; ++r.hashed) {
      if (own_only(r, r.hashed)) return;
      r.last_hash = block_hash(r.last_hash, r, r.hashed, B_);
      pool_.set_hash(r.blocks[static_cast<size_t>(r.hashed)], r.last_hash);
    }
  }
  // Block i of r holds a token no other request shares: the chain's later blocks do too.
  bool own_only(const Req& r, i64 i) const { return r.session < 0 && (r.group < 0 || (i + 1) * B_ > r.group_tokens); }
  // Hashes r's cached own blocks into the prefix cache (vLLM keeps every full block's hash).
  void publish_own(Req& r) {
    if (!hash_own_) return;
    for (; r.hashed < r.full; ++r.hashed) {
      r.last_hash = block_hash(r.last_hash, r, r.hashed, B_);
      const i32 b = r.blocks[static_cast<size_t>(r.hashed)];
      if (b >= 0) pool_.set_hash(b, r.last_hash);  // a block a sliding window gave back is not r's to cache
    }
  }
  // Frees r's blocks, last block first so it is evicted first (vLLM free order), keeping their hashes.
  void free_blocks(Req& r) {
    for (auto it = r.blocks.rbegin(); it != r.blocks.rend(); ++it)
      if (*it >= 0) pool_.release(*it);
    r.blocks.clear();
    r.hashed = r.full = 0;
    r.last_hash = 0;
    if (r.aux > 0) set_aux(r, 0);
    r.extent = r.skipped = 0;
  }
  // Preemption by recompute: blocks freed (hashes kept), computed tokens reset, outputs kept.
  void preempt(Req& r) {
    publish_own(r);
    free_blocks(r);
    r.computed = 0;
    ++r.preemptions;
    sink_.preempted();
  }
  // Computes n tokens of r: true when r caught up and sampled its next token.
  static bool sample(Req& r, i64 n) {
    r.computed += n;
    if (r.computed < r.num_tokens()) return false;
    ++r.out;
    return true;
  }
  // Computes a step's work for r at the step's end: a token when r caught up; true when r is done.
  bool advance(i32 ri, i64 n, double end) {
    Req& r = R(ri);
    if (!sample(r, n)) return false;
    sink_.token(ri, end);
    return r.out >= r.output;
  }
  void finish_done(double end) {
    for (i32 r : done_) sink_.finish(r, end, Failure::none);
    done_.clear();
  }
  // The step's work computed at `end`: a request that is done frees its blocks, leaves `scheduled` (the engine's list
  // of requests holding blocks) and finishes (vLLM, TensorRT-LLM; SGLang's own commit also moves finished prompts to
  // its decode batch).
  void commit_retiring(std::vector<i32>& scheduled, const std::vector<Work>& work, double end) {
    for (const Work& w : work)
      if (advance(w.req, w.tokens, end)) {
        free_blocks(R(w.req));
        done_.push_back(w.req);
      }
    if (!done_.empty()) std::erase_if(scheduled, [&](i32 r) { return R(r).out >= R(r).output; });
    finish_done(end);
  }

  const SimConfig& cfg_;
  Sink& sink_;
  i64 B_;
  bool hash_own_ = true;
  BlockPool pool_;
  std::vector<i32> hits_, done_;
  i64 hits_free_ = 0, hit_first_ = 0;  // hit_first_: blocks before the hit (a sliding window's, null)
  std::vector<u64> chain_;             // lookup_window's block hashes
  // cache groups: the kind the pool's blocks stand for (bundle_ blocks each), the others, the bundles set aside for
  // the others' aux_phys_ blocks, and whether any kind gives blocks back
  SimCacheGroup primary_;
  i64 bundle_ = 1;
  bool primary_window_ = false, windowed_ = false;
  std::vector<SimCacheGroup> aux_;
  std::vector<i32> reserved_;
  i64 aux_phys_ = 0;
  // the chain the pool watches: whose (uid) and its blocks' hashes
  i64 watch_uid_ = -1;
  std::vector<u64> watch_hashes_;
};

// The step's shape for the time model: a request computing exactly its last sampled token decodes
// (reading `computed` cached tokens); anything else is a prefill chunk of n tokens after `computed`.
void fill_batch(Sink& sink, const std::vector<Work>& work, StepBatch& b) {
  for (const Work& w : work) {
    const Req& r = sink.req(w.req);
    if (w.tokens == 1 && r.out >= 1 && r.computed + 1 == r.num_tokens()) {
      ++b.decode_seqs;
      b.decode_context_tokens += static_cast<double>(r.computed);
    } else {
      ++b.prefill_seqs;
      b.prefill_tokens += w.tokens;
      const double n = static_cast<double>(w.tokens);
      b.prefill_attention_pairs += n * (static_cast<double>(r.computed) + (n + 1) / 2);
    }
  }
}

// ---------------------------------------------------------------- vLLM V1 (research §2)

class Vllm final : public Paged {
 public:
  // V1: one block is vLLM's null_block placeholder, never given to requests (§2.4, block_pool.py). V0's block
  // manager has none, and admits a prompt only while watermark = 1% of the blocks stays free after it
  // (vllm/core/block_manager.py SelfAttnBlockSpaceManager.can_allocate, watermark 0.01).
  Vllm(const SimConfig& cfg, Sink& sink)
      : Paged(cfg, sink, cfg.scheduler == SchedulerKind::vllm_v0 ? cfg.pool_blocks : cfg.pool_blocks - 1),
        prio_(cfg.policy == "priority"),
        v0_(cfg.scheduler == SchedulerKind::vllm_v0),
        watermark_(v0_ ? static_cast<i64>(0.01 * static_cast<double>(cfg.pool_blocks)) : 0) {}

  Failure admit_check(const Req& r) const override {
    if (cfg_.max_model_len > 0 && r.prompt + r.output > cfg_.max_model_len) return Failure::over_context;  // HTTP 400
    const i64 longest = r.prompt + r.output - 1;  // the last token is never computed
    if (least_bundles(longest) > pool_.total()) return Failure::over_pool;
    if (!cfg_.chunked_prefill && longest > cfg_.max_num_batched_tokens) return Failure::over_step_budget;
    return Failure::none;
  }
  void arrive(i32 r) override { push_back_waiting(r); }
  bool busy() const override { return !running_.empty() || waiting() > 0; }
  i64 running() const override { return static_cast<i64>(running_.size()); }
  i64 waiting() const override { return static_cast<i64>(prio_ ? heap_.size() : fifo_.size()); }

  // V1 Scheduler.schedule() (§2.2): running requests first in list order with min(remaining, budget)
  // tokens; a request that cannot get blocks preempts the last running request (priority: the
  // worst (priority, arrival)); then, only in a step without preemption, waiting requests in order
  // with the budget left, head-of-line blocking on the first that does not fit.
  // V0 without chunked prefill (Scheduler._schedule_default, vllm/core/scheduler.py): waiting prompts first, whole,
  // in order while the token budget, max_num_seqs and the blocks (above the watermark) allow; a step that admits
  // any runs no decodes; otherwise every running request decodes, preempting the last as V1 does. V0 with chunked
  // prefill (_schedule_chunked_prefill: decodes, then prompt chunks in the budget left) follows V1's order.
  bool schedule(std::vector<Work>& work, StepBatch& batch, double now) override {
    i64 budget = cfg_.max_num_batched_tokens;
    bool preempted = false, admitted = false;
    if (v0_ && !cfg_.chunked_prefill) {
      admitted = admit_waiting(work, budget);
      if (!admitted) preempted = schedule_running(work, budget);
    } else {
      preempted = schedule_running(work, budget);
      if (!preempted) admitted = admit_waiting(work, budget);
    }
    fill_batch(sink_, work, batch);
    if (work.empty() && !lagged_.empty()) {  // nothing scheduled: LLMEngine.step drains the output queue at once
      deliver_lagged(now);
      lagged_.clear();
      return true;
    }
    return !work.empty() || preempted || admitted;
  }

  void commit(const std::vector<Work>& work, double end) override {
    if (!cfg_.async_output) {
      commit_retiring(running_, work, end);
      return;
    }
    // V0 with the async output processor: this step's tokens wait for the next step; last step's reach the client
    // now. A request whose last token is in flight decodes once more (its work skipped here: the token is dropped).
    lagged_next_.clear();
    for (const Work& w : work) {
      Req& r = R(w.req);
      if (r.out < r.output && sample(r, w.tokens)) lagged_next_.push_back({w.req, r.out >= r.output});
    }
    deliver_lagged(end);
    lagged_.swap(lagged_next_);
  }

  i32 drop_stuck() override {
    if (waiting() == 0) return -1;
    const i32 r = front_waiting();
    pop_waiting();
    return r;
  }

 private:
  // The running requests in list order, each min(remaining, budget) tokens; true when one was preempted.
  bool schedule_running(std::vector<Work>& work, i64& budget) {
    bool preempted = false;
    for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
      const i32 ri = running_[i];
      Req& r = R(ri);
      const i64 n = std::min(r.num_tokens() - r.computed, budget);
      if (n <= 0) continue;
      bool ok = grow(r, r.computed + n), self = false;
      while (!ok) {
        const size_t v = victim();
        const i32 vi = running_[v];
        if (v < i) {  // priority: a request scheduled earlier this step gives its tokens back
          for (size_t k = 0; k < work.size(); ++k)
            if (work[k].req == vi) {
              budget += work[k].tokens;
              work.erase(work.begin() + static_cast<long>(k));
              break;
            }
          --i;
        }
        running_.erase(running_.begin() + static_cast<long>(v));
        preempt(R(vi));
        push_front_waiting(vi);
        preempted = true;
        if (vi == ri) {
          self = true;
          break;
        }
        ok = grow(r, r.computed + n);
      }
      if (self) break;
      cache_blocks(r, std::min(r.computed + n, r.num_tokens()));
      work.push_back({ri, n});
      budget -= n;
    }
    return preempted;
  }

  // Waiting requests in order with the budget left (whole prompts without chunked prefill); true when any joined.
  bool admit_waiting(std::vector<Work>& work, i64& budget) {
    bool admitted = false;
    while (budget > 0 && static_cast<i64>(running_.size()) < cfg_.max_num_seqs && waiting() > 0) {
      const i32 ri = front_waiting();
      Req& r = R(ri);
      u64 last = 0;
      const i64 nh = lookup_hits(r, last);
      i64 n = r.num_tokens() - nh * B_;
      if (!cfg_.chunked_prefill && n > budget) break;
      n = std::min(n, budget);
      const i64 aux = aux_.empty() ? 0 : aux_extra(r, aux_need(nh * B_, nh * B_ + n));
      if (cdiv(nh * B_ + n, B_) - nh + hits_from_free() + aux + watermark_ > pool_.free_count()) break;
      take_hits(r, last);
      grow(r, r.computed + n);
      cache_blocks(r, std::min(r.computed + n, r.num_tokens()));
      pop_waiting();
      running_.push_back(ri);
      work.push_back({ri, n});
      budget -= n;
      admitted = true;
    }
    return admitted;
  }

  // The async output processor's hand-off: the tokens sampled in the step before reach the client at t; a request
  // whose last token that was leaves the engine (its blocks freed, out of the running list or, preempted by its
  // extra decode, the waiting queue). Requests finish after the loop: the driver may reuse their slots at once.
  void deliver_lagged(double t) {
    for (const Lagged& l : lagged_) {
      sink_.token(l.req, t);
      if (!l.last) continue;
      free_blocks(R(l.req));
      done_.push_back(l.req);
    }
    if (done_.empty()) return;
    const auto gone = [&](i32 ri) { return std::find(done_.begin(), done_.end(), ri) != done_.end(); };
    std::erase_if(running_, gone);
    std::erase_if(fifo_, gone);
    if (std::erase_if(heap_, gone) > 0) std::make_heap(heap_.begin(), heap_.end(), [&](i32 a, i32 b) { return before(b, a); });
    finish_done(t);
  }

  size_t victim() {
    if (!prio_) return running_.size() - 1;
    size_t v = 0;
    for (size_t k = 1; k < running_.size(); ++k)
      if (!before(running_[k], running_[v])) v = k;  // the last of the worst
    return v;
  }
  bool before(i32 a, i32 b) {  // (priority, arrival) order of the priority queue
    const Req &x = R(a), &y = R(b);
    if (x.priority != y.priority) return x.priority < y.priority;
    if (x.arrival != y.arrival) return x.arrival < y.arrival;
    return x.uid < y.uid;
  }
  void push_back_waiting(i32 r) {
    if (!prio_) {
      fifo_.push_back(r);
      return;
    }
    heap_.push_back(r);
    std::push_heap(heap_.begin(), heap_.end(), [&](i32 a, i32 b) { return before(b, a); });
  }
  void push_front_waiting(i32 r) {  // preempted requests go back to the front (appendleft)
    if (!prio_) {
      fifo_.push_front(r);
      return;
    }
    push_back_waiting(r);
  }
  i32 front_waiting() const { return prio_ ? heap_.front() : fifo_.front(); }
  void pop_waiting() {
    if (!prio_) {
      fifo_.pop_front();
      return;
    }
    std::pop_heap(heap_.begin(), heap_.end(), [&](i32 a, i32 b) { return before(b, a); });
    heap_.pop_back();
  }

  bool prio_;
  bool v0_;         // vLLM V0 (< 0.8): prompts before decodes, no null block
  i64 watermark_;   // V0: blocks a prompt's admission leaves free (1% of the pool)
  std::vector<i32> running_;
  std::deque<i32> fifo_;
  std::vector<i32> heap_;
  struct Lagged {
    i32 req;
    bool last;  // the request's last token: it leaves the engine when the token is handed over
  };
  std::vector<Lagged> lagged_, lagged_next_;  // async output: tokens sampled in the last step, in this one
};

// ---------------------------------------------------------------- SGLang (research §3)

class Sglang final : public Paged {
 public:
  static constexpr i64 kClipMaxNew = 4096;  // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
  static constexpr i64 kRetractSteps = 20;  // SGLANG_RETRACT_DECODE_STEPS

  Sglang(const SimConfig& cfg, Sink& sink)
      : Paged(cfg, sink, cfg.pool_blocks),
        ratio_(std::min(cfg.init_new_token_ratio, 1.0)),
        decay_((ratio_ - cfg.min_new_token_ratio) / static_cast<double>(cfg.new_token_ratio_decay_steps)),
        lpm_(cfg.policy == "lpm" && cfg.prefix_caching) {
    // A retracted request's KV is freed without going into the radix tree (§3.4, older releases), so
    // tokens no other request shares are never hit again: not caching them saves hashing every token
    // of every request at page size 1.
    hash_own_ = false;
  }

  // The tokenizer manager refuses input + max_new_tokens >= context_len (HTTP 400, _validate_one_request); the
  // scheduler caps a request at max_req_len = min(context_len - 1, max_total_num_tokens - 1) (tp_worker.py), aborts a
  // prompt of max_req_len - 5 tokens or more (validate_input_length) and clips max_new_tokens to
  // max_req_len - input - 1 (init_req_max_new_tokens): such a request ends early, truncated
  i64 max_req_len() const {
    const i64 pool = pool_.total() * B_ - 1;
    return cfg_.max_model_len > 0 ? std::min(cfg_.max_model_len - 1, pool) : pool;
  }
  i64 max_new(const Req& r) const { return std::min(r.output, max_req_len() - r.prompt - 1); }
  Failure admit_check(const Req& r) const override {
    if (cfg_.max_model_len > 0 && r.prompt + r.output >= cfg_.max_model_len) return Failure::over_context;
    if (r.prompt >= max_req_len() - 5) return Failure::over_pool;
    // a lone request must pass the admission check
    if (r.prompt + std::min(max_new(r), kClipMaxNew) + B_ > pool_.total() * B_) return Failure::over_pool;
    return Failure::none;
  }
  void arrive(i32 ri) override {
    Req& r = R(ri);
    if (const i64 n = max_new(r); n < r.output) {
      r.output = n;
      r.truncated = true;
    }
    waiting_.push_back(ri);
  }
  bool busy() const override { return !running_.empty() || !waiting_.empty() || chunked_ >= 0; }
  i64 running() const override { return static_cast<i64>(running_.size()) + (chunked_ >= 0); }
  i64 waiting() const override { return static_cast<i64>(waiting_.size()); }

  // get_next_batch_to_run (§3.1): an extend batch when one can be formed, else one decode step. With
  // --enable-mixed-chunk the running requests decode inside the extend batch (mix_with_running).
  bool schedule(std::vector<Work>& work, StepBatch& batch, double) override {
    prefill_ = false;
    if (chunked_ >= 0 || (!waiting_.empty() && !batch_full_)) {
      form_extend(work);
      if (!work.empty()) {
        prefill_ = true;
        extend_items_ = work.size();
        if (cfg_.mixed_chunk) decode_running(work);
        fill_batch(sink_, work, batch);
        return true;
      }
    }
    if (running_.empty()) return false;
    bool retracted = false;
    if (pages_needed(running_) > pool_.free_count()) {
      retract();
      retracted = true;
    } else {
      ratio_ = std::max(ratio_ - decay_, cfg_.min_new_token_ratio);  // decays once per decode step
    }
    retracted = decode_running(work) || retracted;
    fill_batch(sink_, work, batch);
    return !work.empty() || retracted;
  }

  void commit(const std::vector<Work>& work, double end) override {
    bool shrank = false;
    for (size_t i = 0; i < work.size(); ++i) {
      const Work& w = work[i];
      const bool done = advance(w.req, w.tokens, end);
      Req& r = R(w.req);
      if (done) {
        free_blocks(r);
        done_.push_back(w.req);
        shrank = true;
        if (w.req == chunked_) chunked_ = -1;
        continue;
      }
      if (prefill_ && i < extend_items_ && r.computed == r.num_tokens() - 1) {  // prompt complete: joins the decode batch
        if (w.req == chunked_) chunked_ = -1;
        running_.push_back(w.req);
      }
    }
    if (shrank) {
      std::erase_if(running_, [&](i32 r) { return R(r).out >= R(r).output; });
      batch_full_ = false;  // update_running_batch: the batch shrank, admission may resume
    }
    // an idle server re-inits the ratio (event_loop_normal: no batch -> self_check_during_idle, new_token_ratio =
    // init_new_token_ratio), so a burst does not inherit the decay of requests long gone
    if (!busy()) ratio_ = std::min(cfg_.init_new_token_ratio, 1.0);
    finish_done(end);
  }

  i32 drop_stuck() override {
    if (chunked_ >= 0) {
      const i32 r = chunked_;
      free_blocks(R(r));
      chunked_ = -1;
      return r;
    }
    if (waiting_.empty()) return -1;
    const i32 r = waiting_.front();
    waiting_.pop_front();
    return r;
  }

 private:
  i64 pages_needed(const std::vector<i32>& reqs) {  // check_decode_mem: a page per request at a page boundary
    i64 n = 0;
    for (i32 ri : reqs) n += blocks_short(R(ri), R(ri).computed + 1);
    return n;
  }

  // PrefillAdder (§3.2): the chunked request first, then waiting requests in policy order; each needs
  // input + min(max_new, 4096) + a page within free + evictable tokens less the running requests'
  // reservations (remaining max_new x new_token_ratio); NO_TOKEN or max_running_requests stop the batch
  // and mark it full; a prompt longer than the chunk budget is cut and becomes the chunked request.
  // Mixed chunks: the running requests' decode tokens come off the input, chunk and total budgets first
  // (mixed_with_decode_tokens = running_bs).
  void form_extend(std::vector<Work>& work) {
    const i64 mixed = cfg_.mixed_chunk ? static_cast<i64>(running_.size()) : 0;
    i64 rem_input = cfg_.max_prefill_tokens - mixed;
    i64 rem_chunk = cfg_.chunked_prefill ? cfg_.max_num_batched_tokens - mixed : kInf;
    double avail = static_cast<double>(pool_.free_count() * B_ - mixed);
    for (i32 ri : running_) {
      const Req& r = R(ri);
      avail -= static_cast<double>(std::min(r.output - r.out, kClipMaxNew)) * ratio_;
    }
    i64 batch_reqs = static_cast<i64>(running_.size());
    if (chunked_ >= 0) {
      Req& r = R(chunked_);
      const i64 left = r.num_tokens() - r.computed;
      const i64 n = left <= rem_chunk ? left : rem_chunk / B_ * B_;
      if (n <= 0 || !grow(r, r.computed + n)) return;
      cache_blocks(r, r.computed + n);
      work.push_back({chunked_, n});
      if (n < left) return;  // the whole chunk budget went to it
      rem_chunk -= n;
      rem_input -= n;
      avail -= static_cast<double>(n + std::min(r.output - r.out, kClipMaxNew));
      ++batch_reqs;
    }
    if (lpm_ && waiting_.size() <= 128) order_lpm();  // lpm falls back to FCFS above 128 waiting
    while (!waiting_.empty()) {
      if (batch_reqs >= cfg_.max_num_seqs) {
        batch_full_ = true;
        break;
      }
      const i32 ri = waiting_.front();
      Req& r = R(ri);
      u64 last = 0;
      const i64 nh = lookup_hits(r, last);
      const i64 ext = r.num_tokens() - nh * B_;
      const i64 max_new = std::min(r.output - r.out, kClipMaxNew);
      const double need = static_cast<double>(cdiv(ext, B_) * B_ + max_new + B_ + hits_from_free() * B_);
      if (need > avail) {
        batch_full_ = true;
        break;
      }  // NO_TOKEN
      if (ext > rem_input && !work.empty()) break;
      i64 n = ext;
      if (ext > rem_chunk) {
        n = rem_chunk / B_ * B_;
        if (n <= 0) break;
      }
      if (cdiv(nh * B_ + n, B_) - nh + hits_from_free() > pool_.free_count()) {
        batch_full_ = true;
        break;
      }
      take_hits(r, last);
      grow(r, r.computed + n);
      cache_blocks(r, r.computed + n);
      waiting_.pop_front();
      work.push_back({ri, n});
      ++batch_reqs;
      rem_input -= n;
      rem_chunk -= n;
      if (n < ext) {  // truncated to the chunk budget: the one chunked request, reserving nothing yet
        chunked_ = ri;
        break;
      }
      avail -= static_cast<double>(ext + max_new);
    }
  }

  // One decode token for every running request (prepare_for_decode): a decode step, or the running requests
  // mixed into an extend step (mix_with_running; no check_decode_mem there, PrefillAdder left them the tokens).
  // A request that finds no page (a chunked prefill holds the rest, or a page size above 1 needs more than the
  // token left) goes back to wait, as a retraction; true when one did.
  bool decode_running(std::vector<Work>& work) {
    bool retracted = false;
    for (i32 ri : running_) {
      Req& r = R(ri);
      if (!grow(r, r.computed + 1)) {
        preempt(r);
        waiting_.push_back(ri);
        retracted = true;
        continue;
      }
      cache_blocks(r, r.computed + 1);
      work.push_back({ri, 1});
    }
    if (retracted) std::erase_if(running_, [&](i32 r) { return R(r).computed == 0; });
    return retracted;
  }

  void order_lpm() {  // longest cached prefix first (ties keep arrival order)
    keyed_.clear();
    for (i32 ri : waiting_) {
      u64 last = 0;
      keyed_.push_back({-lookup_hits(R(ri), last), ri});
    }
    std::stable_sort(keyed_.begin(), keyed_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t k = 0; k < keyed_.size(); ++k) waiting_[k] = keyed_[k].second;
  }

  // retract_decode (§3.4): victims in order of fewest outputs, then longest prompt, until free tokens
  // cover RETRACT_DECODE_STEPS tokens per remaining request; they return to the waiting queue's end and
  // are re-prefilled; the ratio is re-estimated from the remaining requests.
  void retract() {
    keyed_.clear();
    for (i32 ri : running_) keyed_.push_back({0, ri});
    std::stable_sort(keyed_.begin(), keyed_.end(), [&](const auto& a, const auto& b) {
      const Req &x = R(a.second), &y = R(b.second);
      if (x.out != y.out) return x.out > y.out;
      return x.prompt < y.prompt;
    });
    bool first = true;
    while (keyed_.size() > 1) {
      std::vector<i32>& rest = scratch_;
      rest.clear();
      for (const auto& k : keyed_) rest.push_back(k.second);
      const i64 left = static_cast<i64>(rest.size());
      if (!first && pool_.free_count() * B_ >= kRetractSteps * left && pages_needed(rest) <= pool_.free_count()) break;
      first = false;
      const i32 v = keyed_.back().second;
      keyed_.pop_back();
      preempt(R(v));
      waiting_.push_back(v);
    }
    std::erase_if(running_, [&](i32 r) { return R(r).computed == 0; });
    double decoded = 0, max_new = 0;
    for (i32 ri : running_) {
      decoded += static_cast<double>(R(ri).out);
      max_new += static_cast<double>(R(ri).output);
    }
    ratio_ = std::min(
        1.0, (decoded + static_cast<double>(kRetractSteps) * static_cast<double>(running_.size())) / (max_new + 1));
    batch_full_ = false;
  }

  double ratio_, decay_;
  bool lpm_;
  bool prefill_ = false, batch_full_ = false;
  size_t extend_items_ = 0;  // the step's first work items are extend (prefill) ones; mixed decodes follow
  i32 chunked_ = -1;
  std::vector<i32> running_, scratch_;
  std::deque<i32> waiting_;
  std::vector<std::pair<i64, i32>> keyed_;
};

// ---------------------------------------------------------------- TensorRT-LLM (research §4)

class Trtllm final : public Paged {
 public:
  Trtllm(const SimConfig& cfg, Sink& sink)
      : Paged(cfg, sink, cfg.pool_blocks),
        no_evict_(cfg.capacity_policy != "MAX_UTILIZATION"),
        static_(cfg.capacity_policy == "STATIC_BATCH") {}

  Failure admit_check(const Req& r) const override {
    if (cfg_.max_model_len > 0 && r.prompt + r.output > cfg_.max_model_len) return Failure::over_context;
    if (cdiv(r.prompt + r.output - (no_evict_ ? 0 : 1), B_) > pool_.total()) return Failure::over_pool;
    // the prompt must fit one step without chunking; a MAX_UTILIZATION request that is paused later recomputes its
    // outputs too, and one whose recompute no step can hold then fails as unschedulable (drop_stuck), not up front
    if (!cfg_.chunked_prefill && r.prompt > cfg_.max_num_batched_tokens) return Failure::over_step_budget;
    return Failure::none;
  }
  void arrive(i32 r) override { pending_.push_back(r); }
  bool busy() const override { return !started_.empty() || !pending_.empty(); }
  i64 running() const override { return static_cast<i64>(started_.size()); }
  i64 waiting() const override { return static_cast<i64>(pending_.size()); }

  bool schedule(std::vector<Work>& work, StepBatch& batch, double) override {
    const bool changed = no_evict_ ? schedule_no_evict(work) : schedule_max_util(work);
    fill_batch(sink_, work, batch);
    return changed || !work.empty();
  }

  void commit(const std::vector<Work>& work, double end) override { commit_retiring(started_, work, end); }

  i32 drop_stuck() override {
    if (pending_.empty()) return -1;
    const i32 r = pending_.front();
    pending_.pop_front();
    return r;
  }

 private:
  bool generating(const Req& r) const { return r.out >= 1 && r.computed + 1 == r.num_tokens(); }
  // Context tokens r computes with `budget` tokens left: all, or (chunked) whole blocks of it (§4.1:
  // every chunk but the last is a multiple of the block size); 0 when none fit.
  i64 context_chunk(const Req& r, i64 budget) const {
    const i64 left = r.num_tokens() - r.computed;
    if (left <= budget) return left;
    return cfg_.chunked_prefill ? budget / B_ * B_ : 0;
  }
  i64 to_completion(const Req& r) const {  // getRemainingBlocksToCompletion
    return std::max<i64>(0, cdiv(r.prompt + r.output, B_) - static_cast<i64>(r.blocks.size()));
  }

  // GUARANTEED_NO_EVICT (§4.2): started requests reserve their blocks to completion; pending requests
  // start in order while their prompt + max_new blocks fit what is left (the first that does not fit
  // stops the rest); generation requests are batched first, then context chunks, within max_num_tokens.
  // STATIC_BATCH is the same scheduler (GuaranteedNoEvictScheduler::impl<true>, capacityScheduler.cpp) with one
  // rule more: requests in their context phase, new or part-way through a chunked context, run only in a step with
  // no request generating, so a batch that has started decoding takes no one until its last request ends.
  bool schedule_no_evict(std::vector<Work>& work) {
    i64 avail = pool_.free_count();
    for (i32 ri : started_) avail -= to_completion(R(ri));
    i64 budget = cfg_.max_num_batched_tokens;
    bool decoding = false;
    for (i32 ri : started_) {
      Req& r = R(ri);
      decoding = decoding || generating(r);
      if (!generating(r) || budget < 1 || !grow(r, r.computed + 1)) continue;  // reserved: grow succeeds
      cache_blocks(r, r.computed + 1);
      work.push_back({ri, 1});
      --budget;
    }
    if (static_ && decoding) return false;
    for (i32 ri : started_) {
      Req& r = R(ri);
      if (generating(r)) continue;
      const i64 n = context_chunk(r, budget);
      if (n <= 0) break;
      if (!grow(r, r.computed + n)) continue;  // reserved to completion: does not happen
      cache_blocks(r, r.computed + n);
      work.push_back({ri, n});
      budget -= n;
    }
    bool started = false;
    while (!pending_.empty() && static_cast<i64>(started_.size()) < cfg_.max_num_seqs && budget > 0) {
      const i32 ri = pending_.front();
      Req& r = R(ri);
      u64 last = 0;
      const i64 nh = lookup_hits(r, last);
      const i64 need = cdiv(r.prompt + r.output, B_) - nh + hits_from_free();
      if (need > avail) break;
      const i64 left = r.num_tokens() - nh * B_;
      const i64 take = left <= budget ? left : (cfg_.chunked_prefill ? budget / B_ * B_ : 0);
      if (take <= 0) break;
      take_hits(r, last);
      grow(r, r.computed + take);
      cache_blocks(r, r.computed + take);
      avail -= need;
      pending_.pop_front();
      r.start_seq = seq_++;
      started_.push_back(ri);
      work.push_back({ri, take});
      budget -= take;
      started = true;
    }
    return started;
  }

  // MAX_UTILIZATION (§4.2): blocks only for this step; when a started request cannot get them, the
  // last started request is paused (blocks freed, recomputed later) and the step retried; new requests
  // start in order while their chunk's blocks fit (none in a step that paused one).
  bool schedule_max_util(std::vector<Work>& work) {
    i64 budget = cfg_.max_num_batched_tokens;
    bool paused = false;
    for (size_t i = 0; i < started_.size(); ++i) {
      const i32 ri = started_[i];
      Req& r = R(ri);
      const i64 n = generating(r) ? (budget >= 1 ? 1 : 0) : context_chunk(r, budget);
      if (n <= 0) continue;
      bool ok = grow(r, r.computed + n), self = false;
      while (!ok) {
        const i32 v = started_.back();
        started_.pop_back();
        preempt(R(v));
        pending_.push_front(v);
        paused = true;
        if (v == ri) {
          self = true;
          break;
        }
        ok = grow(r, r.computed + n);
      }
      if (self) break;
      cache_blocks(r, r.computed + n);
      work.push_back({ri, n});
      budget -= n;
    }
    bool started = false;
    while (!paused && !pending_.empty() && static_cast<i64>(started_.size()) < cfg_.max_num_seqs && budget > 0) {
      const i32 ri = pending_.front();
      Req& r = R(ri);
      u64 last = 0;
      const i64 nh = lookup_hits(r, last);
      const i64 left = r.num_tokens() - nh * B_;
      const i64 n = left <= budget ? left : (cfg_.chunked_prefill ? budget / B_ * B_ : 0);
      if (n <= 0) break;
      if (cdiv(nh * B_ + n, B_) - nh + hits_from_free() > pool_.free_count()) break;
      take_hits(r, last);
      grow(r, r.computed + n);
      cache_blocks(r, r.computed + n);
      pending_.pop_front();
      r.start_seq = seq_++;
      started_.push_back(ri);
      work.push_back({ri, n});
      budget -= n;
      started = true;
    }
    return paused || started;
  }

  bool no_evict_, static_;
  i64 seq_ = 0;
  std::vector<i32> started_;
  std::deque<i32> pending_;
};

// ---------------------------------------------------------------- llama.cpp server (research §5)

class Llamacpp final : public Engine {
 public:
  static constexpr double kSimilarity = 0.10;  // --slot-prompt-similarity default

  Llamacpp(const SimConfig& cfg, Sink& sink)
      : cfg_(cfg),
        sink_(sink),
        n_ctx_seq_(cfg.n_ctx_seq),
        slots_(static_cast<size_t>(cfg.slots)),
        cells_(cfg.unified ? cfg.pool_blocks : cfg.n_ctx_seq * cfg.slots) {}

  // A prompt that does not fit the slot context is rejected (HTTP 400 exceed_context_size_error, §5).
  Failure admit_check(const Req& r) const override {
    if (r.prompt >= n_ctx_seq_) return Failure::over_context;
    return cfg_.max_model_len <= 0 || r.prompt < cfg_.max_model_len ? Failure::none : Failure::over_context;
  }
  void arrive(i32 r) override { waiting_.push_back(r); }
  bool busy() const override { return active_ > 0 || !waiting_.empty(); }
  i64 running() const override { return active_; }
  i64 waiting() const override { return static_cast<i64>(waiting_.size()); }
  i64 used_blocks() const override {
    i64 n = 0;
    for (const Slot& s : slots_) n += s.req >= 0 ? s.cells : 0;
    return n;
  }
  i64 cached_blocks() const override {
    i64 n = 0;
    for (const Slot& s : slots_) n += s.req < 0 ? s.cells : 0;
    return n;
  }
  i64 pool_blocks() const override { return cells_; }
  i64 peak_blocks() const override { return peak_; }

  // update_slots (§5): deferred requests take free slots in order (the slot whose cached prompt shares
  // the most, above --slot-prompt-similarity, else the least recently used); then one token for every
  // generating slot and pending prompts up to n_batch tokens. With a unified pool that runs out, idle
  // slots' caches are purged first and, if still short, every active slot is terminated.
  bool schedule(std::vector<Work>& work, StepBatch& batch, double now) override {
    bool changed = false;
    while (!waiting_.empty() && active_ < cfg_.slots) {
      take_slot(waiting_.front());
      waiting_.pop_front();
      changed = true;
    }
    i64 budget = cfg_.max_num_batched_tokens;
    i64 free = cfg_.unified ? cells_ - total_cells() : kInf;
    i64 decodes = 0;
    for (const Slot& s : slots_)
      if (s.req >= 0 && generating(sink_.req(s.req))) ++decodes;
    if (decodes > free) {
      purge_idle();
      free = cells_ - total_cells();
    }
    if (decodes > free) {
      terminate_all(now);
      return true;
    }
    for (const Slot& s : slots_)
      if (s.req >= 0 && generating(sink_.req(s.req))) work.push_back({s.req, 1});
    free -= decodes;
    budget -= decodes;
    i64 planned = decodes;  // cells this step adds (counted at commit)
    bool purged = false;
    for (const Slot& s : slots_) {
      if (s.req < 0 || budget <= 0) continue;
      const Req& r = sink_.req(s.req);
      if (generating(r)) continue;
      i64 n = std::min(r.num_tokens() - r.computed, budget);
      if (n > free && cfg_.unified && !purged) {
        purge_idle();
        purged = true;
        free = cells_ - total_cells() - planned;
      }
      n = std::min(n, free);
      if (n <= 0) continue;
      work.push_back({s.req, n});
      free -= n;
      budget -= n;
      planned += n;
    }
    if (work.empty() && active_ > 0) {  // prompts that cannot get a cell: out of space
      terminate_all(now);
      return true;
    }
    fill_batch(sink_, work, batch);
    return changed || !work.empty();
  }

  void commit(const std::vector<Work>& work, double end) override {
    for (const Work& w : work) {
      Req& r = sink_.req(w.req);
      Slot& s = slot_of(w.req);
      r.computed += w.tokens;
      s.cells = r.computed;
      if (r.computed < r.num_tokens()) continue;
      ++r.out;
      sink_.token(w.req, end);
      // context shift off: stop when slot.n_past + 1 >= n_ctx, i.e. prompt + outputs reach n_ctx_seq
      const bool full = r.out < r.output && r.prompt + r.out >= n_ctx_seq_;
      if (r.out >= r.output || full) {
        r.truncated = full;
        release(s, w.req);
        done_.push_back(w.req);
      }
    }
    for (i32 r : done_) sink_.finish(r, end, Failure::none);
    done_.clear();
    track_peak();
  }

  i32 drop_stuck() override {
    if (waiting_.empty()) return -1;
    const i32 r = waiting_.front();
    waiting_.pop_front();
    return r;
  }

 private:
  struct Slot {
    i32 req = -1;
    Req content;    // what the slot's cache holds (content fields only)
    i64 cells = 0;  // tokens cached
    i64 last_used = 0;
  };
  static bool generating(const Req& r) { return r.out >= 1 && r.computed + 1 == r.num_tokens(); }
  i64 total_cells() const {
    i64 n = 0;
    for (const Slot& s : slots_) n += s.cells;
    return n;
  }
  Slot& slot_of(i32 r) {
    for (Slot& s : slots_)
      if (s.req == r) return s;
    return slots_.front();
  }
  void take_slot(i32 ri) {
    Req& r = sink_.req(ri);
    Slot* best = nullptr;
    i64 best_lcp = 0;
    if (cfg_.prefix_caching)
      for (Slot& s : slots_) {
        if (s.req >= 0 || s.cells == 0) continue;
        const i64 lcp = common_prefix(s.content, s.cells, r, r.prompt);
        if (lcp > best_lcp && static_cast<double>(lcp) > kSimilarity * static_cast<double>(r.prompt)) {
          best = &s;
          best_lcp = lcp;
        }
      }
    if (!best)
      for (Slot& s : slots_)
        if (s.req < 0 && (!best || s.last_used < best->last_used)) best = &s;
    const i64 hit =
        cfg_.prefix_caching ? std::min(common_prefix(best->content, best->cells, r, r.prompt), r.prompt - 1) : 0;
    best->cells = hit;  // cache_prompt: keep the common prefix, drop the rest
    best->req = ri;
    r.computed = hit;
    ++active_;
    if (r.cached_prompt < 0) {
      r.cached_prompt = hit;
      sink_.prompt_hit(r.prompt, hit);
    }
  }
  void release(Slot& s, i32 ri) {
    const Req& r = sink_.req(ri);
    s.content = Req{};
    s.content.uid = r.uid;
    s.content.group = r.group;
    s.content.group_tokens = r.group_tokens;
    s.content.session = r.session;
    s.content.epoch = r.epoch;
    s.cells = r.computed;
    s.req = -1;
    s.last_used = ++clock_;
    --active_;
  }
  void purge_idle() {
    for (Slot& s : slots_)
      if (s.req < 0) s.cells = 0;
  }
  void terminate_all(double now) {
    for (Slot& s : slots_) {
      if (s.req < 0) continue;
      const i32 r = s.req;
      s.req = -1;
      s.cells = 0;
      --active_;
      done_.push_back(r);
    }
    for (i32 r : done_) sink_.finish(r, now, Failure::terminated);
    done_.clear();
  }
  void track_peak() { peak_ = std::max(peak_, used_blocks()); }

  const SimConfig& cfg_;
  Sink& sink_;
  i64 n_ctx_seq_;
  std::vector<Slot> slots_;
  i64 cells_;
  i64 active_ = 0, clock_ = 0, peak_ = 0;
  std::deque<i32> waiting_;
  std::vector<i32> done_;
};

}  // namespace

std::unique_ptr<Engine> make_engine(const SimConfig& cfg, Sink& sink) {
  switch (cfg.scheduler) {
    case SchedulerKind::vllm_v1:
    case SchedulerKind::vllm_v0:
      return std::make_unique<Vllm>(cfg, sink);
    case SchedulerKind::sglang:
      return std::make_unique<Sglang>(cfg, sink);
    case SchedulerKind::trtllm:
      return std::make_unique<Trtllm>(cfg, sink);
    case SchedulerKind::llamacpp:
      return std::make_unique<Llamacpp>(cfg, sink);
  }
  return nullptr;
}

}  // namespace kvplan::sim
