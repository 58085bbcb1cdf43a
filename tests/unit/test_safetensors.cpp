// Exact weights from a snapshot folder: the safetensors headers (data never read), or the index's total_size;
// multi-token-prediction layers left out (their own bytes kept for MTP speculation); a checkpoint cast at load
// scales with the element size. Every expected value is the byte ranges written here.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "kvplan/core/error.hpp"
#include "kvplan/core/speculative.hpp"
#include "plan_helpers.hpp"
#include "kvplan/io/hf_config.hpp"
#include "kvplan/io/safetensors.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A safetensors file holding only its header, sized as if the data followed (a sparse file: nothing is written).
void write_safetensors(const fs::path& file, const json& header) {
  const std::string h = header.dump();
  std::ofstream out(file, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((static_cast<std::uint64_t>(h.size()) >> (8 * i)) & 0xff));
  out << h;
  out.close();
  std::uint64_t end = 0;
  for (const auto& [name, t] : header.items())
    if (name != "__metadata__") end = std::max<std::uint64_t>(end, t["data_offsets"][1].get<std::uint64_t>());
  fs::resize_file(file, 8 + h.size() + end);
}

json tensor(const char* dtype, std::vector<std::uint64_t> shape, std::uint64_t begin, std::uint64_t bytes) {
  return {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, begin + bytes}}};
}

long long weights_term(const json& plan) {
  for (const auto& t : plan["results"]["budget"])
    if (t["term"] == "weights") return t["bytes"].get<long long>();
  return -1;
}

struct Snapshot {
  fs::path dir;
  explicit Snapshot(const std::string& name) : dir(fs::temp_directory_path() / ("kvplan-st-" + name + "-" + std::to_string(getpid()))) {
    fs::create_directories(dir);
    fs::copy_file(std::string(KVPLAN_TEST_DATA) + "/configs/llama-3.1-8b.json", dir / "config.json", fs::copy_options::overwrite_existing);
  }
  ~Snapshot() { fs::remove_all(dir); }
};

}  // namespace

TEST_CASE("safetensors headers give the exact weight bytes, MTP layers are left out", "[safetensors]") {
  Snapshot s("headers");
  // two shards: embeddings (128256 x 4096 bf16) and a layer-0 projection; a layer numbered 32 (= num_hidden_layers,
  // so a multi-token-prediction layer) of 1 MiB that engines skip without MTP speculation
  const std::uint64_t embed = 128256ULL * 4096 * 2, proj = 4096ULL * 4096 * 2, mtp = 1 << 20;
  write_safetensors(s.dir / "model-00001-of-00002.safetensors",
                    {{"__metadata__", {{"format", "pt"}}}, {"model.embed_tokens.weight", tensor("BF16", {128256, 4096}, 0, embed)}});
  write_safetensors(s.dir / "model-00002-of-00002.safetensors",
                    {{"model.layers.0.self_attn.q_proj.weight", tensor("BF16", {4096, 4096}, 0, proj)},
                     {"model.layers.32.eh_proj.weight", tensor("BF16", {512, 1024}, proj, mtp)}});
  const auto w = kvplan::io::read_safetensors_weights(s.dir.string(), 32);
  REQUIRE(w);
  CHECK(w->bytes == static_cast<long long>(embed + proj));
  CHECK(w->elements == 128256LL * 4096 + 4096LL * 4096);
  CHECK(w->skipped_bytes == static_cast<long long>(mtp));
  CHECK(w->files == 2);
  // the plan prices the weights from the files, not from the config
  const kvtest::Run r = kvtest::kvplan({"plan", s.dir.string(), "--gpu", "h100", "--context", "4k", "--format", "json"});
  INFO(r.err);
  REQUIRE((r.exit == 0 || r.exit == 1));
  CHECK(weights_term(json::parse(r.out)) == static_cast<long long>(embed + proj));
  // --weight-format replaces what the files hold
  const kvtest::Run f = kvtest::kvplan({"plan", s.dir.string(), "--gpu", "h100", "--context", "4k", "--weight-format", "bf16", "--format", "json"});
  CHECK(weights_term(json::parse(f.out)) > static_cast<long long>(embed + proj));
}

