// Engine startup-log reader: rejects empty and binary input, cleans each line (ANSI colours, \r, journald,
// timestamp and rank prefixes), recognises the engine, its version and its args line, and extracts every
// memory figure with the unit the engine really meant and the precision it printed. No std::regex: it
// recurses per character and overflows the stack on long hostile lines; the matchers here are plain loops.
// Every key, with the engine line it comes from: docs/engine-logs.md.
#include "kvplan/io/engine_log.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "kvplan/core/error.hpp"

namespace kvplan::io {
namespace {

using std::string_view;
constexpr size_t npos = string_view::npos;
constexpr size_t kMaxLine = 64 * 1024;   // longer lines are cut here (with a warning)
constexpr size_t kProbe = 64 * 1024;     // bytes inspected by the binary test
constexpr size_t kMaxWarnings = 100;
constexpr double kKiB = 1024.0, kMiB = 1024.0 * kKiB, kGiB = 1024.0 * kMiB;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_word(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }

bool at(string_view s, size_t i, string_view p) { return i <= s.size() && s.substr(i, p.size()) == p; }
size_t skip_spaces(string_view s, size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}
string_view trim(string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}
bool contains(string_view s, string_view p) { return s.find(p) != npos; }
bool icontains(string_view s, string_view p) {
  auto it = std::search(s.begin(), s.end(), p.begin(), p.end(), [](char a, char b) {
    return (a >= 'A' && a <= 'Z' ? a + 32 : a) == (b >= 'A' && b <= 'Z' ? b + 32 : b);
  });
  return it != s.end();
}

// ---- binary test ---------------------------------------------------------------------------------------

// NUL anywhere, or more than 10% of the first 64 KiB control bytes (other than tab, CR, LF, ESC) or bytes
// that are not valid UTF-8.
bool looks_binary(const std::string& t) {
  if (t.find('\0') != std::string::npos) return true;
  const size_t n = std::min(t.size(), kProbe);
  size_t control = 0, bad = 0;
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(t[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != 0x1b) || c == 0x7f) {
      ++control, ++i;
      continue;
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    const size_t len = (c >= 0xc2 && c < 0xe0) ? 2 : (c >= 0xe0 && c < 0xf0) ? 3 : (c >= 0xf0 && c < 0xf5) ? 4 : 0;
    bool ok = len > 0 && i + len <= t.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(t[i + k]) & 0xc0) == 0x80;
    if (ok) {
      i += len;
    } else {
      ++bad, ++i;
    }
  }
  return control * 10 > n || bad * 10 > n;
}

// ---- line cleaning -------------------------------------------------------------------------------------

// Removes ANSI escape sequences (CSI "ESC [ ... final", OSC "ESC ] ... BEL|ESC \", two-byte ESC x), CR and
// other control bytes; tabs become spaces.
std::string strip_controls(string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b) {
      if (i + 1 < s.size() && s[i + 1] == '[') {
        i += 2;
        while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
      } else if (i + 1 < s.size() && s[i + 1] == ']') {
        i += 2;
        while (i < s.size() && s[i] != '\a' && !(s[i] == 0x1b && i + 1 < s.size() && s[i + 1] == '\\')) ++i;
        if (i < s.size() && s[i] == 0x1b) ++i;
      } else {
        ++i;
      }
      continue;
    }
    if (c == '\t') {
      out += ' ';
    } else if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Reads "N" digits at i (exactly n of them) and returns the position after them, or npos.
size_t digits(string_view s, size_t i, size_t n) {
  for (size_t k = 0; k < n; ++k)
    if (i + k >= s.size() || !is_digit(s[i + k])) return npos;
  return i + n;
}

// "HH:MM:SS" at i → position after it, or npos.
size_t clock_at(string_view s, size_t i) {
  i = digits(s, i, 2);
  if (i == npos || !at(s, i, ":")) return npos;
  i = digits(s, i + 1, 2);
  if (i == npos || !at(s, i, ":")) return npos;
  return digits(s, i + 1, 2);
}

// journald / syslog: "Dec 01 12:00:00 host unit[1234]: " (day may be space-padded).
size_t journald_prefix(string_view s) {
  static constexpr std::array<string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (s.size() < 16 || std::find(kMonths.begin(), kMonths.end(), s.substr(0, 3)) == kMonths.end() || s[3] != ' ')
    return 0;
  size_t i = skip_spaces(s, 4);
  size_t d = i;
  while (d < s.size() && is_digit(s[d]) && d - i < 2) ++d;
  if (d == i || !at(s, d, " ")) return 0;
  i = clock_at(s, d + 1);
  if (i == npos || !at(s, i, " ")) return 0;
  size_t host_end = s.find(' ', i + 1);
  if (host_end == npos || host_end == i + 1) return 0;
  size_t colon = s.find(": ", host_end + 1);
  if (colon == npos) return 0;
  string_view ident = s.substr(host_end + 1, colon - host_end - 1);
  if (ident.empty() || contains(ident, " ")) return 0;
  return colon + 2;
}

// ISO time stamp as docker/kubectl --timestamps write it: "2025-09-01T10:00:00.123456789Z ".
size_t iso_prefix(string_view s) {
  size_t i = digits(s, 0, 4);
  if (i == npos || !at(s, i, "-") || digits(s, i + 1, 2) == npos || !at(s, i + 3, "-")) return 0;
  i = digits(s, i + 4, 2);
  if (i == npos || i >= s.size() || (s[i] != 'T' && s[i] != ' ')) return 0;
  i = clock_at(s, i + 1);
  if (i == npos) return 0;
  if (at(s, i, ".") || at(s, i, ",")) {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  if (at(s, i, "Z")) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-') && digits(s, i + 1, 2) != npos) {
    i += 3;
    if (at(s, i, ":")) ++i;
    if (digits(s, i, 2) != npos) i += 2;
  }
  if (!at(s, i, " ")) return 0;
  return skip_spaces(s, i);
}

// vLLM: "INFO 12-13 19:54:18 worker.py:243] " and "INFO 08-12 22:32:08 [gpu_worker.py:276] ".
size_t vllm_prefix(string_view s) {
  static constexpr std::array<string_view, 6> kLevels = {"INFO ", "WARNING ", "ERROR ", "DEBUG ", "CRITICAL ", "WARN "};
  size_t i = npos;
  for (auto l : kLevels)
    if (at(s, 0, l)) i = l.size();
  if (i == npos) return 0;
  if (digits(s, i, 2) == npos || !at(s, i + 2, "-") || digits(s, i + 3, 2) == npos || !at(s, i + 5, " ")) return 0;
  i = clock_at(s, i + 6);
  if (i == npos) return 0;
  if (at(s, i, ".")) {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  i = skip_spaces(s, i);
  size_t close = s.find("] ", i);
  if (close == npos || close - i > 200) return i;
  string_view where = s.substr(i, close - i);
  if (!where.empty() && where[0] == '[') where.remove_prefix(1);
  if (!contains(where, ":") || contains(where, " ")) return i;
  return skip_spaces(s, close + 2);
}

// Rank tags of SGLang "[2026-02-27 17:10:27 DP0 TP1] " → "DP0 TP1"; `scope` set, returns the prefix length.
size_t sglang_prefix(string_view s, std::string& scope) {
  if (!at(s, 0, "[")) return 0;
  size_t close = s.find(']');
  if (close == npos) return 0;
  string_view inside = s.substr(1, close - 1);
  // date and time first
  size_t p = digits(inside, 0, 4);
  if (p == npos || !at(inside, p, "-")) return 0;
  p = digits(inside, p + 1, 2);
  if (p == npos || !at(inside, p, "-") || (p = digits(inside, p + 1, 2)) == npos || !at(inside, p, " ")) return 0;
  p = clock_at(inside, p + 1);
  if (p == npos) return 0;
  if (at(inside, p, ",") || at(inside, p, ".")) {
    ++p;
    while (p < inside.size() && is_digit(inside[p])) ++p;
  }
  string_view tags = trim(inside.substr(p));
  if (!tags.empty()) scope = std::string(tags);
  return skip_spaces(s, close + 1);
}

// "(VllmWorker rank=1 pid=123) ", "(EngineCore_0 pid=5)", "(EngineCore_DP1 pid=5)", "(Worker_TP1 pid=7)",
// "(RayWorkerWrapper pid=9)", "(APIServer pid=3)". Returns the prefix length and sets scope.
size_t process_prefix(string_view s, std::string& scope) {
  if (!at(s, 0, "(")) return 0;
  size_t close = s.find(')');
  if (close == npos || close > 120) return 0;
  string_view inside = s.substr(1, close - 1);
  size_t pid = inside.find("pid=");
  if (pid == npos) return 0;
  string_view name = trim(inside.substr(0, pid));
  size_t rank = name.find("rank=");
  std::string found;
  if (rank != npos) {
    size_t e = rank + 5;
    while (e < name.size() && is_digit(name[e])) ++e;
    found = "rank " + std::string(name.substr(rank + 5, e - rank - 5));
  } else {
    // tags such as TP1, PP0, DP1, EP2 inside the process name ("Worker_PP1_TP0", "VllmWorker TP1")
    for (size_t i = 0; i + 2 < name.size(); ++i) {
      if ((i == 0 || !is_alpha(name[i - 1])) && is_alpha(name[i]) && is_alpha(name[i + 1]) &&
          (at(name, i, "TP") || at(name, i, "PP") || at(name, i, "DP") || at(name, i, "EP")) && is_digit(name[i + 2])) {
        size_t e = i + 2;
        while (e < name.size() && is_digit(name[e])) ++e;
        if (!found.empty()) found += ' ';
        found += std::string(name.substr(i, e - i));
        i = e - 1;
      }
    }
    if (found.empty() && at(name, 0, "EngineCore_")) {  // vLLM 0.10: "EngineCore_<dp rank>"
      size_t e = 11;
      while (e < name.size() && is_digit(name[e])) ++e;
      if (e > 11) found = "DP" + std::string(name.substr(11, e - 11));
    }
    if (found.empty() && !at(name, 0, "APIServer") && !at(name, 0, "EngineCore")) {
      size_t e = pid + 4;
      while (e < inside.size() && is_digit(inside[e])) ++e;
      found = "pid " + std::string(inside.substr(pid + 4, e - pid - 4));  // a Ray worker: another process
    }
  }
  if (!found.empty()) scope = found;
  return skip_spaces(s, close + 1);
}

// "[TensorRT-LLM][INFO] ", "[TensorRT-LLM][RANK 1][INFO] ", "[TRT-LLM] [I] ", "[01/01/2025-10:00:00] ".
size_t trt_prefix(string_view s, std::string& scope) {
  if (at(s, 0, "[TensorRT-LLM]") || at(s, 0, "[TRT-LLM]")) {
    size_t i = s.find(']') + 1;
    for (int k = 0; k < 3; ++k) {
      i = skip_spaces(s, i);
      if (!at(s, i, "[")) break;
      size_t close = s.find(']', i);
      if (close == npos || close - i > 16) break;
      string_view tag = s.substr(i + 1, close - i - 1);
      if (at(tag, 0, "RANK ")) scope = "rank " + std::string(trim(tag.substr(5)));
      i = close + 1;
    }
    return skip_spaces(s, i);
  }
  if (at(s, 0, "[") && digits(s, 1, 2) != npos && at(s, 3, "/") && digits(s, 4, 2) != npos && at(s, 6, "/") &&
      digits(s, 7, 4) != npos && at(s, 11, "-") && clock_at(s, 12) != npos && at(s, 20, "]"))
    return skip_spaces(s, 21);
  return 0;
}

struct Clean {
  std::string text;   // prefixes removed
  std::string plain;  // controls removed, prefixes kept (engine markers such as "[TensorRT-LLM]" live there)
  std::string scope;
};

Clean clean_line(string_view raw) {
  Clean c;
  c.plain = strip_controls(raw);
  string_view s = trim(c.plain);
  for (int round = 0; round < 10; ++round) {
    size_t n = journald_prefix(s);
    if (!n) n = iso_prefix(s);
    if (!n) n = vllm_prefix(s);
    if (!n) n = sglang_prefix(s, c.scope);
    if (!n) n = process_prefix(s, c.scope);
    if (!n) n = trt_prefix(s, c.scope);
    if (!n) break;
    s = trim(s.substr(std::min(n, s.size())));
  }
  c.text = std::string(s);
  return c;
}

// ---- numbers and units ---------------------------------------------------------------------------------

struct Num {
  double value = 0;
  size_t begin = 0, end = 0;  // in the line
  int decimals = 0;
};

enum class NumStatus { none, ok, out_of_range };

// A decimal number at i: optional '-', digits with optional thousands separators ("2,042,016": a comma
// followed by exactly three digits), optional fraction and exponent.
NumStatus parse_number(string_view s, size_t i, Num& out) {
  size_t p = i;
  std::string clean;
  if (at(s, p, "-")) clean += s[p++];
  if (p >= s.size() || !is_digit(s[p])) return NumStatus::none;
  size_t group = 0;
  bool first_group = true;
  while (p < s.size()) {
    if (is_digit(s[p])) {
      clean += s[p++];
      ++group;
    } else if (s[p] == ',' && (first_group ? group <= 3 : group == 3) && digits(s, p + 1, 3) != npos &&
               (p + 4 >= s.size() || !is_digit(s[p + 4]))) {
      ++p;
      group = 0;
      first_group = false;
    } else {
      break;
    }
  }
  int decimals = 0;
  if (at(s, p, ".") && p + 1 < s.size() && is_digit(s[p + 1])) {
    clean += s[p++];
    while (p < s.size() && is_digit(s[p])) clean += s[p++], ++decimals;
  }
  if (p + 1 < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    size_t q = p + 1;
    if (s[q] == '+' || s[q] == '-') ++q;
    if (q < s.size() && is_digit(s[q])) {
      clean += 'e';
      clean += std::string(s.substr(p + 1, q - p - 1));
      while (q < s.size() && is_digit(s[q])) clean += s[q++];
      p = q;
    }
  }
  out.begin = i;
  out.end = p;
  out.decimals = decimals;
  out.value = std::strtod(clean.c_str(), nullptr);
  // no figure an engine prints reaches 10^15 (blocks, tokens, GiB, bytes of one GPU): beyond it a count would wrap
  // when it becomes bytes (99999999999999999999999 blocks, 1e300 GiB)
  if (!std::isfinite(out.value) || std::abs(out.value) > 1e15) return NumStatus::out_of_range;
  return NumStatus::ok;
}

struct Unit {
  double factor = 0;  // 0: no size unit
  size_t end = 0;
};

// A size unit at i (after optional spaces): GiB/GB = 2^30, MiB/MB = 2^20, KiB/KB = 2^10, B/bytes = 1.
// Every engine here means binary units by "GB": vLLM divides by 2^30 before printing "GB" (V0
// model_runner.py `self.model_memory_usage / float(2**30)` logged as "Loading model weights took %.4f GB");
// SGLang defines GB = 1024**3 (memory_pool.py, model_runner.py). The one decimal "GB" (SGLang's HiCache
// host line) is read by its own rule.
Unit unit_at(string_view s, size_t i) {
  i = skip_spaces(s, i);
  size_t e = i;
  while (e < s.size() && is_alpha(s[e])) ++e;
  string_view u = s.substr(i, e - i);
  Unit r;
  r.end = e;
  if (u == "GiB" || u == "GB") r.factor = kGiB;
  else if (u == "MiB" || u == "MB") r.factor = kMiB;
  else if (u == "KiB" || u == "KB" || u == "kB") r.factor = kKiB;
  else if (u == "B" || u == "bytes") r.factor = 1;
  return r;
}

bool primary_scope(const std::string& scope) {
  if (scope.empty()) return true;
  bool any = false;
  for (size_t i = 0; i < scope.size(); ++i) {
    if (!is_digit(scope[i])) continue;
    size_t e = i;
    while (e < scope.size() && is_digit(scope[e])) ++e;
    if (std::string_view(scope).substr(i, e - i) != "0") return false;
    any = true;
    i = e;
  }
  return any;
}

// ---- Python literals (vLLM / SGLang args lines) --------------------------------------------------------

// One value up to ',' or a closing bracket at depth 0: quoted strings (with escapes), nested brackets.
// Returns its end; `raw` is the trimmed text.
size_t python_value(string_view s, size_t i, string_view& raw) {
  const size_t start = i;
  std::string stack;
  char quote = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (quote) {
      if (c == '\\') {
        i += 2;
        continue;
      }
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      if (stack.size() < 256) stack += c;
    } else if (c == ')' || c == ']' || c == '}') {
      if (stack.empty()) break;
      stack.pop_back();
    } else if (c == ',' && stack.empty()) {
      break;
    }
    ++i;
  }
  i = std::min(i, s.size());
  raw = trim(s.substr(start, i - start));
  return i;
}

// 'text' / "text" → text (Python escapes undone); anything else is kept as written.
std::string python_unquote(string_view raw, bool& was_string) {
  was_string = false;
  if (raw.size() < 2 || (raw[0] != '\'' && raw[0] != '"') || raw.back() != raw[0]) return std::string(raw);
  std::string out;
  for (size_t i = 1; i + 1 < raw.size(); ++i) {
    if (raw[i] == raw[0]) return std::string(raw);  // 'a' 'b' or similar: not one string
    if (raw[i] == '\\' && i + 2 < raw.size()) {
      const char n = raw[++i];
      out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
    } else {
      out += raw[i];
    }
  }
  was_string = true;
  return out;
}

using Args = std::vector<std::pair<std::string, std::string>>;

// "{'model': 'x', 'n': 2}" from the '{' at i. Returns false when the dict is not closed.
bool python_dict(string_view s, size_t i, Args& out) {
  ++i;
  while (true) {
    i = skip_spaces(s, i);
    if (i >= s.size()) return false;
    if (s[i] == '}') return true;
    // the key: a quoted string, or a bare word up to ':'
    string_view key_raw, value_raw;
    size_t colon;
    bool str = false;
    if (s[i] == '\'' || s[i] == '"') {
      const char q = s[i];
      size_t e = i + 1;
      while (e < s.size() && s[e] != q) e += (s[e] == '\\') ? 2 : 1;
      if (e >= s.size()) return false;
      key_raw = s.substr(i, e - i + 1);
      colon = skip_spaces(s, e + 1);
    } else {
      colon = s.find(':', i);
      if (colon == npos) return false;
      key_raw = trim(s.substr(i, colon - i));
    }
    if (!at(s, colon, ":")) return false;
    size_t end = python_value(s, colon + 1, value_raw);
    if (end >= s.size()) return false;
    std::string key = python_unquote(key_raw, str);
    bool vstr = false;
    std::string value = python_unquote(value_raw, vstr);
    if (!(value == "None" && !vstr)) out.emplace_back(std::move(key), std::move(value));
    i = end;
    if (s[i] == ',') ++i;
    else if (s[i] == '}') return true;
    else return false;
  }
}

// "name=value, name=value" from i until ')' (or the end of the line when `closing` is 0).
bool python_kwargs(string_view s, size_t i, char closing, Args& out) {
  while (true) {
    i = skip_spaces(s, i);
    if (i >= s.size()) return closing == 0;
    if (s[i] == closing) return true;
    size_t eq = i;
    while (eq < s.size() && (is_word(s[eq]) || s[eq] == '.')) ++eq;
    if (eq == i || !at(s, eq, "=")) return closing == 0 && !out.empty();
    std::string key(s.substr(i, eq - i));
    string_view raw;
    size_t end = python_value(s, eq + 1, raw);
    if (end >= s.size() && closing != 0) return false;
    bool str = false;
    std::string value = python_unquote(raw, str);
    if (!(value == "None" && !str)) out.emplace_back(std::move(key), std::move(value));
    i = end;
    if (i >= s.size()) return closing == 0;
    if (s[i] == ',') ++i;
    else if (s[i] == closing) return true;
    else return false;
  }
}

// ---- the reader ----------------------------------------------------------------------------------------

enum Engine { kVllm, kSglang, kTrt, kLlama, kEngines };
constexpr std::array<const char*, kEngines> kEngineNames = {"vllm", "sglang", "trtllm", "llama.cpp"};

class Reader {
 public:
  explicit Reader(EngineLog& log) : log_(log) {}

