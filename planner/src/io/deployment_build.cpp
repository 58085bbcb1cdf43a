// SettingsBag -> DeploymentSpec (see deployment_build.hpp).
#include "kvplan/io/deployment_build.hpp"

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>

#include "kvplan/core/format.hpp"
#include "kvplan/core/speculative.hpp"
#include "kvplan/core/transform.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/core/weights.hpp"
#include "kvplan/io/gguf.hpp"
#include "kvplan/io/hf_config.hpp"
#include "kvplan/io/limits.hpp"
#include "kvplan/io/yaml_doc.hpp"

namespace kvplan::io {

namespace {

const char* engine_label(EngineKind k) {
  switch (k) {
    case EngineKind::vllm: return "vLLM";
    case EngineKind::sglang: return "SGLang";
    case EngineKind::trtllm: return "TensorRT-LLM";
    case EngineKind::llamacpp: return "llama.cpp";
    case EngineKind::generic: return "generic";
  }
  return "?";
}

// A kvplan flag that belongs to other engines: "--mem-fraction-static" given with --engine vllm.
void check_engine_spellings(const SettingsBag& bag, EngineKind kind) {
  for (const auto& [key, v] : bag.values()) {
    if (v.origin.kind != Origin::Kind::flag && v.origin.kind != Origin::Kind::file) continue;
    const SettingDef& d = *find_setting(key);
    for (const auto& s : d.kvplan) {
      if (s.name != v.origin.spelling || s.engines.empty()) continue;
      if (std::find(s.engines.begin(), s.engines.end(), kind) != s.engines.end()) break;
      const std::string mine = kvplan_flag_for(d, kind);
      const bool has_mine = std::any_of(d.kvplan.begin(), d.kvplan.end(), [&](const Spelling& o) {
        return o.name == mine && (o.engines.empty() || std::find(o.engines.begin(), o.engines.end(), kind) != o.engines.end());
      });
      std::string owners;
      for (size_t i = 0; i < s.engines.size(); ++i)
        owners += (i == 0 ? "" : i + 1 == s.engines.size() ? " and " : ", ") + std::string(engine_label(s.engines[i]));
      throw InputError(v.origin.kind == Origin::Kind::flag ? s.name : v.origin.where + ": " + s.name.substr(2),
                       std::string("is not a ") + engine_label(kind) + " setting",
                       has_mine ? "with --engine " + std::string(engine_name(kind)) + " use " + mine
                                : "kvplan reads it for " + owners + " only; drop it");
    }
  }
}

// vLLM's CacheDType also lists fp8_inc (Intel Gaudi's e4m3) and fp8_ds_mla (DeepSeek-V3.2's FlashMLA-sparse record,
// which any fp8 becomes for that model): 1-B e4m3 elements (the record's size: core/deployment.cpp sparse_mla_layout)
bool vllm_fp8_spelling(const std::string& t) { return t == "fp8_inc" || t == "fp8_ds_mla"; }

std::optional<ElemFormat> kv_format(const SettingsBag& bag, const std::string& key) {
  const auto t = bag.text(key);
  if (!t || *t == "auto") return std::nullopt;
  if (vllm_fp8_spelling(*t)) return ElemFormat::fp8_e4m3;
  if (auto f = parse_format(*t)) return *f;
  if (parse_turboquant(*t)) bag.fail(key, "'" + *t + "' is vLLM's TurboQuant K and V pair", "give it as --kv-cache-dtype on vLLM");
  bag.fail(key, "unknown format '" + *t + "'", "use one of " + format_names(key == "kv_cache_dtype"));
}

// vLLM --kv-cache-dtype-skip-layers (CacheConfig.kv_cache_dtype_skip_layers, #33695): layer indices or attention type
// names; "sliding_window" is the one type name vLLM's Attention checks
std::vector<std::string> kv_skip_layers(const SettingsBag& bag, i64 layers) {
  std::vector<std::string> out;
  const auto t = bag.text("kv_cache_dtype_skip_layers");
  if (!t) return out;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    const bool index = std::all_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (word != "sliding_window" && (!index || word.size() > 9 || std::stoll(word) >= layers))
      bag.fail("kv_cache_dtype_skip_layers", "'" + word + "' is neither a layer index (0-" + std::to_string(layers - 1) + ") nor sliding_window",
               "give layer indices and/or sliding_window");
    // vLLM matches str(layer index): a leading zero names no layer
    if (word != "sliding_window" && word.size() > 1 && word[0] == '0')
      bag.fail("kv_cache_dtype_skip_layers", "'" + word + "' names no layer (vLLM compares the index as written)", "write " + std::to_string(std::stoll(word)));
    out.push_back(word);
    word.clear();
  };
  for (char c : *t) {
    if (c == ' ' || c == ',' || c == '\t') flush();
    else word += c;
  }
  flush();
  if (out.empty()) bag.fail("kv_cache_dtype_skip_layers", "is empty", "give layer indices and/or sliding_window, or leave it out");
  return out;
}

ModelSpec load_model(const SettingsBag& bag, const Profiles& profiles, ModelInfo& info) {
  const auto arg = bag.text("model");
  if (!arg || arg->empty()) {
    // an engine command (pasted, or a manifest's container command) that names no model: say where it is
    const SettingValue* engine = bag.get("engine");
    if (engine && engine->origin.kind == Origin::Kind::command)
      throw InputError(engine->origin.where, "the engine command names no model",
                       "give it one (vllm serve MODEL, --model-path, -m FILE), or pass --set model=ID");
    throw InputError("MODEL", "no model given", "name a built-in model (kvplan models), a config.json, a snapshot folder or a GGUF file");
  }
  info.arg = *arg;
  // a model a command or a file names that does not resolve here: the error names where it was written (a path in a
  // manifest or compose file is the container's, read on this machine)
  const SettingValue* given = bag.get("model");
  const auto resolve = [&](const json* patch) {
    try {
      return patch ? profiles.model(*arg, &info.origin, patch) : profiles.model(*arg, &info.origin);
    } catch (const OverflowError&) {
      throw;
    } catch (const InputError& e) {
      if ((e.where() != *arg && !e.where().empty()) || given->origin.kind == Origin::Kind::flag || given->origin.kind == Origin::Kind::set) throw;
      // a path (where: the path) is read on this machine; a Hugging Face id (no where: the problem names it) is looked
      // up in the local cache
      if (e.where().empty())
        throw InputError(given->origin.where, e.problem(),
                         e.fix().empty() ? "give a built-in id or a local path with --set model=ID" : e.fix() + " (with --set model=ID)");
      throw InputError(given->origin.where, "model '" + *arg + "': " + e.problem(),
                       "the path is read on this machine (one inside a container is not): give a local path, a built-in id "
                       "or a Hugging Face id with --set model=ID");
    }
  };
  const auto overrides = bag.text("hf_overrides");
  if (!overrides) return at_origin(bag, EngineKind::vllm, [&] { return resolve(nullptr); });
  json patch;
  try {
    patch = json::parse(*overrides);
  } catch (const json::exception&) {
    bag.fail("hf_overrides", "'" + *overrides + "' is not JSON", "give a JSON object such as '{\"max_position_embeddings\": 65536}'");
  }
  if (!patch.is_object()) bag.fail("hf_overrides", "expected a JSON object, got " + describe_value(patch));
  ModelSpec m = [&] {
    try {
      return resolve(&patch);
    } catch (const OverflowError&) {
      throw;
    } catch (const InputError& e) {
      if (!e.where().empty()) throw;
      throw InputError(bag.get("hf_overrides")->origin.where, e.problem(), e.fix());
    }
  }();
  m.notes.push_back("config overridden by " + bag.get("hf_overrides")->origin.where + ": " + patch.dump(-1, ' ', false, json::error_handler_t::replace));
  return m;
}

void apply_model_options(const SettingsBag& bag, ModelSpec& m, ModelInfo& info) {
  if (const auto l = bag.text("mla_layout")) {
    if (*l == "expanded") expand_mla(m);
    else if (*l != "latent") bag.fail("mla_layout", "unknown layout '" + *l + "'", "use latent or expanded");
    info.mla_layout = *l;
  }
  if (bag.boolean("ignore_windows").value_or(false)) {
    disable_windows(m);
    info.ignore_windows = true;
  }
  if (const auto w = bag.text("weight_format")) {
    at_origin(bag, EngineKind::vllm, [&] {
      apply_weight_format(m, *w, "weight_format");
      return 0;
    });
    info.weight_override = *w;
  } else if (const auto name = bag.text("model"); name && m.quant.gguf_recipe.empty() && name->find('/') != std::string::npos &&
                                                    name->find(':', name->find('/')) != std::string::npos) {
    // llama-server -hf ORG/REPO-GGUF:Q4_K_M planned from a profile (the GGUF is not here to read): its tag is the
    // weight format when it names one
    const std::string tag = name->substr(name->find(':', name->find('/')) + 1);
    try {
      apply_weight_format(m, tag, "model");
      info.weight_override = tag;
      m.warnings.push_back("model '" + *name + "': the weights priced as " + tag + " (its tag), the geometry from the profile");
    } catch (const InputError&) {
      // a tag that is no weight format (a branch, a variant name): the profile's weights stand
    }
  }
}

void apply_calibration(const SettingsBag& bag, DeploymentSpec& d) {
  const auto path = bag.text("calibration");
  if (!path) return;
  // calibrated on a device: efficiency = measured attention bandwidth / the profile's datasheet bandwidth
  const std::string where = bag.get("calibration")->origin.where;
  const auto j = parse_json_file_for(*path, where);
  const JsonView root(j, *path);
  const auto schema = root.object("schema");
  if (!schema || schema->string_or("name", "") != "kvplan.calibration")
    throw InputError(where, "'" + *path + "' is not a kvplan calibration (schema.name kvplan.calibration)", "pass what kvplan calibrate wrote");
  const auto res = root.object("results");
  if (!res) throw InputError(*path, "/results: missing", "pass what kvplan calibrate wrote");
  if (res->string_or("backend", "") != "cuda")
    throw InputError(where, "'" + *path + "' was measured on the " + res->string_or("backend", "?") + " backend, not a GPU",
                     "calibrate with kvplan probe --backend cuda on the GPU you plan for");
  const double bw = res->get_number("attention_bandwidth_bytes_per_s");
  const double t0 = res->get_number("step_overhead_s");
  const std::string measured_on = res->string_or("gpu", "");
  if (!measured_on.empty() && measured_on != d.gpu.id)
    d.model.warnings.push_back("calibration measured on " + measured_on + ", applied to " + d.gpu.id);
  if (d.gpu.memory_bandwidth_bytes_per_s <= 0) throw InputError(where, "the GPU has no bandwidth to calibrate against", "give --gpu-bandwidth");
  const double eff = bw / static_cast<double>(d.gpu.memory_bandwidth_bytes_per_s);
  if (!(eff > 0.05 && eff <= 1.5))
    throw InputError(*path, "/results/attention_bandwidth_bytes_per_s: " + std::to_string(bw) + " is not plausible for " + d.gpu.id, "calibrate on this GPU");
  d.perf.coefficients.kv_eff = std::min(eff, 1.0);  // the probe measures decode attention over the KV cache
  if (!bag.has("step_overhead_us")) d.perf.step_overhead_s = t0;
}

void apply_perf_coefficients(const SettingsBag& bag, DeploymentSpec& d) {
  const auto text = bag.text("perf_coefficients");
  if (!text) return;
  const std::string where = bag.get("perf_coefficients")->origin.where;
  // the value is a JSON object written out ({"frontend_s": 0.02}) or the path of a file holding one
  const auto first = text->find_first_not_of(" \t\r\n");
  const bool inline_json = first != std::string::npos && ((*text)[first] == '{' || (*text)[first] == '[');  // '[': JSON, not a path
  const std::string src = inline_json ? where : *text;
  const auto j = inline_json ? parse_json_text_unique_keys(*text, where) : parse_json_file_for(*text, where);
  if (!j.is_object()) throw InputError(where, "'" + *text + "' is not a JSON object", "write {\"kv_eff\": 0.9, ...}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& f = perf_coefficient_fields();
    const auto hit = std::find_if(f.begin(), f.end(), [&](const PerfCoefficientField& x) { return it.key() == x.name; });
    if (hit == f.end()) throw InputError(src, "/" + it.key() + ": unknown coefficient", "see docs/performance-model.md for the names");
    const double v = it.value().is_number() ? it.value().get<double>() : -1.0;
    if (!(v > 0 || (hit->zero_allowed && v == 0)))
      throw InputError(src, "/" + it.key() + ": expected a number " + (hit->zero_allowed ? ">= 0" : "> 0"),
                       hit->zero_allowed ? "give the coefficient as a number, 0 to leave its term out" : "give the coefficient as a positive number");
    if (hit->exponent && v < 1)
      throw InputError(src, "/" + it.key() + ": " + it.value().dump() + " is below 1",
                       "give an exponent of at least 1 (1 adds the times, a large one takes the largest)");
    if (hit->share && v > 1)
      throw InputError(src, "/" + it.key() + ": " + it.value().dump() + " is more than the whole peak",
                       "give a share of the peak between 0 and 1 (0.8 for 80%)");
    // a finite input whose step comes out infinite (1e308 s a ring step) would print "inf ms": bound each kind
    const std::string name = it.key();
    const bool seconds = name.size() > 2 && name.ends_with("_s") && !name.ends_with("bytes_per_s");
    const double most = seconds ? 1.0 : name.ends_with("bytes_per_s") ? 1e15 : 1e6;
    if (v > most)
      throw InputError(src, "/" + name + ": " + it.value().dump() + " is beyond any " + (seconds ? "latency (at most 1 s)" : "rate or factor kvplan prices"),
                       std::string("give ") + (seconds ? "seconds, e.g. 2e-5 for 20 us" : "a value of its own scale (docs/performance-model.md, Coefficients)"));
    d.perf.coefficients.*(hit->member) = v;
  }
}

// --nvlink-bridge: whether the deployment's cards are joined in bridged pairs (the profile's default otherwise)
void apply_nvlink_bridge(const SettingsBag& bag, GpuSpec& g) {
  const auto given = bag.boolean("nvlink_bridge");
  if (given && *given && g.nvlink_bridge_bytes_per_s <= 0)
    bag.fail("nvlink_bridge", g.id + " has no NVLink bridge in its profile", "leave --nvlink-bridge out for this GPU (or add nvlink_bridge_bytes_per_s to a --profiles copy)");
  g.nvlink_bridged = given.value_or(g.nvlink_bridge_default) && g.nvlink_bridge_bytes_per_s > 0;
}

// --ecc on|off on a GDDR6 / GDDR6X card: ECC on keeps 1/16 of the DRAM for check bits (GDDR has no side-band ECC chips),
// so a profile taken in the other mode moves by the datasheet memory (GiB) / 16. RTX 6000 Ada, ECC off, 51,002,867,712 B - 48 GiB / 16 = 47,781,642,240 B; the L40S (the same AD102
// board with 48 GB, ECC on) prints 47,803,596,800 B. HBM keeps ECC out of band: its capacity does not change.
void apply_ecc(const SettingsBag& bag, GpuSpec& g) {
  const auto ecc = bag.choice("ecc");
  if (!ecc || bag.has("gpu_memory_bytes")) return;  // a total given outright already is the mode's
  if (g.ecc_mode == "none") bag.fail("ecc", g.id + " has no ECC mode to switch", "leave --ecc out for this GPU");
  if (g.memory_type.rfind("GDDR", 0) != 0 || g.ecc_mode == *ecc) return;  // HBM / LPDDR, or the mode described
  if (g.memory_type == "GDDR7") {
    // Blackwell's GDDR7 cards report one total either way: NVML 97,887 MiB on RTX PRO 6000s with ECC on (Server
    // Edition) and off (Max-Q) (profiles/gpus/rtx-pro-6000.json notes)
    g.memory_source = "ECC " + *ecc + ": GDDR7 keeps the same total in either mode; " + g.memory_source;
    g.ecc_mode = *ecc;
    return;
  }
  if (g.datasheet_memory_gb <= 0) bag.fail("ecc", g.id + " has no datasheet memory to take 1/16 of", "give --gpu-memory-bytes");
  const i64 sixteenth = static_cast<i64>(std::llround(g.datasheet_memory_gb * static_cast<double>(1LL << 26)));  // GiB / 16
  g.memory_bytes = *ecc == "on" ? g.memory_bytes - sixteenth : add(g.memory_bytes, sixteenth, "ecc");
  g.memory_source = "ECC " + *ecc + ": the profile's ECC-" + g.ecc_mode + " total " + (*ecc == "on" ? "- " : "+ ") +
                    std::to_string(sixteenth) + " B (datasheet memory / 16); " + g.memory_source;
  g.ecc_mode = *ecc;
}

// A CPU host (device class cpu: --gpu cpu, the EPYC / Xeon profiles, --gpu host) by its memory system. Bandwidth =
// sockets x channels per socket x MT/s x 8 B: a DDR channel is 64 bits wide (DDR5's two 32-bit subchannels make
// one), e.g. 12 x 4800 x 8 = 460.8 GB/s for an EPYC 9004 socket. A profile is one socket: --cpu-sockets alone
// multiplies its bandwidth and RAM. llama.cpp reads every socket's memory only with --numa distribute (threads
// and pages spread over the nodes) or numactl; otherwise, and with isolate, the model's pages sit on the node
// that loaded them and a step reads at one socket's bandwidth (llama.cpp common/arg.cpp, --numa: "attempt
// optimizations that help on some NUMA systems"). Memory = --ram-gb GiB, the whole of it the budget (the OS and
// other processes take their share: give --gpu-memory-bytes with `free -b`'s figure to plan on what is free).
void apply_cpu_host(const SettingsBag& bag, GpuSpec& g) {
  (void)bag.choice("numa");  // checked whatever else is given: a value off its list is an error, not ignored
  const auto sockets = bag.count("cpu_sockets");
  const auto channels = bag.count("memory_channels");
  const auto speed = bag.count("memory_speed");
  const auto ram = bag.count("ram_gb");
  if (!sockets && !channels && !speed && !(ram && g.device_class == "cpu")) return;
  const std::string key = sockets ? "cpu_sockets" : channels ? "memory_channels" : speed ? "memory_speed" : "ram_gb";
  if (g.device_class != "cpu")
    bag.fail(key, "describes a CPU host, not " + g.id, "use --gpu cpu (or a CPU profile: kvplan gpus) for CPU inference");
  if (channels.has_value() != speed.has_value())
    bag.fail(channels ? "memory_channels" : "memory_speed", "a CPU host's bandwidth needs both the channels and their data rate",
             "give --memory-channels N and --memory-speed MT/s (e.g. 12 and 4800)");
  if (channels && bag.has("gpu_bandwidth"))
    bag.fail("memory_channels", "the bandwidth is given twice (--gpu-bandwidth and the memory channels)", "give one of them");
  const i64 n = sockets.value_or(1);
  if (n < 1 || n > 8) bag.fail("cpu_sockets", "expected 1 to 8 sockets, got " + std::to_string(n));
  if (channels && (*channels < 1 || *channels > 32))
    bag.fail("memory_channels", "expected 1 to 32 channels per socket, got " + std::to_string(*channels));
  if (speed && (*speed < 800 || *speed > 17600))
    bag.fail("memory_speed", "expected a DDR data rate in MT/s (800 to 17600, e.g. 5600), got " + std::to_string(*speed));
  const auto numa = bag.choice("numa");
  const bool all_nodes = numa && (*numa == "distribute" || *numa == "numactl");
  // MT/s x 10^6 transfers of 8 B each
  const i64 per_socket = channels ? mul(mul(*channels, *speed, "memory bandwidth"), 8'000'000, "memory bandwidth") : g.memory_bandwidth_bytes_per_s;
  const i64 read_sockets = all_nodes ? n : 1;
  g.memory_bandwidth_bytes_per_s = mul(per_socket, read_sockets, "memory bandwidth");
  std::string basis = channels ? std::to_string(*channels) + " channels x " + std::to_string(*speed) + " MT/s x 8 B" : "the profile's socket";
  basis += all_nodes ? " x " + std::to_string(n) + " socket(s) (--numa " + *numa + ")"
                     : n > 1 ? ", one of " + std::to_string(n) + " sockets (llama.cpp reads the other nodes' memory only with --numa distribute)" : "";
  g.compute_source = "memory bandwidth = " + basis + "; " + g.compute_source;
  if (ram && (*ram < 1 || *ram > 65536)) bag.fail("ram_gb", "expected the host's RAM in GiB (1..65536), got " + std::to_string(*ram));
  const bool given = bag.has("gpu_memory_bytes");  // the memory given outright (what is free) stands
  if (ram && !given) {
    g.memory_bytes = mul(*ram, 1LL << 30, "ram_gb");
    g.memory_source = std::to_string(*ram) + " GiB of installed RAM (--ram-gb)";
  } else if (n > 1 && !given) {
    g.memory_bytes = mul(g.memory_bytes, n, "memory bytes");
    g.memory_source = std::to_string(n) + " sockets x the profile's RAM; " + g.memory_source;
  }
  g.memory_bytes_kind = "host_ram";
}

// Apple silicon: Metal's recommendedMaxWorkingSetSize is what llama.cpp and MLX may allocate. macOS 13-15 give
// 2/3 of the unified memory up to 32 GB and 3/4 above (logs of 16 to 128 GB Macs: 11453.25 MB for 16 GB,
// 28991.03 MB for 36 GB, 103079.22 MB for 128 GB; GB = GiB of RAM); `sudo sysctl iogpu.wired_limit_mb=N`
// makes it N MiB (Metal then reports 112.00 GiB for 114688).
void apply_apple_memory(const SettingsBag& bag, GpuSpec& g) {
  const auto ram = bag.count("ram_gb");
  const auto wired = bag.count("wired_limit_mb");
  if ((!ram && !wired) || (!wired && g.device_class == "cpu")) return;  // a CPU host's RAM: apply_cpu_host
  const std::string key = wired ? "wired_limit_mb" : "ram_gb";
  if (g.device_class != "apple")
    bag.fail(key, wired ? "is macOS's GPU memory limit: it applies to Apple silicon, not " + g.id
                        : "applies to Apple silicon or a CPU host, not " + g.id,
             "use --gpu-memory-bytes for other devices");
  if (ram) {
    if (*ram < 8 || *ram > 1024) bag.fail("ram_gb", "expected the Mac's memory in GB (8..1024), got " + std::to_string(*ram));
    const i64 bytes = mul(*ram, 1LL << 30, "ram_gb");
    g.memory_bytes = *ram <= 32 ? bytes / 3 * 2 : bytes / 4 * 3;
    g.memory_source = "default Metal working set for " + std::to_string(*ram) + " GB (" + (*ram <= 32 ? "2/3" : "3/4") + ", macOS 13-15)";
  }
  if (wired) {
    if (*wired < 1024) bag.fail("wired_limit_mb", "expected MiB (e.g. 114688 for 112 GiB), got " + std::to_string(*wired));
    g.memory_bytes = mul(*wired, 1LL << 20, "wired_limit_mb");
    g.memory_source = "iogpu.wired_limit_mb = " + std::to_string(*wired);
  }
  g.memory_bytes_kind = "metal_working_set";
}

// --gpu-bandwidth in bytes/s (or a rate, 3.35TB/s): from 1 GB/s (below any device that runs an LLM; a value in GB/s
// by mistake) to 10^15
double gpu_bandwidth_of(const SettingsBag& bag) {
  const std::string fix = "give it in bytes/s or as a rate, e.g. 3.35e12 or 3.35TB/s";
  const double bw = *bag.bandwidth("gpu_bandwidth", fix);
  if (!(bw >= 1e9 && bw <= 1e15)) bag.fail("gpu_bandwidth", "must be from 1e9 to 1e15 bytes per second", fix);
  return bw;
}

// --gpu-tflops: the dense bf16 / fp16 tensor rate, from 0.1 TFLOP/s to 10^5 (a figure in FLOP/s by mistake is refused)
void apply_gpu_tflops(const SettingsBag& bag, GpuSpec& g) {
  if (!bag.has("gpu_tflops")) return;
  const double t = *bag.number("gpu_tflops");
  if (!(t >= 0.1 && t <= 1e5)) bag.fail("gpu_tflops", "must be from 0.1 to 100000 TFLOP/s", "give it in TFLOP/s, e.g. 71 for an RTX 3090");
  g.bf16_dense_tflops = t;
  g.fp16_dense_tflops = t;
  g.tflops_given = true;
  char b[64];
  std::snprintf(b, sizeof b, "%g", t);
  const std::string where = bag.get("gpu_tflops")->origin.where;
  g.compute_source = "bf16 / fp16 " + std::string(b) + " TFLOP/s given by " + (where.empty() ? "--gpu-tflops" : where) +
                     (g.compute_source.empty() ? "" : "; the profile: " + g.compute_source);
}

GpuSpec load_gpu(const SettingsBag& bag, const Profiles& profiles) {
  const auto name = bag.text("gpu");
  const bool custom = (name && (*name == "custom" || *name == "CUSTOM")) || (!name && bag.has("gpu_memory_bytes") && bag.has("gpu_bandwidth"));
  if (custom) {
    // a GPU with no profile: its memory, and its bandwidth for the performance estimate
    if (!bag.has("gpu_memory_bytes")) bag.fail("gpu", "a custom GPU needs its memory", "give --gpu-memory-bytes (e.g. 24GiB) and --gpu-bandwidth");
    if (!bag.has("gpu_bandwidth"))
      bag.fail("gpu_memory_bytes", "a custom GPU needs its memory bandwidth for the performance estimate", "give --gpu-bandwidth BYTES_PER_S (e.g. 1e12)");
    GpuSpec g;
    g.id = "custom";
    g.name = "custom GPU";
    g.memory_bytes = *bag.bytes("gpu_memory_bytes");
    g.memory_bytes_kind = "derived";
    g.memory_source = bag.get("gpu_memory_bytes")->origin.where;
    g.memory_bandwidth_bytes_per_s = gpu_bandwidth_of(bag);
    apply_apple_memory(bag, g);  // --ram-gb, the memory channels: refused (their memory and bandwidth are given)
    apply_cpu_host(bag, g);
    apply_gpu_tflops(bag, g);
    return g;
  }
  GpuSpec g;
  try {
    g = profiles.gpu(name.value_or("h100-sxm"), bag.bytes("gpu_memory_bytes"));
  } catch (const InputError& e) {
    // the flag or the file position that named the GPU ("--gpu: unknown GPU 'h10'", "deploy.yaml:4:10: ...")
    if (const auto* v = bag.get("gpu"); v && !v->origin.where.empty()) throw InputError(v->origin.where, e.problem(), e.fix());
    throw;
  }
  if (bag.has("gpu_bandwidth")) g.memory_bandwidth_bytes_per_s = gpu_bandwidth_of(bag);
  apply_apple_memory(bag, g);
  apply_cpu_host(bag, g);
  apply_ecc(bag, g);
  apply_nvlink_bridge(bag, g);
  apply_gpu_tflops(bag, g);
  return g;
}

// The draft model `name` of a speculative method, resolved like the main model. An EAGLE head kvplan has no config
// for is sized from the target's geometry (one decoder layer + fc); a draft LLM must resolve.
ModelSpec resolve_draft(const SettingsBag& bag, const Profiles& profiles, const std::string& key, const std::string& field,
                        const std::string& name, SpecMethod method, const ModelSpec& target) {
  try {
    ModelSpec m = profiles.model(name);
    if (method == SpecMethod::eagle || method == SpecMethod::eagle3) {
      // vLLM load_eagle_model / SGLang EAGLEWorker: the head uses the target's embedding (and, EAGLE-1/2, its lm_head)
      m.has_embedding = false;
      m.has_lm_head = method == SpecMethod::eagle3;
    }
    return m;
  } catch (const OverflowError&) {
    throw;
  } catch (const InputError& e) {
    std::error_code ec;
    const bool on_disk = std::filesystem::exists(name, ec);
    if ((method == SpecMethod::eagle || method == SpecMethod::eagle3) && !on_disk) {
      ModelSpec m = eagle_draft_model(target, method);
      m.id = name;
      m.warnings.push_back("draft '" + name + "' is not a model kvplan knows: sized as one decoder layer of the target's geometry + fc");
      return m;
    }
    bag.fail(key, field + "'" + name + "' is not a model kvplan can read (" + e.problem() + ")",
             "give a built-in model id (kvplan models), a config.json or snapshot folder, or a Hugging Face id kvplan knows");
  }
}

i64 positive_int(const SettingsBag& bag, const std::string& key, const json& j, const char* field) {
  const json& v = j[field];
  if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1024)
    bag.fail(key, std::string("/") + field + ": expected an integer 1..1024, got " + describe_value(v));
  return v.get<i64>();
}

