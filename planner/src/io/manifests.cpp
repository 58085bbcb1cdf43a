// Kubernetes manifests, Helm values and compose files (see manifests.hpp): finds the containers that
// run a serving engine in workload kinds, LeaderWorkerSet, KServe, KubeAI, the vLLM production-stack
// chart values and compose services, and reads each one's command line, env, GPUs and node labels.
#include "kvplan/io/manifests.hpp"

#include <algorithm>
#include <cctype>

#include "kvplan/core/units.hpp"
#include "kvplan/io/cmdline.hpp"

namespace kvplan::io {

DocKind classify_document(const LocatedDoc& doc) {
  const json& r = doc.root;
  if (!r.is_object()) return DocKind::unknown;
  if (r.contains("apiVersion") && r.contains("kind")) return DocKind::kubernetes;
  if (r.contains("servingEngineSpec")) return DocKind::helm_values;
  if (r.contains("services")) return DocKind::compose;
  if (r.contains("deployments") || r.contains("model") || r.contains("command")) return DocKind::deployment_file;
  return DocKind::unknown;
}

std::string expand_kube_vars(const std::string& text, const std::map<std::string, std::string>& vars) {
  // k8s.io/kubernetes third_party/forked/golang/expansion: Expand.
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$' || i + 1 == text.size()) {
      out += text[i++];
      continue;
    }
    const char next = text[i + 1];
    if (next == '$') {  // escaped operator
      out += '$';
      i += 2;
    } else if (next == '(') {
      const auto close = text.find(')', i + 2);
      if (close == std::string::npos) {  // incomplete reference: kept
        out += "$(";
        i += 2;
        continue;
      }
      const std::string name = text.substr(i + 2, close - i - 2);
      const auto it = vars.find(name);
      out += it != vars.end() ? it->second : "$(" + name + ")";
      i = close + 1;
    } else {
      out += '$';
      out += next;
      i += 2;
    }
  }
  return out;
}

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

std::string engine_from_image(const std::string& image) {
  std::string repo = ascii_lower(image), tag;
  if (const auto at = repo.find('@'); at != std::string::npos) repo.erase(at);
  const auto slash = repo.rfind('/');
  if (const auto colon = repo.rfind(':'); colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    tag = repo.substr(colon + 1);
    repo.erase(colon);
  }
  const std::string last = slash == std::string::npos ? repo : repo.substr(repo.rfind('/') + 1);
  if (contains(repo, "ai-dynamo/") || contains(repo, "dynamo")) {  // nvcr.io/nvidia/ai-dynamo/vllm-runtime ...
    if (contains(last, "vllm")) return "vllm";
    if (contains(last, "sglang")) return "sglang";
    if (contains(last, "trtllm") || contains(last, "tensorrtllm") || contains(last, "tensorrt-llm")) return "trtllm";
  }
  if (contains(last, "vllm")) return "vllm";      // vllm/vllm-openai, lmcache/vllm-openai, rocm/vllm, vllm-tpu
  if (contains(last, "sglang")) return "sglang";  // lmsysorg/sglang
  if (contains(repo, "llama.cpp") || contains(repo, "llama-cpp") || contains(repo, "llamacpp") ||
      contains(repo, "llama-server"))
    return "llama.cpp";  // ghcr.io/ggml-org/llama.cpp:server-cuda
  if (contains(repo, "tensorrt-llm") || contains(repo, "tensorrt_llm") || contains(repo, "trtllm") ||
      (contains(last, "tritonserver") && contains(tag, "trtllm")))
    return "trtllm";  // nvcr.io/nvidia/tensorrt-llm/release, tritonserver:24.08-trtllm-python-py3
  return "";
}

