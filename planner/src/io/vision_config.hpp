// The vision (and projector) part of a multimodal config.json: counted module by module for the
// families kvplan reads, a labelled generic-ViT estimate for the rest. Internal to kvplan_io.
#pragma once

#include <string>

#include "kvplan/core/model.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::io {

/// The vision tower of `outer_type` (the config's top-level model_type: qwen2_5_vl, gemma3, llava,
/// mllama, ...) from its vision_config `v`; `root` is the whole config (projector keys live there)
/// and `text_hidden` the text model's width the projector writes into.
VisionTower read_vision_tower(const JsonView& root, const JsonView& v, const std::string& outer_type,
                              i64 text_hidden);

}  // namespace kvplan::io
