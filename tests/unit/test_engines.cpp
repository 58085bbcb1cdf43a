// Engine rules against the numbers real engines printed (../shared/reference/cases.json, with
// the original source in each comment): exact when the engine's KV memory is given, within 10%
// when predicted from the GPU profile alone.
#include <catch2/catch.hpp>

#include "plan_helpers.hpp"

using namespace kvplan;
using kvtest::GiB;
using kvtest::MiB;

TEST_CASE("vLLM: Llama-3.1-8B on RTX 3090, max_model_len 20000: 1952 blocks, 1.56x", "[engine][vllm]") {
  // cases.json vllm-llama31-8b-3090-20k (vllm-project/vllm#10517): "GPU blocks: 1952",
  // "Maximum concurrency for 20000 tokens per request: 1.56x". kv_cache_size printed 3.81 GiB (rounded):
  // a block is 32 layers x 16 tokens x 8 heads x 128 x 2 (K,V) x 2 B = 2 MiB, so 1952 blocks = 3.8125 GiB.
  auto e = kvtest::engine(EngineKind::vllm);
  e.max_model_len = 20000;
  e.kv_cache_memory_bytes = 1952 * 2 * MiB + MiB;  // inside the printed 3.81 GiB rounding interval
  const Planner p(kvtest::spec("llama-3.1-8b", "rtx-3090", e));
  CHECK(p.engine().page_bytes == 16 * 8 * 128 * 2 * 2);
  CHECK(p.engine().num_gpu_blocks == 1952);
  CHECK(p.engine().kv_cache_tokens == 1952 * 16);                      // 31,232 tokens
  CHECK(p.engine().max_concurrency == Approx(1952.0 / 1250).epsilon(1e-12));  // 1250 blocks per 20000-token request
  CHECK(std::round(p.engine().max_concurrency * 100) / 100 == Approx(1.56));
  CHECK(p.engine().startup_ok);
}

TEST_CASE("vLLM: same GPU at max_model_len 29000 does not start: 1478 blocks, 23648 tokens, 0.82x", "[engine][vllm]") {
  // cases.json vllm-llama31-8b-3090-29k-fail: "# GPU blocks: 1478", "Maximum concurrency for 29000 tokens per
  // request: 0.82x", "max seq len (29000) is larger than the maximum number of tokens ... (23648)"
  auto e = kvtest::engine(EngineKind::vllm);
  e.max_model_len = 29000;
  e.kv_cache_memory_bytes = 1478 * 2 * MiB + MiB;
  e.version = "0.8.3";  // a late-2024 log: tokens printed as num_blocks x block_size
  const Planner p(kvtest::spec("llama-3.1-8b", "rtx-3090", e));
  CHECK(p.engine().num_gpu_blocks == 1478);
  CHECK(p.engine().kv_cache_tokens == 23648);
  // >= 0.21 prints int(max_concurrency x max_model_len): a request needs cdiv(29000, 16) = 1813 blocks,
  // int(1478 / 1813 x 29000) = 23641
  e.version = "0.21.0";
  CHECK(Planner(kvtest::spec("llama-3.1-8b", "rtx-3090", e)).engine().kv_cache_tokens == 23641);
  CHECK(std::round(p.engine().max_concurrency * 100) / 100 == Approx(0.82));
  CHECK_FALSE(p.engine().startup_ok);
  CHECK(p.engine().estimated_max_model_len == 23648);
  CHECK_FALSE(p.cell(29000, 1).fits);
  CHECK(p.cell(29000, 1).limiting == "does_not_start");  // vLLM refuses to start: nothing fits
}

TEST_CASE("vLLM V1 report: 127,626 blocks = 2,042,016 tokens, 997.08x at 2048", "[engine][vllm]") {
  // cases.json vllm-v1-blocks-to-tokens (vllm-project/vllm#13596)
  auto e = kvtest::engine(EngineKind::vllm);
  e.max_model_len = 2048;
  const i64 block_bytes = 32LL * 16 * 8 * 128 * 2 * 2;  // Llama-3-8B: 32 layers x one 2 MiB block
  e.kv_cache_memory_bytes = 127626 * block_bytes;
  const Planner p(kvtest::spec("llama-3-8b", "h100-sxm", e));
  CHECK(p.engine().num_gpu_blocks == 127626);
  CHECK(p.engine().kv_cache_tokens == 2042016);
  CHECK(std::round(p.engine().max_concurrency * 100) / 100 == Approx(997.08));
}

TEST_CASE("vLLM predicted from the GPU profile alone is within 10% of the printed KV memory", "[engine][vllm][predicted]") {
  SECTION("RTX 3090, Llama-3.1-8B, max_model_len 20000: kv_cache_size=3.81GiB (vllm#10517, V0 profiles 20000 tokens)") {
    auto e = kvtest::engine(EngineKind::vllm);
    e.max_model_len = 20000;
    e.max_num_batched_tokens = 20000;
    e.max_num_seqs = 256;
    const Planner p(kvtest::spec("llama-3.1-8b", "rtx-3090", e));
    CHECK(kvtest::rel(static_cast<double>(p.engine().available_kv_bytes), 3.81 * GiB) < 0.10);
    CHECK(kvtest::rel(static_cast<double>(p.engine().num_gpu_blocks), 1952) < 0.10);
  }
  SECTION("H100, Llama-3-8B defaults: available_kv_cache_memory 53.29GiB (vllm#10511)") {
    auto e = kvtest::engine(EngineKind::vllm);
    e.max_num_batched_tokens = 8192;
    e.max_num_seqs = 256;
    const Planner p(kvtest::spec("llama-3-8b", "h100-sxm", e));
    CHECK(kvtest::rel(static_cast<double>(p.engine().available_kv_bytes), 53.29 * GiB) < 0.10);
  }
}

TEST_CASE("vLLM hybrid groups: gpt-oss-20b has 12 full + 12 sliding layers in 2 groups of 12", "[engine][vllm][hybrid]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.max_model_len = 131072;
  e.max_num_batched_tokens = 8192;
  const i64 page = 16 * 8 * 64 * 2 * 2;  // block 16 x 8 KV heads x 64 x (K,V) x 2 B
  e.kv_cache_memory_bytes = 10000 * page * 12 + 5;
  const Planner p(kvtest::spec("gpt-oss-20b", "h100-sxm", e));
  CHECK(p.engine().num_groups == 2);
  CHECK(p.engine().group_size == 12);
  CHECK(p.engine().num_gpu_blocks == 10000);
  // a 131072-token request: full group 8192 blocks, sliding group cdiv(min(128 - 1 + 8192, 131072), 16) + 1 = 521
  CHECK(p.units_per_request(131072) == 8192 + 521);
  CHECK(p.engine().max_concurrency == Approx(10000.0 / (8192 + 521)));
  // "GPU KV cache size": >= 0.21 int(max_concurrency x max_model_len) (#41069) = int(10000 / 8713 x 131072) = 150432
  CHECK(p.engine().kv_cache_tokens == 150432);
  // 0.10-0.20: num_blocks // num_groups x block_size
  e.version = "0.11.0";
  CHECK(Planner(kvtest::spec("gpt-oss-20b", "h100-sxm", e)).engine().kv_cache_tokens == 10000 / 2 * 16);
}