  void line(const Clean& c, int number) {
    s_ = c.text;
    n_ = number;
    scope_ = c.scope;
    max_number_end_ = 0;
    score(c.plain);
    if (args()) return;
    vllm();
    sglang();
    trtllm();
    llama();
    start_errors();
  }

  size_t max_number_end() const { return max_number_end_; }

  void warn(std::string w) {
    if (log_.warnings.size() < kMaxWarnings) log_.warnings.push_back(std::move(w));
    else if (log_.warnings.size() == kMaxWarnings) log_.warnings.push_back("more warnings left out");
  }

  void finish() {
    int best = -1, best_score = 0;
    for (int e = 0; e < kEngines; ++e)
      if (score_[e] > best_score) best = e, best_score = score_[e];
    if (best < 0) return;
    log_.engine = kEngineNames[best];
    log_.version = version_[best];
    if (best == kLlama && ik_) log_.fork = "ik_llama.cpp";
  }

 private:
  EngineLog& log_;
  string_view s_;
  int n_ = 0;
  std::string scope_;
  size_t max_number_end_ = 0;
  std::array<int, kEngines> score_{};
  std::array<std::string, kEngines> version_;
  bool ik_ = false;

  bool has(string_view p) const { return contains(s_, p); }

  // ---- emitting figures ----
  void emit(const std::string& key, const Num& n, double factor, size_t text_end, int min_decimals = 0,
            const std::string& scope_override = {}, bool use_override = false) {
    LogFigure f;
    f.key = key;
    f.value = n.value * factor;
    const int d = std::max(n.decimals, n.decimals > 0 || min_decimals > 0 ? min_decimals : 0);
    if (d > 0) f.resolution = 0.5 * std::pow(10.0, -d) * factor;
    else if (factor != 1) f.resolution = 0.5 * factor;  // an integer printed in a unit bigger than one
    f.line = n_;
    f.text = std::string(s_.substr(n.begin, std::max(text_end, n.end) - n.begin));
    f.scope = use_override ? scope_override : scope_;
    max_number_end_ = std::max(max_number_end_, n.end);
    log_.figures.push_back(std::move(f));
  }

