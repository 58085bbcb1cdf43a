// Parameter counts against published totals (source in each comment) and hand arithmetic;
// weight bytes by format and quantization_config.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "kvplan/core/transform.hpp"
#include "kvplan/core/weights.hpp"

using namespace kvplan;

namespace {
double rel_err(i64 got, double want) { return std::abs(static_cast<double>(got) - want) / want; }
}  // namespace

TEST_CASE("Llama-3.1-8B: 8.030 B parameters (llama.cpp 'model params = 8.030 B')", "[weights]") {
  // cases.json lc-llama31-8b-1k-kiq4nl-vf16 (ik_llama.cpp #103). By hand: embeddings and lm_head
  // 2 x 128256 x 4096; per layer q,o 4096x4096, k,v 4096x1024, MLP 3 x 4096 x 14336, 2 norms; final norm.
  const auto p = count_params(kvtest::load("llama-3.1-8b"));
  const i64 layer = 2 * 4096LL * 4096 + 2 * 4096LL * 1024 + 3 * 4096LL * 14336 + 2 * 4096;
  CHECK(p.total == 2 * 128256LL * 4096 + 32 * layer + 4096);
  CHECK(rel_err(p.total, 8.030e9) < 0.0005);
  CHECK(p.active == p.total);
}

TEST_CASE("Qwen3-30B-A3B: 30.532 B total (llama.cpp), about 3.3 B active", "[weights][moe]") {
  // cases.json lc-qwen3-30b-a3b-4k-f16: "model params = 30.532 B"
  const auto p = count_params(kvtest::load("qwen3-30b-a3b"));
  CHECK(rel_err(p.total, 30.532e9) < 0.005);
  // Qwen3 model card: 3.3B activated
  CHECK(rel_err(p.active, 3.3e9) < 0.03);
  // routed experts not used by a token: 48 layers x (128 - 8) x 3 x 2048 x 768
  CHECK(p.total - p.active == 48LL * 120 * 3 * 2048 * 768);
}

TEST_CASE("DeepSeek-V2-Lite: 15.706 B (llama.cpp 'model params = 15.706 B')", "[weights][mla]") {
  // cases.json lc-dscoder-v2-lite-512-f16 (ik_llama.cpp #230)
  const auto p = count_params(kvtest::load("deepseek-v2-lite"));
  CHECK(rel_err(p.total, 15.706e9) < 0.005);
}

TEST_CASE("Gemma-3-1B: 999,885,952 parameters (KerasHub preset gemma3_1b)", "[weights][gemma3]") {
  // cases.json pub-keras-hub-gemma3-params: keras_hub/src/models/gemma3/gemma3_presets.py
  const auto p = count_params(kvtest::load("gemma-3-1b-it"));
  CHECK(p.total == 999885952);
}

TEST_CASE("Mixtral-8x7B: 46.7 B total, 12.9 B active (Mistral AI announcement)", "[weights][moe]") {
  // mistral.ai/news/mixtral-of-experts: "46.7B total parameters but only uses 12.9B parameters per token"
  const auto p = count_params(kvtest::load("mixtral-8x7b"));
  CHECK(rel_err(p.total, 46.7e9) < 0.005);
  CHECK(rel_err(p.active, 12.9e9) < 0.005);
}

TEST_CASE("GPT-2: 124,439,808 parameters (transformers num_parameters of openai-community/gpt2)", "[weights]") {
  // By hand: wte 50257 x 768 + wpe 1024 x 768 + 12 x (ln 2x2x768 + c_attn 768x2304+2304 + c_proj 768x768+768
  //          + c_fc 768x3072+3072 + c_proj 3072x768+768) + ln_f 2x768; lm_head tied.
  const i64 layer = 4 * 768 + (768 * 2304 + 2304) + (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768);
  const auto p = count_params(kvtest::load("gpt2"));
  CHECK(p.total == 50257LL * 768 + 1024 * 768 + 12 * layer + 2 * 768);
  CHECK(p.total == 124439808);
}

TEST_CASE("Gemma-7B: 8.54 B (Gemma report, Table 1: 7B model = 8.54B incl. embeddings)", "[weights]") {
  const auto p = count_params(kvtest::load("gemma-7b-awq"));
  CHECK(rel_err(p.total, 8.54e9) < 0.005);
}

