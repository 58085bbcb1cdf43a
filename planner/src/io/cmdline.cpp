// Serving-engine command lines (see cmdline.hpp): a POSIX-shell word splitter, the entry points, and a
// reader that takes each flag as the engine's own parser does, against the flag table of the engine
// version planned (engine_flags.hpp). A flag the settings table binds (settings.cpp) becomes a kvplan
// setting; one the version lacks is a warning with "did you mean"; one that changes memory in a way
// kvplan does not model is a warning naming it (<engine>.effects); the rest are accepted silently.
#include "kvplan/io/cmdline.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>

#include "kvplan/core/checked.hpp"
#include "kvplan/core/engine.hpp"
#include "kvplan/core/suggest.hpp"
#include "kvplan/core/units.hpp"
#include "kvplan/io/engine_flags.hpp"
#include "kvplan/io/manifests.hpp"
#include "kvplan/io/settings.hpp"
#include "kvplan/io/yaml_doc.hpp"

namespace kvplan::io {

// ---------------------------------------------------------------------------------------------------
// Shell splitting
// ---------------------------------------------------------------------------------------------------

namespace {

// Control operators and redirections, longest first.
constexpr std::string_view kOperators[] = {"<<-", "&>>", "&&", "||", ";;", "|&", ">>", "<<", ">&",
                                           "<&",  "<>",  ">|", "&>", "|",  "&",  ";",  "<",  ">"};

bool is_operator_char(char c) { return c == '|' || c == '&' || c == ';' || c == '<' || c == '>'; }

class Splitter {
 public:
  Splitter(const std::string& text, const std::string& where) : t_(text), where_(where) {}

  std::vector<std::string> run() {
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\\') {
        backslash();
      } else if (c == '\'') {
        single_quoted();
      } else if (c == '"') {
        double_quoted();
      } else if ((c == '$' && (peek(1) == '(' || peek(1) == '{')) || c == '`' || (c == '{' && peek(1) == '{')) {
        word_ += group();
        in_word_ = true;
      } else if (c == '#' && !in_word_) {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;  // comment: up to the newline, which ends the line below
      } else if (c == '\n') {
        end_word();
        advance();
        heredoc_bodies();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        end_word();
        ++i_;
      } else if (is_operator_char(c)) {
        op();
      } else {
        word_ += c;
        in_word_ = true;
        ++i_;
      }
    }
    end_word();
    return out_;
  }

 private:
  const std::string& t_;
  const std::string& where_;
  std::size_t i_ = 0;
  int line_ = 1;
  std::vector<std::string> out_;
  std::string word_;
  bool in_word_ = false;  // a word has begun (it may be empty: '')
  bool quoted_ = false;   // the word holds quoted text (so it is no redirection's fd number)
  bool delimiter_next_ = false, strip_tabs_ = false;
  std::vector<std::pair<std::string, bool>> heredocs_;  // delimiter, <<- (strip leading tabs)

  char peek(std::size_t k) const { return i_ + k < t_.size() ? t_[i_ + k] : '\0'; }
  char advance() {
    const char c = t_[i_++];
    if (c == '\n') ++line_;
    return c;
  }

  void end_word() {
    if (!in_word_) return;
    if (delimiter_next_) {
      heredocs_.emplace_back(word_, strip_tabs_);
      delimiter_next_ = false;
    }
    out_.push_back(word_);
    word_.clear();
    in_word_ = quoted_ = false;
  }

  void backslash() {
    if (peek(1) == '\n' || (peek(1) == '\r' && peek(2) == '\n')) {  // line continuation
      i_ += peek(1) == '\r' ? 3 : 2;
      ++line_;
    } else if (i_ + 1 < t_.size()) {
      ++i_;
      word_ += advance();
      in_word_ = true;
    } else {  // a lone backslash at the end stays
      word_ += '\\';
      in_word_ = true;
      ++i_;
    }
  }

  [[noreturn]] void unterminated(const std::string& what, int line, const std::string& fix) const {
    throw InputError(where_, "unterminated " + what + " starting at line " + std::to_string(line), fix);
  }

  void single_quoted() {
    const int start = line_;
    ++i_;
    while (true) {
      if (i_ >= t_.size()) unterminated("' quote", start, "close the quote");
      const char c = advance();
      if (c == '\'') break;
      word_ += c;
    }
    in_word_ = quoted_ = true;
  }

  void double_quoted() {
    const int start = line_;
    ++i_;
    while (true) {
      if (i_ >= t_.size()) unterminated("\" quote", start, "close the quote");
      const char c = t_[i_];
      if (c == '"') {
        ++i_;
        break;
      }
      if (c == '\\' && (peek(1) == '"' || peek(1) == '\\' || peek(1) == '$' || peek(1) == '`' || peek(1) == '\n')) {
        ++i_;
        const char e = advance();
        if (e != '\n') word_ += e;  // backslash-newline inside double quotes joins the lines
      } else if ((c == '$' && (peek(1) == '(' || peek(1) == '{')) || c == '`') {
        word_ += group();
      } else {
        word_ += advance();
      }
    }
    in_word_ = quoted_ = true;
  }

  // $(...), $((...)), ${...}, `...` and Helm's {{ ... }}: copied as written (kvplan expands nothing).
  std::string group() {
    const int start = line_;
    const std::size_t begin = i_;
    if (t_[i_] == '`') {
      ++i_;
      while (i_ < t_.size() && t_[i_] != '`') {
        if (t_[i_] == '\\') advance();
        if (i_ < t_.size()) advance();
      }
      if (i_ >= t_.size()) unterminated("`", start, "close it with `");
      ++i_;
      return t_.substr(begin, i_ - begin);
    }
    if (t_[i_] == '{') {  // {{ ... }}
      const std::size_t end = t_.find("}}", i_ + 2);
      if (end == std::string::npos) unterminated("{{", start, "close it with }}");
      while (i_ < end + 2) advance();
      return t_.substr(begin, i_ - begin);
    }
    const char open = t_[i_ + 1], close = open == '(' ? ')' : '}';
    i_ += 2;
    int depth = 1;
    while (i_ < t_.size() && depth > 0) {
      const char c = advance();
      if (c == '\\' && i_ < t_.size()) {
        advance();
      } else if (c == '\'') {
        while (i_ < t_.size() && t_[i_] != '\'') advance();
        if (i_ < t_.size()) ++i_;
      } else if (c == '"') {
        while (i_ < t_.size() && t_[i_] != '"') {
          if (t_[i_] == '\\') advance();
          if (i_ < t_.size()) advance();
        }
        if (i_ < t_.size()) ++i_;
      } else if (c == open) {
        ++depth;
      } else if (c == close) {
        --depth;
      }
    }
    if (depth > 0) unterminated(std::string("$") + open, start, std::string("close it with ") + close);
    return t_.substr(begin, i_ - begin);
  }

