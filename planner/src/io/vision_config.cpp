// Vision towers from vision_config, counted module by module as the transformers modeling files
// build them (huggingface/transformers v4.57.1, src/transformers/models/<family>/modeling_*.py):
// patch embedding (with or without bias), position embeddings, each block's norms / attention / MLP
// with the biases the code gives them, the post-norm, and the merger or projector into the text
// model. Families kvplan does not know keep the generic-ViT estimate, labelled as one.
#include "vision_config.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include "kvplan/core/checked.hpp"
#include "kvplan/core/error.hpp"
#include "kvplan/io/limits.hpp"

namespace kvplan::io {

namespace {

using namespace limits;

i64 linear(i64 in, i64 out, bool bias) { return add(mul(in, out), bias ? out : 0); }
i64 layer_norm(i64 h) { return mul(2, h); }  // nn.LayerNorm: weight + bias
i64 rms_norm(i64 h) { return h; }            // RMSNorm: weight only
std::string s(i64 v) { return std::to_string(v); }

// Qwen2/2.5/3-VL images and videos in vLLM's profiling (vllm-project/vllm @ 002d181a (v0.11 line),
// vllm/model_executor/models/qwen2_vl.py Qwen2VLProcessingInfo: get_image_size_with_most_features resizes a
// 9999999 x 9999999 image with smart_resize(factor = patch x merge, max_pixels), _get_vision_info counts
// grid_t x grid_h x grid_w // merge^2 tokens, get_max_video_tokens adds frames; qwen3_vl.py reads max_pixels
// from the image processor's size["longest_edge"]). max_pixels is the preprocessor_config.json default, which
// config.json does not carry; vLLM --mm-processor-kwargs '{"max_pixels": N}' replaces it (core/plan.cpp).
void dynamic_items(VisionTower& vt, i64 p, i64 m, i64 t, i64 max_pixels, i64 width, const std::string& where) {
  vt.patch = p, vt.merge = m, vt.temporal = t, vt.max_pixels = max_pixels, vt.embed_width = width;
  vt.tokens_per_item = dynamic_image_tokens(max_pixels, p, m);
  vt.tokens_basis = "largest image " + s(vt.tokens_per_item) + " tokens: max_pixels " + s(max_pixels) + " (" + where +
                    "), patch " + s(p) + " x merge " + s(m) + " (vLLM qwen2_vl.py get_max_image_tokens)";
}

i64 channels(const JsonView& v) {
  // Qwen2.5-VL's config.json says in_chans, which its config class ignores (it reads in_channels, 3)
  for (const char* k : {"in_channels", "num_channels"})
    if (v.has(k)) return v.get_int(k, 1, 64);
  return 3;
}

// Qwen2-VL (modeling_qwen2_vl.py): Conv3d patch embed without bias; blocks of LayerNorm x2, qkv and
// proj with bias, MLP fc1/fc2 (embed_dim x mlp_ratio) with bias; PatchMerger LayerNorm(embed_dim) +
// Linear(d*m^2, d*m^2) + Linear(d*m^2, hidden_size), both with bias. No post-norm.
VisionTower qwen2_vl(const JsonView& v) {
  // absent keys take Qwen2VLVisionConfig's defaults (embed_dim 1280, depth 32, hidden_size 3584)
  const i64 d = v.int_or("embed_dim", 1280, 1, kMaxDim), depth = v.int_or("depth", 32, 1, kMaxLayers);
  const i64 out = v.int_or("hidden_size", 3584, 1, kMaxDim);  // Qwen2VLVisionConfig.hidden_size: the text width
  const double ratio = v.opt_number("mlp_ratio").value_or(4.0);
  const i64 mlp = i64(double(d) * ratio);  // int(embed_dim * mlp_ratio)
  const i64 p = v.int_or("patch_size", 14, 1, 4096), t = v.int_or("temporal_patch_size", 2, 1, 64);
  const i64 m = v.int_or("spatial_merge_size", 2, 1, 64), md = mul(d, mul(m, m));
  const i64 patch = mul(mul(channels(v), t), mul(mul(p, p), d));
  const i64 block = add(add(mul(2, layer_norm(d)), add(linear(d, 3 * d, true), linear(d, d, true))),
                        add(linear(d, mlp, true), linear(mlp, d, true)));
  const i64 merger = add(layer_norm(d), add(linear(md, md, true), linear(md, out, true)));
  VisionTower vt{true, add(patch, add(mul(depth, block), merger)), ""};
  // the merger's output (the text width) is what vLLM caches; Qwen2-VL's preprocessor_config.json max_pixels
  // 12845056 (= 3584^2; transformers' class default 28 x 28 x 1280 is not what the checkpoints ship)
  dynamic_items(vt, p, m, t, 12845056, out, "Qwen2-VL preprocessor_config.json default");
  vt.basis = "exact: Qwen2-VL ViT, " + s(depth) + " blocks of width " + s(d) + " (LayerNorm, MLP " + s(mlp) +
             ", biases on qkv/proj/MLP), Conv3d patch embed " + s(t) + "x" + s(p) + "x" + s(p) +
             " without bias, patch merger " + s(md) + " -> " + s(out) + " (transformers modeling_qwen2_vl)";
  return vt;
}

// Qwen2.5-VL (modeling_qwen2_5_vl.py): Conv3d patch embed without bias; blocks of RMSNorm x2, qkv and
// proj with bias, gated SiLU MLP gate/up/down with bias; window attention adds no weights (rotary
// only); PatchMerger RMSNorm(hidden) + Linear(h*m^2, h*m^2) + Linear(h*m^2, out_hidden_size), biased.
VisionTower qwen2_5_vl(const JsonView& v) {
  // absent keys take Qwen2_5_VLVisionConfig's defaults (hidden 3584, depth 32, intermediate 3420, out 3584)
  const i64 h = v.int_or("hidden_size", 3584, 1, kMaxDim), depth = v.int_or("depth", 32, 1, kMaxLayers);
  const i64 inter = v.int_or("intermediate_size", 3420, 1, kMaxDim);
  const i64 out = v.int_or("out_hidden_size", 3584, 1, kMaxDim);
  const i64 p = v.int_or("patch_size", 14, 1, 4096), t = v.int_or("temporal_patch_size", 2, 1, 64);
  const i64 m = v.int_or("spatial_merge_size", 2, 1, 64), mh = mul(h, mul(m, m));
  const i64 patch = mul(mul(channels(v), t), mul(mul(p, p), h));
  const i64 block = add(add(mul(2, rms_norm(h)), add(linear(h, 3 * h, true), linear(h, h, true))),
                        add(mul(2, linear(h, inter, true)), linear(inter, h, true)));
  const i64 merger = add(rms_norm(h), add(linear(mh, mh, true), linear(mh, out, true)));
  VisionTower vt{true, add(patch, add(mul(depth, block), merger)), ""};
  dynamic_items(vt, p, m, t, 12845056, out, "Qwen2.5-VL preprocessor_config.json default");  // as Qwen2-VL
  vt.basis = "exact: Qwen2.5-VL ViT, " + s(depth) + " blocks of width " + s(h) + " (RMSNorm, gated SiLU MLP " +
             s(inter) + ", biases on qkv/proj/MLP), Conv3d patch embed " + s(t) + "x" + s(p) + "x" + s(p) +
             " without bias, patch merger " + s(mh) + " -> " + s(out) + " (transformers modeling_qwen2_5_vl)";
  return vt;
}

// Qwen3-VL (modeling_qwen3_vl.py): Conv3d patch embed with bias; learned position embedding
// (num_position_embeddings rows); blocks of LayerNorm x2, qkv/proj with bias, MLP fc1/fc2 with bias;
// a merger LayerNorm(hidden) + two biased Linears, and one deepstack merger per
// deepstack_visual_indexes entry whose LayerNorm is over the merged width h*m^2.
VisionTower qwen3_vl(const JsonView& v) {
  const i64 h = v.int_or("hidden_size", 1152, 1, kMaxDim), depth = v.int_or("depth", 27, 1, kMaxLayers);
  const i64 inter = v.int_or("intermediate_size", 4304, 1, kMaxDim);
  const i64 out = v.int_or("out_hidden_size", 3584, 1, kMaxDim);
  const i64 p = v.int_or("patch_size", 16, 1, 4096), t = v.int_or("temporal_patch_size", 2, 1, 64);
  const i64 m = v.int_or("spatial_merge_size", 2, 1, 64), mh = mul(h, mul(m, m));
  const i64 pos = v.int_or("num_position_embeddings", 2304, 1, 1 << 24);
  // absent keys take Qwen3VLVisionConfig's defaults (patch 16, 2304 positions, deepstack [8, 16, 24])
  const i64 deep =
      v.has("deepstack_visual_indexes") ? i64(v.int_list("deepstack_visual_indexes", 0, kMaxLayers).size()) : 3;
  const i64 patch = add(mul(mul(channels(v), t), mul(mul(p, p), h)), h);
  const i64 block = add(add(mul(2, layer_norm(h)), add(linear(h, 3 * h, true), linear(h, h, true))),
                        add(linear(h, inter, true), linear(inter, h, true)));
  const i64 mlp = add(linear(mh, mh, true), linear(mh, out, true));
  const i64 mergers = add(add(layer_norm(h), mlp), mul(deep, add(layer_norm(mh), mlp)));
  VisionTower vt{true, add(add(patch, mul(pos, h)), add(mul(depth, block), mergers)), ""};
  // size.longest_edge 16777216 (= 4096^2) in Qwen3-VL's preprocessor_config.json. Each cached embedding is the
  // merger's output concatenated with one per deepstack level (qwen3_vl.py Qwen3_VisionTransformer.forward:
  // torch.cat([hidden_states] + deepstack_feature_lists, dim=1), split only when the text model runs)
  dynamic_items(vt, p, m, t, 16777216, mul(out, 1 + deep), "Qwen3-VL preprocessor_config.json size.longest_edge");
  vt.basis = "exact: Qwen3-VL ViT, " + s(depth) + " blocks of width " + s(h) + " (LayerNorm, MLP " + s(inter) +
             ", biases), Conv3d patch embed with bias, " + s(pos) + " learned positions, merger " + s(mh) + " -> " +
             s(out) + " and " + s(deep) + " deepstack mergers (transformers modeling_qwen3_vl)";
  return vt;
}

// SigLIP vision transformer (modeling_siglip.py): Conv2d patch embed with bias, (image/patch)^2
// learned positions, blocks of LayerNorm x2, q/k/v/out and fc1/fc2 with bias, post LayerNorm, and the
// attention-pooling head when vision_use_head (absent = used, as SiglipVisionTransformer reads it).
i64 siglip(const JsonView& v, std::string& what) {
  const i64 h = v.get_int("hidden_size", 1, kMaxDim), layers = v.get_int("num_hidden_layers", 1, kMaxLayers);
  const i64 inter = v.get_int("intermediate_size", 1, kMaxDim);
  const i64 p = v.get_int("patch_size", 1, 4096), img = v.get_int("image_size", 1, 1 << 20);
  const i64 n = mul(img / p, img / p);
  const i64 block = add(add(mul(2, layer_norm(h)), mul(4, linear(h, h, true))),
                        add(linear(h, inter, true), linear(inter, h, true)));
  i64 total = add(add(linear(mul(channels(v), mul(p, p)), h, true), mul(n, h)), add(mul(layers, block), layer_norm(h)));
  const bool head = v.bool_or("vision_use_head", true);
  if (head)  // probe + nn.MultiheadAttention (in_proj 3h x h + bias, out_proj) + LayerNorm + MLP
    total = add(total, add(add(h, add(linear(h, 3 * h, true), linear(h, h, true))),
                           add(layer_norm(h), add(linear(h, inter, true), linear(inter, h, true)))));
  what = "SigLIP, " + s(layers) + " blocks of width " + s(h) + " (MLP " + s(inter) + "), " + s(n) +
         " learned positions, post-LayerNorm" + (head ? ", pooling head" : "");
  return total;
}

// CLIP vision transformer (modeling_clip.py): class embedding, Conv2d patch embed without bias,
// (image/patch)^2 + 1 positions, pre_layrnorm, blocks as SigLIP's, post_layernorm.
i64 clip(const JsonView& v, std::string& what) {
  const i64 h = v.int_or("hidden_size", 768, 1, kMaxDim), layers = v.int_or("num_hidden_layers", 12, 1, kMaxLayers);
  const i64 inter = v.int_or("intermediate_size", 3072, 1, kMaxDim);  // CLIPVisionConfig defaults
  const i64 p = v.int_or("patch_size", 32, 1, 4096), img = v.int_or("image_size", 224, 1, 1 << 20);
  const i64 n = add(mul(img / p, img / p), 1);
  const i64 block = add(add(mul(2, layer_norm(h)), mul(4, linear(h, h, true))),
                        add(linear(h, inter, true), linear(inter, h, true)));
  what = "CLIP, " + s(layers) + " blocks of width " + s(h) + " (MLP " + s(inter) + "), class embedding, " + s(n) +
         " learned positions, pre- and post-LayerNorm";
  return add(add(add(h, mul(channels(v), mul(mul(p, p), h))), add(mul(n, h), mul(2, layer_norm(h)))),
             mul(layers, block));
}

// Pixtral vision encoder (modeling_pixtral.py): Conv2d patch embed without bias, ln_pre RMSNorm,
// layers of attention_norm + ffn_norm (RMSNorm), q/k/v/o and gated gate/up/down MLP without bias;
// 2-D rotary positions (no weights), no post-norm.
i64 pixtral(const JsonView& v, std::string& what) {
  const i64 h = v.get_int("hidden_size", 1, kMaxDim), layers = v.get_int("num_hidden_layers", 1, kMaxLayers);
  const i64 inter = v.get_int("intermediate_size", 1, kMaxDim), p = v.get_int("patch_size", 1, 4096);
  const i64 block = add(add(mul(2, rms_norm(h)), mul(4, linear(h, h, false))),
                        add(mul(2, linear(h, inter, false)), linear(inter, h, false)));
  what = "Pixtral, " + s(layers) + " layers of width " + s(h) + " (RMSNorm, gated MLP " + s(inter) +
         ", no biases), Conv2d patch " + s(p) + " without bias, ln_pre";
  return add(add(mul(channels(v), mul(mul(p, p), h)), rms_norm(h)), mul(layers, block));
}

// Mistral 3 (modeling_mistral3.py): the Pixtral tower + Mistral3MultiModalProjector: norm (RMSNorm over
// the vision width), patch_merger.merging_layer Linear(h*m^2, h) without bias, linear_1 (h x feature
// layers -> text width) and linear_2 (text -> text), biased only when multimodal_projector_bias is true.
VisionTower mistral3(const JsonView& root, const JsonView& v, i64 text_hidden) {
  std::string what;
  const i64 tower = pixtral(v, what);
  const i64 h = v.get_int("hidden_size", 1, kMaxDim), m = root.int_or("spatial_merge_size", 2, 1, 64);
  i64 layers = 1;
  if (root.has("vision_feature_layer") && root.raw().at("vision_feature_layer").is_array())
    layers = i64(root.int_list("vision_feature_layer", -kMaxLayers, kMaxLayers).size());
  const bool bias = root.bool_or("multimodal_projector_bias", false);
  const i64 proj = add(add(rms_norm(h), linear(mul(h, mul(m, m)), h, false)),
                       add(linear(mul(h, layers), text_hidden, bias), linear(text_hidden, text_hidden, bias)));
  VisionTower vt{true, add(tower, proj), ""};
  // vLLM's largest image (vllm-project/vllm @ 02677fd9, vllm/model_executor/models/mistral3.py
  // Mistral3ProcessingInfo): a square of the processor's size["longest_edge"] (vision_config.image_size in the
  // checkpoints, 1540 for Mistral Small 3.1), cut into n = (image - 1) // (patch x merge) + 1 rows and columns
  // (Mistral3HFEncoderInfo.get_patch_grid_size); the placeholder is ([IMG] x n + [IMG_BREAK]) x n, the last
  // break [IMG_END], so the budget counts n x (n + 1) tokens and the projector returns n x n embeddings.
  const i64 img = v.int_or("image_size", 1024, 1, 1 << 20), merged = mul(v.get_int("patch_size", 1, 4096), m);
  const i64 n = (img - 1) / merged + 1;
  vt.tokens_per_item = mul(n, n + 1), vt.embeds_per_item = mul(n, n);
  vt.tokens_basis = "largest image " + s(vt.tokens_per_item) + " placeholder tokens, " + s(vt.embeds_per_item) +
                    " embeddings: " + s(img) + " px in " + s(merged) + " px cells, " + s(n) + " x " + s(n) +
                    " + a break a row (vLLM mistral3.py get_patch_grid_size)";
  vt.basis = "exact: Mistral 3 " + what + "; projector RMSNorm, patch merger " + s(mul(h, mul(m, m))) + " -> " + s(h) +
             ", 2-layer MLP -> " + s(text_hidden) + (bias ? " with biases" : " without biases") +
             " (transformers modeling_mistral3, modeling_pixtral)";
  return vt;
}

// Gemma 3 (modeling_gemma3.py): SigLIP tower + Gemma3MultiModalProjector: mm_input_projection_weight
// (vision width x text width, no bias) and mm_soft_emb_norm (Gemma3RMSNorm over the vision width);
// the average pool has no weights.
VisionTower gemma3(const JsonView& root, const JsonView& v, i64 text_hidden) {
  std::string what;
  const i64 h = v.get_int("hidden_size", 1, kMaxDim);
  const i64 tower = siglip(v, what);
  VisionTower vt{true, add(tower, add(mul(h, text_hidden), rms_norm(h))), ""};
  // the average pool leaves mm_tokens_per_image embeddings per image (Gemma3Config default 256); vLLM's
  // processor pans and scans only when asked (do_pan_and_scan off), so one crop is the largest item
  vt.tokens_per_item = root.int_or("mm_tokens_per_image", 256, 1, 1 << 20);
  vt.basis = "exact: Gemma 3 " + what + "; projector " + s(h) + " -> " + s(text_hidden) +
             " without bias and its RMSNorm (transformers modeling_gemma3, modeling_siglip)";
  return vt;
}

// LLaVA-NeXT's largest image in vLLM (vllm-project/vllm, vllm/model_executor/models/llava_next.py
// LlavaNextProcessingInfo, v0.11 line): get_image_size_with_most_features tries every image_grid_pinpoints
// (height, width) and keeps the one with most tokens; for an image that is exactly a pinpoint,
// get_anyres_image_grid_shape gives (height / image_size, width / image_size) tiles and
// _get_num_unpadded_features removes no padding, so
//   tokens = base + (n x rows) x (n x cols) + n x rows   (base image, the tiles' patches, one newline per row)
// with n = image_size / patch_size. These are all embeddings (the newlines are image_newline vectors).
// Absent image_grid_pinpoints take LlavaNextConfig's default; a pinpoint that is not whole tiles is not modelled.
i64 llava_next_tokens(const JsonView& root, i64 img, i64 n, i64 base, std::string& basis) {
  std::vector<std::pair<i64, i64>> pins = {{336, 672}, {672, 336}, {672, 672}, {1008, 336}, {336, 1008}};
  if (root.has("image_grid_pinpoints")) {
    pins.clear();
    const json& list = root.raw().at("image_grid_pinpoints");
    for (std::size_t i = 0; list.is_array() && i < list.size(); ++i) {
      const json& pin = list[i];
      if (!pin.is_array() || pin.size() != 2 || !pin[0].is_number_integer() || !pin[1].is_number_integer())
        throw InputError(root.where("image_grid_pinpoints") + "/" + std::to_string(i), "expected [height, width]");
      pins.emplace_back(pin[0].get<i64>(), pin[1].get<i64>());
    }
  }
  i64 best = 0, best_h = 0, best_w = 0;
  for (const auto& [h, w] : pins) {
    if (h <= 0 || w <= 0 || h % img != 0 || w % img != 0) return 0;
    const i64 rows = h / img, cols = w / img;
    const i64 t = add(base, add(mul(mul(n, rows), mul(n, cols)), mul(n, rows)));
    if (t > best) best = t, best_h = h, best_w = w;
  }
  const i64 rows = n * (best_h / img), cols = n * (best_w / img);
  basis = "largest image " + s(best) + " tokens: pinpoint " + s(best_h) + "x" + s(best_w) + ", " + s(base) +
          " base + " + s(rows) + "x" + s(cols) + " tile patches + " + s(rows) +
          " newlines (vLLM llava_next.py get_image_size_with_most_features)";
  return best;
}

// LLaVA / LLaVA-NeXT (modeling_llava.py, modeling_llava_next.py): the vision tower (CLIP, or SigLIP
// when vision_config says so) + LlavaMultiModalProjector linear_1 (width x feature layers -> text
// width) and linear_2 (text -> text), biased unless multimodal_projector_bias is false; LLaVA-NeXT
// adds image_newline (one text-width vector).
VisionTower llava(const JsonView& root, const JsonView& v, const std::string& outer, i64 text_hidden) {
  std::string what;
  const std::string vtype = v.string_or("model_type", "clip_vision_model");
  const bool sig = vtype == "siglip_vision_model", pix = vtype == "pixtral";
  const i64 tower = pix ? pixtral(v, what) : sig ? siglip(v, what) : clip(v, what);
  const i64 h = v.int_or("hidden_size", 768, 1, kMaxDim);
  i64 layers = 1;
  if (root.has("vision_feature_layer") && root.raw().at("vision_feature_layer").is_array())
    layers = i64(root.int_list("vision_feature_layer", -kMaxLayers, kMaxLayers).size());
  const bool bias = root.bool_or("multimodal_projector_bias", true);
  i64 proj = add(linear(mul(h, layers), text_hidden, bias), linear(text_hidden, text_hidden, bias));
  const bool next = outer == "llava_next";
  if (next) proj = add(proj, text_hidden);
  VisionTower vt{true, add(tower, proj), ""};
  if (!pix) {  // one embedding per patch; CLIP's class token too with vision_feature_select_strategy "full"
    const i64 p = v.int_or("patch_size", sig ? 16 : 32, 1, 4096), img = v.int_or("image_size", 224, 1, 1 << 20);
    const bool full = root.string_or("vision_feature_select_strategy", "default") == "full";
    const i64 base = add(mul(img / p, img / p), full && !sig ? 1 : 0);
    vt.tokens_per_item = next ? llava_next_tokens(root, img, img / p, base, vt.tokens_basis) : base;
  }  // Pixtral towers (a grid with break tokens): not modelled (0)
  vt.basis = std::string("exact: ") + (next ? "LLaVA-NeXT " : "LLaVA ") + what + "; 2-layer projector " +
             s(mul(h, layers)) + " -> " + s(text_hidden) + (bias ? " with biases" : " without biases") +
             (next ? ", image_newline" : "") + " (transformers modeling_llava" + (next ? "_next" : "") +
             ", modeling_" + (pix ? "pixtral" : sig ? "siglip" : "clip") + ")";
  return vt;
}

// Llama 3.2 Vision (modeling_mllama.py): Conv2d patch embed without bias, class embedding, gated
// position embedding (gate, (n+1) x h, tile table (ratios+1) x tiles*(n+1)*h), gated pre/post tile
// embeddings ((ratios+1) x tiles*h + gate), LayerNorm pre/post; num_hidden_layers local layers and
// num_global_layers gated global layers (gate_attn, gate_ffn) of LayerNorm x2, q/k/v/o without bias,
// fc1/fc2 with bias; multi_modal_projector Linear(vision_output_dim, text width) with bias. The gated
// cross-attention layers belong to the text model and are counted there.
VisionTower mllama(const JsonView& v, i64 text_hidden) {
  // absent keys take MllamaVisionConfig's defaults
  const i64 h = v.int_or("hidden_size", 1280, 1, kMaxDim), inter = v.int_or("intermediate_size", 5120, 1, kMaxDim);
  const i64 local = v.int_or("num_hidden_layers", 32, 1, kMaxLayers);
  const i64 global = v.int_or("num_global_layers", 8, 0, kMaxLayers);
  const i64 p = v.int_or("patch_size", 14, 1, 4096), img = v.int_or("image_size", 448, 1, 1 << 20);
  const i64 tiles = v.int_or("max_num_tiles", 4, 1, 1024), out = v.int_or("vision_output_dim", 7680, 1, kMaxDim);
  i64 ratios = 8;  // MllamaVisionConfig default supported_aspect_ratios has 8 entries
  if (v.has("supported_aspect_ratios")) ratios = i64(v.raw().at("supported_aspect_ratios").size());
  const i64 n = add(mul(img / p, img / p), 1), rows = ratios + 1;
  const i64 embed = add(add(mul(channels(v), mul(mul(p, p), h)), h),
                        add(add(1, add(mul(n, h), mul(rows, mul(tiles, mul(n, h))))),
                            add(mul(2, add(mul(rows, mul(tiles, h)), 1)), mul(2, layer_norm(h)))));
  const i64 block = add(add(mul(2, layer_norm(h)), mul(4, linear(h, h, false))),
                        add(linear(h, inter, true), linear(inter, h, true)));
  const i64 tower = add(embed, add(mul(local, block), mul(global, add(block, 2))));
  VisionTower vt{true, add(tower, linear(out, text_hidden, true)), ""};
  // No encoder-cache term (tokens_per_item 0): vLLM V1 never ran mllama's cross-attention, and PR #24907
  // (September 2025, before 0.11.0) removed it with V0's encoder-decoder support; V0 kept no encoder cache.
  vt.basis = "exact: Llama 3.2 Vision ViT, " + s(local) + " local + " + s(global) + " gated global layers of width " +
             s(h) + " (MLP " + s(inter) + ", attention without bias), gated position and " + s(rows) +
             "-row tile embeddings for " + s(tiles) + " tiles, projector " + s(out) + " -> " + s(text_hidden) +
             " (transformers modeling_mllama; cross-attention layers are in the text model)";
  return vt;
}

// Llama 4 (modeling_llama4.py): unfold-conv patch embed Linear(channels*p*p, h) without bias, class
// embedding, (image/patch)^2 + 1 positions, LayerNorm pre/post, layers of LayerNorm x2, q/k/v/o and
// fc1/fc2 with bias; vision_adapter (pixel shuffle) fc1 Linear(intermediate, projector_input_dim) and
// fc2 Linear(projector_output_dim, projector_output_dim) without bias; Llama4MultiModalProjector
// Linear(vision_output_dim, text width) without bias.
VisionTower llama4(const JsonView& v, i64 text_hidden) {
  const i64 h = v.get_int("hidden_size", 1, kMaxDim), inter = v.get_int("intermediate_size", 1, kMaxDim);
  const i64 layers = v.get_int("num_hidden_layers", 1, kMaxLayers);
  const i64 p = v.get_int("patch_size", 1, 4096), img = v.get_int("image_size", 1, 1 << 20);
  const i64 pin = v.get_int("projector_input_dim", 1, kMaxDim), pout = v.get_int("projector_output_dim", 1, kMaxDim);
  const i64 out = v.get_int("vision_output_dim", 1, kMaxDim);
  const i64 n = add(mul(img / p, img / p), 1);
  const i64 embed = add(add(linear(mul(channels(v), mul(p, p)), h, false), h), add(mul(n, h), mul(2, layer_norm(h))));
  const i64 block = add(add(mul(2, layer_norm(h)), mul(4, linear(h, h, true))),
                        add(linear(h, inter, true), linear(inter, h, true)));
  const i64 adapter = add(linear(inter, pin, false), linear(pout, pout, false));
  VisionTower vt{true, add(add(embed, mul(layers, block)), add(adapter, linear(out, text_hidden, false))), ""};
  // vLLM's largest image (vllm-project/vllm @ 00dd5493, vllm/model_executor/models/mllama4.py
  // Mllama4ProcessingInfo): get_image_size_with_most_features is max_patches tiles high and one wide
  // (max_patches: the image processor's, 16 in Llama4ImageProcessorFast and the checkpoints' preprocessor),
  // so 16 tiles + the global tile, each get_patch_per_chunk = (image / patch)^2 / round(1 / ratio^2)
  // embeddings after the pixel shuffle. Its placeholder (transformers Llama4Processor._prompt_split_image) is
  // <|image_start|> + 16 x (chunk patches + <|tile_y_separator|>) + <|image|> + chunk patches + <|image_end|>,
  // which the budget counts (get_mm_max_contiguous_tokens); the encoder outputs the 17 x chunk patch embeddings
  // (projected to the text width).
  const double ratio = v.opt_number("pixel_shuffle_ratio").value_or(0.5);
  if (ratio > 0 && ratio <= 1 && img % p == 0) {
    const i64 chunk = mul(img / p, img / p) / i64(std::lround(1.0 / (ratio * ratio))), tiles = 16;
    vt.embeds_per_item = mul(tiles + 1, chunk);
    vt.tokens_per_item = add(mul(tiles, chunk + 1), chunk + 3);
    vt.tokens_basis = "largest image " + s(vt.tokens_per_item) + " placeholder tokens, " + s(vt.embeds_per_item) +
                      " embeddings: " + s(tiles) + " tiles + 1 global of " + s(chunk) +
                      " (max_patches 16, the preprocessor default; vLLM mllama4.py get_image_size_with_most_features)";
  }
  vt.basis = "exact: Llama 4 ViT, " + s(layers) + " layers of width " + s(h) + " (MLP " + s(inter) + ", biases), " +
             s(n) + " learned positions, pixel-shuffle adapter " + s(inter) + " -> " + s(pin) + " -> " + s(pout) +
             ", projector " + s(out) + " -> " + s(text_hidden) + " (transformers modeling_llama4)";
  return vt;
}

// Generic ViT estimate (patch embedding, depth x (attention with biases + MLP + 2 norms), a 2-layer
// projector to the text width), for families not counted above. Labelled an estimate wherever printed.
VisionTower estimate_vision(const JsonView& v, i64 text_hidden) {
  VisionTower vt;
  const i64 h = v.get_int_any({"hidden_size", "embed_dim", "width"}, 1, kMaxDim);
  const i64 depth = v.get_int_any({"depth", "num_hidden_layers", "num_layers"}, 1, kMaxLayers);
  const i64 inter = v.int_or("intermediate_size", 4 * h, 1, kMaxDim);
  const i64 patch = v.int_or("patch_size", 14, 1, 4096);
  const i64 ch = v.has("in_chans") ? v.get_int("in_chans", 1, 64) : v.int_or("num_channels", 3, 1, 64);
  const i64 temporal = v.int_or("temporal_patch_size", 1, 1, 64);
  const bool gated = v.string_or("hidden_act", "") == "silu";
  i64 p = mul(mul(ch, mul(patch, patch)), mul(temporal, h));
  const i64 block = add(add(mul(4, mul(h, h)), mul(4, h)),                                   // qkv + o with biases
                        add(mul(gated ? 3 : 2, mul(h, inter)), add(mul(gated ? 2 : 1, inter), h)))  // MLP
                    + mul(4, h);                                                              // 2 LayerNorms
  p = add(p, mul(depth, block));
  const i64 out = v.int_or("out_hidden_size", text_hidden, 1, kMaxDim);
  const i64 merge = v.int_or("spatial_merge_size", 1, 1, 64);
  const i64 mh = mul(h, mul(merge, merge));
  p = add(p, add(add(mul(mh, mh), mh), add(mul(mh, out), out)));  // 2-layer projector to the text width
  vt.present = true;
  vt.params = p;
  vt.basis = "estimate: generic ViT (" + std::to_string(depth) + " blocks of width " + std::to_string(h) +
             ") plus a 2-layer projector, from vision_config";
  return vt;
}

}  // namespace

static VisionTower exact_vision(const JsonView& root, const JsonView& v, const std::string& outer, i64 text_hidden);

VisionTower read_vision_tower(const JsonView& root, const JsonView& v, const std::string& outer, i64 text_hidden) {
  try {
    return exact_vision(root, v, outer, text_hidden);
  } catch (const InputError& err) {  // a key the exact count needs is missing or out of range: estimate, and say why
    VisionTower vt = estimate_vision(v, text_hidden);
    vt.basis += " (not counted exactly: " + err.where() + ": " + err.problem() + ")";
    return vt;
  }
}

static VisionTower exact_vision(const JsonView& root, const JsonView& v, const std::string& outer, i64 text_hidden) {
  if (outer == "qwen2_vl") return qwen2_vl(v);
  if (outer == "qwen2_5_vl") return qwen2_5_vl(v);
  if (outer == "qwen3_vl" || outer == "qwen3_vl_moe") return qwen3_vl(v);
  if (outer == "gemma3") return gemma3(root, v, text_hidden);
  if (outer == "llava" || outer == "llava_next") return llava(root, v, outer, text_hidden);
  if (outer == "mllama") return mllama(v, text_hidden);
  if (outer == "llama4") return llama4(v, text_hidden);
  if (outer == "mistral3") return mistral3(root, v, text_hidden);
  return estimate_vision(v, text_hidden);
}

}  // namespace kvplan::io
