// llama.cpp memory beyond one GPU and one model: the layer placement rule (llama_model::load_tensors), each GPU's
// weights, KV and compute buffers, the draft model's weights and per-slot KV, the fit verdict on the fullest GPU,
// --override-tensor moving tensors to host memory, from pasted llama-server commands and a deployment file too.
// Expected figures are worked by hand in the comments from the model geometry (profiles/models/*.json).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "tools/gguf_writer.hpp"
#include "kvplan/core/weights.hpp"
#include "plan_helpers.hpp"

using namespace kvplan;

namespace {

// how many of the n_layer + 1 layers (the last is the output layer) each device holds; [devices] = the CPU
std::vector<int> count_by_device(const std::vector<int>& dev, int devices) {
  std::vector<int> n(static_cast<size_t>(devices) + 1, 0);
  for (int d : dev) ++n[d < 0 ? static_cast<size_t>(devices) : static_cast<size_t>(d)];
  return n;
}

// llama-3.1-8b, -c 8192 -np 1, f16 cache, -ngl 99 on `gpus` H100s, --fit off
PlanSpec eight_b(i64 gpus) {
  auto e = kvtest::engine(EngineKind::llamacpp);
  e.ctx_size = 8192;
  e.ctx_given = true;
  e.parallel = 1;
  e.fit = false;
  e.n_gpu_layers = 99;
  e.gpu_layers_given = true;
  e.gpu_count = gpus;
  return kvtest::spec("llama-3.1-8b", "h100-sxm", e, {}, ElemFormat::f16);
}

// the model's weights as kvplan counts them
i64 weights_of(const PlanSpec& s) { return weight_bytes(s.model, count_params(s.model)).total; }

// llama-3.1-8b in bf16, by llama.cpp layer: a block is q 4096 x 4096, k and v 4096 x 1024, o 4096 x 4096
// (41,943,040), the MLP 3 x 4096 x 14336 (176,160,768) and two norms of 4096: 218,112,000 parameters x 2 B; the
// input layer is token_embd 128256 x 4096 x 2 B, which llama.cpp keeps on the CPU; the output layer is the untied
// head 128256 x 4096 and output_norm 4096, x 2 B
constexpr i64 kBlock8b = 218112000LL * 2;                 // 436,224,000
constexpr i64 kEmbd8b = 128256LL * 4096 * 2;              // 1,050,673,152
constexpr i64 kHead8b = (128256LL * 4096 + 4096) * 2;     // 1,050,681,344
// llama-3.2-1b (bf16, tied): a block is q 2048 x 2048, k and v 2048 x 512, o 2048 x 2048 (10,485,760), the MLP
// 3 x 2048 x 8192 (50,331,648) and two norms of 2048: 60,821,504 x 2 B; the tied head is token_embd loaded a second
// time where the output layer runs, with output_norm: (128256 x 2048 + 2048) x 2 B
constexpr i64 kBlock1b = 60821504LL * 2;                  // 121,643,008
constexpr i64 kHead1b = (128256LL * 2048 + 2048) * 2;     // 525,340,672

constexpr i64 kKvLayer8b = 8192LL * 8 * 128 * 2 * 2;    // cells x KV heads x head_dim x f16 x (K + V) = 33,554,432
constexpr i64 kFfn8b = 512LL * 4 * 14336 * 4;           // n_ubatch x 4 x intermediate x f32 = 117,440,512
constexpr i64 kLogits = 512LL * 128256 * 4;             // n_ubatch x vocab x f32 = 262,668,288
constexpr i64 kKvLayer1b = 8192LL * 8 * 64 * 2 * 2;     // llama-3.2-1b: 16,777,216
constexpr i64 kFfn1b = 512LL * 4 * 8192 * 4;            // 67,108,864

}  // namespace

