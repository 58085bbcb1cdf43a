// Deployment options (see deploy_options.hpp): kvplan flags generated from the settings table, a
// pasted engine command, --set, and the one resolution path every deployment command shares.
#include "deploy_options.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "commands.hpp"
#include "host_device.hpp"
#include "kvplan/core/suggest.hpp"
#include "kvplan/core/paging.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/engine_flags.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::cli {

namespace {

const char* group_title(const std::string& g) {
  if (g == "model") return "model";
  if (g == "deployment") return "deployment";
  if (g == "engine") return "engine flags";
  if (g == "llama.cpp") return "llama.cpp flags";
  if (g == "budget") return "budget overrides";
  if (g == "workload") return "workload";
  if (g == "speculative") return "speculative decoding";
  return "performance model";
}

bool cli11_name(const std::string& s) {  // CLI11 takes --long and one-letter -x; -ctk and friends are rewritten in main.cpp
  return s.rfind("--", 0) == 0 || (s.size() == 2 && s[0] == '-');
}

}  // namespace

std::vector<std::string> rewrite_engine_spellings(const std::vector<std::string>& args, std::vector<std::string>* after_flash_attn) {
  static const std::map<std::string, std::string> long_of = [] {
    std::map<std::string, std::string> m;
    for (const io::SettingDef& d : io::settings_table())
      for (const io::Spelling& s : d.kvplan) {
        if (cli11_name(s.name)) continue;
        for (const io::Spelling& l : d.kvplan)
          if (l.name.rfind("--", 0) == 0 && l.conv == s.conv && l.engines == s.engines) {
            m.emplace(s.name, l.name);
            break;
          }
      }
    return m;
  }();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (const auto it = long_of.find(name); it != long_of.end()) a = it->second + (eq == std::string::npos ? "" : a.substr(eq));
    out.push_back(a);
    if (a == "--flash-attn" || a == "-fa") {  // llama.cpp's -fa takes an optional on|off|auto
      static const std::set<std::string> values = {"on", "off", "auto", "true", "false", "1", "0", "enabled", "disabled"};
      if (i + 1 >= args.size() || !values.count(args[i + 1])) {
        out.push_back("on");
        if (after_flash_attn && i + 1 < args.size() && args[i + 1].rfind('-', 0) != 0) after_flash_attn->push_back(args[i + 1]);
      }
    }
  }
  return out;
}

void set_flag(DeployArgs& a, const std::string& key, const std::string& name, const std::string& value) {
  if (const auto* prev = a.flags.get(key); prev && prev->origin.where != name && prev->text != value)
    throw InputError(name, "'" + value + "' given, and " + prev->origin.where + " '" + prev->text + "' for the same setting",
                     "give one of them");
  a.flags.set(key, value, io::Origin{io::Origin::Kind::flag, name, name});
}

namespace {
std::optional<std::string>& only_for() {
  static std::optional<std::string> word;
  return word;
}
}  // namespace

void deploy_options_only_for(const std::string& subcommand) { only_for() = subcommand; }

std::string named_subcommand(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w == "--") break;
    if (w == "--profiles") {
      ++i;
      continue;
    }
    if (w.rfind('-', 0) == 0) continue;
    return w;
  }
  return {};
}

void add_deploy_options(CLI::App* c, DeployArgs& a, bool workload) {
  if (only_for() && c->get_name() != *only_for()) return;
  c->add_option_function<std::string>(
      "MODEL",
      [&a](const std::string& v) { a.flags.set("model", v, io::Origin{io::Origin::Kind::flag, "MODEL", "MODEL"}); },
      "Built-in model id (kvplan models), a config.json path, a snapshot folder, a GGUF file or a Hugging Face id; optional when an "
      "engine command follows --");
  std::map<std::string, CLI::Option_group*> groups;
  for (const io::SettingDef& d : io::settings_table()) {
    if (d.kvplan.empty() || (!workload && d.group == "workload")) continue;
    auto*& g = groups[d.group];
    if (!g) g = c->add_option_group(group_title(d.group));
    bool first = true;
    for (const io::Spelling& s : d.kvplan) {
      if (!cli11_name(s.name)) continue;
      const std::string key = d.key, name = s.name;
      const std::string help = first ? d.help : "same as " + d.kvplan.front().name + (s.conv == io::Conv::negate ? " false" : "");
      first = false;
      if (d.type == io::SettingType::boolean) {
        // --flag sets the setting (false for a negating spelling); --flag=false / =0 / =off / =no sets the opposite, as
        // CLI11 counts it -1 (a callback flag would drop it silently); any other value is one error line
        const bool negate = s.conv == io::Conv::negate;
        g->add_flag_function(
             name, [&a, key, name, negate](std::int64_t n) { set_flag(a, key, name, (n > 0) != negate ? "true" : "false"); }, help)
            ->check(CLI::Validator(
                [](std::string& v) -> std::string {
                  if (v.empty() || v == "+1" || v == "-1" || io::parse_bool_text(v)) return "";
                  return "'" + v + "' is not true or false";
                },
                "BOOL"));
      } else {
        g->add_option_function<std::string>(name, [&a, key, name](const std::string& v) { set_flag(a, key, name, v); }, help);
      }
    }
  }
  c->add_option("--set", a.set,
                "KEY=VALUE: a setting by its key (max-model-len=8192; docs/settings.md lists every key) or the value of a variable the "
                "pasted command leaves unexpanded (MAX_SEQ_LEN=8192); repeatable")
      ->allow_extra_args(false);  // one KEY=VALUE each: a MODEL or FILE after it stays positional
  c->add_flag("--strict", a.strict, "Warnings (flags the engine version lacks or that kvplan does not model, fallbacks) fail: exit 1");
}

