// GGUF reading: small files written here (header, metadata, tensor table, alignment padding, a
// sparse data section of the exact size), read back into models whose KV and weight bytes are
// checked against hand arithmetic, and the exact error lines malformed files get.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/gguf.hpp"
#include "tools/gguf_writer.hpp"

using namespace kvplan;
namespace fs = std::filesystem;

namespace {

// The GGUF writer and its type codes are shared with the kvplan_make_gguf tool.
using kvtest::tokens;
using kvtest::Writer;
using kvtest::ARR;
using kvtest::F64;
using kvtest::I16;
using kvtest::I32;
using kvtest::I64;
using kvtest::I8;
using kvtest::le;
using kvtest::STR;
using kvtest::T_BF16;
using kvtest::T_F16;
using kvtest::T_F32;
using kvtest::T_MXFP4;
using kvtest::T_Q4_0;
using kvtest::T_Q4_K;
using kvtest::T_Q8_0;
using kvtest::U16;
using kvtest::U64;
using kvtest::U8;

// One folder per test run, removed when the test binary exits.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("kvplan-gguf-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

fs::path test_dir() {
  static const TempDir d;
  return d.path;
}


// A 2-layer llama: 4 query heads, 2 KV heads of 64, 32 tokens.
Writer tiny_llama() {
  Writer w;
  w.str("general.architecture", "llama")
      .str("general.name", "tiny")
      .u32("general.file_type", 2)
      .u32("llama.block_count", 2)
      .u32("llama.context_length", 4096)
      .u32("llama.embedding_length", 256)
      .u32("llama.feed_forward_length", 512)
      .u32("llama.attention.head_count", 4)
      .u32("llama.attention.head_count_kv", 2)
      .u32("llama.attention.key_length", 64)
      .u32("llama.attention.value_length", 64)
      .arr_str("tokenizer.ggml.tokens", tokens(32));
  return w;
}

ModelSpec load(const std::string& path, io::GgufInfo* info = nullptr) { return io::model_from_gguf(path, "test", info); }

std::string error_of(const std::string& path) {
  try {
    load(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

bool has_note(const ModelSpec& m, const std::string& part) {
  for (const auto& n : m.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("is_gguf_file looks at the magic", "[gguf]") {
  CHECK(io::is_gguf_file(tiny_llama().save(test_dir() / "magic.gguf")));
  const fs::path other = test_dir() / "not.gguf";
  std::ofstream(other) << "{\"model_type\":\"llama\"}";
  CHECK_FALSE(io::is_gguf_file(other.string()));
  CHECK_FALSE(io::is_gguf_file((test_dir() / "absent.gguf").string()));
  CHECK_FALSE(io::is_gguf_file(test_dir().string()));
}

TEST_CASE("a llama GGUF: geometry, KV bytes and exact tensor bytes", "[gguf]") {
  Writer w = tiny_llama();
  w.tensor("token_embd.weight", {256, 32}, T_F16)
      .tensor("blk.0.ffn_down.weight", {4096, 4096}, T_Q4_0)
      .tensor("output_norm.weight", {256}, T_F32);
  io::GgufInfo info;
  const auto m = load(w.save(test_dir() / "llama.gguf"), &info);
  CHECK(m.model_type == "llama");
  CHECK(m.layers.size() == 2);
  CHECK(m.hidden == 256);
  CHECK(m.vocab == 32);  // length of tokenizer.ggml.tokens
  CHECK(m.max_context == 4096);
  CHECK(m.dtype == ElemFormat::f16);  // llama.cpp's default cache type
  CHECK(m.tied_embeddings);           // no output.weight
  CHECK(m.warnings.empty());
  CHECK(m.layers[0].q_heads == 4);
  CHECK(m.layers[0].kv_heads == 2);
  CHECK(m.layers[0].k_head_dim == 64);
  CHECK(m.layers[1].intermediate == 512);
  const auto kv = kvtest::kv(m, 1000, ElemFormat::f16, ElemFormat::f16);
  CHECK(kv.kv_bytes_per_token == 2 * 2 * 2 * 64 * 2);  // layers * kv_heads * (K+V) * head_dim * f16
  CHECK(kv.sequence_kv_bytes == 2 * 2 * 2 * 64 * 2 * 1000);

  const i64 q4 = 4096LL * 4096 / 32 * 18;  // q4_0: 18 bytes per 32 elements
  CHECK(info.bytes_by_type.at("q4_0") == q4);
  CHECK(info.bytes_by_type.at("f16") == 256 * 32 * 2);
  CHECK(info.bytes_by_type.at("f32") == 256 * 4);
  CHECK(info.tensor_bytes == q4 + 256 * 32 * 2 + 256 * 4);
  CHECK(info.tensor_elements == 4096LL * 4096 + 256 * 32 + 256);
  CHECK(m.exact_weight_bytes == info.tensor_bytes);
  CHECK(m.exact_params == info.tensor_elements);
  CHECK(info.tensor_count == 3);
  CHECK(info.architecture == "llama");
  CHECK(info.name == "tiny");
  CHECK(info.version == 3);
  CHECK(info.file_type == "Q4_0");  // llama_ftype 2
}

TEST_CASE("a complete llama tensor table has as many elements as the layers count", "[gguf]") {
  // qwen2 shapes (q/k/v biases): the model built from the metadata and the tensor table must agree
  Writer w = kvtest::two_block("qwen2", 32768);
  for (int i = 0; i < 2; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.tensor(b + "attn_norm.weight", {256}, T_F32)
        .tensor(b + "attn_q.weight", {256, 256}, T_Q4_K)
        .tensor(b + "attn_q.bias", {256}, T_F32)
        .tensor(b + "attn_k.weight", {256, 128}, T_Q8_0)
        .tensor(b + "attn_k.bias", {128}, T_F32)
        .tensor(b + "attn_v.weight", {256, 128}, T_Q8_0)
        .tensor(b + "attn_v.bias", {128}, T_F32)
        .tensor(b + "attn_output.weight", {256, 256}, T_Q4_K)
        .tensor(b + "ffn_norm.weight", {256}, T_F32)
        .tensor(b + "ffn_gate.weight", {256, 512}, T_Q4_K)
        .tensor(b + "ffn_up.weight", {256, 512}, T_Q4_K)
        .tensor(b + "ffn_down.weight", {512, 256}, T_Q4_K);
  }
  io::GgufInfo info;
  const auto m = load(w.save(test_dir() / "qwen2-full.gguf"), &info);
  CHECK(m.tied_embeddings);
  CHECK(m.layers[0].qkv_bias);
  CHECK_FALSE(m.layers[0].o_bias);
  // 32x256 embedding + 256 final norm + per layer: 2 norms, q/o 256x256, k/v 256x128 with biases, 3 x 256x512
  const i64 per_layer = 2 * 256 + 2 * 256 * 256 + 256 + 2 * (256 * 128 + 128) + 3 * 256 * 512;
  CHECK(info.tensor_elements == 32 * 256 + 256 + 2 * per_layer);
  CHECK(count_params(m).total == info.tensor_elements);
}

TEST_CASE("the tensor table decides biases, norms, MLP shape and learned positions", "[gguf]") {
  Writer phi;
  phi.str("general.architecture", "phi3")
      .u32("phi3.block_count", 1)
      .u32("phi3.context_length", 4096)
      .u32("phi3.embedding_length", 256)
      .u32("phi3.feed_forward_length", 512)
      .u32("phi3.attention.head_count", 4)
      .u32("phi3.attention.head_count_kv", 4)
      .u32("phi3.attention.sliding_window", 2047)
      .u32("phi3.vocab_size", 100);
  phi.tensor("blk.0.attn_qkv.weight", {256, 768}, T_F16)
      .tensor("blk.0.ffn_up.weight", {256, 1024}, T_F16)  // gate and up fused: 2 x 512
      .tensor("blk.0.ffn_down.weight", {512, 256}, T_F16);
  const auto pm = load(phi.save(test_dir() / "phi3.gguf"));
  CHECK(pm.layers[0].mlp == MlpKind::gated);
  CHECK_FALSE(pm.layers[0].qkv_bias);
  CHECK(pm.layers[0].kv == KvKind::full);  // llama.cpp disables Phi-3 SWA
  CHECK(has_note(pm, "phi3.attention.sliding_window = 2047 is not used"));

  Writer falcon;
  falcon.str("general.architecture", "falcon")
      .u32("falcon.block_count", 1)
      .u32("falcon.context_length", 2048)
      .u32("falcon.embedding_length", 256)
      .u32("falcon.feed_forward_length", 1024)
      .u32("falcon.attention.head_count", 4)
      .u32("falcon.attention.head_count_kv", 1)
      .u32("falcon.vocab_size", 100);
  falcon.tensor("blk.0.attn_norm.weight", {256}, T_F32)
      .tensor("blk.0.attn_norm_2.weight", {256}, T_F32)
      .tensor("blk.0.ffn_up.weight", {256, 1024}, T_F16)
      .tensor("blk.0.ffn_down.weight", {1024, 256}, T_F16);
  const auto fm = load(falcon.save(test_dir() / "falcon.gguf"));
  CHECK(fm.norm == NormKind::layer);
  CHECK(fm.layers[0].norms == 2);  // attn_norm and attn_norm_2 (the 40B layout)
  CHECK(fm.layers[0].mlp == MlpKind::plain);
  CHECK(fm.layers[0].kv_heads == 1);

  Writer gpt2;
  gpt2.str("general.architecture", "gpt2")
      .u32("gpt2.block_count", 1)
      .u32("gpt2.context_length", 1024)
      .u32("gpt2.embedding_length", 64)
      .u32("gpt2.feed_forward_length", 256)
      .u32("gpt2.attention.head_count", 4);
  gpt2.tensor("token_embd.weight", {64, 50257}, T_F32).tensor("position_embd.weight", {64, 1024}, T_F32);
  const auto gm = load(gpt2.save(test_dir() / "gpt2.gguf"));
  CHECK(gm.vocab == 50257);  // no vocab_size key and no tokenizer: token_embd rows
  CHECK(has_note(gm, "vocabulary size from token_embd.weight"));
  CHECK(gm.learned_positions == 1024);
  CHECK(gm.layers[0].kv_heads == 4);  // head_count_kv defaults to head_count
}

TEST_CASE("block formats: q4_K, q8_0 and mxfp4 tensor bytes", "[gguf]") {
  Writer w = tiny_llama();
  w.tensor("a", {4096, 1024}, T_Q4_K).tensor("b", {4096, 1024}, T_Q8_0).tensor("c", {2880, 32, 4}, T_MXFP4);
  w.tensor("output.weight", {256, 32}, T_BF16);
  io::GgufInfo info;
  const auto m = load(w.save(test_dir() / "blocks.gguf"), &info);
  CHECK(info.bytes_by_type.at("q4_K") == 4096LL * 1024 / 256 * 144);
  CHECK(info.bytes_by_type.at("q8_0") == 4096LL * 1024 / 32 * 34);
  CHECK(info.bytes_by_type.at("mxfp4") == 2880LL * 32 * 4 / 32 * 17);
  CHECK(info.bytes_by_type.at("bf16") == 256 * 32 * 2);
  CHECK_FALSE(m.tied_embeddings);  // output.weight present
}

TEST_CASE("every metadata value type is read, and sizes may use any integer type", "[gguf]") {
  Writer w;
  w.str("general.architecture", "llama")
      .key("x.u8", U8).put(7, 1)
      .key("x.i8", I8).put(0xff, 1)
      .key("x.u16", U16).put(65535, 2)
      .key("x.i16", I16).put(0x8000, 2)
      .f32("x.f32", 1.5f)
      .boolean("x.bool", true)
      .str("x.string", "hello")
      .key("x.f64", F64).put(0x3ff8000000000000ULL, 8)
      .key("x.u64", U64).put(~0ULL, 8)  // above INT64_MAX: fine while nothing needs it
      .key("x.nested", ARR).put(ARR, 4).put(2, 8)
      .put(U8, 4).put(3, 8).put(1, 1).put(2, 1).put(3, 1)
      .put(STR, 4).put(1, 8).put_str("deep")
      .key("x.f64s", ARR).put(F64, 4).put(1, 8).put(0, 8)
      .key("llama.block_count", U64).put(2, 8)
      .key("llama.context_length", I32).put(8192, 4)
      .key("llama.embedding_length", U16).put(512, 2)
      .key("llama.attention.head_count", U8).put(8, 1)
      .key("llama.attention.head_count_kv", I64).put(4, 8)
      .key("llama.feed_forward_length", I16).put(1024, 2)
      .u32("llama.vocab_size", 1000)  // wins over the tokenizer's length
      .arr_str("tokenizer.ggml.tokens", tokens(3));
  const auto m = load(w.save(test_dir() / "types.gguf"));
  CHECK(m.layers.size() == 2);
  CHECK(m.max_context == 8192);
  CHECK(m.vocab == 1000);
  CHECK(m.layers[0].k_head_dim == 512 / 8);  // no key_length: embedding_length / head_count
  CHECK(kvtest::kv(m, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == 2 * 4 * 2 * 64 * 2);
}

TEST_CASE("per-layer head_count_kv and feed_forward_length arrays", "[gguf]") {
  Writer w;
  w.str("general.architecture", "llama")
      .u32("llama.block_count", 3)
      .u32("llama.context_length", 4096)
      .u32("llama.embedding_length", 256)
      .arr_i32("llama.feed_forward_length", {100, 200, 300})
      .u32("llama.attention.head_count", 8)
      .arr_i32("llama.attention.head_count_kv", {8, 4, 2})
      .u32("llama.attention.key_length", 32)
      .u32("llama.attention.value_length", 32)
      .u32("llama.vocab_size", 100);
  const auto m = load(w.save(test_dir() / "arrays.gguf"));
  CHECK(m.layers[0].kv_heads == 8);
  CHECK(m.layers[1].kv_heads == 4);
  CHECK(m.layers[2].kv_heads == 2);
  CHECK(m.layers[2].intermediate == 300);
  CHECK(kvtest::kv(m, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == (8 + 4 + 2) * 2 * 32 * 2);

  Writer bad;
  bad.str("general.architecture", "llama")
      .u32("llama.block_count", 3)
      .u32("llama.context_length", 4096)
      .u32("llama.embedding_length", 256)
      .u32("llama.attention.head_count", 8)
      .arr_i32("llama.attention.head_count_kv", {8, 4})
      .u32("llama.vocab_size", 100);
  const std::string p = bad.save(test_dir() / "arrays-bad.gguf");
  CHECK(error_of(p) == p + ": llama.attention.head_count_kv: has 2 entries but llama.block_count is 3; make them agree");
}

TEST_CASE("gemma3 and gemma2 sliding-window layers follow llama.cpp's patterns", "[gguf]") {
  Writer w;
  w.str("general.architecture", "gemma3")
      .u32("gemma3.block_count", 8)
      .u32("gemma3.context_length", 32768)
      .u32("gemma3.embedding_length", 128)
      .u32("gemma3.feed_forward_length", 512)
      .u32("gemma3.attention.head_count", 2)
      .u32("gemma3.attention.head_count_kv", 1)
      .u32("gemma3.attention.key_length", 256)
      .u32("gemma3.attention.value_length", 256)
      .u32("gemma3.attention.sliding_window", 512)
      .u32("gemma3.vocab_size", 1000);
  const auto m = load(w.save(test_dir() / "gemma3.gguf"));
  // set_swa_pattern(6): layer il is sliding when il % 6 < 5
  for (int i : {0, 1, 2, 3, 4, 6, 7}) {
    CHECK(m.layers[i].kv == KvKind::sliding);
    CHECK(m.layers[i].window == 512);
  }
  CHECK(m.layers[5].kv == KvKind::full);
  CHECK(m.layers[0].qk_norm);
  CHECK(m.layers[0].norms == 4);
  const auto kv = kvtest::kv(m, 2000, ElemFormat::f16, ElemFormat::f16);
  const i64 row = 1 * 256 * 2 * 2;  // kv_heads * head_dim * (K+V) * f16
  CHECK(kv.kv_bytes_per_token == 8 * row);
  CHECK(kv.sequence_kv_bytes == 7 * 512 * row + 1 * 2000 * row);

  Writer g2;
  g2.str("general.architecture", "gemma2")
      .u32("gemma2.block_count", 4)
      .u32("gemma2.context_length", 8192)
      .u32("gemma2.embedding_length", 128)
      .u32("gemma2.feed_forward_length", 512)
      .u32("gemma2.attention.head_count", 2)
      .u32("gemma2.attention.head_count_kv", 1)
      .u32("gemma2.vocab_size", 1000);
  const auto m2 = load(g2.save(test_dir() / "gemma2.gguf"));
  CHECK(m2.layers[0].kv == KvKind::sliding);
  CHECK(m2.layers[0].window == 4096);  // llama.cpp's gemma2 default when the key is absent
  CHECK(m2.layers[1].kv == KvKind::full);
  CHECK(m2.layers[2].kv == KvKind::sliding);
  CHECK(m2.layers[3].kv == KvKind::full);
}

TEST_CASE("deepseek2 caches the MLA latent, or the expanded K/V for old conversions", "[gguf]") {
  auto base = [](bool mla) {
    Writer w;
    w.str("general.architecture", "deepseek2")
        .u32("deepseek2.block_count", 3)
        .u32("deepseek2.context_length", 163840)
        .u32("deepseek2.embedding_length", 512)
        .u32("deepseek2.feed_forward_length", 10944)
        .u32("deepseek2.attention.head_count", 16)
        .u32("deepseek2.attention.q_lora_rank", 1536)
        .u32("deepseek2.attention.kv_lora_rank", 512)
        .u32("deepseek2.rope.dimension_count", 64)
        .u32("deepseek2.leading_dense_block_count", 1)
        .u32("deepseek2.expert_count", 64)
        .u32("deepseek2.expert_used_count", 6)
        .u32("deepseek2.expert_feed_forward_length", 1408)
        .u32("deepseek2.expert_shared_count", 2)
        .u32("deepseek2.vocab_size", 1000);
    if (mla) {  // convert_hf_to_gguf.py since llama.cpp PR 12801
      w.u32("deepseek2.attention.head_count_kv", 1)
          .u32("deepseek2.attention.key_length", 512 + 64)
          .u32("deepseek2.attention.value_length", 512)
          .u32("deepseek2.attention.key_length_mla", 128 + 64)
          .u32("deepseek2.attention.value_length_mla", 128);
    } else {
      w.u32("deepseek2.attention.head_count_kv", 16)
          .u32("deepseek2.attention.key_length", 128 + 64)
          .u32("deepseek2.attention.value_length", 128);
    }
    return w;
  };
  const auto m = load(base(true).save(test_dir() / "ds-mla.gguf"));
  const Layer& l = m.layers[1];
  CHECK(l.kv == KvKind::mla_latent);
  CHECK(l.mixer == Mixer::mla);
  CHECK(l.kv_lora_rank == 512);
  CHECK(l.qk_rope_head_dim == 64);
  CHECK(l.qk_nope_head_dim == 128);
  CHECK(l.v_head_dim == 128);
  CHECK(l.q_heads == 16);
  CHECK(l.q_lora_rank == 1536);
  CHECK(m.layers[0].mlp == MlpKind::gated);  // leading dense block
  CHECK(m.layers[0].intermediate == 10944);
  CHECK(l.mlp == MlpKind::moe);
  CHECK(l.experts == 64);
  CHECK(l.experts_active == 6);
  CHECK(l.shared_intermediate == 2 * 1408);
  const auto kv = kvtest::kv(m, 1, ElemFormat::f16, ElemFormat::f16);
  CHECK(kv.k_bytes_per_token == 3 * (512 + 64) * 2);  // layers * (kv_lora_rank + rope) * f16
  CHECK(kv.v_bytes_per_token == 0);

  const auto old = load(base(false).save(test_dir() / "ds-old.gguf"));
  CHECK(old.layers[0].kv == KvKind::mla_expanded);
  CHECK(kvtest::kv(old, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == 3 * 16 * (192 + 128) * 2);
  CHECK(has_note(old, "no deepseek2.attention.key_length_mla"));
}

TEST_CASE("gpt-oss: sliding window on even layers, sinks and MoE from the tensor table", "[gguf]") {
  Writer w;
  w.str("general.architecture", "gpt-oss")
      .u32("gpt-oss.block_count", 4)
      .u32("gpt-oss.context_length", 131072)
      .u32("gpt-oss.embedding_length", 2880)
      .u32("gpt-oss.feed_forward_length", 2880)
      .u32("gpt-oss.attention.head_count", 64)
      .u32("gpt-oss.attention.head_count_kv", 8)
      .u32("gpt-oss.attention.key_length", 64)
      .u32("gpt-oss.attention.value_length", 64)
      .u32("gpt-oss.attention.sliding_window", 128)
      .u32("gpt-oss.expert_count", 32)
      .u32("gpt-oss.expert_used_count", 4)
      .u32("gpt-oss.expert_feed_forward_length", 2880)
      .u32("gpt-oss.vocab_size", 201088);
  w.tensor("blk.0.attn_sinks.weight", {64}, T_F32)
      .tensor("blk.0.attn_q.bias", {4096}, T_F32)
      .tensor("blk.0.ffn_gate_inp.bias", {32}, T_F32)
      .tensor("blk.0.attn_norm.weight", {2880}, T_F32)
      .tensor("blk.0.post_attention_norm.weight", {2880}, T_F32);
  const auto m = load(w.save(test_dir() / "gpt-oss.gguf"));
  CHECK(m.layers[0].kv == KvKind::sliding);
  CHECK(m.layers[0].window == 128);
  CHECK(m.layers[1].kv == KvKind::full);
  CHECK(m.layers[2].kv == KvKind::sliding);
  CHECK(m.layers[0].attn_sinks);
  CHECK(m.layers[0].qkv_bias);
  CHECK_FALSE(m.layers[0].o_bias);  // no attn_output.bias tensor in this table
  CHECK(m.layers[0].router_bias);
  CHECK(m.layers[0].norms == 2);
  CHECK(m.layers[3].experts == 32);
  CHECK(m.layers[3].experts_active == 4);
  // cases.json pub-gguf-parser-gpt-oss-20b: per layer 8 x 64 x 2 x 2 = 2048
  CHECK(kvtest::kv(m, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == 4 * 8 * 64 * 2 * 2);
}

TEST_CASE("llama4: chunked attention on 3 of every 4 layers, MoE every step", "[gguf]") {
  auto make = [](bool no_chunks) {
    Writer w;
    w.str("general.architecture", "llama4")
        .u32("llama4.block_count", 4)
        .u32("llama4.context_length", 10485760)
        .u32("llama4.embedding_length", 512)
        .u32("llama4.feed_forward_length", 1024)
        .u32("llama4.attention.head_count", 8)
        .u32("llama4.attention.head_count_kv", 2)
        .u32("llama4.expert_count", 16)
        .u32("llama4.expert_used_count", 1)
        .u32("llama4.expert_feed_forward_length", 256)
        .u32("llama4.interleave_moe_layer_step", 2)
        .u32("llama4.vocab_size", 1000);
    if (no_chunks) w.u32("llama4.attention.sliding_window", 0);
    return w;
  };
  const auto m = load(make(false).save(test_dir() / "llama4.gguf"));
  for (int i : {0, 1, 2}) {
    CHECK(m.layers[i].kv == KvKind::chunked);
    CHECK(m.layers[i].window == 8192);
  }
  CHECK(m.layers[3].kv == KvKind::full);
  CHECK(m.layers[0].mlp == MlpKind::gated);
  CHECK(m.layers[1].mlp == MlpKind::moe);
  CHECK(m.layers[1].shared_intermediate == 256);
  const auto off = load(make(true).save(test_dir() / "llama4-off.gguf"));
  for (const auto& l : off.layers) CHECK(l.kv == KvKind::full);
}

TEST_CASE("recurrent and hybrid architectures: mamba2, jamba, nemotron_h", "[gguf]") {
  Writer w;
  w.str("general.architecture", "mamba2")
      .u32("mamba2.block_count", 2)
      .u32("mamba2.context_length", 1048576)
      .u32("mamba2.embedding_length", 256)
      .u32("mamba2.ssm.conv_kernel", 4)
      .u32("mamba2.ssm.inner_size", 512)
      .u32("mamba2.ssm.state_size", 128)
      .u32("mamba2.ssm.time_step_rank", 8)
      .u32("mamba2.ssm.group_count", 1)
      .u32("mamba2.vocab_size", 1000);
  const auto m = load(w.save(test_dir() / "mamba2.gguf"));
  CHECK(m.layers[0].kv == KvKind::ssm);
  CHECK(m.layers[0].mixer == Mixer::mamba2);
  CHECK(m.layers[0].ssm_heads == 8);
  CHECK(m.layers[0].conv_state_elems == (4 - 1) * (512 + 2 * 1 * 128));  // (d_conv-1) x (d_inner + 2 groups d_state)
  CHECK(m.layers[0].ssm_state_elems == 512 * 128);                        // d_inner x d_state
  const auto kv = kvtest::kv(m, 1000);
  CHECK(kv.kv_bytes_per_token == 0);
  CHECK(kv.state_bytes == 2 * ((4 - 1) * (512 + 2 * 128) + 512 * 128) * 2);  // layers * elems * f16

  Writer j;
  j.str("general.architecture", "jamba")
      .u32("jamba.block_count", 8)
      .u32("jamba.context_length", 262144)
      .u32("jamba.embedding_length", 64)
      .u32("jamba.feed_forward_length", 256)
      .u32("jamba.attention.head_count", 4)
      .arr_i32("jamba.attention.head_count_kv", {0, 0, 0, 0, 2, 0, 0, 0})
      .u32("jamba.ssm.conv_kernel", 4)
      .u32("jamba.ssm.inner_size", 128)
      .u32("jamba.ssm.state_size", 16)
      .u32("jamba.ssm.time_step_rank", 4)
      .u32("jamba.expert_count", 4)
      .u32("jamba.expert_used_count", 2)
      .u32("jamba.vocab_size", 1000);
  for (int i : {1, 3, 5, 7}) j.tensor("blk." + std::to_string(i) + ".ffn_gate_inp.weight", {64, 4}, T_F32);
  const auto jm = load(j.save(test_dir() / "jamba.gguf"));
  CHECK(jm.layers[4].kv == KvKind::full);
  CHECK(jm.layers[4].kv_heads == 2);
  CHECK(jm.layers[0].kv == KvKind::ssm);
  CHECK(jm.layers[0].mixer == Mixer::mamba1);
  CHECK(jm.layers[0].conv_state_elems == 3 * 128);
  CHECK(jm.layers[0].ssm_state_elems == 128 * 16);
  CHECK(jm.layers[1].mlp == MlpKind::moe);
  CHECK(jm.layers[2].mlp == MlpKind::gated);
  CHECK(kvtest::kv(jm, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == 1 * 2 * 16 * 2 * 2);

  Writer nh;
  nh.str("general.architecture", "nemotron_h")
      .u32("nemotron_h.block_count", 4)
      .u32("nemotron_h.context_length", 8192)
      .u32("nemotron_h.embedding_length", 64)
      .arr_i32("nemotron_h.feed_forward_length", {0, 256, 0, 256})
      .u32("nemotron_h.attention.head_count", 4)
      .arr_i32("nemotron_h.attention.head_count_kv", {0, 0, 2, 0})
      .u32("nemotron_h.attention.key_length", 16)
      .u32("nemotron_h.attention.value_length", 16)
      .u32("nemotron_h.ssm.conv_kernel", 4)
      .u32("nemotron_h.ssm.inner_size", 128)
      .u32("nemotron_h.ssm.state_size", 16)
      .u32("nemotron_h.ssm.time_step_rank", 4)
      .u32("nemotron_h.ssm.group_count", 2)
      .u32("nemotron_h.vocab_size", 1000);
  const auto nm = load(nh.save(test_dir() / "nemotron_h.gguf"));
  CHECK(nm.layers[0].mixer == Mixer::mamba2);
  CHECK(nm.layers[0].conv_state_elems == 3 * (128 + 2 * 2 * 16));
  CHECK(nm.layers[1].kv == KvKind::none);
  CHECK(nm.layers[1].mlp == MlpKind::plain);
  CHECK(nm.layers[2].kv == KvKind::full);
  CHECK(nm.layers[2].mlp == MlpKind::none);
  CHECK(kvtest::kv(nm, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == 2 * 16 * 2 * 2);
}

TEST_CASE("hybrid architectures of 2025: granitehybrid (Granite 4.0-H) and lfm2 / lfm2moe", "[gguf]") {
  // llama.cpp src/models/granite-hybrid.cpp: head_count_kv 0 marks a Mamba2 layer; experts of feed_forward_length
  // beside a shared MLP of expert_shared_feed_forward_length
  Writer g;
  g.str("general.architecture", "granitehybrid")
      .u32("granitehybrid.block_count", 4)
      .u32("granitehybrid.context_length", 131072)
      .u32("granitehybrid.embedding_length", 64)
      .u32("granitehybrid.feed_forward_length", 32)
      .u32("granitehybrid.attention.head_count", 4)
      .arr_i32("granitehybrid.attention.head_count_kv", {0, 2, 0, 0})
      .u32("granitehybrid.ssm.conv_kernel", 4)
      .u32("granitehybrid.ssm.inner_size", 128)
      .u32("granitehybrid.ssm.state_size", 16)
      .u32("granitehybrid.ssm.time_step_rank", 8)
      .u32("granitehybrid.ssm.group_count", 1)
      .u32("granitehybrid.expert_count", 8)
      .u32("granitehybrid.expert_used_count", 2)
      .u32("granitehybrid.expert_shared_feed_forward_length", 48)
      .u32("granitehybrid.vocab_size", 1000);
  const auto gm = load(g.save(test_dir() / "granitehybrid.gguf"));
  CHECK(gm.layers[0].mixer == Mixer::mamba2);
  CHECK(gm.layers[1].kv == KvKind::full);
  CHECK(gm.layers[0].conv_state_elems == 3 * (128 + 2 * 1 * 16));
  CHECK(gm.layers[0].ssm_state_elems == 128 * 16);
  CHECK(gm.layers[2].mlp == MlpKind::moe);
  CHECK(gm.layers[2].expert_intermediate == 32);
  CHECK(gm.layers[2].shared_intermediate == 48);
  CHECK(kvtest::kv(gm, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == 2 * 16 * 2 * 2);

  // llama.cpp src/models/lfm2.cpp: head_count_kv 0 marks a short convolution; its state is (l_cache - 1) x n_embd
  Writer l;
  l.str("general.architecture", "lfm2moe")
      .u32("lfm2moe.block_count", 4)
      .u32("lfm2moe.context_length", 128000)
      .u32("lfm2moe.embedding_length", 64)
      .u32("lfm2moe.feed_forward_length", 96)
      .u32("lfm2moe.attention.head_count", 4)
      .arr_i32("lfm2moe.attention.head_count_kv", {0, 0, 2, 0})
      .u32("lfm2moe.shortconv.l_cache", 3)
      .u32("lfm2moe.leading_dense_block_count", 2)
      .u32("lfm2moe.expert_count", 8)
      .u32("lfm2moe.expert_used_count", 2)
      .u32("lfm2moe.expert_feed_forward_length", 24)
      .u32("lfm2moe.vocab_size", 1000);
  const auto lm = load(l.save(test_dir() / "lfm2moe.gguf"));
  CHECK(lm.layers[0].mixer == Mixer::short_conv);
  CHECK(lm.layers[0].conv_state_elems == (3 - 1) * 64);
  CHECK(lm.layers[0].mlp == MlpKind::gated);
  CHECK(lm.layers[0].intermediate == 96);
  CHECK(lm.layers[2].kv == KvKind::full);
  CHECK(lm.layers[3].mlp == MlpKind::moe);
  CHECK(lm.layers[3].expert_intermediate == 24);
  const auto kv = kvtest::kv(lm, 1, ElemFormat::f16, ElemFormat::f16);
  CHECK(kv.kv_bytes_per_token == 2 * 16 * 2 * 2);
  CHECK(kv.state_bytes == 3 * 2 * 64 * 2);
  // in_proj 64 x 3*64 + out_proj 64 x 64 + conv 64 x 3 per conv layer
  CHECK(count_params(lm).parts[4].total() == 3 * (64 * 3 * 64 + 64 * 64 + 64 * 3));
}

TEST_CASE("falcon-h1: attention and Mamba2 side by side in every block, both caches kept", "[gguf]") {
  // llama.cpp src/models/falcon-h1.cpp and create_memory (both layer filters true): each of the 3 blocks keeps
  // its attention K/V (2 KV heads of 64 / 4 = 16) and a Mamba2 state (conv (4 - 1) x (128 + 2 x 1 x 16), ssm 128 x 16)
  Writer g;
  g.str("general.architecture", "falcon-h1")
      .u32("falcon-h1.block_count", 3)
      .u32("falcon-h1.context_length", 16384)
      .u32("falcon-h1.embedding_length", 64)
      .u32("falcon-h1.feed_forward_length", 96)
      .u32("falcon-h1.attention.head_count", 4)
      .u32("falcon-h1.attention.head_count_kv", 2)
      .u32("falcon-h1.ssm.conv_kernel", 4)
      .u32("falcon-h1.ssm.inner_size", 128)
      .u32("falcon-h1.ssm.state_size", 16)
      .u32("falcon-h1.ssm.time_step_rank", 8)
      .u32("falcon-h1.ssm.group_count", 1)
      .u32("falcon-h1.vocab_size", 1000);
  for (int i = 0; i < 3; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    // llama.cpp loads the MLP norm as blk.i.ffn_norm, without ".weight" (falcon-h1.cpp: tn(LLM_TENSOR_FFN_NORM, i))
    g.tensor(b + "attn_norm.weight", {64}, kvtest::T_F32).tensor(b + "ffn_norm", {64}, kvtest::T_F32);
    g.tensor(b + "ssm_norm.weight", {128, 1}, kvtest::T_F32).tensor(b + "ffn_up.weight", {64, 96}, kvtest::T_F16);
    g.tensor(b + "ffn_gate.weight", {64, 96}, kvtest::T_F16);
  }
  g.tensor("token_embd.weight", {64, 1000}, kvtest::T_F16);
  const auto m = load(g.save(test_dir() / "falcon-h1.gguf"));
  CHECK(m.warnings.empty());
  REQUIRE(m.layers.size() == 6);
  CHECK(decoder_layers(m.layers) == 3);
  CHECK(m.layers[0].mixer == Mixer::attention);
  CHECK(m.layers[0].mlp == MlpKind::none);
  CHECK(m.layers[1].mixer == Mixer::mamba2);
  CHECK(m.layers[1].joins_previous);
  CHECK(m.layers[1].mamba_gated_norm);
  CHECK(m.layers[1].mlp == MlpKind::gated);
  CHECK(m.layers[1].intermediate == 96);
  CHECK(m.layers[0].norms + m.layers[1].norms == 2);  // attn_norm and ffn_norm once per block
  CHECK(m.layers[1].conv_state_elems == 3 * (128 + 2 * 1 * 16));
  CHECK(m.layers[1].ssm_state_elems == 128 * 16);
  const auto kv = kvtest::kv(m, 1, ElemFormat::f16, ElemFormat::f16);
  CHECK(kv.kv_bytes_per_token == 3 * 2 * 16 * 2 * 2);
  CHECK(m.dtype == ElemFormat::f16);  // the reader's dtype without general.file_type
  CHECK(kv.state_bytes == 3 * (3 * (128 + 2 * 16) + 128 * 16) * 2);
  // the tensor table by block: 3 blocks + the input and output layers
  REQUIRE(m.exact_layer_bytes.size() == 3 + 2);
  CHECK(m.exact_layer_bytes[1] == 64 * 4 + 64 * 4 + 128 * 4 + 2 * 64 * 96 * 2);
}

TEST_CASE("an unknown architecture reads the generic keys with a warning", "[gguf]") {
  Writer w;
  w.str("general.architecture", "mynewarch")
      .u32("mynewarch.block_count", 2)
      .u32("mynewarch.context_length", 4096)
      .u32("mynewarch.embedding_length", 256)
      .u32("mynewarch.feed_forward_length", 512)
      .u32("mynewarch.attention.head_count", 4)
      .u32("mynewarch.attention.head_count_kv", 1)
      .u32("mynewarch.vocab_size", 1000);
  const auto m = load(w.save(test_dir() / "unknown.gguf"));
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0].rfind("unknown GGUF architecture 'mynewarch': assumed", 0) == 0);
  CHECK(m.layers[0].kv == KvKind::full);
  CHECK(kvtest::kv(m, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == 2 * 1 * 2 * 64 * 2);
}

TEST_CASE("architectures llama.cpp builds as plain full-attention decoders read without a warning", "[gguf]") {
  for (const char* arch : {"starcoder2", "phimoe", "chatglm"}) {
    const std::string a = arch;
    Writer w;
    w.str("general.architecture", a)
        .u32(a + ".block_count", 2)
        .u32(a + ".context_length", 4096)
        .u32(a + ".embedding_length", 256)
        .u32(a + ".feed_forward_length", 512)
        .u32(a + ".attention.head_count", 4)
        .u32(a + ".attention.head_count_kv", 2)
        .u32(a + ".vocab_size", 1000);
    const auto m = load(w.save(test_dir() / (a + ".gguf")));
    CHECK(m.warnings.empty());
    CHECK(m.layers[1].kv == KvKind::full);
    CHECK(kvtest::kv(m, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == 2 * 2 * 2 * 64 * 2);
  }
}

TEST_CASE("split models sum the tensor tables of every part", "[gguf]") {
  Writer first = tiny_llama();
  first.u32("split.no", 0).u32("split.count", 2).u32("split.tensors.count", 2);
  first.tensor("token_embd.weight", {256, 32}, T_F16);
  Writer second;
  second.u32("split.no", 1).u32("split.count", 2).u32("split.tensors.count", 2);
  second.tensor("blk.0.ffn_down.weight", {4096, 4096}, T_Q4_0);
  const std::string p1 = first.save(test_dir() / "split-00001-of-00002.gguf");
  const std::string p2 = second.save(test_dir() / "split-00002-of-00002.gguf");
  io::GgufInfo info;
  const auto m = load(p1, &info);
  CHECK(info.tensor_count == 2);
  CHECK(*m.exact_weight_bytes == 256 * 32 * 2 + 4096LL * 4096 / 32 * 18);
  CHECK(error_of(p2) == p2 + ": split.no: is 1: this is not the first split; pass the first part, " + p1);
  fs::remove(p2);
  CHECK(error_of(p1) == p2 + ": missing: split 2 of 2 of " + p1 + "; download every part of the model");
}

TEST_CASE("malformed files get exact errors naming the file and byte offset", "[gguf]") {
  SECTION("truncated header") {
    const std::string p = tiny_llama().save(test_dir() / "trunc.gguf");
    fs::resize_file(p, 11);
    CHECK(error_of(p) == p + ": truncated: tensor_count at byte 8 needs 8 bytes but the file ends at byte 11; "
                             "the file is incomplete; download it again");
  }
  SECTION("every cut of a header is reported as truncated") {
    Writer w = tiny_llama();
    w.tensor("token_embd.weight", {256, 32}, T_F16);
    const std::string whole = w.save(test_dir() / "cuts.gguf");
    const auto size = fs::file_size(whole);
    for (std::uintmax_t cut = 0; cut < size; cut += 7) {
      const fs::path p = test_dir() / "cut.gguf";
      fs::copy_file(whole, p, fs::copy_options::overwrite_existing);
      fs::resize_file(p, cut);
      const std::string e = error_of(p.string());
      INFO("cut at " << cut << ": " << e);
      CHECK(e.find(": truncated: ") != std::string::npos);
    }
  }
  SECTION("tensor data beyond the end of the file") {
    Writer w = tiny_llama();
    w.tensor("token_embd.weight", {256, 32}, T_F16);
    const std::string p = w.save(test_dir() / "short-data.gguf");
    const i64 end = static_cast<i64>(fs::file_size(p));
    fs::resize_file(p, end - 1);
    CHECK(error_of(p) == p + ": truncated: tensor 'token_embd.weight' data ends at byte " + std::to_string(end) +
                             " but the file ends at byte " + std::to_string(end - 1) +
                             "; the file is incomplete; download it again");
  }
  SECTION("bad magic") {
    const fs::path p = test_dir() / "magic.bin";
    std::ofstream(p, std::ios::binary) << "GGML and more";
    CHECK(error_of(p.string()) == p.string() + ": not a GGUF file: it starts with \"GGML\", expected \"GGUF\"; "
                                               "pass a .gguf model file (or a config.json / model folder)");
  }
  SECTION("unsupported version") {
    Writer w = tiny_llama();
    w.version = 1;
    const std::string p = w.save(test_dir() / "v1.gguf");
    CHECK(error_of(p) == p + ": unsupported GGUF version 1 at byte 4; supported: 2, 3; "
                             "convert the model again with a current llama.cpp");
  }
  SECTION("absurd string length") {
    Writer w;
    w.key("general.architecture", STR).put(1ULL << 40, 8);
    const std::string p = w.save(test_dir() / "long-string.gguf");
    const i64 at = 24 + 8 + 20 + 4;  // header, key length, "general.architecture", value type
    CHECK(error_of(p) == p + ": value of 'general.architecture' at byte " + std::to_string(at) +
                             ": string length 1099511627776 exceeds the limit of 16777216 bytes (16 MiB); "
                             "the file is corrupt or not a GGUF model");
  }
  SECTION("absurd array length") {
    Writer w;
    w.key("tokenizer.ggml.tokens", ARR).put(STR, 4).put(1ULL << 30, 8);
    const std::string p = w.save(test_dir() / "long-array.gguf");
    const i64 at = 24 + 8 + 21 + 4;  // header, key length, "tokenizer.ggml.tokens", value type
    CHECK(error_of(p) == p + ": array 'tokenizer.ggml.tokens' at byte " + std::to_string(at) +
                             ": 1073741824 items exceed the limit of 268435456; the file is corrupt or not a GGUF model");
  }
  SECTION("unknown metadata value type") {
    Writer w;
    w.key("x", 99);
    const std::string p = w.save(test_dir() / "bad-type.gguf");
    CHECK(error_of(p) == p + ": value type of 'x' at byte 33: unknown metadata value type 99; "
                             "the file is corrupt or not a GGUF model");  // 24 + 8 + 1
  }
  SECTION("unknown tensor type") {
    Writer w = tiny_llama();
    w.tensor("blk.0.attn_q.weight", {64, 64}, 99);
    const std::string p = w.save(test_dir() / "unknown-type.gguf");
    CHECK(error_of(p) == p + ": tensor 'blk.0.attn_q.weight' at byte " + std::to_string(w.infos_at()) +
                             ": unknown ggml type 99; this file uses a tensor type newer than kvplan's table "
                             "(ggml.h, ggml-common.h); re-quantise it with a listed type or update kvplan");
  }
  SECTION("bytes from the file are shown as printable ASCII") {
    Writer w = tiny_llama();
    w.tensor(std::string("bad\x01name\xff"), {64, 64}, 99);
    const std::string p = w.save(test_dir() / "unprintable.gguf");
    const std::string e = error_of(p);
    CHECK(e.rfind(p + ": tensor 'bad\\x01name\\xff' at byte ", 0) == 0);
  }
  SECTION("too many dimensions") {
    Writer w = tiny_llama();
    w.tensor("x", {2, 2, 2, 2, 2}, T_F32);
    const std::string p = w.save(test_dir() / "dims.gguf");
    CHECK(error_of(p) == p + ": tensor 'x' at byte " + std::to_string(w.infos_at()) +
                             ": n_dims 5 exceeds 4; the file is corrupt or not a GGUF model");
  }
  SECTION("rows of partial blocks") {
    Writer w = tiny_llama();
    w.tensor("x", {100, 2}, T_Q4_0);
    const std::string p = w.save(test_dir() / "partial-block.gguf");
    CHECK(error_of(p) == p + ": tensor 'x' at byte " + std::to_string(w.infos_at()) +
                             ": row of 100 elements is not a multiple of q4_0's block of 32; "
                             "the file is corrupt or not a GGUF model");
  }
  SECTION("absurd tensor count") {
    std::string bytes = "GGUF";
    le(bytes, 3, 4);        // version
    le(bytes, 2000000, 8);  // tensor_count
    le(bytes, 0, 8);        // metadata_kv_count
    const fs::path p = test_dir() / "many-tensors.gguf";
    std::ofstream(p, std::ios::binary) << bytes;
    CHECK(error_of(p.string()) == p.string() + ": tensor_count 2000000 at byte 8 exceeds the limit of 1000000; "
                                               "the file is corrupt or not a GGUF model");
  }
  SECTION("missing required key") {
    Writer w;
    w.str("general.architecture", "llama").u32("llama.block_count", 2).u32("llama.embedding_length", 256);
    const std::string p = w.save(test_dir() / "missing.gguf");
    CHECK(error_of(p) == p + ": llama.context_length: missing; expected integer in [1, 1099511627776]; llama.cpp "
                             "needs this key for architecture 'llama'; convert the model with a current "
                             "convert_hf_to_gguf.py");
  }
  SECTION("a multimodal projector") {
    Writer w;
    w.str("general.architecture", "clip");
    const std::string p = w.save(test_dir() / "mmproj.gguf");
    CHECK(error_of(p) == p + ": general.architecture: is \"clip\": this is a multimodal projector (mmproj) file, "
                             "not a language model; pass the model's own GGUF (llama-server -m), not its --mmproj file");
  }
  SECTION("a directory") {
    CHECK(error_of(test_dir().string()) ==
          test_dir().string() + ": is a directory, expected a .gguf file; name the file itself");
  }
}

TEST_CASE("corrupted headers fail with an input error, never a crash", "[gguf]") {
  Writer w = tiny_llama();
  w.u32("general.alignment", 64).tensor("token_embd.weight", {256, 32}, T_Q8_0).tensor("output.weight", {256, 32}, T_F16);
  const std::string whole = w.save(test_dir() / "fuzz-src.gguf");
  std::string bytes;
  {
    std::ifstream in(whole, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t header = w.header().size();  // corrupt only the header: the data is never read
  std::mt19937 rng(20240607);  // fixed seed: the same corruptions every run
  const fs::path p = test_dir() / "fuzz.gguf";
  int rejected = 0;
  for (int round = 0; round < 400; ++round) {
    std::string b = bytes;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) b[rng() % header] = static_cast<char>(rng() & 0xff);
    {
      std::ofstream out(p, std::ios::binary | std::ios::trunc);
      out.write(b.data(), static_cast<std::streamsize>(b.size()));
    }
    try {
      load(p.string());
    } catch (const InputError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 0);
}

// llama.cpp src/models/gemma4.cpp: sliding_window_pattern one bool per layer; sliding layers key_length_swa, full
// ones key_length; n_layer_kv_from_start = block_count - attention.shared_kv_layers, the later layers reading the last
// earlier cache of their type; a full layer with attn_k and no attn_v uses K as V (both cached).
TEST_CASE("gemma4 and gemma3n GGUFs: per-layer head sizes, KV-sharing layers, per-layer embeddings", "[gguf][gemma]") {
  Writer w;
  w.str("general.architecture", "gemma4")
      .u32("gemma4.block_count", 8)
      .u32("gemma4.context_length", 32768)
      .u32("gemma4.embedding_length", 128)
      .u32("gemma4.feed_forward_length", 512)
      .u32("gemma4.attention.head_count", 4)
      .arr_i32("gemma4.attention.head_count_kv", {2, 2, 2, 2, 2, 1, 2, 1})
      .u32("gemma4.attention.key_length", 64)
      .u32("gemma4.attention.value_length", 64)
      .u32("gemma4.attention.key_length_swa", 32)
      .u32("gemma4.attention.value_length_swa", 32)
      .u32("gemma4.attention.sliding_window", 128)
      .arr_bool("gemma4.attention.sliding_window_pattern", {true, true, true, true, true, false, true, false})
      .u32("gemma4.attention.shared_kv_layers", 2)
      .u32("gemma4.embedding_length_per_layer_input", 16)
      .u32("gemma4.vocab_size", 1000)
      .tensor("blk.5.attn_k.weight", {128, 64}, T_F16)
      .tensor("per_layer_token_embd.weight", {8 * 16, 1000}, T_F16);
  const auto m = load(w.save(test_dir() / "gemma4.gguf"));
  // the per-layer table is an input-layer tensor (LLM_TENSOR_LAYER_INPUT): host memory with token_embd
  CHECK(m.exact_layer_bytes.front() == 8 * 16 * 1000 * 2);
  CHECK(m.warnings.empty());
  CHECK(m.layers[0].kv == KvKind::sliding);
  CHECK(m.layers[0].k_head_dim == 32);
  CHECK(m.layers[5].kv == KvKind::full);
  CHECK(m.layers[5].k_head_dim == 64);
  CHECK(m.layers[5].kv_projections == 1);
  CHECK(m.layers[6].kv == KvKind::none);  // reads layer 4's cache
  CHECK(m.layers[7].kv == KvKind::none);  // reads layer 5's
  const auto kv = kvtest::kv(m, 2000, ElemFormat::f16, ElemFormat::f16);
  const i64 swa_row = 2 * 32 * 2 * 2, full_row = 1 * 64 * 2 * 2;  // KV heads x head size x (K, V) x f16
  CHECK(kv.kv_bytes_per_token == 5 * swa_row + full_row);
  CHECK(kv.sequence_kv_bytes == 5 * 128 * swa_row + 2000 * full_row);
  CHECK(m.ple_table == 1000LL * 8 * 16);
  CHECK(has_note(m, "layers 6-7 read the cache of the last earlier layer of their type"));

  // gemma3n: a period of 5 (layer il sliding when il % 5 < 4), and llama.cpp's fixed n_layer_kv_from_start of 20
  Writer n3;
  n3.str("general.architecture", "gemma3n")
      .u32("gemma3n.block_count", 22)
      .u32("gemma3n.context_length", 32768)
      .u32("gemma3n.embedding_length", 128)
      .u32("gemma3n.feed_forward_length", 512)
      .u32("gemma3n.attention.head_count", 4)
      .u32("gemma3n.attention.head_count_kv", 2)
      .u32("gemma3n.attention.key_length", 64)
      .u32("gemma3n.attention.value_length", 64)
      .u32("gemma3n.attention.sliding_window", 512)
      .u32("gemma3n.vocab_size", 1000);
  const auto g = load(n3.save(test_dir() / "gemma3n.gguf"));
  CHECK(g.layers[19].kv == KvKind::full);
  CHECK(g.layers[20].kv == KvKind::none);
  CHECK(g.layers[21].kv == KvKind::none);
  const auto kv3 = kvtest::kv(g, 4096, ElemFormat::f16, ElemFormat::f16);
  const i64 row = 2 * 64 * 2 * 2;
  CHECK(kv3.kv_bytes_per_token == 20 * row);
  CHECK(kv3.sequence_kv_bytes == (4 * 4096 + 16 * 512) * row);
}
