// The front doors agree: every real command line of tests/data/engine-cmdlines.json is evaluated (exit
// 0 or 1, no error) both in a deployment file (`kvplan check`) and pasted after `--` (`kvplan plan`),
// with identical inputs and results, once the values its variables hold are supplied; without
// them, a command whose memory settings hold variables exits 2 naming the variables. Also the
// regressions the front-door work fixed (fp8,auto / auto,fp8 sweeps, -ctk q8_0, --calculate-kv-scales).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using nlohmann::json;
using kvtest::kvplan;
using kvtest::Run;
using kvtest::slurp;

extern char** environ;

namespace {

// the bytes of a budget term (weights, lora_adapters, ...) in a plan's results; -1 when the plan has none
long long budget_term(const json& results, const std::string& term) {
  for (const auto& t : results["budget"])
    if (t["term"] == term) return t["bytes"].get<long long>();
  return -1;
}

// results of `kvplan plan llama-3.1-8b` on an H100 at 8,192 tokens with these arguments added (JSON output)
json llama8b_results(const std::vector<std::string>& args) {
  const Run r = kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--max-model-len", "8192", "--format", "json"}, args);
  INFO(r.err);
  REQUIRE(!r.out.empty());
  return json::parse(r.out)["results"];
}

json load(const std::string& rel) {
  std::ifstream in(std::string(KVPLAN_TEST_DATA) + "/" + rel);
  REQUIRE(in);
  return json::parse(in);
}

bool is_setting(const std::string& key) {
  // settings keys are lower case with - or _; variables in these commands are upper case or macros
  return key == "model" || key == "gpu" || key == "weight-format" || key == "gpu-memory-bytes" || key == "gpu-bandwidth" || key == "ctx-size";
}

// YAML with every string double-quoted (JSON strings are valid YAML scalars).
std::string deployment_yaml(const json& e, const json& extra) {
  std::ostringstream y;
  y << "deployments:\n  - name: " << json(e["id"]).dump() << "\n    engine: " << json(e["engine"]).dump() << "\n";
  y << "    command:\n";
  for (const auto& w : e["argv"]) y << "      - " << w.dump() << "\n";
  const json set = extra.value("set", json::object());
  std::string gpu = extra.value("gpu", "");
  if (set.contains("gpu")) gpu = set["gpu"];
  if (!gpu.empty()) y << "    gpu: " << json(gpu).dump() << "\n";
  if (set.contains("model")) y << "    model: " << set["model"].dump() << "\n";
  std::string settings, variables;
  for (const auto& [k, v] : set.items()) {
    if (k == "model" || k == "gpu") continue;
    (is_setting(k) ? settings : variables) += "      " + json(k).dump() + ": " + v.dump() + "\n";
  }
  if (!settings.empty()) y << "    settings:\n" << settings;
  if (!variables.empty()) y << "    variables:\n" << variables;
  return y.str();
}

std::vector<std::string> pasted_args(const json& e, const json& extra, bool with_values) {
  std::vector<std::string> a = {"plan", "--format", "json", "--engine", e["engine"]};
  const json set = extra.value("set", json::object());
  if (extra.contains("gpu") && !set.contains("gpu")) a.insert(a.end(), {"--gpu", extra["gpu"]});
  if (with_values)
    for (const auto& [k, v] : set.items()) a.insert(a.end(), {"--set", k + "=" + v.get<std::string>()});
  a.push_back("--");
  for (const auto& w : e["argv"]) a.push_back(w);
  return a;
}

json without_warnings(json r) {
  r.erase("warnings");
  return r;
}

}  // namespace

