// Profile loading and model/GPU resolution (see profiles.hpp).
#include "kvplan/io/profiles.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>

#include "kvplan/core/suggest.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/files.hpp"
#include "kvplan/io/gguf.hpp"
#include "kvplan/io/hf_config.hpp"
#include "kvplan/io/safetensors.hpp"
#include "kvplan/io/settings.hpp"

namespace kvplan::io {

namespace {

// every key of a GPU profile, in the order the shipped files and the template use
const std::vector<std::string> kGpuKeys = {
    "name", "aliases", "vendor", "architecture", "compute_capability", "device_class", "memory_type",
    "unified_memory", "memory_bytes", "memory_bytes_kind", "memory_source", "cuda_total_bytes", "nvml_total_bytes",
    "datasheet_memory_gb", "ecc_default_on", "ecc_mode", "memory_bandwidth_bytes_per_s", "bf16_dense_tflops",
    "fp16_dense_tflops", "fp8_dense_tflops", "int8_dense_tops", "fp4_dense_tflops", "compute_source", "sm_count",
    "boost_clock_mhz", "l2_bytes", "dies", "interconnect", "interconnect_generation", "interconnect_bytes_per_s", "pcie_bytes_per_s",
    "nvlink_bridge_bytes_per_s", "nvlink_bridge_default", "interconnect_source", "notes"};

const std::vector<std::string> kMemoryKinds = {"cuda_reported", "nvml_reported", "datasheet", "derived",
                                               "metal_working_set", "host_ram"};
const std::vector<std::string> kDeviceClasses = {"datacenter", "workstation", "consumer", "embedded",
                                                 "apple", "cpu", "unified"};
const std::vector<std::string> kEccModes = {"on", "off", "none"};
const std::vector<std::string> kVendors = {"nvidia", "amd", "apple", "intel", "generic"};
const std::vector<std::string> kInterconnects = {"nvlink", "pcie", "xgmi", "infinity-fabric", "ethernet", "none"};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " or " : ", ") + v[i];
  return s;
}

// a string key whose value is one of `allowed`
std::string one_of(const JsonView& v, const std::string& key, const std::vector<std::string>& allowed) {
  std::string x = v.get_string(key);
  if (std::find(allowed.begin(), allowed.end(), x) == allowed.end()) {
    const auto s = closest(x, allowed);
    v.fail(key, "expected " + joined(allowed) + ", got '" + x + "'", s ? "did you mean '" + *s + "'?" : "");
  }
  return x;
}

// bytes per second: a number >= 0 (links are given as e.g. 450000000000)
double link_rate(const JsonView& v, const std::string& key) {
  const double x = v.get_number(key);
  if (!(x >= 0 && x < 1e15)) v.fail(key, "expected a number of bytes per second >= 0");
  return x;
}

constexpr std::int64_t kMaxBytes = std::numeric_limits<std::int64_t>::max();

// ORG/NAME with one slash, neither side empty, no spaces
bool looks_like_hf_id(const std::string& s) {
  const auto slash = s.find('/');
  return slash != std::string::npos && slash > 0 && slash + 1 < s.size() &&
         s.find('/', slash + 1) == std::string::npos && s.find(' ') == std::string::npos;
}

std::optional<double> opt_tflops(const JsonView& v, const std::string& key) {
  auto x = v.opt_number(key);
  if (x && !(*x > 0 && *x < 1e7)) v.fail(key, "expected a positive number of TFLOP/s or null");
  return x;
}

}  // namespace

