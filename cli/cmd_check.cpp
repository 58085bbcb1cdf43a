// `kvplan check FILE...`: the CI gate. Reads deployment files, plans each deployment, and checks
// its requirements: PASS / FAIL with the numbers behind each, the limiting term, and for a FAIL the
// nearest setting that would pass. Exit 0 all pass, 1 any fail, 2 invalid file, 3 runtime failure.
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "kvplan/core/suggest.hpp"
#include "kvplan/core/sweep.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/cmdline.hpp"
#include "kvplan/io/deployments.hpp"
#include "output.hpp"
#include "report_build.hpp"
#include "version.hpp"

namespace kvplan::cli {

namespace {

struct CheckArgs {
  std::vector<std::string> files;
  OutputFiles out;
  bool strict = false;
  std::string format = "table";
};

struct Requirement {
  std::string name;
  bool pass = false;
  std::string actual, required, detail, suggestion;
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

// Builds the argv a `kvplan plan` command line would have and parses it with the same options.
Deployment resolve_doc(const io::DeploymentDoc& doc, const io::Profiles& profiles, std::vector<std::string>& warnings,
                       std::shared_ptr<DeployArgs>& args) {
  args = std::make_shared<DeployArgs>();
  CLI::App sub{"deployment"};
  add_deploy_options(&sub, *args);
  std::vector<std::string> known;
  std::vector<CLI::App*> apps = sub.get_subcommands([](CLI::App*) { return true; });  // option groups
  apps.push_back(&sub);
  for (CLI::App* ap : apps)
    for (const CLI::Option* o : ap->get_options())
      for (const auto& l : o->get_lnames()) known.push_back("--" + l);

  std::string engine = doc.engine, model = doc.model;
  std::vector<std::pair<std::string, std::string>> settings;
  std::map<std::string, std::string> where = doc.setting_where;
  if (!doc.command.empty()) {
    const io::EngineCommand cmd = io::parse_engine_command(doc.command, doc.engine, doc.command_where);
    if (!engine.empty() && parse_engine(engine) && parse_engine(engine) != parse_engine(cmd.engine))
      throw InputError(doc.command_where, "the command is a " + cmd.engine + " command but engine is '" + engine + "'",
                       "drop engine: or make them agree");
    engine = cmd.engine;
    if (model.empty()) model = cmd.model;
    for (const auto& w : cmd.warnings) warnings.push_back(w);
    for (const auto& s : cmd.settings) {
      settings.push_back(s);
      where.emplace(s.first, doc.command_where);
    }
  }
  if (model.empty()) throw InputError(doc.where, "no model: the command names none", "add model:");
  for (const auto& s : doc.settings) {
    if (std::find(known.begin(), known.end(), s.first) == known.end() || s.first == "--context" || s.first == "--concurrency") {
      const auto sug = closest(s.first, known);
      throw InputError(doc.setting_where.at(s.first), "unknown setting '" + s.first.substr(2) + "'",
                       sug ? "did you mean '" + sug->substr(2) + "'? (the flags of kvplan plan --help)" : "use the flags of kvplan plan --help");
    }
    settings.push_back(s);  // explicit settings override the command's
  }
  std::vector<std::string> argv = {model};
  if (!doc.gpu.empty()) argv.insert(argv.end(), {"--gpu", doc.gpu});
  if (!engine.empty()) argv.insert(argv.end(), {"--engine", engine});
  std::map<std::string, std::string> last;
  for (const auto& [flag, value] : settings) last[flag] = value;
  for (const auto& [flag, value] : last) {
    const CLI::Option* o = sub.get_option_no_throw(flag);
    if (o && o->get_expected_min() == 0) {  // a flag: true sets it, false leaves it off
      if (value == "true" || value == "1") argv.push_back(flag);
      else if (value != "false" && value != "0")
        throw InputError(where[flag], flag.substr(2) + ": expected true or false, got '" + value + "'");
      continue;
    }
    argv.insert(argv.end(), {flag, value});
  }
  auto add = [&](const char* flag, const std::optional<i64>& v) {
    if (v) argv.insert(argv.end(), {flag, std::to_string(*v)});
  };
  add("--prompt-tokens", doc.prompt_tokens);
  add("--output-tokens", doc.output_tokens);
  add("--context", doc.context);
  add("--concurrency", doc.concurrency);
  add("--shared-prefix", doc.shared_prefix);
  std::vector<std::string> rev(argv.rbegin(), argv.rend());
  try {
    sub.parse(rev);
  } catch (const CLI::ParseError& e) {
    throw InputError(doc.where, std::string("deployment '") + doc.name + "': " + e.what(), "check the settings");
  }
  try {
    Deployment d = resolve_deployment(*args, &sub, profiles);
    if (doc.gpus && *doc.gpus != d.spec.parallel.gpus())
      throw InputError(doc.where, "gpus: " + std::to_string(*doc.gpus) + " but the layout uses " + std::to_string(d.spec.parallel.gpus()) +
                                      " (tensor " + std::to_string(d.spec.parallel.tp) + " x pipeline " + std::to_string(d.spec.parallel.pp) +
                                      " x data " + std::to_string(d.spec.parallel.dp) + ")",
                       "make gpus equal the product, or set the parallel sizes");
    return d;
  } catch (const OverflowError&) {
    throw;
  } catch (const InputError& e) {
    if (e.where().find(doc.file) == 0) throw;
    throw InputError(doc.where, "deployment '" + doc.name + "': " + std::string(e.what()));
  }
}

Evaluated evaluate(const io::DeploymentDoc& doc, const io::Profiles& profiles, bool strict) {
  Evaluated ev;
  ev.doc = doc;
  std::shared_ptr<DeployArgs> args;
  ev.d = resolve_doc(doc, profiles, ev.warnings, args);
  const Deployment& d = ev.d;
  for (const auto& w : d.model.spec.warnings) ev.warnings.push_back(w);
  const Planner p(d.spec);
  const EngineReport& r = p.engine();
  const i64 unit = std::max<i64>(p.unit_bytes(), 1);
  const bool has_traffic = doc.concurrency || doc.context || doc.prompt_tokens || doc.output_tokens;

  if (doc.starts.value_or(true)) {
    Requirement q{"engine starts (one " + std::to_string(p.max_len()) + "-token request fits)"};
    const Cell c = p.cell(std::max<i64>(p.max_len(), 1), 1);
    q.pass = r.startup_ok && c.fits;
    q.actual = q.pass ? "starts" : "does not start (" + c.limiting + ")";
    q.required = "starts";
    q.detail = "KV pool " + human_bytes(r.kv_pool_bytes) + " per GPU";
    if (!q.pass && r.estimated_max_model_len > 0) {
      q.suggestion = "max-model-len " + std::to_string(r.estimated_max_model_len) + " starts";
    } else if (!q.pass) {
      const auto search = fewest_gpus([&](const Parallel& par) { return Planner(respec(d, *args, d.spec.gpu, par, std::nullopt)); },
                                      d.model.spec, std::max<i64>(p.max_len(), 1), 1, 0, 64, 8);
      q.suggestion = search.found ? std::to_string(search.parallel.gpus()) + " x " + d.spec.gpu.id + " (TP " + std::to_string(search.parallel.tp) +
                                        ", PP " + std::to_string(search.parallel.pp) + ") would start"
                                  : "no layout of up to 64 " + d.spec.gpu.id + " starts; a smaller weight format";
    }
    ev.reqs.push_back(q);
  }
  if (has_traffic) {
    const Cell c = p.cell(d.tokens, d.concurrency, d.shared_prefix);
    Requirement q{"traffic fits (" + std::to_string(d.concurrency) + " x " + std::to_string(d.tokens) + " tokens)"};
    q.pass = c.fits;
    q.actual = c.fits ? "fits" : "does not fit (" + c.limiting + ")";
    q.required = "fits";
    q.detail = "KV " + human_bytes(c.kv_bytes) + " of " + human_bytes(r.kv_pool_bytes) + " per GPU";
    if (!c.fits) {
      const i64 n = p.max_concurrency(d.tokens, d.shared_prefix);
      q.suggestion = "concurrency " + std::to_string(n) + " fits";
      if (c.limiting == "kv_cache")
        q.suggestion += "; " + std::to_string(d.concurrency) + " needs " + human_bytes(mul(c.units_needed - c.units_available, unit)) + " more per GPU";
      if (c.limiting == "max_num_seqs") q.suggestion += "; raise max-num-seqs to " + std::to_string(d.concurrency);
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
    q.detail = "limited by " + p.cell(tokens, n + 1, d.shared_prefix).limiting;
    if (!q.pass) {
      if (c.limiting == "kv_cache")
        q.suggestion = std::to_string(n) + " fits; " + std::to_string(*doc.min_concurrency) + " needs " +
                       human_bytes(mul(c.units_needed - c.units_available, unit)) + " more per GPU";
      else if (c.limiting == "max_num_seqs") q.suggestion = "max-num-seqs " + std::to_string(*doc.min_concurrency) + " (now " + std::to_string(p.max_seqs()) + ")";
      else q.suggestion = std::to_string(n) + " fits (limited by " + c.limiting + ")";
    }
    ev.reqs.push_back(q);
  }
  if (doc.min_headroom) {
    const Cell c = p.cell(d.tokens, d.concurrency, d.shared_prefix);
    const double f = static_cast<double>(c.headroom_bytes) / static_cast<double>(std::max<i64>(r.kv_pool_bytes, 1));
    Requirement q{"min KV headroom at the traffic"};
    q.pass = c.fits && f >= *doc.min_headroom;
    q.actual = pct(f);
    q.required = ">= " + pct(*doc.min_headroom);
    q.detail = human_bytes(c.headroom_bytes) + " of a " + human_bytes(r.kv_pool_bytes) + " pool";
    if (!q.pass) {
      i64 n = d.concurrency;
      while (n > 0) {
        const Cell cn = p.cell(d.tokens, n, d.shared_prefix);
        if (cn.fits && static_cast<double>(cn.headroom_bytes) / static_cast<double>(std::max<i64>(r.kv_pool_bytes, 1)) >= *doc.min_headroom) break;
        n = n * 9 / 10 < n ? n * 9 / 10 : n - 1;
      }
      q.suggestion = "concurrency " + std::to_string(n) + " keeps " + pct(*doc.min_headroom);
    }
    ev.reqs.push_back(q);
  }
  const PerfResult perf = estimate_perf(p, d.prompt, d.output, d.concurrency, d.perf);
  if (doc.max_tpot_ms) {
    Requirement q{"max TPOT"};
    q.pass = perf.tpot_s * 1e3 <= *doc.max_tpot_ms;
    q.actual = ms(perf.tpot_s);
    q.required = "<= " + ms(*doc.max_tpot_ms / 1e3);
    q.detail = perf.decode_bound + " bound at " + std::to_string(perf.batch_per_replica) + " sequences per replica";
    if (!q.pass) {
      i64 lo = 0, hi = d.concurrency;
      while (lo < hi) {
        const i64 mid = lo + (hi - lo + 1) / 2;
        if (estimate_perf(p, d.prompt, d.output, mid, d.perf).tpot_s * 1e3 <= *doc.max_tpot_ms) lo = mid; else hi = mid - 1;
      }
      q.suggestion = lo > 0 ? "concurrency " + std::to_string(lo) + " meets it" : "no concurrency meets it on this layout; more GPUs or a smaller weight format";
    }
    ev.reqs.push_back(q);
  }
  if (doc.max_ttft_ms) {
    Requirement q{"max TTFT"};
    q.pass = perf.ttft_s >= 0 && perf.ttft_s * 1e3 <= *doc.max_ttft_ms;
    q.actual = perf.ttft_s < 0 ? "unknown (no TFLOP/s for this GPU)" : ms(perf.ttft_s);
    q.required = "<= " + ms(*doc.max_ttft_ms / 1e3);
    q.detail = perf.prefill_bound + " for a " + std::to_string(d.prompt) + "-token prompt";
    if (!q.pass && perf.ttft_s > 0) {
      i64 lo = 0, hi = d.prompt;
      while (lo < hi) {
        const i64 mid = lo + (hi - lo + 1) / 2;
        if (estimate_perf(p, mid, d.output, d.concurrency, d.perf).ttft_s * 1e3 <= *doc.max_ttft_ms) lo = mid; else hi = mid - 1;
      }
      q.suggestion = "prompts up to " + std::to_string(lo) + " tokens meet it";
    }
    ev.reqs.push_back(q);
  }
  if (strict && !ev.warnings.empty()) {
    Requirement q{"no warnings (--strict)"};
    q.pass = false;
    q.actual = std::to_string(ev.warnings.size()) + " warning(s)";
    q.required = "none";
    q.detail = ev.warnings.front();
    q.suggestion = "resolve the warning or drop --strict";
    ev.reqs.push_back(q);
  }
  for (const auto& q : ev.reqs) ev.pass = ev.pass && q.pass;

  ojson reqs = ojson::array();
  for (const auto& q : ev.reqs)
    reqs.push_back({{"requirement", q.name}, {"pass", q.pass}, {"actual", q.actual}, {"required", q.required},
                    {"detail", q.detail}, {"suggestion", q.suggestion.empty() ? ojson(nullptr) : ojson(q.suggestion)}});
  ev.plan = {{"name", doc.name}, {"file", doc.file}, {"where", doc.where}, {"pass", ev.pass}, {"requirements", reqs},
             {"inputs", deployment_inputs_json(d)}, {"engine", engine_json(p)}, {"budget", budget_json(p)}, {"warnings", ev.warnings}};
  ev.section = build_section(d, p, doc.name + ": " + d.model.spec.id + " on " + std::to_string(d.spec.parallel.gpus()) + " x " + d.spec.gpu.id);
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
    s.rows.push_back({e.doc.name, e.pass ? "✅ PASS" : "❌ FAIL", e.d.model.spec.id,
                      std::to_string(e.d.spec.parallel.gpus()) + " x " + e.d.spec.gpu.id, engine_name(e.d.spec.engine.kind), fails});
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
  a.out.check();
  const auto profiles = io::Profiles::load(g.profiles_dir);
  std::vector<io::DeploymentDoc> docs;
  for (const auto& f : a.files)
    for (auto& d : io::read_deployment_file(f)) docs.push_back(std::move(d));
  std::vector<Evaluated> evs;
  for (const auto& doc : docs) evs.push_back(evaluate(doc, profiles, a.strict));
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
      envelope("kvplan.check", "1.0.0", g.argv, profiles.sources(), inputs, {{"pass", all}, {"deployments", deployments}}).dump(2) + "\n";
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
  for (const auto& e : evs)
    for (const auto& q : e.reqs) t.rows.push_back({e.doc.name, q.name, q.pass ? "PASS" : "FAIL", q.actual, q.required, q.detail, q.suggestion});
  std::cout << render(t, fmt);
}

}  // namespace

void register_check(CLI::App& app, Globals& g) {
  auto a = std::make_shared<CheckArgs>();
  auto* c = app.add_subcommand("check", "CI gate: check deployment files (YAML/JSON) against their requirements "
                                        "(exit 0 all pass, 1 any fail, 2 invalid file, 3 runtime failure)");
  c->add_option("FILE", a->files, "Deployment files (.yaml, .yml or .json)")->required();
  a->out.add_options(c, true);
  c->add_flag("--strict", a->strict, "Warnings (model_type fallback, model not in the local cache, unexpanded variables) fail the check");
  c->add_option("--format", a->format, "stdout: table | md | csv | json")->capture_default_str();
  c->callback([a, &g] { run_check(*a, g); });
}

}  // namespace kvplan::cli
