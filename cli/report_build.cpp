// Report sections from plans, and atomic output files (see report_build.hpp).
#include "report_build.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "kvplan/core/units.hpp"
#include "kvplan/io/files.hpp"

namespace kvplan::cli {

namespace {

std::vector<i64> geometric(i64 lo, i64 hi, size_t max_values) {
  std::vector<i64> v;
  for (i64 x = lo; x <= hi && v.size() < max_values; x *= 2) v.push_back(x);
  if (v.empty() || v.back() != hi) {
    if (v.size() == max_values) v.back() = hi;
    else v.push_back(hi);
  }
  return v;
}

}  // namespace

ReportSection build_section(const Deployment& d, const Planner& p, const std::string& title, const std::vector<i64>& contexts,
                            const std::vector<i64>& concurrencies) {
  ReportSection s;
  s.title = title;
  const PlanSpec& spec = p.spec();
  // a sweep's section (its grid given) speaks of the grid: its longest context and the largest concurrency that fits
  // there stand for the summary, the throughput curve and the decode terms, not the base deployment's own workload
  const bool grid = !contexts.empty() && !concurrencies.empty();
  const i64 tokens = grid ? *std::max_element(contexts.begin(), contexts.end()) : d.tokens;
  const i64 prefix = std::min(d.shared_prefix, tokens);
  i64 concurrency = d.concurrency;
  if (grid) {
    concurrency = 1;
    for (i64 n : concurrencies)
      if (p.cell(tokens, n, prefix).fits) concurrency = std::max(concurrency, n);
  }
  const i64 prompt = grid ? tokens : d.prompt, output = grid ? 0 : d.output;
  auto span = [](const std::vector<i64>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return v.size() == 1 ? std::to_string(*lo) : std::to_string(*lo) + ".." + std::to_string(*hi) + " (" + std::to_string(v.size()) + " values)";
  };
  const Cell c = p.cell(tokens, concurrency, prefix);
  std::string workload = std::to_string(concurrency) + " requests x " + std::to_string(tokens) + " tokens";
  std::string fits_text = c.fits ? "yes" : "no (limited by " + c.limiting + ")";
  if (grid) {
    i64 fit_cells = 0;
    for (i64 ctx : contexts)
      for (i64 n : concurrencies) fit_cells += p.cell(ctx, n, std::min(d.shared_prefix, ctx)).fits;
    workload = "grid: context " + span(contexts) + " tokens x concurrency " + span(concurrencies);
    fits_text = std::to_string(fit_cells) + " of " + std::to_string(contexts.size() * concurrencies.size()) + " cells";
  }
  s.summary = {{"model", d.spec.model.id + " (" + d.spec.model.model_type + ")"},
               {"GPUs", std::to_string(deployment_gpus(spec)) + " x " + spec.gpu.name + " (TP " + std::to_string(spec.parallel.tp) +
                            ", PP " + std::to_string(spec.parallel.pp) + ", DP " + std::to_string(spec.parallel.dp) + ")"},
               {"engine", std::string(engine_name(spec.engine.kind)) + " — " + p.engine().rules_version},
               {"KV cache", kv_pair_label(spec.kv.k_format, spec.kv.v_format, " / ")},
               {"workload", workload},
               {"fits", fits_text},
               {"max concurrency at " + std::to_string(tokens) + " tokens", std::to_string(p.max_concurrency(tokens, prefix))}};
  // grid: contexts from 1k (or less) to the longest request, concurrency from 1 past the largest that fits
  const i64 max_len = std::max<i64>(p.max_len(), 1);
  s.contexts = contexts.empty() ? geometric(std::min<i64>(1024, max_len), max_len, 10) : contexts;
  const i64 most = std::max<i64>({p.max_concurrency(s.contexts.front(), d.shared_prefix), d.concurrency, 4});
  s.concurrencies = concurrencies.empty() ? geometric(1, std::min<i64>(most * 2, 1LL << 20), 12) : concurrencies;
  // a big sweep's report shows at most kMaxAxis values per axis, evenly spaced with both ends kept
  constexpr std::size_t kMaxAxis = 200;
  auto thin = [&](std::vector<i64>& v, const char* what) {
    if (v.size() <= kMaxAxis) return;
    std::vector<i64> t;
    for (std::size_t i = 0; i < kMaxAxis; ++i) t.push_back(v[i * (v.size() - 1) / (kMaxAxis - 1)]);
    s.assumptions.push_back("heatmap: " + std::to_string(kMaxAxis) + " of " + std::to_string(v.size()) + " " + what +
                            " shown, evenly spaced (the full grid is in the CSV/JSON output)");
    v = std::move(t);
  };
  thin(s.contexts, "contexts");
  thin(s.concurrencies, "concurrencies");
  // headroom as a fraction of the KV pool; a deployment with no pool (it does not start) has none
  const i64 pool_bytes = p.engine().kv_pool_bytes;
  const double pool = static_cast<double>(std::max<i64>(pool_bytes, 1));
  for (i64 ctx : s.contexts) {
    std::vector<bool> fits;
    std::vector<double> head;
    for (i64 n : s.concurrencies) {
      const Cell cc = p.cell(ctx, n, std::min(d.shared_prefix, ctx));
      fits.push_back(cc.fits);
      // a shortfall keeps its size (-129%: the requests need 2.29 pools), where it read -100% for any
      head.push_back(pool_bytes <= 0 ? std::nan("") : std::min(static_cast<double>(cc.headroom_bytes) / pool, 1.0));
    }
    s.fits.push_back(fits);
    s.headroom_fraction.push_back(head);
  }
  for (const auto& t : p.budget())
    if (t.name != "gpu_total") s.budget.emplace_back(t.name, t.bytes);
  s.gpu_total_bytes = p.total_bytes();
  s.device = device_noun(p.spec().gpu);
  for (i64 n : s.concurrencies) {
    if (!p.cell(tokens, n, prefix).fits && n > 1) break;
    s.throughput.emplace_back(n, estimate_perf(p, prompt, output, n, d.perf).decode_tokens_per_s_per_gpu);
  }
  if (grid) s.assumptions.push_back("summary, throughput and decode terms at the grid's longest context, " + std::to_string(tokens) + " tokens");
  for (const auto& t : p.budget()) s.assumptions.push_back(t.name + ": " + t.basis);
  const PerfResult pr = estimate_perf(p, prompt, output, concurrency, d.perf);
  // the linear layers' time as core/perf.cpp joins it: vLLM and SGLang overlap the weight read with the GEMM (a p-norm),
  // the other engines take the larger
  const bool pnorm = d.spec.engine.kind == EngineKind::vllm || d.spec.engine.kind == EngineKind::sglang;
  const std::string linear = pnorm ? "(weights read^p + GEMM FLOPs^p + dequant^p)^(1/p), p = " + fmt(d.perf.coefficients.gemm_overlap_p, 2)
                                   : "max(weights read, GEMM FLOPs, dequant)";
  s.assumptions.push_back("decode step = " + linear + " + max(KV read, attention FLOPs) + kernel launches + engine step + "
                          "collectives (docs/performance-model.md)");
  for (const auto& t : pr.decode_terms) s.assumptions.push_back("decode " + t.name + ": " + fmt(t.seconds * 1e3, 3) + " ms = " + t.basis);
  s.assumptions.push_back("engine rules: " + p.engine().rules_version + " (docs/engine-rules.md)");
  for (const auto& n : plan_notes(p)) s.assumptions.push_back(n);
  return s;
}

void OutputFiles::add_options(CLI::App* c, bool json_and_junit) {
  c->add_option("--html", html, "Write a self-contained HTML report (charts, assumptions) to FILE");
  c->add_option("--markdown", markdown, "Write the report as Markdown to FILE");
  if (json_and_junit) {
    c->add_option("--json", json, "Write the JSON result to FILE");
    c->add_option("--junit", junit, "Write JUnit XML (GitHub, GitLab, Jenkins) to FILE");
  }
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  const std::filesystem::path pa(a), pb(b);
  if (std::filesystem::exists(pa, ec) && std::filesystem::exists(pb, ec)) return std::filesystem::equivalent(pa, pb, ec);
  // not there yet: compare absolute, normalised paths (same2.csv and ./same2.csv, abs.csv and /cwd/abs.csv), links
  // in the existing part resolved, and a link to a file not written yet followed to it (the output is written
  // through the link, io::write_target)
  const auto resolved = [&](std::filesystem::path p) {
    p = std::filesystem::absolute(p, ec);
    for (int hops = 0; hops < 40 && std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec)); ++hops) {
      const std::filesystem::path target = std::filesystem::read_symlink(p, ec);
      if (ec) break;
      p = target.is_absolute() ? target : p.parent_path() / target;
    }
    return std::filesystem::weakly_canonical(p, ec);
  };
  return resolved(pa) == resolved(pb);
}