GpuSpec gpu_from_json(const json& j, const std::string& id, const std::string& label) {
  if (!j.is_object()) throw InputError(label, "expected a JSON object", "see profiles/README-gpus.md");
  JsonView v(j, label);
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(kGpuKeys.begin(), kGpuKeys.end(), it.key()) != kGpuKeys.end()) continue;
    const auto s = closest(it.key(), kGpuKeys);
    v.fail(it.key(), "unknown key", s ? "did you mean '" + *s + "'?" : "see profiles/README-gpus.md");
  }
  // keys added after profiles were first written may be absent (read as null): a profile made from an older
  // template still loads
  static const std::vector<std::string> kLaterKeys = {"boost_clock_mhz", "dies", "nvlink_bridge_bytes_per_s", "nvlink_bridge_default"};
  for (const auto& k : kGpuKeys)
    if (!j.contains(k) && std::find(kLaterKeys.begin(), kLaterKeys.end(), k) == kLaterKeys.end())
      v.fail(k, "missing key", "every GPU profile lists all keys (null where unknown)");
  GpuSpec g;
  g.id = id;
  g.name = v.get_string("name");
  for (auto& a : v.string_list("aliases")) {
    if (gpu_name_key(a).empty()) v.fail("aliases", "expected non-empty names");
    g.aliases.push_back(a);
  }
  g.vendor = one_of(v, "vendor", kVendors);  // the vendor picks kernels and rules: README-gpus.md lists the values
  g.architecture = v.get_string("architecture");
  g.compute_capability = v.get_string("compute_capability");
  g.memory_type = v.get_string("memory_type");
  g.memory_bytes = v.get_int("memory_bytes", 1, kMaxBytes);
  g.memory_bytes_kind = one_of(v, "memory_bytes_kind", kMemoryKinds);
  g.memory_source = v.get_string("memory_source");
  g.cuda_total_bytes = v.opt_int("cuda_total_bytes", 1, kMaxBytes);
  g.nvml_total_bytes = v.opt_int("nvml_total_bytes", 1, kMaxBytes);
  g.datasheet_memory_gb = v.get_number("datasheet_memory_gb");
  if (!(g.datasheet_memory_gb > 0)) v.fail("datasheet_memory_gb", "expected a positive number");
  if (j["ecc_default_on"].is_boolean()) g.ecc_default_on = j["ecc_default_on"].get<bool>();
  else if (!j["ecc_default_on"].is_null()) v.fail("ecc_default_on", "expected true, false or null");
  g.memory_bandwidth_bytes_per_s = v.get_int("memory_bandwidth_bytes_per_s", 1, kMaxBytes);
  g.bf16_dense_tflops = opt_tflops(v, "bf16_dense_tflops");
  g.fp16_dense_tflops = opt_tflops(v, "fp16_dense_tflops");
  g.fp8_dense_tflops = opt_tflops(v, "fp8_dense_tflops");
  g.compute_source = v.get_string("compute_source");
  g.sm_count = v.opt_int("sm_count", 1, 1 << 20);
  g.boost_clock_mhz = v.opt_int("boost_clock_mhz", 1, 100000);
  g.l2_bytes = v.opt_int("l2_bytes", 1, kMaxBytes);
  g.dies = v.opt_int("dies", 1, 64);
  g.notes = v.string_or("notes", "");
  g.device_class = one_of(v, "device_class", kDeviceClasses);
  if (!j["unified_memory"].is_boolean()) v.fail("unified_memory", "expected true or false");
  g.unified_memory = j["unified_memory"].get<bool>();
  g.ecc_mode = one_of(v, "ecc_mode", kEccModes);
  g.int8_dense_tops = opt_tflops(v, "int8_dense_tops");
  g.fp4_dense_tflops = opt_tflops(v, "fp4_dense_tflops");
  g.interconnect = one_of(v, "interconnect", kInterconnects);
  g.interconnect_generation = v.get_string("interconnect_generation");
  g.interconnect_bytes_per_s = link_rate(v, "interconnect_bytes_per_s");
  g.pcie_bytes_per_s = link_rate(v, "pcie_bytes_per_s");
  g.interconnect_source = v.get_string("interconnect_source");
  if (j.contains("nvlink_bridge_bytes_per_s") && !j["nvlink_bridge_bytes_per_s"].is_null()) {
    g.nvlink_bridge_bytes_per_s = link_rate(v, "nvlink_bridge_bytes_per_s");
    if (g.interconnect != "pcie" || !(g.nvlink_bridge_bytes_per_s > 0))
      v.fail("nvlink_bridge_bytes_per_s", "expected a bridge's bytes per second (> 0) on a PCIe card, or null");
  }
  if (j.contains("nvlink_bridge_default") && !j["nvlink_bridge_default"].is_null()) {
    if (!j["nvlink_bridge_default"].is_boolean()) v.fail("nvlink_bridge_default", "expected true, false or null");
    g.nvlink_bridge_default = j["nvlink_bridge_default"].get<bool>();
    if (g.nvlink_bridge_default && g.nvlink_bridge_bytes_per_s <= 0)
      v.fail("nvlink_bridge_default", "true needs nvlink_bridge_bytes_per_s");
  }
  g.nvlink_bridged = g.nvlink_bridge_default;  // a deployment's --nvlink-bridge overrides it
  if (g.interconnect == "none" && g.interconnect_bytes_per_s != 0)
    v.fail("interconnect_bytes_per_s", "expected 0 when interconnect is none");
  if (g.interconnect != "none" && !(g.interconnect_bytes_per_s > 0))
    v.fail("interconnect_bytes_per_s", "expected the link's bytes per second (> 0) for interconnect " + g.interconnect);
  return g;
}

