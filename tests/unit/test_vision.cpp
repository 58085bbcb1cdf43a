// Vision towers counted module by module from vision_config (planner/src/io/vision_config.cpp).
// Each expected count is a hand sum from the config's numbers, written as arithmetic with the module
// it stands for, and, where one is published, checked against the published parameter count.
#include <catch2/catch.hpp>

#include "cli_run.hpp"
#include "plan_helpers.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/json_read.hpp"

using kvplan::i64;

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// |a - b| <= tol: published counts are rounded to the million
bool near(i64 a, i64 b, i64 tol) { return (a > b ? a - b : b - a) <= tol; }

std::string with_top(const std::string& config_name, const std::string& key, const kvplan::io::json& value) {
  auto j = kvplan::io::parse_json_file(kvtest::data("configs/" + config_name + ".json"));
  j[key] = value;
  return j.dump();
}

}  // namespace

TEST_CASE("Qwen2.5-VL ViT counted exactly", "[hf][vision]") {
  const auto m = kvtest::load("qwen2.5-vl-7b-instruct");
  // vision_config: depth 32, hidden 1280, intermediate 3420, patch 14, temporal 2, merge 2, out 3584
  const i64 patch = 3 * 2 * 14 * 14 * 1280;  // Conv3d, no bias
  const i64 block = 2 * 1280                  // norm1 + norm2 (RMSNorm, weight only)
                    + (1280 * 3 * 1280 + 3 * 1280) + (1280 * 1280 + 1280)  // qkv + proj with bias
                    + 2 * (1280 * 3420 + 3420) + (3420 * 1280 + 1280);     // gate, up, down with bias
  const i64 merger = 1280 + (5120 * 5120 + 5120) + (5120 * 3584 + 3584);  // ln_q (RMSNorm) + 2 Linears
  CHECK(m.vision.params == patch + 32 * block + merger);
  // Qwen2.5-VL Technical Report (arXiv 2502.13923), Table 1: the ViT has 675M parameters
  CHECK(near(m.vision.params, 675'000'000, 2'000'000));
  CHECK(starts_with(m.vision.basis, "exact: Qwen2.5-VL ViT, 32 blocks of width 1280"));
  // out_hidden_size absent: Qwen2_5_VLVisionConfig's default 3584, this model's text width anyway
  auto j = kvplan::io::parse_json_file(kvtest::data("configs/qwen2.5-vl-7b-instruct.json"));
  j["vision_config"].erase("out_hidden_size");
  CHECK(kvtest::from_text(j.dump()).vision.params == m.vision.params);
}

TEST_CASE("Qwen2-VL ViT counted exactly", "[hf][vision]") {
  // Qwen/Qwen2-VL-7B-Instruct vision_config (embed_dim 1280, mlp_ratio 4, hidden_size 3584 = text width)
  const auto vc = kvplan::io::json::parse(R"({"depth":32,"embed_dim":1280,"mlp_ratio":4,"num_heads":16,
      "in_chans":3,"hidden_size":3584,"patch_size":14,"spatial_merge_size":2,"temporal_patch_size":2})");
  auto text = with_top("qwen2.5-vl-7b-instruct", "vision_config", vc);
  auto j = kvplan::io::json::parse(text);
  j["model_type"] = "qwen2_vl";
  const auto m = kvtest::from_text(j.dump());
  const i64 block = 2 * 2 * 1280                                           // 2 LayerNorms
                    + (1280 * 3840 + 3840) + (1280 * 1280 + 1280)          // qkv + proj with bias
                    + (1280 * 5120 + 5120) + (5120 * 1280 + 1280);         // fc1 + fc2 (mlp_ratio 4)
  const i64 merger = 2 * 1280 + (5120 * 5120 + 5120) + (5120 * 3584 + 3584);  // ln_q LayerNorm + 2 Linears
  CHECK(m.vision.params == 3 * 2 * 14 * 14 * 1280 + 32 * block + merger);
  // Qwen2-VL paper (arXiv 2409.12191), Table 1: a 675M-parameter ViT across sizes
  CHECK(near(m.vision.params, 675'000'000, 2'000'000));
  CHECK(starts_with(m.vision.basis, "exact: Qwen2-VL ViT"));
}

