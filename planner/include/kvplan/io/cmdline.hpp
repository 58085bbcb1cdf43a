// Serving-engine command lines as people write them (Kubernetes args, compose files, shell):
// entry points of vLLM, SGLang, TensorRT-LLM and llama.cpp, mapped to kvplan's deployment flags.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kvplan/core/error.hpp"

namespace kvplan::io {

struct EngineCommand {
  std::string engine;  // "vllm", "sglang", "trtllm" or "llama.cpp" (kvplan --engine names)
  std::string model;   // the model argument (positional, --model, --model-path, -m, -hf ...), may be empty
  /// kvplan deployment flags with values, e.g. {"--tensor-parallel-size", "4"}, {"--kv-dtype", "fp8"},
  /// {"--enforce-eager", "true"}. Names are those of `kvplan plan --help`.
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<std::string> ignored;   // engine flags that do not change memory (--host, --port, ...)
  std::vector<std::string> warnings;  // e.g. "--port: unexpanded ${PORT}"
};

/// Splits a command line as a POSIX shell would (quotes, escapes, backslash-newline continuations,
/// comments). Throws InputError("<where>", "unterminated quote ...").
std::vector<std::string> shell_split(const std::string& text, const std::string& where);

/// Recognises the entry point (vllm serve, python[3] -m vllm.entrypoints.openai.api_server, bare
/// vLLM args, python -m sglang.launch_server, sglang serve, llama-server, trtllm-serve [serve]) and
/// maps its flags (with --flag=value, underscores for dashes, unique-prefix abbreviations as argparse
/// accepts, booleans as =true/=false) to kvplan settings. `engine_hint` ("" or an engine name) tells
/// which engine bare arguments belong to. Throws InputError naming an unknown flag (with the list of
/// flags kvplan knows for that engine) or an unsupported entry point.
EngineCommand parse_engine_command(const std::vector<std::string>& argv, const std::string& engine_hint,
                                   const std::string& where);

}  // namespace kvplan::io