TEST_CASE("only the index: metadata.total_size, float32 files cast at load scale by the element size", "[safetensors]") {
  Snapshot s("index");
  std::ofstream(s.dir / "model.safetensors.index.json") << R"({"metadata": {"total_size": 16060522496}, "weight_map": {}})";
  const auto w = kvplan::io::read_safetensors_weights(s.dir.string(), 32);
  REQUIRE(w);
  CHECK(w->from_index);
  CHECK(w->bytes == 16060522496LL);
  // a float32 checkpoint: vLLM >= 0.10 runs it in bf16 on SM >= 8.0, so 4 B per element becomes 2
  json cfg;
  std::ifstream(s.dir / "config.json") >> cfg;
  cfg["torch_dtype"] = "float32";
  std::ofstream(s.dir / "config.json") << cfg.dump();
  std::ofstream(s.dir / "model.safetensors.index.json") << R"({"metadata": {"total_size": 32121044992}, "weight_map": {}})";
  const kvtest::Run r = kvtest::kvplan({"plan", s.dir.string(), "--gpu", "h100", "--context", "4k", "--format", "json"});
  INFO(r.err);
  REQUIRE((r.exit == 0 || r.exit == 1));
  CHECK(weights_term(json::parse(r.out)) == 32121044992LL / 2);
  // the budget names the index as the source (not a tensor table), and a total far from the unquantised dtype's bytes
  // (5 GB for 8,030,261,248 bf16 parameters: 0.62 B a parameter) is warned of, not taken silently
  cfg["torch_dtype"] = "bfloat16";
  std::ofstream(s.dir / "config.json") << cfg.dump();
  std::ofstream(s.dir / "model.safetensors.index.json") << R"({"metadata": {"total_size": 5000000000}, "weight_map": {}})";
  const kvtest::Run stale = kvtest::kvplan({"plan", s.dir.string(), "--gpu", "h100", "--context", "4k", "--format", "json"});
  REQUIRE(stale.exit == 0);
  bool sourced = false;
  const json plan = json::parse(stale.out);
  for (const auto& t : plan["results"]["budget"])
    if (t["term"] == "weights") sourced = t["basis"].get<std::string>().find("metadata.total_size of the safetensors index") != std::string::npos;
  CHECK(sourced);
  CHECK(stale.err.find("metadata.total_size 4.66 GiB is 0.62 B a parameter for an unquantised bf16 config (2 B)") != std::string::npos);
}

TEST_CASE("a damaged safetensors header is bad input naming the file", "[safetensors]") {
  Snapshot s("bad");
  std::ofstream(s.dir / "model.safetensors", std::ios::binary) << std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) << "{}";
  CHECK_THROWS_AS(kvplan::io::read_safetensors_weights(s.dir.string(), 32), kvplan::InputError);
  const kvtest::Run r = kvtest::kvplan({"plan", s.dir.string(), "--gpu", "h100", "--context", "4k"});
  CHECK(r.exit == 2);
  CHECK(r.err.find("model.safetensors") != std::string::npos);
}

