// Speculative decoding in the plan: the draft's weights, its KV (vLLM and TensorRT-LLM: layers in the one pool;
// SGLang: a second pool plus a headroom of draft and verify tokens), vLLM's per-request lookahead slots, and the
// checkpoint's MTP layers (DeepSeek-V3), vLLM decode context parallel and attention data parallel (SGLang,
// TensorRT-LLM). Expected values are arithmetic from the configs, stated in each check.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>

#include "kvplan/core/speculative.hpp"
#include "kvplan/core/weights.hpp"
#include "plan_helpers.hpp"

using namespace kvplan;
using kvtest::GiB;

namespace {

i64 term(const Planner& p, const std::string& name) {
  for (const auto& t : p.budget())
    if (t.name == name) return t.bytes;
  return -1;
}

// Llama-3.1-8B (config.json: hidden 4096, 32 heads, 8 KV heads, head_dim 128, intermediate 14336, 32 layers)
constexpr i64 kLlamaLayerParams = 4096LL * 4096 * 2 + 4096LL * 1024 * 2  // q, o; k, v
                                  + 3LL * 4096 * 14336                   // gate, up, down
                                  + 2 * 4096;                            // input + post-attention RMSNorm
constexpr i64 kLlamaKvPerTokenLayer = 8 * 128 * 2 * 2;                   // kv_heads x head_dim x (K+V) x bf16

PlanSpec eagle_spec(EngineKind k, SpecMethod method, i64 tokens) {
  auto e = kvtest::engine(k);
  e.spec.method = method;
  e.spec.num_tokens = tokens;
  PlanSpec s = kvtest::spec("llama-3.1-8b", "h100-sxm", e);
  if (method == SpecMethod::eagle || method == SpecMethod::eagle3) s.draft = eagle_draft_model(s.model, method);
  return s;
}

}  // namespace

TEST_CASE("vLLM EAGLE: the head's weights come out of the budget and its layer joins the KV pool", "[speculative][vllm]") {
  PlanSpec s = eagle_spec(EngineKind::vllm, SpecMethod::eagle, 3);
  const Planner base(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::vllm)));
  const Planner p(s);
  // one Llama decoder layer + fc [2 x 4096 -> 4096], bf16; embedding and lm_head shared with the target
  const i64 draft_w = kLlamaLayerParams * 2 + 2LL * 4096 * 4096 * 2;
  CHECK(draft_w == 503332864);
  CHECK(term(p, "draft_weights") == draft_w);
  CHECK(term(p, "kv_cache_available") == term(base, "kv_cache_available") - draft_w);
  // the pool: 32 target + 1 draft layers per block of 16 tokens
  const i64 block_bytes = 16 * kLlamaKvPerTokenLayer * 33;
  CHECK(p.unit_bytes() == block_bytes);
  CHECK(p.engine().num_gpu_blocks == term(p, "kv_cache_available") / block_bytes);
  CHECK(term(p, "draft_kv") == p.engine().num_gpu_blocks * 16 * kLlamaKvPerTokenLayer);
  // the pool share is not counted twice in the GPU's fixed bytes
  CHECK(p.fixed_bytes() == base.fixed_bytes() + draft_w);
}