TEST_CASE("vLLM hybrid padding: Gemma-3-1B (22 sliding, 4 full) groups of 4 with 2 padding layers", "[engine][vllm][hybrid]") {
  // 22 >= 1.5 x 4, so group_size = 4: ceil(22/4) = 6 sliding groups + 1 full group = 7 groups of 4 = 28 slots
  auto e = kvtest::engine(EngineKind::vllm);
  e.kv_cache_memory_bytes = 8 * GiB;
  const Planner p(kvtest::spec("gemma-3-1b-it", "l4", e));
  CHECK(p.engine().group_size == 4);
  CHECK(p.engine().num_groups == 7);
  CHECK(p.engine().padding_layers == 2);
  const i64 page = 16 * 1 * 256 * 2 * 2;
  CHECK(p.engine().num_gpu_blocks == 8 * GiB / (page * 4));
}

TEST_CASE("vLLM MLA: one latent per token, replicated on every TP rank", "[engine][vllm][mla]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.kv_cache_memory_bytes = 4 * GiB;
  const Planner p1(kvtest::spec("deepseek-v2-lite", "h100-sxm", e));
  CHECK(p1.engine().page_bytes == 16 * (512 + 64) * 2);
  const Planner p2(kvtest::spec("deepseek-v2-lite", "h100-sxm", e, Parallel{2, 1, 1, 1}));
  CHECK(p2.engine().page_bytes == p1.engine().page_bytes);  // not split by TP
}

TEST_CASE("TP splits KV heads, max(1, kv_heads / tp)", "[engine][parallel]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.kv_cache_memory_bytes = 4 * GiB;
  // Llama-3.1-70B: 8 KV heads; TP 4 -> 2 per rank; TP 16 would replicate to 1 (but 64 heads / 16 is fine)
  const Planner p4(kvtest::spec("llama-3.1-70b", "h100-sxm", e, Parallel{4, 1, 1, 1}));
  CHECK(p4.engine().page_bytes == 16 * 2 * 128 * 2 * 2);
  const Planner p16(kvtest::spec("llama-3.1-70b", "h100-sxm", e, Parallel{16, 1, 1, 1}));
  CHECK(p16.engine().page_bytes == 16 * 1 * 128 * 2 * 2);
}

TEST_CASE("PP: vLLM layer partition puts the remainder before the last stage", "[engine][parallel]") {
  // 32 = 3 x 10 + 2: the two extra layers go to stages pp-2 and pp-3 -> 11, 11, 10
  CHECK(stage_layers(32, 3, 0) == std::pair<i64, i64>{0, 11});
  CHECK(stage_layers(32, 3, 1) == std::pair<i64, i64>{11, 22});
  CHECK(stage_layers(32, 3, 2) == std::pair<i64, i64>{22, 32});
  CHECK(stage_layers(80, 8, 7) == std::pair<i64, i64>{70, 80});
}

TEST_CASE("bad parallel layouts name the setting", "[engine][parallel][errors]") {
  auto e = kvtest::engine(EngineKind::vllm);
  CHECK_THROWS_WITH(Planner(kvtest::spec("llama-3-8b", "h100-sxm", e, Parallel{3, 1, 1, 1})),
                    "tensor_parallel_size: 3 does not divide num_attention_heads 32; use a tensor-parallel size that divides 32");
  CHECK_THROWS_WITH(Planner(kvtest::spec("llama-3-8b", "h100-sxm", e, Parallel{1, 33, 1, 1})),
                    "pipeline_parallel_size: 33 stages exceed the model's 32 layers; use at most 32");
  // experts over 3 ranks: vLLM deals 128 as 43, 43, 42 (determine_expert_map), the busiest rank holding 43; SGLang
  // wants an even split
  const Planner v(kvtest::spec("qwen3-30b-a3b", "h100-sxm", e, Parallel{1, 1, 3, 3}));
  for (const Layer& l : v.rank_model().layers)
    if (l.mlp == MlpKind::moe) CHECK(l.experts == 43);
  CHECK_THROWS_WITH(Planner(kvtest::spec("qwen3-30b-a3b", "h100-sxm", kvtest::engine(EngineKind::sglang), Parallel{1, 1, 3, 3})),
                    Catch::Contains("expert_parallel_size: 3 does not divide the 128 routed experts"));
}

TEST_CASE("engine settings out of range name the setting", "[engine][errors]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.memory_fraction = 1.5;
  CHECK_THROWS_WITH(kvtest::spec("llama-3-8b", "h100-sxm", e), "memory_fraction: must be in (0, 1], got 1.5; use a fraction such as 0.9");
  e.memory_fraction = 0;
  e.block_size = 24;
  CHECK_THROWS_WITH(kvtest::spec("llama-3-8b", "h100-sxm", e), "block_size: 24 is not supported by vLLM; use 1, 8 or a multiple of 16");
  // the newest vLLM takes 256 (its --help: BLOCK_SIZE, no choices); 0.11's --help lists {1,8,16,32,64,128}, 0.8.3's {8,...,128}
  e.block_size = 256;
  CHECK_NOTHROW(kvtest::spec("llama-3-8b", "h100-sxm", e));
  e.version = "0.11.0";
  CHECK_THROWS_WITH(kvtest::spec("llama-3-8b", "h100-sxm", e), "block_size: 256 is not a --block-size choice of vLLM 0.11.0; use 1, 8, 16, 32, 64 or 128");
  e.version = "0.8.3";
  e.block_size = 1;
  CHECK_THROWS_WITH(kvtest::spec("llama-3-8b", "h100-sxm", e), "block_size: 1 is not a --block-size choice of vLLM 0.8.3; use 8, 16, 32, 64 or 128");
  e.version = "";
  e.block_size = 0;
  e.max_model_len = 1000000;
  CHECK_THROWS_WITH(kvtest::spec("llama-3-8b", "h100-sxm", e),
                    "max_model_len: 1000000 exceeds the model's max_position_embeddings 8192; lower it, or pass --allow-long-context to override as VLLM_ALLOW_LONG_MAX_MODEL_LEN does");
  auto t = kvtest::engine(EngineKind::trtllm);
  t.block_size = 48;
  CHECK_THROWS_WITH(kvtest::spec("llama-3-8b", "h100-sxm", t), "block_size: 48 is not a power of two; use 16, 32, 64 or 128");
}

TEST_CASE("SGLang: cell size and page-aligned max_total_num_tokens", "[engine][sglang]") {
  auto e = kvtest::engine(EngineKind::sglang);
  e.block_size = 16;  // --page-size 16
  e.kv_cache_memory_bytes = 10 * GiB + 12345;
  const Planner p(kvtest::spec("llama-3-8b", "h100-sxm", e));
  const i64 cell = 32 * 8 * 128 * 2 * 2;  // layers x kv heads x head_dim x (K,V) x bf16
  CHECK(p.engine().cell_size == cell);
  CHECK(p.engine().max_total_num_tokens == (10 * GiB + 12345) / cell / 16 * 16);
  e.max_total_tokens = 50000;  // --max-total-tokens lowers it (aligned to the page)
  const Planner q(kvtest::spec("llama-3-8b", "h100-sxm", e));
  CHECK(q.engine().max_total_num_tokens == 50000 / 16 * 16);
  // MLA: (kv_lora_rank + qk_rope_head_dim) x layers x elem
  auto m = kvtest::engine(EngineKind::sglang);
  m.kv_cache_memory_bytes = GiB;
  CHECK(Planner(kvtest::spec("deepseek-v2-lite", "h100-sxm", m)).engine().cell_size == (512 + 64) * 27 * 2);
  // --kv-cache-dtype fp4_e2m1 (memory_pool.py MHATokenToKVPoolFP4 / MLATokenToKVPoolFP4): k // 2 bytes of e2m1 and a
  // uint8 scale per 16 values: the 576-value latent takes 288 + 36 = 324 B a layer; Llama-3-8B's 1024-value K row 576 B
  auto spec4 = kvtest::spec("deepseek-v2-lite", "h100-sxm", m);
  spec4.kv.k_format = spec4.kv.v_format = ElemFormat::fp4_e2m1;
  CHECK(Planner(spec4).engine().cell_size == 324 * 27);
  auto mha4 = kvtest::spec("llama-3-8b", "h100-sxm", m);
  mha4.kv.k_format = mha4.kv.v_format = ElemFormat::fp4_e2m1;
  CHECK(Planner(mha4).engine().cell_size == 32 * 2 * (1024 / 2 + 1024 / 16));
}