// Speculative decoding: vLLM --speculative-config (SpeculativeConfig, vllm/config/speculative.py), TensorRT-LLM
// speculative_config (llmapi/llm_args.py DecodingBaseConfig subclasses by decoding_type), SGLang --speculative-*
// (server_args.py). Fills d.engine.spec and d.draft.
void apply_speculative(const SettingsBag& bag, const Profiles& profiles, DeploymentSpec& d) {
  SpeculativeSettings& sp = d.engine.spec;
  std::string key, draft_name, field = "/model: ";
  const bool shortcut = bag.has("spec_method") || bag.has("spec_model") || bag.has("spec_tokens");
  if (const auto text = shortcut && !bag.has("speculative_config") ? std::optional<std::string>("{}") : bag.text("speculative_config")) {
    key = bag.has("speculative_config") ? "speculative_config" : bag.has("spec_method") ? "spec_method" : bag.has("spec_model") ? "spec_model" : "spec_tokens";
    json j;
    try {
      j = json::parse(*text);
    } catch (const json::exception&) {
      bag.fail(key, "'" + *text + "' is not JSON", "give a JSON object such as '{\"method\": \"eagle\", \"model\": \"MODEL\", \"num_speculative_tokens\": 3}'");
    }
    if (!j.is_object()) bag.fail(key, "expected a JSON object, got " + describe_value(j), "give a JSON object such as '{\"method\": \"ngram\", \"num_speculative_tokens\": 4}'");
    // vLLM --spec-method / --spec-model / --spec-tokens set those keys of the config
    if (const auto m = bag.text("spec_method")) j["method"] = *m;
    if (const auto m = bag.text("spec_model")) j["model"] = *m;
    if (const auto n = bag.count("spec_tokens")) j["num_speculative_tokens"] = *n;
    if (j.contains("decoding_type")) {  // TensorRT-LLM
      const std::string t = j["decoding_type"].is_string() ? ascii_lower(j["decoding_type"].get<std::string>()) : "";
      if (t == "mtp") sp.method = SpecMethod::mtp;
      else if (t == "eagle") sp.method = SpecMethod::eagle;
      else if (t == "eagle3") sp.method = SpecMethod::eagle3;
      else if (t == "ngram") sp.method = SpecMethod::ngram;
      else if (t == "drafttarget") sp.method = SpecMethod::draft_model;
      else bag.fail(key, "/decoding_type: " + describe_value(j["decoding_type"]) + " is not a decoding type kvplan models", "use MTP, Eagle, Eagle3, NGram or DraftTarget");
      if (j.contains("num_nextn_predict_layers")) sp.num_tokens = positive_int(bag, key, j, "num_nextn_predict_layers");
      if (j.contains("max_draft_len")) sp.num_tokens = positive_int(bag, key, j, "max_draft_len");
      for (const char* k : {"speculative_model_dir", "speculative_model"})
        if (j.contains(k)) {
          if (!j[k].is_string()) bag.fail(key, std::string("/") + k + ": expected a model path or id, got " + describe_value(j[k]));
          draft_name = j[k].get<std::string>();
          field = std::string("/") + k + ": ";
        }
    } else {  // vLLM
      if (j.contains("model") && !j["model"].is_null()) {
        if (!j["model"].is_string()) bag.fail(key, "/model: expected a model id or path, got " + describe_value(j["model"]));
        draft_name = j["model"].get<std::string>();
      }
      std::string method = j.contains("method") && !j["method"].is_null() ? (j["method"].is_string() ? ascii_lower(j["method"].get<std::string>()) : "?") : "";
      if (method.empty()) {  // SpeculativeConfig.__post_init__: the method from the model's name
        const std::string n = ascii_lower(draft_name);
        if (n.empty()) bag.fail(key, "/method: missing, and no draft model to infer it from", "give \"method\": ngram, eagle, eagle3, mtp or draft_model");
        method = n == "[ngram]" ? "ngram" : n.find("eagle3") != std::string::npos ? "eagle3" : n.find("eagle") != std::string::npos ? "eagle" : "draft_model";
      }
      if (method == "ngram" || method == "ngram_gpu" || method == "suffix") sp.method = SpecMethod::ngram;
      else if (method == "eagle") sp.method = SpecMethod::eagle;
      else if (method == "eagle3") sp.method = SpecMethod::eagle3;
      else if (method == "draft_model") sp.method = SpecMethod::draft_model;
      else if (method == "mtp" || (method.size() > 4 && method.compare(method.size() - 4, 4, "_mtp") == 0)) sp.method = SpecMethod::mtp;
      else bag.fail(key, "/method: " + describe_value(j["method"]) + " is not a method kvplan models", "use draft_model, eagle, eagle3, mtp or ngram");
      if (j.contains("num_speculative_tokens") && !j["num_speculative_tokens"].is_null()) sp.num_tokens = positive_int(bag, key, j, "num_speculative_tokens");
      if (j.contains("draft_tensor_parallel_size") && !j["draft_tensor_parallel_size"].is_null()) {
        sp.draft_tp = positive_int(bag, key, j, "draft_tensor_parallel_size");
        // SpeculativeConfig._verify_and_get_draft_tp: 1 or the target's tensor-parallel size
        if (sp.draft_tp != 1 && sp.draft_tp != d.parallel.tp)
          bag.fail(key, "/draft_tensor_parallel_size: " + std::to_string(sp.draft_tp) + " must be 1 or the tensor-parallel size " + std::to_string(d.parallel.tp),
                   "give 1 or " + std::to_string(d.parallel.tp));
        if (sp.draft_tp == d.parallel.tp) sp.draft_tp = 0;  // "the target's": layout searches that change TP keep it equal
      }
      if (sp.num_tokens == 0 && sp.method != SpecMethod::mtp)
        bag.fail(key, "/num_speculative_tokens: missing", "give the number of tokens to propose per step, e.g. \"num_speculative_tokens\": 3");
    }
    if (sp.method == SpecMethod::mtp && sp.num_tokens == 0) sp.num_tokens = d.model.mtp_layers;  // vLLM: n_predict
  }
  if (const auto alg = bag.text("speculative_algorithm")) {
    if (!key.empty()) bag.fail("speculative_algorithm", "give either --speculative-config or SGLang's --speculative-algorithm, not both");
    key = "speculative_algorithm";
    const std::string a = ascii_lower(*alg);
    if (a == "eagle") sp.method = SpecMethod::eagle;
    else if (a == "eagle3") sp.method = SpecMethod::eagle3;
    else if (a == "nextn" || a == "mtp") sp.method = SpecMethod::mtp;  // server_args: NEXTN runs as EAGLE over the nextn layers
    else if (a == "standalone") sp.method = SpecMethod::draft_model;
    else if (a == "ngram") sp.method = SpecMethod::ngram;
    else bag.fail(key, "unknown speculative algorithm '" + *alg + "'", "use EAGLE, EAGLE3, NEXTN, STANDALONE or NGRAM");
    // auto_choose_speculative_params: (steps, topk, draft tokens) = (3, 1, 4) for DeepSeek V2/V3, else (5, 4, 8);
    // with topk 1 the draft tokens become steps + 1
    const bool deepseek = d.model.architecture == "DeepseekV3ForCausalLM" || d.model.architecture == "DeepseekV2ForCausalLM";
    if (sp.method != SpecMethod::ngram) {
      sp.num_steps = bag.count("speculative_num_steps").value_or(deepseek ? 3 : 5);
      sp.topk = bag.count("speculative_eagle_topk").value_or(deepseek ? 1 : 4);
      sp.num_tokens = bag.count("speculative_num_draft_tokens").value_or(deepseek ? 4 : 8);
      if (sp.topk == 1 && sp.num_tokens != sp.num_steps + 1) sp.num_tokens = sp.num_steps + 1;
    } else {
      sp.num_steps = bag.count("speculative_num_steps").value_or(0);
      sp.topk = bag.count("speculative_eagle_topk").value_or(0);
      sp.num_tokens = bag.count("speculative_num_draft_tokens").value_or(0);
    }
    for (const char* k : {"speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens"})
      if (bag.count(k).value_or(1) < 1) bag.fail(k, "must be >= 1");
    if (const auto p = bag.text("speculative_draft_model_path")) {
      draft_name = *p;
      key = "speculative_draft_model_path";
      field = "";
    } else if (sp.method == SpecMethod::draft_model) {
      bag.fail("speculative_algorithm", "STANDALONE needs a draft model", "give --speculative-draft-model-path MODEL");
    }
  } else {
    for (const char* k : {"speculative_draft_model_path", "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens"})
      if (bag.has(k)) bag.fail(k, "has no effect without --speculative-algorithm", "give --speculative-algorithm EAGLE, EAGLE3, NEXTN, STANDALONE or NGRAM");
  }
  if (!sp.on()) return;
  switch (sp.method) {
    case SpecMethod::mtp:
      if (d.model.mtp_layers < 1)
        bag.fail(key, "method mtp needs the model's multi-token-prediction layers; " + d.model.id + " has none (num_nextn_predict_layers 0)",
                 "use a draft model or an EAGLE head, or a model with MTP layers (DeepSeek-V3/R1, Qwen3-Next)");
      d.draft = mtp_draft_model(d.model, d.model.mtp_layers);
      break;
    case SpecMethod::ngram: break;
    case SpecMethod::eagle:
    case SpecMethod::eagle3:
      d.draft = draft_name.empty() ? eagle_draft_model(d.model, sp.method)
                                   : resolve_draft(bag, profiles, key, field, draft_name, sp.method, d.model);
      break;
    case SpecMethod::draft_model:
      if (draft_name.empty()) bag.fail(key, field + "missing: a draft_model method needs the draft model", "give \"model\": MODEL");
      d.draft = resolve_draft(bag, profiles, key, field, draft_name, sp.method, d.model);
      break;
    case SpecMethod::none: break;
  }
  if (d.draft)
    for (const auto& w : d.draft->warnings) d.model.warnings.push_back(w);
}