TEST_CASE("llama.cpp places layers by the cumulative tensor split", "[llamacpp][gpus]") {
  // 32 layers, -ngl 99 (33 offloaded), three equal shares: split points 1/3, 2/3, 1; layer il goes to the first
  // point above il / 33: il < 11 -> GPU 0 (11 layers), il < 22 -> GPU 1 (11), the rest (10 + output) -> GPU 2
  CHECK(count_by_device(llamacpp_layer_devices(32, 99, {1, 1, 1}, true), 3) == std::vector<int>{11, 11, 11, 0});
  CHECK(llamacpp_layer_devices(32, 99, {1, 1, 1}, true)[32] == 2);  // the output layer on the last GPU
  // an empty or all-zero split is equal shares (llama.cpp: free memory, equal on identical idle GPUs)
  CHECK(llamacpp_layer_devices(32, 99, {0, 0, 0}, true) == llamacpp_layer_devices(32, 99, {1, 1, 1}, true));
  // -ts 3,1: points 0.75, 1: il / 33 < 0.75 for il <= 24 -> 25 layers on GPU 0, 7 + output on GPU 1
  CHECK(count_by_device(llamacpp_layer_devices(32, 99, {3, 1}, true), 2) == std::vector<int>{25, 8, 0});
  // -ts 0,1,1,1: the first point is 0, so GPU 0 holds nothing; the other three split as the equal case
  CHECK(count_by_device(llamacpp_layer_devices(32, 99, {0, 1, 1, 1}, true), 4) == std::vector<int>{0, 11, 11, 11, 0});
  // before #18148, -ngl 32 = the layer count: i_gpu_start = 32 - 32 = 0, 32 offloaded; layers 0..31 split
  // 11 / 11 / 10 (il / 32 < 1/3 for il <= 10, < 2/3 for il <= 21) and the output layer (il - 0 = 32 >= 32) on the CPU
  const auto old_rule = llamacpp_layer_devices(32, 32, {1, 1, 1}, false);
  CHECK(count_by_device(old_rule, 3) == std::vector<int>{11, 11, 10, 1});
  CHECK(old_rule[32] == -1);
  // from #18148 -ngl 32 offloads the output layer first: i_gpu_start = 33 - 32 = 1, so layer 0 stays on the CPU;
  // (il - 1) / 32: layers 1..11 on GPU 0, 12..22 on GPU 1, 23..31 + output on GPU 2
  const auto new_rule = llamacpp_layer_devices(32, 32, {1, 1, 1}, true);
  CHECK(count_by_device(new_rule, 3) == std::vector<int>{11, 11, 10, 1});
  CHECK(new_rule[0] == -1);
  CHECK(new_rule[32] == 2);
  // -ngl 0: nothing offloaded; no GPU: nothing offloaded
  CHECK(count_by_device(llamacpp_layer_devices(32, 0, {1, 1}, true), 2) == std::vector<int>{0, 0, 33});
  CHECK(count_by_device(llamacpp_layer_devices(32, 99, {}, true), 0) == std::vector<int>{33});
}

TEST_CASE("llama.cpp on three GPUs: each GPU holds its layers' weights and KV and compute buffer", "[llamacpp][gpus]") {
  const PlanSpec s = eight_b(3);
  const Planner p(s);
  REQUIRE(p.devices().size() == 3);
  const auto& d = p.devices();
  CHECK(d[0].layers == 11);
  CHECK(d[1].layers == 11);
  CHECK(d[2].layers == 10);
  CHECK(d[2].output_layer);
  // KV follows the layers: 11, 11, 10 x 33,554,432
  CHECK(d[0].kv == 11 * kKvLayer8b);
  CHECK(d[1].kv == 11 * kKvLayer8b);
  CHECK(d[2].kv == 10 * kKvLayer8b);
  // weights: each GPU its blocks' own bytes, the last the output layer too; token_embd stays in host memory
  const i64 w = weights_of(s);
  REQUIRE(w == kEmbd8b + 32 * kBlock8b + kHead8b);  // the whole model, as a check on the per-layer figures
  CHECK(d[0].weights == 11 * kBlock8b);
  CHECK(d[1].weights == 11 * kBlock8b);
  CHECK(d[2].weights == 10 * kBlock8b + kHead8b);
  CHECK(p.engine().host_weight_bytes == kEmbd8b);
  CHECK(p.engine().host_input_bytes == kEmbd8b);
  // compute: the FFN activations on every GPU with layers, the logits where the output layer is
  CHECK(d[0].compute == kFfn8b);
  CHECK(d[1].compute == kFfn8b);
  CHECK(d[2].compute == kFfn8b + kLogits);
  for (const auto& g : d) CHECK(g.context == 512LL << 20);
  // the budget is the fullest GPU's (GPU 2: the output layer and the logits)
  CHECK(p.budget_bytes("kv_cache") == 10 * kKvLayer8b);
  CHECK(p.budget_bytes("compute_buffer") == kFfn8b + kLogits);
  CHECK(p.budget_bytes("weights") == d[2].weights);
  CHECK(p.cell(8192, 1).total_bytes == d[2].total);
  // llama.cpp's KV in all is still 32 layers' worth, no longer all on one GPU
  CHECK(p.engine().gpu_kv_bytes == 32 * kKvLayer8b);
  // one GPU: the same plan as before multi-GPU support (all 33 layers, the whole compute buffer)
  const Planner one(eight_b(1));
  CHECK(one.budget_bytes("kv_cache") == 32 * kKvLayer8b);
  CHECK(one.budget_bytes("compute_buffer") == kFfn8b + kLogits);
  CHECK(one.budget_bytes("weights") == 32 * kBlock8b + kHead8b);
}