  void op() {
    std::string_view found;
    for (std::string_view o : kOperators)
      if (t_.compare(i_, o.size(), o) == 0) {
        found = o;
        break;
      }
    std::string token(found);
    i_ += found.size();
    const bool redirect = token[0] == '<' || token[0] == '>';
    const bool fd_number = in_word_ && !quoted_ && !word_.empty() &&
                           std::all_of(word_.begin(), word_.end(), [](unsigned char ch) { return std::isdigit(ch); });
    if (redirect && fd_number) {  // 2>&1: the digits belong to the redirection
      token = word_ + token;
      word_.clear();
      in_word_ = false;
    } else {
      end_word();
    }
    out_.push_back(token);
    if (found == "<<" || found == "<<-") {
      delimiter_next_ = true;
      strip_tabs_ = found == "<<-";
    }
  }

  // After the newline that ends a line with here-documents: skip their bodies (they are stdin).
  void heredoc_bodies() {
    for (const auto& [delimiter, strip] : heredocs_) {
      while (i_ < t_.size()) {
        const std::size_t eol = std::min(t_.find('\n', i_), t_.size());
        std::string_view line(t_.data() + i_, eol - i_);
        i_ = eol;
        if (i_ < t_.size()) advance();
        if (strip) line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
        if (line == delimiter) break;
      }
    }
    heredocs_.clear();
  }
};

}  // namespace

std::vector<std::string> shell_split(const std::string& text, const std::string& where) {
  return Splitter(text, where).run();
}

// ---------------------------------------------------------------------------------------------------
// Words
// ---------------------------------------------------------------------------------------------------

namespace {

struct EngineInfo {
  EngineKind kind;
  std::string label;              // as people write it
  bool abbreviations = false;     // argparse: a unique prefix of a long flag selects it
  bool positional_model = false;  // vllm serve MODEL, trtllm-serve MODEL
  std::string model_hint;         // how the engine takes the model, for "unexpected argument"
  std::vector<std::string> config_flags;  // flags naming a file of more settings
};

const EngineInfo& engine_info(EngineKind k) {
  static const std::map<EngineKind, EngineInfo> m = {
      {EngineKind::vllm, {EngineKind::vllm, "vLLM", true, true, "vllm serve takes one positional argument, the model", {"--config"}}},
      {EngineKind::sglang, {EngineKind::sglang, "SGLang", true, false, "SGLang takes the model as --model-path", {"--config"}}},
      {EngineKind::trtllm,
       {EngineKind::trtllm, "TensorRT-LLM", false, true, "trtllm-serve takes one positional argument, the model",
        {"--config", "--extra_llm_api_options", "--extra-engine-args"}}},
      {EngineKind::llamacpp, {EngineKind::llamacpp, "llama.cpp", false, false, "llama-server takes the model as -m/--model", {}}},
  };
  return m.at(k);
}

bool is_flag(const std::string& w) {  // "-1" and "-" are values, not flags
  return w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1])) && w[1] != '.';
}

bool is_control(const std::string& w) {
  return w == "|" || w == "||" || w == "&" || w == "&&" || w == ";" || w == ";;" || w == "|&";
}

bool is_redirect(const std::string& w) {
  const std::size_t d = w.find_first_not_of("0123456789");
  if (d == std::string::npos) return false;
  const std::string_view op = std::string_view(w).substr(d);
  for (std::string_view o : kOperators)
    if (op == o) return o[0] == '<' || o[0] == '>' || (o[0] == '&' && o.size() > 1 && o[1] == '>');
  return false;
}

// Splits the words at control operators (|, &&, ;, & ...) and drops redirections with their targets.
std::vector<std::vector<std::string>> simple_commands(const std::vector<std::string>& argv) {
  std::vector<std::vector<std::string>> out(1);
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (is_control(argv[i])) {
      if (!out.back().empty()) out.emplace_back();
    } else if (is_redirect(argv[i])) {
      ++i;
    } else {
      out.back().push_back(argv[i]);
    }
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

std::string basename(const std::string& w) {
  const std::size_t slash = w.find_last_of("/\\");
  return slash == std::string::npos ? w : w.substr(slash + 1);
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_assignment(const std::string& w) {  // NAME=value before a command
  const std::size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (!std::isalpha(static_cast<unsigned char>(w[0])) && w[0] != '_') return false;
  return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

bool is_python(const std::string& w) {
  const std::string b = basename(w);
  if (b.rfind("python", 0) != 0) return false;
  const std::string v = b.substr(6);
  return std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) || c == '.'; });
}

bool is_shell(const std::string& w) {
  const std::string b = basename(w);
  return b == "sh" || b == "bash" || b == "dash" || b == "zsh" || b == "ash";
}

// sh -c, bash -lc, bash -ec ...: a short-option cluster holding c
bool is_shell_c(const std::string& w) {
  return w.size() >= 2 && w[0] == '-' && w[1] != '-' && w.find('c') != std::string::npos &&
         std::all_of(w.begin() + 1, w.end(), [](unsigned char ch) { return std::isalpha(ch); });
}

bool is_variable(const std::string& w) { return !w.empty() && unexpanded(w) == w; }

struct Entry {
  EngineKind kind = EngineKind::vllm;
  std::size_t begin = 0;  // the entry point's first word
  std::size_t args = 0;   // its first argument
  bool wrapper = false;   // ${LLAMA_SERVER}-style stand-in for llama-server
};

