// One start/fit contract through the command line: for random deployments (model, GPU, engine and version,
// tensor parallelism, llama.cpp context, traffic), `plan` (exit 0 fits / 1 not), `check` on the same
// deployment written as a file, the `sweep` cell and `fit`'s largest concurrency all give one answer, and a
// deployment that does not start fits nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using nlohmann::json;

TEST_CASE("plan check sweep and fit agree on random deployments", "[property][contract]") {
  static const char* models[] = {"llama-3.1-8b", "qwen3-8b", "gemma-3-27b-it", "mixtral-8x7b", "qwen3-30b-a3b", "gpt-oss-20b",
                                 "deepseek-v2-lite", "llama-3.1-70b"};
  static const char* gpus[] = {"l4", "rtx-4090", "a100-sxm-80gb", "h100-sxm", "h200", "l40s"};
  static const char* engines[] = {"vllm", "vllm@0.10.0", "vllm@0.8.3", "sglang", "sglang@0.4.6", "sglang@0.5.2", "trtllm",
                                  "llama.cpp", "llama.cpp@b5937"};
  std::mt19937 rng(20261201);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-contract-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  int compared = 0;
#ifdef KVPLAN_SANITIZED
  constexpr int kDraws = 20;  // 4 kvplan runs per draw at ~0.3 s each under ASan
#else
  constexpr int kDraws = 40;
#endif
  for (int i = 0; i < kDraws; ++i) {
    const std::string model = models[pick(8)], gpu = gpus[pick(6)], engine = engines[pick(9)];
    const bool llama = engine.rfind("llama.cpp", 0) == 0;
    const int tp = llama ? 1 : 1 << pick(3);
    const long long context = 512 + pick(60000), conc = 1 + pick(200);
    const std::string at = engine.find('@') == std::string::npos ? "" : engine.substr(engine.find('@') + 1);
    const std::string name = engine.substr(0, engine.find('@'));
    std::vector<std::string> deploy = {model, "--gpu", gpu, "--engine", engine};
    std::string settings = "{}";
    if (!llama) {
      deploy.insert(deploy.end(), {"--tensor-parallel-size", std::to_string(tp)});
      settings = "{tensor-parallel-size: " + std::to_string(tp) + "}";
    } else if (pick(2) == 0) {
      deploy.insert(deploy.end(), {"--ctx-size", "65536"});
      settings = "{ctx-size: 65536}";
    }
    INFO(model << " on " << gpu << " under " << engine << ", TP " << tp << ": " << conc << " x " << context << " tokens");
    std::vector<std::string> plan = {"plan"};
    plan.insert(plan.end(), deploy.begin(), deploy.end());
    plan.insert(plan.end(), {"--context", std::to_string(context), "--concurrency", std::to_string(conc), "--format", "json"});
    const kvtest::Run p = kvtest::kvplan(plan);
    if (p.exit == 2) continue;  // a layout the rules refuse (TP above the KV heads, context above the model's)
    INFO(p.err);
    REQUIRE((p.exit == 0 || p.exit == 1));
    ++compared;
    const bool fits = p.exit == 0;
    const json pj = json::parse(p.out);
    if (!pj["results"]["engine"]["startup_ok"].get<bool>()) CHECK_FALSE(fits);  // does not start: nothing fits

    const auto file = dir / ("d" + std::to_string(i) + ".yaml");
    std::ofstream(file) << "deployments:\n  - name: d\n    model: " << model << "\n    gpu: " << gpu << "\n    engine: " << name << "\n"
                        << (at.empty() ? "" : "    engine_version: \"" + at + "\"\n") << "    settings: " << settings
                        << "\n    traffic: {context: " << context << ", concurrency: " << conc << "}\n";
    const kvtest::Run c = kvtest::kvplan({"check", file.string()});
    INFO(c.err);
    CHECK(c.exit == (fits ? 0 : 1));

    std::vector<std::string> sweep = {"sweep"};
    sweep.insert(sweep.end(), deploy.begin(), deploy.end());
    sweep.insert(sweep.end(), {"--context", std::to_string(context), "--concurrency", std::to_string(conc), "--format", "csv"});
    const kvtest::Run s = kvtest::kvplan(sweep);
    REQUIRE(s.exit == 0);
    CHECK(s.out.find(fits ? ",true," : ",false,") != std::string::npos);

    std::vector<std::string> fit = {"fit"};
    fit.insert(fit.end(), deploy.begin(), deploy.end());
    fit.insert(fit.end(), {"--context", std::to_string(context), "--format", "json"});
    const kvtest::Run f = kvtest::kvplan(fit);
    REQUIRE((f.exit == 0 || f.exit == 1));
    const long long most = json::parse(f.out)["results"]["max_concurrency"]["max_concurrency"].get<long long>();
    CHECK((most >= conc) == fits);
  }
  std::filesystem::remove_all(dir);
  CHECK(compared >= kDraws / 2);  // most draws are plannable
}