std::string gpu_name_key(const std::string& name) {
  std::string k;
  for (unsigned char c : name) {
    if (c == ' ' || c == '_' || c == '-' || c == '\t') {
      if (!k.empty() && k.back() != '-') k += '-';
    } else {
      k += static_cast<char>(std::tolower(c));
    }
  }
  if (!k.empty() && k.back() == '-') k.pop_back();
  return k;
}

std::string gpu_profile_template() {
  // every key of kGpuKeys, in that order; see profiles/README-gpus.md for each
  nlohmann::ordered_json t;
  t["name"] = "";
  t["aliases"] = json::array();
  t["vendor"] = "nvidia";
  t["architecture"] = "";
  t["compute_capability"] = "";
  t["device_class"] = "";
  t["memory_type"] = "";
  t["unified_memory"] = false;
  t["memory_bytes"] = 0;
  t["memory_bytes_kind"] = "cuda_reported";
  t["memory_source"] = "";
  t["cuda_total_bytes"] = nullptr;
  t["nvml_total_bytes"] = nullptr;
  t["datasheet_memory_gb"] = 0;
  t["ecc_default_on"] = nullptr;
  t["ecc_mode"] = "";
  t["memory_bandwidth_bytes_per_s"] = 0;
  t["bf16_dense_tflops"] = nullptr;
  t["fp16_dense_tflops"] = nullptr;
  t["fp8_dense_tflops"] = nullptr;
  t["int8_dense_tops"] = nullptr;
  t["fp4_dense_tflops"] = nullptr;
  t["compute_source"] = "";
  t["sm_count"] = nullptr;
  t["boost_clock_mhz"] = nullptr;
  t["l2_bytes"] = nullptr;
  t["dies"] = nullptr;
  t["interconnect"] = "";
  t["interconnect_generation"] = "";
  t["interconnect_bytes_per_s"] = 0;
  t["pcie_bytes_per_s"] = 0;
  t["nvlink_bridge_bytes_per_s"] = nullptr;
  t["nvlink_bridge_default"] = nullptr;
  t["interconnect_source"] = "";
  t["notes"] = "";
  return t.dump(2) + "\n";
}

