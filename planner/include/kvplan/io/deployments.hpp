// Deployment files (YAML or JSON): one or more deployments, each a model, GPUs, an engine with its
// settings (as fields or as the engine's own command line), the expected traffic and requirements.
// Field reference: docs/deployment-files.md. Errors name file:line:column (YAML) or the JSON path.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvplan/core/checked.hpp"

namespace kvplan::io {

struct DeploymentDoc {
  std::string name;
  std::string file;
  std::string where;     // "file:line:col" (YAML) or "file: /deployments/0" (JSON)
  std::string model;     // built-in id, config.json path, snapshot folder, .gguf file, or ORG/NAME (HF cache)
  std::string gpu;
  std::optional<i64> gpus;  // total GPUs; must equal TP x PP x DP when given
  std::string engine;
  std::string engine_version;        // engine_version: (else the command's image tag, else the newest)
  std::vector<std::string> command;  // the engine's command line (argv), empty when not given
  std::string command_where;
  /// settings: as (settings-table key, value, file:line:col, the key as written), in file order
  struct Setting {
    std::string key, value, where, written;
  };
  std::vector<Setting> settings;
  std::map<std::string, std::string> variables;  // variables: values for $VAR in the command
  std::string variables_where;
  // from a Kubernetes manifest, compose file or Helm values (manifests.hpp)
  std::vector<std::pair<std::string, std::string>> env;  // the container's env, applied to the command
  std::string env_where;
  bool gpus_soft = false;              // gpus: from a GPU limit: a mismatch with the layout is a warning
  bool gpu_unlabelled = false;         // a manifest with no GPU label: planned on the default GPU unless --set names one
  std::vector<std::string> warnings;   // from reading the manifest
  // traffic
  std::optional<i64> prompt_tokens, output_tokens, context, concurrency, shared_prefix;
  // simulated traffic (the simulation requirements): an open loop at `rate` requests/s, or a trace
  // file (relative to the deployment file's folder); else a closed loop at `concurrency`
  std::optional<double> rate;
  std::optional<i64> requests, seed;
  std::string trace;
  // requirements
  std::optional<bool> starts;
  std::optional<i64> min_concurrency;
  std::optional<i64> min_concurrency_tokens;  // tokens per request for min_concurrency (default: traffic)
  std::optional<double> min_headroom;         // fraction of the KV pool left at the traffic
  std::optional<double> max_tpot_ms, max_ttft_ms;
  // simulation requirements (kvplan simulate on the traffic): p99 latencies, goodput, preemptions
  std::optional<double> max_p99_ttft_ms, max_p99_tpot_ms, min_goodput, max_preemption_rate;
  bool simulated() const { return max_p99_ttft_ms || max_p99_tpot_ms || min_goodput || max_preemption_rate; }
  std::string requirements_where;
  std::map<std::string, std::string> field_where;  // "model", "gpu", "engine", "traffic.context" -> file:line:col
};

/// Reads a deployment file (.yaml/.yml parsed as YAML, anything else as JSON). Throws InputError
/// with file:line:column for syntax errors, unknown keys (with "did you mean"), wrong types and
/// out-of-range values; bounded against alias bombs and deep nesting.
std::vector<DeploymentDoc> read_deployment_file(const std::string& path);

}  // namespace kvplan::io