TEST_CASE("gpt-oss-20b: 20.91 B total, 3.61 B active (OpenAI gpt-oss model card, Table 1)", "[weights][moe]") {
  const auto p = count_params(kvtest::load("gpt-oss-20b"));
  CHECK(rel_err(p.total, 20.91e9) < 0.005);
  // the model card's active count leaves out the input embedding table (a lookup): 201088 x 2880
  CHECK(rel_err(p.active - 201088LL * 2880, 3.61e9) < 0.01);
}

TEST_CASE("Falcon-7B by hand: fused qkv (71 + 2 x 1 heads) x 64, one LayerNorm per layer, tied", "[weights]") {
  const i64 layer = 4544LL * (71 + 2) * 64 + 4544LL * 4544 + 2 * 4544LL * 4 * 4544 + 2 * 4544;
  CHECK(count_params(kvtest::load("falcon-7b-instruct")).total == 65024LL * 4544 + 32 * layer + 2 * 4544);
}

TEST_CASE("weight bytes: bf16 is 2 B per parameter", "[weights][bytes]") {
  const auto m = kvtest::load("llama-3.1-8b");
  const auto p = count_params(m);
  CHECK(weight_bytes(m, p).total == 2 * p.total);
}

TEST_CASE("weight bytes: AWQ 4-bit g128 packs linear layers, embeddings stay f16", "[weights][bytes]") {
  const auto m = kvtest::load("gemma-7b-awq");
  REQUIRE(m.quant.method == "awq");
  // 4 bits + (16-bit scale + 4-bit zero) / 128 per weight
  CHECK(m.quant.linear_bits == Approx(4.0 + 20.0 / 128.0));
  const auto p = count_params(m);
  i64 linear = 0, other = 0;
  for (const auto& part : p.parts) {
    if (part.quantisable) { linear += part.matrix; other += part.vector; }
    else other += part.total();
  }
  const auto w = weight_bytes(m, p);
  CHECK(w.total == static_cast<i64>(std::ceil(static_cast<double>(linear) * (4.0 + 20.0 / 128.0) / 8.0)) + 2 * other);
}

TEST_CASE("weight bytes: gpt-oss mxfp4 packs experts only (attention, router, embeddings bf16)", "[weights][bytes]") {
  const auto m = kvtest::load("gpt-oss-20b");
  REQUIRE(m.quant.method == "mxfp4");
  CHECK_FALSE(m.quant.attention_quantised);
  const auto w = weight_bytes(m, count_params(m));
  // published checkpoint is about 13 GB (OpenAI: "runs within 16GB of memory"); experts at 4.25 bits
  CHECK(w.total > 12.5e9);
  CHECK(w.total < 14.5e9);
}

TEST_CASE("group quantisation bits", "[weights][bytes]") {
  CHECK(group_quant_bits(4, 128, 16, 4) == Approx(4.15625));
  CHECK(group_quant_bits(8, 0, 16, 0) == Approx(8.0));
}

TEST_CASE("ggml weight formats as llama-quantize makes them match llama.cpp's printed model sizes", "[weights][gguf]") {
  // Llama-3-8B (untied, 8,030,261,248 params; 65 norm vectors of 4096 = 266,240 params in f32). llama.cpp prints
  // for Meta-Llama-3-8B-Instruct Q8_0 "model size = 7.95 GiB (8.50 BPW)" (65 f32 + 226 q8_0 tensors) and for
  // Llama-3.1-8B Q4_0 "file size = 4.33 GiB (4.64 BPW)" (225 q4_0 + 1 q6_K tensors), both in public logs in the
  // stored code index (ids 28742047946 and 53320019323)
  auto bytes = [](const std::string& format) {
    kvplan::ModelSpec m = kvtest::load("llama-3-8b");
    kvplan::apply_weight_format(m, format, "--weight-format");
    return kvplan::weight_bytes(m, kvplan::count_params(m)).total;
  };
  const long long vectors = 266240, embed = 128256LL * 4096, matrices = 8030261248LL - vectors;
  // q8_0: every matrix at 34 B per 32 weights, the output head too; norms f32
  CHECK(bytes("q8_0") == matrices * 34 / 32 + vectors * 4);
  CHECK(std::abs(static_cast<double>(bytes("q8_0")) / (1LL << 30) - 7.95) < 0.005);
  // q4_0: 18 B per 32 weights; the output head q6_K (210 B per 256 weights)
  CHECK(bytes("q4_0") == (matrices - embed) * 18 / 32 + embed * 210 / 256 + vectors * 4);
  CHECK(std::abs(static_cast<double>(bytes("q4_0")) / (1LL << 30) - 4.33) < 0.005);
  CHECK_THROWS_AS(bytes("q9_9"), kvplan::InputError);
}