void Profiles::add_model(const std::string& id, const std::string& origin, const std::string& text) const {
  const std::string label = origin == "built-in" ? "profiles/models/" + id + ".json" : origin;
  json j = parse_json_text(text, label);
  if (!j.is_object()) throw InputError(label, "expected a JSON object", "a model profile is a config.json");
  JsonView v(j, label);
  ModelProfile p{id, origin, v.get_string("_source"), {}, j};
  if (j.contains("_hf_ids")) {
    p.hf_ids = v.string_list("_hf_ids");
    for (const auto& h : p.hf_ids)
      if (!looks_like_hf_id(h)) v.fail("_hf_ids", "'" + h + "' is not a Hugging Face repo id", "write ORG/NAME");
  }
  model_text_.erase(id);
  models_[id] = std::move(p);
}

void Profiles::add_gpu(const std::string& id, const std::string& origin, const std::string& text) const {
  const std::string label = origin == "built-in" ? "profiles/gpus/" + id + ".json" : origin;
  GpuSpec g = gpu_from_json(parse_json_text(text, label), id, label);
  gpu_text_.erase(id);
  gpus_[id] = std::move(g);
}

const ModelProfile* Profiles::model_profile(std::string id) const {
  if (const auto it = models_.find(id); it != models_.end()) return &it->second;
  const auto t = model_text_.find(id);
  if (t == model_text_.end()) return nullptr;
  add_model(id, "built-in", t->second);
  return &models_.at(id);
}

const GpuSpec& Profiles::gpu_profile(std::string id) const {
  if (const auto it = gpus_.find(id); it != gpus_.end()) return it->second;
  add_gpu(id, "built-in", gpu_text_.at(id));
  return gpus_.at(id);
}

const std::map<std::string, ModelProfile>& Profiles::models() const {
  while (!model_text_.empty()) model_profile(model_text_.begin()->first);
  return models_;
}

const std::map<std::string, GpuSpec>& Profiles::gpus() const {
  while (!gpu_text_.empty()) gpu_profile(gpu_text_.begin()->first);
  return gpus_;
}

Profiles Profiles::load(const std::optional<std::string>& dir) {
  Profiles p;
  p.sources_.push_back("built-in");
  // built-ins are indexed here and parsed on first use; the index holds their lookup names
  std::map<std::string, std::vector<std::string>> gpu_names;    // id -> aliases
  std::map<std::string, std::vector<std::string>> builtin_hf;   // id -> _hf_ids
  for (const auto& e : embedded_profiles()) {
    if (!e.keys) {  // no build-time index: parsed now
      if (std::string(e.kind) == "models") p.add_model(e.id, "built-in", e.text);
      else {
        p.add_gpu(e.id, "built-in", e.text);
        gpu_names[e.id] = p.gpus_.at(e.id).aliases;
      }
    } else if (std::string(e.kind) == "models") {
      p.model_text_[e.id] = e.text;
      builtin_hf[e.id] = split_list(e.keys, '\n');
    } else {
      p.gpu_text_[e.id] = e.text;
      gpu_names[e.id] = split_list(e.keys, '\n');
    }
  }
  std::set<std::string> user_gpus;  // ids read from --profiles DIR/gpus
  if (dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(*dir, ec))
      throw InputError("--profiles", "'" + *dir + "' is not a directory", "pass a folder holding models/ and gpus/");
    bool any = false;
    for (const char* kind : {"models", "gpus"}) {
      const fs::path sub = fs::path(*dir) / kind;
      if (!fs::is_directory(sub, ec)) continue;
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(sub, ec))
        if (e.path().extension() == ".json") files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        any = true;
        const std::string text = read_text_file(f.string());
        const std::string id = f.stem().string();
        if (std::string(kind) == "models") {
          p.add_model(id, f.string(), text);
          builtin_hf.erase(id);
        } else {
          p.add_gpu(id, f.string(), text);
          gpu_names[id] = p.gpus_.at(id).aliases;
          user_gpus.insert(id);
        }
      }
    }
    if (!any)
      throw InputError("--profiles", "'" + *dir + "' has no models/*.json or gpus/*.json",
                       "put model configs in DIR/models and GPU profiles in DIR/gpus");
    p.sources_.push_back(*dir);
  }
  for (const auto& [id, aliases] : gpu_names) {  // ids in order, so each candidate list is sorted
    p.gpu_ids_.push_back(id);
    std::set<std::string> keys = {gpu_name_key(id)};
    for (const auto& a : aliases) keys.insert(gpu_name_key(a));
    for (const auto& k : keys) p.gpu_alias_[k].push_back(id);
  }
  // a --profiles GPU takes over the names it shares with built-ins (its own nvidia-smi name beside the built-in H100's):
  // the user's profile is the override, not an ambiguity
  for (auto& [k, ids] : p.gpu_alias_) {
    std::vector<std::string> users;
    for (const auto& id : ids)
      if (user_gpus.count(id)) users.push_back(id);
    if (!users.empty() && users.size() < ids.size()) ids = users;
  }
  // an id always names its own profile, even where another profile lists it as an alias
  for (const auto& id : p.gpu_ids_) p.gpu_alias_[gpu_name_key(id)] = {id};
  for (const auto& [id, _] : p.model_text_) p.model_ids_.push_back(id);
  for (const auto& [id, _] : p.models_) p.model_ids_.push_back(id);
  std::sort(p.model_ids_.begin(), p.model_ids_.end());
  // built-ins first, so a --profiles file that claims a repo id takes it over
  for (const auto& id : p.model_ids_) p.model_lower_[ascii_lower(id)] = id;
  for (const auto& [id, hf] : builtin_hf)
    for (const auto& h : hf) p.hf_id_[ascii_lower(h)] = id;
  for (const bool user : {false, true})
    for (const auto& [id, m] : p.models_)
      if ((m.origin != "built-in") == user)
        for (const auto& h : m.hf_ids) p.hf_id_[ascii_lower(h)] = id;
  return p;
}

