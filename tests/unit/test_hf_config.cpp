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
        "config.json: /num_hidden_layers: missing (or n_layer, num_layers, n_layers); expected integer in [1, 100000]; add it to the config");
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

// Granite 4.0-H-Small (tests/data/configs/granite-4.0-h-small.json; keys as ibm-granite/granite-4.0-h-small's
// config.json publishes them, quoted by third-party fixtures: the Hub is out of reach here). IBM's model card: 32 B
// parameters, 9 B active.
TEST_CASE("granitemoehybrid: Mamba2 and attention layers by layer_types, experts beside a shared MLP", "[hf]") {
  const auto m = kvtest::load("granite-4.0-h-small");
  REQUIRE(m.layers.size() == 40);
  int attn = 0;
  for (const auto& l : m.layers) attn += l.kv == KvKind::full;
  CHECK(attn == 4);
  CHECK(m.layers[5].kv == KvKind::full);
  CHECK(m.layers[0].kv == KvKind::ssm);
  const auto kv = kvtest::kv(m, 1);
  CHECK(kv.kv_bytes_per_token == 4 * 2 * 8 * (4096 / 32) * 2);  // 4 attention layers, head_dim = hidden / heads
  // vLLM mamba2_state_shape: conv (d_conv - 1) x (expand x hidden + 2 x groups x d_state), ssm heads x head_dim x d_state
  const i64 conv = 3 * (2 * 4096 + 2 * 1 * 128), ssm = 128 * 64 * 128;
  CHECK(kv.state_bytes == 36 * (conv + ssm) * 2);
  const auto p = count_params(m);
  const i64 h = 4096, attn_p = h * 4096 + 2 * h * 1024 + 4096 * h;
  const i64 conv_dim = 8192 + 256, mamba_p = h * (8192 + conv_dim + 128) + 8192 * h + conv_dim * 4 + conv_dim + 3 * 128 + 8192;
  const i64 experts = 72 * 3 * h * 768, router = 72 * h, shared = 3 * h * 1536, norms = 2 * h;
  const i64 total = 100352 * h + 4 * attn_p + 36 * mamba_p + 40 * (experts + router + shared + norms) + h;  // tied head
  CHECK(p.total == total);
  CHECK(p.active == total - 40 * (72 - 10) * 3 * h * 768);
  CHECK(std::abs(double(p.total) / 32e9 - 1) < 0.02);
  CHECK(std::abs(double(p.active) / 9e9 - 1) < 0.03);
}

TEST_CASE("granitemoehybrid without experts: the shared MLP is the dense MLP (Granite 4.0-H-Micro)", "[hf]") {
  const auto m = kvtest::load("granite-4.0-h-micro");
  for (const auto& l : m.layers) {
    CHECK(l.mlp == MlpKind::gated);
    CHECK(l.intermediate == 8192);
  }
  const auto p = count_params(m);
  CHECK(p.total == p.active);
  CHECK(std::abs(double(p.total) / 3.19e9 - 1) < 0.01);  // the model card's 3B (3.19 B on the Hub)
  // mamba_n_heads x mamba_d_head must equal mamba_expand x hidden (GraniteMoeHybridConfig)
  std::string bad = kvtest::read_text("granite-4.0-h-micro");
  bad.replace(bad.find("\"mamba_d_head\": 64"), 18, "\"mamba_d_head\": 32");
  CHECK(error_of(bad).rfind("config.json: /mamba_n_heads: mamba_n_heads x mamba_d_head is 2048 but mamba_expand x hidden_size is 4096", 0) == 0);
  // every layer attention: no Mamba keys read (granite-4.0-micro ships ones that fail the check above)
  std::string dense = kvtest::read_text("granite-4.0-h-micro");
  for (auto pos = dense.find("\"mamba\""); pos != std::string::npos; pos = dense.find("\"mamba\"")) dense.replace(pos, 7, "\"attention\"");
  dense.replace(dense.find("\"mamba_d_head\": 64"), 18, "\"mamba_d_head\": 32");
  CHECK(kvtest::kv(kvtest::from_text(dense), 1).kv_bytes_per_token == 40 * 2 * 8 * 64 * 2);
  std::string odd = kvtest::read_text("granite-4.0-h-micro");
  odd.replace(odd.find("\"mamba\""), 7, "\"conv\"");
  CHECK(error_of(odd).rfind("config.json: /layer_types/0: unknown layer type \"conv\" for model_type 'granitemoehybrid'", 0) == 0);
}

TEST_CASE("granitemoe: experts on every layer (Granite 3.1 3B-A800M)", "[hf]") {
  const auto m = kvtest::load("granite-3.1-3b-a800m");
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 32 * 2 * 8 * (1536 / 24) * 2);
  const auto p = count_params(m);
  const i64 h = 1536, layer = h * 1536 + 2 * h * 512 + 1536 * h + 40 * 3 * h * 512 + 40 * h + 2 * h;
  CHECK(p.total == 49155 * h + 32 * layer + h);
  CHECK(p.active == p.total - 32 * (40 - 8) * 3 * h * 512);  // 3.3 B total, 800 M active (IBM)
}

// LFM2-1.2B (tests/data/configs/lfm2-1.2b.json, LiquidAI/LFM2-1.2B config.json as third-party fixtures quote it);
// its model card gives 1,170,340,608 parameters.
TEST_CASE("lfm2: short-convolution layers keep a (L_cache - 1) x hidden state, attention layers a KV cache", "[hf]") {
  const auto m = kvtest::load("lfm2-1.2b");
  REQUIRE(m.layers.size() == 16);
  CHECK(m.layers[2].kv == KvKind::full);
  CHECK(m.layers[3].kv == KvKind::ssm);
  CHECK(m.layers[3].mixer == Mixer::short_conv);
  const auto kv = kvtest::kv(m, 1);
  CHECK(kv.kv_bytes_per_token == 6 * 2 * 8 * 64 * 2);
  CHECK(kv.state_bytes == 10 * (3 - 1) * 2048 * 2);  // vLLM short_conv_state_shape, bf16
  // block_ff_dim 12288, auto-adjusted: int(2 x 12288 / 3) = 8192, a multiple of 256
  CHECK(m.layers[0].intermediate == 8192);
  CHECK(count_params(m).total == 1170340608);
}

