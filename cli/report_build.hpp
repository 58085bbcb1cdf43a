// Builds report sections from a deployment's plan (heatmap grid, budget bar, throughput curve,
// assumptions), and writes requested output files atomically. Shared by plan, sweep, check, report.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "deploy_options.hpp"
#include "report.hpp"

namespace kvplan::cli {

/// One section for a deployment: summary, a context x concurrency grid around the workload, the
/// budget of the most loaded GPU, decode tokens/s per GPU against concurrency, and the assumptions.
/// `contexts` / `concurrencies` choose the grid (empty: around the workload).
ReportSection build_section(const Deployment& d, const Planner& p, const std::string& title,
                            const std::vector<i64>& contexts = {}, const std::vector<i64>& concurrencies = {});

/// Whether two paths name one file: the same file where both exist (links, ./a and a), else the same absolute,
/// normalised path with symbolic links followed (a link to a file not written yet names that file).
bool same_file(const std::string& a, const std::string& b);

/// Output files a command was asked to write (--html, --markdown, --json, --junit).
struct OutputFiles {
  std::string html, markdown, json, junit;
  void add_options(CLI::App* c, bool json_and_junit);
  /// Checks every path before any work (missing folder: exit 2; not writable: exit 3): no two outputs (these and
  /// `extra`, (path, flag) pairs such as --per-request) share a file, and none is one of the command's `inputs`
  /// (a trace, a deployment file, a model file: writing there would destroy what was read).
  void check(const std::vector<std::pair<std::string, std::string>>& extra = {}, const std::vector<std::string>& inputs = {}) const;
};

/// The files a deployment's flags and pasted engine command name (a config.json, a GGUF, a calibration): every
/// value or word that is an existing regular file, for OutputFiles::check's inputs.
std::vector<std::string> files_named(const DeployArgs& a, const std::vector<std::string>& pasted);

/// Writes (path, content) pairs atomically, skipping empty paths.
void write_outputs(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace kvplan::cli