TEST_CASE("llama.cpp tensor split with split modes none and row", "[llamacpp][gpus]") {
  PlanSpec s = eight_b(2);
  s.engine.tensor_split = {3, 1};
  const Planner ts(s);
  CHECK(ts.devices()[0].kv == 25 * kKvLayer8b);  // layers 0..24
  CHECK(ts.devices()[1].kv == 7 * kKvLayer8b);   // 25..31 + output
  CHECK(ts.devices()[0].weights == 25 * kBlock8b);
  CHECK(ts.budget_bytes("weights") == 25 * kBlock8b);  // GPU 0 (25 of 32 blocks) is the fuller
  // none: only --main-gpu 1 holds the model; GPU 0 holds nothing at all
  s.engine.tensor_split = {};
  s.engine.split_mode = LlamaSplitMode::none;
  s.engine.main_gpu = 1;
  const Planner none(s);
  CHECK(none.devices()[0].total == 0);
  CHECK(none.devices()[1].kv == 32 * kKvLayer8b);
  CHECK(none.devices()[1].weights == 32 * kBlock8b + kHead8b);
  // row: the weight rows over both GPUs by the split (3:1), the KV and the compute on the main GPU (0)
  s.engine.split_mode = LlamaSplitMode::row;
  s.engine.main_gpu = 0;
  s.engine.tensor_split = {3, 1};
  const Planner row(s);
  CHECK(row.devices()[0].kv == 32 * kKvLayer8b);
  CHECK(row.devices()[1].kv == 0);
  CHECK(row.devices()[1].compute == 0);
  // per layer floor(w_layer x 1/4) on GPU 1: within a byte per layer of a quarter of the offloaded layers
  const i64 offloaded = 32 * kBlock8b + kHead8b;
  CHECK(std::abs(row.devices()[1].weights - offloaded / 4) <= 33);
  CHECK(std::abs(row.devices()[0].weights - offloaded * 3 / 4) <= 33);
}

TEST_CASE("llama.cpp draft model: draft_weights and draft_kv on the GPUs that hold its layers", "[llamacpp][gpus][draft]") {
  PlanSpec s = eight_b(3);
  LlamaDraft dr;
  dr.model = kvtest::profiles().model("llama-3.2-1b");  // the built-in profile, as --model-draft llama-3.2-1b reads it
  s.llama_draft = dr;
  const Planner p(s);
  const auto& d = p.devices();
  // the draft's 16 layers + output over the same three equal shares: il / 17 < 1/3 for il <= 5, < 2/3 for il <= 11:
  // 6 / 6 / 4 + output; its context is the slot's (8192 cells), f16 by default: 16,777,216 B per layer
  CHECK(d[0].draft_layers == 6);
  CHECK(d[1].draft_layers == 6);
  CHECK(d[2].draft_layers == 4);
  CHECK(d[0].draft_kv == 6 * kKvLayer1b);
  CHECK(d[1].draft_kv == 6 * kKvLayer1b);
  CHECK(d[2].draft_kv == 4 * kKvLayer1b);
  CHECK(d[0].draft_weights == 6 * kBlock1b);
  CHECK(d[1].draft_weights == 6 * kBlock1b);
  CHECK(d[2].draft_weights == 4 * kBlock1b + kHead1b);
  CHECK(d[0].draft_compute == kFfn1b);
  CHECK(d[2].draft_compute == kFfn1b + kLogits);
  CHECK(p.budget_bytes("draft_kv") == 4 * kKvLayer1b);
  CHECK(p.budget_bytes("draft_weights") == d[2].draft_weights);
  // the main model's figures do not move
  CHECK(d[0].kv == 11 * kKvLayer8b);
  // -cd 4096 with -ctkd/-ctvd q8_0 and two slots with their own streams: every slot has a draft context of 4096
  // cells; a q8_0 row of 8 x 64 = 512 elements is 512 / 32 x 34 = 544 B, so K + V = 1088 B per token per layer:
  // GPU 0 holds 6 layers x 2 slots x 4096 x 1088
  s.engine.parallel = 2;
  s.engine.kv_unified = false;
  s.llama_draft->ctx_size = 4096;
  s.llama_draft->k_format = s.llama_draft->v_format = ElemFormat::q8_0;
  const Planner q(s);
  CHECK(q.devices()[0].draft_kv == 6LL * 2 * 4096 * 1088);
  CHECK(q.devices()[0].draft_compute == 2 * kFfn1b);  // one compute buffer per draft context
  // without -cd the draft context is the slot's: n_ctx_seq = 8192 / 2 = 4096 cells
  s.llama_draft->ctx_size = 0;
  CHECK(Planner(s).devices()[0].draft_kv == 6LL * 2 * 4096 * 1088);
  // -ngld 0: the draft stays in host memory
  s.llama_draft->n_gpu_layers = 0;
  const Planner host(s);
  for (const auto& g : host.devices()) {
    CHECK(g.draft_weights == 0);
    CHECK(g.draft_kv == 0);
  }
}