TEST_CASE("K-quant mixes as llama-quantize makes them match its own sizes for Llama-3-8B", "[weights][gguf]") {
  // llama-quantize's QUANT_OPTIONS table (tools/quantize/quantize.cpp) lists for Llama-3-8B: Q4_K_M 4.58G,
  // Q5_K_S 5.21G, Q5_K_M 5.33G, Q6_K 6.14G, Q4_K_S 4.37G (a measured Llama-3.1-8B Q4_K_S, same shapes: 4.36 GiB);
  // G = GiB as llama.cpp prints sizes. Blocks of 256 weights: q4_K 144 B, q5_K 176 B, q6_K 210 B.
  auto bytes = [](const std::string& format) {
    kvplan::ModelSpec m = kvtest::load("llama-3-8b");
    kvplan::apply_weight_format(m, format, "--weight-format");
    return kvplan::weight_bytes(m, kvplan::count_params(m)).total;
  };
  auto gib = [&](const std::string& f) { return static_cast<double>(bytes(f)) / (1LL << 30); };
  // per layer: q and o 4096 x 4096, k and v 4096 x 1024, gate, up and down 4096 x 14336; 32 layers
  const long long q = 4096LL * 4096, v = 4096LL * 1024, ffn = 4096LL * 14336, embed = 128256LL * 4096, norms = 266240;
  const long long layer = 2 * q + 2 * v + 3 * ffn;
  // use_more_bits(i, 32): i < 4, i >= 28, (i - 4) % 3 == 2 -> layers 0-3, 6, 9, ..., 27, 28-31 = 16 layers
  const long long promoted = 16;
  const long long q4km = (32 * layer + embed) * 144 / 256 + promoted * (v + ffn) * (210 - 144) / 256 + embed * 210 / 256 + norms * 4;
  CHECK(bytes("q4_k_m") == q4km);
  CHECK(std::abs(gib("Q4_K_M") - 4.58) < 0.005);
  CHECK(std::abs(gib("q5_k_s") - 5.21) < 0.005);
  CHECK(std::abs(gib("q5_k_m") - 5.33) < 0.005);
  CHECK(std::abs(gib("q6_k") - 6.14) < 0.005);
  // Q4_K_S: attn_v of layers 0-3 and ffn_down of the first 32 / 8 = 4 layers at q5_K
  CHECK(bytes("q4_k_s") == (32 * layer + embed) * 144 / 256 + 4 * (v + ffn) * (176 - 144) / 256 + embed * 210 / 256 + norms * 4);
  CHECK(std::abs(gib("q4_k_s") - 4.36) < 0.005);
}

TEST_CASE("Kimi-K2-Instruct is the released block FP8: 1 B a linear weight + an f32 scale per 128 x 128", "[weights][bytes]") {
  // the checkpoint ships DeepSeek-V3-style FP8 (ktransformers doc/en/Kimi-K2.md converts 'fp8 to bf16' with
  // DeepSeek's fp8_cast_bf16.py): about 1.03 TB, not the 2.06 TB of bf16 (1.03 T parameters x 2 B)
  const auto m = kvtest::load("kimi-k2-instruct");
  REQUIRE(m.quant.method == "fp8");
  CHECK(m.quant.linear_bits == Approx(8.0 + 32.0 / (128.0 * 128.0)));
  const auto p = count_params(m);
  CHECK(rel_err(p.total, 1.03e12) < 0.01);  // Kimi K2 model card: 1 T total parameters (1.03 T counted)
  const double bytes = static_cast<double>(weight_bytes(m, p).total);
  CHECK(bytes < 0.52 * 2.0 * static_cast<double>(p.total));
  CHECK(bytes > 0.50 * 2.0 * static_cast<double>(p.total));
}