TEST_CASE("every real command line is evaluated in a deployment file and pasted after --, with the same inputs and results",
          "[front-doors]") {
  const json cmdlines = load("engine-cmdlines.json");
  const json extras = load("engine-cmdlines-settings.json");
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-fd-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (const auto& e : cmdlines) {
    const std::string id = e["id"];
    INFO(id);
    REQUIRE(extras.contains(id));
    const json extra = extras[id];
    const std::string file = (dir / (id + ".yaml")).string();
    {
      std::ofstream f(file);
      f << deployment_yaml(e, extra);
    }
    const Run checked = kvplan({"check", file, "--format", "json"});
    INFO("check stderr: " << checked.err);
    CHECK((checked.exit == 0 || checked.exit == 1));
    const Run pasted = kvplan(pasted_args(e, extra, true));
    INFO("plan stderr: " << pasted.err);
    CHECK((pasted.exit == 0 || pasted.exit == 1));
    if (checked.exit > 1 || pasted.exit > 1) continue;
    const json c = json::parse(checked.out), p = json::parse(pasted.out);
    const json& dep = c["results"]["deployments"][0];
    CHECK(dep["inputs"] == p["inputs"]);
    CHECK(without_warnings(dep["results"]) == without_warnings(p["results"]));
    // one contract: the sweep cell and fit's largest concurrency at the same traffic give plan's answer
    const bool fits = pasted.exit == 0;
    const std::string tokens = std::to_string(p["inputs"]["tokens_per_request"].get<long long>());
    const long long conc = p["inputs"]["concurrency"].get<long long>();
    auto variant = [&](const std::string& cmd, const std::string& format, bool with_conc) {
      std::vector<std::string> a = pasted_args(e, extra, true);
      a[0] = cmd;
      a[2] = format;
      const auto dash = std::find(a.begin(), a.end(), "--");
      std::vector<std::string> traffic = {"--context", tokens};
      if (with_conc) traffic.insert(traffic.end(), {"--concurrency", std::to_string(conc)});
      a.insert(dash, traffic.begin(), traffic.end());
      return kvplan(a);
    };
    const Run sw = variant("sweep", "csv", true);
    INFO("sweep stderr: " << sw.err);
    REQUIRE(sw.exit == 0);
    CHECK(sw.out.find(fits ? ",true," : ",false,") != std::string::npos);
    const Run ft = variant("fit", "json", false);
    INFO("fit stderr: " << ft.err);
    REQUIRE((ft.exit == 0 || ft.exit == 1));
    CHECK((json::parse(ft.out)["results"]["max_concurrency"]["max_concurrency"].get<long long>() >= conc) == fits);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a command whose memory settings hold unexpanded variables exits 2 naming them until they are given", "[front-doors]") {
  const json cmdlines = load("engine-cmdlines.json");
  // variables in flags that change memory, read from the commands by hand
  const std::map<std::string, std::vector<std::string>> vars = {
      {"vllm-prodstack-orchestrated-prefill-envsubst", {"$MODEL_ID", "$MAX_SEQ_LEN"}},
      {"trtllm-flexkv-dsv31-w4afp8-all-shell-vars", {"$MODEL_PATH", "$TP_SIZE", "$EP_SIZE", "$MAX_SEQ_LEN", "$MAX_NUM_TOKENS", "$BATCH_SIZE"}},
      {"llamacpp-llamaswap-macros-unexpanded-gpt-oss-120b", {"$default_ctx"}},
  };
  for (const auto& e : cmdlines) {
    const auto it = vars.find(e["id"]);
    if (it == vars.end()) continue;
    INFO(e["id"].get<std::string>());
    const Run r = kvplan(pasted_args(e, json::object(), false));
    CHECK(r.exit == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
    for (const auto& v : it->second) CHECK(r.err.find(v + " (--set ") != std::string::npos);
  }
}

TEST_CASE("sweep KV formats keep their order: fp8,auto and auto,fp8", "[front-doors]") {
  // llama-3.1-8b is bf16 (torch_dtype), so auto = bf16; 32 layers x 8 KV heads x 128 x (K+V) x 1 KiB tokens
  const long long bf16 = 1024LL * 32 * 8 * 128 * 2 * 2, fp8 = bf16 / 2;
  for (const std::string order : {"fp8,auto", "auto,fp8"}) {
    INFO(order);
    const Run r = kvplan({"sweep", "llama-3.1-8b", "--kv-dtype", order, "--context", "1k", "--concurrency", "1", "--format", "json"});
    REQUIRE(r.exit == 0);
    const json rows = json::parse(r.out)["results"]["rows"];
    REQUIRE(rows.size() == 2);
    const bool fp8_first = order == "fp8,auto";
    CHECK(rows[0]["kv_dtype"] == (fp8_first ? "fp8_e4m3" : "bf16"));
    CHECK(rows[1]["kv_dtype"] == (fp8_first ? "bf16" : "fp8_e4m3"));
    CHECK(rows[0]["kv_bytes"] == (fp8_first ? fp8 : bf16));
    CHECK(rows[1]["kv_bytes"] == (fp8_first ? bf16 : fp8));
  }
}

TEST_CASE("llama.cpp spellings on kvplan's command line: -ctk q8_0, -np, -c, -fa", "[front-doors]") {
  const Run r = kvplan({"plan", "llama-3.1-8b", "--engine", "llama.cpp", "-c", "8192", "-np", "2", "-ctk", "q8_0", "-ctv", "q8_0", "-fa",
                        "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json j = json::parse(r.out);
  CHECK(j["inputs"]["k_cache_type"] == "q8_0");
  CHECK(j["inputs"]["v_cache_type"] == "q8_0");
  CHECK(j["inputs"]["ctx_size"] == 8192);
  CHECK(j["inputs"]["parallel"] == 2);
  // q8_0: 34 B per 32 elements; 32 layers x 8 KV heads x 128 elements, K and V, 8192 cells (llama.cpp pads to 256)
  CHECK(j["results"]["engine"]["kv_bytes"] == 8192LL * 32 * 8 * (128 / 32 * 34) * 2);
}

TEST_CASE("vLLM calculate-kv-scales: a boolean that newer vLLM dropped, not an error", "[front-doors]") {
  // vLLM 0.11.0 accepts it (a BooleanOptionalAction); the newest table (0.26.0) does not have it
  const Run newest = kvplan({"plan", "llama-3.1-8b", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--calculate-kv-scales",
                             "--max-model-len", "8192"});
  CHECK(newest.exit == 0);
  CHECK(newest.err.find("--calculate-kv-scales: not a vLLM 0.26.0 flag") != std::string::npos);
  const Run v011 = kvplan({"plan", "llama-3.1-8b", "--engine", "vllm@0.11", "--format", "json", "--", "vllm", "serve",
                           "meta-llama/Llama-3.1-8B-Instruct", "--calculate-kv-scales", "--max-model-len", "8192"});
  INFO(v011.err);
  REQUIRE(v011.exit == 0);
  CHECK(v011.err.find("calculate-kv-scales") == std::string::npos);
  const json j = json::parse(v011.out);
  CHECK(j["inputs"]["engine_version"] == "0.11");  // the release named, as --engine vllm@0.11 without a command gives
  CHECK(j["inputs"]["max_model_len"] == 8192);  // the flag after it is still read
  const Run strict = kvplan({"plan", "llama-3.1-8b", "--strict", "--", "vllm", "serve", "m", "--calculate-kv-scales"});
  CHECK(strict.exit == 1);
}

TEST_CASE("vLLM --num-gpu-blocks-override sets the pool, from a kvplan flag or a pasted command", "[front-doors]") {
  // llama-3.1-8b: a block is 16 tokens x 32 layers x 8 KV heads x 128 x (K + V) x 2 B (bf16)
  const long long block_bytes = 16LL * 32 * 8 * 128 * 2 * 2;
  for (const auto& args : {std::vector<std::string>{"plan", "llama-3.1-8b", "--num-gpu-blocks-override", "1000", "--max-model-len", "8k", "--context", "8k", "--format", "json"},
                           std::vector<std::string>{"plan", "llama-3.1-8b", "--context", "8k", "--format", "json", "--", "vllm", "serve", "m",
                                                    "--num-gpu-blocks-override", "1000", "--max-model-len", "8192"}}) {
    const Run r = kvplan(args);
    INFO(r.err);
    REQUIRE(r.exit == 0);
    const json e = json::parse(r.out)["results"]["engine"];
    CHECK(e["num_gpu_blocks"] == 1000);
    CHECK(e["kv_cache_tokens"] == 1000 * 16);
    CHECK(e["kv_pool_bytes"] == 1000 * block_bytes);
  }
  // 8192 tokens are 512 blocks of 16: an override of exactly 512 passes vLLM's startup check, but V1's null block
  // leaves 511 for requests, so the 8192-token request does not fit (exit 1); 513 leaves 512
  auto notes = [](const std::string& blocks, int exit) {
    const Run r = kvplan({"plan", "llama-3.1-8b", "--engine", "vllm", "--num-gpu-blocks-override", blocks, "--max-model-len", "8192", "--format", "json"});
    CHECK(r.exit == exit);
    const json j = json::parse(r.out);
    CHECK(j["results"]["engine"]["startup_ok"] == true);
    return j["results"]["engine"]["notes"].dump();
  };
  CHECK_THAT(notes("512", 1), Catch::Contains("null block"));
  CHECK_THAT(notes("513", 0), !Catch::Contains("null block"));
  // a request of L tokens holds L - 1 (its last token is sampled, never computed): 8193 tokens need cdiv(8192, 16) =
  // 512 blocks, which 513 leave beside the null block (vLLM's start-up check asks cdiv(8193, 16) = 513: it starts)
  auto exit_at = [](const std::string& blocks, const std::string& len) {
    return kvplan({"plan", "llama-3.1-8b", "--engine", "vllm", "--num-gpu-blocks-override", blocks, "--max-model-len", len}).exit;
  };
  CHECK(exit_at("513", "8193") == 0);
  CHECK(exit_at("513", "8194") == 1);  // cdiv(8193, 16) = 513 > 512
  // simulate: the groups of a hybrid share the pool. Gemma 3 27B: 52 sliding layers (window 1024) in groups of 10 (6)
  // and 10 full (1) = 7 groups drawing on the N physical blocks; the tokens are the KV cache size plan prints
  const Run pl = kvplan({"plan", "gemma-3-27b-it", "--gpu", "h100", "--engine", "vllm", "--format", "json"});
  const Run sm = kvplan({"simulate", "gemma-3-27b-it", "--gpu", "h100", "--engine", "vllm", "--requests", "3", "--format", "json"});
  REQUIRE(sm.exit == 0);
  const long long n = json::parse(pl.out)["results"]["engine"]["num_gpu_blocks"];
  const json pool = json::parse(sm.out)["results"]["pool"];
  CHECK(pool["blocks"] == n);
  CHECK(pool["tokens"] == json::parse(pl.out)["results"]["engine"]["kv_cache_tokens"]);
  CHECK(pool["cache_groups"].dump() ==
        R"([{"block_tokens":16,"groups":1,"kind":"full"},{"block_tokens":16,"groups":6,"kind":"sliding","window":1024}])");
}

TEST_CASE("every manifest under tests/data/manifests is evaluated (exit 0 or 1) once its values are given", "[front-doors]") {
  // models the manifests name by Hub id or path that kvplan cannot resolve offline get a built-in
  // stand-in with --set; GPUs named by a cloud instance type get the GPU that instance carries
  const std::map<std::string, std::vector<std::string>> extra = {
      {"compose-llama-server.yaml", {"--set", "model=llama-3.2-3b"}},
      {"gke-vllm-deployment.yaml", {}},
      {"kserve-vllm.yaml", {"--set", "gpu=l40s", "--set", "model=llama-3.1-8b"}},  // AWS g6e instances carry NVIDIA L40S; /mnt/models is KServe's mount
      {"kubeai-models.yaml", {"--set", "model=llama-3.1-8b"}},
      {"mig-pod.yaml", {"--set", "model=qwen3-4b"}},
      {"multi-doc.yaml", {"--set", "model=mistral-7b-v0.1"}},
      {"production-stack-values.yaml", {"--set", "model=mistral-7b-v0.1"}},
      {"sglang-lws.yaml", {}},
      {"karpenter-pod.yaml", {}},
      {"no-gpu-label-pod.yaml", {}},
  };
  for (const auto& entry : std::filesystem::directory_iterator(std::string(KVPLAN_TEST_DATA) + "/manifests")) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    REQUIRE(extra.count(name));
    std::vector<std::string> args = {"check", entry.path().string()};
    args.insert(args.end(), extra.at(name).begin(), extra.at(name).end());
    const Run r = kvplan(args);
    INFO(r.err);
    CHECK((r.exit == 0 || r.exit == 1));
  }
}

TEST_CASE("RoPE scaling extends the usable context: --hf-overrides, vLLM 0.11's --rope-scaling, SGLang's override args", "[front-doors]") {
  // Qwen3-8B: max_position_embeddings 40960; yarn from original_max_position_embeddings 32768 x factor 4
  // = 131072 (vLLM _get_and_verify_max_len)
  const std::string yarn = R"({"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768})";
  const long long scaled = 32768LL * 4;
  const Run plain = kvplan({"plan", "--format", "json", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "131072"});
  CHECK(plain.exit == 2);  // 131072 > 40960 without scaling
  const Run hf = kvplan({"plan", "--format", "json", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "131072", "--hf-overrides",
                         "{\"rope_scaling\":" + yarn + "}"});
  INFO(hf.err);
  REQUIRE(hf.exit == 0);
  CHECK(json::parse(hf.out)["inputs"]["max_model_len"] == scaled);
  const Run old = kvplan({"plan", "--engine", "vllm@0.11", "--format", "json", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len",
                          "131072", "--rope-scaling", yarn});
  INFO(old.err);
  REQUIRE(old.exit == 0);
  CHECK(json::parse(old.out)["inputs"]["max_model_len"] == scaled);
  // SGLang's get_context_length leaves a yarn factor with original_max_position_embeddings out: it derives 40960, so
  // 131072 needs SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (default off from 0.5.1), as published launch scripts set
  const std::vector<std::string> launch{"python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--context-length", "131072",
                                        "--json-model-override-args", "{\"rope_scaling\":" + yarn + "}"};
  std::vector<std::string> args{"plan", "--engine", "sglang", "--format", "json", "--"};
  args.insert(args.end(), launch.begin(), launch.end());
  CHECK(kvplan(args).exit == 2);
  args.insert(args.begin() + 6, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1");
  const Run sg = kvplan(args);
  INFO(sg.err);
  CHECK(sg.exit == 0);
}

TEST_CASE("first-use friction: --profiles after the subcommand, case-insensitive names, a custom GPU, vLLM max-model-len auto",
          "[front-doors]") {
  const Run after = kvplan({"models", "--format", "csv", "--profiles", std::string(KVPLAN_TEST_DATA) + "/profiles-extra"});
  CHECK(after.exit == 0);
  CHECK(after.out.find("tiny-llama") != std::string::npos);
  const Run upper = kvplan({"plan", "Llama-3.1-8B", "--gpu", "NVIDIA H100 80GB HBM3", "--context", "8k", "--format", "json"});
  INFO(upper.err);
  REQUIRE(upper.exit == 0);
  CHECK(json::parse(upper.out)["inputs"]["gpu"] == "h100-sxm");
  const Run custom = kvplan({"plan", "llama-3.1-8b", "--gpu", "custom", "--gpu-memory-bytes", "24GiB", "--gpu-bandwidth", "1e12",
                             "--max-model-len", "8k", "--context", "8k", "--format", "json"});
  INFO(custom.err);
  REQUIRE(custom.exit == 0);
  const json c = json::parse(custom.out);
  CHECK(c["inputs"]["gpu_memory_bytes"] == 24LL << 30);
  CHECK(c["results"]["budget"][0]["bytes"] == 24LL << 30);
  // auto: the longest max_model_len whose blocks fit the pool (vLLM's auto-fit counts every block); one block more
  // does not start. A request that long needs every block, the null block too: it does not fit (exit 1, a note)
  const Run autolen = kvplan({"plan", "qwen3-8b", "--gpu", "l4", "--max-model-len", "auto", "--format", "json"});
  INFO(autolen.err);
  REQUIRE(autolen.exit == 1);
  const json a = json::parse(autolen.out);
  const long long len = a["inputs"]["max_model_len"];
  CHECK(len < 40960);
  CHECK(a["results"]["engine"]["startup_ok"] == true);
  CHECK(a["results"]["engine"]["num_gpu_blocks"] == len / 16);
  CHECK_THAT(a["results"]["engine"]["notes"].dump(), Catch::Contains("null block"));
  const Run longer = kvplan({"plan", "qwen3-8b", "--gpu", "l4", "--max-model-len", std::to_string(len + 16), "--format", "json"});
  CHECK(json::parse(longer.out)["results"]["engine"]["startup_ok"] == false);
}

TEST_CASE("a streamed sweep is one valid JSON document with every row", "[front-doors]") {
  const Run r = kvplan({"sweep", "llama-3.1-8b", "--context", "1..300", "--concurrency", "1..300", "--format", "json"});
  REQUIRE(r.exit == 0);
  const json j = json::parse(r.out);
  CHECK(j["results"]["rows"].size() == 300u * 300u);
  CHECK(j["inputs"]["cells"] == 300 * 300);
  const Run l = kvplan({"sweep", "llama-3.1-8b", "--context", "1..30", "--concurrency", "1..30", "--format", "jsonl"});
  REQUIRE(l.exit == 0);
  CHECK(std::count(l.out.begin(), l.out.end(), '\n') == 900);
  const Run capped = kvplan({"sweep", "llama-3.1-8b", "--context", "1..300", "--concurrency", "1..300", "--max-cells", "1000"});
  CHECK(capped.exit == 2);
  CHECK(capped.out.empty());
}

TEST_CASE("an option file with bytes that are not UTF-8 is read, not a crash (fuzzing finding)", "[front-doors]") {
  // tests/data/fuzz-regressions/options-invalid-utf8.bin: the fuzzer's first byte chose the
  // TensorRT-LLM option-YAML form; the rest is the file
  const std::string bytes = slurp(std::string(KVPLAN_TEST_DATA) + "/fuzz-regressions/options-invalid-utf8.bin");
  REQUIRE(bytes.size() > 1);
  const auto path = std::filesystem::temp_directory_path() / ("kvplan-fd-opts-" + std::to_string(getpid()) + ".yaml");
  {
    std::ofstream f(path, std::ios::binary);
    f << bytes.substr(1);
  }
  const Run r = kvplan({"plan", "llama-3.1-8b", "--context", "8k", "--", "trtllm-serve", "serve", "m", "--extra_llm_api_options", path.string()});
  std::filesystem::remove(path);
  INFO(r.err);
  CHECK((r.exit == 0 || r.exit == 1 || r.exit == 2));
  if (r.exit == 2) CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("SGLang starts with a pool smaller than the context and caps requests at the pool", "[front-doors]") {
  // SGLang scheduler: max_req_len = min(context_len - 1, max_total_num_tokens - 1); it refuses to start
  // only when the pool holds no token. Qwen3-8B on an L4: the pool is far below the 40,960-token context.
  const Run r = kvplan({"plan", "qwen3-8b", "--engine", "sglang", "--gpu", "l4", "--context", "8k", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json j = json::parse(r.out)["results"];
  const long long pool = j["engine"]["max_total_num_tokens"];
  CHECK(pool > 8192);
  CHECK(pool < 40960);
  CHECK(j["engine"]["startup_ok"] == true);
  CHECK(j["fit"]["max_tokens_at_concurrency"] == pool - 1);
}

TEST_CASE("vLLM's MLA block size follows the MLA backend of the GPU", "[front-doors]") {
  // vllm/platforms/cuda.py (0.10-0.11): FlashMLA on SM 9.0 forces 64, CUTLASS MLA on SM 10.x 128, else 16
  const std::vector<std::pair<std::string, int>> cases = {{"h100", 64}, {"b200", 128}, {"a100-sxm-80gb", 16}};
  for (const auto& [gpu, block] : cases) {
    INFO(gpu);
    const Run r = kvplan({"plan", "deepseek-v3", "--gpu", gpu, "--tensor-parallel-size", "8", "--format", "json"});
    REQUIRE(!r.out.empty());
    CHECK(json::parse(r.out)["results"]["engine"]["block_size"] == block);
  }
  const Run given = kvplan({"plan", "deepseek-v3", "--gpu", "h100", "--tensor-parallel-size", "8", "--block-size", "16", "--format", "json"});
  REQUIRE(!given.out.empty());
  CHECK(json::parse(given.out)["results"]["engine"]["block_size"] == 16);  // an explicit --block-size wins
  const Run dense = kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--format", "json"});
  CHECK(json::parse(dense.out)["results"]["engine"]["block_size"] == 16);  // not MLA: 16
  // by version: CUTLASS MLA became the Blackwell default in 0.11 (0.10 kept 16 unless VLLM_ATTENTION_BACKEND said so);
  // sparse MLA (DeepSeek-V3.2's index_topk) takes 64 on every GPU from 0.11
  auto block = [](const std::vector<std::string>& extra) {
    const Run r = kvplan({"plan", "deepseek-v3", "--tensor-parallel-size", "8", "--format", "json"}, extra);
    INFO(r.err);
    REQUIRE(!r.out.empty());
    return json::parse(r.out)["results"]["engine"]["block_size"].get<int>();
  };
  CHECK(block({"--gpu", "b200", "--engine", "vllm@0.10.0"}) == 16);
  CHECK(block({"--gpu", "b200", "--engine", "vllm@0.11.0"}) == 128);
  const std::string dsa = R"({"index_topk": 2048, "index_head_dim": 128, "index_n_heads": 64})";
  CHECK(block({"--gpu", "a100-sxm-80gb", "--hf-overrides", dsa}) == 64);
  CHECK(block({"--gpu", "b200", "--hf-overrides", dsa}) == 64);
  CHECK(block({"--gpu", "a100-sxm-80gb", "--engine", "vllm@0.10.0", "--hf-overrides", dsa}) == 16);
  // a sparse-attention config without the indexer's shape is an error naming the field
  const Run bad = kvplan({"plan", "deepseek-v3", "--tensor-parallel-size", "8", "--gpu", "h100", "--hf-overrides", "{\"index_topk\": 2048}"});
  CHECK(bad.exit == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("index_head_dim: missing") != std::string::npos);
}

TEST_CASE("float32 checkpoints run in the dtype each engine resolves", "[front-doors]") {
  // gemma-2-9b ships torch_dtype float32. vLLM >= 0.10 on SM >= 8.0 (L40S, 8.9): bf16; gemma2 never fp16, so
  // below SM 8.0 (T4, 7.5) it stays fp32 (vllm/config/model.py _resolve_auto_dtype); SGLang: gemma families bf16.
  const Run kv = kvplan({"kv", "gemma-2-9b", "--context", "1", "--format", "json"});
  REQUIRE(kv.exit == 0);
  const long long params = json::parse(kv.out)["results"]["params_total"];
  auto plan = [](const std::vector<std::string>& args) {
    const Run r = kvplan(args);
    INFO(r.err);
    REQUIRE(!r.out.empty());
    return json::parse(r.out);
  };
  auto weights = [](const json& j) { return budget_term(j["results"], "weights"); };
  const json v = plan({"plan", "gemma-2-9b", "--gpu", "l40s", "--context", "8k", "--format", "json"});
  CHECK(v["inputs"]["model_dtype"] == "bf16");
  CHECK(v["inputs"]["k_cache_type"] == "bf16");
  CHECK(weights(v) == params * 2);
  const json s = plan({"plan", "gemma-2-9b", "--engine", "sglang", "--gpu", "l40s", "--context", "8k", "--format", "json"});
  CHECK(s["inputs"]["model_dtype"] == "bf16");
  const json t4 = plan({"plan", "gemma-2-9b", "--gpu", "t4", "--max-model-len", "1k", "--context", "1k", "--format", "json"});
  CHECK(t4["inputs"]["model_dtype"] == "f32");
  // a given float16: vLLM 0.10 on refuses it for gemma2 (_check_valid_dtype, _FLOAT16_NOT_SUPPORTED_MODELS); 0.9 runs it
  const Run refused = kvplan({"plan", "gemma-2-9b", "--gpu", "l40s", "--dtype", "float16", "--context", "8k"});
  CHECK(refused.exit == 2);
  CHECK(refused.err == "kvplan: error: --dtype: vLLM refuses float16 for model_type 'gemma2' (numerical instability); use bfloat16 or float32\n");
  const json given = plan({"plan", "gemma-2-9b", "--engine", "vllm@0.9.2", "--gpu", "l40s", "--dtype", "float16", "--context", "8k", "--format", "json"});
  CHECK(given["inputs"]["model_dtype"] == "f16");
  // llama.cpp caches f16 unless -ctk / -ctv say otherwise
  const json l = plan({"plan", "gemma-2-9b", "--engine", "llama.cpp", "--gpu", "l40s", "-c", "8192", "--format", "json"});
  CHECK(l["inputs"]["k_cache_type"] == "f16");
  // and runs the GGUF convert_hf_to_gguf.py writes by default: F16 for a float32 checkpoint, 2 B a parameter
  CHECK(l["inputs"]["model_dtype"] == "f16");
  CHECK(weights(l) == params * 2);
  // vLLM <= 0.9 (_get_and_verify_dtype): float32 -> fp16 "following common practice", gemma2 -> bf16
  const json old_mamba = plan({"plan", "mamba-2.8b", "--engine", "vllm@0.8.3", "--gpu", "l40s", "--max-model-len", "2k", "--context", "1k", "--format", "json"});
  CHECK(old_mamba["inputs"]["model_dtype"] == "f16");
  const json new_mamba = plan({"plan", "mamba-2.8b", "--engine", "vllm@0.10.0", "--gpu", "l40s", "--max-model-len", "2k", "--context", "1k", "--format", "json"});
  CHECK(new_mamba["inputs"]["model_dtype"] == "bf16");
  const json old_gemma = plan({"plan", "gemma-2-9b", "--engine", "vllm@0.8.3", "--gpu", "l40s", "--context", "8k", "--format", "json"});
  CHECK(old_gemma["inputs"]["model_dtype"] == "bf16");
}

TEST_CASE("TensorRT-LLM starts with a pool below max_seq_len and shortens the limit to what the blocks hold", "[front-doors]") {
  // "Adjusted max_seq_len to N": llama-3.1-8b (131,072-token context) on an L4 holds far fewer tokens
  const Run r = kvplan({"plan", "llama-3.1-8b", "--engine", "trtllm", "--gpu", "l4", "--context", "8k", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json j = json::parse(r.out)["results"];
  const long long held = j["engine"]["max_tokens"];
  CHECK(held < 131072);
  CHECK(held % 32 == 0);  // whole blocks of tokens_per_block 32
  CHECK(j["engine"]["startup_ok"] == true);
  CHECK(j["fit"]["max_tokens_at_concurrency"] == held);
}

TEST_CASE("a manifest's image tag names the engine version whose flags are read", "[front-doors]") {
  // sglang-lws.yaml runs lmsysorg/sglang:v0.4.9-cu126: no 0.4.9 table, so its flags are read with the newest older
  // one, 0.4.6, and the deployment is planned at 0.4.9's rules (the release it runs, not only its label)
  const Run r = kvplan({"check", std::string(KVPLAN_TEST_DATA) + "/manifests/sglang-lws.yaml", "--format", "json"});
  INFO(r.err);
  REQUIRE((r.exit == 0 || r.exit == 1));
  CHECK(json::parse(r.out)["results"]["deployments"][0]["inputs"]["engine_version"] == "0.4.9");
  CHECK(r.err.find("sglang 0.4.9 has no flag table of its own; read with the 0.4.6 table") != std::string::npos);
}

TEST_CASE("SGLang derives the context length by its own RoPE rule", "[front-doors]") {
  // yarn x4 from 4096: vLLM (_get_and_verify_max_len) scales original_max_position_embeddings 4096 x 4 = 16384;
  // SGLang (hf_transformers_utils.get_context_length) keeps 4096 when rope_scaling names
  // original_max_position_embeddings, and scales a plain linear factor (4096 x 4 = 16384)
  auto max_len = [](const std::string& engine, const std::string& rope) {
    const Run r = kvplan({"plan", "llama-2-7b", "--engine", engine, "--gpu", "h100", "--context", "4k", "--hf-overrides",
                          "{\"rope_scaling\": " + rope + "}", "--format", "json"});
    INFO(r.err);
    REQUIRE(!r.out.empty());
    return json::parse(r.out)["inputs"]["max_model_len"].get<long long>();
  };
  const std::string yarn = R"({"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":4096})";
  CHECK(max_len("vllm", yarn) == 16384);
  CHECK(max_len("sglang", yarn) == 4096);
  CHECK(max_len("sglang", R"({"type":"linear","factor":4.0})") == 16384);
  CHECK(max_len("sglang", R"({"rope_type":"llama3","factor":8.0,"original_max_position_embeddings":8192})") == 4096);
  // a --context-length above the derived one (4096): SGLang raises unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is
  // set, whose default was True from 0.4.4 (#4195) to 0.5.0 and False before and from 0.5.1 (#9388); vLLM refuses
  // without VLLM_ALLOW_LONG_MAX_MODEL_LEN
  const auto sglang_at = [](const std::string& engine, const std::vector<std::string>& more = {}) {
    std::vector<std::string> args{"plan", "llama-2-7b", "--engine", engine, "--gpu", "h100", "--context-length", "16384", "--context", "4k", "--format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    return kvplan(args);
  };
  const Run sg = sglang_at("sglang@0.4.9");
  INFO(sg.err);
  REQUIRE(sg.exit == 0);
  CHECK(json::parse(sg.out)["inputs"]["max_model_len"] == 16384);
  CHECK(sglang_at("sglang@0.4.3").exit == 2);
  CHECK(sglang_at("sglang@0.5.1").exit == 2);
  const Run newest = sglang_at("sglang");
  CHECK(newest.exit == 2);
  CHECK(newest.err == "kvplan: error: --context-length: 16384 exceeds the context length 4096 SGLang derives from the model config: it refuses "
                      "to start; lower it, or pass --allow-long-context to override as SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 does\n");
  CHECK(sglang_at("sglang", {"--allow-long-context"}).exit == 0);
  // 0.4.4-0.5.0 only default it on: turned off, they refuse too
  CHECK(sglang_at("sglang@0.4.9", {"--set", "allow_long_context=false"}).exit == 2);
  // the variable on a pasted command line does the same
  CHECK(kvplan({"plan", "--gpu", "h100", "--context", "4k", "--", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", "python", "-m", "sglang.launch_server",
                "--model-path", "llama-2-7b", "--context-length", "16384"}).exit == 0);
  CHECK(kvplan({"plan", "llama-2-7b", "--gpu", "h100", "--max-model-len", "16384", "--context", "4k"}).exit == 2);
  // each engine reads its own variable: vLLM's does not unlock SGLang, nor SGLang's vLLM
  CHECK(kvplan({"plan", "--gpu", "h100", "--context", "4k", "--", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", "python", "-m", "sglang.launch_server",
                "--model-path", "llama-2-7b", "--context-length", "16384"}).exit == 2);
  CHECK(kvplan({"plan", "--gpu", "h100", "--context", "4k", "--", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", "vllm", "serve", "llama-2-7b",
                "--max-model-len", "16384"}).exit == 2);
  CHECK(kvplan({"plan", "--gpu", "h100", "--context", "4k", "--", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", "vllm", "serve", "llama-2-7b",
                "--max-model-len", "16384"}).exit == 0);
}

TEST_CASE("offload flags in pasted commands: vLLM --cpu-offload-gb and llama-server -nkvo", "[front-doors][offload]") {
  // -nkvo shares llama.cpp's --kv-offload flag line: the spelling written decides (it is the negation)
  auto engine_of = [](const std::vector<std::string>& cmd) {
    std::vector<std::string> args = {"plan", "--format", "json", "--"};
    args.insert(args.end(), cmd.begin(), cmd.end());
    const Run r = kvplan(args);
    INFO(r.err);
    REQUIRE(!r.out.empty());
    return json::parse(r.out)["results"];
  };
  const json on = engine_of({"llama-server", "-m", "llama-3.1-8b", "-c", "4096"});
  CHECK(on["engine"]["gpu_kv_bytes"] == 4096LL * 32 * 8 * 128 * 2 * 2);
  const json off = engine_of({"llama-server", "-m", "llama-3.1-8b", "-c", "4096", "-nkvo"});
  CHECK(off["engine"]["gpu_kv_bytes"] == 0);
  CHECK(engine_of({"llama-server", "-m", "llama-3.1-8b", "-c", "4096", "--no-kv-offload"})["engine"]["gpu_kv_bytes"] == 0);
  // vLLM --cpu-offload-gb 4: 4 GiB of llama-3.1-8b's 8,030,261,248 x 2 B stay in host memory
  const json v = engine_of({"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192", "--cpu-offload-gb", "4"});
  CHECK(v["engine"]["host_weight_bytes"] == 4LL << 30);
  for (const auto& t : v["budget"])
    if (t["term"] == "weights") CHECK(t["bytes"] == 8030261248LL * 2 - (4LL << 30));
}

TEST_CASE("host KV tiers: vLLM --kv-offloading-size and SGLang HiCache in results.tiers", "[front-doors][offload]") {
  // vLLM: 10 GiB summed over TP 2 = 5 GiB per rank; a rank holds 4 KV heads: 32 x 4 x 128 x 2 x 2 B = 64 KiB per token,
  // so 5 GiB hold 81,920 tokens
  const json v = llama8b_results({"--engine", "vllm", "--tp", "2", "--kv-offloading-size", "10"});
  REQUIRE(v["tiers"].size() == 2);
  CHECK(v["tiers"][1]["tier"] == "host");
  CHECK(v["tiers"][1]["kv_bytes"] == 5LL << 30);
  CHECK(v["tiers"][1]["kv_tokens"] == 81920);
  // SGLang HiCache: 2 x the device pool's tokens by default, at 128 KiB per token (32 x 8 x 128 x 2 x 2 B)
  const json s = llama8b_results({"--engine", "sglang", "--enable-hierarchical-cache"});
  const long long pool = s["engine"]["max_total_num_tokens"];
  CHECK(s["tiers"][1]["kv_tokens"] == 2 * pool);
  CHECK(s["tiers"][1]["kv_bytes"] == 2 * pool * 131072);
  // --hicache-size in GB (10^9 bytes): 10 GB // 131072 B = 76,293 tokens
  CHECK(llama8b_results({"--engine", "sglang", "--enable-hierarchical-cache", "--hicache-size", "10"})["tiers"][1]["kv_tokens"] == 76293);
  // no offload: the GPU tier only
  CHECK(llama8b_results({"--engine", "vllm"})["tiers"].size() == 1);
}

TEST_CASE("vLLM KV connector tiers: OffloadingConnector, LMCache host and disk, in results.tiers", "[front-doors][offload]") {
  constexpr long long per_token_tp2 = 32LL * 4 * 128 * 2 * 2;  // layers x KV heads per rank (8 / TP 2) x head_dim x (K+V) x bf16
  // cpu_bytes_to_use 32 GiB summed over TP 2 (vllm v1/kv_offload cpu spec divides by the world size): 16 GiB per rank
  const json a = llama8b_results({"--engine", "vllm", "--tp", "2", "--kv-transfer-config",
                        R"({"kv_connector":"OffloadingConnector","kv_connector_extra_config":{"cpu_bytes_to_use":34359738368}})"});
  REQUIRE(a["tiers"].size() == 2);
  CHECK(a["tiers"][1]["kv_bytes"] == (32LL << 30) / 2);
  CHECK(a["tiers"][1]["kv_tokens"] == (32LL << 30) / 131072);  // = 16 GiB / 64 KiB per rank = 262,144
  CHECK(a["tiers"][1]["kv_tokens"] == ((32LL << 30) / 2) / per_token_tp2);
  // vLLM 0.11-0.13: num_cpu_blocks 1000 per rank of block_size 32 tokens = 32,000 tokens x 64 KiB
  const json b = llama8b_results({"--engine", "vllm@0.11", "--tp", "2", "--kv-transfer-config",
                        R"({"kv_connector":"OffloadingConnector","kv_connector_extra_config":{"num_cpu_blocks":1000,"block_size":32}})"});
  CHECK(b["tiers"][1]["kv_tokens"] == 1000 * 32);
  CHECK(b["tiers"][1]["kv_bytes"] == 1000LL * 32 * per_token_tp2);
  // LMCache, per rank: 10 GiB host and 100 GiB disk, whole 256-token chunks; 10 GiB / 64 KiB = 163,840 = 640 chunks
  const json c = llama8b_results({"--engine", "vllm", "--tp", "2", "--kv-transfer-config", R"({"kv_connector":"LMCacheConnectorV1"})",
                        "--lmcache-max-local-cpu-size", "10", "--lmcache-local-disk", "file:///tmp/lmc", "--lmcache-max-local-disk-size", "100"});
  REQUIRE(c["tiers"].size() == 3);
  CHECK(c["tiers"][1]["kv_bytes"] == 10LL << 30);
  CHECK(c["tiers"][1]["kv_tokens"] == (10LL << 30) / per_token_tp2 / 256 * 256);
  CHECK(c["tiers"][2]["tier"] == "disk");
  CHECK(c["tiers"][2]["kv_bytes"] == 100LL << 30);
  CHECK(c["tiers"][2]["kv_tokens"] == (100LL << 30) / per_token_tp2 / 256 * 256);
  // LMCache chunks of 1000 tokens at TP 1 (128 KiB per token): 1 GiB holds 8,192 tokens, 8 whole chunks = 8,000
  const json d = llama8b_results({"--engine", "vllm", "--kv-transfer-config", R"({"kv_connector":"LMCacheConnectorV1"})",
                        "--lmcache-max-local-cpu-size", "1", "--lmcache-chunk-size", "1000"});
  CHECK(d["tiers"][1]["kv_tokens"] == 8000);
  // LMCache's default host size, 5 GiB per rank, and no disk tier without LMCACHE_LOCAL_DISK
  const json e = llama8b_results({"--engine", "vllm", "--kv-transfer-config", R"({"kv_connector":"LMCacheConnectorV1"})"});
  REQUIRE(e["tiers"].size() == 2);
  CHECK(e["tiers"][1]["kv_bytes"] == 5LL << 30);
  // what a hit saves: the prefill time per token of one prompt from the performance model
  const json f = llama8b_results({"--engine", "vllm", "--kv-offloading-size", "10", "--prompt-tokens", "4096"});
  const double ttft = f["performance"]["ttft_s"];
  CHECK(f["tiers"][1]["recompute_saved_s_per_token"].get<double>() == Approx(ttft / 4096));
}

TEST_CASE("OffloadingConnector's spelling is the planned vLLM version's: cpu_bytes_to_use from 0.14, num_cpu_blocks before", "[front-doors][offload]") {
  // vllm #24498 (January 2026) replaced num_cpu_blocks by cpu_bytes_to_use in CPUOffloadingSpec; each version reads
  // its key with extra_config.get and raises when it is missing, ignoring the other
  auto run = [](const std::string& engine, const std::string& extra) {
    return kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--max-model-len", "8192", "--format", "json", "--engine", engine,
                   "--kv-transfer-config", R"({"kv_connector":"OffloadingConnector","kv_connector_extra_config":)" + extra + "}"});
  };
  // the newest vLLM given only num_cpu_blocks, vLLM 0.11 given only cpu_bytes_to_use: the engine would not start
  const Run a = run("vllm", R"({"num_cpu_blocks":1000})");
  CHECK(a.exit == 2);
  CHECK(a.out.empty());
  CHECK(a.err.find("cpu_bytes_to_use: missing") != std::string::npos);
  const Run b = run("vllm@0.11", R"({"cpu_bytes_to_use":34359738368})");
  CHECK(b.exit == 2);
  CHECK(b.err.find("num_cpu_blocks: missing") != std::string::npos);
  // both given: each version sizes by its own key and warns that the other is ignored
  const Run c = run("vllm@0.14", R"({"cpu_bytes_to_use":34359738368,"num_cpu_blocks":1000})");
  REQUIRE(c.exit == 0);
  CHECK(c.err.find("num_cpu_blocks: ignored by vLLM 0.14") != std::string::npos);
  CHECK(json::parse(c.out)["results"]["tiers"][1]["kv_bytes"] == 32LL << 30);  // 32 GiB over TP 1
  const Run d = run("vllm@0.11", R"({"cpu_bytes_to_use":34359738368,"num_cpu_blocks":1000})");
  REQUIRE(d.exit == 0);
  CHECK(d.err.find("cpu_bytes_to_use: ignored by vLLM 0.11") != std::string::npos);
  CHECK(json::parse(d.out)["results"]["tiers"][1]["kv_tokens"] == 1000 * 16);  // 1000 blocks x the GPU block size 16
}

TEST_CASE("LMCACHE_CONFIG_FILE sizes LMCache's tiers, LMCACHE_ variables override it", "[front-doors][offload]") {
  // LMCache lmcache/v1/config_base.py load_config_with_overrides: from_file, then update_config_from_env
  const std::string yaml = kvtest::write_temp("lmcache-file", "lmcache.yaml",
                                              "chunk_size: 1000\nlocal_cpu: true\nmax_local_cpu_size: 4\n"
                                              "local_disk: \"file:///tmp/lmc/\"\nmax_local_disk_size: 50\n");
  const std::string connector = R"({"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"})";
  constexpr long long per_token = 32LL * 8 * 128 * 2 * 2;  // llama-3.1-8b at TP 1: layers x KV heads x head_dim x (K+V) x bf16
  // the file alone: 4 GiB host = 32,768 tokens = 32 whole chunks of 1000 = 32,000; 50 GiB disk = 409,600 -> 409,000
  const Run r = kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--max-model-len", "8192", "--format", "json",
                        "--kv-transfer-config", connector, "--lmcache-config-file", yaml});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json t = json::parse(r.out)["results"]["tiers"];
  REQUIRE(t.size() == 3);
  CHECK(t[1]["kv_bytes"] == 4LL << 30);
  CHECK(t[1]["kv_tokens"] == (4LL << 30) / per_token / 1000 * 1000);
  CHECK(t[1]["kv_tokens"] == 32000);
  CHECK(t[1]["terms"][0]["name"] == "kv_offload");
  CHECK(t[1]["terms"][0]["basis"].get<std::string>().find("max_local_cpu_size from " + yaml + ":3:") != std::string::npos);
  CHECK(t[2]["kv_bytes"] == 50LL << 30);
  CHECK(t[2]["kv_tokens"] == (50LL << 30) / per_token / 1000 * 1000);
  // a pasted command's environment: LMCACHE_MAX_LOCAL_CPU_SIZE=2 overrides the file's 4; chunk_size still the file's:
  // 2 GiB = 16,384 tokens = 16 chunks of 1000
  const Run e = kvplan({"plan", "--gpu", "h100", "--format", "json", "--", "env", "LMCACHE_CONFIG_FILE=" + yaml, "LMCACHE_MAX_LOCAL_CPU_SIZE=2",
                        "vllm", "serve", "meta-llama/Llama-3.1-8B", "--max-model-len", "8192", "--kv-transfer-config", connector});
  INFO(e.err);
  REQUIRE(e.exit == 0);
  const json u = json::parse(e.out)["results"]["tiers"];
  CHECK(u[1]["kv_bytes"] == 2LL << 30);
  CHECK(u[1]["kv_tokens"] == 16000);
  CHECK(u[1]["terms"][0]["basis"].get<std::string>().find("LMCACHE_MAX_LOCAL_CPU_SIZE") != std::string::npos);
  // local_cpu false: LMCache still allocates the pinned buffer (its allocator) but keeps no chunks there
  const std::string staging = kvtest::write_temp("lmcache-file", "staging.yaml", "local_cpu: false\nmax_local_cpu_size: 1\n");
  const Run s = kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--max-model-len", "8192", "--format", "json",
                        "--kv-transfer-config", connector, "--lmcache-config-file", staging});
  REQUIRE(s.exit == 0);
  const json v = json::parse(s.out)["results"]["tiers"];
  CHECK(v[1]["kv_bytes"] == 1LL << 30);
  CHECK(v[1]["kv_tokens"] == 0);
}

TEST_CASE("vLLM --max-cpu-loras: whole adapters in the CPU LRU cache per rank", "[front-doors][lora]") {
  // llama-3.1-8b, rank 16: per layer and unit of rank, in + out of q (4096 + 4096), k and v (4096 + 1024 each),
  // o (4096 + 4096), gate and up (4096 + 14336 each), down (14336 + 4096) = 81,920 elements; x 32 layers x 16 x bf16
  constexpr long long per_adapter = 81920LL * 32 * 16 * 2;  // 83,886,080 B
  auto host = [](const std::vector<std::string>& extra) {
    const Run r = kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--max-model-len", "8192", "--format", "json",
                          "--enable-lora", "--max-loras", "2", "--max-lora-rank", "16"},
                         extra);
    INFO(r.err);
    REQUIRE(r.exit == 0);
    const json t = json::parse(r.out)["results"]["tiers"];
    REQUIRE(t.size() == 2);
    return t[1];
  };
  // TP 2: each worker loads whole adapters on the CPU (sharding happens when a slot is filled on the GPU)
  const json h = host({"--max-cpu-loras", "8", "--tp", "2"});
  CHECK(h["weights_bytes"] == 8 * per_adapter);
  CHECK(h["weights_bytes"] == 671088640);
  CHECK(h["terms"][0]["name"] == "lora_cpu_cache");
  CHECK(h["terms"][0]["memory"] == "pinned");
  // default: max_cpu_loras = max_loras (vllm/config/lora.py LoRAConfig._validate_lora_config)
  CHECK(host({})["weights_bytes"] == 2 * per_adapter);
  // below --max-loras: vLLM refuses ("max_cpu_loras must be >= max_loras")
  const Run bad = kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--enable-lora", "--max-loras", "2", "--max-cpu-loras", "1"});
  CHECK(bad.exit == 2);
}