namespace {

// Images of tools that are not serving engines kvplan reads, skipped even when they hold GPUs.
bool other_tool_image(const std::string& image) {
  const std::string i = ascii_lower(image);
  for (const char* t : {"ollama/", "open-webui", "infinity", "faster-whisper", "nginx", "prometheus", "grafana",
                        "busybox", "redis", "dcgm-exporter"})
    if (contains(i, t)) return true;
  return false;
}

bool names_engine(const std::vector<std::string>& argv) {
  for (const auto& w : argv) {
    const std::string l = ascii_lower(w);
    for (const char* e : {"vllm", "sglang", "llama-server", "trtllm-serve", "dynamo"})
      if (contains(l, e)) return true;
  }
  return false;
}

bool is_shell(const std::string& w) {
  const auto b = w.substr(w.rfind('/') == std::string::npos ? 0 : w.rfind('/') + 1);
  return b == "sh" || b == "bash" || b == "dash" || b == "ash" || b == "zsh";
}

bool is_dash_c(const std::string& w) {  // -c, -ec, -xc, -lc ...
  if (w.size() < 2 || w[0] != '-' || w.find('c') == std::string::npos) return false;
  return std::all_of(w.begin() + 1, w.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
}

// `sh -c "vllm serve ..."`: the engine's words are inside the script; give them to the command reader.
void unwrap_shell(ManifestDeployment& m) {
  auto& a = m.argv;
  if (a.size() >= 3 && is_shell(a[0]) && is_dash_c(a[1])) {
    a = shell_split(a[2], m.argv_where);
    m.args_only = false;
  }
}

// Go-template truth as the Helm chart tests values ({{ if .x }}).
bool truthy(const json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) return !v.get<std::string>().empty();
  return !v.empty();
}

// o[key] when it is a string, else "" (for optional fields read without complaint).
std::string text_at(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

// "hf://ORG/NAME" -> "ORG/NAME"; other URLs (ollama://, s3://, pvc://) as written.
std::string hf_id(const std::string& url) { return url.rfind("hf://", 0) == 0 ? url.substr(5) : url; }

// The line of "file:line:col" (0 when there is none), to keep mapping entries in document order.
long line_of(const std::string& where) {
  const auto last = where.rfind(':');
  if (last == std::string::npos || last == 0) return 0;
  const auto prev = where.rfind(':', last - 1);
  if (prev == std::string::npos) return 0;
  try {
    return std::stol(where.substr(prev + 1, last - prev - 1));
  } catch (const std::exception&) {
    return 0;
  }
}

std::string meta_name(const DocNode& root) {
  if (root.j.contains("metadata") && root.j["metadata"].is_object()) {
    const json& m = root.j["metadata"];
    if (m.contains("name") && m["name"].is_string()) return m["name"].get<std::string>();
    if (m.contains("generateName") && m["generateName"].is_string()) return m["generateName"].get<std::string>();
  }
  return "(unnamed)";
}

// A mapping that must be there: `spec`, `template` ... (error naming what is missing).
DocNode need(const DocNode& n, const std::string& key, const std::string& path_text) {
  if (!n.has(key)) throw InputError(n.here(), "missing " + path_text, "add " + key + ":");
  if (!n.j[key].is_object()) n.fail(key, key + ": expected a mapping, got " + describe_value(n.j[key]));
  return n.child(key);
}

std::optional<DocNode> list_of(const DocNode& n, const std::string& key) {
  if (!n.has(key)) return std::nullopt;
  if (!n.j[key].is_array()) n.fail(key, key + ": expected a list, got " + describe_value(n.j[key]));
  return n.child(key);
}

// command / args of a Kubernetes container: a list of strings, as the API requires.
std::vector<std::string> k8s_strings(const DocNode& n, const std::string& key) {
  std::vector<std::string> out;
  const auto l = list_of(n, key);
  if (!l) return out;
  for (std::size_t i = 0; i < l->j.size(); ++i) {
    if (!l->j[i].is_string())
      l->fail(std::to_string(i),
              key + ": expected a list of strings, got " + describe_value(l->j[i]) + " at item " + std::to_string(i),
              "quote the value");
    out.push_back(l->j[i].get<std::string>());
  }
  return out;
}

// A list item as text (string, number or boolean as written); error for lists and mappings.
std::string item_text(const DocNode& list, std::size_t i) {
  const json& v = list.j[i];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) return v.dump();
  list.fail(std::to_string(i), "expected a scalar value at item " + std::to_string(i) + ", got " + describe_value(v));
}

// Compose and Helm lists: scalars as written (YAML numbers become their text).
std::vector<std::string> scalar_list(const DocNode& n, const std::string& key) {
  std::vector<std::string> out;
  const auto l = list_of(n, key);
  if (!l) return out;
  for (std::size_t i = 0; i < l->j.size(); ++i) out.push_back(item_text(*l, i));
  return out;
}

// Kubernetes env: [{name, value | valueFrom}] in order, each value expanded from the ones before it
// (the kubelet's rule); envFrom sources are named, their keys are unknown.
void read_k8s_env(const DocNode& c, ManifestDeployment& m) {
  if (const auto ef = list_of(c, "envFrom"))
    for (const auto& x : ef->j)
      for (const char* ref : {"secretRef", "configMapRef"})
        if (x.is_object() && x.contains(ref) && x[ref].is_object() && x[ref].contains("name") &&
            x[ref]["name"].is_string())
          m.env_from_secret.push_back(std::string(ref) + "/" + x[ref]["name"].get<std::string>());
  const auto env = list_of(c, "env");
  if (!env) return;
  for (std::size_t i = 0; i < env->j.size(); ++i) {
    const DocNode e = env->item(i);
    if (!e.j.is_object())
      env->fail(std::to_string(i), "env: expected a list of {name, value}, got " + describe_value(e.j));
    const std::string name = e.str("name", true);
    if (e.has("valueFrom")) {
      m.env.erase(name);
      m.env_from_secret.push_back(name);
    } else {
      m.env[name] = e.has("value") ? expand_kube_vars(e.scalar_text("value"), m.env) : "";
      m.env_from_secret.erase(std::remove(m.env_from_secret.begin(), m.env_from_secret.end(), name),
                              m.env_from_secret.end());
    }
  }
}

// A GPU quantity: a positive whole number (1 or "1").
i64 gpu_quantity(const DocNode& res, const std::string& key) {
  const json& v = res.j[key];
  if (v.is_number_integer() && v.get<i64>() >= 1 && v.get<i64>() <= (1 << 20)) return v.get<i64>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!s.empty() && s.size() <= 7 &&
        std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) && std::stoll(s) >= 1)
      return std::stoll(s);
  }
  res.fail(key, key + ": expected a positive whole number of GPUs, got " + describe_value(v),
           "write e.g. " + key + ": 1");
}