TEST_CASE("lfm2_moe: dense first layers, then sigmoid-routed experts (LFM2-8B-A1B)", "[hf]") {
  const auto m = kvtest::load("lfm2-8b-a1b");
  CHECK(m.layers[0].mlp == MlpKind::gated);
  CHECK(m.layers[0].intermediate == 7168);  // intermediate_size as is on the dense layers
  CHECK(m.layers[2].mlp == MlpKind::moe);
  const auto p = count_params(m);
  const i64 h = 2048, attn = 6 * (h * 2048 + 2 * h * 512 + 2048 * h + 2 * 64);
  const i64 conv = 18 * (h * 3 * h + h * h + h * 3), mlp = 2 * 3 * h * 7168;
  const i64 moe = 22 * (32 * 3 * h * 1792 + 32 * h + 32), norms = 24 * 2 * h + h;
  CHECK(p.total == 65536 * h + attn + conv + mlp + moe + norms);
  CHECK(p.active == p.total - 22 * (32 - 4) * 3 * h * 1792);  // Liquid: 8.3 B total, 1.5 B active
}

// Falcon-H1-0.5B (tests/data/configs/falcon-h1-0.5b.json: the config NVIDIA-NeMo/Megatron-Bridge's Falcon-H1 bridge
// test carries, with mamba_d_ssm 1536 = 24 Mamba heads x 64 from the transformers docs' Falcon-H1 table); TII
// gives it 0.52 B parameters.
TEST_CASE("falcon_h1: every decoder layer holds a KV cache and a Mamba2 state side by side", "[hf]") {
  const auto m = kvtest::load("falcon-h1-0.5b");
  REQUIRE(m.layers.size() == 2 * 36);
  CHECK(decoder_layers(m.layers) == 36);
  CHECK(m.layers[0].kv == KvKind::full);
  CHECK(m.layers[1].kv == KvKind::ssm);
  CHECK(m.layers[1].joins_previous);
  const auto kv = kvtest::kv(m, 1);
  CHECK(kv.kv_bytes_per_token == 36 * 2 * 2 * 64 * 2);  // head_dim 64 from the config, not 1024 / 8
  const i64 conv_dim = 1536 + 2 * 1 * 128;
  CHECK(kv.state_bytes == 36 * (3 * conv_dim + 24 * 64 * 128) * 2);
  const i64 h = 1024;
  const i64 attn = h * 8 * 64 + 2 * h * 2 * 64 + 8 * 64 * h;
  // in_proj (z, x, B, C, dt), conv with bias, dt_bias / A_log / D, out_proj; no gated norm (mamba_rms_norm false)
  const i64 mamba = h * (1536 + conv_dim + 24) + conv_dim * 4 + conv_dim + 3 * 24 + 1536 * h;
  const i64 mlp = 3 * h * 2048, norms = 2 * h;
  CHECK(count_params(m).total == 2 * 32784 * h + 36 * (attn + mamba + mlp + norms) + h);  // untied head
  CHECK(std::abs(double(count_params(m).total) / 0.52e9 - 1) < 0.01);
  // the Mamba width is mamba_d_ssm when given, and must be mamba_n_heads x mamba_d_head
  std::string bad = kvtest::read_text("falcon-h1-0.5b");
  bad.replace(bad.find("\"mamba_d_ssm\": 1536"), 19, "\"mamba_d_ssm\": 2048");
  CHECK(error_of(bad).rfind("config.json: /mamba_n_heads: mamba_n_heads x mamba_d_head is 1536 but the Mamba width (mamba_d_ssm) is 2048", 0) == 0);
}

// MiniMax-M2 (tests/data/configs/minimax-m2.json, MiniMaxAI/MiniMax-M2's config.json as an Ascend deployment guide
// quotes it); its README: 230 B total, 10 B activated.
TEST_CASE("minimax_m2: explicit head_dim, q/k norms over the whole projection, 256 experts on every layer", "[hf]") {
  const auto m = kvtest::load("minimax-m2");
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 62 * 2 * 8 * 128 * 2);
  const i64 h = 3072, q = 48 * 128, kv = 8 * 128;
  const i64 attn = h * q + 2 * h * kv + q * h + q + kv;  // q_norm [6144], k_norm [1024]
  const i64 experts = 256 * 3 * h * 1536, router = 256 * h + 256, norms = 2 * h;
  const auto p = count_params(m);
  CHECK(p.total == 2 * 200064 * h + 62 * (attn + experts + router + norms) + h);
  CHECK(p.active == p.total - 62 * (256 - 8) * 3 * h * 1536);
  CHECK(std::abs(double(p.total) / 230e9 - 1) < 0.01);
  std::string m1 = kvtest::read_text("minimax-m2");
  const std::string first = "\"attn_type_list\": [\n    1";
  m1.replace(m1.find(first), first.size(), "\"attn_type_list\": [\n    0");
  CHECK(error_of(m1).rfind("config.json: /attn_type_list: has a linear-attention layer (0)", 0) == 0);
}

// ERNIE-4.5-21B-A3B (tests/data/configs/ernie-4.5-21b-a3b.json, baidu/ERNIE-4.5-21B-A3B-PT's config.json as
// third-party fixtures quote it); Baidu: 21 B total, 3 B activated.
TEST_CASE("ernie4_5_moe: a dense first layer, then experts beside two shared experts", "[hf]") {
  const auto m = kvtest::load("ernie-4.5-21b-a3b");
  CHECK(m.layers[0].mlp == MlpKind::gated);
  CHECK(m.layers[0].intermediate == 12288);
  CHECK(m.layers[1].mlp == MlpKind::moe);
  CHECK(m.layers[1].shared_intermediate == 2 * 1536);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 28 * 2 * 4 * 128 * 2);
  const i64 h = 2560, attn = h * 2560 + 2 * h * 512 + 2560 * h, norms = 2 * h;
  const i64 moe = 64 * 3 * h * 1536 + 64 * h + 64 + 3 * h * 3072;
  const auto p = count_params(m);
  CHECK(p.total == 103424 * h + 28 * (attn + norms) + 3 * h * 12288 + 27 * moe + h);  // tied head
  CHECK(p.active == p.total - 27 * (64 - 6) * 3 * h * 1536);
}

// OLMoE-1B-7B-0924 (tests/data/configs/olmoe-1b-7b.json; intermediate_size 1024, not the config class's 2048); the
// paper: 7 B parameters, 1 B per token.
TEST_CASE("olmoe: q/k norms over the whole projection, 64 experts of 1024 on every layer", "[hf]") {
  const auto m = kvtest::load("olmoe-1b-7b");
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 16 * 2 * 16 * 128 * 2);
  const i64 h = 2048, layer = 4 * h * h + 2 * h + 64 * 3 * h * 1024 + 64 * h + 2 * h;
  const auto p = count_params(m);
  CHECK(p.total == 2 * 50304 * h + 16 * layer + h);
  CHECK(p.active == p.total - 16 * (64 - 8) * 3 * h * 1024);
  CHECK(std::abs(double(p.total) / 6.92e9 - 1) < 0.01);
}

