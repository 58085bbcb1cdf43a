// libFuzzer harness: Kubernetes manifests, Helm values and compose files (multi-document YAML) read
// into engine containers.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kvplan/io/manifests.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto docs = kvplan::io::parse_documents(text, "fuzz.yaml", true, true);
    for (const auto& d : docs) (void)kvplan::io::classify_document(d);
    (void)kvplan::io::read_manifests(docs);
  } catch (const kvplan::InputError&) {
  }
  return 0;
}
