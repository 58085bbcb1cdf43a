// vLLM's per-row KV cache dtypes (TurboQuant presets, per-token-head int8 / fp8 / int4), the layers it keeps in the
// model dtype (--kv-cache-dtype-skip-layers, TurboQuant's boundary layers), the one KV cache group of layers whose
// pages differ (UniformTypeKVCacheSpecs), and the block size those layers raise (>= 0.25). Every figure is written
// out from vLLM's formulas, read at main 5ac2684 (2026-08-07):
//   turboquant/config.py    key_packed_size: fp8 D, else ceil(D x bits / 8) + 2; value_packed_size ceil(D x bits / 8) + 4;
//                           slot_size_aligned = slot + slot % 2; get_boundary_skip_layers: first and last min(2, L / 2)
//   v1/kv_cache_interface.py AttentionSpec.unpadded_page_size_bytes: + 2 x block x heads x 4 B of fp32 scales for the
//                           per-token-head modes; int4 halves the row; UniformTypeKVCacheSpecs: a block spans the sum
//                           of the layers' pages
//   platforms/interface.py  _align_heterogeneous_kv_block_size
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "helpers.hpp"
#include "kvplan/core/format.hpp"
#include "kvplan/core/kv.hpp"

using namespace kvplan;
using nlohmann::json;

namespace {

// Llama-3.1-8B: 32 layers, 8 KV heads of 128
constexpr i64 kLayers = 32, kHeads = 8, kD = 128;

json engine_of(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"plan", "llama-3.1-8b", "--gpu", "h100", "--max-model-len", "32768", "--format", "json"};
  all.insert(all.end(), args.begin(), args.end());
  const kvtest::Run r = kvtest::kvplan(all);
  INFO(r.err);
  REQUIRE(r.exit == 0);
  return json::parse(r.out)["results"]["engine"];
}

}  // namespace

TEST_CASE("vLLM per-row KV formats: bytes of one head's K and V rows", "[kv][vllm][turboquant]") {
  // per-token-head: the row plus one fp32 scale (int4 packs two values a byte)
  CHECK(row_bytes(ElemFormat::int8_pth, kD) == kD + 4);
  CHECK(row_bytes(ElemFormat::fp8_pth, kD) == kD + 4);
  CHECK(row_bytes(ElemFormat::int4_pth, kD) == kD / 2 + 4);
  // TurboQuant keys: fp8 D; 4-bit 64 + 2; 3-bit 48 + 2. Values: 4-bit 64 + 4; 3-bit 48 + 4
  CHECK(row_bytes(ElemFormat::tq_k8, kD) == 128);
  CHECK(row_bytes(ElemFormat::tq_k4, kD) == 66);
  CHECK(row_bytes(ElemFormat::tq_k3, kD) == 50);
  CHECK(row_bytes(ElemFormat::tq_v4, kD) == 68);
  CHECK(row_bytes(ElemFormat::tq_v3, kD) == 52);
  // a head size whose 3-bit row is not whole bytes: ceil(72 x 3 / 8) = 27
  CHECK(row_bytes(ElemFormat::tq_k3, 72) == 27 + 2);
  // the presets and their slot padding: k3v4 at D = 72 is 29 + 40 = 69 -> 70; at D = 128 118 stays
  const auto k3v4 = parse_turboquant("turboquant_k3v4_nc");
  REQUIRE(k3v4);
  CHECK(k3v4->k == ElemFormat::tq_k3);
  CHECK(k3v4->v == ElemFormat::tq_v4);
  CHECK(tq_slot_pad(k3v4->k, k3v4->v, 29, 40) == 1);
  CHECK(tq_slot_pad(k3v4->k, k3v4->v, 50, 68) == 0);
  CHECK(tq_slot_pad(ElemFormat::fp8_e4m3, ElemFormat::fp8_e4m3, 1, 2) == 0);  // only TurboQuant pads
  CHECK(kv_pair_name(k3v4->k, k3v4->v) == "turboquant_k3v4_nc");
  CHECK(kv_pair_name(ElemFormat::q8_0, ElemFormat::f16) == "q8_0/f16");
  CHECK(kv_pair_name(ElemFormat::bf16, ElemFormat::bf16) == "bf16");
  CHECK(!parse_format("turboquant_k8"));  // a half is no --kv-cache-dtype
  CHECK(parse_format("INT8_PER_TOKEN_HEAD") == ElemFormat::int8_pth);
}

