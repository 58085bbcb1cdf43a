// The engines' flag surfaces by version (planner/data/engine-flags/<engine>/<version>.flags, taken
// from each engine's own argument definitions at a tag) and what each flag does to GPU memory
// (<engine>.effects). The command-line reader (cmdline.cpp) reads a command against the table of
// the version planned.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/engine.hpp"

namespace kvplan::io {

struct EmbeddedFile {
  const char* path;  // relative to planner/data: "engine-flags/vllm/0.11.0.flags"
  const char* text;
};
const std::vector<EmbeddedFile>& embedded_engine_data();

enum class FlagArity { flag, boolean, value, optional, list, list0, json };
const char* flag_arity_name(FlagArity a);

struct FlagDef {
  std::vector<std::string> names;  // spellings, canonical long name first
  FlagArity arity = FlagArity::value;
  std::string env;                 // llama.cpp LLAMA_ARG_* ("" when none)
};

struct FlagTable {
  EngineKind engine = EngineKind::vllm;
  std::string version;  // "0.11.0", "b7400"
  std::string source;   // repository, tag, files
  std::vector<FlagDef> flags;
  std::map<std::string, std::size_t> index;  // normalized spelling ("_" read as "-" in long names) -> flag
  const FlagDef* find(const std::string& spelling) const;
};

/// The versions with a flag table, oldest first (numeric compare; llama.cpp bNNNN by build number).
std::vector<std::string> flag_table_versions(EngineKind engine);

/// The table for `requested` ("" = the newest): an exact version, else the newest table whose version
/// starts with the requested components ("0.11" -> 0.11.x), else the newest older one. `note` says
/// what was chosen when it is not an exact match. Throws InputError when the engine has no table.
const FlagTable& flag_table(EngineKind engine, const std::string& requested, std::string* note = nullptr);

/// A flag in any version's table (newest first), for arity and "it was a 0.8.3 flag" hints.
struct FlagSighting {
  const FlagTable* table = nullptr;
  const FlagDef* flag = nullptr;
};
std::optional<FlagSighting> find_flag_any_version(EngineKind engine, const std::string& spelling);

enum class FlagEffect { none, unmodelled, elsewhere };
struct FlagEffectDef {
  FlagEffect effect = FlagEffect::none;
  std::string why;
  std::string when;  // "--flag=VALUE" lines: only with that value ("" = any value)
};
/// What a flag does to GPU memory when no setting models it (absent: none).
std::optional<FlagEffectDef> flag_effect(EngineKind engine, const std::string& spelling);

/// TensorRT-LLM option-YAML keys of a version (<version>.options): dotted key -> type.
const std::map<std::string, std::string>& trtllm_option_keys(const std::string& version);

/// "_" and "-" are one in long flag names; short flags are kept as written.
std::string normalize_flag_name(std::string name);


}  // namespace kvplan::io
