// Exact weights from what a snapshot folder holds: the safetensors headers (dtype, shape and byte range of
// every tensor; the data is never read), or, when only `model.safetensors.index.json` is there, its
// `metadata.total_size`. Format: huggingface/safetensors docs ("8 bytes: N, a little-endian u64, then N bytes
// of JSON header").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/model.hpp"

namespace kvplan::io {

struct SafetensorsWeights {
  i64 bytes = 0;        // every tensor the engines load
  i64 elements = 0;     // their elements (0 when only the index was read)
  i64 files = 0;        // headers read
  i64 skipped_bytes = 0;           // multi-token-prediction layers (numbered at and after num_hidden_layers, or mtp.*)
  i64 mtp_aside_bytes = 0;         // of those: the MTP module's copies of the embedding and head (embed_tokens, shared_head)
                                   // and its input projection (eh_proj, mtp.fc), which the plan does not take from the files
  bool from_index = false;         // metadata.total_size of the index, no header was there
  std::string basis;
};

/// Sums the weights in `folder`. nullopt when it holds no safetensors file and no index. MTP layers
/// (`model.layers.N.` with N >= num_hidden_layers, as DeepSeek-V3/R1 and GLM-4.5 ship them, or `mtp.*`, Qwen3-Next) are
/// left out: engines skip them at load unless MTP speculation is on. Throws InputError naming the file for a
/// malformed header.
std::optional<SafetensorsWeights> read_safetensors_weights(const std::string& folder, i64 num_hidden_layers);

/// Sets the model's exact weight bytes from its snapshot folder (the folder of its config.json), with a note, and the
/// MTP layers' own bytes (ModelSpec.mtp_weight_bytes) for MTP speculation.
void apply_safetensors_weights(ModelSpec& m, const std::string& config_path);

}  // namespace kvplan::io