TEST_CASE("llama.cpp draft model of a hybrid family is placed by decoder block", "[llamacpp][gpus][draft][ssm]") {
  // Falcon-H1-0.5B as the draft (tests/data/configs/falcon-h1-0.5b.json): 36 blocks, each an attention and a Mamba2
  // entry. One GPU, the slot's 8192 cells, f16 K/V, f32 recurrent state (llama_memory_hybrid); per block:
  // KV 8192 x 2 KV heads x 64 x 2 B x (K + V) = 4,194,304; state (4 - 1) x (1536 + 2 x 1 x 128) + 1536 x 128
  // = 201,984 elements x 4 B = 807,936
  PlanSpec s = eight_b(1);
  LlamaDraft dr;
  dr.model = kvtest::load("falcon-h1-0.5b");
  s.llama_draft = dr;
  const Planner p(s);
  const auto& d = p.devices()[0];
  CHECK(d.draft_layers == 36);
  CHECK(d.draft_kv == 36LL * (8192LL * 2 * 64 * 2 * 2 + (3LL * (1536 + 2 * 128) + 1536LL * 128) * 4));
  const LayerWeights lw = layer_weight_bytes(dr.model);
  i64 all = lw.output;
  for (i64 b : lw.blocks) all += b;
  CHECK(d.draft_weights == all);
}

TEST_CASE("llama.cpp on several GPUs does not fit when its fullest GPU does not", "[llamacpp][gpus]") {
  PlanSpec s = eight_b(3);
  const Planner roomy(s);
  const i64 gpu0 = roomy.devices()[0].total, gpu2 = roomy.devices()[2].total;
  REQUIRE(gpu2 > gpu0);
  // memory between GPU 0's and GPU 2's needs: GPU 0 and 1 would fit, GPU 2 does not, so the plan does not start
  s.overrides.gpu_memory = (gpu0 + gpu2) / 2;
  const Planner tight(s);
  CHECK_FALSE(tight.engine().startup_ok);
  CHECK(tight.cell(8192, 1).limiting == "gpu_memory");
  // with GPU 2's need as the memory it starts
  s.overrides.gpu_memory = gpu2;
  CHECK(Planner(s).engine().startup_ok);
}

