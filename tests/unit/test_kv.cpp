// KV bytes per family, each against arithmetic written out here or a figure an engine printed
// (../shared/reference/cases.json ids in the comments, with the original source).
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "kvplan/core/transform.hpp"

using namespace kvplan;
using kvtest::MiB;

TEST_CASE("Llama-3-8B bf16: 32 layers x 2 x 8 kv heads x 128 x 2 B", "[kv][llama]") {
  const auto m = kvtest::load("llama-3-8b");
  const auto r = kvtest::kv(m, 8192);
  CHECK(r.kv_bytes_per_token == 32 * 2 * 8 * 128 * 2);  // 131,072 (issue #2)
  CHECK(r.k_bytes_per_token == 32 * 8 * 128 * 2);
  CHECK(r.sequence_kv_bytes == 32LL * 2 * 8 * 128 * 2 * 8192);
  CHECK(r.k_bytes == r.v_bytes);
  CHECK(r.state_bytes == 0);
}

TEST_CASE("nvfp4 KV cache: head_dim / 2 B of e2m1 + head_dim / 16 fp8 scales per head", "[kv][nvfp4]") {
  // vLLM's NVFP4 KV cache (Triton reshape_and_cache_flash for NVFP4: "packed_head_size = head_size//2 +
  // head_size//16", FP8 E4M3 scale per 16 elements); TensorRT-LLM keeps the same scales in a block-scale pool
  const auto r = kvtest::kv(kvtest::load("llama-3-8b"), 1, ElemFormat::nvfp4, ElemFormat::nvfp4);
  CHECK(r.kv_bytes_per_token == 32 * 2 * 8 * (128 / 2 + 128 / 16));  // layers x (K+V) x kv heads x 72 B
}

TEST_CASE("llama.cpp: Llama-3.1-8B, n_ctx 16384, f16 K and V = 1024 MiB each", "[kv][llamacpp]") {
  // cases.json lc-llama31-8b-16k-f16-vulkan; ik_llama.cpp discussion #562:
  // "llama_kv_cache_unified: size = 2048.00 MiB ( 16384 cells, 32 layers, 1 seqs), K (f16): 1024.00 MiB, V (f16): 1024.00 MiB"
  const auto m = kvtest::load("llama-3.1-8b");
  const auto r = kvtest::kv(m, 16384, ElemFormat::f16, ElemFormat::f16);
  CHECK(r.k_bytes == 1024 * MiB);
  CHECK(r.v_bytes == 1024 * MiB);
  CHECK(r.sequence_kv_bytes == 2048 * MiB);
}

TEST_CASE("llama.cpp: Llama-3.1-8B, n_ctx 1024, K iq4_nl + V f16 = 18 + 64 MiB", "[kv][llamacpp]") {
  // cases.json lc-llama31-8b-1k-kiq4nl-vf16; ik_llama.cpp issue #103:
  // "KV self size  =   82.00 MiB, K (iq4_nl):   18.00 MiB, V (f16):   64.00 MiB"
  const auto m = kvtest::load("llama-3.1-8b");
  const auto r = kvtest::kv(m, 1024, ElemFormat::iq4_nl, ElemFormat::f16);
  CHECK(r.k_bytes == 18 * MiB);
  CHECK(r.v_bytes == 64 * MiB);
  CHECK(r.sequence_kv_bytes == 82 * MiB);
}

TEST_CASE("llama.cpp: Qwen3-30B-A3B, n_ctx 4096 f16 = 384 MiB, 16384 = 1536 MiB", "[kv][llamacpp][qwen3_moe]") {
  // cases.json lc-qwen3-30b-a3b-4k-f16 (ik_llama.cpp #380) and lc-qwen3-30b-a3b-16k-f16-mainline (#514)
  const auto m = kvtest::load("qwen3-30b-a3b");
  CHECK(kvtest::kv(m, 4096, ElemFormat::f16, ElemFormat::f16).k_bytes == 192 * MiB);
  CHECK(kvtest::kv(m, 4096, ElemFormat::f16, ElemFormat::f16).sequence_kv_bytes == 384 * MiB);
  CHECK(kvtest::kv(m, 16384, ElemFormat::f16, ElemFormat::f16).sequence_kv_bytes == 1536 * MiB);
}

