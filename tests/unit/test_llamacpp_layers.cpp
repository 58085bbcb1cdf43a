// llama.cpp's weights by layer (core/weights.hpp layer_weight_bytes) and where they go (core/plan.cpp
// build_llamacpp): the input layer stays on the CPU, each block goes with its layer, a tied head is loaded again with
// the output layer. Expected figures are a published llama.cpp log and hand arithmetic from the configs.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "kvplan/core/transform.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/gguf.hpp"
#include "plan_helpers.hpp"
#include "tools/gguf_writer.hpp"

using namespace kvplan;

namespace {

constexpr double MiB = 1 << 20;

// c4ai-command-r-v01 at Q4_K_S, -ngl 99 over two GPUs split 12 : 29 of the 41 offloaded layers, -c 4096, f16 cache
PlanSpec command_r() {
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 4096;
  e.ctx_given = true;
  e.parallel = 1;
  e.fit = false;
  e.n_gpu_layers = 99;
  e.gpu_layers_given = true;
  e.gpu_count = 2;
  e.tensor_split = {12, 29};
  PlanSpec s = kvtest::spec("c4ai-command-r-v01", "h100-sxm", e, {}, ElemFormat::f16);
  apply_weight_format(s.model, "Q4_K_S", "--weight-format");
  return s;
}

}  // namespace

TEST_CASE("llama.cpp model buffers per GPU: Command-R Q4_K_S on two GPUs as llama.cpp printed them", "[llamacpp][weights][published]") {
  // ggml-org/llama.cpp pull request #6122 (turn 20), RTX 4070 Ti + RTX 3090 Ti, Command-R v01 (n_embd 8192, 40
  // layers, 64 KV heads, freq_base 8e6), -c 4096:
  //   offloaded 41/41 layers to GPU
  //   CPU buffer size = 1640.62 MiB / CUDA0 buffer size = 5434.38 MiB / CUDA1 buffer size = 13989.53 MiB
  //   CUDA0 KV buffer size = 1536.00 MiB / CUDA1 KV buffer size = 3584.00 MiB
  // A layer's f16 cache is 64 x 128 x 2 B x (K + V) x 4096 cells = 128 MiB, so the KV lines say 12 layers on CUDA0
  // and 28 on CUDA1 (-ts 12,29 places them so). The log does not name the file type; Q4_K_S gives its buffers to
  // the byte, worked by hand from llama-quantize's rules:
  //   a block is q, k, v, o 8192 x 8192 (no GQA) and the MLP 3 x 8192 x 22528: 822,083,584 parameters at q4_K
  //   (144 B per 256) = 462,422,016 B, plus attn_norm 8192 x f32 = 32,768 B; Q4_K_S makes attn_v q5_K (176 B per
  //   256) in the first 4 layers (+8,388,608 B each) and ffn_down q5_K in the first n_layer / 8 = 5 (+23,068,672 B)
  //   CUDA0 = 12 x 462,454,784 + 4 x 8,388,608 + 5 x 23,068,672 = 5,698,355,200 B = 5434.375 MiB
  //   token_embd is the tied head, so llama-quantize gives it the output type q6_K (210 B per 256):
  //   256000 x 8192 x 210 / 256 = 1,720,320,000 B = 1640.625 MiB, on the CPU as the input layer and again on CUDA1
  //   as the output layer
  //   CUDA1 = 28 x 462,454,784 + 1,720,320,000 + output_norm 32,768 = 14,669,086,720 B = 13989.53 MiB
  const Planner p(command_r());
  const auto& d = p.devices();
  REQUIRE(d.size() == 2);
  CHECK(d[0].layers == 12);
  CHECK(d[1].layers == 28);
  CHECK(d[1].output_layer);
  CHECK(d[0].weights == 5698355200LL);
  CHECK(d[1].weights == 14669086720LL);
  CHECK(p.engine().host_weight_bytes == 1720320000LL);
  CHECK(p.engine().host_input_bytes == 1720320000LL);
  // the printed figures, to their two decimals
  CHECK(static_cast<double>(d[0].weights) / MiB == Approx(5434.38).margin(0.005));
  CHECK(static_cast<double>(d[1].weights) / MiB == Approx(13989.53).margin(0.005));
  CHECK(static_cast<double>(p.engine().host_weight_bytes) / MiB == Approx(1640.62).margin(0.005));
  CHECK(d[0].kv == 1536LL << 20);
  CHECK(d[1].kv == 3584LL << 20);
}