// llama.cpp --device / --device-draft: comma-separated device names (CUDA0, ROCm1, Vulkan2 ...) as GPU indices,
// the number a name ends in, else its position; "none": no GPU (common/arg.cpp parse_device_list).
std::optional<std::vector<i64>> llama_device_list(const SettingsBag& bag, const char* key) {
  const auto t = bag.text(key);
  if (!t) return std::nullopt;
  std::vector<i64> out;
  if (*t == "none") return out;
  i64 pos = 0;
  std::size_t start = 0;
  while (start <= t->size()) {
    const std::size_t end = std::min(t->find(',', start), t->size());
    const std::string name = t->substr(start, end - start);
    if (name.empty()) bag.fail(key, "an empty device name in '" + *t + "'", "give names such as CUDA0,CUDA1, or none");
    // parse_device_list takes "none" alone; inside a list it is a device name it does not find
    if (name == "none") bag.fail(key, "none in '" + *t + "': llama.cpp takes none only alone", "give none, or device names such as CUDA0,CUDA1");
    if (name.find_first_not_of("0123456789") == std::string::npos)
      bag.fail(key, "'" + name + "' is no device name (llama.cpp looks devices up by name: invalid device)", "write CUDA" + name + " (ROCm" + name + ", Vulkan" + name + ")");
    std::size_t digits = name.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
    const i64 index = digits < name.size() && name.size() - digits < 6 ? std::stoll(name.substr(digits)) : pos;
    if (std::find(out.begin(), out.end(), index) != out.end()) bag.fail(key, "device " + name + " is named twice");
    out.push_back(index);
    ++pos;
    start = end + 1;
  }
  return out;
}

