// The engine flag tables (planner/data/engine-flags) against the engines' own help text in
// tests/data/engine-help/: every option string a help file lists is in the .flags table of that engine
// version with an arity the help agrees with, and the command-line reader accepts it. Also: every
// settings-table engine spelling and llama.cpp environment variable names a real flag of the newest
// table, and every .effects line names a flag some table has.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "kvplan/core/engine.hpp"
#include "kvplan/io/cmdline.hpp"
#include "kvplan/io/engine_flags.hpp"
#include "kvplan/io/settings.hpp"

using namespace kvplan;
using Words = std::vector<std::string>;

namespace {

// One option as a help file lists it: its spellings and the metavar / value hint ("" for a switch).
struct HelpOption {
  Words spellings;
  std::string metavar;
  std::string env;  // llama.cpp "(env: NAME)"
  std::string line;
  int line_number = 0;
};

struct HelpFile {
  EngineKind engine = EngineKind::vllm;
  std::string version;
  std::string name;
  std::vector<HelpOption> options;
};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  return s;
}

// Splits "a, -b X, --c X" at ", " where a new option string begins (a metavar may hold ", " itself:
// ['auto', 'hf']).
Words option_parts(const std::string& invocation) {
  Words out;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 2 < invocation.size(); ++i)
    if (invocation.compare(i, 3, ", -") == 0) {
      out.push_back(invocation.substr(start, i - start));
      start = i + 2;
    }
  out.push_back(invocation.substr(start));
  return out;
}

// "--a A" -> spelling "--a", metavar "A"
void add_part(HelpOption& o, const std::string& part) {
  const std::size_t space = part.find(' ');
  o.spellings.push_back(part.substr(0, space));
  if (space != std::string::npos && o.metavar.empty()) o.metavar = trim(part.substr(space + 1));
}

// argparse (vLLM, SGLang): "  --a A, -b A   help" -- the invocation is indented two spaces and ends at
// two spaces or the end of the line; help text is indented further.
std::optional<HelpOption> argparse_line(const std::string& line) {
  if (line.size() < 4 || line.compare(0, 3, "  -") != 0) return std::nullopt;
  const std::size_t end = line.find("  ", 2);
  HelpOption o;
  for (const auto& p : option_parts(line.substr(2, end == std::string::npos ? std::string::npos : end - 2)))
    add_part(o, p);
  return o;
}

// click as rendered by sphinx-click (trtllm-serve): "--name <metavar>" at column 0.
std::optional<HelpOption> click_line(const std::string& line) {
  if (line.rfind("--", 0) != 0) return std::nullopt;
  HelpOption o;
  add_part(o, trim(line));
  return o;
}

// llama.cpp common_arg::to_string: "-c, --ctx-size N\t(env: LLAMA_ARG_CTX_SIZE)".
std::optional<HelpOption> llama_line(const std::string& line) {
  if (line.empty() || line[0] != '-') return std::nullopt;
  const std::size_t tab = line.find('\t');
  HelpOption o;
  std::size_t start = 0;
  const std::string left = line.substr(0, tab);
  while (true) {
    const std::size_t comma = left.find(", ", start);
    add_part(o, left.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 2;
  }
  if (tab != std::string::npos) {
    const std::string env = trim(line.substr(tab + 1));
    if (env.rfind("(env: ", 0) == 0 && env.back() == ')') o.env = env.substr(6, env.size() - 7);
  }
  return o;
}

std::vector<HelpFile> help_files() {
  std::vector<HelpFile> out;
  const std::filesystem::path dir = std::filesystem::path(KVPLAN_TEST_DATA) / "engine-help";
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    const std::string name = f.path().filename().string();
    if (f.path().extension() != ".txt") continue;
    HelpFile h;
    h.name = name;
    const std::string stem = f.path().stem().string();
    for (const auto& [prefix, kind] :
         std::vector<std::pair<std::string, EngineKind>>{{"llama-server-", EngineKind::llamacpp},
                                                         {"trtllm-serve-", EngineKind::trtllm},
                                                         {"sglang-", EngineKind::sglang},
                                                         {"vllm-", EngineKind::vllm}})
      if (stem.rfind(prefix, 0) == 0) {
        h.engine = kind;
        h.version = stem.substr(prefix.size());
      }
    REQUIRE_FALSE(h.version.empty());
    std::ifstream in(f.path());
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.rfind("#", 0) == 0) continue;  // the header saying where the text came from
      std::optional<HelpOption> o = h.engine == EngineKind::llamacpp ? llama_line(line)
                                    : h.engine == EngineKind::trtllm ? click_line(line)
                                                                     : argparse_line(line);
      if (!o) continue;
      o->line = line;
      o->line_number = n;
      h.options.push_back(*o);
    }
    out.push_back(h);
  }
  std::sort(out.begin(), out.end(), [](const HelpFile& a, const HelpFile& b) { return a.name < b.name; });
  return out;
}

