// Engine flag tables by version (see engine_flags.hpp and planner/data/engine-flags/README.md).
#include "kvplan/io/engine_flags.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

#include "kvplan/core/error.hpp"

namespace kvplan::io {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(sep, start), s.size());
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  return s;
}

// Calls f(columns) for every data line of a table file (TAB-separated; blank lines and # comments skipped).
template <class F>
void for_each_row(const std::string& text, F f) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    f(line, split(line, '\t'));
  }
}

FlagArity arity_named(const std::string& a, const std::string& file) {
  if (a == "flag") return FlagArity::flag;
  if (a == "bool") return FlagArity::boolean;
  if (a == "value") return FlagArity::value;
  if (a == "optional") return FlagArity::optional;
  if (a == "list") return FlagArity::list;
  if (a == "list0") return FlagArity::list0;
  if (a == "json") return FlagArity::json;
  throw std::logic_error("kvplan: " + file + ": unknown arity '" + a + "'");
}

struct Registry {
  std::map<EngineKind, std::vector<FlagTable>> tables;  // sorted oldest first
  std::map<EngineKind, std::map<std::string, FlagEffectDef>> effects;
  std::map<std::string, std::map<std::string, std::string>> trtllm_options;  // version -> key -> type
};

FlagTable parse_table(EngineKind engine, const std::string& file, const std::string& text) {
  FlagTable t;
  t.engine = engine;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty()) continue;
    if (line[0] == '#') {
      const std::string c = trim(line.substr(1));
      if (c.rfind("version:", 0) == 0) t.version = trim(c.substr(8));
      else if (c.rfind("source:", 0) == 0) t.source = trim(c.substr(7));
      continue;
    }
    const auto cols = split(line, '\t');
    if (cols.size() < 2) throw std::logic_error("kvplan: " + file + ": line without a TAB: " + line);
    FlagDef f;
    for (const auto& n : split(cols[0], '|'))
      if (!n.empty()) f.names.push_back(trim(n));
    f.arity = arity_named(trim(cols[1]), file);
    if (cols.size() > 2) f.env = trim(cols[2]);
    const std::size_t at = t.flags.size();
    t.flags.push_back(f);
    for (const auto& n : f.names) t.index.emplace(normalize_flag_name(n), at);
  }
  if (t.version.empty()) throw std::logic_error("kvplan: " + file + ": no '# version:' header");
  return t;
}

// engine-flags/<engine>/<version>.<ext> (.flags, .options): the engine, the version (the file's stem) and the extension
struct VersionFile {
  EngineKind engine;
  std::string version, ext;
};
std::optional<VersionFile> version_file(const std::string& path) {
  const std::string rest = path.substr(path.find('/') + 1);
  const auto slash = rest.find('/');
  const auto dot = rest.rfind('.');
  if (slash == std::string::npos || dot == std::string::npos || dot < slash) return std::nullopt;
  const auto k = parse_engine(rest.substr(0, slash));
  if (!k) return std::nullopt;
  return VersionFile{*k, rest.substr(slash + 1, dot - slash - 1), rest.substr(dot + 1)};
}

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    for (const auto& f : embedded_engine_data()) {
      const std::string path = f.path;  // engine-flags/<engine>/<version>.flags or engine-flags/<engine>.effects
      const std::string rest = path.substr(path.find('/') + 1);
      if (rest.ends_with(".effects")) {
        const auto k = parse_engine(rest.substr(0, rest.size() - 8));
        if (!k) continue;
        for_each_row(f.text, [&](const std::string&, const std::vector<std::string>& cols) {
          if (cols.size() < 2) return;
          FlagEffectDef e;
          const std::string kind = trim(cols[1]);
          e.effect = kind == "unmodelled" ? FlagEffect::unmodelled : kind == "elsewhere" ? FlagEffect::elsewhere : FlagEffect::none;
          if (cols.size() > 2) e.why = trim(cols[2]);
          for (const auto& n : split(trim(cols[0]), '|')) {
            if (n.empty()) continue;
            FlagEffectDef one = e;
            std::string name = trim(n);
            if (const auto eq = name.find('='); eq != std::string::npos) {  // --backend=tensorrt: only with that value
              one.when = name.substr(eq + 1);
              name.erase(eq);
            }
            reg.effects[*k].emplace(normalize_flag_name(name), one);  // the first line for a flag wins
          }
        });
        continue;
      }
      const auto vf = version_file(path);
      if (!vf) continue;
      if (vf->ext == "options") {
        for_each_row(f.text, [&](const std::string&, const std::vector<std::string>& cols) {
          reg.trtllm_options[vf->version][trim(cols[0])] = cols.size() > 1 ? trim(cols[1]) : "";
        });
        continue;
      }
      FlagTable t = parse_table(vf->engine, path, f.text);
      // the file's name is its version (flag_table_versions lists the names without parsing the tables)
      if (t.version != vf->version)
        throw std::logic_error("kvplan: " + path + ": '# version: " + t.version + "' differs from the file's name");
      reg.tables[vf->engine].push_back(std::move(t));
    }
    for (auto& [k, v] : reg.tables)
      std::sort(v.begin(), v.end(), [](const FlagTable& a, const FlagTable& b) { return compare_versions(a.version, b.version) < 0; });
    return reg;
  }();
  return r;
}


}  // namespace

