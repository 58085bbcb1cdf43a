// libFuzzer harness: engine option files named on a command line: TensorRT-LLM option YAML
// (--extra_llm_api_options / --config) and vLLM / SGLang --config YAML; the first byte picks which.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "kvplan/io/cmdline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string path = "/tmp/kvplan-fuzz-options-" + std::to_string(getpid()) + ".yaml";
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  std::vector<std::string> argv;
  switch (data[0] % 3) {
    case 0: argv = {"trtllm-serve", "serve", "m", "--extra_llm_api_options", path}; break;
    case 1: argv = {"vllm", "serve", "m", "--config", path}; break;
    default: argv = {"python", "-m", "sglang.launch_server", "--model-path", "m", "--config", path}; break;
  }
  try {
    (void)kvplan::io::parse_engine_command(argv, "", "fuzz");
  } catch (const kvplan::InputError&) {
  }
  return 0;
}