bool negation_of(const std::string& neg, const std::string& pos) {
  return pos.rfind("--", 0) == 0 && neg == "--no-" + pos.substr(2);
}

// The option lists X and --no-X (argparse BooleanOptionalAction, llama.cpp args_neg).
bool has_negation(const HelpOption& o) {
  for (const auto& a : o.spellings)
    for (const auto& b : o.spellings)
      if (negation_of(a, b)) return true;
  return false;
}

// A metavar with more than one word outside <...> (llama.cpp "FNAME SCALE") takes several values.
bool several_words(const std::string& metavar) {
  int depth = 0;
  for (char c : metavar) {
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (c == ' ' && depth == 0) return true;
  }
  return false;
}

// The arities the help's form allows.
std::set<io::FlagArity> arities_for(EngineKind engine, const HelpOption& o) {
  using A = io::FlagArity;
  const std::string& m = o.metavar;
  if (engine == EngineKind::trtllm)
    return m.empty() ? std::set<A>{A::flag, A::boolean} : std::set<A>{A::value, A::json};
  if (engine == EngineKind::llamacpp) {
    if (m.empty()) return {A::flag, A::boolean};
    if (several_words(m)) return {A::list};
    return {A::value, A::json, A::optional, A::list};  // llama.cpp takes exactly one value even after [on|off|auto]
  }
  // argparse: nargs='+' prints "X [X ...]", '*' "[X ...]", '?' "[X]"
  if (has_negation(o)) return {A::boolean};
  if (m.empty()) return {A::flag};
  const std::size_t space = m.find(' ');
  if (space != std::string::npos && m.compare(space, std::string::npos, " [" + m.substr(0, space) + " ...]") == 0)
    return {A::list};
  if (m.front() == '[' && m.size() > 5 && m.compare(m.size() - 5, 5, " ...]") == 0) return {A::list0};
  if (m.front() == '[' && m.back() == ']' && m.find_first_of(" ',") == std::string::npos) return {A::optional};
  return {A::value, A::json};
}

// The table's definition of a spelling: itself, or the bool it negates.
const io::FlagDef* table_def(const io::FlagTable& t, const std::string& spelling) {
  if (const io::FlagDef* f = t.find(spelling)) return f;
  if (spelling.rfind("--no-", 0) == 0)
    if (const io::FlagDef* f = t.find("--" + spelling.substr(5)); f && f->arity == io::FlagArity::boolean) return f;
  return nullptr;
}

Words command_for(EngineKind engine, const std::string& spelling, io::FlagArity arity) {
  Words argv;
  switch (engine) {
    case EngineKind::vllm:
      argv = {"vllm", "serve", "m"};
      break;
    case EngineKind::sglang:
      argv = {"python3", "-m", "sglang.launch_server", "--model-path", "m"};
      break;
    case EngineKind::trtllm:
      argv = {"trtllm-serve", "serve", "m"};
      break;
    default:
      argv = {"llama-server", "-m", "m.gguf"};
      break;
  }
  argv.push_back(spelling);
  if (arity == io::FlagArity::json)
    argv.push_back("{}");
  else if (arity != io::FlagArity::flag && arity != io::FlagArity::boolean)
    argv.push_back("1");
  return argv;
}

std::string engine_label(EngineKind k) { return engine_name(k); }

}  // namespace