TEST_CASE("SGLang hybrid SWA pool: full and sliding layers' tokens, by release", "[engine][sglang][versions][hybrid]") {
  // gpt-oss-120b: 18 full + 18 sliding layers (window 128) of 8 KV heads x 64 x (K,V) x bf16 = 2048 B a token each
  const i64 layer = 8 * 64 * 2 * 2, F = 18 * layer, S = 18 * layer;
  const i64 avail = 8 * GiB + 777;
  auto run = [&](const std::string& version, const std::string& gpu, double ratio = 0.8, bool disable = false) {
    auto e = kvtest::engine(EngineKind::sglang);
    e.version = version;
    e.kv_cache_memory_bytes = avail;
    e.swa_full_tokens_ratio = ratio;
    e.disable_hybrid_swa = disable;
    return Planner(kvtest::spec("gpt-oss-120b", gpu, e));
  };
  // main (pool_configurator.py HybridSWAPoolConfigurator): full = avail // (F + 0.8 S), swa = int(full x 0.8)
  const Planner newest = run("", "h100-sxm");
  const i64 full = static_cast<i64>(static_cast<double>(avail) / (static_cast<double>(F) + 0.8 * static_cast<double>(S)));
  CHECK(newest.engine().max_total_num_tokens == full);
  CHECK(newest.engine().swa_layer_tokens == static_cast<i64>(static_cast<double>(full) * 0.8));
  CHECK(newest.engine().kv_pool_bytes == full * F + newest.engine().swa_layer_tokens * S);
  // 0.5.9-0.5.10 (#18039): T = avail // (F + S) as one pool, then full = int(T x (F + S) / (F + 0.8 S))
  const i64 T = avail / (F + S);
  const i64 split = static_cast<i64>(static_cast<double>(T) * static_cast<double>(F + S) / (static_cast<double>(F) + 0.8 * static_cast<double>(S)));
  CHECK(run("0.5.9", "h100-sxm").engine().max_total_num_tokens == split);
  // releases and GPUs without it: one pool of T tokens for every layer
  CHECK(run("0.5.6", "h100-sxm").engine().max_total_num_tokens == T);  // gpt-oss forced off until 0.5.8
  CHECK(run("0.5.6", "h100-sxm").engine().swa_layer_tokens == 0);
  CHECK(run("0.5.9", "b200").engine().max_total_num_tokens == T);      // trtllm_mha, Blackwell's default, until 0.5.10
  CHECK(run("0.5.10", "b200").engine().max_total_num_tokens == split);
  CHECK(run("", "h100-sxm", 0.8, true).engine().max_total_num_tokens == T);  // --disable-hybrid-swa-memory
  // --swa-full-tokens-ratio 1: both pools hold the same tokens, full = avail // (F + S) = T
  CHECK(run("", "h100-sxm", 1.0).engine().max_total_num_tokens == T);
  const Planner old = run("0.5.6", "h100-sxm");
  const auto& notes = old.engine().notes;
  CHECK(std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return n.find("turns it off for gpt-oss (until 0.5.8)") != std::string::npos; }));
  // capacity: a request holds its length in the full pool and min(length, 128) + the page in progress in the SWA
  // pool; 100-token requests are held by the SWA pool (0.8 x as many tokens), 1000-token ones by the full pool
  const i64 swa = newest.engine().swa_layer_tokens;
  CHECK(newest.max_concurrency(100) == std::min<i64>(full / static_cast<i64>(std::ceil(100.0 * static_cast<double>(full) / static_cast<double>(swa))), newest.max_seqs()));
  CHECK(newest.max_concurrency(1000) == std::min<i64>(full / 1000, newest.max_seqs()));
  // a ratio so small the SWA pool rounds to no token holds no request
  CHECK(run("", "h100-sxm", 1e-9).max_concurrency(100) == 0);
  // Llama-4 Scout: 12 full layers and 36 chunked (8192) of 8 x 128 x 2 x bf16 = 4096 B a token each
  auto l4 = kvtest::engine(EngineKind::sglang);
  l4.kv_cache_memory_bytes = avail;
  const i64 l4_full = static_cast<i64>(static_cast<double>(avail) / (12.0 * 4096 + 0.8 * 36.0 * 4096));
  CHECK(Planner(kvtest::spec("llama-4-scout-17b-16e", "h100-sxm", l4)).engine().max_total_num_tokens == l4_full);
}

TEST_CASE("SGLang on SM 10.x: the trtllm_mha backend's 64-token pages for MHA models", "[engine][sglang][versions]") {
  // server_args.py: MHA models default to trtllm_mha on SM100 from 0.5.7 ("1.2 Use trtllm_mha for SM100/SM103"),
  // gpt-oss from 0.5.2; "TensorRT-LLM MHA only supports page_size of 16, 32 or 64, changing page_size from 1 to 64"
  auto page = [](const std::string& model, const std::string& gpu, const std::string& version) {
    auto e = kvtest::engine(EngineKind::sglang);
    e.version = version;
    const auto m = kvtest::load(model);
    const auto g = kvtest::profiles().gpu(gpu);
    const bool mla = std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.kv == KvKind::mla_latent; });
    return kvplan::resolve_engine_defaults(e, m.max_context, 1, g.memory_bytes, g.architecture, mla, g.compute_capability, 1, false,
                                           m.architecture)
        .block_size;
  };
  CHECK(page("llama-3.1-8b", "b200", "") == 64);
  CHECK(page("llama-3.1-8b", "b200", "0.5.7") == 64);
  CHECK(page("llama-3.1-8b", "b200", "0.5.6") == 1);
  CHECK(page("gpt-oss-20b", "b200", "0.5.6") == 64);
  CHECK(page("llama-3.1-8b", "h100-sxm", "") == 1);        // Hopper: fa3, pages of 1
  CHECK(page("deepseek-v2-lite", "b200", "") == 1);        // MLA: flashinfer on SM100
}

