// kvplan_make_gguf: writes a small synthetic GGUF model of one architecture that a real llama.cpp
// loads (every key and tensor its src/models/<arch>.cpp requires, an SPM vocabulary its
// llama-vocab.cpp accepts), so kvplan's llama.cpp rules can be checked against the engine's own
// startup log. Norm weights are 1, every other tensor is zeros (left as holes of a sparse file).
// Usage: kvplan_make_gguf ARCH OUT.gguf [options]; see usage() below.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tools/gguf_writer.hpp"

namespace {

using kvtest::T_F16;
using kvtest::T_F32;
using kvtest::Writer;
using u64 = std::uint64_t;

const char* const kArchs = "llama qwen3 gemma2 gemma3 gemma3n gemma4 gpt-oss deepseek2 qwen3moe llama4 mamba2 nemotron_h granitehybrid lfm2 falcon-h1";

void usage(std::ostream& os) {
  os << "usage: kvplan_make_gguf ARCH OUT.gguf [options]\n"
        "  ARCH: "
     << kArchs
     << "\n"
        "options:\n"
        "  --ctx-train N     context_length (n_ctx_train), default 8192\n"
        "  --layers N        block_count; default 4 (gemma3 6, gemma3n 22, gemma4 8, deepseek2 3, nemotron_h 8, granitehybrid 6, lfm2 6,\n"
        "                    falcon-h1 4)\n"
        "  --embd N          embedding_length, default 256\n"
        "  --heads N         attention.head_count, default 4\n"
        "  --kv-heads N      attention.head_count_kv, default 2\n"
        "  --head-dim N      attention.key_length and value_length, default 64\n"
        "  --ff N            feed_forward_length, default 512\n"
        "  --vocab N         tokens in the vocabulary (>= 260), default 512\n"
        "  --swa N           attention.sliding_window (gemma2, gemma3, gemma4, gpt-oss, llama4), default 512;\n"
        "                    llama4: 0 writes sliding_window = 0 (chunking off), any other value is\n"
        "                    written but llama.cpp uses its fixed chunk of 8192\n"
        "  --experts N       expert_count (MoE architectures), default 8\n"
        "  --experts-used N  expert_used_count, default 2\n"
        "  --expert-ff N     expert_feed_forward_length, default 128\n"
        "  --kv-lora-rank N  deepseek2 attention.kv_lora_rank, default 128\n"
        "  --q-lora-rank N   deepseek2 attention.q_lora_rank, default 96\n"
        "  --rope-dim N      deepseek2 rope.dimension_count (qk rope dims), default 32\n"
        "  --nope-dim N      deepseek2 qk nope dims (key_length_mla = nope + rope), default 64\n"
        "  --v-head-dim N    deepseek2 value_length_mla, default 64\n"
        "  --ssm-state N     ssm.state_size (mamba2, nemotron_h, granitehybrid, falcon-h1), default 128\n"
        "  --ssm-groups N    ssm.group_count, default 1\n"
        "  --ssm-heads N     ssm.time_step_rank (Mamba2 heads), default 8\n"
        "  --ssm-inner N     ssm.inner_size, default 2 * embd\n";
}

struct Opts {
  std::string arch, out;
  u64 ctx_train = 8192, layers = 0, embd = 256, heads = 4, kv_heads = 2, head_dim = 64, ff = 512, vocab = 512;
  u64 swa = 512, experts = 8, experts_used = 2, expert_ff = 128;
  u64 kv_lora = 128, q_lora = 96, rope_dim = 32, nope_dim = 64, v_head_dim = 64;
  u64 ssm_state = 128, ssm_groups = 1, ssm_heads = 8, ssm_inner = 0;
};

[[noreturn]] void die(const std::string& what) {
  std::cerr << "kvplan_make_gguf: error: " << what << "\n";
  std::exit(2);
}

u64 number(const std::string& flag, const char* v) {
  if (!v) die(flag + ": missing value");
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (!*v || *end || n > (1ULL << 40)) die(flag + ": expected a non-negative integer, got '" + v + "'");
  return n;
}

Opts parse(int argc, char** argv) {
  Opts o;
  std::vector<std::string> pos;
  const std::map<std::string, u64 Opts::*> flags = {
      {"--ctx-train", &Opts::ctx_train},
      {"--layers", &Opts::layers},
      {"--embd", &Opts::embd},
      {"--heads", &Opts::heads},
      {"--kv-heads", &Opts::kv_heads},
      {"--head-dim", &Opts::head_dim},
      {"--ff", &Opts::ff},
      {"--vocab", &Opts::vocab},
      {"--swa", &Opts::swa},
      {"--experts", &Opts::experts},
      {"--experts-used", &Opts::experts_used},
      {"--expert-ff", &Opts::expert_ff},
      {"--kv-lora-rank", &Opts::kv_lora},
      {"--q-lora-rank", &Opts::q_lora},
      {"--rope-dim", &Opts::rope_dim},
      {"--nope-dim", &Opts::nope_dim},
      {"--v-head-dim", &Opts::v_head_dim},
      {"--ssm-state", &Opts::ssm_state},
      {"--ssm-groups", &Opts::ssm_groups},
      {"--ssm-heads", &Opts::ssm_heads},
      {"--ssm-inner", &Opts::ssm_inner},
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(std::cout);
      std::exit(0);
    }
    if (auto it = flags.find(a); it != flags.end()) {
      o.*(it->second) = number(a, i + 1 < argc ? argv[i + 1] : nullptr);
      ++i;
    } else if (a.rfind("--", 0) == 0) {
      die("unknown option '" + a + "'");
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2) {
    usage(std::cerr);
    std::exit(2);
  }
  o.arch = pos[0];
  o.out = pos[1];
  if (o.vocab < 260) die("--vocab: expected at least 260 (3 special and 256 byte tokens)");
  if (o.ctx_train < 1 || o.embd < 1 || o.heads < 1 || o.head_dim < 1) die("sizes must be >= 1");
  if (o.kv_heads < 1 || o.heads % o.kv_heads != 0) die("--kv-heads: must divide --heads");
  if (o.experts_used < 1 || o.experts_used > o.experts) die("--experts-used: expected 1 to --experts");
  return o;
}

std::string blk(u64 i, const std::string& name) { return "blk." + std::to_string(i) + "." + name; }

// One model file under construction: the metadata of ARCH plus its tensors.
struct Model {
  const Opts& o;
  std::string a;  // the architecture key prefix, as llama.cpp spells it
  Writer w;