TEST_CASE("DeepSeek-V2-Lite expanded MLA (llama.cpp without MLA): K 81 MiB, V 54 MiB at 512", "[kv][mla]") {
  // cases.json lc-dscoder-v2-lite-512-f16 (ik_llama.cpp #230): "K (f16): 81.00 MiB, V (f16): 54.00 MiB"
  auto m = kvtest::load("deepseek-v2-lite");
  expand_mla(m);
  const auto r = kvtest::kv(m, 512, ElemFormat::f16, ElemFormat::f16);
  CHECK(r.k_bytes == 81 * MiB);  // 27 layers x 512 x 16 heads x (128 + 64) x 2 B
  CHECK(r.v_bytes == 54 * MiB);  // 27 layers x 512 x 16 heads x 128 x 2 B
}

TEST_CASE("MLA latent: (kv_lora_rank + qk_rope_head_dim) per token per layer, counted as K", "[kv][mla]") {
  const auto lite = kvtest::load("deepseek-v2-lite");
  const auto r = kvtest::kv(lite, 1000);
  CHECK(r.kv_bytes_per_token == 27 * (512 + 64) * 2);
  CHECK(r.v_bytes == 0);
  CHECK(r.k_bytes == 27LL * (512 + 64) * 2 * 1000);
  // DeepSeek-V3 architecture (Kimi-K2 uses it: 61 layers, kv_lora_rank 512, rope 64):
  // 61 x (512 + 64) x 2 = 70,272 B/token (issue #2)
  const auto k2 = kvtest::load("kimi-k2-instruct");
  CHECK(kvtest::kv(k2, 1).kv_bytes_per_token == 61 * (512 + 64) * 2);
}

TEST_CASE("explicit head_dim wins over hidden / heads (Qwen3-32B: 5120 / 64 = 80, head_dim 128)", "[kv][qwen3]") {
  const auto m = kvtest::load("qwen3-32b");
  CHECK(m.layers.at(0).k_head_dim == 128);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 64 * 2 * 8 * 128 * 2);
}

TEST_CASE("Falcon-7B: multi_query without new_decoder_architecture is one KV head", "[kv][falcon]") {
  const auto m = kvtest::load("falcon-7b-instruct");
  CHECK(m.layers.at(0).kv_heads == 1);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 32 * 2 * 1 * (4544 / 71) * 2);
  const auto f40 = kvtest::load("falcon-40b-instruct");  // new_decoder_architecture: num_kv_heads = 8
  CHECK(kvtest::kv(f40, 1).kv_bytes_per_token == 60 * 2 * 8 * (8192 / 128) * 2);
}

