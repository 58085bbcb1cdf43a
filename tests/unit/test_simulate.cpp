// Known-answer tests of the serving simulator: small workloads under a constant 10 ms step whose
// timelines are worked out by hand in the comments (vLLM, SGLang, TensorRT-LLM, llama.cpp rules of
// the simulation research notes §2-§5), metric definitions (§6.1), configs from a plan, and errors.
#include <catch2/catch.hpp>
#include <map>

#include "kvplan/core/error.hpp"
#include "kvplan/core/simulate.hpp"
#include "plan_helpers.hpp"

using namespace kvplan;

namespace {

class Requests : public RequestSource {
 public:
  explicit Requests(std::vector<SimRequest> r) : r_(std::move(r)) {}
  bool next(SimRequest& out) override {
    if (i_ >= r_.size()) return false;
    out = r_[i_++];
    return true;
  }

 private:
  std::vector<SimRequest> r_;
  size_t i_ = 0;
};

SimRequest request(i64 id, double arrival, i64 prompt, i64 output) {
  SimRequest r;
  r.id = id;
  r.arrival_s = arrival;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

constexpr double kStep = 0.010;  // every step takes 10 ms
const StepTimeFn ten_ms = [](const StepBatch&) { return kStep; };

struct Run {
  SimResult result;
  std::map<i64, RequestRecord> records;
};

Run run(const SimConfig& cfg, std::vector<SimRequest> reqs, const SimSlo& slo = {}) {
  Requests src(std::move(reqs));
  Run out;
  out.result = simulate(cfg, src, ten_ms, slo, [&](const RequestRecord& r) { out.records[r.id] = r; });
  return out;
}

SimConfig vllm(i64 pool_blocks) {
  SimConfig c;
  c.scheduler = SchedulerKind::vllm_v1;
  c.pool_blocks = pool_blocks;
  c.block_tokens = 16;
  return c;
}

// SGLang at page size 1 over pool_tokens tokens
SimConfig sglang(i64 pool_tokens) {
  SimConfig c;
  c.scheduler = SchedulerKind::sglang;
  c.pool_blocks = pool_tokens;
  c.block_tokens = 1;
  return c;
}

}  // namespace

TEST_CASE("simulate vLLM one request: TTFT one step and one step per later token", "[simulate]") {
  // Step 1 computes the 100 prompt tokens and samples token 1 at 10 ms; tokens 2..10 take one decode
  // step each: the last at 10 x 10 ms. TPOT = (100 - 10) / (10 - 1) = 10 ms.
  const Run r = run(vllm(1000), {request(0, 0, 100, 10)});
  const SimResult& s = r.result;
  CHECK(s.requests == 1);
  CHECK(s.completed == 1);
  CHECK(s.steps == 10);
  CHECK(s.ttft_s.mean == Approx(1 * kStep));
  CHECK(s.e2e_s.mean == Approx(10 * kStep));
  CHECK(s.tpot_s.mean == Approx(kStep));
  CHECK(s.itl_s.count == 9);  // one gap per token after the first
  CHECK(s.itl_s.p99 == Approx(kStep));
  // the last step computes token 10's input at position 108: 109 tokens in ceil(109 / 16) = 7 blocks
  CHECK(s.peak_blocks_used == (109 + 15) / 16);
  CHECK(s.blocks_leaked == 0);
  CHECK(s.duration_s == Approx(10 * kStep));
  CHECK(s.output_tokens_per_s == Approx(10 / (10 * kStep)));
  CHECK(s.total_tokens_per_s == Approx((100 + 10) / (10 * kStep)));
  CHECK(r.records.at(0).output_tokens == 10);
}

TEST_CASE("simulate front end adds its time to each request's TTFT and E2E", "[simulate]") {
  // frontend_s 5 ms: the engine runs the request as without one (prompt step ends at 10 ms, tenth token at
  // 100 ms) and the client sees each token 5 ms later: TTFT 15 ms, E2E 105 ms, TPOT unchanged
  SimConfig cfg = vllm(1000);
  cfg.frontend_s = 0.005;
  const Run r = run(cfg, {request(0, 0, 100, 10)});
  CHECK(r.result.ttft_s.mean == Approx(0.005 + kStep));
  CHECK(r.result.e2e_s.mean == Approx(0.005 + 10 * kStep));
  CHECK(r.result.tpot_s.mean == Approx(kStep));
  CHECK(r.result.itl_s.mean == Approx(kStep));
  CHECK(r.records.at(0).arrival_s == Approx(0.0));
  CHECK(r.records.at(0).first_token_s == Approx(0.005 + kStep));
  CHECK(r.records.at(0).finish_s == Approx(0.005 + 10 * kStep));
  CHECK(r.result.duration_s == Approx(0.005 + 10 * kStep));
}

TEST_CASE("simulate front end does not hold back a closed-loop client's next request", "[simulate]") {
  // 1 client, 3 requests of 10 + 2 tokens (2 steps each) with a 5 ms front end: the engine starts request
  // k at the step where k - 1 ended (20 and 40 ms), so the run lasts 60 ms in the engine and 65 ms to the
  // client; every TTFT is 10 + 5 ms
  SimConfig c = vllm(100);
  c.closed_loop_concurrency = 1;
  c.frontend_s = 0.005;
  const Run r = run(c, {request(0, 5, 10, 2), request(1, 5, 10, 2), request(2, 5, 10, 2)});
  CHECK(r.records.at(1).arrival_s == Approx(2 * kStep));
  CHECK(r.records.at(2).arrival_s == Approx(4 * kStep));
  CHECK(r.records.at(2).finish_s == Approx(6 * kStep + 0.005));
  CHECK(r.result.ttft_s.p99 == Approx(kStep + 0.005));
  CHECK(r.result.ttft_s.p50 == Approx(kStep + 0.005));
  CHECK(r.result.duration_s == Approx(6 * kStep + 0.005));
}

TEST_CASE("simulate vLLM second request waits for blocks the first holds", "[simulate]") {
  // 7 usable blocks (8 minus vLLM's null block). A's 100-token prompt takes ceil(100 / 16) = 7 blocks
  // in step 1 and its 109 tokens still fit 7 x 16 = 112; B (7 blocks) cannot be admitted until A
  // finishes at step 10 (100 ms). B's prompt runs in step 11: first token at 110 ms, last at 200 ms.
  const Run r = run(vllm(8), {request(0, 0, 100, 10), request(1, 0, 100, 10)});
  CHECK(r.records.at(0).first_token_s == Approx(1 * kStep));
  CHECK(r.records.at(0).finish_s == Approx(10 * kStep));
  CHECK(r.records.at(1).first_token_s == Approx(11 * kStep));
  CHECK(r.records.at(1).finish_s == Approx(20 * kStep));
  CHECK(r.result.ttft_s.mean == Approx((1 + 11) * kStep / 2));
  CHECK(r.result.preemptions == 0);
  CHECK(r.result.peak_blocks_used == 7);
  CHECK(r.result.blocks_leaked == 0);
}

TEST_CASE("simulate vLLM preempts the last running request and recomputes it", "[simulate]") {
  // 4 usable blocks of 16; A and B: 16-token prompts, 40 outputs. Step 1 prefills both (1 block each);
  // after step s each holds 16 + s - 1 computed tokens. Step s needs room for 16 + s - 1 tokens: 2
  // blocks each from step 2, 3 blocks each at step 18 (33 tokens) = 6 > 4, so A (first in the running
  // list) preempts the last running request, B, which has 17 outputs. Its freed blocks go to the free
  // queue last block first; A takes B's second block, and B's first block (still cached) is not enough
  // to readmit B (3 blocks for its 33 tokens) until A ends. A's 40th token comes at step 40 (400 ms);
  // B's cached block was evicted by A's 4th block at step 34, so step 41 recomputes all 33 of B's tokens
  // and samples its 18th token at 410 ms; tokens 19..40 take steps 42..63: last token at 630 ms.
  const Run r = run(vllm(5), {request(0, 0, 16, 40), request(1, 0, 16, 40)});
  CHECK(r.result.preemptions == 1);
  CHECK(r.records.at(0).preemptions == 0);
  CHECK(r.records.at(1).preemptions == 1);
  CHECK(r.records.at(0).finish_s == Approx(40 * kStep));
  CHECK(r.records.at(1).first_token_s == Approx(1 * kStep));
  CHECK(r.records.at(1).finish_s == Approx(63 * kStep));
  CHECK(r.records.at(1).output_tokens == 40);
  CHECK(r.result.itl_s.count == 39 + 39);
  CHECK(r.result.itl_s.mean == Approx((39 * kStep + 62 * kStep) / 78));  // sums of each request's gaps
  CHECK(r.result.blocks_leaked == 0);
  CHECK(r.result.peak_blocks_used == 4);
}

TEST_CASE("simulate vLLM readmits a preempted request on its own blocks still cached", "[simulate]") {
  // The test above with A ending first: A's 30 outputs end at step 30, before A would need a 4th block (step 34),
  // so B's first block (its own prompt tokens, cached when B was preempted at step 18) is still in the free queue
  // and B's second block went to A. Step 31 readmits B on that one hit: it recomputes 33 - 16 = 17 tokens, not 33.
  // A step takes 10 ms plus 1 ms per prefill token: step 1 (two 16-token prompts) 42 ms, steps 2..30 10 ms each
  // (332 ms), step 31 27 ms (359 ms: B's 18th token), steps 32..53 B's tokens 19..40 (579 ms).
  std::vector<double> prefills;
  const StepTimeFn step = [&](const StepBatch& b) {
    if (b.prefill_tokens > 0) prefills.push_back(b.prefill_tokens);
    return 0.010 + 0.001 * b.prefill_tokens;
  };
  Requests src({request(0, 0, 16, 30), request(1, 0, 16, 40)});
  std::map<i64, RequestRecord> rec;
  const SimResult r = simulate(vllm(5), src, step, {}, [&](const RequestRecord& x) { rec[x.id] = x; });
  CHECK(r.preemptions == 1);
  CHECK(prefills == std::vector<double>{32, 17});
  CHECK(rec.at(0).finish_s == Approx(0.332));
  CHECK(rec.at(1).finish_s == Approx(0.579));
  CHECK(rec.at(1).output_tokens == 40);
  CHECK(r.blocks_leaked == 0);
  SECTION("without prefix caching B recomputes all 33 tokens") {
    prefills.clear();
    SimConfig c = vllm(5);
    c.prefix_caching = false;
    Requests again({request(0, 0, 16, 30), request(1, 0, 16, 40)});
    const SimResult u = simulate(c, again, step, {}, [&](const RequestRecord& x) { rec[x.id] = x; });
    CHECK(u.preemptions == 1);
    CHECK(prefills == std::vector<double>{32, 33});
    CHECK(rec.at(1).finish_s == Approx(0.595));
  }
}

TEST_CASE("simulate vLLM prefix cache hits the full blocks of a shared system prompt", "[simulate]") {
  // Both prompts start with the 40 tokens of prefix group 0. A's full blocks stay cached after it ends;
  // B finds blocks 0 and 1 (tokens 0..31); block 2 mixes the prefix with A's own tokens, so it misses.
  SimRequest a = request(0, 0, 100, 2), b = request(1, 1.0, 100, 2);
  a.prefix_group = b.prefix_group = 0;
  a.prefix_tokens = b.prefix_tokens = 40;
  const Run r = run(vllm(100), {a, b});
  CHECK(r.records.at(0).cached_prompt_tokens == 0);
  CHECK(r.records.at(1).cached_prompt_tokens == 40 / 16 * 16);
  CHECK(r.result.prefix_hit_rate == Approx(32.0 / (100 + 100)));
  CHECK(r.records.at(1).first_token_s - 1.0 == Approx(kStep));
  SECTION("without prefix caching nothing hits") {
    SimConfig c = vllm(100);
    c.prefix_caching = false;
    CHECK(run(c, {a, b}).result.prefix_hit_rate == 0);
  }
  SECTION("a full-prompt hit still recomputes the last block") {
    SimRequest c = request(2, 2.0, 96, 2), d = request(3, 3.0, 96, 2);
    c.prefix_group = d.prefix_group = 1;
    c.prefix_tokens = d.prefix_tokens = 96;
    const Run rr = run(vllm(100), {c, d});
    CHECK(rr.records.at(3).cached_prompt_tokens == (96 - 1) / 16 * 16);  // 5 blocks: the 96th token is recomputed
  }
}

// vLLM V1 hybrid models: a full-attention group beside a sliding-window group of window 32, both 16-token blocks.
SimConfig vllm_hybrid(i64 pool_blocks, std::vector<SimCacheGroup> groups) {
  SimConfig c = vllm(pool_blocks);
  c.cache_groups = std::move(groups);
  return c;
}
SimCacheGroup group(SimCacheGroup::Kind kind, i64 groups, i64 window = 0, i64 blocks = 0) {
  SimCacheGroup g;
  g.kind = kind;
  g.groups = groups;
  g.block_tokens = 16;
  g.window = window;
  g.blocks = blocks;
  return g;
}
using GK = SimCacheGroup::Kind;

TEST_CASE("simulate vLLM sliding-window group gives back the blocks before the window", "[simulate]") {
  // A 64-token prompt, 40 outputs. Step 1 computes the prompt: 4 full blocks + 4 sliding blocks = 8. Step s >= 2
  // starts with 62 + s tokens computed and needs slots for 63 + s: the full group holds cdiv(63 + s, 16), the
  // sliding group the same less the blocks wholly before the window, (62 + s - 32 + 1) / 16 (remove_skipped_blocks).
  // Step 34: 7 full + 7 - (96 - 31) / 16 = 7 - 4 = 3 sliding = 10, the most; the last step (40) holds the same.
  // With the window cached at full length (two full groups) the request ends on 2 x 7 = 14.
  const Run r = run(vllm_hybrid(100, {group(GK::full, 1), group(GK::sliding, 1, 32)}), {request(0, 0, 64, 40)});
  CHECK(r.result.completed == 1);
  CHECK(r.result.peak_blocks_used == 10);
  CHECK(r.result.usable_blocks == 99);
  CHECK(r.result.blocks_leaked == 0);
  CHECK(run(vllm_hybrid(100, {group(GK::full, 2)}), {request(0, 0, 64, 40)}).result.peak_blocks_used == 14);
  SECTION("two such requests share 20 blocks without preemption; with full-length windows they preempt") {
    // In lockstep each holds at most 10 (above), and while one grows the other holds its previous step's <= 10.
    const std::vector<SimRequest> two{request(0, 0, 64, 40), request(1, 0, 64, 40)};
    const Run h = run(vllm_hybrid(21, {group(GK::full, 1), group(GK::sliding, 1, 32)}), two);
    CHECK(h.result.preemptions == 0);
    CHECK(h.result.peak_blocks_used == 20);
    CHECK(h.records.at(1).finish_s == Approx(40 * kStep));
    // two full groups: 20 usable blocks are 10 request blocks, and each request ends on 7
    CHECK(run(vllm_hybrid(21, {group(GK::full, 2)}), two).result.preemptions > 0);
  }
}

TEST_CASE("simulate vLLM sliding-window-only model holds a window's blocks however long the request", "[simulate]") {
  // Every layer slides (window 32), 16-token chunks (max_num_batched_tokens 16): step 1 takes block 0, steps 2-3
  // blocks 1-2, step 4 (48 computed) gives block 0 back ((48 - 31) / 16 = 1) and takes block 3: 3 held. A decode
  // step then holds cdiv(t, 16) - (t - 1 - 31) / 16 <= 3 blocks. A pool of 5 (4 beside the null block) serves it;
  // as a full group it needs cdiv(103, 16) = 7 for the 103 tokens it computes and fails on arrival.
  SimConfig c = vllm_hybrid(5, {group(GK::sliding, 1, 32)});
  c.max_num_batched_tokens = 16;
  const Run r = run(c, {request(0, 0, 64, 40)});
  CHECK(r.result.completed == 1);
  CHECK(r.result.peak_blocks_used == 3);
  CHECK(r.result.blocks_leaked == 0);
  CHECK(r.records.at(0).first_token_s == Approx(4 * kStep));
  SimConfig full = vllm(5);
  full.max_num_batched_tokens = 16;
  const Run f = run(full, {request(0, 0, 64, 40)});
  CHECK(f.result.failed_by[static_cast<size_t>(Failure::over_pool)] == 1);
  SECTION("with prefix caching a session's next turn hits the blocks still cached") {
    // turn 1: 64 + 8 tokens; turn 2 repeats them and adds 16. Turn 1 gave blocks 0-2 back as its window moved, and
    // they stayed in the free queue with their hashes (nothing else needed blocks): turn 2 finds blocks 0-3 (64
    // tokens; its 88th token is recomputed, and block 4 was never full in turn 1).
    SimConfig big = vllm_hybrid(100, {group(GK::sliding, 1, 32)});
    big.max_num_batched_tokens = 16;
    SimRequest t1 = request(0, 0, 64, 8), t2 = request(1, 0, 88, 4);
    t1.session = t2.session = 7;
    const Run s = run(big, {t1, t2});
    CHECK(s.records.at(1).cached_prompt_tokens == 64);
    CHECK(s.result.blocks_leaked == 0);
  }
  SECTION("a hit needs only the window's blocks before it, found from the right (find_longest_cache_hit)") {
    // 8 usable blocks. Turn 1 (prompt 64, 8 outputs) caches blocks 0-3 and gives 0-2 back as its window moves. Request
    // B (80-token prompt, 16 outputs, arriving at 0.2 s, after turn 1 ended at 0.11 s) takes the 4 untouched blocks
    // and then the free queue's oldest: block 0 of turn 1 (its hash evicted) and, as it grows, block 1. Turn 2 (88
    // tokens) arrives at 1.0 s: blocks 0 and 1 of its chain miss, blocks 2 and 3 are cached: cdiv(32 - 1, 16) = 2
    // contiguous blocks end a hit of 4 blocks (64 tokens), though its first two are gone.
    SimConfig tight = vllm_hybrid(9, {group(GK::sliding, 1, 32)});
    tight.max_num_batched_tokens = 16;
    SimRequest t1 = request(0, 0, 64, 8), b = request(1, 0.2, 80, 16), t2 = request(2, 1.0, 88, 4);
    t1.session = t2.session = 7;
    t2.think_s = 0.9;
    const Run s = run(tight, {t1, b, t2});
    CHECK(s.records.at(2).cached_prompt_tokens == 64);
    CHECK(s.result.blocks_leaked == 0);
  }
}

TEST_CASE("simulate vLLM hybrid: a request longer than the window's start-up bound still runs", "[simulate]") {
  // vLLM checks max_memory_usage_bytes (a sliding group cdiv(min(w - 1 + max_num_batched_tokens, L), block) + 1) only at
  // start-up; a request runs if its chunks find blocks. Full + sliding (window 32), budget 64: a 200-token prompt's
  // chunks hold at most cdiv(64 + 31, 16) + 1 = 7 sliding blocks beside the full ones, 13 full at the end: 20 at most,
  // less than the bound's cdiv(min(95, 209), 16) + 1 + 14 = 21. A pool of 21 (20 beside the null block) serves it.
  SimConfig c = vllm_hybrid(21, {group(GK::full, 1), group(GK::sliding, 1, 32)});
  c.max_num_batched_tokens = 64;
  const Run r = run(c, {request(0, 0, 200, 10)});
  CHECK(r.result.completed == 1);
  CHECK(r.result.peak_blocks_used <= 20);
  CHECK(r.result.blocks_leaked == 0);
}

TEST_CASE("simulate vLLM Mamba and cross-attention groups hold fixed blocks a request", "[simulate]") {
  // One full group (16-token blocks), two Mamba groups (1 block a request each), one cross-attention group
  // holding 3 blocks a request: a 100-token prompt with 10 outputs computes 109 tokens, cdiv(109, 16) = 7 full
  // blocks + 2 + 3 = 12. A pool of 13 (12 beside the null block) serves it; 12 refuses it on arrival.
  const std::vector<SimCacheGroup> g{group(GK::full, 1), group(GK::state, 2), group(GK::fixed, 1, 0, 3)};
  const Run r = run(vllm_hybrid(13, g), {request(0, 0, 100, 10)});
  CHECK(r.result.completed == 1);
  CHECK(r.result.peak_blocks_used == 12);
  CHECK(r.result.blocks_leaked == 0);
  CHECK(run(vllm_hybrid(12, g), {request(0, 0, 100, 10)}).result.failed_by[static_cast<size_t>(Failure::over_pool)] == 1);
  SECTION("a second request waits for the first's blocks, Mamba state included") {
    // A takes 7 + 5 blocks at step 1 and B needs as many: a pool of 25 (24 usable) runs B beside A; with 23 usable
    // B waits for A (done at step 10) and prefills at step 11.
    const Run two = run(vllm_hybrid(24, g), {request(0, 0, 100, 10), request(1, 0, 100, 10)});
    CHECK(two.records.at(1).first_token_s == Approx(11 * kStep));
    CHECK(run(vllm_hybrid(25, g), {request(0, 0, 100, 10), request(1, 0, 100, 10)}).records.at(1).first_token_s == Approx(1 * kStep));
  }
}

TEST_CASE("simulate vLLM without chunked prefill holds a prompt longer than the budget left", "[simulate]") {
  // Budget 100 tokens: A's 60-token prompt runs in step 1; B's 60 do not fit the 40 left, so B waits
  // for step 2 (A decodes 1 token, B takes 60 of the 99 left): B's first token at 20 ms. With chunked
  // prefill B takes 40 tokens in step 1 and its last 20 in step 2: also 20 ms, but computed earlier.
  SimConfig c = vllm(100);
  c.max_num_batched_tokens = 100;
  c.max_model_len = 100;
  c.chunked_prefill = false;
  const Run r = run(c, {request(0, 0, 60, 3), request(1, 0, 60, 3)});
  CHECK(r.records.at(1).first_token_s == Approx(2 * kStep));
  CHECK(r.result.steps == 4);
}

TEST_CASE("simulate vLLM V0 runs an admitted prompt's step without decodes, and keeps 1% of the blocks free", "[simulate]") {
  // V0 without chunked prefill (Scheduler._schedule_default): A (10-token prompt, 5 outputs) at 0, B (same) at
  // 25 ms. Step 1 prefills A (token 1 at 10 ms); steps 2-3 decode A (20, 30 ms); B arrived during step 3, so
  // step 4 admits B alone (B's token 1 at 40 ms, A waits); steps 5-6 decode both (A's tokens 4, 5 at 50, 60 ms),
  // 7-8 decode B (70, 80 ms): SGLang's timeline. V1 mixes B's prefill into A's decode: A ends at 50 ms.
  SimConfig c = vllm(1000);
  c.scheduler = SchedulerKind::vllm_v0;
  c.chunked_prefill = false;
  c.max_num_batched_tokens = 2048;
  const Run r = run(c, {request(0, 0, 10, 5), request(1, 0.025, 10, 5)});
  CHECK(r.records.at(0).first_token_s == Approx(1 * kStep));
  CHECK(r.records.at(1).first_token_s == Approx(4 * kStep));
  CHECK(r.records.at(0).finish_s == Approx(6 * kStep));
  CHECK(r.records.at(1).finish_s == Approx(8 * kStep));
  // the watermark: 200 blocks of 16 tokens, 2 kept free. A 3,150-token prompt + 1 output needs
  // cdiv(3150, 16) = 197 blocks, leaving 3: admitted. A 3,170-token one needs 199, leaving 1 < 2: it never is
  // (V1 would admit it: 199 of its 199 usable blocks), and fails as stuck with nothing running.
  SimConfig w = vllm(200);
  w.scheduler = SchedulerKind::vllm_v0;
  w.chunked_prefill = false;
  w.max_num_batched_tokens = 4096;
  CHECK(run(w, {request(0, 0, 3150, 1)}).result.completed == 1);
  const Run stuck = run(w, {request(0, 0, 3170, 1)});
  CHECK(stuck.result.completed == 0);
  CHECK(stuck.result.failed == 1);
  SimConfig v1 = vllm(200);
  v1.chunked_prefill = false;
  v1.max_num_batched_tokens = 4096;
  CHECK(run(v1, {request(0, 0, 3170, 1)}).result.completed == 1);
}

TEST_CASE("simulate vLLM V0 async output processor hands each token over when the next step ends", "[simulate]") {
  // LLMEngine.step with use_async_output_proc (vLLM 0.6-0.10 V0): step k's tokens are processed during step k + 1
  // and returned when it ends; the engine learns a request stopped only then, so it decodes it once more.
  // One request, 100-token prompt, 10 outputs: tokens sampled at 10..100 ms reach the client at 20..110 ms (an
  // 11th step decodes the finished request): TTFT 20 ms, E2E 110 ms, TPOT (110 - 20) / 9 = 10 ms.
  SimConfig c = vllm(1000);
  c.scheduler = SchedulerKind::vllm_v0;
  c.chunked_prefill = false;
  c.max_num_batched_tokens = 2048;
  c.async_output = true;
  const Run one = run(c, {request(0, 0, 100, 10)});
  CHECK(one.result.steps == 11);
  CHECK(one.result.ttft_s.mean == Approx(2 * kStep));
  CHECK(one.result.e2e_s.mean == Approx(11 * kStep));
  CHECK(one.result.tpot_s.mean == Approx(kStep));
  CHECK(one.result.itl_s.count == 9);
  CHECK(one.result.blocks_leaked == 0);
  // The V0 case above with the processor: A (10 + 5) at 0, B (10 + 5) at 25 ms. Steps: 1 prefill A; 2-3 decode A;
  // 4 admits B alone; 5 decodes A, B; 6 A's 5th token, B's 3rd; 7 A's extra decode, B's 4th; 8 B's 5th; 9 B's
  // extra decode. A's tokens reach the client at 20, 30, 40, 60, 70 ms (its 4th, sampled in step 5, waits for
  // step 6), B's at 50, 60, 70, 80, 90 ms.
  const Run two = run(c, {request(0, 0, 10, 5), request(1, 0.025, 10, 5)});
  CHECK(two.result.steps == 9);
  CHECK(two.records.at(0).first_token_s == Approx(2 * kStep));
  CHECK(two.records.at(0).finish_s == Approx(7 * kStep));
  CHECK(two.records.at(1).first_token_s == Approx(5 * kStep));
  CHECK(two.records.at(1).finish_s == Approx(9 * kStep));
  CHECK(two.result.itl_s.count == 8);
  CHECK(two.result.itl_s.mean == Approx((7 * kStep + 2 * kStep) / 8));  // A's gap 40 -> 60 ms spans B's prefill step
  CHECK(two.result.completed == 2);
  CHECK(two.result.blocks_leaked == 0);
  // a closed loop: each client's next request is sent when the last token is handed over, not when it is sampled
  SimConfig loop = c;
  loop.closed_loop_concurrency = 1;
  const Run chain = run(loop, {request(0, 0, 10, 2), request(1, 0, 10, 2)});
  CHECK(chain.records.at(1).arrival_s == Approx(3 * kStep));  // A: tokens at 20, 30 ms (its extra step ends at 30)
  CHECK(chain.records.at(1).finish_s == Approx(6 * kStep));
}

TEST_CASE("simulate SGLang runs a prefill step alone and stalls decodes", "[simulate]") {
  // A (10-token prompt, 5 outputs) arrives at 0, B (same) at 25 ms. Step 1 prefills A (token 1 at
  // 10 ms); steps 2-3 decode A (20, 30 ms). B arrived during step 3, so step 4 is B's prefill alone:
  // B's token 1 at 40 ms while A waits; steps 5-6 decode both (A's tokens 4, 5 at 50, 60 ms); steps
  // 7-8 decode B (tokens 4, 5 at 70, 80 ms). vLLM mixes B's prefill into A's decode: A ends at 50 ms.
  SimConfig c = sglang(10000);
  const Run r = run(c, {request(0, 0, 10, 5), request(1, 0.025, 10, 5)});
  CHECK(r.records.at(0).first_token_s == Approx(1 * kStep));
  CHECK(r.records.at(0).finish_s == Approx(6 * kStep));
  CHECK(r.records.at(1).first_token_s == Approx(4 * kStep));
  CHECK(r.records.at(1).finish_s == Approx(8 * kStep));
  CHECK(r.result.ttft_s.mean == Approx((kStep + (4 * kStep - 0.025)) / 2));
  CHECK(r.result.itl_s.count == 8);
  // 8 gaps: seven of 10 ms and A's stalled 30 -> 50 ms; numpy's p99 sits at rank 0.99 x 7 = 6.93
  CHECK(r.result.itl_s.p99 == Approx(kStep + 0.93 * kStep));
  const Run v = run(vllm(1000), {request(0, 0, 10, 5), request(1, 0.025, 10, 5)});
  CHECK(v.records.at(0).finish_s == Approx(5 * kStep));
}

TEST_CASE("simulate SGLang --enable-mixed-chunk decodes the running requests inside a prefill step", "[simulate]") {
  // The case above with mixing: steps 1-3 as before (A's tokens 1-3 at 10, 20, 30 ms); step 4 prefills B and
  // decodes A together (B's token 1 and A's token 4 at 40 ms); step 5 decodes both (A's last token at 50 ms, as
  // under vLLM); steps 6-8 decode B alone (tokens 3, 4, 5 at 60, 70, 80 ms). 8 steps; no ITL gap is stalled.
  SimConfig c = sglang(10000);
  c.mixed_chunk = true;
  const Run r = run(c, {request(0, 0, 10, 5), request(1, 0.025, 10, 5)});
  CHECK(r.records.at(0).finish_s == Approx(5 * kStep));
  CHECK(r.records.at(1).first_token_s == Approx(4 * kStep));
  CHECK(r.records.at(1).finish_s == Approx(8 * kStep));
  CHECK(r.result.steps == 8);
  CHECK(r.result.itl_s.p99 == Approx(kStep));
  SECTION("the running decodes come off the chunk budget first (mixed_with_decode_tokens)") {
    // chunked_prefill_size 100. A (10-token prompt) is prefilled in step 1 and decodes in step 2; B (100 tokens)
    // arrives at 15 ms. Without mixing step 3 prefills all 100 of B (token 1 at 30 ms) while A waits. Mixed, A's
    // decode token leaves 99: step 3 takes 99 of B's tokens beside A's decode and step 4 the last one, with A's
    // next decode: B's token 1 at 40 ms.
    SimConfig m = sglang(10000);
    m.max_num_batched_tokens = 100;
    const std::vector<SimRequest> two = {request(0, 0, 10, 10), request(1, 0.015, 100, 2)};
    CHECK(run(m, two).records.at(1).first_token_s == Approx(3 * kStep));
    m.mixed_chunk = true;
    const Run mixed = run(m, two);
    CHECK(mixed.records.at(1).first_token_s == Approx(4 * kStep));
    // A decodes in every step: 10 tokens in steps 1-10
    CHECK(mixed.records.at(0).finish_s == Approx(10 * kStep));
  }
}

TEST_CASE("simulate SGLang --max-prefill-tokens caps the prompts one prefill step admits", "[simulate]") {
  // Three 60-token prompts at t = 0 (3 outputs each). max_prefill_tokens 100: step 1 admits A (60); B's 60 exceed
  // the 40 left and a batch already holds A, so B waits (PrefillAdder's rem_input_tokens); SGLang runs prefill first,
  // so steps 2 and 3 prefill B and C alone: first tokens at 10, 20, 30 ms. With the default 16384 all three share
  // step 1: first tokens at 10 ms each. A prompt over the cap is still admitted alone (the first of a batch).
  SimConfig c = sglang(10000);
  c.max_prefill_tokens = 100;
  const std::vector<SimRequest> three = {request(0, 0, 60, 3), request(1, 0, 60, 3), request(2, 0, 60, 3)};
  const Run capped = run(c, three);
  CHECK(capped.records.at(0).first_token_s == Approx(1 * kStep));
  CHECK(capped.records.at(1).first_token_s == Approx(2 * kStep));
  CHECK(capped.records.at(2).first_token_s == Approx(3 * kStep));
  c.max_prefill_tokens = 16384;
  const Run wide = run(c, three);
  for (i64 id = 0; id < 3; ++id) CHECK(wide.records.at(id).first_token_s == Approx(1 * kStep));
  c.max_prefill_tokens = 50;
  const Run alone = run(c, {request(0, 0, 60, 3)});
  CHECK(alone.records.at(0).first_token_s == Approx(1 * kStep));
}

TEST_CASE("simulate SGLang admission reserves the clipped output and retracts under pressure", "[simulate]") {
  // 300 tokens of pool, page 1. A needs 100 + min(150, 4096) + 1 = 251 <= 300 tokens and is admitted;
  // B then needs another 251 but only 300 - 100 (A's prompt) - 150 x 0.7 (A's reservation) = 95 remain
  // (NO_TOKEN): B waits although its prompt alone would fit.
  SimConfig c = sglang(300);
  const Run r = run(c, {request(0, 0, 100, 150), request(1, 0, 100, 150)});
  CHECK(r.records.at(0).first_token_s == Approx(kStep));
  CHECK(r.records.at(1).first_token_s > r.records.at(0).first_token_s + kStep);
  CHECK(r.result.completed == 2);
  CHECK(r.result.blocks_leaked == 0);
  CHECK(r.result.peak_blocks_used <= 300);
}

TEST_CASE("simulate SGLang re-inits new_token_ratio when the server goes idle", "[simulate]") {
  // Scheduler.self_check_during_idle (scheduler_runtime_checker_mixin.py): with no batch to run new_token_ratio goes
  // back to init_new_token_ratio. A burst at 100 s must then run the same whether the request before it decoded 700
  // steps (the ratio decayed to its floor) or 5: the burst's records match exactly.
  const auto burst = [](i64 first_output) {
    std::vector<SimRequest> r{request(0, 0, 10, first_output), request(1, 100, 100, 50)};
    for (i64 i = 2; i <= 12; ++i) r.push_back(request(i, 100, 100, 1000));
    SimConfig c = sglang(4000);
    c.max_model_len = 1200;
    return run(c, r);
  };
  const Run warm = burst(700), cold = burst(5);
  CHECK(warm.result.preemptions == cold.result.preemptions);
  for (i64 i = 1; i <= 12; ++i) {
    INFO("request " << i);
    CHECK(warm.records.at(i).first_token_s == Approx(cold.records.at(i).first_token_s));
    CHECK(warm.records.at(i).finish_s == Approx(cold.records.at(i).finish_s));
  }
}

TEST_CASE("simulate SGLang retracts the request with the fewest outputs when decode runs out", "[simulate]") {
  // 300 tokens, page 1, the ratio decays to 0.098 after one decode step. A (10 + 200) is prefilled in
  // step 1 and decodes in steps 2-5. B (10 + 200) arrives at 45 ms; at step 6 A holds 14 tokens and
  // reserves 195 x 0.098 = 19.1, so B's 10 + 200 + 1 fit the 286 - 19.1 left: step 6 prefills B alone.
  // Both then add a token per step: 24 + 2k tokens after k steps, 300 after k = 138 (step 144), so
  // step 145 retracts B (139 outputs < A's 143). The re-estimated ratio (143 + 20) / 201 = 0.81 keeps
  // B out (149 + 61 + 1 > 148 free - 57 x 0.81) until A's 200th token at step 201; step 202 re-prefills
  // B's 149 tokens (its 140th token at 2.02 s) and steps 203-262 bring its last 60.
  SimConfig c = sglang(300);
  c.new_token_ratio_decay_steps = 1;
  const Run r = run(c, {request(0, 0, 10, 200), request(1, 0.045, 10, 200)});
  CHECK(r.result.preemptions == 1);
  CHECK(r.records.at(0).preemptions == 0);
  CHECK(r.records.at(1).preemptions == 1);
  CHECK(r.records.at(1).first_token_s == Approx(6 * kStep));
  CHECK(r.records.at(0).finish_s == Approx(201 * kStep));
  CHECK(r.records.at(1).finish_s == Approx(262 * kStep));
  // each request's gaps add up to last - first token: (2.01 - 0.01) + (2.62 - 0.06) over 2 x 199 gaps
  CHECK(r.result.itl_s.mean == Approx((200 * kStep + 256 * kStep) / 398));
  CHECK(r.result.peak_blocks_used == 300);
  CHECK(r.result.blocks_leaked == 0);
}

TEST_CASE("simulate vLLM session turns hit the history earlier turns cached", "[simulate]") {
  // Turn 1: 40-token prompt, 9 outputs; its last step computes up to 48 tokens = 3 full blocks, cached.
  // Turn 2 repeats those 49 tokens and adds 15 (64): blocks 0-2 hit (48 tokens), block 3 is new.
  SimRequest t1 = request(0, 0, 40, 9), t2 = request(1, 0, 40 + 9 + 15, 4);
  t1.session = t2.session = 3;
  const Run r = run(vllm(100), {t1, t2});
  CHECK(r.records.at(1).cached_prompt_tokens == 48);
  CHECK(r.records.at(1).arrival_s == Approx(9 * kStep));  // sent when turn 1 finished (think_s 0)
  CHECK(r.result.prefix_hit_rate == Approx(48.0 / (40 + 64)));
}

TEST_CASE("simulate closed loop: each client runs its own conversation, so N stay in flight", "[simulate]") {
  // 2 clients, sessions 0 and 1 of 2 turns each, in source order s0t1, s0t2, s1t1, s1t2 (10-token prompts, 3 outputs,
  // think 0). Client 0 sends s0t1; client 1 would get s0t2, which waits for s0t1, so it takes s1t1: both start at 0
  // and run in the same steps (tokens at 10, 20, 30 ms); each client then sends its session's second turn at 30 ms.
  std::vector<SimRequest> reqs = {request(0, 0, 10, 3), request(1, 0, 23, 3), request(2, 0, 10, 3), request(3, 0, 23, 3)};
  reqs[0].session = reqs[1].session = 0;
  reqs[2].session = reqs[3].session = 1;
  SimConfig c = vllm(100);
  c.closed_loop_concurrency = 2;
  const Run r = run(c, reqs);
  CHECK(r.records.at(0).arrival_s == Approx(0.0));
  CHECK(r.records.at(2).arrival_s == Approx(0.0));
  CHECK(r.records.at(1).arrival_s == Approx(3 * kStep));
  CHECK(r.records.at(3).arrival_s == Approx(3 * kStep));
  CHECK(r.records.at(3).finish_s == Approx(6 * kStep));
  CHECK(r.result.completed == 4);
}

TEST_CASE("simulate TensorRT-LLM GUARANTEED_NO_EVICT reserves to completion, MAX_UTILIZATION pauses", "[simulate]") {
  // 8 blocks of 16; A and B: 32-token prompts, 64 outputs: 96 tokens = 6 blocks each to completion.
  SimConfig c;
  c.scheduler = SchedulerKind::trtllm;
  c.pool_blocks = 8;
  c.block_tokens = 16;
  const std::vector<SimRequest> reqs = {request(0, 0, 32, 64), request(1, 0, 32, 64)};
  SECTION("GUARANTEED_NO_EVICT: B starts only when A's 6 blocks are returned") {
    // A: prefill at step 1, token 64 at step 64 (640 ms). B needs 6 > 8 - 6 blocks until then: its
    // prefill is step 65 (token 1 at 650 ms), its token 64 at step 128.
    const Run r = run(c, reqs);
    CHECK(r.result.preemptions == 0);
    CHECK(r.records.at(0).finish_s == Approx(64 * kStep));
    CHECK(r.records.at(1).first_token_s == Approx(65 * kStep));
    CHECK(r.records.at(1).finish_s == Approx(128 * kStep));
    CHECK(r.result.blocks_leaked == 0);
  }
  SECTION("MAX_UTILIZATION: both start, B is paused when blocks run out") {
    // Both prefill in step 1 (2 blocks each). Step s needs room for 31 + s tokens: 5 blocks each at
    // step 34 (65 tokens) = 10 > 8, so A pauses the last started request, B, after its 33rd token. A ends
    // at step 64. A's 4th and 5th blocks (steps 34, 50) evicted B's cached blocks 3 and 2 (freed last
    // block first); at step 65 B hits blocks 0-1, recomputes its other 33 tokens and samples token 34
    // at 650 ms; tokens 35..64 take steps 66..95.
    c.capacity_policy = "MAX_UTILIZATION";
    const Run r = run(c, reqs);
    CHECK(r.result.preemptions == 1);
    CHECK(r.records.at(1).preemptions == 1);
    CHECK(r.records.at(0).finish_s == Approx(64 * kStep));
    CHECK(r.records.at(1).first_token_s == Approx(kStep));
    CHECK(r.records.at(1).finish_s == Approx(95 * kStep));
    CHECK(r.result.blocks_leaked == 0);
  }
  SECTION("STATIC_BATCH: a request arriving while the batch decodes waits for its last request") {
    // 100 blocks: room for all. A (output 5) and B (output 2) start together at step 1 (tokens at 10 ms). C arrives
    // at 15 ms, during step 2: under GUARANTEED_NO_EVICT it prefills in step 3 (first token at 30 ms); under
    // STATIC_BATCH A is generating until its token 5 at step 5 (50 ms), so C prefills in step 6 (first token at 60 ms)
    // and its token 2 is at 70 ms
    c.pool_blocks = 100;
    const std::vector<SimRequest> three = {request(0, 0, 32, 5), request(1, 0, 32, 2), request(2, 0.015, 32, 2)};
    const Run dynamic = run(c, three);
    CHECK(dynamic.records.at(2).first_token_s == Approx(3 * kStep));
    c.capacity_policy = "STATIC_BATCH";
    const Run r = run(c, three);
    CHECK(r.records.at(0).finish_s == Approx(5 * kStep));
    CHECK(r.records.at(1).finish_s == Approx(2 * kStep));
    CHECK(r.records.at(2).first_token_s == Approx(6 * kStep));
    CHECK(r.records.at(2).finish_s == Approx(7 * kStep));
    CHECK(r.result.blocks_leaked == 0);
  }
  SECTION("MAX_UTILIZATION admits a prompt that fits a step whatever its output (only a pause recomputes outputs)") {
    // chunked context off, max_num_tokens 48: a 32-token prompt with 64 outputs (96 tokens, more than a step) runs
    // to completion alone: prefill at step 1, token 64 at step 64
    c.capacity_policy = "MAX_UTILIZATION";
    c.chunked_prefill = false;
    c.max_num_batched_tokens = 48;
    c.pool_blocks = 100;
    const Run r = run(c, {request(0, 0, 32, 64)});
    CHECK(r.result.completed == 1);
    CHECK(r.records.at(0).finish_s == Approx(64 * kStep));
  }
}

TEST_CASE("simulate llama.cpp: a fifth request waits for one of 4 slots", "[simulate]") {
  // 4 unified slots. Requests 0-3 take the slots at t = 0: prompts in step 1, tokens 2-3 in steps 2-3
  // (done at 30 ms). Request 4 takes a freed slot in step 4: token 1 at 40 ms, done at 60 ms.
  SimConfig c;
  c.scheduler = SchedulerKind::llamacpp;
  c.slots = 4;
  c.unified = true;
  c.pool_blocks = 10000;
  std::vector<SimRequest> reqs;
  for (i64 i = 0; i < 5; ++i) reqs.push_back(request(i, 0, 10, 3));
  const Run r = run(c, reqs);
  for (i64 i = 0; i < 4; ++i) CHECK(r.records.at(i).finish_s == Approx(3 * kStep));
  CHECK(r.records.at(4).first_token_s == Approx(4 * kStep));
  CHECK(r.records.at(4).finish_s == Approx(6 * kStep));
  CHECK(r.result.completed == 5);
  CHECK(r.result.blocks_leaked == 0);
}

TEST_CASE("simulate llama.cpp rejects a prompt the slot cannot hold and truncates at n_ctx_seq", "[simulate]") {
  // 2 slots of their own (not unified) share 200 cells: n_ctx_seq = 100. A 100-token prompt is rejected
  // (HTTP 400: prompt >= n_ctx_seq). A 90-token prompt asking for 50 stops when prompt + outputs reach
  // 100: 10 tokens, truncated, the 10th at step 10.
  SimConfig c;
  c.scheduler = SchedulerKind::llamacpp;
  c.slots = 2;
  c.unified = false;
  c.pool_blocks = 200;
  const Run r = run(c, {request(0, 0, 100, 5), request(1, 0, 90, 50)});
  CHECK(r.records.at(0).failed);
  CHECK(r.records.at(0).failure == Failure::over_context);
  CHECK(r.records.at(1).failure == Failure::none);
  CHECK(r.records.at(1).truncated);
  CHECK(r.records.at(1).output_tokens == 100 - 90);
  CHECK(r.records.at(1).finish_s == Approx(10 * kStep));
  CHECK(r.result.failed == 1);
  CHECK(r.result.truncated == 1);
  CHECK(r.result.completed == 1);
  CHECK(r.result.ttft_s.count == 1);  // failed requests have no latencies
}

TEST_CASE("simulate llama.cpp unified pool: idle caches are purged, then active slots terminated", "[simulate]") {
  // 2 unified slots over 120 cells. Each request (prompt 50, 40 outputs) grows to 89 cells: two of them
  // exceed 120 and the pool runs out with both active, so both are terminated (failed).
  SimConfig c;
  c.scheduler = SchedulerKind::llamacpp;
  c.slots = 2;
  c.unified = true;
  c.pool_blocks = 120;
  const Run r = run(c, {request(0, 0, 50, 40), request(1, 0, 50, 40), request(2, 1.0, 50, 10)});
  CHECK(r.records.at(0).failed);
  CHECK(r.records.at(1).failed);
  CHECK(r.records.at(1).failure == Failure::terminated);
  CHECK(r.result.failed_by[static_cast<size_t>(Failure::terminated)] == 2);
  // the third runs alone later: 50 + 9 cells fit after the failed slots were cleared
  CHECK_FALSE(r.records.at(2).failed);
  CHECK(r.records.at(2).output_tokens == 10);
  CHECK(r.result.blocks_leaked == 0);
  // ITL pools the completed request's 9 gaps only, as vllm bench serve (the two terminated ones produced tokens too)
  CHECK(r.result.itl_s.count == 9);
}

TEST_CASE("simulate llama.cpp cache_prompt reuses a session's history in its slot", "[simulate]") {
  // Turn 2 of a session repeats turn 1's 30-token prompt and 5 outputs: the slot still holds turn 1's
  // 34 computed tokens (the 5th output was never fed back), so turn 2 finds 34 of its 45 tokens cached.
  SimConfig c;
  c.scheduler = SchedulerKind::llamacpp;
  c.slots = 1;
  c.pool_blocks = 1000;
  SimRequest t1 = request(0, 0, 30, 5), t2 = request(1, 0, 30 + 5 + 10, 5);
  t1.session = t2.session = 7;
  t2.think_s = 0.5;
  const Run r = run(c, {t1, t2});
  CHECK(r.records.at(1).cached_prompt_tokens == 34);
  CHECK(r.records.at(1).arrival_s == Approx(5 * kStep + 0.5));  // turn 2 leaves think_s after turn 1 ended
}

TEST_CASE("simulate closed loop sends a client's next request when its last one finishes", "[simulate]") {
  // 1 client, 3 requests of 10 + 2 tokens: each takes 2 steps; request k arrives when k - 1 ended.
  SimConfig c = vllm(100);
  c.closed_loop_concurrency = 1;
  const Run r = run(c, {request(0, 5, 10, 2), request(1, 5, 10, 2), request(2, 5, 10, 2)});
  CHECK(r.records.at(0).arrival_s == 0);
  CHECK(r.records.at(1).arrival_s == Approx(2 * kStep));
  CHECK(r.records.at(2).arrival_s == Approx(4 * kStep));
  CHECK(r.result.duration_s == Approx(6 * kStep));
  CHECK(r.result.request_throughput_per_s == Approx(3 / (6 * kStep)));
}

TEST_CASE("simulate goodput counts requests that meet every SLO", "[simulate]") {
  // Same as the waiting case: TTFTs 10 and 110 ms, TPOT 10 ms each. A 50 ms TTFT target passes one.
  SimSlo slo;
  slo.ttft_s = 0.050;
  slo.tpot_s = 0.020;
  const Run r = run(vllm(8), {request(0, 0, 100, 10), request(1, 0, 100, 10)}, slo);
  CHECK(r.result.good_requests == 1);
  CHECK(r.result.goodput_per_s == Approx(1 / (20 * kStep)));
}

TEST_CASE("simulate replicas each run their own clock", "[simulate]") {
  // Two replicas of the waiting case's pool: requests are dealt round-robin, so neither waits.
  SimConfig c = vllm(8);
  c.replicas = 2;
  const Run r = run(c, {request(0, 0, 100, 10), request(1, 0, 100, 10)});
  CHECK(r.records.at(1).first_token_s == Approx(kStep));
  CHECK(r.result.duration_s == Approx(10 * kStep));
  CHECK(r.result.peak_blocks_used == 7);  // per replica
}

TEST_CASE("simulate fails requests the engine cannot accept", "[simulate]") {
  SimConfig c = vllm(1000);
  c.max_model_len = 128;
  const Run r = run(c, {request(0, 0, 100, 29), request(1, 0, 100, 28)});  // 129 > 128 tokens: HTTP 400
  CHECK(r.records.at(0).failed);
  CHECK(r.records.at(0).failure == Failure::over_context);
  CHECK_FALSE(r.records.at(1).failed);
  CHECK(r.result.failed == 1);
  CHECK(r.result.failed_by[static_cast<size_t>(Failure::over_context)] == 1);
}

TEST_CASE("simulate says why each refused request failed, engine by engine", "[simulate]") {
  const auto count = [](const Run& r, Failure f) { return r.result.failed_by[static_cast<size_t>(f)]; };
  SECTION("vLLM: over the pool, over the budget without chunked prefill") {
    // 5 blocks of 16, one of them vLLM's null block: 4 x 16 = 64 tokens for requests. 60 + 10 needs
    // the 69 tokens before its last one computed: 5 blocks > 4. 40 + 10 fits (49 tokens, 4 blocks).
    SimConfig c = vllm(5);
    Run r = run(c, {request(0, 0, 60, 10), request(1, 0, 40, 10)});
    CHECK(r.records.at(0).failure == Failure::over_pool);
    CHECK(r.records.at(1).failure == Failure::none);
    CHECK(count(r, Failure::over_pool) == 1);
    CHECK(r.result.completed == 1);
    // chunked prefill off and a 32-token budget: a 40-token request (49 tokens to compute with its
    // outputs, a preempted request recomputes them) can never be scheduled; 20 + 10 (29) can
    c = vllm(100);
    c.chunked_prefill = false;
    c.max_num_batched_tokens = 32;
    r = run(c, {request(0, 0, 40, 10), request(1, 0, 20, 10)});
    CHECK(r.records.at(0).failure == Failure::over_step_budget);
    CHECK(r.records.at(1).failure == Failure::none);
  }
  SECTION("SGLang: max_req_len is the pool's tokens - 1; the tokenizer refuses input + output >= context_len") {
    // page size 1 over 100 tokens: max_req_len 99. A 95-token prompt reaches max_req_len - 5 = 94: aborted. A 90-token
    // prompt asking 10 gets max_new_tokens = 99 - 90 - 1 = 8 (init_req_max_new_tokens): it ends early, truncated.
    SimConfig c;
    c.scheduler = SchedulerKind::sglang;
    c.pool_blocks = 100;
    c.block_tokens = 1;
    const Run r = run(c, {request(0, 0, 90, 10), request(1, 0, 80, 10), request(2, 0, 95, 3)});
    CHECK_FALSE(r.records.at(0).failed);
    CHECK(r.records.at(0).truncated);
    CHECK(r.records.at(0).output_tokens == 8);
    CHECK(r.records.at(1).failure == Failure::none);
    CHECK_FALSE(r.records.at(1).truncated);
    CHECK(r.records.at(1).output_tokens == 10);
    CHECK(r.records.at(2).failure == Failure::over_pool);
    // context length 50: 40 + 10 = 50 is refused (>=, _validate_one_request), 40 + 9 runs
    c.max_model_len = 50;
    const Run ctx = run(c, {request(0, 0, 40, 10), request(1, 0, 40, 9)});
    CHECK(ctx.records.at(0).failure == Failure::over_context);
    CHECK(ctx.records.at(1).failure == Failure::none);
  }
  SECTION("TensorRT-LLM GUARANTEED_NO_EVICT: prompt + output blocks over the pool") {
    // 4 blocks of 16 = 64 tokens; 50 + 15 = 65 tokens need 5 blocks, 50 + 14 = 64 need 4
    SimConfig c;
    c.scheduler = SchedulerKind::trtllm;
    c.policy = "fcfs";
    c.capacity_policy = "GUARANTEED_NO_EVICT";
    c.pool_blocks = 4;
    c.block_tokens = 16;
    const Run r = run(c, {request(0, 0, 50, 15), request(1, 0, 50, 14)});
    CHECK(r.records.at(0).failure == Failure::over_pool);
    CHECK(r.records.at(1).failure == Failure::none);
  }
  CHECK(std::string(failure_name(Failure::over_context)) == "over_context");
  CHECK(std::string(failure_name(Failure::none)).empty());
}

TEST_CASE("simulate timeline samples the pool, queues and counters", "[simulate]") {
  SimConfig c = vllm(8);
  c.timeline_interval_s = 0.05;
  const Run r = run(c, {request(0, 0, 100, 10), request(1, 0, 100, 10)});
  const auto& tl = r.result.timeline;
  REQUIRE(tl.size() >= 4);  // 0, 50, 100, 150 (and 200) ms
  CHECK(tl[0].t_s == 0);
  CHECK(tl[1].running == 1);
  CHECK(tl[1].waiting == 1);
  CHECK(tl[1].kv_used_fraction == Approx(7.0 / 7));
  CHECK(tl[3].running == 1);
  CHECK(tl[3].waiting == 0);
  SECTION("the automatic interval keeps 200-400 points") {
    SimConfig a = vllm(1000);
    std::vector<SimRequest> reqs;
    for (i64 i = 0; i < 50; ++i) reqs.push_back(request(i, 0.1 * static_cast<double>(i), 100, 50));
    const Run ra = run(a, reqs);
    CHECK(ra.result.timeline.size() > 200);
    CHECK(ra.result.timeline.size() <= 400);
  }
  SECTION("a given interval is coarsened past 100,000 samples") {
    // one request of 10 outputs: 10 steps of 10 ms, the last token at 100 ms. At 1 us that is 100,001 samples:
    // past 100,000 every second one is dropped and the interval doubles to 2 us, 50,001 samples to 100 ms
    SimConfig f = vllm(100);
    f.timeline_interval_s = 1e-6;
    const Run rf = run(f, {request(0, 0, 10, 10)});
    CHECK(rf.result.timeline_interval_s == Approx(2e-6));
    CHECK(rf.result.timeline.size() == 50001);
    CHECK(rf.result.timeline.back().t_s == Approx(0.1));
    CHECK(r.result.timeline_interval_s == 0.05);  // 0.05 s over 200 ms: kept as given
  }
}

TEST_CASE("simulate timeline samples a time after every arrival at it", "[simulate]") {
  // 10 requests at t = 0: the sample at 0 counts all ten (running or waiting), not the first one delivered
  std::vector<SimRequest> reqs;
  for (i64 i = 0; i < 10; ++i) reqs.push_back(request(i, 0, 100, 5));
  SimConfig c = vllm(1000);
  c.max_num_seqs = 4;
  const Run r = run(c, reqs);
  REQUIRE(!r.result.timeline.empty());
  CHECK(r.result.timeline.front().t_s == 0.0);
  CHECK(r.result.timeline.front().running == 4);  // the first step's four, the rest waiting
  CHECK(r.result.timeline.front().waiting == 6);
}

TEST_CASE("simulate rejects configs that cannot run", "[simulate]") {
  Requests none({});
  SimConfig c = vllm(1);  // the null block leaves nothing
  CHECK_THROWS_AS(simulate(c, none, ten_ms), InputError);
  c = vllm(100);
  c.max_num_seqs = 0;
  CHECK_THROWS_WITH(simulate(c, none, ten_ms), "max_num_seqs: must be >= 1 (got 0)");
  c = vllm(100);
  c.policy = "lpm";
  CHECK_THROWS_AS(simulate(c, none, ten_ms), InputError);
  c.scheduler = SchedulerKind::trtllm;
  c.policy = "fcfs";
  c.capacity_policy = "STATIC";  // TensorRT-LLM spells it STATIC_BATCH
  CHECK_THROWS_AS(simulate(c, none, ten_ms), InputError);
  c = vllm_hybrid(100, {group(GK::state, 1)});  // nothing holds tokens
  CHECK_THROWS_WITH(simulate(c, none, ten_ms), "cache_groups: need an attention kind (full, sliding or chunked) whose blocks hold tokens");
  c = vllm_hybrid(100, {group(GK::full, 1), group(GK::sliding, 1, 0)});
  CHECK_THROWS_WITH(simulate(c, none, ten_ms), "cache_groups: a sliding window or chunk must be >= 1 token");
  c = vllm_hybrid(100, {group(GK::full, 1)});
  c.scheduler = SchedulerKind::sglang;
  CHECK_THROWS_AS(simulate(c, none, ten_ms), InputError);
  Requests bad({request(0, 0, 0, 5)});
  CHECK_THROWS_WITH(simulate(vllm(100), bad, ten_ms), "request 0: prompt_tokens must be >= 1 (got 0)");
  Requests back({request(0, 1.0, 5, 5), request(1, 0.5, 5, 5)});
  CHECK_THROWS_AS(simulate(vllm(100), back, ten_ms), InputError);
  Requests one({request(0, 0, 5, 5)});
  CHECK_THROWS_AS(simulate(vllm(100), one, [](const StepBatch&) { return -1.0; }), InputError);
  // at most max_live_requests held at once: 4 arriving together pass a cap of 4, a fifth at the same time does not;
  // the same 5 spread 1 s apart (each done in 50 ms) never hold more than one
  c = vllm(100);
  c.max_live_requests = 4;
  std::vector<SimRequest> together, spread;
  for (i64 i = 0; i < 5; ++i) {
    together.push_back(request(i, 0, 5, 5));
    spread.push_back(request(i, static_cast<double>(i), 5, 5));
  }
  CHECK(run(c, {together.begin(), together.begin() + 4}).result.completed == 4);
  Requests five(together);
  CHECK_THROWS_WITH(simulate(c, five, ten_ms),
                    "requests: more than 4 waiting or running at once (each is held in memory); spread the arrivals (a "
                    "lower --rate, a trace whose rows do not share one arrival time) or send fewer requests");
  CHECK(run(c, spread).result.completed == 5);
}

TEST_CASE("simulate step batches carry decode context and prefill attention pairs", "[simulate]") {
  // Step 1: one 100-token prefill chunk with nothing cached: pairs = 100 x (0 + 101 / 2).
  // Step 2: one decode reading the 100 cached tokens.
  std::vector<StepBatch> seen;
  Requests src({request(0, 0, 100, 2)});
  simulate(vllm(100), src, [&](const StepBatch& b) {
    seen.push_back(b);
    return kStep;
  });
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].prefill_tokens == 100);
  CHECK(seen[0].prefill_seqs == 1);
  CHECK(seen[0].prefill_attention_pairs == Approx(100 * (0 + 101 / 2.0)));
  CHECK(seen[0].decode_seqs == 0);
  CHECK(seen[1].decode_seqs == 1);
  CHECK(seen[1].decode_context_tokens == 100);
  CHECK(seen[1].prefill_tokens == 0);
}