  Model(const Opts& opts, const std::string& arch, u64 layers) : o(opts), a(arch) {
    w.str("general.architecture", a)
        .str("general.name", "kvplan synthetic " + a)
        .u32("general.file_type", 1)  // LLAMA_FTYPE_MOSTLY_F16
        .u32(a + ".context_length", static_cast<std::uint32_t>(o.ctx_train))
        .u32(a + ".embedding_length", static_cast<std::uint32_t>(o.embd))
        .u32(a + ".block_count", static_cast<std::uint32_t>(layers))
        .f32(a + ".attention.layer_norm_rms_epsilon", 1e-6f)
        .f32(a + ".rope.freq_base", 10000.0f);
    vocab();
  }

  Model& u32(const std::string& key, u64 v) {
    w.u32(a + "." + key, static_cast<std::uint32_t>(v));
    return *this;
  }

  // SPM ("llama") vocabulary: <unk> <s> </s>, the 256 byte tokens llama-vocab.cpp looks up for
  // the newline, then plain pieces up to --vocab.
  void vocab() {
    std::vector<std::string> toks = {"<unk>", "<s>", "</s>"};
    std::vector<float> scores = {0, 0, 0};
    std::vector<std::int32_t> types = {2, 3, 3};  // LLAMA_TOKEN_TYPE_UNKNOWN, CONTROL
    static const char* const kHex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      toks.push_back(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
      scores.push_back(0);
      types.push_back(6);  // LLAMA_TOKEN_TYPE_BYTE
    }
    for (u64 i = toks.size(); i < o.vocab; ++i) {
      toks.push_back("\xe2\x96\x81w" + std::to_string(i));  // "▁w<i>"
      scores.push_back(-static_cast<float>(i));
      types.push_back(1);  // LLAMA_TOKEN_TYPE_NORMAL
    }
    w.str("tokenizer.ggml.model", "llama")
        .arr_str("tokenizer.ggml.tokens", toks)
        .arr_f32("tokenizer.ggml.scores", scores)
        .arr_i32("tokenizer.ggml.token_type", types)
        .u32("tokenizer.ggml.bos_token_id", 1)
        .u32("tokenizer.ggml.eos_token_id", 2)
        .u32("tokenizer.ggml.unknown_token_id", 0);
  }

