// The deployment front doors of plan, sweep, fit, check and report: kvplan's flags (generated from
// the settings table, including the engine spellings people type), a command pasted after `--`,
// and `--set KEY=VALUE`; all fill one SettingsBag, resolved once into a typed Deployment.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>

#include "kvplan/core/deployment.hpp"
#include "kvplan/io/cmdline.hpp"
#include "kvplan/io/deployment_build.hpp"
#include "kvplan/io/settings.hpp"
#include "model_options.hpp"

namespace kvplan::cli {

struct DeployArgs {
  io::SettingsBag flags;          // kvplan flags as given (CLI11 callbacks)
  std::vector<std::string> set;   // --set KEY=VALUE
  bool strict = false;
};

/// Records a kvplan flag's value for `key`; another spelling of the same setting already given with a different value
/// (--tp 2 --tp-size 4) is an InputError naming both, since one of them would go unread.
void set_flag(DeployArgs& a, const std::string& key, const std::string& name, const std::string& value);

/// Registers MODEL (optional when a command is pasted after --), every setting of the table as a
/// kvplan flag (workload settings only when `workload`), --set and --strict. Nothing when
/// deploy_options_only_for gave another word.
void add_deploy_options(CLI::App* c, DeployArgs& a, bool workload = true);

/// The command line's first word is `word` (main reads it before registering): add_deploy_options then
/// registers the table's flags on the subcommand of that name alone, since the others' are never parsed
/// (several hundred CLI11 options cost milliseconds at every start); on none when no subcommand has that
/// name (--version, --help, a typo CLI11 reports). Not called (tests that build the CLI themselves): on every subcommand.
void deploy_options_only_for(const std::string& word);

/// A command line's first word that is not an option or the value of --profiles, before any `--`; empty if none.
std::string named_subcommand(const std::vector<std::string>& args);

/// Everything a deployment is described by, in the order settings apply: the engine command
/// first, then explicit settings (deployment-file settings:, kvplan flags, --set KEY=VALUE).
struct DeploymentSource {
  std::vector<std::string> command;  // the engine's command line (argv), empty when none
  std::string command_where;         // "command" (pasted) or file:line:col
  std::string engine_hint;           // engine named outside the command ("" when none)
  std::string version_hint;          // engine version named outside the command
  std::map<std::string, std::string> variables;  // for $VAR expansion
  std::vector<std::string> set_variables;          // the --set keys that are no setting: the command must read them
  std::vector<std::tuple<std::string, std::string, io::Origin>> settings;  // key, value, origin
  std::vector<std::pair<std::string, std::string>> env;  // container env applied to the command
  std::string env_where;
  std::string base_dir;   // relative config files named by the command
  std::string set_hint;   // how to supply a missing variable: "--set" or "settings:"
  bool prefix_before_prompt = false;  // simulate: --shared-prefix comes before --prompt-tokens (Workload)
  i64 default_prompt = 0;             // check's simulated traffic: a prompt length left out (Workload::default_prompt)
  bool layout_searched = false;       // fit's layout searches: the given expert-parallel size is applied to each layout
                                      // tried, not checked against the tensor x data parallel size given
};

/// A resolved deployment.
struct Deployment {
  io::SettingsBag bag;      // every setting with its origin
  DeploymentSpec base;      // typed, engine defaults not yet filled (sweeps and searches vary it)
  io::ModelInfo model;
  std::string engine_version;  // the flag table read ("" without a command)
  PlanSpec spec;            // plan_spec(base)
  i64 tokens = 0, prompt = 0, output = 0, concurrency = 1, shared_prefix = 0;
  std::string tokens_source;
  PerfParams perf;
  std::vector<std::string> warnings;  // model fallbacks, command flags not modelled or unknown
  io::EngineCommand command;          // what the command said (empty when none)
};

/// Builds a deployment from its source. Unexpanded variables in settings that change memory, with
/// no value supplied, are one error naming them and how to supply them (exit 2).
/// Throws an InputError at `where` unless `v` is a release as --engine-version and ENGINE@VERSION take it: latest,
/// b<digits>, or up to four numbers with a suffix (0.10.1.1, 1.0.0rc3, 0.5.6.post1).
void check_engine_version(const std::string& v, const std::string& where);

Deployment resolve_source(const DeploymentSource& src, const io::Profiles& profiles);

/// The source plan/sweep/fit/report build from their flags, --set and a pasted command.
DeploymentSource flags_source(const DeployArgs& a, const std::vector<std::string>& pasted);

/// --set KEY=VALUE: a settings key becomes a setting (applied after the command), anything else a variable.
/// The setting a flag or key spelling names in any front end ("--max-model-len", "mem-fraction-static", "no-kv-unified"),
/// and whether that spelling negates it; {nullptr, false} when none.
std::pair<const io::SettingDef*, bool> setting_spelled(const std::string& written);

void add_set_values(const std::vector<std::string>& set, DeploymentSource& src, bool spelling_check = true);

/// Throws the InputError for a --set KEY that is no setting and that nothing reads as $KEY (naming the nearest key).
[[noreturn]] void unread_set_key(const std::string& key);

/// The words a --set variable may be read in: an engine command, its container env values and the settings' values.
std::vector<std::string> variable_readers(const std::vector<std::string>& command, const std::vector<std::pair<std::string, std::string>>& env,
                                          const std::vector<std::string>& setting_values);

/// Whether a word reads the variable: $KEY, ${KEY}, ${KEY:-default}, $(KEY), %KEY%, ... (the forms io::expand_variables expands).
bool reads_variable(const std::vector<std::string>& words, const std::string& key);

/// Plans a variant: the deployment with another layout (searches) — engine defaults re-resolved.
Planner plan_variant(const Deployment& d, const Parallel& par);
/// The same for a variant of its typed spec (llama.cpp's --gpu-count); errors point at the deployment's settings.
Planner plan_variant(const Deployment& d, const DeploymentSpec& x);

/// Applies --strict: every warning fails (returns the failure lines; empty when none or not strict).
std::vector<std::string> strict_failures(const Deployment& d, bool strict);
/// One stderr line for a --strict run that its warnings fail (they were printed as warnings before it).
void warn_strict(const std::vector<std::string>& failures);

/// The plan's notes: the model's (config reading, the engine's dtype and KV cache dtype resolution), then the engine's.
std::vector<std::string> plan_notes(const Planner& p);
/// JSON of the engine report (stable keys under results.engine) and of the budget terms.
ojson engine_json(const Planner& p);
ojson budget_json(const Planner& p);
ojson deployment_inputs_json(const Deployment& d);
/// The engine version planned (inputs.engine_version): the one given, else "latest" (every rule in its newest form).
std::string resolved_engine_version(const std::string& given);
/// Paging against contiguous reservation, and the performance estimate, as JSON.
ojson paging_json(const Deployment& d, const Planner& p);
ojson perf_json(const PerfResult& r);
/// results of `kvplan plan` (also each deployment's results in `kvplan check`): engine, budget, fit,
/// paging, performance, critical pipeline stage, warnings.
ojson plan_results_json(const Deployment& d, const Planner& p);

}  // namespace kvplan::cli
