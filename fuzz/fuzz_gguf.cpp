// libFuzzer harness: GGUF headers (metadata and tensor table).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "kvplan/core/kv.hpp"
#include "kvplan/io/gguf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = "/tmp/kvplan-fuzz-" + std::to_string(::getpid()) + ".gguf";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const kvplan::ModelSpec m = kvplan::io::model_from_gguf(path, "fuzz");
    kvplan::KvOptions o;
    o.context = 4096;
    o.k_format = o.v_format = o.state_format = m.dtype;
    (void)kvplan::compute_kv(m, o);
  } catch (const kvplan::InputError&) {
  }
  ::unlink(path.c_str());
  return 0;
}