  void norm(const std::string& name, u64 n) { w.tensor(name, {n}, T_F32, 1.0f); }
  void vec(const std::string& name, u64 n) { w.tensor(name, {n}, T_F32); }
  void mat(const std::string& name, u64 cols, u64 rows) { w.tensor(name, {cols, rows}, T_F16); }
  void mat3(const std::string& name, u64 a0, u64 a1, u64 a2) { w.tensor(name, {a0, a1, a2}, T_F16); }

  void embeddings(bool output) {
    mat("token_embd.weight", o.embd, o.vocab);
    norm("output_norm.weight", o.embd);
    if (output) mat("output.weight", o.embd, o.vocab);
  }

  // Head geometry keys of a standard attention layer.
  void attention_keys(u64 kv_heads) {
    u32("attention.head_count", o.heads).u32("attention.head_count_kv", kv_heads);
    u32("attention.key_length", o.head_dim).u32("attention.value_length", o.head_dim);
  }

  void qkvo(u64 i, u64 kv_heads, bool bias) {
    const u64 q = o.heads * o.head_dim, kv = kv_heads * o.head_dim;
    mat(blk(i, "attn_q.weight"), o.embd, q);
    mat(blk(i, "attn_k.weight"), o.embd, kv);
    mat(blk(i, "attn_v.weight"), o.embd, kv);
    mat(blk(i, "attn_output.weight"), q, o.embd);
    if (bias) {
      vec(blk(i, "attn_q.bias"), q);
      vec(blk(i, "attn_k.bias"), kv);
      vec(blk(i, "attn_v.bias"), kv);
      vec(blk(i, "attn_output.bias"), o.embd);
    }
  }

  void qk_norm(u64 i) {
    norm(blk(i, "attn_q_norm.weight"), o.head_dim);
    norm(blk(i, "attn_k_norm.weight"), o.head_dim);
  }

  void gated_mlp(u64 i, u64 ff) {
    mat(blk(i, "ffn_gate.weight"), o.embd, ff);
    mat(blk(i, "ffn_up.weight"), o.embd, ff);
    mat(blk(i, "ffn_down.weight"), ff, o.embd);
  }

  void experts(u64 i, u64 width) {
    mat(blk(i, "ffn_gate_inp.weight"), o.embd, o.experts);
    mat3(blk(i, "ffn_gate_exps.weight"), o.embd, width, o.experts);
    mat3(blk(i, "ffn_up_exps.weight"), o.embd, width, o.experts);
    mat3(blk(i, "ffn_down_exps.weight"), width, o.embd, o.experts);
  }

  // a gated shared expert (ffn_*_shexp) of `width`
  void shared_expert(u64 i, u64 width) {
    mat(blk(i, "ffn_gate_shexp.weight"), o.embd, width);
    mat(blk(i, "ffn_up_shexp.weight"), o.embd, width);
    mat(blk(i, "ffn_down_shexp.weight"), width, o.embd);
  }

  void moe_keys() { u32("expert_count", o.experts).u32("expert_used_count", o.experts_used); }

  // Gemma 3n / 4: the per-layer embedding table, its projection and norm (width ple), and after each block's
  // attention the sandwich norms around a gated MLP, then the per-layer input gate, projection and norm
  void per_layer_embeddings(u64 ple, u64 n) {
    mat("per_layer_token_embd.weight", ple * n, o.vocab);
    mat("per_layer_model_proj.weight", o.embd, ple * n);
    norm("per_layer_proj_norm.weight", ple);
  }
  void gemma_block_tail(u64 i, u64 ple) {
    norm(blk(i, "post_attention_norm.weight"), o.embd);
    norm(blk(i, "ffn_norm.weight"), o.embd);
    gated_mlp(i, o.ff);
    norm(blk(i, "post_ffw_norm.weight"), o.embd);
    mat(blk(i, "inp_gate.weight"), o.embd, ple);
    mat(blk(i, "proj.weight"), ple, o.embd);
    norm(blk(i, "post_norm.weight"), o.embd);
  }