// OLMo-2-1124-7B (tests/data/configs/olmo-2-1124-7b.json, allenai/OLMo-2-1124-7B's config.json as transcribed);
// Ai2 gives it 7.3 B parameters.
TEST_CASE("olmo2: q/k norms over the whole projection, norms after attention and after the MLP", "[hf]") {
  const auto m = kvtest::load("olmo-2-1124-7b");
  CHECK(m.model_type == "olmo2");
  CHECK(m.warnings.empty());
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 32 * 2 * 32 * 128 * 2);  // bf16 cache, MHA
  const i64 h = 4096, layer = 4 * h * h + 2 * h + 3 * h * 11008 + 2 * h;  // q, k, v, o; q_norm, k_norm; gated MLP; 2 norms
  CHECK(count_params(m).total == 2 * 100352 * h + 32 * layer + h);
  CHECK(std::abs(double(count_params(m).total) / 7.3e9 - 1) < 0.01);
  // Olmo 3 reads the same way, its sliding layers from layer_types
  std::string o3 = kvtest::read_text("olmo-2-1124-7b");
  o3.replace(o3.find("\"olmo2\""), 7, "\"olmo3\"");
  std::string types = "\"sliding_window\": 4096, \"layer_types\": [";
  for (int i = 0; i < 32; ++i) types += std::string(i ? ", " : "") + ((i + 1) % 4 == 0 ? "\"full_attention\"" : "\"sliding_attention\"");
  o3.replace(o3.find("\"tie_word_embeddings\""), 0, types + "],\n  ");
  const auto m3 = kvtest::from_text(o3);
  CHECK(m3.layers[0].kv == KvKind::sliding);
  CHECK(m3.layers[0].window == 4096);
  CHECK(m3.layers[3].kv == KvKind::full);
  CHECK(count_params(m3).total == count_params(m).total);
  // without layer_types, Olmo3Config.__post_init__'s: sliding on (i + 1) % 4 != 0, sliding_window default 4096
  std::string bare = kvtest::read_text("olmo-2-1124-7b");
  bare.replace(bare.find("\"olmo2\""), 7, "\"olmo3\"");
  const auto d3 = kvtest::from_text(bare);
  int sliding = 0;
  for (const auto& l : d3.layers) sliding += l.kv == KvKind::sliding && l.window == 4096;
  CHECK(sliding == 24);  // 32 layers, every fourth full
  CHECK(d3.layers[2].kv == KvKind::sliding);
  CHECK(d3.layers[3].kv == KvKind::full);
  CHECK(d3.layers[31].kv == KvKind::full);
  std::string w = bare;
  w.replace(w.find("\"tie_word_embeddings\""), 0, "\"sliding_window\": 2048,\n  ");
  CHECK(kvtest::from_text(w).layers[0].window == 2048);
  std::string none = bare;
  none.replace(none.find("\"tie_word_embeddings\""), 0, "\"sliding_window\": null,\n  ");
  for (const auto& l : kvtest::from_text(none).layers) CHECK(l.kv == KvKind::full);
  // OLMo 2 has no such default: every layer full
  for (const auto& l : m.layers) CHECK(l.kv == KvKind::full);
}

// StarCoder2-15B (tests/data/configs/starcoder2-15b.json, bigcode/starcoder2-15b's config.json as transcribed): a plain
// GELU MLP, biases everywhere (use_bias), LayerNorms, a 4,096-token window on every layer; no tie_word_embeddings key,
// so PretrainedConfig's default (tied) holds.
TEST_CASE("starcoder2: plain MLP with biases, LayerNorms, sliding window on every layer", "[hf]") {
  const auto m = kvtest::load("starcoder2-15b");
  CHECK(m.warnings.empty());
  CHECK(m.layers[0].mlp == MlpKind::plain);
  CHECK(m.layers[39].kv == KvKind::sliding);
  CHECK(m.layers[39].window == 4096);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 40 * 2 * 4 * 128 * 2);
  const i64 h = 6144, q = 48 * 128, kv = 4 * 128;
  const i64 attn = h * q + 2 * h * kv + q * h + (q + 2 * kv) + h;  // weights, q/k/v biases, o bias
  const i64 mlp = 2 * h * 24576 + 24576 + h;                       // c_fc, c_proj and their biases
  const i64 norms = 2 * 2 * h;                                      // two LayerNorms, weight and bias
  CHECK(count_params(m).total == 49152 * h + 40 * (attn + mlp + norms) + 2 * h);  // tied head, final LayerNorm
  // a generic (gated) reading would count 40 x 6144 x 24576 = 6.0 B more
  std::string untied = kvtest::read_text("starcoder2-15b");
  untied.replace(untied.find("\"use_bias\": true"), 16, "\"use_bias\": false, \"tie_word_embeddings\": false");
  const auto u = kvtest::from_text(untied);
  CHECK(count_params(u).total == 2 * 49152 * h + 40 * (h * q + 2 * h * kv + q * h + 2 * h * 24576 + norms) + 2 * h);
}

// Minitron-8B (tests/data/configs/minitron-8b.json, nvidia/Minitron-8B-Base's config.json as transcribed): 48 query
// heads of head_dim 128 over a 4,096 hidden size, a plain squared-ReLU MLP, LayerNorm1P norms (weight and bias).
TEST_CASE("nemotron: plain relu2 MLP, LayerNorms, explicit head_dim", "[hf]") {
  const auto m = kvtest::load("minitron-8b");
  CHECK(m.warnings.empty());
  CHECK(m.layers[0].mlp == MlpKind::plain);
  CHECK(m.layers[0].k_head_dim == 128);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 32 * 2 * 8 * 128 * 2);
  const i64 h = 4096, q = 48 * 128, kv = 8 * 128;
  const i64 layer = h * q + 2 * h * kv + q * h + 2 * h * 16384 + 2 * 2 * h;
  CHECK(count_params(m).total == 2 * 256000 * h + 32 * layer + 2 * h);
}

// dots.llm1.inst (tests/data/configs/dots-llm1-inst.json, rednote-hilab/dots.llm1.inst's config.json as transcribed);
// rednote: 142 B parameters, 14 B activated.
TEST_CASE("dots1: a dense first layer, then 128 experts beside two shared ones, per-head q/k norms", "[hf]") {
  const auto m = kvtest::load("dots-llm1-inst");
  CHECK(m.warnings.empty());
  CHECK(m.layers[0].mlp == MlpKind::gated);
  CHECK(m.layers[1].mlp == MlpKind::moe);
  CHECK(m.layers[1].qk_norm);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 62 * 2 * 32 * 128 * 2);
  const i64 h = 4096, attn = 4 * h * h + 2 * 128, norms = 2 * h;
  const i64 moe = 128 * 3 * h * 1408 + 3 * h * 2 * 1408 + 128 * h + 128;  // experts, shared, router + correction bias
  const auto p = count_params(m);
  CHECK(p.total == 2 * 152064 * h + 62 * (attn + norms) + 3 * h * 10944 + 61 * moe + h);
  CHECK(p.active == p.total - 61 * (128 - 6) * 3 * h * 1408);
  CHECK(std::abs(double(p.total) / 142e9 - 1) < 0.01);
  CHECK(std::abs(double(p.active) / 14e9 - 1) < 0.01);
}