TEST_CASE("SGLang default mem_fraction_static: the four rules by release", "[engine][sglang][versions]") {
  auto sg = [](const std::string& version, kvplan::i64 mib, kvplan::i64 tp) {
    auto e = kvtest::engine(EngineKind::sglang);
    e.version = version;
    return kvplan::resolve_engine_defaults(e, 8192, tp, mib << 20, "hopper").memory_fraction;
  };
  // <= 0.4.5 (server_args.py at v0.4.0): by TP size only
  CHECK(sg("0.4.0", 81559, 1) == 0.88);
  CHECK(sg("0.4.0", 81559, 8) == 0.81);
  CHECK(sg("0.4.5", 143771, 16) == 0.79);
  // 0.4.6: the TP table up to 80 GiB (81920 MiB), above it (mem - 13 GiB) / mem
  CHECK(sg("0.4.6", 81559, 2) == 0.87);
  CHECK(sg("0.4.6", 143771, 1) == Approx((143771.0 - 13312) / 143771).epsilon(1e-12));
  // 0.4.7-0.5.2 (#7054): reserve (9.5 + tp x pp / 2) GiB below 90 GiB, rounded to 3 places:
  // H100 81559 MiB, TP 1: (81559 - 10240) / 81559 = 0.87445 -> 0.874
  CHECK(sg("0.5.2", 81559, 1) == Approx(0.874));
  // 24 GiB card (< 35 GiB): (2.8 + 0.1) GiB = 2969.6 MiB -> (24564 - 2969.6) / 24564 = 0.8791 -> 0.879
  CHECK(sg("0.4.7", 24564, 1) == Approx(0.879));
  // >= 0.5.3 (#10975): 512 + 1.5 x chunked prefill + 2 x cuda graph bs + tp x pp / 8 GiB, floor 10 GiB above 60 GiB
  // H100 TP 1: chunked 8192, bs 256 -> 512 + 12288 + 512 + 128 = 13440 -> (81559 - 13440) / 81559 = 0.8352 -> 0.835
  CHECK(sg("0.5.6", 81559, 1) == Approx(0.835));
  // H100 TP 8: bs 512 -> 512 + 12288 + 1024 + 1024 = 14848 -> 0.8179 -> 0.818
  CHECK(sg("", 81559, 8) == Approx(0.818));
  // L4 (22.5 GiB, < 35 GiB): chunked 2048, bs 24 -> 512 + 3072 + 48 + 128 = 3760 -> (23034 - 3760) / 23034 = 0.8368 -> 0.837
  CHECK(sg("0.5.10", 23034, 1) == Approx(0.837));
}

TEST_CASE("SGLang chunked prefill default by release and GPU memory", "[engine][sglang][versions]") {
  auto chunk = [](const std::string& version, kvplan::i64 mib) {
    auto e = kvtest::engine(EngineKind::sglang);
    e.version = version;
    return kvplan::resolve_engine_defaults(e, 8192, 1, mib << 20, "hopper").max_num_batched_tokens;
  };
  CHECK(chunk("0.4.6", 24564) == 2048);   // < 25,000 MiB
  CHECK(chunk("0.4.6", 46068) == 8192);
  CHECK(chunk("0.5.2", 46068) == 8192);   // < 160 GiB
  CHECK(chunk("0.5.6", 46068) == 4096);   // >= 0.5.3: < 60 GiB
  CHECK(chunk("0.5.6", 183359) == 16384); // >= 160 GiB
}

TEST_CASE("TensorRT-LLM: 69,524,783,104 bytes -> 132,608 tokens (Llama-2-7B geometry, fp16)", "[engine][trtllm]") {
  // cases.json trtllm-a100-bytes-to-tokens (NVIDIA/TensorRT-LLM#1400): "Allocate 69524783104 bytes for k/v cache.",
  // "Using 132608 tokens in paged KV cache."; 524288 B/token = 32 x 4096 x 2 x 2
  auto e = kvtest::engine(EngineKind::trtllm);
  e.kv_cache_memory_bytes = 69524783104;
  const Planner p(kvtest::spec("llama-2-7b", "a100-sxm-80gb", e, {}, ElemFormat::f16));
  CHECK(p.engine().page_bytes == 524288);
  CHECK(p.engine().max_tokens == 132608);
  // max_tokens is rounded up to whole blocks (TensorRT-LLM#224)
  e.max_tokens = 1000;
  CHECK(Planner(kvtest::spec("llama-2-7b", "a100-sxm-80gb", e, {}, ElemFormat::f16)).engine().max_tokens == 1024);
}

TEST_CASE("llama.cpp buffers match the printed K/V sizes", "[engine][llamacpp]") {
  auto e = kvtest::engine(EngineKind::llamacpp);
  SECTION("Llama-3.1-8B, -c 16384, f16: K 1024 MiB, V 1024 MiB, 16384 cells (ik_llama.cpp#562)") {
    e.ctx_size = 16384;
    const Planner p(kvtest::spec("llama-3.1-8b", "rtx-4090", e, {}, ElemFormat::f16));
    CHECK(p.engine().kv_cells == 16384);
    CHECK(p.engine().k_bytes == 1024 * MiB);
    CHECK(p.engine().v_bytes == 1024 * MiB);
  }
  SECTION("Qwen3-30B-A3B, -c 16384, f16: 1536 MiB (ik_llama.cpp#514)") {
    e.ctx_size = 16384;
    CHECK(Planner(kvtest::spec("qwen3-30b-a3b", "rtx-4090", e, {}, ElemFormat::f16)).engine().kv_bytes == 1536 * MiB);
  }
  SECTION("DeepSeek-V2-Lite, -c 512, MLA off (expanded): K 81 MiB, V 54 MiB (ik_llama.cpp#230)") {
    e.ctx_size = 512;
    auto s = kvtest::spec("deepseek-v2-lite", "rtx-4090", e, {}, ElemFormat::f16);
    for (auto& l : s.model.layers) { l.kv = KvKind::mla_expanded; l.kv_heads = l.q_heads; l.k_head_dim = 192; }
    const Planner p(s);
    CHECK(p.engine().k_bytes == 81 * MiB);
    CHECK(p.engine().v_bytes == 54 * MiB);
  }
  SECTION("mainline MLA: K rows of 576 and V rows of 512 per token per layer; from b7830 no V cache") {
    e.ctx_size = 4096;
    e.version = "b7376";
    const Planner p(kvtest::spec("deepseek-v2-lite", "rtx-4090", e, {}, ElemFormat::f16));
    CHECK(p.engine().k_bytes == 27LL * 4096 * 576 * 2);
    CHECK(p.engine().v_bytes == 27LL * 4096 * 512 * 2);
    // ggml-org/llama.cpp#19067 "kv-cache : support V-less cache": has_v = !is_mla
    e.version = "b7830";
    const Planner q(kvtest::spec("deepseek-v2-lite", "rtx-4090", e, {}, ElemFormat::f16));
    CHECK(q.engine().k_bytes == 27LL * 4096 * 576 * 2);
    CHECK(q.engine().v_bytes == 0);
  }
  SECTION("n_ctx is padded to 256 cells; slots without a unified cache round up per slot") {
    e.ctx_size = 16768;  // engines.md: "a requested 16768 became 16896"
    CHECK(Planner(kvtest::spec("llama-3.1-8b", "rtx-4090", e)).engine().n_ctx == 16896);
    // unslothai/unsloth#7530: ctx 1024 with 3 slots allocates 1536 cells, with 4 slots 1024
    e.ctx_size = 1024;
    e.kv_unified = false;
    e.parallel = 3;
    CHECK(Planner(kvtest::spec("llama-3.1-8b", "rtx-4090", e)).engine().kv_cells == 1536);
    e.parallel = 4;
    CHECK(Planner(kvtest::spec("llama-3.1-8b", "rtx-4090", e)).engine().kv_cells == 1024);
  }
  SECTION("iSWA: sliding layers get pad(min(n_ctx, n_swa x n_seq + n_ubatch), 256) cells unless --swa-full") {
    e.ctx_size = 131072;
    // recent builds: 4 auto slots sharing a unified cache -> pad(128 x 4 + 512, 256) = 1024
    CHECK(Planner(kvtest::spec("gpt-oss-20b", "rtx-4090", e, {}, ElemFormat::f16)).engine().swa_cells == 1024);
    e.version = "b5937";  // one slot before #16736
    const Planner p(kvtest::spec("gpt-oss-20b", "rtx-4090", e, {}, ElemFormat::f16));
    CHECK(p.engine().swa_cells == 768);  // pad(128 + 512, 256)
    const i64 row = 8 * 64 * 2;          // 8 KV heads x 64 x f16
    CHECK(p.engine().kv_bytes == 2 * (12LL * 131072 * row + 12LL * 768 * row));
    e.swa_full = true;
    CHECK(Planner(kvtest::spec("gpt-oss-20b", "rtx-4090", e, {}, ElemFormat::f16)).engine().kv_bytes == 2 * 24LL * 131072 * row);
  }
}