// The setting one of whose flag spellings (kvplan's or an engine's, without the dashes, '_' read as '-') is `word`,
// and whether that spelling sets it false.
std::pair<const io::SettingDef*, bool> setting_spelled(const std::string& written) {
  auto bare = [](std::string n) {
    while (!n.empty() && n.front() == '-') n.erase(n.begin());
    std::replace(n.begin(), n.end(), '_', '-');
    return n;
  };
  const std::string word = bare(written);
  if (word.empty()) return {nullptr, false};
  for (const io::SettingDef& d : io::settings_table()) {
    for (const io::Spelling& sp : d.kvplan)
      if (bare(sp.name) == word) return {&d, sp.conv == io::Conv::negate};
    for (const auto& [kind, list] : d.engine)
      for (const io::Spelling& sp : list)
        if (bare(sp.name) == word) return {&d, sp.conv == io::Conv::negate};
  }
  return {nullptr, false};
}

DeploymentSource flags_source(const DeployArgs& a, const std::vector<std::string>& pasted) {
  DeploymentSource src;
  src.command = pasted;
  src.command_where = "command";
  src.set_hint = "--set";
  if (const auto* e = a.flags.get("engine")) src.engine_hint = e->text;
  if (const auto* v = a.flags.get("engine_version")) src.version_hint = v->text;
  for (const auto& [key, v] : a.flags.values()) src.settings.emplace_back(key, v.text, v.origin);
  add_set_values(a.set, src);
  return src;
}

void add_set_values(const std::vector<std::string>& set, DeploymentSource& src, bool spelling_check) {
  // --set with a flag's spelling (no-enable-prefix-caching, schedule-policy) instead of a key would be a variable
  // nothing reads, unless the pasted command names it ($tp, ${tp}, $(tp)): plan, check and log alike
  for (const std::string& kv : set) {
    if (!spelling_check) break;
    const std::string key = kv.substr(0, kv.find('='));
    if (key.empty() || key.size() == kv.size() || io::find_setting(key)) continue;
    if (const auto [def, negated] = setting_spelled(key); def && !reads_variable(src.command, key))
      throw InputError("--set " + key, "'" + key + "' is a flag's spelling, not a setting key",
                       "write --set " + def->key + "=" + (negated ? "false" : "VALUE") + ", or the flag itself");
  }
  for (const std::string& kv : set) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--set", "'" + kv + "' is not KEY=VALUE", "write --set max-model-len=8192 or --set MAX_SEQ_LEN=8192");
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (const auto* def = io::find_setting(key)) {
      src.settings.emplace_back(def->key, value, io::Origin{io::Origin::Kind::set, "--set " + key, key});
    } else {
      src.variables[key] = value;
      src.set_variables.push_back(key);
    }
  }
}

void unread_set_key(const std::string& key) {
  std::vector<std::string> known;
  for (const auto& sd : io::settings_table()) {
    std::string k = sd.key;
    std::replace(k.begin(), k.end(), '_', '-');
    known.push_back(k);
  }
  std::string dashed = key;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  const auto near = closest(dashed, known);
  throw InputError("--set " + key, "'" + key + "' is not a setting key, and no engine command reads it as $" + key,
                   near ? "did you mean --set " + *near + "=...? (docs/settings.md lists the keys)" : "use a key docs/settings.md lists");
}

std::vector<std::string> variable_readers(const std::vector<std::string>& command, const std::vector<std::pair<std::string, std::string>>& env,
                                          const std::vector<std::string>& setting_values) {
  std::vector<std::string> words = command;
  for (const auto& kv : env) words.push_back(kv.second);
  words.insert(words.end(), setting_values.begin(), setting_values.end());
  return words;
}

bool reads_variable(const std::vector<std::string>& words, const std::string& key) {
  // read where expanding the variable alone changes the word, in any of the forms the command reader expands
  const std::map<std::string, std::string> only = {{key, "\x01"}};
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) { return io::expand_variables(w, only) != w; });
}