  // Position of the value after `anchor` (found from `from`): skips spaces, '=', ':', '(' and the words
  // "takes" / "is". npos when the anchor is absent.
  size_t value_pos(string_view anchor, size_t from = 0) const {
    size_t a = s_.find(anchor, from);
    if (a == npos) return npos;
    size_t i = a + anchor.size();
    for (int k = 0; k < 6; ++k) {
      i = skip_spaces(s_, i);
      if (i < s_.size() && (s_[i] == '=' || s_[i] == ':' || s_[i] == '(')) ++i;
      else if (at(s_, i, "takes ")) i += 6;
      else if (at(s_, i, "is ")) i += 3;
      else break;
    }
    return i;
  }

  std::optional<Num> number(size_t i) {
    if (i == npos) return std::nullopt;
    Num n;
    auto st = parse_number(s_, i, n);
    if (st == NumStatus::out_of_range) {
      size_t e = i;
      while (e < s_.size() && (is_digit(s_[e]) || s_[e] == '.' || s_[e] == ',' || s_[e] == 'e' || s_[e] == '-'))
        ++e;
      warn("line " + std::to_string(n_) + ": number '" + std::string(s_.substr(i, std::min<size_t>(e - i, 40))) +
           "' is out of range; ignored");
      return std::nullopt;
    }
    if (st == NumStatus::none) return std::nullopt;
    return n;
  }