TEST_CASE("vLLM hybrid Mamba: attention block grows until a page holds a Mamba state", "[engine][vllm][ssm]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.kv_cache_memory_bytes = 20 * GiB;
  const Planner p(kvtest::spec("jamba-1.5-mini", "h100-sxm", e));
  const i64 attn_pt = 8 * 128 * 2 * 2;                      // per layer per token
  const i64 state = ((4 - 1) * 8192 + 8192 * 16) * 2;      // Mamba state per layer, bf16
  const i64 block = 16 * ((state + 16 * attn_pt - 1) / (16 * attn_pt));
  CHECK(p.engine().block_size == block);
  CHECK(p.engine().page_bytes == block * attn_pt);
}

// ---------------------------------------------------------------- rules by engine version

namespace {
kvplan::PlanSpec fixed_terms(const std::string& model, EngineKind kind, const std::string& version) {
  auto e = kvtest::engine(kind);
  e.version = version;
  auto s = kvtest::spec(model, "h100-sxm", e);
  s.overrides.gpu_memory = 80 * GiB;
  s.overrides.weights = 10 * GiB;
  s.overrides.activation = GiB;
  s.overrides.non_torch = GiB / 2;
  s.overrides.cuda_graph = GiB / 4;
  s.overrides.cuda_context = GiB / 2;
  return s;
}
}  // namespace

TEST_CASE("vLLM >= 0.21 takes utilization 0.92 and the CUDA graph estimate before the KV pool", "[engine][vllm][versions]") {
  // #38284: gpu_memory_utilization default 0.92; available = total x 0.92 - weights - activation - non-torch - graphs
  const Planner now(fixed_terms("llama-3.1-8b", EngineKind::vllm, "0.26.0"));
  CHECK(now.spec().engine.memory_fraction == 0.92);
  CHECK(now.engine().available_kv_bytes ==
        static_cast<i64>(std::floor(80.0 * 0.92 * static_cast<double>(GiB))) - 10 * GiB - GiB - GiB / 2 - GiB / 4);
  // 0.10-0.20: 0.90 and graphs outside the budget (captured after the KV tensors, in the 10% left over)
  const Planner before(fixed_terms("llama-3.1-8b", EngineKind::vllm, "0.11.0"));
  CHECK(before.spec().engine.memory_fraction == 0.9);
  CHECK(before.engine().available_kv_bytes == 72 * GiB - 10 * GiB - GiB - GiB / 2);
  CHECK(std::string(before.engine().rules_version).find("0.11") != std::string::npos);
}

TEST_CASE("vLLM 0.8-0.9 caches sliding-window layers at full length", "[engine][vllm][versions]") {
  // v0.8.3 unify_hybrid_kv_cache_specs turns every SlidingWindowSpec into FullAttentionSpec: gpt-oss-20b is one
  // group of 24 full layers, so a 131072-token request needs cdiv(131072, 16) = 8192 blocks of 24 layers
  auto e = kvtest::engine(EngineKind::vllm);
  e.version = "0.8.3";
  e.max_model_len = 131072;
  e.kv_cache_memory_bytes = 40 * GiB;
  const Planner p(kvtest::spec("gpt-oss-20b", "h100-sxm", e));
  CHECK(p.engine().num_groups == 1);
  CHECK(p.engine().group_size == 24);
  CHECK(p.units_per_request(131072) == 8192);
  // 0.8.3 serve defaults: max_num_seqs 1024 on every GPU (#17073 later made it 256 below 70 GiB)
  auto small = kvtest::engine(EngineKind::vllm);
  small.version = "0.8.3";
  CHECK(kvtest::spec("llama-3.1-8b", "l4", small).engine.max_num_seqs == 1024);
  small.version = "0.10.0";
  CHECK(kvtest::spec("llama-3.1-8b", "l4", small).engine.max_num_seqs == 256);
}

TEST_CASE("vLLM batch defaults follow the usage context and the V0 engine", "[engine][vllm][versions]") {
  // shared/reference engine-versions.md 1.5: vllm serve 8192 / 1024 on a >= 70 GiB non-A100 GPU, 2048 / 256 otherwise;
  // the offline LLM class 16384 / 8192 tokens with the same sequences; no listed context (AsyncLLMEngine) 2048 / 128
  auto defaults = [](const std::string& gpu, const std::string& ctx, const std::string& version) {
    auto e = kvtest::engine(EngineKind::vllm);
    e.version = version;
    e.usage_context = ctx;
    const auto s = kvtest::spec("llama-3.1-8b", gpu, e).engine;
    return std::make_pair(s.max_num_batched_tokens, s.max_num_seqs);
  };
  CHECK(defaults("h100-sxm", "", "0.11.0") == std::make_pair<i64, i64>(8192, 1024));
  CHECK(defaults("h100-sxm", "serve", "0.11.0") == std::make_pair<i64, i64>(8192, 1024));
  CHECK(defaults("h100-sxm", "llm", "0.11.0") == std::make_pair<i64, i64>(16384, 1024));
  CHECK(defaults("a100-sxm-80gb", "llm", "0.11.0") == std::make_pair<i64, i64>(8192, 256));
  CHECK(defaults("h100-sxm", "engine", "0.11.0") == std::make_pair<i64, i64>(2048, 128));
  // 0.8.3 had one max_num_seqs default, 1024, whatever the context
  CHECK(defaults("l4", "engine", "0.8.3") == std::make_pair<i64, i64>(2048, 1024));
  // V0 (before 0.8): 256 sequences and max(max_model_len, 2048) tokens without chunked prefill (up to a 32K context)
  auto v0 = kvtest::engine(EngineKind::vllm);
  v0.version = "0.7.3";
  v0.max_model_len = 4096;
  const auto s = kvtest::spec("llama-3.1-8b", "h100-sxm", v0).engine;
  CHECK(s.max_num_seqs == 256);
  CHECK(s.max_num_batched_tokens == 4096);
  CHECK(s.chunked_prefill == false);
  CHECK(s.prefix_caching == false);
  v0.max_model_len = 65536;  // above 32K: chunked prefill on, a 2048-token budget
  const auto l = kvtest::spec("llama-3.1-8b", "h100-sxm", v0).engine;
  CHECK(l.chunked_prefill == true);
  CHECK(l.max_num_batched_tokens == 2048);
}