TEST_CASE("the engine help files are read: each lists options", "[engine-flags]") {
  const auto files = help_files();
  REQUIRE(files.size() >= 11);  // 4 vLLM, 4 SGLang, 1 trtllm-serve, 2 llama-server
  for (const auto& h : files) {
    INFO(h.name);
    CHECK(h.options.size() >= 20);
    // every spelling the parser found looks like an option string
    for (const auto& o : h.options)
      for (const auto& s : o.spellings) {
        INFO(h.name << ":" << o.line_number << ": " << o.line);
        CHECK(s.size() >= 2);
        CHECK(s[0] == '-');
        CHECK(s.find_first_of(",[]{}<>= ") == std::string::npos);
      }
    // and a table of that version exists
    REQUIRE_NOTHROW(io::flag_table(h.engine, h.version));
    CHECK(io::flag_table(h.engine, h.version).version == h.version);
  }
}

TEST_CASE("every option a help file lists is in the version's table with a consistent arity", "[engine-flags]") {
  int spellings = 0;
  for (const auto& h : help_files()) {
    const io::FlagTable& table = io::flag_table(h.engine, h.version);
    for (const auto& o : h.options) {
      const auto allowed = arities_for(h.engine, o);
      for (const auto& s : o.spellings) {
        INFO(h.name << ":" << o.line_number << ": " << o.line << "\n  spelling " << s);
        ++spellings;
        const io::FlagDef* f = table_def(table, s);
        CHECK(f != nullptr);
        if (!f) continue;
        INFO("table arity " << io::flag_arity_name(f->arity));
        CHECK(allowed.count(f->arity) == 1);
        // llama.cpp: the environment variable the help names is the table's
        if (!o.env.empty() && !f->env.empty()) CHECK(f->env == o.env);
      }
    }
  }
  CHECK(spellings > 2000);
}

TEST_CASE("the reader accepts every option a help file lists, with a sample value", "[engine-flags]") {
  for (const auto& h : help_files()) {
    const io::FlagTable& table = io::flag_table(h.engine, h.version);
    io::CommandContext ctx;
    ctx.version = h.version;
    for (const auto& o : h.options)
      for (const auto& s : o.spellings) {
        const io::FlagDef* f = table_def(table, s);
        if (!f) continue;  // reported by the test above
        const Words argv = command_for(h.engine, s, f->arity);
        std::string shown;
        for (const auto& w : argv) shown += w + " ";
        INFO(h.name << ":" << o.line_number << ": " << shown);
        io::EngineCommand c;
        REQUIRE_NOTHROW(c = io::parse_engine_command(argv, engine_label(h.engine), h.name, ctx));
        CHECK(c.version == h.version);
        CHECK(c.unknown.empty());
      }
  }
}

TEST_CASE("settings-table engine spellings are flags of the newest table", "[engine-flags]") {
  // Spellings the newest table lacks but an older one has, kept so older commands are read; each says why.
  const std::set<std::pair<EngineKind, std::string>> older_only = {
      {EngineKind::vllm, "--rope-scaling"},  // vLLM 0.8.3-0.11.0; 0.26.0 takes rope scaling through --hf-overrides
      {EngineKind::vllm, "--disable-async-output-proc"},  // vLLM V0's flag, in the 0.8.3 and 0.10.0 tables; gone with V0
  };
  // Spellings no table has, read from other entry points of the same engine (each says which).
  const std::set<std::pair<EngineKind, std::string>> other_entry_points = {
      {EngineKind::trtllm, "--model_path"},              // python -m dynamo.trtllm --model-path
      {EngineKind::trtllm, "--tensor_parallel_size"},    // dynamo.trtllm --tensor-parallel-size
      {EngineKind::trtllm, "--pipeline_parallel_size"},  // dynamo.trtllm --pipeline-parallel-size
      {EngineKind::trtllm, "--expert_parallel_size"},    // dynamo.trtllm --expert-parallel-size
      {EngineKind::trtllm, "--free_gpu_memory_fraction"},  // dynamo.trtllm --free-gpu-memory-fraction
      {EngineKind::llamacpp, "--no-kv-unified"},         // llama.cpp builds after b7376 (-no-kvu, --no-kv-unified)
  };
  int checked = 0;
  for (const auto& d : io::settings_table())
    for (const auto& [engine, spellings] : d.engine) {
      const io::FlagTable& newest = io::flag_table(engine, "");
      for (const auto& sp : spellings) {
        INFO(d.key << ": " << engine_label(engine) << " " << newest.version << " " << sp.name);
        ++checked;
        if (older_only.count({engine, sp.name})) {
          bool found = false;
          for (const auto& v : io::flag_table_versions(engine))
            found = found || table_def(io::flag_table(engine, v), sp.name);
          CHECK(found);
          CHECK(table_def(newest, sp.name) == nullptr);  // else it belongs in the newest check
          continue;
        }
        if (other_entry_points.count({engine, sp.name})) {
          for (const auto& v : io::flag_table_versions(engine)) CHECK(table_def(io::flag_table(engine, v), sp.name) == nullptr);
          continue;
        }
        CHECK(table_def(newest, sp.name) != nullptr);
      }
    }
  CHECK(checked > 30);
}