namespace {

// --overheads FILE (kvplan log --save-overheads): its measured terms fill the budget terms not given on their own
void apply_overheads(io::SettingsBag& bag, const io::SettingValue& v, const std::string& base_dir) {
  std::string path = v.text;
  if (!base_dir.empty() && !path.empty() && path[0] != '/') path = base_dir + "/" + path;
  const io::json j = io::parse_json_file_for(path, v.origin.where);
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_object() || j["schema"].value("name", "") != "kvplan.overheads")
    throw InputError(v.origin.where, path + " is not a kvplan.overheads file", "write one with kvplan log LOG --save-overheads FILE");
  if (!j.contains("terms") || !j["terms"].is_object()) throw InputError(path + ": /terms", "missing", "write one with kvplan log LOG --save-overheads FILE");
  for (const char* key : {"activation_bytes", "non_torch_bytes", "cuda_graph_bytes", "cuda_context_bytes"}) {
    if (!j["terms"].contains(key)) continue;
    const io::json& t = j["terms"][key];
    if (!t.is_number_integer() || t.get<long long>() < 0) throw InputError(path + ": /terms/" + key, "must be a whole number of bytes >= 0");
    if (!bag.has(key)) bag.set(key, std::to_string(t.get<long long>()), io::Origin{io::Origin::Kind::file, path + ": /terms/" + key, key});
  }
}

}  // namespace

namespace {

bool is_engine_version(std::string v) {
  if (!v.empty() && (v[0] == 'v' || v[0] == 'V')) v.erase(0, 1);
  // a release: latest, b<digits> (a llama.cpp build), or one to four dot-separated numbers and a suffix of letters,
  // digits and . + - _ (0.10.1.1, 1.0.0rc3, 0.5.6.post1, 0.19.1rc1.dev339+gedc364896); not a sign (-1), another
  // engine's name (trtllm@1.0), words around a number (x0.5, abc1.0) or a shell fragment ('1.0; rm')
  if (v == "latest") return true;
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  if (v.size() > 1 && v[0] == 'b' && std::all_of(v.begin() + 1, v.end(), digit)) return true;
  if (v.empty() || !digit(v[0])) return false;
  int numbers = 0;
  size_t i = 0;
  while (i < v.size() && digit(v[i])) {
    ++numbers;
    while (i < v.size() && digit(v[i])) ++i;
    if (i + 1 < v.size() && v[i] == '.' && digit(v[i + 1])) ++i;
    else break;
  }
  const bool suffix_ok = std::all_of(v.begin() + static_cast<std::ptrdiff_t>(i), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '+' || c == '-' || c == '_';
  });
  return numbers <= 4 && suffix_ok;
}

}  // namespace

void check_engine_version(const std::string& v, const std::string& where) {
  if (!is_engine_version(v))
    throw InputError(where, "'" + v + "' is not an engine version", "give a release such as 0.11, 0.5.4 or b6000, or latest");
}

