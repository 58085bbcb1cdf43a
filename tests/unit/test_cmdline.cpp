// Engine command lines: shell splitting, entry points (incl. docker run, sh -c, Dynamo), flag spellings
// (=, _, prefixes, booleans, short flags) read against the flag table of an engine version, unknown-flag
// warnings, variables, config files, the mapping to kvplan settings, and every real command line in
// tests/data/engine-cmdlines.json. Expected values come from the engines' parsers and the .flags tables
// (planner/data/engine-flags), not from the reader's output.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "kvplan/io/cmdline.hpp"

using namespace kvplan;
using Settings = std::vector<std::pair<std::string, std::string>>;
using Words = std::vector<std::string>;

namespace {

io::EngineCommand parse(const std::string& text, const std::string& hint = "", const io::CommandContext& ctx = {}) {
  return io::parse_engine_command(io::shell_split(text, "cmd"), hint, "cmd", ctx);
}

io::CommandContext version(const std::string& v) {
  io::CommandContext c;
  c.version = v;
  return c;
}

std::string error_of(const std::string& text, const std::string& hint = "") {
  try {
    parse(text, hint);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

Settings kv(const io::EngineCommand& c) {
  Settings out;
  for (const auto& s : c.settings) out.emplace_back(s.key, s.value);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// (variable, flag, key) of each unresolved variable
using Unresolved = std::vector<std::tuple<std::string, std::string, std::string>>;
Unresolved unresolved(const io::EngineCommand& c) {
  Unresolved out;
  for (const auto& u : c.unresolved) out.emplace_back(u.variable, u.flag, u.key);
  return out;
}

const io::CommandSetting* setting(const io::EngineCommand& c, const std::string& key) {
  for (const auto& s : c.settings)
    if (s.key == key) return &s;
  return nullptr;
}

// A scratch folder for config files, removed when the test ends.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) {
    path = std::filesystem::temp_directory_path() / ("kvplan-test-cmdline-" + name);
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
  io::CommandContext ctx() const {
    io::CommandContext c;
    c.base_dir = path.string();
    return c;
  }
};

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
  CHECK(io::shell_split("cat > f <<'EOF'\nit's: \"x\n\tEOF\nEOF\nnext", "t") ==
        Words{"cat", ">", "f", "<<", "EOF", "next"});
  CHECK(io::shell_split("cat <<-END\n\tbody\n\tEND\nnext", "t") == Words{"cat", "<<-", "END", "next"});
  CHECK(io::shell_split("'2'>x", "t") == Words{"2", ">", "x"});  // a quoted number is no fd
}

TEST_CASE("shell_split: unterminated quotes name the line they start on", "[cmdline]") {
  CHECK_THROWS_WITH(io::shell_split("vllm serve m \\\n  --kv-transfer-config '{\"a\":\n 1}", "cmd"),
                    "cmd: unterminated ' quote starting at line 2; close the quote");
  CHECK_THROWS_WITH(io::shell_split("a \"b\nc\nd", "run.sh"),
                    "run.sh: unterminated \" quote starting at line 1; close the quote");
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

TEST_CASE("entry points: llama-server under any name, the older server binary", "[cmdline]") {
  // llama.cpp builds ship renamed binaries (llama-server-<commit>); before mid-2024 the binary was `server`
  const auto renamed = parse("/opt/llama-server-be0e35 -m m.gguf -c 8192");
  CHECK(renamed.engine == "llama.cpp");
  CHECK(renamed.model == "m.gguf");
  CHECK(kv(renamed) == Settings{{"ctx_size", "8192"}});
  const auto old = parse("./server -m m.gguf -c 2048");
  CHECK(old.engine == "llama.cpp");
  CHECK(kv(old) == Settings{{"ctx_size", "2048"}});
  // `server` not followed by flags is some other program
  CHECK_THROWS_WITH(parse("server start"), Catch::Matchers::StartsWith("cmd: unsupported entry point 'server'"));
}

TEST_CASE("entry points: Dynamo workers (python -m dynamo.vllm / dynamo.sglang)", "[cmdline]") {
  const auto v = parse("python -m dynamo.vllm --model Qwen/Qwen3-0.6B --max-model-len 8192 -tp 2");
  CHECK(v.engine == "vllm");
  CHECK(v.model == "Qwen/Qwen3-0.6B");
  CHECK(kv(v) == Settings{{"max_model_len", "8192"}, {"tensor_parallel_size", "2"}});
  CHECK(v.unknown.empty());
  const auto s = parse("python3 -m dynamo.sglang --model-path m --tp 2 --mem-fraction-static 0.8");
  CHECK(s.engine == "sglang");
  CHECK(s.model == "m");
  CHECK(kv(s) == Settings{{"tensor_parallel_size", "2"}, {"memory_fraction", "0.8"}});
}

TEST_CASE("entry points: sh -c and bash -lc read the string as the command", "[cmdline]") {
  const auto sh = parse("sh -c \"vllm serve m --max-model-len 4096 -tp 2\"");
  CHECK(sh.engine == "vllm");
  CHECK(sh.model == "m");
  CHECK(kv(sh) == Settings{{"max_model_len", "4096"}, {"tensor_parallel_size", "2"}});
  // a Kubernetes command: ["/bin/bash", "-lc", "..."], with exec and a redirection inside the string
  const auto bash = io::parse_engine_command(
      {"/bin/bash", "-lc", "exec python3 -m sglang.launch_server --model-path m --tp 4 2>&1 | tee /log/x"}, "", "cmd");
  CHECK(bash.engine == "sglang");
  CHECK(kv(bash) == Settings{{"tensor_parallel_size", "4"}});
  CHECK(bash.warnings.empty());
}

TEST_CASE("entry points: docker run, the image names the engine and its tag the version", "[cmdline]") {
  // docker run [OPTIONS] IMAGE [COMMAND] [ARG...]: options that take a value (-e, -p, -v, --gpus) are skipped with it;
  // vllm/vllm-openai's entry point is the vLLM server, so the arguments after the image are its flags
  const auto v = parse(
      "docker run --gpus all -e HF_TOKEN=x -p 8000:8000 -v /data:/root/.cache --ipc=host "
      "vllm/vllm-openai:v0.11.0 --model m --kv-cache-memory-bytes 8G");
  CHECK(v.engine == "vllm");
  CHECK(v.version == "0.11.0");
  CHECK(v.image == "vllm/vllm-openai:v0.11.0");
  CHECK(v.model == "m");
  CHECK(kv(v) == Settings{{"kv_cache_memory_bytes", std::to_string(8LL * 1024 * 1024 * 1024)}});  // 8G: G = 1024^3
  CHECK(v.warnings.empty());
  // latest: the newest table, with a note
  const auto latest = parse("docker run --gpus all vllm/vllm-openai:latest --model m");
  CHECK(latest.version == "0.26.0");
  CHECK(latest.warnings == Words{"'latest' read as vllm 0.26.0, the newest kvplan knows"});
  // an entry point after the image is the command
  const auto sg =
      parse("docker run --rm lmsysorg/sglang:v0.5.2-cu126 python3 -m sglang.launch_server --model-path m --tp 2");
  CHECK(sg.engine == "sglang");
  CHECK(sg.version == "0.5.2");
  CHECK(kv(sg) == Settings{{"tensor_parallel_size", "2"}});
  // -e LLAMA_ARG_* is the engine's environment; server-bNNNN tags name the build
  const auto ll = parse(
      "docker run -e LLAMA_ARG_CTX_SIZE=8192 -v /m:/models ghcr.io/ggml-org/llama.cpp:server-b5937 -m /models/x.gguf");
  CHECK(ll.engine == "llama.cpp");
  CHECK(ll.version == "b5937");
  CHECK(kv(ll) == Settings{{"ctx_size", "8192"}});
  // podman and nerdctl are read the same way; an image that names no engine needs the engine named
  const auto pod = parse("podman run img vllm serve m -tp 2", "vllm");
  CHECK(pod.model == "m");
  CHECK(kv(pod) == Settings{{"tensor_parallel_size", "2"}});
  CHECK(parse("nerdctl run --gpus all vllm/vllm-openai:v0.10.0 --model m").version == "0.10.0");
}

TEST_CASE("environment assignments before the command set the settings bound to them", "[cmdline]") {
  // llama.cpp common/arg.cpp: -c (env: LLAMA_ARG_CTX_SIZE), -ub (env: LLAMA_ARG_UBATCH), -fa (env:
  // LLAMA_ARG_FLASH_ATTN)
  const auto c = parse("LLAMA_ARG_CTX_SIZE=8192 LLAMA_ARG_UBATCH=256 LLAMA_ARG_FLASH_ATTN=on llama-server -m m.gguf");
  CHECK(kv(c) == Settings{{"ctx_size", "8192"}, {"ubatch_size", "256"}, {"flash_attn", "on"}});
  REQUIRE(setting(c, "ctx_size"));
  CHECK(setting(c, "ctx_size")->flag == "LLAMA_ARG_CTX_SIZE");
  // a flag given too wins over the environment (the parser reads the environment first)
  CHECK(kv(parse("LLAMA_ARG_CTX_SIZE=8192 llama-server -m m.gguf -c 4096")) == Settings{{"ctx_size", "4096"}});
  // variables that bind nothing are no warning
  CHECK(parse("CUDA_VISIBLE_DEVICES=0 HF_HOME=/x llama-server -m m.gguf").warnings.empty());
}

TEST_CASE("unsupported entry points are errors", "[cmdline]") {
  const std::string readable =
      "kvplan reads vllm serve, python -m vllm.entrypoints.openai.api_server, python -m sglang.launch_server, "
      "sglang serve, python -m dynamo.vllm|sglang|trtllm, llama-server, trtllm-serve, sh -c and docker run "
      "command lines, or an engine's bare arguments when the engine is named";
  CHECK(error_of("text-generation-launcher --model-id m --port 80") ==
        "cmd: unsupported entry point 'text-generation-launcher'; " + readable);
  CHECK(error_of("--max-model-len 4096") == "cmd: unsupported entry point '--max-model-len'; " + readable);
  CHECK(error_of("--model-path m", "generic") == "cmd: unsupported entry point '--model-path'; " + readable);
  CHECK(error_of("trtllm-serve disaggregated -c d.yaml") ==
        "cmd: trtllm-serve disaggregated is not supported; give the trtllm-serve serve MODEL command of each server");
  CHECK(error_of("llama-server -m m.gguf", "vllm") ==
        "cmd: the command runs llama.cpp (llama-server), not vllm; name the engine llama.cpp or give a vllm command");
  CHECK(error_of("", "vllm") ==
        "cmd: empty command line; give the engine's command, e.g. vllm serve MODEL --max-model-len 8192");
}

TEST_CASE("bare arguments need the engine named, ${VAR} stands for llama-server only when named", "[cmdline]") {
  const auto c = parse("--max-model-len 4096 -tp 2", "vllm");
  CHECK(c.engine == "vllm");
  CHECK(kv(c) == Settings{{"max_model_len", "4096"}, {"tensor_parallel_size", "2"}});
  CHECK(parse("meta-llama/Llama-3.1-8B --max-model-len 4096", "vllm").model == "meta-llama/Llama-3.1-8B");
  CHECK(kv(parse("--model-path m --tp 2", "sglang")) == Settings{{"tensor_parallel_size", "2"}});
  const auto w = parse("${LLAMA} -m m.gguf -c 8192", "llama.cpp");
  CHECK(kv(w) == Settings{{"ctx_size", "8192"}});
  CHECK(w.warnings == Words{"${LLAMA}: unexpanded variable; taken as llama-server"});
  CHECK(parse("%LLAMA% -m m.gguf", "llama.cpp").engine == "llama.cpp");
}

TEST_CASE("a pasted script: the first engine command is read, what precedes it is reported", "[cmdline]") {
  // newlines are spaces, so the second vllm serve runs on as arguments of the first: it ends the first
  const auto c = parse("#!/bin/bash\nexport HF_HOME=/x\nvllm serve a --max-model-len 8k\nvllm serve b --port 2\n");
  CHECK(c.model == "a");
  CHECK(kv(c) == Settings{{"max_model_len", "8000"}});  // vLLM human_readable_int: lowercase k = 1000
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
  // vLLM 0.26.0: -tp/-pp/-dp are declared short forms; --max-num-seq and --max-num-batched-token are argparse
  // unique prefixes; -O3 is rewritten by FlexibleArgumentParser to --optimization-level 3
  const auto c = parse(
      "vllm serve m --max_model_len=2048 --gpu_memory_utilization 0.7 --max-num-seq=512 "
      "--max-num-batched-token 4096 -tp 4 -pp=2 -dp 2 -O3");
  CHECK(kv(c) == Settings{{"max_model_len", "2048"},
                          {"memory_fraction", "0.7"},
                          {"max_num_seqs", "512"},
                          {"max_num_batched_tokens", "4096"},
                          {"tensor_parallel_size", "4"},
                          {"pipeline_parallel_size", "2"},
                          {"data_parallel_size", "2"}});
  CHECK(c.ignored == Words{"--optimization-level"});
  CHECK(c.unknown.empty());
  // SGLang 0.5.10: --model is declared with --model-path, --tp/--ep are declared, --mem-frac is a unique prefix of
  // --mem-fraction-static; --page-size is SGLang's KV block size
  CHECK(kv(parse("python -m sglang.launch_server --model m --tp 8 --dp-size 2 --ep 8 --context-length 32768 "
                 "--mem-frac 0.85 --chunked-prefill-size 4096 --max-running-requests 64 --page-size 16 "
                 "--max-total-tokens 100000")) == Settings{{"tensor_parallel_size", "8"},
                                                           {"data_parallel_size", "2"},
                                                           {"expert_parallel_size", "8"},
                                                           {"max_model_len", "32768"},
                                                           {"memory_fraction", "0.85"},
                                                           {"max_num_batched_tokens", "4096"},
                                                           {"max_num_seqs", "64"},
                                                           {"block_size", "16"},
                                                           {"max_total_tokens", "100000"}});
  // llama.cpp and trtllm-serve have no abbreviations: a misspelling is an unknown flag (a warning)
  const auto ll = parse("llama-server -m m --ctx-sise 4096");
  CHECK(kv(ll).empty());
  CHECK(ll.unknown == Words{"--ctx-sise"});
  CHECK(ll.warnings ==
        Words{"--ctx-sise: not a llama.cpp b7376 flag (did you mean '--ctx-size'?); treated as not changing memory"});
  CHECK(kv(parse("trtllm-serve m --tp-size 2 --max_seq_len 4096")) ==
        Settings{{"tensor_parallel_size", "2"}, {"max_model_len", "4096"}});
}

TEST_CASE("unknown flags are warnings with did-you-mean, or the version that has them", "[cmdline]") {
  const auto typo = parse("vllm serve m --max-modle-len 4096 --gpu-memory-utilisation 0.8 --max-model-len 2048");
  CHECK(kv(typo) == Settings{{"max_model_len", "2048"}});  // 4096 and 0.8 are the unknown flags' values, not settings
  CHECK(typo.unknown == Words{"--max-modle-len", "--gpu-memory-utilisation"});
  CHECK(
      typo.warnings ==
      Words{"--max-modle-len: not a vLLM 0.26.0 flag (did you mean '--max-model-len'?); treated as not changing memory",
            "--gpu-memory-utilisation: not a vLLM 0.26.0 flag (did you mean '--gpu-memory-utilization'?); "
            "treated as not changing memory"});
  // --num-scheduler-steps is in the 0.10.0 table and not in 0.11.0 or 0.26.0; --disable-log-requests last in 0.11.0.
  // Their values are consumed with that version's arity (value / flag), so the model and settings stay right.
  const auto old = parse("vllm serve m --num-scheduler-steps 8 --disable-log-requests --max-model-len 2048");
  CHECK(old.model == "m");
  CHECK(kv(old) == Settings{{"max_model_len", "2048"}});
  CHECK(old.unknown == Words{"--num-scheduler-steps", "--disable-log-requests"});
  CHECK(old.warnings ==
        Words{"--num-scheduler-steps: not a vLLM 0.26.0 flag (a vLLM 0.10.0 flag); treated as not changing memory",
              "--disable-log-requests: not a vLLM 0.26.0 flag (a vLLM 0.11.0 flag); treated as not changing memory"});
  // the same flags under 0.10.0 are known (--num-scheduler-steps: multi-step scheduling, no memory effect modelled)
  CHECK(parse("vllm serve m --num-scheduler-steps 8 --disable-log-requests", "", version("0.10.0")).unknown.empty());
  // trtllm-serve 1.1.0 has --tp_size, no --tp
  const auto trt = parse("trtllm-serve m --tp 8");
  CHECK(trt.unknown == Words{"--tp"});
  CHECK(trt.warnings ==
        Words{"--tp: not a TensorRT-LLM 1.1.0 flag (did you mean '--tp_size'?); treated as not changing memory"});
  // with no other version and nothing close, no hint; a following number is taken as its value
  const auto foo = parse("vllm serve m --foo 1");
  CHECK(foo.unknown == Words{"--foo"});
  CHECK(foo.warnings == Words{"--foo: not a vLLM 0.26.0 flag; treated as not changing memory"});
}

TEST_CASE("ambiguous prefixes and malformed values are errors", "[cmdline]") {
  // vLLM 0.26.0 flags starting --max-num: --max-num-batched-tokens, --max-num-scheduled-tokens, --max-num-seqs
  CHECK(error_of("vllm serve m --max-num 8") ==
        "cmd: --max-num: ambiguous vLLM flag; it could be --max-num-batched-tokens, --max-num-scheduled-tokens, "
        "--max-num-seqs; write more of the name");
  CHECK(error_of("vllm serve m --port") == "cmd: --port: needs a value; write --port VALUE");
  CHECK(error_of("vllm serve m --enforce-eager=maybe") == "cmd: --enforce-eager: takes true or false, not 'maybe'");
  CHECK(error_of("llama-server -m m x.gguf") ==
        "cmd: unexpected llama.cpp argument 'x.gguf'; llama-server takes the model as -m/--model");
}

TEST_CASE("version selection: CommandContext.version picks the flag table", "[cmdline]") {
  // --kv-cache-memory-bytes: in vllm/0.11.0.flags (help: vllm-0.11.0.txt), not in 0.10.0.flags
  const auto v11 = parse("vllm serve m --kv-cache-memory-bytes 8G", "", version("0.11.0"));
  CHECK(v11.version == "0.11.0");
  CHECK(kv(v11) == Settings{{"kv_cache_memory_bytes", std::to_string(8LL << 30)}});
  CHECK(v11.unknown.empty());
  // "0.11" picks 0.11.0 without a note
  const auto short_version = parse("vllm serve m", "", version("0.11"));
  CHECK(short_version.version == "0.11.0");
  CHECK(short_version.warnings.empty());
  // a version with no table: the newest older table, with a note
  const auto between = parse("vllm serve m", "", version("0.10.2"));
  CHECK(between.version == "0.10.0");
  CHECK(between.warnings == Words{"vllm 0.10.2 has no flag table of its own; read with the 0.10.0 table"});
  const auto older = parse("vllm serve m", "", version("0.5.0"));
  CHECK(older.version == "0.8.3");
  CHECK(older.warnings ==
        Words{"vllm 0.5.0 has no flag table of its own; read with the 0.8.3 table (the oldest kvplan knows)"});
  // default: the newest table of each engine
  CHECK(parse("vllm serve m").version == "0.26.0");
  CHECK(parse("python -m sglang.launch_server --model-path m").version == "0.5.10");
  CHECK(parse("trtllm-serve m").version == "1.1.0");
  CHECK(parse("llama-server -m m").version == "b7376");
  // vLLM 0.26.0 drops --swap-space (host memory); 0.11.0 has it
  CHECK(parse("vllm serve m --swap-space 16", "", version("0.11.0")).unknown.empty());
  CHECK(parse("vllm serve m --swap-space 16").unknown == Words{"--swap-space"});
}

TEST_CASE("booleans: bare, =true/=false, --no-X, the last one wins", "[cmdline]") {
  // vLLM 0.26.0: --enforce-eager is a BooleanOptionalAction (bool): --no-enforce-eager sets it false
  CHECK(kv(parse("vllm serve m --enforce-eager")) == Settings{{"enforce_eager", "true"}});
  CHECK(kv(parse("vllm serve m --enforce-eager=false")) == Settings{{"enforce_eager", "false"}});
  CHECK(kv(parse("vllm serve m --enforce-eager --no-enforce-eager")) == Settings{{"enforce_eager", "false"}});
  CHECK(kv(parse("vllm serve m --enforce-eager=true -ep")) ==
        Settings{{"enforce_eager", "true"}, {"enable_expert_parallel", "true"}});
  // --no-X is reported under the flag's canonical name
  const auto cp = parse("vllm serve m --no-enable-chunked-prefill --enable-prefix-caching=false --enforce-eager=false");
  CHECK(cp.ignored.empty());
  CHECK(cp.unknown.empty());
  CHECK(kv(cp) == Settings{{"enable_chunked_prefill", "false"}, {"enable_prefix_caching", "false"}, {"enforce_eager", "false"}});
  CHECK(kv(parse("vllm serve m --max-model-len 1 --max-model-len 2")) == Settings{{"max_model_len", "2"}});
  CHECK(kv(parse("python -m sglang.launch_server --model-path m --disable-cuda-graph")) ==
        Settings{{"enforce_eager", "true"}});
  // llama.cpp b7376: --kv-unified|-kvu is a switch with no negative spelling (help: "--kv-unified, -kvu"), so -no-kvu
  // is unknown to that build (later builds added -no-kvu/--no-kv-unified)
  const auto ll = parse("llama-server -m m -np 4 -no-kvu --swa-full");
  CHECK(kv(ll) == Settings{{"parallel", "4"}, {"swa_full", "true"}});
  CHECK(ll.unknown == Words{"-no-kvu"});
  CHECK(kv(parse("llama-server -m m -np 4 -kvu")) == Settings{{"parallel", "4"}, {"kv_unified", "true"}});
}

TEST_CASE("values: vLLM human integers, quantization, -ngl, auto values", "[cmdline]") {
  CHECK(kv(parse("vllm serve m --max-model-len 32k --max-num-batched-tokens 16K --kv-cache-memory-bytes 8G")) ==
        Settings{{"max_model_len", std::to_string(32 * 1000)},
                 {"max_num_batched_tokens", std::to_string(16 * 1024)},
                 {"kv_cache_memory_bytes", std::to_string(8LL * 1024 * 1024 * 1024)}});
  CHECK(kv(parse("vllm serve m --max-model-len 25.6k")) == Settings{{"max_model_len", "25600"}});
  // vLLM: --max-model-len auto / -1 = the longest that fits
  CHECK(kv(parse("vllm serve m --max-model-len auto")) == Settings{{"max_model_len", "auto"}});
  CHECK(kv(parse("vllm serve m --max-model-len -1")) == Settings{{"max_model_len", "auto"}});
  CHECK(kv(parse("vllm serve m --quantization fp8 --kv-cache-dtype fp8_e4m3")) ==
        Settings{{"weight_format", "fp8"}, {"kv_cache_dtype", "fp8_e4m3"}});
  CHECK(kv(parse("vllm serve m -q awq_marlin")) == Settings{{"weight_format", "int4"}});
  CHECK(kv(parse("vllm serve m --quantization modelopt_fp4")) == Settings{{"weight_format", "nvfp4"}});
  CHECK(kv(parse("vllm serve m --quantization mxfp4")) == Settings{{"weight_format", "mxfp4"}});
  CHECK(kv(parse("python -m sglang.launch_server --model-path m --quantization gptq")) ==
        Settings{{"weight_format", "int4"}});
  const auto bnb = parse("vllm serve m --quantization bitsandbytes");
  CHECK(kv(bnb).empty());
  CHECK(bnb.warnings == Words{"--quantization bitsandbytes: not modelled; weights are sized from the model's config"});
  // --rope-scaling JSON is hf_overrides {"rope_scaling": JSON}
  CHECK(kv(parse(R"(vllm serve m --rope-scaling '{"rope_type":"yarn","factor":4.0}')", "", version("0.10.0"))) ==
        Settings{{"hf_overrides", R"({"rope_scaling": {"rope_type":"yarn","factor":4.0}})"}});
  CHECK(kv(parse("llama-server -m m -ngl all")) == Settings{{"n_gpu_layers", "-1"}});
  CHECK(kv(parse("llama-server -m m -ngl -1 -ctk q8_0 -ctv q4_0")) ==
        Settings{{"n_gpu_layers", "-1"}, {"cache_type_k", "q8_0"}, {"cache_type_v", "q4_0"}});
  const auto autos = parse("llama-server -m m -ngl auto -np -1");
  CHECK(kv(autos).empty());
  CHECK(autos.warnings == Words{"-np -1: no fixed value; kvplan uses the engine's default"});  // -ngl auto: --fit is modelled
}

TEST_CASE("llama.cpp -fa: a switch in b5937, on|off|auto in b7376", "[cmdline]") {
  // b7376 (-fa, --flash-attn [on|off|auto]) takes a value; written before another flag (the old switch syntax)
  // it is read as on, with a warning
  const auto now = parse("llama-server -m m -fa -c 4096 -ub 256");
  CHECK(kv(now) == Settings{{"flash_attn", "on"}, {"ctx_size", "4096"}, {"ubatch_size", "256"}});
  CHECK(now.warnings == Words{"-fa without a value (older llama.cpp syntax): read as on"});
  CHECK(now.unknown.empty());
  // a later --flash-attn off wins
  CHECK(kv(parse("llama-server -m m -fa -c 4096 --flash-attn off")) ==
        Settings{{"ctx_size", "4096"}, {"flash_attn", "off"}});
  CHECK(kv(parse("llama-server -m m -fa auto")) == Settings{{"flash_attn", "auto"}});
  // b5937 (-fa, --flash-attn): a plain switch, no warning
  const auto old = parse("llama-server -m m -fa -c 4096", "", version("b5937"));
  CHECK(old.version == "b5937");
  CHECK(old.warnings.empty());
  CHECK(old.unknown.empty());
  REQUIRE(setting(old, "flash_attn"));
  CHECK(setting(old, "ctx_size")->value == "4096");
}

TEST_CASE("vLLM dotted JSON flags: --compilation-config.mode 3", "[cmdline]") {
  // FlexibleArgumentParser turns --compilation-config.mode 3 into --compilation-config '{"mode": 3}';
  // compilation config is an unmodelled memory effect (CUDA graphs) in vllm.effects
  const auto c = parse("vllm serve m --compilation-config.mode 3 --max-model-len 4096");
  CHECK(c.model == "m");
  CHECK(kv(c) == Settings{{"max_model_len", "4096"}});  // 3 is the dotted key's value, not the model
  CHECK(c.unknown.empty());
  CHECK(c.ignored == Words{"--compilation-config"});
  CHECK(c.warnings ==
        Words{"--compilation-config.mode 3: changes GPU memory in a way kvplan does not model (CUDA graph "
              "mode and capture sizes (graph memory), compile level); ignored"});
  const auto eq = parse("vllm serve m --compilation-config.cudagraph_capture_sizes+=8");
  CHECK(eq.unknown.empty());
  CHECK(eq.ignored == Words{"--compilation-config"});
}

// ---- variables ----

TEST_CASE("unexpanded variables: bound flags and the model go to unresolved", "[cmdline]") {
  const auto c = parse("vllm serve $MODEL --max-model-len ${LEN} --tensor-parallel-size=$(TP) --port ${PORT}");
  CHECK(c.model.empty());
  CHECK(kv(c).empty());
  CHECK(unresolved(c) == Unresolved{{"MODEL", "model", "model"},
                                    {"LEN", "--max-model-len", "max_model_len"},
                                    {"TP", "--tensor-parallel-size", "tensor_parallel_size"}});
  CHECK(c.ignored == Words{"--port"});  // --port binds no setting: its variable does not matter
  CHECK(c.warnings.empty());
  // POSIX splitting drops the backslash of a Windows path; %VAR% is a variable
  const auto w = parse("llama-server --model %MODELS%\\x.gguf -c %CTX%", "llama.cpp");
  CHECK(unresolved(w) == Unresolved{{"MODELS", "--model", "model"}, {"CTX", "-c", "ctx_size"}});
  CHECK(w.warnings.empty());
  // a later value resolves an earlier variable
  const auto later = parse("vllm serve m --max-model-len ${LEN} --max-model-len 4096");
  CHECK(kv(later) == Settings{{"max_model_len", "4096"}});
  CHECK(later.unresolved.empty());
}

TEST_CASE("variables: expansion from CommandContext.variables and ${X:-default}", "[cmdline]") {
  io::CommandContext ctx;
  ctx.variables = {{"MODEL", "org/m"}, {"TP", "4"}, {"FRAC", "0.8"}};
  const auto c =
      parse("vllm serve $MODEL --max-model-len ${LEN:-8192} -tp $(TP) --gpu-memory-utilization %FRAC%", "", ctx);
  CHECK(c.model == "org/m");
  CHECK(kv(c) == Settings{{"max_model_len", "8192"}, {"tensor_parallel_size", "4"}, {"memory_fraction", "0.8"}});
  CHECK(c.unresolved.empty());
  // a default that is itself a variable leaves the variable unresolved
  const auto d = parse("vllm serve m --max-model-len ${LEN:-$DEF}");
  CHECK(unresolved(d) == Unresolved{{"LEN", "--max-model-len", "max_model_len"}});
  // expand_variables itself
  CHECK(io::expand_variables("${A}/x-$B-$(C)-%D%", {{"A", "a"}, {"B", "b"}, {"C", "c"}, {"D", "d"}}) == "a/x-b-c-d");
  CHECK(io::expand_variables("${A:-dflt} ${B:-x}", {{"B", "b"}}) == "dflt b");
  CHECK(io::expand_variables("$UNSET ${UNSET}", {}) == "$UNSET ${UNSET}");
  CHECK(io::expand_variables("$((1+2)) `id`", {{"1", "x"}}) == "$((1+2)) `id`");  // arithmetic and commands stay
  // the shell's other parameter forms: ${X-w} and ${X=w} default when unset, ${X:=w} too; ${X:?msg} and ${X?msg}
  // have no default (they stay unexpanded until X is given)
  CHECK(io::expand_variables("${TP-2} ${N=4} ${M:=8}", {}) == "2 4 8");
  CHECK(io::expand_variables("${TP-2} ${LEN:?set LEN}", {{"TP", "4"}, {"LEN", "4096"}}) == "4 4096");
  CHECK(io::expand_variables("${LEN:?set LEN} ${LEN?x}", {}) == "${LEN:?set LEN} ${LEN?x}");
  CHECK(io::variable_name("${LEN:?set LEN}") == "LEN");
  CHECK(io::variable_name("${TP-2}") == "TP");
  CHECK(io::variable_name("<model-path>") == "model-path");  // not a ${...} parameter: the dash is in the name
}

// ---- config files ----

TEST_CASE("removed, unmodelled and missing config-file flags warn", "[cmdline]") {
  const auto c = parse("vllm serve m --num-scheduler-steps 8 --all2all-backend deepep_low_latency --config c.yaml --swap-space 16");
  CHECK(c.ignored == Words{"--all2all-backend"});
  CHECK(c.unknown == Words{"--num-scheduler-steps", "--swap-space"});
  CHECK(
      c.warnings ==
      Words{
          "--num-scheduler-steps: not a vLLM 0.26.0 flag (a vLLM 0.10.0 flag); treated as not changing memory",
          "--all2all-backend deepep_low_latency: changes GPU memory in a way kvplan does not model (MoE all2all backend; "
          "DeepEP/NVSHMEM backends reserve GPU communication buffers); ignored",
          "--swap-space: not a vLLM 0.26.0 flag (a vLLM 0.11.0 flag); treated as not changing memory",
          "--config c.yaml: file not found here; the settings in it are not read"});  // files are read after the flags
  CHECK(parse("trtllm-serve m --extra_llm_api_options x.yml").warnings ==
        Words{"--extra_llm_api_options x.yml: file not found here; the settings in it are not read"});
}

TEST_CASE("config files: vLLM --config YAML, flags on the command line win", "[cmdline]") {
  TempDir dir("vllm-config");
  dir.write("v.yaml",
            "max-model-len: 16384\n"
            "tensor_parallel_size: 2\n"
            "enforce-eager: true\n"
            "gpu-memory-utilization: 0.85\n");
  // vLLM FlexibleArgumentParser._load_config_file: each key is an argument; the command line takes precedence
  const auto c = parse("vllm serve m --config v.yaml -tp 4", "", dir.ctx());
  CHECK(c.model == "m");
  REQUIRE(c.settings.size() == 4);
  CHECK(setting(c, "max_model_len")->value == "16384");
  CHECK(setting(c, "enforce_eager")->value == "true");
  CHECK(setting(c, "memory_fraction")->value == "0.85");
  CHECK(setting(c, "tensor_parallel_size")->value == "4");
  CHECK(setting(c, "tensor_parallel_size")->flag == "-tp");
  CHECK(c.warnings.empty());
  CHECK(c.unknown.empty());
  // whichever side of --config the flag is written on ("command line > config file > defaults")
  const auto before = parse("vllm serve m -tp 4 --max-model-len 8192 --config v.yaml", "", dir.ctx());
  CHECK(setting(before, "tensor_parallel_size")->value == "4");
  CHECK(setting(before, "max_model_len")->value == "8192");
  CHECK(setting(before, "memory_fraction")->value == "0.85");
  // SGLang --config, found through an absolute path
  const std::string s = dir.write("s.yaml", "context-length: 8192\nmem-fraction-static: 0.7\n");
  const auto sg = parse("python -m sglang.launch_server --model-path m --config " + s);
  CHECK(setting(sg, "max_model_len") != nullptr);
  CHECK(setting(sg, "memory_fraction") != nullptr);
  if (setting(sg, "max_model_len")) CHECK(setting(sg, "max_model_len")->value == "8192");
}

TEST_CASE("config files: TensorRT-LLM --extra_llm_api_options YAML", "[cmdline]") {
  TempDir dir("trtllm-options");
  dir.write("t.yaml",
            "max_batch_size: 64\n"
            "kv_cache_config:\n"
            "  free_gpu_memory_fraction: 0.7\n"
            "  max_tokens: 20000\n"
            "  dtype: fp8\n"
            "enable_attention_dp: true\n"
            "bogus_key: 1\n");
  const auto c = parse("trtllm-serve m --extra_llm_api_options t.yaml --tp_size 8", "", dir.ctx());
  // keys from trtllm/1.1.0.options bound in settings.cpp (LlmArgs: max_batch_size, kv_cache_config.*, enable_attention_dp)
  REQUIRE(c.settings.size() == 6);
  CHECK(setting(c, "enable_attention_dp")->value == "true");
  CHECK(setting(c, "max_num_seqs")->value == "64");
  CHECK(setting(c, "memory_fraction")->value == "0.7");
  CHECK(setting(c, "max_tokens")->value == "20000");
  CHECK(setting(c, "kv_cache_dtype")->value == "fp8");
  CHECK(setting(c, "tensor_parallel_size")->value == "8");
  CHECK(c.unknown == Words{"bogus_key"});
  // the file overrides trtllm-serve's own flags, written before or after it (its --help: the file "overwrites the
  // parameters specified by trtllm-serve")
  for (const char* text : {"trtllm-serve m --extra_llm_api_options t.yaml --kv_cache_free_gpu_memory_fraction 0.5 --max_batch_size 8",
                           "trtllm-serve m --kv_cache_free_gpu_memory_fraction 0.5 --max_batch_size 8 --extra_llm_api_options t.yaml"}) {
    INFO(text);
    const auto o = parse(text, "", dir.ctx());
    CHECK(setting(o, "memory_fraction")->value == "0.7");
    CHECK(setting(o, "max_num_seqs")->value == "64");
  }
  const std::string file = (dir.path / "t.yaml").string();
  CHECK(c.warnings == Words{file + ": bogus_key: not a TensorRT-LLM 1.1.0 option; treated as not changing memory"});
}

// ---- the real command lines ----

TEST_CASE("every command line in engine-cmdlines.json parses to its engine", "[cmdline]") {
  const auto all = cmdlines();
  REQUIRE(all.size() >= 20);
  for (const auto& e : all) {
    const std::string id = e["id"], engine = e["engine"], format = e["format"];
    INFO(id);
    // argv as given, with the engine named (k8s args often omit the entry point), read with the newest tables
    io::EngineCommand from_argv;
    REQUIRE_NOTHROW(from_argv = parse_argv(e));
    CHECK(from_argv.engine == engine);
    const Words argv = e["argv"];
    // argv with an entry point of its own needs no engine name
    if (argv[0][0] != '-' && argv[0][0] != '$') CHECK(io::parse_engine_command(argv, "", id).engine == engine);
    if (format == "k8s-args" || format == "helm-values") continue;
    // shell text as written (docker run included): split, then parsed; it finds the same command as argv
    Words words;
    REQUIRE_NOTHROW(words = io::shell_split(e["raw"], id));
    io::EngineCommand from_raw;
    REQUIRE_NOTHROW(from_raw = io::parse_engine_command(words, engine, id));
    CHECK(from_raw.engine == engine);
    CHECK(from_raw.model == from_argv.model);
    // an environment prefix of the shell text (LMCACHE_CONFIG_FILE=... before vllm serve) is a setting argv lacks
    auto raw_kv = kv(from_raw);
    raw_kv.erase(std::remove_if(raw_kv.begin(), raw_kv.end(), [](const auto& p) { return p.first == "lmcache_config_file"; }), raw_kv.end());
    CHECK(raw_kv == kv(from_argv));
    CHECK(unresolved(from_raw) == unresolved(from_argv));
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
  // --max-num-seq=512 is argparse's abbreviation of --max-num-seqs; --num-scheduler-steps last appears in the
  // 0.10.0 table, --disable-log-requests in 0.11.0
  const auto helm = parse_argv(entry("vllm-gke-helm-ai-inference-gemma-7b-it-l4"));
  CHECK(helm.model.empty());
  CHECK(unresolved(helm) == Unresolved{{"MODEL_ID", "--model", "model"}});
  CHECK(kv(helm) == Settings{{"tensor_parallel_size", "1"},
                             {"max_num_seqs", "512"},
                             {"memory_fraction", "0.95"},
                             {"max_model_len", "512"}});
  CHECK(helm.unknown == Words{"--disable-log-requests", "--num-scheduler-steps"});
  CHECK(helm.warnings ==
        Words{"--disable-log-requests: not a vLLM 0.26.0 flag (a vLLM 0.11.0 flag); treated as not changing memory",
              "--num-scheduler-steps: not a vLLM 0.26.0 flag (a vLLM 0.10.0 flag); treated as not changing memory"});

  const auto docker = parse_argv(entry("vllm-docker-run-qwen25-7b-underscore-flags"));
  CHECK(docker.model == "Qwen/Qwen2.5-7B-Instruct");
  CHECK(kv(docker) == Settings{{"max_model_len", "1024"}, {"memory_fraction", "0.7"}});
  CHECK(docker.ignored == Words{"--api-key"});
  const auto docker_raw = parse(entry("vllm-docker-run-qwen25-7b-underscore-flags")["raw"]);
  CHECK(docker_raw.image == "vllm/vllm-openai:latest");
  CHECK(kv(docker_raw) == kv(docker));

  const auto kubeai = parse_argv(entry("vllm-kubeai-llama-3.1-405b-instruct-fp8-mi300x"));
  CHECK(kv(kubeai) == Settings{{"max_model_len", "120000"},
                               {"max_num_batched_tokens", "120000"},
                               {"max_num_seqs", "1024"},
                               {"tensor_parallel_size", "8"},
                               {"memory_fraction", "0.90"},
                               {"kv_cache_dtype", "fp8"},
                               {"enable_chunked_prefill", "false"}});
  CHECK(!has(kubeai.ignored, "--enable-chunked-prefill"));
  CHECK(has(kubeai.unknown, "--max-seq-len-to-capture"));  // in 0.10.0.flags, not in 0.26.0.flags
  CHECK(has(kubeai.warnings,
            "--max-seq-len-to-capture: not a vLLM 0.26.0 flag (a vLLM 0.10.0 flag); treated as not changing memory"));

  const auto eager = parse(entry("vllm-trailing-backslash-then-commented-flags")["raw"]);
  CHECK(eager.model == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(kv(eager) == Settings{{"enforce_eager", "true"}});  // the commented-out flags are not read
  CHECK(eager.unknown == Words{"--disable-log-requests"});  // CUDA_VISIBLE_DEVICES=4 is an assignment, no warning
  CHECK(eager.warnings.size() == 1);

  const auto lmcache = parse(entry("vllm-lmcache-bnb-multiline-json-env-prefix")["raw"]);
  auto lmcache_kv = kv(lmcache);
  const auto json_at = std::find_if(lmcache_kv.begin(), lmcache_kv.end(), [](const auto& p) { return p.first == "kv_transfer_config"; });
  REQUIRE(json_at != lmcache_kv.end());  // read since the connector tiers (host KV via LMCache)
  CHECK(json_at->second.find("LMCacheConnectorV1") != std::string::npos);
  lmcache_kv.erase(json_at);
  std::sort(lmcache_kv.begin(), lmcache_kv.end());
  // the LMCACHE_CONFIG_FILE prefix is read too (LMCache's YAML under the LMCACHE_ variables)
  CHECK(lmcache_kv == Settings{{"lmcache_config_file", "lmcache_config.yaml"}, {"max_model_len", "8192"}, {"memory_fraction", "0.9"}});
  CHECK(lmcache.ignored.empty());  // --quantization is bound: bitsandbytes warns instead
  CHECK(has(lmcache.warnings, "--quantization bitsandbytes: not modelled; weights are sized from the model's config"));

  const auto mixed = parse(entry("vllm-mixed-dash-underscore-trust-remote-code")["raw"]);
  CHECK(kv(mixed) == Settings{{"memory_fraction", "0.99"}, {"max_model_len", "6000"}});
  CHECK(mixed.ignored == Words{"--port", "--trust-remote-code"});
  CHECK(mixed.warnings == Words{"ignored what comes before 'vllm serve': export"});
}

TEST_CASE("engine-cmdlines.json: SGLang, llama.cpp and TensorRT-LLM settings checked by hand", "[cmdline]") {
  const auto sky = parse(entry("sglang-skypilot-deepseek-r1-bf16-a100x8x2-computed-tp")["raw"]);
  CHECK(sky.engine == "sglang");
  CHECK(sky.model == "DeepSeek-R1-BF16");
  CHECK(kv(sky) == Settings{{"enable_dp_attention", "true"}});  // a settings row since attention data parallel is modelled
  CHECK(unresolved(sky) == Unresolved{{"TP", "--tp", "tensor_parallel_size"}});
  CHECK(sky.warnings.front() == "ignored what comes before 'python -m sglang.launch_server': then else fi");
  CHECK(sky.warnings.back() == "$HEAD_NODE_ARGS: unexpanded variable; the arguments it holds are not read");
  CHECK(kv(parse_argv(entry("sglang-official-k8s-sts-2node-tp16-ep16"))) ==
        Settings{{"tensor_parallel_size", "16"}, {"expert_parallel_size", "16"}});

  const auto devstral = parse(entry("llamacpp-devstral-24b-230k-ctx-mixed-kv-q8k-q4v")["raw"]);
  CHECK(devstral.model == "unsloth.Devstral-Small-2-24B-Instruct-2512-UD-Q4_K_XL.gguf");
  CHECK(setting(devstral, "ctx_size")->value == "230000");
  CHECK(setting(devstral, "cache_type_k")->value == "q8_0");
  CHECK(setting(devstral, "cache_type_v")->value == "q4_0");
  CHECK(setting(devstral, "parallel")->value == "1");
  CHECK(setting(devstral, "ubatch_size")->value == "2048");
  CHECK(setting(devstral, "flash_attn")->value == "on");
  CHECK(setting(devstral, "fit")->value == "on");          // --fit on: a setting since --fit is modelled
  CHECK(setting(devstral, "fit_ctx")->value == "230000");
  CHECK(devstral.unknown.empty());

  const auto zsh = parse(entry("llamacpp-zsh-hf-repo-ctx0-background")["raw"]);
  CHECK(zsh.model == "ggml-org/Qwen2.5-Coder-3B-Q8_0-GGUF");
  // -fa before -ub: the old switch syntax (b7376 wants on|off|auto); -dt is --defrag-thold's short form
  CHECK(kv(zsh) == Settings{{"n_gpu_layers", "99"},
                            {"flash_attn", "on"},
                            {"ubatch_size", "1024"},
                            {"batch_size", "1024"},
                            {"ctx_size", "0"}});
  CHECK(zsh.warnings == Words{"-fa without a value (older llama.cpp syntax): read as on"});
  CHECK(has(zsh.ignored, "--defrag-thold"));

  const auto windows = parse_argv(entry("llamacpp-windows-batch-percent-vars"));
  CHECK(unresolved(windows) == Unresolved{{"GGUF_MODELS", "--model", "model"}});
  CHECK(kv(windows) == Settings{{"ctx_size", "2048"}, {"n_gpu_layers", "20"}});
  CHECK(windows.unknown == Words{"--penalize-nl"});  // removed from llama.cpp long before b5937

  const auto swap = parse(entry("llamacpp-llamaswap-macros-unexpanded-gpt-oss-120b")["raw"], "llama.cpp");
  CHECK(swap.model == "path/to/gpt-oss-120B.gguf");
  CHECK(kv(swap).empty());
  CHECK(unresolved(swap) == Unresolved{{"default_ctx", "--ctx-size", "ctx_size"}});
  CHECK(swap.warnings.front() == "${latest-llama}: unexpanded variable; taken as llama-server");
  CHECK(has(swap.unknown, "--temperature"));  // llama.cpp spells it --temp

  const auto r1 = parse(entry("trtllm-deepseek-r1-tp8-ep4-odd-batch")["raw"]);
  CHECK(r1.model == "/local/deepseek-ai/DeepSeek-R1");
  CHECK(kv(r1) == Settings{{"tensor_parallel_size", "8"},
                           {"pipeline_parallel_size", "1"},
                           {"expert_parallel_size", "4"},
                           {"max_num_seqs", "161"},
                           {"max_num_batched_tokens", "1160"},
                           {"memory_fraction", "0.8"}});
  CHECK(r1.ignored == Words{"--backend", "--trust_remote_code"});

  const auto flexkv = parse(entry("trtllm-flexkv-dsv31-w4afp8-all-shell-vars")["raw"]);
  CHECK(flexkv.model.empty());
  CHECK(kv(flexkv).empty());
  CHECK(unresolved(flexkv) == Unresolved{{"MODEL_PATH", "model", "model"},
                                         {"TP_SIZE", "--tp_size", "tensor_parallel_size"},
                                         {"EP_SIZE", "--ep_size", "expert_parallel_size"},
                                         {"MAX_SEQ_LEN", "--max_seq_len", "max_model_len"},
                                         {"MAX_NUM_TOKENS", "--max_num_tokens", "max_num_batched_tokens"},
                                         {"BATCH_SIZE", "--max_batch_size", "max_num_seqs"}});
  CHECK(
      has(flexkv.warnings,
          "--extra_llm_api_options extra-llm-api-config-cg.yml: file not found here; the settings in it are not read"));
}

// ---- reader behaviours the engines contradict (reported; these checks fail until the reader is fixed) ----

TEST_CASE("reader bug: a settings-bound flag is accepted by a version whose table lacks it", "[cmdline]") {
  // vllm/0.10.0.flags and help vllm-0.10.0.txt have no --kv-cache-memory-bytes (it is in 0.11.0); vLLM 0.10.0's
  // argparse rejects it. The reader's settings-table fallback (resolve: engine_flag_binding) bypasses the table.
  const auto v10 = parse("vllm serve m --kv-cache-memory-bytes 8G --max-model-len 4096", "", version("0.10.0"));
  CHECK(kv(v10) == Settings{{"max_model_len", "4096"}});
  CHECK(v10.unknown == Words{"--kv-cache-memory-bytes"});
  CHECK(v10.warnings ==
        Words{"--kv-cache-memory-bytes: not a vLLM 0.10.0 flag (a vLLM 0.26.0 flag); treated as not changing memory"});
}

TEST_CASE("reader bug: --no-X is accepted for a switch that has no negation", "[cmdline]") {
  // vllm/0.8.3.flags: --enforce-eager is `flag` (store_true); argparse has no --no-enforce-eager in 0.8.3
  // (README: only `bool` has the implied --no- twin). The reader accepts --no-X for `flag` too.
  const auto c = parse("vllm serve m --no-enforce-eager", "", version("0.8.3"));
  CHECK(kv(c).empty());
  CHECK(c.unknown == Words{"--no-enforce-eager"});
}

TEST_CASE("reader bug: LLAMA_ARG_N_PARALLEL and LLAMA_ARG_N_GPU_LAYERS are not read", "[cmdline]") {
  // llama.cpp common/arg.cpp: -np (env: LLAMA_ARG_N_PARALLEL), -ngl (env: LLAMA_ARG_N_GPU_LAYERS); help
  // llama-server-b7376.txt lines "-np, --parallel N (env: LLAMA_ARG_N_PARALLEL)". settings.cpp writes these env
  // spellings with a conversion suffix (":auto_count", ":gpu_layers") that the spelling parser leaves in the name.
  const auto c = parse("LLAMA_ARG_N_PARALLEL=2 LLAMA_ARG_N_GPU_LAYERS=99 llama-server -m m.gguf");
  CHECK(kv(c) == Settings{{"parallel", "2"}, {"n_gpu_layers", "99"}});
  const auto d = parse("docker run -e LLAMA_ARG_N_PARALLEL=2 ghcr.io/ggml-org/llama.cpp:server -m m.gguf");
  CHECK(kv(d) == Settings{{"parallel", "2"}});
}

TEST_CASE("reader bug: python -m dynamo.trtllm is read with trtllm-serve's flags", "[cmdline]") {
  // Dynamo's TensorRT-LLM worker (components/backends/trtllm, trtllm_utils.py) takes --model-path,
  // --tensor-parallel-size, --free-gpu-memory-fraction, --max-seq-len, --max-batch-size, --extra-engine-args FILE;
  // none but --max-seq-len is in trtllm/1.1.0.flags, so tp and the fraction are lost, and the FILE after
  // --extra-engine-args is taken as a second positional argument (InputError).
  io::EngineCommand c;
  REQUIRE_NOTHROW(
      c = parse("python3 -m dynamo.trtllm --model-path m --tensor-parallel-size 2 --free-gpu-memory-fraction 0.45 "
                "--max-seq-len 8192 --extra-engine-args e.yaml"));
  CHECK(c.engine == "trtllm");
  CHECK(c.model == "m");
  CHECK(kv(c) == Settings{{"tensor_parallel_size", "2"}, {"memory_fraction", "0.45"}, {"max_model_len", "8192"}});
  CHECK(c.unknown.empty());
  CHECK(c.warnings == Words{"--extra-engine-args e.yaml: file not found here; the settings in it are not read"});
}

TEST_CASE("trtllm-serve --config FILE (a spelling newer than 1.1.0) is read as the option YAML", "[cmdline]") {
  // engine-cmdlines.json trtllm-aibrix-qwen3-8b-ctx-server-sed-placeholder-config: `--config /tmp/ctx_config.yaml`.
  // --config is in no trtllm table (1.1.0 has --extra_llm_api_options); it still takes its one value, the file.
  const auto e = entry("trtllm-aibrix-qwen3-8b-ctx-server-sed-placeholder-config");
  io::EngineCommand ctx;
  REQUIRE_NOTHROW(ctx = parse_argv(e));
  CHECK(ctx.model.empty());
  CHECK(unresolved(ctx) == Unresolved{{"MODEL", "model", "model"}});
  // the entry names an absolute path on this machine: the warning holds only while no such file exists here
  if (!std::filesystem::exists("/tmp/ctx_config.yaml"))
    CHECK(has(ctx.warnings, "--config /tmp/ctx_config.yaml: file not found here; the settings in it are not read"));
  else
    WARN("/tmp/ctx_config.yaml exists on this machine: its not-found warning is not checked");
  CHECK(has(ctx.ignored, "--server_role"));
  CHECK(has(ctx.ignored, "--log_level"));
  TempDir dir("trtllm-config");
  dir.write("c.yaml", "kv_cache_config:\n  free_gpu_memory_fraction: 0.6\n");
  CHECK(kv(parse("trtllm-serve serve m --config c.yaml", "", dir.ctx())) == Settings{{"memory_fraction", "0.6"}});
}

TEST_CASE("reader bug: a Windows batch line running a backslashed %DIR% path to llama-server.exe is no entry point after POSIX splitting",
          "[cmdline]") {
  // engine-cmdlines.json llamacpp-windows-batch-percent-vars, raw text: shell_split turns %LLAMA_HOME%\llama-server.exe
  // into %LLAMA_HOME%llama-server.exe, whose name does not start with llama-server: "unsupported entry point 'set'".
  // The argv form (with the backslash) parses.
  io::EngineCommand w;
  REQUIRE_NOTHROW(w = parse(entry("llamacpp-windows-batch-percent-vars")["raw"], "llama.cpp"));
  CHECK(w.engine == "llama.cpp");
  CHECK(kv(w) == Settings{{"ctx_size", "2048"}, {"n_gpu_layers", "20"}});
}

TEST_CASE("reader bug: b5937's -fa switch sets flash_attn to 'true', which is not one of its choices", "[cmdline]") {
  // settings.cpp: flash_attn is a choice of on|off|auto, and CommandSetting.value is "converted to kvplan's units";
  // b5937's -fa (a plain switch: flash attention on) gives "true" (build_deployment maps it to on later)
  const auto old = parse("llama-server -m m -fa", "", version("b5937"));
  REQUIRE(setting(old, "flash_attn"));
  CHECK(setting(old, "flash_attn")->value == "on");
}

TEST_CASE("reader bug: a later unexpanded value does not replace an earlier setting", "[cmdline]") {
  // argparse: the last occurrence wins, so --max-model-len is ${LEN}, unknown; the reader keeps 4096 as a setting
  // and also lists LEN as unresolved
  const auto c = parse("vllm serve m --max-model-len 4096 --max-model-len ${LEN}");
  CHECK(kv(c).empty());
  CHECK(unresolved(c) == Unresolved{{"LEN", "--max-model-len", "max_model_len"}});
}

TEST_CASE("reader bug: warnings misquote -O3 and ignore the value of two-way flags", "[cmdline]") {
  // -O3 is one word (argparse attached value); the warning shows "-O3 3"
  CHECK(
      parse("vllm serve m -O3").warnings ==
      Words{"-O3: changes GPU memory in a way kvplan does not model (sets the compilation and CUDA graph mode (-O0 no "
            "graphs ... -O3): graph memory); ignored"});
  // trtllm.effects: --backend "tensorrt backend: ... kvplan models the pytorch backend" -- yet --backend pytorch warns
  CHECK(parse("trtllm-serve m --backend pytorch").warnings.empty());
  // vllm.effects: --enable-chunked-prefill "off: ..." -- yet turning it on (vLLM V1's default) warns
  CHECK(parse("vllm serve m --enable-chunked-prefill").warnings.empty());
}

TEST_CASE("reader bug: vLLM dotted keys of a modelled JSON flag are dropped silently", "[cmdline]") {
  // --hf-overrides.rope_scaling.factor 4 is --hf-overrides '{"rope_scaling": {"factor": 4}}' (FlexibleArgumentParser);
  // hf_overrides is a modelled setting, but the dotted form is put in `ignored` with no setting and no warning
  const auto c = parse("vllm serve m --hf-overrides.max_position_embeddings 65536");
  CHECK((setting(c, "hf_overrides") != nullptr || !c.warnings.empty()));
}

TEST_CASE("reader bug: settings read from config files lose their file:line:col", "[cmdline]") {
  TempDir dir("config-where");
  // vLLM --config: the origin is "<file>: --max-model-len", not the key's line and column
  const std::string v = dir.write("v.yaml", "tensor-parallel-size: 2\nmax-model-len: 4096\n");
  const auto vc = parse("vllm serve m --config v.yaml", "", dir.ctx());
  REQUIRE(setting(vc, "max_model_len"));
  CHECK(setting(vc, "max_model_len")->where.rfind(v + ":2:", 0) == 0);
  const std::string file = dir.write("t.yaml", "kv_cache_config:\n  free_gpu_memory_fraction: 0.7\n");
  const auto c = parse("trtllm-serve m --extra_llm_api_options t.yaml", "", dir.ctx());
  REQUIRE(setting(c, "memory_fraction"));
  // STYLE: every value keeps file:line:col; the reader looks up the JSON pointer
  // /kv_cache_config.free_gpu_memory_fraction (a dotted key, not /kv_cache_config/free_gpu_memory_fraction) and gets no
  // position
  CHECK(setting(c, "memory_fraction")->where.rfind(file + ":2:", 0) == 0);
}

TEST_CASE("vllm serve MODEL --model OTHER serves the model argument, with a warning", "[cmdline]") {
  // vllm/entrypoints/cli/serve.py ServeSubcommand.cmd: args.model = args.model_tag, whichever order they come in
  for (const char* text : {"vllm serve meta-llama/Llama-3.1-8B-Instruct --model Qwen/Qwen2.5-7B",
                           "vllm serve --model Qwen/Qwen2.5-7B meta-llama/Llama-3.1-8B-Instruct"}) {
    INFO(text);
    const auto c = parse(text);
    CHECK(c.model == "meta-llama/Llama-3.1-8B-Instruct");
    REQUIRE_FALSE(c.warnings.empty());
    CHECK(c.warnings.front().find("the engine serves the model argument") != std::string::npos);
  }
}
