// `kvplan log` and `check --log`: every reference log quote is parsed and its figures reproduced by the engine
// rules within the precision they were printed at; bad logs exit 2 with one line; measured overheads round-trip
// through --save-overheads / --overheads. Expected values are worked by hand here or are the engines' printed
// figures (case ids from tests/data/logs/cases/SOURCES.md).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "kvplan/core/gguf_recipe.hpp"

using nlohmann::json;

namespace {

const std::string kLogs = std::string(KVPLAN_TEST_DATA) + "/logs/";

json log_json(const std::vector<std::string>& args, int want_exit = 0) {
  std::vector<std::string> all = {"log"};
  all.insert(all.end(), args.begin(), args.end());
  all.insert(all.end(), {"--format", "json"});
  const kvtest::Run r = kvtest::kvplan(all);
  INFO(r.err);
  REQUIRE(r.exit == want_exit);
  return json::parse(r.out)["results"]["logs"][0];
}

const json* row(const json& log, const std::string& term) {
  for (const auto& r : log["rows"])
    if (r["term"] == term) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("kvplan log reproduces every reference log quote", "[log]") {
  // case id -> the model its config names ("" when the case has none: the log's own arithmetic only)
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"lc-llama31-8b-16k-f16-vulkan", "llama-3.1-8b"}, {"lc-llama31-8b-1k-kiq4nl-vf16", "llama-3.1-8b"},
      {"lc-qwen3-30b-a3b-4k-f16", "qwen3-30b-a3b"},     {"lc-qwen3-30b-a3b-16k-f16-mainline", "qwen3-30b-a3b"},
      {"lc-dscoder-v2-lite-512-f16", "deepseek-v2-lite"}, {"vllm-llama3-8b-h100-profile", "llama-3-8b"},
      {"vllm-llama31-8b-3090-20k", "llama-3.1-8b"},     {"vllm-llama31-8b-3090-29k-fail", "llama-3.1-8b"},
      {"vllm-v1-blocks-to-tokens", ""},                 {"sglang-qwen35-moe-4090-hybrid", ""},
      {"trtllm-a100-bytes-to-tokens", "llama-2-7b"}};
  for (const auto& [id, model] : cases) {
    INFO(id);
    std::vector<std::string> args = {kLogs + "cases/" + id + ".log"};
    if (!model.empty()) args.insert(args.end(), {"--model", model});
    const json l = log_json(args);
    CHECK(l["rule_checks"] == l["rule_checks_ok"]);
    CHECK(l["rule_checks"].get<int>() >= 1);
    for (const auto& r : l["rows"]) {
      INFO(r["term"]);
      CHECK(r["ok"].get<bool>());
    }
  }
}

TEST_CASE("kvplan log with no figure its rules reproduce is not a pass", "[log]") {
  // sglang-max-total-tokens-unknown prints max_total_num_tokens, which only a model's plan checks; a Mamba-2 log of
  // llama.cpp prints its recurrent state, ditto: without --model nothing is checked, and exit 0 would be a gate
  // that cannot fail
  for (const std::string f : {"cases/sglang-max-total-tokens-unknown.log", "llamacpp-conformance/mamba2-ctx4096-seq1.log"}) {
    const kvtest::Run r = kvtest::kvplan({"log", kLogs + f});
    INFO(f << ": " << r.err);
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("no figure in the log that kvplan's rules reproduce without a model; pass --model ID") != std::string::npos);
  }
}