  // Mamba2 mixer (llama.cpp mamba2 / nemotron_h): in_proj, conv, dt bias, A, D, grouped norm, out.
  void mamba2(u64 i, bool conv_bias) {
    const u64 d_inner = o.ssm_inner ? o.ssm_inner : 2 * o.embd;
    const u64 conv_dim = d_inner + 2 * o.ssm_groups * o.ssm_state;
    mat(blk(i, "ssm_in.weight"), o.embd, d_inner + conv_dim + o.ssm_heads);
    w.tensor(blk(i, "ssm_conv1d.weight"), {4, conv_dim}, T_F32);
    if (conv_bias) vec(blk(i, "ssm_conv1d.bias"), conv_dim);
    vec(blk(i, "ssm_dt.bias"), o.ssm_heads);
    w.tensor(blk(i, "ssm_a"), {1, o.ssm_heads}, T_F32, -1.0f);
    w.tensor(blk(i, "ssm_d"), {1, o.ssm_heads}, T_F32, 1.0f);
    w.tensor(blk(i, "ssm_norm.weight"), {d_inner / o.ssm_groups, o.ssm_groups}, T_F32, 1.0f);
    mat(blk(i, "ssm_out.weight"), d_inner, o.embd);
  }

  void ssm_keys() {
    const u64 d_inner = o.ssm_inner ? o.ssm_inner : 2 * o.embd;
    if (d_inner % o.ssm_heads != 0 || d_inner % o.ssm_groups != 0)
      die("--ssm-inner must be divisible by --ssm-heads and --ssm-groups");
    u32("ssm.conv_kernel", 4).u32("ssm.inner_size", d_inner).u32("ssm.state_size", o.ssm_state);
    u32("ssm.time_step_rank", o.ssm_heads).u32("ssm.group_count", o.ssm_groups);
  }
};

u64 layers_or(const Opts& o, u64 def) { return o.layers ? o.layers : def; }

// llama (GQA), qwen3 (q/k norms), qwen3moe (q/k norms, MoE).
void dense(Model& m, u64 n, bool qk_norms, bool moe) {
  m.u32("feed_forward_length", m.o.ff);
  m.attention_keys(m.o.kv_heads);
  if (moe) {
    m.moe_keys();
    m.u32("expert_feed_forward_length", m.o.expert_ff);
  }
  m.embeddings(m.a == "llama");
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), m.o.embd);
    m.qkvo(i, m.o.kv_heads, false);
    if (qk_norms) m.qk_norm(i);
    m.norm(blk(i, "ffn_norm.weight"), m.o.embd);
    if (moe)
      m.experts(i, m.o.expert_ff);
    else
      m.gated_mlp(i, m.o.ff);
  }
}

// gemma2 (SWA on every other layer) and gemma3 (5 local : 1 global, q/k norms); tied output.
void gemma(Model& m, u64 n, bool v3) {
  m.u32("feed_forward_length", m.o.ff).u32("attention.sliding_window", m.o.swa);
  m.attention_keys(m.o.kv_heads);
  if (!v3) m.w.f32("gemma2.attn_logit_softcapping", 50.0f).f32("gemma2.final_logit_softcapping", 30.0f);
  m.embeddings(false);
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), m.o.embd);
    m.qkvo(i, m.o.kv_heads, false);
    if (v3) m.qk_norm(i);
    m.norm(blk(i, "post_attention_norm.weight"), m.o.embd);
    m.norm(blk(i, "ffn_norm.weight"), m.o.embd);
    m.gated_mlp(i, m.o.ff);
    m.norm(blk(i, "post_ffw_norm.weight"), m.o.embd);
  }
}

