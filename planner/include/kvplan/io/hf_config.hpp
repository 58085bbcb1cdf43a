// Hugging Face config.json -> ModelSpec, strict and explained: every family rule is in
// hf_config.cpp next to the keys it reads; unknown model_types fall back to the generic keys
// with a warning that lists what was assumed.
#pragma once

#include <string>
#include <vector>

#include "kvplan/core/model.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::io {

/// model_types with a family rule (text model types and multimodal wrappers).
const std::vector<std::string>& supported_model_types();

/// Builds the model from a parsed config. `label` names the file in errors; `id` is the model id.
ModelSpec model_from_hf_config(const json& root, const std::string& label, const std::string& id);

/// Resolves MODEL given on the command line as a path: a config.json file, or a directory
/// holding config.json (a downloaded snapshot). Throws InputError for anything else.
std::string resolve_config_path(const std::string& path);

}  // namespace kvplan::io
