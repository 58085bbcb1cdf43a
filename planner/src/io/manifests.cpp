// Kubernetes manifests, Helm values and compose files (see manifests.hpp).
#include "kvplan/io/manifests.hpp"

namespace kvplan::io {

DocKind classify_document(const LocatedDoc& doc) {
  const json& r = doc.root;
  if (!r.is_object()) return DocKind::unknown;
  if (r.contains("apiVersion") && r.contains("kind")) return DocKind::kubernetes;
  if (r.contains("servingEngineSpec")) return DocKind::helm_values;
  if (r.contains("services")) return DocKind::compose;
  if (r.contains("deployments") || r.contains("model") || r.contains("command")) return DocKind::deployment_file;
  return DocKind::unknown;
}

std::vector<ManifestDeployment> read_manifests(const std::vector<LocatedDoc>&) { return {}; }

}  // namespace kvplan::io