TEST_CASE("settings-table environment variables are llama.cpp's", "[engine-flags]") {
  // llama.cpp reads LLAMA_ARG_* (common/arg.cpp set_env); VLLM_* variables are vLLM's own environment, SGLANG_* SGLang's
  // (python/sglang/srt/environ.py), LMCACHE_* LMCache's
  const io::FlagTable& newest = io::flag_table(EngineKind::llamacpp, "");
  std::set<std::string> envs;
  for (const auto& f : newest.flags)
    if (!f.env.empty()) envs.insert(f.env);
  for (const auto& d : io::settings_table())
    for (const auto& sp : d.env) {
      INFO(d.key << ": " << sp.name);
      if (sp.name.rfind("VLLM_", 0) == 0 || sp.name.rfind("SGLANG_", 0) == 0) continue;
      if (sp.name.rfind("LMCACHE_", 0) == 0) {  // LMCache's own (lmcache/v1/config.py), read in vLLM's LMCacheConnectorV1
        CHECK(io::env_binding(sp.name).has_value());
        continue;
      }
      CHECK(envs.count(sp.name) == 1);
      CHECK(io::env_binding(sp.name).has_value());
    }
  // and each one is read from a command's environment
  for (const auto& f : newest.flags)
    if (const auto b = io::env_binding(f.env); b && !f.env.empty()) {
      INFO(f.env);
      CHECK(io::engine_flag_binding(EngineKind::llamacpp, f.names.front()).has_value());
    }
}

TEST_CASE("every .effects line names a flag of some version's table", "[engine-flags]") {
  // trtllm.effects also classifies trtllm-serve spellings newer than the only table (1.1.0), as its header says:
  // --cluster_size's later name, context parallelism, --config (alias of --extra_llm_api_options), chunked prefill.
  const std::set<std::string> newer_trtllm = {"--moe-cluster-parallel-size", "--cp-size", "--context-parallel-size",
                                              "--config", "--enable-chunked-prefill"};
  int lines = 0;
  for (const auto& file : io::embedded_engine_data()) {
    const std::string path = file.path;
    if (path.size() < 8 || path.compare(path.size() - 8, 8, ".effects") != 0) continue;
    std::string engine = path.substr(path.find('/') + 1);
    engine.erase(engine.size() - 8);
    if (engine.rfind("interim-", 0) == 0) engine.erase(0, 8);
    const auto kind = parse_engine(engine);
    REQUIRE(kind);
    std::istringstream in(file.text);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      line = trim(line);
      if (line.empty() || line[0] == '#') continue;
      ++lines;
      const std::string names = line.substr(0, line.find('\t'));
      INFO(path << ":" << n << ": " << line);
      CHECK(line.find('\t') != std::string::npos);
      std::size_t start = 0;
      while (start <= names.size()) {
        const std::size_t bar = std::min(names.find('|', start), names.size());
        std::string name = names.substr(start, bar - start);
        start = bar + 1;
        name = name.substr(0, name.find('='));  // --backend=tensorrt: the effect holds for that value
        INFO("flag " << name);
        bool found = false;
        for (const auto& v : io::flag_table_versions(*kind)) found = found || table_def(io::flag_table(*kind, v), name);
        if (*kind == EngineKind::trtllm && newer_trtllm.count(io::normalize_flag_name(name))) continue;
        CHECK(found);
      }
    }
  }
  CHECK(lines > 500);
}