void OutputFiles::check(const std::vector<std::pair<std::string, std::string>>& extra, const std::vector<std::string>& inputs) const {
  std::vector<std::pair<std::string, std::string>> all = {{html, "--html"}, {markdown, "--markdown"}, {json, "--json"}, {junit, "--junit"}};
  all.insert(all.end(), extra.begin(), extra.end());
  all.erase(std::remove_if(all.begin(), all.end(), [](const auto& o) { return o.first.empty(); }), all.end());
  // two outputs into one file: the second would overwrite the first; an output onto an input destroys what was read
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size(); ++j)
      if (same_file(all[i].first, all[j].first))
        throw InputError(all[j].second, "'" + all[j].first + "' is also the " + all[i].second + " file", "give each output its own file");
    for (const auto& in : inputs)
      if (!in.empty() && same_file(all[i].first, in))
        throw InputError(all[i].second, "'" + all[i].first + "' is a file this command reads", "write the output to another file");
  }
  for (const auto& [path, flag] : all) io::check_writable(path, flag);
}

std::vector<std::string> files_named(const DeployArgs& a, const std::vector<std::string>& pasted) {
  std::vector<std::string> out;
  auto add = [&](const std::string& v) {
    std::error_code ec;
    if (!v.empty() && std::filesystem::is_regular_file(v, ec)) out.push_back(v);
  };
  for (const auto& [key, v] : a.flags.values()) add(v.text);
  for (const auto& kv : a.set) add(kv.substr(kv.find('=') + 1));
  for (const auto& w : pasted) add(w);
  return out;
}

void write_outputs(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::pair<std::string, std::string>> real;
  for (const auto& f : files)
    if (!f.first.empty()) real.push_back(f);
  io::write_files_atomically(real);
}

}  // namespace kvplan::cli