TEST_CASE("vLLM speculative slots: a request holds k draft slots, and EAGLE k lookahead slots more", "[speculative][vllm]") {
  auto pinned = [](PlanSpec s) {
    s.engine.kv_cache_memory_bytes = 4 * GiB;
    return Planner(s);
  };
  const Planner none = pinned(kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::vllm)));
  const Planner ngram = pinned(eagle_spec(EngineKind::vllm, SpecMethod::ngram, 3));
  const Planner eagle = pinned(eagle_spec(EngineKind::vllm, SpecMethod::eagle, 3));
  // 1021 tokens: cdiv(1021, 16) = 64 blocks; n-gram 1021 + 3 = 1024 -> 64; EAGLE 1021 + 2 x 3 = 1027 -> 65
  CHECK(none.units_per_request(1021) == 64);
  CHECK(ngram.units_per_request(1021) == 64);
  CHECK(ngram.units_per_request(1022) == 65);  // 1025 slots
  CHECK(eagle.units_per_request(1021) == 65);
  // n-gram: no draft weights, no draft KV
  CHECK(term(ngram, "draft_weights") == -1);
  CHECK(term(ngram, "draft_kv") == -1);
  // 4 GiB pinned: 4 GiB / (16 x 4096 x 32) = 2048 blocks, with the EAGLE layer 4 GiB / (16 x 4096 x 33) = 1985
  CHECK(none.engine().num_gpu_blocks == 4 * GiB / (16 * kLlamaKvPerTokenLayer * 32));
  CHECK(eagle.engine().num_gpu_blocks == 4 * GiB / (16 * kLlamaKvPerTokenLayer * 33));
  CHECK(eagle.engine().num_gpu_blocks == 1985);
}

TEST_CASE("SGLang EAGLE: the pool grows by the draft and verify headroom and the draft keeps a pool of its own", "[speculative][sglang]") {
  PlanSpec s = eagle_spec(EngineKind::sglang, SpecMethod::eagle, 8);
  s.engine.version = "0.5.6";  // model_runner.py init_memory_pool: the headroom, 0.4.6 to 0.5.6
  s.engine.spec.num_steps = 5;
  s.engine.spec.topk = 4;
  s.engine.kv_cache_memory_bytes = 8 * GiB;
  s.engine.max_num_seqs = 64;
  const Planner p(s);
  // 8 GiB / (32 layers x 4096 B) = 65536 tokens; + 64 requests x (5 steps x top-4 + 8 draft tokens) + 100 = 1892
  const i64 tokens = 8 * GiB / (32 * kLlamaKvPerTokenLayer) + 64 * (5 * 4 + 8) + 100;
  CHECK(tokens == 67428);
  CHECK(p.engine().max_total_num_tokens == tokens);
  // the draft worker's pool: as many tokens at one layer's 4096 B
  CHECK(term(p, "draft_kv") == tokens * kLlamaKvPerTokenLayer);
  CHECK(term(p, "draft_weights") == kLlamaLayerParams * 2 + 2LL * 4096 * 4096 * 2);
  // SGLang loads the draft after the target's pool: its weights and pool do not shrink the target's pool
  for (const auto& t : p.budget())
    if (t.name == "draft_weights" || t.name == "draft_kv") CHECK_FALSE(t.inside);
  // --max-running-requests unset: max_num_reqs = clamp(65536 / 131072 x 512, 2048, 4096) = 2048
  s.engine.max_num_seqs = 0;
  CHECK(Planner(s).engine().max_total_num_tokens == 65536 + 2048 * (5 * 4 + 8) + 100);
  // #15748 ("removing wrong logic about max total token in spec decoding", 0.5.7 on): no headroom; the draft's pool
  // holds as many tokens as the target's
  s.engine.version = "0.5.10";
  const Planner q(s);
  CHECK(q.engine().max_total_num_tokens == 65536);
  CHECK(term(q, "draft_kv") == 65536 * kLlamaKvPerTokenLayer);
}