// llama.cpp -ts: proportions split on ',' or '/' (common/arg.cpp --tensor-split); at most llama_max_devices() - 1
// entries (16 in CUDA builds: "got N input configs, but system only has 16 devices")
std::vector<double> llama_tensor_split(const SettingsBag& bag) {
  std::vector<double> out;
  const auto t = bag.text("tensor_split");
  if (!t) return out;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    double v = -1;
    try {
      std::size_t used = 0;
      v = std::stod(token, &used);
      if (used != token.size()) v = -1;
    } catch (const std::exception&) {
    }
    if (!(v >= 0 && std::isfinite(v)))
      bag.fail("tensor_split", "'" + token + "' in '" + *t + "' is not a proportion", "give non-negative numbers, one per GPU, such as 3,1 or 0,1,1,1");
    out.push_back(v);
    token.clear();
  };
  for (char c : *t) {
    if (c == ',' || c == '/') flush();
    else if (c != ' ') token += c;
  }
  flush();
  if (out.empty()) bag.fail("tensor_split", "no proportions in '" + *t + "'", "give one number per GPU, such as 3,1");
  if (out.size() >= 16)
    bag.fail("tensor_split", std::to_string(out.size()) + " entries; llama.cpp refuses 16 or more (llama_max_devices)", "give one proportion per GPU");
  return out;
}

void apply_llama_devices(const SettingsBag& bag, DeploymentSpec& d) {
  EngineSettings& e = d.engine;
  if (const auto sm = bag.text("split_mode")) {
    if (*sm == "layer") e.split_mode = LlamaSplitMode::layer;
    else if (*sm == "row") e.split_mode = LlamaSplitMode::row;
    else if (*sm == "none") e.split_mode = LlamaSplitMode::none;
    else if (*sm == "tensor") bag.fail("split_mode", "split mode tensor (experimental in llama.cpp) is not modelled", "use layer, row or none");
    else bag.fail("split_mode", "unknown split mode '" + *sm + "'", "use layer, row or none");
  }
  e.tensor_split = llama_tensor_split(bag);
  e.main_gpu = bag.count("main_gpu").value_or(0);
  const auto devs = llama_device_list(bag, "device");
  if (devs && devs->empty()) {  // --device none: nothing is offloaded
    e.n_gpu_layers = 0;
    e.gpu_layers_given = true;
  }
  i64 wanted = 1;
  if (devs)
    for (i64 g : *devs) wanted = std::max(wanted, g + 1);
  if (!devs || devs->empty()) wanted = std::max<i64>(wanted, static_cast<i64>(e.tensor_split.size()));
  if (const auto n = bag.count("gpu_count")) {
    if (*n < 1) bag.fail("gpu_count", "must be >= 1");
    e.gpu_count = *n;
    if (devs)
      for (i64 g : *devs)
        if (g >= *n) bag.fail("device", "GPU " + std::to_string(g) + " is not one of the " + std::to_string(*n) + " GPUs of --gpu-count", "name GPUs 0.." + std::to_string(*n - 1));
  } else {
    e.gpu_count = wanted;
  }
  if (e.gpu_count > 16)  // llama_max_devices: GGML_CUDA_MAX_DEVICES 16
    bag.fail(bag.has("gpu_count") ? "gpu_count" : "device", std::to_string(e.gpu_count) + " GPUs; llama.cpp uses at most 16", "give at most 16 GPUs");
  if (devs) e.devices = *devs;
  const i64 model_gpus = devs && !devs->empty() ? static_cast<i64>(devs->size()) : e.gpu_count;
  if (static_cast<i64>(e.tensor_split.size()) > model_gpus)
    d.model.warnings.push_back(bag.where("tensor_split", EngineKind::llamacpp) + ": " + std::to_string(e.tensor_split.size()) +
                               " proportions for " + std::to_string(model_gpus) + " GPU(s); llama.cpp uses the first " + std::to_string(model_gpus));
  if (e.split_mode != LlamaSplitMode::layer && e.main_gpu >= model_gpus)
    bag.fail("main_gpu", "GPU " + std::to_string(e.main_gpu) + " is not one of the model's " + std::to_string(model_gpus) + " GPU(s)",
             "give --main-gpu 0.." + std::to_string(model_gpus - 1));
}