const GpuSpec& Profiles::gpu(const std::string& name) const { return gpu(name, std::nullopt); }

const GpuSpec& Profiles::gpu(const std::string& name, std::optional<i64> memory_bytes) const {
  const std::string key = gpu_name_key(name);
  auto it = gpu_alias_.find(key);
  // NVIDIA GPU feature discovery labels time-sliced GPUs "<product>-SHARED"
  if (it == gpu_alias_.end() && key.ends_with("-shared")) it = gpu_alias_.find(key.substr(0, key.size() - 7));
  // written without separators ("rtx4090", "7900xtx"): the name that differs only by them
  const auto compact = [](std::string k) {
    std::erase(k, '-');
    return k;
  };
  if (it == gpu_alias_.end())
    for (auto a = gpu_alias_.begin(); a != gpu_alias_.end(); ++a)
      if (compact(a->first) == compact(key)) {
        it = a;
        break;
      }
  // a family name ("a100", "v100"): every profile whose id starts with it and a '-' is a candidate
  std::vector<std::string> family;
  if (it == gpu_alias_.end())
    for (const auto& id : gpu_ids_)
      if (id.size() > key.size() + 1 && id.starts_with(key + "-")) family.push_back(id);
  if (it == gpu_alias_.end() && family.size() < 2) {
    if (family.size() == 1) return gpu_profile(family.front());
    std::vector<std::string> names;
    for (const auto& [a, ids] : gpu_alias_) names.push_back(a);
    const auto s = closest(key, names);
    throw InputError("", "unknown GPU '" + name + "'",
                     s ? "did you mean '" + *s + "'? (kvplan gpus lists them)" : "kvplan gpus lists them");
  }
  const auto& ids = it != gpu_alias_.end() ? it->second : family;
  if (ids.size() == 1) return gpu_profile(ids.front());
  if (memory_bytes) {
    const GpuSpec* best = nullptr;
    auto dist = [&](const GpuSpec& g) {
      return g.memory_bytes > *memory_bytes ? g.memory_bytes - *memory_bytes : *memory_bytes - g.memory_bytes;
    };
    for (const auto& id : ids)
      if (const GpuSpec& g = gpu_profile(id); !best || dist(g) < dist(*best)) best = &g;
    // two of that memory (A100 80GB PCIe and SXM): the memory does not tell them apart, and their bandwidth and
    // interconnect differ
    std::string tied;
    int ties = 0;
    for (const auto& id : ids)
      if (const GpuSpec& g = gpu_profile(id); static_cast<double>(dist(g)) <= static_cast<double>(dist(*best)) + 0.005 * static_cast<double>(*memory_bytes)) {
        tied += (tied.empty() ? "" : ", ") + id;
        ++ties;
      }
    if (ties > 1)
      throw InputError("", "'" + name + "' with that memory is ambiguous: " + tied, "name one (their bandwidth and interconnect differ)");
    return *best;
  }
  std::string list;
  for (const auto& id : ids) {
    char gb[32];
    std::snprintf(gb, sizeof gb, "%g", gpu_profile(id).datasheet_memory_gb);
    list += (list.empty() ? "" : ", ") + id + " (" + gb + " GB)";
  }
  throw InputError("", "'" + name + "' is ambiguous: " + list, "name one, or give --gpu-memory-bytes");
}

