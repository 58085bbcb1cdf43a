// libFuzzer harness: engine command lines (shell splitting and every engine's flag mapping).
#include <cstddef>
#include <cstdint>
#include <string>

#include "kvplan/io/cmdline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto argv = kvplan::io::shell_split(text, "fuzz");
    for (const char* hint : {"", "vllm", "sglang", "llama.cpp", "trtllm"}) {
      try {
        (void)kvplan::io::parse_engine_command(argv, hint, "fuzz");
      } catch (const kvplan::InputError&) {
      }
    }
  } catch (const kvplan::InputError&) {
  }
  return 0;
}