TEST_CASE("vLLM KV connector tiers from a pasted command and its LMCACHE_ environment", "[front-doors][offload]") {
  const Run r = kvplan({"plan", "--gpu", "h100", "--format", "json", "--", "env", "LMCACHE_MAX_LOCAL_CPU_SIZE=2",
                        "LMCACHE_CHUNK_SIZE=512", "vllm", "serve", "meta-llama/Llama-3.1-8B", "--max-model-len", "8192",
                        "--kv-transfer-config", R"({"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"})"});
  INFO(r.err);
  REQUIRE(!r.out.empty());
  const json t = json::parse(r.out)["results"]["tiers"];
  REQUIRE(t.size() == 2);
  CHECK(t[1]["kv_bytes"] == 2LL << 30);
  CHECK(t[1]["kv_tokens"] == (2LL << 30) / 131072 / 512 * 512);  // 16,384 tokens = 32 chunks of 512
  // an unknown connector warns and counts no tier
  const Run u = kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm", "--max-model-len", "8192", "--format", "json",
                        "--kv-transfer-config", R"({"kv_connector":"NixlConnector","kv_role":"kv_both"})"});
  CHECK(u.exit == 0);
  CHECK(u.err.find("kv_connector 'NixlConnector' is not modelled") != std::string::npos);
  CHECK(json::parse(u.out)["results"]["tiers"].size() == 1);
}

