// Deployment files: YAML (yaml-cpp) or JSON into DeploymentDoc, with locations for every error.
#include "kvplan/io/deployments.hpp"

#include <algorithm>
#include <cmath>

#include "kvplan/core/simulate.hpp"
#include "kvplan/core/suggest.hpp"
#include "kvplan/io/cmdline.hpp"
#include "kvplan/io/json_read.hpp"
#include "kvplan/io/settings.hpp"
#include "kvplan/io/yaml_doc.hpp"

namespace kvplan::io {

namespace {

constexpr i64 kMaxTokens = 1LL << 40;
constexpr i64 kMaxCount = 1LL << 40;

DeploymentDoc read_one(const DocNode& n, size_t index) {
  DeploymentDoc d;
  d.file = n.doc.file;
  d.where = n.doc.at(n.path);
  if (!n.j.is_object()) throw InputError(d.where, "a deployment must be a mapping, got " + describe_value(n.j), "see docs/deployment-files.md");
  n.only({"name", "model", "gpu", "gpus", "engine", "engine_version", "command", "settings", "variables", "traffic", "requirements"});
  d.name = n.str("name");
  if (n.has("name") && d.name.find_first_not_of(" \t") == std::string::npos)
    n.fail("name", "a blank name", "give the deployment a name, or leave name: out (deployment-N)");
  if (d.name.empty()) d.name = "deployment-" + std::to_string(index + 1);
  d.model = n.str("model");
  d.gpu = n.str("gpu");
  d.gpus = n.count("gpus", 1, 100000);
  d.engine = n.str("engine");
  d.engine_version = n.str("engine_version");
  for (const char* k : {"model", "gpu", "engine", "engine_version"})
    if (n.has(k)) d.field_where[k] = n.at(k);
  if (n.has("command")) {
    const json& c = n.j["command"];
    d.command_where = n.at("command");
    if (c.is_string()) {
      d.command = shell_split(c.get<std::string>(), d.command_where);
    } else if (c.is_array()) {
      for (size_t i = 0; i < c.size(); ++i) {
        if (!c[i].is_string() && !c[i].is_number())
          throw InputError(n.doc.at(n.path + "/command/" + std::to_string(i)), "command items must be strings, got " + describe_value(c[i]));
        d.command.push_back(c[i].is_string() ? c[i].get<std::string>() : c[i].dump(-1, ' ', false, json::error_handler_t::replace));
      }
    } else {
      n.fail("command", "command: expected a string or a list of strings, got " + describe_value(c));
    }
    if (d.command.empty()) n.fail("command", "command: empty", "give the engine's command line");
  }
  if (auto s = n.object("settings")) {
    for (auto it = s->j.begin(); it != s->j.end(); ++it) {
      // a settings-table key (max_model_len, max-model-len) or a kvplan flag without its dashes (gpu-memory-utilization)
      std::string name = it.key();
      while (!name.empty() && name[0] == '-') name.erase(0, 1);
      const SettingDef* def = find_setting(name);
      std::string spelling;
      bool negate = false;
      if (!def) {
        std::string flag = "--" + name;
        std::replace(flag.begin(), flag.end(), '_', '-');
        for (const auto& sd : settings_table())
          for (const auto& sp : sd.kvplan)
            if (sp.name == flag) {
              def = &sd;
              spelling = flag;
              negate = sp.conv == Conv::negate;
            }
      }
      if (!def || def->key == "context" || def->key == "concurrency" || def->key == "prompt_tokens" || def->key == "output_tokens" ||
          def->key == "shared_prefix" || def->key == "model") {
        std::vector<std::string> known;
        for (const auto& sd : settings_table()) {
          std::string k = sd.key;
          std::replace(k.begin(), k.end(), '_', '-');
          known.push_back(k);
          for (const auto& sp : sd.kvplan)
            if (sp.name.rfind("--", 0) == 0) known.push_back(sp.name.substr(2));
        }
        std::string dashed = name;
        std::replace(dashed.begin(), dashed.end(), '_', '-');
        const auto sug = closest(dashed, known);
        if (def && def->key == "model") s->fail(it.key(), "the model is not a setting", "write model: in the deployment");
        if (def) s->fail(it.key(), "'" + it.key() + "' is traffic, not a setting", "put it under traffic:");
        s->fail(it.key(), "unknown setting '" + dashed + "'",
                sug ? "did you mean '" + *sug + "'? (the flags of kvplan plan --help)" : "use the flags of kvplan plan --help");
      }
      if (it.value().is_null()) s->fail(it.key(), it.key() + ": empty value");
      // a list setting (SettingDef::list: vLLM --kv-cache-dtype-skip-layers, llama.cpp --tensor-split, --device, --lora)
      // may be written as a YAML list: its scalars, comma-joined as the flag takes them
      std::string value;
      if (it.value().is_array() && def->list) {
        for (const auto& x : it.value()) {
          const char* what = x.is_boolean() ? "true / false" : x.is_null() ? "an empty item" : x.is_array() ? "a nested list" : x.is_object() ? "a map" : nullptr;
          if (x.is_string() && x.get<std::string>().find_first_not_of(" \t") == std::string::npos) what = "an empty item";
          // the flag's own separator inside one item would silently make it two
          if (x.is_string() && x.get<std::string>().find(',') != std::string::npos) what = "an item holding a comma";
          if (what) s->fail(it.key(), it.key() + ": list items are numbers or names, not " + std::string(what), "write it as [a, b] or a, b");
          value += (value.empty() ? "" : ",") + (x.is_string() ? x.get<std::string>() : x.dump());
        }
        if (value.empty()) s->fail(it.key(), it.key() + ": empty list");
      } else {
        value = s->scalar_text(it.key());
      }
      if (negate) {
        const auto b = parse_bool_text(value);
        if (!b) s->fail(it.key(), it.key() + ": expected true or false, got '" + value + "'");
        value = *b ? "false" : "true";
      }
      if (def->type == SettingType::boolean && spelling.empty()) spelling = "--" + name;
      d.settings.push_back({def->key, value, s->at(it.key()), spelling.empty() ? it.key() : spelling});
    }
  }
  if (auto v = n.object("variables")) {
    d.variables_where = n.at("variables");
    for (auto it = v->j.begin(); it != v->j.end(); ++it) {
      if (it.value().is_null()) v->fail(it.key(), it.key() + ": empty value");
      d.variables[it.key()] = v->scalar_text(it.key());
    }
  }
  if (auto t = n.object("traffic")) {
    t->only({"prompt_tokens", "output_tokens", "context", "concurrency", "shared_prefix", "rate", "requests", "seed", "trace"});
    d.prompt_tokens = t->count("prompt_tokens", 0, kMaxTokens);
    d.output_tokens = t->count("output_tokens", 0, kMaxTokens);
    d.context = t->count("context", 1, kMaxTokens);
    d.concurrency = t->count("concurrency", 1, kMaxCount);
    d.shared_prefix = t->count("shared_prefix", 0, kMaxTokens);
    d.rate = t->number("rate", 1e-9, 1e9);
    d.requests = t->count("requests", 1, kMaxSimRequests);
    // the simulation's bounds, where the file says them (simulate's flags check the same)
    if (d.rate && arrivals_outrun_clock(static_cast<double>(d.requests.value_or(1000)), *d.rate))
      t->fail("rate", std::string("rate: ") + kArrivalSpanProblem, kArrivalSpanFix);
    d.seed = t->count("seed", 0, i64{1} << 62);
    d.trace = t->str("trace");
    for (const char* k : {"prompt_tokens", "output_tokens", "context", "concurrency", "shared_prefix", "rate", "requests", "seed", "trace"})
      if (t->has(k)) d.field_where[std::string("traffic.") + k] = t->at(k);
    // a trace gives its own arrivals and lengths: a rate or lengths beside it would be ignored without a word
    if (!d.trace.empty())
      for (const char* k : {"rate", "prompt_tokens", "output_tokens", "context"})
        if (t->has(k)) t->fail(k, std::string(k) + " given with trace", "the trace gives arrivals and lengths: drop " + std::string(k) + " or the trace");
  }
  if (auto r = n.object("requirements")) {
    d.requirements_where = n.at("requirements");
    r->only({"starts", "min_concurrency", "min_concurrency_tokens", "min_headroom", "max_tpot_ms", "max_ttft_ms", "max_p99_ttft_ms",
             "max_p99_tpot_ms", "min_goodput", "max_preemption_rate"});
    d.starts = r->boolean("starts");
    d.min_concurrency = r->count("min_concurrency", 1, kMaxCount);
    d.min_concurrency_tokens = r->count("min_concurrency_tokens", 1, kMaxTokens);
    d.min_headroom = r->number("min_headroom", 0.0, 1.0);
    d.max_tpot_ms = r->number("max_tpot_ms", 0.0, 1e9);
    d.max_ttft_ms = r->number("max_ttft_ms", 0.0, 1e12);
    d.max_p99_ttft_ms = r->number("max_p99_ttft_ms", 0.0, 1e12);
    d.max_p99_tpot_ms = r->number("max_p99_tpot_ms", 0.0, 1e9);
    d.min_goodput = r->number("min_goodput", 0.0, 1e9);
    d.max_preemption_rate = r->number("max_preemption_rate", 0.0, 1e9);
    // a latency bound of 0 no run meets: refused, as simulate's and fit's --slo-ttft-ms 0 are
    for (const auto& [k, v] : {std::pair{"max_tpot_ms", d.max_tpot_ms}, std::pair{"max_ttft_ms", d.max_ttft_ms},
                               std::pair{"max_p99_ttft_ms", d.max_p99_ttft_ms}, std::pair{"max_p99_tpot_ms", d.max_p99_tpot_ms}})
      if (v == 0.0) r->fail(k, std::string(k) + ": must be > 0 (no run has a latency of 0)", "give the bound in ms");
    for (const char* k : {"max_ttft_ms", "max_tpot_ms", "max_p99_ttft_ms", "max_p99_tpot_ms", "min_goodput", "max_preemption_rate"})
      if (r->has(k)) d.field_where[std::string("requirements.") + k] = r->at(k);
    // a key that only qualifies another checks nothing alone (fit.md refuses options that would do nothing)
    if (d.min_concurrency_tokens && !d.min_concurrency)
      r->fail("min_concurrency_tokens", "min_concurrency_tokens: the length min_concurrency is checked at, and there is no min_concurrency",
              "add min_concurrency, or drop min_concurrency_tokens");
  }
  // rate, requests, seed and trace drive the simulated requirements only: without one they would be ignored
  const bool simulated = d.simulated();
  if (auto t = n.object("traffic"); t && !simulated)
    for (const char* k : {"rate", "requests", "seed", "trace"})
      if (t->has(k))
        t->fail(k, std::string(k) + ": drives the simulated requirements (max_p99_ttft_ms, max_p99_tpot_ms, min_goodput, max_preemption_rate), and there is none",
                "add one, or drop " + std::string(k));
  if (d.model.empty() && d.command.empty())
    throw InputError(d.where, "deployment '" + d.name + "' has neither model nor command", "add model: or command:");
  return d;
}

}  // namespace

std::vector<DeploymentDoc> read_deployment_file(const std::string& path) {
  const auto docs = load_documents(path, false);
  const LocatedDoc& doc = docs.front();
  const DocNode root{doc, doc.root, ""};
  std::vector<DeploymentDoc> out;
  if (doc.root.is_null()) throw InputError(doc.file, "empty document", "list deployments under 'deployments:' (docs/deployment-files.md)");
  if (!doc.root.is_object()) throw InputError(doc.at(""), "expected a mapping with 'deployments:' at the top", "see docs/deployment-files.md");
  if (doc.root.contains("deployments")) {
    root.only({"version", "deployments"});
    (void)root.count("version", 1, 1);  // only format version 1 exists: checks the value when given
    const json& list = doc.root["deployments"];
    if (!list.is_array() || list.empty())
      root.fail("deployments", "deployments: expected a non-empty list, got " + (list.is_array() ? std::string("an empty list") : describe_value(list)),
                "list one or more deployments");
    for (size_t i = 0; i < list.size(); ++i) out.push_back(read_one(DocNode{doc, list[i], "/deployments/" + std::to_string(i)}, i));
  } else {
    out.push_back(read_one(root, 0));  // a single deployment at the top level
  }
  std::map<std::string, std::string> names;
  for (const auto& d : out) {
    if (auto [it, fresh] = names.emplace(d.name, d.where); !fresh)
      throw InputError(d.where, "deployment name '" + d.name + "' is used twice (first at " + it->second + ")", "give each deployment its own name");
  }
  return out;
}

}  // namespace kvplan::io