// resources.limits (else requests): nvidia.com/gpu, amd.com/gpu, nvidia.com/mig-<profile>.
void read_resources(const DocNode& c, ManifestDeployment& m) {
  const auto res = c.object("resources");
  if (!res) return;
  for (const char* section : {"limits", "requests"}) {
    const auto s = res->object(section);
    if (!s) continue;
    for (auto it = s->j.begin(); it != s->j.end(); ++it) {
      const std::string& key = it.key();
      std::string mig;
      if (key.rfind("nvidia.com/mig-", 0) == 0)
        mig = key.substr(15);
      else if (key != "nvidia.com/gpu" && key != "amd.com/gpu")
        continue;
      const i64 n = gpu_quantity(*s, key);
      if (m.gpu_count) {
        m.warnings.push_back(key + ": a second GPU resource; kvplan takes the first (" + std::to_string(*m.gpu_count) +
                             ")");
        continue;
      }
      m.gpu_count = n;
      m.gpu_count_where = s->at(key);
      m.mig_profile = mig;
    }
    if (m.gpu_count) return;  // limits win over requests
  }
}

const std::vector<std::string>& gpu_labels() {
  static const std::vector<std::string> labels = {"cloud.google.com/gke-accelerator", "nvidia.com/gpu.product",
                                                  "karpenter.k8s.aws/instance-gpu-name", "node.kubernetes.io/instance-type"};
  return labels;
}

// nodeSelectorTerms[].matchExpressions[] on a GPU label with operator In: the first value.
void product_from_terms(const LocatedDoc& doc, const json& terms, const std::string& path, std::string& product,
                        std::string& where) {
  if (!terms.is_array()) return;
  for (const auto& l : gpu_labels())
    for (std::size_t t = 0; t < terms.size(); ++t) {
      const json& term = terms[t];
      if (!term.is_object() || !term.contains("matchExpressions") || !term["matchExpressions"].is_array()) continue;
      const json& exprs = term["matchExpressions"];
      for (std::size_t e = 0; e < exprs.size(); ++e) {
        const json& x = exprs[e];
        if (text_at(x, "key") != l || text_at(x, "operator") != "In") continue;
        if (!x.contains("values") || !x["values"].is_array() || x["values"].empty()) continue;
        const json& v = x["values"][0];
        product = v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, json::error_handler_t::replace);
        where = doc.at(path + "/" + std::to_string(t) + "/matchExpressions/" + std::to_string(e) + "/values/0");
        return;
      }
    }
}

// The GPU product from node labels: nodeSelector, then required node affinity (In, first value).
void read_gpu_product(const DocNode& pod, std::string& product, std::string& where) {
  if (const auto ns = pod.object("nodeSelector")) {
    for (const auto& l : gpu_labels())
      if (ns->has(l)) {
        product = ns->scalar_text(l);
        where = ns->at(l);
        return;
      }
  }
  const json& j = pod.j;
  const char* required = "requiredDuringSchedulingIgnoredDuringExecution";
  if (j.contains("affinity") && j["affinity"].is_object() && j["affinity"].contains("nodeAffinity") &&
      j["affinity"]["nodeAffinity"].is_object() && j["affinity"]["nodeAffinity"].contains(required)) {
    const json& req = j["affinity"]["nodeAffinity"][required];
    if (req.is_object() && req.contains("nodeSelectorTerms"))
      product_from_terms(pod.doc, req["nodeSelectorTerms"],
                         pod.path + "/affinity/nodeAffinity/" + required + "/nodeSelectorTerms", product, where);
  }
}

// One Kubernetes container (or KServe predictor.model, which has a container's fields).
ManifestDeployment read_container(const DocNode& c, const std::map<std::string, std::string>& injected = {}) {
  ManifestDeployment m;
  m.where = c.here();
  m.env = injected;
  m.image = c.str("image");
  m.engine_hint = engine_from_image(m.image);
  read_k8s_env(c, m);
  const auto command = k8s_strings(c, "command");
  const auto args = k8s_strings(c, "args");
  for (const auto& w : command) m.argv.push_back(expand_kube_vars(w, m.env));
  for (const auto& w : args) m.argv.push_back(expand_kube_vars(w, m.env));
  m.args_only = command.empty() && !args.empty();
  m.argv_where = c.has("command") ? c.at("command") : c.has("args") ? c.at("args") : m.where;
  unwrap_shell(m);
  read_resources(c, m);
  return m;
}

