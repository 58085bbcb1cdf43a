// Deployment files: YAML (yaml-cpp) or JSON into DeploymentDoc, with locations for every error.
#include "kvplan/io/deployments.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "kvplan/core/suggest.hpp"
#include "kvplan/io/cmdline.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::io {

namespace {

constexpr size_t kMaxNodes = 20000;  // alias bombs expand past this (100 deployments of 50 keys are 5,000)
constexpr int kMaxDepth = 64;

// A parsed document as JSON plus the source location of every JSON path.
struct Doc {
  json root;
  std::map<std::string, std::string> where;  // "/deployments/0/gpu" -> "file:3:5"
  std::string file;
  bool yaml = false;
  std::string at(const std::string& path) const {
    if (auto it = where.find(path); it != where.end()) return it->second;
    if (path.size() > 80) return file + ": " + path.substr(0, 77) + "...";
    return file + ": " + (path.empty() ? "/" : path);
  }
};

json yaml_scalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: always a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const bool neg = s[0] == '-';
  const std::string digits = neg || s[0] == '+' ? s.substr(1) : s;
  if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (digits.size() <= 18) return (neg ? -1 : 1) * std::stoll(digits);
    return s;  // too large: left as text, rejected by the typed reader with its value shown
  }
  try {
    size_t used = 0;
    const double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (const std::exception&) {
  }
  if (s == ".nan" || s == ".NaN") return "NaN";
  if (s == ".inf" || s == ".Inf") return "Infinity";
  return s;
}

void yaml_to_json(const YAML::Node& n, json& out, const std::string& path, Doc& doc, size_t& nodes, int depth) {
  if (++nodes > kMaxNodes)
    throw InputError(doc.file, "more than " + std::to_string(kMaxNodes) + " YAML nodes (an alias bomb?)", "write the deployments out plainly");
  if (depth > kMaxDepth) throw InputError(doc.at(path), "nesting deeper than " + std::to_string(kMaxDepth) + " levels", "flatten the document");
  const auto m = n.Mark();
  doc.where[path] = doc.file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: out = nullptr; return;
    case YAML::NodeType::Scalar: out = yaml_scalar(n); return;
    case YAML::NodeType::Sequence: {
      out = json::array();
      size_t i = 0;
      for (const auto& item : n) {
        json v;
        yaml_to_json(item, v, path + "/" + std::to_string(i++), doc, nodes, depth + 1);
        out.push_back(std::move(v));
      }
      return;
    }
    case YAML::NodeType::Map: {
      out = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) throw InputError(doc.at(path), "mapping keys must be plain names");
        const std::string key = kv.first.Scalar();
        json v;
        yaml_to_json(kv.second, v, path + "/" + key, doc, nodes, depth + 1);
        out[key] = std::move(v);
      }
      return;
    }
  }
}

Doc load_doc(const std::string& path) {
  Doc d;
  d.file = path;
  const std::string text = read_text_file(path, 16LL << 20);
  const bool yaml = path.size() > 5 && (path.ends_with(".yaml") || path.ends_with(".yml"));
  d.yaml = yaml;
  if (!yaml) {
    d.root = parse_json_text(text, path);
    return d;
  }
  try {
    const YAML::Node n = YAML::Load(text);
    size_t nodes = 0;
    yaml_to_json(n, d.root, "", d, nodes, 0);
  } catch (const YAML::Exception& e) {
    throw InputError(path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1),
                     "invalid YAML (" + e.msg + ")", "fix the YAML syntax");
  }
  return d;
}

// Typed access with locations.
struct Node {
  const Doc& doc;
  const json& j;
  std::string path;

  std::string at(const std::string& key) const { return doc.at(path + "/" + key); }
  [[noreturn]] void fail(const std::string& key, const std::string& what, const std::string& fix = {}) const {
    throw InputError(at(key), what, fix);
  }
  bool has(const std::string& key) const { return j.is_object() && j.contains(key) && !j[key].is_null(); }