  // A size in bytes after `anchor`; the unit must be printed. `min_decimals`: precision the engine rounded
  // to when it printed fewer digits (vLLM format_gib). Returns the end of the unit or npos.
  size_t size(const std::string& key, string_view anchor, size_t from = 0, int min_decimals = 0,
              double gb = kGiB) {
    auto n = number(value_pos(anchor, from));
    if (!n) return npos;
    Unit u = unit_at(s_, n->end);
    if (u.factor == 0) {
      max_number_end_ = std::max(max_number_end_, n->end);  // a size whose unit is missing: cut off if at the end
      return npos;
    }
    string_view unit = trim(s_.substr(n->end, u.end - n->end));
    if (unit == "GB") u.factor = gb;
    if (std::abs(n->value * u.factor) > 1e16) {  // 10 PB: no GPU's figure; beyond 2^63 bytes it would wrap
      warn("line " + std::to_string(n_) + ": size '" + std::string(s_.substr(n->begin, u.end - n->begin)) + "' is out of range; ignored");
      return npos;
    }
    emit(key, *n, u.factor, u.end, min_decimals);
    return u.end;
  }

  // A count or ratio after `anchor` (an optional trailing 'x' is kept in the text).
  size_t count(const std::string& key, string_view anchor, size_t from = 0) {
    auto n = number(value_pos(anchor, from));
    if (!n) return npos;
    if (n->value < 0 && key != "chunked_prefill_size") {  // SGLang prints chunked_prefill_size=-1 (off); no other count is negative
      warn("line " + std::to_string(n_) + ": " + key + " '" + std::string(s_.substr(n->begin, n->end - n->begin)) + "' is negative; ignored");
      return npos;
    }
    size_t end = n->end;
    if (at(s_, end, "x") && (end + 1 >= s_.size() || !is_alpha(s_[end + 1]))) ++end;
    emit(key, *n, 1, end);
    return end;
  }

  // The number that ends just before `anchor` ("16384 cells" → 16384); sets `before` to the char before it.
  std::optional<Num> number_before(string_view anchor, char* before = nullptr, size_t from = 0) {
    size_t a = s_.find(anchor, from);
    if (a == npos) return std::nullopt;
    size_t e = a;
    while (e > 0 && is_space(s_[e - 1])) --e;
    size_t b = e;
    while (b > 0 && (is_digit(s_[b - 1]) || s_[b - 1] == '.')) --b;
    if (b == e) return std::nullopt;
    if (before) *before = b > 0 ? s_[b - 1] : 0;
    auto n = number(b);
    if (!n || n->end != e) return std::nullopt;
    return n;
  }

  void set_text(const std::string& key, string_view value) {
    value = trim(value);
    if (!value.empty() && !log_.text.count(key)) log_.text[key] = std::string(value);
  }

  void fail(bool cond) {
    if (!cond) return;
    if (!log_.does_not_start) {
      log_.start_error = std::string(s_.substr(0, 2000));
      log_.start_error_line = n_;
    }
    log_.does_not_start = true;
  }

  // ---- engine markers and versions ----
  static std::string version_token(string_view s, size_t i) {
    i = skip_spaces(s, i);
    if (at(s, i, "v") && i + 1 < s.size() && is_digit(s[i + 1])) ++i;
    size_t e = i;
    while (e < s.size() && (is_word(s[e]) || s[e] == '.' || s[e] == '+' || s[e] == '-') && e - i < 64) ++e;
    while (e > i && (s[e - 1] == '.' || s[e - 1] == '-')) --e;
    if (e == i || !is_digit(s[i])) return {};
    return std::string(s.substr(i, e - i));
  }

  void set_version(Engine e, const std::string& v) {
    if (!v.empty() && version_[e].empty()) version_[e] = v;
  }