bool runs_engine(const ManifestDeployment& m) {
  if (!m.engine_hint.empty() || names_engine(m.argv)) return true;
  return m.gpu_count && !other_tool_image(m.image);  // unsure: a GPU container; the command reader decides
}

struct Owner {
  std::string kind, name;
  std::optional<i64> pods_per_group;
  std::map<std::string, std::string> injected_env;  // env a controller adds to every container
};

// containers of a pod spec (or of a KServe predictor / ServingRuntime spec, which inline one).
void read_pod(const DocNode& pod, const Owner& owner, std::vector<ManifestDeployment>& out) {
  if (!pod.has("containers")) throw InputError(pod.here(), "missing containers", "add containers:");
  const auto list = list_of(pod, "containers");
  std::string product, product_where;
  read_gpu_product(pod, product, product_where);
  std::vector<std::pair<std::string, ManifestDeployment>> found;
  for (std::size_t i = 0; i < list->j.size(); ++i) {
    const DocNode c = list->item(i);
    if (!c.j.is_object())
      list->fail(std::to_string(i), "containers: expected a list of mappings, got " + describe_value(c.j));
    ManifestDeployment m = read_container(c, owner.injected_env);
    const std::string cname = c.str("name");
    if (!runs_engine(m)) continue;
    found.emplace_back(cname, std::move(m));
  }
  for (auto& [cname, m] : found) {
    m.kind = owner.kind;
    m.name = owner.kind + "/" + owner.name + (found.size() > 1 ? " (container " + cname + ")" : "");
    m.gpu_product = product;
    m.gpu_product_where = product_where;
    m.pods_per_group = owner.pods_per_group;
    out.push_back(std::move(m));
  }
}

std::string arg_value(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size()) return argv[i + 1];
    if (argv[i].rfind(flag + "=", 0) == 0) return argv[i].substr(flag.size() + 1);
  }
  return "";
}

// KServe InferenceService: spec.predictor.model (a container's fields plus modelFormat, runtime,
// storageUri) or spec.predictor.containers.
void read_inference_service(const DocNode& root, const std::string& name, std::vector<ManifestDeployment>& out) {
  const DocNode spec = need(root, "spec", "spec");
  const DocNode pred = need(spec, "predictor", "spec.predictor");
  const Owner owner{"InferenceService", name, std::nullopt, {}};
  for (const char* key : {"model", "huggingface"}) {  // huggingface: KServe's framework-specific predictor
    const auto model = pred.object(key);
    if (!model) continue;
    ManifestDeployment m = read_container(*model);
    m.kind = owner.kind;
    m.name = owner.kind + "/" + name;
    std::string format = key == std::string("huggingface") ? "huggingface" : "";
    if (const auto mf = model->object("modelFormat")) format = ascii_lower(mf->str("name"));
    const std::string runtime = ascii_lower(model->str("runtime"));
    if (m.engine_hint.empty()) {
      for (const std::string e : {"vllm", "sglang", "trtllm", "llama"})
        if (contains(runtime, e) || contains(format, e)) {
          m.engine_hint = e == "llama" ? "llama.cpp" : e;
          break;
        }
    }
    if (m.engine_hint.empty() && format == "huggingface") {
      m.engine_hint = "vllm";  // KServe's Hugging Face runtime serves text generation with vLLM
      m.warnings.push_back(
          "KServe Hugging Face runtime: served by its vLLM backend; --model_name/--model_id are the runtime's own "
          "flags");
    }
    if (!runs_engine(m)) continue;  // sklearn, xgboost, ... without GPUs
    m.model = hf_id(model->str("storageUri"));
    if (m.model.empty()) m.model = arg_value(m.argv, "--model_id");
    read_gpu_product(pred, m.gpu_product, m.gpu_product_where);
    out.push_back(std::move(m));
  }
  if (pred.has("containers")) read_pod(pred, owner, out);
}

