// Every shipped profile loads; GPU profiles are strict; names resolve with "did you mean"; Hugging Face
// ids, case, driver names and Kubernetes labels resolve; a name two cards share is an error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "kvplan/core/kv.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/hf_config.hpp"
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
    // every accelerator carries a compute rate (issue: "kvplan gpus --format json gives bandwidth, TFLOP/s and
    // interconnect for all of them"); CPU hosts are planned by bandwidth alone
    if (g.device_class != "cpu") CHECK((g.bf16_dense_tflops || g.fp16_dense_tflops || g.int8_dense_tops || g.fp8_dense_tflops));
  }
  // H100 80GB: CUDA reports 85045477376 bytes (deviceQuery "81106 MBytes (85045477376 bytes)"),
  // which vLLM prints as total_gpu_memory 79.22 GiB
  CHECK(p.gpu("h100-sxm").memory_bytes == 85045477376);
  CHECK(p.gpu("H100").id == "h100-sxm");
  CHECK(p.gpu("h200").memory_bytes == 150021734400);  // deviceQuery 143072 MBytes
}

TEST_CASE("the build-time lookup index agrees with every profile it indexes", "[profiles]") {
  // cmake/embed_profiles.cmake reads each file's aliases / _hf_ids so that a lookup parses only the profile it
  // finds; the names it wrote must be the ones the strict parse reads
  const auto p = io::Profiles::load(std::nullopt);
  size_t indexed = 0;
  for (const auto& e : io::embedded_profiles()) {
    INFO(e.id);
    if (!e.keys) continue;  // a file CMake's JSON reader rejects is parsed at load
    ++indexed;
    std::vector<std::string> keys;
    std::string cur;
    for (const char* c = e.keys; *c; ++c)
      if (*c == '\n') keys.push_back(std::exchange(cur, {}));
      else cur += *c;
    CHECK(cur.empty());  // every name ends with a newline
    if (std::string(e.kind) == "gpus") CHECK(keys == p.gpus().at(e.id).aliases);
    else CHECK(keys == p.models().at(e.id).hf_ids);
  }
  CHECK(indexed + 5 > io::embedded_profiles().size());  // all but the odd file (mamba-codestral-7b has Infinity)
}

