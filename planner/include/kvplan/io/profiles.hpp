// Built-in model and GPU profiles (compiled in from profiles/), plus a user folder that adds and
// overrides (--profiles DIR with models/<id>.json and gpus/<id>.json), and model resolution from a
// profile id, a config.json path or a snapshot folder.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/gpu.hpp"
#include "kvplan/core/model.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::io {

struct ModelProfile {
  std::string id;
  std::string origin;  // "built-in" or the file path
  std::string source;  // the profile's _source
  std::vector<std::string> hf_ids;  // the profile's _hf_ids: Hub repos whose config.json this is
  json config;
};

/// One embedded file (generated at build time from profiles/ by cmake/embed_profiles.cmake).
struct EmbeddedProfile {
  const char* kind;  // "models" or "gpus"
  const char* id;
  const char* text;
  // the names it is looked up by, one per line: a GPU's "aliases", a model's "_hf_ids"; nullptr where the
  // build could not read them (the profile is then parsed at load)
  const char* keys;
};
const std::vector<EmbeddedProfile>& embedded_profiles();

/// Parses and validates one GPU profile (strict: exact key set, types, ranges).
GpuSpec gpu_from_json(const json& j, const std::string& id, const std::string& label);

/// The key a GPU name is matched by: lower case, every run of spaces, '_' and '-' one '-', no
/// leading or trailing '-' ("NVIDIA A100-SXM4-80GB", "nvidia_a100 sxm4 80gb" -> "nvidia-a100-sxm4-80gb").
std::string gpu_name_key(const std::string& name);

/// A GPU profile for the user to fill in (`kvplan gpus --template`): every key, nulls where
/// allowed, 0 where a number is required (so an unfilled template fails to load naming the key).
std::string gpu_profile_template();

/// Built-in profiles are parsed (and validated) when first used, so that a command pays for the few it
/// names, not for every embedded file; models() and gpus() parse them all. Not for concurrent use.
class Profiles {
 public:
  /// Built-ins, then every *.json in dir/models and dir/gpus (same id replaces the built-in; a user
  /// file is parsed and validated here).
  static Profiles load(const std::optional<std::string>& dir);

  /// Every profile, parsed (a malformed built-in throws InputError naming its file).
  const std::map<std::string, ModelProfile>& models() const;
  const std::map<std::string, GpuSpec>& gpus() const;

  /// A GPU by id, alias, nvidia-smi / torch name or Kubernetes label value (case-insensitive;
  /// spaces, '_' and '-' alike). Unknown -> InputError with "did you mean"; a name that several
  /// profiles share (e.g. "NVIDIA GeForce RTX 3080": 10 GB and 12 GB cards) -> InputError listing them.
  const GpuSpec& gpu(const std::string& name) const;
  /// As above; when the name is shared, the candidate whose memory_bytes is nearest `memory_bytes`
  /// (e.g. the total nvidia-smi or --gpu-memory-bytes gives). Ties go to the first id.
  const GpuSpec& gpu(const std::string& name, std::optional<i64> memory_bytes) const;

  /// A GPU without a profile: id "custom", memory_bytes_kind "derived", no TFLOP/s figures.
  /// bandwidth_bytes_per_s absent -> memory_bandwidth_bytes_per_s 0, which means "unknown": memory
  /// planning works, performance estimates (TPOT, tokens/s) do not. memory_bytes < 1 -> InputError.
  static GpuSpec custom_gpu(i64 memory_bytes, std::optional<i64> bandwidth_bytes_per_s);

  /// MODEL argument: a profile id (case-insensitive), a config.json path, a folder with config.json,
  /// a GGUF file, or a Hugging Face id: the local HF cache first, then a profile whose _hf_ids lists
  /// it (case-insensitive; a warning says the built-in was used), then a profile named like it
  /// (a guess, with a warning).
  /// `overrides` (vLLM --hf-overrides, SGLang --json-model-override-args) is merged into the config
  /// first, object by object; a GGUF file has no config to override (InputError).
  ModelSpec model(const std::string& arg, std::string* origin = nullptr, const json* overrides = nullptr) const;

  /// The profile id whose _hf_ids lists `repo_id` (case-insensitive), if any.
  std::optional<std::string> model_for_hf_id(const std::string& repo_id) const;

  /// Where the profiles came from ("built-in", DIR).
  const std::vector<std::string>& sources() const { return sources_; }

 private:
  void add_model(const std::string& id, const std::string& origin, const std::string& text) const;
  void add_gpu(const std::string& id, const std::string& origin, const std::string& text) const;
  /// The profile with this exact id, parsing a built-in on first use; nullptr if there is none.
  const ModelProfile* model_profile(std::string id) const;
  const GpuSpec& gpu_profile(std::string id) const;  // id must exist
  // parsed profiles, and the built-ins not parsed yet (id -> embedded text); an id is in one or the other
  mutable std::map<std::string, ModelProfile> models_;
  mutable std::map<std::string, GpuSpec> gpus_;
  mutable std::map<std::string, const char*> model_text_;
  mutable std::map<std::string, const char*> gpu_text_;
  std::vector<std::string> gpu_ids_;    // every GPU id, sorted
  std::vector<std::string> model_ids_;  // every model id, sorted
  std::map<std::string, std::vector<std::string>> gpu_alias_;  // gpu_name_key -> ids (sorted)
  std::map<std::string, std::string> model_lower_;              // lower-case id -> id
  std::map<std::string, std::string> hf_id_;                    // lower-case _hf_ids entry -> id
  std::vector<std::string> sources_;
};

}  // namespace kvplan::io