// gemma4 (llama.cpp src/models/gemma4.cpp): 3 sliding layers then 1 full (a bool per layer), the full ones with
// twice the head size (key_length) and half the KV heads (head_count_kv per layer), their V from K (no attn_v);
// the second half of the layers (attention.shared_kv_layers, at least 2 kept, ending on a full layer) read the last
// kept sliding and full caches and carry no attn_k / attn_k_norm; per-layer embeddings of 16; tied output.
void gemma4(Model& m, u64 n) {
  if (n < 4 || n % 4 != 0) die("--layers: gemma4 needs a multiple of 4 (3 sliding layers, then 1 full)");
  const u64 first = (n / 2 + 3) / 4 * 4;  // n_layer_kv_from_start: the first multiple of 4 from half the layers
  const u64 ple = 16, hd_full = 2 * m.o.head_dim, kv_full = std::max<u64>(1, m.o.kv_heads / 2);
  std::vector<bool> swa;
  std::vector<std::int32_t> kv_heads;
  for (u64 i = 0; i < n; ++i) {
    swa.push_back(i % 4 != 3);
    kv_heads.push_back(static_cast<std::int32_t>(swa.back() ? m.o.kv_heads : kv_full));
  }
  m.u32("feed_forward_length", m.o.ff).u32("attention.sliding_window", m.o.swa);
  m.u32("attention.head_count", m.o.heads);
  m.w.arr_i32(m.a + ".attention.head_count_kv", kv_heads);
  m.u32("attention.key_length", hd_full).u32("attention.value_length", hd_full);
  m.u32("attention.key_length_swa", m.o.head_dim).u32("attention.value_length_swa", m.o.head_dim);
  m.w.arr_bool(m.a + ".attention.sliding_window_pattern", swa);
  m.u32("attention.shared_kv_layers", n - first).u32("embedding_length_per_layer_input", ple);
  m.embeddings(false);
  m.per_layer_embeddings(ple, n);
  m.w.tensor("rope_freqs.weight", {hd_full / 2}, T_F32, 1.0f);
  for (u64 i = 0; i < n; ++i) {
    const u64 hd = swa[i] ? m.o.head_dim : hd_full, kv = static_cast<u64>(kv_heads[i]) * hd, q = m.o.heads * hd;
    m.norm(blk(i, "attn_norm.weight"), m.o.embd);
    m.mat(blk(i, "attn_q.weight"), m.o.embd, q);
    if (i < first) {
      m.mat(blk(i, "attn_k.weight"), m.o.embd, kv);
      if (swa[i]) m.mat(blk(i, "attn_v.weight"), m.o.embd, kv);
      m.norm(blk(i, "attn_k_norm.weight"), hd);
    }
    m.mat(blk(i, "attn_output.weight"), q, m.o.embd);
    m.norm(blk(i, "attn_q_norm.weight"), hd);
    m.gemma_block_tail(i, ple);
  }
}

// gemma3n (llama.cpp src/models/gemma3n.cpp): 4 sliding layers then 1 full (llama.cpp's default period 5, no key);
// layers from 20 on (llama.cpp's fixed n_layer_kv_from_start) read layer 18's or 19's cache; every layer keeps its
// k/v projections; AltUp of 4 inputs, Laurel of rank 64 and per-layer embeddings of 256 (llama.cpp's fixed sizes).
void gemma3n(Model& m, u64 n) {
  const u64 altup = 4, laurel = 64, ple = 256;
  m.u32("feed_forward_length", m.o.ff).u32("attention.sliding_window", m.o.swa);
  m.attention_keys(m.o.kv_heads);
  m.embeddings(false);
  m.mat3("altup_proj.weight", m.o.embd, m.o.embd, altup - 1);
  m.mat3("altup_unembd_proj.weight", m.o.embd, m.o.embd, altup - 1);
  m.per_layer_embeddings(ple, n);
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), m.o.embd);
    m.qkvo(i, m.o.kv_heads, false);
    m.qk_norm(i);
    m.gemma_block_tail(i, ple);
    m.mat(blk(i, "altup_correct_coef.weight"), altup, altup);
    m.norm(blk(i, "altup_correct_scale.weight"), m.o.embd);
    m.mat(blk(i, "altup_predict_coef.weight"), altup, altup * altup);
    m.mat(blk(i, "altup_router.weight"), m.o.embd, altup);
    m.norm(blk(i, "altup_router_norm.weight"), m.o.embd);
    m.mat(blk(i, "laurel_l.weight"), m.o.embd, laurel);
    m.mat(blk(i, "laurel_r.weight"), laurel, m.o.embd);
    m.norm(blk(i, "laurel_post_norm.weight"), m.o.embd);
  }
}