  void score(string_view plain) {
    auto mark = [&](Engine e, std::initializer_list<string_view> strong) {
      for (auto p : strong)
        if (contains(plain, p)) score_[e] += 2;
    };
    mark(kVllm, {"Model loading took", "Loading model weights took", "Available KV cache memory", "GPU KV cache size",
                 "# GPU blocks", "Memory profiling results", "the current vLLM instance can use", "non-default args:",
                 "LLM engine (v", "vLLM API server version", "VllmWorker", "(EngineCore", "Maximum concurrency for"});
    if (icontains(plain, "cuda blocks:")) score_[kVllm] += 2;
    if (icontains(plain, "vllm")) score_[kVllm] += 1;
    mark(kSglang, {"Load weight end", "load_weight_end", "KV Cache is allocated", "max_total_num_tokens=",
                   "server_args=ServerArgs", "Memory pool end"});
    if (icontains(plain, "sglang")) score_[kSglang] += 1;
    mark(kTrt, {"[TensorRT-LLM]", "[TRT-LLM]", "paged KV cache", "k/v cache", "TensorRT-LLM version"});
    mark(kLlama, {"llama_context:", "llama_kv_cache", "llama_new_context_with_model", "print_info:",
                  "llm_load_print_meta:", "load_tensors:", "llama_model_loader:", "main: build =", "build info |"});
    if (contains(plain, "ik_llama") || contains(plain, "mla_attn")) ik_ = true;

    string_view s = s_;
    size_t p;
    if ((p = s.find("vLLM API server version")) != npos) set_version(kVllm, version_token(s, p + 23));
    if ((p = s.find("LLM engine (v")) != npos) set_version(kVllm, version_token(s, p + 12));
    if ((p = s.find("vllm==")) != npos) set_version(kVllm, version_token(s, p + 6));
    if ((p = s.find("vLLM version")) != npos) set_version(kVllm, version_token(s, p + 12));
    if ((p = s.find("sglang==")) != npos) set_version(kSglang, version_token(s, p + 8));
    if ((p = s.find("SGLang v")) != npos) set_version(kSglang, version_token(s, p + 7));
    if ((p = s.find("sglang version")) != npos) set_version(kSglang, version_token(s, p + 14));
    if ((p = s.find("TensorRT-LLM version:")) != npos) set_version(kTrt, version_token(s, p + 21));
    // llama.cpp: "build: 5781 (ba3ef86c5) with cc ..." / "main: build = 3475 (ac156500)" / "build=3667"
    auto build_at = [&](size_t i, bool need_hash) {
      i = skip_spaces(s, i);
      size_t e = i;
      while (e < s.size() && is_digit(s[e])) ++e;
      if (e == i || e - i > 9) return;
      if (need_hash && !at(s, skip_spaces(s, e), "(")) return;
      score_[kLlama] += 2;
      set_version(kLlama, "b" + std::string(s.substr(i, e - i)));
    };
    if (at(s, 0, "build: ")) build_at(7, true);
    if ((p = s.find("main: build = ")) != npos) build_at(p + 14, false);
    if (contains(s, "build info") && (p = s.find(" build=")) != npos) build_at(p + 7, false);
  }

  // ---- args lines ----
  void merge_args(Args a, string_view source) {
    if (a.empty()) return;
    if (log_.args.empty()) log_.args_line = n_;
    for (auto& [k, v] : a) {
      std::string key = k;
      if (source == "config") {
        static constexpr std::array<string_view, 8> kTake = {"model", "dtype", "max_seq_len", "tensor_parallel_size",
                                                            "pipeline_parallel_size", "quantization",
                                                            "kv_cache_dtype", "enforce_eager"};
        if (std::find(kTake.begin(), kTake.end(), key) == kTake.end()) continue;
        if (key == "max_seq_len") key = "max_model_len";
        if (key == "dtype" && at(v, 0, "torch.")) v = v.substr(6);
      }
      auto same = [&](const auto& kv) { return kv.first == key; };
      if (std::none_of(log_.args.begin(), log_.args.end(), same)) log_.args.emplace_back(key, v);
    }
    // `vllm serve X` stores the model as model_tag; also give it under the engine's destination name
    auto tag = std::find_if(log_.args.begin(), log_.args.end(), [](const auto& kv) { return kv.first == "model_tag"; });
    auto model = std::find_if(log_.args.begin(), log_.args.end(), [](const auto& kv) { return kv.first == "model"; });
    if (tag != log_.args.end() && model == log_.args.end()) log_.args.emplace_back("model", tag->second);
  }

  bool args() {
    size_t p;
    Args a;
    bool closed = true;
    string_view source;
    if ((p = s_.find("non-default args: {")) != npos) {
      closed = python_dict(s_, p + 18, a);
      source = "dict";
    } else if ((p = s_.find("args: Namespace(")) != npos) {
      closed = python_kwargs(s_, p + 16, ')', a);
      source = "namespace";
    } else if ((p = s_.find("server_args=ServerArgs(")) != npos) {
      closed = python_kwargs(s_, p + 23, ')', a);
      source = "server_args";
    } else if ((p = s_.find("LLM engine (v")) != npos && (p = s_.find("with config: ", p)) != npos) {
      closed = python_kwargs(s_, p + 13, 0, a);
      source = "config";
    } else {
      return false;
    }
    if (!closed) warn("line " + std::to_string(n_) + ": args not closed; read the complete entries");
    if (source == "server_args") {
      for (const auto& [k, v] : a) {
        if (k != "mem_fraction_static") continue;
        Num n;
        size_t at_pos = s_.find("mem_fraction_static=");
        if (at_pos != npos && parse_number(s_, at_pos + 20, n) == NumStatus::ok)
          emit("mem_fraction_static", n, 1, n.end);
      }
    }
    merge_args(std::move(a), source);
    return true;
  }