TEST_CASE("SGLang's default mem_fraction_static reserves 2 GiB more for EAGLE, 6 GiB for STANDALONE, none for NGRAM", "[speculative][sglang]") {
  auto fraction = [](SpecMethod m) {
    auto e = kvtest::engine(EngineKind::sglang);
    e.spec.method = m;
    return kvtest::spec("llama-3.1-8b", "h100-sxm", e).engine.memory_fraction;
  };
  // server_args.py (graph reserve, v0.5.3+): reserved MiB = 512 + 8192 x 1.5 (chunked prefill) + 256 x 2 (CUDA graph
  // batch, TP 1) + 1 x 1 / 8 x 1024 = 13,440 (above the 10 GiB floor), then + 2048 (EAGLE) or + 6144 (STANDALONE);
  // fraction = round((MiB - reserved) / MiB, 3) with the H100 profile's MiB
  const double mib = static_cast<double>(kvtest::profiles().gpu("h100-sxm").memory_bytes) / (1 << 20);
  auto round3 = [](double x) { return std::round(x * 1000) / 1000; };
  CHECK(fraction(SpecMethod::none) == Approx(round3((mib - 13440) / mib)));
  CHECK(fraction(SpecMethod::eagle) == Approx(round3((mib - 13440 - 2048) / mib)));
  CHECK(fraction(SpecMethod::draft_model) == Approx(round3((mib - 13440 - 6144) / mib)));
  CHECK(fraction(SpecMethod::ngram) == Approx(round3((mib - 13440) / mib)));
}

TEST_CASE("DeepSeek-V3 MTP: one more MLA layer in vLLM's pool and its weights only when MTP is on", "[speculative][mtp]") {
  ModelSpec v3 = kvtest::profiles().model("deepseek-v3");
  REQUIRE(v3.mtp_layers == 1);
  REQUIRE(v3.layers.size() == 61);
  // The MTP layer (config.json: hidden 7168, q_lora_rank 1536, kv_lora_rank 512, 128 heads, qk_nope 128, qk_rope 64,
  // v_head_dim 128, 256 routed experts of 2048 + 1 shared, top-8 with e_score_correction_bias) + eh_proj [2 x 7168 -> 7168]
  const i64 mla = 7168LL * 1536 + 1536 + 1536LL * 128 * 192 + 7168LL * (512 + 64) + 512 + 512LL * 128 * (128 + 128) + 128LL * 128 * 7168;
  const i64 moe = 256LL * 3 * 7168 * 2048 + 3LL * 7168 * 2048 + 256LL * 7168 + 256;
  const i64 layer = mla + moe + 2 * 7168;
  const ModelSpec draft = mtp_draft_model(v3, 1);
  CHECK(count_params(draft).total == layer);
  CHECK(draft_fc_params(SpecMethod::mtp, 7168) == 2LL * 7168 * 7168);
  // DeepSeek-V3 README: "685B ... 671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP) Module
  // weights"; the module adds its own copies of the embedding and head (2 x 129280 x 7168) that vLLM shares
  const double module = static_cast<double>(layer + 2LL * 7168 * 7168 + 2LL * 129280 * 7168);
  CHECK(module == Approx(14e9).epsilon(0.05));

  auto e = kvtest::engine(EngineKind::vllm);
  e.kv_cache_memory_bytes = 20 * GiB;
  PlanSpec off;
  off.model = v3;
  off.kv.k_format = off.kv.v_format = off.kv.state_format = ElemFormat::bf16;
  off.gpu = kvtest::profiles().gpu("h200");
  off.parallel.tp = 8;
  off.engine = resolve_engine_defaults(e, v3.max_context, 8, off.gpu.memory_bytes, off.gpu.architecture, true, off.gpu.compute_capability);
  PlanSpec on = off;
  on.engine.spec.method = SpecMethod::mtp;
  on.engine.spec.num_tokens = 1;
  on.draft = draft;
  const Planner p_off(off), p_on(on);
  const i64 block = p_on.engine().block_size;
  const i64 latent = (512 + 64) * 2;  // kv_lora_rank + qk_rope_head_dim, bf16: replicated on every TP rank
  CHECK(p_off.engine().num_gpu_blocks == 20 * GiB / (block * latent * 61));
  CHECK(p_on.engine().num_gpu_blocks == 20 * GiB / (block * latent * 62));
  CHECK(term(p_on, "draft_kv") == p_on.engine().num_gpu_blocks * block * latent);
  CHECK(term(p_off, "draft_weights") == -1);
  CHECK(term(p_on, "draft_weights") > 0);
}