// gpt-oss (llama.cpp OPENAI_MOE): SWA on even layers, attention sinks, MoE with biases.
void gpt_oss(Model& m, u64 n) {
  m.u32("feed_forward_length", m.o.ff).u32("attention.sliding_window", m.o.swa);
  m.u32("expert_feed_forward_length", m.o.expert_ff);
  m.attention_keys(m.o.kv_heads);
  m.moe_keys();
  m.embeddings(true);
  const u64 e = m.o.experts, ff = m.o.expert_ff;
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), m.o.embd);
    m.norm(blk(i, "post_attention_norm.weight"), m.o.embd);
    m.qkvo(i, m.o.kv_heads, true);
    m.vec(blk(i, "attn_sinks.weight"), m.o.heads);
    m.experts(i, ff);
    m.vec(blk(i, "ffn_gate_inp.bias"), e);
    m.w.tensor(blk(i, "ffn_gate_exps.bias"), {ff, e}, T_F32);
    m.w.tensor(blk(i, "ffn_up_exps.bias"), {ff, e}, T_F32);
    m.w.tensor(blk(i, "ffn_down_exps.bias"), {m.o.embd, e}, T_F32);
  }
}

// deepseek2 with MLA as converted since llama.cpp PR 12801: one KV head whose K is the latent plus
// the rope part (key_length = kv_lora_rank + rope) and V the latent (value_length = kv_lora_rank);
// the per-head sizes go to key_length_mla / value_length_mla. Layer 0 dense, the rest MoE.
void deepseek2(Model& m, u64 n) {
  const Opts& o = m.o;
  const u64 k_mla = o.nope_dim + o.rope_dim;
  m.u32("feed_forward_length", o.ff).u32("leading_dense_block_count", 1);
  m.u32("attention.head_count", o.heads).u32("attention.head_count_kv", 1);
  m.u32("attention.key_length", o.kv_lora + o.rope_dim).u32("attention.value_length", o.kv_lora);
  m.u32("attention.key_length_mla", k_mla).u32("attention.value_length_mla", o.v_head_dim);
  m.u32("attention.q_lora_rank", o.q_lora).u32("attention.kv_lora_rank", o.kv_lora);
  m.u32("rope.dimension_count", o.rope_dim);
  m.moe_keys();
  m.u32("expert_feed_forward_length", o.expert_ff).u32("expert_shared_count", 1);
  m.u32("expert_gating_func", 1);  // LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX
  m.embeddings(true);
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), o.embd);
    m.norm(blk(i, "attn_q_a_norm.weight"), o.q_lora);
    m.norm(blk(i, "attn_kv_a_norm.weight"), o.kv_lora);
    m.mat(blk(i, "attn_q_a.weight"), o.embd, o.q_lora);
    m.mat(blk(i, "attn_q_b.weight"), o.q_lora, o.heads * k_mla);
    m.mat(blk(i, "attn_kv_a_mqa.weight"), o.embd, o.kv_lora + o.rope_dim);
    m.mat3(blk(i, "attn_k_b.weight"), o.nope_dim, o.kv_lora, o.heads);
    m.mat3(blk(i, "attn_v_b.weight"), o.kv_lora, o.v_head_dim, o.heads);
    m.mat(blk(i, "attn_output.weight"), o.heads * o.v_head_dim, o.embd);
    m.norm(blk(i, "ffn_norm.weight"), o.embd);
    if (i == 0) {
      m.gated_mlp(i, o.ff);
    } else {
      m.experts(i, o.expert_ff);
      m.shared_expert(i, o.expert_ff);
    }
  }
}