Deployment resolve_source(const DeploymentSource& src, const io::Profiles& profiles) {
  Deployment d;
  io::SettingsBag& bag = d.bag;
  // the engine named outside the command (kvplan flag, deployment field) decides how the command is read
  std::string hint = src.engine_hint, version = src.version_hint;
  bool empty_at = false;  // vllm@
  if (const auto at = hint.find('@'); at != std::string::npos) {
    if (version.empty()) version = hint.substr(at + 1);
    empty_at = at + 1 == hint.size() && src.version_hint.empty();
    hint.erase(at);
  }
  if (!version.empty() && (version[0] == 'v' || version[0] == 'V')) version.erase(0, 1);
  if (empty_at || !version.empty()) {
    // an engine version names a release (0.11, 0.5.4, b6000) or latest; point at where it was written
    std::string where = "--engine-version";
    for (const auto& [key, value, origin] : src.settings)
      if (key == "engine_version" || (key == "engine" && value.find('@') != std::string::npos)) where = origin.where;
    check_engine_version(version, where);
  }
  if (!src.command.empty()) {
    io::CommandContext ctx;
    ctx.version = version;
    ctx.variables = src.variables;
    ctx.base_dir = src.base_dir;
    for (const auto& [k, v] : src.env) ctx.variables.emplace(k, v);
    std::vector<std::string> argv = src.command;
    d.command = io::parse_engine_command(argv, hint, src.command_where, ctx);
    for (const auto& [k, v] : src.env)
      if (const auto b = io::env_binding(k, parse_engine(d.command.engine)); b && b->def->key != "model")
        bag.set(b->def->key, io::expand_variables(v, ctx.variables), io::Origin{io::Origin::Kind::env, src.env_where + ": env " + k, k});
    bag.set("engine", d.command.engine, io::Origin{io::Origin::Kind::command, src.command_where, "engine"});
    // the release the command runs (--engine NAME@VER, --engine-version, a docker image tag) is the one its rules and
    // defaults are planned at, not only its label; an --engine-version setting below still wins. Without one, the flag
    // table read names it
    d.engine_version = d.command.release.empty() ? d.command.version : d.command.release;
    if (!d.command.release.empty())
      bag.set("engine_version", d.command.release, io::Origin{io::Origin::Kind::command, src.command_where, "engine_version"});
    if (!d.command.model.empty()) bag.set("model", d.command.model, io::Origin{io::Origin::Kind::command, d.command.model_where, "model"});
    for (const auto& s : d.command.settings) bag.set(s.key, s.value, io::Origin{io::Origin::Kind::command, s.where, s.flag});
    for (const auto& w : d.command.warnings) d.warnings.push_back(w);
  }
  // a --set KEY that is no setting is a variable for the command ($KEY); one that no command or container env reads
  // is a misspelt key (--set max-modle-len=4096), which would otherwise change nothing without a word
  if (!src.set_variables.empty()) {
    std::vector<std::string> values;
    for (const auto& st : src.settings) values.push_back(std::get<1>(st));
    const std::vector<std::string> words = variable_readers(src.command, src.env, values);
    for (const std::string& key : src.set_variables)
      if (!reads_variable(words, key)) unread_set_key(key);
  }
  for (const auto& [key, value, origin] : src.settings) {
    if (key == "engine" && !src.command.empty()) continue;  // the command's engine (a mismatch was an error above)
    bag.set(key, value, origin);
  }
  if (const auto* o = bag.get("overheads")) apply_overheads(bag, *o, src.base_dir);
  // variables left unexpanded in settings that change memory, with no value given any other way
  std::vector<std::string> missing;
  std::string first_where;
  for (const auto& u : d.command.unresolved) {
    const auto* v = bag.get(u.key);
    if (v && v->origin.kind != io::Origin::Kind::command) continue;
    if (u.key == "model" && v) continue;
    if (first_where.empty()) first_where = u.where;
    const std::string dashed = [&] {
      std::string k = u.key;
      std::replace(k.begin(), k.end(), '_', '-');
      return k;
    }();
    missing.push_back(u.flag + " " + "$" + u.variable + " (" +
                      (src.set_hint == "--set" ? "--set " + u.variable + "=VALUE or --set " + dashed + "=VALUE"
                                               : "settings: " + dashed + ": VALUE, or variables: " + u.variable + ": VALUE") +
                      ")");
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : "; ") + m;
    throw InputError(first_where, "unexpanded variable" + std::string(missing.size() > 1 ? "s" : "") + " in settings that change memory: " + list);
  }

  // --gpu host: this machine, measured now; it enters the bag as a device of that memory and bandwidth
  std::optional<GpuSpec> host;
  if (const auto* g = bag.get("gpu"); g && (g->text == "host" || g->text == "HOST")) {
    host = measure_host();
    const io::Origin o = g->origin;
    if (!bag.has("gpu_memory_bytes")) bag.set("gpu_memory_bytes", std::to_string(host->memory_bytes), o);
    if (!bag.has("gpu_bandwidth")) bag.set("gpu_bandwidth", std::to_string(host->memory_bandwidth_bytes_per_s), o);
    bag.erase("gpu");  // the measured device replaces the word "host" (not a second value of --gpu)
    bag.set("gpu", "custom", o);
    warn("--gpu host: this machine, " + human_bytes(host->memory_bytes) + " of RAM, " +
         std::to_string(host->memory_bandwidth_bytes_per_s / 1000000000) + " GB/s contiguous read (measured now)");
  }
  io::BuiltDeployment b = io::build_deployment(bag, profiles);
  if (host) {
    host->memory_bytes = b.spec.gpu.memory_bytes;  // --gpu-memory-bytes and --gpu-bandwidth, when given, win
    host->memory_bandwidth_bytes_per_s = b.spec.gpu.memory_bandwidth_bytes_per_s;
    b.spec.gpu = *host;
  }
  d.base = b.spec;
  d.model = b.model;
  // a model named beside the command's (a deployment's model:, --set model=, a flag) replaces it: said when the two
  // resolve to different models (a 70B command checked as an 8B model would pass what cannot load)
  if (const auto* mv = bag.get("model"); mv && !d.command.model.empty() && mv->origin.kind != io::Origin::Kind::command) {
    try {
      // the same model by two names (Qwen/Qwen3-8B and qwen3-8b) resolves to one source: a profile or a config file
      std::string given, commanded;
      (void)profiles.model(mv->text, &given);
      (void)profiles.model(d.command.model, &commanded);
      if (given != commanded)
        d.warnings.push_back(mv->origin.where + ": model '" + mv->text + "' replaces the command's '" + d.command.model + "' (" +
                             d.command.model_where + "), another model (" + commanded + ")");
    } catch (const InputError&) {
      // the command's model does not resolve here (not cached, no built-in of its name): nothing to compare
    }
  }
  if (d.engine_version.empty() && !b.engine_version.empty()) d.engine_version = b.engine_version;
  const EngineKind kind = d.base.engine.kind;
  d.spec = io::at_origin(bag, kind, [&] {
    DeploymentSpec checked = d.base;
    if (src.layout_searched) checked.parallel.ep = 1;  // each layout the search tries takes the expert-parallel size
    return plan_spec(checked);
  });
  const Planner p = io::at_origin(bag, kind, [&] { return Planner(d.spec); });
  d.base.work.prefix_before_prompt = src.prefix_before_prompt;
  d.base.work.default_prompt = src.default_prompt;
  const ResolvedWorkload w = io::at_origin(bag, kind, [&] { return resolve_workload(d.base.work, p); });
  d.tokens = w.tokens;
  d.prompt = w.prompt;
  d.output = w.output;
  d.concurrency = w.concurrency;
  d.shared_prefix = w.shared_prefix;
  d.tokens_source = w.tokens_source;
  d.perf = d.base.perf;
  for (const auto& wmsg : d.base.model.warnings) d.warnings.push_back(wmsg);
  // the serving engines' memory rules are their CUDA / ROCm ones: on an Apple GPU (Metal: llama.cpp's) or a CPU host
  // (vLLM's CPU backend sizes its cache by VLLM_CPU_KVCACHE_SPACE) the plan still applies them, and says so
  const bool server = kind == EngineKind::vllm || kind == EngineKind::sglang || kind == EngineKind::trtllm;
  // vLLM's CUDA kernels are built for compute capability 7.0 and later (CMakeLists.txt CUDA_SUPPORTED_ARCHS; its
  // installation guide asks 7.0 or higher): a Pascal or older card needs an unofficial build
  if (kind == EngineKind::vllm && d.spec.gpu.vendor == "nvidia" && !d.spec.gpu.compute_capability.empty() &&
      std::atof(d.spec.gpu.compute_capability.c_str()) < 7.0)
    d.warnings.push_back("vLLM's CUDA builds need compute capability 7.0 or more (the " + d.spec.gpu.id + " has " + d.spec.gpu.compute_capability +
                         "): planned with its rules all the same");
  if (server && d.spec.gpu.vendor == "apple")
    d.warnings.push_back(std::string(engine_name(kind)) + " does not run on Apple GPUs: planned with its CUDA rules (use --engine llama.cpp for Metal)");
  if ((server || kind == EngineKind::generic) && d.spec.gpu.device_class == "cpu")
    d.warnings.push_back(std::string(engine_name(kind)) + " on a CPU host: planned with its GPU memory rules" +
                         (kind == EngineKind::vllm ? " (vLLM's CPU backend sizes its KV cache by VLLM_CPU_KVCACHE_SPACE instead)"
                          : kind == EngineKind::trtllm ? " (TensorRT-LLM has no CPU backend)"
                                                       : " (its CPU memory rules are not modelled)") +
                         "; use --engine llama.cpp for CPU inference");
  for (const ElemFormat f : {d.spec.kv.k_format, d.spec.kv.v_format}) {
    const std::string foreign = foreign_kv_format(kind, f);
    if (!foreign.empty() && std::find(d.warnings.begin(), d.warnings.end(), foreign) == d.warnings.end()) d.warnings.push_back(foreign);
  }
  for (auto& wmsg : workload_warnings(w, p)) d.warnings.push_back(std::move(wmsg));
  return d;
}