// Whether cmd[i] begins an entry point kvplan reads.
std::optional<Entry> entry_at(const std::vector<std::string>& cmd, std::size_t i, const std::string& where) {
  const std::string& w = cmd[i];
  const std::string b = basename(w);
  const std::string next = i + 1 < cmd.size() ? cmd[i + 1] : "";
  if (b == "vllm" && next == "serve") return Entry{EngineKind::vllm, i, i + 2, false};
  if (b == "sglang" && next == "serve") return Entry{EngineKind::sglang, i, i + 2, false};
  if (is_python(w)) {
    std::size_t m = i + 1;  // past interpreter options: python3 -u -X dev -m ...
    while (m < cmd.size() && is_flag(cmd[m]) && cmd[m] != "-m") m += cmd[m] == "-X" || cmd[m] == "-W" ? 2 : 1;
    const std::string module = m + 1 < cmd.size() && cmd[m] == "-m" ? cmd[m + 1] : "";
    if (module == "vllm.entrypoints.openai.api_server" || module == "vllm.entrypoints.api_server" || module == "dynamo.vllm")
      return Entry{EngineKind::vllm, i, m + 2, false};
    if (module == "vllm.entrypoints.cli.main" && m + 2 < cmd.size() && cmd[m + 2] == "serve") return Entry{EngineKind::vllm, i, m + 3, false};
    if (module == "sglang.launch_server" || module == "dynamo.sglang") return Entry{EngineKind::sglang, i, m + 2, false};
    if (module == "dynamo.trtllm") return Entry{EngineKind::trtllm, i, m + 2, false};
  }
  const std::string lw = ascii_lower(b), lfull = ascii_lower(w);
  if (lw.rfind("llama-server", 0) == 0 || ends_with(lfull, "llama-server") || ends_with(lfull, "llama-server.exe") ||
      ((lw == "server" || lw == "server.exe") && (next.empty() || is_flag(next))))
    return Entry{EngineKind::llamacpp, i, i + 1, false};
  if (b == "trtllm-serve") {
    if (next == "serve") return Entry{EngineKind::trtllm, i, i + 2, false};
    if (next == "disaggregated" || next == "disaggregated_mpi_worker" || next == "mm_embedding_serve" || next == "grpc")
      throw InputError(where, "trtllm-serve " + next + " is not supported", "give the trtllm-serve serve MODEL command of each server");
    return Entry{EngineKind::trtllm, i, i + 1, false};
  }
  return std::nullopt;
}

bool is_container_run(const std::vector<std::string>& cmd, std::size_t i) {
  static const char* runtimes[] = {"docker", "podman", "nerdctl"};
  const std::string b = basename(cmd[i]);
  const bool runtime = std::any_of(std::begin(runtimes), std::end(runtimes), [&](const char* r) { return b == r; });
  const std::string next = i + 1 < cmd.size() ? cmd[i + 1] : "";
  return runtime && (next == "run" || (next == "container" && i + 2 < cmd.size() && cmd[i + 2] == "run"));
}

std::string join(const std::vector<std::string>& words, std::size_t begin, std::size_t end, std::size_t max = 1000) {
  std::string s;
  for (std::size_t i = begin; i < end && i < begin + max; ++i) s += (i > begin ? " " : "") + words[i];
  if (end > begin + max) s += " ...";
  return s;
}

// docker run options that take a value (docker run --help); others are switches.
bool docker_option_takes_value(const std::string& o) {
  static const char* with_value[] = {"-a", "--attach", "--add-host", "--annotation", "--blkio-weight", "--cap-add", "--cap-drop",
                                     "--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-shares", "-c",
                                     "--cpus", "--cpuset-cpus", "--cpuset-mems", "--device", "--device-cgroup-rule", "--dns",
                                     "--dns-option", "--dns-search", "--domainname", "--entrypoint", "-e", "--env", "--env-file",
                                     "--expose", "--gpus", "--group-add", "--health-cmd", "--health-interval", "--health-retries",
                                     "--health-start-period", "--health-timeout", "-h", "--hostname", "--ip", "--ip6", "--ipc",
                                     "--isolation", "--kernel-memory", "-l", "--label", "--label-file", "--link", "--log-driver",
                                     "--log-opt", "--mac-address", "-m", "--memory", "--memory-reservation", "--memory-swap",
                                     "--memory-swappiness", "--mount", "--name", "--network", "--net", "--network-alias", "--pid",
                                     "--pids-limit", "--platform", "-p", "--publish", "--pull", "--restart", "--runtime",
                                     "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl",
                                     "--tmpfs", "-u", "--user", "--ulimit", "--userns", "--uts", "-v", "--volume", "--volume-driver",
                                     "--volumes-from", "-w", "--workdir"};
  return std::any_of(std::begin(with_value), std::end(with_value), [&](const char* v) { return o == v; });
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Images
// ---------------------------------------------------------------------------------------------------

std::string engine_version_from_image(const std::string& image) {
  std::string l = ascii_lower(image);
  if (const auto at = l.find('@'); at != std::string::npos) l.erase(at);  // a digest names no version
  const std::size_t colon = l.find_last_of(':');
  if (colon == std::string::npos || l.find('/', colon) != std::string::npos) return "";
  const std::string tag = l.substr(colon + 1);
  if (tag == "latest") return "latest";
  // v0.11.0, 0.5.4-cu129, server-b6000, b6000, v0.5.4.post2
  if (const auto b = tag.find("-b"); b != std::string::npos && b + 2 < tag.size() && std::isdigit(static_cast<unsigned char>(tag[b + 2])))
    return tag.substr(b + 1, tag.find_first_not_of("0123456789", b + 2) - b - 1);
  if (tag.size() > 1 && tag[0] == 'b' && std::isdigit(static_cast<unsigned char>(tag[1]))) return tag.substr(0, tag.find_first_not_of("0123456789", 1));
  const std::size_t s = tag[0] == 'v' ? 1 : 0;
  std::string version = tag.substr(s, tag.find_first_not_of("0123456789.", s) - s);
  while (!version.empty() && version.back() == '.') version.pop_back();
  return version;
}

// ---------------------------------------------------------------------------------------------------
// Variables
// ---------------------------------------------------------------------------------------------------

std::string unexpanded(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const char n = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '$' && (n == '{' || n == '(')) {
      const char close = n == '{' ? '}' : ')';
      int depth = 0;
      for (std::size_t j = i + 1; j < s.size(); ++j) {
        if (s[j] == n) ++depth;
        if (s[j] == close && --depth == 0) return s.substr(i, j - i + 1);
      }
      return s.substr(i);
    }
    if (c == '$' && (std::isalnum(static_cast<unsigned char>(n)) || n == '_' || n == '@' || n == '*')) {
      std::size_t j = i + 1;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      return s.substr(i, std::max(j, i + 2) - i);
    }
    if (c == '`') return s.substr(i);
    if (c == '{' && n == '{') return s.substr(i, std::min(s.find("}}", i), s.size() - 2) + 2 - i);
    if (c == '%') {
      const std::size_t j = s.find('%', i + 1);
      if (j != std::string::npos && j > i + 1 &&
          std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i + 1), s.begin() + static_cast<std::ptrdiff_t>(j),
                      [](unsigned char ch) { return std::isalnum(ch) || ch == '_'; }))
        return s.substr(i, j - i + 1);
    }
    if (c == '<' && n != '\0' && (std::isupper(static_cast<unsigned char>(n)) || n == '_')) {  // <PLACEHOLDER>
      std::size_t j = i + 1;
      while (j < s.size() && (std::isupper(static_cast<unsigned char>(s[j])) || std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '-')) ++j;
      if (j < s.size() && s[j] == '>' && j > i + 1) return s.substr(i, j - i + 1);
    }
  }
  return "";
}

