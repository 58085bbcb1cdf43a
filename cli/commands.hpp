// Subcommand registration. Each cmd_<name>.cpp holds its options, registration and run function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kvplan::cli {

/// State shared by every subcommand: global options and the exit code the run sets.
struct Globals {
  std::optional<std::string> profiles_dir;
  std::vector<std::string> argv;
  std::vector<std::string> pasted;  // an engine command given after `--`
  int exit_code = 0;
};

void register_kv(CLI::App& app, Globals& g);
void register_models(CLI::App& app, Globals& g);
void register_gpus(CLI::App& app, Globals& g);
void register_plan(CLI::App& app, Globals& g);
void register_sweep(CLI::App& app, Globals& g);
void register_fit(CLI::App& app, Globals& g);
void register_check(CLI::App& app, Globals& g);
void register_report(CLI::App& app, Globals& g);
void register_probe(CLI::App& app, Globals& g);
void register_log(CLI::App& app, Globals& g);
void register_simulate(CLI::App& app, Globals& g);

/// Writes a warning line to stderr ("kvplan: warning: ...").
void warn(const std::string& msg);

/// Rewrites the engine spellings CLI11 cannot take as options (-ctk, -np, -ngl, -ub, -fa, -tp, -kvu,
/// ...) into their long kvplan flags, and gives a bare -fa / --flash-attn the value "on". A word after it that is no
/// value of its (and not an option) goes to `after_flash_attn`: CLI11 then finds it unexpected, and main names the flag.
std::vector<std::string> rewrite_engine_spellings(const std::vector<std::string>& args,
                                                  std::vector<std::string>* after_flash_attn = nullptr);

}  // namespace kvplan::cli
