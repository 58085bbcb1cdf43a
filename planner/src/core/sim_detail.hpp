// Internals of the serving simulator shared by its source files (not installed): the request state,
// the paged block pool with its prefix cache, latency quantiles, and the interface each engine's
// scheduler implements. simulate.cpp drives the replicas; sim_engines.cpp holds the four schedulers.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kvplan/core/simulate.hpp"

namespace kvplan::sim {

using u64 = std::uint64_t;
using i32 = std::int32_t;

/// One request in flight. `computed` counts tokens whose KV is in the cache (vLLM num_computed_tokens);
/// the request holds prompt + out tokens (num_tokens), so a decode step computes the token sampled last.
struct Req {
  i64 id = 0, uid = 0;  // uid: order of release (the namespace of the request's own tokens)
  double arrival = 0;
  i64 prompt = 0, output = 0;
  i64 group = -1, group_tokens = 0, session = -1, priority = 0;
  i64 epoch = 0;  // the session's content generation: a turn shorter than the history before it (a client that cut
                  // the conversation) starts a new one, sharing nothing with earlier turns but the group prefix
  double think = 0;
  int client = -1;    // closed loop: the client waiting for it
  i64 computed = 0;   // tokens in the KV cache
  i64 out = 0;        // output tokens produced
  i64 hashed = 0;     // leading blocks hashed into the prefix cache
  i64 full = 0;       // leading blocks the engine has cached (hashed, or only r's own tokens: hashed when r is preempted)
  u64 last_hash = 0;  // hash of block hashed - 1 (the chain continues from it)
  std::vector<i32> blocks;
  std::vector<double> gaps;  // inter-token gaps so far: pooled into ITL when the request completes (not when it fails)
  double first_token = -1, last_token = -1;
  i64 cached_prompt = -1;  // prompt tokens hit at the first admission (-1: not admitted yet)
  i64 preemptions = 0;
  i64 start_seq = 0;  // order in which the engine started it (TRT "last started")
  // vLLM V1 cache groups (SimConfig::cache_groups): tokens the request holds slots for, physical blocks its other
  // groups hold, and leading blocks a sliding-window first group gave back (-1 in `blocks`)
  i64 extent = 0, aux = 0, skipped = 0;
  bool truncated = false;
  i64 num_tokens() const { return prompt + out; }
};

/// The cache group kind the pool's blocks stand for and the prefix cache hashes (SimConfig::cache_groups): the first
/// full-attention kind, else the first sliding-window or chunked one; groups.size() when no kind holds tokens.
inline size_t primary_cache_group(const std::vector<SimCacheGroup>& groups) {
  using K = SimCacheGroup::Kind;
  for (const bool full : {true, false})
    for (size_t i = 0; i < groups.size(); ++i)
      if (full ? groups[i].kind == K::full : groups[i].kind == K::sliding || groups[i].kind == K::chunked) return i;
  return groups.size();
}

/// Namespace of token t of `r` under the content model of SimRequest (group, session, own).
u64 token_ns(const Req& r, i64 t);
/// Hash of block i (tokens [i*B, (i+1)*B)) chained on the previous block's hash; never 0.
u64 block_hash(u64 prev, const Req& r, i64 i, i64 block_tokens);
/// Tokens the first a_len tokens of `a` and the first b_len of `b` share at their start.
i64 common_prefix(const Req& a, i64 a_len, const Req& b, i64 b_len);

/// A paged KV pool: reference counts, and (with prefix caching) a hash per full block. Free blocks form
/// one LRU queue (vLLM FreeKVCacheBlockQueue): allocation pops the head and evicts the block's hash;
/// a freed block goes to the tail and keeps its hash, so it can be hit until it is evicted.
class BlockPool {
 public:
  void init(i64 blocks, bool caching);
  i64 total() const { return total_; }
  i64 free_count() const { return free_; }
  i64 used() const { return total_ - free_; }
  i64 peak() const { return peak_; }
  bool caching() const { return caching_; }
  i32 ref(i32 b) const { return ref_[static_cast<size_t>(b)]; }
  /// Takes the least recently freed block (evicting its cached hash); the pool must not be empty.
  i32 alloc();
  /// Takes a reference on a cached block (removing it from the free queue when it was free).
  void touch(i32 b);
  /// Drops a reference; at zero the block joins the free queue's tail (keeping its hash).
  void release(i32 b);
  /// The cached block holding hash h, or -1.
  i32 lookup(u64 h) const;
  /// Caches block b under hash h unless another block already holds h (then b stays uncached).
  void set_hash(i32 b, u64 h);

