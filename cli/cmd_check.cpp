// `kvplan check FILE...`: the CI gate. Reads deployment files, plans each deployment, and checks
// its requirements: PASS / FAIL with the numbers behind each, the limiting term, and for a FAIL the
// nearest setting that would pass. Exit 0 all pass, 1 any fail, 2 invalid file, 3 runtime failure.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "log_compare.hpp"
#include "kvplan/core/search.hpp"
#include "kvplan/core/simulate.hpp"
#include "kvplan/core/suggest.hpp"
#include "kvplan/core/sweep.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/cmdline.hpp"
#include "kvplan/io/deployments.hpp"
#include "kvplan/io/manifests.hpp"
#include "kvplan/io/trace.hpp"
#include "kvplan/io/yaml_doc.hpp"

#include <filesystem>
#include "output.hpp"
#include "report_build.hpp"
#include "sim_options.hpp"
#include "version.hpp"

namespace kvplan::cli {

namespace {

struct CheckArgs {
  std::vector<std::string> files;
  std::vector<std::string> set;
  OutputFiles out;
  std::vector<std::string> logs;  // --log FILE: startup logs checked against the deployments of their engine
  bool strict = false;
  std::string format = "table";
};

struct Requirement {
  std::string name;
  bool pass = false;
  std::string actual, required, detail, suggestion;
  // for machines (JSON, CSV): the requirement's key in the deployment file, the measured value and the limit as plain
  // numbers in `unit` (nullopt where the result is not a number: starts, fits)
  std::string key, unit;
  std::optional<double> value, limit;
};

struct Evaluated {
  io::DeploymentDoc doc;
  Deployment d;
  std::vector<Requirement> reqs;
  std::vector<std::string> warnings;
  bool pass = true;
  ojson plan;
  ReportSection section;
};

std::string ms(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f ms", s * 1e3);
  return b;
}

std::string pct(double f) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", f * 100);
  return b;
}

// The deployment a file describes: its command first, then its fields and settings: (which override
// the command), its traffic, and the run's --set values.
Deployment resolve_doc(const io::DeploymentDoc& doc, const io::Profiles& profiles, const std::vector<std::string>& set) {
  DeploymentSource src;
  src.command = doc.command;
  src.command_where = doc.command_where;
  src.engine_hint = doc.engine;
  src.version_hint = doc.engine_version;
  src.variables = doc.variables;
  src.set_hint = "settings:";
  src.base_dir = std::filesystem::path(doc.file).parent_path().string();
  auto field = [&](const char* key, const std::string& value, const std::string& yaml_key) {
    if (value.empty()) return;
    const auto it = doc.field_where.find(yaml_key);
    src.settings.emplace_back(key, value, io::Origin{io::Origin::Kind::file, it != doc.field_where.end() ? it->second : doc.where, yaml_key});
  };
  if (doc.command.empty() && doc.engine.empty() && !doc.engine_version.empty())
    throw InputError(doc.where, "engine_version without an engine", "add engine:");
  if (!doc.command.empty() || !doc.engine.empty()) field("engine", doc.engine, "engine");
  if (doc.command.empty()) field("engine_version", doc.engine_version, "engine_version");
  field("model", doc.model, "model");
  field("gpu", doc.gpu, "gpu");
  src.env = doc.env;
  src.env_where = doc.env_where;
  for (const auto& st : doc.settings) src.settings.emplace_back(st.key, st.value, io::Origin{io::Origin::Kind::file, st.where + ": " + st.written, st.written});
  auto traffic = [&](const char* key, const std::optional<i64>& v) {
    if (!v) return;
    const auto it = doc.field_where.find(std::string("traffic.") + key);
    src.settings.emplace_back(key, std::to_string(*v), io::Origin{io::Origin::Kind::file, it != doc.field_where.end() ? it->second : doc.where, key});
  };
  traffic("prompt_tokens", doc.prompt_tokens);
  traffic("output_tokens", doc.output_tokens);
  traffic("context", doc.context);
  traffic("concurrency", doc.concurrency);
  traffic("shared_prefix", doc.shared_prefix);
  add_set_values(set, src);
  src.set_variables.clear();  // a --set variable is for every deployment: one that no deployment reads fails in run_check
  // simulated requirements run the simulator's workload: output tokens alone take its default prompt
  if (doc.simulated()) src.default_prompt = kDefaultPrompt;
  if (doc.model.empty() && doc.command.empty()) throw InputError(doc.where, "no model: the command names none", "add model:");
  Deployment d = resolve_source(src, profiles);
  if (doc.gpus && d.spec.engine.kind == EngineKind::llamacpp && !d.bag.has("gpu_count")) {
    // llama.cpp splits one model over the GPUs it sees: gpus: is its GPU count
    const auto it = doc.field_where.find("gpus");
    src.settings.emplace(src.settings.begin(), "gpu_count", std::to_string(*doc.gpus),
                         io::Origin{io::Origin::Kind::file, it != doc.field_where.end() ? it->second : doc.where, "gpus"});
    d = resolve_source(src, profiles);
  }
  const i64 layout_gpus = deployment_gpus(d.spec);
  if (doc.model.empty() && d.command.model.empty() && !d.bag.has("model"))
    throw InputError(doc.where, "no model: the command names none", "add model:");
  for (const auto& w : doc.warnings) d.warnings.push_back(w);
  if (doc.gpu_unlabelled && !d.bag.has("gpu") && !d.bag.has("gpu_memory_bytes"))
    d.warnings.push_back("no GPU label (nodeSelector or required node affinity on nvidia.com/gpu.product, cloud.google.com/gke-accelerator, "
                         "karpenter.k8s.aws/instance-gpu-name or node.kubernetes.io/instance-type): planned on the default GPU, " + d.spec.gpu.id +
                         "; add the label, or give check --set gpu=ID");
  if (doc.gpus && *doc.gpus != layout_gpus && doc.gpus_soft) {
    d.warnings.push_back("the manifest gives " + std::to_string(*doc.gpus) + " GPU(s) per pod but the layout uses " +
                         std::to_string(d.spec.parallel.gpus()) + " (tensor " + std::to_string(d.spec.parallel.tp) + " x pipeline " +
                         std::to_string(d.spec.parallel.pp) + " x data " + std::to_string(d.spec.parallel.dp) + ")");
  } else if (doc.gpus && *doc.gpus != layout_gpus)
    throw InputError(doc.where, "gpus: " + std::to_string(*doc.gpus) + " but the layout uses " + std::to_string(d.spec.parallel.gpus()) +
                                    " (tensor " + std::to_string(d.spec.parallel.tp) + " x pipeline " + std::to_string(d.spec.parallel.pp) +
                                    " x data " + std::to_string(d.spec.parallel.dp) + ")",
                     "make gpus equal the product, or set the parallel sizes");
  return d;
}

// Deployment docs from a file: kvplan's own format, or the engine containers of manifests.
std::vector<io::DeploymentDoc> read_any(const std::string& path) {
  const bool yaml = path.ends_with(".yaml") || path.ends_with(".yml");
  if (!yaml) return io::read_deployment_file(path);
  const auto docs = io::load_documents(path, true);
  if (docs.empty() || io::classify_document(docs.front()) == io::DocKind::deployment_file || io::classify_document(docs.front()) == io::DocKind::unknown)
    return io::read_deployment_file(path);
  std::vector<io::DeploymentDoc> out;
  for (const io::ManifestDeployment& m : io::read_manifests(docs)) {
    io::DeploymentDoc d;
    d.name = m.name;
    d.file = path;
    d.where = m.where;
    d.command = m.argv;
    d.command_where = m.argv_where.empty() ? m.where : m.argv_where;
    d.engine = m.engine_hint;
    if (!m.image.empty() && d.engine_version.empty()) d.engine_version = io::engine_version_from_image(m.image);  // "latest": the reader says so
    d.model = m.model;
    if (!m.mig_profile.empty()) {
      // a MIG slice: its memory is the size in the profile name (3g.40gb -> 40 GB); the device reports a little less
      const auto g = m.mig_profile.find('.');
      const std::string size = g == std::string::npos ? "" : m.mig_profile.substr(g + 1);
      if (size.size() > 2 && size.ends_with("gb") && size.find_first_not_of("0123456789") == size.size() - 2) {
        d.settings.push_back({"gpu_memory_bytes", size.substr(0, size.size() - 2) + "GB", m.gpu_count_where.empty() ? m.where : m.gpu_count_where,
                              "nvidia.com/mig-" + m.mig_profile});
        d.warnings.push_back("MIG slice " + m.mig_profile + ": planned with " + size + " of memory, the size its profile name gives");
      }
    }
    d.env = std::vector<std::pair<std::string, std::string>>(m.env.begin(), m.env.end());
    d.env_where = m.where;
    if (!m.gpu_product.empty()) d.gpu = m.gpu_product;
    d.gpu_unlabelled = m.gpu_product.empty();
    if (m.gpu_count) {
      // GPUs per pod x pods that serve one copy of the model (LeaderWorkerSet size, Ray workers)
      d.gpus = mul(*m.gpu_count, m.pods_per_group.value_or(1), "manifest GPUs");
      d.gpus_soft = true;
    }
    for (const auto& w : m.warnings) d.warnings.push_back(w);
    if (d.command.empty() && d.engine.empty()) continue;
    out.push_back(std::move(d));
  }
  if (out.empty()) throw InputError(path, "no engine container found", "kvplan reads containers that run vLLM, SGLang, llama-server or trtllm-serve");
  return out;
}

// The simulation requirements' run: the check file's traffic as kvplan simulate takes it. Open loop at
// traffic.rate (Poisson), or the trace's arrivals; else a closed loop at traffic.concurrency. Lengths
// are traffic.prompt_tokens / output_tokens (defaults 1024 / 128, as simulate); goodput counts the
// requests meeting max_p99_ttft_ms and max_p99_tpot_ms one by one (without them: completed requests/s).
struct SimOutcome {
  bool ran = false, closed = false;
  SimResult r;
  double goodput = 0;
  std::string workload;
  std::string failures;  // the failed requests by kind (failures_line); "" when none failed
  std::string fix;       // what to change when no request completed
};

SimOutcome simulate_traffic(const io::DeploymentDoc& doc, const Deployment& d, const Planner& p) {
  SimOutcome o;
  if (!p.engine().startup_ok) return o;
  SimConfig cfg = sim_config(d, p);
  const bool traced = !doc.trace.empty();
  // deployment-files.md: an open loop at rate, a trace at its arrivals, or else a closed loop of concurrency clients
  // (default 1, as the plan's concurrency)
  o.closed = !traced && !doc.rate;
  if (o.closed) cfg.closed_loop_concurrency = doc.concurrency.value_or(1);
  SimSlo slo;
  if (doc.max_p99_ttft_ms) slo.ttft_s = *doc.max_p99_ttft_ms * 1e-3;
  if (doc.max_p99_tpot_ms) slo.tpot_s = *doc.max_p99_tpot_ms * 1e-3;
  std::unique_ptr<RequestSource> src;
  if (traced) {
    std::string path = doc.trace;
    if (path[0] != '/' && !doc.file.empty()) path = (std::filesystem::path(doc.file).parent_path() / path).string();
    io::TraceOptions t;
    t.max_rows = doc.requests.value_or(-1);
    t.default_prefix_tokens = d.shared_prefix;
    src = std::make_unique<io::TraceSource>(path, t);
    o.workload = "trace " + doc.trace;
  } else {
    WorkloadSpec w;
    w.requests = doc.requests.value_or(1000);
    w.rate = doc.rate.value_or(0);
    w.seed = static_cast<std::uint64_t>(doc.seed.value_or(0));
    i64 prompt = kDefaultPrompt, output = kDefaultOutput;  // as kvplan simulate
    if (doc.output_tokens) output = *doc.output_tokens;
    if (doc.prompt_tokens) prompt = *doc.prompt_tokens;
    if (doc.context && !doc.prompt_tokens) prompt = *doc.context - output;
    if (doc.context && doc.prompt_tokens && !doc.output_tokens) output = *doc.context - prompt;
    // a deployment's shared prefix is part of its requests' prompts (as in plan); the generator puts it before its own
    const i64 own = prompt - d.shared_prefix;
    const auto where = doc.field_where.count("traffic.prompt_tokens") ? doc.field_where.at("traffic.prompt_tokens") : doc.where;
    if (prompt < 1 || output < 1)
      throw InputError(where, "the simulated traffic needs prompt_tokens >= 1 and output_tokens >= 1", "give traffic.prompt_tokens and traffic.output_tokens");
    if (own < 1)
      throw InputError(where, "the " + std::to_string(d.shared_prefix) + "-token shared prefix leaves no prompt of its own in " + std::to_string(prompt) + " prompt tokens",
                       "give longer prompts or a shorter shared prefix");
    w.prompt.mean = static_cast<double>(own);
    w.output.mean = static_cast<double>(output);
    w.shared_prefix_tokens = d.shared_prefix;
    src = make_workload(w);
    char rate[48] = "";
    if (doc.rate) std::snprintf(rate, sizeof rate, "%g req/s", *doc.rate);
    o.workload = std::to_string(w.requests) + " req of " + std::to_string(prompt) + "+" + std::to_string(output) + " tok, " +
                 (o.closed ? std::to_string(cfg.closed_loop_concurrency) + (cfg.closed_loop_concurrency == 1 ? " client" : " clients")
                           : std::string(rate));
  }
  const StepTimeModel model(p, d.perf);
  o.r = simulate(cfg, *src, [&model](const StepBatch& b) { return model.step_s(b); }, slo);
  o.ran = true;
  o.failures = failures_line(o.r, cfg);
  o.fix = commonest_failure_fix(o.r, cfg);
  o.goodput = (slo.ttft_s || slo.tpot_s) ? o.r.goodput_per_s : o.r.request_throughput_per_s;
  return o;
}

Evaluated evaluate(const io::DeploymentDoc& doc, const io::Profiles& profiles, bool strict, const std::vector<std::string>& set,
                   const std::vector<std::pair<std::string, io::EngineLog>>& logs) {
  Evaluated ev;
  ev.doc = doc;
  ev.d = resolve_doc(doc, profiles, set);
  const Deployment& d = ev.d;
  for (const auto& w : d.warnings) ev.warnings.push_back(w);
  const Planner p(d.spec);
  const EngineReport& r = p.engine();
  // what a KV-bound load lacks: bytes of pool per GPU, or for llama.cpp, whose -c cells are allocated whole
  // (unit_bytes 0), the cells: a larger ctx-size, padded as llama.cpp pads it (256)
  const bool cells = p.unit_bytes() <= 0;
  const auto shortfall = [&](const Cell& c) {
    if (cells) return "ctx-size " + std::to_string(ceil_div(c.units_needed, i64{256}) * 256) + " (now " + std::to_string(c.units_available) + ")";
    return human_bytes(mul(c.units_needed - c.units_available, p.unit_bytes())) + " more per GPU";
  };
  const bool has_traffic = doc.concurrency || doc.context || doc.prompt_tokens || doc.output_tokens;

  if (doc.starts.value_or(true)) {
    Requirement q{"engine starts (one " + std::to_string(p.max_len()) + "-token request fits)"};
    const Cell c = p.cell(std::max<i64>(p.max_len(), 1), 1);
    q.pass = r.startup_ok && c.fits;
    q.actual = q.pass ? "starts" : "does not start (" + c.limiting + ")";
    q.required = "starts";
    q.key = "starts";
    q.detail = "KV pool " + human_bytes(r.kv_pool_bytes) + " per GPU";
    if (!q.pass && r.kind == EngineKind::llamacpp) {
      std::string s;
      if (r.estimated_max_model_len > 0) s = "ctx-size " + std::to_string(r.estimated_max_model_len) + " starts";
      if (r.suggested_gpu_layers >= 0) s += (s.empty() ? "" : "; or ") + std::string("n-gpu-layers ") + std::to_string(r.suggested_gpu_layers) + " starts";
      q.suggestion = s.empty() ? "a lighter cache or weight type (--cache-type-k/v, a smaller GGUF)" : s + "; or leave both unset for --fit";
    } else if (!q.pass && r.estimated_max_model_len > 0) {
      q.suggestion = "max-model-len " + std::to_string(r.estimated_max_model_len) + " starts";
    } else if (!q.pass) {
      const auto search = fewest_gpus([&](const Parallel& par) { return plan_variant(d, par); }, d.spec.model,
                                      std::max<i64>(p.max_len(), 1), 1, 0, 64, 8);
      q.suggestion = search.found ? std::to_string(search.parallel.gpus()) + " x " + d.spec.gpu.id + " (TP " + std::to_string(search.parallel.tp) +
                                        ", PP " + std::to_string(search.parallel.pp) + ") would start"
                                  : "no layout of up to 64 " + d.spec.gpu.id + " starts; a smaller weight format";
    }
    ev.reqs.push_back(q);
  }
  if (has_traffic) {
    // simulated requirements on traffic with no lengths: memory is checked at the lengths the simulation runs
    // (1,024 + 128, as fit does), not at max_model_len, which the simulation never sends
    const bool simulated = doc.simulated();
    const i64 tokens = simulated && doc.trace.empty() && d.tokens_source == "max_model_len"
                           ? std::min<i64>(d.tokens, kDefaultPrompt + kDefaultOutput)  // simulate_traffic's prompt (prefix inside) + output
                           : d.tokens;
    const Cell c = p.cell(tokens, d.concurrency, d.shared_prefix);
    // a rate without a concurrency holds as many requests as the simulation finds in flight: the static check is
    // one request, and the label says so
    const bool rate_only = (doc.rate || !doc.trace.empty()) && !doc.concurrency;
    Requirement q{rate_only ? "one request fits (" + std::to_string(tokens) + " tokens; the traffic's load is simulated)"
                            : "traffic fits (" + std::to_string(d.concurrency) + " x " + std::to_string(tokens) + " tokens)"};
    q.pass = c.fits;
    q.actual = c.fits ? "fits" : "does not fit (" + c.limiting + ")";
    q.required = "fits";
    q.key = "traffic";
    q.detail = cells ? "KV cells " + std::to_string(c.units_needed) + " of " + std::to_string(c.units_available) + " (ctx-size)"
                     : "KV " + human_bytes(c.kv_bytes) + " of " + human_bytes(r.kv_pool_bytes) + " per GPU";
    if (!c.fits) {
      const i64 n = p.max_concurrency(tokens, d.shared_prefix);
      if (n > 0) {
        q.suggestion = "concurrency " + std::to_string(n) + " fits";
      } else {
        // not even one request: the longest request that fits, or a bigger layout
        const i64 longest = p.max_context(1, d.shared_prefix);
        q.suggestion = longest > 0 ? "no concurrency fits " + std::to_string(d.tokens) + "-token requests; " + std::to_string(longest) + " tokens fit"
                                   : "no request fits this layout (" + c.limiting + "); more GPUs or a smaller weight format";
      }
      if (c.limiting == "kv_cache")
        q.suggestion += "; " + std::to_string(d.concurrency) + " needs " + shortfall(c);
      if (c.limiting == seqs_limit_name(d.spec.engine.kind))
        q.suggestion += std::string("; raise ") + seqs_limit_flag(d.spec.engine.kind) + " to " + std::to_string(d.concurrency);
    }
    ev.reqs.push_back(q);
  }
  if (doc.min_concurrency) {
    const i64 tokens = doc.min_concurrency_tokens.value_or(d.tokens);
    const i64 n = p.max_concurrency(tokens, d.shared_prefix);
    const Cell c = p.cell(tokens, *doc.min_concurrency, d.shared_prefix);
    Requirement q{"min concurrency at " + std::to_string(tokens) + " tokens"};
    q.pass = n >= *doc.min_concurrency;
    q.actual = std::to_string(n);
    q.required = ">= " + std::to_string(*doc.min_concurrency);
    q.key = "min_concurrency";
    q.unit = "requests";
    q.value = static_cast<double>(n);
    q.limit = static_cast<double>(*doc.min_concurrency);
    q.detail = "limited by " + p.cell(tokens, n + 1, d.shared_prefix).limiting;
    if (!q.pass) {
      if (c.limiting == "kv_cache")
        q.suggestion = std::to_string(n) + " fits; " + std::to_string(*doc.min_concurrency) + " needs " + shortfall(c);
      else if (c.limiting == seqs_limit_name(d.spec.engine.kind))
        q.suggestion = std::string(seqs_limit_flag(d.spec.engine.kind)) + " " + std::to_string(*doc.min_concurrency) + " (now " + std::to_string(p.max_seqs()) + ")";
      else q.suggestion = n > 0 ? std::to_string(n) + " fits (limited by " + c.limiting + ")" : "none fits (limited by " + c.limiting + ")";
    }
    ev.reqs.push_back(q);
  }
  if (doc.min_headroom) {
    const Cell c = p.cell(d.tokens, d.concurrency, d.shared_prefix);
    // the share of the pool the traffic leaves free: bytes, or for llama.cpp, whose -c cells are allocated whole (its
    // headroom_bytes is GPU memory beyond them), cells
    const auto free_share = [&](const Cell& x) {
      if (cells) return static_cast<double>(x.units_available - x.units_needed) / static_cast<double>(std::max<i64>(x.units_available, 1));
      return static_cast<double>(x.headroom_bytes) / static_cast<double>(std::max<i64>(r.kv_pool_bytes, 1));
    };
    const double f = free_share(c);
    Requirement q{"min KV headroom at the traffic"};
    q.pass = c.fits && f >= *doc.min_headroom;
    q.actual = pct(f);
    q.required = ">= " + pct(*doc.min_headroom);
    q.key = "min_headroom";
    q.unit = "fraction";
    q.value = f;
    q.limit = *doc.min_headroom;
    q.detail = cells ? grouped(c.units_available - c.units_needed) + " of " + grouped(c.units_available) + " KV cells free"
                     : human_bytes(c.headroom_bytes) + " of a " + human_bytes(r.kv_pool_bytes) + " pool";
    if (!q.pass) {
      const i64 n = largest_passing(1, d.concurrency, [&](i64 k) {
        const Cell cn = p.cell(d.tokens, k, d.shared_prefix);
        return cn.fits && free_share(cn) >= *doc.min_headroom;
      });
      q.suggestion = n > 0 ? "concurrency " + std::to_string(n) + " keeps " + pct(*doc.min_headroom)
                           : "no concurrency keeps " + pct(*doc.min_headroom) + " of the pool free on this layout";
    }
    ev.reqs.push_back(q);
  }
  const PerfResult perf = estimate_perf(p, d.prompt, d.output, d.concurrency, d.perf);
  if (doc.max_tpot_ms) {
    Requirement q{"max TPOT"};
    q.pass = perf.tpot_s * 1e3 <= *doc.max_tpot_ms;
    q.actual = ms(perf.tpot_s);
    q.required = "<= " + ms(*doc.max_tpot_ms / 1e3);
    q.key = "max_tpot_ms";
    q.unit = "ms";
    q.value = perf.tpot_s * 1e3;
    q.limit = *doc.max_tpot_ms;
    q.detail = perf.decode_bound + " bound at " + std::to_string(perf.batch_per_replica) + " sequences per replica";
    if (!q.pass) {
      const i64 lo = std::max<i64>(
          largest_passing(1, d.concurrency, [&](i64 k) { return estimate_perf(p, d.prompt, d.output, k, d.perf).tpot_s * 1e3 <= *doc.max_tpot_ms; }), 0);
      q.suggestion = lo > 0 ? "concurrency " + std::to_string(lo) + " meets it" : "no concurrency meets it on this layout; more GPUs or a smaller weight format";
    }
    ev.reqs.push_back(q);
  }
  if (doc.max_ttft_ms) {
    // no FLOP rate, no TTFT: an input to give, not a miss (as fit's --slo-ttft-ms on the same GPU)
    if (perf.ttft_s < 0) {
      const auto w = doc.field_where.find("requirements.max_ttft_ms");
      throw InputError(w != doc.field_where.end() ? w->second : doc.where,
                       "max_ttft_ms: the " + d.spec.gpu.id + " profile has no TFLOP/s for this weight format, so TTFT is not estimated",
                       "give the GPU's dense tensor rate (settings: gpu_tflops), or leave max_ttft_ms out");
    }
    Requirement q{"max TTFT"};
    q.pass = perf.ttft_s >= 0 && perf.ttft_s * 1e3 <= *doc.max_ttft_ms;
    q.actual = perf.ttft_s < 0 ? "unknown (no TFLOP/s for this GPU)" : ms(perf.ttft_s);
    q.required = "<= " + ms(*doc.max_ttft_ms / 1e3);
    q.key = "max_ttft_ms";
    q.unit = "ms";
    if (perf.ttft_s >= 0) q.value = perf.ttft_s * 1e3;
    q.limit = *doc.max_ttft_ms;
    q.detail = perf.prefill_bound + " for a " + std::to_string(d.prompt) + "-token prompt";
    if (!q.pass && perf.ttft_s > 0) {
      const i64 lo = std::max<i64>(
          largest_passing(1, d.prompt, [&](i64 k) { return estimate_perf(p, k, d.output, d.concurrency, d.perf).ttft_s * 1e3 <= *doc.max_ttft_ms; }), 0);
      q.suggestion = lo > 0 ? "prompts up to " + std::to_string(lo) + " tokens meet it" : "no prompt length meets it on this layout";
    }
    ev.reqs.push_back(q);
  }
  // simulation requirements: kvplan simulate on the traffic (rate, trace or closed loop at concurrency)
  if (doc.simulated()) {
    const SimOutcome so = simulate_traffic(doc, d, p);
    // key, unit, value (nullopt: nothing measured) and limit for machines beside the text
    auto sim_req = [&](const std::string& name, bool pass, const std::string& actual, const std::string& required, const char* key,
                       const char* unit, std::optional<double> value, double limit) {
      Requirement q{name + " (simulated)"};
      q.key = key;
      q.unit = unit;
      q.limit = limit;
      if (so.ran && so.r.completed > 0) q.value = value;
      const bool none = so.ran && so.r.completed == 0;  // nothing to measure: every request failed
      // a request the server refused or cut short (HTTP 400, a pool that cannot hold it) is traffic the deployment
      // does not serve: the figure over the others does not pass the gate
      const bool some_failed = so.ran && !none && so.r.failed > 0;
      q.pass = so.ran && !none && !some_failed && pass;
      q.actual = !so.ran ? "not simulated: the deployment does not start"
                 : none  ? "no request completed"
                 : some_failed ? actual + "; " + std::to_string(so.r.failed) + " of " + std::to_string(so.r.requests) + " requests failed"
                         : actual;
      q.required = required;
      q.detail = so.workload + (so.failures.empty() ? "" : "; failed: " + so.failures);
      if (none || (some_failed && pass))
        q.suggestion = so.fix;
      else if (so.ran && !q.pass)
        q.suggestion = so.closed ? "fewer concurrent requests, or more replicas (kvplan simulate shows the queues over time)"
                                 : "a lower rate, or more replicas (kvplan simulate shows the queues over time)";
      ev.reqs.push_back(q);
    };
    const SimResult& sr = so.r;
    if (doc.max_p99_ttft_ms)
      sim_req("max p99 TTFT", sr.ttft_s.count > 0 && sr.ttft_s.p99 * 1e3 <= *doc.max_p99_ttft_ms, ms(sr.ttft_s.p99),
              "<= " + ms(*doc.max_p99_ttft_ms / 1e3), "max_p99_ttft_ms", "ms",
              sr.ttft_s.count > 0 ? std::optional<double>(sr.ttft_s.p99 * 1e3) : std::nullopt, *doc.max_p99_ttft_ms);
    if (doc.max_p99_tpot_ms) {
      // TPOT excludes each request's first token: with one output token each there is none to judge
      const bool no_tpot = sr.tpot_s.count == 0;
      sim_req("max p99 TPOT", !no_tpot && sr.tpot_s.p99 * 1e3 <= *doc.max_p99_tpot_ms,
              no_tpot ? "n/a: no request has 2 or more output tokens" : ms(sr.tpot_s.p99), "<= " + ms(*doc.max_p99_tpot_ms / 1e3),
              "max_p99_tpot_ms", "ms", no_tpot ? std::nullopt : std::optional<double>(sr.tpot_s.p99 * 1e3), *doc.max_p99_tpot_ms);
      if (no_tpot && sr.completed > 0) ev.reqs.back().suggestion = "traffic with output_tokens >= 2 (TPOT leaves out the first token)";
    }
    if (doc.min_goodput) {
      char a[64], b[64];
      std::snprintf(a, sizeof a, "%.3f req/s", so.goodput);
      std::snprintf(b, sizeof b, ">= %.3f req/s", *doc.min_goodput);
      sim_req("min goodput", so.goodput >= *doc.min_goodput, a, b, "min_goodput", "req/s", so.goodput, *doc.min_goodput);
    }
    if (doc.max_preemption_rate) {
      const double rate = sr.requests > 0 ? static_cast<double>(sr.preemptions) / static_cast<double>(sr.requests) : 0.0;
      char a[64], b[64];
      std::snprintf(a, sizeof a, "%.4g per request", rate);  // significant digits: a limit of 0.0001 is not "0.000"
      std::snprintf(b, sizeof b, "<= %.4g per request", *doc.max_preemption_rate);
      sim_req("max preemption rate", rate <= *doc.max_preemption_rate, a, b, "max_preemption_rate", "per request", rate,
              *doc.max_preemption_rate);
    }
  }
  // --log: the engine's startup log as evidence; its rules must reproduce what the engine printed
  for (const auto& [file, log] : logs) {
    if (parse_engine(log.engine) != d.spec.engine.kind) continue;
    const LogComparison lc = compare_log(file, log, &d, {});
    Requirement q{"startup log " + file + " reproduced"};
    q.pass = lc.rules > 0 && lc.rules_ok == lc.rules;  // a log with nothing to check is no evidence
    q.actual = std::to_string(lc.rules_ok) + " of " + std::to_string(lc.rules) + " engine figures";
    q.required = "all (at least one)";
    q.key = "log";
    q.unit = "figures";
    q.value = static_cast<double>(lc.rules_ok);
    q.limit = static_cast<double>(std::max(lc.rules, 1));
    for (const auto& row : lc.rows)
      if (!row.ok()) {
        q.detail = row.term + ": printed " + row.printed_text + (row.line ? " (line " + std::to_string(row.line) + ")" : "");
        break;
      }
    if (!q.pass) q.suggestion = "kvplan log " + file + " --model " + d.spec.model.id + " shows the terms side by side";
    ev.reqs.push_back(q);
  }
  if (strict && !ev.warnings.empty()) {
    Requirement q{"no warnings (--strict)"};
    q.pass = false;
    q.actual = std::to_string(ev.warnings.size()) + " warning(s)";
    q.required = "none";
    q.key = "strict";
    q.unit = "warnings";
    q.value = static_cast<double>(ev.warnings.size());
    q.limit = 0;
    q.detail = ev.warnings.front();
    q.suggestion = "resolve the warning or drop --strict";
    ev.reqs.push_back(q);
  }
  for (const auto& q : ev.reqs) ev.pass = ev.pass && q.pass;

  ojson reqs = ojson::array();
  for (const auto& q : ev.reqs)
    reqs.push_back({{"requirement", q.name}, {"key", q.key}, {"pass", q.pass}, {"actual", q.actual}, {"required", q.required},
                    {"value", q.value ? ojson(*q.value) : ojson(nullptr)}, {"limit", q.limit ? ojson(*q.limit) : ojson(nullptr)},
                    {"unit", q.unit.empty() ? ojson(nullptr) : ojson(q.unit)},
                    {"detail", q.detail}, {"suggestion", q.suggestion.empty() ? ojson(nullptr) : ojson(q.suggestion)}});
  ev.plan = {{"name", doc.name}, {"file", doc.file}, {"where", doc.where}, {"pass", ev.pass}, {"requirements", reqs},
             {"inputs", deployment_inputs_json(d)}, {"engine", engine_json(p)}, {"budget", budget_json(p)}, {"warnings", ev.warnings},
             {"results", plan_results_json(d, p)}};
  ev.section = build_section(d, p, doc.name + ": " + d.spec.model.id + " on " + std::to_string(deployment_gpus(d.spec)) + " x " + d.spec.gpu.id);
  ev.section.status = ev.pass ? "PASS" : "FAIL";
  Table t;
  t.title = "requirements";
  t.columns = {"requirement", "result", "actual", "required", "detail", "nearest passing setting"};
  for (const auto& q : ev.reqs) t.rows.push_back({q.name, q.pass ? "PASS" : "FAIL", q.actual, q.required, q.detail, q.suggestion});
  ev.section.tables.insert(ev.section.tables.begin(), t);
  return ev;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') o += ' ';
        else o += c;
    }
  }
  return o;
}

