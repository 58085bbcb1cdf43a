// Every shipped profile loads; GPU profiles are strict; names resolve with "did you mean".
#include <catch2/catch.hpp>

#include "kvplan/core/kv.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/profiles.hpp"

using namespace kvplan;

TEST_CASE("every built-in model profile loads and has KV or state", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  REQUIRE(p.models().size() >= 30);
  for (const auto& [id, prof] : p.models()) {
    INFO(id);
    const ModelSpec m = p.model(id);
    KvOptions o;
    o.context = 4096;
    const auto r = compute_kv(m, o);
    CHECK(r.kv_bytes_per_token + r.state_bytes > 0);
    CHECK(count_params(m).total > 0);
    CHECK_FALSE(prof.source.empty());
    CHECK(m.warnings.empty());  // every shipped model_type has a family rule
  }
}

TEST_CASE("every built-in GPU profile loads with exact bytes", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  REQUIRE(p.gpus().size() >= 20);
  for (const auto& [id, g] : p.gpus()) {
    INFO(id);
    CHECK(g.memory_bytes > 1'000'000'000);
    CHECK(g.memory_bandwidth_bytes_per_s > 0);
    if (g.nvml_total_bytes && g.memory_bytes_kind == "cuda_reported") CHECK(g.memory_bytes <= *g.nvml_total_bytes);
  }
  // H100 80GB: CUDA reports 85045477376 bytes (deviceQuery "81106 MBytes (85045477376 bytes)"),
  // which vLLM prints as total_gpu_memory 79.22 GiB
  CHECK(p.gpu("h100-sxm").memory_bytes == 85045477376);
  CHECK(p.gpu("H100").id == "h100-sxm");
  CHECK(p.gpu("h200").memory_bytes == 150021734400);  // deviceQuery 143072 MBytes
}

TEST_CASE("unknown names suggest the closest", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  CHECK_THROWS_WITH(p.gpu("h10"), Catch::Matchers::StartsWith("unknown GPU 'h10'; did you mean 'h100"));
  CHECK_THROWS_WITH(p.model("llama-3.1-8"), "unknown model 'llama-3.1-8'; did you mean 'llama-3.1-8b'? (kvplan models lists them; or pass a config.json path)");
}

TEST_CASE("GPU profiles are strict about keys", "[profiles]") {
  nlohmann::json j = {{"name", "x"}};
  CHECK_THROWS_WITH(io::gpu_from_json(j, "x", "x.json"), Catch::Matchers::StartsWith("x.json: /aliases: missing key"));
  const auto p = io::Profiles::load(std::nullopt);
  (void)p;
  nlohmann::json bad = {{"nmae", "x"}};
  CHECK_THROWS_WITH(io::gpu_from_json(bad, "x", "x.json"), "x.json: /nmae: unknown key; did you mean 'name'?");
}
