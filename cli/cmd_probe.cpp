// `kvplan probe MODEL` (same model/engine/parallel options as plan): puts the plan on a device -
// allocates the KV pool the plan predicts, fills it, runs decode attention, measures memory,
// bandwidth ceilings and time, and writes a versioned JSON report. `kvplan calibrate PROBE.json`
// fits t = t0 + bytes / BW_eff per kernel and dtype and writes a calibration file that plan, sweep
// and check accept (--calibration FILE).
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "kvplan/core/sweep.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/files.hpp"
#include "kvplan/probe/probe.hpp"
#include "output.hpp"
#include "report_build.hpp"

namespace kvplan::cli {

namespace {

struct ProbeArgs {
  DeployArgs d;
  std::string backend = "cuda";
  int threads = 0;
  std::string seqs, contexts, dtypes;
  bool no_contiguous_control = false;
  int live_steps = 64;
  std::string format = "json";
  double seconds = 2.0;
  double time_cap = 420;
  std::string output;
};

probe::CacheDtype probe_dtype(ElemFormat f, const std::string& flag) {
  switch (f) {
    case ElemFormat::bf16: return probe::CacheDtype::bf16;
    case ElemFormat::f16: return probe::CacheDtype::f16;
    case ElemFormat::fp8_e4m3: return probe::CacheDtype::fp8_e4m3;
    case ElemFormat::fp8_e5m2: return probe::CacheDtype::fp8_e5m2;
    case ElemFormat::q8_0: return probe::CacheDtype::q8_0;
    case ElemFormat::q4_0: return probe::CacheDtype::q4_0;
    default:
      throw InputError(flag, std::string("the probe kernels do not support a ") + std::string(format_info(f).name) + " cache",
                       "supported cache types: bf16, f16, fp8_e4m3, fp8_e5m2, q8_0, q4_0 (the last three on the CPU backend)");
  }
}

ojson timing_json(const probe::TimingStats& t) {
  return {{"median_s", t.median_s}, {"mean_s", t.mean_s}, {"min_s", t.min_s}, {"max_s", t.max_s}, {"rel_stdev", t.rel_stdev}, {"repeats", t.repeats}};
}

// A calibration as the probe uses it: the device it was measured on and t = t0 + bytes / BW per
// kernel and dtype (kvplan calibrate). The probe predicts each case's time from it.
struct ProbeCalibration {
  std::string path, backend, device_name;
  double contiguous_bytes_per_s = 0;
  double bandwidth = 0, t0 = 0;  // the averages over dtypes, for a dtype without its own fit
  std::map<std::string, std::pair<double, double>> fits;  // "kernel/dtype" -> (t0_s, bandwidth_bytes_per_s)
  /// Predicted seconds for `bytes` moved by the decode of `dtype`.
  double predict(const std::string& dtype, double bytes) const {
    const auto it = fits.find("decode_attention/" + dtype);
    return it != fits.end() ? it->second.first + bytes / it->second.second : t0 + bytes / bandwidth;
  }
};

ProbeCalibration load_probe_calibration(const std::string& path, const std::string& where) {
  const auto j = io::parse_json_file(path);
  const io::JsonView root(j, path);
  const auto schema = root.object("schema");
  if (!schema || schema->string_or("name", "") != "kvplan.calibration")
    throw InputError(where, "'" + path + "' is not a kvplan calibration (schema.name kvplan.calibration)", "pass what kvplan calibrate wrote");
  const auto res = root.object("results");
  if (!res) throw InputError(path, "/results: missing", "pass what kvplan calibrate wrote");
  ProbeCalibration c;
  c.path = path;
  c.backend = res->string_or("backend", "");
  c.bandwidth = res->get_number("attention_bandwidth_bytes_per_s");
  c.t0 = res->get_number("step_overhead_s");
  if (const auto dev = res->object("device")) {
    c.device_name = dev->string_or("name", "");
    c.contiguous_bytes_per_s = dev->opt_number("contiguous_read_bytes_per_s").value_or(0.0);
  }
  for (const auto& f : j["results"]["fits"])
    if (f.value("fitted", false)) c.fits[f.value("kernel_dtype", "")] = {f.value("t0_s", 0.0), f.value("bandwidth_bytes_per_s", 0.0)};
  return c;
}

// A calibration applies to the device it was measured on and no other: same backend, same device name
// (for the CPU: model, threads and instruction set). Calibrations of format 1.0 (no device) are refused.
void check_calibration_device(const ProbeCalibration& c, const probe::DeviceInfo& dev, const std::string& where) {
  if (c.device_name.empty())
    throw InputError(where, "'" + c.path + "' does not say which device it was measured on", "recalibrate: kvplan calibrate now records the device");
  if (c.backend != dev.backend || c.device_name != dev.name)
    throw InputError(where, "'" + c.path + "' was measured on " + c.device_name + " (" + c.backend + " backend), not on " + dev.name + " (" + dev.backend + ")",
                     "calibrate on this device: kvplan probe --backend " + dev.backend + " then kvplan calibrate");
}

// The plan a probe runs and the cases it measures: the deployment resolved from the flags and the options built from
// one attention layer of its most loaded rank.
struct ProbeSetup {
  Deployment d;
  probe::ProbeOptions o;
};

ProbeSetup probe_setup(const ProbeArgs& a, const DeployArgs& da, const Globals& g, const io::Profiles& profiles) {
  ProbeSetup s{resolve_source(flags_source(da, g.pasted), profiles), {}};
  const Deployment& d = s.d;
  probe::ProbeOptions& o = s.o;
  const Planner plan(d.spec);
  // the geometry of one attention layer on the most loaded rank
  const Layer* layer = nullptr;
  for (const auto& l : plan.rank_model().layers)
    if (l.kv == KvKind::full || l.kv == KvKind::sliding || l.kv == KvKind::chunked) { layer = &l; break; }
  if (!layer) throw InputError("MODEL", "the probe needs a layer with per-head K and V", "MLA latent and state-space layers are not probed yet");
  o.shape.num_q_heads = static_cast<int>(layer->q_heads);
  o.shape.num_kv_heads = static_cast<int>(layer->kv_heads);
  o.shape.head_dim = static_cast<int>(layer->k_head_dim);
  const i64 block = d.spec.engine.block_size;
  o.shape.page_size = block == 32 || block == 64 ? static_cast<int>(block) : 16;
  probe::check_supported(o.shape);
  const std::vector<i64> seqs = expand_counts(a.seqs.empty() ? std::to_string(d.concurrency) : a.seqs, "--seqs", 64);
  const std::vector<i64> ctxs = expand_counts(a.contexts.empty() ? std::to_string(d.tokens) : a.contexts, "--contexts", 64);
  std::vector<probe::CacheDtype> dtypes;
  for (const auto& name : split_names(a.dtypes)) {
    const auto f = parse_format(name);
    if (!f) throw InputError("--dtypes", "unknown format '" + name + "'", "use bf16, f16, fp8_e4m3, fp8_e5m2, q8_0 or q4_0");
    dtypes.push_back(probe_dtype(*f, "--dtypes"));
  }
  if (dtypes.empty()) dtypes.push_back(probe_dtype(d.spec.kv.k_format, "--kv-dtype"));
  for (auto dt : dtypes)
    for (i64 c : ctxs)
      for (i64 n : seqs) o.cases.push_back({static_cast<int>(n), c, dt, true});
  if (!a.no_contiguous_control && !o.cases.empty()) {
    probe::ProbeCase control = o.cases.front();
    control.shuffled = false;
    o.cases.push_back(control);
  }
  o.live_steps = a.live_steps;
  o.seconds_per_timing = a.seconds;
  o.time_cap_s = a.time_cap;
  o.bandwidth_efficiency = estimate_perf(plan, d.prompt, d.output, 1, d.perf).bandwidth_efficiency;
  if (a.backend == "cuda") o.datasheet_bandwidth = static_cast<double>(d.spec.gpu.memory_bandwidth_bytes_per_s);
  return s;
}

// The GPU profile whose id, alias or nvidia-smi name is the device's name; empty when none is.
std::string profile_of_device(const io::Profiles& profiles, const std::string& device_name) {
  try {
    return profiles.gpu(device_name).id;
  } catch (const InputError&) {
    return "";
  }
}

void run_probe_cmd(const ProbeArgs& a, Globals& g) {
  const Format fmt = parse_format_flag(a.format);
  OutputFiles{}.check({{a.output, "--output"}}, files_named(a.d, g.pasted));
  const auto profiles = io::Profiles::load(g.profiles_dir);
  // --calibration: the probe predicts from it on its own device, so it is taken out of the plan
  // (which would apply it to the GPU profile) and checked against the backend's device below.
  DeployArgs da = a.d;
  std::optional<ProbeCalibration> calibration;
  if (const auto path = da.flags.text("calibration")) {
    calibration = load_probe_calibration(*path, da.flags.get("calibration")->origin.where);
    da.flags.erase("calibration");
  }
  // The plan is for the device probed (its pool size and its predictions, from the profile's datasheet bandwidth).
  // With no --gpu: on the CPU backend this machine (--gpu host); on the CUDA backend the device's own profile, found
  // by the name the runtime reports (as nvidia-smi prints it, which --gpu resolves), once the device is open. A --gpu
  // naming another GPU is kept, with a warning.
  const bool gpu_given =
      da.flags.has("gpu") || std::any_of(da.set.begin(), da.set.end(), [](const std::string& kv) { return kv.rfind("gpu=", 0) == 0; });
  // (the flags are checked on the default GPU first, so that bad input fails before this machine is measured)
  ProbeSetup setup = probe_setup(a, da, g, profiles);
  if (!gpu_given && a.backend == "cpu") {
    set_flag(da, "gpu", "--gpu", "host");
    setup = probe_setup(a, da, g, profiles);
  }
  auto backend = probe::make_backend(a.backend, a.threads);
  if (a.backend == "cuda") {
    const std::string device = backend->device().name;
    const std::string device_profile = profile_of_device(profiles, device);
    if (!gpu_given && !device_profile.empty() && device_profile != setup.d.spec.gpu.id) {
      set_flag(da, "gpu", "--gpu", device_profile);
      setup = probe_setup(a, da, g, profiles);
    } else if (device_profile != setup.d.spec.gpu.id) {
      const std::string why = device_profile.empty() ? "no GPU profile has its name; give --gpu with this GPU's profile (kvplan gpus) or a custom one"
                                                     : "its profile is " + device_profile;
      setup.d.warnings.push_back("probing " + device + " with the plan for " + setup.d.spec.gpu.id + (gpu_given ? " (--gpu)" : " (the default)") +
                                 ": the pool size and the predictions are that GPU's; " + why);
      std::cerr << "kvplan probe: warning: " << setup.d.warnings.back() << "\n";
    }
  }
  const Deployment& d = setup.d;
  const probe::ProbeOptions& o = setup.o;
  if (calibration) check_calibration_device(*calibration, backend->device(), "--calibration");
  probe::ProbeResult r;
  try {
    r = probe::run_probe(*backend, o, [](const std::string& s) { std::cerr << "kvplan probe: " << s << "\n"; });
  } catch (...) {
    backend->release_all();
    throw;
  }
  const auto& dev = r.device;
  if (calibration)  // t = t0 + bytes / BW of the case's dtype, replacing the planner's default
    for (auto& c : r.cases) {
      c.predicted_s = calibration->predict(probe::cache_dtype_name(c.c.dtype), c.bytes_moved);
      c.predicted_error = (c.predicted_s - c.timing.median_s) / c.timing.median_s;
    }
  const std::string prediction = calibration ? "calibration " + calibration->path : "planner: bytes / (bandwidth x efficiency)";
  ojson cases = ojson::array();
  for (const auto& c : r.cases)
    cases.push_back({{"kernel", "decode_attention"},
                     {"num_seqs", c.c.num_seqs},
                     {"context_tokens", c.c.context},
                     {"dtype", probe::cache_dtype_name(c.c.dtype)},
                     {"pages", c.c.shuffled ? "random permutation" : "contiguous"},
                     {"blocks", c.blocks},
                     {"predicted_pool_bytes", c.predicted_pool_bytes},
                     {"measured_pool_bytes", c.ledger_pool_bytes},
                     {"timing", timing_json(c.timing)},
                     {"bytes_moved", c.bytes_moved},
                     {"flops", c.flops},
                     {"achieved_bytes_per_s", c.achieved_bytes_per_s},
                     {"fraction_of_contiguous_ceiling", c.fraction_of_contiguous},
                     {"fraction_of_paged_ceiling", c.fraction_of_paged},
                     {"correctness", {{"pairs_checked", c.pairs_checked}, {"max_abs_err", c.max_abs_err}, {"max_rel_err", c.max_rel_err},
                                      {"output_finite", c.finite}}},
                     {"predicted_s", c.predicted_s},
                     {"predicted_error", c.predicted_error},
                     {"prediction_source", prediction}});
  ojson ledger = ojson::array();
  i64 ledger_total = 0;
  for (const auto& e : r.ledger_at_peak) {
    ledger.push_back({{"what", e.what}, {"bytes", e.bytes}});
    ledger_total += e.bytes;
  }
  const i64 measured_drop = r.free_before_pool - r.free_after_pool;
  ojson results = {
      {"device", {{"backend", dev.backend}, {"name", dev.name}, {"sm_count", dev.sm_count}, {"l2_bytes", dev.l2_bytes},
                  {"memory_clock_khz", dev.memory_clock_khz}, {"bus_width_bits", dev.bus_width_bits},
                  {"runtime_total_bytes", dev.runtime_total_bytes}, {"runtime_free_bytes", dev.runtime_free_bytes},
                  {"nvml_total_bytes", dev.nvml_total_bytes}, {"nvml_used_before_bytes", dev.nvml_used_before_bytes},
                  {"context_bytes", dev.context_bytes}, {"runtime_version", dev.runtime_version}}},
      {"ceilings", {{"contiguous_read_bytes_per_s", r.contiguous_bytes_per_s}, {"paged_gather_bytes_per_s", r.paged_bytes_per_s},
                    {"contiguous_timing", timing_json(r.contiguous)}, {"paged_timing", timing_json(r.paged)}}},
      {"memory", {{"ledger", ledger}, {"ledger_bytes", ledger_total}, {"free_before_pool_bytes", r.free_before_pool},
                  {"free_after_pool_bytes", r.free_after_pool}, {"measured_drop_bytes", measured_drop},
                  {"unexplained_bytes", measured_drop - ledger_total},
                  {"predicted_pool_bytes", r.cases.empty() ? 0 : r.cases.front().predicted_pool_bytes},
                  {"measured_pool_bytes", r.cases.empty() ? 0 : r.cases.front().ledger_pool_bytes}}},
      {"cases", cases},
      {"live", {{"steps", r.live.steps}, {"sequences_started", r.live.sequences_started}, {"sequences_finished", r.live.sequences_finished},
                {"peak_blocks_used", r.live.peak_blocks_used}, {"blocks_reused", r.live.blocks_reused},
                {"internal_fragmentation", r.live.internal_fragmentation}, {"max_abs_err", r.live.max_abs_err},
                {"step_timing", timing_json(r.live.step_timing)}}},
      {"capacity", {{"free_bytes", r.capacity.free_bytes}, {"max_blocks", r.capacity.max_blocks},
                    {"max_concurrency_at_first_context", r.capacity.max_concurrency}}},
      {"time_capped", r.time_capped}};
  ojson inputs = deployment_inputs_json(d);
  inputs["backend"] = a.backend;
  inputs["probe_shape"] = {{"num_q_heads", o.shape.num_q_heads}, {"num_kv_heads", o.shape.num_kv_heads},
                           {"head_dim", o.shape.head_dim}, {"page_size", o.shape.page_size}};
  const std::string text = envelope("kvplan.probe", "1.0.0", g.argv, profiles.sources(), inputs, results).dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
  if (!a.output.empty()) io::write_files_atomically({{a.output, text}});
  else if (fmt == Format::json) std::cout << text;
  else std::cout << render(flatten(results), fmt);
}

// ---------------------------------------------------------------- calibrate
struct CalibrateArgs {
  std::string input;
  std::string output;
  std::string format = "json";
};

void run_calibrate(const CalibrateArgs& a, Globals& g) {
  const Format fmt = parse_format_flag(a.format);
  OutputFiles{}.check({{a.output, "--output"}}, {a.input});
  const auto j = io::parse_json_file(a.input);
  const io::JsonView root(j, a.input);
  const auto schema = root.object("schema");
  if (!schema || schema->string_or("name", "") != "kvplan.probe")
    throw InputError(a.input, "not a kvplan probe report (schema.name must be kvplan.probe)", "pass the JSON kvplan probe wrote");
  // group points by (kernel, dtype): t = t0 + bytes x (1 / BW_eff), least squares over the cases
  std::map<std::string, std::vector<std::pair<double, double>>> groups;
  for (const auto& c : j["results"]["cases"]) {
    const std::string key = c.value("kernel", "decode_attention") + "/" + c.value("dtype", "?");
    groups[key].emplace_back(c["bytes_moved"].get<double>(), c["timing"]["median_s"].get<double>());
  }
  if (groups.empty()) throw InputError(a.input, "/results/cases: no cases", "run kvplan probe with at least two sizes");
  const std::string backend = j["inputs"].value("backend", "?");
  ojson fits = ojson::array();
  double eff_sum = 0, t0_sum = 0;
  int n_fit = 0;
  const double contiguous = j["results"]["ceilings"].value("contiguous_read_bytes_per_s", 0.0);
  for (const auto& [key, pts] : groups) {
    if (pts.size() < 2) {
      fits.push_back({{"kernel_dtype", key}, {"points", pts.size()}, {"fitted", false}, {"reason", "needs two or more sizes"}});
      continue;
    }
    Eigen::MatrixXd A(static_cast<Eigen::Index>(pts.size()), 2);
    Eigen::VectorXd b(static_cast<Eigen::Index>(pts.size()));
    // weighted by 1 / t: minimises the relative residuals, so a small shape counts as much as a large one
    for (size_t i = 0; i < pts.size(); ++i) {
      const double w = 1.0 / pts[i].second;
      A(static_cast<Eigen::Index>(i), 0) = w;
      A(static_cast<Eigen::Index>(i), 1) = pts[i].first * w;
      b(static_cast<Eigen::Index>(i)) = 1.0;
    }
    const Eigen::VectorXd x = A.colPivHouseholderQr().solve(b);
    const double t0 = std::max(0.0, x(0)), inv_bw = x(1);
    if (!(inv_bw > 0)) {
      fits.push_back({{"kernel_dtype", key}, {"points", pts.size()}, {"fitted", false}, {"reason", "time does not grow with bytes"}});
      continue;
    }
    ojson residuals = ojson::array();
    for (const auto& [bytes, t] : pts) residuals.push_back({{"bytes", bytes}, {"measured_s", t}, {"fitted_s", t0 + bytes * inv_bw},
                                                             {"relative_error", (t0 + bytes * inv_bw - t) / t}});
    const double bw_eff = 1.0 / inv_bw;
    fits.push_back({{"kernel_dtype", key}, {"points", pts.size()}, {"fitted", true}, {"t0_s", t0}, {"bandwidth_bytes_per_s", bw_eff},
                    {"fraction_of_contiguous_ceiling", contiguous > 0 ? bw_eff / contiguous : 0.0}, {"residuals", residuals}});
    eff_sum += bw_eff;
    t0_sum += t0;
    ++n_fit;
  }
  if (n_fit == 0) throw InputError(a.input, "/results/cases: no kernel and dtype has two or more sizes to fit", "probe at least two contexts or batch sizes");
  const std::string gpu = j["inputs"].value("gpu", "");
  const auto& dev = j["results"]["device"];
  ojson cal = {{"gpu", gpu},
               {"backend", backend},
               {"device", {{"backend", backend}, {"name", dev.is_object() ? dev.value("name", "") : ""},
                           {"contiguous_read_bytes_per_s", contiguous}}},
               {"attention_bandwidth_bytes_per_s", eff_sum / n_fit},
               {"step_overhead_s", t0_sum / n_fit},
               {"fits", fits}};
  const std::string text = envelope("kvplan.calibration", "1.0.0", g.argv, {"built-in"}, {{"probe_report", a.input}}, cal).dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
  if (!a.output.empty()) io::write_files_atomically({{a.output, text}});
  else if (fmt == Format::json) std::cout << text;
  else std::cout << render(flatten(cal), fmt);
}

}  // namespace

void register_probe(CLI::App& app, Globals& g) {
  auto a = std::make_shared<ProbeArgs>();
  auto* c = app.add_subcommand("probe", "Measure the plan on a device: allocate the predicted KV pool, run paged decode attention, "
                                        "report memory, ceilings, time and correctness as JSON (exit 3 on device faults)");
  add_deploy_options(c, a->d);
  c->add_option("--backend", a->backend, "cuda | cpu (cpu only when asked: no silent fallback); without --gpu the plan is for the device probed: the CUDA device's profile by its name, or this machine (--gpu host) on cpu")->capture_default_str();
  c->add_option("--threads", a->threads, "CPU backend threads (0: all)");
  c->add_option("--seqs", a->seqs, "Batch sizes to probe (list; default --concurrency)");
  c->add_option("--contexts", a->contexts, "Tokens per sequence to probe (list; default the plan's tokens per request)");
  c->add_option("--dtypes", a->dtypes, "Cache types to probe (bf16,f16,fp8_e4m3,fp8_e5m2,q8_0,q4_0; default the plan's)");
  c->add_flag("--no-contiguous-control", a->no_contiguous_control, "Skip the contiguous-pages control case");
  c->add_option("--live-steps", a->live_steps, "Decode steps of the live mode (sequences grow, finish, reuse pages)")->capture_default_str();
  c->add_option("--seconds", a->seconds, "Time budget per timing (median of repeats, 2% relative-stdev stop)")->capture_default_str();
  c->add_option("--time-cap", a->time_cap, "Hard cap for the whole run, seconds")->capture_default_str();
  c->add_option("--output", a->output, "Write the JSON report to FILE (atomically) instead of stdout");
  c->add_option("--format", a->format, "stdout: json | table | md | csv | jsonl (the results flattened to key, value)")->capture_default_str();
  c->callback([a, &g] { run_probe_cmd(*a, g); });

  auto ca = std::make_shared<CalibrateArgs>();
  auto* k = app.add_subcommand("calibrate", "Fit t = t0 + bytes / BW_eff per kernel and dtype from a probe report; "
                                            "write a calibration file for --calibration");
  k->add_option("PROBE_JSON", ca->input, "A report written by kvplan probe")->required();
  k->add_option("--output", ca->output, "Write the calibration to FILE (atomically) instead of stdout");
  k->add_option("--format", ca->format, "stdout: json | table | md | csv | jsonl (the results flattened to key, value)")->capture_default_str();
  k->callback([ca, &g] { run_calibrate(*ca, g); });
}

}  // namespace kvplan::cli