TEST_CASE("TurboQuant: 28 quantised layers and the 4 boundary layers in bf16", "[kv][vllm][turboquant]") {
  auto m = kvtest::load("llama-3.1-8b");
  const auto kept = turboquant_boundary_layers(m);
  CHECK(kept == std::vector<i64>{0, 1, kLayers - 2, kLayers - 1});
  for (i64 i : kept) m.layers[static_cast<size_t>(i)].kv_model_dtype = true;
  KvOptions o;
  o.k_format = ElemFormat::tq_k8;
  o.v_format = ElemFormat::tq_v4;
  o.skip_format = ElemFormat::bf16;
  o.context = 1000;
  const KvResult r = compute_kv(m, o);
  // K: 4 x 8 x 128 x 2 + 28 x 8 x 128; V: 4 x 8 x 128 x 2 + 28 x 8 x (64 + 4)
  CHECK(r.k_bytes_per_token == 4 * kHeads * kD * 2 + 28 * kHeads * kD);
  CHECK(r.v_bytes_per_token == 4 * kHeads * kD * 2 + 28 * kHeads * 68);
  CHECK(r.sequence_kv_bytes == 1000 * (r.k_bytes_per_token + r.v_bytes_per_token));
  REQUIRE(r.groups.size() == 2);
}

TEST_CASE("vLLM TurboQuant pool: one group, blocks of 32 from 0.25, 16 before", "[engine][vllm][turboquant]") {
  const json auto_ = engine_of({"--engine", "vllm@0.26"});
  const i64 available = auto_["available_kv_bytes"].get<i64>();
  CHECK(auto_["block_size"] == 16);
  // k8v4: slot 128 + 68 = 196 B a head; bf16 layers 8 x 512 B a token. 0.26: the primary sized as a 1-byte cache
  // (2 x 128 x 8 = 2048 B a token) must cover 16 tokens of 4096 B: block 16 x cdiv(4096 x 16, 16 x 2048) = 32
  const json tq = engine_of({"--engine", "vllm@0.26", "--kv-cache-dtype", "turboquant_k8v4"});
  CHECK(tq["available_kv_bytes"] == available);
  {  // the JSON inputs name the preset (k_cache_type / v_cache_type keep its halves)
    const kvtest::Run r = kvtest::kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.26", "--kv-cache-dtype", "turboquant_k8v4", "--format", "json"});
    REQUIRE(r.exit == 0);
    const json in = json::parse(r.out)["inputs"];
    CHECK(in["kv_cache_dtype"] == "turboquant_k8v4");
    CHECK(in["k_cache_type"] == "turboquant_k8");
  }
  CHECK(tq["block_size"] == 32);
  CHECK(tq["kv_cache_groups"] == 1);
  const i64 block_bytes = 32 * (4 * kHeads * kD * 4 + 28 * kHeads * 196);
  CHECK(tq["num_gpu_blocks"] == available / block_bytes);
  // 0.22: the same group at the block size given
  const json tq22 = engine_of({"--engine", "vllm@0.22", "--kv-cache-dtype", "turboquant_3bit_nc"});
  CHECK(tq22["block_size"] == 16);
  const i64 slot3 = (48 + 2) + (48 + 4);
  CHECK(tq22["num_gpu_blocks"] == tq22["available_kv_bytes"].get<i64>() / (16 * (4 * kHeads * kD * 4 + 28 * kHeads * slot3)));
}

TEST_CASE("vLLM per-token-head caches: fp32 scales in the page", "[engine][vllm]") {
  const json i8 = engine_of({"--engine", "vllm@0.26", "--kv-cache-dtype", "int8_per_token_head"});
  CHECK(i8["block_size"] == 16);
  CHECK(i8["page_bytes_per_layer"] == 16 * kHeads * 2 * (kD + 4));  // 33,792
  CHECK(i8["num_gpu_blocks"] == i8["available_kv_bytes"].get<i64>() / (kLayers * 16 * kHeads * 2 * (kD + 4)));
  const json i4 = engine_of({"--engine", "vllm@0.26", "--kv-cache-dtype", "int4_per_token_head"});
  CHECK(i4["page_bytes_per_layer"] == 16 * kHeads * 2 * (kD / 2 + 4));  // 17,408
}