// The layer a llama.cpp tensor name belongs to: blk.N.* -> N, output* -> n_layer (the output layer), anything else
// (token_embd, rope_freqs ...) -> -1, kept in host memory with the input layer.
i64 llama_tensor_layer(const std::string& name, i64 n_layer) {
  if (name.rfind("blk.", 0) == 0) {
    std::size_t end = 4;
    while (end < name.size() && end < 12 && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    if (end > 4 && end < name.size() && name[end] == '.') return std::stoll(name.substr(4, end - 4));
    return -1;
  }
  return name.rfind("output", 0) == 0 ? n_layer : -1;
}

// The tensor names llama.cpp gives a model of this geometry (src/llama-arch.cpp LLM_TENSOR_NAMES: token_embd,
// blk.N.attn_q ..., blk.N.ffn_up_exps ..., output), each with its parameters at the model's average bytes per
// parameter: for -ot patterns when no GGUF tensor table is at hand.
std::vector<std::pair<std::string, i64>> llama_tensor_names(const ModelSpec& m) {
  const ParamCount pc = count_params(m);
  const i64 total = weight_bytes(m, pc).total;
  auto bytes = [&](i64 params) { return static_cast<i64>(static_cast<long double>(params) * total / std::max<i64>(pc.total, 1)); };
  std::vector<std::pair<std::string, i64>> out;
  const i64 h = m.hidden;
  out.emplace_back("token_embd.weight", bytes(mul(m.vocab, h, "tensor params")));
  if (m.ple_table > 0) {  // Gemma 3n / 4 per-layer embeddings (llama-arch.cpp LLM_TENSOR_PER_LAYER_*)
    out.emplace_back("per_layer_token_embd.weight", bytes(m.ple_table));
    out.emplace_back("per_layer_model_proj.weight", bytes(mul(h, mul(static_cast<i64>(m.layers.size()), m.ple_width), "tensor params")));
  }
  // Gemma 4's dense MLP beside its experts keeps the plain ffn_gate / ffn_up / ffn_down names (src/models/gemma4.cpp)
  const bool dense_beside_experts = m.model_type == "gemma4_text" || m.model_type == "gemma4";
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    const std::string b = "blk." + std::to_string(i) + ".";
    auto t = [&](const char* name, i64 params) { out.emplace_back(b + name + ".weight", bytes(params)); };
    t("attn_norm", h);
    if (l.mixer == Mixer::attention) {
      t("attn_q", mul(h, mul(l.q_heads, l.k_head_dim)));
      if (l.kv_projections > 0) t("attn_k", mul(h, mul(l.kv_heads, l.k_head_dim)));
      if (l.kv_projections > 1) t("attn_v", mul(h, mul(l.kv_heads, l.v_head_dim)));
      t("attn_output", mul(mul(l.q_heads, l.v_head_dim), h));
      if (l.qk_norm) {
        t("attn_q_norm", l.k_head_dim);
        if (l.kv_projections > 0) t("attn_k_norm", l.k_head_dim);
      }
      if (m.ple_width > 0) {  // the per-layer input gate and projection
        t("inp_gate", mul(h, m.ple_width));
        t("proj", mul(m.ple_width, h));
      }
    } else if (l.mixer == Mixer::mla) {
      const i64 qk = add(l.qk_nope_head_dim, l.qk_rope_head_dim);
      if (l.q_lora_rank > 0) {
        t("attn_q_a", mul(h, l.q_lora_rank));
        t("attn_q_b", mul(l.q_lora_rank, mul(l.q_heads, qk)));
      } else {
        t("attn_q", mul(h, mul(l.q_heads, qk)));
      }
      t("attn_kv_a_mqa", mul(h, add(l.kv_lora_rank, l.qk_rope_head_dim)));
      t("attn_kv_b", mul(l.kv_lora_rank, mul(l.q_heads, add(l.qk_nope_head_dim, l.v_head_dim))));
      t("attn_output", mul(mul(l.q_heads, l.v_head_dim), h));
    } else if (l.mixer == Mixer::mamba1 || l.mixer == Mixer::mamba2) {
      t("ssm_in", mul(h, mul(2, l.d_inner)));
      t("ssm_out", mul(l.d_inner, h));
    } else if (l.mixer == Mixer::short_conv) {  // LLM_TENSOR_SHORTCONV_INPROJ / _OUTPROJ
      t("shortconv.in_proj", mul(h, mul(3, l.d_inner)));
      t("shortconv.out_proj", mul(l.d_inner, h));
    }
    t("ffn_norm", h);
    if (l.mlp == MlpKind::gated) {
      t("ffn_gate", mul(h, l.intermediate));
      t("ffn_up", mul(h, l.intermediate));
      t("ffn_down", mul(l.intermediate, h));
    } else if (l.mlp == MlpKind::plain) {
      t("ffn_up", mul(h, l.intermediate));
      t("ffn_down", mul(l.intermediate, h));
    } else if (l.mlp == MlpKind::moe) {
      const i64 e = mul(l.experts, mul(h, l.expert_intermediate), "expert params");
      t("ffn_gate_inp", mul(h, l.experts));
      t("ffn_gate_exps", e);
      t("ffn_up_exps", e);
      t("ffn_down_exps", e);
      if (l.shared_intermediate > 0) {
        t(dense_beside_experts ? "ffn_gate" : "ffn_gate_shexp", mul(h, l.shared_intermediate));
        t(dense_beside_experts ? "ffn_up" : "ffn_up_shexp", mul(h, l.shared_intermediate));
        t(dense_beside_experts ? "ffn_down" : "ffn_down_shexp", mul(l.shared_intermediate, h));
      }
    }
  }
  out.emplace_back("output_norm.weight", bytes(h));
  if (!m.tied_embeddings) out.emplace_back("output.weight", bytes(mul(m.vocab, h, "tensor params")));
  return out;
}

// llama.cpp -ot PATTERN=BUFFER,...: each tensor takes the first override whose pattern std::regex_search finds in
// its name (src/llama-model-loader.cpp, create tensor: "check overrides"); =CPU keeps it in host memory, =CUDA<n>
// (or another backend's name ending in the GPU number) puts it on that GPU. A pattern that matches nothing is
// accepted by llama.cpp (a warning here); one that does not compile, an entry without '=' or an unknown buffer
// type is refused.
void apply_llama_overrides(const SettingsBag& bag, DeploymentSpec& d) {
  const auto text = bag.text("override_tensor");
  if (!text) return;
  struct Rule {
    std::string pattern;
    std::regex re;
    i64 gpu = -1;
    bool matched = false;
  };
  std::vector<Rule> rules;
  std::size_t start = 0;
  while (start <= text->size()) {
    const std::size_t end = std::min(text->find(',', start), text->size());
    const std::string item = text->substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const auto eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0)
      bag.fail("override_tensor", "'" + item + "' is not PATTERN=BUFFER", "write e.g. 'ffn_.*_exps=CPU'");
    Rule r;
    r.pattern = item.substr(0, eq);
    const std::string buf = item.substr(eq + 1);
    std::size_t digits = buf.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(buf[digits - 1]))) --digits;
    if (buf == "CPU" || buf == "CPU_REPACK" || buf == "CPU_Mapped") r.gpu = -1;
    else if (digits > 0 && digits < buf.size() && buf.size() - digits < 4) r.gpu = std::stoll(buf.substr(digits));
    else bag.fail("override_tensor", "unknown buffer type '" + buf + "' in '" + item + "'", "use CPU or a GPU's buffer such as CUDA0");
    if (r.gpu >= d.engine.gpu_count)
      bag.fail("override_tensor", "'" + buf + "' is not one of the deployment's " + std::to_string(d.engine.gpu_count) + " GPU(s)", "give --gpu-count");
    try {
      r.re = std::regex(r.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      bag.fail("override_tensor", "'" + r.pattern + "' is not a regular expression (" + e.what() + ")", "write an ECMAScript pattern such as 'blk\\.[0-9]+\\.ffn_.*_exps'");
    }
    rules.push_back(std::move(r));
  }
  // the tensor table: the GGUF's own, else the names llama.cpp gives this architecture
  std::vector<std::pair<std::string, i64>> tensors;
  const std::string model = bag.text("model").value_or("");
  std::error_code ec;
  if (!model.empty() && std::filesystem::is_regular_file(model, ec) && is_gguf_file(model)) {
    GgufInfo info;
    model_from_gguf(model, model, &info);
    tensors = std::move(info.tensors);
  } else {
    tensors = llama_tensor_names(d.model);
    d.model.notes.push_back("--override-tensor matched against the tensor names llama.cpp gives " + d.model.id +
                            " (sizes at its average bytes per parameter); a GGUF file gives the exact table");
  }
  const i64 n_layer = static_cast<i64>(d.model.layers.size());
  for (const auto& [name, bytes] : tensors) {
    for (Rule& r : rules) {
      if (!std::regex_search(name, r.re)) continue;
      r.matched = true;
      LlamaTensorMove t;
      t.name = name;
      t.bytes = bytes;
      t.gpu = r.gpu;
      t.expert = name.find("_exps") != std::string::npos;
      t.layer = llama_tensor_layer(name, n_layer);  // token_embd and the like (-1): already in host memory
      d.llama_tensor_moves.push_back(t);
      break;
    }
  }
  for (const Rule& r : rules)
    if (!r.matched)
      d.model.warnings.push_back(bag.where("override_tensor", EngineKind::llamacpp) + ": '" + r.pattern + "' matches no tensor of " + d.model.id +
                                 " (llama.cpp accepts it and moves nothing)");
}

// llama.cpp --lora / --lora-scaled and --mmproj: the adapters' and the projector's tensor bytes from their GGUF
// headers (gguf_tensor_table); an adapter tensor "blk.N.attn_q.weight.lora_a" belongs with "blk.N.attn_q.weight".
void apply_llama_adapters(const SettingsBag& bag, DeploymentSpec& d) {
  const i64 n_layer = static_cast<i64>(d.model.layers.size());
  auto read = [&](const char* key, const std::string& file, const std::string& expect) {
    std::error_code ec;
    const std::string fix = expect == "clip" ? "give the model's mmproj GGUF" : "give a LoRA adapter GGUF (convert_lora_to_gguf.py)";
    if (!std::filesystem::exists(file, ec)) bag.fail(key, "'" + file + "': no such file", fix);
    if (!std::filesystem::is_regular_file(file, ec) || !is_gguf_file(file)) bag.fail(key, "'" + file + "' is not a GGUF file", fix);
    try {
      return gguf_tensor_table(file, expect);
    } catch (const OverflowError&) {
      throw;
    } catch (const InputError& e) {
      std::string at = e.where();  // "FILE: general.architecture": the key inside the file
      if (at.rfind(file, 0) == 0) at = at.substr(std::min(file.size() + 2, at.size()));
      bag.fail(key, "'" + file + "': " + (at.empty() ? "" : at + ": ") + e.problem(), e.fix());
    }
  };
  std::vector<std::pair<const char*, std::string>> files;
  if (const auto t = bag.text("lora"))
    for (const auto& f : split_list(*t, ',')) files.emplace_back("lora", f);
  if (const auto t = bag.text("lora_scaled"))
    for (const auto& item : split_list(*t, ',')) {
      // "FILE SCALE" (two arguments, b7376) or "FILE:SCALE" (later builds)
      std::string f = item.substr(0, item.find(' '));
      if (f.size() == item.size() && f.rfind(':') != std::string::npos) f = f.substr(0, f.rfind(':'));
      files.emplace_back("lora_scaled", f);
    }
  for (const auto& [key, file] : files) {
    const GgufInfo info = read(key, file, "");
    if (info.general_type != "adapter")
      bag.fail(key, "'" + file + "' is not a LoRA adapter (general.type \"" + info.general_type + "\")", "give a LoRA adapter GGUF (convert_lora_to_gguf.py)");
    for (const auto& [name, bytes] : info.tensors) {
      LlamaTensorMove t;
      t.name = name.substr(0, name.rfind(".lora_"));
      t.bytes = bytes;
      t.layer = llama_tensor_layer(t.name, n_layer);
      d.llama_lora_tensors.push_back(t);
    }
  }
  if (const auto mm = bag.text("mmproj")) {
    if (d.llama_draft)
      bag.fail("mmproj", "llama-server refuses speculative decoding with a multimodal projector (\"speculative decode is not supported by multimodal\")",
               "drop --model-draft or --mmproj");
    d.llama_mmproj_bytes = read("mmproj", *mm, "clip").tensor_bytes;
  }
  d.llama_mmproj_offload = bag.boolean("mmproj_offload").value_or(true);
}