TEST_CASE("kvplan log: the figures worked by hand", "[log]") {
  SECTION("vllm-llama31-8b-3090-20k: 3.81 GiB (+-0.005) / 2 MiB blocks = 1948..1953 blocks; 1952 printed") {
    const json l = log_json({kLogs + "cases/vllm-llama31-8b-3090-20k.log", "--model", "llama-3.1-8b"});
    const json* b = row(l, "GPU blocks");
    REQUIRE(b);
    CHECK((*b)["kvplan_low"] == 1948);   // floor(3.805 GiB / 2 MiB) = floor(1948.16)
    CHECK((*b)["kvplan_high"] == 1953);  // floor(3.815 GiB / 2 MiB) = floor(1953.28)
    CHECK((*b)["printed"] == 1952);
    // 23.58 x 0.90 - 17.06 - 0.35 = 3.812 GiB
    const json* kv = row(l, "available KV cache memory (from the printed terms)");
    REQUIRE(kv);
    CHECK(((*kv)["kvplan_low"].get<double>() + (*kv)["kvplan_high"].get<double>()) / 2 == Approx(3.812 * (1LL << 30)).epsilon(1e-6));
  }
  SECTION("vllm-llama31-8b-3090-29k-fail: does not start; 1478 blocks x 16 = 23648 tokens") {
    const json l = log_json({kLogs + "cases/vllm-llama31-8b-3090-29k-fail.log", "--model", "llama-3.1-8b"});
    CHECK(l["does_not_start"] == true);
    const json* s = row(l, "starts");
    REQUIRE(s);
    CHECK((*s)["kvplan_high"] == 0);
    CHECK((*row(l, "tokens the KV cache holds"))["kvplan_low"] == 1478 * 16);
  }
  SECTION("vllm-v1-blocks-to-tokens: 127626 x 16 = 2042016 tokens; 127626 / cdiv(2048, 16) = 997.078") {
    const json l = log_json({kLogs + "cases/vllm-v1-blocks-to-tokens.log"});
    CHECK((*row(l, "GPU KV cache size"))["kvplan_low"] == 2042016);
    CHECK((*row(l, "maximum concurrency"))["kvplan_low"].get<double>() == Approx(127626.0 / 128));
  }
  SECTION("trtllm-a100-bytes-to-tokens: 69524783104 B / 524288 B per token = 132608") {
    const json l = log_json({kLogs + "cases/trtllm-a100-bytes-to-tokens.log", "--model", "llama-2-7b"});
    CHECK((*row(l, "tokens in the paged KV cache"))["kvplan_low"] == 132608);
  }
  SECTION("lc-llama31-8b-1k-kiq4nl-vf16: K 1024 cells x 32 layers x 1024 x 18/32 B (iq4_nl) = 18 MiB") {
    const json l = log_json({kLogs + "cases/lc-llama31-8b-1k-kiq4nl-vf16.log"});
    const json& k = l["rows"][0];
    CHECK(k["kvplan_low"] == 1024LL * 32 * 1024 * 18 / 32);
    CHECK(k["printed"] == 18LL << 20);
  }
  SECTION("sglang-qwen3-8b-tp2 (assembled): K = (860050 + 1) x 36 layers x 4 heads x 128 x 2 B") {
    const json l = log_json({kLogs + "sglang-qwen3-8b-tp2.log"});  // the model from server_args
    CHECK(l["planned"] == true);
    CHECK((*row(l, "K buffers"))["kvplan_low"] == (860050LL + 1) * 36 * 4 * 128 * 2);
  }
  SECTION("sglang-gpt-oss-120b-hybrid-swa (assembled): full = rest // (18 x 2048 + 0.8 x 18 x 2048), swa = int(full x 0.8)") {
    const json l = log_json({kLogs + "sglang-gpt-oss-120b-hybrid-swa.log", "--gpu", "h100-sxm"});
    // rest = 13.50 - 78.50 x (1 - 0.85) = 1.725 GiB = 1,852,204,646 B; / 66,355.2 B = 27,913 full-layer tokens
    const json* full = row(l, "max_total_num_tokens");
    REQUIRE(full);
    CHECK((*full)["kvplan_low"] == 27913);  // the full layers' pool, not the SWA pool allocated first (#tokens: 22330)
    CHECK((*full)["ok"] == true);
    const json* swa = row(l, "swa_layer_tokens");
    REQUIRE(swa);
    CHECK((*swa)["kvplan_low"] == 22330);  // int(27913 x 0.8)
    CHECK((*swa)["ok"] == true);
    const json* printed = row(l, "max_total_num_tokens (from the printed memory)");
    REQUIRE(printed);
    CHECK((*printed)["ok"] == true);
    CHECK(row(l, "K buffers") == nullptr);  // two pools: the one-pool K/V rule does not apply
  }
}

