// Every JSON output validates against its schema in docs/schema (a small validator for the
// keywords those schemas use: type, const, enum, required, properties, additionalProperties,
// items, minimum, pattern). The outputs come from running the kvplan binary.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

bool type_ok(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "integer") return v.is_number_integer() || v.is_number_unsigned();
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  return false;
}

void validate(const json& v, const json& s, const std::string& path, std::vector<std::string>& errors) {
  if (s.contains("type")) {
    bool ok = false;
    if (s["type"].is_string()) ok = type_ok(v, s["type"]);
    else for (const auto& t : s["type"]) ok = ok || type_ok(v, t);
    if (!ok) { errors.push_back(path + ": expected type " + s["type"].dump() + ", got " + v.dump().substr(0, 60)); return; }
  }
  if (s.contains("const") && v != s["const"]) errors.push_back(path + ": expected " + s["const"].dump());
  if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) errors.push_back(path + ": not in enum: " + v.dump());
  if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>()) errors.push_back(path + ": below minimum");
  if (s.contains("pattern") && v.is_string() && !std::regex_search(v.get<std::string>(), std::regex(s["pattern"].get<std::string>())))
    errors.push_back(path + ": does not match " + s["pattern"].get<std::string>());
  if (v.is_object()) {
    if (s.contains("required"))
      for (const auto& r : s["required"])
        if (!v.contains(r.get<std::string>())) errors.push_back(path + ": missing required '" + r.get<std::string>() + "'");
    const json props = s.value("properties", json::object());
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (props.contains(it.key())) validate(it.value(), props[it.key()], path + "/" + it.key(), errors);
      else if (s.contains("additionalProperties")) {
        const json& ap = s["additionalProperties"];
        if (ap.is_boolean() && !ap.get<bool>()) errors.push_back(path + ": unexpected key '" + it.key() + "'");
        else if (ap.is_object()) validate(it.value(), ap, path + "/" + it.key(), errors);
      }
    }
  }
  if (v.is_array() && s.contains("items"))
    for (size_t i = 0; i < v.size(); ++i) validate(v[i], s["items"], path + "/" + std::to_string(i), errors);
}

json run_json(const std::string& args) {
  const std::string cmd = std::string(KVPLAN_EXE) + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return json::parse(out);
}

json schema(const std::string& name) {
  std::ifstream in(std::string(KVPLAN_SCHEMA_DIR) + "/" + name + ".schema.json");
  REQUIRE(in.good());
  return json::parse(in);
}

void check(const std::string& name, const std::string& args) {
  const json out = run_json(args);
  std::vector<std::string> errors;
  validate(out, schema(name), "", errors);
  INFO(name << ": " << args);
  for (const auto& e : errors) FAIL_CHECK(e);
  CHECK(errors.empty());
}

}  // namespace

TEST_CASE("the validator rejects what the schemas forbid", "[schema]") {
  const json s = schema("kv");
  std::vector<std::string> errors;
  validate(json{{"schema", {{"name", "kvplan.kv"}, {"version", "1.0.0"}}}}, s, "", errors);
  CHECK_FALSE(errors.empty());  // meta, inputs, results missing
  errors.clear();
  validate(json{{"kv_bytes_per_token", -1}}, s["properties"]["results"]["properties"]["kv_bytes_per_token"], "", errors);
  CHECK(errors.size() == 1);
}

TEST_CASE("JSON outputs validate against docs/schema", "[schema]") {
  const std::string data = KVPLAN_TEST_DATA;
  check("kv", "kv llama-3.1-8b --context 32k --format json");
  check("kv", "kv jamba-1.5-mini --context 4k --format json");
  check("kv", "kv deepseek-v2-lite --mla-layout expanded --format json --context 1k");
  check("plan", "plan llama-3.1-70b --gpu h100 --tensor-parallel-size 4 --context 32k --concurrency 16 --format json");
  check("plan", "plan qwen3-30b-a3b --engine llama.cpp --gpu rtx-4090 --ctx-size 32k --format json");
  check("plan", "plan deepseek-v3 --engine sglang --gpu h200 --tp 8 --context 8k --concurrency 64 --format json");
  check("plan", "plan llama-2-7b --engine trtllm --gpu a100-sxm-80gb --context 4k --format json");
  check("plan", "plan deepseek-v3 --engine sglang --gpu h200 --tp 8 --speculative-algorithm NEXTN --context 8k --format json");
  // llama.cpp over three GPUs with a draft model and -ot: results.devices, inputs.draft
  check("plan", "plan llama-3.1-8b --engine llama.cpp --gpu h100 --gpu-count 3 -ngl 99 --model-draft llama-3.2-1b -ctkd q8_0 -ot "
                "blk\\.3\\.ffn_up=CPU --format json");
  // host-resident weights and KV: host_weights, host_kv_read and pcie_weights terms
  check("plan", "plan llama-3.1-8b --engine llama.cpp --gpu h100 -ngl 16 -nkvo --ctx-size 8k --host-bandwidth 60GB/s --format json");
  check("plan", "plan llama-3.1-8b --gpu h100 --cpu-offload-gb 10 --context 4k --format json");
  check("sweep", "sweep llama-3.1-8b --gpu h100,l4 --context 1k,8k --concurrency 1,16 --perf --format json");
  check("fit", "fit llama-3.1-8b --gpu l4 --context 8k --concurrency 4 --format json");
  check("fit", "fit llama-3.1-70b --context 32k --concurrency 16 --fewest-gpus --format json");
  check("fit", "fit llama-3.1-8b --gpu h100 --context 4k --concurrency 16 --slo-tpot-ms 50 --price-per-gpu-hour 2.5 --format json");
  check("fit", "fit llama-3.1-8b --gpu h100,l40s --context 4k --concurrency 16 --slo-tpot-ms 50 --format json");
  check("fit", "fit llama-3.1-8b --gpu h100 --find-max-rate --slo-ttft-ms 500 --requests 200 --prompt-tokens 512 --output-tokens 64 --format json");
  check("check", "check " + data + "/deploy/pass.yaml --format json");
  check("models", "models --format json");
  check("gpus", "gpus --format json");
  check("probe", "probe llama-3.1-8b --backend cpu --threads 2 --seqs 2 --contexts 200 --seconds 0.05 --live-steps 8");
  check("calibration", "calibrate " + data + "/probe-synthetic-h200.json");
  check("log", "log " + data + "/logs/vllm-0.10-llama31-8b-h100.log --format json");
  check("log", "log " + data + "/logs/cases/lc-dscoder-v2-lite-512-f16.log --model deepseek-v2-lite --format json");
  check("simulate", "simulate llama-3.1-8b --gpu h100 --rate 10 --requests 100 --slo-ttft-ms 300 --slo-tpot-ms 40 --format json");
  check("simulate", "simulate llama-3.1-8b --gpu h100 --concurrency 4 --requests 40 --prompt-dist normal --prompt-spread 20 --format json");
  check("simulate", "simulate llama-3.1-8b --gpu h100 --trace " + data + "/traces/mooncake-conversation.jsonl --format json");
  check("simulate", "simulate llama-3.1-70b --gpu l4 --requests 10 --format json");  // does not start: results.starts false
  check("simulate", "simulate llama-3.1-8b --gpu h100 --engine trtllm --capacity-scheduler-policy STATIC_BATCH --rate 5 --requests 20 --format json");
  check("plan", "plan llama-3.1-8b --gpu h100 --engine vllm --kv-cache-dtype fp8 --kv-cache-dtype-skip-layers 0,31 --format json");
}
