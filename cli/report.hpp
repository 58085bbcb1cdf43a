// Capacity-review reports: one self-contained HTML file (inline CSS and SVG, no scripts, no network)
// and the same content as Markdown. Charts: a context x concurrency heatmap (fit and headroom), a
// stacked bar of the per-GPU budget, decode throughput against concurrency, time series (simulate).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kvplan/core/checked.hpp"
#include "output.hpp"

namespace kvplan::cli {

/// A time-series chart: lines over one x axis (simulate: KV-pool use, queues, preemptions over time).
struct SeriesChart {
  std::string title;               // heading above the chart
  std::string x_label, y_label;
  std::vector<double> x;           // increasing
  std::vector<std::pair<std::string, std::vector<double>>> lines;  // (legend name, one y per x)
  bool percent = false;            // y is a fraction 0..1, drawn as 0-100%
  std::string caption;
};

/// One deployment's section of a report.
struct ReportSection {
  std::string title;                                          // e.g. "llama-3.1-70b on 4 x h100-sxm (vllm)"
  std::string status;                                         // "" or "PASS" / "FAIL" (check)
  std::vector<std::pair<std::string, std::string>> summary;   // key / value lines shown first
  // heatmap: fits[i][j] and headroom_fraction[i][j] (headroom / KV pool, may be negative) for
  // contexts[i] x concurrencies[j]
  std::vector<i64> contexts;
  std::vector<i64> concurrencies;
  std::vector<std::vector<bool>> fits;
  std::vector<std::vector<double>> headroom_fraction;
  // stacked budget bar of the most loaded GPU: (term, bytes), drawn against gpu_total_bytes
  std::vector<std::pair<std::string, i64>> budget;
  i64 gpu_total_bytes = 0;
  std::string device = "GPU";           // what the budget and throughput are per: "GPU", or "host" for a CPU host
  // decode throughput: (concurrency, decode tokens/s per GPU)
  std::vector<std::pair<i64, double>> throughput;
  std::vector<SeriesChart> charts;      // time series (drawn after the throughput curve)
  std::vector<Table> tables;            // any further tables (requirements, engine report)
  std::vector<std::string> assumptions; // formulas and assumptions used, one per line
};

struct Report {
  std::string title;
  std::string generated_by;  // "kvplan 0.1.0 (sha)" - no timestamps, so reports are reproducible
  std::vector<ReportSection> sections;
};

/// Self-contained HTML (UTF-8, inline <style>, inline <svg>; no <script>, no external URL).
std::string render_html(const Report& r);

/// GitHub-flavoured Markdown with the same content (the heatmap as a table of fit marks and headroom).
std::string render_markdown(const Report& r);

}  // namespace kvplan::cli
