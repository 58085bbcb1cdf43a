// `kvplan sweep MODEL`: context x concurrency (optionally x GPU x KV dtype x TP) grid; every cell
// has KV bytes, total bytes per GPU, fits, headroom and the limiting term. Rows are ordered GPU,
// TP, KV dtype, context, concurrency (the last varies fastest). The grid is validated whole first;
// then csv, jsonl and json rows are written as they are computed (memory stays flat).
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "kvplan/core/format.hpp"
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
  std::string max_cells = "100000000";
  OutputFiles out;
};

// Buffered stdout writer: rows are formatted into one buffer flushed every 1 MiB.
class Out {
 public:
  ~Out() { flush(); }
  Out& operator<<(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= (1u << 20)) flush();
    return *this;
  }
  Out& operator<<(char c) {
    buf_.push_back(c);
    return *this;
  }
  Out& num(i64 v) {
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v);
    return *this << std::string_view(b, static_cast<std::size_t>(r.ptr - b));
  }
  Out& real(double v) {
    char b[40];
    const auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::general, 9);
    return *this << std::string_view(b, static_cast<std::size_t>(r.ptr - b));
  }
  void flush() {
    if (!buf_.empty()) {
      std::fwrite(buf_.data(), 1, buf_.size(), stdout);
      buf_.clear();
    }
    std::fflush(stdout);
  }

 private:
  std::string buf_;
};

std::string json_str(const std::string& s) { return ojson(s).dump(-1, ' ', false, ojson::error_handler_t::replace); }

// The sweep axes (settings the table marks sweepable) are taken out of the flags as list texts; the
// base deployment is resolved without them, except the first GPU (so its errors surface as usual).
std::map<std::string, std::string> take_axes(DeploymentSource& src) {
  std::map<std::string, std::string> axes;
  std::vector<std::tuple<std::string, std::string, io::Origin>> rest;
  for (auto& s : src.settings) {
    const auto& [key, text, origin] = s;
    if (io::find_setting(key)->sweepable) {
      axes[key] = text;
      // the first GPU and tensor-parallel size stay in the base, so that its errors surface as usual and the settings
      // checked against them (-dcp divides the TP size) see a value that the sweep runs
      if (key == "gpu") rest.emplace_back(key, split_names(text, "--gpu").front(), origin);
      if (key == "tensor_parallel_size") rest.emplace_back(key, std::to_string(expand_counts(text, "--tensor-parallel-size").front()), origin);
    } else {
      rest.push_back(s);
    }
  }
  src.settings = rest;
  return axes;
}

std::optional<std::string> axis(const std::map<std::string, std::string>& axes, const std::string& key) {
  const auto it = axes.find(key);
  return it == axes.end() ? std::nullopt : std::optional<std::string>(it->second);
}