GpuSpec Profiles::custom_gpu(i64 memory_bytes, std::optional<i64> bandwidth_bytes_per_s) {
  if (memory_bytes < 1)
    throw InputError("", "GPU memory must be >= 1 byte, got " + std::to_string(memory_bytes));
  if (bandwidth_bytes_per_s && *bandwidth_bytes_per_s < 0)
    throw InputError("", "memory bandwidth must be >= 0 bytes/s, got " + std::to_string(*bandwidth_bytes_per_s));
  GpuSpec g;
  g.id = "custom";
  g.name = "custom GPU";
  g.vendor = "unknown";
  g.architecture = "unknown";
  g.compute_capability = "unknown";
  g.memory_type = "unknown";
  g.memory_bytes = memory_bytes;
  g.memory_bytes_kind = "derived";
  g.memory_source = "given by the user";
  g.datasheet_memory_gb = static_cast<double>(memory_bytes) / 1e9;
  g.memory_bandwidth_bytes_per_s = bandwidth_bytes_per_s.value_or(0);
  g.compute_source = "none (no profile)";
  g.device_class = "unknown";
  g.ecc_mode = "none";
  g.interconnect_source = "none (no profile): links unknown";
  g.notes = g.memory_bandwidth_bytes_per_s == 0
                ? "no profile: memory bandwidth unknown (0), so performance estimates are unknown; no TFLOP/s figures"
                : "no profile: memory bandwidth given by the user; no TFLOP/s figures";
  return g;
}

std::optional<std::string> Profiles::model_for_hf_id(const std::string& repo_id) const {
  const auto it = hf_id_.find(ascii_lower(repo_id));
  if (it == hf_id_.end()) return std::nullopt;
  return it->second;
}

namespace {

// "meta-llama/Meta-Llama-3.1-8B-Instruct" -> "llama-3.1-8b": the name a built-in profile would have.
// llama-server's -hf ORG/REPO:QUANT names a GGUF repository and the quant of its files: the tag and the repository's
// -GGUF suffix are not part of the model's name
std::string profile_name_of(const std::string& repo_id) {
  std::string n = ascii_lower(repo_id.substr(repo_id.find('/') + 1));
  if (const auto colon = n.find(':'); colon != std::string::npos) n.erase(colon);
  if (n.ends_with("-gguf")) n.erase(n.size() - 5);
  for (const char* prefix : {"meta-"}) if (n.rfind(prefix, 0) == 0) n.erase(0, std::string(prefix).size());
  for (const char* suffix : {"-instruct", "-hf", "-chat", "-base"})
    if (n.size() > std::string(suffix).size() && n.ends_with(suffix)) n.erase(n.size() - std::string(suffix).size());
  return n;
}

bool looks_like_repo_id(const std::string& s) {
  const auto slash = s.find('/');
  return slash != std::string::npos && slash > 0 && s.find('/', slash + 1) == std::string::npos && s[0] != '.' &&
         !s.ends_with(".json") && !s.ends_with(".gguf");
}

}  // namespace