// KubeAI Model (kubeai.org): url, engine, args, env, resourceProfile "nvidia-gpu-l4:1".
void read_kubeai_model(const DocNode& root, const std::string& name, std::vector<ManifestDeployment>& out) {
  const DocNode spec = need(root, "spec", "spec");
  const std::string engine = spec.str("engine");
  const std::string e = ascii_lower(engine);
  if (e == "ollama" || e == "infinity" || e == "fasterwhisper") return;  // engines kvplan does not model
  ManifestDeployment m;
  m.kind = "Model";
  m.name = "Model/" + name;
  m.where = spec.here();
  if (e == "vllm")
    m.engine_hint = "vllm";
  else if (!engine.empty())
    m.warnings.push_back("engine '" + engine + "' is not one KubeAI documents (VLLM, OLlama, Infinity, FasterWhisper)");
  m.image = spec.str("image");
  const std::string url = spec.str("url");
  m.model = hf_id(url);
  if (const auto env = spec.object("env"))
    for (auto it = env->j.begin(); it != env->j.end(); ++it) m.env[it.key()] = env->scalar_text(it.key());
  if (const auto ef = list_of(spec, "envFrom"))
    for (const auto& x : ef->j)
      for (const char* ref : {"secretRef", "configMapRef"})
        if (x.is_object() && x.contains(ref) && x[ref].is_object() && x[ref].contains("name") &&
            x[ref]["name"].is_string())
          m.env_from_secret.push_back(std::string(ref) + "/" + x[ref]["name"].get<std::string>());
  for (const auto& a : k8s_strings(spec, "args")) m.argv.push_back(expand_kube_vars(a, m.env));
  m.args_only = true;
  m.argv_where = spec.has("args") ? spec.at("args") : m.where;
  if (spec.has("resourceProfile")) {
    const std::string rp = spec.str("resourceProfile");
    const auto colon = rp.rfind(':');
    const std::string n = colon == std::string::npos ? "" : rp.substr(colon + 1);
    if (n.empty() || n.size() > 6 || !std::all_of(n.begin(), n.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) ||
        std::stoll(n) < 1)
      spec.fail("resourceProfile", "resourceProfile: expected PROFILE:COUNT with a positive COUNT, got '" + rp + "'",
                "write e.g. nvidia-gpu-l4:1");
    m.gpu_product = rp.substr(0, colon);
    m.gpu_product_where = spec.at("resourceProfile");
    m.gpu_count = std::stoll(n);
    m.gpu_count_where = m.gpu_product_where;
  }
  out.push_back(std::move(m));
}

// LeaderWorkerSet: the leader's pod runs the engine command; size pods per group. The LWS webhook
// adds LWS_GROUP_SIZE and LWS_WORKER_INDEX (0 for the leader) to every container, so the kubelet
// expands $(LWS_GROUP_SIZE) and $(LWS_WORKER_INDEX); LWS_LEADER_ADDRESS (a pod DNS name) stays as written.
void read_lws(const DocNode& root, const std::string& name, std::vector<ManifestDeployment>& out) {
  const DocNode spec = need(root, "spec", "spec");
  const DocNode lwt = need(spec, "leaderWorkerTemplate", "spec.leaderWorkerTemplate");
  const i64 size = lwt.count("size", 1, 1 << 20).value_or(1);
  const Owner owner{
      "LeaderWorkerSet", name, size, {{"LWS_GROUP_SIZE", std::to_string(size)}, {"LWS_WORKER_INDEX", "0"}}};
  const bool leader = lwt.has("leaderTemplate");
  const DocNode tpl =
      need(lwt, leader ? "leaderTemplate" : "workerTemplate", "spec.leaderWorkerTemplate.workerTemplate");
  read_pod(need(tpl, "spec", "spec"), owner, out);
}

void read_resource(const DocNode& root, std::vector<ManifestDeployment>& out, int depth) {
  if (!root.j.is_object() || !root.j.contains("kind") || !root.j["kind"].is_string()) return;
  const std::string kind = root.j["kind"].get<std::string>();
  const std::string api =
      root.j.contains("apiVersion") && root.j["apiVersion"].is_string() ? root.j["apiVersion"].get<std::string>() : "";
  const std::string name = meta_name(root);
  const Owner owner{kind, name, std::nullopt, {}};
  if (kind == "Pod") {
    read_pod(need(root, "spec", "spec"), owner, out);
  } else if (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" || kind == "ReplicaSet" ||
             kind == "Job" || kind == "ReplicationController" || kind == "DeploymentConfig" ||
             (kind == "Rollout" && api.rfind("argoproj.io", 0) == 0) ||
             (kind == "Service" && api.rfind("serving.knative.dev", 0) == 0)) {  // same spec.template.spec
    const DocNode tpl = need(need(root, "spec", "spec"), "template", "spec.template");
    read_pod(need(tpl, "spec", "spec.template.spec"), owner, out);
  } else if (kind == "CronJob") {
    const DocNode jt = need(need(root, "spec", "spec"), "jobTemplate", "spec.jobTemplate");
    const DocNode tpl = need(need(jt, "spec", "spec.jobTemplate.spec"), "template", "spec.jobTemplate.spec.template");
    read_pod(need(tpl, "spec", "spec.jobTemplate.spec.template.spec"), owner, out);
  } else if (kind == "LeaderWorkerSet" && api.rfind("leaderworkerset.x-k8s.io", 0) == 0) {
    read_lws(root, name, out);
  } else if (kind == "InferenceService" && api.rfind("serving.kserve.io", 0) == 0) {
    read_inference_service(root, name, out);
  } else if ((kind == "ServingRuntime" || kind == "ClusterServingRuntime") && api.rfind("serving.kserve.io", 0) == 0) {
    read_pod(need(root, "spec", "spec"), owner, out);
  } else if (kind == "Model" && api.rfind("kubeai.org", 0) == 0) {
    read_kubeai_model(root, name, out);
  } else if (kind == "List" && depth == 0) {  // kubectl get -o yaml
    if (const auto items = list_of(root, "items"))
      for (std::size_t i = 0; i < items->j.size(); ++i) read_resource(items->item(i), out, depth + 1);
  }
}