TEST_CASE("vLLM without chunked prefill: the step must hold a whole prompt, and 0.8-0.11 ignore the flag", "[engine][vllm][versions]") {
  // vllm/engine/arg_utils.py _set_default_max_num_seqs_and_batched_tokens_args (#26623): unset, max_num_batched_tokens
  // becomes max(max_model_len, 8192) on an H100 (vllm serve) and max_num_seqs min(1024, that); SchedulerConfig then
  // refuses a budget below max_model_len ("is smaller than max_model_len") or below max_num_seqs
  auto run = [](const std::string& version, i64 max_model_len, i64 batched, i64 seqs) {
    auto e = kvtest::engine(EngineKind::vllm);
    e.version = version;
    e.chunked_prefill = false;
    e.max_model_len = max_model_len;
    e.max_num_batched_tokens = batched;
    e.max_num_seqs = seqs;
    return kvtest::spec("llama-3.1-8b", "h100-sxm", e).engine;
  };
  const auto off = run("0.26.0", 32768, 0, 0);
  CHECK(off.max_num_batched_tokens == 32768);
  CHECK(off.max_num_seqs == 1024);
  CHECK(run("0.26.0", 4096, 0, 0).max_num_batched_tokens == 8192);  // the default already holds a 4096-token prompt
  CHECK_THROWS_WITH(run("0.26.0", 32768, 8192, 0),
                    Catch::Contains("max_num_batched_tokens: 8192 is smaller than max_model_len 32768 with chunked prefill off") &&
                        Catch::Contains("raise --max-num-batched-tokens to at least 32768"));
  // 0.11: V1 sets enable_chunked_prefill = True whatever the flag says: the 8192 budget stands, prompts are chunked
  const auto v011 = run("0.11.0", 32768, 8192, 0);
  CHECK(v011.max_num_batched_tokens == 8192);
  const auto p = kvplan::Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", [&] {
                                   auto e = kvtest::engine(EngineKind::vllm);
                                   e.version = "0.11.0";
                                   e.chunked_prefill = false;
                                   return e;
                                 }()))
                     .engine();
  CHECK(std::any_of(p.notes.begin(), p.notes.end(), [](const std::string& n) { return n.find("whatever --no-enable-chunked-prefill says") != std::string::npos; }));
  // the budget must cover max_num_seqs: a defaulted max_num_seqs is at most max_num_batched_tokens (512 of the
  // H100's 1024; arg_utils.py min(default_max_num_seqs, max_num_batched_tokens)); an explicit 1024 fails to start
  auto budget = [](const std::string& version, i64 seqs) {
    auto e = kvtest::engine(EngineKind::vllm);
    e.version = version;
    e.max_num_batched_tokens = 512;
    e.max_num_seqs = seqs;
    return kvtest::spec("llama-3.1-8b", "h100-sxm", e).engine;
  };
  CHECK(budget("0.11.0", 0).max_num_seqs == 512);
  CHECK(budget("0.26.0", 0).max_num_seqs == 512);
  CHECK_THROWS_WITH(budget("0.11.0", 1024), Catch::Contains("512 is below max_num_seqs 1024"));
  CHECK_THROWS_WITH(budget("0.26.0", 1024), Catch::Contains("512 is below max_num_seqs 1024"));
}

TEST_CASE("TensorRT-LLM 0.x and 1.x: tokens per block and CUDA graphs", "[engine][trtllm][versions]") {
  // 0.x engine builds: PluginConfig tokens_per_block 64; KV = 0.9 x (total - context - weights - activation - non-torch)
  const Planner old(fixed_terms("llama-3.1-8b", EngineKind::trtllm, "0.8.0"));
  CHECK(old.engine().block_size == 64);
  const double free_old = static_cast<double>(80 * GiB - GiB / 2 - 10 * GiB - GiB - GiB / 2);
  CHECK(old.engine().available_kv_bytes == static_cast<i64>(std::floor(free_old * 0.9)));
  // 1.x PyTorch backend: tokens_per_block 32; the profile runs after CUDA graph warmup, so graphs count as used
  const Planner now(fixed_terms("llama-3.1-8b", EngineKind::trtllm, "1.1.0"));
  CHECK(now.engine().block_size == 32);
  CHECK(now.engine().available_kv_bytes == static_cast<i64>(std::floor((free_old - static_cast<double>(GiB / 4)) * 0.9)));
}

