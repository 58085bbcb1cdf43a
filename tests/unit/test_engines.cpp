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
  const Planner p(kvtest::spec("llama-3.1-8b", "rtx-3090", e));
  CHECK(p.engine().num_gpu_blocks == 1478);
  CHECK(p.engine().kv_cache_tokens == 23648);
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
  CHECK(p.engine().kv_cache_tokens == 10000 / 2 * 16);
  // a 131072-token request: full group 8192 blocks, sliding group cdiv(min(128 - 1 + 8192, 131072), 16) + 1 = 521
  CHECK(p.units_per_request(131072) == 8192 + 521);
  CHECK(p.engine().max_concurrency == Approx(10000.0 / (8192 + 521)));
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
}

TEST_CASE("engine settings out of range name the setting", "[engine][errors]") {
  auto e = kvtest::engine(EngineKind::vllm);
  e.memory_fraction = 1.5;
  CHECK_THROWS_WITH(kvtest::spec("llama-3-8b", "h100-sxm", e), "memory_fraction: must be in (0, 1], got 1.500000; use a fraction such as 0.9");
  e.memory_fraction = 0;
  e.block_size = 24;
  CHECK_THROWS_WITH(kvtest::spec("llama-3-8b", "h100-sxm", e), "block_size: 24 is not supported by vLLM; use 1, 8, 16, 32, 64 or 128");
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
}

TEST_CASE("SGLang default mem_fraction_static by TP size", "[engine][sglang]") {
  CHECK(kvtest::spec("llama-3-8b", "h100-sxm", kvtest::engine(EngineKind::sglang)).engine.memory_fraction == 0.88);
  CHECK(kvtest::spec("llama-3.1-70b", "h100-sxm", kvtest::engine(EngineKind::sglang), Parallel{8, 1, 1, 1}).engine.memory_fraction == 0.81);
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
  SECTION("mainline MLA: K rows of 576 and V rows of 512 per token per layer") {
    e.ctx_size = 4096;
    const Planner p(kvtest::spec("deepseek-v2-lite", "rtx-4090", e, {}, ElemFormat::f16));
    CHECK(p.engine().k_bytes == 27LL * 4096 * 576 * 2);
    CHECK(p.engine().v_bytes == 27LL * 4096 * 512 * 2);
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
