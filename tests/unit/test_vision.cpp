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

  // not modelled: other engines
  auto sg = kvtest::engine(kvplan::EngineKind::sglang);
  CHECK(kvplan::Planner(kvtest::spec("llava-1.5-7b", "h100-sxm", sg)).budget_bytes("mm_encoder_cache") == 0);
}

namespace {

// a vLLM plan of a config given as text (the families built from a shipped config with a key changed)
kvplan::Planner vllm_plan_text(const std::string& text, i64 max_model_len = 0, i64 video_limit = -1,
                               i64 max_pixels = 0) {
  auto e = kvtest::engine(kvplan::EngineKind::vllm);
  e.max_model_len = max_model_len;
  e.mm_video_limit = video_limit;
  e.mm_max_pixels = max_pixels;
  kvplan::PlanSpec s = kvtest::spec("llava-1.5-7b", "h100-sxm", kvtest::engine(kvplan::EngineKind::vllm));
  s.model = kvtest::from_text(text);
  s.kv.state_format = s.model.dtype;
  s.engine = kvplan::resolve_engine_defaults(e, s.model.max_context, 1, s.gpu.memory_bytes, s.gpu.architecture);
  return kvplan::Planner(s);
}

std::string file_text(const std::string& config_name) {
  return kvplan::io::parse_json_file(kvtest::data("configs/" + config_name + ".json")).dump();
}

}  // namespace

// Each family's largest item as vLLM's processor code sizes it (planner/src/io/vision_config.cpp cites the
// file of each). h100-sxm defaults throughout: max_num_batched_tokens 8192, max_num_seqs 1024.
TEST_CASE("vLLM encoder cache for Qwen2.5-VL: the largest image, or a video of up to 14 frames", "[plan][vision]") {
  const std::string cfg = file_text("qwen2.5-vl-7b-instruct");
  // qwen2_vl.py get_image_size_with_most_features: smart_resize(9999999, 9999999, factor 14 x 2 = 28,
  // max_pixels 12845056 from Qwen2.5-VL's preprocessor_config.json): sqrt = 3584 = 128 x 28, so 3584 x 3584;
  // _get_vision_info: (3584 / 14)^2 patches // 2^2 = 256 x 256 / 4 = 16384 tokens an image
  const i64 image = (3584 / 14) * (3584 / 14) / 4;
  CHECK(image == 16384);
  // get_max_video_tokens, one video: frames while grid_t x 16384 <= max_model_len 128000 (the config's
  // max_position_embeddings), at most 14 (_MAX_FRAMES_PER_VIDEO): 14 frames, grid_t = 14 / 2 = 7
  const i64 video = 7 * image;  // 114688 > 16384: the video is profiled
  // budget max(8192, 114688) = 114688; N = min(114688 // 114688, 1024 x min(999, 128000 // 114688)) = 1;
  // the merger's output, out_hidden_size 3584 (the text width), bf16
  CHECK(vllm_plan("qwen2.5-vl-7b-instruct").budget_bytes("mm_encoder_cache") == 1LL * video * 3584 * 2);
  CHECK(vllm_plan_text(cfg).budget_bytes("mm_encoder_cache") == 1LL * video * 3584 * 2);
  // max_model_len 32768: frames up to 4 (grid_t 2: 32768 <= 32768; 5 frames pad to 6, grid_t 3 > 32768)
  CHECK(vllm_plan_text(cfg, 32768).budget_bytes("mm_encoder_cache") == 1LL * 2 * image * 3584 * 2);
  // '{"video": 0}': images only; budget max(8192, 16384) = 16384 holds one image
  CHECK(vllm_plan_text(cfg, 0, 0).budget_bytes("mm_encoder_cache") == 1LL * image * 3584 * 2);
  // --mm-processor-kwargs '{"max_pixels": 1003520}' (28 x 28 x 1280): isqrt 1001, 1001 // 28 = 35, side 980,
  // (980 / 14)^2 / 4 = 1225 tokens; budget 8192 // 1225 = 6 images (1024 x min(999, 128000 // 1225) is larger)
  CHECK(vllm_plan_text(cfg, 0, 0, 1003520).budget_bytes("mm_encoder_cache") == 6LL * 1225 * 3584 * 2);
}

TEST_CASE("vLLM encoder cache for Qwen2-VL: a tie between image and video profiles the image", "[plan][vision]") {
  // Qwen/Qwen2-VL-7B-Instruct vision_config (as in the tower test above); the merger ends at hidden_size 3584
  const auto vc = kvplan::io::json::parse(R"({"depth":32,"embed_dim":1280,"mlp_ratio":4,"num_heads":16,
      "in_chans":3,"hidden_size":3584,"patch_size":14,"spatial_merge_size":2,"temporal_patch_size":2})");
  auto j = kvplan::io::json::parse(with_top("qwen2.5-vl-7b-instruct", "vision_config", vc));
  j["model_type"] = "qwen2_vl";
  // max_pixels 12845056 (Qwen2-VL's preprocessor_config.json): 16384 tokens an image, as Qwen2.5-VL.
  // max_model_len 16384: 2 frames (grid_t 1, 16384 tokens); 3 frames pad to 4, grid_t 2 = 32768 > 16384.
  // The video's 16384 ties the image's: get_modality_with_max_tokens keeps the first, image.
  // budget 16384; N = min(1, 1024 x min(999, 16384 // 16384)) = 1
  CHECK(vllm_plan_text(j.dump(), 16384).budget_bytes("mm_encoder_cache") == 1LL * 16384 * 3584 * 2);
}

