// Serving-engine command lines as people write them (Kubernetes args, compose files, shell scripts,
// docker run): entry points of vLLM, SGLang, TensorRT-LLM and llama.cpp (and NVIDIA Dynamo's
// wrappers), read against the flag table of the engine version planned, mapped to kvplan settings.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kvplan/core/error.hpp"

namespace kvplan::io {

/// A setting the command gives: the settings-table key, the value (converted to kvplan's units),
/// and where it was written.
struct CommandSetting {
  std::string key;    // "max_model_len"
  std::string value;  // "32768"
  std::string flag;   // as written: "--max-model-len", "LLAMA_ARG_CTX_SIZE", "kv_cache_config.max_tokens"
  std::string where;  // "deploy.yaml:7:5: word 6", "ctx.yaml:3:5"
};

/// A variable the command leaves unexpanded in a flag that changes memory.
struct UnresolvedVariable {
  std::string variable;  // "MAX_SEQ_LEN" (without $ { } ( ) %)
  std::string flag;      // "--max-model-len"
  std::string key;       // "max_model_len" ("model" for the model argument)
  std::string where;
};

struct EngineCommand {
  std::string engine;   // "vllm", "sglang", "trtllm" or "llama.cpp" (kvplan --engine names)
  std::string version;  // the flag table read: "0.11.0"
  std::string release;  // the release the command runs, as given (the context's version, else the image's tag; "" = not said)
  std::string image;    // docker run IMAGE, when the command was one
  std::string model;    // the model argument (positional, --model, --model-path, -m, -hf ...), may be empty
  std::string model_where;
  std::vector<CommandSetting> settings;
  std::vector<UnresolvedVariable> unresolved;
  std::vector<std::string> ignored;    // flags accepted with no effect on GPU memory
  std::vector<std::string> warnings;   // flags that change memory but are not modelled, skipped words, ...
  std::vector<std::string> unknown;    // flags the engine version does not have (--strict fails them)
};

/// How to read a command: the engine version whose flags apply ("" = the newest kvplan knows) and
/// the variables known for expansion ($VAR, ${VAR}, $(VAR), %VAR%; --set VAR=..., container env).
struct CommandContext {
  std::string version;
  std::map<std::string, std::string> variables;
  std::string base_dir;  // where relative config files (--config, --extra_llm_api_options) are looked up
};

/// Splits a command line as a POSIX shell would (quotes, escapes, backslash-newline continuations,
/// comments). Throws InputError("<where>", "unterminated quote ...").
std::vector<std::string> shell_split(const std::string& text, const std::string& where);

/// Recognises the entry point (vllm serve, python[3] -m vllm.entrypoints.openai.api_server, python -m
/// dynamo.vllm / dynamo.sglang / dynamo.trtllm, python -m sglang.launch_server, sglang serve,
/// llama-server under any name or path (and the older `server`), trtllm-serve [serve], sh -c "...",
/// docker run ... IMAGE ARGS, or bare arguments when `engine_hint` names the engine) and reads its
/// flags as the engine's parser does (--flag=value, "_" for "-", argparse unique prefixes, booleans as
/// =true/=false and --no-X, vLLM's dotted JSON keys). A flag that version lacks is a warning with
/// "did you mean" (recorded in `unknown`), never an error. Throws InputError for an unsupported entry
/// point or a malformed value.
EngineCommand parse_engine_command(const std::vector<std::string>& argv, const std::string& engine_hint, const std::string& where,
                                   const CommandContext& ctx = {});

/// The engine version an image tag names: vllm/vllm-openai:v0.11.0 -> "0.11.0", lmsysorg/sglang:v0.5.4-cu129
/// -> "0.5.4", ghcr.io/ggml-org/llama.cpp:server-b6000 -> "b6000", :latest -> "latest"; "" when the tag names
/// none (server-cuda, a digest). The engine itself: engine_from_image (manifests.hpp).
std::string engine_version_from_image(const std::string& image);

/// Expands the variables that `vars` defines in `word` ($VAR, ${VAR}, ${VAR:-default}, $(VAR),
/// %VAR%); others stay as written.
std::string expand_variables(const std::string& word, const std::map<std::string, std::string>& vars);

/// The first unexpanded variable in s ($VAR, ${VAR}, $(cmd), $((expr)), `cmd`, %VAR%, {{ helm }},
/// <PLACEHOLDER>), or "".
std::string unexpanded(const std::string& s);

/// The variable's name: "${MAX_SEQ_LEN}" -> "MAX_SEQ_LEN", "$(MODEL_ID)" -> "MODEL_ID", "%X%" -> "X".
std::string variable_name(const std::string& token);

}  // namespace kvplan::io