TEST_CASE("gpt_bigcode multi_query is one KV head, gpt2 and gpt_neox are MHA", "[kv]") {
  CHECK(kvtest::kv(kvtest::load("santacoder"), 1).kv_bytes_per_token == 24 * 2 * 1 * (2048 / 16) * 2);
  CHECK(kvtest::kv(kvtest::load("gpt2"), 1).kv_bytes_per_token == 12 * 2 * 768 * 2);
  // RedPajama-INCITE-3B: float16, 32 layers, hidden 2560
  CHECK(kvtest::kv(kvtest::load("redpajama-incite-3b"), 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token ==
        32 * 2 * 2560 * 2);
}

TEST_CASE("Mistral-7B v0.1: sliding window 4096 on every layer", "[kv][sliding]") {
  const auto m = kvtest::load("mistral-7b-v0.1");
  const i64 per_token = 32 * 2 * 8 * 128 * 2;
  CHECK(kvtest::kv(m, 1000).sequence_kv_bytes == per_token * 1000);
  CHECK(kvtest::kv(m, 32768).sequence_kv_bytes == per_token * 4096);
  CHECK(kvtest::kv(m, 32768).kv_bytes_per_token == per_token);
}

TEST_CASE("Qwen2.5 carries a sliding_window it does not use (use_sliding_window false)", "[kv][sliding]") {
  const auto m = kvtest::load("qwen2.5-7b");
  for (const auto& l : m.layers) CHECK(l.kv == KvKind::full);
  CHECK(kvtest::kv(m, 131072).sequence_kv_bytes == 28LL * 2 * 4 * 128 * 2 * 131072);
}

TEST_CASE("Gemma-3-1B: 5 sliding (512) : 1 full, one KV head of 256", "[kv][gemma3]") {
  const auto m = kvtest::load("gemma-3-1b-it");
  // full layers where (i + 1) % 6 == 0: 5, 11, 17, 23 -> 4 full, 22 sliding
  int full = 0;
  for (const auto& l : m.layers) full += l.kv == KvKind::full;
  CHECK(full == 4);
  const i64 per_layer = 2 * 1 * 256 * 2;
  const auto r = kvtest::kv(m, 32768);
  CHECK(r.kv_bytes_per_token == 26 * per_layer);
  CHECK(r.sequence_kv_bytes == 4 * per_layer * 32768 + 22 * per_layer * 512);
}

TEST_CASE("Gemma-2-9B alternates sliding (4096) and full, starting with sliding, float32 dtype", "[kv][gemma2]") {
  const auto m = kvtest::load("gemma-2-9b");
  CHECK(m.layers.at(0).kv == KvKind::sliding);
  CHECK(m.layers.at(1).kv == KvKind::full);
  CHECK(m.dtype == ElemFormat::f32);
  const i64 per_layer = 2 * 8 * 256 * 4;  // 8 KV heads x head_dim 256 x f32
  CHECK(kvtest::kv(m, 8192, ElemFormat::f32, ElemFormat::f32).sequence_kv_bytes ==
        21 * per_layer * 8192 + 21 * per_layer * 4096);
}

TEST_CASE("gpt-oss-20b: layer_types, 12 full + 12 sliding (128), 49,152 B/token all layers", "[kv][gpt_oss]") {
  // cases.json pub-gguf-parser-gpt-oss-20b (gpustack/gguf-parser-go#32): 24 x 8 x 64 x 2 x 2 = 49152
  const auto m = kvtest::load("gpt-oss-20b");
  const auto r = kvtest::kv(m, 131072, ElemFormat::f16, ElemFormat::f16);
  CHECK(r.kv_bytes_per_token == 49152);
  const i64 per_layer = 2 * 8 * 64 * 2;
  CHECK(r.sequence_kv_bytes == 12 * per_layer * 131072 + 12 * per_layer * 128);
}

TEST_CASE("Llama-4-Scout: chunked attention (8192) on RoPE layers, every 4th layer global", "[kv][llama4]") {
  const auto m = kvtest::load("llama-4-scout-17b-16e");
  int chunked = 0;
  for (const auto& l : m.layers) chunked += l.kv == KvKind::chunked;
  CHECK(chunked == 36);  // 48 layers, (i + 1) % 4 == 0 are NoPE/global: 12
  const i64 per_layer = 2 * 8 * 128 * 2;
  CHECK(kvtest::kv(m, 100000).sequence_kv_bytes == 12 * per_layer * 100000 + 36 * per_layer * 8192);
}

TEST_CASE("Jamba-1.5-Mini: 4 attention layers of 32, 28 Mamba layers with constant state", "[kv][jamba][ssm]") {
  const auto m = kvtest::load("jamba-1.5-mini");
  const auto r = kvtest::kv(m, 4096);
  CHECK(r.kv_bytes_per_token == 4 * 2 * 8 * 128 * 2);  // attention at i % 8 == 4
  // Mamba: d_inner = 2 x 4096; conv (4 - 1) x 8192 + ssm 8192 x 16 elements, bf16
  CHECK(r.state_bytes == 28LL * ((4 - 1) * 8192 + 8192 * 16) * 2);
  CHECK(kvtest::kv(m, 1).state_bytes == r.state_bytes);
}

TEST_CASE("Mamba2 (Codestral): conv (4-1) x (8192 + 2 x 8 x 128) + 128 heads x 64 x 128", "[kv][ssm]") {
  const auto m = kvtest::load("mamba-codestral-7b");  // its config holds Infinity (time_step_limit)
  const auto r = kvtest::kv(m, 4096);
  CHECK(r.kv_bytes_per_token == 0);
  CHECK(r.state_bytes == 64LL * ((4 - 1) * (8192 + 2 * 8 * 128) + 128 * 64 * 128) * 2);
}

TEST_CASE("Falcon-Mamba-7B and Mamba-2.8B: Mamba1 state only", "[kv][ssm]") {
  const auto fm = kvtest::load("falcon-mamba-7b");
  CHECK(kvtest::kv(fm, 10).state_bytes == 64LL * ((4 - 1) * 8192 + 8192 * 16) * 2);
  const auto m = kvtest::load("mamba-2.8b");  // float32
  CHECK(kvtest::kv(m, 10).state_bytes == 64LL * ((4 - 1) * 5120 + 5120 * 16) * 4);
}

TEST_CASE("Nemotron-H-8B: hybrid_override_pattern, 4 attention layers", "[kv][nemotron_h]") {
  const auto m = kvtest::load("nemotron-h-8b");
  CHECK(m.layers.size() == 52);
  const auto r = kvtest::kv(m, 8192);
  CHECK(r.kv_bytes_per_token == 4 * 2 * 8 * 128 * 2);
  // 24 Mamba2 layers: 128 heads x 64, 8 groups, state 128, conv 4
  CHECK(r.state_bytes == 24LL * ((4 - 1) * (128 * 64 + 2 * 8 * 128) + 128 * 64 * 128) * 2);
}

TEST_CASE("Qwen3-Next: every 4th layer full attention, the rest Gated DeltaNet state", "[kv][ssm]") {
  const auto m = kvtest::load("qwen3-next-80b-a3b-thinking");
  const auto r = kvtest::kv(m, 1000);
  CHECK(r.kv_bytes_per_token == 12 * 2 * 2 * 256 * 2);
  // conv (4-1) x (2 x 16 x 128 + 32 x 128); recurrent 32 x 128 x 128
  CHECK(r.state_bytes == 36LL * ((4 - 1) * (2 * 16 * 128 + 32 * 128) + 32 * 128 * 128) * 2);
}

TEST_CASE("mllama cross-attention layers hold encoder tokens only", "[kv][mllama]") {
  const auto m = kvtest::from_text(R"({"model_type":"mllama","torch_dtype":"bfloat16",
    "text_config":{"model_type":"mllama_text_model","hidden_size":4096,"num_hidden_layers":40,
    "num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,
    "max_position_embeddings":131072,"cross_attention_layers":[3,8,13,18,23,28,33,38]}})");
  const i64 per_layer = 2 * 8 * 128 * 2;
  const auto r0 = kvtest::kv(m, 1000);
  CHECK(r0.kv_bytes_per_token == 32 * per_layer);
  CHECK(r0.sequence_kv_bytes == 32 * per_layer * 1000);
  const auto r1 = kvtest::kv(m, 1000, ElemFormat::bf16, ElemFormat::bf16, 6404);
  CHECK(r1.sequence_kv_bytes == 32 * per_layer * 1000 + 8 * per_layer * 6404);
  CHECK(r1.kv_bytes_per_token == r0.kv_bytes_per_token);
}

