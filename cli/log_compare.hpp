// A startup log as evidence: the figures an engine printed next to what kvplan computes for the same
// deployment, term by term. Two kinds of row:
//  - rule: the engine's own arithmetic replayed by kvplan from other printed figures (blocks from the
//    printed KV memory, tokens from blocks, K/V bytes from cells and head sizes, the start check). These
//    must agree within the printing precision; a difference is a kvplan rule that is wrong for this log.
//  - estimate: kvplan's own estimate of a measured term (weights, activation peak, non-torch, CUDA graphs,
//    the KV memory that follows from them). Reported with the difference and why it differs; never fails.
// Used by `kvplan log` (cmd_log.cpp) and `kvplan check --log` (cmd_check.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "deploy_options.hpp"
#include "kvplan/io/engine_log.hpp"
#include "output.hpp"

namespace kvplan::cli {

struct LogRow {
  std::string term;           // "GPU blocks"
  std::string unit;           // bytes | tokens | count | ratio
  std::string kind;           // rule | estimate
  std::optional<double> printed;
  std::string printed_text;   // as the engine printed it
  int line = 0;
  double tolerance = 0;       // the printing precision (plus that of the printed inputs a rule starts from)
  std::optional<double> lo, hi;  // kvplan's value; a range when the printed inputs it starts from are rounded
  std::string basis;          // the formula or where kvplan's value comes from
  std::string note;           // why an estimate differs
  bool ok() const;            // rule: printed within [lo - tolerance, hi + tolerance]; estimate: always
};

struct LogComparison {
  std::string file;
  io::EngineLog log;
  std::vector<LogRow> rows;
  std::vector<std::string> notes;  // what was assumed (version, GPU, model)
  bool planned = false;            // a deployment (model) was known, so kvplan's plan was compared too
  double gpu_total = 0, utilization = 0;  // of the deployment planned (for logs that do not print them)
  bool total_assumed = false;             // gpu_total is the default profile's: the log printed none and no GPU was given
  int rules = 0, rules_ok = 0;
};

/// Reads FILE (exit 2 for an empty, binary or unrecognisable log).
io::EngineLog read_log_file(const std::string& path);

/// The deployment a log describes: the engine and version it printed, the args line it printed (vLLM,
/// SGLang) or its context lines (llama.cpp), then `extra` (kvplan --model/--gpu/--set). nullopt when no
/// model is known (only the log's own arithmetic can be checked then); `notes` says what was assumed.
std::optional<Deployment> deployment_from_log(const io::EngineLog& log, const DeploymentSource& extra, const io::Profiles& profiles,
                                              std::vector<std::string>& notes);

/// Compares the log with the deployment (nullptr: the log's own arithmetic only).
LogComparison compare_log(const std::string& file, const io::EngineLog& log, const Deployment* d, std::vector<std::string> notes);

/// The measured overhead terms (activation, non-torch, CUDA graphs, CUDA context) as a kvplan.overheads
/// JSON document for `--overheads FILE`; InputError when the log prints none.
ojson overheads_json(const LogComparison& c);

Table log_table(const LogComparison& c);
/// Every log's rows in one CSV-ready table: raw numbers (bytes, tokens, counts, ratios; the unit in its own column),
/// one value per cell, the file in the first column (the README's CSV rule).
Table log_csv_table(const std::vector<LogComparison>& all);
ojson log_json(const LogComparison& c);

}  // namespace kvplan::cli