TEST_CASE("a model without MTP layers cannot run MTP speculation", "[speculative][mtp]") {
  CHECK_THROWS_AS(mtp_draft_model(kvtest::load("llama-3.1-8b"), 0), InputError);
  CHECK(kvtest::load("qwen3-next-80b-a3b-thinking").mtp_layers == 1);
  CHECK(kvtest::load("llama-3.1-8b").mtp_layers == 0);
}

TEST_CASE("vLLM decode context parallel: each rank holds 1/dcp of a sequence's KV tokens", "[dcp][vllm]") {
  const ModelSpec v3 = kvtest::profiles().model("deepseek-v3");
  auto plan = [&](std::optional<i64> dcp) {
    auto e = kvtest::engine(EngineKind::vllm);
    e.kv_cache_memory_bytes = 20 * GiB;
    e.decode_context_parallel = dcp;
    PlanSpec s;
    s.model = v3;
    s.kv.k_format = s.kv.v_format = s.kv.state_format = ElemFormat::bf16;
    s.gpu = kvtest::profiles().gpu("h200");
    s.parallel.tp = 8;
    s.engine = resolve_engine_defaults(e, v3.max_context, 8, s.gpu.memory_bytes, s.gpu.architecture, true, s.gpu.compute_capability);
    return Planner(s);
  };
  const Planner off = plan(std::nullopt), on = plan(8);
  const i64 block = off.engine().block_size;
  const i64 latent = (512 + 64) * 2;  // the MLA latent, bf16, on every rank
  // the pool per rank is the same; a sequence's tokens are spread over 8 ranks
  CHECK(on.engine().num_gpu_blocks == off.engine().num_gpu_blocks);
  CHECK(off.engine().num_gpu_blocks == 20 * GiB / (block * latent * 61));
  CHECK(off.units_per_request(100000) == (100000 + block - 1) / block);
  CHECK(on.units_per_request(100000) == (100000 + block * 8 - 1) / (block * 8));
  CHECK(on.max_concurrency(100000) == on.engine().num_gpu_blocks / ((100000 + block * 8 - 1) / (block * 8)));
  CHECK_THROWS_AS(plan(3), InputError);  // 3 does not divide TP 8
}

TEST_CASE("TensorRT-LLM speculative slots: max_draft_len draft tokens, and max_draft_len - 1 more for one-model drafters", "[speculative][trtllm]") {
  // resource_manager.py KVCacheManager.prepare_resources: a new sequence gets num_extra_kv_tokens more tokens and every
  // step 1 + max_draft_len; speculative/utils.py get_num_extra_kv_tokens: max_draft_len - 1 for the one-model modes
  // (MTP, Eagle3 one-model), else 0. Blocks of 32 tokens (TensorRT-LLM 1.x tokens_per_block).
  auto plan = [](SpecMethod m, i64 k) {
    PlanSpec s = m == SpecMethod::none ? kvtest::spec("llama-3.1-8b", "h100-sxm", kvtest::engine(EngineKind::trtllm)) : eagle_spec(EngineKind::trtllm, m, k);
    return Planner(s);
  };
  const Planner none = plan(SpecMethod::none, 0);
  const Planner eagle = plan(SpecMethod::eagle, 3);    // two-model Eagle: 3 draft tokens
  const Planner eagle3 = plan(SpecMethod::eagle3, 3);  // one-model Eagle3: 3 + (3 - 1) = 5
  const Planner mtp = plan(SpecMethod::mtp, 3);        // one-model MTP: 3 + 2 = 5
  REQUIRE(none.engine().block_size == 32);
  CHECK(none.engine().spec_extra_tokens == 0);
  CHECK(eagle.engine().spec_extra_tokens == 3);
  CHECK(eagle3.engine().spec_extra_tokens == 3 + (3 - 1));
  CHECK(mtp.engine().spec_extra_tokens == 3 + (3 - 1));
  // 1021 tokens: cdiv(1021, 32) = 32 blocks; Eagle 1021 + 3 = 1024 -> 32; 1022 + 3 = 1025 -> 33;
  // Eagle3 / MTP 1019 + 5 = 1024 -> 32; 1020 + 5 = 1025 -> 33
  CHECK(none.units_per_request(1021) == 32);
  CHECK(eagle.units_per_request(1021) == 32);
  CHECK(eagle.units_per_request(1022) == 33);
  CHECK(eagle3.units_per_request(1019) == 32);
  CHECK(eagle3.units_per_request(1020) == 33);
  CHECK(mtp.units_per_request(1020) == 33);
}