// llama4: chunked attention on 3 of every 4 layers, MoE with a shared expert every
// interleave_moe_layer_step (2) layers, dense MLP on the others.
void llama4(Model& m, u64 n) {
  const Opts& o = m.o;
  m.u32("feed_forward_length", o.ff).u32("attention.sliding_window", o.swa);
  m.u32("expert_feed_forward_length", o.expert_ff).u32("interleave_moe_layer_step", 2);
  m.attention_keys(o.kv_heads);
  m.moe_keys();
  m.embeddings(true);
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), o.embd);
    m.qkvo(i, o.kv_heads, false);
    m.norm(blk(i, "ffn_norm.weight"), o.embd);
    if ((i + 1) % 2 == 0) {
      m.experts(i, o.expert_ff);
      m.shared_expert(i, o.expert_ff);
    } else {
      m.gated_mlp(i, o.ff);
    }
  }
}

void mamba2(Model& m, u64 n) {
  m.ssm_keys();
  m.embeddings(false);
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), m.o.embd);
    m.mamba2(i, true);
  }
}

// nemotron_h (hybrid): layers cycle Mamba2, MLP, attention, MLP. A layer with head_count_kv 0 and
// feed_forward_length 0 is Mamba2; head_count_kv > 0 attention only; feed_forward_length > 0 MLP
// only (squared ReLU: up and down).
void nemotron_h(Model& m, u64 n) {
  const Opts& o = m.o;
  std::vector<std::uint32_t> kv(n, 0), ff(n, 0);
  for (u64 i = 0; i < n; ++i) {
    if (i % 4 == 2) kv[i] = static_cast<std::uint32_t>(o.kv_heads);
    if (i % 2 == 1) ff[i] = static_cast<std::uint32_t>(o.ff);
  }
  m.ssm_keys();
  m.w.f32("nemotron_h.attention.layer_norm_epsilon", 1e-5f);
  m.u32("attention.head_count", o.heads);
  m.w.arr_u32("nemotron_h.attention.head_count_kv", kv).arr_u32("nemotron_h.feed_forward_length", ff);
  m.u32("attention.key_length", o.head_dim).u32("attention.value_length", o.head_dim);
  m.embeddings(true);
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), o.embd);
    if (kv[i] > 0) {
      m.qkvo(i, kv[i], false);
    } else if (ff[i] > 0) {
      m.mat(blk(i, "ffn_up.weight"), o.embd, ff[i]);
      m.mat(blk(i, "ffn_down.weight"), ff[i], o.embd);
    } else {
      m.mamba2(i, true);
    }
  }
}

// granitehybrid (Granite 4.0-H; llama.cpp src/models/granite-hybrid.cpp): Mamba2 where head_count_kv is 0, attention on
// every third layer from the second; every layer routes experts of feed_forward_length (--expert-ff) beside a shared
// MLP of expert_shared_feed_forward_length (--ff).
void granitehybrid(Model& m, u64 n) {
  const Opts& o = m.o;
  std::vector<std::uint32_t> kv(n, 0);
  for (u64 i = 0; i < n; ++i)
    if (i % 3 == 1) kv[i] = static_cast<std::uint32_t>(o.kv_heads);
  m.ssm_keys();
  m.u32("attention.head_count", o.heads).u32("feed_forward_length", o.expert_ff);
  m.w.arr_u32(m.a + ".attention.head_count_kv", kv);
  m.u32("attention.key_length", o.head_dim).u32("attention.value_length", o.head_dim);
  m.moe_keys();
  m.u32("expert_shared_feed_forward_length", o.ff);
  m.embeddings(false);
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), o.embd);
    if (kv[i] > 0)
      m.qkvo(i, kv[i], false);
    else
      m.mamba2(i, true);
    m.norm(blk(i, "ffn_norm.weight"), o.embd);
    m.experts(i, o.expert_ff);
    m.shared_expert(i, o.ff);
  }
}