  // ---- vLLM ----
  void vllm() {
    // Every vLLM size is bytes / 2^30 whatever the label ("GB" in V0, "GiB" since); %.2f or format_gib
    // (round(x, 2), trailing zero dropped: "61.3"), so a precision of at least two decimals.
    constexpr int kG = 2;
    size("weights_bytes", "Model loading took", 0, kG);
    size("weights_bytes", "Loading model weights took", 0, kG);
    size("weights_bytes", "model weights take", 0, kG);
    if (has("the current vLLM instance can use")) {
      size_t p = s_.find("the current vLLM instance can use");
      size_t eq = s_.find(") = ", p);
      if (eq != npos) size("usable_bytes", ") =", p, kG);
      else size("usable_bytes", "the current vLLM instance can use", 0, kG);
    }
    size("gpu_total_bytes", "total_gpu_memory", 0, kG);
    count("gpu_memory_utilization", "gpu_memory_utilization");
    size("non_torch_bytes", "non_torch_memory", 0, kG);
    size("activation_bytes", "PyTorch activation peak memory", 0, kG);
    size("activation_bytes", "torch_peak_increase", 0, kG);
    size("peak_torch_bytes", "peak_torch_memory", 0, kG);
    size("initial_memory_bytes", "initial_memory_usage", 0, kG);
    size("kv_available_bytes", "available_kv_cache_memory", 0, kG);
    size("kv_available_bytes", "kv_cache_size=", 0, kG);
    size("kv_available_bytes", "the rest of the memory reserved for KV Cache", 0, kG);
    size("kv_available_bytes", "Available KV cache memory:", 0, kG);
    if (has("as specified by kv_cache_memory_bytes")) size("kv_cache_memory_bytes", "reserved ", 0, kG);
    count("kv_tokens", "GPU KV cache size:");
    if (has("Maximum concurrency for")) {
      count("max_concurrency_tokens", "Maximum concurrency for");
      count("max_concurrency", "tokens per request:", s_.find("Maximum concurrency for"));
    }
    blocks();
    if (has("Graph capturing finished")) size("cuda_graph_bytes", "took", s_.find("Graph capturing finished"), kG);
    if (has("CUDA graph pool memory:")) {
      size_t e = size("cuda_graph_bytes", "CUDA graph pool memory:", 0, kG);
      if (e != npos && has("(estimated)")) size("cuda_graph_estimate_bytes", ",", e, kG);
    }
    size("cuda_graph_estimate_bytes", "Estimated CUDA graph memory:", 0, kG);
    if (has("To serve at least one request with the model")) {
      size_t p = s_.find("To serve at least one request with the model");
      count("max_model_len", "max seq len", p);
      size("kv_needed_bytes", "), (", p, kG);
      size("kv_available_bytes", "available KV cache memory (", p, kG);
      fail(true);
    }
    count("estimated_max_model_len", "the estimated maximum model length is");
    if (has("larger than the maximum number of tokens that can be stored in KV cache")) {
      count("max_model_len", "max seq len");
      count("max_tokens_in_kv", "stored in KV cache");
      fail(true);
    }
    if (has("Auto-fit max_model_len: reduced from")) {
      size_t p = s_.find("Auto-fit max_model_len: reduced from");
      count("auto_fit_max_model_len", " to ", p + 36);
      if (has("available for KV cache")) size("kv_available_bytes", "GPU memory (", p, kG);
    }
    fail(has("No available memory for the cache blocks") || has("on startup is less than desired GPU memory"));
  }

  // "# GPU blocks: N, # CPU blocks: M", "# cuda blocks: N", "GPU blocks: N",
  // "The engine can allocate N GPU blocks, M CPU blocks".
  void blocks() {
    for (size_t p = s_.find("blocks:"); p != npos; p = s_.find("blocks:", p + 7)) {
      size_t e = p;
      while (e > 0 && is_space(s_[e - 1])) --e;
      size_t b = e;
      while (b > 0 && is_alpha(s_[b - 1])) --b;
      if (b == e || (b > 0 && !is_space(s_[b - 1]) && s_[b - 1] != '#' && s_[b - 1] != ',')) continue;
      std::string device(s_.substr(b, e - b));
      for (auto& c : device) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
      if (device == "CPU") count("cpu_blocks", "blocks:", p);
      else if (device == "GPU" || device == "CUDA" || device == "XPU" || device == "HPU" || device == "NPU")
        count("gpu_blocks", "blocks:", p);
    }
    if (has("The engine can allocate")) {
      if (auto n = number_before(" GPU blocks")) emit("gpu_blocks", *n, 1, n->end);
      if (auto n = number_before(" CPU blocks")) emit("cpu_blocks", *n, 1, n->end);
    }
  }

  // ---- SGLang ("GB" = 2^30: GB = 1024**3 in its code; the HiCache host line uses 1e9) ----
  void sglang() {
    if (has("Load weight end") || has("load_weight_end")) {
      size("avail_after_weights_bytes", "avail mem=");
      size("weights_bytes", "mem usage=");
      size_t p = value_pos("dtype=");
      if (p != npos) set_text("dtype", s_.substr(p, s_.find(',', p) == npos ? npos : s_.find(',', p) - p));
      size_t t = s_.find(" type=");
      if (t != npos) {
        t += 6;
        set_text("arch", s_.substr(t, s_.find(',', t) == npos ? npos : s_.find(',', t) - t));
      }
    }
    if (has("Load weight begin")) size("avail_before_weights_bytes", "avail mem=");
    if (has("Capture cuda graph end")) {
      size("cuda_graph_bytes", "mem usage=");
      size("avail_after_graph_bytes", "avail mem=");
    }
    if (has("Using KV cache dtype:")) set_text("kv_dtype", s_.substr(value_pos("Using KV cache dtype:")));
    if (has("KV Cache is allocated")) {
      count("kv_tokens", "#tokens:");
      size("k_bytes", " K size:");
      size("kv_bytes", " KV size:");
      size("v_bytes", " V size:");
    }
    if (has("Memory pool end")) size("avail_after_pool_bytes", "avail mem=");
    if (has("max_total_num_tokens=")) {
      count("max_total_num_tokens", "max_total_num_tokens=");
      count("chunked_prefill_size", "chunked_prefill_size=");
      count("max_prefill_tokens", "max_prefill_tokens=");
      count("max_running_requests", "max_running_requests=");
      count("context_len", "context_len=");
      size("available_gpu_mem_bytes", "available_gpu_mem=");
    }
    if (!has("ServerArgs(")) count("mem_fraction_static", "mem_fraction_static=");
    if (has("Mamba Cache is allocated")) {
      count("mamba_cache_size", "max_mamba_cache_size:");
      size("conv_state_bytes", "conv_state size:");
      size("ssm_state_bytes", "ssm_state size:");
    }
    if (has("full_layer_tokens=")) {
      count("full_layer_tokens", "full_layer_tokens=");
      count("swa_layer_tokens", "swa_layer_tokens=");
    }
    if (has("host memory for hierarchical KV cache")) size("hicache_host_bytes", "Allocating", 0, 0, 1e9);
    fail(has("Not enough memory") && (has("mem-fraction-static") || has("mem_fraction_static")));
    fail(has("Memory pool size is too small"));
  }

  // ---- TensorRT-LLM (GiB = 2^30, MiB = 2^20: the C++ runtime divides by 1 << 30 / 1 << 20) ----
  void trtllm() {
    if (has("for k/v cache")) size("kv_pool_bytes", "Allocate");
    if (has(" tokens in paged KV cache") && has("Using ")) count("kv_tokens", "Using ");
    if (has("for max tokens in paged KV cache")) {
      size_t e = size("kv_pool_bytes", "Allocated");
      if (e != npos) count("kv_tokens", "paged KV cache (", e);
    }
    count("gpu_blocks", "Number of blocks in KV cache primary pool:");
    count("tokens_per_block", "Number of tokens per block:");
    if (has("IExecutionContext creation")) {
      size_t now = s_.find("now:");
      if (now != npos) {
        auto n = number(value_pos("GPU", now));
        if (n) emit("engine_bytes", *n, kMiB, s_.find(')', n->end) == npos ? n->end : s_.find(')', n->end) + 1);
      }
    }
    if (has("for execution context memory")) size("activation_bytes", "Allocated");
    if (has("Memory usage when calculating max tokens in paged kv cache")) {
      size("gpu_total_bytes", "total:");
      size("kv_available_bytes", "available:");
    }
    if (has("Peak memory during memory usage profiling")) {
      size("peak_bytes", "(torch + non-torch):");
      size("kv_available_bytes", "available KV cache memory when calculating max tokens:");
      count("free_fraction", "fraction is set");
      count("kv_bytes_per_token", "kv size per token is");
      size("gpu_total_bytes", "device total memory");
    }
    size("weights_bytes", "Memory used after loading model weights (inside torch) in memory usage profiling:");
    size("activation_bytes", "Memory dynamically allocated during inference (inside torch) in memory usage profiling:");
    if (has("Memory used outside torch")) size("non_torch_bytes", "in memory usage profiling:");
    count("max_seq_len_adjusted", "Adjusted max_seq_len to");
    if (has("too large for at least one sequence to fit in kvCache")) count("max_seq_len_adjusted", "reduced to");
  }

