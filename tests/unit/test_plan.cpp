// Fit semantics against brute force, shared prefixes, paging arithmetic, sweep grammar, layout
// search (the performance model: test_perf.cpp).
#include <catch2/catch.hpp>

#include "kvplan/core/deployment.hpp"
#include "kvplan/core/paging.hpp"
#include "kvplan/core/sweep.hpp"
#include "kvplan/core/units.hpp"
#include "plan_helpers.hpp"

using namespace kvplan;
using kvtest::GiB;

TEST_CASE("max concurrency and max context agree with brute force", "[plan][fit]") {
  for (EngineKind k : {EngineKind::vllm, EngineKind::sglang, EngineKind::trtllm, EngineKind::generic}) {
    auto e = kvtest::engine(k);
    e.kv_cache_memory_bytes = 3 * GiB + 777;
    e.max_num_seqs = 64;
    const Planner p(kvtest::spec("mistral-7b-v0.1", "l40s", e));
    for (i64 tokens : {1, 100, 4096, 5000, 32768}) {
      const i64 n = p.max_concurrency(tokens);
      INFO(engine_name(k) << " tokens " << tokens << " n " << n);
      i64 brute = 0;
      while (brute < 1000 && p.cell(tokens, brute + 1).fits) ++brute;
      CHECK(n == brute);
    }
    for (i64 conc : {1, 3, 17, 64}) {
      const i64 L = p.max_context(conc);
      INFO(engine_name(k) << " conc " << conc << " L " << L);
      if (L > 0) CHECK(p.cell(L, conc).fits);
      CHECK_FALSE(p.cell(L + 1, conc).fits);
    }
  }
}

