// Shared test helpers: load a config from tests/data/configs and compute its KV at a context.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "kvplan/core/kv.hpp"
#include "kvplan/io/hf_config.hpp"

namespace kvtest {

inline std::string data(const std::string& rel) { return std::string(KVPLAN_TEST_DATA) + "/" + rel; }

inline kvplan::ModelSpec load(const std::string& name) {
  const std::string p = data("configs/" + name + ".json");
  return kvplan::io::model_from_hf_config(kvplan::io::parse_json_file(p), p, name);
}

// a config's text, to edit a key before from_text
inline std::string read_text(const std::string& name) {
  std::ifstream in(data("configs/" + name + ".json"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline kvplan::ModelSpec from_text(const std::string& text) {
  return kvplan::io::model_from_hf_config(kvplan::io::parse_json_text(text, "config.json"), "config.json", "test");
}

inline kvplan::KvResult kv(const kvplan::ModelSpec& m, kvplan::i64 ctx, kvplan::ElemFormat k = kvplan::ElemFormat::bf16,
                           kvplan::ElemFormat v = kvplan::ElemFormat::bf16, kvplan::i64 encoder = 0) {
  kvplan::KvOptions o;
  o.k_format = k;
  o.v_format = v;
  o.state_format = m.dtype;
  o.context = ctx;
  o.encoder_tokens = encoder;
  return kvplan::compute_kv(m, o);
}

constexpr kvplan::i64 MiB = 1024 * 1024;

}  // namespace kvtest
