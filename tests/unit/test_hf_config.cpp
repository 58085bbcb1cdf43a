// config.json ingestion: family rules, wrappers, defaults, and the exact error lines bad input gets.
#include <catch2/catch.hpp>

#include <filesystem>

#include "helpers.hpp"
#include "kvplan/core/weights.hpp"

using namespace kvplan;

namespace {

std::string error_of(const std::string& text) {
  try {
    kvtest::from_text(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kLlama = R"({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,
  "num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"max_position_embeddings":8192})";

std::string with(const std::string& key, const std::string& value) {
  std::string s = kLlama;
  const auto pos = s.find("\"" + key + "\":");
  if (pos == std::string::npos) return s.substr(0, s.size() - 1) + ",\"" + key + "\":" + value + "}";
  const auto start = pos + key.size() + 3;
  const auto end = s.find_first_of(",}", start);
  return s.substr(0, start) + value + s.substr(end);
}

}  // namespace

TEST_CASE("a plain llama config reads", "[hf]") {
  const auto m = kvtest::from_text(kLlama);
  CHECK(m.layers.size() == 32);
  CHECK(m.layers[0].kv_heads == 8);
  CHECK(m.layers[0].k_head_dim == 4096 / 32);
  CHECK(m.dtype == ElemFormat::bf16);  // no torch_dtype: bf16
  CHECK_FALSE(m.dtype_from_config);
  CHECK(m.warnings.empty());
}

TEST_CASE("missing num_key_value_heads means MHA", "[hf]") {
  std::string s = kLlama;
  s.erase(s.find("\"num_key_value_heads\":8,"), std::string("\"num_key_value_heads\":8,").size());
  const auto m = kvtest::from_text(s);
  CHECK(m.layers[0].kv_heads == 32);
  // GQA with kv_heads == heads equals the MHA formula 2 x hidden x layers x bytes
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 2 * 4096 * 32 * 2);
}

TEST_CASE("multimodal wrappers read the nested text_config", "[hf]") {
  const auto g = kvtest::load("gemma-3-27b-it");
  CHECK(g.model_type == "gemma3_text");
  CHECK(g.layers.size() == 62);
  CHECK(g.layers[0].k_head_dim == 128);  // 5376 / 32 = 168, head_dim 128
  CHECK(g.vision.present);
  // sparse text_config: vocab_size comes from Gemma3TextConfig's default, and says so
  CHECK(g.vocab == 262208);
  bool noted = false;
  for (const auto& n : g.notes) noted |= n.find("text_config.vocab_size absent") != std::string::npos;
  CHECK(noted);

  const auto llava = kvtest::load("llava-1.5-7b");  // text_config without sizes: LlamaConfig defaults
  CHECK(llava.layers.size() == 32);
  CHECK(kvtest::kv(llava, 1, ElemFormat::f16, ElemFormat::f16).kv_bytes_per_token == 32 * 2 * 4096 * 2);

  const auto vl = kvtest::load("qwen2.5-vl-7b-instruct");  // flat layout: text keys at the top
  CHECK(vl.layers.size() == 28);
  CHECK(vl.layers[0].kv == KvKind::full);
  CHECK(vl.vision.present);
}

TEST_CASE("unknown model_type falls back to the generic keys with a warning", "[hf]") {
  const auto m = kvtest::from_text(with("model_type", "\"my_new_arch\""));
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0].rfind("unknown model_type 'my_new_arch': assumed", 0) == 0);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 32 * 2 * 8 * 128 * 2);
}

TEST_CASE("an unknown model_type whose config changes the cache or the weights is refused, naming the key", "[hf][errors]") {
  // the generic reading takes every layer as full attention over num_key_value_heads and no experts: Step-3's
  // num_attention_groups 1 would be priced as 8 KV heads here (8x the cache), 8 routed experts as one MLP
  const auto unknown_with = [](const std::string& key, const std::string& value) {
    const std::string s = with("model_type", "\"my_new_arch\"");
    return s.substr(0, s.size() - 1) + ",\"" + key + "\":" + value + "}";
  };
  const std::string lead = "config.json: /num_attention_groups: model_type 'my_new_arch' is not one kvplan knows, and this key sets KV head groups";
  CHECK(error_of(unknown_with("num_attention_groups", "1")).rfind(lead, 0) == 0);
  CHECK(error_of(unknown_with("num_attention_groups", "1")).find("kvplan reads it for these model_types only: ") != std::string::npos);
  CHECK(error_of(unknown_with("num_local_experts", "8")).rfind("config.json: /num_local_experts: model_type 'my_new_arch'", 0) == 0);
  CHECK(error_of(unknown_with("kv_lora_rank", "512")).rfind("config.json: /kv_lora_rank: ", 0) == 0);
  // a switch that is off, or one expert, changes nothing: read as before
  CHECK(kvtest::kv(kvtest::from_text(unknown_with("use_cla", "false")), 1).kv_bytes_per_token == 32 * 2 * 8 * 128 * 2);
  CHECK(kvtest::kv(kvtest::from_text(unknown_with("num_local_experts", "1")), 1).kv_bytes_per_token == 32 * 2 * 8 * 128 * 2);
  // a known model_type (llama here) is read by its own family's rules, not refused
  CHECK_NOTHROW(kvtest::from_text(with("num_local_experts", "8")));
}