  /// Follows one lookup's chain, so that a request waiting at the queue's head is not looked up block by
  /// block every step: `hits` are the cached blocks found (in chain order), `next` the hash the chain
  /// continues with (0: none). Evicting a block of the chain shortens it to the blocks before; caching
  /// `next` ends the watch (the chain may grow: look it up again). A new watch replaces the last.
  void watch(const std::vector<i32>& hits, u64 next);
  void unwatch();
  bool watching() const { return watch_on_; }
  const std::vector<i32>& watch_blocks() const { return watch_blocks_; }  // the chain as watched (first watch_len live)
  i64 watch_len() const { return watch_len_; }    // chain blocks still cached
  i64 watch_free() const { return watch_free_; }  // of those, blocks in the free queue (reference count 0)

 private:
  // one table slot per key: a probe touches one cache line
  struct Slot {
    u64 key = 0;  // 0: empty
    i32 val = -1;
  };
  void unlink(i32 b);
  void push_tail(i32 b);
  void map_erase(u64 h);
  void grow_map();
  void watch_evict(i32 b, u64 h);
  void watch_ref(i32 b, int delta);
  i64 total_ = 0, free_ = 0, peak_ = 0;
  bool caching_ = false;
  // per block, one array each (the free queue walks them in runs of consecutive ids: SGLang's page size 1 takes
  // a block per token, and four small arrays stream better than one wide record)
  std::vector<i32> ref_, prev_, next_;
  std::vector<u64> hash_;  // 0: not cached
  i32 head_ = -1, tail_ = -1;
  // open addressing (linear probing, backward-shift deletion)
  std::vector<Slot> slots_;
  u64 mask_ = 0;
  size_t entries_ = 0;
  // the watched chain: its blocks, each block's position in it (-1: not in it; sized as ref_), and one bit per
  // block set for the chain's blocks (small enough to stay in cache: most releases test only the bit)
  std::vector<i32> watch_blocks_, watch_pos_;
  std::vector<u64> watch_bits_;
  bool watched(i32 b) const { return (watch_bits_[static_cast<size_t>(b) >> 6] >> (static_cast<u64>(b) & 63)) & 1; }
  i64 watch_len_ = 0, watch_free_ = 0;
  u64 watch_next_ = 0;
  bool watch_on_ = false;
};

/// Mean and linearly interpolated percentiles (numpy's default, as vllm bench serve) of a stream of
/// values. Values are kept exactly up to `exact_limit`; beyond it they move into a histogram whose
/// buckets are the doubles sharing exponent and top 10 mantissa bits: relative width 2^-10 = 0.098%
/// (<= 0.1%), each bucket read at its midpoint (error <= 0.05%). Memory stays 512 KiB for any count.
class Quantiles {
 public:
  explicit Quantiles(size_t exact_limit = size_t{1} << 20) : limit_(exact_limit) {}
  void add(double x);
  LatencyStats stats() const;
  i64 count() const { return n_; }

 private:
  double value_at(i64 rank) const;  // the rank-th smallest value (0-based)
  size_t limit_;
  std::vector<double> exact_;
  std::vector<i64> hist_;
  i64 zeros_ = 0, n_ = 0;
  double sum_ = 0;
};

/// What a step computes for one request.
struct Work {
  i32 req = 0;
  i64 tokens = 0;
};

/// Callbacks from an engine into the driver.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual Req& req(i32 r) = 0;
  /// Request r produced a token at time t.
  virtual void token(i32 r, double t) = 0;
  /// Request r left the engine at time t (finished or truncated: Failure::none); its blocks are already freed.
  virtual void finish(i32 r, double t, Failure failure) = 0;
  virtual void preempted() = 0;
  virtual void prompt_hit(i64 prompt_tokens, i64 hit_tokens) = 0;
};

/// One replica's scheduler and KV pool.
class Engine {
 public:
  virtual ~Engine() = default;
  /// A request arrives; why the engine rejects it outright (too long for the engine), or Failure::none.
  virtual Failure admit_check(const Req& r) const = 0;
  virtual void arrive(i32 r) = 0;
  virtual bool busy() const = 0;
  /// Forms one step into `work` and `batch`; returns whether anything changed (work scheduled,
  /// a request preempted or failed). Nothing changed with a busy engine means it is stuck.
  virtual bool schedule(std::vector<Work>& work, StepBatch& batch, double now) = 0;
  /// Applies the step scheduled last: tokens computed, tokens produced at `end`, requests finished.
  virtual void commit(const std::vector<Work>& work, double end) = 0;
  /// Removes one request that can never be scheduled (the stuck engine's head of line) and returns it.
  virtual i32 drop_stuck() = 0;
  virtual i64 running() const = 0;
  virtual i64 waiting() const = 0;
  virtual i64 used_blocks() const = 0;             // blocks held by requests (llama.cpp: cells of active slots)
  virtual i64 cached_blocks() const { return 0; }  // llama.cpp: cells idle slots keep
  virtual i64 pool_blocks() const = 0;             // usable blocks
  virtual i64 peak_blocks() const = 0;
};

std::unique_ptr<Engine> make_engine(const SimConfig& cfg, Sink& sink);

}  // namespace kvplan::sim