// Phi-3.5-MoE-instruct (tests/data/configs/phi-3.5-moe-instruct.json, microsoft/Phi-3.5-MoE-instruct's config.json as
// transcribed, its longrope rope_scaling factor lists left out); Microsoft: 42 B parameters (41.9 B), 6.6 B active.
TEST_CASE("phimoe: 16 experts on every layer, attention biases, LayerNorms", "[hf]") {
  const auto m = kvtest::load("phi-3.5-moe-instruct");
  CHECK(m.warnings.empty());
  CHECK(m.layers[0].mlp == MlpKind::moe);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 32 * 2 * 8 * 128 * 2);
  const i64 h = 4096, kv = 8 * 128;
  const i64 attn = 2 * h * h + 2 * h * kv + (h + 2 * kv) + h;  // q, o; k, v; q/k/v biases; o bias
  const i64 layer = attn + 16 * 3 * h * 6400 + 16 * h + 2 * 2 * h;
  const auto p = count_params(m);
  CHECK(p.total == 2 * 32064 * h + 32064 + 32 * layer + 2 * h);  // lm_head_bias
  CHECK(p.active == p.total - 32 * 14 * 3 * h * 6400);
  CHECK(std::abs(double(p.total) / 41.9e9 - 1) < 0.01);
  CHECK(std::abs(double(p.active) / 6.6e9 - 1) < 0.01);
}

// DBRX Instruct (tests/data/configs/dbrx-instruct.json, databricks/dbrx-instruct's config.json as transcribed: sizes
// under d_model / n_heads / n_layers, KV heads and experts in nested attn_config and ffn_config); Databricks: 132 B
// parameters, 36 B active.
TEST_CASE("dbrx: nested attn_config and ffn_config, 16 experts top 4 on every layer", "[hf]") {
  const auto m = kvtest::load("dbrx-instruct");
  CHECK(m.warnings.empty());
  CHECK(m.layers.size() == 40);
  CHECK(m.max_context == 32768);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 40 * 2 * 8 * 128 * 2);
  const i64 h = 6144, kv = 8 * 128;
  const i64 layer = 2 * h * h + 2 * h * kv + 16 * 3 * h * 10752 + 16 * h + 2 * h;
  const auto p = count_params(m);
  CHECK(p.total == 2 * 100352 * h + 40 * layer + h);
  CHECK(p.active == p.total - 40 * 12 * 3 * h * 10752);
  CHECK(std::abs(double(p.total) / 132e9 - 1) < 0.01);
  CHECK(std::abs(double(p.active) / 36e9 - 1) < 0.02);
  std::string bad = kvtest::read_text("dbrx-instruct");
  bad.replace(bad.find("\"ffn_config\""), 12, "\"ffn_cfg\"");
  CHECK(error_of(bad).rfind("config.json: /ffn_config: missing", 0) == 0);
}

// Phi-2 (tests/data/configs/phi-2.json, microsoft/phi-2's config.json as third-party copies quote it); Microsoft:
// 2.7 B parameters.
TEST_CASE("phi: attention and a plain MLP off one LayerNorm, biases everywhere, lm_head bias", "[hf]") {
  const auto m = kvtest::load("phi-2");
  CHECK(m.warnings.empty());
  CHECK(m.layers[0].mlp == MlpKind::plain);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 32 * 2 * 32 * 80 * 2);  // MHA of head_dim 80
  const i64 h = 2560, layer = 4 * h * h + 4 * h + 2 * h * 10240 + 10240 + h + 2 * h;  // q,k,v,dense + biases; fc1, fc2 + biases; one LayerNorm
  CHECK(count_params(m).total == 2 * 51200 * h + 51200 + 32 * layer + 2 * h);
  CHECK(std::abs(double(count_params(m).total) / 2.78e9 - 1) < 0.01);
}

// EXAONE-3.0-7.8B-Instruct (tests/data/configs/exaone-3.0-7.8b-instruct.json, the ExaoneConfig a third-party log prints
// for LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct): num_layers, llama-shaped; its config ties embeddings unless told not to.
TEST_CASE("exaone: num_layers and a llama-shaped decoder, tied by default", "[hf]") {
  const auto m = kvtest::load("exaone-3.0-7.8b-instruct");
  CHECK(m.warnings.empty());
  CHECK(m.layers.size() == 32);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 32 * 2 * 8 * 128 * 2);
  const i64 h = 4096, layer = 2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h;
  CHECK(count_params(m).total == 2 * 102400 * h + 32 * layer + h);  // 7.8 B
  std::string tied = kvtest::read_text("exaone-3.0-7.8b-instruct");
  tied.replace(tied.find("\"tie_word_embeddings\": false,"), 29, "");
  CHECK(kvtest::from_text(tied).tied_embeddings);
}

// GLM-4-9B-chat (tests/data/configs/glm-4-9b-chat.json, the ChatGLMConfig a LLaMA-Factory log prints for THUDM/glm-4-9b-chat):
// num_layers, kv_channels, two KV heads (multi_query_group_num), ffn_hidden_size, padded_vocab_size, a qkv bias.
TEST_CASE("chatglm: ChatGLM's own keys, multi-query groups, fused qkv with bias", "[hf]") {
  const auto m = kvtest::load("glm-4-9b-chat");
  CHECK(m.warnings.empty());
  CHECK(m.max_context == 131072);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 40 * 2 * 2 * 128 * 2);
  const i64 h = 4096, kv = 2 * 128;
  const i64 layer = 2 * h * h + 2 * h * kv + (h + 2 * kv) + 3 * h * 13696 + 2 * h;
  CHECK(count_params(m).total == 2 * 151552 * h + 40 * layer + h);
  // multi_query_attention false: every head keeps K and V
  std::string mha = kvtest::read_text("glm-4-9b-chat");
  mha.replace(mha.find("\"multi_query_attention\": true"), 29, "\"multi_query_attention\": false");
  CHECK(kvtest::kv(kvtest::from_text(mha), 1).kv_bytes_per_token == 40 * 2 * 32 * 128 * 2);
}