TEST_CASE("Infinity and NaN in a config are read", "[hf]") {
  const auto m = kvtest::from_text(with("router_aux_loss_coef", "NaN").substr(0) );
  CHECK(m.layers.size() == 32);
  CHECK(kvtest::from_text(with("rope_theta", "Infinity")).layers.size() == 32);
}

TEST_CASE("bad configs give one line naming the path and the fix", "[hf][errors]") {
  CHECK(error_of(with("num_key_value_heads", "0")) ==
        "config.json: /num_key_value_heads: expected integer in [1, 1048576], got 0");
  CHECK(error_of(with("num_key_value_heads", "5")) ==
        "config.json: /num_key_value_heads: num_attention_heads 32 is not divisible by 5 KV heads; fix the head counts");
  CHECK(error_of(with("num_hidden_layers", "10000000")) ==
        "config.json: /num_hidden_layers: expected integer in [1, 100000], got 10000000");
  CHECK(error_of(with("hidden_size", "\"4096\"")) ==
        "config.json: /hidden_size: expected integer in [1, 16777216], got string \"4096\"");
  CHECK(error_of(with("hidden_size", "-4096")) ==
        "config.json: /hidden_size: expected integer in [1, 16777216], got -4096");
  CHECK(error_of(with("hidden_size", "NaN")) == "config.json: /hidden_size: expected integer in [1, 16777216], got NaN");
  CHECK(error_of(with("hidden_size", "4096.5")) ==
        "config.json: /hidden_size: expected integer in [1, 16777216], got 4096.5");
  CHECK(error_of(with("torch_dtype", "\"float12\"")) ==
        "config.json: /torch_dtype: unknown dtype \"float12\"; use float32, float16 or bfloat16");
  CHECK(error_of(R"({"model_type":"llama","hidden_size":4096})") ==
        "config.json: /num_hidden_layers: missing (or n_layer, num_layers); expected integer in [1, 100000]; add it to the config");
  CHECK(error_of("[1,2]") == "config.json: expected a JSON object at the top level; pass a config.json");
  CHECK(error_of(with("hidden_size", "4100")) ==
        "config.json: /hidden_size: hidden_size 4100 is not divisible by num_attention_heads 32 and no head_dim is given; add head_dim");
  CHECK(error_of(with("layer_types", "[\"full_attention\"]")) ==
        "config.json: /layer_types: has 1 entries but num_hidden_layers is 32; make them agree");
  CHECK(error_of(R"({"model_type":"nemotron_h","hidden_size":64,"num_hidden_layers":2,"vocab_size":10,
      "num_attention_heads":2,"hybrid_override_pattern":"MQ","mamba_num_heads":2,"mamba_head_dim":8,"ssm_state_size":4})") ==
        "config.json: /hybrid_override_pattern: unknown block 'Q' at layer 1; use M, *, - or E");
}

TEST_CASE("a directory without config.json is an error naming it", "[hf][errors]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "kvplan-test-empty-snapshot";
  fs::create_directories(dir);
  try {
    io::resolve_config_path(dir.string());
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == dir.string() + ": directory has no config.json; pass a model snapshot folder or the config.json itself");
  }
  fs::remove_all(dir);
}

TEST_CASE("a gptj config reads: MHA without attention biases and a plain 4 x MLP", "[hf]") {
  // EleutherAI/gpt-j-6b: n_embd 4096, n_layer 28, n_head 16, n_inner null (4 x n_embd), vocab 50400
  const auto m = kvtest::from_text(R"({"model_type":"gptj","n_embd":4096,"n_layer":28,"n_head":16,"n_inner":null,
    "n_positions":2048,"rotary_dim":64,"vocab_size":50400,"torch_dtype":"float16"})");
  REQUIRE(m.layers.size() == 28);
  CHECK(m.layers[0].kv_heads == 16);
  CHECK(m.layers[0].k_head_dim == 256);
  CHECK(m.layers[0].mlp == MlpKind::plain);
  CHECK(m.layers[0].intermediate == 16384);
  CHECK_FALSE(m.layers[0].qkv_bias);
  CHECK(m.max_context == 2048);
  // per layer q, k, v, out 4 x 4096^2 = 67,108,864 and fc_in / fc_out 2 x 4096 x 16,384 + biases 16,384 + 4096:
  // 201,347,072 without norms; the KV cache 28 x 2 x 4096 x 2 B = 458,752 B per token
  const ParamCount pc = count_params(m);
  long long attn = 0, mlp = 0;
  for (const auto& p : pc.parts) {
    if (p.name == "attention") attn = p.total();
    if (p.name == "mlp") mlp = p.total();
  }
  CHECK(attn == 28LL * 4 * 4096 * 4096);
  CHECK(mlp == 28LL * (2 * 4096 * 16384 + 16384 + 4096));
}