TEST_CASE("llama-server with --model-draft and -ngl 99 on three GPUs gives a per-GPU budget with the draft", "[llamacpp][gpus][draft][cli]") {
  // the acceptance check of issue #11: the pasted command, three GPUs by --tensor-split
  const auto r = kvtest::kvplan({"plan", "--gpu", "h100-sxm", "--format", "json", "--", "llama-server", "-m", "llama-3.1-8b", "--model-draft",
                                 "llama-3.2-1b", "-ngl", "99", "-ts", "1,1,1", "-c", "8192", "-np", "1"});
  REQUIRE(r.exit == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& devs = j["results"]["devices"];
  REQUIRE(devs.size() == 3);
  CHECK(devs[0]["kv_bytes"] == 11 * kKvLayer8b);
  CHECK(devs[2]["kv_bytes"] == 10 * kKvLayer8b);
  CHECK(devs[0]["draft_kv_bytes"] == 6 * kKvLayer1b);
  CHECK(devs[2]["draft_kv_bytes"] == 4 * kKvLayer1b);
  for (const auto& g : devs) CHECK(g["draft_weights_bytes"].get<i64>() > 0);
  std::map<std::string, i64> terms;
  for (const auto& t : j["results"]["budget"]) terms[t["term"]] = t["bytes"];
  CHECK(terms.at("draft_kv") == 4 * kKvLayer1b);
  CHECK(terms.at("draft_weights") == devs[2]["draft_weights_bytes"].get<i64>());
  CHECK(j["inputs"]["gpu_count"] == 3);
  CHECK(j["inputs"]["draft"]["model"] == "llama-3.2-1b");
  // the same deployment as a file: gpus: 3 is llama.cpp's GPU count
  const std::string file = kvtest::write_temp("llama-gpus", "deploy.yaml",
                                              "deployments:\n  - name: draft3\n    gpu: h100-sxm\n    gpus: 3\n    command: [llama-server, -m, "
                                              "llama-3.1-8b, --model-draft, llama-3.2-1b, -ngl, \"99\", -c, \"8192\", -np, \"1\"]\n");
  const auto c = kvtest::kvplan({"check", file, "--format", "json"});
  REQUIRE(c.exit == 0);
  CHECK(c.out.find("\"draft_kv_bytes\": " + std::to_string(4 * kKvLayer1b)) != std::string::npos);
}

TEST_CASE("llama.cpp --device takes none only alone", "[llamacpp]") {
  // common/arg.cpp parse_device_list: "none" alone means no GPU; inside a list it is a device it does not find
  CHECK(kvtest::kvplan({"plan", "llama-3.1-8b", "--gpu", "rtx-3090", "--gpu-count", "2", "--engine", "llama.cpp", "--device", "none"}).exit == 0);
  const kvtest::Run r = kvtest::kvplan({"plan", "llama-3.1-8b", "--gpu", "rtx-3090", "--gpu-count", "2", "--engine", "llama.cpp", "--device", "CUDA0,none"});
  CHECK(r.exit == 2);
  CHECK_THAT(r.err, Catch::Contains("takes none only alone"));
  const kvtest::Run n = kvtest::kvplan({"plan", "llama-3.1-8b", "--gpu", "rtx-3090", "--gpu-count", "2", "--engine", "llama.cpp", "--device", "0,1"});
  CHECK(n.exit == 2);
  CHECK_THAT(n.err, Catch::Contains("write CUDA0"));
}

TEST_CASE("llama.cpp override-tensor moves the matched tensors' bytes to host memory", "[llamacpp][override]") {
  // the names llama.cpp gives qwen3-30b-a3b (no GGUF at hand): blk.N.ffn_{gate,up,down}_exps, each 128 experts x
  // 2048 x 768 parameters in bf16; layers 40..47 = 8 layers x 3 x 128 x 2048 x 768 x 2 B = 9,663,676,416 B
  const std::vector<std::string> base = {"plan", "--gpu", "h100-sxm", "--format", "json", "--", "llama-server", "-m", "qwen3-30b-a3b", "-ngl", "99",
                                         "-c", "4096", "-np", "1"};
  auto host_weights = [](const kvtest::Run& r) {
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& t : j["results"]["tiers"])
      if (t["tier"] == "host") return t["weights_bytes"].get<i64>();
    return i64{0};
  };
  auto gpu_weights = [](const kvtest::Run& r) { return nlohmann::json::parse(r.out)["results"]["budget"][1]["bytes"].get<i64>(); };
  const i64 experts8 = 8LL * 3 * 128 * 2048 * 768 * 2;
  auto args = base;
  args.insert(args.end(), {"-ot", "blk\\.(4[0-7])\\.ffn_.*_exps=CPU", "-ot", "nomatch=CPU"});
  const auto r = kvtest::kvplan(args);
  REQUIRE(r.exit == 0);
  // the host tier also holds the input layer: token_embd 151936 x 2048 x 2 B
  constexpr i64 embd = 151936LL * 2048 * 2;
  CHECK(host_weights(r) == experts8 + embd);
  const auto plain = kvtest::kvplan(base);
  CHECK(gpu_weights(plain) - gpu_weights(r) == experts8);
  // a pattern that matches no tensor is llama.cpp's business: a warning, nothing moved
  CHECK(r.err.find("'nomatch' matches no tensor of qwen3-30b-a3b") != std::string::npos);
  // --n-cpu-moe 44 already keeps layers 0..43's experts on the host: -ot adds only 44..47
  args.insert(args.end(), {"--n-cpu-moe", "44"});
  CHECK(host_weights(kvtest::kvplan(args)) == 48LL * 3 * 128 * 2048 * 768 * 2 + embd);
}

TEST_CASE("llama.cpp override-tensor matches the GGUF tensor table", "[llamacpp][override][gguf]") {
  // two qwen2 blocks; blk.1.ffn_up and blk.1.ffn_gate are q4_K [256 x 512]: 131,072 / 256 x 144 = 73,728 B each
  kvtest::Writer w = kvtest::two_block("qwen2", 32768);
  for (int i = 0; i < 2; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.tensor(b + "attn_norm.weight", {256}, kvtest::T_F32)
        .tensor(b + "attn_q.weight", {256, 256}, kvtest::T_Q4_K)
        .tensor(b + "attn_q.bias", {256}, kvtest::T_F32)
        .tensor(b + "attn_k.weight", {256, 128}, kvtest::T_Q8_0)
        .tensor(b + "attn_k.bias", {128}, kvtest::T_F32)
        .tensor(b + "attn_v.weight", {256, 128}, kvtest::T_Q8_0)
        .tensor(b + "attn_v.bias", {128}, kvtest::T_F32)
        .tensor(b + "attn_output.weight", {256, 256}, kvtest::T_Q4_K)
        .tensor(b + "ffn_norm.weight", {256}, kvtest::T_F32)
        .tensor(b + "ffn_gate.weight", {256, 512}, kvtest::T_Q4_K)
        .tensor(b + "ffn_up.weight", {256, 512}, kvtest::T_Q4_K)
        .tensor(b + "ffn_down.weight", {512, 256}, kvtest::T_Q4_K);
  }
  const std::string file = w.save(kvtest::temp_dir("llama-ot") / "qwen2-2.gguf");
  const auto r = kvtest::kvplan({"plan", "--gpu", "h100-sxm", "--format", "json", "--", "llama-server", "-m", file, "-ngl", "99", "-c", "512", "-np", "1",
                                 "-ot", "blk\\.1\\.ffn_(up|gate)=CPU"});
  REQUIRE(r.exit == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["results"]["tiers"].size() == 2);
  // with the input layer, token_embd q8_0 [256 x 32]: 8192 / 32 x 34 = 8,704 B
  CHECK(j["results"]["tiers"][1]["weights_bytes"] == 2 * (131072 / 256 * 144) + 8704);
  // a pattern that does not compile is refused, as llama.cpp's std::regex refuses it
  const auto bad = kvtest::kvplan({"plan", "--gpu", "h100-sxm", "--", "llama-server", "-m", file, "-ot", "blk\\.(1=CPU"});
  CHECK(bad.exit == 2);
  CHECK(bad.err.rfind("kvplan: error: command: -ot: 'blk\\.(1' is not a regular expression", 0) == 0);
}

