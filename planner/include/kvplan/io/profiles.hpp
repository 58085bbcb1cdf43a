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
  json config;
};

/// One embedded file (generated at build time from profiles/).
struct EmbeddedProfile {
  const char* kind;  // "models" or "gpus"
  const char* id;
  const char* text;
};
const std::vector<EmbeddedProfile>& embedded_profiles();

/// Parses and validates one GPU profile (strict: exact key set, types, ranges).
GpuSpec gpu_from_json(const json& j, const std::string& id, const std::string& label);

class Profiles {
 public:
  /// Built-ins, then every *.json in dir/models and dir/gpus (same id replaces the built-in).
  static Profiles load(const std::optional<std::string>& dir);

  const std::map<std::string, ModelProfile>& models() const { return models_; }
  const std::map<std::string, GpuSpec>& gpus() const { return gpus_; }

  /// A GPU by id or alias (case-insensitive); unknown -> InputError with "did you mean".
  const GpuSpec& gpu(const std::string& name) const;

  /// MODEL argument: a profile id, a config.json path, or a folder with config.json.
  ModelSpec model(const std::string& arg, std::string* origin = nullptr) const;

  /// Where the profiles came from ("built-in", DIR).
  const std::vector<std::string>& sources() const { return sources_; }

 private:
  void add_model(const std::string& id, const std::string& origin, const std::string& text);
  void add_gpu(const std::string& id, const std::string& origin, const std::string& text);
  std::map<std::string, ModelProfile> models_;
  std::map<std::string, GpuSpec> gpus_;
  std::map<std::string, std::string> gpu_alias_;
  std::vector<std::string> sources_;
};

}  // namespace kvplan::io