TEST_CASE("the flag-table versions read from file names are the tables' own, oldest first", "[engine-flags]") {
  for (const EngineKind engine : {EngineKind::vllm, EngineKind::sglang, EngineKind::trtllm, EngineKind::llamacpp}) {
    const auto versions = io::flag_table_versions(engine);
    INFO(engine_name(engine));
    REQUIRE_FALSE(versions.empty());
    for (size_t i = 0; i < versions.size(); ++i) {
      CHECK(io::flag_table(engine, versions[i]).version == versions[i]);
      if (i > 0) CHECK(compare_versions(versions[i - 1], versions[i]) < 0);
    }
    CHECK(io::flag_table(engine, "latest").version == versions.back());
  }
  // vLLM 0.8.3 sorts before 0.10.0 (numerically, not as text)
  const auto v = io::flag_table_versions(EngineKind::vllm);
  CHECK(std::find(v.begin(), v.end(), "0.8.3") < std::find(v.begin(), v.end(), "0.10.0"));
}


namespace {

// docs/settings.md as the settings table writes it: every --set / settings: key, its group, and the spellings that
// reach it (kvplan's flags, each engine's flags, TensorRT-LLM's option YAML, environment variables)
std::string settings_markdown() {
  using kvplan::EngineKind;
  std::ostringstream o;
  o << "# Setting keys\n\n"
       "Every key `--set KEY=VALUE`, a deployment file's `settings:` and the JSON `inputs` take, in `kvplan plan --help` order\n"
       "(`-` and `_` are the same in a key: `max-model-len` is `max_model_len`), and the spellings that reach it. Generated\n"
       "from `planner/src/io/settings.cpp` (`settings_table()`); `tests/unit/test_engine_flags.cpp` (\"docs/settings.md lists\n"
       "every setting\") fails when the two differ and, with `KVPLAN_UPDATE_DOCS=1`, rewrites this file.\n\n"
       "| key | group | kvplan flags | engine flags | what it is |\n|---|---|---|---|---|\n";
  const auto cell = [](std::string s) {
    std::string out;
    for (char c : s) out += c == '|' ? std::string("\\\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
    return out;
  };
  for (const auto& d : kvplan::io::settings_table()) {
    std::string ours, theirs;
    for (const auto& sp : d.kvplan) ours += (ours.empty() ? "" : ", ") + std::string("`") + sp.name + "`";
    for (const auto& [kind, spellings] : d.engine) {
      std::string names;
      for (const auto& sp : spellings) names += (names.empty() ? "" : " ") + std::string("`") + sp.name + "`";
      if (!names.empty()) theirs += (theirs.empty() ? "" : "; ") + std::string(kvplan::engine_name(kind)) + " " + names;
    }
    for (const auto& sp : d.trtllm_yaml) theirs += (theirs.empty() ? "" : "; ") + std::string("trtllm YAML `") + sp.name + "`";
    for (const auto& sp : d.env) theirs += (theirs.empty() ? "" : "; ") + std::string("env `") + sp.name + "`";
    o << "| `" << d.key << "` | " << d.group << " | " << cell(ours) << " | " << cell(theirs) << " | " << cell(d.help) << " |\n";
  }
  return o.str();
}

}  // namespace

TEST_CASE("docs/settings.md lists every setting", "[front-doors]") {
  const std::string path = std::string(KVPLAN_SCHEMA_DIR) + "/../settings.md";
  const std::string want = settings_markdown();
  if (const char* u = std::getenv("KVPLAN_UPDATE_DOCS"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << want;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream have;
  have << in.rdbuf();
  INFO("regenerate with KVPLAN_UPDATE_DOCS=1 build/release/tests/kvplan_tests \"docs/settings.md lists every setting\"");
  CHECK(have.str() == want);
}