Planner plan_variant(const Deployment& d, const Parallel& par) {
  DeploymentSpec x = d.base;
  x.parallel = par;
  return plan_variant(d, x);
}

Planner plan_variant(const Deployment& d, const DeploymentSpec& x) {
  return io::at_origin(d.bag, x.engine.kind, [&] { return Planner(plan_spec(x)); });
}

std::vector<std::string> strict_failures(const Deployment& d, bool strict) {
  if (!strict) return {};
  return d.warnings;
}

void warn_strict(const std::vector<std::string>& failures) {
  // the warnings themselves are on stderr already: one line says they fail the run, not each again
  if (!failures.empty())
    warn("--strict: the " + std::string(failures.size() == 1 ? "warning above fails" : std::to_string(failures.size()) + " warnings above fail") +
         " the run (exit 1)");
}

ojson engine_json(const Planner& p) {
  const EngineReport& r = p.engine();
  ojson j = {{"engine", engine_name(r.kind)}, {"rules_version", r.rules_version}};
  switch (r.kind) {
    case EngineKind::vllm:
      j["available_kv_bytes"] = r.available_kv_bytes;
      j["block_size"] = r.block_size;
      j["page_bytes_per_layer"] = r.page_bytes;
      j["kv_cache_groups"] = r.num_groups;
      j["layers_per_group"] = r.group_size;
      j["padding_layers"] = r.padding_layers;
      j["num_gpu_blocks"] = r.num_gpu_blocks;
      j["kv_cache_tokens"] = r.kv_cache_tokens;
      j["max_concurrency"] = r.max_concurrency;
      j["max_model_len"] = p.spec().engine.max_model_len;
      break;
    case EngineKind::sglang:
      j["available_kv_bytes"] = r.available_kv_bytes;
      j["cell_size_bytes"] = r.cell_size;
      j["page_size"] = r.block_size;
      j["max_total_num_tokens"] = r.max_total_num_tokens;
      break;
    case EngineKind::trtllm:
      j["available_kv_bytes"] = r.available_kv_bytes;
      j["bytes_per_token"] = r.page_bytes;
      j["tokens_per_block"] = r.block_size;
      j["num_blocks"] = r.num_gpu_blocks;
      j["max_tokens"] = r.max_tokens;
      break;
    case EngineKind::llamacpp:
      j["n_ctx"] = r.n_ctx;
      j["n_ctx_seq"] = r.n_ctx_seq;
      j["kv_cells"] = r.kv_cells;
      j["swa_cells"] = r.swa_cells;
      j["kv_bytes"] = r.kv_bytes;
      j["k_bytes"] = r.k_bytes;
      j["v_bytes"] = r.v_bytes;
      j["state_bytes"] = r.state_bytes;
      j["gpu_kv_bytes"] = r.gpu_kv_bytes;
      j["gpu_layers"] = r.gpu_layers;
      j["total_layers"] = r.total_layers;
      if (r.n_cpu_moe > 0) j["n_cpu_moe"] = r.n_cpu_moe;
      j["host_input_bytes"] = r.host_input_bytes;
      break;
    case EngineKind::generic:
      j["available_kv_bytes"] = r.available_kv_bytes;
      j["block_size"] = r.block_size;
      break;
  }
  j["kv_pool_bytes"] = r.kv_pool_bytes;
  j["startup_ok"] = r.startup_ok;
  if (!r.startup_ok && r.estimated_max_model_len > 0) j["estimated_max_model_len"] = r.estimated_max_model_len;
  if (!r.startup_ok && r.suggested_gpu_layers >= 0) j["suggested_gpu_layers"] = r.suggested_gpu_layers;
  if (r.host_weight_bytes > 0) j["host_weight_bytes"] = r.host_weight_bytes;
  if (r.spec_extra_tokens > 0) j["speculative_extra_tokens_per_request"] = r.spec_extra_tokens;
  j["notes"] = plan_notes(p);
  return j;
}