// ---------------------------------------------------------------------------------------------------
// vLLM production-stack Helm values
// ---------------------------------------------------------------------------------------------------

// The vLLM arguments the chart's helm/templates/deployment-vllm-multi.yaml writes after
// `vllm serve MODEL` for one modelSpec (same flags, same order, same spellings).
void helm_args(const DocNode& spec, const std::string& port, ManifestDeployment& m) {
  auto& a = m.argv;
  a = {"--host", "0.0.0.0", "--port", port};
  if (truthy(spec.j.value("enableLoRA", json()))) a.push_back("--enable-lora");
  if (truthy(spec.j.value("enableTool", json()))) a.push_back("--enable-auto-tool-choice");
  if (truthy(spec.j.value("toolCallParser", json()))) {
    a.push_back("--tool-call-parser");
    a.push_back(spec.scalar_text("toolCallParser"));
  }
  const auto cfg = spec.object("vllmConfig");
  if (!cfg) return;
  m.argv_where = cfg->here();
  const json& c = cfg->j;
  if (c.contains("enableChunkedPrefill"))
    a.push_back(truthy(c["enableChunkedPrefill"]) ? "--enable-chunked-prefill" : "--no-enable-chunked-prefill");
  a.push_back(truthy(c.value("enablePrefixCaching", json())) ? "--enable-prefix-caching"
                                                             : "--no-enable-prefix-caching");
  const std::pair<const char*, const char*> valued[] = {
      {"maxModelLen", "--max-model-len"},
      {"dtype", "--dtype"},
      {"tensorParallelSize", "--tensor-parallel-size"},
      {"pipelineParallelSize", "--pipeline-parallel-size"},  // the chart's Ray (multi-node) template
      {"maxNumSeqs", "--max-num-seqs"},
      {"gpuMemoryUtilization", "--gpu_memory_utilization"},
      {"maxLoras", "--max_loras"},
  };
  for (const auto& [key, flag] : valued)
    if (c.contains(key)) {
      a.push_back(flag);
      a.push_back(cfg->scalar_text(key));
    }
  for (const auto& x : scalar_list(*cfg, "extraArgs")) a.push_back(x);
}

// What the chart appends after vllmConfig: LMCache's --kv-transfer-config and --chat-template.
void helm_tail_args(const DocNode& spec, ManifestDeployment& m) {
  const json& j = spec.j;
  if (j.contains("lmcacheConfig") && j["lmcacheConfig"].is_object() &&
      truthy(j["lmcacheConfig"].value("enabled", json()))) {
    const json& lc = j["lmcacheConfig"];
    const std::string role =
        truthy(lc.value("kvRole", json())) ? spec.child("lmcacheConfig").scalar_text("kvRole") : "kv_both";
    const json& cfg = j.contains("vllmConfig") ? j["vllmConfig"] : json();
    const bool v0 = cfg.is_object() && cfg.contains("v0") &&
                    (cfg["v0"] == "1" || (cfg["v0"].is_number_integer() && cfg["v0"].get<i64>() == 1));
    m.argv.push_back("--kv-transfer-config");
    if (lc.contains("enablePD"))
      m.argv.push_back(R"({"kv_connector":"LMCacheConnectorV1","kv_role":")" + role +
                       R"(","kv_connector_extra_config":{"discard_partial_chunks": false, "lmcache_rpc_port": ")" +
                       text_at(lc, "nixlRole") + R"("}})");
    else if (v0)
      m.argv.push_back(R"({"kv_connector":"LMCacheConnector","kv_role":")" + role + R"("})");
    else
      m.argv.push_back(R"({"kv_connector":"LMCacheConnectorV1","kv_role":")" + role + R"("})");
  }
  if (truthy(j.value("chatTemplate", json()))) {
    m.argv.push_back("--chat-template");
    m.argv.push_back("/templates/" + spec.scalar_text("chatTemplate"));
  }
}

