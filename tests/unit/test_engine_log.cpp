// Engine startup-log reader: every engine log quote of the reference cases (tests/data/logs/cases, expected
// figures from cases.json with the case id beside them), logs assembled from the engines' documented line
// formats (tests/data/logs/README.md: arithmetic by hand below), prefixes, ranks, args lines, the cut-off
// rule, and hostile input (binary, empty, long lines, huge numbers, unbalanced brackets).
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "kvplan/core/error.hpp"
#include "kvplan/io/engine_log.hpp"

using namespace kvplan;

namespace {

constexpr double KiB = 1024.0, MiB = 1024.0 * KiB, GiB = 1024.0 * MiB;

std::string slurp(const std::string& rel) {
  std::ifstream in(std::string(KVPLAN_TEST_DATA) + "/logs/" + rel, std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

io::EngineLog read(const std::string& rel) { return io::read_engine_log(slurp(rel), rel); }
io::EngineLog text(const std::string& t) { return io::read_engine_log(t, "log"); }

// The value of the first figure with `key` (rank 0 first); fails the test when absent.
double fig(const io::EngineLog& log, const std::string& key) {
  const io::LogFigure* f = log.find(key);
  INFO("key " << key);
  REQUIRE(f != nullptr);
  return f->value;
}

std::vector<const io::LogFigure*> all(const io::EngineLog& log, const std::string& key) {
  std::vector<const io::LogFigure*> out;
  for (const auto& f : log.figures)
    if (f.key == key) out.push_back(&f);
  return out;
}

std::string arg(const io::EngineLog& log, const std::string& key) {
  for (const auto& [k, v] : log.args)
    if (k == key) return v;
  return "(absent)";
}

bool has_arg(const io::EngineLog& log, const std::string& key) { return arg(log, key) != "(absent)"; }

Approx near(double v) { return Approx(v).epsilon(1e-12); }

std::string error_of(const std::string& t) {
  try {
    io::read_engine_log(t, "server.log");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// ---- the reference cases (values: cases.json "expected") ----------------------------------------------

TEST_CASE("case lc-llama31-8b-16k-f16-vulkan: unified-cache size line", "[engine_log]") {
  auto log = read("cases/lc-llama31-8b-16k-f16-vulkan.log");
  CHECK(log.engine == "llama.cpp");
  CHECK(log.version == "b5781");
  CHECK(log.fork == "");
  CHECK(fig(log, "kv_bytes") == near(2048.0 * MiB));  // kv_total_MiB 2048.0
  CHECK(fig(log, "k_bytes") == near(1024.0 * MiB));   // K_MiB
  CHECK(fig(log, "v_bytes") == near(1024.0 * MiB));   // V_MiB
  CHECK(fig(log, "kv_cells") == 16384);
  CHECK(fig(log, "kv_layers") == 32);
  CHECK(fig(log, "kv_seqs") == 1);
  CHECK(fig(log, "model_params") == near(8.03e9));  // "8.03 B"
  CHECK(log.find("model_params")->resolution == near(0.005e9));
  CHECK(fig(log, "n_ctx") == 16384);
  CHECK(fig(log, "flash_attn") == 1);
  CHECK(fig(log, "n_embd_head_k") == 128);
  CHECK(log.text.at("type_k") == "f16");
  CHECK(log.text.at("type_v") == "f16");
  CHECK(log.text.at("file_type") == "Q4_0");
  CHECK(log.text.at("general.name") == "Meta Llama 3.1 8B Instruct");
  // the arithmetic the figures stand for: cells x layers x n_embd_k_gqa (8 x 128) x f16
  CHECK(fig(log, "k_bytes") == near(16384.0 * 32 * 8 * 128 * 2));
}

TEST_CASE("case lc-llama31-8b-1k-kiq4nl-vf16: KV self size with mixed K and V types", "[engine_log]") {
  auto log = read("cases/lc-llama31-8b-1k-kiq4nl-vf16.log");
  CHECK(log.engine == "llama.cpp");
  CHECK(log.version == "b3475");  // "main: build = 3475 (ac156500)"
  CHECK(log.fork == "");          // nothing in the text says ik_llama.cpp: not guessed
  CHECK(fig(log, "kv_bytes") == near(82.0 * MiB));
  CHECK(fig(log, "k_bytes") == near(18.0 * MiB));
  CHECK(fig(log, "v_bytes") == near(64.0 * MiB));
  CHECK(log.text.at("type_k") == "iq4_nl");
  CHECK(log.text.at("type_v") == "f16");
  CHECK(fig(log, "model_params") == near(8.030e9));
  CHECK(log.find("model_params")->resolution == near(0.0005e9));
  CHECK(fig(log, "model_size_bytes") == near(5.162 * GiB));  // "5.162 GiB (5.521 BPW)"
  CHECK(fig(log, "bpw") == near(5.521));
  CHECK(log.text.at("file_type") == "Q5_K - Small");
  // iq4_nl: 18 bytes per 32 elements; 1024 cells x 32 layers x 1024 elements
  CHECK(fig(log, "k_bytes") == near(1024.0 * 32 * 1024 / 32 * 18));
}

TEST_CASE("case lc-qwen3-30b-a3b-4k-f16: ik_llama.cpp by its mla_attn line", "[engine_log]") {
  auto log = read("cases/lc-qwen3-30b-a3b-4k-f16.log");
  CHECK(log.engine == "llama.cpp");
  CHECK(log.fork == "ik_llama.cpp");
  CHECK(log.version == "b3667");  // "build info | ... build=3667"
  CHECK(fig(log, "kv_bytes") == near(384.0 * MiB));
  CHECK(fig(log, "k_bytes") == near(192.0 * MiB));
  CHECK(fig(log, "v_bytes") == near(192.0 * MiB));
  CHECK(fig(log, "model_params") == near(30.532e9));
  CHECK(fig(log, "model_size_bytes") == near(20.228 * GiB));
  CHECK(fig(log, "bpw") == near(5.691));
  CHECK(fig(log, "n_layer") == 48);
  CHECK(fig(log, "n_head_kv") == 4);
}

TEST_CASE("case lc-qwen3-30b-a3b-16k-f16-mainline", "[engine_log]") {
  auto log = read("cases/lc-qwen3-30b-a3b-16k-f16-mainline.log");
  CHECK(log.engine == "llama.cpp");
  CHECK(log.version == "b5622");
  CHECK(log.fork == "");
  CHECK(fig(log, "kv_bytes") == near(1536.0 * MiB));
  CHECK(fig(log, "k_bytes") == near(768.0 * MiB));
  CHECK(fig(log, "v_bytes") == near(768.0 * MiB));
  CHECK(fig(log, "kv_cells") == 16384);
  CHECK(fig(log, "kv_layers") == 48);
  CHECK(fig(log, "kv_seqs") == 1);
  CHECK(fig(log, "model_params") == near(30.53e9));
}

TEST_CASE("case lc-dscoder-v2-lite-512-f16: MLA disabled and n_lora_kv", "[engine_log]") {
  auto log = read("cases/lc-dscoder-v2-lite-512-f16.log");
  CHECK(log.engine == "llama.cpp");
  CHECK(log.fork == "ik_llama.cpp");
  CHECK(log.version == "");  // no build line in the quote
  CHECK(fig(log, "kv_bytes") == near(135.0 * MiB));
  CHECK(fig(log, "k_bytes") == near(81.0 * MiB));
  CHECK(fig(log, "v_bytes") == near(54.0 * MiB));
  CHECK(fig(log, "kv_lora_rank") == 512);
  CHECK(fig(log, "n_embd_head_k") == 192);
  CHECK(fig(log, "model_params") == near(15.706e9));
  CHECK(fig(log, "model_size_bytes") == near(9.649 * GiB));
  CHECK(fig(log, "bpw") == near(5.277));
}

TEST_CASE("case vllm-llama3-8b-h100-profile: the memory profiling table", "[engine_log]") {
  auto log = read("cases/vllm-llama3-8b-h100-profile.log");
  CHECK(log.engine == "vllm");
  CHECK(fig(log, "gpu_total_bytes") == near(79.22 * GiB));
  CHECK(fig(log, "gpu_memory_utilization") == near(0.90));
  CHECK(fig(log, "usable_bytes") == near(71.29 * GiB));
  CHECK(fig(log, "weights_bytes") == near(14.96 * GiB));
  CHECK(fig(log, "non_torch_bytes") == near(1.79 * GiB));
  CHECK(fig(log, "activation_bytes") == near(1.26 * GiB));
  CHECK(fig(log, "kv_available_bytes") == near(53.29 * GiB));
  // "53.29GiB": half a unit of the last digit, in bytes
  CHECK(log.find("kv_available_bytes")->resolution == near(0.005 * GiB));
  CHECK(log.find("kv_available_bytes")->text == "53.29GiB");
  CHECK(log.find("kv_available_bytes")->line == 10);
  CHECK(log.find("gpu_memory_utilization")->resolution == near(0.005));
  CHECK_FALSE(log.does_not_start);
}

TEST_CASE("case vllm-llama31-8b-3090-20k: V0 one-line profile and GPU blocks", "[engine_log]") {
  auto log = read("cases/vllm-llama31-8b-3090-20k.log");
  CHECK(log.engine == "vllm");
  // "Loading model weights took 14.9888 GB" is bytes / 2^30 (model_runner.py divides by float(2**30))
  CHECK(fig(log, "weights_bytes") == near(14.9888 * GiB));
  CHECK(log.find("weights_bytes")->resolution == near(0.00005 * GiB));
  CHECK(fig(log, "peak_torch_bytes") == near(17.06 * GiB));
  CHECK(fig(log, "non_torch_bytes") == near(0.35 * GiB));
  CHECK(fig(log, "kv_available_bytes") == near(3.81 * GiB));  // kv_cache_size=3.81GiB
  CHECK(fig(log, "gpu_total_bytes") == near(23.58 * GiB));
  CHECK(fig(log, "initial_memory_bytes") == near(15.34 * GiB));
  CHECK(fig(log, "gpu_blocks") == 1952);
  CHECK(fig(log, "cpu_blocks") == 2048);
  CHECK(fig(log, "max_concurrency") == near(1.56));
  CHECK(fig(log, "max_concurrency_tokens") == 20000);
  CHECK_FALSE(log.does_not_start);
}

TEST_CASE("case vllm-llama31-8b-3090-29k-fail: the engine says it cannot start", "[engine_log]") {
  auto log = read("cases/vllm-llama31-8b-3090-29k-fail.log");
  CHECK(log.engine == "vllm");
  CHECK(log.does_not_start);
  CHECK(log.start_error_line == 5);
  CHECK(log.start_error.rfind("The model's max seq len (29000)", 0) == 0);
  CHECK(fig(log, "max_model_len") == 29000);
  CHECK(fig(log, "max_tokens_in_kv") == 23648);
  CHECK(fig(log, "gpu_blocks") == 1478);
  CHECK(fig(log, "gpu_blocks") * 16 == fig(log, "max_tokens_in_kv"));  // 1478 x 16 = 23648
  CHECK(fig(log, "cpu_blocks") == 2048);
  CHECK(fig(log, "peak_torch_bytes") == near(17.98 * GiB));
  CHECK(fig(log, "kv_available_bytes") == near(2.89 * GiB));
  CHECK(fig(log, "max_concurrency") == near(0.82));
  CHECK(fig(log, "weights_bytes") == near(14.9888 * GiB));
}

TEST_CASE("case vllm-v1-blocks-to-tokens: thousands separators", "[engine_log]") {
  auto log = read("cases/vllm-v1-blocks-to-tokens.log");
  CHECK(log.engine == "vllm");
  CHECK(fig(log, "gpu_blocks") == 127626);
  CHECK(fig(log, "kv_tokens") == 2042016);  // "2,042,016" = 127626 x 16
  CHECK(fig(log, "kv_tokens") == 127626.0 * 16);
  CHECK(log.find("kv_tokens")->text == "2,042,016");
  CHECK(log.find("kv_tokens")->resolution == 0);
  CHECK(fig(log, "max_concurrency") == near(997.08));
  CHECK(fig(log, "max_concurrency_tokens") == 2048);
  // both "Maximum concurrency" lines are kept ("2048" and "2,048")
  auto tokens = all(log, "max_concurrency_tokens");
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[1]->value == 2048);
  CHECK(tokens[1]->text == "2,048");
}

TEST_CASE("case sglang-qwen35-moe-4090-hybrid: Mamba and KV pools", "[engine_log]") {
  auto log = read("cases/sglang-qwen35-moe-4090-hybrid.log");
  CHECK(log.engine == "sglang");
  // SGLang "GB" is GiB (GB = 1024**3 in its code)
  CHECK(fig(log, "avail_after_weights_bytes") == near(19.08 * GiB));
  CHECK(fig(log, "weights_bytes") == near(3.76 * GiB));
  CHECK(fig(log, "mamba_cache_size") == 82);
  CHECK(fig(log, "conv_state_bytes") == near(0.13 * GiB));
  CHECK(fig(log, "ssm_state_bytes") == near(7.29 * GiB));
  CHECK(fig(log, "kv_tokens") == 580364);
  CHECK(fig(log, "k_bytes") == near(4.15 * GiB));
  CHECK(fig(log, "v_bytes") == near(4.15 * GiB));
  CHECK(fig(log, "avail_after_pool_bytes") == near(4.02 * GiB));
  CHECK(fig(log, "max_total_num_tokens") == 580364);
  CHECK(fig(log, "available_gpu_mem_bytes") == near(3.63 * GiB));
  CHECK(fig(log, "chunked_prefill_size") == 2048);
  CHECK(fig(log, "max_running_requests") == 1);
  CHECK(fig(log, "context_len") == 8192);
  CHECK(log.find("kv_tokens")->scope == "TP0");
  CHECK(log.text.at("dtype") == "torch.bfloat16");
  CHECK(log.text.at("kv_dtype") == "torch.bfloat16");
}

TEST_CASE("case sglang-max-total-tokens-unknown: scheduler line alone", "[engine_log]") {
  auto log = read("cases/sglang-max-total-tokens-unknown.log");
  CHECK(log.engine == "sglang");
  CHECK(fig(log, "max_total_num_tokens") == 2086558);
  CHECK(fig(log, "max_prefill_tokens") == 16384);
  CHECK(fig(log, "available_gpu_mem_bytes") == near(17.22 * GiB));
  CHECK(fig(log, "max_running_requests") == 33);
  CHECK(fig(log, "context_len") == 256000);
  CHECK(log.find("max_total_num_tokens")->scope == "");
}

TEST_CASE("case trtllm-a100-bytes-to-tokens: 0.x C++ runtime lines", "[engine_log]") {
  auto log = read("cases/trtllm-a100-bytes-to-tokens.log");
  CHECK(log.engine == "trtllm");
  CHECK(fig(log, "kv_pool_bytes") == 69524783104.0);
  CHECK(log.find("kv_pool_bytes")->resolution == 0);  // printed in bytes: exact
  CHECK(fig(log, "kv_tokens") == 132608);
  CHECK(fig(log, "engine_bytes") == near(6683 * MiB));
  CHECK(log.find("engine_bytes")->resolution == near(0.5 * MiB));
  // 69524783104 / 132608 = 524288 = 32 layers x 4096 x 2 (K,V) x 2 B
  CHECK(fig(log, "kv_pool_bytes") / fig(log, "kv_tokens") == 32.0 * 4096 * 2 * 2);
}

// ---- assembled logs (tests/data/logs/README.md) --------------------------------------------------------

TEST_CASE("vLLM 0.10 full startup with ANSI colours and EngineCore prefixes", "[engine_log]") {
  auto log = read("vllm-0.10-llama31-8b-h100.log");
  CHECK(log.engine == "vllm");
  CHECK(log.version == "0.10.0");
  CHECK(fig(log, "weights_bytes") == near(14.9889 * GiB));
  CHECK(log.find("weights_bytes")->text == "14.9889 GiB");
  CHECK(fig(log, "kv_available_bytes") == near(54.72 * GiB));
  // Llama-3.1-8B bf16: 32 layers x 8 kv heads x 128 x 2 (K,V) x 2 B = 128 KiB per token, 2 MiB per 16-token block;
  // 54.72 GiB / 2 MiB = 28016 blocks -> 28016 x 16 tokens; 8192 tokens per request = 512 blocks
  CHECK(fig(log, "kv_tokens") == 28016.0 * 16);
  CHECK(fig(log, "max_concurrency_tokens") == 8192);
  CHECK(fig(log, "max_concurrency") == near(54.72));
  CHECK(28016.0 / 512 == Approx(54.72).margin(0.005));
  CHECK(fig(log, "cuda_graph_bytes") == near(0.45 * GiB));
  CHECK(log.find("kv_tokens")->scope == "DP0");  // (EngineCore_0 pid=1456)
  for (const auto& f : log.figures) {
    INFO(f.text);
    CHECK(f.text.find('\x1b') == std::string::npos);
  }
  // args: non-default args first, then what the config line adds
  CHECK(log.args_line == 3);
  CHECK(arg(log, "max_model_len") == "8192");
  CHECK(arg(log, "model") == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(arg(log, "model_tag") == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(arg(log, "enable_prefix_caching") == "True");
  CHECK(arg(log, "served_model_name") == "['llama-8b', 'llama']");
  CHECK(arg(log, "override_generation_config") == "{'temperature': 0.6, 'top_p': 0.9}");
  CHECK(arg(log, "dtype") == "bfloat16");  // config line "dtype=torch.bfloat16"
  CHECK(arg(log, "tensor_parallel_size") == "1");
  CHECK(arg(log, "enforce_eager") == "False");
  CHECK(arg(log, "kv_cache_dtype") == "auto");
  CHECK_FALSE(has_arg(log, "quantization"));  // None is left out
  CHECK_FALSE(has_arg(log, "compilation_config"));  // the config line gives only the deployment keys
  CHECK(log.warnings.empty());
}

TEST_CASE("vLLM newest format: format_gib figures and the combined size line", "[engine_log]") {
  auto log = read("vllm-main-qwen3-8b-h100.log");
  CHECK(log.engine == "vllm");
  CHECK(log.version == "0.26.0");
  CHECK(fig(log, "weights_bytes") == near(15.3 * GiB));
  // format_gib = str(round(x, 2)): "15.3" and "55.2" are rounded to two decimals
  CHECK(log.find("weights_bytes")->resolution == near(0.005 * GiB));
  CHECK(fig(log, "kv_available_bytes") == near(55.2 * GiB));
  CHECK(log.find("kv_available_bytes")->resolution == near(0.005 * GiB));
  // Qwen3-8B bf16: 36 layers x 8 x 128 x 2 x 2 B = 144 KiB per token; 16-token blocks of 2.25 MiB;
  // 55.2 GiB / 2.25 MiB = 25122 blocks; 32768 tokens per request = 2048 blocks
  CHECK(fig(log, "kv_tokens") == 25122.0 * 16);
  CHECK(fig(log, "max_concurrency_tokens") == 32768);
  CHECK(fig(log, "max_concurrency") == near(12.27));
  CHECK(25122.0 / 2048 == Approx(12.27).margin(0.005));
  CHECK(log.find("kv_tokens")->line == log.find("max_concurrency")->line);
  CHECK(fig(log, "cuda_graph_estimate_bytes") == near(0.52 * GiB));
  CHECK(fig(log, "cuda_graph_bytes") == near(0.49 * GiB));  // "CUDA graph pool memory: 0.49 GiB (actual)"
  CHECK(all(log, "cuda_graph_estimate_bytes").size() == 2);
  CHECK(arg(log, "model") == "Qwen/Qwen3-8B");  // given as model_tag only
  CHECK(arg(log, "max_model_len") == "32768");
  CHECK(log.find("kv_tokens")->scope == "");  // "(EngineCore pid=...)": no rank
}

TEST_CASE("vLLM TP2: interleaved ranks keep every scope and find gives rank 0", "[engine_log]") {
  auto log = read("vllm-0.10-tp2-interleaved.log");
  CHECK(log.engine == "vllm");
  auto kv = all(log, "kv_available_bytes");
  REQUIRE(kv.size() == 2);
  CHECK(kv[0]->scope == "rank 1");  // rank 1 printed first
  CHECK(kv[0]->value == near(61.41 * GiB));
  CHECK(kv[1]->scope == "rank 0");
  CHECK(fig(log, "kv_available_bytes") == near(61.32 * GiB));
  CHECK(log.find("kv_available_bytes")->scope == "rank 0");
  CHECK(log.find("cuda_graph_bytes")->scope == "rank 0");
  CHECK(fig(log, "cuda_graph_bytes") == near(0.40 * GiB));
  CHECK(all(log, "weights_bytes").size() == 2);
  // per rank 4 kv heads: 32 x 4 x 128 x 2 x 2 B = 64 KiB per token, 1 MiB per block; min over ranks:
  // 61.32 GiB / 1 MiB = 62791 blocks
  CHECK(fig(log, "kv_tokens") == 62791.0 * 16);
  CHECK(fig(log, "max_concurrency") == near(61.32));
  CHECK(arg(log, "tensor_parallel_size") == "2");
}

TEST_CASE("vLLM 0.7 read back from journald", "[engine_log]") {
  auto log = read("vllm-0.7-journald.log");
  CHECK(log.engine == "vllm");
  CHECK(log.version == "0.7.3");
  CHECK(fig(log, "weights_bytes") == near(14.9888 * GiB));  // the first: "Loading model weights took 14.9888 GB"
  CHECK(all(log, "weights_bytes").size() == 2);              // and "model weights take 14.99GiB"
  CHECK(fig(log, "gpu_total_bytes") == near(79.22 * GiB));
  CHECK(fig(log, "gpu_memory_utilization") == near(0.90));
  CHECK(fig(log, "usable_bytes") == near(71.30 * GiB));  // "... x gpu_memory_utilization (0.90) = 71.30GiB"
  CHECK(fig(log, "non_torch_bytes") == near(0.35 * GiB));
  CHECK(fig(log, "activation_bytes") == near(1.24 * GiB));
  CHECK(fig(log, "kv_available_bytes") == near(54.72 * GiB));
  CHECK(fig(log, "gpu_blocks") == 28016);  // "# cuda blocks"
  CHECK(fig(log, "cpu_blocks") == 4 * GiB / (2 * MiB));  // 4 GiB swap / 2 MiB per block
  CHECK(fig(log, "max_concurrency") == near(54.72));
  // args: Namespace(...) with None dropped and a <function ...> value kept as written
  CHECK(arg(log, "max_model_len") == "8192");
  CHECK(arg(log, "gpu_memory_utilization") == "0.9");
  CHECK(arg(log, "allowed_origins") == "['*']");
  CHECK(arg(log, "dispatch_function") == "<function serve at 0x7f3a2c1b9e40>");
  CHECK_FALSE(has_arg(log, "host"));
  CHECK(arg(log, "config") == "");
}

TEST_CASE("a file holding a restart is read from its last startup", "[engine_log]") {
  // the Qwen3-8B TP2 startup (up: "fired up and ready to roll", 21 lines) and then gpt-oss-120b's: its figures, its line
  // numbers in the file, and a warning that says so
  const std::string first = slurp("sglang-qwen3-8b-tp2.log"), second = slurp("sglang-gpt-oss-120b-hybrid-swa.log");
  const auto log = io::read_engine_log(first + second, "two.log");
  CHECK(log.engine == "sglang");
  CHECK(arg(log, "model_path") == "openai/gpt-oss-120b");
  CHECK(log.args_line == 22);
  CHECK(fig(log, "max_total_num_tokens") == near(27913));
  CHECK(fig(log, "full_layer_tokens") == near(27913));
  REQUIRE_FALSE(log.warnings.empty());
  CHECK(log.warnings.front() == "the file holds 2 startups (a restart after the server came up or failed): read the last, from line 22");
  // the lines that open a startup repeat inside one (a second API server) before it is up: one startup
  std::string doubled = first;
  doubled.insert(doubled.find('\n') + 1, first.substr(0, first.find('\n') + 1));
  const auto one = io::read_engine_log(doubled, "doubled.log");
  CHECK(arg(one, "model_path") == "Qwen/Qwen3-8B");
  CHECK(one.warnings.empty());
}

TEST_CASE("SGLang TP2: server_args and both ranks", "[engine_log]") {
  auto log = read("sglang-qwen3-8b-tp2.log");
  CHECK(log.engine == "sglang");
  CHECK(log.args_line == 1);
  CHECK(arg(log, "model_path") == "Qwen/Qwen3-8B");
  CHECK(arg(log, "tp_size") == "2");
  CHECK(arg(log, "mem_fraction_static") == "0.85");
  CHECK(arg(log, "json_model_override_args") == "{}");
  CHECK_FALSE(has_arg(log, "quantization"));
  CHECK(fig(log, "mem_fraction_static") == near(0.85));
  auto avail = all(log, "avail_after_weights_bytes");
  REQUIRE(avail.size() == 2);
  CHECK(avail[0]->scope == "TP1");
  CHECK(fig(log, "avail_after_weights_bytes") == near(70.83 * GiB));
  CHECK(log.find("avail_after_weights_bytes")->scope == "TP0");
  CHECK(fig(log, "weights_bytes") == near(7.67 * GiB));
  CHECK(fig(log, "avail_before_weights_bytes") == near(78.50 * GiB));
  // rest = 70.83 - 78.50 x (1 - 0.85) GiB; Qwen3-8B per rank: 4 kv heads x 128 x 36 layers x 2 x 2 B per token
  const double cell = 4.0 * 128 * 36 * 2 * 2;
  const double tokens = std::floor((70.83 - 78.50 * (1 - 0.85)) * GiB / cell);
  CHECK(fig(log, "kv_tokens") == tokens);
  CHECK(fig(log, "max_total_num_tokens") == tokens);
  // K: (tokens + 1 padded page) x 4 x 128 x 2 B x 36 layers, printed %.2f GB
  CHECK(fig(log, "k_bytes") == Approx((tokens + 1) * 4 * 128 * 2 * 36).margin(0.005 * GiB));
  CHECK(fig(log, "avail_after_pool_bytes") == near(11.77 * GiB));
  CHECK(fig(log, "cuda_graph_bytes") == near(0.63 * GiB));
  CHECK(all(log, "kv_tokens").size() == 2);
  CHECK(fig(log, "context_len") == 40960);
  CHECK(log.text.at("arch") == "Qwen3ForCausalLM");
}

TEST_CASE("TensorRT-LLM 1.x trtllm-serve log", "[engine_log]") {
  auto log = read("trtllm-1.0-serve-llama31-8b.log");
  CHECK(log.engine == "trtllm");
  CHECK(log.version == "1.0.0");
  CHECK(fig(log, "weights_bytes") == near(14.97 * GiB));
  CHECK(fig(log, "activation_bytes") == near(1.64 * GiB));
  CHECK(fig(log, "peak_bytes") == near(18.19 * GiB));
  CHECK(fig(log, "kv_available_bytes") == near(55.33 * GiB));
  CHECK(fig(log, "free_fraction") == near(0.9));
  CHECK(fig(log, "kv_bytes_per_token") == 32.0 * 8 * 128 * 2 * 2);  // Llama-3.1-8B bf16
  CHECK(fig(log, "gpu_total_bytes") == near(79.11 * GiB));
  CHECK(fig(log, "gpu_blocks") == 14164);
  CHECK(fig(log, "tokens_per_block") == 32);
  // the temporary profiling pool comes first, the real pool last: (79.11 - 18.19 + 0.56) x 0.9 = 55.33 GiB,
  // / 131072 B per token, down to whole 32-token blocks = 14164 x 32 tokens
  auto tokens = all(log, "kv_tokens");
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[0]->value == 4608);
  CHECK(tokens[1]->value == 14164.0 * 32);
  auto pools = all(log, "kv_pool_bytes");
  REQUIRE(pools.size() == 2);
  CHECK(pools[1]->value == near(55.33 * GiB));
  CHECK(pools[1]->value == Approx(14164.0 * 32 * 131072).margin(0.005 * GiB));
}

TEST_CASE("llama-server recent build: iSWA caches and per-device buffers", "[engine_log]") {
  auto log = read("llama-server-b7376-gemma3-4b.log");
  CHECK(log.engine == "llama.cpp");
  CHECK(log.version == "b7376");
  CHECK(log.fork == "");
  CHECK(fig(log, "n_ctx") == 4096);
  CHECK(fig(log, "n_ctx_seq") == 4096);
  CHECK(fig(log, "n_seq_max") == 1);
  CHECK(fig(log, "n_batch") == 2048);
  CHECK(fig(log, "n_ubatch") == 512);
  CHECK(fig(log, "kv_unified") == 1);
  CHECK(log.find("flash_attn") == nullptr);
  CHECK(log.text.at("flash_attn") == "auto");
  CHECK(fig(log, "n_swa") == 1024);
  CHECK(fig(log, "kv_cells_nonswa") == 4096);
  // SWA cells = PAD(min(4096, n_swa x 1 + n_ubatch), 256) = 1024 + 512
  CHECK(fig(log, "kv_cells_swa") == 1024 + 512);
  // Gemma-3-4B: 4 kv heads x 256 x f16 = 2048 B per cell per layer, for K and for V;
  // 5 full layers x 4096 cells and 29 SWA layers x 1536 cells
  const double row = 4 * 256 * 2;
  auto kv = all(log, "kv_bytes");
  REQUIRE(kv.size() == 2);
  CHECK(kv[0]->value == near(4096 * 5 * row * 2));
  CHECK(kv[1]->value == near(1536 * 29 * row * 2));
  CHECK(log.sum("kv_bytes") == near((4096 * 5 + 1536 * 29) * row * 2));
  CHECK(log.sum("k_bytes") == near((4096 * 5 + 1536 * 29) * row));
  // 20 of 34 layers on CUDA0 (layers 14..33): full layers 17, 23, 29 and 17 SWA layers there
  CHECK(log.sum("kv_buffer_bytes") == near((4096 * 5 + 1536 * 29) * row * 2));
  double cuda = 0, cpu = 0;
  for (const auto* f : all(log, "kv_buffer_bytes")) (f->scope == "CUDA0" ? cuda : cpu) += f->value;
  CHECK(cuda == near((4096 * 3 + 1536 * 17) * row * 2));
  CHECK(cpu == near((4096 * 2 + 1536 * 12) * row * 2));
  CHECK(fig(log, "gpu_layers") == 20);
  CHECK(fig(log, "total_layers") == 35);
  CHECK(fig(log, "compute_buffer_bytes") == near(517.12 * MiB));
  CHECK(log.find("compute_buffer_bytes")->scope == "CUDA0");
  CHECK(fig(log, "model_buffer_bytes") == near(1112.41 * MiB));
  CHECK(all(log, "model_buffer_bytes")[1]->scope == "CPU_Mapped");
  CHECK(fig(log, "output_buffer_bytes") == near(1.00 * MiB));
  CHECK(log.find("output_buffer_bytes")->scope == "CUDA_Host");
  CHECK(fig(log, "kv_seqs") == 1);
  CHECK(fig(log, "kv_streams") == 1);
  CHECK(fig(log, "model_size_bytes") == near(2.31 * GiB));  // "file size   = 2.31 GiB (5.11 BPW)"
  CHECK(fig(log, "bpw") == near(5.11));
  CHECK(log.text.at("arch") == "gemma3");
  CHECK(log.text.at("file_type") == "Q4_K - Medium");
  CHECK(log.find("kv_buffer_bytes")->resolution == near(0.005 * MiB));
}

TEST_CASE("llama.cpp 2024: llm_load_print_meta and KV self size", "[engine_log]") {
  auto log = read("llama-cli-b3405-llama3-8b.log");
  CHECK(log.engine == "llama.cpp");
  CHECK(log.version == "b3405");
  CHECK(log.fork == "");
  // 8192 cells x 32 layers x 8 kv heads x 128 x f16
  CHECK(fig(log, "k_bytes") == near(8192.0 * 32 * 8 * 128 * 2));
  CHECK(fig(log, "kv_bytes") == near(1024.0 * MiB));
  CHECK(fig(log, "kv_buffer_bytes") == near(1024.0 * MiB));
  CHECK(fig(log, "n_ctx_train") == 8192);
  CHECK(fig(log, "model_size_bytes") == near(7.95 * GiB));
  CHECK(fig(log, "gpu_layers") == 33);
  // old "llm_load_tensors: CUDA0 buffer size" is the model buffer
  auto model = all(log, "model_buffer_bytes");
  REQUIRE(model.size() == 2);
  CHECK(model[1]->scope == "CUDA0");
  CHECK(model[1]->value == near(7605.33 * MiB));
  CHECK(log.sum("compute_buffer_bytes") == near((560.00 + 24.01) * MiB));
}

TEST_CASE("a last line cut mid-number is ignored with a warning", "[engine_log]") {
  auto log = read("vllm-cut-off.log");
  CHECK(log.engine == "vllm");
  CHECK(log.find("kv_tokens") == nullptr);
  CHECK(fig(log, "kv_available_bytes") == near(54.72 * GiB));
  REQUIRE(log.warnings.size() == 1);
  CHECK(log.warnings[0] == "line 15: cut off mid-line; ignored");

  auto cut = text("INFO Available KV cache memory: 54.7");
  CHECK(cut.find("kv_available_bytes") == nullptr);
  REQUIRE(cut.warnings.size() == 1);
  CHECK(cut.warnings[0] == "line 1: cut off mid-line; ignored");
  // a cut just after a number's separator: "448," of "448,256 tokens" is not 448 tokens, "54." of "54.72x" not 54
  for (const char* t : {"INFO GPU KV cache size: 448,", "INFO Maximum concurrency for 8,192 tokens per request: 54."}) {
    auto sep = text(t);
    INFO(t);
    CHECK(sep.find("kv_tokens") == nullptr);
    CHECK(sep.find("max_concurrency") == nullptr);
    REQUIRE(sep.warnings.size() == 1);
    CHECK(sep.warnings[0] == "line 1: cut off mid-line; ignored");
  }
  // complete last lines without a newline are read (the case quotes end that way)
  CHECK(text("GPU KV cache size: 448,256 tokens").find("kv_tokens")->value == 448256);
  CHECK(text("Available KV cache memory: 54.72 GiB").warnings.empty());
  // the same cut line followed by a newline is a complete line
  CHECK(text("x\nAvailable KV cache memory: 54.7\n").warnings.empty());
}

TEST_CASE("empty and binary input are errors", "[engine_log]") {
  CHECK(error_of("") == "server.log: is empty; pass the engine's startup log (its stdout and stderr saved to a file)");
  CHECK(error_of(" \n\t\r\n") .find("is empty") != std::string::npos);
  CHECK_THROWS_AS(read("empty.log"), InputError);
  const std::string nul("INFO 07-24 10:00:37 Available KV cache memory: 1 GiB\n\0\0\0", 56);
  CHECK(error_of(nul) == "server.log: is binary, not a text log; pass the engine's startup log as text");
  std::string controls;
  for (int i = 0; i < 1000; ++i) controls += (i % 4 == 0) ? '\x01' : 'a';
  CHECK(error_of(controls).find("binary") != std::string::npos);
  std::string latin;
  for (int i = 0; i < 1000; ++i) latin += (i % 3 == 0) ? '\xe9' : 'a';  // not UTF-8 in bulk
  CHECK(error_of(latin).find("binary") != std::string::npos);
  // a few odd bytes and ESC sequences are text
  CHECK(error_of("caf\xc3\xa9 \x1b[1mbold\x1b[0m and one bad byte \xff\n") == "(no error)");
}

TEST_CASE("another program's output: no engine and no figures", "[engine_log]") {
  auto log = read("make-build.log");
  CHECK(log.engine == "");
  CHECK(log.version == "");
  CHECK(log.figures.empty());
  CHECK(log.args.empty());
  CHECK_FALSE(log.does_not_start);
}

// ---- single lines --------------------------------------------------------------------------------------

TEST_CASE("prefixes: journald ISO stamps TRT and SGLang DP ranks", "[engine_log]") {
  auto j = text("Dec  1 12:00:00 host vllm[99]: INFO 12-01 12:00:00 [gpu_worker.py:255] Available KV cache memory: "
                "2.50 GiB\n");
  CHECK(j.find("kv_available_bytes")->value == near(2.5 * GiB));
  CHECK(j.find("kv_available_bytes")->scope == "");
  auto iso = text("2025-09-01T10:00:00.123456789Z (Worker_TP1 pid=7) INFO 09-01 10:00:00 [x.py:1] GPU KV cache "
                  "size: 16 tokens\n");
  CHECK(iso.find("kv_tokens")->scope == "TP1");
  auto sg = text("[2025-09-01 10:00:00 DP1 TP3] KV Cache is allocated. #tokens: 1000, KV size: 0.07 GB\n");
  CHECK(sg.find("kv_tokens")->scope == "DP1 TP3");
  CHECK(sg.find("kv_bytes")->value == near(0.07 * GiB));  // MLA: one latent pool
  CHECK(sg.find("k_bytes") == nullptr);
  CHECK(sg.find("v_bytes") == nullptr);
  auto trt = text("[TensorRT-LLM][RANK 1][INFO] Number of blocks in KV cache primary pool: 7\n");
  CHECK(trt.engine == "trtllm");
  CHECK(trt.find("gpu_blocks")->scope == "rank 1");
  auto ray = text("(RayWorkerWrapper pid=3918397) INFO 03-29 01:24:36 worker.py:272] model weights take 15.63GiB\n");
  CHECK(ray.find("weights_bytes")->scope == "pid 3918397");
  // the first scope that is rank 0 wins; else the first in file order
  auto order = text("(VllmWorker rank=2 pid=1) Available KV cache memory: 3.00 GiB\n"
                    "(VllmWorker rank=1 pid=2) Available KV cache memory: 2.00 GiB\n");
  CHECK(order.find("kv_available_bytes")->value == near(3 * GiB));
}

TEST_CASE("vLLM failure and limit messages", "[engine_log]") {
  auto v1 = text("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV "
                 "cache is needed, which is larger than the available KV cache memory (9.25 GiB). Based on the "
                 "available memory, the estimated maximum model length is 75776. Try increasing "
                 "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n");
  CHECK(v1.does_not_start);
  CHECK(v1.find("max_model_len")->value == 131072);
  CHECK(v1.find("kv_needed_bytes")->value == near(16.00 * GiB));
  CHECK(v1.find("kv_available_bytes")->value == near(9.25 * GiB));
  CHECK(v1.find("estimated_max_model_len")->value == 75776);
  CHECK(v1.find("gpu_memory_utilization") == nullptr);  // "`gpu_memory_utilization`" is advice, not a value
  auto fit = text("INFO Auto-fit max_model_len: reduced from 131072 to 40960 to fit in available GPU memory (5.0 GiB "
                  "available for KV cache)\n");
  CHECK(fit.find("auto_fit_max_model_len")->value == 40960);
  CHECK(fit.find("kv_available_bytes")->value == near(5.0 * GiB));
  CHECK_FALSE(fit.does_not_start);
  auto fixed = text("INFO Initial free memory 78.50 GiB, reserved 20.00 GiB memory for KV Cache as specified by "
                    "kv_cache_memory_bytes config and skipped memory profiling.\n");
  CHECK(fixed.find("kv_cache_memory_bytes")->value == near(20.0 * GiB));
  auto none = text("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`\n");
  CHECK(none.does_not_start);
  auto graphs = text("INFO CUDA graph pool memory: 0.49 GiB (actual), 0.52 GiB (estimated), difference: 0.03 GiB\n");
  CHECK(graphs.find("cuda_graph_bytes")->value == near(0.49 * GiB));
  CHECK(graphs.find("cuda_graph_estimate_bytes")->value == near(0.52 * GiB));
  auto ray = text("INFO model weights take 15.63GiB; non_torch_memory takes 0.81GiB; PyTorch activation peak memory "
                  "takes 3.52GiB; the rest of the memory reserved for KV Cache is 11.57GiB.The engine can allocate "
                  "12225 GPU blocks, 4228 CPU blocks on PP Rank 1 TP Rank 0.\n");
  CHECK(ray.find("gpu_blocks")->value == 12225);
  CHECK(ray.find("cpu_blocks")->value == 4228);
  CHECK(ray.find("kv_available_bytes")->value == near(11.57 * GiB));
  CHECK(text("vllm==0.9.2\n").version == "0.9.2");
}

TEST_CASE("SGLang and TRT-LLM single lines", "[engine_log]") {
  auto swa = text("[2025-09-01 10:00:00 TP0] Use Sliding window memory pool. full_layer_tokens=200000, "
                  "swa_layer_tokens=160000\n");
  CHECK(swa.find("full_layer_tokens")->value == 200000);
  CHECK(swa.find("swa_layer_tokens")->value == 160000);
  // HiCache host memory is the one decimal GB (1e9)
  auto host = text("[2025-09-01 10:00:00] Allocating 40.00 GB host memory for hierarchical KV cache.\n");
  CHECK(host.find("hicache_host_bytes")->value == near(40.00e9));
  const auto versioned = text("sglang==0.5.2\nKV Cache is allocated. #tokens: 5, K size: 0.01 GB, V size: 0.01 GB\n");
  CHECK(versioned.version == "0.5.2");
  auto adj = text("[TensorRT-LLM][WARNING] maxAttentionWindow and maxSequenceLen are too large for at least one "
                  "sequence to fit in kvCache. they are reduced to 60672\n");
  CHECK(adj.find("max_seq_len_adjusted")->value == 60672);
  auto adj2 = text("[12/01/2025-10:00:00] [TRT-LLM] [W] Adjusted max_seq_len to 40000\n");
  CHECK(adj2.find("max_seq_len_adjusted")->value == 40000);
  auto ctx = text("[TensorRT-LLM][INFO] [MemUsageChange] Allocated 262.50 MiB for execution context memory.\n");
  CHECK(ctx.find("activation_bytes")->value == near(262.50 * MiB));
  auto total = text("[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.10 "
                    "GiB, available: 69.60 GiB\n");
  CHECK(total.find("gpu_total_bytes")->value == near(79.10 * GiB));
  CHECK(total.find("kv_available_bytes")->value == near(69.60 * GiB));
}

TEST_CASE("llama.cpp recurrent state and old iSWA lines", "[engine_log]") {
  auto rec = text("llama_memory_recurrent:      CUDA0 RS buffer size =    16.00 MiB\n"
                  "llama_memory_recurrent: size =   16.00 MiB (     1 cells,  32 layers,  1 seqs), R (f32):    4.00 "
                  "MiB, S (f32):   12.00 MiB\n");
  CHECK(rec.find("recurrent_r_bytes")->value == near(4 * MiB));
  CHECK(rec.find("recurrent_s_bytes")->value == near(12 * MiB));
  CHECK(rec.find("rs_buffer_bytes")->scope == "CUDA0");
  CHECK(rec.find("kv_bytes") == nullptr);
  auto seqs = text("llama_kv_cache: size =  576.00 MiB (  4608 cells,  32 layers,  4/1 seqs), K (q8_0):  306.00 MiB, "
                   "V (q8_0):  270.00 MiB\n");
  CHECK(seqs.find("kv_seqs")->value == 4);  // "%2u/%u seqs": n_seq_max / n_stream
  CHECK(seqs.find("kv_streams")->value == 1);
  CHECK(seqs.text.at("type_k") == "q8_0");
  auto fa = text("llama_context: flash_attn    = enabled\nllama_context: kv_unified    = false\n");
  CHECK(fa.find("flash_attn")->value == 1);
  CHECK(fa.find("kv_unified")->value == 0);
}

TEST_CASE("args: Python literals with quotes escapes and nesting", "[engine_log]") {
  auto log = text("INFO non-default args: {'model': 'org/m', 'chat_template': 'a, b \\'c\\' {d}', 'x': {'y': [1, 2], "
                  "'z': (3, 4)}, 'n': None, 'quoted': \"it's\", 'flag': True}\n");
  CHECK(arg(log, "model") == "org/m");
  CHECK(arg(log, "chat_template") == "a, b 'c' {d}");
  CHECK(arg(log, "x") == "{'y': [1, 2], 'z': (3, 4)}");
  CHECK_FALSE(has_arg(log, "n"));
  CHECK(arg(log, "quoted") == "it's");
  CHECK(arg(log, "flag") == "True");
  CHECK(log.warnings.empty());
  auto open = text("INFO non-default args: {'model': 'org/m', 'max_model_len': 4096, 'x': {'y': [1, 2\n");
  CHECK(arg(open, "model") == "org/m");
  CHECK(arg(open, "max_model_len") == "4096");
  CHECK_FALSE(has_arg(open, "x"));
  REQUIRE(open.warnings.size() == 1);
  CHECK(open.warnings[0] == "line 1: args not closed; read the complete entries");
}

TEST_CASE("hostile input: long lines huge numbers and brackets", "[engine_log]") {
  std::string longline = "GPU KV cache size: 5 tokens " + std::string(200000, 'x') + "\nGPU KV cache size: 7 tokens\n";
  auto log = text(longline);
  CHECK(all(log, "kv_tokens").size() == 2);
  REQUIRE_FALSE(log.warnings.empty());
  CHECK(log.warnings[0] == "line 1: longer than 65536 bytes; read the first 65536");
  auto huge = text("GPU KV cache size: 1" + std::string(400, '0') + " tokens\nAvailable KV cache memory: 1e999 GiB\n");
  CHECK(huge.figures.empty());
  CHECK(huge.warnings.size() == 2);
  CHECK(huge.warnings[0].find("is out of range; ignored") != std::string::npos);
  // finite but past any GPU's figure: 10^23 blocks would wrap to negative bytes, 10^14 GiB is past 2^63 bytes
  auto wraps = text("GPU blocks: 99999999999999999999999, # CPU blocks: 2048\nAvailable KV cache memory: 1e14 GiB\n");
  CHECK(all(wraps, "gpu_blocks").empty());
  CHECK(all(wraps, "kv_available_bytes").empty());
  CHECK(wraps.warnings.size() == 2);
  auto negative = text("GPU blocks: -1952, # CPU blocks: 2048\n");
  CHECK(all(negative, "gpu_blocks").empty());
  CHECK(negative.warnings.size() == 1);
  std::string brackets = "INFO non-default args: {'a': " + std::string(100000, '[') + "\n";
  CHECK_NOTHROW(text(brackets));
  std::string many;
  for (int i = 0; i < 5000; ++i) many += "(EngineCore_0 pid=1 \x1b[ K size: . ,,, = :: 1,2,3,,, GiB\n";
  CHECK_NOTHROW(text(many));
  // many warnings are capped
  std::string lots;
  for (int i = 0; i < 300; ++i) lots += "GPU KV cache size: 1e999 tokens\n";
  auto capped = text(lots);
  CHECK(capped.warnings.size() == 101);
  CHECK(capped.warnings.back() == "more warnings left out");
}
