// Profile loading and model/GPU resolution (see profiles.hpp).
#include "kvplan/io/profiles.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <set>

#include "kvplan/core/suggest.hpp"
#include "kvplan/io/files.hpp"
#include "kvplan/io/gguf.hpp"
#include "kvplan/io/hf_config.hpp"

namespace kvplan::io {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

const std::vector<std::string> kGpuKeys = {
    "name", "aliases", "vendor", "architecture", "compute_capability", "memory_type", "memory_bytes",
    "memory_bytes_kind", "memory_source", "cuda_total_bytes", "nvml_total_bytes", "datasheet_memory_gb",
    "ecc_default_on", "memory_bandwidth_bytes_per_s", "bf16_dense_tflops", "fp16_dense_tflops",
    "fp8_dense_tflops", "compute_source", "sm_count", "l2_bytes", "notes"};

constexpr std::int64_t kMaxBytes = std::numeric_limits<std::int64_t>::max();

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
  for (const auto& k : kGpuKeys)
    if (!j.contains(k)) v.fail(k, "missing key", "every GPU profile lists all keys (null where unknown)");
  GpuSpec g;
  g.id = id;
  g.name = v.get_string("name");
  for (auto& a : v.string_list("aliases")) g.aliases.push_back(lower(a));
  g.vendor = v.get_string("vendor");
  g.architecture = v.get_string("architecture");
  g.compute_capability = v.get_string("compute_capability");
  g.memory_type = v.get_string("memory_type");
  g.memory_bytes = v.get_int("memory_bytes", 1, kMaxBytes);
  g.memory_bytes_kind = v.get_string("memory_bytes_kind");
  static const std::set<std::string> kinds = {"cuda_reported", "nvml_reported", "datasheet", "derived"};
  if (!kinds.count(g.memory_bytes_kind))
    v.fail("memory_bytes_kind", "expected cuda_reported, nvml_reported, datasheet or derived");
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
  g.l2_bytes = v.opt_int("l2_bytes", 1, kMaxBytes);
  g.notes = v.string_or("notes", "");
  return g;
}

void Profiles::add_model(const std::string& id, const std::string& origin, const std::string& text) {
  const std::string label = origin == "built-in" ? "profiles/models/" + id + ".json" : origin;
  json j = parse_json_text(text, label);
  if (!j.is_object()) throw InputError(label, "expected a JSON object", "a model profile is a config.json");
  JsonView v(j, label);
  ModelProfile p{id, origin, v.get_string("_source"), j};
  models_[id] = std::move(p);
}

void Profiles::add_gpu(const std::string& id, const std::string& origin, const std::string& text) {
  const std::string label = origin == "built-in" ? "profiles/gpus/" + id + ".json" : origin;
  GpuSpec g = gpu_from_json(parse_json_text(text, label), id, label);
  gpus_[id] = g;
}

Profiles Profiles::load(const std::optional<std::string>& dir) {
  Profiles p;
  p.sources_.push_back("built-in");
  for (const auto& e : embedded_profiles()) {
    if (std::string(e.kind) == "models") p.add_model(e.id, "built-in", e.text);
    else p.add_gpu(e.id, "built-in", e.text);
  }
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
        if (std::string(kind) == "models") p.add_model(f.stem().string(), f.string(), text);
        else p.add_gpu(f.stem().string(), f.string(), text);
      }
    }
    if (!any)
      throw InputError("--profiles", "'" + *dir + "' has no models/*.json or gpus/*.json",
                       "put model configs in DIR/models and GPU profiles in DIR/gpus");
    p.sources_.push_back(*dir);
  }
  for (const auto& [id, g] : p.gpus_) {
    p.gpu_alias_[lower(id)] = id;
    for (const auto& a : g.aliases) p.gpu_alias_.emplace(a, id);
  }
  return p;
}

const GpuSpec& Profiles::gpu(const std::string& name) const {
  const auto it = gpu_alias_.find(lower(name));
  if (it != gpu_alias_.end()) return gpus_.at(it->second);
  std::vector<std::string> names;
  for (const auto& [a, id] : gpu_alias_) names.push_back(a);
  const auto s = closest(lower(name), names);
  throw InputError("", "unknown GPU '" + name + "'",
                   s ? "did you mean '" + *s + "'? (kvplan gpus lists them)" : "kvplan gpus lists them");
}

namespace {

// "meta-llama/Meta-Llama-3.1-8B-Instruct" -> "llama-3.1-8b": the name a built-in profile would have.
std::string profile_name_of(const std::string& repo_id) {
  std::string n = lower(repo_id.substr(repo_id.find('/') + 1));
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

ModelSpec Profiles::model(const std::string& arg, std::string* origin) const {
  if (const auto it = models_.find(arg); it != models_.end()) {
    if (origin) *origin = it->second.origin == "built-in" ? "built-in profile " + arg : it->second.origin;
    const std::string label = it->second.origin == "built-in" ? "profiles/models/" + arg + ".json" : it->second.origin;
    return model_from_hf_config(it->second.config, label, arg);
  }
  std::error_code ec;
  const bool exists = std::filesystem::exists(arg, ec);
  if (exists && !std::filesystem::is_directory(arg, ec) && is_gguf_file(arg)) {
    if (origin) *origin = arg;
    return model_from_gguf(arg, arg, nullptr);
  }
  if (!exists && looks_like_repo_id(arg)) {
    // a Hugging Face id: the local cache only, never the network
    std::string looked;
    const std::string cached = find_in_hf_cache(arg, &looked);
    if (!cached.empty()) {
      if (origin) *origin = cached;
      return model_from_hf_config(parse_json_file(cached), cached, arg);
    }
    const std::string guess = profile_name_of(arg);
    if (const auto it = models_.find(guess); it != models_.end()) {
      ModelSpec m = model(guess, origin);
      m.id = arg;
      m.warnings.push_back("model '" + arg + "' is not in the local Hugging Face cache (" + looked +
                           "); using the built-in profile '" + guess + "'");
      return m;
    }
    throw InputError("", "model '" + arg + "' not found in the local Hugging Face cache (looked in " + looked + ")",
                     "download it (huggingface-cli download " + arg + " config.json), or give a config.json path or a built-in id");
  }
  const bool looks_like_path = exists || arg.find('/') != std::string::npos || arg.find(".json") != std::string::npos;
  if (!looks_like_path) {
    std::vector<std::string> ids;
    for (const auto& [id, _] : models_) ids.push_back(id);
    const auto s = closest(arg, ids);
    throw InputError("", "unknown model '" + arg + "'",
                     s ? "did you mean '" + *s + "'? (kvplan models lists them; or pass a config.json path)"
                       : "kvplan models lists them; or pass a config.json path or snapshot folder");
  }
  const std::string path = resolve_config_path(arg);
  if (origin) *origin = path;
  return model_from_hf_config(parse_json_file(path), path, arg);
}

}  // namespace kvplan::io
