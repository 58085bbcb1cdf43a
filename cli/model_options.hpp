// Options every model-taking subcommand shares (MODEL, cache types, MLA layout, weight format)
// and their resolution into a ModelSpec plus KvOptions.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "kvplan/core/kv.hpp"
#include "kvplan/io/profiles.hpp"
#include "output.hpp"

namespace kvplan::cli {

struct ModelArgs {
  std::string model;
  std::string kv_dtype;
  std::string cache_type_k;
  std::string cache_type_v;
  std::string state_dtype;
  std::string mla_layout = "latent";
  std::string weight_format;
  bool ignore_windows = false;
};

struct ResolvedModel {
  ModelSpec spec;
  KvOptions kv_options;  // formats filled; context left to the caller
  std::string origin;
  std::string weight_override;
  ModelArgs args;
};

void add_model_options(CLI::App* c, ModelArgs& a);

/// Loads the model and applies the options; throws InputError naming the flag on bad values.
ResolvedModel resolve_model(const ModelArgs& a, const io::Profiles& profiles);

/// The resolved model inputs for the JSON envelope (kv's and every deployment command's).
ojson model_inputs_json(const ModelSpec& m, const KvOptions& kv, const std::string& arg, const std::string& origin,
                        const std::string& mla_layout, bool ignore_windows, const std::string& weight_override);
ojson model_inputs_json(const ResolvedModel& rm);

}  // namespace kvplan::cli