// Where a ${...} parameter's name ends and its operator (:- - := = :? ? :+ +) begins: the first character that
// cannot be in a shell variable's name; the size when none.
static size_t parameter_operator(const std::string& inner) {
  size_t i = 0;
  while (i < inner.size() && (std::isalnum(static_cast<unsigned char>(inner[i])) || inner[i] == '_')) ++i;
  return i;
}

std::string variable_name(const std::string& token) {
  std::string t = token;
  auto strip = [&](const char* open, const char* close) {
    const std::string o = open, c = close;
    if (t.rfind(o, 0) == 0 && t.size() >= o.size() + c.size() && t.compare(t.size() - c.size(), c.size(), c) == 0) {
      t = t.substr(o.size(), t.size() - o.size() - c.size());
      return true;
    }
    return false;
  };
  const bool braced = token.rfind("${", 0) == 0;
  if (!(strip("$((", "))") || strip("${", "}") || strip("$(", ")") || strip("{{", "}}") || strip("%", "%") || strip("<", ">") || strip("`", "`")))
    if (!t.empty() && t[0] == '$') t.erase(0, 1);
  if (braced) t.erase(std::min(t.size(), parameter_operator(t)));  // ${VAR:-default}, ${VAR-default}, ${VAR:?message}, ...
  else if (const auto d = t.find(":-"); d != std::string::npos) t.erase(d);
  while (!t.empty() && t.front() == ' ') t.erase(0, 1);
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t;
}