TEST_CASE("llama.cpp per-GPU model buffers from a pasted llama-server command", "[llamacpp][weights][cli]") {
  // the same deployment as above, as a user types it; the host tier holds the input layer
  const auto r = kvtest::kvplan({"plan", "--gpu", "h100-sxm", "--weight-format", "Q4_K_S", "--format", "json", "--", "llama-server", "-m",
                                 kvtest::data("configs/c4ai-command-r-v01.json"), "-ngl", "99", "-ts", "12,29", "-c", "4096", "-np", "1"});
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["results"]["devices"][0]["weights_bytes"] == 5698355200LL);
  CHECK(j["results"]["devices"][1]["weights_bytes"] == 14669086720LL);
  i64 host = 0;
  for (const auto& t : j["results"]["tiers"])
    if (t["tier"] == "host") host = t["weights_bytes"].get<i64>();
  CHECK(host == 1720320000LL);
}

TEST_CASE("llama.cpp partial offload: the layers -ngl leaves on the CPU are host memory", "[llamacpp][weights]") {
  // -ngl 20 of 41 (output first): the output layer and blocks 21..39 on the GPUs; blocks 0..20 and the input layer
  // in host memory: 1,720,320,000 + 21 x 462,454,784 + the Q4_K_S extras of blocks 0..4 (4 x 8,388,608 +
  // 5 x 23,068,672) = 1,720,320,000 + 9,711,550,464 + 148,897,792 = 11,580,768,256 B
  PlanSpec s = command_r();
  s.engine.n_gpu_layers = 20;
  const Planner p(s);
  CHECK(p.engine().host_weight_bytes == 11580768256LL);
  // and the GPUs hold the other 19 blocks and the head: 19 x 462,454,784 + 1,720,352,768 = 10,506,993,664 B
  CHECK(p.devices()[0].weights + p.devices()[1].weights == 10506993664LL);
}

TEST_CASE("layer_weight_bytes adds up to the whole model's weights", "[weights][layers]") {
  // input + blocks + output equals weight_bytes, less the tied head's second copy and the vision tower (a separate
  // --mmproj file in llama.cpp), within a byte of rounding per layer (each layer's packed bytes are rounded up)
  for (const char* model : {"llama-3.1-8b", "qwen3-30b-a3b", "gemma-3-27b-it", "mixtral-8x7b", "deepseek-v2-lite", "jamba-1.5-mini"}) {
    for (const char* format : {"", "Q4_K_M", "Q8_0", "IQ2_XS", "awq", "fp8"}) {
      INFO(model << " " << format);
      ModelSpec m = kvtest::load(model);
      if (*format) apply_weight_format(m, format, "--weight-format");
      const ParamCount pc = count_params(m);
      i64 vision = 0;
      for (const auto& part : pc.parts)
        if (part.name == "vision") vision = part_weight_bytes(m, part);
      const LayerWeights w = layer_weight_bytes(m);
      REQUIRE(w.blocks.size() == m.layers.size());
      i64 sum = w.input + w.output - w.output_copy;
      for (i64 b : w.blocks) sum += b;
      const i64 whole = weight_bytes(m, pc).total - vision;
      CHECK(std::abs(sum - whole) <= static_cast<i64>(m.layers.size()) + 2);
      CHECK(w.output_copy == (m.tied_embeddings ? w.input : 0));
    }
  }
}

