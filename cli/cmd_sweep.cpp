// `kvplan sweep MODEL`: context x concurrency (optionally x GPU x KV dtype x TP) grid; every cell
// has KV bytes, total bytes per GPU, fits, headroom and the limiting term. Rows are ordered GPU,
// TP, KV dtype, context, concurrency (the last varies fastest).
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "kvplan/core/sweep.hpp"
#include "kvplan/core/units.hpp"
#include "output.hpp"
#include "report_build.hpp"
#include "version.hpp"

namespace kvplan::cli {

namespace {

struct SweepArgs {
  DeployArgs d;
  std::string format = "table";
  bool perf = false;
  OutputFiles out;
};

void run_sweep(SweepArgs a, const CLI::App* app, Globals& g) {
  const Format fmt = parse_format_flag(a.format);
  a.out.check();
  const auto profiles = io::Profiles::load(g.profiles_dir);
  Report rep;
  rep.title = "kvplan sweep";
  rep.generated_by = std::string("kvplan ") + kVersion + " (" + kGitSha + ")";
  const std::vector<i64> contexts = expand_counts(a.d.context.empty() ? "1k,4k,16k,32k" : a.d.context, "--context");
  const std::vector<i64> concs = expand_counts(a.d.concurrency.empty() ? "1,8,32,128" : a.d.concurrency, "--concurrency");
  const std::vector<std::string> gpus = split_names(a.d.gpu);
  const std::vector<i64> tps = expand_counts(a.d.tp, "--tensor-parallel-size");
  std::vector<std::optional<std::string>> dtypes;
  for (const auto& s : split_names(a.d.model.kv_dtype)) dtypes.emplace_back(s);
  if (dtypes.empty()) dtypes.emplace_back(std::nullopt);
  // resolve the first point once for the model and workload flags
  DeployArgs first = a.d;
  first.context = std::to_string(contexts.front());
  first.concurrency = std::to_string(concs.front());
  first.gpu = gpus.empty() ? "" : gpus.front();
  first.tp = std::to_string(tps.front());
  first.model.kv_dtype = dtypes.front().value_or("");
  const Deployment d = resolve_deployment(first, app, profiles);
  for (const auto& w : d.model.spec.warnings) warn(w);

  const bool color = fmt == Format::table && isatty(STDOUT_FILENO);
  Table t;
  t.columns = {"gpu", "tp", "kv_dtype", "context", "concurrency", "kv_bytes", "total_bytes", "fits", "headroom_bytes", "limiting"};
  t.right_align = {false, true, false, true, true, true, true, false, true, false};
  if (a.perf) {
    t.columns.insert(t.columns.end(), {"tpot_s", "decode_tok_s_per_gpu"});
    t.right_align.insert(t.right_align.end(), {true, true});
  }
  ojson rows = ojson::array();
  for (const auto& gname : gpus) {
    const GpuSpec& gpu = profiles.gpu(gname);
    for (i64 tp : tps) {
      Parallel par = d.spec.parallel;
      par.tp = tp;
      if (a.d.enable_expert_parallel) par.ep = tp * par.dp;
      for (const auto& dt : dtypes) {
        const Planner p(respec(d, a.d, gpu, par, dt));
        const std::string dtname = std::string(format_info(p.spec().kv.k_format).name);
        if (!a.out.html.empty() || !a.out.markdown.empty())
          rep.sections.push_back(build_section(d, p, d.model.spec.id + " on " + gpu.id + ", TP " + std::to_string(tp) + ", KV " + dtname,
                                               contexts, concs));
        for (i64 ctx : contexts)
          for (i64 conc : concs) {
            const Cell c = p.cell(ctx, conc, d.shared_prefix);
            std::vector<std::string> row;
            ojson jr = {{"gpu", gpu.id}, {"tensor_parallel_size", tp}, {"kv_dtype", dtname}, {"context_tokens", ctx},
                        {"concurrency", conc}, {"kv_bytes", c.kv_bytes}, {"total_bytes", c.total_bytes}, {"fits", c.fits},
                        {"headroom_bytes", c.headroom_bytes}, {"limiting_factor", c.limiting}};
            PerfResult pr;
            if (a.perf) {
              pr = estimate_perf(p, ctx, 0, conc, d.perf);
              jr["tpot_s"] = pr.tpot_s;
              jr["decode_tokens_per_s_per_gpu"] = pr.decode_tokens_per_s_per_gpu;
            }
            if (fmt == Format::json) {
              rows.push_back(std::move(jr));
              continue;
            }
            const bool human = fmt != Format::csv;
            std::string fits = c.fits ? "yes" : "NO";
            if (color) fits = c.fits ? "\033[32myes\033[0m" : "\033[31mNO\033[0m";
            row = {gpu.id, std::to_string(tp), dtname, human ? grouped(ctx) : std::to_string(ctx),
                   human ? grouped(conc) : std::to_string(conc),
                   human ? human_bytes(c.kv_bytes) : std::to_string(c.kv_bytes),
                   human ? human_bytes(c.total_bytes) : std::to_string(c.total_bytes), fits,
                   human ? human_bytes(c.headroom_bytes) : std::to_string(c.headroom_bytes), c.limiting};
            if (a.perf) {
              char b1[32], b2[32];
              std::snprintf(b1, sizeof b1, "%.6f", pr.tpot_s);
              std::snprintf(b2, sizeof b2, "%.1f", pr.decode_tokens_per_s_per_gpu);
              row.insert(row.end(), {b1, b2});
            }
            t.rows.push_back(std::move(row));
          }
      }
    }
  }
  write_outputs({{a.out.html, a.out.html.empty() ? "" : render_html(rep)}, {a.out.markdown, a.out.markdown.empty() ? "" : render_markdown(rep)}});
  if (fmt == Format::json) {
    ojson inputs = deployment_inputs_json(d);
    inputs["contexts"] = contexts;
    inputs["concurrencies"] = concs;
    inputs["gpus"] = gpus;
    inputs["tensor_parallel_sizes"] = tps;
    std::cout << envelope("kvplan.sweep", "1.0.0", g.argv, profiles.sources(), inputs, {{"rows", rows}}).dump(2) << "\n";
    return;
  }
  std::cout << render(t, fmt);
}

}  // namespace

void register_sweep(CLI::App& app, Globals& g) {
  auto a = std::make_shared<SweepArgs>();
  auto* c = app.add_subcommand(
      "sweep",
      "Context x concurrency grid (lists: 1k,4k,32k; ranges: 1k..128k*2 geometric, 8..64+8 arithmetic); "
      "--gpu, --kv-dtype and --tensor-parallel-size also take lists");
  add_deploy_options(c, a->d);
  c->add_flag("--perf", a->perf, "Add TPOT and decode tokens/s per GPU to every cell");
  a->out.add_options(c, false);
  c->add_option("--format", a->format, "table | md | csv | json")->capture_default_str();
  c->callback([a, c, &g] { run_sweep(*a, c, g); });
}

}  // namespace kvplan::cli