namespace {

// Deep merge of `patch` into `target` (objects merge key by key; anything else replaces).
void merge_json(json& target, const json& patch) {
  if (!patch.is_object() || !target.is_object()) {
    target = patch;
    return;
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) merge_json(target[it.key()], it.value());
}

// A ModelOpt checkpoint exported before ModelOpt wrote its quantization_config into config.json keeps it in
// hf_quant_config.json beside it ({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8",
// "kv_cache_quant_algo": "FP8", ...}}); the engines read that file when config.json has none (TensorRT-LLM
// ModelLoader._update_from_hf_quant_config; vLLM and SGLang for quantization "modelopt"). It becomes the
// quantization_config read_quant reads, under "quantization" as the file nests it.
void adopt_hf_quant_config(json& config, const std::string& config_path, std::string* warning) {
  namespace fs = std::filesystem;
  if (!config.is_object() || config.contains("quantization_config")) return;
  if (config.contains("text_config") && config["text_config"].is_object() && config["text_config"].contains("quantization_config")) return;
  std::error_code ec;
  const fs::path beside = fs::path(config_path).parent_path() / "hf_quant_config.json";
  if (!fs::is_regular_file(beside, ec)) return;
  json q = parse_json_file(beside.string());
  if (!q.is_object() || !q.contains("quantization") || !q["quantization"].is_object()) return;
  // the weights as kvplan reads ModelOpt's (FP8, NVFP4, or none: a KV-only export); another algorithm (W4A8_AWQ ...)
  // keeps the model dtype for the weights with a warning, and only the KV cache the file declares is carried
  const json& inner = q["quantization"];
  // the fields read through this file's own path, so that a bad value names hf_quant_config.json, not config.json
  const JsonView view(inner, beside.string(), "/quantization");
  view.string_or("kv_cache_quant_algo", "");
  std::string algo = view.string_or("quant_algo", "");
  for (auto& c : algo) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!algo.empty() && algo != "FP8" && algo != "NVFP4") {
    if (warning) *warning = beside.string() + ": quant_algo " + algo + " is not read; the weights are priced in the model dtype (give --weight-format)";
    json kv_only = {{"quant_method", "modelopt"}, {"quantization", json::object()}};
    if (inner.contains("kv_cache_quant_algo")) kv_only["quantization"]["kv_cache_quant_algo"] = inner["kv_cache_quant_algo"];
    q = std::move(kv_only);
  }
  q["quant_method"] = "modelopt";
  config["quantization_config"] = std::move(q);
}

}  // namespace