std::string expand_variables(const std::string& word, const std::map<std::string, std::string>& vars) {
  std::string out;
  std::size_t i = 0;
  while (i < word.size()) {
    const std::string rest = word.substr(i);
    const std::string tok = unexpanded(rest);
    const std::size_t at = tok.empty() ? std::string::npos : rest.find(tok);
    if (at == std::string::npos) {
      out += rest;
      break;
    }
    out += rest.substr(0, at);
    std::string name = variable_name(tok);
    std::string fallback;
    bool has_fallback = false;
    if (tok.rfind("${", 0) == 0) {
      // the shell's defaults: ${VAR:-word} and ${VAR:=word} (unset or empty), ${VAR-word} and ${VAR=word} (unset);
      // ${VAR:?message} and ${VAR?message} have none (an unset one stays unexpanded)
      const std::string inner = tok.substr(2, tok.size() - 3);
      const size_t op = parameter_operator(inner);
      if (op < inner.size()) {
        const size_t len = inner[op] == ':' ? 2 : 1;
        const char kind = op + len <= inner.size() ? inner[op + len - 1] : ' ';
        if (kind == '-' || kind == '=') {
          fallback = inner.substr(op + len);
          has_fallback = true;
        }
      }
    }
    if (const auto it = vars.find(name); it != vars.end() && tok.rfind("$((", 0) != 0 && tok[0] != '`') out += it->second;
    else if (has_fallback && unexpanded(fallback).empty()) out += fallback;
    else out += tok;
    i += at + tok.size();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Reading flags
// ---------------------------------------------------------------------------------------------------

namespace {

class Reader {
 public:
  Reader(const EngineInfo& e, const FlagTable& table, const std::string& where, const CommandContext& ctx)
      : e_(e), table_(table), where_(where), ctx_(ctx) {
    cmd_.engine = engine_name(e.kind);
    cmd_.version = table.version;
  }

  EngineCommand& result() { return cmd_; }
  void warn(std::string message) { cmd_.warnings.push_back(std::move(message)); }
  bool more_commands() const { return more_commands_; }

  // An environment variable set for the engine (VAR=x before the command, container env).
  void env(const std::string& name, const std::string& value, const std::string& where) {
    if (const auto b = env_binding(name, e_.kind)) apply_binding(*b, name, value, where);
  }

  void read(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string tok = expand_variables(args[i], ctx_.variables);
      if (tok == "--") {
        for (++i; i < args.size(); ++i) positional(expand_variables(args[i], ctx_.variables));
        break;
      }
      if (!is_flag(tok)) {
        if (entry_at(args, i, where_)) {  // a second command, run together with this one (newlines are spaces)
          more_commands_ = true;
          break;
        }
        positional(tok);
        continue;
      }
      const std::size_t eq = tok.find('=');
      const std::string written = eq == std::string::npos ? tok : tok.substr(0, eq);
      std::optional<std::string> inline_value;
      if (eq != std::string::npos) inline_value = tok.substr(eq + 1);
      Match m = resolve(written);
      if (m.attached) inline_value = m.attached;
      std::string value;
      bool have_value = false;
      auto next_value = [&]() {
        if (i + 1 < args.size()) {
          value = expand_variables(args[++i], ctx_.variables);
          have_value = true;
        }
      };
      switch (m.arity) {
        case FlagArity::flag:
        case FlagArity::boolean: {
          bool b = true;
          if (inline_value) {
            const auto parsed = parse_bool_text(*inline_value);
            if (!parsed) throw InputError(where_ + ": " + written, "takes true or false, not '" + *inline_value + "'");
            b = *parsed;
          }
          value = (b != m.negated) ? "true" : "false";
          have_value = true;
          break;
        }
        case FlagArity::value:
        case FlagArity::json:
          if (inline_value) {
            value = *inline_value;
            have_value = true;
          } else if (i + 1 < args.size() && is_flag(args[i + 1]) && resolves(args[i + 1]) && m.known) {
            // the next word is a flag: an older build's switch spelling (-fa before it took on|off|auto)
            if (m.binding && m.binding->def->type == SettingType::choice) {
              warn(written + " without a value (older " + e_.label + " syntax): read as on");
              apply_binding(*m.binding, written, "on", where_ + ": " + written);
            } else {
              warn(written + " without a value; ignored");
            }
            continue;
          } else {
            next_value();
          }
          if (!have_value || (value.empty() && m.binding))
            throw InputError(where_ + ": " + written, "needs a value", "write " + written + " VALUE");
          break;
        case FlagArity::optional:
          if (inline_value) {
            value = *inline_value;
            have_value = true;
          } else if (i + 1 < args.size() && (looks_like_value(args[i + 1]) || (m.greedy && !is_flag(args[i + 1]) && !entry_at(args, i + 1, where_)))) {
            next_value();
          }
          break;
        case FlagArity::list:
        case FlagArity::list0:
          if (inline_value) value = *inline_value;
          while (i + 1 < args.size() && !is_flag(args[i + 1]) && !entry_at(args, i + 1, where_))
            value += (value.empty() ? "" : " ") + expand_variables(args[++i], ctx_.variables);
          have_value = true;
          break;
      }
      apply(m, written, value, have_value);
    }
    read_config_files();
  }

 private:
  // the config files the command names (--config, --extra_llm_api_options), read once its flags are: vLLM and SGLang
  // take the command line over the file (vLLM FlexibleArgumentParser puts the file's arguments before the command
  // line's, "command line > config file > defaults"), TensorRT-LLM the file over the command line (trtllm-serve
  // --extra_llm_api_options "overwrites the parameters specified by trtllm-serve")
  std::vector<std::pair<std::string, std::string>> configs_;
  void read_config_files() {
    std::set<std::string> from_flags;
    for (const auto& c : cmd_.settings) from_flags.insert(c.key);
    for (const auto& u : cmd_.unresolved) from_flags.insert(u.key);
    const auto configs = std::move(configs_);
    configs_.clear();
    for (const auto& [written, path] : configs) config_file(written, path, from_flags);
  }

  const EngineInfo& e_;
  const FlagTable& table_;
  const std::string& where_;
  const CommandContext& ctx_;
  EngineCommand cmd_;
  bool positional_model_seen_ = false;
  bool more_commands_ = false;

  bool resolves(const std::string& word) const {
    const std::string name = normalize_flag_name(word.substr(0, word.find('=')));
    return table_.find(name) != nullptr || (name.rfind("--no-", 0) == 0 && table_.find("--" + name.substr(5)) != nullptr);
  }

  struct Match {
    std::string canonical;          // the name the flag is known by
    FlagArity arity = FlagArity::value;
    std::optional<EngineBinding> binding;
    bool negated = false;
    bool known = true;              // in the version's table (or bound by the settings table)
    bool subkey = false;            // vLLM --x.key
    bool greedy = false;            // unknown everywhere: take the next word unless it is a flag
    std::optional<std::string> attached;  // -O3: argparse's value glued to a one-letter flag
    std::string hint;               // for unknown flags
  };

  // the binding of the spelling written first (-nkvo on the --kv-offload line is the negation), else any of the line's
  std::optional<EngineBinding> binding_for(const FlagDef& f, const std::string& written) const {
    if (!written.empty())
      if (auto b = engine_flag_binding(e_.kind, written)) return b;
    for (const auto& n : f.names)
      if (auto b = engine_flag_binding(e_.kind, n)) return b;
    return std::nullopt;
  }

  Match known(const FlagDef& f, bool negated = false, const std::string& written = "") const {
    Match m;
    m.canonical = f.names.front();
    m.arity = f.arity;
    m.binding = binding_for(f, written);
    m.negated = negated;
    return m;
  }

  static bool looks_like_value(const std::string& v) {  // for flags whose value is optional (-fa [on|off|auto])
    const std::string l = ascii_lower(v);
    return l == "on" || l == "off" || l == "auto" || l == "enabled" || l == "disabled" || parse_bool_text(l).has_value() ||
           (!l.empty() && (std::isdigit(static_cast<unsigned char>(l[0])) || (l[0] == '-' && l.size() > 1 && std::isdigit(static_cast<unsigned char>(l[1])))));
  }

  Match resolve(const std::string& written) const {
    const std::string name = normalize_flag_name(written);
    const bool long_flag = written.rfind("--", 0) == 0;
    if (const FlagDef* f = table_.find(name)) return known(*f, false, name);
    if (long_flag && name.rfind("--no-", 0) == 0) {  // argparse BooleanOptionalAction, click --x/--no-x
      if (const FlagDef* f = table_.find("--" + name.substr(5)); f && f->arity == FlagArity::boolean) return known(*f, true);
    }
    if (long_flag && name.find('.') != std::string::npos) {  // vLLM --compilation-config.mode 3, --x.key+ v
      if (const FlagDef* f = table_.find(name.substr(0, name.find('.'))); f && f->arity == FlagArity::json) {
        Match m = known(*f);
        m.arity = FlagArity::value;
        m.subkey = true;
        return m;
      }
    }
    if (auto b = engine_flag_binding(e_.kind, name); b && !find_flag_any_version(e_.kind, name)) {
      // a settings-table spelling no version table has (NVIDIA Dynamo's wrappers, newer llama.cpp spellings)
      Match m;
      m.canonical = written;
      m.arity = b->def->type == SettingType::boolean ? FlagArity::flag : FlagArity::value;
      m.binding = b;
      return m;
    }
    if (e_.abbreviations && long_flag && name.size() > 2) {
      std::vector<std::string> candidates;
      std::optional<std::size_t> hit;
      bool several = false;
      for (auto it = table_.index.lower_bound(name); it != table_.index.end() && it->first.rfind(name, 0) == 0; ++it) {
        candidates.push_back(it->first);
        if (hit && *hit != it->second) several = true;
        if (!hit) hit = it->second;
      }
      if (hit && !several) return known(table_.flags[*hit]);
      if (several) {
        std::string list;
        for (const auto& c : candidates) list += (list.empty() ? "" : ", ") + c;
        throw InputError(where_ + ": " + written, "ambiguous " + e_.label + " flag", "it could be " + list + "; write more of the name");
      }
    }
    if (e_.abbreviations && !long_flag && name.size() > 2) {  // -O3 = -O 3
      if (const FlagDef* f = table_.find(name.substr(0, 2)); f && (f->arity == FlagArity::value || f->arity == FlagArity::json)) {
        Match m = known(*f);
        m.attached = name.substr(2);
        return m;
      }
    }
    // not a flag of this version: warn, and read its value the way another version (or the shape) says
    Match m;
    m.canonical = written;
    m.known = false;
    if (const auto seen = find_flag_any_version(e_.kind, name)) {
      m.arity = seen->flag->arity;
      m.hint = "a " + e_.label + " " + seen->table->version + " flag";
    } else {
      std::vector<std::string> all;
      for (const auto& [key, at] : table_.index) all.push_back(key);
      const auto near = closest(name, all);
      if (near) m.hint = "did you mean '" + table_.flags[table_.index.at(*near)].names.front() + "'?";
      m.arity = FlagArity::optional;
      m.greedy = true;  // most flags take a value: a following word that is no flag is taken as its value
    }
    return m;
  }

  void set(const std::string& key, const std::string& value, const std::string& flag, const std::string& where) {
    auto& s = cmd_.settings;
    // llama.cpp adds every -ot, --lora and --lora-scaled to one list (common/arg.cpp): repeats join with ','
    if (key == "override_tensor" || key == "lora" || key == "lora_scaled") {
      const auto prior = std::find_if(s.begin(), s.end(), [&](const CommandSetting& c) { return c.key == key; });
      if (prior != s.end()) {
        prior->value += "," + value;
        return;
      }
    }
    s.erase(std::remove_if(s.begin(), s.end(), [&](const CommandSetting& c) { return c.key == key; }), s.end());
    cmd_.unresolved.erase(std::remove_if(cmd_.unresolved.begin(), cmd_.unresolved.end(), [&](const UnresolvedVariable& u) { return u.key == key; }),
                          cmd_.unresolved.end());
    s.push_back(CommandSetting{key, value, flag, where});
  }

  void ignore(const std::string& name) {
    if (std::find(cmd_.ignored.begin(), cmd_.ignored.end(), name) == cmd_.ignored.end()) cmd_.ignored.push_back(name);
  }

  void set_model(const std::string& flag, const std::string& value, const std::string& where) {
    if (flag != "model" && positional_model_seen_ && !cmd_.model.empty()) {  // after the model argument: it stays
      if (value != cmd_.model) warn(flag + " " + value + " and the model argument " + cmd_.model + ": the engine serves the model argument");
      return;
    }
    if (const std::string var = unexpanded(value); !var.empty()) {
      cmd_.unresolved.push_back(UnresolvedVariable{variable_name(var), flag, "model", where});
      return;
    }
    cmd_.model = value;
    cmd_.model_where = where;
    cmd_.unresolved.erase(std::remove_if(cmd_.unresolved.begin(), cmd_.unresolved.end(), [](const UnresolvedVariable& u) { return u.key == "model"; }),
                          cmd_.unresolved.end());
  }

  void positional(const std::string& word) {
    if (e_.positional_model && !positional_model_seen_) {
      positional_model_seen_ = true;
      // vllm serve MODEL: the positional model wins over a --model given too (ServeSubcommand.cmd sets
      // args.model = args.model_tag; older releases refuse both)
      if (!cmd_.model.empty() && cmd_.model != word)
        warn("--model " + cmd_.model + " and the model argument " + word + ": the engine serves the model argument");
      set_model("model", word, where_ + ": model argument");
    } else if (!unexpanded(word).empty()) {
      warn(word + ": unexpanded variable; the arguments it holds are not read");
      cmd_.unknown.push_back(word);
    } else {
      throw InputError(where_, "unexpected " + e_.label + " argument '" + word + "'", e_.model_hint);
    }
  }

  // A value for a setting, converted from the engine's units.
  void apply_binding(const EngineBinding& b, const std::string& flag, const std::string& value, const std::string& where) {
    const SettingDef& d = *b.def;
    if (d.key == "model") {
      set_model(flag, value, where);
      return;
    }
    if (const std::string var = unexpanded(value); !var.empty()) {  // the last value wins, as in argparse
      cmd_.unresolved.erase(std::remove_if(cmd_.unresolved.begin(), cmd_.unresolved.end(), [&](const UnresolvedVariable& u) { return u.key == d.key; }),
                            cmd_.unresolved.end());
      cmd_.settings.erase(std::remove_if(cmd_.settings.begin(), cmd_.settings.end(), [&](const CommandSetting& c) { return c.key == d.key; }),
                          cmd_.settings.end());
      cmd_.unresolved.push_back(UnresolvedVariable{variable_name(var), flag, d.key, where});
      return;
    }
    const std::string l = ascii_lower(value);
    switch (b.conv) {
      case Conv::plain:
        if (d.type == SettingType::choice && parse_bool_text(l)) {  // an older switch spelling of an on|off|auto setting
          set(d.key, *parse_bool_text(l) ? "on" : "off", flag, where);
          return;
        }
        set(d.key, value, flag, where);
        return;
      case Conv::negate:
        set(d.key, value == "true" ? "false" : "true", flag, where);
        return;
      case Conv::vllm_int:
        if (l == "auto" || l == "-1") {
          if (d.allows_auto) set(d.key, "auto", flag, where);
          else warn(flag + " " + value + ": no fixed value; kvplan uses the engine's default");
          return;
        }
        set(d.key, vllm_human_int(value), flag, where);
        return;
      case Conv::auto_count:
        if (l == "auto" || l == "-1") {
          warn(flag + " " + value + ": no fixed value; kvplan uses the engine's default");
          return;
        }
        set(d.key, value, flag, where);
        return;
      case Conv::sglang_chunk:  // Scheduler: chunked_prefill_size <= 0 -> None, no chunking (ServerArgs help: -1 disables)
        if (sglang_chunking_off(l)) {
          set("enable_chunked_prefill", "false", flag, where);
          return;
        }
        if (std::any_of(cmd_.settings.begin(), cmd_.settings.end(), [](const CommandSetting& c) { return c.key == "enable_chunked_prefill"; }))
          set("enable_chunked_prefill", "true", flag, where);  // a later size turns chunking back on: the last value wins
        set(d.key, value, flag, where);
        return;
      case Conv::gpu_layers:
        if (l == "auto") return;  // the engine chooses: all layers, or what --fit leaves on the GPU
        set(d.key, l == "all" ? "-1" : value, flag, where);
        return;
      case Conv::quantization:
        if (l == "fp8" || l == "fbgemm_fp8" || l == "modelopt") set(d.key, "fp8", flag, where);
        else if (l == "awq" || l == "awq_marlin" || l == "gptq" || l == "gptq_marlin" || l == "compressed-tensors-w4a16") set(d.key, "int4", flag, where);
        else if (l == "modelopt_fp4" || l == "nvfp4") set(d.key, "nvfp4", flag, where);  // vLLM/SGLang ModelOpt NVFP4
        else if (l == "mxfp4") set(d.key, "mxfp4", flag, where);
        else if (l != "none") warn(flag + " " + value + ": not modelled; weights are sized from the model's config");
        return;
      case Conv::rope_json:
        set(d.key, "{\"rope_scaling\": " + value + "}", flag, where);
        return;
    }
  }

  void apply(const Match& m, const std::string& written, const std::string& value, bool have_value) {
    const std::string shown =
        written + (value.empty() || m.attached || m.arity == FlagArity::flag || m.arity == FlagArity::boolean ? "" : " " + value);
    const std::string where = where_ + ": " + written;
    const std::string norm = normalize_flag_name(m.canonical);
    if (std::any_of(e_.config_flags.begin(), e_.config_flags.end(), [&](const std::string& c) { return normalize_flag_name(c) == norm; })) {
      configs_.emplace_back(written, value);  // read after the flags (read_config_files)
      return;
    }
    if (!m.known) {
      cmd_.unknown.push_back(written);
      warn(written + ": not a " + e_.label + " " + table_.version + " flag" + (m.hint.empty() ? "" : " (" + m.hint + ")") +
           "; treated as not changing memory");
      return;
    }
    if (m.binding && m.subkey && m.binding->def->type == SettingType::json) {
      // --hf-overrides.max_position_embeddings 65536: one key of the JSON object
      const std::string path = normalize_flag_name(written).substr(normalize_flag_name(written).find('.') + 1);
      json patch;
      try {
        patch = json::parse(value);
      } catch (const json::exception&) {
        patch = value;
      }
      json whole = json::object();
      for (const auto& c : cmd_.settings)
        if (c.key == m.binding->def->key) whole = json::parse(c.value, nullptr, false);
      if (!whole.is_object()) whole = json::object();
      json* node = &whole;
      std::size_t start = 0;
      const std::string raw = written.substr(written.find('.') + 1);
      while (true) {
        const std::size_t dot = raw.find('.', start);
        const std::string k = raw.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (dot == std::string::npos) {
          (*node)[k] = patch;
          break;
        }
        if (!(*node)[k].is_object()) (*node)[k] = json::object();
        node = &(*node)[k];
        start = dot + 1;
      }
      (void)path;
      set(m.binding->def->key, whole.dump(-1, ' ', false, json::error_handler_t::replace), written, where);
      return;
    }
    if (m.binding && !m.subkey) {
      if (!have_value && m.arity == FlagArity::optional) {
        if (m.binding->def->type == SettingType::choice) apply_binding(*m.binding, written, "on", where);
        return;
      }
      apply_binding(*m.binding, written, value, where);
      return;
    }
    const auto effect = flag_effect(e_.kind, m.canonical);
    if (effect && effect->effect == FlagEffect::unmodelled && (effect->when.empty() || ascii_lower(effect->when) == ascii_lower(value))) {
      ignore(m.canonical);
      warn(shown.size() > 120 ? written + ": " : shown + ": ");
      cmd_.warnings.back() += "changes GPU memory in a way kvplan does not model" + (effect->why.empty() ? "" : " (" + effect->why + ")") + "; ignored";
      return;
    }
    ignore(m.canonical);
  }

  // vLLM / SGLang --config FILE (YAML of argument names); TensorRT-LLM option YAML.
  void config_file(const std::string& written, const std::string& path, const std::set<std::string>& from_flags) {
    const std::string var = unexpanded(path);
    if (!var.empty()) {
      warn(written + " " + path + ": unexpanded variable; the settings in that file are not read");
      return;
    }
    std::string full = path;
    if (!full.empty() && full[0] != '/' && !ctx_.base_dir.empty()) full = ctx_.base_dir + "/" + full;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(full, ec)) {
      warn(written + " " + path + ": file not found here; the settings in it are not read");
      return;
    }
    const auto docs = load_documents(full, false, 1 << 20);
    const LocatedDoc& doc = docs.front();
    if (!doc.root.is_object()) throw InputError(doc.at(""), "expected a mapping of settings");
    if (e_.kind == EngineKind::trtllm) {
      read_options(doc, doc.root, "");
      return;
    }
    // vLLM FlexibleArgumentParser._load_config_file / SGLang: each key is an argument name
    for (auto it = doc.root.begin(); it != doc.root.end(); ++it) {
      std::vector<std::string> args;
      const std::string flag = "--" + it.key();
      const json& v = it.value();
      if (v.is_boolean()) {
        if (v.get<bool>()) args.push_back(flag);
        else if (const FlagDef* f = table_.find(flag); f && f->arity == FlagArity::boolean) args.push_back("--no-" + it.key());
      } else if (v.is_array()) {
        args.push_back(flag);
        for (const auto& x : v) args.push_back(x.is_string() ? x.get<std::string>() : x.dump(-1, ' ', false, json::error_handler_t::replace));
      } else if (v.is_string()) {
        args.insert(args.end(), {flag, v.get<std::string>()});
      } else {
        args.insert(args.end(), {flag, v.dump(-1, ' ', false, json::error_handler_t::replace)});
      }
      const std::string at = doc.at("/" + pointer_token(it.key()));
      Reader sub(e_, table_, at, ctx_);
      sub.read(args);
      merge(sub.result(), from_flags);
    }
  }

  void read_options(const LocatedDoc& doc, const json& node, const std::string& prefix) {
    const auto& keys = trtllm_option_keys(table_.version);
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
      std::string pointer;
      for (std::size_t s = 0, e = 0; s <= key.size(); s = e + 1) {
        e = std::min(key.find('.', s), key.size());
        pointer += "/" + pointer_token(key.substr(s, e - s));
      }
      const std::string where = doc.at(pointer);
      if (const auto b = trtllm_yaml_binding(key)) {
        const json& v = it.value();
        apply_binding(*b, key, v.is_string() ? v.get<std::string>() : v.is_boolean() ? (v.get<bool>() ? "true" : "false") : v.dump(-1, ' ', false, json::error_handler_t::replace), where);
        continue;
      }
      if (it.value().is_object() && (keys.empty() || !keys.count(key) || keys.at(key) == "object")) {
        read_options(doc, it.value(), key);
        continue;
      }
      if (!keys.empty() && !keys.count(key)) {
        cmd_.unknown.push_back(key);
        warn(doc.file + ": " + key + ": not a TensorRT-LLM " + table_.version + " option; treated as not changing memory");
      } else if (
                 key.rfind("kv_cache_config.host_cache_size", 0) == 0) {
        warn(doc.file + ": " + key + ": changes GPU memory in a way kvplan does not model; ignored");
      }
    }
  }

  void merge(const EngineCommand& sub, const std::set<std::string>& from_flags) {
    for (const auto& s : sub.settings)
      if (!from_flags.count(s.key)) set(s.key, s.value, s.flag, s.where);  // the command line's value stands
    for (const auto& u : sub.unresolved)
      if (!from_flags.count(u.key)) cmd_.unresolved.push_back(u);
    if (!sub.model.empty() && cmd_.model.empty()) {
      cmd_.model = sub.model;
      cmd_.model_where = sub.model_where;
    }
    for (const auto& w : sub.warnings) cmd_.warnings.push_back(w);
    for (const auto& u : sub.unknown) cmd_.unknown.push_back(u);
    for (const auto& g : sub.ignored) ignore(g);
  }
};