// GLM-4-0414 (glm4) and StableLM 2 (stablelm): synthetic configs with the keys their transformers config classes read.
TEST_CASE("glm4: four norms per layer, q/k/v bias by default, o_proj without", "[hf]") {
  const auto m = kvtest::from_text(R"({"model_type":"glm4","hidden_size":4096,"intermediate_size":13696,"num_hidden_layers":40,
    "num_attention_heads":32,"num_key_value_heads":2,"head_dim":128,"vocab_size":151552,"max_position_embeddings":32768})");
  CHECK(m.warnings.empty());
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 40 * 2 * 2 * 128 * 2);
  const i64 h = 4096, kv = 2 * 128;
  const i64 layer = 2 * h * h + 2 * h * kv + (h + 2 * kv) + 3 * h * 13696 + 4 * h;
  CHECK(count_params(m).total == 2 * 151552 * h + 40 * layer + h);
}

TEST_CASE("stablelm: LayerNorms, qkv bias, per-head q/k norms, parallel residual", "[hf]") {
  const std::string base = R"({"model_type":"stablelm","hidden_size":2048,"intermediate_size":5632,"num_hidden_layers":24,
    "num_attention_heads":32,"num_key_value_heads":32,"vocab_size":100352,"max_position_embeddings":4096,"use_qkv_bias":true)";
  const auto m = kvtest::from_text(base + "}");
  const i64 h = 2048, layer = 4 * h * h + 3 * h + 3 * h * 5632 + 2 * 2 * h;
  CHECK(count_params(m).total == 2 * 100352 * h + 24 * layer + 2 * h);
  // stablelm-2-12b style: per-head q/k LayerNorms (weight only), one norm per layer
  const auto p = kvtest::from_text(base + R"(,"qk_layernorm":true,"use_parallel_residual":true})");
  CHECK(count_params(p).total == count_params(m).total + 24 * (2 * h - 2 * h));  // + (32 + 32) x 64 of q/k norms, - one LayerNorm
}

// InternLM2.5-7B-chat's shapes (internlm/internlm2_5-7b-chat config.json as transcribed: bias false, dynamic RoPE x2);
// published 7.74 B parameters.
TEST_CASE("internlm2: llama-shaped with its own bias key", "[hf]") {
  const std::string c = R"({"model_type":"internlm2","hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
    "num_attention_heads":32,"num_key_value_heads":8,"vocab_size":92544,"max_position_embeddings":32768,"bias":false,
    "rope_scaling":{"type":"dynamic","factor":2.0},"tie_word_embeddings":false})";
  const auto m = kvtest::from_text(c);
  CHECK(m.warnings.empty());
  CHECK(m.max_context == 65536);  // vLLM's dynamic-NTK rule: factor x max_position_embeddings
  const i64 h = 4096, layer = 2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h;
  CHECK(count_params(m).total == 2 * 92544 * h + 32 * layer + h);
  CHECK(std::abs(double(count_params(m).total) / 7.74e9 - 1) < 0.01);
  std::string biased = c;
  biased.replace(biased.find("\"bias\":false,"), 13, "");
  CHECK(count_params(kvtest::from_text(biased)).total == count_params(m).total + 32 * (h + 2 * 1024 + h));
}

// Seed-OSS-36B, AFM-4.5B (arcee), Apertus-8B, EXAONE-4.0-32B and SmolLM3-3B: synthetic configs with each checkpoint's
// sizes and the keys its transformers config class reads; published sizes 36 B, 4.5 B, 8 B, 32 B, 3 B.
TEST_CASE("seed_oss, arcee, apertus, exaone4, smollm3: biases, plain MLPs, q/k norms, L/G window patterns", "[hf]") {
  const auto seed = kvtest::from_text(R"({"model_type":"seed_oss","hidden_size":5120,"intermediate_size":27648,
    "num_hidden_layers":64,"num_attention_heads":80,"num_key_value_heads":8,"head_dim":128,"vocab_size":155136,
    "max_position_embeddings":524288,"attention_bias":true,"attention_out_bias":false,"tie_word_embeddings":false})");
  CHECK(seed.warnings.empty());
  const i64 hs = 5120, q = 80 * 128, kv = 8 * 128;
  CHECK(count_params(seed).total == 2 * 155136 * hs + 64 * (2 * hs * q + 2 * hs * kv + q + 2 * kv + 3 * hs * 27648 + 2 * hs) + hs);
  CHECK(std::abs(double(count_params(seed).total) / 36.15e9 - 1) < 0.01);

  const auto afm = kvtest::from_text(R"({"model_type":"arcee","hidden_size":2560,"intermediate_size":18432,
    "num_hidden_layers":36,"num_attention_heads":20,"num_key_value_heads":4,"head_dim":128,"vocab_size":128004,
    "max_position_embeddings":65536,"tie_word_embeddings":false})");
  CHECK(afm.layers[0].mlp == MlpKind::plain);
  const i64 ha = 2560;
  CHECK(count_params(afm).total == 2 * 128004 * ha + 36 * (2 * ha * ha + 2 * ha * 512 + 2 * ha * 18432 + 2 * ha) + ha);

  const auto apertus = kvtest::from_text(R"({"model_type":"apertus","hidden_size":4096,"intermediate_size":21504,
    "num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":131072,
    "max_position_embeddings":65536,"qk_norm":true})");
  const i64 hp = 4096;
  CHECK(count_params(apertus).total == 2 * 131072 * hp + 32 * (2 * hp * hp + 2 * hp * 1024 + 2 * 128 + 2 * hp * 21504 + 2 * hp) + hp);
  CHECK(std::abs(double(count_params(apertus).total) / 8.05e9 - 1) < 0.01);

  std::string ex = R"({"model_type":"exaone4","hidden_size":5120,"intermediate_size":27392,"num_hidden_layers":64,
    "num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"vocab_size":102400,"max_position_embeddings":131072,
    "sliding_window":4096,"sliding_window_pattern":"LLLG","tie_word_embeddings":false})";
  const auto e4 = kvtest::from_text(ex);
  CHECK(e4.layers[0].kv == KvKind::sliding);
  CHECK(e4.layers[0].window == 4096);
  CHECK(e4.layers[3].kv == KvKind::full);
  CHECK(e4.layers[63].kv == KvKind::full);
  CHECK(kvtest::kv(e4, 100000).kv_bytes_per_token == 64 * 2 * 8 * 128 * 2);
  const i64 he = 5120;
  CHECK(count_params(e4).total == 2 * 102400 * he + 64 * (2 * he * he + 2 * he * 1024 + 2 * 128 + 3 * he * 27392 + 2 * he) + he);
  // Exaone4Config's own derivation: an integer pattern (default 4) over sliding_window (default 4096); null: all full
  std::string ints = ex;
  ints.replace(ints.find("\"LLLG\""), 6, "2");
  const auto e2 = kvtest::from_text(ints);
  CHECK(e2.layers[0].kv == KvKind::sliding);
  CHECK(e2.layers[1].kv == KvKind::full);
  std::string none = ex;
  none.replace(none.find("\"sliding_window\":4096"), 21, "\"sliding_window\":null");
  CHECK(kvtest::from_text(none).layers[0].kv == KvKind::full);
  ex.replace(ex.find("LLLG"), 4, "LLXG");
  CHECK(error_of(ex) == "config.json: /sliding_window_pattern: is \"LLXG\"; use a string of L (sliding) and G (global) layers");

  const auto smol = kvtest::from_text(R"({"model_type":"smollm3","hidden_size":2048,"intermediate_size":11008,
    "num_hidden_layers":36,"num_attention_heads":16,"num_key_value_heads":4,"vocab_size":128256,
    "max_position_embeddings":65536,"sliding_window":null,"use_sliding_window":false,"tie_word_embeddings":true})");
  CHECK(smol.warnings.empty());
  CHECK(smol.layers[0].kv == KvKind::full);
  CHECK(std::abs(double(count_params(smol).total) / 3.08e9 - 1) < 0.01);
}

