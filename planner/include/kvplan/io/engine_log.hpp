// Serving-engine startup logs as people save them (vLLM, SGLang, TensorRT-LLM, llama.cpp / llama-server,
// ik_llama.cpp): ANSI colours, timestamps, journald prefixes, interleaved ranks, cut-off last lines.
// The reader extracts every memory figure the engine printed, with its line and the precision it was
// printed at, and the deployment from the args line the engine prints. It interprets nothing: what the
// figures mean and how they compare with a plan is the log command's job (cli/cmd_log.cpp).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kvplan::io {

/// One number an engine printed.
struct LogFigure {
  std::string key;          // vocabulary: docs/engine-logs.md (e.g. "kv_available_bytes", "kv_tokens", "n_ctx")
  double value = 0;         // sizes in bytes (converted by what the engine means by its unit), else the count or ratio
  double resolution = 0;    // half a unit of the last printed digit, in value's unit (0.005 GiB for "53.29GiB"); 0: exact
  int line = 0;             // 1-based line of the file
  std::string text;         // as printed ("53.29GiB", "2,042,016")
  std::string scope;        // "" or where it came from: a rank ("TP0", "rank 1") or a llama.cpp buffer ("CUDA0", "CPU")
};

struct EngineLog {
  std::string engine;   // "vllm", "sglang", "trtllm", "llama.cpp"; "" when nothing was recognised
  std::string version;  // as printed: "0.10.0", "b5781" (llama.cpp build number); "" when not printed
  std::string fork;     // "ik_llama.cpp" when the log is from that fork; else ""
  /// The deployment from the args line the engine printed, as the engine's own destination names and values
  /// (vLLM "non-default args: {...}" / "args: Namespace(...)", SGLang "server_args=ServerArgs(...)",
  /// vLLM "Initializing a V1 LLM engine (v0.10.0) with config: model=..., max_seq_len=..."):
  /// {"model", "meta-llama/Llama-3.1-8B"}, {"max_model_len", "20000"}. Python None is left out; True/False kept.
  std::vector<std::pair<std::string, std::string>> args;
  int args_line = 0;
  std::map<std::string, std::string> text;  // named strings: "type_k", "type_v", "general.name", "file_type", "dtype", "kv_dtype", "arch"
  std::vector<LogFigure> figures;           // in file order
  std::vector<std::string> warnings;        // "line 812: cut off mid-line; ignored"
  bool does_not_start = false;              // the engine said it cannot start
  std::string start_error;                  // that line, cleaned
  int start_error_line = 0;

  /// First figure with this key (rank 0 / the first scope first); nullptr when absent.
  const LogFigure* find(const std::string& key) const;
  /// Sum of every figure with this key, over every line and scope (llama.cpp per-device buffers, the two
  /// caches of an iSWA model); 0 when absent. Ranks that print the same figure are added too: use find there.
  double sum(const std::string& key) const;
};

/// Reads the text of a log. `name` names it in errors. Throws InputError(name, ...) for an empty file and
/// for binary content (NUL bytes or mostly non-text). A text log with no recognisable engine line is not an
/// error here: engine is "" and figures is empty (the caller says so).
EngineLog read_engine_log(const std::string& text, const std::string& name);

}  // namespace kvplan::io