TEST_CASE("OPT-13B: 800 KB per token (PagedAttention paper)", "[kv][published]") {
  // arXiv:2309.06180 s3: "2 (key and value vectors) x 5120 (hidden state size) x 40 (number of layers) x 2 (bytes per FP16)"
  ModelSpec m;
  m.hidden = 5120;
  for (int i = 0; i < 40; ++i) {
    Layer l;
    l.q_heads = l.kv_heads = 40;
    l.k_head_dim = l.v_head_dim = 128;
    m.layers.push_back(l);
  }
  const auto r = kvtest::kv(m, 2048, ElemFormat::f16, ElemFormat::f16);
  CHECK(r.kv_bytes_per_token == 819200);
  CHECK(r.sequence_kv_bytes == 819200LL * 2048);  // "as much as 1.6 GB" (1.5625 GiB)
}

TEST_CASE("ignoring windows turns sliding and chunked layers into full attention", "[kv][transform]") {
  auto m = kvtest::load("gemma-3-1b-it");
  disable_windows(m);
  CHECK(kvtest::kv(m, 32768).sequence_kv_bytes == 26LL * 2 * 256 * 2 * 32768);
}

TEST_CASE("layer groups add up to the totals", "[kv]") {
  const auto m = kvtest::load("gpt-oss-20b");
  const auto r = kvtest::kv(m, 5000);
  REQUIRE(r.groups.size() == 2);
  i64 k = 0, layers = 0;
  for (const auto& g : r.groups) { k += g.k_bytes; layers += static_cast<i64>(g.layer_indices.size()); }
  CHECK(k == r.k_bytes);
  CHECK(layers == 24);
  CHECK(r.groups[0].formula.find("window 128") != std::string::npos);
}