namespace {

// a LoRA adapter for llama-3.1-8b (convert_lora_to_gguf.py layout): rank 16 on attn_q of blocks 0 and 31, f16;
// lora_a [4096 x 16] and lora_b [16 x 4096] are 4096 x 16 x 2 B = 131,072 B each, 262,144 B per block
std::string lora_file() {
  kvtest::Writer w;
  w.str("general.architecture", "llama").str("general.type", "adapter").str("adapter.type", "lora").f32("adapter.lora.alpha", 16.0f);
  for (int b : {0, 31}) {
    const std::string n = "blk." + std::to_string(b) + ".attn_q.weight";
    w.tensor(n + ".lora_a", {4096, 16}, kvtest::T_F16).tensor(n + ".lora_b", {16, 4096}, kvtest::T_F16);
  }
  return w.save(kvtest::temp_dir("llama-lora") / "adapter.gguf");
}

// a multimodal projector: general.architecture clip; [1024 x 1024] + [1024 x 4096] f16 = (1,048,576 + 4,194,304) x 2 B
std::string mmproj_file() {
  kvtest::Writer w;
  w.str("general.architecture", "clip").u32("clip.vision.embedding_length", 1024);
  w.tensor("v.blk.0.attn_q.weight", {1024, 1024}, kvtest::T_F16).tensor("mm.0.weight", {1024, 4096}, kvtest::T_F16);
  return w.save(kvtest::temp_dir("llama-mmproj") / "mmproj.gguf");
}

nlohmann::json plan_json(std::vector<std::string> extra) {
  std::vector<std::string> args = {"plan", "--gpu", "h100-sxm", "--format", "json", "--", "llama-server", "-m", "llama-3.1-8b", "-c", "8192", "-np", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = kvtest::kvplan(args);
  INFO(r.err);
  REQUIRE(r.exit == 0);
  return nlohmann::json::parse(r.out);
}

i64 host_tier_weights(const nlohmann::json& j) {
  for (const auto& t : j["results"]["tiers"])
    if (t["tier"] == "host") return t["weights_bytes"].get<i64>();
  return 0;
}

}  // namespace

TEST_CASE("llama.cpp CPU-resident weights in the host tier: mapped by default, --no-mmap anonymous, --mlock locked", "[llamacpp][host]") {
  // llama-3.1-8b: 8,030,261,248 parameters in bf16 (config.json); -ngl 0 keeps every layer in host memory
  constexpr i64 kWeights = 8030261248LL * 2;
  auto host = [](const nlohmann::json& j) {
    for (const auto& t : j["results"]["tiers"])
      if (t["tier"] == "host") return t;
    return nlohmann::json();
  };
  const auto m = host(plan_json({"-ngl", "0"}));
  REQUIRE(m.is_object());
  CHECK(m["weights_bytes"] == kWeights);
  CHECK(m["terms"][0]["name"] == "cpu_weights");
  CHECK(m["terms"][0]["bytes"] == kWeights);
  // mmap (the default): the file's mapped pages, reclaimable page cache (llama-model-loader.cpp load_all_data)
  CHECK(m["terms"][0]["memory"] == "mapped");
  CHECK(host(plan_json({"-ngl", "0", "--no-mmap"}))["terms"][0]["memory"] == "anonymous");
  CHECK(host(plan_json({"-ngl", "0", "--mlock"}))["terms"][0]["memory"] == "locked");
  const auto both = host(plan_json({"-ngl", "0", "--no-mmap", "--mlock"}))["terms"][0];
  CHECK(both["memory"] == "locked");
  CHECK(both["basis"].get<std::string>().find("--no-mmap") != std::string::npos);
  // part offloaded: what the GPU holds and what the host holds make up the model
  const auto part = plan_json({"-ngl", "16"});
  CHECK(host(part)["weights_bytes"].get<i64>() + part["results"]["tiers"][0]["weights_bytes"].get<i64>() == kWeights);
  // every layer offloaded: only the input layer, token_embd 128256 x 4096 x 2 B, stays in host memory
  CHECK(host_tier_weights(plan_json({"-ngl", "99"})) == kEmbd8b);
}

TEST_CASE("llama.cpp lora adapters sit with the tensors they adapt", "[llamacpp][lora]") {
  const std::string lora = lora_file();
  constexpr i64 kBlock = 2LL * 4096 * 16 * 2;  // lora_a + lora_b of one block: 262,144 B
  // one GPU, every layer offloaded: both blocks' adapters on it
  auto j = plan_json({"-ngl", "99", "--lora", lora});
  std::map<std::string, i64> terms;
  for (const auto& t : j["results"]["budget"]) terms[t["term"]] = t["bytes"];
  CHECK(terms.at("lora_adapters") == 2 * kBlock);
  // three GPUs (-ts 1,1,1): block 0 on GPU 0, block 31 on GPU 2 (layers 22..31 + output)
  j = plan_json({"-ngl", "99", "-ts", "1,1,1", "--lora", lora});
  CHECK(j["results"]["devices"][0]["lora_adapters_bytes"] == kBlock);
  CHECK(j["results"]["devices"][1]["lora_adapters_bytes"] == 0);
  CHECK(j["results"]["devices"][2]["lora_adapters_bytes"] == kBlock);
  // -ngl 10 (output first: the output layer + layers 23..31): block 0 is a CPU layer, its adapter in host memory,
  // with the input layer and the 23 CPU blocks 0..22
  j = plan_json({"-ngl", "10", "--lora-scaled", lora, "0.5"});
  CHECK(j["results"]["devices"][0]["lora_adapters_bytes"] == kBlock);
  CHECK(host_tier_weights(j) == kBlock + kEmbd8b + 23 * kBlock8b);
  // the adapter is its own term of the host tier
  i64 adapters = -1;
  for (const auto& t : j["results"]["tiers"])
    if (t["tier"] == "host")
      for (const auto& term : t["terms"])
        if (term["name"] == "adapters") adapters = term["bytes"];
  CHECK(adapters == kBlock);
}

TEST_CASE("llama.cpp mmproj is sized from its GGUF header on the first GPU", "[llamacpp][mmproj]") {
  const std::string mm = mmproj_file();
  constexpr i64 kProj = (1024LL * 1024 + 1024LL * 4096) * 2;  // 10,485,760 B
  auto j = plan_json({"-ngl", "99", "-ts", "1,1,1", "--mmproj", mm});
  CHECK(j["results"]["devices"][0]["mmproj_bytes"] == kProj);
  CHECK(j["results"]["devices"][2]["mmproj_bytes"] == 0);
  j = plan_json({"-ngl", "99", "--mmproj", mm});
  bool found = false;
  for (const auto& t : j["results"]["budget"])
    if (t["term"] == "mmproj") found = t["bytes"] == kProj;
  CHECK(found);
  // --no-mmproj-offload: the projector's bytes are in the host tier instead
  j = plan_json({"-ngl", "99", "--mmproj", mm, "--no-mmproj-offload"});
  CHECK(j["results"]["devices"][0]["mmproj_bytes"] == 0);
  CHECK(host_tier_weights(j) == kProj + kEmbd8b);  // and the input layer
  // wrong files, and llama-server's refusal of a draft model with a projector
  const std::string lora = lora_file();
  auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"plan", "--gpu", "h100-sxm", "--", "llama-server", "-m", "llama-3.1-8b"};
    args.insert(args.end(), extra.begin(), extra.end());
    return kvtest::kvplan(args);
  };
  auto r = run({"--mmproj", lora});
  CHECK(r.exit == 2);
  CHECK(r.err == "kvplan: error: command: --mmproj: '" + lora + "': general.architecture: is \"llama\", not \"clip\"; pass the model's multimodal projector (mmproj) GGUF\n");
  r = run({"--lora", mm});
  CHECK(r.exit == 2);
  CHECK(r.err == "kvplan: error: command: --lora: '" + mm + "' is not a LoRA adapter (general.type \"\"); give a LoRA adapter GGUF (convert_lora_to_gguf.py)\n");
  r = run({"--lora", "/nonexistent/adapter.gguf"});
  CHECK(r.exit == 2);
  CHECK(r.err == "kvplan: error: command: --lora: '/nonexistent/adapter.gguf': no such file; give a LoRA adapter GGUF (convert_lora_to_gguf.py)\n");
  r = run({"--mmproj", mm, "-md", "llama-3.2-1b"});
  CHECK(r.exit == 2);
  CHECK(r.err.rfind("kvplan: error: command: --mmproj: llama-server refuses speculative decoding with a multimodal projector", 0) == 0);
}