void apply_llama_draft(const SettingsBag& bag, const Profiles& profiles, DeploymentSpec& d) {
  const auto path = bag.text("model_draft");
  for (const char* k : {"n_gpu_layers_draft", "ctx_size_draft", "cache_type_k_draft", "cache_type_v_draft", "device_draft"})
    if (!path && bag.has(k) && bag.get(k)->origin.kind == Origin::Kind::flag)
      bag.fail(k, "applies to a draft model, and none is given", "give --model-draft FILE");
  if (!path) return;
  LlamaDraft dr;
  const std::string where = bag.get("model_draft")->origin.where;
  try {
    std::string origin;
    dr.model = profiles.model(*path, &origin);
  } catch (const OverflowError&) {
    throw;
  } catch (const InputError& err) {
    std::error_code ec;
    const bool file = std::filesystem::is_regular_file(*path, ec);
    const bool not_json = err.problem().find("invalid JSON") != std::string::npos || err.problem().find("expected a JSON object") != std::string::npos;
    throw InputError(where, "'" + *path + "' is not a draft model" + (file && not_json ? std::string(": neither a GGUF file nor a config.json") : ": " + err.problem()),
                     "give a GGUF file or a model kvplan knows (kvplan models)");
  }
  dr.n_gpu_layers = bag.signed_count("n_gpu_layers_draft").value_or(-1);
  dr.ctx_size = bag.count("ctx_size_draft").value_or(0);
  if (const auto f = kv_format(bag, "cache_type_k_draft")) dr.k_format = *f;
  if (const auto f = kv_format(bag, "cache_type_v_draft")) dr.v_format = *f;
  dr.draft_max = bag.count("draft_max").value_or(16);
  if (const auto devs = llama_device_list(bag, "device_draft")) {
    if (devs->empty()) dr.n_gpu_layers = 0;
    for (i64 g : *devs)
      if (g >= d.engine.gpu_count)
        bag.fail("device_draft", "GPU " + std::to_string(g) + " is not one of the deployment's " + std::to_string(d.engine.gpu_count), "give --gpu-count");
    dr.devices = *devs;
  }
  d.llama_draft = std::move(dr);
}

// LMCache's own YAML config (LMCACHE_CONFIG_FILE), the keys kvplan sizes tiers from. LMCache reads the file, then lets
// the LMCACHE_* environment override it (LMCache/LMCache lmcache/v1/config_base.py @ 082c5012 load_config_with_overrides:
// from_file, then update_config_from_env; lmcache/integration/vllm/utils.py lmcache_get_or_create_config likewise);
// LMCache releases before update_config_from_env ignored the environment when a file was given. A file that cannot be
// opened stops LMCache (from_file: open(file_path)); kvplan exits 2.
struct LmcacheFile {
  std::optional<i64> chunk;
  std::optional<bool> local_cpu;
  std::optional<double> cpu_gib, disk_gib;
  std::optional<std::string> local_disk;  // "" = null: no disk tier
  std::map<std::string, std::string> where;  // key -> file:line:col
};

LmcacheFile read_lmcache_file(const SettingsBag& bag) {
  LmcacheFile f;
  const auto path = bag.text("lmcache_config_file");
  if (!path || path->empty()) return f;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(*path, ec))
    bag.fail("lmcache_config_file", "'" + *path + "' is not a file kvplan can read",
             "give the path of LMCache's YAML config as this machine sees it, or leave LMCACHE_CONFIG_FILE out");
  const std::vector<LocatedDoc> docs = load_documents(*path, false, 1LL << 20);
  if (docs.empty() || docs.front().root.is_null()) return f;
  const LocatedDoc& doc = docs.front();
  if (!doc.root.is_object())
    throw InputError(doc.at(""), "expected a mapping of LMCache settings, got " + describe_value(doc.root), "write key: value lines such as max_local_cpu_size: 5.0");
  const DocNode n{doc, doc.root, ""};
  // LMCache converts each value as it does the environment's (float("5"), int("256")): numbers or numeric text
  auto number = [&](const std::string& key, double lo, const std::string& what, const std::string& fix) -> std::optional<double> {
    if (!n.has(key)) return std::nullopt;
    const json& v = n.j[key];
    double x = -1;
    if (v.is_number()) x = v.get<double>();
    else if (v.is_string()) {
      const std::string t = v.get<std::string>();
      std::size_t used = 0;
      try {
        x = std::stod(t, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != t.size() || t.empty()) x = -1;
    }
    if (!(std::isfinite(x) && x >= lo && x < 1e9)) n.fail(key, key + ": expected " + what + ", got " + describe_value(v), fix);
    f.where[key] = n.at(key);
    return x;
  };
  if (const auto c = number("chunk_size", 1, "a whole number of tokens >= 1", "give the tokens per chunk, such as 256")) {
    if (*c != std::floor(*c)) n.fail("chunk_size", "chunk_size: expected a whole number of tokens, got " + n.j["chunk_size"].dump(), "give the tokens per chunk, such as 256");
    f.chunk = static_cast<i64>(*c);
  }
  f.cpu_gib = number("max_local_cpu_size", 0, "a number of GiB >= 0", "give the GiB of pinned host memory per rank, such as 5.0");
  f.disk_gib = number("max_local_disk_size", 0, "a number of GiB >= 0", "give the GiB of the disk tier per rank, such as 100");
  if (n.j.contains("local_cpu")) {  // LMCache _to_bool: true / "true" / "1"
    const json& v = n.j["local_cpu"];
    if (v.is_boolean()) f.local_cpu = v.get<bool>();
    else if (v.is_string() && (v == "true" || v == "1" || v == "false" || v == "0")) f.local_cpu = v == "true" || v == "1";
    else n.fail("local_cpu", "local_cpu: expected true or false, got " + describe_value(v), "write local_cpu: true (keep chunks in host memory) or false");
    f.where["local_cpu"] = n.at("local_cpu");
  }
  if (n.j.contains("local_disk")) {
    const json& v = n.j["local_disk"];
    if (!v.is_null() && !v.is_string()) n.fail("local_disk", "local_disk: expected a path, got " + describe_value(v), "write local_disk: \"file:///path/\" or null");
    f.local_disk = v.is_string() ? v.get<std::string>() : "";
    f.where["local_disk"] = n.at("local_disk");
  }
  return f;
}