TEST_CASE("llama.cpp slots by build: 1 slot, then 4 auto slots sharing a unified cache", "[engine][llamacpp][versions]") {
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 8192;
  e.version = "b5937";
  const Planner old(kvtest::spec("llama-3.1-8b", "h100-sxm", e, {}, ElemFormat::f16));
  CHECK(old.max_seqs() == 1);
  CHECK(old.engine().n_ctx_seq == 8192);
  e.version = "b7079";  // #16736: -np -1 = auto, 4 slots, kv_unified: every slot may use the whole 8192 cells
  const Planner now(kvtest::spec("llama-3.1-8b", "h100-sxm", e, {}, ElemFormat::f16));
  CHECK(now.max_seqs() == 4);
  CHECK(now.engine().n_ctx == 8192);
  CHECK(now.engine().n_ctx_seq == 8192);
  e.parallel = 4;  // -np 4 given: no unified default, -c is divided per slot
  const Planner split(kvtest::spec("llama-3.1-8b", "h100-sxm", e, {}, ElemFormat::f16));
  CHECK(split.engine().n_ctx_seq == 2048);
  e.parallel = 1;  // ggml-org/llama.cpp#17300 (b7079): "-np 1" still started 4 slots sharing the context
  CHECK(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", e, {}, ElemFormat::f16)).max_seqs() == 4);
  e.version = "b7376";  // from #17997 -np defaults to -1 (auto) and an explicit -np 1 is one slot
  CHECK(Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", e, {}, ElemFormat::f16)).max_seqs() == 1);
  // -c not given: 4096 before the --fit builds, the training context (131072) from b7376
  auto d = kvtest::engine(EngineKind::llamacpp);
  d.version = "b7079";
  CHECK(kvtest::spec("llama-3.1-8b", "h100-sxm", d).engine.ctx_size == 4096);
  d.version = "b7376";
  CHECK(kvtest::spec("llama-3.1-8b", "h100-sxm", d).engine.ctx_size == 131072);
}

TEST_CASE("llama.cpp --fit lowers an unset context, then moves layers to the host", "[engine][llamacpp][versions]") {
  // llama-3.1-8b f16 KV: 32 layers x 8 heads x 128 x (K,V) x 2 B = 128 KiB per cell. Fixed terms given: weights 15 GiB,
  // compute 1 GiB, context 0.5 GiB on a 24 GiB GPU; --fit leaves 1 GiB free, so KV gets 6.5 GiB = 53248 cells.
  auto e = kvtest::engine(EngineKind::llamacpp);  // newest build: -c 0 (training context, 131072) and --fit on
  auto s = kvtest::spec("llama-3.1-8b", "rtx-4090", e, {}, ElemFormat::f16);
  s.overrides.gpu_memory = 24 * GiB;
  s.overrides.weights = 15 * GiB;
  s.overrides.activation = GiB;
  s.overrides.cuda_context = GiB / 2;
  const Planner p(s);
  CHECK(p.engine().n_ctx == 53248);
  CHECK(p.engine().startup_ok);
  // an explicit -c is not lowered: with 131072 cells (16 GiB) --fit moves layers to the host instead
  auto given = s;
  given.engine.ctx_size = 131072;
  given.engine.ctx_given = true;
  const Planner g(given);
  CHECK(g.engine().n_ctx == 131072);
  CHECK(g.engine().startup_ok);
  CHECK(g.engine().gpu_layers < g.engine().total_layers);
  // and with -ngl given as well, nothing can move: the engine does not start
  given.engine.gpu_layers_given = true;
  CHECK_FALSE(Planner(given).engine().startup_ok);
  // --fit off: the training context as is
  auto off = s;
  off.engine.fit = false;
  CHECK(Planner(off).engine().n_ctx == 131072);
}

TEST_CASE("llama.cpp --fit keeps the layers that fit when the weights do not", "[engine][llamacpp][versions]") {
  // qwen3-32b bf16 (about 65 GB) on a 24 GiB RTX 4090: n_ctx falls to --fit-ctx 4096, then layers move to the host
  auto e = kvtest::engine(EngineKind::llamacpp);
  auto s = kvtest::spec("qwen3-32b", "rtx-4090", e, {}, ElemFormat::f16);
  const Planner p(s);
  REQUIRE(p.engine().startup_ok);
  CHECK(p.engine().n_ctx == 4096);
  const i64 kept = p.engine().gpu_layers, layers = p.engine().total_layers;
  CHECK(kept > 0);
  CHECK(kept < layers);
  // independent check, by hand: the output layer goes first, then blocks; a block is q 5120 x 8192, k and v
  // 5120 x 1024, o 8192 x 5120, q/k norms 2 x 128, the MLP 3 x 5120 x 25600 and two norms of 5120: 487,598,336
  // parameters x 2 B; the head (151936 x 5120 + 5120) x 2 B. The kept layers are the head and kept - 1 blocks.
  constexpr i64 block = 487598336LL * 2, head = (151936LL * 5120 + 5120) * 2;
  const i64 gpu_w = p.budget_bytes("weights");
  i64 used = 0;
  for (const auto& t : p.budget())
    if (t.name != "gpu_total") used += t.bytes;
  CHECK(gpu_w == head + (kept - 1) * block);
  CHECK(used <= p.spec().gpu.memory_bytes - GiB);  // --fit-target 1024 MiB left free
}

TEST_CASE("llama.cpp that does not start names the nearest -c and -ngl that would", "[engine][llamacpp][versions]") {
  // qwen3-32b bf16 with -c 32768 -ngl 99 on a 24 GiB RTX 4090: the weights alone exceed the GPU, so no -c starts;
  // the suggested -ngl starts and one layer more does not
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 32768;
  e.ctx_given = true;
  e.n_gpu_layers = 99;
  e.gpu_layers_given = true;
  const auto s = kvtest::spec("qwen3-32b", "rtx-4090", e, {}, ElemFormat::f16);
  const Planner p(s);
  REQUIRE_FALSE(p.engine().startup_ok);
  CHECK(p.engine().estimated_max_model_len == 0);
  const kvplan::i64 n = p.engine().suggested_gpu_layers;
  REQUIRE(n > 0);
  auto starts_with = [&](kvplan::i64 layers) {
    auto t = s;
    t.engine.n_gpu_layers = layers;
    return Planner(t).engine().startup_ok;
  };
  CHECK(starts_with(n));
  CHECK_FALSE(starts_with(n + 1));
  // a model whose weights fit: the longest -c that starts is a multiple of 256 that starts, 256 more does not
  auto small = kvtest::engine(EngineKind::llamacpp);
  small.ctx_size = 1 << 20;
  small.ctx_given = true;
  small.gpu_layers_given = true;
  auto s8 = kvtest::spec("llama-3.1-8b", "rtx-4090", small, {}, ElemFormat::f16);
  s8.model.max_context = 1 << 20;
  const Planner q(s8);
  REQUIRE_FALSE(q.engine().startup_ok);
  const kvplan::i64 c = q.engine().estimated_max_model_len;
  REQUIRE(c > 0);
  CHECK(c % 256 == 0);
  auto starts_ctx = [&](kvplan::i64 ctx) {
    auto t = s8;
    t.engine.ctx_size = ctx;
    return Planner(t).engine().startup_ok;
  };
  CHECK(starts_ctx(c));
  CHECK_FALSE(starts_ctx(c + 256));
}

TEST_CASE("llama.cpp per-slot streams: each stream holds its own SWA cache", "[engine][llamacpp]") {
  // src/llama-kv-cache-iswa.cpp: size_base = n_ctx_seq per stream, size_swa = pad(min(size_base, n_swa + n_ubatch), 256)
  // for each of the n_seq_max streams. gpt-oss-20b (12 full + 12 sliding layers of 128, 8 KV heads x 64, f16),
  // -c 4096 -np 3 without -kvu: n_ctx_seq = pad(4096 / 3, 256) = 1536, n_ctx = 4608; SWA per stream
  // pad(min(1536, 128 + 512), 256) = 768, 3 streams = 2304 cells
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 4096;
  e.parallel = 3;
  e.kv_unified = false;
  const Planner p(kvtest::spec("gpt-oss-20b", "rtx-4090", e, {}, ElemFormat::f16));
  CHECK(p.engine().n_ctx == 4608);
  CHECK(p.engine().n_ctx_seq == 1536);
  CHECK(p.engine().swa_cells == 768);
  CHECK(p.engine().kv_streams == 3);
  const kvplan::i64 row = 8 * 64 * 2;
  CHECK(p.engine().k_bytes == 12LL * 4608 * row + 12LL * 2304 * row);
}

TEST_CASE("cpu-offload-gb keeps weights in host memory and llama.cpp no-kv-offload keeps the KV there", "[engine][offload]") {
  // vLLM / SGLang --cpu-offload-gb 4: llama-3.1-8b's 8,030,261,248 x 2 B of weights lose 4 GiB on the GPU, and the KV
  // budget gains exactly that
  for (const auto kind : {EngineKind::vllm, EngineKind::sglang}) {
    auto e = kvtest::engine(kind);
    e.max_model_len = 8192;
    const Planner base(kvtest::spec("llama-3.1-8b", "l4", e));
    e.cpu_offload_bytes = 4 * GiB;
    const Planner off(kvtest::spec("llama-3.1-8b", "l4", e));
    CHECK(off.budget_bytes("weights") == 8030261248LL * 2 - 4 * GiB);
    CHECK(off.engine().host_weight_bytes == 4 * GiB);
    if (kind == EngineKind::vllm) CHECK(off.engine().available_kv_bytes - base.engine().available_kv_bytes == 4 * GiB);
    // more than the decoder layers hold: the embedding and the untied output head stay, 2 x 128,256 x 4,096 x 2 B
    e.cpu_offload_bytes = 100 * GiB;
    const Planner all(kvtest::spec("llama-3.1-8b", "l4", e));
    CHECK(all.budget_bytes("weights") == 2LL * 128256 * 4096 * 2);
    CHECK(all.engine().host_weight_bytes == 8030261248LL * 2 - 2LL * 128256 * 4096 * 2);
  }
  // llama.cpp -nkvo: 32 layers x 8192 cells x 128 KiB per cell stay in host memory; nothing of it on the GPU
  auto l = kvtest::engine(EngineKind::llamacpp);
  l.ctx_size = 8192;
  l.kv_offload = false;
  const Planner p(kvtest::spec("llama-3.1-8b", "rtx-4090", l, {}, ElemFormat::f16));
  CHECK(p.engine().kv_bytes == 8192LL * 32 * 8 * 128 * 2 * 2);
  CHECK(p.engine().gpu_kv_bytes == 0);
}

TEST_CASE("llama.cpp n-cpu-moe keeps the experts of the first N layers in host memory", "[engine][offload]") {
  // qwen3-30b-a3b: 128 experts x gated MLP of 768 on hidden 2048 = 128 x 3 x 2048 x 768 = 603,979,776 params per
  // layer, bf16: -ncmoe 10 keeps 10 x 603,979,776 x 2 B = 12,079,595,520 B off the GPU
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 4096;
  e.fit = false;
  const auto s = kvtest::spec("qwen3-30b-a3b", "h100-sxm", e, {}, ElemFormat::f16);
  const Planner all(s);
  auto n = s;
  n.engine.n_cpu_moe = 10;
  const Planner some(n);
  // the host tier also holds the input layer, token_embd 151936 x 2048 x 2 B = 622,329,856 B
  constexpr i64 experts = 603979776LL * 2, embd = 151936LL * 2048 * 2;
  CHECK(some.engine().host_weight_bytes == 10 * experts + embd);
  CHECK(all.budget_bytes("weights") - some.budget_bytes("weights") == 10 * experts);
  // only layers on the GPU lose their experts; the layers on the CPU are host memory whole. A layer's other weights:
  // attention 2048 x 4096 x 2 + 2048 x 512 x 2 = 18,874,368, q/k norms 256, router 2048 x 128 = 262,144, two norms
  // 4096: 19,140,864 x 2 B. The newest builds offload the output layer first (#18148): -ngl 40 of 49 is the output
  // layer + layers 9..47, so layers 0..8 are on the CPU and of the first 10 only layer 9 loses its experts
  constexpr i64 layer = 19140864LL * 2 + experts;
  n.engine.n_gpu_layers = 40;
  CHECK(Planner(n).engine().host_weight_bytes == embd + 9 * layer + experts);
  // before #18148 (the b7376 rules) -ngl 40 is layers 8..47 and the output layer, (151936 x 2048 + 2048) x 2 B,
  // stays on the CPU with layers 0..7: layers 8 and 9 lose their experts
  n.engine.rules = &engine_rules(EngineKind::llamacpp, "b7376");
  CHECK(Planner(n).engine().host_weight_bytes == embd + 8 * layer + (151936LL * 2048 + 2048) * 2 + 2 * experts);
}

TEST_CASE("Falcon-H1: pipeline stages, Mamba2 TP shards and llama.cpp placement go by decoder layer", "[engine][ssm][parallel]") {
  const auto m = kvtest::load("falcon-h1-7b");
  // vLLM get_pp_indices over 44 decoder layers at PP 3: 15, 15, 14; each stage holds both halves of its layers
  Parallel pp;
  pp.pp = 3;
  CHECK(rank_shard(m, pp, 0).layers.size() == 2 * 15);
  CHECK(rank_shard(m, pp, 2).layers.size() == 2 * 14);
  CHECK_FALSE(rank_shard(m, pp, 1).layers.front().joins_previous);
  pp.pp = 45;
  CHECK_THROWS_AS(check_parallel(m, pp), InputError);
  // TP 2 with one B/C group: vLLM pads the groups to 2, one per rank, so a rank's conv state is
  // (d_conv - 1) x (3072 / 2 + 2 x 1 x 256), not half of the whole state
  Parallel tp;
  tp.tp = 2;
  CHECK(rank_shard(m, tp, 0).layers[1].conv_state_elems == 3 * (3072 / 2 + 2 * 256));
  CHECK(rank_shard(m, tp, 0).layers[1].ssm_state_elems == 24 / 2 * 128 * 256);
  // llama.cpp (llama_memory_hybrid): every block keeps the attention cache and the Mamba2 state; layers are placed by
  // block, 44 + the output layer, not 88. One slot, -c 8192, f16 KV, f32 state:
  // KV 44 x 8192 cells x 2 heads x 128 x (K, V) x 2 B; state 44 x (3 x (3072 + 2 x 256) + 3072 x 256) x 4 B
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 8192;
  e.parallel = 1;
  e.version = "b7376";
  const Planner lc(kvtest::spec("falcon-h1-7b", "h100-sxm", e, {}, ElemFormat::f16));
  CHECK(lc.engine().total_layers == 45);
  CHECK(lc.engine().k_bytes + lc.engine().v_bytes == 44LL * 8192 * 2 * 128 * 2 * 2);
  CHECK(lc.engine().state_bytes == 44LL * (3 * (3072 + 2 * 256) + 3072 * 256) * 4);
  e.n_gpu_layers = 22;  // b7376 (before #18148): the last 22 blocks on the GPU, the output layer not: half the cache
  const Planner half(kvtest::spec("falcon-h1-7b", "h100-sxm", e, {}, ElemFormat::f16));
  CHECK(half.engine().gpu_kv_bytes * 2 == lc.engine().gpu_kv_bytes);
}

// qualcomm/GenieX#1346 (a llama.cpp log, Gemma-4 E4B GGUF q4_0, n_ctx 4096): "creating SWA KV cache, size = 1536
// cells", the SWA KV buffer 60.00 MiB and the non-SWA one 64.00 MiB (f16 cache). The 1,536 cells are
// pad(min(4096, 512 x 1 + n_ubatch), 256) with a 1,024-token ubatch. Full layers 5, 11, 17, 23: 2 KV heads of 512;
// 20 sliding layers of 2 x 256; layers 24-41 read those caches.
TEST_CASE("llama.cpp Gemma 4 E4B: KV-sharing layers allocate nothing (published SWA and non-SWA buffers)", "[engine][llamacpp][gemma]") {
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 4096;
  e.parallel = 1;
  e.ubatch_size = 1024;
  const Planner p(kvtest::spec("gemma-4-e4b-it", "rtx-4090", e, {}, ElemFormat::f16));
  CHECK(p.engine().swa_cells == 1536);
  CHECK(p.engine().kv_bytes == 64LL * (1 << 20) + 60LL * (1 << 20));
  CHECK(4LL * 4096 * 2 * 2 * 512 * 2 == 64LL * (1 << 20));   // the non-SWA buffer by hand
  CHECK(20LL * 1536 * 2 * 2 * 256 * 2 == 60LL * (1 << 20));  // the SWA buffer by hand
}

// vllm/v1/core/kv_cache_utils.py unify_kv_cache_spec_page_size: Gemma 4 E2B's full layers (1 KV head of 512) have
// pages twice its sliding layers' (1 x 256), so the sliding layers' block size doubles to 32; 12 sliding and 3 full
// layers make groups of 3 (12 >= 1.5 x 3): 4 sliding groups + 1 full group.
TEST_CASE("vLLM Gemma 4: smaller pages get a larger block size, per-group blocks per request", "[engine][vllm][hybrid][gemma]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.max_model_len = 32768;
  e.max_num_batched_tokens = 8192;
  const i64 page = 16 * 1 * 512 * 2 * 2;  // a full layer's page: block 16 x 1 KV head x 512 x (K, V) x 2 B
  e.kv_cache_memory_bytes = 5000 * page * 3;
  e.version = "0.11.0";
  const Planner p(kvtest::spec("gemma-4-e2b-it", "h100-sxm", e));
  CHECK(p.engine().page_bytes == page);
  CHECK(p.engine().group_size == 3);
  CHECK(p.engine().num_groups == 5);
  CHECK(p.engine().num_gpu_blocks == 5000);
  // full: 32768 / 16 = 2048 blocks; each sliding group cdiv(min(511 + 8192, 32768), 32) + 1 = 273
  CHECK(p.units_per_request(32768) == 2048 + 4 * 273);
  // 0.10-0.20: num_blocks // num_groups x the smallest block size
  CHECK(p.engine().kv_cache_tokens == 5000 / 5 * 16);
}

// Gemma 4 31B on vLLM: its full layers (4 KV heads of 512) have half the page of its sliding ones (16 of 256), so
// their block holds 32 tokens; a shared prefix is held once in whole blocks of each full-attention group's own size:
// 16,384 / 32 = 512 blocks (one full group), not 16,384 / 16.
TEST_CASE("vLLM shared prefix at each group's block size, and SGLang allocates for KV-sharing layers", "[engine][vllm][sglang][gemma]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.max_model_len = 32768;
  e.kv_cache_memory_bytes = 20 * GiB;
  const Planner p(kvtest::spec("gemma-4-31b-it", "h200", e));
  CHECK(p.shared_units(16384) == 16384 / 32);
  // SGLang (ModelConfig.num_attention_layers = num_hidden_layers): a buffer for each of Gemma 3n E4B's 35 layers,
  // 2 KV heads of 256, K and V, bf16
  auto sg = kvtest::engine(EngineKind::sglang);
  const Planner s(kvtest::spec("gemma-3n-e4b-it", "h100-sxm", sg));
  CHECK(s.engine().cell_size == 35 * 2 * 2 * 256 * 2);
}