TEST_CASE("Qwen3-VL ViT counted exactly with its deepstack mergers", "[hf][vision]") {
  const auto m = kvtest::load("qwen3-vl-8b-instruct");
  // vision_config: depth 27, hidden 1152, intermediate 4304, patch 16, temporal 2, merge 2,
  // 2304 positions, out 4096, deepstack_visual_indexes [8, 16, 24]
  const i64 patch = 3 * 2 * 16 * 16 * 1152 + 1152;  // Conv3d with bias
  const i64 pos = 2304 * 1152;
  const i64 block = 2 * 2 * 1152 + 4 * (1152 * 1152) + 4 * 1152  // 2 LayerNorms, qkv + proj with bias
                    + (1152 * 4304 + 4304) + (4304 * 1152 + 1152);
  const i64 mlp = (4608 * 4608 + 4608) + (4608 * 4096 + 4096);  // merged width 1152 * 2 * 2
  const i64 merger = 2 * 1152 + mlp, deepstack = 3 * (2 * 4608 + mlp);
  CHECK(m.vision.params == patch + pos + 27 * block + merger + deepstack);
  CHECK(starts_with(m.vision.basis, "exact: Qwen3-VL ViT, 27 blocks"));
  // a trimmed vision_config without the deepstack and position keys takes the config class's defaults
  auto j = kvplan::io::parse_json_file(kvtest::data("configs/qwen3-vl-8b-instruct.json"));
  j["vision_config"].erase("deepstack_visual_indexes");
  j["vision_config"].erase("num_position_embeddings");
  CHECK(kvtest::from_text(j.dump()).vision.params == m.vision.params);
}