// vLLM's host and disk KV tiers from its KV connector (docs/engine-rules.md "KV offload tiers"):
// --kv-offloading-size [--kv-offloading-backend native|lmcache], or --kv-transfer-config naming
// OffloadingConnector (kv_connector_extra_config cpu_bytes_to_use: bytes summed over the TP ranks, vLLM >= 0.14;
// num_cpu_blocks [x block_size]: per rank, vLLM 0.11-0.13) or LMCacheConnectorV1 (LMCache sizes in GiB per rank,
// whole chunks of chunk_size tokens; LMCACHE_* and kvplan's --lmcache-* over LMCACHE_CONFIG_FILE over LMCache's
// defaults). Another connector is a warning: no tier counted.
void kv_connector_tiers(const SettingsBag& bag, const EngineRules& rules, const std::string& version, EngineSettings& e,
                        std::vector<std::string>& warnings) {
  constexpr double kGiB = static_cast<double>(1LL << 30);
  std::optional<LmcacheFile> file;
  auto lmfile = [&]() -> const LmcacheFile& {
    if (!file) file = read_lmcache_file(bag);
    return *file;
  };
  // a setting from the command / environment / kvplan flags, else the LMCache file, else LMCache's default
  auto source = [&](const char* key, const char* file_key, const std::string& shown) {
    if (bag.has(key)) return bag.where(key, EngineKind::vllm);
    const auto at = lmfile().where.find(file_key);
    return at != lmfile().where.end() ? at->second : "LMCache's default " + shown;
  };
  auto gib = [&](const char* key, const std::optional<double>& from_file, double fallback) -> i64 {
    const double v = bag.has(key) ? bag.number(key).value_or(fallback) : from_file.value_or(fallback);
    if (!(v >= 0 && v < 1e9)) bag.fail(key, "must be a number of GiB >= 0, got " + bag.text(key).value_or(""), "give a size such as 5.0");
    return static_cast<i64>(v * kGiB);  // LMCache: int(max_local_cpu_size * 1024**3)
  };
  auto chunk_tokens = [&] {
    const i64 chunk = bag.has("lmcache_chunk_size") ? bag.count("lmcache_chunk_size").value_or(256) : lmfile().chunk.value_or(256);
    if (chunk < 1) bag.fail("lmcache_chunk_size", "must be >= 1", "give the tokens per chunk, such as 256");
    return chunk;
  };
  auto lmcache = [&] {
    const LmcacheFile& f = lmfile();
    e.kv_offload_rank_bytes = gib("lmcache_max_local_cpu_size", f.cpu_gib, 5.0);  // LMCache default max_local_cpu_size 5.0
    e.kv_offload_holds = bag.has("lmcache_local_cpu") ? bag.boolean("lmcache_local_cpu").value_or(true) : f.local_cpu.value_or(true);
    e.kv_offload_basis = "LMCache max_local_cpu_size from " + source("lmcache_max_local_cpu_size", "max_local_cpu_size", "5.0") +
                         (e.kv_offload_holds ? "" : ", local_cpu false from " + source("lmcache_local_cpu", "local_cpu", "true"));
    const std::string disk = bag.has("lmcache_local_disk") ? bag.text("lmcache_local_disk").value_or("") : f.local_disk.value_or("");
    if (!disk.empty()) {
      e.disk_kv_bytes = gib("lmcache_max_local_disk_size", f.disk_gib, 0.0);
      e.disk_kv_basis = "LMCache local_disk " + disk + " from " + source("lmcache_local_disk", "local_disk", "none") +
                        ", max_local_disk_size from " + source("lmcache_max_local_disk_size", "max_local_disk_size", "0");
    }
    e.kv_chunk_tokens = chunk_tokens();
  };
  if (e.kv_offload_bytes > 0 && bag.choice("kv_offloading_backend").value_or("native") == "lmcache") {
    e.kv_chunk_tokens = chunk_tokens();  // vLLM sets LMCache's max_local_cpu_size to the size / the ranks: the same bytes per rank
    e.kv_offload_basis = "--kv-offloading-size with --kv-offloading-backend lmcache";
  } else if (e.kv_offload_bytes > 0) {
    e.kv_offload_basis = "--kv-offloading-size: OffloadingConnector cpu_bytes_to_use";
  }
  const auto text = bag.text("kv_transfer_config");
  if (!text) return;
  json j;
  try {
    j = json::parse(*text);
  } catch (const json::exception&) {
    bag.fail("kv_transfer_config", "'" + *text + "' is not JSON",
             "give a JSON object such as '{\"kv_connector\":\"OffloadingConnector\",\"kv_role\":\"kv_both\"}'");
  }
  if (!j.is_object()) bag.fail("kv_transfer_config", "expected a JSON object, got " + describe_value(j));
  const json connector = j.value("kv_connector", json());
  if (!connector.is_null() && !connector.is_string())
    bag.fail("kv_transfer_config", "kv_connector: expected a string, got " + describe_value(connector), "name a connector such as \"OffloadingConnector\"");
  const json extra = j.value("kv_connector_extra_config", json::object());
  if (!extra.is_object())
    bag.fail("kv_transfer_config", "kv_connector_extra_config: expected a JSON object, got " + describe_value(extra));
  auto whole = [&](const char* field, i64 least) -> i64 {
    const json& v = extra[field];
    if (!v.is_number_integer() || v.get<i64>() < least)
      bag.fail("kv_transfer_config", std::string("kv_connector_extra_config.") + field + ": expected an integer >= " + std::to_string(least) +
                                         ", got " + describe_value(v),
               least > 0 ? "give the offloaded block size in tokens, such as 16" : "give a whole number of host blocks per rank");
    return v.get<i64>();
  };
  const std::string name = connector.is_string() ? connector.get<std::string>() : "";
  if (name == "OffloadingConnector") {
    i64 bytes = 0, blocks = 0;
    const bool has_bytes = extra.contains("cpu_bytes_to_use"), has_blocks = extra.contains("num_cpu_blocks");
    if (has_bytes) {
      const json& v = extra["cpu_bytes_to_use"];
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() >= 9e18)
        bag.fail("kv_transfer_config", "kv_connector_extra_config.cpu_bytes_to_use: expected bytes >= 0, got " + describe_value(v),
                 "give the host bytes summed over the TP ranks, such as 34359738368");
      bytes = static_cast<i64>(v.get<double>());
    }
    if (has_blocks) blocks = whole("num_cpu_blocks", 0);
    if (extra.contains("block_size")) e.kv_offload_block_tokens = whole("block_size", 1);
    // The spelling is the version's: vLLM's CPUOffloadingSpec reads one key with extra_config.get and raises when it
    // is missing or 0 ("cpu_bytes_to_use must be specified in kv_connector_extra_config", vllm #24498, 0.14 on; before,
    // "num_cpu_blocks must be specified ..."); the other key is ignored. --kv-offloading-size fills cpu_bytes_to_use itself.
    const std::string v = version.empty() ? std::string("the newest vLLM") : "vLLM " + version;
    const std::string where = bag.where("kv_transfer_config", EngineKind::vllm);
    if (rules.offload_cpu_bytes) {
      if (bytes <= 0 && e.kv_offload_bytes <= 0)
        bag.fail("kv_transfer_config",
                 "kv_connector_extra_config.cpu_bytes_to_use: missing (" + v + " reads it" + (has_blocks ? ", not num_cpu_blocks," : "") +
                     " and fails without it: \"cpu_bytes_to_use must be specified in kv_connector_extra_config\")",
                 "give cpu_bytes_to_use, the host bytes summed over the TP ranks, or plan vLLM 0.11-0.13 (--engine vllm@0.11) for num_cpu_blocks");
      if (has_blocks) warnings.push_back(where + ": kv_connector_extra_config.num_cpu_blocks: ignored by " + v + " (it reads cpu_bytes_to_use)");
      if (bytes > 0) {
        e.kv_offload_bytes = bytes;
        e.kv_offload_basis = "OffloadingConnector cpu_bytes_to_use (vllm v1/kv_offload CPUOffloadingSpec)";
      }
    } else {
      if (blocks <= 0)
        bag.fail("kv_transfer_config",
                 "kv_connector_extra_config.num_cpu_blocks: missing (" + v + " reads it" + (has_bytes ? ", not cpu_bytes_to_use," : "") +
                     " and fails without it: \"num_cpu_blocks must be specified in kv_connector_extra_config\")",
                 "give num_cpu_blocks, the host blocks per rank, or plan vLLM >= 0.14 (--engine vllm@0.14, vllm #24498) for cpu_bytes_to_use");
      if (has_bytes) warnings.push_back(where + ": kv_connector_extra_config.cpu_bytes_to_use: ignored by " + v + " (it reads num_cpu_blocks)");
      e.kv_offload_cpu_blocks = blocks;
      e.kv_offload_basis = "OffloadingConnector num_cpu_blocks per rank (vllm v1/kv_offload/cpu.py CPUOffloadingSpec, 0.11-0.13)";
    }
  } else if (name == "LMCacheConnectorV1" || name == "LMCacheConnector") {
    lmcache();
  } else if (!name.empty()) {
    warnings.push_back(bag.where("kv_transfer_config", EngineKind::vllm) + ": kv_connector '" + name +
                       "' is not modelled: no host or disk KV tier counted for it");
  }
}

}  // namespace

std::pair<EngineKind, std::string> engine_of(const SettingsBag& bag) {
  std::string name = bag.text("engine").value_or("vllm"), version = bag.text("engine_version").value_or("");
  if (const auto at = name.find('@'); at != std::string::npos) {
    const std::string named = name.substr(at + 1);
    if (!bag.has("engine_version")) {
      version = named;
    } else {
      // --engine vllm@0.11 beside --engine-version 0.10 on one command line: which was meant is not known (a version
      // from a later layer, a flag over a file's engine, replaces it by design)
      using K = Origin::Kind;
      const auto flagged = [](const SettingValue* v) { return v->origin.kind == K::flag || v->origin.kind == K::set; };
      const auto bare = [](std::string v) { return !v.empty() && v[0] == 'v' ? v.substr(1) : v; };
      if (flagged(bag.get("engine")) && flagged(bag.get("engine_version")) && bare(named) != bare(version))
        bag.fail("engine_version", "'" + version + "' is not the version " + bag.get("engine")->origin.where + " names ('" + named + "')",
                 "give the version once");
    }
    name.erase(at);
  }
  const std::string lowered = ascii_lower(name);
  const auto k = parse_engine(lowered);
  if (!k) bag.fail("engine", "unknown engine '" + name + "'", "use vllm, sglang, trtllm, llama.cpp or generic");
  if (!version.empty() && version[0] == 'v') version.erase(0, 1);
  return {*k, version};
}

