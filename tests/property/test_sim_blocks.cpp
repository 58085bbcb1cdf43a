// The simulator's block pool against an oracle: the chain the pool watches for a waiting request (BlockPool::watch)
// must always answer what walking the chain through the prefix cache, block by block, answers (the blocks still
// cached before the first miss, and how many of them are free), whatever allocations, evictions, releases, touches
// and new hashes happen between two lookups.
#include <catch2/catch.hpp>
#include <random>

#include "../../planner/src/core/sim_detail.hpp"

using namespace kvplan;
using namespace kvplan::sim;

namespace {

struct Walk {
  std::vector<i32> hits;
  i64 free = 0;
  u64 next = 0;
};

// What a lookup finds for the chain hashes h[0..]: blocks up to the first miss, the free ones among them, and the
// hash it missed on (0 when the whole chain is cached).
Walk walk(const BlockPool& pool, const std::vector<u64>& chain) {
  Walk w;
  for (u64 h : chain) {
    const i32 b = pool.lookup(h);
    if (b < 0) {
      w.next = h;
      break;
    }
    w.hits.push_back(b);
    w.free += pool.ref(b) == 0;
  }
  return w;
}

}  // namespace

TEST_CASE("simulate block pool: a watched chain answers as a walk through the prefix cache would", "[simulate][property]") {
  for (const unsigned seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) {
    std::mt19937 rng(seed);
    const i64 blocks = 48;
    BlockPool pool;
    pool.init(blocks, true);
    // a 30-block chain (a preempted request's cached blocks), then freed last block first as the engines free
    std::vector<u64> chain;
    std::vector<i32> held, fresh_blocks;  // blocks requests hold; of those, allocated and not cached yet
    for (u64 i = 0; i < 30; ++i) {
      chain.push_back(0x1000 + i);
      const i32 b = pool.alloc();
      pool.set_hash(b, chain.back());
      held.push_back(b);
    }
    for (auto it = held.rbegin(); it != held.rend(); ++it) pool.release(*it);
    held.clear();
    u64 fresh = 0x9000;
    i64 checks = 0, shortened = 0, ended = 0;
    for (int op = 0; op < 4000; ++op) {
      if (!pool.watching()) {  // the engine looks the chain up again and watches what it found
        const Walk w = walk(pool, chain);
        pool.watch(w.hits, w.next);
      }
      const i64 before = pool.watch_len();
      switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
        case 0:
        case 1:  // a running request takes a block (evicting the least recently freed one's hash)
          if (pool.free_count() > 0) {
            held.push_back(pool.alloc());
            fresh_blocks.push_back(held.back());
          }
          break;
        case 2:  // ... and caches it once it is full: sometimes under the hash the chain would continue with
          if (!fresh_blocks.empty()) {
            const i32 b = fresh_blocks.back();
            fresh_blocks.pop_back();
            const Walk w = walk(pool, chain);
            const bool next = w.next != 0 && std::uniform_int_distribution<int>(0, 3)(rng) == 0;
            if (next && pool.lookup(w.next) < 0) ++ended;
            pool.set_hash(b, next ? w.next : fresh++);
          }
          break;
        case 3:
        case 4:  // a request gives a block back
          if (!held.empty()) {
            const size_t k = std::uniform_int_distribution<size_t>(0, held.size() - 1)(rng);
            pool.release(held[k]);
            std::erase(fresh_blocks, held[k]);
            held.erase(held.begin() + static_cast<long>(k));
          }
          break;
        case 5: {  // another request hits a cached block of the chain (taking it out of the free queue)
          const u64 h = chain[std::uniform_int_distribution<size_t>(0, chain.size() - 1)(rng)];
          const i32 b = pool.lookup(h);
          if (b >= 0) {
            pool.touch(b);
            held.push_back(b);
          }
          break;
        }
      }
      const Walk w = walk(pool, chain);
      if (pool.watching()) {
        ++checks;
        shortened += pool.watch_len() < before;
        REQUIRE(pool.watch_len() == static_cast<i64>(w.hits.size()));
        REQUIRE(pool.watch_free() == w.free);
      }
      REQUIRE(pool.used() + pool.free_count() == blocks);
    }
    // the run exercised what it is about: answers from the watch, evictions that shorten it, caching that ends it
    CHECK(checks > 1000);
    CHECK(shortened > 0);
    CHECK(ended > 0);
  }
}
