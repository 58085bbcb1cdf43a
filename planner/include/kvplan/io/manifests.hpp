// Kubernetes manifests, Helm values and compose files as people deploy serving engines: every
// container that runs an engine becomes one ManifestDeployment (its command line with $(VAR) expanded
// from the container's env, its GPU count, the GPU product from node labels, its image).
// Kinds: Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob (and the same pod template
// in Argo Rollout, Knative Service, OpenShift DeploymentConfig), List, LeaderWorkerSet, KServe
// InferenceService / ServingRuntime / ClusterServingRuntime, KubeAI Model, vLLM production-stack Helm
// values (servingEngineSpec.modelSpec), docker compose services.
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
  std::string kind;   // Deployment, StatefulSet, LeaderWorkerSet, InferenceService, ServingRuntime, Model, helm-values,
                      // compose, ...
  std::string where;  // file:line:col of the container (or model entry)
  /// The container's command line: command + args (compose: entrypoint + command) with $(VAR) expanded
  /// from the container env where the variable is defined (Kubernetes leaves undefined ones as written).
  std::vector<std::string> argv;
  std::string argv_where;                  // file:line:col of args / command
  bool args_only = false;                  // argv holds only arguments; the image's entry point runs the engine
  std::map<std::string, std::string> env;  // literal env values
  /// env names whose value is not in the file: valueFrom entries by name; envFrom sources as
  /// "secretRef/NAME" or "configMapRef/NAME"; compose pass-through variables (FOO with no value).
  std::vector<std::string> env_from_secret;
  std::string image;        // "vllm/vllm-openai:v0.11.0"
  std::string engine_hint;  // vllm | sglang | llama.cpp | trtllm | "" (from the image or the resource's engine field)
  std::string model;  // model named by the resource itself (KubeAI url, Helm modelURL, KServe storageUri), "" if none
  std::optional<i64> gpu_count;  // nvidia.com/gpu or amd.com/gpu (limits, else requests) per pod
  std::string gpu_count_where;
  std::string mig_profile;  // "3g.40gb" from a nvidia.com/mig-3g.40gb resource
  std::string gpu_product;  // node label value: nvidia-h100-80gb, NVIDIA-H100-80GB-HBM3, nvidia-l4 ...
  std::string gpu_product_where;
  std::optional<i64> pods_per_group;  // LeaderWorkerSet size (leader + workers)
  std::vector<std::string> warnings;
};

/// Kubernetes dependent-variable expansion of `$(VAR)` in command, args and env values, as the
/// kubelet does it: a defined VAR is replaced, `$$` gives a literal `$` (so `$$(VAR)` -> `$(VAR)`),
/// an undefined `$(VAR)` and an unterminated `$(` stay as written.
std::string expand_kube_vars(const std::string& text, const std::map<std::string, std::string>& vars);

/// The engine an image runs, judged from its name ("vllm/vllm-openai:v0.11.0" -> "vllm"), or "".
std::string engine_from_image(const std::string& image);

/// Every engine container in the documents, in document order. A container runs an engine when its
/// image names one (engine_from_image) or its command line names vllm / sglang / llama-server /
/// trtllm-serve / dynamo, or (unsure) it holds GPUs; other containers, init containers, KubeAI
/// models of other engines (OLlama, Infinity, FasterWhisper) and other kinds (Service, ConfigMap, ...)
/// are skipped without a word. `sh -c SCRIPT` is replaced by the words of SCRIPT. Throws InputError with file:line:col for malformed resources
/// (containers not a list, args not a list of strings, a GPU count that is not a positive integer).
std::vector<ManifestDeployment> read_manifests(const std::vector<LocatedDoc>& docs);

}  // namespace kvplan::io