std::string junit(const std::vector<Evaluated>& evs) {
  size_t tests = 0, failures = 0;
  for (const auto& e : evs)
    for (const auto& q : e.reqs) { ++tests; failures += !q.pass; }
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\"kvplan check\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\"0\">\n";
  for (const auto& e : evs) {
    size_t f = 0;
    for (const auto& q : e.reqs) f += !q.pass;
    o << "  <testsuite name=\"" << xml_escape(e.doc.name) << "\" tests=\"" << e.reqs.size() << "\" failures=\"" << f
      << "\" errors=\"0\" skipped=\"0\" file=\"" << xml_escape(e.doc.file) << "\">\n";
    for (const auto& q : e.reqs) {
      o << "    <testcase classname=\"" << xml_escape("kvplan." + e.doc.name) << "\" name=\"" << xml_escape(q.name) << "\" file=\""
        << xml_escape(e.doc.file) << "\"";
      if (q.pass) {
        o << ">\n      <system-out>" << xml_escape(q.actual + " (" + q.required + "); " + q.detail) << "</system-out>\n    </testcase>\n";
      } else {
        o << ">\n      <failure message=\"" << xml_escape(q.actual + ", required " + q.required) << "\" type=\"requirement\">"
          << xml_escape(q.detail + (q.suggestion.empty() ? "" : "\nnearest passing setting: " + q.suggestion)) << "</failure>\n    </testcase>\n";
      }
    }
    o << "  </testsuite>\n";
  }
  o << "</testsuites>\n";
  return o.str();
}