void run_sweep(const SweepArgs& a, Globals& g) {
  const Format fmt = parse_format_flag(a.format);
  a.out.check({}, files_named(a.d, g.pasted));
  const auto profiles = io::Profiles::load(g.profiles_dir);
  const i64 max_cells = parse_count(a.max_cells, "--max-cells");
  if (max_cells < 1) throw InputError("--max-cells", "must be >= 1");

  DeploymentSource src = flags_source(a.d, g.pasted);
  const auto ax = take_axes(src);
  const Deployment d = resolve_source(src, profiles);
  for (const auto& w : d.warnings) warn(w);
  auto strict = strict_failures(d, a.d.strict);

  // the cells' tokens per request are the --context values: a prompt or output length would be read by nothing
  for (const char* key : {"prompt_tokens", "output_tokens"})
    if (const auto* v = d.bag.get(key))
      throw InputError(v->origin.where, "a sweep's cells take their tokens per request from --context", "give --context (a list or range) instead");
  SweepAxes axes;
  axes.contexts = expand_counts(axis(ax, "context").value_or("1k,4k,16k,32k"), "--context", max_cells, "--max-cells");
  axes.concurrencies = expand_counts(axis(ax, "concurrency").value_or("1,8,32,128"), "--concurrency", max_cells, "--max-cells");
  const std::vector<std::string> gpu_names = split_names(axis(ax, "gpu").value_or(d.spec.gpu.id), "--gpu");
  if (gpu_names.size() > 1 && d.bag.has("gpu_memory_bytes"))
    throw InputError(d.bag.get("gpu_memory_bytes")->origin.where, "one memory total cannot describe " + std::to_string(gpu_names.size()) + " GPUs",
                     "sweep one GPU with it, or leave it out to use each profile's");
  for (const auto& name : gpu_names) {
    if (name == d.spec.gpu.id || name == d.bag.text("gpu")) {
      axes.gpus.push_back(d.spec.gpu);
      continue;
    }
    try {
      axes.gpus.push_back(profiles.gpu(name, d.bag.bytes("gpu_memory_bytes")));
    } catch (const InputError& e) {
      throw InputError("--gpu", e.problem(), e.fix());
    }
  }
  axes.tensor_parallel = expand_counts(axis(ax, "tensor_parallel_size").value_or(std::to_string(d.base.parallel.tp)), "--tensor-parallel-size", max_cells, "--max-cells");
  if (const auto kv = axis(ax, "kv_cache_dtype")) {
    for (const auto& s : split_names(*kv, "--kv-dtype")) {
      if (s == "auto") {
        axes.kv_formats.emplace_back(std::nullopt);
        continue;
      }
      if (const auto tq = parse_turboquant(s)) {
        axes.kv_formats.emplace_back(*tq);
        continue;
      }
      const auto f = parse_format(s);
      if (!f) throw InputError("--kv-dtype", "unknown format '" + s + "'", "use one of auto, " + format_names());
      // a type the engine does not have is swept at its size with plan's warning (--strict fails it)
      if (const std::string foreign = foreign_kv_format(d.base.engine.kind, *f); !foreign.empty()) {
        warn(foreign);
        if (a.d.strict) strict.push_back(foreign);
      }
      axes.kv_formats.emplace_back(KvPair{*f, *f});
    }
    if (axes.kv_formats.empty()) throw InputError("--kv-dtype", "empty list", "give formats such as fp8,auto");
  }
  if (axes.cells() > max_cells)
    throw InputError("--max-cells", "the sweep has " + std::to_string(axes.cells()) + " cells, more than " + std::to_string(max_cells),
                     "use coarser ranges or raise --max-cells");
  io::at_origin(d.bag, d.base.engine.kind, [&] { validate_sweep(d.base, axes); });

  // ---- everything is validated: rows may be written from here on ----
  Report rep;
  rep.title = "kvplan sweep";
  rep.generated_by = std::string("kvplan ") + kVersion + " (" + kGitSha + ")";
  const bool reports = !a.out.html.empty() || !a.out.markdown.empty();
  const bool color = fmt == Format::table && isatty(STDOUT_FILENO);
  const bool progress = isatty(STDERR_FILENO);
  const i64 total = axes.cells();
  const auto start = std::chrono::steady_clock::now();
  i64 done = 0;
  bool progress_shown = false;

  Table t;
  t.columns = {"gpu", "tp", "kv_dtype", "context", "concurrency", "kv", "total", "fits", "headroom", "limiting"};
  t.right_align = {false, true, false, true, true, true, true, false, true, false};
  if (a.perf) {
    t.columns.insert(t.columns.end(), {"tpot_ms", "decode_tok/s/gpu"});
    t.right_align.insert(t.right_align.end(), {true, true});
  }
  Out o;
  if (fmt == Format::csv) {
    o << "gpu,tensor_parallel_size,kv_dtype,context_tokens,concurrency,kv_bytes,total_bytes,fits,headroom_bytes,limiting_factor";
    if (a.perf) o << ",tpot_s,decode_tokens_per_s_per_gpu";
    o << "\n";
  } else if (fmt == Format::json) {
    ojson inputs = deployment_inputs_json(d);
    inputs["contexts"] = axes.contexts;
    inputs["concurrencies"] = axes.concurrencies;
    ojson gpus = ojson::array();
    for (const auto& gp : axes.gpus) gpus.push_back(gp.id);
    inputs["gpus"] = gpus;
    inputs["tensor_parallel_sizes"] = axes.tensor_parallel;
    inputs["cells"] = total;
    std::string head = envelope("kvplan.sweep", "1.1.0", g.argv, profiles.sources(), inputs, ojson::object()).dump(2, ' ', false, ojson::error_handler_t::replace);
    head.erase(head.rfind('}'));                           // reopen the envelope ...
    head.erase(head.rfind("\"results\""));                 // ... and write results as a stream
    o << head << "\"results\": {\n    \"rows\": [";
  }
  bool first_row = true;
  std::string gpu_id, dtname, gpu_json, dt_json;
  const Planner* current = nullptr;
  // table and md rows are streamed too: a first pass over the grid sizes the table's columns
  auto human_row = [&](const SweepRow& r, const PerfResult& pr) {
    const Cell& c = r.cell;
    std::vector<std::string> row = {r.gpu->id, std::to_string(r.tensor_parallel), kv_pair_name(r.kv_format, r.kv_v_format), grouped(r.context),
                                    grouped(r.concurrency), human_bytes(c.kv_bytes), human_bytes(c.total_bytes), c.fits ? "yes" : "NO",
                                    human_bytes(c.headroom_bytes), c.limiting};
    if (a.perf) {
      char b1[32], b2[32];
      std::snprintf(b1, sizeof b1, "%.3f", pr.tpot_s * 1e3);
      std::snprintf(b2, sizeof b2, "%.1f", pr.decode_tokens_per_s_per_gpu);
      row.insert(row.end(), {b1, b2});
    }
    return row;
  };
  std::vector<size_t> widths;
  for (const auto& col : t.columns) widths.push_back(col.size());
  if (fmt == Format::table) {
    run_sweep(
        d.base, axes, [&](const Planner& p) { current = &p; },
        [&](const SweepRow& r) {
          const auto row = human_row(r, a.perf ? estimate_perf(*current, r.context, 0, r.concurrency, d.perf) : PerfResult{});
          for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
        });
    std::string head;
    size_t line_width = 0;
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const std::string pad(widths[i] - t.columns[i].size(), ' ');
      head += (i ? "  " : "") + (t.right_align[i] ? pad + t.columns[i] : t.columns[i] + (i + 1 < t.columns.size() ? pad : ""));
      line_width += widths[i] + (i ? 2 : 0);
    }
    o << head << "\n" << std::string(line_width, '-') << "\n";
  } else if (fmt == Format::md) {
    o << "|";
    for (const auto& col : t.columns) o << " " << col << " |";
    o << "\n|";
    for (size_t i = 0; i < t.columns.size(); ++i) o << (t.right_align[i] ? " ---: |" : " --- |");
    o << "\n";
  }
  try {
    run_sweep(
        d.base, axes,
        [&](const Planner& p) {
          current = &p;
          gpu_id = p.spec().gpu.id;
          // K and V apart (llama.cpp -ctk f16 -ctv q8_0) read K/V; one format when they agree
          dtname = kv_pair_name(p.spec().kv.k_format, p.spec().kv.v_format);
          gpu_json = json_str(gpu_id);
          dt_json = json_str(dtname);
          if (reports)
            rep.sections.push_back(build_section(d, p,
                                                 d.spec.model.id + " on " + gpu_id + ", TP " + std::to_string(p.spec().parallel.tp) + ", KV " + dtname,
                                                 axes.contexts, axes.concurrencies));
        },
        [&](const SweepRow& r) {
          const Cell& c = r.cell;
          PerfResult pr;
          if (a.perf) pr = estimate_perf(*current, r.context, 0, r.concurrency, d.perf);
          switch (fmt) {
            case Format::csv:
              o << gpu_id << ',';
              o.num(r.tensor_parallel) << ',' << dtname << ',';
              o.num(r.context) << ',';
              o.num(r.concurrency) << ',';
              o.num(c.kv_bytes) << ',';
              o.num(c.total_bytes) << ',' << (c.fits ? "true" : "false") << ',';
              o.num(c.headroom_bytes) << ',' << c.limiting;
              if (a.perf) {
                o << ',';
                o.real(pr.tpot_s) << ',';
                o.real(pr.decode_tokens_per_s_per_gpu);
              }
              o << "\n";
              break;
            case Format::json:
            case Format::jsonl:
              o << (fmt == Format::json ? (first_row ? "\n      " : ",\n      ") : "");
              o << "{\"gpu\": " << gpu_json << ", \"tensor_parallel_size\": ";
              o.num(r.tensor_parallel) << ", \"kv_dtype\": " << dt_json << ", \"context_tokens\": ";
              o.num(r.context) << ", \"concurrency\": ";
              o.num(r.concurrency) << ", \"kv_bytes\": ";
              o.num(c.kv_bytes) << ", \"total_bytes\": ";
              o.num(c.total_bytes) << ", \"fits\": " << (c.fits ? "true" : "false") << ", \"headroom_bytes\": ";
              o.num(c.headroom_bytes) << ", \"limiting_factor\": \"" << c.limiting << "\"";
              if (a.perf) {
                o << ", \"tpot_s\": ";
                o.real(pr.tpot_s) << ", \"decode_tokens_per_s_per_gpu\": ";
                o.real(pr.decode_tokens_per_s_per_gpu);
              }
              o << (fmt == Format::jsonl ? "}\n" : "}");
              break;
            case Format::md:
            case Format::table: {
              const std::vector<std::string> row = human_row(r, pr);
              if (fmt == Format::md) {
                o << "|";
                for (size_t i = 0; i < row.size(); ++i) o << " " << row[i] << " |";
                o << "\n";
                break;
              }
              std::string line;
              for (size_t i = 0; i < row.size(); ++i) {
                const std::string pad(widths[i] > row[i].size() ? widths[i] - row[i].size() : 0, ' ');
                std::string cell = row[i];
                if (color && i == 7) cell = c.fits ? "\033[32m" + cell + "\033[0m" : "\033[31m" + cell + "\033[0m";
                line += (i ? "  " : "") + (t.right_align[i] ? pad + cell : cell + (i + 1 < row.size() ? pad : ""));
              }
              o << line << "\n";
              break;
            }
            default:
              break;
          }
          first_row = false;
          if (progress && (++done & 0xffff) == 0) {
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (s > 2) {
              std::fprintf(stderr, "\rkvplan sweep: %lld of %lld cells", static_cast<long long>(done), static_cast<long long>(total));
              progress_shown = true;
            }
          }
        });
  } catch (const std::exception& e) {
    // output has started: close what can be closed, then exit 3
    if (fmt == Format::jsonl) o << "{\"error\": " << json_str(e.what()) << "}\n";
    o.flush();
    throw RuntimeFailure(std::string("sweep stopped after output began: ") + e.what());
  }
  if (progress_shown) std::fprintf(stderr, "\n");
  if (fmt == Format::json) o << "\n    ]\n  }\n}\n";
  o.flush();
  if (reports)
    write_outputs({{a.out.html, a.out.html.empty() ? "" : render_html(rep)}, {a.out.markdown, a.out.markdown.empty() ? "" : render_markdown(rep)}});
  warn_strict(strict);
  g.exit_code = strict.empty() ? 0 : 1;
}

}  // namespace

void register_sweep(CLI::App& app, Globals& g) {
  auto a = std::make_shared<SweepArgs>();
  auto* c = app.add_subcommand(
      "sweep",
      "Context x concurrency grid (lists: 1k,4k,32k; ranges: 1k..128k*2 geometric, 8..64+8 arithmetic); "
      "--gpu, --kv-dtype and --tensor-parallel-size also take lists; csv, jsonl and json stream");
  add_deploy_options(c, a->d);
  c->add_flag("--perf", a->perf, "Add TPOT and decode tokens/s per GPU to every cell");
  c->add_option("--max-cells", a->max_cells, "Refuse sweeps with more cells than this")->capture_default_str();
  a->out.add_options(c, false);
  c->add_option("--format", a->format, "table | md | csv | json | jsonl")->capture_default_str();
  c->callback([a, &g] { run_sweep(*a, g); });
}

}  // namespace kvplan::cli