const char* flag_arity_name(FlagArity a) {
  switch (a) {
    case FlagArity::flag: return "flag";
    case FlagArity::boolean: return "bool";
    case FlagArity::value: return "value";
    case FlagArity::optional: return "optional";
    case FlagArity::list: return "list";
    case FlagArity::list0: return "list0";
    case FlagArity::json: return "json";
  }
  return "?";
}

std::string normalize_flag_name(std::string name) {
  if (name.rfind("--", 0) == 0) std::replace(name.begin() + 2, name.end(), '_', '-');
  return name;
}


const FlagDef* FlagTable::find(const std::string& spelling) const {
  const auto it = index.find(normalize_flag_name(spelling));
  return it == index.end() ? nullptr : &flags[it->second];
}

std::vector<std::string> flag_table_versions(EngineKind engine) {
  // from the embedded files' names, without parsing the tables (registry() checks each name against its table)
  std::vector<std::string> out;
  for (const auto& f : embedded_engine_data())
    if (const auto vf = version_file(f.path); vf && vf->engine == engine && vf->ext != "options") out.push_back(vf->version);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return compare_versions(a, b) < 0; });
  return out;
}

const FlagTable& flag_table(EngineKind engine, const std::string& requested, std::string* note) {
  const auto it = registry().tables.find(engine);
  if (it == registry().tables.end() || it->second.empty())
    throw InputError("engine", std::string("kvplan has no flag table for ") + engine_name(engine), "use another engine");
  const auto& v = it->second;
  if (requested.empty() || requested == "latest") {
    if (note && requested == "latest") *note = "'latest' read as " + std::string(engine_name(engine)) + " " + v.back().version + ", the newest kvplan knows";
    return v.back();
  }
  for (const auto& t : v)
    if (t.version == requested) return t;
  const auto want = version_components(requested);
  if (want.empty()) {
    if (note) *note = "version '" + requested + "' not understood; read as " + v.back().version + ", the newest kvplan knows";
    return v.back();
  }
  const FlagTable* prefix = nullptr;
  const FlagTable* older = nullptr;
  for (const auto& t : v) {
    const auto have = version_components(t.version);
    if (have.size() >= want.size() && std::equal(want.begin(), want.end(), have.begin())) prefix = &t;
    if (compare_versions(t.version, requested) <= 0) older = &t;
  }
  const FlagTable* chosen = prefix ? prefix : older ? older : &v.front();
  if (note && !prefix)
    *note = std::string(engine_name(engine)) + " " + requested + " has no flag table of its own; read with the " + chosen->version + " table" +
            (older ? "" : " (the oldest kvplan knows)");
  return *chosen;
}

std::optional<FlagSighting> find_flag_any_version(EngineKind engine, const std::string& spelling) {
  const auto it = registry().tables.find(engine);
  if (it == registry().tables.end()) return std::nullopt;
  for (auto t = it->second.rbegin(); t != it->second.rend(); ++t)
    if (const FlagDef* f = t->find(spelling)) return FlagSighting{&*t, f};
  return std::nullopt;
}

std::optional<FlagEffectDef> flag_effect(EngineKind engine, const std::string& spelling) {
  const auto it = registry().effects.find(engine);
  if (it == registry().effects.end()) return std::nullopt;
  const auto e = it->second.find(normalize_flag_name(spelling));
  if (e == it->second.end()) return std::nullopt;
  return e->second;
}

const std::map<std::string, std::string>& trtllm_option_keys(const std::string& version) {
  static const std::map<std::string, std::string> none;
  const auto& o = registry().trtllm_options;
  if (o.empty()) return none;
  if (const auto it = o.find(version); it != o.end()) return it->second;
  return o.rbegin()->second;  // newest
}

}  // namespace kvplan::io
