// What the CLI does before any subcommand runs: which subcommand a command line names, so that only
// that one registers the settings table's flags (cli/main.cpp, cli::deploy_options_only_for).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "deploy_options.hpp"

TEST_CASE("the subcommand a command line names, past global options and --profiles' folder", "[cli]") {
  using kvplan::cli::named_subcommand;
  CHECK(named_subcommand({"plan", "llama-3.1-8b"}) == "plan");
  CHECK(named_subcommand({"--verbose", "fit", "x"}) == "fit");
  CHECK(named_subcommand({"--profiles", "plan", "gpus"}) == "gpus");  // "plan" is --profiles' folder here
  CHECK(named_subcommand({"--profiles=dir", "plan"}) == "plan");
  CHECK(named_subcommand({"--version"}).empty());
  CHECK(named_subcommand({"plna", "x"}) == "plna");  // a typo: no subcommand has the name, none registers; CLI11 reports it
  CHECK(named_subcommand({"--", "plan"}).empty());  // after -- is an engine command, not kvplan's
}