TEST_CASE("a lookup before the full listing finds the same profiles as after it", "[profiles]") {
  const auto lazy = io::Profiles::load(std::nullopt);
  const GpuSpec& h = lazy.gpu("NVIDIA H100 80GB HBM3");  // an alias, resolved from the index
  CHECK(h.id == "h100-sxm");
  CHECK(lazy.gpu("rtx-3080", 12'000'000'000).id == "rtx-3080-12gb");  // a shared name, by memory
  CHECK(lazy.model("Llama-3.1-8B").id == "llama-3.1-8b");  // ids are case-insensitive
  CHECK(lazy.model_for_hf_id("meta-llama/Llama-3.1-8B-Instruct") == "llama-3.1-8b");  // _hf_ids, from the index
  const auto& all = lazy.gpus();  // now parses the rest; the profile already handed out stays where it was
  CHECK(&all.at("h100-sxm") == &h);
  CHECK(all.at("h100-sxm").memory_bytes == 85045477376);  // deviceQuery "81106 MBytes (85045477376 bytes)"
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
  // the vendor picks kernels and rules: one of README-gpus.md's values (a copy of h100-sxm with another vendor)
  std::ifstream in(std::string(KVPLAN_TEST_DATA) + "/../../profiles/gpus/h100-sxm.json");
  nlohmann::json h100 = nlohmann::json::parse(in);
  h100["vendor"] = "nvidai";
  CHECK_THROWS_WITH(io::gpu_from_json(h100, "x", "x.json"),
                    "x.json: /vendor: expected nvidia, amd, apple, intel or generic, got 'nvidai'; did you mean 'nvidia'?");
}

// ---- naming: Hugging Face ids, case, driver names, Kubernetes labels, shared names, custom GPUs ----

namespace {

// Points HF_HUB_CACHE at an empty folder for the test's lifetime, so Hub ids never hit a real cache.
struct EmptyHubCache {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "kvplan-test-empty-hub";
  EmptyHubCache() {
    std::filesystem::create_directories(dir);
    ::setenv("HF_HUB_CACHE", dir.c_str(), 1);
  }
  ~EmptyHubCache() {
    ::unsetenv("HF_HUB_CACHE");
    std::filesystem::remove_all(dir);
  }
};

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

TEST_CASE("every _hf_ids entry resolves to its profile when the id is not cached", "[profiles]") {
  const EmptyHubCache cache;
  const auto p = io::Profiles::load(std::nullopt);
  // profiles whose Hub repo could not be named with certainty carry an empty list
  const std::set<std::string> without = {"gemma-7b-awq", "mamba2-2.7b"};
  size_t n = 0;
  for (const auto& [id, prof] : p.models()) {
    INFO(id);
    CHECK(prof.config.contains("_hf_ids"));
    CHECK(prof.hf_ids.empty() == (without.count(id) == 1));
    for (const auto& h : prof.hf_ids) {
      INFO(h);
      ++n;
      for (const std::string& spelling : {h, upper(h), lower(h)}) {  // any case
        std::string origin;
        const ModelSpec m = p.model(spelling, &origin);
        CHECK(origin == "built-in profile " + id);
        CHECK(m.id == spelling);
        REQUIRE(m.warnings.size() == 1);
        CHECK(m.warnings[0] == "model '" + spelling +
                                   "' is not in the local Hugging Face cache; using the built-in profile '" + id +
                                   "', whose _hf_ids lists it");
      }
      CHECK(p.model_for_hf_id(h) == id);
    }
  }
  CHECK(n >= 80);
}

TEST_CASE("meta-llama/Llama-3.3-70B-Instruct resolves to the built-in profile", "[profiles]") {
  const EmptyHubCache cache;
  const auto p = io::Profiles::load(std::nullopt);
  std::string origin;
  const ModelSpec m = p.model("meta-llama/Llama-3.3-70B-Instruct", &origin);
  CHECK(origin == "built-in profile llama-3.3-70b-instruct");
  CHECK(m.layers.size() == 80);  // num_hidden_layers in its config.json
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0].find("using the built-in profile 'llama-3.3-70b-instruct', whose _hf_ids lists it") !=
        std::string::npos);
  // an id no profile lists still falls back to the name heuristic, with its warning
  const ModelSpec g = p.model("someone/Llama-3.1-8B-chat");
  REQUIRE(g.warnings.size() == 1);
  CHECK(g.warnings[0].find("using the built-in profile 'llama-3.1-8b'") != std::string::npos);
  CHECK(g.warnings[0].find("_hf_ids") == std::string::npos);
}

TEST_CASE("no two model profiles claim the same Hugging Face id", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  std::map<std::string, std::string> owner;
  for (const auto& [id, prof] : p.models())
    for (const auto& h : prof.hf_ids) {
      INFO(h << " in " << id);
      const auto [it, inserted] = owner.emplace(lower(h), id);
      CHECK((inserted || it->second == id));
      CHECK(std::count(h.begin(), h.end(), '/') == 1);
    }
}

TEST_CASE("the config reader ignores _hf_ids and other _ keys", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  nlohmann::json j = p.models().at("llama-3.1-8b").config;
  const ModelSpec with = io::model_from_hf_config(j, "x.json", "x");
  j["_made_up"] = {{"anything", 1}};
  const ModelSpec more = io::model_from_hf_config(j, "x.json", "x");
  j.erase("_hf_ids");
  j.erase("_made_up");
  j.erase("_source");
  const ModelSpec without = io::model_from_hf_config(j, "x.json", "x");
  CHECK(with.warnings.empty());
  CHECK(more.warnings.empty());
  CHECK(with.layers.size() == without.layers.size());
  KvOptions o;
  o.context = 4096;
  CHECK(compute_kv(with, o).kv_bytes_per_token == compute_kv(without, o).kv_bytes_per_token);
  CHECK(compute_kv(more, o).kv_bytes_per_token == compute_kv(without, o).kv_bytes_per_token);
}

TEST_CASE("a --profiles model's _hf_ids is checked and takes an id over from a built-in", "[profiles]") {
  const EmptyHubCache cache;
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "kvplan-test-hf-ids";
  fs::remove_all(dir);
  fs::create_directories(dir / "models");
  nlohmann::json j = io::Profiles::load(std::nullopt).models().at("llama-3.1-8b").config;
  j["_hf_ids"] = {"acme/My-Llama", "meta-llama/Llama-3.1-8B-Instruct"};
  std::ofstream(dir / "models" / "my-llama.json") << j.dump();
  const auto p = io::Profiles::load(dir.string());
  std::string origin;
  p.model("meta-llama/Llama-3.1-8B-Instruct", &origin);
  CHECK(origin == (dir / "models" / "my-llama.json").string());
  CHECK(p.model_for_hf_id("ACME/my-llama") == "my-llama");
  CHECK(p.model_for_hf_id("meta-llama/Llama-3.1-8B") == "llama-3.1-8b");
  j["_hf_ids"] = {"no-slash"};
  std::ofstream(dir / "models" / "my-llama.json") << j.dump();
  CHECK_THROWS_WITH(io::Profiles::load(dir.string()),
                    (dir / "models" / "my-llama.json").string() +
                        ": /_hf_ids: 'no-slash' is not a Hugging Face repo id; write ORG/NAME");
  fs::remove_all(dir);
}

TEST_CASE("model ids are case-insensitive", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  for (const std::string name : {"Llama-3.1-8B", "LLAMA-3.1-8B", "llama-3.1-8B"}) {
    INFO(name);
    std::string origin;
    const ModelSpec m = p.model(name, &origin);
    CHECK(origin == "built-in profile llama-3.1-8b");
    CHECK(m.id == "llama-3.1-8b");
    CHECK(m.warnings.empty());
  }
  CHECK(p.model("Qwen3-8B").layers.size() == 36);  // num_hidden_layers 36
  CHECK_THROWS_WITH(p.model("Llama-3.1-8"), Catch::Matchers::StartsWith("unknown model 'Llama-3.1-8'"));
}

TEST_CASE("GPU names as nvidia-smi, torch and rocm print them resolve", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  // printed device names: deviceQuery 'Device 0: "..."', nvidia-smi --query-gpu=name,
  // torch.cuda.get_device_name() (same driver string); see /work/shared/reference/gpu-facts.json
  const std::vector<std::pair<std::string, std::string>> names = {
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H100 NVL", "h100-nvl"},            {"NVIDIA H200", "h200"},
      {"NVIDIA H20", "h20"},                      {"NVIDIA B200", "b200"},
      {"NVIDIA B300 SXM6 AC", "b300"},            {"NVIDIA GB200", "gb200"},
      {"NVIDIA GH200 480GB", "gh200"},            {"NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"},
      {"NVIDIA A100-SXM4-40GB", "a100-40gb"},     {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
      {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"}, {"NVIDIA A10", "a10"},
      {"NVIDIA A10G", "a10g"},                    {"NVIDIA L4", "l4"},
      {"NVIDIA L40S", "l40s"},                    {"NVIDIA GeForce RTX 3090", "rtx-3090"},
      {"NVIDIA GeForce RTX 4090", "rtx-4090"},    {"NVIDIA GeForce RTX 5090", "rtx-5090"},
      {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"},
      {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000"},
      {"Tesla T4", "t4"},                         {"Tesla V100-SXM2-16GB", "v100-16gb"},
      {"Tesla V100-SXM2-32GB", "v100-32gb"},      {"AMD Instinct MI300X", "mi300x"},
      {"AMD Instinct MI325X", "mi325x"},          {"AMD Instinct MI355X", "mi355x"},
  };
  for (const auto& [name, id] : names) {
    INFO(name);
    CHECK(p.gpu(name).id == id);
    CHECK(p.gpu(upper(name)).id == id);
  }
}

TEST_CASE("Kubernetes node-label values resolve", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  const std::vector<std::pair<std::string, std::string>> labels = {
      // GKE cloud.google.com/gke-accelerator
      {"nvidia-h100-80gb", "h100-sxm"}, {"nvidia-h100-mega-80gb", "h100-sxm"}, {"nvidia-a100-80gb", "a100-sxm-80gb"},
      {"nvidia-tesla-a100", "a100-40gb"}, {"nvidia-l4", "l4"}, {"nvidia-tesla-t4", "t4"}, {"nvidia-h200-141gb", "h200"},
      {"nvidia-b200", "b200"}, {"nvidia-gb200", "gb200"}, {"nvidia-tesla-v100", "v100-16gb"},
      {"nvidia-rtx-pro-6000", "rtx-pro-6000"},
      // NVIDIA GPU feature discovery nvidia.com/gpu.product (the driver name, spaces as '-'; -SHARED when time-sliced)
      {"NVIDIA-H100-80GB-HBM3", "h100-sxm"}, {"NVIDIA-A100-SXM4-80GB", "a100-sxm-80gb"}, {"NVIDIA-L4", "l4"},
      {"Tesla-T4", "t4"}, {"NVIDIA-A10G", "a10g"}, {"NVIDIA-H100-80GB-HBM3-SHARED", "h100-sxm"},
      // KubeAI resource profiles
      {"nvidia-gpu-l4", "l4"}, {"nvidia-gpu-h100", "h100-sxm"}, {"nvidia-gpu-a100-80gb", "a100-sxm-80gb"},
      {"nvidia-gpu-a100-40gb", "a100-40gb"}, {"amd-gpu-mi300x", "mi300x"},
  };
  for (const auto& [label, id] : labels) {
    INFO(label);
    CHECK(p.gpu(label).id == id);
  }
}

TEST_CASE("GPU names treat case, spaces, '_' and '-' alike", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  CHECK(io::gpu_name_key("  NVIDIA  A100_SXM4--80GB ") == "nvidia-a100-sxm4-80gb");
  CHECK(p.gpu("nvidia_a100 sxm4_80gb").id == "a100-sxm-80gb");
  CHECK(p.gpu("H100 SXM").id == "h100-sxm");
  CHECK(p.gpu("RTX_4090").id == "rtx-4090");
  CHECK_THROWS_WITH(p.gpu("NVIDIA H1000"), Catch::Matchers::StartsWith("unknown GPU 'NVIDIA H1000'; did you mean"));
}

TEST_CASE("one name for two cards: an error listing them, or the nearest memory when it tells them apart", "[profiles]") {
  const auto p = io::Profiles::load(std::nullopt);
  const std::string msg =
      "'NVIDIA GeForce RTX 3080' is ambiguous: rtx-3080-10gb (10 GB), rtx-3080-12gb (12 GB); "
      "name one, or give --gpu-memory-bytes";
  CHECK_THROWS_WITH(p.gpu("NVIDIA GeForce RTX 3080"), msg);
  CHECK_THROWS_WITH(p.gpu("NVIDIA GeForce RTX 3080", std::nullopt), msg);
  CHECK_THROWS_WITH(p.gpu("3080"),
                    Catch::Matchers::StartsWith("'3080' is ambiguous: rtx-3080-10gb (10 GB), rtx-3080-12gb (12 GB)"));
  // deviceQuery on the 10 GB card: 10000 MBytes (10485956608 bytes); nvidia-smi 10240 MiB
  CHECK(p.gpu("NVIDIA GeForce RTX 3080", 10485956608).id == "rtx-3080-10gb");
  CHECK(p.gpu("NVIDIA GeForce RTX 3080", 10240LL * 1048576).id == "rtx-3080-10gb");
  CHECK(p.gpu("NVIDIA GeForce RTX 3080", 12LL * 1024 * 1048576).id == "rtx-3080-12gb");
  CHECK(p.gpu("NVIDIA GeForce RTX 3080", 12045LL * 1048576).id == "rtx-3080-12gb");  // a 12 GB-class CUDA total
  CHECK(p.gpu("rtx-3080-12gb").memory_bytes == 12LL * 1024 * 1024 * 1024);  // datasheet 12 GB as 12 GiB
  CHECK(p.gpu("RTX-3080-10GB").memory_bytes == 10485956608);
  // a name only one profile has ignores the memory
  CHECK(p.gpu("h100", 1).id == "h100-sxm");
  // a family name no profile claims lists the profiles whose ids extend it, or takes the nearest memory
  CHECK_THROWS_WITH(p.gpu("a100"), "'a100' is ambiguous: a100-40gb (40 GB), a100-pcie-40gb (40 GB), a100-pcie-80gb (80 GB), "
                                   "a100-sxm-80gb (80 GB); name one, or give --gpu-memory-bytes");
  // ... but two of that memory (PCIe and SXM: their bandwidth and interconnect differ) stay ambiguous, named
  CHECK_THROWS_WITH(p.gpu("A100", 81920LL * 1048576),
                    "'A100' with that memory is ambiguous: a100-pcie-80gb, a100-sxm-80gb; name one (their bandwidth and interconnect differ)");
  CHECK_THROWS_WITH(p.gpu("A100", 40960LL * 1048576), Catch::Matchers::StartsWith("'A100' with that memory is ambiguous: a100-40gb, a100-pcie-40gb"));
  CHECK_THROWS_WITH(p.gpu("v100"), Catch::Matchers::StartsWith("'v100' is ambiguous: v100-16gb (16 GB), "));
  // names written without their separators
  CHECK(p.gpu("rtx4090").id == "rtx-4090");
  CHECK(p.gpu("RTX4090").id == "rtx-4090");
  CHECK(p.gpu("7900xtx").id == p.gpu("7900-xtx").id);
}

// No name claimed by two profiles (except the shared device names): test_hardware.cpp.

TEST_CASE("a GPU without a profile", "[profiles]") {
  const GpuSpec g = io::Profiles::custom_gpu(25'000'000'000, std::nullopt);
  CHECK(g.id == "custom");
  CHECK(g.memory_bytes == 25'000'000'000);
  CHECK(g.memory_bytes_kind == "derived");
  CHECK(g.memory_bandwidth_bytes_per_s == 0);  // unknown: no performance estimate
  CHECK_FALSE(g.bf16_dense_tflops);
  CHECK(io::Profiles::custom_gpu(1 << 30, 900'000'000'000).memory_bandwidth_bytes_per_s == 900'000'000'000);
  CHECK_THROWS_WITH(io::Profiles::custom_gpu(0, std::nullopt), "GPU memory must be >= 1 byte, got 0");
}

TEST_CASE("the GPU profile template loads once filled in", "[profiles]") {
  nlohmann::json t = nlohmann::json::parse(io::gpu_profile_template());
  CHECK(t.size() == 35);  // every key (profiles/README-gpus.md lists 35); the loader is strict
  CHECK_THROWS_WITH(io::gpu_from_json(t, "my-gpu", "my-gpu.json"),
                    Catch::Matchers::StartsWith("my-gpu.json: /memory_bytes: "));
  t["name"] = "My GPU";
  t["memory_bytes"] = 25'000'000'000LL;
  t["memory_source"] = "torch.cuda.mem_get_info()[1]";
  t["datasheet_memory_gb"] = 24;
  t["memory_bandwidth_bytes_per_s"] = 1'000'000'000'000LL;
  CHECK_THROWS_WITH(io::gpu_from_json(t, "my-gpu", "my-gpu.json"),
                    "my-gpu.json: /device_class: expected datacenter, workstation, consumer, embedded, apple, cpu or "
                    "unified, got ''");
  t["device_class"] = "consumer";
  t["ecc_mode"] = "none";
  t["interconnect"] = "pcie";
  CHECK_THROWS_WITH(io::gpu_from_json(t, "my-gpu", "my-gpu.json"),
                    "my-gpu.json: /interconnect_bytes_per_s: expected the link's bytes per second (> 0) for "
                    "interconnect pcie");
  t["interconnect_bytes_per_s"] = 32e9;  // PCIe 4.0 x16, one direction
  t["pcie_bytes_per_s"] = 32e9;
  const GpuSpec g = io::gpu_from_json(t, "my-gpu", "my-gpu.json");
  CHECK(g.interconnect_bytes_per_s == 32e9);
  CHECK(g.memory_bytes == 25'000'000'000LL);
  // a profile written from the template before boost_clock_mhz existed still loads (no clock: no dequant term)
  t.erase("boost_clock_mhz");
  CHECK_FALSE(io::gpu_from_json(t, "my-gpu", "my-gpu.json").boost_clock_mhz.has_value());
  // and before dies existed (not stated: one die to the model)
  t.erase("dies");
  CHECK_FALSE(io::gpu_from_json(t, "my-gpu", "my-gpu.json").dies.has_value());
  t.erase("sm_count");
  CHECK_THROWS_WITH(io::gpu_from_json(t, "my-gpu", "my-gpu.json"), Catch::Matchers::StartsWith("my-gpu.json: /sm_count: missing key"));
}

TEST_CASE("a --profiles GPU that shares a built-in's nvidia-smi name takes the name over", "[profiles]") {
  // tests/data/profiles-gpu-alias/gpus/h100-ours.json lists "NVIDIA H100 80GB HBM3", which the built-in h100-sxm lists too:
  // the user's profile is the override (it was an 'ambiguous' error); the built-in keeps its own id
  const auto p = io::Profiles::load(std::string(KVPLAN_TEST_DATA) + "/profiles-gpu-alias");
  CHECK(p.gpu("NVIDIA H100 80GB HBM3").id == "h100-ours");
  CHECK(p.gpu("NVIDIA H100 80GB HBM3").memory_bytes == 80000000000LL);
  CHECK(p.gpu("h100-sxm").id == "h100-sxm");
}