TEST_CASE("kvplan log prices the printed file type by llama-quantize's recipe", "[log][gguf]") {
  // the log prints "model ftype = Q5_K - Medium" and "model size = 20.228 GiB" (cases.json lc-qwen3-30b-a3b-4k-f16):
  // Q5_K_M tensor by tensor comes to the same 20.228 GiB (0.001 GiB = the printed precision)
  const json l = log_json({kLogs + "cases/lc-qwen3-30b-a3b-4k-f16.log", "--model", "qwen3-30b-a3b"});
  const json* r = row(l, "model size");
  REQUIRE(r);
  CHECK((*r)["basis"] == "llama-quantize Q5_K_M recipe, tensor by tensor");
  CHECK(std::abs((*r)["kvplan_low"].get<double>() - 20.228 * (1LL << 30)) < 0.001 * (1LL << 30));
  // llama_model_ftype_name spellings back to file types
  CHECK(kvplan::gguf_recipe_from_printed("Q4_K - Medium")->name == "Q4_K_M");
  CHECK(kvplan::gguf_recipe_from_printed("Q2_K - Medium")->name == "Q2_K");
  CHECK(kvplan::gguf_recipe_from_printed("Q2_K - Small")->name == "Q2_K_S");
  CHECK(kvplan::gguf_recipe_from_printed("IQ2_XS - 2.3125 bpw")->name == "IQ2_XS");
  CHECK(kvplan::gguf_recipe_from_printed("IQ3_S mix - 3.66 bpw")->name == "IQ3_M");
  CHECK(kvplan::gguf_recipe_from_printed("MXFP4 MoE")->name == "MXFP4_MOE");
  CHECK(kvplan::gguf_recipe_from_printed("Q8_0")->name == "Q8_0");
  CHECK_FALSE(kvplan::gguf_recipe_from_printed("F16"));
}

TEST_CASE("kvplan log: SGLang's --max-total-tokens caps the pool the printed memory would hold", "[log]") {
  // the Qwen3-8B TP2 log started with max_total_tokens=500000: the memory holds 860,050 tokens, the pool takes 500,000
  // (_apply_token_constraints: min(profiled, max_total_tokens)); K = (500,000 + 1) x 36 x 4 x 128 x 2 B = 17.17 GiB
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-cap-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string text = kvtest::slurp(kLogs + "sglang-qwen3-8b-tp2.log");
  auto all = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  };
  all("max_total_tokens=None", "max_total_tokens=500000");
  all("#tokens: 860050, K size: 29.53 GB, V size: 29.53 GB", "#tokens: 500000, K size: 17.17 GB, V size: 17.17 GB");
  all("max_total_num_tokens=860050", "max_total_num_tokens=500000");
  const std::string capped = (dir / "capped.log").string();
  std::ofstream(capped) << text;
  const json l = log_json({capped});
  const json* printed = row(l, "max_total_num_tokens (from the printed memory)");
  REQUIRE(printed);
  CHECK((*printed)["ok"] == true);
  CHECK((*printed)["kvplan_low"] == 500000);
  std::filesystem::remove_all(dir);
}