std::vector<std::string> words_of(const std::vector<std::string>& cmd, std::size_t from) {
  return std::vector<std::string>(cmd.begin() + static_cast<std::ptrdiff_t>(std::min(from, cmd.size())), cmd.end());
}

}  // namespace

EngineCommand parse_engine_command(const std::vector<std::string>& argv, const std::string& engine_hint, const std::string& where,
                                   const CommandContext& ctx_in) {
  CommandContext ctx = ctx_in;
  std::string hint;
  if (const auto k = parse_engine(ascii_lower(engine_hint)); k && *k != EngineKind::generic) hint = engine_name(*k);

  const auto commands = simple_commands(argv);
  if (commands.empty())
    throw InputError(where, "empty command line", "give the engine's command, e.g. vllm serve MODEL --max-model-len 8192");

  // sh -c "...", bash -lc '...': the string is the command line
  for (const auto& cmd : commands) {
    for (std::size_t w = 0; w + 2 < cmd.size() + 1 && w < cmd.size(); ++w) {
      if (is_assignment(cmd[w]) || cmd[w] == "exec" || cmd[w] == "env" || cmd[w] == "nohup") continue;
      if (is_shell(cmd[w]) && w + 2 < cmd.size() && is_shell_c(cmd[w + 1])) return parse_engine_command(shell_split(cmd[w + 2], where), engine_hint, where, ctx);
      break;
    }
  }

  // The first command that runs an engine; words before its entry point in the same command are
  // variable assignments, env/nohup/exec, or (in a pasted script) other lines.
  std::optional<Entry> entry;
  std::size_t chosen = 0, engine_commands = 0;
  std::string image, image_version;
  std::vector<std::pair<std::string, std::string>> docker_env;
  for (std::size_t c = 0; c < commands.size(); ++c) {
    const auto& cmd = commands[c];
    std::optional<Entry> found;
    for (std::size_t w = 0; w < cmd.size() && !found; ++w) {
      if (is_container_run(cmd, w)) {
        // docker run [OPTIONS] IMAGE [COMMAND] [ARG...]
        std::size_t i = w + (cmd[w + 1] == "container" ? 3 : 2);
        std::vector<std::pair<std::string, std::string>> env;
        for (; i < cmd.size() && is_flag(cmd[i]); ++i) {
          const std::string o = cmd[i].substr(0, cmd[i].find('='));
          const bool inline_value = cmd[i].find('=') != std::string::npos;
          std::string v = inline_value ? cmd[i].substr(cmd[i].find('=') + 1) : "";
          if (!inline_value && docker_option_takes_value(o) && i + 1 < cmd.size()) v = cmd[++i];
          if ((o == "-e" || o == "--env") && v.find('=') != std::string::npos) env.emplace_back(v.substr(0, v.find('=')), v.substr(v.find('=') + 1));
        }
        if (i >= cmd.size()) throw InputError(where, "docker run names no image", "give the docker run command with its image and arguments");
        if (!entry) {
          image = cmd[i];
          const std::string eng = engine_from_image(image);
          image_version = engine_version_from_image(image);
          docker_env = env;
          for (std::size_t k = i + 1; k < cmd.size() && !found; ++k) found = entry_at(cmd, k, where);
          if (!found) {
            const std::string guess = !hint.empty() ? hint : eng;
            const auto kind = parse_engine(guess);
            if (!kind) throw InputError(where, "cannot tell which engine the image '" + image + "' runs", "name the engine (engine: vllm)");
            found = Entry{*kind, i + 1, i + 1, false};
          }
        }
        break;
      }
      found = entry_at(cmd, w, where);
    }
    if (!found && hint == "llama.cpp" && is_variable(cmd[0])) found = Entry{EngineKind::llamacpp, 0, 1, true};
    if (!found) continue;
    ++engine_commands;
    if (!entry) {
      entry = found;
      chosen = c;
    }
  }

  if (!entry) {
    const auto& cmd = commands[0];
    std::size_t first = 0;
    while (first < cmd.size() && is_assignment(cmd[first])) ++first;
    const auto hk = parse_engine(hint);
    const bool bare = hk && first < cmd.size() && (is_flag(cmd[first]) || is_variable(cmd[first]) || engine_info(*hk).positional_model);
    if (!bare)
      throw InputError(where, "unsupported entry point '" + (first < cmd.size() ? cmd[first] : cmd[0]) + "'",
                       "kvplan reads vllm serve, python -m vllm.entrypoints.openai.api_server, python -m sglang.launch_server, "
                       "sglang serve, python -m dynamo.vllm|sglang|trtllm, llama-server, trtllm-serve, sh -c and docker run "
                       "command lines, or an engine's bare arguments when the engine is named");
    entry = Entry{*hk, first, first, false};
  }

  const auto& cmd = commands[chosen];
  const EngineInfo& info = engine_info(entry->kind);
  if (!hint.empty() && engine_name(info.kind) != hint)
    throw InputError(where, "the command runs " + std::string(engine_name(info.kind)) + " (" + join(cmd, entry->begin, entry->args) + "), not " + hint,
                     "name the engine " + std::string(engine_name(info.kind)) + " or give a " + hint + " command");

  std::string note;
  const std::string version = !ctx.version.empty() ? ctx.version : image_version;
  const FlagTable& table = flag_table(info.kind, version, &note);
  Reader reader(info, table, where, ctx);
  if (!note.empty()) reader.warn(note);
  if (!image.empty()) reader.result().image = image;
  reader.result().release = version;
  for (const auto& [k, v] : docker_env) {
    ctx.variables.emplace(k, v);
    reader.env(k, v, where + ": -e " + k);
  }
  std::vector<std::string> skipped;
  for (std::size_t w = 0; w < entry->begin; ++w) {
    if (is_assignment(cmd[w])) {
      const std::string name = cmd[w].substr(0, cmd[w].find('='));
      const std::string value = expand_variables(cmd[w].substr(cmd[w].find('=') + 1), ctx.variables);
      reader.env(name, value, where + ": " + name);
      continue;
    }
    static const char* prefixes[] = {"env", "exec", "nohup", "time", "command", "sudo", "numactl", "taskset"};
    if (std::any_of(std::begin(prefixes), std::end(prefixes), [&](const char* p) { return basename(cmd[w]) == p; })) continue;
    if (is_container_run(cmd, w)) break;
    skipped.push_back(cmd[w]);
  }
  if (!skipped.empty() && image.empty())
    reader.warn("ignored what comes before '" + join(cmd, entry->begin, entry->args) + "': " + join(skipped, 0, skipped.size(), 6));
  if (entry->wrapper) reader.warn(cmd[entry->begin] + ": unexpanded variable; taken as llama-server");
  reader.read(words_of(cmd, entry->args));
  EngineCommand out = reader.result();
  if (engine_commands > 1 || reader.more_commands())
    out.warnings.push_back("kvplan reads the first of several engine commands (" + join(cmd, entry->begin, entry->args) + ")");
  return out;
}

}  // namespace kvplan::io
