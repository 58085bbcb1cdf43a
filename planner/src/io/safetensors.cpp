// Safetensors headers of a snapshot folder -> exact weight bytes (see safetensors.hpp).
#include "kvplan/io/safetensors.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kvplan/core/checked.hpp"
#include "kvplan/core/error.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::io {

namespace {

constexpr std::uint64_t kMaxHeader = 100ULL << 20;  // the format's own bound on the header (100 MB)

// "model.layers.61.mlp..." -> 61; -1 when the name is not a decoder layer's
i64 layer_index(const std::string& name) {
  for (const char* prefix : {"model.layers.", "layers.", "model.language_model.layers.", "language_model.model.layers."}) {
    const std::string p = prefix;
    if (name.rfind(p, 0) != 0) continue;
    i64 n = 0;
    std::size_t i = p.size();
    if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && n < (1LL << 40)) n = n * 10 + (name[i++] - '0');
    return n;
  }
  return -1;
}

void read_header(const std::filesystem::path& file, i64 num_layers, SafetensorsWeights& w) {
  const std::string label = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(label, "cannot be read", "check the file's permissions");
  unsigned char len_bytes[8] = {};
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  if (in.gcount() != 8) throw InputError(label, "shorter than a safetensors header (8 bytes)", "the file is truncated: download it again");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n == 0 || n > kMaxHeader) throw InputError(label, "header length " + std::to_string(n) + " is not a safetensors header", "is this a safetensors file?");
  std::string text(static_cast<std::size_t>(n), '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  if (static_cast<std::uint64_t>(in.gcount()) != n) throw InputError(label, "header cut short", "the file is truncated: download it again");
  const json h = parse_json_text(text, label);
  if (!h.is_object()) throw InputError(label, "the header is not a JSON object", "is this a safetensors file?");
  for (const auto& [name, t] : h.items()) {
    if (name == "__metadata__") continue;
    const std::string where = label + ": " + name;
    if (!t.is_object() || !t.contains("data_offsets") || !t["data_offsets"].is_array() || t["data_offsets"].size() != 2 ||
        !t["data_offsets"][0].is_number_unsigned() || !t["data_offsets"][1].is_number_unsigned())
      throw InputError(where, "has no data_offsets [begin, end]", "is this a safetensors file?");
    const auto b = t["data_offsets"][0].get<std::uint64_t>(), e = t["data_offsets"][1].get<std::uint64_t>();
    if (e < b || e > (1ULL << 50)) throw InputError(where, "data_offsets are not a byte range", "the header is damaged");
    i64 elems = 1;
    if (t.contains("shape") && t["shape"].is_array())
      for (const auto& d : t["shape"]) {
        if (!d.is_number_unsigned() || d.get<std::uint64_t>() > (1ULL << 40)) throw InputError(where, "shape is not a list of sizes");
        elems = mul(elems, static_cast<i64>(d.get<std::uint64_t>()), "tensor elements");
      }
    const i64 bytes = static_cast<i64>(e - b);
    if (num_layers > 0 && (layer_index(name) >= num_layers || name.rfind("mtp.", 0) == 0)) {
      w.skipped_bytes = add(w.skipped_bytes, bytes, "skipped bytes");
      // DeepSeek model.layers.61.{embed_tokens, shared_head.head, eh_proj}, Qwen3-Next mtp.fc: vLLM / SGLang share the
      // embedding and head with the target, and kvplan sizes the fc itself (replicated, core/speculative.cpp)
      if (name.find("embed_tokens") != std::string::npos || name.find("shared_head") != std::string::npos ||
          name.find("eh_proj") != std::string::npos || name.rfind("mtp.fc.", 0) == 0)
        w.mtp_aside_bytes = add(w.mtp_aside_bytes, bytes, "MTP bytes");
      continue;
    }
    w.bytes = add(w.bytes, bytes, "safetensors bytes");
    w.elements = add(w.elements, elems, "safetensors elements");
  }
}

}  // namespace

std::optional<SafetensorsWeights> read_safetensors_weights(const std::string& folder, i64 num_hidden_layers) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return std::nullopt;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  SafetensorsWeights w;
  if (!files.empty()) {
    for (const auto& f : files) read_header(f, num_hidden_layers, w);
    w.files = static_cast<i64>(files.size());
    w.basis = "safetensors headers of " + std::to_string(files.size()) + " file" + (files.size() > 1 ? "s" : "") + " (exact)";
    return w;
  }
  const fs::path index = fs::path(folder) / "model.safetensors.index.json";
  if (!fs::exists(index, ec)) return std::nullopt;
  const json j = parse_json_file(index.string());
  if (!j.is_object() || !j.contains("metadata") || !j["metadata"].is_object() || !j["metadata"].contains("total_size") ||
      !j["metadata"]["total_size"].is_number_unsigned())
    throw InputError(index.string() + ": /metadata/total_size", "missing or not a byte count", "the index is damaged; download it again");
  const auto total = j["metadata"]["total_size"].get<std::uint64_t>();
  if (total > (1ULL << 50)) throw InputError(index.string() + ": /metadata/total_size", "is beyond any model's size");
  w.bytes = static_cast<i64>(total);
  w.from_index = true;
  w.basis = "model.safetensors.index.json metadata.total_size (MTP layers, if any, included)";
  return w;
}

void apply_safetensors_weights(ModelSpec& m, const std::string& config_path) {
  const std::string folder = std::filesystem::path(config_path).parent_path().string();
  if (folder.empty()) return;
  const auto w = read_safetensors_weights(folder, static_cast<i64>(m.layers.size()));
  if (!w || w->bytes <= 0) return;
  m.exact_weight_bytes = w->bytes;
  // a rank's share is its parameters at the file's average bytes per parameter (weights.cpp)
  m.exact_params = w->elements > 0 ? w->elements : count_params(m).total;
  if (w->from_index) {
    m.exact_weight_basis = "metadata.total_size of the safetensors index";
    // an unquantised config at under half or over twice its dtype's bytes a parameter: a stale or edited index
    const double per_param = static_cast<double>(w->bytes) / static_cast<double>(*m.exact_params);
    const double dtype_bytes = static_cast<double>(format_info(m.dtype).block_bytes);
    if (m.quant.method == "none" && (per_param < 0.5 * dtype_bytes || per_param > 2.0 * dtype_bytes)) {
      char shown[32];
      std::snprintf(shown, sizeof shown, "%.2f", per_param);
      m.warnings.push_back("model.safetensors.index.json: metadata.total_size " + human_bytes(w->bytes) + " is " +
                           shown + " B a parameter for an unquantised " + std::string(format_info(m.dtype).name) +
                           " config (" + std::to_string(static_cast<int>(dtype_bytes)) + " B): the weights are taken from it; check the index, or give --weight-format");
    }
  }
  std::string note = "weights: " + human_bytes(w->bytes) + " from the " + w->basis;
  if (w->skipped_bytes > 0)
    note += "; " + human_bytes(w->skipped_bytes) + " of multi-token-prediction layers left out (loaded only with MTP speculation)";
  if (w->skipped_bytes > w->mtp_aside_bytes) m.mtp_weight_bytes = w->skipped_bytes - w->mtp_aside_bytes;
  m.notes.push_back(note);
}

}  // namespace kvplan::io
