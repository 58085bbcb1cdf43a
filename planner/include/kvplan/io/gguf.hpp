// GGUF model files (what llama-server -m names): the header's metadata gives the architecture in
// llama.cpp's own keys, and the tensor table gives the exact weight bytes per type. Tensor data is
// never read. Format: ggml docs/gguf.md (versions 2 and 3, little-endian).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kvplan/core/model.hpp"

namespace kvplan::io {

/// Summary of a GGUF file's header.
struct GgufInfo {
  std::string architecture;            // general.architecture
  std::string name;                    // general.name (may be empty)
  i64 version = 0;
  i64 tensor_count = 0;
  i64 tensor_bytes = 0;                // sum of every tensor's bytes (exact, from type and shape)
  i64 tensor_elements = 0;             // parameters
  std::map<std::string, i64> bytes_by_type;  // "q4_K" -> bytes
  std::string file_type;               // general.file_type as llama.cpp names it, e.g. "Q4_K - Medium"
  std::vector<std::pair<std::string, i64>> tensors;  // every tensor's name and bytes, in table order
  std::string general_type;            // general.type ("model", "adapter", "mmproj"; "" when absent), gguf_tensor_table only
};

/// True when the file starts with the GGUF magic ("GGUF").
bool is_gguf_file(const std::string& path);

/// Reads the header and tensor table and builds the model (layers with their cache kinds from the
/// architecture's llama.cpp rules; exact_weight_bytes / exact_params from the tensor table;
/// dtype f16 for the KV cache default, as llama.cpp). Throws InputError naming the file and the
/// key or offset for malformed or truncated files; never reads more than the header.
ModelSpec model_from_gguf(const std::string& path, const std::string& id, GgufInfo* info = nullptr);

/// The header and tensor table of any GGUF file (one split), without building a model: a LoRA adapter
/// (general.architecture of its base, general.type "adapter") or a multimodal projector ("clip"). With
/// `expect_arch` set, another general.architecture is an InputError naming the key.
GgufInfo gguf_tensor_table(const std::string& path, const std::string& expect_arch = "");

}  // namespace kvplan::io