TEST_CASE("a GGUF file's tensor table by llama.cpp layer", "[weights][layers][gguf]") {
  // two blocks, tied (no output.weight): the input layer is token_embd q8_0 [256 x 32] = 8192 / 32 x 34 = 8,704 B;
  // block i: attn_norm 256 f32 (1,024) + attn_q [256 x 256] q4_K (65,536 / 256 x 144 = 36,864) + blk.1 also has
  // ffn_up [256 x 512] f16 (262,144); the output layer: output_norm 256 f32 (1,024) + token_embd again (8,704);
  // a blk.2 tensor (past block_count, as nextn layers are) is not placed
  kvtest::Writer w = kvtest::two_block("llama", 4096);
  for (int i = 0; i < 2; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.tensor(b + "attn_norm.weight", {256}, kvtest::T_F32).tensor(b + "attn_q.weight", {256, 256}, kvtest::T_Q4_K);
  }
  w.tensor("blk.1.ffn_up.weight", {256, 512}, kvtest::T_F16).tensor("blk.2.attn_q.weight", {256, 256}, kvtest::T_Q4_K);
  const std::string file = w.save(kvtest::temp_dir("layer-table") / "two-blocks.gguf");
  const ModelSpec m = io::model_from_gguf(file, "two-blocks");
  REQUIRE(m.layers.size() == 2);
  CHECK(m.tied_embeddings);
  CHECK(m.exact_layer_bytes == std::vector<i64>{8704, 1024 + 36864, 1024 + 36864 + 262144, 1024});
  CHECK(m.exact_embedding_bytes == 8704);
  const LayerWeights lw = layer_weight_bytes(m);
  CHECK(lw.basis == "GGUF tensor table by layer");
  CHECK(lw.output_copy == 8704);
  CHECK(lw.output == 1024 + 8704);
  // a weight format given on the command line replaces the file's table
  ModelSpec q = m;
  apply_weight_format(q, "Q8_0", "--weight-format");
  CHECK(q.exact_layer_bytes.empty());
  CHECK(q.exact_embedding_bytes == 0);
}

namespace {

// llama-3.1-8b, -c 8192 -np 1, f16 cache, on one GPU of `memory` bytes, --fit on
PlanSpec eight_b_on(i64 memory) {
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 8192;
  e.ctx_given = true;
  e.parallel = 1;
  e.fit = true;
  PlanSpec s = kvtest::spec("llama-3.1-8b", "h100-sxm", e, {}, ElemFormat::f16);
  s.overrides.gpu_memory = memory;
  return s;
}

}  // namespace

TEST_CASE("llama.cpp fit: the most -ngl that leaves --fit-target free at this context", "[llamacpp][fit]") {
  // llama-3.1-8b bf16 on a 10 GiB GPU at -c 8192, margin 1024 MiB: the limit is 10,737,418,240 - 1,073,741,824 =
  // 9,663,676,416 B. Offloading is output layer first: the head 1,050,681,344 B, the compute buffer (512 x 4 x 14336
  // x 4 = 117,440,512 for the MLP + 512 x 128256 x 4 = 262,668,288 for the logits) and the CUDA context 536,870,912
  // are 1,967,661,056 B whatever the count; each block adds 436,224,000 B of weights and 8192 x 8 x 128 x 2 B x 2 =
  // 33,554,432 B of f16 KV = 469,778,432 B. (9,663,676,416 - 1,967,661,056) / 469,778,432 = 16.38: 16 blocks and
  // the output layer, -ngl 17, using 1,967,661,056 + 16 x 469,778,432 = 9,484,115,968 B
  const PlanSpec s = eight_b_on(10 * kvtest::GiB);
  const LlamaFit f = llamacpp_fit(s);
  CHECK(f.n_gpu_layers == 17);
  CHECK(f.total_layers == 33);
  CHECK(f.n_cpu_moe == 0);
  CHECK(f.n_ctx == 8192);
  CHECK(f.margin_bytes == 1LL << 30);
  CHECK(f.fullest_gpu_bytes == 9484115968LL);
  CHECK(f.fits);
  // the deployment's own -ngl is the question, not an input
  PlanSpec given = s;
  given.engine.n_gpu_layers = 33;
  given.engine.gpu_layers_given = true;
  CHECK(llamacpp_fit(given).n_gpu_layers == 17);
  // ... while llama-server with -ngl given does not move layers itself (llama_params_fit aborts: "n_gpu_layers
  // already set by user"), so that plan keeps 33 layers and does not start on 10 GiB
  const Planner p(given);
  CHECK(p.engine().gpu_layers == 33);
  CHECK_FALSE(p.engine().startup_ok);
  // --fit-target 0 lets one more block in: (10,737,418,240 - 1,967,661,056) / 469,778,432 = 18.67 -> -ngl 19
  PlanSpec tight = s;
  tight.engine.fit_target_bytes = 0;
  CHECK(llamacpp_fit(tight).n_gpu_layers == 19);
}

