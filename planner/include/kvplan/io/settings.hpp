// The typed settings table: every deployment setting defined once (key, value type, group, help,
// its spelling in each front end: kvplan flags, each engine's flags, TensorRT-LLM option-YAML keys,
// llama-server environment variables), and the bag a front end fills with values that remember
// where they were written. build_deployment (deployment_build.hpp) turns a bag into the typed
// DeploymentSpec the core plans; nothing after that parses a string.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/core/checked.hpp"
#include "kvplan/core/deployment.hpp"
#include "kvplan/core/engine.hpp"

namespace kvplan::io {

class SettingsBag;

enum class SettingType {
  count,         // non-negative integer, 32k = 32768 (sweeps: a list)
  signed_count,  // integer that may be -1 (llama.cpp -ngl -1 = all)
  bytes,         // 85045477376, 80GiB, 512MiB, 80GB
  fraction,      // (0, 1]
  number,        // non-negative real
  boolean,       // true/false/1/0/yes/no/on/off
  text,          // a name or a path
  kv_format,     // a cache element format or auto
  choice,        // one of `choices`
  json,          // a JSON object
};

/// How an engine's value becomes kvplan's (applied before the typed parse).
enum class Conv {
  plain,
  vllm_int,      // vLLM human_readable_int: 32k = 32000, 32K = 32768; -1 / auto = the engine decides
  auto_count,    // -1 / auto = the engine decides (setting left unset)
  gpu_layers,    // llama.cpp -ngl: all = -1, auto = the engine decides
  quantization,  // vLLM / SGLang --quantization -> kvplan weight format
  rope_json,     // vLLM --rope-scaling JSON -> {"rope_scaling": JSON}
  negate,        // a switch whose presence sets the setting false (--no-kv-unified)
  sglang_chunk,  // SGLang --chunked-prefill-size: <= 0 disables chunked prefill (enable_chunked_prefill false)
};

/// One spelling of a setting in a front end.
struct Spelling {
  std::string name;                  // "--max-model-len", "-c", "kv_cache_config.max_tokens", "LLAMA_ARG_CTX_SIZE"
  std::vector<EngineKind> engines;   // kvplan flags: the engines the spelling belongs to (empty: all)
  Conv conv = Conv::plain;
};

struct SettingDef {
  std::string key;    // snake_case: the `settings:` key, --set KEY=..., the JSON inputs key, core error field
  SettingType type;
  std::string group;  // model | deployment | engine | llama.cpp | budget | workload | performance
  std::string help;
  std::vector<std::string> choices;  // SettingType::choice
  bool allows_auto = false;          // "auto" / -1 = let the engine choose
  bool sweepable = false;            // kvplan sweep takes a list
  bool list = false;                 // a comma-separated list: a deployment file may write it as a YAML list
  std::vector<Spelling> kvplan;      // kvplan's own flags (incl. the engine spellings people type)
  std::map<EngineKind, std::vector<Spelling>> engine;  // each engine's command-line flag(s)
  std::vector<Spelling> trtllm_yaml; // TensorRT-LLM LlmArgs option-YAML keys
  std::vector<Spelling> env;         // environment variables (LLAMA_ARG_*, VLLM_*)
  /// How the typed value reaches the DeploymentSpec. Rows declare it with .into(&EngineSettings::field);
  /// build_deployment calls it for every row that has one (the older rows are read there by hand).
  std::function<void(const SettingsBag&, DeploymentSpec&)> apply;
};

/// Every setting, in help order.
const std::vector<SettingDef>& settings_table();
/// A setting by key; '-' and '_' are the same ("max-model-len" finds max_model_len). nullptr if none.
const SettingDef* find_setting(std::string_view key);
/// The setting an engine flag (any alias the settings table lists) or env variable sets.
struct EngineBinding {
  const SettingDef* def = nullptr;
  Conv conv = Conv::plain;
};
std::optional<EngineBinding> engine_flag_binding(EngineKind engine, std::string_view flag);
std::optional<EngineBinding> env_binding(std::string_view variable, std::optional<EngineKind> engine = std::nullopt);
std::optional<EngineBinding> trtllm_yaml_binding(std::string_view key);

/// The kvplan flag that sets `key` for `engine` ("memory_fraction", sglang -> "--mem-fraction-static").
std::string kvplan_flag_for(const SettingDef& def, EngineKind engine);

/// Where a value came from, so an error can point at what the user wrote.
struct Origin {
  enum class Kind { flag, set, file, command, env, manifest, derived } kind = Kind::derived;
  std::string where;     // "--max-model-len", "deploy.yaml:7:5", "cmd: word 6 (--max-model-len)"
  std::string spelling;  // the flag or key as written ("--mem-fraction-static")
};

struct SettingValue {
  std::string text;  // as written, after variable expansion and engine conversion
  Origin origin;
};

/// The values a deployment was described with, by setting key. A later set() of the same key
/// replaces the earlier one (front ends apply in precedence order: command < file settings < flags).
class SettingsBag {
 public:
  /// Stores a value for `key` (InputError at origin.where for an unknown key).
  void set(const std::string& key, std::string text, Origin origin);
  void erase(const std::string& key) { values_.erase(key); }
  const SettingValue* get(const std::string& key) const;
  bool has(const std::string& key) const { return get(key) != nullptr; }
  const std::map<std::string, SettingValue>& values() const { return values_; }

  // Typed reads: nullopt when unset; InputError naming the origin when the text is not of the type.
  std::optional<i64> count(const std::string& key) const;
  std::optional<i64> signed_count(const std::string& key) const;
  std::optional<i64> bytes(const std::string& key) const;
  std::optional<double> fraction(const std::string& key) const;
  std::optional<double> number(const std::string& key) const;
  /// A rate in bytes per second: a number (3.35e12) or a byte unit per second (3.35TB/s, 89.6GB/s, 100GiB/s);
  /// a text that is neither, or not above 0, fails with `fix`.
  std::optional<double> bandwidth(const std::string& key, const std::string& fix) const;
  std::optional<bool> boolean(const std::string& key) const;
  std::optional<std::string> text(const std::string& key) const;
  /// A SettingType::choice setting: InputError naming the origin when the text is not one of the row's choices.
  std::optional<std::string> choice(const std::string& key) const;
  /// "auto" (or -1 where the setting allows it) -> true
  bool is_auto(const std::string& key) const;
  /// The text at `where`: "where: <problem>; <fix>".
  [[noreturn]] void fail(const std::string& key, const std::string& problem, const std::string& fix = {}) const;
  /// What to name in an error about `key` for `engine`: where the user wrote it, else the kvplan flag.
  std::string where(const std::string& key, EngineKind engine) const;


 private:
  std::map<std::string, SettingValue> values_;
};

/// Parses a boolean as engines accept it (true/false/1/0/yes/no/on/off); nullopt otherwise.
std::optional<bool> parse_bool_text(std::string_view v);

/// vLLM's human_readable_int: 25.6k = 25600 (k m g t: powers of 1000), 16K = 16384 (K M G T: of
/// 1024); anything else is returned as written.
std::string vllm_human_int(const std::string& v);

/// The non-empty pieces of `s` between `sep`s ("a,,b" -> a, b).
std::vector<std::string> split_list(std::string_view s, char sep);

/// SGLang's --chunked-prefill-size value that turns chunking off: a whole number <= 0 (-1 by its help; Scheduler:
/// chunked_prefill_size <= 0 -> None).
bool sglang_chunking_off(std::string_view value);

}  // namespace kvplan::io
