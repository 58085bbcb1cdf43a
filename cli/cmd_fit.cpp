// `kvplan fit MODEL`: the largest concurrency at a context, the longest context at a concurrency,
// or (--fewest-gpus) the fewest GPUs and the parallel layout for a target. Each answer fits and the
// next step up does not. Exit 0 when an answer exists, 1 when nothing fits.
#include <iostream>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "kvplan/core/sweep.hpp"
#include "kvplan/core/units.hpp"
#include "output.hpp"

namespace kvplan::cli {

namespace {

struct FitArgs {
  DeployArgs d;
  bool fewest_gpus = false;
  std::string max_gpus = "64";
  std::string max_tp = "8";
  std::string format = "table";
};

void run_fit(const FitArgs& a, Globals& g) {
  const Format fmt = parse_format_flag(a.format);
  const auto profiles = io::Profiles::load(g.profiles_dir);
  const Deployment d = resolve_source(flags_source(a.d, g.pasted), profiles);
  for (const auto& w : d.warnings) warn(w);
  const auto strict = strict_failures(d, a.d.strict);
  for (const auto& s : strict) warn("--strict: " + s);
  const bool have_ctx = d.bag.has("context") || d.bag.has("prompt_tokens") || d.bag.has("output_tokens");
  const bool have_conc = d.bag.has("concurrency");
  ojson results;
  Table t;
  t.columns = {"question", "answer", "next_limited_by"};
  t.right_align = {false, true, false};
  const bool human = fmt == Format::table || fmt == Format::md;
  bool ok = true;
  if (a.fewest_gpus) {
    const i64 max_gpus = parse_count(a.max_gpus, "--max-gpus"), max_tp = parse_count(a.max_tp, "--max-tp");
    if (max_gpus < 1 || max_tp < 1) throw InputError("--max-gpus", "must be >= 1");
    const auto search = fewest_gpus(
        [&](const Parallel& par) { return plan_variant(d, par); }, d.spec.model, d.tokens,
        d.concurrency, d.shared_prefix, max_gpus, max_tp);
    ok = search.found;
    results["fewest_gpus"] = {{"found", search.found},
                              {"gpus", search.found ? search.parallel.gpus() : 0},
                              {"tensor_parallel_size", search.parallel.tp},
                              {"pipeline_parallel_size", search.parallel.pp},
                              {"data_parallel_size", search.parallel.dp},
                              {"headroom_bytes", search.cell.headroom_bytes},
                              {"layouts_tried", search.layouts_tried}};
    t.rows.push_back({"fewest " + d.spec.gpu.id + " for " + grouped(d.concurrency) + " x " + grouped(d.tokens) + " tokens",
                      search.found ? (human ? std::to_string(search.parallel.gpus()) + " (TP " + std::to_string(search.parallel.tp) + ", PP " +
                                                  std::to_string(search.parallel.pp) + ", DP " + std::to_string(search.parallel.dp) + ")"
                                            : std::to_string(search.parallel.gpus()))
                                   : (human ? "none within " + a.max_gpus + " GPUs" : "0"),
                      ""});
  } else {
    const Planner p(d.spec);
    if (!p.engine().startup_ok) {
      // one contract with plan, sweep and check: a deployment that does not start fits nothing; say what would start
      const i64 longest = p.engine().estimated_max_model_len;
      results["starts"] = {{"startup_ok", false}, {"largest_max_model_len_that_starts", longest}};
      const bool llama = p.engine().kind == EngineKind::llamacpp;
      t.rows.push_back({llama ? "does not start; largest ctx-size that starts" : "does not start; largest max-model-len that starts",
                        human ? grouped(longest) : std::to_string(longest), "does_not_start"});
      if (llama && p.engine().suggested_gpu_layers >= 0) {
        results["starts"]["most_gpu_layers_that_start"] = p.engine().suggested_gpu_layers;
        t.rows.push_back({"does not start; most n-gpu-layers that start", std::to_string(p.engine().suggested_gpu_layers), "does_not_start"});
      }
    }
    if (have_ctx || !have_conc) {
      const i64 n = p.max_concurrency(d.tokens, d.shared_prefix);
      const Cell next = p.cell(d.tokens, n + 1, d.shared_prefix);
      results["max_concurrency"] = {{"tokens_per_request", d.tokens}, {"max_concurrency", n}, {"next_limited_by", next.limiting}};
      t.rows.push_back({"max concurrency at " + grouped(d.tokens) + " tokens", human ? grouped(n) : std::to_string(n), next.limiting});
      ok = ok && n > 0;
    }
    if (have_conc) {
      const i64 L = p.max_context(d.concurrency, d.shared_prefix);
      const Cell next = p.cell(L + 1, d.concurrency, d.shared_prefix);
      results["max_context"] = {{"concurrency", d.concurrency}, {"max_tokens_per_request", L}, {"next_limited_by", next.limiting}};
      t.rows.push_back({"max tokens per request at " + grouped(d.concurrency) + " requests", human ? grouped(L) : std::to_string(L), next.limiting});
      ok = ok && L > 0;
    }
  }
  g.exit_code = ok && strict.empty() ? 0 : 1;
  if (fmt == Format::json) {
    std::cout << envelope("kvplan.fit", "1.0.0", g.argv, profiles.sources(), deployment_inputs_json(d), results).dump(2, ' ', false, ojson::error_handler_t::replace) << "\n";
    return;
  }
  std::cout << render(t, fmt);
}

}  // namespace

void register_fit(CLI::App& app, Globals& g) {
  auto a = std::make_shared<FitArgs>();
  auto* c = app.add_subcommand("fit",
                               "Largest concurrency at --context, longest context at --concurrency, or --fewest-gpus for both "
                               "(exit 1 when nothing fits)");
  add_deploy_options(c, a->d);
  c->add_flag("--fewest-gpus", a->fewest_gpus, "Search GPU counts and TP x PP x DP layouts for the smallest that fits");
  c->add_option("--max-gpus", a->max_gpus, "Upper bound of the search")->capture_default_str();
  c->add_option("--max-tp", a->max_tp, "Largest tensor-parallel size (GPUs per node)")->capture_default_str();
  c->add_option("--format", a->format, "table | md | csv | json | jsonl")->capture_default_str();
  c->callback([a, &g] { run_fit(*a, g); });
}

}  // namespace kvplan::cli