ModelSpec Profiles::model(const std::string& arg, std::string* origin, const json* overrides) const {
  auto from_config = [&](json config, const std::string& label, const std::string& id) {
    if (!overrides) return model_from_hf_config(config, label, id);
    merge_json(config, *overrides);
    return model_from_hf_config(config, label + " (with config overrides)", id);
  };
  // a config.json on disk (a snapshot folder's or the Hugging Face cache's): its hf_quant_config.json beside it, then
  // the snapshot's weight files
  auto from_file = [&](const std::string& path) {
    json config = parse_json_file(path);
    std::string warning;
    adopt_hf_quant_config(config, path, &warning);
    ModelSpec m = from_config(std::move(config), path, arg);
    if (!warning.empty()) m.warnings.push_back(warning);
    apply_safetensors_weights(m, path);
    return m;
  };
  const ModelProfile* found = model_profile(arg);
  if (!found)  // ids are case-insensitive: "Llama-3.1-8B" is llama-3.1-8b
    if (const auto lc = model_lower_.find(ascii_lower(arg)); lc != model_lower_.end()) found = model_profile(lc->second);
  if (found) {
    const std::string& id = found->id;
    const ModelProfile& prof = *found;
    if (origin) *origin = prof.origin == "built-in" ? "built-in profile " + id : prof.origin;
    const std::string label = prof.origin == "built-in" ? "profiles/models/" + id + ".json" : prof.origin;
    return from_config(prof.config, label, id);
  }
  std::error_code ec;
  const bool exists = std::filesystem::exists(arg, ec);
  if (exists && !std::filesystem::is_directory(arg, ec) && is_gguf_file(arg)) {
    if (overrides) throw InputError("", "'" + arg + "' is a GGUF file: it has no config.json to override", "drop the config overrides");
    if (origin) *origin = arg;
    return model_from_gguf(arg, arg, nullptr);
  }
  // named .gguf but without the magic (empty, cut short by a download, an HTML error page): not a JSON error
  if (exists && !std::filesystem::is_directory(arg, ec) && ascii_lower(std::filesystem::path(arg).extension().string()) == ".gguf")
    throw InputError(arg, "not a GGUF file (it does not start with the GGUF magic: empty, cut short, or another format)",
                     "download the file again");
  if (!exists && looks_like_repo_id(arg)) {
    // a Hugging Face id: the local cache only, never the network
    std::string looked;
    const std::string cached = find_in_hf_cache(arg.substr(0, arg.find(':')), &looked);  // -hf ORG/REPO:QUANT: the repository
    if (!cached.empty()) {
      if (origin) *origin = cached;
      return from_file(cached);
    }
    if (const auto id = model_for_hf_id(arg)) {
      ModelSpec m = model(*id, origin, overrides);
      m.id = arg;
      const std::string kind = model_profile(*id)->origin == "built-in" ? "built-in profile" : "profile";
      m.warnings.push_back("model '" + arg + "' is not in the local Hugging Face cache; using the " + kind + " '" +
                           *id + "', whose _hf_ids lists it");
      return m;
    }
    const std::string guess = profile_name_of(arg);
    if (std::binary_search(model_ids_.begin(), model_ids_.end(), guess)) {
      ModelSpec m = model(guess, origin, overrides);
      m.id = arg;
      m.warnings.push_back("model '" + arg + "' is not in the local Hugging Face cache (" + looked +
                           "); using the built-in profile '" + guess + "'");
      return m;
    }
    if (const auto colon = arg.find(':'); colon != std::string::npos)  // -hf ORG/REPO:QUANT: a GGUF repository has no config.json
      throw InputError("", "model '" + arg + "' not found in the local Hugging Face cache (looked in " + looked + ")",
                       "download its GGUF (huggingface-cli download " + arg.substr(0, colon) + " --include '*" + arg.substr(colon + 1) +
                           "*.gguf') and give the .gguf path, or a built-in id with --weight-format " + arg.substr(colon + 1));
    throw InputError("", "model '" + arg + "' not found in the local Hugging Face cache (looked in " + looked + ")",
                     "download it (huggingface-cli download " + arg + " config.json, with hf_quant_config.json for an NVIDIA ModelOpt export), or give a config.json path or a built-in id");
  }
  const bool looks_like_path = exists || arg.find('/') != std::string::npos || arg.find(".json") != std::string::npos;
  if (!looks_like_path) {
    const auto s = closest(arg, model_ids_);
    throw InputError("", "unknown model '" + arg + "'",
                     s ? "did you mean '" + *s + "'? (kvplan models lists them; or pass a config.json path)"
                       : "kvplan models lists them; or pass a config.json path or snapshot folder");
  }
  const std::string path = resolve_config_path(arg);
  if (origin) *origin = path;
  return from_file(path);
}

}  // namespace kvplan::io