TEST_CASE("kvplan log: a printed figure the rules do not reproduce fails", "[log]") {
  // the 3090 log with its block count changed from 1952 to 2100: 3.81 GiB holds at most 1953 blocks of 2 MiB
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-log-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string text = kvtest::slurp(kLogs + "cases/vllm-llama31-8b-3090-20k.log");
  text.replace(text.find("1952"), 4, "2100");
  const std::string wrong = (dir / "wrong.log").string();
  std::ofstream(wrong) << text;
  const json l = log_json({wrong, "--model", "llama-3.1-8b"}, 1);
  CHECK((*row(l, "GPU blocks"))["ok"] == false);
  // the same log as evidence in check fails its requirement
  const std::string deploy = (dir / "d.yaml").string();
  std::ofstream(deploy) << "deployments:\n  - name: a\n    model: llama-3.1-8b\n    gpu: rtx-3090\n    engine: vllm\n"
                           "    engine_version: \"0.8.3\"\n    settings: {max-model-len: 20000}\n    traffic: {context: 20000, concurrency: 1}\n";
  const kvtest::Run bad = kvtest::kvplan({"check", deploy, "--log", wrong, "--format", "json"});
  CHECK(bad.exit == 1);
  CHECK(bad.out.find("startup log") != std::string::npos);
  const kvtest::Run good = kvtest::kvplan({"check", deploy, "--log", kLogs + "cases/vllm-llama31-8b-3090-20k.log"});
  INFO(good.err);
  CHECK(good.exit == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("kvplan log: bad logs exit 2 with one line and no output", "[log]") {
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-badlog-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string bin = (dir / "core.bin").string();
  {
    std::ofstream o(bin, std::ios::binary);
    for (int i = 0; i < 4096; ++i) o.put(static_cast<char>(i * 37 % 256));
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {kLogs + "empty.log", "is empty"},
      {bin, "binary"},
      {kLogs + "make-build.log", "no vLLM, SGLang, TensorRT-LLM or llama.cpp startup line found"},
      {kLogs + "vllm-cut-off.log", "cut off mid-line"}};
  for (const auto& [file, says] : bad) {
    INFO(file);
    const kvtest::Run r = kvtest::kvplan({"log", file});
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("measured overheads round-trip: log --save-overheads then plan --overheads", "[log]") {
  // vllm-llama3-8b-h100-profile printed activation 1.26 GiB and non-torch 1.79 GiB; planned with them on the printed
  // 79.22 GiB total, the available KV is 79.22 x 0.90 - weights - 1.26 - 1.79 with kvplan's weights (8,030,261,248 x 2 B)
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-oh-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string oh = (dir / "oh.json").string();
  const kvtest::Run s = kvtest::kvplan({"log", kLogs + "cases/vllm-llama3-8b-h100-profile.log", "--model", "llama-3-8b", "--save-overheads", oh});
  INFO(s.err);
  REQUIRE(s.exit == 0);
  const json saved = json::parse(kvtest::slurp(oh));
  CHECK(saved["terms"]["activation_bytes"].get<double>() == Approx(1.26 * (1LL << 30)).epsilon(1e-9));
  CHECK(saved["terms"]["non_torch_bytes"].get<double>() == Approx(1.79 * (1LL << 30)).epsilon(1e-9));
  const kvtest::Run p = kvtest::kvplan({"plan", "llama-3-8b", "--engine", "vllm@0.8.3", "--gpu-memory-bytes", "79.22GiB", "--overheads", oh,
                                        "--format", "json"});
  INFO(p.err);
  REQUIRE((p.exit == 0 || p.exit == 1));
  const double avail = json::parse(p.out)["results"]["engine"]["available_kv_bytes"].get<double>();
  const double GiB = 1LL << 30;
  const double want = std::floor(79.22 * GiB * 0.9) - 8030261248.0 * 2 - 1.26 * GiB - 1.79 * GiB;
  CHECK(avail == Approx(want).margin(2));
  CHECK(std::abs(avail / GiB - 53.29) < 0.01);  // the printed available_kv_cache_memory
  // a file that is not an overheads document is bad input naming it
  const kvtest::Run b = kvtest::kvplan({"plan", "llama-3-8b", "--overheads", kLogs + "cases/SOURCES.md"});
  CHECK(b.exit == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("kvplan log reproduces the real llama.cpp logs of the conformance models", "[log][conformance]") {
  // tests/data/logs/llamacpp-conformance: captured from llama.cpp (node-llama-cpp 3.22.1) loading the synthetic models
  // kvplan_make_gguf writes with its defaults (README.md there). node-llama-cpp passes n_ctx = pad256(contextSize x
  // sequences), contextSize first padded to 256 when that stays below n_ctx_train (8192), one stream per sequence.
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-conf-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string logs = kLogs + "llamacpp-conformance/";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(logs)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".log") continue;
    INFO(name);
    const auto at = name.find("-ctx");
    const std::string arch = name.substr(0, at);
    const long long ctx = std::stoll(name.substr(at + 4));
    const long long seqs = std::stoll(name.substr(name.find("-seq") + 4));
    const std::string type = name.find("q8_0") != std::string::npos ? "q8_0" : "f16";
    const bool swa_full = name.find("swafull") != std::string::npos;
    const std::string gguf = (dir / (arch + ".gguf")).string();
    if (!std::filesystem::exists(gguf)) REQUIRE(std::system((std::string(KVPLAN_MAKE_GGUF) + " " + arch + " " + gguf + " >/dev/null").c_str()) == 0);
    const auto pad = [](long long x) { return (x + 255) / 256 * 256; };
    const long long per_seq = pad(ctx) < 8192 ? pad(ctx) : ctx;
    const json l = log_json({entry.path().string(), "--model", gguf, "--set", "ctx-size=" + std::to_string(pad(per_seq * seqs)), "--set",
                             "parallel=" + std::to_string(seqs), "--set", "kv-unified=false", "--set", "cache-type-k=" + type, "--set",
                             "cache-type-v=" + type, "--set", std::string("swa-full=") + (swa_full ? "true" : "false")});
    CHECK(l["rule_checks"] == l["rule_checks_ok"]);
    CHECK(l["rule_checks"].get<int>() >= 5);
    ++checked;
  }
  CHECK(checked >= 20);
  std::filesystem::remove_all(dir);
}

TEST_CASE("llama.cpp refuses different K and V cache types for MLA from b7830", "[log][conformance]") {
  // llama_init_from_model: "model does not support different K (q8_0) and V (f16) cache types" (seen loading the
  // synthetic deepseek2 model in the real engine); before the V-less cache (#19067) the types were independent
  const kvtest::Run now = kvtest::kvplan({"plan", "deepseek-v2-lite", "--engine", "llama.cpp", "-c", "4096", "-ctk", "q8_0", "--gpu", "rtx-4090"});
  CHECK(now.exit == 2);
  CHECK(now.err.find("K and V cache types must match") != std::string::npos);
  CHECK(kvtest::kvplan({"plan", "deepseek-v2-lite", "--engine", "llama.cpp@b7376", "-c", "4096", "-ctk", "q8_0", "--gpu", "rtx-4090"}).exit != 2);
  CHECK(kvtest::kvplan({"plan", "deepseek-v2-lite", "--engine", "llama.cpp", "-c", "4096", "-ctk", "q8_0", "-ctv", "q8_0", "--gpu", "rtx-4090"}).exit != 2);
}

TEST_CASE("kvplan log compares each GPU's model buffer with the layers kvplan puts there", "[log][llamacpp]") {
  // the Vulkan log (build 5781, Llama-3.1-8B Q4_0) with the offload lines a partial -ngl 20 prints: that build
  // offloads blocks 32 - 20 = 12..31 (the output layer stays on the CPU). Q4_0 packs every block matrix at 18 B per
  // 32 weights: 218,103,808 x 18 / 32 = 122,683,392 B, plus two f32 norms of 4096 = 32,768 B; 20 blocks =
  // 2,454,323,200 B on Vulkan0
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-log-buf-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "partial.log").string();
  std::ofstream(file) << kvtest::slurp(kLogs + "cases/lc-llama31-8b-16k-f16-vulkan.log")
                      << "load_tensors: offloaded 20/33 layers to GPU\n"
                      << "load_tensors:      Vulkan0 model buffer size =  2340.65 MiB\n"
                      << "load_tensors:   CPU_Mapped model buffer size =  4437.80 MiB\n";
  const json l = log_json({file, "--model", "llama-3.1-8b"});
  const json* r = row(l, "model buffer (Vulkan0)");
  REQUIRE(r);
  CHECK((*r)["kind"] == "estimate");
  CHECK((*r)["kvplan_low"] == 2454323200LL);
  CHECK(row(l, "model buffer (CPU_Mapped)") == nullptr);  // the mapped range, not the CPU tensors: not compared
}

TEST_CASE("kvplan log keeps stdout for data: the model fallback is a warning on stderr and in JSON", "[log]") {
  // the log names meta-llama/Llama-3.1-8B-Instruct, not in the (empty) Hugging Face cache: the built-in profile
  // stands in, which plan reports on stderr; log did so on stdout as a 'note:' line
  const char* before = std::getenv("HF_HUB_CACHE");
  const std::string saved = before ? before : "";
  setenv("HF_HUB_CACHE", (std::filesystem::temp_directory_path() / "kvplan-no-hf-cache").c_str(), 1);
  const auto r = kvtest::kvplan({"log", kLogs + "vllm-0.10-llama31-8b-h100.log"});
  REQUIRE(r.exit == 0);
  CHECK(r.out.find("Hugging Face cache") == std::string::npos);
  CHECK(r.err.find("kvplan: warning: ") != std::string::npos);
  CHECK(r.err.find("Hugging Face cache") != std::string::npos);
  const json l = log_json({kLogs + "vllm-0.10-llama31-8b-h100.log"});
  bool warned = false;
  for (const auto& w : l["warnings"]) warned = warned || w.get<std::string>().find("Hugging Face cache") != std::string::npos;
  if (before) setenv("HF_HUB_CACHE", saved.c_str(), 1);
  else unsetenv("HF_HUB_CACHE");
  CHECK(warned);
}

TEST_CASE("kvplan log says when it plans on the default GPU", "[log]") {
  // a TensorRT-LLM log from an A100 that prints no GPU total, without --gpu: the plan's memory is h100-sxm's, said
  const kvtest::Run r = kvtest::kvplan({"log", kLogs + "cases/trtllm-a100-bytes-to-tokens.log", "--model", "llama-2-7b"});
  CHECK(r.out.find("planned on the default profile (h100-sxm); give --gpu") != std::string::npos);
  const kvtest::Run given = kvtest::kvplan({"log", kLogs + "cases/trtllm-a100-bytes-to-tokens.log", "--model", "llama-2-7b", "--gpu", "a100-sxm-80gb"});
  CHECK(given.out.find("planned on the default profile") == std::string::npos);
}

TEST_CASE("log: activation + non-torch derived from a total the log did not run on is flagged and never saved", "[log]") {
  // vllm-main-qwen3-8b-h100 (INFO, vLLM >= 0.21) prints weights 15.3 GiB, available KV 55.2 GiB and CUDA graphs 0.49 GiB,
  // but no total: on 40 GiB x 0.92 the sum left is 36.8 - 15.3 - 55.2 - 0.49 = -34.19 GiB, which no GPU has
  const std::string log = kLogs + "vllm-main-qwen3-8b-h100.log";
  const kvtest::Run r = kvtest::kvplan({"log", log, "--set", "gpu_memory_bytes=40GiB"});
  CHECK(r.err.find("activation peak + non-torch derived as -34.19 GiB: the printed weights and KV exceed 40.00 GiB x 0.92") != std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-oh-neg-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string oh = (dir / "oh.json").string();
  const kvtest::Run neg = kvtest::kvplan({"log", log, "--set", "gpu_memory_bytes=40GiB", "--save-overheads", oh});
  CHECK(neg.exit == 2);
  CHECK(neg.err.find("kvplan: error: --save-overheads: the printed weights and KV exceed total x utilization") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(oh));
  // no total printed and no GPU given: the default profile's total would be the measurement
  const kvtest::Run assumed = kvtest::kvplan({"log", log, "--save-overheads", oh});
  CHECK(assumed.exit == 2);
  CHECK(assumed.err.find("the log prints no GPU total and names no GPU") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(oh));
  // the GPU it ran on, named: saved (80 GiB H100 SXM as CUDA reports it, 79.19 GiB x 0.92 - 15.3 - 55.2 - 0.49 > 0)
  const kvtest::Run named = kvtest::kvplan({"log", log, "--gpu", "h100-sxm", "--save-overheads", oh});
  INFO(named.err);
  CHECK(named.exit == 0);
  CHECK(std::filesystem::exists(oh));
  std::filesystem::remove_all(dir);
}

TEST_CASE("log: --model over a model the log names and kvplan loads warns that another model is compared", "[log]") {
  const std::string log = kLogs + "vllm-0.10-llama31-8b-h100.log";  // args line: model='meta-llama/Llama-3.1-8B-Instruct'
  const kvtest::Run other = kvtest::kvplan({"log", log, "--model", "llama-3.1-70b"});
  CHECK(other.err.find("--model llama-3.1-70b replaces the model the log ran (meta-llama/Llama-3.1-8B-Instruct, profile llama-3.1-8b)") !=
        std::string::npos);
  const kvtest::Run same = kvtest::kvplan({"log", log, "--model", "llama-3.1-8b"});
  CHECK(same.err.find("replaces the model the log ran") == std::string::npos);
}

TEST_CASE("log: a llama.cpp log's device name points at its GPU profiles and the start check reads in words", "[log]") {
  // llama-server-b7376-gemma3-4b prints '  Device 0: NVIDIA GeForce RTX 4060 Ti, compute capability 8.9' and no total
  const kvtest::Run r = kvtest::kvplan({"log", kLogs + "llama-server-b7376-gemma3-4b.log"});
  CHECK(r.out.find("the log names its GPU 'NVIDIA GeForce RTX 4060 Ti' but prints no total") != std::string::npos);
  CHECK(r.out.find("give --gpu rtx-4060-ti-16gb or rtx-4060-ti-8gb") != std::string::npos);
  // vllm-llama31-8b-3090-29k-fail: the engine refused to start, and kvplan's replay agrees
  const kvtest::Run s = kvtest::kvplan({"log", kLogs + "cases/vllm-llama31-8b-3090-29k-fail.log", "--model", "llama-3.1-8b"});
  CHECK(s.out.find("does not start          does not start") != std::string::npos);
}

TEST_CASE("log: the engine is the log's and a version over a printed one is noted", "[log]") {
  const std::string log = kLogs + "vllm-0.10-llama31-8b-h100.log";  // vLLM 0.10.0 printed
  const kvtest::Run other = kvtest::kvplan({"log", log, "--set", "engine=sglang"});
  CHECK(other.exit == 2);
  CHECK(other.err == "kvplan: error: --set engine: 'sglang' is not the engine that wrote the log (vllm); leave the engine to the log\n");
  const kvtest::Run version = kvtest::kvplan({"log", log, "--engine-version", "0.8.3"});
  CHECK(version.out.find("note: --engine-version 0.8.3 replaces the version the log printed (0.10.0)") != std::string::npos);
}

TEST_CASE("kvplan log: a --set max_model_len beside the printed one is noted, and the replays keep the engine's", "[log]") {
  // SGLang's args leave context_length None; the engine prints context_len=40960 (line 19) and max_running_requests =
  // min(tokens // 2, clamp(860,050 / 40,960 x 512, 2048, 4096)) = 4096 is replayed with it, not with --set's 8192
  // (860,050 / 8,192 x 512 is past 4096 too: the row would pass either way, the note is what says which was used)
  const json l = log_json({kLogs + "sglang-qwen3-8b-tp2.log", "--set", "max_model_len=8192"});
  CHECK(l["rule_checks"] == l["rule_checks_ok"]);
  bool noted = false;
  for (const auto& n : l["notes"])
    noted = noted || n.get<std::string>() ==
                         "--set max_model_len=8192: the replays of the printed KV figures use the max_model_len the engine ran with, 40,960 "
                         "(log line 19); the plan's other rows use 8192";
  CHECK(noted);
  // SGLang's args show mem_fraction_static=0.85: another value is refused
  const kvtest::Run r = kvtest::kvplan({"log", kLogs + "sglang-qwen3-8b-tp2.log", "--set", "memory_fraction=0.7"});
  CHECK(r.exit == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "kvplan: error: --set memory_fraction: the log shows memory_fraction = 0.85 (log line 1), not 0.7; drop it: --set gives the "
        "settings a log does not show\n");
}