TEST_CASE("MTP speculation takes the MTP layers' bytes from the snapshot, without the module's embedding and head copies",
          "[safetensors][speculative]") {
  Snapshot s("mtp");
  // a DeepSeek-style MTP layer numbered 32 (= num_hidden_layers): its own decoder weights (3 MiB), and the module's
  // copies of the embedding and head plus its eh_proj, which the engines share or kvplan sizes itself; and a
  // Qwen3-Next-style mtp.* tensor (1 MiB), skipped too
  const std::uint64_t proj = 4096ULL * 4096 * 2, layer = 3 << 20, embed = 128256ULL * 4096 * 2, eh = 2ULL * 4096 * 4096 * 2, qmtp = 1 << 20;
  write_safetensors(s.dir / "model.safetensors",
                    {{"model.layers.0.self_attn.q_proj.weight", tensor("BF16", {4096, 4096}, 0, proj)},
                     {"model.layers.32.mlp.down_proj.weight", tensor("BF16", {1536, 1024}, proj, layer)},
                     {"model.layers.32.embed_tokens.weight", tensor("BF16", {128256, 4096}, proj + layer, embed)},
                     {"model.layers.32.shared_head.head.weight", tensor("BF16", {128256, 4096}, proj + layer + embed, embed)},
                     {"model.layers.32.eh_proj.weight", tensor("BF16", {4096, 8192}, proj + layer + 2 * embed, eh)},
                     {"mtp.layers.0.mlp.gate.weight", tensor("BF16", {512, 1024}, proj + layer + 2 * embed + eh, qmtp)}});
  const auto w = kvplan::io::read_safetensors_weights(s.dir.string(), 32);
  REQUIRE(w);
  CHECK(w->bytes == static_cast<long long>(proj));
  CHECK(w->skipped_bytes == static_cast<long long>(layer + 2 * embed + eh + qmtp));
  CHECK(w->mtp_aside_bytes == static_cast<long long>(2 * embed + eh));
  // the planner: method mtp on a one-MTP-layer model takes layer + qmtp bytes from the files and the fc
  // (2 x 4096 x 4096, bf16) from the geometry
  kvplan::ModelSpec m = kvplan::io::model_from_hf_config(kvplan::io::parse_json_file((s.dir / "config.json").string()),
                                                         (s.dir / "config.json").string(), "mtp-snapshot");
  kvplan::io::apply_safetensors_weights(m, (s.dir / "config.json").string());
  REQUIRE(m.mtp_weight_bytes);
  CHECK(*m.mtp_weight_bytes == static_cast<long long>(layer + qmtp));
  m.mtp_layers = 1;
  const kvplan::ModelSpec d = kvplan::mtp_draft_model(m, 1);
  REQUIRE(d.exact_weight_bytes);
  CHECK(*d.exact_weight_bytes == static_cast<long long>(layer + qmtp));
  kvplan::PlanSpec ps;
  ps.model = m;
  ps.gpu = kvtest::profiles().gpu("h100-sxm");
  kvplan::EngineSettings e;
  e.spec.method = kvplan::SpecMethod::mtp;
  e.spec.num_tokens = 1;
  ps.engine = kvplan::resolve_engine_defaults(e, m.max_context, 1, ps.gpu.memory_bytes, ps.gpu.architecture);
  ps.draft = d;
  const kvplan::Planner p(ps);
  CHECK(p.budget_bytes("draft_weights") == static_cast<long long>(layer + qmtp + eh));  // eh_proj: 2 x 4096 x 4096 x bf16
}

TEST_CASE("the decode step reads the weights the files hold, not the config's dtype", "[safetensors][perf]") {
  // an FP8 checkpoint whose config names no quantization_config (Llama-3.1-8B's bf16 config): the embedding table
  // (128256 x 4096 bf16), then everything else at 1 B a parameter (8,030,261,248 - 2 x 525,336,576 = 6,979,588,096
  // parameters besides the embedding and the untied head; the head at 1 B too). The step reads all but the embedding
  // (looked up, not read): 6,979,588,096 + 525,336,576 = 7,504,924,672 B
  Snapshot s("fp8read");
  const std::uint64_t embed = 128256ULL * 4096 * 2, rest = 6979588096ULL + 525336576ULL;
  write_safetensors(s.dir / "model.safetensors", {{"model.embed_tokens.weight", tensor("BF16", {128256, 4096}, 0, embed)},
                                                   {"model.layers.0.mlp.up_proj.weight", tensor("F8_E4M3", {rest}, embed, rest)}});
  const kvtest::Run r = kvtest::kvplan({"plan", s.dir.string(), "--gpu", "h100", "--context", "4k", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const json j = json::parse(r.out);
  CHECK(weights_term(j) == static_cast<long long>(embed + rest));
  // the file gives a total, not each part's bytes: every part is priced at the config's dtype and scaled to the file's
  // total, so the step reads the file's bytes x the non-embedding share of the bf16 pricing (8,030,261,248 parameters,
  // 525,336,576 of them the embedding): 8,555,597,824 x (1 - 525,336,576 / 8,030,261,248) = 7,995,893,933 B, within
  // 7% of the true 7,504,924,672 (the bf16 embedding weighs more than its share); the config's bf16 read 15.0 GB
  const double read = j["results"]["performance"]["weight_bytes_read_per_step"].get<double>();
  CHECK(read == Approx(static_cast<double>(embed + rest) * (1.0 - 525336576.0 / 8030261248.0)).epsilon(1e-6));
  CHECK(read < 1.07 * static_cast<double>(rest));
}