TEST_CASE("LoRA flags in a pasted command size the adapter buffers per engine", "[front_doors][lora]") {
  // vLLM: --max-loras 4 --max-lora-rank 64 (Llama-3.1-8B: 81,920 elements per layer per slot per rank; test_plan.cpp)
  const auto v = kvtest::kvplan({"plan", "--gpu", "h100", "--format", "json", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B",
                                 "--enable-lora", "--max-loras", "4", "--max-lora-rank", "64"});
  REQUIRE((v.exit == 0 || v.exit == 1));
  const auto vj = nlohmann::json::parse(v.out);
  long long got = -1;
  for (const auto& t : vj["results"]["budget"])
    if (t["term"] == "lora_adapters") got = t["bytes"].get<long long>();
  CHECK(got == 81920LL * 32 * 64 * 4 * 2);
  CHECK(v.err.find("not modelled") == std::string::npos);
  // --max-loras alone leaves LoRA off (vLLM builds a LoRAConfig only with --enable-lora)
  const auto off = kvtest::kvplan({"plan", "--gpu", "h100", "--format", "json", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B",
                                   "--max-loras", "4"});
  REQUIRE((off.exit == 0 || off.exit == 1));
  const auto offj = nlohmann::json::parse(off.out);  // kept alive: the loop walks into it
  for (const auto& t : offj["results"]["budget"]) CHECK(t["term"] != "lora_adapters");
  // SGLang: --enable-lora with the default --max-loras-per-batch 8 and --max-lora-rank 16
  const auto s = kvtest::kvplan({"plan", "--gpu", "h100", "--format", "json", "--", "python", "-m", "sglang.launch_server",
                                 "--model-path", "meta-llama/Llama-3.1-8B", "--enable-lora", "--max-lora-rank", "16"});
  REQUIRE((s.exit == 0 || s.exit == 1));
  const auto sj = nlohmann::json::parse(s.out);
  got = -1;
  for (const auto& t : sj["results"]["budget"])
    if (t["term"] == "lora_adapters") got = t["bytes"].get<long long>();
  CHECK(got == 81920LL * 32 * 16 * 8 * 2);
}