void read_helm_values(const LocatedDoc& doc, std::vector<ManifestDeployment>& out) {
  const DocNode root{doc, doc.root, ""};
  const auto ses = root.object("servingEngineSpec");
  if (!ses) return;
  if (ses->has("enableEngine") && !truthy(ses->j["enableEngine"])) return;
  const auto specs = list_of(*ses, "modelSpec");
  if (!specs) return;
  const std::string port = ses->has("containerPort") ? ses->scalar_text("containerPort") : "8000";
  for (std::size_t i = 0; i < specs->j.size(); ++i) {
    const DocNode s = specs->item(i);
    if (!s.j.is_object())
      specs->fail(std::to_string(i), "modelSpec: expected a list of mappings, got " + describe_value(s.j));
    ManifestDeployment m;
    m.kind = "helm-values";
    m.name = "modelSpec/" + (s.has("name") ? s.scalar_text("name") : std::to_string(i));
    m.where = s.here();
    m.argv_where = m.where;
    const std::string repo = s.str("repository"), tag = s.has("tag") ? s.scalar_text("tag") : "";
    m.image = repo.empty() ? "" : repo + (tag.empty() ? "" : ":" + tag);
    m.engine_hint = "vllm";
    m.args_only = true;
    m.model = s.str("modelURL");
    helm_args(s, port, m);
    helm_tail_args(s, m);
    if (truthy(s.j.value("hf_token", json()))) m.env_from_secret.push_back("HF_TOKEN");
    if (const auto efs = s.object("envFromSecret"); efs && efs->has("name"))
      m.env_from_secret.push_back("secretRef/" + efs->scalar_text("name"));
    if (const auto env = list_of(s, "env")) {
      for (std::size_t e = 0; e < env->j.size(); ++e) {
        const DocNode x = env->item(e);
        if (!x.j.is_object())
          env->fail(std::to_string(e), "env: expected a list of {name, value}, got " + describe_value(x.j));
        const std::string name = x.str("name", true);
        if (x.has("valueFrom"))
          m.env_from_secret.push_back(name);
        else
          m.env[name] = x.has("value") ? x.scalar_text("value") : "";
      }
    }
    if (s.has("resources")) read_resources(s, m);
    if (!m.gpu_count && s.has("requestGPU")) {
      if (const auto n = s.count("requestGPU", 0, 1 << 20); n && *n > 0) {
        m.gpu_count = n;
        m.gpu_count_where = s.at("requestGPU");
        const std::string type = s.str("requestGPUType");
        if (type.rfind("nvidia.com/mig-", 0) == 0) m.mig_profile = type.substr(15);
      }
    }
    if (const auto ray = s.object("raySpec")) {
      // helm/templates/ray-cluster.yaml: a KubeRay cluster of one head and replicaCount workers
      // (EXPECTED_NODES = replicaCount + 1); the head's GPUs come from raySpec.headNode.requestGPU.
      m.pods_per_group = s.count("replicaCount", 0, 1 << 20).value_or(1) + 1;
      if (const auto head = ray->object("headNode"); head && head->has("requestGPU")) {
        m.gpu_count.reset();
        if (const auto n = head->count("requestGPU", 0, 1 << 20); n && *n > 0) {
          m.gpu_count = n;
          m.gpu_count_where = head->at("requestGPU");
        }
      }
      m.warnings.push_back("raySpec: vLLM runs on a Ray cluster of " + std::to_string(*m.pods_per_group) +
                           " pods; kvplan reads the vllmConfig arguments the chart passes to vllm serve");
    }
    if (s.has("nodeSelectorTerms") && !s.has("nodeName")) {
      // The chart writes them under affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.
      const auto terms = list_of(s, "nodeSelectorTerms");
      product_from_terms(doc, terms->j, terms->path, m.gpu_product, m.gpu_product_where);
    }
    if (m.gpu_product.empty())
      read_gpu_product(*ses, m.gpu_product, m.gpu_product_where);  // servingEngineSpec.nodeSelector
    out.push_back(std::move(m));
  }
}

// ---------------------------------------------------------------------------------------------------
// docker compose
// ---------------------------------------------------------------------------------------------------

std::vector<std::string> compose_words(const DocNode& svc, const std::string& key) {
  if (!svc.has(key)) return {};
  if (svc.j[key].is_string()) return shell_split(svc.j[key].get<std::string>(), svc.at(key));
  if (svc.j[key].is_array()) return scalar_list(svc, key);
  svc.fail(key, key + ": expected a string or a list, got " + describe_value(svc.j[key]));
}

// Without an entrypoint the image's entry point runs; a command that starts with a program replaces
// nothing but is usually meant as the whole command line (custom images without ENTRYPOINT).
bool starts_with_program(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  std::string b = argv[0].substr(argv[0].rfind('/') == std::string::npos ? 0 : argv[0].rfind('/') + 1);
  b = ascii_lower(b);
  for (const char* p : {"vllm", "sglang", "llama-server", "server", "trtllm-serve", "python", "python3", "sh", "bash",
                        "dynamo", "env", "exec"})
    if (b == p || (std::string(p) == "python" && b.rfind("python", 0) == 0)) return true;
  return false;
}