  // ---- llama.cpp (MiB = 2^20: the log divides by 1024.0*1024.0) ----
  void llama() {
    static constexpr std::array<string_view, 7> kPrefixes = {"print_info:", "llm_load_print_meta:", "llama_context:",
                                                             "llama_new_context_with_model:", "llama_init_from_model:",
                                                             "llama_kv_cache_unified:", "llama_kv_cache:"};
    for (auto prefix : kPrefixes) {
      size_t p = s_.find(prefix);
      if (p == npos) continue;
      size_t eq = s_.find('=', p);
      if (eq == npos) break;
      string_view name = trim(s_.substr(p + prefix.size(), eq - p - prefix.size()));
      llama_setting(name, eq);
      break;
    }
    // ggml's device list ("  Device 0: NVIDIA GeForce RTX 4060 Ti, compute capability 8.9, VMM: yes"): the first name
    if (const size_t d = s_.find("Device 0: "); d != npos && has("compute capability")) {
      const size_t from = d + 10, comma = s_.find(',', from);
      set_text("device", s_.substr(from, comma == npos ? npos : comma - from));
    }
    if (has("KV self size") || (has(" size = ") && has(" cells,") && has("K ("))) llama_kv_summary();
    if (has("R (") && has("S (") && has(" cells,")) {
      size("recurrent_r_bytes", "):", s_.find("R ("));
      size("recurrent_s_bytes", "):", s_.find("S ("));
    }
    if (has("creating non-SWA KV cache")) {
      if (auto n = number_before(" cells")) emit("kv_cells_nonswa", *n, 1, n->end);
    } else if (has("SWA KV cache, size =")) {
      if (auto n = number_before(" cells")) emit("kv_cells_swa", *n, 1, n->end);
    }
    if (has(" buffer size =")) llama_buffer();
    if (has("offloaded ") && has(" layers to GPU")) {
      size_t p = s_.find("offloaded ");
      auto a = number(p + 10);
      if (a && at(s_, a->end, "/")) {
        auto b = number(a->end + 1);
        if (b) {
          emit("gpu_layers", *a, 1, a->end);
          emit("total_layers", *b, 1, b->end);
        }
      }
    }
    if (has("llama_new_context_with_model: mla_attn")) ik_ = true;
  }

  void llama_setting(string_view name, size_t eq) {
    const size_t vpos = skip_spaces(s_, eq + 1);
    static const std::array<std::pair<string_view, const char*>, 18> kCounts = {{
        {"n_ctx_train", "n_ctx_train"}, {"n_layer", "n_layer"}, {"n_head_kv", "n_head_kv"},
        {"n_embd_head_k", "n_embd_head_k"}, {"n_embd_head_v", "n_embd_head_v"}, {"n_swa", "n_swa"},
        {"n_lora_kv", "kv_lora_rank"}, {"n_ctx", "n_ctx"}, {"n_ctx_per_seq", "n_ctx_seq"}, {"n_ctx_seq", "n_ctx_seq"},
        {"n_seq_max", "n_seq_max"}, {"n_batch", "n_batch"}, {"n_ubatch", "n_ubatch"}, {"n_embd", "n_embd"},
        {"n_head", "n_head"}, {"flash_attn", "flash_attn"}, {"kv_unified", "kv_unified"}, {"n_expert", "n_expert"},
    }};
    string_view value = trim(s_.substr(vpos));
    for (const auto& [printed, key] : kCounts) {
      if (name != printed) continue;
      if (value == "true" || value == "false" || value == "enabled" || value == "disabled") {
        Num n;
        n.value = (value == "true" || value == "enabled") ? 1 : 0;
        n.begin = vpos;
        n.end = vpos + value.size();
        emit(key, n, 1, n.end);
        return;
      }
      auto n = number(vpos);
      if (n && trim(s_.substr(n->end)).empty()) emit(key, *n, 1, n->end);
      else if (!n && !value.empty() && is_alpha(value[0])) set_text(key, value);  // flash_attn = auto
      return;
    }
    if (name == "general.name") set_text("general.name", value);
    else if (name == "file type" || name == "model ftype") set_text("file_type", value);
    else if (name == "arch") set_text("arch", value);
    else if (name == "model params") {
      auto n = number(vpos);
      if (!n) return;
      size_t u = skip_spaces(s_, n->end);
      const char c = u < s_.size() ? s_[u] : 0;
      const double f = c == 'T' ? 1e12 : c == 'B' ? 1e9 : c == 'M' ? 1e6 : c == 'K' ? 1e3 : 1;
      emit("model_params", *n, f, f == 1 ? n->end : u + 1);
    } else if (name == "model size" || name == "file size") {
      size_t e = size("model_size_bytes", "=", eq);
      if (e != npos && has("BPW")) {
        auto n = number(skip_spaces(s_, s_.find('(', e) == npos ? npos : s_.find('(', e) + 1));
        if (n) emit("bpw", *n, 1, n->end);
      }
    }
  }

  // "KV self size  =   82.00 MiB, K (iq4_nl):   18.00 MiB, V (f16):   64.00 MiB" and
  // "size = 2048.00 MiB ( 16384 cells,  32 layers,  1/1 seqs), K (f16): 1024.00 MiB, V (f16): 1024.00 MiB".
  void llama_kv_summary() {
    if (has("KV self size")) size("kv_bytes", "KV self size");
    else size("kv_bytes", " size =");
    if (auto n = number_before(" cells")) emit("kv_cells", *n, 1, n->end);
    if (auto n = number_before(" layers")) emit("kv_layers", *n, 1, n->end);
    char before = 0;
    if (auto n = number_before(" seqs", &before)) {
      if (before == '/') {  // "%2u/%u seqs": n_seq_max / n_stream
        size_t slash = n->begin - 1;
        size_t b = slash;
        while (b > 0 && is_digit(s_[b - 1])) --b;
        if (auto m = number(b); m && m->end == slash) emit("kv_seqs", *m, 1, m->end);
        emit("kv_streams", *n, 1, n->end);
      } else {
        emit("kv_seqs", *n, 1, n->end);
      }
    }
    for (auto [tag, key, text] : {std::tuple{"K (", "k_bytes", "type_k"}, std::tuple{"V (", "v_bytes", "type_v"}}) {
      size_t p = s_.find(tag);
      while (p != npos && p > 0 && s_[p - 1] != ' ' && s_[p - 1] != ',') p = s_.find(tag, p + 1);
      if (p == npos) continue;
      size_t close = s_.find(')', p);
      if (close == npos) continue;
      set_text(text, s_.substr(p + 3, close - p - 3));
      size(key, "):", close);
    }
  }