std::string markdown(const std::vector<Evaluated>& evs) {
  std::ostringstream o;
  size_t failed = 0;
  for (const auto& e : evs) failed += !e.pass;
  o << "## kvplan check: " << (failed == 0 ? "PASS" : "FAIL") << " (" << evs.size() - failed << " of " << evs.size() << " deployments pass)\n\n";
  Table s;
  s.columns = {"deployment", "result", "model", "GPUs", "engine", "failed requirements"};
  for (const auto& e : evs) {
    std::string fails;
    for (const auto& q : e.reqs)
      if (!q.pass) fails += (fails.empty() ? "" : "; ") + q.name + ": " + q.actual + (q.suggestion.empty() ? "" : " — " + q.suggestion);
    s.rows.push_back({e.doc.name, e.pass ? "✅ PASS" : "❌ FAIL", e.d.spec.model.id,
                      std::to_string(deployment_gpus(e.d.spec)) + " x " + e.d.spec.gpu.id, engine_name(e.d.spec.engine.kind), fails});
  }
  o << render(s, Format::md) << "\n";
  for (const auto& e : evs) {
    o << "### " << e.doc.name << " — " << (e.pass ? "PASS" : "FAIL") << "\n\n";
    Table t;
    t.columns = {"requirement", "result", "actual", "required", "detail", "nearest passing setting"};
    for (const auto& q : e.reqs) t.rows.push_back({q.name, q.pass ? "PASS" : "FAIL", q.actual, q.required, q.detail, q.suggestion});
    o << render(t, Format::md) << "\n";
    for (const auto& w : e.warnings) o << "- warning: " << w << "\n";
    if (!e.warnings.empty()) o << "\n";
  }
  return o.str();
}