// deploy.resources.reservations.devices, gpus:, runtime: nvidia. Returns whether GPUs are given;
// gpu_count stays unset where their number is the host's (count: all, no count, runtime: nvidia).
bool compose_gpus(const DocNode& svc, ManifestDeployment& m) {
  bool any = false, unknown = false;
  i64 total = 0;
  std::string where;
  auto device_list = [&](const DocNode& list) {
    for (std::size_t i = 0; i < list.j.size(); ++i) {
      const DocNode d = list.item(i);
      if (!d.j.is_object())
        list.fail(std::to_string(i), "devices: expected a list of mappings, got " + describe_value(d.j));
      const std::string driver = ascii_lower(d.str("driver"));
      bool gpu = driver == "nvidia" || driver == "amd";
      if (d.has("capabilities") && d.j["capabilities"].is_array())
        for (const auto& c : d.j["capabilities"])
          if (c == "gpu") gpu = true;
      if (!gpu) continue;
      any = true;
      if (where.empty()) where = d.here();
      if (d.has("device_ids")) {
        total += static_cast<i64>(list_of(d, "device_ids")->j.size());
        where = d.at("device_ids");
      } else if (d.has("count") && d.j["count"].is_string() && ascii_lower(d.j["count"].get<std::string>()) == "all") {
        unknown = true;
        m.warnings.push_back("count: all: the number of GPUs is the host's");
      } else if (d.has("count")) {
        total += gpu_quantity(d, "count");
        where = d.at("count");
      } else {
        unknown = true;  // no count and no device_ids: every GPU of the host
        m.warnings.push_back("GPU reservation without count: the number of GPUs is the host's");
      }
    }
  };
  if (svc.has("deploy")) {
    const json& j = svc.j["deploy"];
    if (j.is_object() && j.contains("resources") && j["resources"].is_object() &&
        j["resources"].contains("reservations") && j["resources"]["reservations"].is_object()) {
      const DocNode devs = svc.child("deploy").child("resources").child("reservations");
      if (const auto l = list_of(devs, "devices")) device_list(*l);
    }
  }
  if (svc.has("gpus")) {
    if (svc.j["gpus"].is_array()) {
      device_list(svc.child("gpus"));
    } else {
      any = unknown = true;
      where = svc.at("gpus");
      m.warnings.push_back("gpus: " + svc.scalar_text("gpus") + ": the number of GPUs is the host's");
    }
  }
  if (!any && ascii_lower(svc.str("runtime")) == "nvidia") {
    any = unknown = true;
    where = svc.at("runtime");
    m.warnings.push_back("runtime: nvidia: the number of GPUs is the host's");
  }
  if (any && !unknown && total > 0) m.gpu_count = total;
  m.gpu_count_where = any ? where : "";
  return any;
}

void read_compose(const LocatedDoc& doc, std::vector<ManifestDeployment>& out) {
  const DocNode root{doc, doc.root, ""};
  const auto services = root.object("services");
  if (!services) return;
  std::vector<std::string> names;  // in document order (the JSON tree sorts keys)
  for (auto it = services->j.begin(); it != services->j.end(); ++it) names.push_back(it.key());
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return line_of(services->at(a)) < line_of(services->at(b));
  });
  for (const auto& service : names) {
    const DocNode svc = services->child(service);
    if (!svc.j.is_object()) continue;
    ManifestDeployment m;
    m.kind = "compose";
    m.name = "compose service " + service;
    m.where = svc.here();
    m.image = svc.str("image");
    m.engine_hint = engine_from_image(m.image);
    const auto entry = compose_words(svc, "entrypoint");
    const auto command = compose_words(svc, "command");
    m.argv = entry;
    m.argv.insert(m.argv.end(), command.begin(), command.end());
    m.argv_where = svc.has("entrypoint") ? svc.at("entrypoint") : svc.has("command") ? svc.at("command") : m.where;
    m.args_only = !svc.has("entrypoint") && !command.empty() && !starts_with_program(command);
    unwrap_shell(m);
    if (svc.has("environment")) {
      const json& e = svc.j["environment"];
      if (e.is_array()) {
        for (std::size_t i = 0; i < e.size(); ++i) {
          const std::string kv = item_text(svc.child("environment"), i);
          const auto eq = kv.find('=');
          if (eq == std::string::npos)
            m.env_from_secret.push_back(kv);
          else
            m.env[kv.substr(0, eq)] = kv.substr(eq + 1);
        }
      } else if (e.is_object()) {
        const DocNode env = svc.child("environment");
        for (auto v = e.begin(); v != e.end(); ++v) {
          if (v.value().is_null())
            m.env_from_secret.push_back(v.key());
          else
            m.env[v.key()] = env.scalar_text(v.key());
        }
      } else {
        svc.fail("environment", "environment: expected a list of K=V or a mapping, got " + describe_value(e));
      }
    }
    const bool gpu = compose_gpus(svc, m);
    if (m.engine_hint.empty() && !names_engine(m.argv) && !(gpu && !other_tool_image(m.image))) continue;
    out.push_back(std::move(m));
  }
}

}  // namespace

std::vector<ManifestDeployment> read_manifests(const std::vector<LocatedDoc>& docs) {
  std::vector<ManifestDeployment> out;
  for (const auto& doc : docs) {
    switch (classify_document(doc)) {
      case DocKind::kubernetes:
        read_resource(DocNode{doc, doc.root, ""}, out, 0);
        break;
      case DocKind::helm_values:
        read_helm_values(doc, out);
        break;
      case DocKind::compose:
        read_compose(doc, out);
        break;
      case DocKind::deployment_file:
      case DocKind::unknown:
        break;
    }
  }
  return out;
}

}  // namespace kvplan::io