  void only(const std::vector<std::string>& keys) const {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find(keys.begin(), keys.end(), it.key()) != keys.end()) continue;
      const auto s = closest(it.key(), keys);
      std::string all;
      for (const auto& k : keys) all += (all.empty() ? "" : ", ") + k;
      fail(it.key(), "unknown key '" + it.key() + "'", s ? "did you mean '" + *s + "'?" : "known keys: " + all);
    }
  }
  std::string str(const std::string& key, bool required = false) const {
    if (!has(key)) {
      if (required) throw InputError(doc.at(path), "missing '" + key + "'", "add " + key + ":");
      return {};
    }
    if (!j[key].is_string()) fail(key, key + ": expected a string, got " + describe_value(j[key]));
    return j[key].get<std::string>();
  }
  std::optional<i64> count(const std::string& key, i64 lo, i64 hi) const {
    if (!has(key)) return std::nullopt;
    const json& v = j[key];
    if (!v.is_number_integer() && !v.is_number_unsigned())
      fail(key, key + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + describe_value(v));
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(key, key + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
    const i64 x = v.get<i64>();
    if (x < lo || x > hi)
      fail(key, key + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(x));
    return x;
  }
  std::optional<double> number(const std::string& key, double lo, double hi) const {
    if (!has(key)) return std::nullopt;
    const json& v = j[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      fail(key, key + ": expected a number in [" + json(lo).dump() + ", " + json(hi).dump() + "], got " + describe_value(v));
    const double x = v.get<double>();
    if (x < lo || x > hi) fail(key, key + ": expected a number in [" + json(lo).dump() + ", " + json(hi).dump() + "], got " + v.dump());
    return x;
  }
  std::optional<bool> boolean(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    if (!j[key].is_boolean()) fail(key, key + ": expected true or false, got " + describe_value(j[key]));
    return j[key].get<bool>();
  }
  std::optional<Node> object(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    if (!j[key].is_object()) fail(key, key + ": expected a mapping, got " + describe_value(j[key]));
    return Node{doc, j[key], path + "/" + key};
  }
};

constexpr i64 kMaxTokens = 1LL << 40;
constexpr i64 kMaxCount = 1LL << 40;

std::string scalar_text(const Node& n, const std::string& key) {
  const json& v = n.j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) return v.dump();
  n.fail(key, key + ": expected a scalar value, got " + describe_value(v));
}

DeploymentDoc read_one(const Node& n, size_t index) {
  DeploymentDoc d;
  d.file = n.doc.file;
  d.where = n.doc.at(n.path);
  if (!n.j.is_object()) throw InputError(d.where, "a deployment must be a mapping, got " + describe_value(n.j), "see docs/deployment-files.md");
  n.only({"name", "model", "gpu", "gpus", "engine", "command", "settings", "traffic", "requirements"});
  d.name = n.str("name");
  if (d.name.empty()) d.name = "deployment-" + std::to_string(index + 1);
  d.model = n.str("model");
  d.gpu = n.str("gpu");
  d.gpus = n.count("gpus", 1, 100000);
  d.engine = n.str("engine");
  if (n.has("command")) {
    const json& c = n.j["command"];
    d.command_where = n.at("command");
    if (c.is_string()) {
      d.command = shell_split(c.get<std::string>(), d.command_where);
    } else if (c.is_array()) {
      for (size_t i = 0; i < c.size(); ++i) {
        if (!c[i].is_string() && !c[i].is_number())
          throw InputError(n.doc.at(n.path + "/command/" + std::to_string(i)), "command items must be strings, got " + describe_value(c[i]));
        d.command.push_back(c[i].is_string() ? c[i].get<std::string>() : c[i].dump());
      }
    } else {
      n.fail("command", "command: expected a string or a list of strings, got " + describe_value(c));
    }
    if (d.command.empty()) n.fail("command", "command: empty", "give the engine's command line");
  }
  if (auto s = n.object("settings")) {
    for (auto it = s->j.begin(); it != s->j.end(); ++it) {
      std::string flag = it.key();
      while (!flag.empty() && flag[0] == '-') flag.erase(0, 1);
      std::replace(flag.begin(), flag.end(), '_', '-');
      flag = "--" + flag;
      if (it.value().is_null()) s->fail(it.key(), it.key() + ": empty value");
      d.settings.emplace_back(flag, scalar_text(*s, it.key()));
      d.setting_where[flag] = s->at(it.key());
    }
  }
  if (auto t = n.object("traffic")) {
    t->only({"prompt_tokens", "output_tokens", "context", "concurrency", "shared_prefix"});
    d.prompt_tokens = t->count("prompt_tokens", 0, kMaxTokens);
    d.output_tokens = t->count("output_tokens", 0, kMaxTokens);
    d.context = t->count("context", 1, kMaxTokens);
    d.concurrency = t->count("concurrency", 1, kMaxCount);
    d.shared_prefix = t->count("shared_prefix", 0, kMaxTokens);
  }
  if (auto r = n.object("requirements")) {
    d.requirements_where = n.at("requirements");
    r->only({"starts", "min_concurrency", "min_concurrency_tokens", "min_headroom", "max_tpot_ms", "max_ttft_ms"});
    d.starts = r->boolean("starts");
    d.min_concurrency = r->count("min_concurrency", 1, kMaxCount);
    d.min_concurrency_tokens = r->count("min_concurrency_tokens", 1, kMaxTokens);
    d.min_headroom = r->number("min_headroom", 0.0, 1.0);
    d.max_tpot_ms = r->number("max_tpot_ms", 0.0, 1e9);
    d.max_ttft_ms = r->number("max_ttft_ms", 0.0, 1e12);
  }
  if (d.model.empty() && d.command.empty())
    throw InputError(d.where, "deployment '" + d.name + "' has neither model nor command", "add model: or command:");
  return d;
}

}  // namespace

std::vector<DeploymentDoc> read_deployment_file(const std::string& path) {
  const Doc doc = load_doc(path);
  const Node root{doc, doc.root, ""};
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
    for (size_t i = 0; i < list.size(); ++i) out.push_back(read_one(Node{doc, list[i], "/deployments/" + std::to_string(i)}, i));
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