std::vector<std::string> plan_notes(const Planner& p) {
  std::vector<std::string> notes = p.spec().model.notes;
  notes.insert(notes.end(), p.engine().notes.begin(), p.engine().notes.end());
  return notes;
}

// Paging compared with contiguous max-length reservation (PagedAttention paper, s3).
ojson paging_json(const Deployment& d, const Planner& p) {
  const i64 block = p.engine().block_size > 0 ? p.engine().block_size : 1;
  const i64 reserve = d.spec.engine.kind == EngineKind::llamacpp ? p.max_len() : d.spec.engine.max_model_len;
  const i64 pages = pages_for_tokens(d.tokens, block);
  return {{"block_tokens", block},
          {"tokens_per_request", d.tokens},
          {"paged_tokens_reserved", mul(pages, block)},
          {"paged_waste_tokens", page_waste_tokens(d.tokens, block)},
          {"paged_utilization", static_cast<double>(d.tokens) / static_cast<double>(mul(pages, block))},
          {"contiguous_tokens_reserved", reserve},
          {"contiguous_utilization", reserve > 0 ? static_cast<double>(d.tokens) / static_cast<double>(reserve) : 0.0}};
}

ojson perf_terms_json(const std::vector<PerfTerm>& terms) {
  ojson out = ojson::array();
  for (const auto& t : terms) out.push_back({{"term", t.name}, {"seconds", t.seconds}, {"basis", t.basis}});
  return out;
}

ojson perf_json(const PerfResult& r) {
  return {{"decode_context_tokens", r.decode_context},
          {"batch_per_replica", r.batch_per_replica},
          {"weight_bytes_read_per_step", r.weight_bytes_read},
          {"kv_bytes_read_per_step", r.kv_bytes_read},
          {"decode_flops_per_step", r.decode_flops},
          {"memory_time_s", r.memory_time_s},
          {"compute_time_s", r.compute_time_s},
          {"comm_time_s", r.comm_time_s},
          {"overhead_time_s", r.overhead_time_s},
          {"decode_step_s", r.decode_step_s},
          {"tpot_s", r.tpot_s},
          {"decode_tokens_per_s_per_gpu", r.decode_tokens_per_s_per_gpu},
          {"decode_tokens_per_s", r.decode_tokens_per_s},
          {"ttft_s", r.ttft_s < 0 ? ojson(nullptr) : ojson(r.ttft_s)},
          {"prefill_chunks", r.prefill_chunks},
          {"batch_time_s", r.batch_time_s < 0 ? ojson(nullptr) : ojson(r.batch_time_s)},
          {"output_tokens_per_s", r.output_tokens_per_s < 0 ? ojson(nullptr) : ojson(r.output_tokens_per_s)},
          {"decode_bound", r.decode_bound},
          {"prefill_bound", r.prefill_bound},
          {"weight_kernel", r.weight_kernel},
          {"weight_efficiency", r.weight_efficiency},
          {"bandwidth_efficiency", r.bandwidth_efficiency},
          {"compute_efficiency", r.compute_efficiency},
          {"step_overhead_s", r.step_overhead_s},
          {"decode_terms", perf_terms_json(r.decode_terms)},
          {"prefill_terms", perf_terms_json(r.prefill_terms)},
          {"notes", r.notes},
          {"coefficients", [&] {
             ojson c = ojson::object();
             for (const auto& f : perf_coefficient_fields()) c[f.name] = r.coefficients.*(f.member);
             return c;
           }()}};
}