TEST_CASE("vLLM encoder cache for Qwen3-VL: deepstack levels widen every cached embedding", "[plan][vision]") {
  const std::string cfg = file_text("qwen3-vl-8b-instruct");
  // qwen3_vl.py: max_pixels = size.longest_edge 16777216 (Qwen3-VL's preprocessor_config.json) = 4096^2,
  // factor 16 x 2 = 32: 4096 x 4096, (4096 / 16)^2 / 4 = 16384 tokens an image. Qwen3_VisionTransformer.forward
  // concatenates the merger's output with the 3 deepstack mergers' (deepstack_visual_indexes [8, 16, 24]):
  // each embedding is out_hidden_size 4096 x (1 + 3) = 16384 wide, bf16
  const i64 image = (4096 / 16) * (4096 / 16) / 4, width = 4096 * (1 + 3);
  // max_model_len 262144 (the config's): 14 frames, grid_t 7, 7 x 16384 = 114688 tokens a video; N = 1
  CHECK(vllm_plan_text(cfg).budget_bytes("mm_encoder_cache") == 1LL * 7 * image * width * 2);
  // images only: budget 16384, one image
  CHECK(vllm_plan_text(cfg, 0, 0).budget_bytes("mm_encoder_cache") == 1LL * image * width * 2);
}

TEST_CASE("vLLM encoder cache for LLaVA-NeXT: the any-resolution pinpoint with most tokens", "[plan][vision]") {
  // LLaVA-1.5's CLIP 336 / 14 = 24 patches a side, text width 4096, f16, max_model_len 4096.
  // llava_next.py get_image_size_with_most_features over LlavaNextConfig's default image_grid_pinpoints
  // (height, width) [336,672] [672,336] [672,672] [1008,336] [336,1008]: base 24 x 24 = 576 (CLS dropped)
  // + (24 x rows) x (24 x cols) tile patches + 24 x rows newlines:
  //   672x672: 576 + 48 x 48 + 48 = 2928 (the largest; 1008x336: 576 + 72 x 24 + 72 = 2376)
  const i64 t = 576 + 48 * 48 + 48;
  CHECK(t == 2928);
  const std::string next = with_top("llava-1.5-7b", "model_type", "llava_next");
  // budget 8192 // 2928 = 2 images (1024 x max(1, min(999, 4096 // 2928)) is larger)
  CHECK(vllm_plan_text(next).budget_bytes("mm_encoder_cache") == 2LL * t * 4096 * 2);
  // pinpoints from the config: [1008, 1008] is 3 x 3 tiles: 576 + 72 x 72 + 72 = 5832; 8192 // 5832 = 1
  auto j = kvplan::io::json::parse(next);
  j["image_grid_pinpoints"] = kvplan::io::json::parse("[[336, 336], [1008, 1008]]");
  CHECK(vllm_plan_text(j.dump()).budget_bytes("mm_encoder_cache") == 1LL * (576 + 72 * 72 + 72) * 4096 * 2);
}

TEST_CASE("vLLM encoder cache for Llama 4: 16 tiles and the global tile with separators in the budget",
          "[plan][vision]") {
  // mllama4.py get_patch_per_chunk: (336 / 14)^2 // round(1 / 0.5^2) = 576 // 4 = 144 embeddings a tile;
  // get_image_size_with_most_features: 16 tiles high (max_patches 16), 1 wide, plus the global tile.
  // Placeholder (Llama4Processor._prompt_split_image): <|image_start|> + 16 x (144 patches + <|tile_y_separator|>)
  // + <|image|> + 144 patches + <|image_end|> = 16 x 145 + 144 + 3 = 2467 tokens; the encoder returns
  // 17 x 144 = 2448 embeddings, projected to the text width 5120, bf16
  const i64 tokens = 16 * 145 + 144 + 3, embeds = 17 * 144;
  CHECK(tokens == 2467);
  // budget 8192 // 2467 = 3 images
  CHECK(vllm_plan("llama-4-scout-17b-16e").budget_bytes("mm_encoder_cache") == 3LL * embeds * 5120 * 2);
}