TEST_CASE("Gemma 3 SigLIP tower and projector counted exactly", "[hf][vision]") {
  const auto m = kvtest::load("gemma-3-27b-it");
  // vision_config: SigLIP hidden 1152, intermediate 4304, 27 layers, patch 14, image 896, no head
  const i64 embed = (3 * 14 * 14 * 1152 + 1152) + (896 / 14) * (896 / 14) * 1152;  // conv with bias + positions
  const i64 block = 2 * 2 * 1152 + 4 * (1152 * 1152 + 1152) + (1152 * 4304 + 4304) + (4304 * 1152 + 1152);
  const i64 tower = embed + 27 * block + 2 * 1152;  // + post_layernorm
  const i64 projector = 1152 * 5376 + 1152;        // mm_input_projection_weight + mm_soft_emb_norm
  CHECK(m.vision.params == tower + projector);
  // Gemma 3 Technical Report (arXiv 2503.19786), Table 1: vision encoder 417M parameters
  CHECK(near(m.vision.params - projector, 417'000'000, 500'000));
  CHECK(starts_with(m.vision.basis, "exact: Gemma 3 SigLIP, 27 blocks of width 1152"));
}

TEST_CASE("LLaVA CLIP tower and projector counted exactly", "[hf][vision]") {
  const auto m = kvtest::load("llava-1.5-7b");
  // vision_config: CLIP ViT-L/14-336, hidden 1024, intermediate 4096, 24 layers; text width 4096
  const i64 embed = 1024 + 3 * 14 * 14 * 1024 + (24 * 24 + 1) * 1024;  // class + conv (no bias) + positions
  const i64 block = 2 * 2 * 1024 + 4 * (1024 * 1024 + 1024) + (1024 * 4096 + 4096) + (4096 * 1024 + 1024);
  const i64 tower = embed + 2 * 2 * 1024 + 24 * block;  // pre_layrnorm + post_layernorm
  const i64 projector = (1024 * 4096 + 4096) + (4096 * 4096 + 4096);
  CHECK(m.vision.params == tower + projector);
  // CLIP ViT-L/14 image encoder: 304M parameters (EVA-CLIP, arXiv 2303.15389, Table 1)
  CHECK(near(tower, 304'000'000, 1'000'000));
  CHECK(starts_with(m.vision.basis, "exact: LLaVA CLIP, 24 blocks"));

  // LLaVA-NeXT adds image_newline, one text-width vector
  const auto next = kvtest::from_text(with_top("llava-1.5-7b", "model_type", "llava_next"));
  CHECK(next.vision.params == tower + projector + 4096);
  // no projector biases
  const auto nobias = kvtest::from_text(with_top("llava-1.5-7b", "multimodal_projector_bias", false));
  CHECK(nobias.vision.params == tower + projector - 2 * 4096);
}

TEST_CASE("Llama 3.2 Vision encoder counted exactly", "[hf][vision]") {
  const auto m = kvtest::load("llama-3.2-11b-vision");
  // vision_config: hidden 1280, intermediate 5120, 32 local + 8 global layers, patch 14, image 448,
  // 4 tiles, 8 aspect ratios, vision_output_dim 7680; text width 4096
  const i64 n = (448 / 14) * (448 / 14) + 1;  // patches + class token
  const i64 embed = 3 * 14 * 14 * 1280 + 1280  // conv (no bias) + class embedding
                    + 1 + n * 1280 + 9 * 4 * n * 1280  // gated position embedding: gate, table, tile table
                    + 2 * (9 * 4 * 1280 + 1)           // pre/post tile embeddings with gates
                    + 2 * 2 * 1280;                    // layernorm_pre, layernorm_post
  const i64 layer = 2 * 2 * 1280 + 4 * 1280 * 1280 + (1280 * 5120 + 5120) + (5120 * 1280 + 1280);
  const i64 projector = 7680 * 4096 + 4096;
  CHECK(m.vision.params == embed + 32 * layer + 8 * (layer + 2) + projector);
  CHECK(starts_with(m.vision.basis, "exact: Llama 3.2 Vision ViT, 32 local + 8 gated global layers"));
}

TEST_CASE("Llama 4 vision encoder counted exactly", "[hf][vision]") {
  const auto m = kvtest::load("llama-4-scout-17b-16e");
  // vision_config: hidden 1408, intermediate 5632, 34 layers, patch 14, image 336, projector 4096/4096,
  // vision_output_dim 4096; text width 5120
  const i64 embed = 3 * 14 * 14 * 1408 + 1408 + (24 * 24 + 1) * 1408 + 2 * 2 * 1408;
  const i64 layer = 2 * 2 * 1408 + 4 * (1408 * 1408 + 1408) + (1408 * 5632 + 5632) + (5632 * 1408 + 1408);
  const i64 adapter = 5632 * 4096 + 4096 * 4096, projector = 4096 * 5120;
  CHECK(m.vision.params == embed + 34 * layer + adapter + projector);
  CHECK(starts_with(m.vision.basis, "exact: Llama 4 ViT, 34 layers"));
  // a key the exact count needs is missing: the labelled estimate, saying why
  auto j = kvplan::io::parse_json_file(kvtest::data("configs/llama-4-scout-17b-16e.json"));
  j["vision_config"].erase("projector_input_dim");
  const auto est = kvtest::from_text(j.dump());
  CHECK(starts_with(est.vision.basis, "estimate: generic ViT"));
  CHECK(est.vision.basis.find("not counted exactly: config.json: /vision_config/projector_input_dim: missing") != std::string::npos);
}

TEST_CASE("Pixtral towers counted exactly (LLaVA format and Mistral 3)", "[hf][vision]") {
  // mistral-community/pixtral-12b vision_config: Pixtral, hidden 1024, intermediate 4096, 24 layers, patch 16
  const auto pix = kvplan::io::json::parse(R"({"model_type":"pixtral","hidden_size":1024,"intermediate_size":4096,
      "num_hidden_layers":24,"num_attention_heads":16,"head_dim":64,"patch_size":16,"image_size":1024})");
  const i64 layer = 2 * 1024 + 4 * 1024 * 1024 + 3 * 1024 * 4096;  // 2 RMSNorms, q/k/v/o, gate/up/down: no biases
  const i64 tower = 3 * 16 * 16 * 1024 + 1024 + 24 * layer;           // conv without bias + ln_pre
  // Pixtral 12B report (arXiv 2410.07073): a 400M-parameter vision encoder
  CHECK(near(tower, 400'000'000, 5'000'000));
  const auto llava = kvtest::from_text(with_top("llava-1.5-7b", "vision_config", pix));  // text width 4096
  CHECK(llava.vision.params == tower + (1024 * 4096 + 4096) + (4096 * 4096 + 4096));
  CHECK(starts_with(llava.vision.basis, "exact: LLaVA Pixtral, 24 layers"));

  // Mistral 3 (Mistral-Small-3.1 layout): spatial_merge_size 2, projector without biases by default
  auto j = kvplan::io::json::parse(with_top("llava-1.5-7b", "vision_config", pix));
  j["model_type"] = "mistral3";
  j["text_config"]["model_type"] = "mistral";
  j["text_config"]["hidden_size"] = 5120;
  j["text_config"]["num_hidden_layers"] = 40;
  j["text_config"]["num_attention_heads"] = 32;
  j["text_config"]["num_key_value_heads"] = 8;
  j["text_config"]["head_dim"] = 128;
  j["text_config"]["intermediate_size"] = 32768;
  const auto m3 = kvtest::from_text(j.dump());
  const i64 projector = 1024                // norm (RMSNorm)
                        + 4096 * 1024       // patch_merger.merging_layer (1024 x 2 x 2 -> 1024)
                        + 1024 * 5120 + 5120 * 5120;  // linear_1, linear_2 without biases
  CHECK(m3.vision.params == tower + projector);
  CHECK(starts_with(m3.vision.basis, "exact: Mistral 3 Pixtral"));
}

TEST_CASE("unknown vision families keep the labelled estimate", "[hf][vision]") {
  // a flat config whose model_type kvplan reads as text but whose vision tower it does not count
  const auto m = kvtest::from_text(with_top("qwen2.5-vl-7b-instruct", "model_type", "qwen2"));
  CHECK(m.vision.present);
  CHECK(starts_with(m.vision.basis, "estimate: generic ViT"));
}

TEST_CASE("the vision part of the weights is the counted tower", "[hf][vision][weights]") {
  const auto m = kvtest::load("gemma-3-27b-it");
  const auto w = kvplan::count_params(m);
  CHECK(w.total - w.text_total == m.vision.params);
}

// ---- vLLM's encoder cache in the profiled peak (planner/src/core/plan.cpp vllm_mm_encoder_bytes) ----

namespace {

kvplan::Planner vllm_plan(const std::string& model, i64 image_limit = -1, i64 max_seqs = 0, i64 batched = 0) {
  auto e = kvtest::engine(kvplan::EngineKind::vllm);
  e.mm_image_limit = image_limit;
  e.max_num_seqs = max_seqs;
  e.max_num_batched_tokens = batched;
  return kvplan::Planner(kvtest::spec(model, "h100-sxm", e));
}

}  // namespace

TEST_CASE("vLLM reserves the encoder cache it profiles for image models", "[plan][vision]") {
  // LLaVA-1.5: 336 / 14 = 24, 24 x 24 = 576 embeddings an image (CLS dropped); text width 4096, f16.
  // h100-sxm defaults: max_num_batched_tokens 8192, max_num_seqs 1024, max_model_len 4096:
  // 8192 // 576 = 14 images; the decoder bound 1024 x min(999, 4096 // 576 = 7) is larger
  const auto llava = vllm_plan("llava-1.5-7b");
  CHECK(llava.budget_bytes("mm_encoder_cache") == 14LL * 576 * 4096 * 2);
  // Gemma 3: mm_tokens_per_image 256, text width 5376, bf16: 8192 // 256 = 32 images
  CHECK(vllm_plan("gemma-3-27b-it").budget_bytes("mm_encoder_cache") == 32LL * 256 * 5376 * 2);

  // '{"image": 0}': text-only, no encoder profiling, and the KV pool gets those bytes back
  const auto text_only = vllm_plan("llava-1.5-7b", 0);
  CHECK(text_only.budget_bytes("mm_encoder_cache") == 0);
  CHECK(text_only.budget_bytes("kv_cache_available") - llava.budget_bytes("kv_cache_available") == 14LL * 576 * 4096 * 2);

  // the decoder bound: 2 sequences x 1 image a prompt = 2 images (< 14)
  CHECK(vllm_plan("llava-1.5-7b", 1, 2).budget_bytes("mm_encoder_cache") == 2LL * 576 * 4096 * 2);
  // a token budget below one image still holds one: max(512, 576) // 576 = 1
  CHECK(vllm_plan("llava-1.5-7b", -1, 0, 512).budget_bytes("mm_encoder_cache") == 1LL * 576 * 4096 * 2);

  // not modelled: Qwen2.5-VL's image size comes from its processor (no term); other engines
  CHECK(vllm_plan("qwen2.5-vl-7b-instruct").budget_bytes("mm_encoder_cache") == 0);
  auto sg = kvtest::engine(kvplan::EngineKind::sglang);
  CHECK(kvplan::Planner(kvtest::spec("llava-1.5-7b", "h100-sxm", sg)).budget_bytes("mm_encoder_cache") == 0);
}

TEST_CASE("vLLM --limit-mm-per-prompt from a kvplan flag or a pasted vLLM command, in each version's form", "[front-doors][vision]") {
  using nlohmann::json;
  auto term = [](const kvtest::Run& r) -> long long {
    INFO(r.err);
    REQUIRE(r.exit == 0);
    const json j = json::parse(r.out);  // kept alive while the loop walks it
    for (const auto& t : j["results"]["budget"])
      if (t["term"] == "mm_encoder_cache") return t["bytes"].get<long long>();
    return 0;
  };
  // LLaVA-1.5 on h100-sxm: 14 images x 576 embeddings x 4096 x 2 B by default (see the case above);
  // one image a prompt with 8 sequences: min(14, 8 x 1) = 8 images
  const long long eight = 8LL * 576 * 4096 * 2;
  const std::vector<std::string> base = {"plan", "llava-1.5-7b", "--context", "2k", "--format", "json"};
  auto with = [&](std::vector<std::string> more) {
    auto a = base;
    a.insert(a.end(), more.begin(), more.end());
    return kvtest::kvplan(a);
  };
  CHECK(term(with({})) == 14LL * 576 * 4096 * 2);
  CHECK(term(with({"--max-num-seqs", "8", "--limit-mm-per-prompt", R"({"image": 1})"})) == eight);
  CHECK(term(with({"--", "vllm", "serve", "m", "--max-num-seqs", "8", "--limit-mm-per-prompt", R"({"image":{"count":1}})"})) == eight);
  // vLLM 0.8.3 takes key=value pairs
  CHECK(term(with({"--engine", "vllm@0.8.3", "--max-num-seqs", "8", "--limit-mm-per-prompt", "image=1,video=0"})) == eight);
  // text-only: no encoder profiling; inputs record the count given
  const auto text_only = with({"--limit-mm-per-prompt", R"({"image": 0})"});
  CHECK(term(text_only) == 0);
  CHECK(json::parse(text_only.out)["inputs"]["limit_mm_per_prompt_image"] == 0);
}