TEST_CASE("vLLM --kv-cache-dtype-skip-layers keeps the named layers in bf16", "[engine][vllm]") {
  // fp8 with layers 0 and 31 kept: 30 x 8 x 256 + 2 x 8 x 512 B a token; 0.26 raises the block to
  // 16 x cdiv(4096 x 16, 16 x 2048) = 32
  const json e = engine_of({"--engine", "vllm@0.26", "--kv-cache-dtype", "fp8", "--kv-cache-dtype-skip-layers", "0,31"});
  CHECK(e["block_size"] == 32);
  CHECK(e["num_gpu_blocks"] == e["available_kv_bytes"].get<i64>() / (32 * (30 * kHeads * 256 + 2 * kHeads * 512)));
  // int4_per_token_head: primary 8 x (64 + 4) x 2 = 1088 B a token: 16 x cdiv(4096 x 16, 16 x 1088) = 64
  const json i4 = engine_of({"--engine", "vllm@0.26", "--kv-cache-dtype", "int4_per_token_head", "--kv-cache-dtype-skip-layers", "5"});
  CHECK(i4["block_size"] == 64);
  const kvtest::Run p = kvtest::kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.26", "--kv-cache-dtype", "fp8",
                                        "--kv-cache-dtype-skip-layers", "0,31", "--format", "json"});
  REQUIRE(p.exit == 0);
  CHECK(json::parse(p.out)["inputs"]["kv_cache_dtype_skip_layers"] == json::array({"0", "31"}));
  // a deployment file may give the list as YAML (SettingDef::list): the same block and pool as the flag
  const std::string file = kvtest::write_temp("skip-layers", "deploy.yaml",
                                              "deployments:\n  - name: a\n    model: llama-3.1-8b\n    gpu: h100\n    engine: vllm@0.26\n"
                                              "    settings:\n      max_model_len: 32768\n      kv_cache_dtype: fp8\n      kv_cache_dtype_skip_layers: [0, \"31\"]\n");
  const kvtest::Run c = kvtest::kvplan({"check", file, "--format", "json"});
  INFO(c.err);
  REQUIRE(c.exit == 0);
  const json ce = json::parse(c.out)["results"]["deployments"][0]["engine"];
  CHECK(ce["block_size"] == 32);
  CHECK(ce["num_gpu_blocks"] == e["num_gpu_blocks"]);
  const std::string nested = kvtest::write_temp("skip-layers", "nested.yaml",
                                                "deployments:\n  - name: a\n    model: llama-3.1-8b\n    gpu: h100\n    engine: vllm@0.26\n"
                                                "    settings:\n      kv_cache_dtype_skip_layers: [[0]]\n");
  const kvtest::Run bad = kvtest::kvplan({"check", nested});
  CHECK(bad.exit == 2);
  CHECK_THAT(bad.err, Catch::Contains("nested list"));
  for (const auto& [item, why] : std::vector<std::pair<std::string, std::string>>{{"true", "true / false"}, {"\"\"", "an empty item"}, {"~", "an empty item"}, {"\"0,31\"", "an item holding a comma"}}) {
    const std::string f = kvtest::write_temp("skip-layers", "item.yaml",
                                             "deployments:\n  - name: a\n    model: llama-3.1-8b\n    gpu: h100\n    engine: vllm@0.26\n"
                                             "    settings:\n      kv_cache_dtype_skip_layers: [0, " + item + "]\n");
    const kvtest::Run r = kvtest::kvplan({"check", f});
    CHECK(r.exit == 2);
    CHECK_THAT(r.err, Catch::Contains("not " + why));
  }
  // the list changes nothing under auto
  const json a = engine_of({"--engine", "vllm@0.26", "--kv-cache-dtype-skip-layers", "3"});
  CHECK(a["block_size"] == 16);
  CHECK(a["page_bytes_per_layer"] == 16 * kHeads * 512);
}

