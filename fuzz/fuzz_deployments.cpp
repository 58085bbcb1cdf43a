// libFuzzer harness: deployment files. The first byte picks YAML or JSON; the rest is the file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "kvplan/io/deployments.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path = "/tmp/kvplan-fuzz-" + std::to_string(::getpid()) + (data[0] & 1 ? ".yaml" : ".json");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  try {
    (void)kvplan::io::read_deployment_file(path);
  } catch (const kvplan::InputError&) {
  }
  ::unlink(path.c_str());
  return 0;
}