// lfm2 (llama.cpp src/models/lfm2.cpp): a short convolution of shortconv.l_cache 3 taps where head_count_kv is 0,
// attention with q/k norms on every third layer from the third (its q and output are n_embd wide: --heads x
// --head-dim must be --embd); the final norm is token_embd_norm.
void lfm2(Model& m, u64 n) {
  const Opts& o = m.o;
  if (o.heads * o.head_dim != o.embd) die("lfm2: --heads x --head-dim must equal --embd");
  std::vector<std::uint32_t> kv(n, 0);
  for (u64 i = 0; i < n; ++i)
    if (i % 3 == 2) kv[i] = static_cast<std::uint32_t>(o.kv_heads);
  m.u32("shortconv.l_cache", 3).u32("feed_forward_length", o.ff).u32("attention.head_count", o.heads);
  m.w.arr_u32(m.a + ".attention.head_count_kv", kv);
  m.u32("attention.key_length", o.head_dim).u32("attention.value_length", o.head_dim);
  m.mat("token_embd.weight", o.embd, o.vocab);
  m.norm("token_embd_norm.weight", o.embd);
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), o.embd);
    if (kv[i] > 0) {
      m.qkvo(i, kv[i], false);
      m.qk_norm(i);
    } else {
      m.w.tensor(blk(i, "shortconv.conv.weight"), {3, o.embd}, T_F32);
      m.mat(blk(i, "shortconv.in_proj.weight"), o.embd, 3 * o.embd);
      m.mat(blk(i, "shortconv.out_proj.weight"), o.embd, o.embd);
    }
    m.norm(blk(i, "ffn_norm.weight"), o.embd);
    m.gated_mlp(i, o.ff);
  }
}

// falcon-h1 (llama.cpp src/models/falcon-h1.cpp): attention and a Mamba2 mixer side by side in every block (both
// caches on every layer), then a gated MLP of feed_forward_length; tied output.
void falcon_h1(Model& m, u64 n) {
  const Opts& o = m.o;
  m.ssm_keys();
  m.u32("feed_forward_length", o.ff);
  m.attention_keys(o.kv_heads);
  m.embeddings(false);
  for (u64 i = 0; i < n; ++i) {
    m.norm(blk(i, "attn_norm.weight"), o.embd);
    m.qkvo(i, o.kv_heads, false);
    m.mamba2(i, true);
    m.norm(blk(i, "ffn_norm"), o.embd);  // no ".weight": falcon-h1.cpp asks for tn(LLM_TENSOR_FFN_NORM, i)
    m.gated_mlp(i, o.ff);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Opts o = parse(argc, argv);
  const std::string& a = o.arch;
  const std::map<std::string, u64> default_layers = {
      {"llama", 4},     {"qwen3", 4},    {"gemma2", 4}, {"gemma3", 6}, {"gemma3n", 22}, {"gemma4", 8}, {"gpt-oss", 4},
      {"deepseek2", 3}, {"qwen3moe", 4}, {"llama4", 4}, {"mamba2", 4}, {"nemotron_h", 8},
      {"granitehybrid", 6}, {"lfm2", 6}, {"falcon-h1", 4},
  };
  auto it = default_layers.find(a);
  if (it == default_layers.end()) die("unknown architecture '" + a + "'; expected one of: " + kArchs);
  const u64 n = layers_or(o, it->second);
  try {
    Model m(o, a, n);
    if (a == "llama" || a == "qwen3" || a == "qwen3moe")
      dense(m, n, a != "llama", a == "qwen3moe");
    else if (a == "gemma2" || a == "gemma3")
      gemma(m, n, a == "gemma3");
    else if (a == "gemma4")
      gemma4(m, n);
    else if (a == "gemma3n")
      gemma3n(m, n);
    else if (a == "gpt-oss")
      gpt_oss(m, n);
    else if (a == "deepseek2")
      deepseek2(m, n);
    else if (a == "llama4")
      llama4(m, n);
    else if (a == "mamba2")
      mamba2(m, n);
    else if (a == "granitehybrid")
      granitehybrid(m, n);
    else if (a == "lfm2")
      lfm2(m, n);
    else if (a == "falcon-h1")
      falcon_h1(m, n);
    else
      nemotron_h(m, n);
    m.w.save(o.out);
  } catch (const std::exception& e) {
    std::cerr << "kvplan_make_gguf: error: " << o.out << ": " << e.what() << "\n";
    return 3;
  }
  return 0;
}