TEST_CASE("llama.cpp fit: a MoE model keeps its layers and moves experts to host memory", "[llamacpp][fit][moe]") {
  // qwen3-30b-a3b bf16 on a 24 GiB GPU at -c 4096, compute buffer given as 100 MiB and CUDA context as 500 MiB.
  // llama_params_fit step 3: with every expert tensor on the CPU the rest fits, so all 49 layers stay and the experts
  // of the first k layers go to host memory. A layer's experts: 128 x 3 x 2048 x 768 x 2 B = 1,207,959,552 B; the
  // rest of a layer: attention 2048 x 4096 x 2 + 2048 x 512 x 2 = 18,874,368, q/k norms 256, router 2048 x 128 =
  // 262,144, two norms 4096: 19,140,864 x 2 B = 38,281,728 B, and its f16 KV 4096 x 4 x 128 x 2 B x 2 = 8,388,608 B;
  // the head (151936 x 2048 + 2048) x 2 B = 622,333,952 B. Fixed: 622,333,952 + 48 x 46,670,336 + 104,857,600 +
  // 524,288,000 = 3,491,655,680 B; the limit 24 GiB - 1 GiB = 24,696,061,952 B leaves 21,204,406,272 B for experts:
  // 17 layers' (17.55), so the first 48 - 17 = 31 layers' experts move (as --n-cpu-moe 31)
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 4096;
  e.ctx_given = true;
  e.parallel = 1;
  e.fit = true;
  PlanSpec s = kvtest::spec("qwen3-30b-a3b", "h100-sxm", e, {}, ElemFormat::f16);
  s.overrides.gpu_memory = 24 * kvtest::GiB;
  s.overrides.activation = 100LL << 20;
  s.overrides.cuda_context = 500LL << 20;
  const LlamaFit f = llamacpp_fit(s);
  CHECK(f.n_gpu_layers == 49);
  CHECK(f.n_cpu_moe == 31);
  CHECK(f.fits);
  // the plan itself, with --fit on and nothing placed by the user, does the same
  const Planner p(s);
  CHECK(p.engine().n_cpu_moe == 31);
  CHECK(p.engine().startup_ok);
  // the 31 layers' experts are host memory, with the input layer (151936 x 2048 x 2 B = 622,329,856 B)
  CHECK(p.engine().host_weight_bytes == 31 * 1207959552LL + 622329856LL);
  // --n-cpu-moe given by the user is a tensor override: llama.cpp's fit moves nothing more
  PlanSpec user = s;
  user.engine.n_cpu_moe = 10;
  CHECK(Planner(user).engine().n_cpu_moe == 10);
  CHECK(llamacpp_fit(user).n_cpu_moe == 10);
}

TEST_CASE("kvplan fit on a llama.cpp deployment answers with llama.cpp's own -ngl", "[llamacpp][fit][cli]") {
  // the deployment of "the most -ngl that leaves --fit-target free" above, through the CLI: -ngl 99 given is
  // ignored (it is the question); the answer is -ngl 17 and the table names it
  const std::vector<std::string> base = {"fit", "llama-3.1-8b", "--engine", "llama.cpp", "--gpu", "h100-sxm", "--gpu-memory-bytes", "10GiB",
                                         "--ctx-size", "8192", "--parallel", "1", "--cache-type-k", "f16", "--cache-type-v", "f16",
                                         "--n-gpu-layers", "99"};
  auto args = base;
  args.insert(args.end(), {"--format", "json"});
  const auto r = kvtest::kvplan(args);
  INFO(r.err);
  REQUIRE(r.out.size() > 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& f = j["results"]["llama_fit"];
  CHECK(f["n_gpu_layers"] == 17);
  CHECK(f["total_layers"] == 33);
  CHECK(f["n_cpu_moe"] == 0);
  CHECK(f["n_ctx"] == 8192);
  CHECK(f["fit_target_bytes"] == 1LL << 30);
  CHECK(f["fullest_gpu_bytes"] == 9484115968LL);
  CHECK(f["leaves_fit_target"] == true);
  const auto t = kvtest::kvplan(base);
  CHECK(t.out.find("-ngl 17") != std::string::npos);
}
