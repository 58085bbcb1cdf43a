// `kvplan plan MODEL`: one deployment point: the per-GPU budget, what the engine will report,
// whether the workload fits (and the largest setting that would), paging waste, performance.
// Exit 0 when it fits, 1 when it does not.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "kvplan/core/paging.hpp"
#include "kvplan/core/units.hpp"
#include "output.hpp"
#include "report_build.hpp"
#include "version.hpp"

namespace kvplan::cli {

namespace {

std::string fmt_double(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Times in tables are milliseconds everywhere (JSON carries seconds: *_s keys).
std::string fmt_time(double s) { return fmt_double(s * 1e3, 2) + " ms"; }

struct PlanArgs {
  DeployArgs d;
  std::string format = "table";
  OutputFiles out;
  bool report_only = false;  // `kvplan report`: the report is the output
  std::string report_format = "md";
};

Report make_report(const Deployment& d, const Planner& p) {
  Report rep;
  rep.title = "kvplan capacity report: " + d.spec.model.id;
  rep.generated_by = std::string("kvplan ") + kVersion + " (" + kGitSha + ")";
  rep.sections.push_back(build_section(d, p, d.spec.model.id + " on " + std::to_string(deployment_gpus(d.spec)) + " x " + d.spec.gpu.id +
                                                 " (" + engine_name(d.spec.engine.kind) + ")"));
  return rep;
}

void run_plan(const PlanArgs& a, Globals& g) {
  Format fmt = Format::table;
  try {
    fmt = parse_format_flag(a.report_only ? (a.report_format == "md" || a.report_format == "markdown" || a.report_format == "html" ? "table" : a.report_format) : a.format);
  } catch (const InputError& e) {  // report also writes html
    if (!a.report_only) throw;
    throw InputError(e.where(), e.problem(), "use md, html, or the plan's table, csv, json or jsonl");
  }
  a.out.check({}, files_named(a.d, g.pasted));
  const auto profiles = io::Profiles::load(g.profiles_dir);
  const Deployment d = resolve_source(flags_source(a.d, g.pasted), profiles);
  for (const auto& w : d.warnings) warn(w);
  const auto strict = strict_failures(d, a.d.strict);
  const Planner p(d.spec);
  if (!a.out.html.empty() || !a.out.markdown.empty() || a.report_only) {
    const Report rep = make_report(d, p);
    write_outputs({{a.out.html, a.out.html.empty() ? "" : render_html(rep)}, {a.out.markdown, a.out.markdown.empty() ? "" : render_markdown(rep)}});
    if (a.report_only) {
      // stdout: the report as Markdown (default) or HTML, or the plan's results in the other formats
      if (a.report_format == "html") std::cout << render_html(rep);
      else if (a.report_format == "md" || a.report_format == "markdown") {
        if (a.out.html.empty() && a.out.markdown.empty()) std::cout << render_markdown(rep);
      } else if (fmt == Format::json) {
        std::cout << envelope("kvplan.plan", "1.0.0", g.argv, profiles.sources(), deployment_inputs_json(d), plan_results_json(d, p)).dump(2, ' ', false, ojson::error_handler_t::replace) << "\n";
      } else {
        std::cout << render(flatten(plan_results_json(d, p)), fmt);
      }
      g.exit_code = strict.empty() ? 0 : 1;
      return;
    }
  }
  const Cell c = p.cell(d.tokens, d.concurrency, d.shared_prefix);
  const i64 max_conc = p.max_concurrency(d.tokens, d.shared_prefix);
  const i64 max_ctx = p.max_context(d.concurrency, d.shared_prefix);
  const PerfResult perf = estimate_perf(p, d.prompt, d.output, d.concurrency, d.perf);
  const EngineReport& r = p.engine();
  g.exit_code = c.fits && strict.empty() ? 0 : 1;
  warn_strict(strict);

  if (fmt == Format::json) {
    std::cout << envelope("kvplan.plan", "1.0.0", g.argv, profiles.sources(), deployment_inputs_json(d), plan_results_json(d, p)).dump(2, ' ', false, ojson::error_handler_t::replace) << "\n";
    return;
  }
  const auto& s = d.spec;
  Table b;
  const i64 n_gpus = deployment_gpus(s);
  b.title = d.spec.model.id + " on " + std::to_string(n_gpus) + " x " + s.gpu.id + " (TP " + std::to_string(s.parallel.tp) +
            ", PP " + std::to_string(s.parallel.pp) + ", DP " + std::to_string(s.parallel.dp) + "), " + engine_name(s.engine.kind) +
            ", KV " + kv_pair_label(s.kv.k_format, s.kv.v_format, "/") +
            (s.gpu.device_class == "cpu" ? " - budget of the host's memory" : " - budget of the most loaded GPU");
  b.columns = {"term", "bytes", "human", "basis"};
  b.verbose_only = {false, false, false, true};
  b.right_align = {false, true, true, false};
  for (const auto& t : p.budget()) b.rows.push_back({t.name, grouped(t.bytes), human_bytes(t.bytes), t.basis});

  Table e;
  e.title = "engine report (" + r.rules_version + ")";
  e.columns = {"quantity", "value"};
  e.right_align = {false, true};
  auto row = [&](const std::string& k, const std::string& v) { e.rows.push_back({k, v}); };
  switch (r.kind) {
    case EngineKind::vllm:
      row("available KV cache memory", grouped(r.available_kv_bytes) + " B (" + human_bytes(r.available_kv_bytes) + ")");
      row("block size / page bytes per layer", std::to_string(r.block_size) + " / " + grouped(r.page_bytes));
      row("KV cache groups x layers per group", std::to_string(r.num_groups) + " x " + std::to_string(r.group_size));
      row("# GPU blocks", grouped(r.num_gpu_blocks));
      row("GPU KV cache size", grouped(r.kv_cache_tokens) + " tokens");
      row("Maximum concurrency for " + grouped(s.engine.max_model_len) + " tokens per request", fmt_double(r.max_concurrency, 2) + "x");
      break;
    case EngineKind::sglang:
      row("available KV memory", grouped(r.available_kv_bytes) + " B (" + human_bytes(r.available_kv_bytes) + ")");
      row("cell size (bytes per token)", grouped(r.cell_size));
      row("max_total_num_tokens", grouped(r.max_total_num_tokens));
      break;
    case EngineKind::trtllm:
      row("KV memory (free x fraction)", grouped(r.available_kv_bytes) + " B (" + human_bytes(r.available_kv_bytes) + ")");
      row("bytes per token", grouped(r.page_bytes));
      row("blocks x tokens per block", grouped(r.num_gpu_blocks) + " x " + std::to_string(r.block_size));
      row("tokens in paged KV cache", grouped(r.max_tokens));
      break;
    case EngineKind::llamacpp:
      row("n_ctx (cells)", grouped(r.n_ctx));
      row("context per sequence", grouped(r.n_ctx_seq));
      if (r.swa_cells > 0) row("SWA cache cells", grouped(r.swa_cells));
      row("KV size", human_bytes(r.kv_bytes) + " (K " + human_bytes(r.k_bytes) + ", V " + human_bytes(r.v_bytes) + ")");
      if (r.state_bytes > 0) row("recurrent state", human_bytes(r.state_bytes));
      row(std::string("KV on the ") + device_noun(s.gpu), human_bytes(r.gpu_kv_bytes));
      break;
    case EngineKind::generic:
      row("available KV memory", grouped(r.available_kv_bytes) + " B (" + human_bytes(r.available_kv_bytes) + ")");
      break;
  }
  row("starts (engine startup check)", r.startup_ok ? "yes" : "NO");
  if (!r.startup_ok && r.estimated_max_model_len > 0)
    row(r.kind == EngineKind::llamacpp ? "largest ctx-size that would start" : "largest max-model-len that would start", grouped(r.estimated_max_model_len));
  if (!r.startup_ok && r.suggested_gpu_layers >= 0) row("most n-gpu-layers that would start", grouped(r.suggested_gpu_layers));

  Table f;
  f.title = "workload: " + grouped(d.concurrency) + " requests x " + grouped(d.tokens) + " tokens" +
            (d.shared_prefix > 0 ? " (" + grouped(d.shared_prefix) + " shared prefix)" : "");
  f.columns = {"quantity", "value"};
  f.right_align = {false, true};
  f.rows.push_back({"fits", c.fits ? "yes" : "NO (limited by " + c.limiting + ")"});
  const std::string device = device_noun(d.spec.gpu);
  f.rows.push_back({"KV for these requests per " + device, human_bytes(c.kv_bytes)});
  f.rows.push_back({"total per " + device, human_bytes(c.total_bytes) + " of " + human_bytes(p.total_bytes())});
  // llama.cpp allocates its whole cache (-c cells) at start: its headroom is the GPU memory left beside it, and a
  // workload over the cells is short of context, not of that memory
  const bool llama = d.spec.engine.kind == EngineKind::llamacpp;
  f.rows.push_back({c.headroom_bytes >= 0 ? (llama ? device + " memory left (the -c cache is allocated whole)" : "KV headroom")
                                          : (llama ? device + " memory short by" : "KV short by"),
                    human_bytes(c.headroom_bytes >= 0 ? c.headroom_bytes : -c.headroom_bytes)});
  f.rows.push_back({"max concurrency at " + grouped(d.tokens) + " tokens", grouped(max_conc)});
  f.rows.push_back({"max tokens per request at " + grouped(d.concurrency) + " requests", grouped(max_ctx)});
  const ojson pg = paging_json(d, p);
  f.rows.push_back({"paged: tokens used / reserved", fmt_double(100.0 * pg["paged_utilization"].get<double>(), 1) + "%"});
  // a request longer than the max length has no contiguous reservation to fill: say so rather than print over 100%
  const double contiguous = pg["contiguous_utilization"].get<double>();
  f.rows.push_back({"contiguous max-length reservation: used / reserved",
                    contiguous <= 1.0 ? fmt_double(100.0 * contiguous, 1) + "%"
                                      : "n/a (" + grouped(d.tokens) + " tokens over the " + grouped(pg["contiguous_tokens_reserved"].get<i64>()) + " reserved)"});

  Table pf;
  pf.title = "performance (roofline model, decode at " + grouped(perf.decode_context) + " tokens)";
  pf.columns = {"quantity", "value", "basis"};
  pf.right_align = {false, true, false};
  pf.verbose_only = {false, false, true};
  // the step rows below are one pipeline stage's; a token passes every stage in turn
  const i64 stages = p.spec().parallel.pp;
  pf.rows.push_back({"TPOT", fmt_time(perf.tpot_s) + " (" + perf.decode_bound + " bound)",
                     stages > 1 ? "one stage's step (" + fmt_time(perf.decode_step_s) + ", the step rows) x " + std::to_string(stages) + " pipeline stages" : ""});
  pf.rows.push_back({"decode tokens/s per " + device, fmt_double(perf.decode_tokens_per_s_per_gpu, 1), ""});
  pf.rows.push_back({"decode tokens/s (deployment)", fmt_double(perf.decode_tokens_per_s, 1), ""});
  pf.rows.push_back({"TTFT (one " + grouped(d.prompt) + "-token prompt" +
                         (perf.prefill_chunks > 1 ? ", " + grouped(perf.prefill_chunks) + " chunks" : std::string()) + ")",
                     perf.ttft_s < 0 ? perf.prefill_bound : fmt_time(perf.ttft_s) + " (" + perf.prefill_bound + " bound)", ""});
  if (d.output > 0)
    pf.rows.push_back({"batch of " + grouped(perf.batch_per_replica) + ": prefill + " + grouped(d.output) + " steps",
                       perf.batch_time_s < 0 ? "unknown (its prefill, as TTFT)"
                                             : fmt_time(perf.batch_time_s) + ", " + fmt_double(perf.output_tokens_per_s, 1) + " output tokens/s",
                       "prefill in chunks of max_num_batched_tokens, then decode steps"});
  for (const auto& t : perf.decode_terms)  // one decode step of one stage, term by term (docs/performance-model.md)
    if (t.seconds > 0) pf.rows.push_back({"  step: " + t.name, fmt_time(t.seconds), t.basis});

  if (fmt == Format::csv || fmt == Format::jsonl) {
    // one row per value of the JSON results: section, key, value (raw numbers, one value per cell)
    Table flat;
    flat.columns = {"section", "key", "value"};
    const ojson res = plan_results_json(d, p);
    for (const auto& [section, v] : res.items()) {
      if (section == "budget") {
        for (const auto& t : v) flat.rows.push_back({"budget", t["term"].get<std::string>() + "_bytes", t["bytes"].dump()});
      } else if (v.is_object()) {
        for (const auto& [k, x] : v.items())
          // an unknown (null) value is an empty cell: null in jsonl, as render reads empty cells
          if (!x.is_array() && !x.is_object()) flat.rows.push_back({section, k, x.is_string() ? x.get<std::string>() : x.is_null() ? "" : x.dump()});
      } else if (!v.is_array()) {
        flat.rows.push_back({section, section, v.is_null() ? "" : v.dump()});
      }
    }
    std::cout << render(flat, fmt);
    return;
  }
  std::cout << render(b, fmt) << "\n";
  if (p.devices().size() > 1) {
    // llama.cpp over several GPUs: what each one holds
    const bool draft = s.llama_draft.has_value();
    Table gt;
    gt.title = "per GPU (llama.cpp split mode " + std::string(s.engine.split_mode == LlamaSplitMode::layer ? "layer" : s.engine.split_mode == LlamaSplitMode::row ? "row" : "none") + ")";
    gt.columns = {"gpu", "layers", "weights", "kv_cache", "compute_buffer"};
    if (draft) gt.columns.insert(gt.columns.end(), {"draft_layers", "draft_weights", "draft_kv", "draft_compute"});
    const bool lora = !s.llama_lora_tensors.empty(), mmproj = s.llama_mmproj_bytes > 0;
    if (lora) gt.columns.push_back("lora_adapters");
    if (mmproj) gt.columns.push_back("mmproj");
    gt.columns.insert(gt.columns.end(), {"total", "free"});
    gt.right_align.assign(gt.columns.size(), true);
    for (const DeviceBudget& dev : p.devices()) {
      std::vector<std::string> cells = {std::to_string(dev.index), std::to_string(dev.layers) + (dev.output_layer ? " + output" : ""),
                                        human_bytes(dev.weights), human_bytes(dev.kv), human_bytes(dev.compute)};
      if (draft)
        cells.insert(cells.end(), {std::to_string(dev.draft_layers), human_bytes(dev.draft_weights), human_bytes(dev.draft_kv), human_bytes(dev.draft_compute)});
      if (lora) cells.push_back(human_bytes(dev.lora));
      if (mmproj) cells.push_back(human_bytes(dev.mmproj));
      const i64 free = p.total_bytes() - dev.total;
      cells.insert(cells.end(), {human_bytes(dev.total), free >= 0 ? human_bytes(free) : "-" + human_bytes(-free)});
      gt.rows.push_back(cells);
    }
    std::cout << render(gt, fmt) << "\n";
  }
  std::cout << render(e, fmt) << "\n" << render(f, fmt) << "\n" << render(pf, fmt);
  std::vector<std::string> notes = plan_notes(p);
  notes.insert(notes.end(), perf.notes.begin(), perf.notes.end());
  for (const auto& n : notes) std::cout << (fmt == Format::md ? "\n- " : "\nnote: ") << n << "\n";
}

}  // namespace

void register_plan(CLI::App& app, Globals& g) {
  auto a = std::make_shared<PlanArgs>();
  auto* c = app.add_subcommand("plan", "One deployment point: per-GPU budget, engine report, fit and performance (exit 1 when it does not fit)");
  add_deploy_options(c, a->d);
  a->out.add_options(c, false);
  c->add_option("--format", a->format, "table | md | csv | json | jsonl")->capture_default_str();
  c->callback([a, &g] { run_plan(*a, g); });
}

void register_report(CLI::App& app, Globals& g) {
  auto a = std::make_shared<PlanArgs>();
  a->report_only = true;
  auto* c = app.add_subcommand("report", "Capacity-review report for a deployment: self-contained HTML (--html FILE) with a context x "
                                         "concurrency heatmap, the per-GPU budget, throughput and the assumptions; Markdown to "
                                         "--markdown FILE or to stdout");
  add_deploy_options(c, a->d);
  a->out.add_options(c, false);
  c->add_option("--format", a->report_format, "stdout: md (the report) | html | json | table | csv | jsonl (the plan's results)")
      ->capture_default_str();
  c->callback([a, &g] { run_plan(*a, g); });
}

}  // namespace kvplan::cli
