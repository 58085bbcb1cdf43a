// Test helpers for plans: a PlanSpec from a test config, a built-in GPU profile and engine settings.
#pragma once

#include "helpers.hpp"
#include "kvplan/core/plan.hpp"
#include "kvplan/io/profiles.hpp"

namespace kvtest {

inline const kvplan::io::Profiles& profiles() {
  static const kvplan::io::Profiles p = kvplan::io::Profiles::load(std::nullopt);
  return p;
}

inline kvplan::PlanSpec spec(const std::string& model, const std::string& gpu, kvplan::EngineSettings e,
                             kvplan::Parallel par = {}, kvplan::ElemFormat kv_format = kvplan::ElemFormat::bf16) {
  kvplan::PlanSpec s;
  s.model = load(model);
  s.kv.k_format = s.kv.v_format = kv_format;
  s.kv.state_format = s.model.dtype;
  s.gpu = profiles().gpu(gpu);
  s.parallel = par;
  s.engine = kvplan::resolve_engine_defaults(e, s.model.max_context, par.tp, s.gpu.memory_bytes, s.gpu.architecture);
  return s;
}

inline kvplan::EngineSettings engine(kvplan::EngineKind k) {
  kvplan::EngineSettings e;
  e.kind = k;
  return e;
}

constexpr kvplan::i64 GiB = 1LL << 30;

inline double rel(double got, double want) { return std::abs(got - want) / want; }

}  // namespace kvtest