BuiltDeployment build_deployment(const SettingsBag& bag, const Profiles& profiles) {
  BuiltDeployment b;
  DeploymentSpec& d = b.spec;
  const auto [kind, version] = engine_of(bag);
  b.engine_version = version;
  check_engine_spellings(bag, kind);

  d.model = load_model(bag, profiles, b.model);
  apply_model_options(bag, d.model, b.model);
  if (const auto f = parse_format(b.model.weight_override); f && d.model.quant.method == "none") d.dtype = *f;  // --weight-format f16|bf16|f32
  if (const auto dt = bag.text("dtype"); dt && *dt != "auto") {
    // vLLM / SGLang --dtype: half, float16, bfloat16, float, float32
    const std::string v = *dt == "half" ? "f16" : *dt == "float" ? "f32" : *dt;
    const auto f = parse_format(v);
    if (!f || format_info(*f).block_elems != 1 || format_info(*f).block_bytes < 2)
      bag.fail("dtype", "unknown dtype '" + *dt + "'", "use auto, float16 (half), bfloat16 or float32 (float)");
    d.dtype = *f;
  }
  if (const auto t = bag.text("kv_cache_dtype"); !t || !parse_turboquant(*t)) d.k_format = d.v_format = kv_format(bag, "kv_cache_dtype");
  if (const auto t = bag.text("kv_cache_dtype"); t && vllm_fp8_spelling(*t)) {
    if (kind != EngineKind::vllm) bag.fail("kv_cache_dtype", "'" + *t + "' is a vLLM spelling", "use fp8_e4m3");
    if (*t == "fp8_ds_mla" && !d.model.sparse_mla)
      bag.fail("kv_cache_dtype", "fp8_ds_mla is DeepSeek-V3.2's sparse-MLA format and " + d.model.id + " has no index_topk", "use fp8");
    // vllm/config CacheDType: fp8_inc from #12010 (2025-07-16, 0.10), fp8_ds_mla on the command line from #24794
    // (2025-11-11, 0.12 assumed; 0.11 kept it internal)
    const char* first = *t == "fp8_inc" ? "0.10" : "0.12";
    if (version_before(version, first))
      bag.fail("kv_cache_dtype", "'" + *t + "' is not a --kv-cache-dtype choice of vLLM " + version + " (from " + first + ")", "use fp8");
  }
  if (const auto t = bag.text("kv_cache_dtype"); t) {
    if (const auto tq = parse_turboquant(*t)) {
      if (kind != EngineKind::vllm) bag.fail("kv_cache_dtype", "'" + *t + "' is a vLLM KV cache dtype (TurboQuant)", "use fp8_e4m3");
      d.k_format = tq->k;
      d.v_format = tq->v;
    }
  }
  d.kv_skip_layers = kv_skip_layers(bag, static_cast<i64>(d.model.layers.size()));
  if (bag.has("cache_type_k")) d.k_format = kv_format(bag, "cache_type_k");
  if (bag.has("cache_type_v")) d.v_format = kv_format(bag, "cache_type_v");
  // a recurrent state is kept in a float type (state_capable); llama.cpp keeps it in f32 whatever is asked
  // (llama_memory_recurrent's R and S types are GGML_TYPE_F32)
  if (const auto t = bag.text("state_dtype")) at_origin(bag, kind, [&] { check_state_dtype(*t, "state_dtype"); });
  d.state_format = kv_format(bag, "state_dtype");
  if (d.state_format && kind == EngineKind::llamacpp && *d.state_format != ElemFormat::f32)
    bag.fail("state_dtype", "llama.cpp keeps the recurrent state in f32", "drop it, or give f32");
  if (bag.has("kv_cache_dtype") && (bag.has("cache_type_k") || bag.has("cache_type_v")))
    throw InputError(bag.get("kv_cache_dtype")->origin.where, "give either one KV cache dtype or K and V cache types, not both",
                     "drop " + bag.get("kv_cache_dtype")->origin.spelling);
  // vLLM, SGLang and TensorRT-LLM cache K and V in one type (--kv-cache-dtype; vLLM's TurboQuant pairs are one of its
  // values): K and V types that differ are llama.cpp's (-ctk / -ctv)
  if ((kind == EngineKind::vllm || kind == EngineKind::sglang || kind == EngineKind::trtllm) &&
      (bag.has("cache_type_k") || bag.has("cache_type_v")) && d.k_format != d.v_format) {
    const std::string key = bag.has("cache_type_k") ? "cache_type_k" : "cache_type_v";
    bag.fail(key, std::string(engine_name(kind)) + " caches K and V in one type (--kv-cache-dtype); different K and V types are llama.cpp's",
             "give one type with --kv-dtype (or the same type to both)");
  }

  d.gpu = load_gpu(bag, profiles);

  d.parallel.tp = bag.count("tensor_parallel_size").value_or(1);
  d.parallel.pp = bag.count("pipeline_parallel_size").value_or(1);
  d.parallel.dp = bag.count("data_parallel_size").value_or(1);
  d.parallel.ep = bag.count("expert_parallel_size").value_or(1);
  d.enable_expert_parallel = bag.boolean("enable_expert_parallel").value_or(false);

  EngineSettings& e = d.engine;
  e.kind = kind;
  if (kind == EngineKind::sglang && bag.boolean("enable_dp_attention").value_or(false) && d.parallel.dp > 1) {
    // SGLang --enable-dp-attention: --dp-size groups share the --tp-size GPUs (the deployment has tp GPUs, not tp x dp);
    // with --dp-size 1 (the default) there is one group of attention TP = tp: nothing changes
    if (d.parallel.tp % d.parallel.dp != 0)
      bag.fail("data_parallel_size", std::to_string(d.parallel.dp) + " does not divide the tensor-parallel size " + std::to_string(d.parallel.tp),
               "use a --dp-size that divides --tp-size");
    e.attention_dp = d.parallel.dp;
    d.parallel.dp = 1;
  }
  if (kind == EngineKind::trtllm && bag.boolean("enable_attention_dp").value_or(false)) e.attention_dp = d.parallel.tp;  // attention TP 1
  e.memory_fraction = bag.fraction("memory_fraction").value_or(0);
  if (bag.has("memory_fraction")) at_origin(bag, kind, [&] { check_fraction(e.memory_fraction, "memory_fraction"); });
  // a cap of 0 given on purpose is no engine's default (0 here means "the engine's"): refused, as llama.cpp -np 0 is
  auto positive = [&](const char* key) -> i64 {
    const auto v = bag.count(key);
    if (v && *v < 1) bag.fail(key, "must be >= 1, got " + std::to_string(*v), "leave it out for the engine's default");
    return v.value_or(0);
  };
  if (bag.is_auto("max_model_len")) d.max_model_len_auto = true;
  else e.max_model_len = positive("max_model_len");
  e.max_num_seqs = positive("max_num_seqs");
  // SGLang's --chunked-prefill-size -1 (any value <= 0): no chunking, as the engine's own command line reads it
  const auto* batched = bag.get("max_num_batched_tokens");
  const bool sglang_unchunk = batched && kind == EngineKind::sglang && sglang_chunking_off(batched->text);
  e.max_num_batched_tokens = sglang_unchunk ? 0 : positive("max_num_batched_tokens");
  if (sglang_unchunk && !bag.has("enable_chunked_prefill")) e.chunked_prefill = false;
  if (const auto bs = bag.count("block_size")) {
    if (*bs < 1) bag.fail("block_size", "must be >= 1");
    e.block_size = *bs;
  }
  e.kv_cache_memory_bytes = bag.bytes("kv_cache_memory_bytes");
  e.kv_offload = bag.boolean("kv_offload").value_or(true);
  e.mmap = bag.boolean("mmap").value_or(true);
  e.mlock = bag.boolean("mlock").value_or(false);
  // sizes the engines take as a number of GiB (2^30) or GB (10^9)
  auto size_in = [&](const char* key, double unit, const char* unit_name) -> i64 {
    const auto v = bag.number(key);
    if (!v) return 0;
    if (!(*v >= 0 && *v < 1e9)) bag.fail(key, std::string("must be a number of ") + unit_name + " >= 0");
    return static_cast<i64>(*v * unit);
  };
  constexpr double kGiB = static_cast<double>(1LL << 30);
  e.cpu_offload_bytes = size_in("cpu_offload_gb", kGiB, "GiB");
  e.kv_offload_bytes = size_in("kv_offloading_size", kGiB, "GiB");
  kv_connector_tiers(bag, engine_rules(kind, version), version, e, d.model.warnings);
  e.hierarchical_cache = bag.boolean("hierarchical_cache").value_or(false);
  if (const auto r = bag.number("hicache_ratio")) {
    if (!(*r > 0 && *r < 1e6)) bag.fail("hicache_ratio", "must be > 0");
    e.hicache_ratio = *r;
  }
  e.hicache_bytes = size_in("hicache_size", 1e9, "GB");
  if (const auto r = bag.number("swa_full_tokens_ratio")) {
    // server_args.py: "--swa-full-tokens-ratio must be in (0, 1]" (main's ValueError)
    if (!(*r > 0 && *r <= 1)) bag.fail("swa_full_tokens_ratio", "must be in (0, 1]", "use a ratio such as 0.8 (SGLang's default)");
    e.swa_full_tokens_ratio = *r;
  }
  e.disable_hybrid_swa = bag.boolean("disable_hybrid_swa_memory").value_or(false);
  e.n_cpu_moe = bag.count("n_cpu_moe").value_or(0);
  if (bag.boolean("cpu_moe").value_or(false)) e.n_cpu_moe = limits::kMaxLayers;
  e.max_total_tokens = bag.count("max_total_tokens");
  e.max_tokens = bag.count("max_tokens");
  e.version = version;
  if (const auto c = bag.count("ctx_size")) {
    e.ctx_size = *c;
    e.ctx_given = true;
  }
  e.parallel = bag.count("parallel").value_or(0);
  if (bag.has("parallel") && e.parallel < 1) bag.fail("parallel", "must be >= 1", "use -np N, or leave it out for the engine's automatic slots");
  e.n_gpu_layers = bag.signed_count("n_gpu_layers").value_or(-1);
  e.gpu_layers_given = bag.has("n_gpu_layers");
  e.fit = bag.boolean("fit");
  e.fit_ctx = bag.count("fit_ctx").value_or(4096);
  if (const auto t = bag.count("fit_target_mib")) e.fit_target_bytes = mul(*t, 1LL << 20, "fit_target_mib");
  e.ubatch_size = bag.count("ubatch_size").value_or(512);
  if (const auto nb = bag.count("batch_size")) {  // llama.cpp: n_ubatch = min(n_batch, n_ubatch) (llama_context constructor)
    if (*nb < 1) bag.fail("batch_size", "must be >= 1");
    e.batch_size = *nb;
    e.ubatch_size = std::min(e.ubatch_size, *nb);
  }
  e.swa_full = bag.boolean("swa_full").value_or(false);
  apply_llama_devices(bag, d);
  if (kind == EngineKind::llamacpp) {
    apply_llama_draft(bag, profiles, d);
    apply_llama_overrides(bag, d);
    apply_llama_adapters(bag, d);
  }
  e.kv_unified = bag.boolean("kv_unified");
  e.enforce_eager = bag.boolean("enforce_eager").value_or(false);
  e.disable_async_output_proc = bag.boolean("disable_async_output_proc").value_or(false);
  if (bag.boolean("enable_lora").value_or(false)) {  // without it the engines allocate no adapter buffers
    // vLLM LoRAConfig: max_loras 1, max_lora_rank 16; SGLang ServerArgs: max_loras_per_batch 8 (rank: its adapters'; 16 assumed)
    e.lora_slots = bag.count("max_loras").value_or(kind == EngineKind::sglang ? 8 : 1);
    e.lora_rank = bag.count("max_lora_rank").value_or(16);
    if (e.lora_slots < 1) bag.fail("max_loras", "must be >= 1");
    if (e.lora_rank < 1) bag.fail("max_lora_rank", "must be >= 1");
    // vLLM LoRAConfig._validate_lora_config: max_cpu_loras defaults to max_loras and may not be smaller
    if (kind == EngineKind::vllm && bag.has("max_cpu_loras")) {
      e.lora_cpu_slots = bag.count("max_cpu_loras").value_or(0);
      if (e.lora_cpu_slots < e.lora_slots)
        bag.fail("max_cpu_loras", std::to_string(e.lora_cpu_slots) + " is below --max-loras " + std::to_string(e.lora_slots) +
                                      " (vLLM: \"max_cpu_loras must be >= max_loras\")",
                 "give --max-cpu-loras >= --max-loras, or leave it out (default: --max-loras)");
    }
  }
  e.allow_long_context = bag.boolean("allow_long_context");
  std::string fa = bag.text("flash_attn").value_or("auto");
  if (const auto on = parse_bool_text(fa)) fa = *on ? "on" : "off";
  if (fa == "enabled") fa = "on";
  if (fa == "disabled") fa = "off";
  if (fa != "on" && fa != "off" && fa != "auto") bag.fail("flash_attn", "expected on, off or auto, got '" + fa + "'");
  e.flash_attn = fa;
  // before b6325 (#15434) -fa was a switch, off unless given: the same refusal without it
  const bool fa_off = fa == "off" || (fa == "auto" && !bag.has("flash_attn") && version_before(e.version, "b6325"));
  if (kind == EngineKind::llamacpp && fa_off && d.v_format && format_info(*d.v_format).block_elems > 1 && format_info(*d.v_format).row_bits == 0)
    bag.fail("cache_type_v",
             "a quantized V cache needs flash attention; llama.cpp " + std::string(fa == "off" ? "refuses -fa off" : e.version + " (flash attention off unless -fa)") +
                 " with -ctv " + std::string(format_info(*d.v_format).name),
             fa == "off" ? "use -fa on or auto, or an f16 V cache" : "add -fa, or use an f16 V cache");

  BudgetOverrides& o = d.overrides;
  o.weights = bag.bytes("weight_bytes");
  o.activation = bag.bytes("activation_bytes");
  o.non_torch = bag.bytes("non_torch_bytes");
  o.cuda_context = bag.bytes("cuda_context_bytes");
  o.cuda_graph = bag.bytes("cuda_graph_bytes");
  o.extra = bag.bytes("overhead_bytes");
  o.gpu_memory = bag.bytes("gpu_memory_bytes");

  Workload& w = d.work;
  w.context = bag.count("context");
  w.prompt = bag.count("prompt_tokens");
  w.output = bag.count("output_tokens");
  w.concurrency = bag.count("concurrency").value_or(1);
  w.shared_prefix = bag.count("shared_prefix").value_or(0);
  // request lengths: at most 2^40 tokens each (as a deployment file's traffic), so that their sums stay far from 2^63
  for (const char* k : {"context", "prompt_tokens", "output_tokens", "shared_prefix"})
    if (const auto n = bag.count(k); n && *n > (i64{1} << 40))
      bag.fail(k, "expected at most 2^40 tokens, got " + std::to_string(*n), "give a request length in tokens");

  d.perf.bandwidth_efficiency = bag.fraction("bw_efficiency").value_or(0);
  d.perf.compute_efficiency = bag.fraction("compute_efficiency").value_or(0);
  for (const char* k : {"bw_efficiency", "compute_efficiency"})
    if (const auto f = bag.fraction(k); f && !(*f >= 0.01 && *f <= 1)) bag.fail(k, "must be in [0.01, 1]", "use a fraction such as 0.8");
  d.perf.step_overhead_s = bag.has("step_overhead_us") ? *bag.number("step_overhead_us") * 1e-6 : -1;
  apply_perf_coefficients(bag, d);
  apply_calibration(bag, d);
  apply_speculative(bag, profiles, d);
  for (const SettingDef& def : settings_table())  // rows that say themselves where their value goes
    if (def.apply && bag.has(def.key)) def.apply(bag, d);
  // SGLang without its radix cache also sizes a hybrid Mamba model's state cache from max_running_requests instead of
  // the mamba / KV ratio (ModelRunner.handle_max_mamba_cache, 0.5.6): kvplan reads the switch for the simulator only
  const bool recurrent = std::any_of(d.model.layers.begin(), d.model.layers.end(), [](const Layer& l) { return l.kv == KvKind::ssm; });
  if (kind == EngineKind::sglang && d.engine.prefix_caching == false && recurrent)
    d.model.warnings.push_back(bag.where("enable_prefix_caching", kind) +
                               ": SGLang then sizes the Mamba state cache from max_running_requests, which kvplan does not model");
  return b;
}

}  // namespace kvplan::io