TEST_CASE("speculative decoding from pasted commands and kvplan flags: vLLM JSON and dotted forms, SGLang flags, TensorRT-LLM options",
          "[front-doors][speculative]") {
  auto results = [](const std::vector<std::string>& args) {
    const Run r = kvplan(args);
    INFO(r.err);
    REQUIRE((r.exit == 0 || r.exit == 1));
    CHECK(r.err.find("does not model") == std::string::npos);  // no "not modelled" warning
    return json::parse(r.out)["results"];
  };
  // an EAGLE head sized from Llama-3.1-8B: one decoder layer (q, o 4096 x 4096; k, v 4096 x 1024; gate, up, down
  // 4096 x 14336; 2 norms) + fc 2 x 4096 -> 4096, bf16
  const long long eagle_w = (4096LL * 4096 * 2 + 4096LL * 1024 * 2 + 3LL * 4096 * 14336 + 2 * 4096) * 2 + 2LL * 4096 * 4096 * 2;
  const std::vector<std::string> vllm = {"plan", "--gpu", "h100", "--format", "json", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const json v = results(with(vllm, {"--speculative-config", "{\"method\": \"eagle\", \"num_speculative_tokens\": 3}"}));
  CHECK(budget_term(v, "draft_weights") == eagle_w);
  CHECK(budget_term(v, "draft_kv") > 0);
  const json dotted = results(with(vllm, {"--speculative-config.method", "eagle", "--speculative-config.num_speculative_tokens", "3"}));
  CHECK(dotted["budget"] == v["budget"]);
  const json shortcuts = results(with(vllm, {"--spec-method", "eagle", "--spec-tokens", "3"}));  // vLLM 0.26 shortcuts
  CHECK(shortcuts["budget"] == v["budget"]);
  const json flag = results({"plan", "llama-3.1-8b", "--gpu", "h100", "--format", "json", "--speculative-config",
                             "{\"method\": \"eagle\", \"num_speculative_tokens\": 3}"});
  CHECK(budget_term(flag, "draft_weights") == eagle_w);
  // n-gram: no draft model on the GPU
  const json ng = results(with(vllm, {"--speculative-config", "{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 4}"}));
  CHECK(budget_term(ng, "draft_weights") == -1);

  // SGLang (0.5.10, the newest read): the pool as without speculation (#15748 removed the 0.4.6-0.5.6 headroom of
  // 32 requests x (3 steps x top-1 + 4 draft tokens) + 100 = 324 tokens)
  const std::vector<std::string> sglang = {"plan", "--gpu", "h100", "--format", "json", "--", "python", "-m", "sglang.launch_server",
                                           "--model-path", "meta-llama/Llama-3.1-8B", "--mem-fraction-static", "0.85",
                                           "--max-running-requests", "32"};
  const json s0 = results(sglang);
  const json s1 = results(with(sglang, {"--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B",
                                        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"}));
  CHECK(s1["engine"]["max_total_num_tokens"].get<long long>() == s0["engine"]["max_total_num_tokens"].get<long long>());
  CHECK(budget_term(s1, "draft_weights") == eagle_w);
  // the draft worker's pool: as many tokens x one layer's 8 x 128 x 2 x 2 B
  CHECK(budget_term(s1, "draft_kv") == s1["engine"]["max_total_num_tokens"].get<long long>() * 4096);

  // TensorRT-LLM option YAML: DeepSeek-V3's MTP layer on 8 x H200; bytes per token include the MTP layer's latent,
  // (512 + 64) x 2 B on every rank
  const auto path = std::filesystem::temp_directory_path() / ("kvplan-fd-spec-" + std::to_string(getpid()) + ".yaml");
  {
    std::ofstream f(path);
    f << "speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 1\n";
  }
  const json t = results({"plan", "--gpu", "h200", "--format", "json", "--", "trtllm-serve", "serve", "deepseek-ai/DeepSeek-V3", "--tp_size", "8",
                          "--extra_llm_api_options", path.string()});
  std::filesystem::remove(path);
  CHECK(t["engine"]["bytes_per_token"].get<long long>() == (512 + 64) * 2 * 62);
  CHECK(budget_term(t, "draft_kv") == t["engine"]["max_tokens"].get<long long>() * (512 + 64) * 2);
  CHECK(budget_term(t, "draft_weights") > 0);
}

TEST_CASE("SGLang --enable-dp-attention: the groups share the TP GPUs and MLA's cell is unchanged", "[front-doors][dp-attention]") {
  auto run = [](const std::vector<std::string>& more) {
    const Run r = kvplan({"plan", "--gpu", "h200", "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path",
                          "deepseek-ai/DeepSeek-V3", "--tp-size", "8", "--mem-fraction-static", "0.85"},
                         more);
    INFO(r.err);
    REQUIRE((r.exit == 0 || r.exit == 1));
    CHECK(r.err.find("does not model") == std::string::npos);
    return json::parse(r.out);
  };
  const json off = run({}), on = run({"--dp-size", "8", "--enable-dp-attention"});
  CHECK(on["inputs"]["gpus"] == 8);  // 8 attention groups on the 8 TP GPUs, not 64 GPUs
  CHECK(on["inputs"]["attention_data_parallel_size"] == 8);
  // the MLA latent, (512 + 64) x 2 B x 61 layers, is one per rank with or without DP attention
  CHECK(off["results"]["engine"]["cell_size_bytes"] == (512 + 64) * 2 * 61);
  CHECK(on["results"]["engine"]["cell_size_bytes"] == (512 + 64) * 2 * 61);
  // every rank holds all 128 heads' attention projections: more weights than at TP 8
  CHECK(budget_term(on["results"], "weights") > budget_term(off["results"], "weights"));
}

TEST_CASE("a ModelOpt checkpoint's FP8 KV cache is the engines' auto KV dtype from the versions that read it", "[front-doors][kv-dtype]") {
  // An NVIDIA ModelOpt export: config.json without quantization_config and hf_quant_config.json beside it, as
  // nvidia/Llama-3.1-8B-Instruct-FP8 ships ({"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}).
  // vLLM's block of 16 tokens holds, per layer, 16 x 8 KV heads x 128 x (K + V) x the element size: 65,536 B in
  // bf16, 32,768 B in fp8. vLLM follows the checkpoint from v0.14.0 (#30785), SGLang from v0.5.3 (#10336),
  // TensorRT-LLM always.
  namespace fs = std::filesystem;
  const fs::path dir = kvtest::temp_dir("modelopt-kv");
  fs::copy_file(std::string(KVPLAN_TEST_DATA) + "/configs/llama-3.1-8b.json", dir / "config.json", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "hf_quant_config.json")
      << R"({"producer": {"name": "modelopt", "version": "0.15.1"},
             "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}})";
  auto plan = [&](const std::vector<std::string>& extra) {
    const Run r = kvplan({"plan", dir.string(), "--gpu", "h100", "--max-model-len", "8192", "--format", "json"}, extra);
    REQUIRE(r.exit == 0);
    return json::parse(r.out);
  };
  const json v14 = plan({"--engine", "vllm@0.14.0"});
  CHECK(v14["inputs"]["k_cache_type"] == "fp8_e4m3");
  CHECK(v14["results"]["engine"]["page_bytes_per_layer"] == 16 * 8 * 128 * 2 * 1);
  const json v13 = plan({"--engine", "vllm@0.13.0"});
  CHECK(v13["inputs"]["k_cache_type"] == "bf16");
  CHECK(v13["results"]["engine"]["page_bytes_per_layer"] == 16 * 8 * 128 * 2 * 2);
  // an explicit --kv-cache-dtype wins over the checkpoint
  CHECK(plan({"--engine", "vllm", "--kv-cache-dtype", "bfloat16"})["inputs"]["k_cache_type"] == "bf16");
  CHECK(plan({"--engine", "sglang@0.5.2"})["inputs"]["k_cache_type"] == "bf16");
  CHECK(plan({"--engine", "sglang@0.5.3"})["inputs"]["k_cache_type"] == "fp8_e4m3");
  CHECK(plan({"--engine", "trtllm"})["inputs"]["k_cache_type"] == "fp8_e4m3");
  // the weights are read as FP8 from the same file: 1 B per linear weight, as --weight-format fp8 gives
  const json flag = json::parse(kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--max-model-len", "8192", "--format", "json",
                                        "--engine", "vllm@0.13.0", "--weight-format", "fp8"}).out);
  auto weights = [](const json& j) { return budget_term(j["results"], "weights"); };
  CHECK(weights(v13) > 0);
  CHECK(weights(v13) == weights(flag));
  // the table says why
  const Run table = kvplan({"plan", dir.string(), "--gpu", "h100", "--max-model-len", "8192", "--engine", "vllm"});
  CHECK(table.out.find("note: KV cache fp8_e4m3: the checkpoint declares a ModelOpt FP8") != std::string::npos);
  // kvplan kv has no engine: the model dtype, and a note naming the engines that would take FP8
  const Run kv = kvplan({"kv", dir.string()});
  REQUIRE(kv.exit == 0);
  CHECK(kv.out.find("the checkpoint declares a ModelOpt FP8 KV cache, which TensorRT-LLM, vLLM >= 0.14.0 and SGLang >= 0.5.3 use") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("DeepSeek-V3.2: the indexer key beside the latent, by engine", "[front-doors][dsa]") {
  // deepseek-v3.2 (61 layers, kv_lora_rank 512 + rope 64, index_head_dim 128, index_n_heads 64, index_topk 2048).
  // The indexer key: 128 fp8 B + one fp32 scale per 128 = 132 B per token per layer, whatever the KV dtype.
  auto plan = [](const std::vector<std::string>& extra) {
    const Run r = kvplan({"plan", "deepseek-v3.2", "--tensor-parallel-size", "8", "--max-model-len", "32768", "--format", "json"}, extra);
    INFO(r.err);
    REQUIRE(r.exit == 0);
    return json::parse(r.out);
  };
  // kvplan kv: 61 x (576 x 2 B + 132 B)
  const Run kv = kvplan({"kv", "deepseek-v3.2", "--context", "1000", "--format", "json"});
  REQUIRE(kv.exit == 0);
  CHECK(json::parse(kv.out)["results"]["kv_bytes_per_token"] == 61 * (576 * 2 + 132));
  // vLLM: block 64 (FlashMLA-sparse); bf16 page 64 x (1152 + 132); fp8 is fp8_ds_mla, 64 x (656 + 132)
  const json vb = plan({"--gpu", "h200", "--engine", "vllm"});
  CHECK(vb["results"]["engine"]["block_size"] == 64);
  CHECK(vb["results"]["engine"]["page_bytes_per_layer"] == 64 * (1152 + 132));
  const json vf = plan({"--gpu", "h200", "--engine", "vllm", "--kv-cache-dtype", "fp8"});
  CHECK(vf["results"]["engine"]["page_bytes_per_layer"] == 64 * (512 + 512 / 128 * 4 + 64 * 2 + 132));
  // vLLM's own spelling of that record is accepted
  CHECK(plan({"--gpu", "h200", "--engine", "vllm", "--kv-cache-dtype", "fp8_ds_mla"})["results"]["engine"]["page_bytes_per_layer"] ==
        vf["results"]["engine"]["page_bytes_per_layer"]);
  // SGLang: cell = 61 x ((512 + 64) x elem + 132); auto is bf16 on Hopper and fp8_e4m3 on Blackwell (SM 10)
  auto sglang = [&](const std::string& gpu) {
    const Run r = kvplan({"plan", "deepseek-v3.2", "--tensor-parallel-size", "8", "--max-model-len", "32768", "--gpu", gpu, "--engine", "sglang"});
    REQUIRE(r.exit == 0);
    return r.out;
  };
  const std::string hopper = sglang("h200"), blackwell = sglang("b200");
  CHECK(hopper.find("KV bf16/bf16") != std::string::npos);
  CHECK(hopper.find("78,324") != std::string::npos);  // 61 x (1152 + 132)
  CHECK(blackwell.find("KV fp8_e4m3/fp8_e4m3") != std::string::npos);
  CHECK(blackwell.find("43,188") != std::string::npos);  // 61 x (576 + 132)
  // before #11309 (v0.5.3.post1) SGLang's cell left the indexer out: 61 x 1152 on Hopper
  const Run before = kvplan({"plan", "deepseek-v3.2", "--tensor-parallel-size", "8", "--max-model-len", "32768", "--gpu", "h200", "--engine", "sglang@0.5.3"});
  REQUIRE(before.exit == 0);
  CHECK(before.out.find("70,272") != std::string::npos);
  // 0.5.3 to 0.5.5: DP attention forced on with dp_size = tp_size (#13646 ended it in 0.5.6); 0.5.3 also forced
  // mem_fraction_static 0.8
  CHECK(before.out.find("8 attention groups of TP 1") != std::string::npos);
  const Run mid = kvplan({"plan", "deepseek-v3.2", "--tensor-parallel-size", "8", "--max-model-len", "32768", "--gpu", "h200", "--engine", "sglang@0.5.5"});
  const Run now = kvplan({"plan", "deepseek-v3.2", "--tensor-parallel-size", "8", "--max-model-len", "32768", "--gpu", "h200", "--engine", "sglang@0.5.6"});
  CHECK(mid.out.find("8 attention groups of TP 1") != std::string::npos);
  CHECK(now.out.find("attention groups") == std::string::npos);
  const Run forced = kvplan({"plan", "deepseek-v3.2", "--tensor-parallel-size", "8", "--max-model-len", "32768", "--gpu", "h200",
                             "--engine", "sglang@0.5.3", "--mem-fraction-static", "0.9", "--format", "json"});
  REQUIRE(forced.exit == 0);
  CHECK(json::parse(forced.out)["inputs"]["memory_fraction"] == 0.8);
  // TensorRT-LLM DSACacheManager: tokens_per_block 64 (asserted), and the indexer key priced in the KV dtype:
  // 61 x (576 + 132) elements x 2 B in bf16, x 1 B in fp8
  auto trt = [&](const std::vector<std::string>& extra) {
    return kvplan({"plan", "deepseek-v3.2", "--tensor-parallel-size", "8", "--max-model-len", "32768", "--gpu", "h200", "--engine", "trtllm"}, extra);
  };
  const Run tb = trt({}), tf = trt({"--kv-cache-dtype", "fp8"}), tbad = trt({"--tokens-per-block", "32"});
  REQUIRE(tb.exit == 0);
  CHECK(tb.out.find("86,376") != std::string::npos);
  CHECK(tb.out.find("x 64") != std::string::npos);
  CHECK(tf.out.find("43,188") != std::string::npos);
  CHECK(tbad.exit == 2);
  CHECK(tbad.out.empty());
  CHECK(tbad.err.find("tokens_per_block: 32 is not 64") != std::string::npos);
  // the indexer's weights: wq_b 1536 x 64 x 128, wk 7168 x 128, weights_proj 7168 x 64, k_norm 2 x 128 per layer
  const Run v3 = kvplan({"kv", "deepseek-v3", "--context", "1", "--format", "json"});
  const Run v32 = kvplan({"kv", "deepseek-v3.2", "--context", "1", "--format", "json"});
  REQUIRE(v3.exit == 0);
  REQUIRE(v32.exit == 0);
  CHECK(json::parse(v32.out)["results"]["params_total"].get<long long>() - json::parse(v3.out)["results"]["params_total"].get<long long>() ==
        61LL * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128));
  // decode reads every token's indexer key and the index_topk latents it picks: at 100,000 + 100 / 2 tokens of
  // context, 61 x (132 x 100,050 + 1152 x 2048) B per step
  const Run pr = kvplan({"plan", "deepseek-v3.2", "--tensor-parallel-size", "8", "--gpu", "h200", "--engine", "vllm", "--concurrency", "1",
                         "--prompt-tokens", "100000", "--output-tokens", "100", "--format", "json"});
  REQUIRE(pr.exit == 0);
  const json pf = json::parse(pr.out);
  CHECK(pf["results"]["performance"]["kv_bytes_read_per_step"].get<double>() == Approx(61.0 * (132.0 * 100050 + 1152.0 * 2048)));
}

TEST_CASE("GLM-4.5-Air (glm4_moe): GQA KV and DeepSeek-style MoE counted by hand", "[front-doors][glm]") {
  // 46 layers, 96 heads / 8 KV heads of 128, q/k/v biases (attention_bias), first layer dense (10,944), 45 MoE layers
  // of 128 routed + 1 shared expert of 1,408 with a biased router, untied vocabulary 151,552 x 4,096
  const Run r = kvplan({"kv", "glm-4.5-air", "--context", "1", "--format", "json"});
  REQUIRE(r.exit == 0);
  const json j = json::parse(r.out)["results"];
  CHECK(j["kv_bytes_per_token"] == 46 * 8 * 128 * 2 * 2);
  const long long emb = 151552LL * 4096 * 2;
  const long long att = 4096LL * 96 * 128 + 2LL * 4096 * 8 * 128 + 96LL * 128 * 4096 + 96 * 128 + 2 * 8 * 128;
  const long long norms = 46LL * 2 * 4096 + 4096;
  const long long dense = 3LL * 4096 * 10944;
  const long long moe = 45LL * (128LL * 3 * 4096 * 1408 + 3LL * 4096 * 1408 + 128LL * 4096 + 128);
  CHECK(j["params_total"].get<long long>() == emb + 46 * att + norms + dense + moe);  // 106.85 B ("106B total")
  // the MTP layer is counted only under MTP speculation, and vLLM can use it
  const Run mtp = kvplan({"plan", "glm-4.5-air", "--gpu", "h200", "--tensor-parallel-size", "2", "--max-model-len", "32768",
                          "--speculative-config", R"({"method": "mtp", "num_speculative_tokens": 1})"});
  CHECK(mtp.exit == 0);
}

TEST_CASE("DeepSeek-V3.2 edge paths: an MTP draft, old SGLang, llama.cpp, vLLM spellings, other ModelOpt algorithms", "[front-doors][dsa]") {
  auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), "plan");
    return kvplan(args);
  };
  // the MTP draft layer takes the same layout as the target's: one vLLM group of 61 + 1 layers of 64 x (656 + 132)
  const Run mtp = run({"deepseek-v3.2", "--tensor-parallel-size", "8", "--gpu", "h200", "--engine", "vllm", "--kv-cache-dtype", "fp8",
                       "--max-model-len", "32768", "--speculative-config", R"({"method": "mtp", "num_speculative_tokens": 1})", "--format", "json"});
  REQUIRE(mtp.exit == 0);
  const json me = json::parse(mtp.out)["results"]["engine"];
  CHECK(me["kv_cache_groups"] == 1);
  CHECK(me["layers_per_group"] == 62);
  CHECK(me["page_bytes_per_layer"] == 64 * (656 + 132));
  // SGLang 0.5.3 leaves the indexer out of its cell, not out of the model: the weights are 0.5.3.post1's
  auto weights = [&](const std::string& engine) {
    const Run r = run({"deepseek-v3.2", "--tensor-parallel-size", "8", "--gpu", "h200", "--engine", engine, "--max-model-len", "32768", "--format", "json"});
    REQUIRE(r.exit == 0);
    return budget_term(json::parse(r.out)["results"], "weights");
  };
  CHECK(weights("sglang@0.5.3") == weights("sglang@0.5.3.post1"));
  // the SGLang DP-attention rule follows each point's TP (here 4), and JSON carries the model's notes
  const Run tp4 = run({"deepseek-v3.2", "--tensor-parallel-size", "4", "--gpu", "b200", "--engine", "sglang@0.5.5", "--max-model-len", "32768", "--format", "json"});
  REQUIRE(!tp4.out.empty());  // exit 1: 4 B200s do not hold the weights; the plan is printed all the same
  bool dp_note = false;
  const json tp4_json = json::parse(tp4.out);
  for (const auto& n : tp4_json["results"]["engine"]["notes"]) dp_note = dp_note || n.get<std::string>().find("4 attention groups of one GPU") != std::string::npos;
  CHECK(dp_note);
  // llama.cpp caches no indexer key: a note says so
  const Run lc = run({"deepseek-v3.2", "--gpu", "h200", "--gpu-count", "8", "--engine", "llama.cpp", "--ctx-size", "8192"});
  CHECK(lc.out.find("llama.cpp keeps no indexer key cache") != std::string::npos);
  // vLLM's own spellings: not for other engines, and fp8_ds_mla only for sparse MLA
  const Run inc = run({"deepseek-v3.2", "--tensor-parallel-size", "8", "--gpu", "h200", "--engine", "sglang", "--kv-cache-dtype", "fp8_inc"});
  CHECK(inc.exit == 2);
  CHECK(inc.err.find("'fp8_inc' is a vLLM spelling") != std::string::npos);
  const Run dsm = run({"llama-3.1-8b", "--gpu", "h100", "--kv-cache-dtype", "fp8_ds_mla"});
  CHECK(dsm.exit == 2);
  CHECK(dsm.err.find("has no index_topk") != std::string::npos);
}

