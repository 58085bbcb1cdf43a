// Kubernetes manifests, Helm values and compose files as people deploy serving engines: every
// container that runs an engine becomes one ManifestDeployment (its command line with $(VAR)
// expanded from the container's env, its GPU count, the GPU product from node labels, its image).
// Kinds: Deployment, StatefulSet, DaemonSet, Job, Pod, LeaderWorkerSet, KServe InferenceService
// and ServingRuntime, KubeAI Model, vLLM production-stack Helm values, docker compose services.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/checked.hpp"
#include "kvplan/io/yaml_doc.hpp"

namespace kvplan::io {

/// What a document is, judged from its top-level keys.
enum class DocKind {
  deployment_file,  // kvplan's own: deployments: / model: / command:
  kubernetes,       // apiVersion + kind
  helm_values,      // vLLM production-stack values: servingEngineSpec:
  compose,          // docker compose: services:
  unknown,
};
DocKind classify_document(const LocatedDoc& doc);

struct ManifestDeployment {
  std::string name;   // "Deployment/vllm-llama", "InferenceService/llama", "compose service vllm"
  std::string kind;   // Deployment, StatefulSet, LeaderWorkerSet, InferenceService, ServingRuntime, Model, helm-values, compose, ...
  std::string where;  // file:line:col of the container (or model entry)
  /// The container's command line: command + args (compose: entrypoint + command) with $(VAR) expanded
  /// from the container env where the variable is defined (Kubernetes leaves undefined ones as written).
  std::vector<std::string> argv;
  std::string argv_where;  // file:line:col of args / command
  bool args_only = false;  // argv holds only arguments; the image's entry point runs the engine
  std::map<std::string, std::string> env;    // literal env values
  std::vector<std::string> env_from_secret;  // env names set from valueFrom / envFrom (value unknown)
  std::string image;        // "vllm/vllm-openai:v0.11.0"
  std::string engine_hint;  // vllm | sglang | llama.cpp | trtllm | "" (from the image or the resource's engine field)
  std::string model;        // model named by the resource itself (KubeAI url, Helm modelURL, KServe storageUri), "" if none
  std::optional<i64> gpu_count;  // nvidia.com/gpu or amd.com/gpu (limits, else requests) per pod
  std::string gpu_count_where;
  std::string mig_profile;       // "3g.40gb" from a nvidia.com/mig-3g.40gb resource
  std::string gpu_product;       // node label value: nvidia-h100-80gb, NVIDIA-H100-80GB-HBM3, nvidia-l4 ...
  std::string gpu_product_where;
  std::optional<i64> pods_per_group;  // LeaderWorkerSet size (leader + workers)
  std::vector<std::string> warnings;
};

/// Every engine container in the documents (containers that run no engine are skipped; init
/// containers are skipped). Throws InputError with file:line:col for malformed resources.
std::vector<ManifestDeployment> read_manifests(const std::vector<LocatedDoc>& docs);

}  // namespace kvplan::io