// ERNIE-4.5-0.3B's shapes (baidu/ERNIE-4.5-0.3B-PT, synthetic: explicit head_dim, tied embeddings by default); Baidu:
// 0.36 B parameters.
TEST_CASE("ernie4_5: the dense ERNIE-4.5, tied by default, biases with use_bias", "[hf]") {
  const std::string c = R"({"model_type":"ernie4_5","hidden_size":1024,"intermediate_size":3072,"num_hidden_layers":18,
    "num_attention_heads":16,"num_key_value_heads":2,"head_dim":128,"vocab_size":103424,"max_position_embeddings":131072})";
  const auto m = kvtest::from_text(c);
  CHECK(m.warnings.empty());
  CHECK(m.layers[0].mlp == MlpKind::gated);
  const i64 h = 1024, layer = 2 * h * 2048 + 2 * h * 256 + 3 * h * 3072 + 2 * h;
  CHECK(count_params(m).total == 103424 * h + 18 * layer + h);
  CHECK(std::abs(double(count_params(m).total) / 0.36e9 - 1) < 0.01);
}

// Hunyuan-A13B-Instruct (tests/data/configs/hunyuan-a13b-instruct.json: tencent/Hunyuan-A13B-Instruct's shapes as
// transcribed, per-layer lists for moe_topk, moe_intermediate_size, num_shared_expert; its dynamic RoPE left out);
// Tencent: 80 B parameters, 13 B active.
TEST_CASE("hunyuan_v1_moe: per-layer expert lists, a shared MLP beside 64 experts, per-head q/k norms", "[hf]") {
  const auto m = kvtest::load("hunyuan-a13b-instruct");
  CHECK(m.warnings.empty());
  CHECK(m.layers[0].mlp == MlpKind::moe);
  CHECK(m.layers[0].experts_active == 8);
  CHECK(m.layers[0].shared_intermediate == 3072);
  CHECK(kvtest::kv(m, 1).kv_bytes_per_token == 32 * 2 * 8 * 128 * 2);
  const i64 h = 4096, attn = 2 * h * h + 2 * h * 1024 + 2 * 128;
  const i64 moe = 64 * 3 * h * 3072 + 3 * h * 3072 + 64 * h;
  const auto p = count_params(m);
  CHECK(p.total == 128167 * h + 32 * (attn + moe + 2 * h) + h);  // tied
  CHECK(p.active == p.total - 32 * 56 * 3 * h * 3072);
  CHECK(std::abs(double(p.total) / 80.4e9 - 1) < 0.01);
  std::string cla = kvtest::read_text("hunyuan-a13b-instruct");
  cla.replace(cla.find("\"use_cla\": false"), 16, "\"use_cla\": true");
  CHECK(error_of(cla) == "config.json: /use_cla: is true: cross-layer attention (layers sharing one KV cache) is not modelled; plan a checkpoint without CLA");
  std::string own = kvtest::read_text("hunyuan-a13b-instruct");  // Tencent's GitHub copy says model_type "hunyuan"
  own.replace(own.find("\"hunyuan_v1_moe\""), 16, "\"hunyuan\"");
  CHECK(count_params(kvtest::from_text(own)).total == p.total);
  std::string short_list = kvtest::read_text("hunyuan-a13b-instruct");
  short_list.replace(short_list.find("[8, 8, "), 7, "[8, ");
  CHECK(error_of(short_list) == "config.json: /moe_topk: has 31 entries for 32 layers; give one per layer");
}

// Ling-lite-1.5's shapes (inclusionAI/Ling-lite-1.5, synthetic: 64 experts of 1408, top 6, two shared); inclusionAI:
// 16.8 B parameters, 2.75 B active. Ling 2.0 (bailing_moe_v2) adds dense first layers, q/k norms and an expert bias.
TEST_CASE("bailing_moe: experts beside shared experts, optional dense first layers and q/k norms", "[hf]") {
  const std::string c = R"({"model_type":"bailing_moe","hidden_size":2048,"intermediate_size":5632,"num_hidden_layers":28,
    "num_attention_heads":16,"num_key_value_heads":4,"vocab_size":126464,"max_position_embeddings":16384,
    "moe_intermediate_size":1408,"num_experts":64,"num_experts_per_tok":6,"num_shared_experts":2,"use_bias":false,
    "use_qkv_bias":false,"norm_head":true,"tie_word_embeddings":false)";
  const auto m = kvtest::from_text(c + "}");
  CHECK(m.warnings.empty());
  const i64 h = 2048, attn = h * (2048 + 2 * 512) + 2048 * h, moe = 64 * 3 * h * 1408 + 3 * h * 2816 + 64 * h;
  const auto p = count_params(m);
  CHECK(p.total == 2 * 126464 * h + 28 * (attn + moe + 2 * h) + h);
  CHECK(p.active == p.total - 28 * 58 * 3 * h * 1408);
  CHECK(std::abs(double(p.total) / 16.8e9 - 1) < 0.01);
  CHECK(std::abs(double(p.active) / 2.75e9 - 1) < 0.01);
  const auto v2 = kvtest::from_text(c + R"(,"first_k_dense_replace":1,"use_qk_norm":true,"moe_router_enable_expert_bias":true})");
  CHECK(v2.layers[0].mlp == MlpKind::gated);
  CHECK(v2.layers[1].router_score_bias);
  CHECK(count_params(v2).total == p.total - moe + 3 * h * 5632 + 28 * 2 * 128 + 27 * 64);
  // Ling-mini-2.0's shapes (official model_type "bailing_moe", architecture BailingMoeV2ForCausalLM): 256 experts of 512,
  // top 8, one shared, a dense first layer; inclusionAI: 16 B total, 1.4 B active
  const auto mini = kvtest::from_text(R"({"model_type":"bailing_moe","architectures":["BailingMoeV2ForCausalLM"],
    "hidden_size":2048,"intermediate_size":5120,"num_hidden_layers":20,"num_attention_heads":16,"num_key_value_heads":4,
    "head_dim":128,"vocab_size":157184,"max_position_embeddings":32768,"moe_intermediate_size":512,"num_experts":256,
    "num_experts_per_tok":8,"num_shared_experts":1,"first_k_dense_replace":1,"use_qk_norm":true,
    "moe_router_enable_expert_bias":true,"use_bias":false,"use_qkv_bias":false,"tie_word_embeddings":false})");
  CHECK(std::abs(double(count_params(mini).total) / 16.256e9 - 1) < 0.001);
  CHECK(std::abs(double(count_params(mini).active) / 1.433e9 - 1) < 0.002);
}