  // "%s: %10s KV buffer size = %8.2f MiB" (also compute / model / output / RS; old "CUDA0 buffer size" under
  // llm_load_tensors is the model buffer). The scope is the backend buffer name.
  void llama_buffer() {
    size_t p = s_.find(" buffer size =");
    size_t e = p;
    size_t b = e;
    while (b > 0 && (is_word(s_[b - 1]) || s_[b - 1] == '-')) --b;
    string_view kind = s_.substr(b, e - b);
    std::string key;
    if (kind == "KV") key = "kv_buffer_bytes";
    else if (kind == "compute") key = "compute_buffer_bytes";
    else if (kind == "model") key = "model_buffer_bytes";
    else if (kind == "output") key = "output_buffer_bytes";
    else if (kind == "RS") key = "rs_buffer_bytes";
    std::string backend;
    if (!key.empty()) {
      size_t be = b;
      while (be > 0 && is_space(s_[be - 1])) --be;
      size_t bb = be;
      while (bb > 0 && (is_word(s_[bb - 1]) || s_[bb - 1] == '-')) --bb;
      if (bb > 0 && s_[bb - 1] == ':') return;  // no backend name
      backend = std::string(s_.substr(bb, be - bb));
    } else if (has("load_tensors:")) {
      key = "model_buffer_bytes";
      backend = std::string(kind);
    } else {
      return;
    }
    if (backend.empty()) return;
    auto n = number(value_pos(" buffer size =", 0));
    if (!n) return;
    Unit u = unit_at(s_, n->end);
    if (u.factor == 0) return;
    emit(key, *n, u.factor, u.end, 0, backend, true);
  }

  void start_errors() {
    fail(has("CUDA out of memory") || has("cudaMalloc failed: out of memory") ||
         has("failed to create context with model") || (has("failed to allocate") && has("buffer")));
  }
};

}  // namespace

const LogFigure* EngineLog::find(const std::string& key) const {
  const LogFigure* first = nullptr;
  for (const auto& f : figures) {
    if (f.key != key) continue;
    if (primary_scope(f.scope)) return &f;
    if (!first) first = &f;
  }
  return first;
}

double EngineLog::sum(const std::string& key) const {
  double total = 0;
  for (const auto& f : figures)
    if (f.key == key) total += f.value;
  return total;
}

namespace {
// A file that holds a restart (journald or `docker logs` across a crash loop, a log appended to on every start) holds
// several startups. A startup opens with the line each engine prints once per launch (vLLM's API server version,
// SGLang's server_args, TensorRT-LLM's version, llama.cpp's build); those lines also repeat inside one startup (one
// per API server or data-parallel engine, one per MPI rank), so a new startup is one such line after the previous
// one had come up (the server's ready line) or failed (an error line). Returns the byte offset and line number the
// last startup begins at, and how many there are.
struct Startups {
  size_t offset = 0;
  int first_line = 1, count = 1;
};
Startups last_startup(const std::string& text) {
  Startups out;
  bool ended = false;  // the current startup came up or failed
  int number = 0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t nl = text.find('\n', begin);
    const size_t end = nl == std::string::npos ? text.size() : nl;
    ++number;
    const string_view raw(text.data() + begin, std::min<size_t>(end - begin, kMaxLine));
    const std::string s = clean_line(raw).text;
    auto has = [&](const char* m) { return s.find(m) != std::string::npos; };
    const bool opens = has("vLLM API server version") || has("server_args=ServerArgs(") || has("TensorRT-LLM version:") ||
                       s.rfind("build: ", 0) == 0 || has("main: build = ");
    if (opens && ended) {
      out.offset = begin;
      out.first_line = number;
      ++out.count;
      ended = false;
    }
    if (has("Application startup complete") || has("Starting vLLM API server") || has("The server is fired up and ready to roll") ||
        has("server is listening on") || has("Uvicorn running on") || has("Traceback (most recent call last)") ||
        has("Engine core initialization failed") || has("CUDA out of memory") || has("Not enough memory") ||
        has("No available memory for the cache blocks"))
      ended = true;
    begin = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}
}  // namespace

EngineLog read_engine_log(const std::string& text, const std::string& name) {
  if (std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }))
    throw InputError(name, "is empty", "pass the engine's startup log (its stdout and stderr saved to a file)");
  if (looks_binary(text))
    throw InputError(name, "is binary, not a text log", "pass the engine's startup log as text");

  EngineLog log;
  Reader reader(log);
  const Startups starts = last_startup(text);
  if (starts.count > 1)
    reader.warn("the file holds " + std::to_string(starts.count) + " startups (a restart after the server came up or failed): read the last, from line " +
                std::to_string(starts.first_line));
  int number = starts.first_line - 1;
  for (size_t begin = starts.offset; begin < text.size();) {
    size_t nl = text.find('\n', begin);
    const bool terminated = nl != std::string::npos;
    const size_t end = terminated ? nl : text.size();
    ++number;
    string_view raw(text.data() + begin, end - begin);
    if (raw.size() > kMaxLine) {
      reader.warn("line " + std::to_string(number) + ": longer than " + std::to_string(kMaxLine) +
                  " bytes; read the first " + std::to_string(kMaxLine));
      raw = raw.substr(0, kMaxLine);
    }
    Clean c = clean_line(raw);
    if (terminated) {
      reader.line(c, number);
    } else {
      // a last line without its newline: when a figure's number runs to the very end of the text (nothing but
      // digits, ',' or '.' after where it was read), the line was cut mid-number ("GPU KV cache size: 448,2" of
      // "448,256 tokens"); its figures are dropped.
      EngineLog before = log;
      reader.line(c, number);
      // a cut lands inside a number or just after its separator ("448," of "448,256", "54." of "54.72")
      const bool ends_in_digit = !raw.empty() && (is_digit(raw.back()) || raw.back() == ',' || raw.back() == '.');
      const size_t end_of_figures = reader.max_number_end();
      const bool number_to_end =
          end_of_figures > 0 && end_of_figures <= c.text.size() &&
          std::all_of(c.text.begin() + static_cast<std::ptrdiff_t>(end_of_figures), c.text.end(),
                      [](char ch) { return is_digit(ch) || ch == ',' || ch == '.'; });
      if (ends_in_digit && number_to_end) {
        log = std::move(before);
        reader.warn("line " + std::to_string(number) + ": cut off mid-line; ignored");
      }
    }
    begin = terminated ? nl + 1 : text.size();
  }
  reader.finish();
  return log;
}

}  // namespace kvplan::io
