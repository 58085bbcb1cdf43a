// The simulator's paged KV pool (reference counts, LRU free queue, block-hash prefix cache as vLLM's
// BlockPool keeps them), the content model prefix caching hashes, and the latency quantiles.
#include <algorithm>
#include <bit>
#include <cmath>

#include "sim_detail.hpp"

namespace kvplan::sim {

namespace {

constexpr u64 kGroupNs = 1ULL << 62, kSessionNs = 2ULL << 62, kOwnNs = 3ULL << 62;

u64 mix(u64 x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

u64 token_ns(const Req& r, i64 t) {
  if (r.group >= 0 && t < r.group_tokens) return kGroupNs | static_cast<u64>(r.group);
  if (r.session >= 0) return kSessionNs | (r.epoch == 0 ? static_cast<u64>(r.session) : mix(static_cast<u64>(r.session) ^ mix(static_cast<u64>(r.epoch))) & ~(3ULL << 62));
  return kOwnNs | static_cast<u64>(r.uid);
}

// A block's content is known from the namespaces of its first and last token and where inside it the
// group prefix ends (the only place the namespace can change); chaining makes the hash cover every token
// before it, as vLLM's hash(parent_hash, block_token_ids, extra_keys) does.
u64 block_hash(u64 prev, const Req& r, i64 i, i64 block_tokens) {
  const i64 first = i * block_tokens, last = first + block_tokens - 1;
  const i64 cut = (r.group >= 0 && r.group_tokens > first && r.group_tokens <= last) ? r.group_tokens - first : 0;
  u64 h = mix(prev ^ mix(token_ns(r, first)));
  // the cut goes in on its own: XORed with the namespace (a request id), two requests' (id, cut) pairs could meet
  h = mix(mix(h ^ token_ns(r, last)) ^ static_cast<u64>(cut));
  h = mix(h + static_cast<u64>(i));
  return h ? h : 1;
}

// Namespaces are constant between the breakpoints (group end, length), so compare interval by interval.
i64 common_prefix(const Req& a, i64 a_len, const Req& b, i64 b_len) {
  const i64 end = std::min(a_len, b_len);
  i64 t = 0;
  while (t < end) {
    if (token_ns(a, t) != token_ns(b, t)) return t;
    i64 next = end;
    if (a.group >= 0 && a.group_tokens > t) next = std::min(next, a.group_tokens);
    if (b.group >= 0 && b.group_tokens > t) next = std::min(next, b.group_tokens);
    t = next;
  }
  return end;
}

// ---------------------------------------------------------------- block pool

// Blocks never used yet sit at the head of vLLM's initial free queue (block ids in order) and
// freed blocks join its tail, so the queue is "untouched blocks, then the linked list": the arrays grow
// only to the blocks a run touches, and a large pool costs nothing until it is used.
void BlockPool::init(i64 blocks, bool caching) {
  total_ = free_ = blocks;
  peak_ = 0;
  caching_ = caching;
  ref_.clear();
  prev_.clear();
  next_.clear();
  hash_.clear();
  head_ = tail_ = -1;
  slots_.assign(caching ? 1024 : 0, Slot{});
  mask_ = slots_.empty() ? 0 : slots_.size() - 1;
  entries_ = 0;
  watch_blocks_.clear();
  watch_pos_.clear();
  watch_bits_.clear();
  watch_len_ = watch_free_ = 0;
  watch_next_ = 0;
  watch_on_ = false;
}

void BlockPool::unlink(i32 b) {
  const auto i = static_cast<size_t>(b);
  if (prev_[i] >= 0)
    next_[static_cast<size_t>(prev_[i])] = next_[i];
  else
    head_ = next_[i];
  if (next_[i] >= 0)
    prev_[static_cast<size_t>(next_[i])] = prev_[i];
  else
    tail_ = prev_[i];
  prev_[i] = next_[i] = -1;
}

void BlockPool::push_tail(i32 b) {
  const auto i = static_cast<size_t>(b);
  prev_[i] = tail_;
  next_[i] = -1;
  if (tail_ >= 0)
    next_[static_cast<size_t>(tail_)] = b;
  else
    head_ = b;
  tail_ = b;
}

i32 BlockPool::alloc() {
  i32 b;
  if (static_cast<i64>(ref_.size()) < total_) {  // an untouched block
    b = static_cast<i32>(ref_.size());
    ref_.push_back(0);
    prev_.push_back(-1);
    next_.push_back(-1);
    hash_.push_back(0);
    if (caching_) {
      watch_pos_.push_back(-1);
      if ((static_cast<u64>(b) & 63) == 0) watch_bits_.push_back(0);
    }
  } else {
    b = head_;
    unlink(b);
  }
  --free_;
  peak_ = std::max(peak_, total_ - free_);
  const auto i = static_cast<size_t>(b);
  if (caching_ && hash_[i]) {
    watch_evict(b, hash_[i]);
    map_erase(hash_[i]);
    hash_[i] = 0;
  }
  ref_[i] = 1;
  return b;
}

void BlockPool::touch(i32 b) {
  if (ref_[static_cast<size_t>(b)]++ == 0) {
    watch_ref(b, -1);
    unlink(b);
    --free_;
    peak_ = std::max(peak_, total_ - free_);
  }
}

void BlockPool::release(i32 b) {
  if (--ref_[static_cast<size_t>(b)] == 0) {
    watch_ref(b, 1);
    push_tail(b);
    ++free_;
  }
}

i32 BlockPool::lookup(u64 h) const {
  for (u64 i = mix(h) & mask_;; i = (i + 1) & mask_) {
    if (slots_[i].key == h) return slots_[i].val;
    if (slots_[i].key == 0) return -1;
  }
}

void BlockPool::set_hash(i32 b, u64 h) {
  if (2 * (entries_ + 1) > slots_.size()) grow_map();
  u64 i = mix(h) & mask_;
  for (; slots_[i].key != 0; i = (i + 1) & mask_)
    if (slots_[i].key == h) return;  // a duplicate: vLLM keeps both, one cached copy is enough here
  slots_[i] = {h, b};
  ++entries_;
  hash_[static_cast<size_t>(b)] = h;
  if (watch_on_ && h == watch_next_) unwatch();
}

void BlockPool::watch(const std::vector<i32>& hits, u64 next) {
  unwatch();
  if (!caching_ || hits.empty()) return;  // a lookup that misses at once costs one probe: nothing to save
  watch_blocks_ = hits;
  for (size_t p = 0; p < hits.size(); ++p) {
    watch_pos_[static_cast<size_t>(hits[p])] = static_cast<i32>(p);
    watch_bits_[static_cast<size_t>(hits[p]) >> 6] |= u64{1} << (static_cast<u64>(hits[p]) & 63);
    watch_free_ += ref_[static_cast<size_t>(hits[p])] == 0;
  }
  watch_len_ = static_cast<i64>(hits.size());
  watch_next_ = next;
  watch_on_ = true;
}

void BlockPool::unwatch() {
  for (i32 b : watch_blocks_) {
    watch_pos_[static_cast<size_t>(b)] = -1;
    watch_bits_[static_cast<size_t>(b) >> 6] &= ~(u64{1} << (static_cast<u64>(b) & 63));
  }
  watch_blocks_.clear();
  watch_len_ = watch_free_ = 0;
  watch_next_ = 0;
  watch_on_ = false;
}

// Block b, cached under h, is being evicted (it is free): when it is in the live part of the chain, the chain
// ends before it, and a lookup would next miss on h.
void BlockPool::watch_evict(i32 b, u64 h) {
  if (!watch_on_ || !watched(b)) return;
  const i32 p = watch_pos_[static_cast<size_t>(b)];
  if (p < 0 || p >= watch_len_) return;
  for (i64 q = p; q < watch_len_; ++q) watch_free_ -= ref_[static_cast<size_t>(watch_blocks_[static_cast<size_t>(q)])] == 0;
  watch_len_ = p;
  watch_next_ = h;
}

// Block b left (-1) or joined (+1) the free queue.
void BlockPool::watch_ref(i32 b, int delta) {
  if (!watch_on_ || !watched(b)) return;
  const i32 p = watch_pos_[static_cast<size_t>(b)];
  if (p >= 0 && p < watch_len_) watch_free_ += delta;
}

void BlockPool::grow_map() {  // doubles the table (load stays <= 1/2)
  std::vector<Slot> slots(slots_.size() * 2);
  const u64 mask = slots.size() - 1;
  for (const Slot& s : slots_) {
    if (s.key == 0) continue;
    u64 i = mix(s.key) & mask;
    while (slots[i].key != 0) i = (i + 1) & mask;
    slots[i] = s;
  }
  slots_.swap(slots);
  mask_ = mask;
}

void BlockPool::map_erase(u64 h) {
  u64 i = mix(h) & mask_;
  while (slots_[i].key != h) i = (i + 1) & mask_;
  --entries_;
  // backward-shift deletion keeps every probe chain unbroken
  for (u64 j = (i + 1) & mask_;; j = (j + 1) & mask_) {
    if (slots_[j].key == 0) break;
    const u64 home = mix(slots_[j].key) & mask_;
    // move j into the hole at i when its home is not in the cyclic range (i, j]
    const bool in_range = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!in_range) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Slot{};
}

// ---------------------------------------------------------------- quantiles

namespace {

// Bucket = the double's bits >> 42 (sign 0, 11 exponent bits, top 10 mantissa bits), offset so that
// 2^-40 s (~1 ps) maps to 1; bucket 0 collects smaller positive values, the last one values >= 2^24 s.
constexpr int kShift = 42;
constexpr u64 kLowBits = 0x3D70000000000000ULL;   // bits of 2^-40 (exponent 1023 - 40 = 983 = 0x3D7)
constexpr u64 kHighBits = 0x4170000000000000ULL;  // bits of 2^24 (exponent 1047 = 0x417)
constexpr size_t kBuckets = static_cast<size_t>(((kHighBits - kLowBits) >> kShift) + 2);

size_t bucket_of(double x) {
  const u64 bits = std::bit_cast<u64>(x);
  if (bits < kLowBits) return 0;
  if (bits >= kHighBits) return kBuckets - 1;
  return static_cast<size_t>((bits - kLowBits) >> kShift) + 1;
}

double bucket_mid(size_t k) {
  if (k == 0) return 0.5 * std::bit_cast<double>(kLowBits);
  const u64 lo = kLowBits + (static_cast<u64>(k - 1) << kShift);
  return 0.5 * (std::bit_cast<double>(lo) + std::bit_cast<double>(lo + (1ULL << kShift)));
}

}  // namespace

void Quantiles::add(double x) {
  ++n_;
  sum_ += x;
  if (hist_.empty()) {
    exact_.push_back(x);
    if (exact_.size() <= limit_) return;
    hist_.assign(kBuckets, 0);
    for (double v : exact_) {
      if (v <= 0)
        ++zeros_;
      else
        ++hist_[bucket_of(v)];
    }
    exact_.clear();
    exact_.shrink_to_fit();
    return;
  }
  if (x <= 0)
    ++zeros_;
  else
    ++hist_[bucket_of(x)];
}

double Quantiles::value_at(i64 rank) const {
  if (rank < zeros_) return 0;
  i64 seen = zeros_;
  for (size_t k = 0; k < hist_.size(); ++k) {
    seen += hist_[k];
    if (rank < seen) return bucket_mid(k);
  }
  return bucket_mid(hist_.size() - 1);
}

LatencyStats Quantiles::stats() const {
  LatencyStats s;
  s.count = n_;
  if (n_ == 0) return s;
  s.mean = sum_ / static_cast<double>(n_);
  std::vector<double> sorted;
  if (hist_.empty()) {
    sorted = exact_;
    std::sort(sorted.begin(), sorted.end());
  }
  auto at = [&](i64 rank) { return hist_.empty() ? sorted[static_cast<size_t>(rank)] : value_at(rank); };
  auto pct = [&](double p) {  // numpy percentile, method "linear"
    const double pos = p / 100.0 * static_cast<double>(n_ - 1);
    const auto lo = static_cast<i64>(std::floor(pos));
    const i64 hi = std::min(lo + 1, n_ - 1);
    const double a = at(lo), b = at(hi);
    return a + (b - a) * (pos - static_cast<double>(lo));
  };
  s.p50 = pct(50);
  s.p90 = pct(90);
  s.p99 = pct(99);
  return s;
}

}  // namespace kvplan::sim
