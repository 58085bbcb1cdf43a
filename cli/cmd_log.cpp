// `kvplan log FILE...`: reads engine startup logs (vLLM, SGLang, TensorRT-LLM, llama.cpp), plans the deployment
// each describes and prints what the engine printed next to what kvplan computes, term by term
// (log_compare.hpp). Exit 0 when every engine rule reproduces the printed figures, 1 when one does not,
// 2 for a bad log. --save-overheads FILE keeps the measured terms for plan --overheads FILE and check --set overheads=FILE.
#include <iostream>

#include "commands.hpp"
#include "deploy_options.hpp"
#include "kvplan/io/files.hpp"
#include "kvplan/io/profiles.hpp"
#include "log_compare.hpp"
#include "output.hpp"
#include "report_build.hpp"

namespace kvplan::cli {

namespace {

struct LogArgs {
  std::vector<std::string> files;
  std::string model, gpu, engine_version, format = "table", save_overheads;
  std::vector<std::string> set;
};

void run_log(const LogArgs& a, Globals& g) {
  const Format fmt = parse_format_flag(a.format);
  if (!a.save_overheads.empty()) {
    if (a.files.size() != 1) throw InputError("--save-overheads", "needs exactly one log", "give one FILE");
    OutputFiles{}.check({{a.save_overheads, "--save-overheads"}}, a.files);
  }
  const io::Profiles profiles = io::Profiles::load(g.profiles_dir);
  // checked whether or not a model makes them count, so that a typo is not silently ignored
  if (!a.engine_version.empty()) check_engine_version(a.engine_version, "--engine-version");
  if (!a.gpu.empty()) {
    try {
      (void)profiles.gpu(a.gpu);
    } catch (const InputError& e) {
      throw InputError("--gpu", e.problem(), e.fix());
    }
  }
  std::vector<LogComparison> all;
  for (const std::string& file : a.files) {
    const io::EngineLog log = read_log_file(file);
    DeploymentSource extra;
    extra.set_hint = "--set";
    extra.version_hint = a.engine_version;
    if (!a.model.empty()) extra.settings.emplace_back("model", a.model, io::Origin{io::Origin::Kind::flag, "--model", "--model"});
    if (!a.gpu.empty()) extra.settings.emplace_back("gpu", a.gpu, io::Origin{io::Origin::Kind::flag, "--gpu", "--gpu"});
    add_set_values(a.set, extra);
    std::vector<std::string> notes;
    const std::optional<Deployment> d = deployment_from_log(log, extra, profiles, notes);
    all.push_back(compare_log(file, log, d ? &*d : nullptr, notes));
    // the deployment's warnings (a model fallback, flags not modelled) join the log's: stderr beside the table, JSON
    // "warnings"; the notes on how the log was read stay with the comparison
    if (d) all.back().log.warnings.insert(all.back().log.warnings.end(), d->warnings.begin(), d->warnings.end());
    // a log cut off mid-line with nothing complete left to check is a bad log, not a pass
    if (all.back().rules == 0)
      for (const auto& w : log.warnings)
        if (w.find("cut off mid-line") != std::string::npos)
          throw InputError(file, w.substr(0, w.find(';')) + " and no complete line with a figure of the engine's rules remains to check", "save the whole startup log");
    // nothing checked is not "reproduced": a gate on it would pass whatever the log said (a recurrent model's
    // llama.cpp log without --model has no figure the log's own arithmetic reproduces)
    if (all.back().rules == 0 && a.save_overheads.empty())
      throw InputError(file, "no figure in the log that kvplan's rules reproduce" + std::string(d ? "" : " without a model"),
                       d ? "check a log that prints the engine's KV cache figures" : "pass --model ID (or the GGUF file) for the model the log loaded");
  }
  bool ok = true;
  for (const auto& c : all) ok = ok && c.rules_ok == c.rules;
  std::string overheads;
  if (!a.save_overheads.empty()) overheads = overheads_json(all.front()).dump(2) + "\n";

  if (fmt == Format::json || fmt == Format::jsonl) {
    ojson logs = ojson::array();
    for (const auto& c : all) logs.push_back(log_json(c));
    ojson inputs = {{"files", a.files}, {"model", a.model}, {"gpu", a.gpu}, {"engine_version", a.engine_version}};
    const ojson env = envelope("kvplan.log", "1.0.0", g.argv, profiles.sources(), inputs, {{"logs", logs}, {"reproduced", ok}});
    std::cout << (fmt == Format::json ? env.dump(2) : env.dump()) << "\n";
  } else if (fmt == Format::csv) {
    std::cout << render(log_csv_table(all), fmt);
    for (const auto& c : all)
      for (const auto& w : c.log.warnings) warn(c.file + ": " + w);
  } else {
    for (const auto& c : all) {
      std::cout << render(log_table(c), fmt);
      std::cout << (fmt == Format::md ? "\n" : "") << c.rules_ok << " of " << c.rules << " engine figures reproduced"
                << (c.planned ? "" : " (no model: the log's own arithmetic only)") << "\n";
      for (const auto& n : c.notes) std::cout << (fmt == Format::md ? "- " : "note: ") << n << "\n";
      for (const auto& w : c.log.warnings) warn(c.file + ": " + w);
      std::cout << "\n";
    }
  }
  if (!overheads.empty()) io::write_files_atomically({{a.save_overheads, overheads}});
  g.exit_code = ok ? 0 : 1;
}

}  // namespace

void register_log(CLI::App& app, Globals& g) {
  auto a = std::make_shared<LogArgs>();
  auto* c = app.add_subcommand("log", "Engine startup logs (vLLM, SGLang, TensorRT-LLM, llama.cpp) next to kvplan's plan of the same "
                                      "deployment, term by term (exit 1 when an engine rule does not reproduce a printed figure)");
  c->add_option("FILE", a->files, "Startup log(s) as saved: ANSI colours, timestamps, journald prefixes and ranks are fine")->required();
  c->add_option("--model", a->model, "Model when the log does not name one kvplan can load (built-in id, config.json, GGUF, HF id)");
  c->add_option("--gpu", a->gpu, "GPU profile when the log does not print the GPU's total memory");
  c->add_option("--engine-version", a->engine_version, "Engine version when the log does not print it");
  c->add_option("--set", a->set, "KEY=VALUE: a setting the log does not show (max-model-len=8192); repeatable")->allow_extra_args(false);
  c->add_option("--save-overheads", a->save_overheads, "Write the measured overhead terms to FILE (JSON) for plan --overheads FILE or check --set overheads=FILE");
  c->add_option("--format", a->format, "table | md | csv | json | jsonl")->capture_default_str();
  c->callback([a, &g] { run_log(*a, g); });
}

}  // namespace kvplan::cli