// Where the memory lives: the GPU (per GPU), the host and disk KV tiers (per rank). A prefix found in a tier is not
// prefilled again: recompute_saved_s_per_token = TTFT / prompt tokens, the performance model's prefill time of one
// prompt of --prompt-tokens averaged per token (copy-in time not subtracted).
ojson tiers_json(const Planner& p, const PerfResult& perf, i64 prompt_tokens) {
  const EngineReport& r = p.engine();
  const double saved = perf.ttft_s > 0 && prompt_tokens > 0 ? perf.ttft_s / static_cast<double>(prompt_tokens) : 0.0;
  const ojson basis = "ttft_s / prompt_tokens: prefill time per token of one " + std::to_string(prompt_tokens) +
                      "-token prompt (StepTimeModel), copy-in time not subtracted";
  auto tier = [&](const char* name, i64 weights, i64 kv, std::optional<i64> tokens) {
    ojson j = {{"tier", name}, {"weights_bytes", weights}, {"kv_bytes", kv}};
    if (tokens) j["kv_tokens"] = *tokens;
    if (tokens && *tokens > 0 && saved > 0) {
      j["recompute_saved_s_per_token"] = saved;
      j["recompute_saved_basis"] = basis;
    }
    return j;
  };
  // each term the tier holds: name, bytes, kind of memory (mapped / anonymous / pinned / locked / disk), basis
  auto with_terms = [&](ojson j, const char* name) {
    ojson terms = ojson::array();
    for (const TierTerm& t : r.tier_terms)
      if (t.tier == name) terms.push_back({{"name", t.name}, {"bytes", t.bytes}, {"memory", t.memory}, {"basis", t.basis}});
    if (!terms.empty()) j["terms"] = terms;
    return j;
  };
  ojson tiers = ojson::array();
  tiers.push_back(tier("gpu", p.budget_bytes("weights"), r.kind == EngineKind::llamacpp ? r.gpu_kv_bytes : r.kv_pool_bytes, std::nullopt));
  if (r.host_weight_bytes > 0 || r.host_kv_bytes > 0) tiers.push_back(with_terms(tier("host", r.host_weight_bytes, r.host_kv_bytes, r.host_kv_tokens), "host"));
  if (r.disk_kv_bytes > 0) tiers.push_back(with_terms(tier("disk", 0, r.disk_kv_bytes, r.disk_kv_tokens), "disk"));
  return tiers;
}

ojson plan_results_json(const Deployment& d, const Planner& p) {
  const Cell c = p.cell(d.tokens, d.concurrency, d.shared_prefix);
  const ojson fit = {{"fits", c.fits},
                     {"limiting_factor", c.limiting},
                     {"tokens_per_request", d.tokens},
                     {"concurrency", d.concurrency},
                     {"kv_bytes_per_gpu", c.kv_bytes},
                     {"total_bytes_per_gpu", c.total_bytes},
                     {"headroom_bytes", c.headroom_bytes},
                     {"pool_units_needed", c.units_needed},
                     {"pool_units_available", c.units_available},
                     {"max_concurrency_at_tokens", p.max_concurrency(d.tokens, d.shared_prefix)},
                     {"max_tokens_at_concurrency", p.max_context(d.concurrency, d.shared_prefix)}};
  const PerfResult perf = estimate_perf(p, d.prompt, d.output, d.concurrency, d.perf);
  ojson tiers = tiers_json(p, perf, d.prompt);
  ojson out = {{"engine", engine_json(p)},
               {"budget", budget_json(p)},
               {"tiers", tiers},
          {"fit", fit},
          {"paging", paging_json(d, p)},
          {"performance", perf_json(perf)},
          {"critical_pipeline_stage", p.critical_stage()},
          {"warnings", d.warnings}};
  if (!p.devices().empty()) {
    // llama.cpp: every GPU's budget, in GPU order (the budget above is the fullest one's)
    ojson devs = ojson::array();
    for (const DeviceBudget& g : p.devices()) {
      ojson j = {{"gpu", g.index},          {"layers", g.layers},          {"output_layer", g.output_layer},
                 {"weights_bytes", g.weights}, {"kv_bytes", g.kv},          {"compute_buffer_bytes", g.compute}};
      if (p.spec().llama_draft) {
        j["draft_layers"] = g.draft_layers;
        j["draft_weights_bytes"] = g.draft_weights;
        j["draft_kv_bytes"] = g.draft_kv;
        j["draft_compute_buffer_bytes"] = g.draft_compute;
      }
      if (!p.spec().llama_lora_tensors.empty()) j["lora_adapters_bytes"] = g.lora;
      if (p.spec().llama_mmproj_bytes > 0) j["mmproj_bytes"] = g.mmproj;
      j["cuda_context_bytes"] = g.context;
      j["extra_bytes"] = g.extra;
      j["total_bytes"] = g.total;
      j["free_bytes"] = p.total_bytes() - g.total;
      devs.push_back(j);
    }
    out["devices"] = devs;
  }
  return out;
}

ojson budget_json(const Planner& p) {
  ojson arr = ojson::array();
  for (const auto& t : p.budget()) arr.push_back({{"term", t.name}, {"bytes", t.bytes}, {"basis", t.basis}, {"overridden", t.overridden}});
  return arr;
}