// Gemma 4 (transformers modeling_gemma4 / configuration_gemma4). 31B: 50 sliding layers (16 KV heads of 256) and 10
// full ones (5 sliding then 1 full); the full layers take global_head_dim 512 and, with attention_k_eq_v,
// num_global_key_value_heads 4 and no v_proj. K and V are both cached on every layer.
TEST_CASE("gemma4: global head size and KV heads on full layers, k = v without a v_proj, both cached", "[hf][gemma]") {
  const auto m = kvtest::load("gemma-4-31b-it");
  CHECK(m.warnings.empty());
  CHECK(m.model_type == "gemma4_text");
  CHECK(m.layers[0].kv == KvKind::sliding);
  CHECK(m.layers[0].window == 1024);
  CHECK(m.layers[5].kv == KvKind::full);
  CHECK(m.layers[5].k_head_dim == 512);
  CHECK(m.layers[5].kv_heads == 4);
  // per token: 50 x 2 x 16 x 256 + 10 x 2 x 4 x 512 elements, bf16
  const auto kv = kvtest::kv(m, 100000);
  CHECK(kv.kv_bytes_per_token == (50LL * 2 * 16 * 256 + 10LL * 2 * 4 * 512) * 2);
  CHECK(kv.sequence_kv_bytes == (50LL * 1024 * 2 * 16 * 256 + 10LL * 100000 * 2 * 4 * 512) * 2);
  // parameters: embedding (tied) + sliding layers (q, k, v, o; q/k norms of 256) + full layers (q, k, o; norms of 512)
  // + gated MLPs of 21504 + 4 norms a layer + the final norm
  const i64 h = 5376;
  const i64 sliding = h * (32 * 256 + 16 * 256 + 16 * 256 + 32 * 256) + 2 * 256;
  const i64 full = h * (32 * 512 + 4 * 512 + 32 * 512) + 2 * 512;
  const i64 total = 262144LL * h + 50 * sliding + 10 * full + 60 * (3 * h * 21504LL + 4 * h) + h;
  CHECK(count_params(m).total == total);
  CHECK(std::abs(double(total) / 30.7e9 - 1) < 0.01);  // Google's "31B"
}

// Gemma 4 E2B: 35 layers (4 sliding + 1 full), the last 20 reading the cache of layer 13 (sliding) or 14 (full);
// per-layer embeddings of 256; the KV-sharing layers have no k/v projections and, with use_double_wide_mlp, MLPs
// twice as wide.
TEST_CASE("gemma4 E-models: KV-sharing layers keep no cache, per-layer embeddings counted apart", "[hf][gemma]") {
  const auto m = kvtest::load("gemma-4-e2b-it");
  CHECK(m.warnings.empty());
  for (int i = 15; i < 35; ++i) CHECK(m.layers[i].kv == KvKind::none);
  CHECK(m.layers[14].kv == KvKind::full);
  CHECK(m.layers[13].kv == KvKind::sliding);
  // the cache: layers 0-14, 3 full (4, 9, 14) and 12 sliding, one KV head each
  const auto kv = kvtest::kv(m, 8192);
  CHECK(kv.kv_bytes_per_token == (3LL * 2 * 512 + 12LL * 2 * 256) * 2);
  CHECK(kv.sequence_kv_bytes == (3LL * 8192 * 2 * 512 + 12LL * 512 * 2 * 256) * 2);
  const i64 h = 1536, L = 35, P = 256, I = 6144;
  i64 total = 262144LL * h + 262144LL * L * P + h * L * P + P + h;  // embedding, PLE table, its projection and norm
  for (i64 i = 0; i < L; ++i) {
    const bool full = (i + 1) % 5 == 0, shared = i >= 15;
    const i64 d = full ? 512 : 256;
    total += h * (8 * d + (shared ? 0 : 2 * d) + 8 * d) + (shared ? d : 2 * d);  // q, k, v, o; q and k norms
    total += 3 * h * (shared ? 2 * I : I) + 4 * h + 2 * h * P + h;             // MLP, norms, PLE gate and projection
  }
  const auto p = count_params(m);
  CHECK(p.total == total);
  for (const auto& part : p.parts)
    if (part.name == "per_layer_embedding") CHECK(part.total() == 262144LL * L * P);
  CHECK(p.active == total - 262144LL * L * P);  // a token reads one row of the per-layer table
  // llama.cpp keeps the per-layer table with token_embd in host memory (LLM_TENSOR_LAYER_INPUT), bf16 here
  CHECK(layer_weight_bytes(m).input == (262144LL * h + 262144LL * L * P) * 2);

  // the 26B-A4B: 128 experts of 704 (top 8) beside a dense MLP of 2112 on every layer
  const auto moe = kvtest::load("gemma-4-26b-a4b-it");
  CHECK(moe.layers[0].mlp == MlpKind::moe);
  CHECK(moe.layers[0].shared_intermediate == 2112);
  const auto pm = count_params(moe);
  CHECK(pm.total - pm.active == 30LL * (128 - 8) * 3 * 2816 * 704);
}