void run_check(const CheckArgs& a, Globals& g) {
  const Format fmt = parse_format_flag(a.format);
  std::vector<std::string> read = a.files;
  read.insert(read.end(), a.logs.begin(), a.logs.end());
  for (const auto& w : g.pasted) read.push_back(w);
  a.out.check({}, read);
  const auto profiles = io::Profiles::load(g.profiles_dir);
  std::vector<io::DeploymentDoc> docs;
  for (const auto& f : a.files)
    for (auto& d : read_any(f)) docs.push_back(std::move(d));
  if (!g.pasted.empty()) {
    io::DeploymentDoc d;
    d.name = "command";
    d.file = "command";
    d.where = d.command_where = "command";
    d.command = g.pasted;
    docs.push_back(std::move(d));
  }
  if (docs.empty()) throw InputError("FILE", "nothing to check", "give deployment files, manifests, or an engine command after --");
  // a file given twice checks its deployments twice under the same names (two JUnit suites of one name)
  for (std::size_t i = 0; i < a.files.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (same_file(a.files[i], a.files[j]))
        throw InputError(a.files[i], "given twice (also as '" + a.files[j] + "')", "give each file once");
  {
    // names are unique within a file (deployments.cpp); one name in two files (a staging and a production manifest of
    // Deployment/vllm) is told apart by its file, so that reports and JUnit suites name each deployment once
    std::map<std::string, int> seen;
    for (const auto& d : docs) ++seen[d.name];
    for (auto& d : docs)
      if (seen[d.name] > 1 && !d.file.empty() && d.file != "command") d.name += " (" + d.file + ")";
  }
  {
    // the files the deployments read (a trace, a perf-coefficients or prices file, a model config, a GGUF: any setting,
    // traffic or command word naming an existing file, as written or from the deployment file's folder) are inputs too:
    // no output may land on one
    std::vector<std::string> inputs = read;
    auto add = [&](const io::DeploymentDoc& doc, const std::string& v) {
      if (v.empty()) return;
      std::error_code ec;
      if (std::filesystem::is_regular_file(v, ec)) inputs.push_back(v);
      const auto beside = std::filesystem::path(doc.file).parent_path() / v;
      if (!doc.file.empty() && std::filesystem::is_regular_file(beside, ec)) inputs.push_back(beside.string());
    };
    for (const auto& doc : docs) {
      add(doc, doc.trace);
      add(doc, doc.model);
      for (const auto& st : doc.settings) add(doc, st.value);
      for (const auto& w : doc.command) add(doc, w);
    }
    for (const auto& kv : a.set) add(docs.front(), kv.substr(kv.find('=') + 1));
    a.out.check({}, inputs);
  }
  // a --set KEY that is no setting is a variable for the deployments' commands; one that none of them reads is a
  // misspelt key, which would otherwise pass the gate on the configuration without it
  {
    DeploymentSource set;
    add_set_values(a.set, set, false);  // the --set keys that are no setting, as every deployment reads them (each
                                        // deployment's own pass checks a flag's spelling against its command)
    std::vector<std::vector<std::string>> words;
    for (const auto& doc : docs) {
      std::vector<std::string> values;
      for (const auto& st : doc.settings) values.push_back(st.value);
      words.push_back(variable_readers(doc.command, doc.env, values));
    }
    for (const std::string& key : set.set_variables)
      if (std::none_of(words.begin(), words.end(), [&](const auto& w) { return reads_variable(w, key); })) unread_set_key(key);
  }
  std::vector<std::pair<std::string, io::EngineLog>> logs;
  for (const auto& f : a.logs) logs.emplace_back(f, read_log_file(f));
  std::vector<Evaluated> evs;
  const bool progress = isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  bool shown = false;
  for (const auto& doc : docs) {
    evs.push_back(evaluate(doc, profiles, a.strict, a.set, logs));
    if (progress && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 2) {
      std::fprintf(stderr, "\rkvplan check: %zu of %zu deployments", evs.size(), docs.size());
      shown = true;
    }
  }
  if (shown) std::fprintf(stderr, "\n");
  bool all = true;
  for (const auto& e : evs) {
    all = all && e.pass;
    for (const auto& w : e.warnings) warn(e.doc.name + ": " + w);
  }
  g.exit_code = all ? 0 : 1;

  ojson deployments = ojson::array();
  for (const auto& e : evs) deployments.push_back(e.plan);
  ojson inputs = {{"files", a.files}, {"strict", a.strict}};
  const std::string json_text =
      envelope("kvplan.check", "1.0.0", g.argv, profiles.sources(), inputs, {{"pass", all}, {"deployments", deployments}}).dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
  Report rep;
  rep.title = "kvplan check: " + std::string(all ? "PASS" : "FAIL");
  rep.generated_by = std::string("kvplan ") + kVersion + " (" + kGitSha + ")";
  for (const auto& e : evs) rep.sections.push_back(e.section);
  write_outputs({{a.out.json, json_text},
                 {a.out.junit, a.out.junit.empty() ? "" : junit(evs)},
                 {a.out.markdown, a.out.markdown.empty() ? "" : markdown(evs)},
                 {a.out.html, a.out.html.empty() ? "" : render_html(rep)}});
  if (fmt == Format::json) {
    std::cout << json_text;
    return;
  }
  if (fmt == Format::md) {
    std::cout << markdown(evs);
    return;
  }
  Table t;
  t.columns = {"deployment", "requirement", "result", "actual", "required", "detail", "nearest passing setting"};
  // CSV and JSON Lines add the requirement's key and its value and limit as plain numbers (the text columns carry units)
  const bool csv = fmt == Format::csv || fmt == Format::jsonl;
  if (csv) t.columns.insert(t.columns.end(), {"key", "value", "limit", "unit"});
  t.text.assign(t.columns.size(), true);  // names and the actual / required text stay strings in jsonl; value and limit are numbers
  if (csv) t.text[8] = t.text[9] = false;
  const auto number = [](const std::optional<double>& x) {
    if (!x) return std::string();
    char b[64];
    std::snprintf(b, sizeof b, "%.10g", *x);
    return std::string(b);
  };
  for (const auto& e : evs)
    for (const auto& q : e.reqs) {
      t.rows.push_back({e.doc.name, q.name, q.pass ? "PASS" : "FAIL", q.actual, q.required, q.detail, q.suggestion});
      if (csv) t.rows.back().insert(t.rows.back().end(), {q.key, number(q.value), number(q.limit), q.unit});
    }
  std::cout << render(t, fmt);
}

}  // namespace