TEST_CASE("hf_quant_config.json with an algorithm kvplan does not read keeps the weights and carries the KV cache", "[front-doors][kv-dtype]") {
  namespace fs = std::filesystem;
  const fs::path dir = kvtest::temp_dir("modelopt-other");
  fs::copy_file(std::string(KVPLAN_TEST_DATA) + "/configs/llama-3.1-8b.json", dir / "config.json", fs::copy_options::overwrite_existing);
  auto plan = [&](const std::string& quant) {
    std::ofstream(dir / "hf_quant_config.json") << quant;
    return kvplan({"plan", dir.string(), "--gpu", "h100", "--max-model-len", "8192", "--format", "json"});
  };
  const Run base = kvplan({"plan", "llama-3.1-8b", "--gpu", "h100", "--max-model-len", "8192", "--format", "json"});
  auto weights = [](const Run& r) { return budget_term(json::parse(r.out)["results"], "weights"); };
  // W4A8_AWQ: one warning naming the file, weights in the model dtype, the FP8 KV cache carried
  const Run awq = plan(R"({"quantization": {"quant_algo": "W4A8_AWQ", "kv_cache_quant_algo": "FP8"}})");
  REQUIRE(awq.exit == 0);
  CHECK(awq.err.find("hf_quant_config.json: quant_algo W4A8_AWQ is not read") != std::string::npos);
  CHECK(json::parse(awq.out)["inputs"]["k_cache_type"] == "fp8_e4m3");
  CHECK(weights(awq) == weights(base));
  // a KV-only export (quant_algo null): bf16 weights, fp8 KV, no warning
  const Run kvonly = plan(R"({"quantization": {"quant_algo": null, "kv_cache_quant_algo": "FP8"}})");
  REQUIRE(kvonly.exit == 0);
  CHECK(kvonly.err.empty());
  CHECK(json::parse(kvonly.out)["inputs"]["k_cache_type"] == "fp8_e4m3");
  CHECK(weights(kvonly) == weights(base));
  // a value of the wrong type: one line naming hf_quant_config.json and the field, exit 2, no output
  const Run bad = plan(R"({"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": 8}})");
  CHECK(bad.exit == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("hf_quant_config.json: /quantization/kv_cache_quant_algo: expected a string") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("each deployment subcommand takes the table's flags, after global options too", "[front-doors]") {
  // main registers them on the named subcommand alone (cli::deploy_options_only_for)
  for (const std::string sub : {"plan", "fit", "sweep", "report", "simulate", "probe"}) {
    INFO(sub);
    const Run h = kvplan({sub, "--help"});
    CHECK(h.exit == 0);
    CHECK(h.out.find("--max-model-len") != std::string::npos);
    CHECK(h.out.find("--gpu-memory-utilization") != std::string::npos);
  }
  const Run v = kvplan({"--verbose", "plan", "llama-3.1-8b", "--gpu", "h100", "--max-model-len", "8192", "--format", "json"});
  CHECK(v.exit == 0);
  CHECK(json::parse(v.out)["inputs"]["max_model_len"] == 8192);
  // the top-level help still lists every subcommand
  const Run top = kvplan({"--help"});
  for (const std::string sub : {"plan", "sweep", "fit", "check", "report", "simulate", "probe", "calibrate", "log", "kv", "models", "gpus"})
    CHECK(top.out.find("\n  " + sub + " ") != std::string::npos);
  // a mistyped subcommand registers no table flags and CLI11 reports it: one line, exit 2
  const Run typo = kvplan({"plna", "llama-3.1-8b", "--max-model-len", "8192"});
  CHECK(typo.exit == 2);
  CHECK(typo.out.empty());
  CHECK(typo.err.find("see kvplan --help") != std::string::npos);
}

TEST_CASE("a pasted command is planned at the release --engine NAME@VER or its image names, not only labelled with it", "[front-doors]") {
  // vLLM 0.8-0.9 rules: gpu_memory_utilization 0.9 (0.92 from 0.21); SGLang 0.4.6's table: mem_fraction_static 0.88
  auto inputs = [](const std::vector<std::string>& args) {
    std::vector<std::string> a = {"plan", "--format", "json"};
    a.insert(a.end(), args.begin(), args.end());
    const Run r = kvplan(a);
    INFO(r.err);
    REQUIRE(r.exit == 0);
    return json::parse(r.out)["inputs"];
  };
  const json at = inputs({"--engine", "vllm@0.9.0", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"});
  CHECK(at["engine_version"] == "0.9.0");
  CHECK(at["memory_fraction"] == 0.9);
  const json image = inputs({"--", "docker", "run", "--gpus", "all", "vllm/vllm-openai:v0.10.0", "--model", "meta-llama/Llama-3.1-8B-Instruct"});
  CHECK(image["engine_version"] == "0.10.0");
  CHECK(image["memory_fraction"] == 0.9);
  const json sglang = inputs({"--", "docker", "run", "lmsysorg/sglang:v0.4.6.post1-cu124", "python3", "-m", "sglang.launch_server",
                              "--model-path", "meta-llama/Llama-3.1-8B-Instruct"});
  CHECK(sglang["memory_fraction"] == 0.88);
  // without a release named, the newest rules
  CHECK(inputs({"--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"})["memory_fraction"] == 0.92);
}

TEST_CASE("llama-server -hf ORG/REPO-GGUF:QUANT is planned as the profile at that quant", "[front-doors]") {
  // the tag names the GGUF's quant and the -GGUF repository names the model: the same weights as the built-in
  // profile with --weight-format Q4_K_M, not the profile's bf16 (2 B a parameter)
  auto weights = [](const std::vector<std::string>& args) {
    const Run r = kvplan(args);
    INFO(r.err);
    REQUIRE(r.exit == 0);
    return budget_term(json::parse(r.out)["results"], "weights");
  };
  const long long tagged = weights({"plan", "--gpu", "rtx-4090", "--format", "json", "--", "llama-server", "-hf",
                                    "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M", "-c", "8192"});
  const long long given = weights({"plan", "llama-3.1-8b", "--engine", "llama.cpp", "--gpu", "rtx-4090", "-c", "8192",
                                   "--weight-format", "Q4_K_M", "--format", "json"});
  const long long plain = weights({"plan", "llama-3.1-8b", "--engine", "llama.cpp", "--gpu", "rtx-4090", "-c", "8192", "--format", "json"});
  CHECK(tagged == given);
  CHECK(tagged < plain / 3);  // Q4_K_M is about 4.9 bits a weight against bf16's 16
  // a repository kvplan has no profile for: the fix names the GGUF download, not a config.json
  const Run unknown = kvplan({"plan", "--gpu", "rtx-4090", "--", "llama-server", "-hf", "someone/Unknown-Model-GGUF:Q4_K_M"});
  CHECK(unknown.exit == 2);
  CHECK(unknown.err.find("--include '*Q4_K_M*.gguf'") != std::string::npos);
}

TEST_CASE("kvplan's --chunked-prefill-size -1 turns SGLang's chunking off, as the engine's own flag does", "[front_doors]") {
  // Scheduler: chunked_prefill_size <= 0 -> None; the activation reserve then counts max_prefill_tokens (16384)
  const std::vector<std::string> base = {"plan", "llama-3.1-8b", "--gpu", "h100", "--engine", "sglang", "--format", "json"};
  auto plan = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const Run r = kvplan(args);
    REQUIRE(r.exit == 0);
    return json::parse(r.out)["results"];
  };
  const json minus = plan({"--chunked-prefill-size", "-1"});
  const json off = plan({"--no-enable-chunked-prefill"});
  const json pasted = plan({"--", "python", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B", "--chunked-prefill-size", "-1"});
  CHECK(minus["budget"] == off["budget"]);
  CHECK(minus["engine"]["max_total_num_tokens"] == pasted["engine"]["max_total_num_tokens"]);
  CHECK(minus["engine"]["max_total_num_tokens"] != plan({})["engine"]["max_total_num_tokens"]);
}

TEST_CASE("a deployment file with a key given twice exits 2 naming it, YAML and JSON alike", "[front-doors]") {
  const auto dir = std::filesystem::temp_directory_path() / ("kvplan-dup-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
  };
  // a second requirement value would loosen the gate unseen; a second model would plan another model
  const std::string y = write("dup.yaml", "deployments:\n  - name: a\n    model: llama-3.1-8b\n    gpu: h100\n    model: llama-3.1-70b\n");
  const Run ry = kvplan({"check", y});
  CHECK(ry.exit == 2);
  CHECK(ry.out.empty());
  CHECK(ry.err == "kvplan: error: " + y + ":5:5: key 'model' appears twice in one mapping (first at " + y + ":3:12); keep one of them\n");
  const std::string j = write("dup.json", R"({"deployments": [{"name": "a", "model": "llama-3.1-8b", "gpu": "h100",
    "requirements": {"max_p99_ttft_ms": 50, "max_p99_ttft_ms": 5000}}]})");
  const Run rj = kvplan({"check", j});
  CHECK(rj.exit == 2);
  CHECK(rj.err == "kvplan: error: " + j + ": key \"max_p99_ttft_ms\" appears twice in one object (the last would silently win); keep one of them\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("no engine version and latest are the same plan and simulation for every engine, reported as latest", "[front-doors]") {
  // every version gate takes its newest form for both (a llama.cpp@latest run once took each performance gate's oldest
  // branch: twice the TPOT); the JSON says latest, which --engine-version latest reproduces
  for (const std::string engine : {"vllm", "sglang", "trtllm", "llama.cpp"}) {
    for (const std::string cmd : {"plan", "simulate"}) {
      std::vector<std::string> base = {cmd, "llama-3.1-8b", "--gpu", "h100-sxm", "--format", "json"};
      if (cmd == "simulate") base.insert(base.end(), {"--requests", "20", "--seed", "3"});
      std::vector<std::string> plain = base, latest = base;
      plain.insert(plain.end(), {"--engine", engine});
      latest.insert(latest.end(), {"--engine", engine, "--engine-version", "latest"});
      const Run a = kvplan(plain), b = kvplan(latest);
      INFO(engine << " " << cmd << ": " << a.err << b.err);
      REQUIRE(a.exit == 0);
      REQUIRE(b.exit == 0);
      const json ja = json::parse(a.out), jb = json::parse(b.out);
      CHECK(ja["inputs"]["engine_version"] == "latest");
      CHECK(jb["inputs"]["engine_version"] == "latest");
      CHECK(ja["results"] == jb["results"]);
    }
  }
}

TEST_CASE("check gives each requirement's value and limit as numbers beside the text", "[front-doors][check]") {
  // pass.yaml: llama-3-8b on an H100, 16 x 8192 tokens, min_concurrency 16, min_headroom 0.1. A token of llama-3-8b
  // holds 32 layers x 8 KV heads x 128 x (K + V) x 2 B = 131072 B; 16 requests of 8192 tokens (512 whole blocks each)
  // hold 16 GiB; vLLM V1 keeps one block (16 x 131072 B = 2 MiB) as its null block, so the headroom is
  // (pool - 2 MiB - 16 GiB) / pool and the concurrency floor((pool - 2 MiB) / 1 GiB)
  const std::string file = std::string(KVPLAN_TEST_DATA) + "/deploy/pass.yaml";
  const Run pl = kvplan({"plan", "llama-3-8b", "--gpu", "h100", "--context", "8192", "--format", "json"});
  REQUIRE(pl.exit == 0);
  const double pool = json::parse(pl.out)["results"]["engine"]["kv_pool_bytes"].get<double>();
  const double request = 8192.0 * 131072.0, null_block = 16.0 * 131072.0;
  const Run r = kvplan({"check", file, "--format", "json"});
  REQUIRE(r.exit == 0);
  const json reqs = json::parse(r.out)["results"]["deployments"][0]["requirements"];
  std::map<std::string, json> by_key;
  for (const auto& q : reqs) by_key[q["key"].get<std::string>()] = q;
  CHECK(by_key.at("starts")["value"].is_null());
  CHECK(by_key.at("traffic")["unit"].is_null());
  CHECK(by_key.at("min_concurrency")["value"] == std::floor((pool - null_block) / request));
  CHECK(by_key.at("min_concurrency")["limit"] == 16);
  CHECK(by_key.at("min_concurrency")["unit"] == "requests");
  CHECK(by_key.at("min_headroom")["value"].get<double>() == Approx((pool - null_block - 16 * request) / pool));
  CHECK(by_key.at("min_headroom")["limit"] == 0.1);
  CHECK(by_key.at("min_headroom")["unit"] == "fraction");
  // CSV: the same four as plain columns after the text ones
  const Run csv = kvplan({"check", file, "--format", "csv"});
  CHECK_THAT(csv.out, Catch::StartsWith("deployment,requirement,result,actual,required,detail,nearest passing setting,key,value,limit,unit\n"));
  CHECK_THAT(csv.out, Catch::Contains(",min_concurrency," + std::to_string(static_cast<long long>(std::floor((pool - null_block) / request))) + ",16,requests\n"));
}
