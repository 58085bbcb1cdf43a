// SettingsBag -> DeploymentSpec: loads the model (with its config overrides and model options),
// the GPU, the engine and its settings, the workload and the performance parameters, each read
// with its declared type; every error names where the value was written.
#pragma once

#include <string>
#include <utility>

#include "kvplan/core/deployment.hpp"
#include "kvplan/io/profiles.hpp"
#include "kvplan/io/settings.hpp"

namespace kvplan::io {

/// What the model came from, for the JSON inputs.
struct ModelInfo {
  std::string arg;              // as given (MODEL, --model, model:)
  std::string origin;           // built-in profile id / file path
  std::string weight_override;  // --weight-format when given
  std::string mla_layout = "latent";
  bool ignore_windows = false;
};

struct BuiltDeployment {
  DeploymentSpec spec;
  ModelInfo model;
  std::string engine_version;  // the version whose flag table was used ("" when none)
};

/// Builds the typed deployment. Kvplan flags that belong to another engine ("--mem-fraction-static"
/// with vllm) are errors naming the engine's own flag. Throws InputError at the value's origin.
BuiltDeployment build_deployment(const SettingsBag& bag, const Profiles& profiles);

/// Runs f() and rethrows an InputError whose `where` is a setting key (core errors name fields)
/// at the place the user wrote that setting, or the kvplan flag that would set it.
template <class F>
auto at_origin(const SettingsBag& bag, EngineKind engine, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const OverflowError&) {
    throw;
  } catch (const InputError& e) {
    if (!find_setting(e.where()) || e.where().find('-') != std::string::npos) throw;
    // K and V given as one type (--kv-dtype) are checked as cache_type_k / _v on llama.cpp, and the other way round:
    // the error names what the user wrote
    std::string key = e.where();
    if (!bag.has(key)) {
      if ((key == "cache_type_k" || key == "cache_type_v") && bag.has("kv_cache_dtype")) key = "kv_cache_dtype";
      else if (key == "kv_cache_dtype" && (bag.has("cache_type_k") || bag.has("cache_type_v"))) key = bag.has("cache_type_k") ? "cache_type_k" : "cache_type_v";
      else if (key == "dtype" && bag.has("weight_format")) key = "weight_format";  // --weight-format f16|bf16|f32 is the dtype
    }
    throw InputError(bag.where(key, engine), e.problem(), e.fix());
  }
}

/// The engine a bag names (default vllm); "vllm@0.11" also names the version.
std::pair<EngineKind, std::string> engine_of(const SettingsBag& bag);

}  // namespace kvplan::io