TEST_CASE("gemma4: bad KV sharing is refused naming the key", "[hf][gemma][errors]") {
  std::string text = kvtest::read_text("gemma-4-e2b-it");
  text.replace(text.find("\"num_kv_shared_layers\": 20"), 26, "\"num_kv_shared_layers\": 35");
  CHECK(error_of(text) == "config.json: /text_config/num_kv_shared_layers: 35 is not below num_hidden_layers 35; leave at least one layer with its own cache");
  std::string all_sliding = kvtest::read_text("gemma-4-e2b-it");
  all_sliding.replace(all_sliding.find("\"num_kv_shared_layers\": 20"), 26, "\"num_kv_shared_layers\": 31");
  // layers 0-3 are all sliding: full layer 4 onwards cannot find an earlier full layer
  CHECK(error_of(all_sliding) == "config.json: /text_config/num_kv_shared_layers: layer 4 (full) would reuse the cache of an earlier full layer, "
                                 "and layers 0-3 have none; lower num_kv_shared_layers or fix layer_types");
  std::string heads = kvtest::read_text("gemma-4-31b-it");
  heads.replace(heads.find("\"num_global_key_value_heads\": 4"), 31, "\"num_global_key_value_heads\": 5");
  CHECK(error_of(heads) == "config.json: /text_config/num_global_key_value_heads: num_attention_heads 32 is not divisible by 5; fix the head counts");
  std::string widths = kvtest::read_text("gemma-3n-e4b-it");
  const std::string first_width = "\"intermediate_size\": [\n      16384,";
  widths.replace(widths.find(first_width), first_width.size(), "\"intermediate_size\": [");  // 34 widths left
  CHECK(error_of(widths) == "config.json: /text_config/intermediate_size: has 34 entries but num_hidden_layers is 35; give one width per layer, or one for all");
}

// Gemma 3n E4B (Gemma3nTextConfig's defaults): 35 layers, full every 5th, the last 15 sharing; every layer keeps its
// k/v projections; AltUp of 4 and Laurel of rank 64 beside the per-layer embeddings.
TEST_CASE("gemma3n: shared KV layers, AltUp, Laurel and per-layer embeddings", "[hf][gemma]") {
  const auto m = kvtest::load("gemma-3n-e4b-it");
  CHECK(m.warnings.empty());
  const auto kv = kvtest::kv(m, 32768);
  // 20 layers keep a cache: 4 full (4, 9, 14, 19) and 16 sliding, 2 KV heads of 256
  CHECK(kv.kv_bytes_per_token == 20LL * 2 * 2 * 256 * 2);
  CHECK(kv.sequence_kv_bytes == (4LL * 32768 + 16LL * 512) * 2 * 2 * 256 * 2);
  const i64 h = 2048, L = 35, P = 256, n = 4, r = 64;
  const i64 layer = h * (8 * 256 * 2 + 2 * 256 * 2) + 2 * 256     // q, o, k, v; q and k norms
                    + 3 * h * 16384 + 4 * h                       // MLP, norms
                    + 2 * h * P + h                               // PLE gate, projection, post norm
                    + 2 * h + h * n + n * n + n * n * n           // AltUp
                    + 2 * h * r + h;                              // Laurel
  const i64 total = 262400LL * h + 262144LL * L * P + h * L * P + P + 2 * (n - 1) * h * h + L * layer + h;
  CHECK(count_params(m).total == total);
}

TEST_CASE("GPTQ and AWQ quantization configs need bits and group_size, as vLLM's from_config does", "[hf][errors]") {
  // vLLM GPTQConfig.from_config: get_from_keys(["bits"]), (["group_size"]); AWQConfig: (["w_bit", "bits"]),
  // (["q_group_size", "group_size"]): a config without them does not load, so it is refused, not read as 4-bit g128
  CHECK(error_of(with("quantization_config", R"({"quant_method":"gptq","group_size":128})")) ==
        "config.json: /quantization_config/bits: missing; expected integer in [1, 16]; add it to the config");
  CHECK(error_of(with("quantization_config", R"({"quant_method":"awq","bits":4})")) ==
        "config.json: /quantization_config/group_size: missing; expected integer in [-1, 1048576]; add it to the config");
  // AutoAWQ's spellings: 4-bit, group 64 -> 4 + (16-bit scale + 4-bit zero) / 64 bits a weight; the method's case
  // does not matter (vLLM lower-cases it)
  const ModelSpec awq = kvtest::from_text(with("quantization_config", R"({"quant_method":"AWQ","w_bit":4,"q_group_size":64})"));
  CHECK(awq.quant.linear_bits == Approx(4.0 + (16.0 + 4.0) / 64.0));
  // GPTQ 3-bit, group 64: 3 + (16 + 3) / 64
  const ModelSpec gptq = kvtest::from_text(with("quantization_config", R"({"quant_method":"gptq","bits":3,"group_size":64})"));
  CHECK(gptq.quant.linear_bits == Approx(3.0 + (16.0 + 3.0) / 64.0));
  // the widths vLLM's kernels take: AWQ 4 only, GPTQ 2, 3, 4, 8
  CHECK(error_of(with("quantization_config", R"({"quant_method":"awq","w_bit":3,"q_group_size":64})")) ==
        "config.json: /quantization_config/w_bit: vLLM runs AWQ with 4-bit weights only, got 3; use a 4-bit AWQ checkpoint");
  CHECK(error_of(with("quantization_config", R"({"quant_method":"gptq","bits":5,"group_size":128})")) ==
        "config.json: /quantization_config/bits: vLLM runs GPTQ with 2, 3, 4 or 8-bit weights, got 5; use a checkpoint of one of those");
}

TEST_CASE("layer indices and periods in a config stay inside the model", "[hf][errors]") {
  // Qwen3-MoE mlp_only_layers names dense layers: an index past the last layer matches none
  const std::string moe = R"({"model_type":"qwen3_moe","hidden_size":2048,"num_hidden_layers":4,"num_attention_heads":32,
    "num_key_value_heads":4,"head_dim":128,"intermediate_size":6144,"moe_intermediate_size":768,"num_experts":8,
    "num_experts_per_tok":2,"vocab_size":1000,"max_position_embeddings":4096,"mlp_only_layers":[1,4]})";
  CHECK(error_of(moe) == "config.json: /mlp_only_layers/1: expected integer in [0, 3], got 4");
  // Jamba: attention where i % attn_layer_period == attn_layer_offset, so an offset of at least the period matches none
  const std::string jamba = R"({"model_type":"jamba","hidden_size":256,"num_hidden_layers":8,"num_attention_heads":8,
    "num_key_value_heads":2,"intermediate_size":512,"vocab_size":1000,"max_position_embeddings":4096,
    "attn_layer_period":4,"attn_layer_offset":4})";
  CHECK(error_of(jamba) == "config.json: /attn_layer_offset: expected integer in [0, 3], got 4");
  // a deepseek_v32 config is DeepSeek sparse attention: without the indexer's keys it is refused, not read as V3
  const std::string v32 = R"({"model_type":"deepseek_v32","hidden_size":1024,"num_hidden_layers":2,"num_attention_heads":8,
    "kv_lora_rank":512,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"intermediate_size":2048,
    "vocab_size":1000,"max_position_embeddings":4096})";
  CHECK(error_of(v32) == "config.json: /index_head_dim: missing; expected integer in [1, 16777216]; add it to the config");
}