TEST_CASE("a deployment that does not fit names the limiting term", "[plan][fit]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.max_num_seqs = 8;
  const Planner p(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  CHECK(p.cell(4096, 9).limiting == "max_num_seqs");
  CHECK(p.cell(200000, 1).limiting == "max_model_len");
  const Planner big(kvtest::spec("llama-3.1-70b", "l4", kvtest::engine(EngineKind::vllm)));
  CHECK(big.cell(1024, 1).limiting == "weights");
  CHECK(big.max_concurrency(1024) == 0);
  // a pool set by hand larger than the GPU: Llama-3.1-8B's 16 GB of bf16 weights beside a 200 GiB
  // --kv-cache-memory-bytes pool cannot fit an H100's 80 GB, so the cache allocation fails at startup; 20 GiB fits
  auto hand = kvtest::engine(EngineKind::vllm);
  hand.kv_cache_memory_bytes = 200 * GiB;
  const Planner over(kvtest::spec("llama-3.1-8b", "h100-sxm", hand));
  CHECK_FALSE(over.engine().startup_ok);
  CHECK(over.cell(8192, 1).limiting == "gpu_memory");
  hand.kv_cache_memory_bytes = 20 * GiB;
  CHECK(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", hand)).cell(8192, 1).fits);
  // the same with vLLM --num-gpu-blocks-override: 10^7 blocks of 16 tokens x 128 KiB is 20 TiB
  auto blocks = kvtest::engine(EngineKind::vllm);
  blocks.num_gpu_blocks_override = 10000000;
  CHECK(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", blocks)).cell(8192, 1).limiting == "gpu_memory");
}

TEST_CASE("a shared prefix is held once, in whole blocks", "[plan][prefix]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.kv_cache_memory_bytes = 4 * GiB;
  const Planner p(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  // 10 requests of 4096 tokens sharing 1000 prefix tokens: floor(1000/16) = 62 shared blocks,
  // each request 256 - 62 = 194 blocks
  const Cell c = p.cell(4096, 10, 1000);
  CHECK(c.units_needed == 62 + 10 * (256 - 62));
  CHECK(p.max_concurrency(4096, 1000) >= p.max_concurrency(4096));
  // without the prefix cache no block is shared: 10 x 256 blocks, and the concurrency of unshared requests
  e.prefix_caching = false;
  const Planner off(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  CHECK(off.cell(4096, 10, 1000).units_needed == 10 * 256);
}

TEST_CASE("paging arithmetic", "[paging]") {
  CHECK(pages_for_tokens(0, 16) == 0);
  CHECK(pages_for_tokens(1, 16) == 1);
  CHECK(pages_for_tokens(16, 16) == 1);
  CHECK(pages_for_tokens(17, 16) == 2);
  CHECK(page_waste_tokens(17, 16) == 15);
  CHECK(pages_in_bytes(100, 30) == 3);
  CHECK(pages_in_bytes(-5, 30) == 0);
}

TEST_CASE("sweep grammar: lists and ranges", "[sweep]") {
  CHECK(expand_counts("1k,4k,32k", "--context") == std::vector<i64>{1024, 4096, 32768});
  CHECK(expand_counts("1k..128k*2", "--context") == std::vector<i64>{1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072});
  CHECK(expand_counts("8..32+8", "--concurrency") == std::vector<i64>{8, 16, 24, 32});
  CHECK(expand_counts("1..4", "--concurrency") == std::vector<i64>{1, 2, 3, 4});
  CHECK(expand_counts("1..100*10, 7", "--concurrency") == std::vector<i64>{1, 10, 100, 7});
  CHECK_THROWS_WITH(expand_counts("4k..1k", "--context"), "--context: range '4k..1k' ends before it starts; write A..B with A <= B");
  CHECK_THROWS_WITH(expand_counts("1..8*1", "--context"), "--context: geometric range '1..8*1' needs A >= 1 and a factor >= 2; e.g. 1k..128k*2");
  CHECK_THROWS_WITH(expand_counts("1,,2", "--context"), "--context: empty item in '1,,2'; separate values with single commas");
  CHECK_THROWS_WITH(expand_counts("1..10000000", "--concurrency"), "--concurrency: expands to more than 1000000 values; use a coarser range");
  CHECK_THROWS_WITH(expand_counts("abc", "--context"), "--context: 'abc' is not a count; use digits with an optional k or m suffix, e.g. 32k");
  CHECK_THROWS_WITH(expand_counts("0", "--concurrency"), "--concurrency: every value must be >= 1, got 0; start the list or range at 1 or more");
  CHECK_THROWS_WITH(expand_counts("4k,0..8+4", "--context"), "--context: every value must be >= 1, got 0; start the list or range at 1 or more");
  // 2^63 - 1 is the largest count; one more, or a suffix that takes it past, is refused by name
  CHECK(parse_count("9223372036854775807", "--context") == 9223372036854775807LL);
  CHECK_THROWS_WITH(parse_count("9223372036854775808", "--context"),
                    "--context: '9223372036854775808' is beyond 2^63; give a count that fits 64 bits");
  CHECK(parse_count("9007199254740991k", "--context") == 9007199254740991LL * 1024);  // 2^53 - 1: (2^63 - 1) / 1024 rounded down
  CHECK_THROWS_WITH(parse_count("9007199254740992k", "--context"),
                    "--context: '9007199254740992k' is beyond 2^63; give a count that fits 64 bits");
}

TEST_CASE("byte counts with units", "[units]") {
  CHECK(parse_bytes("85045477376", "x") == 85045477376);
  CHECK(parse_bytes("512MiB", "x") == 512LL << 20);
  CHECK(parse_bytes("1.5GiB", "x") == 3LL << 29);
  CHECK(parse_bytes("80GB", "x") == 80000000000LL);
  CHECK_THROWS_WITH(parse_bytes("12XB", "--weight-bytes"), "--weight-bytes: unknown unit 'xb' in '12XB'; use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB");
  CHECK_THROWS_AS(parse_bytes("99999999999TiB", "x"), OverflowError);
  // an exponent, as --gpu-bandwidth and the other numbers take it: 80e9 = 80 GB, 4.8e+10, 0.5e1GB = 5 GB
  CHECK(parse_bytes("80e9", "x") == 80000000000LL);
  CHECK(parse_bytes("4.8e+10", "x") == 48000000000LL);
  CHECK(parse_bytes("0.5e1GB", "x") == 5000000000LL);
  CHECK_THROWS_AS(parse_bytes("e9", "x"), InputError);
  CHECK_THROWS_AS(parse_bytes("1e99", "x"), OverflowError);
  // a plain count is whole bytes: 1.5 would have floored to 1 B (a typo for 1.5GB); 2.0 and 1.25e2 are whole
  CHECK_THROWS_WITH(parse_bytes("1.5", "--gpu-memory-bytes"),
                    "--gpu-memory-bytes: '1.5' is a fraction of a byte; give whole bytes or a unit: 85045477376, 79.22GiB, 80GB");
  CHECK_THROWS_AS(parse_bytes("0.5B", "x"), InputError);
  CHECK(parse_bytes("2.0", "x") == 2);
  CHECK(parse_bytes("1.25e2", "x") == 125);
}

TEST_CASE("fewest GPUs agrees with trying every count", "[plan][fit][layout]") {
  auto make = [](const Parallel& par) {
    auto e = kvtest::engine(EngineKind::vllm);
    return Planner(kvtest::spec("llama-3.1-70b", "h100-sxm", e, par));
  };
  const auto m = kvtest::load("llama-3.1-70b");
  const auto r = fewest_gpus(make, m, 32768, 64, 0, 16, 8);
  REQUIRE(r.found);
  CHECK(r.cell.fits);
  // no smaller count fits with any layout
  for (i64 n = 1; n < r.parallel.gpus(); ++n)
    for (i64 tp = 1; tp <= std::min<i64>(n, 8); ++tp) {
      if (n % tp) continue;
      for (i64 pp = 1; pp <= n / tp; ++pp) {
        if ((n / tp) % pp) continue;
        Parallel par{tp, pp, n / tp / pp, 1};
        try { check_parallel(m, par); } catch (const InputError&) { continue; }
        CHECK_FALSE(make(par).cell(32768, 64).fits);
      }
    }
}


TEST_CASE("LoRA buffers come out of the KV pool: vLLM --max-loras 4 --max-lora-rank 64 on Llama-3.1-8B", "[plan][lora]") {
  // per layer, elements per slot per unit of rank (vLLM stacked A/B): qkv 3 x 4096 + (4096 + 1024 + 1024)
  // = 18,432; o 4096 + 4096 = 8,192; gate/up 2 x 4096 + 2 x 14,336 = 36,864; down 14,336 + 4096 = 18,432;
  // 81,920 x 32 layers x rank 64 x 4 slots x 2 B (bf16) = 1,342,177,280 B
  auto e = kvtest::engine(EngineKind::vllm);
  const Planner base(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  e.lora_slots = 4;
  e.lora_rank = 64;
  const Planner lora(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  CHECK(lora.budget_bytes("lora_adapters") == 1342177280LL);
  CHECK(base.budget_bytes("lora_adapters") == 0);
  CHECK(base.engine().available_kv_bytes - lora.engine().available_kv_bytes == 1342177280LL);
  // TP2: the column-parallel B and row-parallel A halve, the rest stays: per layer 3 x 4096 + 3072 + 2048 +
  // 4096 + 2 x 4096 + 14,336 + 7168 + 4096 = 55,296
  PlanSpec s = kvtest::spec("llama-3.1-8b", "h100-sxm", e);
  s.parallel.tp = 2;
  CHECK(Planner(s).budget_bytes("lora_adapters") == 55296LL * 32 * 64 * 4 * 2);
}

TEST_CASE("TensorRT-LLM prompts that max_num_tokens cannot hold beside the running decodes are warned about", "[plan][trtllm]") {
  // chunked context off (kvplan's TensorRT-LLM), max_num_tokens 8192: a prompt P fits a step beside at most
  // 8192 - P decoding requests (one token each), so concurrency C needs P + C - 1 <= 8192
  kvplan::EngineSettings e = kvtest::engine(kvplan::EngineKind::trtllm);
  e.max_num_batched_tokens = 8192;
  const kvplan::Planner p(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  auto workload = [](kvplan::i64 prompt, kvplan::i64 concurrency) {
    kvplan::ResolvedWorkload w;
    w.prompt = prompt;
    w.output = 128;
    w.tokens = prompt + 128;
    w.concurrency = concurrency;
    w.tokens_source = "prompt_tokens + output_tokens";
    return w;
  };
  CHECK(kvplan::workload_warnings(workload(8000, 16), p).empty());  // 8000 + 15 = 8015 <= 8192
  CHECK(kvplan::workload_warnings(workload(8178, 15), p).empty());  // 8178 + 14 = 8192: just fits
  const auto tight = kvplan::workload_warnings(workload(8180, 16), p);  // 8180 + 15 = 8195
  REQUIRE(tight.size() == 1);
  CHECK(tight[0].find("beside at most 12 decoding requests") != std::string::npos);
  CHECK(tight[0].find("set max_num_tokens to at least 8195 (prompt + concurrency - 1)") != std::string::npos);
  const auto over = kvplan::workload_warnings(workload(9000, 1), p);
  REQUIRE(over.size() == 1);
  CHECK(over[0].find("is longer than max_num_tokens 8192") != std::string::npos);
  // vLLM chunks prefills: no such limit; nor is a length the plan derived (max_model_len) a prompt anyone asked for
  const kvplan::Planner v(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(kvplan::EngineKind::vllm)));
  CHECK(kvplan::workload_warnings(workload(8180, 16), v).empty());
  auto derived = workload(9000, 16);
  derived.tokens_source = "max_model_len";
  CHECK(kvplan::workload_warnings(derived, p).empty());
}

TEST_CASE("a cell short of both max_num_seqs and the KV pool names the tighter limit", "[plan]") {
  auto at = [](i64 seqs) {
    auto e = kvtest::engine(EngineKind::vllm);
    e.max_num_seqs = seqs;
    return Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", e));
  };
  // 300 requests of 2,048 tokens: the pool holds fewer than 256 of them (128 KiB a token x 2,048 = 256 MiB each),
  // so with max_num_seqs 256 the KV cache is the limit; with max_num_seqs 200 the sequence cap binds first
  const Planner p256 = at(256);
  REQUIRE(p256.max_concurrency(2048, 0) < 256);
  REQUIRE(p256.max_concurrency(2048, 0) > 200);
  CHECK(p256.cell(2048, 300, 0).limiting == "kv_cache");
  CHECK(at(200).cell(2048, 300, 0).limiting == "max_num_seqs");
  // within the pool, over the cap alone: the cap
  CHECK(at(64).cell(2048, 100, 0).limiting == "max_num_seqs");
}

TEST_CASE("a context with one of prompt and output tokens leaves the other for it", "[plan][workload]") {
  const Planner p(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::vllm)));
  auto resolve = [&](std::optional<i64> context, std::optional<i64> prompt, std::optional<i64> output) {
    kvplan::Workload w;
    w.context = context;
    w.prompt = prompt;
    w.output = output;
    return kvplan::resolve_workload(w, p);
  };
  const auto with_prompt = resolve(8192, 7000, std::nullopt);  // 8,192 - 7,000 = 1,192 output tokens
  CHECK(with_prompt.prompt == 7000);
  CHECK(with_prompt.output == 1192);
  CHECK(with_prompt.tokens == 8192);
  const auto with_output = resolve(8192, std::nullopt, 200);  // 8,192 - 200 = 7,992 prompt tokens
  CHECK(with_output.prompt == 7992);
  CHECK(with_output.output == 200);
  const auto alone = resolve(8192, std::nullopt, std::nullopt);  // the whole context is prompt
  CHECK(alone.prompt == 8192);
  CHECK(alone.output == 0);
  CHECK(resolve(8192, 8000, 192).output == 192);                   // both, adding up
  CHECK_THROWS_AS(resolve(8192, 8000, 100), kvplan::InputError);   // both, not adding up
  CHECK_THROWS_AS(resolve(8192, 9000, std::nullopt), kvplan::InputError);  // a prompt past the context
  CHECK_THROWS_AS(resolve(8192, std::nullopt, 8192), kvplan::InputError);  // no prompt left
}

TEST_CASE("a cell whose weights pass the GPU's memory reports the whole shortfall, not the KV alone", "[plan]") {
  // Llama-3.1-70B bf16 on one H100: about 141 GB of weights on 85 GB, so the shortfall is at least the weights'
  // excess over the whole GPU plus the cell's KV (the headroom once read -kv_bytes: the pool was empty either way)
  const Planner p(kvtest::spec("llama-3.1-70b", "h100-sxm", kvtest::engine(EngineKind::vllm)));
  REQUIRE_FALSE(p.engine().startup_ok);
  const Cell c = p.cell(32768, 1);
  const i64 weights = p.budget_bytes("weights");
  const i64 gpu = p.spec().gpu.memory_bytes;
  REQUIRE(weights > gpu);
  CHECK(c.headroom_bytes <= -(c.kv_bytes + (weights - gpu)));
  CHECK_FALSE(c.fits);
}

TEST_CASE("a cell's limiting term is the engine's own name for the cap", "[plan]") {
  // 8,000 requests of 4k pass every engine's request cap; 256k tokens pass llama-3.1-8b's 128k context
  auto limits = [](EngineKind kind) {
    const Planner p(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(kind)));
    return std::make_pair(p.cell(4096, p.max_seqs() + 1).limiting, p.cell(262144, 1).limiting);
  };
  CHECK(limits(EngineKind::sglang).second == "context_length");
  CHECK(limits(EngineKind::trtllm).second == "max_seq_len");
  CHECK(limits(EngineKind::vllm).second == "max_model_len");
  for (const auto kind : {EngineKind::sglang, EngineKind::trtllm, EngineKind::vllm}) {
    const std::string seqs = limits(kind).first;
    CHECK((seqs == "kv_cache" || seqs == seqs_limit_name(kind)));
  }
  // SGLang with --max-running-requests 100: the 101st 4k request (512 MiB of KV each, 50.5 GiB in all, inside the
  // H100 pool) meets the request cap before the pool
  auto e = kvtest::engine(EngineKind::sglang);
  e.max_num_seqs = 100;
  CHECK(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", e)).cell(4096, 101).limiting == "max_running_requests");
  CHECK(std::string(seqs_limit_name(EngineKind::sglang)) == "max_running_requests");
  CHECK(std::string(seqs_limit_name(EngineKind::trtllm)) == "max_batch_size");
  CHECK(std::string(length_limit_name(EngineKind::llamacpp)) == "ctx_size");
}

TEST_CASE("an expert-parallel size is checked against the GPUs and splits what it does not spread", "[plan][parallel]") {
  // qwen3-30b-a3b on TP 4: EP 8 or more has no GPUs to hold the experts; EP 3 does not divide TP 4; EP 2 leaves each
  // expert split over tp / ep = 2 ranks, so a rank holds 64 experts at half width: the routed weights of TP 4 alone
  const auto weights = [](i64 ep) {
    return Planner(kvtest::spec("qwen3-30b-a3b", "h100-sxm", kvtest::engine(EngineKind::sglang), Parallel{4, 1, 1, ep})).budget_bytes("weights");
  };
  CHECK_THROWS_WITH(weights(8), Catch::Matchers::Contains("8 exceeds the 4 GPUs (tensor x data parallel) that hold the experts"));
  CHECK_THROWS_WITH(weights(3), Catch::Matchers::Contains("3 does not divide the tensor-parallel size 4"));
  // 128 experts x 3 x 2048 x 768 x 48 layers x 2 B split over 4 ranks whichever way
  const double routed_per_rank = 128.0 * 3 * 2048 * 768 * 48 * 2 / 4;
  CHECK(std::abs(static_cast<double>(weights(2) - weights(1))) < 0.01 * routed_per_rank);
  CHECK(std::abs(static_cast<double>(weights(4) - weights(1))) < 0.01 * routed_per_rank);
}