void register_check(CLI::App& app, Globals& g) {
  auto a = std::make_shared<CheckArgs>();
  auto* c = app.add_subcommand("check", "CI gate: check deployment files (YAML/JSON) against their requirements "
                                        "(exit 0 all pass, 1 any fail, 2 invalid file, 3 runtime failure)");
  c->add_option("FILE", a->files,
                "Deployment files (.yaml, .yml or .json), Kubernetes manifests (Deployment, StatefulSet, LeaderWorkerSet, KServe, KubeAI), "
                "vLLM production-stack Helm values or docker compose files; or an engine command after --");
  c->add_option("--set", a->set, "KEY=VALUE for every deployment: a setting (max-model-len=8192) or a variable the commands use (MAX_SEQ_LEN=8192); repeatable")
      ->allow_extra_args(false);  // one value each: the FILEs after it stay positional
  a->out.add_options(c, true);
  c->add_flag("--strict", a->strict, "Warnings (model_type fallback, model not in the local cache, flags kvplan does not model, a manifest without a GPU label, a model beside the command's) fail the check; a variable left unexpanded where it changes memory is an error without it, one where it does not (--port $PORT) is ignored");
  c->add_option("--log", a->logs, "An engine startup log: a requirement that the engine rules reproduce what it printed, for each deployment of its engine; repeatable")
      ->allow_extra_args(false);
  c->add_option("--format", a->format, "stdout: table | md | csv | json | jsonl")->capture_default_str();
  c->callback([a, &g] { run_check(*a, g); });
}

}  // namespace kvplan::cli