TEST_CASE("llama.cpp draft model from a GGUF file", "[llamacpp][draft][gguf]") {
  // a two-block qwen2 draft: 2 KV heads x head_dim 64 (256 / 4 heads), f16: (K + V) = 2 x 64 x 2 x 2 = 512 B per token
  // per layer; -cd 1000 pads to 1024 cells; -ctkd/-ctvd f16 by default; two slots (-np 2) each with a context:
  // 2 slots x 2 layers x 1024 x 512 B = 2,097,152 B of draft KV on the one GPU
  kvtest::Writer w = kvtest::two_block("qwen2", 32768);
  for (int i = 0; i < 2; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.tensor(b + "attn_q.weight", {256, 256}, kvtest::T_Q8_0)
        .tensor(b + "attn_k.weight", {256, 128}, kvtest::T_Q8_0)
        .tensor(b + "attn_v.weight", {256, 128}, kvtest::T_Q8_0)
        .tensor(b + "attn_output.weight", {256, 256}, kvtest::T_Q8_0)
        .tensor(b + "ffn_gate.weight", {256, 512}, kvtest::T_Q8_0)
        .tensor(b + "ffn_up.weight", {256, 512}, kvtest::T_Q8_0)
        .tensor(b + "ffn_down.weight", {512, 256}, kvtest::T_Q8_0);
  }
  const std::string draft = w.save(kvtest::temp_dir("llama-draft") / "draft.gguf");
  const auto j = plan_json({"-ngl", "99", "-np", "2", "-md", draft, "-cd", "1000"});
  std::map<std::string, i64> terms;
  for (const auto& t : j["results"]["budget"]) terms[t["term"]] = t["bytes"];
  CHECK(terms.at("draft_kv") == 2LL * 2 * 1024 * 512);
  CHECK(terms.at("draft_weights") > 0);
}