TEST_CASE("vLLM encoder cache for Mistral 3: a grid with a break token a row", "[plan][vision]") {
  // the Mistral 3 config of the Pixtral tower case above: Pixtral image_size 1024, patch 16, spatial_merge_size 2
  // (Mistral3Config default), text width 5120, f16, max_model_len 4096
  const auto pix = kvplan::io::json::parse(R"({"model_type":"pixtral","hidden_size":1024,"intermediate_size":4096,
      "num_hidden_layers":24,"num_attention_heads":16,"head_dim":64,"patch_size":16,"image_size":1024})");
  auto j = kvplan::io::json::parse(with_top("llava-1.5-7b", "vision_config", pix));
  j["model_type"] = "mistral3";
  j["text_config"]["model_type"] = "mistral";
  j["text_config"]["hidden_size"] = 5120;
  j["text_config"]["num_hidden_layers"] = 40;
  j["text_config"]["num_attention_heads"] = 32;
  j["text_config"]["num_key_value_heads"] = 8;
  j["text_config"]["head_dim"] = 128;
  j["text_config"]["intermediate_size"] = 32768;
  // mistral3.py get_patch_grid_size: n = (1024 - 1) // (16 x 2) + 1 = 32; placeholder ([IMG] x 32 + break) x 32
  // = 1056 tokens, 32 x 32 = 1024 embeddings; budget 8192 // 1056 = 7 (1024 x min(999, 4096 // 1056) is larger)
  CHECK(vllm_plan_text(j.dump()).budget_bytes("mm_encoder_cache") == 7LL * 1024 * 5120 * 2);
  // Mistral Small 3.1's image_size 1540, patch 14: n = 1539 // 28 + 1 = 55, 55 x 56 = 3080 tokens, 3025
  // embeddings; 8192 // 3080 = 2 images
  j["vision_config"]["image_size"] = 1540;
  j["vision_config"]["patch_size"] = 14;
  CHECK(vllm_plan_text(j.dump()).budget_bytes("mm_encoder_cache") == 2LL * 55 * 55 * 5120 * 2);
}

TEST_CASE("vLLM encoder cache: none for Llama 3.2 Vision, which vLLM V1 does not run", "[plan][vision]") {
  // mllama's cross-attention model was removed with V0's encoder-decoder support (vLLM PR #24907)
  CHECK(vllm_plan("llama-3.2-11b-vision").budget_bytes("mm_encoder_cache") == 0);
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

TEST_CASE("vLLM --mm-processor-kwargs max_pixels and a video count of 0 from kvplan flags or a pasted command",
          "[front-doors][vision]") {
  using nlohmann::json;
  auto term = [](const kvtest::Run& r) -> long long {
    INFO(r.err);
    REQUIRE(r.exit == 0);
    const json j = json::parse(r.out);
    for (const auto& t : j["results"]["budget"])
      if (t["term"] == "mm_encoder_cache") return t["bytes"].get<long long>();
    return 0;
  };
  // Qwen2.5-VL (--context is the workload; max_model_len stays 128000), images only, max_pixels 1003520: 1225
  // tokens an image (side 980, see the Qwen2.5-VL case); 8192 // 1225 = 6 images (1024 x min(999, 128000 // 1225)
  // is larger); width 3584, bf16
  const long long six = 6LL * 1225 * 3584 * 2;
  const std::string px = R"({"max_pixels": 1003520})", novideo = R"({"video": 0})";
  const auto flags = kvtest::kvplan({"plan", "qwen2.5-vl-7b-instruct", "--context", "32k", "--format", "json",
                                     "--limit-mm-per-prompt", novideo, "--mm-processor-kwargs", px});
  CHECK(term(flags) == six);
  CHECK(json::parse(flags.out)["inputs"]["mm_max_pixels"] == 1003520);
  CHECK(json::parse(flags.out)["inputs"]["limit_mm_per_prompt_video"] == 0);
  CHECK(term(kvtest::kvplan({"plan", "qwen2.5-vl-7b-instruct", "--context", "32k", "--format", "json", "--", "vllm",
                             "serve", "m", "--limit-mm-per-prompt", novideo, "--mm-processor-kwargs", px})) == six);
  // vLLM 0.8.3's pairs: video=0
  CHECK(term(kvtest::kvplan({"plan", "qwen2.5-vl-7b-instruct", "--context", "32k", "--format", "json", "--engine",
                             "vllm@0.8.3", "--limit-mm-per-prompt", "image=999,video=0", "--mm-processor-kwargs",
                             px})) == six);
  // '{"image": 0}' leaves the video (999 by default): 14 frames (grid_t 7: 7 x 1225 = 8575 <= 128000), 8575
  // tokens; budget max(8192, 8575) = 8575 holds 1 (1024 x min(999, 128000 // 8575 = 14) is larger)
  CHECK(term(kvtest::kvplan({"plan", "qwen2.5-vl-7b-instruct", "--context", "32k", "--format", "json",
                             "--limit-mm-per-prompt", R"({"image": 0})", "--mm-processor-kwargs", px})) ==
        1LL * 7 * 1225 * 3584 * 2);
}