TEST_CASE("simulate workload generator: lengths, prefixes and sessions", "[simulate]") {
  WorkloadSpec w;
  w.requests = 6;
  w.rate = 10;
  w.arrival = ArrivalKind::constant;
  w.prompt.mean = 20;
  w.output.mean = 5;
  w.shared_prefix_tokens = 8;
  w.prefix_groups = 2;
  w.turns = 3;
  w.think_s = 1.5;
  auto src = make_workload(w);
  std::vector<SimRequest> got;
  SimRequest r;
  while (src->next(r)) got.push_back(r);
  REQUIRE(got.size() == 6);
  // session 0: prompts 8 + 20, 8 + 25 + 20, 8 + 50 + 20 (each turn repeats the earlier prompts and outputs)
  CHECK(got[0].prompt_tokens == 8 + 20);
  CHECK(got[1].prompt_tokens == 8 + 25 + 20);
  CHECK(got[2].prompt_tokens == 8 + 50 + 20);
  CHECK(got[0].session == 0);
  CHECK(got[3].session == 1);
  CHECK(got[0].prefix_group == 0);
  CHECK(got[3].prefix_group == 1);
  CHECK(got[3].prefix_tokens == 8);
  CHECK(got[0].think_s == 0);
  CHECK(got[1].think_s == 1.5);
  // sessions start at rate / turns = 10 / 3 per second
  CHECK(got[3].arrival_s - got[0].arrival_s == Approx(3.0 / 10));
  CHECK(got[1].arrival_s == got[0].arrival_s);
  WorkloadSpec bad = w;
  bad.prompt.mean = 0;
  CHECK_THROWS_AS(make_workload(bad), InputError);
}