// With no version given every rule and performance gate takes its newest form (core/engine.cpp is_newest_version),
// newer than any one release kvplan names (llama.cpp's newest flag table is b7376, its newest rules b7830, a
// performance gate b10042): "latest" is what ran, and --engine-version latest reproduces it.
std::string resolved_engine_version(const std::string& given) { return given.empty() ? "latest" : given; }

ojson deployment_inputs_json(const Deployment& d) {
  ojson j = model_inputs_json(d.spec.model, d.spec.kv, d.model.arg, d.model.origin, d.model.mla_layout, d.model.ignore_windows,
                              d.model.weight_override);
  const PlanSpec& s = d.spec;
  j["gpu"] = s.gpu.id;
  j["gpu_memory_bytes"] = s.overrides.gpu_memory.value_or(s.gpu.memory_bytes);
  j["gpu_bandwidth_bytes_per_s"] = s.gpu.memory_bandwidth_bytes_per_s;
  j["engine"] = engine_name(s.engine.kind);
  j["engine_version"] = resolved_engine_version(d.engine_version);
  j["engine_rules"] = s.engine.rules ? s.engine.rules->label : "";
  j["tensor_parallel_size"] = s.parallel.tp;
  j["pipeline_parallel_size"] = s.parallel.pp;
  j["data_parallel_size"] = s.parallel.dp;
  j["expert_parallel_size"] = s.parallel.ep;
  j["gpus"] = deployment_gpus(s);
  const EngineSettings& e = s.engine;
  j["memory_fraction"] = e.memory_fraction;
  j["max_model_len"] = e.max_model_len;
  j["max_num_seqs"] = e.max_num_seqs;
  j["max_num_batched_tokens"] = e.max_num_batched_tokens;
  j["block_size"] = e.block_size;
  if (e.mm_image_limit >= 0) j["limit_mm_per_prompt_image"] = e.mm_image_limit;  // given only
  if (e.mm_video_limit >= 0) j["limit_mm_per_prompt_video"] = e.mm_video_limit;
  if (e.mm_max_pixels > 0) j["mm_max_pixels"] = e.mm_max_pixels;
  if (e.kind == EngineKind::llamacpp) {
    j["ctx_size"] = e.ctx_size;
    j["parallel"] = e.parallel;
    j["n_gpu_layers"] = e.n_gpu_layers;
    j["ubatch_size"] = e.ubatch_size;
    j["batch_size"] = e.batch_size;
    j["max_num_batched_tokens"] = e.batch_size;  // llama.cpp's step budget is -b, as results.pool says
    j["swa_full"] = e.swa_full;
    j["kv_unified"] = e.kv_unified.value_or(true);
    j["fit"] = e.fit.value_or(false);
    j["gpu_count"] = e.gpu_count;
    j["split_mode"] = e.split_mode == LlamaSplitMode::layer ? "layer" : e.split_mode == LlamaSplitMode::row ? "row" : "none";
    j["tensor_split"] = e.tensor_split;
    j["main_gpu"] = e.main_gpu;
    j["devices"] = e.devices;
    if (s.llama_draft) {
      const LlamaDraft& dr = *s.llama_draft;
      j["draft"] = {{"model", dr.model.id},
                    {"n_gpu_layers", dr.n_gpu_layers},
                    {"ctx_size", dr.ctx_size},
                    {"k_cache_type", format_info(dr.k_format).name},
                    {"v_cache_type", format_info(dr.v_format).name},
                    {"draft_max", dr.draft_max},
                    {"devices", dr.devices}};
    }
  }
  if (!d.base.kv_skip_layers.empty()) j["kv_cache_dtype_skip_layers"] = d.base.kv_skip_layers;  // given only
  if (e.decode_context_parallel) j["decode_context_parallel_size"] = *e.decode_context_parallel;
  if (e.attention_dp > 1) j["attention_data_parallel_size"] = e.attention_dp;
  if (e.spec.on()) {  // speculative decoding as resolved (SGLang's automatic steps / topk / draft tokens filled in)
    ojson sp = {{"method", spec_method_name(e.spec.method)}, {"num_speculative_tokens", e.spec.num_tokens}};
    if (e.kind == EngineKind::sglang) {
      sp["num_steps"] = e.spec.num_steps;
      sp["eagle_topk"] = e.spec.topk;
    }
    sp["draft_tensor_parallel_size"] = e.spec.draft_tp > 0 ? e.spec.draft_tp : s.parallel.tp;
    sp["draft_model"] = s.draft ? s.draft->id : "";
    sp["draft_layers"] = s.draft ? static_cast<i64>(s.draft->layers.size()) : 0;
    j["speculative"] = sp;
  }
  j["tokens_per_request"] = d.tokens;
  j["tokens_source"] = d.tokens_source;
  j["prompt_tokens"] = d.prompt;
  j["output_tokens"] = d.output;
  j["concurrency"] = d.concurrency;
  j["shared_prefix_tokens"] = d.shared_prefix;
  return j;
}

}  // namespace kvplan::cli
