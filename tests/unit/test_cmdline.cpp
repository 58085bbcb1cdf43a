// Engine command lines: shell splitting, entry points, flag spellings (=, _, prefixes, booleans, short
// flags), the mapping to kvplan settings, and every real command line in tests/data/engine-cmdlines.json.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "kvplan/io/cmdline.hpp"

using namespace kvplan;
using Settings = std::vector<std::pair<std::string, std::string>>;
using Words = std::vector<std::string>;

namespace {

io::EngineCommand parse(const std::string& text, const std::string& hint = "") {
  return io::parse_engine_command(io::shell_split(text, "cmd"), hint, "cmd");
}

std::string error_of(const std::string& text, const std::string& hint = "") {
  try {
    parse(text, hint);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

nlohmann::json cmdlines() {
  std::ifstream in(std::string(KVPLAN_TEST_DATA) + "/engine-cmdlines.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

nlohmann::json entry(const std::string& id) {
  for (const auto& e : cmdlines())
    if (e["id"] == id) return e;
  FAIL("no entry " << id);
  return {};
}

io::EngineCommand parse_argv(const nlohmann::json& e) {
  return io::parse_engine_command(e["argv"].get<Words>(), e["engine"].get<std::string>(), e["id"].get<std::string>());
}

}  // namespace

// ---- shell_split ----

TEST_CASE("shell_split: quotes, escapes, continuations, comments", "[cmdline]") {
  CHECK(io::shell_split("a  'b c'  \"d e\"", "t") == Words{"a", "b c", "d e"});
  CHECK(io::shell_split(R"(a\ b "x\"y\\z\$w" 'q\n')", "t") == Words{"a b", R"(x"y\z$w)", R"(q\n)"});
  CHECK(io::shell_split(R"("a\qb")", "t") == Words{R"(a\qb)"});  // other escapes stay inside double quotes
  CHECK(io::shell_split("vllm serve m \\\n  --port 1 \\\n\n# --max-model-len 8\n#x \\\n", "t") ==
        Words{"vllm", "serve", "m", "--port", "1"});
  CHECK(io::shell_split("a#b c # comment 'unclosed\nd", "t") == Words{"a#b", "c", "d"});
  CHECK(io::shell_split("x '' \"\" y", "t") == Words{"x", "", "", "y"});
  CHECK(io::shell_split("--cfg '{\"a\":\n  1}'", "t") == Words{"--cfg", "{\"a\":\n  1}"});
  CHECK(io::shell_split("a\tb\r\nc", "t") == Words{"a", "b", "c"});
}

TEST_CASE("shell_split: variables and substitutions stay as written", "[cmdline]") {
  CHECK(io::shell_split("--tp $TP --m ${MODEL:-x y} --n $(echo \"a b\" | wc) \"${A}/b\" `id -u`", "t") ==
        Words{"--tp", "$TP", "--m", "${MODEL:-x y}", "--n", "$(echo \"a b\" | wc)", "${A}/b", "`id -u`"});
  CHECK(io::shell_split("TP=$(($N * $M)) x", "t") == Words{"TP=$(($N * $M))", "x"});
  CHECK(io::shell_split("--tp={{ .Values.tp }} x", "t") == Words{"--tp={{ .Values.tp }}", "x"});
}

TEST_CASE("shell_split: operators, redirections and here-documents", "[cmdline]") {
  CHECK(io::shell_split("a|b && c; d & e 2>&1 >out <in", "t") ==
        Words{"a", "|", "b", "&&", "c", ";", "d", "&", "e", "2>&", "1", ">", "out", "<", "in"});
  CHECK(io::shell_split("cat > f <<'EOF'\nit's: \"x\n\tEOF\nEOF\nnext", "t") == Words{"cat", ">", "f", "<<", "EOF", "next"});
  CHECK(io::shell_split("cat <<-END\n\tbody\n\tEND\nnext", "t") == Words{"cat", "<<-", "END", "next"});
  CHECK(io::shell_split("'2'>x", "t") == Words{"2", ">", "x"});  // a quoted number is no fd
}

TEST_CASE("shell_split: unterminated quotes name the line they start on", "[cmdline]") {
  CHECK_THROWS_WITH(io::shell_split("vllm serve m \\\n  --kv-transfer-config '{\"a\":\n 1}", "cmd"),
                    "cmd: unterminated ' quote starting at line 2; close the quote");
  CHECK_THROWS_WITH(io::shell_split("a \"b\nc\nd", "run.sh"), "run.sh: unterminated \" quote starting at line 1; close the quote");
  CHECK_THROWS_WITH(io::shell_split("a\n\n$(date", "cmd"), "cmd: unterminated $( starting at line 3; close it with )");
}

// ---- entry points ----

TEST_CASE("entry points of each engine", "[cmdline]") {
  CHECK(parse("vllm serve m").engine == "vllm");
  CHECK(parse("vllm serve m").model == "m");
  CHECK(parse("python -m vllm.entrypoints.openai.api_server --model m").engine == "vllm");
  CHECK(parse("/usr/bin/python3.11 -m vllm.entrypoints.openai.api_server --model m").model == "m");
  CHECK(parse("python3 -u -X dev -m vllm.entrypoints.openai.api_server --model m").model == "m");
  CHECK(parse("python3 -m vllm.entrypoints.cli.main serve m").model == "m");
  CHECK(parse("python3 -m sglang.launch_server --model-path m").engine == "sglang");
  CHECK(parse("sglang serve --model-path m").model == "m");
  CHECK(parse("/opt/llama.cpp/build/bin/llama-server -m m.gguf").engine == "llama.cpp");
  CHECK(parse("C:/llama/llama-server.exe -m m.gguf").model == "m.gguf");
  CHECK(parse("trtllm-serve serve m --tp_size 2").engine == "trtllm");
  CHECK(parse("trtllm-serve m --tp_size 2").model == "m");
  CHECK(parse("CUDA_VISIBLE_DEVICES=0,1 nohup vllm serve m > log 2>&1 &").warnings.empty());
}

TEST_CASE("bare arguments need the engine named; ${VAR} stands for llama-server only when named", "[cmdline]") {
  const auto c = parse("--max-model-len 4096 -tp 2", "vllm");
  CHECK(c.engine == "vllm");
  CHECK(c.settings == Settings{{"--max-model-len", "4096"}, {"--tensor-parallel-size", "2"}});
  CHECK(parse("meta-llama/Llama-3.1-8B --max-model-len 4096", "vllm").model == "meta-llama/Llama-3.1-8B");
  CHECK(parse("--model-path m --tp 2", "sglang").settings == Settings{{"--tensor-parallel-size", "2"}});
  const auto w = parse("${LLAMA} -m m.gguf -c 8192", "llama.cpp");
  CHECK(w.settings == Settings{{"--ctx-size", "8192"}});
  CHECK(w.warnings == Words{"${LLAMA}: unexpanded variable; taken as llama-server"});
  CHECK(parse("%LLAMA% -m m.gguf", "llama.cpp").engine == "llama.cpp");
}

TEST_CASE("unsupported entry points and container prefixes are errors", "[cmdline]") {
  const std::string readable =
      "kvplan reads vllm serve, python -m vllm.entrypoints.openai.api_server, python -m sglang.launch_server, "
      "sglang serve, llama-server and trtllm-serve command lines, or an engine's bare arguments when the engine is named";
  CHECK(error_of("text-generation-launcher --model-id m --port 80") ==
        "cmd: unsupported entry point 'text-generation-launcher'; " + readable);
  CHECK(error_of("--max-model-len 4096") == "cmd: unsupported entry point '--max-model-len'; " + readable);
  CHECK(error_of("--model-path m", "generic") == "cmd: unsupported entry point '--model-path'; " + readable);
  const std::string container =
      "; give the command the container runs (for an image whose entry point is the engine, the arguments after "
      "the image name, with the engine named)";
  CHECK(error_of("docker run --gpus all vllm/vllm-openai:latest --model m") ==
        "cmd: 'docker run' command lines are not supported" + container);
  CHECK(error_of("podman run img vllm serve m", "vllm") == "cmd: 'podman run' command lines are not supported" + container);
  CHECK(error_of("trtllm-serve disaggregated -c d.yaml") ==
        "cmd: trtllm-serve disaggregated is not supported; give the trtllm-serve serve MODEL command of each server");
  CHECK(error_of("llama-server -m m.gguf", "vllm") ==
        "cmd: the command runs llama.cpp (llama-server), not vllm; name the engine llama.cpp or give a vllm command");
  CHECK(error_of("", "vllm") == "cmd: empty command line; give the engine's command, e.g. vllm serve MODEL --max-model-len 8192");
}

TEST_CASE("a pasted script: the first engine command is read, what precedes it is reported", "[cmdline]") {
  // newlines are spaces, so the second vllm serve runs on as arguments of the first: it ends the first
  const auto c = parse("#!/bin/bash\nexport HF_HOME=/x\nvllm serve a --max-model-len 8k\nvllm serve b --port 2\n");
  CHECK(c.model == "a");
  CHECK(c.settings == Settings{{"--max-model-len", "8000"}});  // vLLM: lowercase k = 1000
  CHECK(c.ignored.empty());
  CHECK(c.warnings == Words{"ignored what comes before 'vllm serve': export",
                            "kvplan reads the first of several engine commands (vllm serve)"});
  const auto two = parse("vllm serve a; llama-server -m b");
  CHECK(two.model == "a");
  CHECK(two.warnings == Words{"kvplan reads the first of several engine commands (vllm serve)"});
  const auto s = parse("echo start\nexport A=1 B=2\nif true; then python3 -m sglang.launch_server --model-path m; fi");
  CHECK(s.warnings == Words{"ignored what comes before 'python3 -m sglang.launch_server': then"});
}

// ---- flags ----

TEST_CASE("flag spellings: =value, underscores, unique prefixes, short flags", "[cmdline]") {
  const auto c = parse("vllm serve m --max_model_len=2048 --gpu_memory_utilization 0.7 --max-num-seq=512 "
                       "--max-num-batched-token 4096 -tp 4 -pp=2 -dp 2 -O3");
  CHECK(c.settings == Settings{{"--max-model-len", "2048"},
                               {"--gpu-memory-utilization", "0.7"},
                               {"--max-num-seqs", "512"},
                               {"--max-num-batched-tokens", "4096"},
                               {"--tensor-parallel-size", "4"},
                               {"--pipeline-parallel-size", "2"},
                               {"--data-parallel-size", "2"}});
  CHECK(c.ignored == Words{"-O"});
  CHECK(parse("python -m sglang.launch_server --model m --tp 8 --dp-size 2 --ep 8 --context-length 32768 "
              "--mem-frac 0.85 --chunked-prefill-size 4096 --max-running-requests 64 --page-size 16 "
              "--max-total-tokens 100000")
            .settings == Settings{{"--tensor-parallel-size", "8"},
                                  {"--data-parallel-size", "2"},
                                  {"--expert-parallel-size", "8"},
                                  {"--max-model-len", "32768"},
                                  {"--mem-fraction-static", "0.85"},
                                  {"--max-num-batched-tokens", "4096"},
                                  {"--max-num-seqs", "64"},
                                  {"--page-size", "16"},
                                  {"--max-total-tokens", "100000"}});
  // llama.cpp and trtllm-serve have no abbreviations
  CHECK_THROWS_WITH(parse("llama-server -m m --ctx-sise 4096"),
                    Catch::Matchers::StartsWith("cmd: unknown llama.cpp flag '--ctx-sise'; did you mean '--ctx-size'? kvplan knows: "));
  CHECK(parse("trtllm-serve m --tp-size 2 --max_seq_len 4096").settings ==
        Settings{{"--tensor-parallel-size", "2"}, {"--max-model-len", "4096"}});
}

TEST_CASE("unknown and ambiguous flags are errors listing what kvplan knows", "[cmdline]") {
  CHECK(error_of("vllm serve m --foo 1") ==
        "cmd: unknown vllm flag '--foo'; kvplan knows: --model, --tensor-parallel-size, --pipeline-parallel-size, "
        "--data-parallel-size, --enable-expert-parallel, --gpu-memory-utilization, --max-model-len, --max-num-seqs, "
        "--max-num-batched-tokens, --block-size, --kv-cache-memory-bytes, --kv-cache-dtype, --quantization, "
        "--enforce-eager");
  CHECK(error_of("vllm serve m --max-num 8") ==
        "cmd: ambiguous vllm flag '--max-num'; it could be --max-num-batched-tokens, --max-num-partial-prefills, "
        "--max-num-seqs; write more of the name");
  CHECK(error_of("trtllm-serve m --tp 8") ==
        "cmd: unknown trtllm flag '--tp'; did you mean '--tp_size'? kvplan knows: --tensor_parallel_size, "
        "--pipeline_parallel_size, --moe_expert_parallel_size, --max_batch_size, --max_num_tokens, --max_seq_len, "
        "--kv_cache_free_gpu_memory_fraction");
  CHECK(error_of("vllm serve m --port") == "cmd: vllm flag '--port' needs a value; write --port VALUE");
  CHECK(error_of("vllm serve m --enforce-eager=maybe") == "cmd: vllm flag '--enforce-eager' takes true or false, not 'maybe'");
  CHECK(error_of("llama-server -m m x.gguf") == "cmd: unexpected llama.cpp argument 'x.gguf'; llama-server takes the model as -m/--model");
}

TEST_CASE("booleans: bare, =true/=false, --no-X; the last one wins", "[cmdline]") {
  CHECK(parse("vllm serve m --enforce-eager").settings == Settings{{"--enforce-eager", "true"}});
  CHECK(parse("vllm serve m --enforce-eager=false").settings.empty());
  CHECK(parse("vllm serve m --enforce-eager --no-enforce-eager").settings.empty());
  CHECK(parse("vllm serve m --enforce-eager=true -ep").settings ==
        Settings{{"--enforce-eager", "true"}, {"--enable-expert-parallel", "true"}});
  CHECK(parse("vllm serve m --no-enable-chunked-prefill --enable-prefix-caching=false").ignored ==
        Words{"--no-enable-chunked-prefill", "--enable-prefix-caching"});
  CHECK(parse("vllm serve m --max-model-len 1 --max-model-len 2").settings == Settings{{"--max-model-len", "2"}});
  CHECK(parse("python -m sglang.launch_server --model-path m --disable-cuda-graph").settings ==
        Settings{{"--enforce-eager", "true"}});
  CHECK(parse("llama-server -m m -np 4 -no-kvu --swa-full").settings ==
        Settings{{"--parallel", "4"}, {"--no-kv-unified", "true"}, {"--swa-full", "true"}});
  CHECK(parse("llama-server -m m --no-kv-unified -kvu").settings.empty());
}

TEST_CASE("values: vLLM human integers, quantization, -ngl, auto values", "[cmdline]") {
  CHECK(parse("vllm serve m --max-model-len 32k --max-num-batched-tokens 16K --kv-cache-memory-bytes 8G").settings ==
        Settings{{"--max-model-len", std::to_string(32 * 1000)},
                 {"--max-num-batched-tokens", std::to_string(16 * 1024)},
                 {"--kv-cache-memory-bytes", std::to_string(8LL * 1024 * 1024 * 1024)}});
  CHECK(parse("vllm serve m --max-model-len 25.6k").settings == Settings{{"--max-model-len", "25600"}});
  CHECK(parse("vllm serve m --quantization fp8 --kv-cache-dtype fp8_e4m3").settings ==
        Settings{{"--weight-format", "fp8"}, {"--kv-dtype", "fp8_e4m3"}});
  CHECK(parse("vllm serve m -q awq_marlin").settings == Settings{{"--weight-format", "int4"}});
  CHECK(parse("python -m sglang.launch_server --model-path m --quantization gptq").settings ==
        Settings{{"--weight-format", "int4"}});
  const auto bnb = parse("vllm serve m --quantization bitsandbytes");
  CHECK(bnb.settings.empty());
  CHECK(bnb.warnings == Words{"--quantization bitsandbytes: not modelled; weights are sized from the model's config"});
  CHECK(parse("llama-server -m m -ngl all").settings == Settings{{"--n-gpu-layers", "-1"}});
  CHECK(parse("llama-server -m m -ngl -1 -ctk q8_0 -ctv q4_0").settings ==
        Settings{{"--n-gpu-layers", "-1"}, {"--cache-type-k", "q8_0"}, {"--cache-type-v", "q4_0"}});
  const auto autos = parse("llama-server -m m -ngl auto -np -1");
  CHECK(autos.settings.empty());
  CHECK(autos.warnings == Words{"-ngl auto: no fixed value; kvplan uses its own default",
                                "-np -1: no fixed value; kvplan uses its own default"});
  // -fa takes on/off/auto when one follows; the next flag is not its value
  CHECK(parse("llama-server -m m -fa -c 4096 --flash-attn on -ub 256").settings ==
        Settings{{"--ctx-size", "4096"}, {"--ubatch-size", "256"}});
}

TEST_CASE("unexpanded variables: settings skipped, the model kept, both warned", "[cmdline]") {
  const auto c = parse("vllm serve $MODEL --max-model-len ${LEN} --tensor-parallel-size=$(TP) --port ${PORT}");
  CHECK(c.model == "$MODEL");
  CHECK(c.settings.empty());
  CHECK(c.ignored == Words{"--port"});
  CHECK(c.warnings == Words{"model $MODEL: unexpanded variable; kept as the model name",
                            "--max-model-len ${LEN}: unexpanded variable; setting skipped",
                            "--tensor-parallel-size $(TP): unexpanded variable; setting skipped"});
  CHECK(parse("llama-server --model %MODELS%\\x.gguf -c %CTX%", "llama.cpp").warnings ==
        Words{"--model %MODELS%x.gguf: unexpanded variable; kept as the model name",
              "-c %CTX%: unexpanded variable; setting skipped"});
}

TEST_CASE("removed, unmodelled and config-file flags are ignored with a warning", "[cmdline]") {
  const auto c = parse("vllm serve m --num-scheduler-steps 8 --cpu-offload-gb 4 --config c.yaml --swap-space 16");
  CHECK(c.ignored == Words{"--num-scheduler-steps", "--cpu-offload-gb", "--config", "--swap-space"});
  CHECK(c.warnings == Words{"--num-scheduler-steps: removed from recent vLLM versions; ignored",
                            "--cpu-offload-gb: changes GPU memory in a way kvplan does not model; ignored",
                            "--config c.yaml: settings in that file are not read"});
  CHECK(parse("trtllm-serve m --extra_llm_api_options x.yml").warnings ==
        Words{"--extra_llm_api_options x.yml: settings in that file are not read"});
}

// ---- the real command lines ----

TEST_CASE("every command line in engine-cmdlines.json parses to its engine", "[cmdline]") {
  const auto all = cmdlines();
  REQUIRE(all.size() >= 20);
  for (const auto& e : all) {
    const std::string id = e["id"], engine = e["engine"], format = e["format"];
    INFO(id);
    // argv as given, with the engine named (k8s args often omit the entry point)
    io::EngineCommand from_argv;
    REQUIRE_NOTHROW(from_argv = parse_argv(e));
    CHECK(from_argv.engine == engine);
    const Words argv = e["argv"];
    // argv with an entry point of its own needs no engine name
    if (argv[0][0] != '-' && argv[0][0] != '$') CHECK(io::parse_engine_command(argv, "", id).engine == engine);
    if (format == "k8s-args" || format == "helm-values") continue;
    // shell text as written: split, then parsed; it finds the same command as argv
    Words words;
    REQUIRE_NOTHROW(words = io::shell_split(e["raw"], id));
    if (id == "vllm-docker-run-qwen25-7b-underscore-flags") {
      CHECK_THROWS_WITH(io::parse_engine_command(words, engine, id),
                        Catch::Matchers::StartsWith(id + ": 'docker run' command lines are not supported"));
      continue;
    }
    io::EngineCommand from_raw;
    REQUIRE_NOTHROW(from_raw = io::parse_engine_command(words, engine, id));
    CHECK(from_raw.engine == engine);
    CHECK(from_raw.model == from_argv.model);
    CHECK(from_raw.settings == from_argv.settings);
    CHECK(from_raw.ignored == from_argv.ignored);
  }
}

TEST_CASE("shell_split of the plain commands in engine-cmdlines.json gives their argv", "[cmdline]") {
  for (const char* id : {"llamacpp-devstral-24b-230k-ctx-mixed-kv-q8k-q4v", "trtllm-deepseek-r1-tp8-ep4-odd-batch",
                         "vllm-aibrix-brixbench-qwen3-32b-tp4", "vllm-prodstack-orchestrated-prefill-envsubst",
                         "sglang-official-k8s-sts-2node-tp16-ep16"}) {
    INFO(id);
    const auto e = entry(id);
    CHECK(io::shell_split(e["raw"], id) == e["argv"].get<Words>());
  }
}

TEST_CASE("engine-cmdlines.json: vLLM settings checked by hand", "[cmdline]") {
  // --max-num-seq=512 is argparse's abbreviation of --max-num-seqs; --num-scheduler-steps left vLLM in v0.11
  const auto helm = parse_argv(entry("vllm-gke-helm-ai-inference-gemma-7b-it-l4"));
  CHECK(helm.model == "$(MODEL_ID)");
  CHECK(helm.settings == Settings{{"--tensor-parallel-size", "1"},
                                  {"--max-num-seqs", "512"},
                                  {"--gpu-memory-utilization", "0.95"},
                                  {"--max-model-len", "512"}});
  CHECK(helm.ignored == Words{"--disable-log-requests", "--num-scheduler-steps"});
  CHECK(helm.warnings == Words{"--model $(MODEL_ID): unexpanded variable; kept as the model name",
                               "--num-scheduler-steps: removed from recent vLLM versions; ignored"});

  const auto docker = parse_argv(entry("vllm-docker-run-qwen25-7b-underscore-flags"));
  CHECK(docker.model == "Qwen/Qwen2.5-7B-Instruct");
  CHECK(docker.settings == Settings{{"--max-model-len", "1024"}, {"--gpu-memory-utilization", "0.7"}});
  CHECK(docker.ignored == Words{"--api-key"});

  const auto kubeai = parse_argv(entry("vllm-kubeai-llama-3.1-405b-instruct-fp8-mi300x"));
  CHECK(kubeai.settings == Settings{{"--max-model-len", "120000"},
                                    {"--max-num-batched-tokens", "120000"},
                                    {"--max-num-seqs", "1024"},
                                    {"--tensor-parallel-size", "8"},
                                    {"--gpu-memory-utilization", "0.90"},
                                    {"--kv-dtype", "fp8"}});
  CHECK(has(kubeai.ignored, "--enable-chunked-prefill"));
  CHECK(has(kubeai.warnings, "--max-seq-len-to-capture: removed from recent vLLM versions; ignored"));

  const auto eager = parse(entry("vllm-trailing-backslash-then-commented-flags")["raw"]);
  CHECK(eager.model == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(eager.settings == Settings{{"--enforce-eager", "true"}});  // the commented-out flags are not read
  CHECK(eager.warnings.empty());                                    // CUDA_VISIBLE_DEVICES=4 is an assignment

  const auto lmcache = parse(entry("vllm-lmcache-bnb-multiline-json-env-prefix")["raw"]);
  CHECK(lmcache.settings == Settings{{"--max-model-len", "8192"}, {"--gpu-memory-utilization", "0.9"}});
  CHECK(lmcache.ignored == Words{"--quantization", "--kv-transfer-config"});

  const auto mixed = parse(entry("vllm-mixed-dash-underscore-trust-remote-code")["raw"]);
  CHECK(mixed.settings == Settings{{"--gpu-memory-utilization", "0.99"}, {"--max-model-len", "6000"}});
  CHECK(mixed.ignored == Words{"--port", "--trust-remote-code"});
  CHECK(mixed.warnings == Words{"ignored what comes before 'vllm serve': export"});
}

TEST_CASE("engine-cmdlines.json: SGLang, llama.cpp and TensorRT-LLM settings checked by hand", "[cmdline]") {
  const auto sky = parse(entry("sglang-skypilot-deepseek-r1-bf16-a100x8x2-computed-tp")["raw"]);
  CHECK(sky.engine == "sglang");
  CHECK(sky.model == "DeepSeek-R1-BF16");
  CHECK(sky.settings.empty());
  CHECK(sky.warnings == Words{"ignored what comes before 'python -m sglang.launch_server': then else fi",
                              "--tp $TP: unexpanded variable; setting skipped",
                              "--enable-dp-attention: changes GPU memory in a way kvplan does not model; ignored",
                              "$HEAD_NODE_ARGS: unexpanded variable; the arguments it holds are not read"});
  CHECK(parse_argv(entry("sglang-official-k8s-sts-2node-tp16-ep16")).settings ==
        Settings{{"--tensor-parallel-size", "16"}, {"--expert-parallel-size", "16"}});

  const auto devstral = parse(entry("llamacpp-devstral-24b-230k-ctx-mixed-kv-q8k-q4v")["raw"]);
  CHECK(devstral.model == "unsloth.Devstral-Small-2-24B-Instruct-2512-UD-Q4_K_XL.gguf");
  CHECK(devstral.settings == Settings{{"--ctx-size", "230000"},
                                      {"--cache-type-k", "q8_0"},
                                      {"--cache-type-v", "q4_0"},
                                      {"--parallel", "1"},
                                      {"--ubatch-size", "2048"}});
  CHECK(has(devstral.ignored, "--flash-attn"));
  CHECK(has(devstral.ignored, "--fit"));

  const auto zsh = parse(entry("llamacpp-zsh-hf-repo-ctx0-background")["raw"]);
  CHECK(zsh.model == "ggml-org/Qwen2.5-Coder-3B-Q8_0-GGUF");
  CHECK(zsh.settings == Settings{{"--n-gpu-layers", "99"}, {"--ubatch-size", "1024"}, {"--ctx-size", "0"}});
  CHECK(zsh.warnings == Words{"-dt: removed from recent llama.cpp versions; ignored"});

  const auto windows = parse(entry("llamacpp-windows-batch-percent-vars")["raw"]);
  CHECK(windows.model == "%GGUF_MODELS%");
  CHECK(windows.settings == Settings{{"--ctx-size", "2048"}, {"--n-gpu-layers", "20"}});
  CHECK(has(windows.warnings, "--penalize-nl: removed from recent llama.cpp versions; ignored"));

  const auto swap = parse(entry("llamacpp-llamaswap-macros-unexpanded-gpt-oss-120b")["raw"], "llama.cpp");
  CHECK(swap.model == "path/to/gpt-oss-120B.gguf");
  CHECK(swap.settings.empty());
  CHECK(swap.warnings == Words{"${latest-llama}: unexpanded variable; taken as llama-server",
                               "--ctx-size ${default_ctx}: unexpanded variable; setting skipped"});

  const auto r1 = parse(entry("trtllm-deepseek-r1-tp8-ep4-odd-batch")["raw"]);
  CHECK(r1.model == "/local/deepseek-ai/DeepSeek-R1");
  CHECK(r1.settings == Settings{{"--tensor-parallel-size", "8"},
                                {"--pipeline-parallel-size", "1"},
                                {"--expert-parallel-size", "4"},
                                {"--max-num-seqs", "161"},
                                {"--max-num-batched-tokens", "1160"},
                                {"--kv-cache-free-gpu-mem-fraction", "0.8"}});
  CHECK(r1.ignored == Words{"--backend", "--trust_remote_code"});

  const auto flexkv = parse(entry("trtllm-flexkv-dsv31-w4afp8-all-shell-vars")["raw"]);
  CHECK(flexkv.model == "$MODEL_PATH");
  CHECK(flexkv.settings.empty());
  CHECK(flexkv.warnings.size() == 1 + 1 + 5 + 1);  // preceding lines, model, 5 settings, --extra_llm_api_options

  const auto ctx = parse(entry("trtllm-aibrix-qwen3-8b-ctx-server-sed-placeholder-config")["raw"]);
  CHECK(ctx.model == "/models/$MODEL");
  CHECK(has(ctx.warnings, "--config /tmp/ctx_config.yaml: settings in that file are not read"));
  CHECK(ctx.ignored == Words{"--server_role", "--host", "--port", "--backend", "--config", "--log_level"});
}