TEST_CASE("simulate workload Poisson arrivals average the rate and end at N / rate", "[simulate]") {
  WorkloadSpec w;
  w.requests = 2000;
  w.rate = 4;
  w.prompt.kind = LengthDist::Kind::lognormal;
  w.prompt.mean = 220;
  w.prompt.spread = 1.0;
  w.output.kind = LengthDist::Kind::uniform;
  w.output.mean = 100;
  w.output.spread = 0.5;
  w.seed = 3;
  auto src = make_workload(w);
  SimRequest r;
  double last = 0, prompt = 0;
  i64 n = 0, out_min = 1 << 30, out_max = 0;
  while (src->next(r)) {
    last = r.arrival_s;
    prompt += static_cast<double>(r.prompt_tokens);
    out_min = std::min(out_min, r.output_tokens);
    out_max = std::max(out_max, r.output_tokens);
    ++n;
  }
  CHECK(n == 2000);
  CHECK(last == Approx(2000 / 4.0));  // vllm bench serve rescales the last arrival to N / rate
  CHECK(prompt / 2000 == Approx(220).epsilon(0.08));
  CHECK(out_min >= 50);
  CHECK(out_max <= 150);
}

TEST_CASE("simulate config from a plan takes the engine's pool and limits", "[simulate]") {
  SECTION("vLLM") {
    const Planner p(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::vllm)));
    const SimConfig c = sim_config_for(p);
    CHECK(c.scheduler == SchedulerKind::vllm_v1);
    CHECK(c.pool_blocks == p.engine().num_gpu_blocks);
    CHECK(c.block_tokens == p.engine().block_size);
    CHECK(c.max_num_seqs == p.max_seqs());
    CHECK(c.max_model_len == p.max_len());
    CHECK(c.max_num_batched_tokens == p.spec().engine.max_num_batched_tokens);
    CHECK(c.replicas == 1);
  }
  SECTION("SGLang") {
    const Planner p(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::sglang)));
    const SimConfig c = sim_config_for(p);
    CHECK(c.pool_blocks * c.block_tokens == p.engine().max_total_num_tokens);
  }
  SECTION("SGLang with DP attention: the groups' pools, request slots and budgets together") {
    EngineSettings e = kvtest::engine(EngineKind::sglang);
    e.attention_dp = 4;
    const Planner p(kvtest::spec("qwen3-30b-a3b", "h100-sxm", e, Parallel{4, 1, 1, 4}));
    const SimConfig c = sim_config_for(p);
    CHECK(c.pool_blocks * c.block_tokens == 4 * p.engine().max_total_num_tokens);
    CHECK(c.max_num_seqs == 4 * p.max_seqs());
    CHECK(c.max_num_batched_tokens == 4 * p.spec().engine.max_num_batched_tokens);
    CHECK(c.replicas == 1);
  }
  SECTION("vLLM V0's async output processor: from 0.6.0, off with --disable-async-output-proc, --enforce-eager, PP") {
    const auto cfg = [](const std::string& version, bool disable, bool eager, i64 pp) {
      EngineSettings e = kvtest::engine(EngineKind::vllm);
      e.version = version;
      e.disable_async_output_proc = disable;
      e.enforce_eager = eager;
      return sim_config_for(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", e, Parallel{1, pp, 1, 1})));
    };
    CHECK(cfg("0.7.3", false, false, 1).scheduler == SchedulerKind::vllm_v0);
    CHECK(cfg("0.7.3", false, false, 1).async_output);
    CHECK(cfg("0.6.0", false, false, 1).async_output);
    CHECK_FALSE(cfg("0.5.4", false, false, 1).async_output);  // #7049 landed in 0.6.0
    CHECK_FALSE(cfg("0.7.3", true, false, 1).async_output);
    CHECK_FALSE(cfg("0.7.3", false, true, 1).async_output);
    CHECK_FALSE(cfg("0.7.3", false, false, 2).async_output);
    CHECK_FALSE(cfg("0.8.0", false, false, 1).async_output);  // V1
  }
  SECTION("vLLM hybrid models: the pool in physical blocks and the groups by kind") {
    // gpt-oss-20b: 24 layers alternating sliding window 128 and full attention, so two groups of 12
    const Planner p(kvtest::spec("gpt-oss-20b", "h100-sxm", kvtest::engine(EngineKind::vllm)));
    const SimConfig c = sim_config_for(p);
    REQUIRE(c.cache_groups.size() == 2);
    CHECK(c.cache_groups[0].kind == SimCacheGroup::Kind::full);
    CHECK(c.cache_groups[0].groups == 1);
    CHECK(c.cache_groups[1].kind == SimCacheGroup::Kind::sliding);
    CHECK(c.cache_groups[1].window == 128);
    CHECK(c.pool_blocks == p.engine().num_gpu_blocks);
    CHECK(sim_pool_groups(c) == 2);
    CHECK(c.block_tokens == p.engine().block_size);
    // vLLM 0.8-0.9 cache the window at full length: one request block spans both groups, as before
    EngineSettings old = kvtest::engine(EngineKind::vllm);
    old.version = "0.9.2";
    CHECK(sim_config_for(Planner(kvtest::spec("gpt-oss-20b", "h100-sxm", old))).cache_groups.empty());
    // a model of full-attention layers only keeps request blocks
    CHECK(sim_config_for(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::vllm)))).cache_groups.empty());
  }
  SECTION("llama.cpp") {
    const Planner p(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::llamacpp)));
    const SimConfig c = sim_config_for(p);
    CHECK(c.scheduler == SchedulerKind::llamacpp);
    CHECK(c.pool_blocks == p.engine().kv_cells);
    CHECK(c.n_ctx_seq == p.engine().n_ctx_seq);
    CHECK(c.unified == (p.engine().kv_streams == 1));
  }
}