TEST_CASE("llama.cpp throughput per GPU divides by its GPU count", "[llamacpp][gpus][perf]") {
  // a layer split runs the GPUs in turn: the step and the deployment's tokens/s are one GPU's, shared by three
  const auto one = plan_json({"-ngl", "99"});
  const auto three = plan_json({"-ngl", "99", "-ts", "1,1,1"});
  const double per_one = one["results"]["performance"]["decode_tokens_per_s_per_gpu"];
  const double per_three = three["results"]["performance"]["decode_tokens_per_s_per_gpu"];
  const double all_three = three["results"]["performance"]["decode_tokens_per_s"];
  CHECK(per_three == Approx(all_three / 3));
  CHECK(per_three == Approx(per_one / 3));
}

TEST_CASE("check names the llama.cpp context a KV-bound load needs, in cells, not bytes", "[llamacpp][check]") {
  // -c 8192 unified over -np 4: four requests of 3,000 + 500 tokens hold 4 x 3,500 = 14,000 cells; llama.cpp
  // pads n_ctx to 256, so ctx-size 14,080 holds them (55 x 256); five hold 17,500 -> 17,664 (69 x 256); two fit
  // (2 x 3,500 = 7,000 <= 8,192)
  const std::string file = kvtest::write_temp("llama-check", "deploy.yaml",
                                              "deployments:\n  - name: llama\n    model: llama-3.1-8b\n    gpu: rtx-4090\n    engine: llama.cpp\n"
                                              "    command: llama-server -m model.gguf -c 8192 -np 4 --kv-unified\n"
                                              "    traffic:\n      prompt_tokens: 3000\n      output_tokens: 500\n      concurrency: 4\n"
                                              "    requirements:\n      min_concurrency: 5\n");
  const auto c = kvtest::kvplan({"check", file, "--format", "json"});
  REQUIRE(c.exit == 1);
  const auto reqs = nlohmann::json::parse(c.out)["results"]["deployments"][0]["requirements"];
  std::map<std::string, nlohmann::json> by;
  for (const auto& q : reqs) by[q["requirement"].get<std::string>()] = q;
  REQUIRE(by.contains("traffic fits (4 x 3500 tokens)"));
  CHECK(by["traffic fits (4 x 3500 tokens)"]["detail"] == "KV cells 14000 of 8192 (ctx-size)");
  CHECK(by["traffic fits (4 x 3500 tokens)"]["suggestion"] == "concurrency 2 fits; 4 needs ctx-size 14080 (now 8192)");
  REQUIRE(by.contains("min concurrency at 3500 tokens"));
  CHECK(by["min concurrency at 3500 tokens"]["suggestion"] == "2 fits; 5 needs ctx-size 17664 (now 8192)");
}