TEST_CASE("vLLM refuses the per-row dtypes where its backends do", "[engine][vllm][turboquant]") {
  auto err = [](const std::vector<std::string>& args) {
    const kvtest::Run r = kvtest::kvplan(args);
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    return r.err;
  };
  CHECK_THAT(err({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.19", "--kv-cache-dtype", "turboquant_k8v4"}),
             Catch::Contains("not a --kv-cache-dtype choice of vLLM 0.19"));
  CHECK_THAT(err({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.24", "--kv-cache-dtype", "int4_per_token_head"}),
             Catch::Contains("from 0.25"));
  CHECK_THAT(err({"plan", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--engine", "vllm", "--kv-cache-dtype", "int8_per_token_head"}),
             Catch::Contains("no MLA attention backend"));
  // gpt-oss: sinks, which no skip list mends, come first; Gemma 3: sliding layers, whose bf16 pages TurboQuant's slot
  // pages do not divide when skipped by index, and "sliding_window" breaks TurboQuant's sort of the list (key=int)
  CHECK_THAT(err({"plan", "gpt-oss-20b", "--gpu", "h100", "--engine", "vllm", "--kv-cache-dtype", "turboquant_4bit_nc"}),
             Catch::Contains("refuses attention sinks"));
  CHECK_THAT(err({"plan", "gemma-3-27b-it", "--gpu", "h100", "--engine", "vllm", "--kv-cache-dtype", "turboquant_4bit_nc", "--kv-cache-dtype-skip-layers", "0"}),
             Catch::Contains("refuses sliding-window layers"));
  CHECK_THAT(err({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--kv-cache-dtype", "turboquant_k8v4", "--kv-cache-dtype-skip-layers", "sliding_window"}),
             Catch::Contains("int('sliding_window') fails"));
  // int4_per_token_head on sliding-window layers: vllm#48842 (the sliding page budgeted at 2D + 8)
  CHECK_THAT(err({"plan", "gemma-3-27b-it", "--gpu", "h100", "--engine", "vllm", "--kv-cache-dtype", "int4_per_token_head"}),
             Catch::Contains("vllm#48842"));
  // vLLM compares str(layer index): "03" names no layer
  CHECK_THAT(err({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--kv-cache-dtype", "fp8", "--kv-cache-dtype-skip-layers", "03"}),
             Catch::Contains("write 3"));
  CHECK_THAT(err({"kv", "llama-3.1-8b", "--cache-type-k", "turboquant_k8v4"}), Catch::Contains("give it as --kv-dtype turboquant_k8v4"));
  // >= 0.25: a kept full-attention layer beside padded sliding-window pages fails unify's page assertion (0.24 starts)
  CHECK_THAT(err({"plan", "gemma-3-27b-it", "--gpu", "h100", "--engine", "vllm@0.26", "--kv-cache-dtype", "fp8", "--kv-cache-dtype-skip-layers", "5"}),
             Catch::Contains("does not start"));
  CHECK(kvtest::kvplan({"plan", "gemma-3-27b-it", "--gpu", "h100", "--engine", "vllm@0.24", "--kv-cache-dtype", "fp8", "--kv-cache-dtype-skip-layers", "5"}).exit == 0);
  // TurboQuant: chunked local attention (Llama 4) has no TurboQuant page; a hybrid with a skip list starts on 0.21-0.24
  CHECK_THAT(err({"plan", "llama-4-scout-17b-16e", "--gpu", "h100", "--tp", "4", "--engine", "vllm", "--kv-cache-dtype", "turboquant_k8v4"}),
             Catch::Contains("chunked local attention"));
  CHECK(kvtest::kvplan({"plan", "qwen3-next-80b-a3b-thinking", "--gpu", "h100", "--tp", "4", "--engine", "vllm@0.22", "--kv-cache-dtype", "turboquant_k8v4",
                        "--kv-cache-dtype-skip-layers", "3"}).exit == 0);
  CHECK_THAT(err({"plan", "qwen3-next-80b-a3b-thinking", "--gpu", "h100", "--tp", "4", "--engine", "vllm@0.26", "--kv-cache-dtype", "turboquant_k8v4",
                  "--kv-cache-dtype-skip-layers", "3"}),
             Catch::Contains("cannot unify"));
  CHECK_THAT(err({"kv", "deepseek-v2-lite", "--kv-dtype", "turboquant_k8v4"}), Catch::Contains("no MLA attention backend"));
  // kvplan kv (no engine) asks the same model-side question as plan (check_turboquant_model)
  // both note a head size TurboQuant's rotation is not built for (GPT-NeoX-20B: 96)
  const kvtest::Run nk = kvtest::kvplan({"kv", "gpt-neox-20b", "--kv-dtype", "turboquant_k8v4"});
  CHECK(nk.exit == 0);
  CHECK_THAT(nk.out, Catch::Contains("head size 96 is not a power of two"));
  CHECK_THAT(kvtest::kvplan({"plan", "gpt-neox-20b", "--gpu", "h100", "--engine", "vllm", "--kv-cache-dtype", "turboquant_k8v4"}).out,
             Catch::Contains("head size 96 is not a power of two"));
  // ... but not the dtype: vLLM runs a float32 checkpoint (OLMo-2 7B) in bf16, which TurboQuant takes
  CHECK(kvtest::kvplan({"kv", std::string(KVPLAN_TEST_DATA) + "/configs/olmo-2-1124-7b.json", "--kv-dtype", "turboquant_k8v4"}).exit == 0);
  CHECK(kvtest::kvplan({"plan", std::string(KVPLAN_TEST_DATA) + "/configs/olmo-2-1124-7b.json", "--gpu", "h100", "--engine", "vllm", "--kv-cache-dtype",
                        "turboquant_k8v4", "--max-model-len", "4096"}).exit == 0);
  CHECK_THAT(err({"kv", "llama-4-scout-17b-16e", "--kv-dtype", "turboquant_k8v4"}), Catch::Contains("chunked local attention"));
  CHECK_THAT(err({"kv", "gpt-oss-20b", "--kv-dtype", "turboquant_4bit_nc"}), Catch::Contains("refuses attention sinks"));
  CHECK_THAT(err({"kv", "gemma-3-27b-it", "--kv-dtype", "turboquant_4bit_nc"}), Catch::Contains("refuses sliding-window layers"));
  CHECK_THAT(err({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--kv-cache-dtype", "nvfp4"}),
             Catch::Contains("SM 10.x"));
  CHECK_THAT(err({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "sglang", "--kv-cache-dtype", "turboquant_k8v4"}),
             Catch::Contains("is a vLLM KV cache dtype"));
  CHECK_THAT(err({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--kv-cache-dtype", "fp8", "--kv-cache-dtype-skip-layers", "32"}),
             Catch::Contains("neither a layer index (0-31) nor sliding_window"));
}

TEST_CASE("vLLM >= 0.25: sliding-window layers pad to the shared page, MLA aligns at its kernel block", "[engine][vllm]") {
  auto plan = [](const std::vector<std::string>& args) {
    const kvtest::Run r = kvtest::kvplan(args);
    INFO(r.err);
    REQUIRE(r.exit == 0);
    return json::parse(r.out)["results"]["engine"];
  };
  // Gemma 3 27B: 62 layers, every sixth full (10), 16 KV heads of 128: fp8 4,096 B a token, bf16 8,192. fp8 with the
  // sliding layers kept in bf16: the full (fp8) layers' block rises to 32 (a 131,072 B page covers 16 bf16 tokens),
  // the sliding layers keep 16 tokens in a page of the same 131,072 B: one block spans 62 pages of 131,072 B, as 0.24
  // gets by raising the fp8 block instead (unify_kv_cache_spec_page_size)
  const json e26 = plan({"plan", "gemma-3-27b-it", "--gpu", "h100", "--engine", "vllm@0.26", "--kv-cache-dtype", "fp8", "--kv-cache-dtype-skip-layers",
                         "sliding_window", "--max-model-len", "32768", "--format", "json"});
  const json e24 = plan({"plan", "gemma-3-27b-it", "--gpu", "h100", "--engine", "vllm@0.24", "--kv-cache-dtype", "fp8", "--kv-cache-dtype-skip-layers",
                         "sliding_window", "--max-model-len", "32768", "--format", "json"});
  CHECK(e26["page_bytes_per_layer"] == 32 * 16 * 128 * 2);
  CHECK(e26["num_gpu_blocks"] == e26["available_kv_bytes"].get<i64>() / (131072LL * e26["layers_per_group"].get<i64>()));
  CHECK(e26["num_gpu_blocks"] == e24["num_gpu_blocks"]);
  // DeepSeek-V2-Lite on an H100 (FlashMLA, kernel block 64): fp8 latents of 576 B, one layer kept at 1,152 B:
  // block 64 x cdiv(1152 x 64, 64 x 576) = 128
  const json mla = plan({"plan", "deepseek-v2-lite", "--gpu", "h100", "--engine", "vllm@0.26", "--kv-cache-dtype", "fp8",
                         "--kv-cache-dtype-skip-layers", "0", "--max-model-len", "32768", "--format", "json"});
  CHECK(mla["block_size"] == 128);
  CHECK(mla["num_gpu_blocks"] == mla["available_kv_bytes"].get<i64>() / (128 * (1152 + 26 * 576)));
}

TEST_CASE("vLLM: a kept sparse-MLA layer caches its latent in bf16, not the fp8_ds_mla record", "[engine][vllm]") {
  // DeepSeek-V3.2 fp8: 656 B records (512 fp8 + 4 x fp32 scales + 64 x bf16 rope) and a 132 B indexer key a token and
  // layer; layer 0 kept: (512 + 64) x 2 + 132 B
  const kvtest::Run r = kvtest::kvplan({"plan", "deepseek-v3.2", "--gpu", "h200", "--tp", "8", "--engine", "vllm@0.24", "--kv-cache-dtype", "fp8",
                                        "--kv-cache-dtype-skip-layers", "0", "--max-model-len", "32768", "--format", "json"});
  REQUIRE(r.exit == 0);
  const json e = json::parse(r.out)["results"]["engine"];
  const i64 layers = e["layers_per_group"].get<i64>();
  CHECK(e["num_gpu_blocks"] == e["available_kv_bytes"].get<i64>() / (e["block_size"].get<i64>() * ((layers - 1) * (656 + 132) + (1152 + 132))));
}