TEST_CASE("attention data parallel: SGLang --enable-dp-attention and TensorRT-LLM enable_attention_dp", "[dp-attention]") {
  // Llama-3.1-8B on 4 x H100, TP 4. With 4 attention groups each rank runs attention at TP 1: all 8 KV heads and the
  // whole q/k/v/o, and holds only its group's requests.
  auto plan = [](EngineKind k, i64 adp) {
    auto e = kvtest::engine(k);
    e.kv_cache_memory_bytes = 8 * GiB;
    e.max_num_seqs = 64;
    e.attention_dp = adp;
    Parallel par;
    par.tp = 4;
    return Planner(kvtest::spec("llama-3.1-8b", "h100-sxm", e, par));
  };
  const Planner off = plan(EngineKind::sglang, 1), on = plan(EngineKind::sglang, 4);
  CHECK(off.engine().cell_size == 32 * 2 * 128 * 2 * 2);  // 8 KV heads / TP 4 = 2 per rank
  CHECK(on.engine().cell_size == 32 * 8 * 128 * 2 * 2);   // all 8 per rank
  CHECK(on.engine().max_total_num_tokens == 8 * GiB / (32 * 8 * 128 * 2 * 2));
  // attention weights per rank: (q, o 4096 x 4096; k, v 4096 x 1024) x 32 layers x bf16, whole instead of a quarter
  const i64 attn = (4096LL * 4096 * 2 + 4096LL * 1024 * 2) * 32 * 2;
  CHECK(term(on, "weights") - term(off, "weights") == attn - attn / 4);
  // max_running_requests 64 // 4 groups = 16 per group; 4 groups hold 4 x min(65536 / 1000, 16) = 64 requests
  CHECK(on.max_seqs() == 16);
  CHECK(on.max_concurrency(1000) == 4 * std::min<i64>(65536 / 1000, 16));
  CHECK(on.cell(1000, 64).fits);
  CHECK_FALSE(on.cell(1000, 65).fits);
  // TensorRT-LLM enable_attention_dp: attention TP 1 on every rank: bytes per token 32 x 8 x 128 x 2 x 2
  CHECK(plan(EngineKind::trtllm, 4).engine().page_bytes == 32 * 8 * 128 * 2 * 2);
  CHECK(plan(EngineKind::trtllm, 1).engine().page_bytes == 32 * 2 * 128 * 2 * 2);
  CHECK_THROWS_AS(plan(EngineKind::sglang, 3), InputError);  // 3 groups do not divide TP 4
}

TEST_CASE("SGLang's default mem_fraction_static reserves CUDA-graph memory per attention group with dp attention", "[dp-attention]") {
  auto e = kvtest::engine(EngineKind::sglang);
  e.attention_dp = 4;
  Parallel par;
  par.tp = 4;
  const double f = kvtest::spec("llama-3.1-8b", "h100-sxm", e, par).engine.memory_fraction;
  // server_args.py (graph reserve): 512 + 8192 x 1.5 + 512 x 2 (CUDA graph batch 512 at TP >= 4) + 4 / 8 x 1024 = 14,336
  // MiB, + 512 x 4 x 3 + 512 x 4 x 1.5 (batch > 300) = 9,216 for 4 attention groups
  const double mib = static_cast<double>(kvtest::profiles().gpu("h100-sxm").memory_bytes) / (1 << 20);
  CHECK(f == Approx(std::round((mib - 14336 - 9216) / mib * 1000) / 1000));
}
