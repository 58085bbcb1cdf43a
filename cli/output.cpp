// Table rendering and the JSON envelope (see output.hpp).
#include "output.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>

#include <sys/ioctl.h>
#include <unistd.h>
#include <sstream>

#include "kvplan/core/error.hpp"
#include "version.hpp"

namespace kvplan::cli {

Format parse_format_flag(const std::string& s) {
  if (s == "table") return Format::table;
  if (s == "md" || s == "markdown") return Format::md;
  if (s == "csv") return Format::csv;
  if (s == "json") return Format::json;
  if (s == "jsonl") return Format::jsonl;
  throw InputError("--format", "unknown format '" + s + "'", "use table, md, csv, json or jsonl");
}

namespace {

int g_width = 0;  // 0: $COLUMNS, else 100
bool g_verbose = false;

std::vector<std::string> wrap(const std::string& s, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    if (j == std::string::npos) j = s.size();
    std::string word = s.substr(i, j - i);
    i = j + 1;
    while (word.size() > width) {  // a word longer than the column: break after its last ',' or '/' that fits, so a
                                   // list (layer indices 0,2,4,...) is not cut inside one of its numbers
      if (!line.empty()) { lines.push_back(line); line.clear(); }
      const size_t sep = word.find_last_of(",/", width - 1);
      const size_t cut = sep != std::string::npos && sep > 0 ? sep + 1 : width;
      lines.push_back(word.substr(0, cut));
      word = word.substr(cut);
    }
    if (line.empty()) line = word;
    else if (line.size() + 1 + word.size() <= width) line += " " + word;
    else { lines.push_back(line); line = word; }
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

void set_table_options(int width, bool verbose) {
  g_width = width;
  g_verbose = verbose;
}

int table_width() {
  if (g_width > 0) return g_width;
  if (const char* c = std::getenv("COLUMNS")) {
    const int w = std::atoi(c);
    if (w >= 40 && w <= 1000) return w;
  }
  // a terminal's own width when stdout is one (shells set COLUMNS without exporting it)
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40 && ws.ws_col <= 1000) return ws.ws_col;
  return 100;
}

namespace {
std::string render_text(Table t);
}

std::string render(const Table& t, Format f) {
  if (f == Format::table) return render_text(t);
  std::ostringstream o;
  const size_t n = t.columns.size();
  auto right = [&](size_t i) { return i < t.right_align.size() && t.right_align[i]; };
  if (f == Format::jsonl || f == Format::json) {  // one object per row, keyed by column
    for (const auto& r : t.rows) {
      ojson j = ojson::object();
      for (size_t i = 0; i < n; ++i) {
        const std::string c = i < r.size() ? r[i] : "";
        // a cell that is a plain number is a JSON number (CSV-style raw cells)
        const bool text = i < t.text.size() && t.text[i];
        const bool numeric = !text && !c.empty() && c.find_first_not_of("-0123456789.eE+") == std::string::npos &&
                             (std::isdigit(static_cast<unsigned char>(c[0])) || (c[0] == '-' && c.size() > 1));
        if (numeric) {
          const ojson x = ojson::parse(c, nullptr, false);
          j[t.columns[i]] = x.is_discarded() ? ojson(c) : x;
        } else if (!text && (c == "true" || c == "false")) {  // a flattened boolean stays one (as sweep's rows have it)
          j[t.columns[i]] = c == "true";
        } else if (c.empty()) {  // an empty CSV cell is a value not known: null, as the json output has it
          j[t.columns[i]] = nullptr;
        } else {
          j[t.columns[i]] = c;
        }
      }
      o << j.dump(-1, ' ', false, ojson::error_handler_t::replace) << "\n";
    }
    return o.str();
  }
  if (f == Format::csv) {
    for (size_t i = 0; i < n; ++i) o << (i ? "," : "") << csv_cell(t.columns[i]);
    o << "\n";
    for (const auto& r : t.rows) {
      for (size_t i = 0; i < n; ++i) o << (i ? "," : "") << csv_cell(i < r.size() ? r[i] : "");
      o << "\n";
    }
    return o.str();
  }
  if (f == Format::md) {
    if (!t.title.empty()) o << "### " << one_line(t.title) << "\n\n";
    o << "|";
    for (const auto& c : t.columns) o << " " << md_cell(c) << " |";
    o << "\n|";
    for (size_t i = 0; i < n; ++i) o << (right(i) ? " ---: |" : " --- |");
    o << "\n";
    for (const auto& r : t.rows) {
      o << "|";
      for (size_t i = 0; i < n; ++i) o << " " << md_cell(i < r.size() ? r[i] : "") << " |";
      o << "\n";
    }
    return o.str();
  }
  return o.str();
}

namespace {

std::string render_text(Table t) {
  std::ostringstream o;
  // verbose-only columns go unless --verbose
  for (size_t i = t.columns.size(); i-- > 0;) {
    if (g_verbose || i >= t.verbose_only.size() || !t.verbose_only[i]) continue;
    t.columns.erase(t.columns.begin() + static_cast<std::ptrdiff_t>(i));
    if (i < t.right_align.size()) t.right_align.erase(t.right_align.begin() + static_cast<std::ptrdiff_t>(i));
    for (auto& r : t.rows)
      if (i < r.size()) r.erase(r.begin() + static_cast<std::ptrdiff_t>(i));
  }
  const size_t n = t.columns.size();
  auto right = [&](size_t i) { return i < t.right_align.size() && t.right_align[i]; };
  std::vector<size_t> w(n, 0);
  for (size_t i = 0; i < n; ++i) w[i] = t.columns[i].size();
  for (const auto& r : t.rows)
    for (size_t i = 0; i < n && i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  // too wide: shrink the widest text (left-aligned) columns, down to 10 characters each
  // --verbose asks for the whole derivation on one line: no limit unless COLUMNS sets one
  const size_t limit = g_verbose && g_width == 0 && !std::getenv("COLUMNS") ? SIZE_MAX : static_cast<size_t>(table_width());
  auto total_width = [&] {
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) total += w[i] + (i ? 2 : 0);
    return total;
  };
  // first down to each column's longest word (a wrap then breaks only at spaces), then to 10 characters
  std::vector<size_t> word(n, 10);
  const auto longest_word = [&](size_t i, const std::string& text) {
    for (size_t a = 0; a < text.size();) {
      const size_t b = std::min(text.find(' ', a), text.size());
      word[i] = std::max(word[i], b - a);
      a = b + 1;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    longest_word(i, t.columns[i]);  // a heading too is not broken inside a word
    for (const auto& r : t.rows)
      if (i < r.size()) longest_word(i, r[i]);
  }
  // a cell that is one word (an id, a model_type, a path: text users grep and copy) is never broken either
  std::vector<size_t> single(n, 10);
  for (size_t i = 0; i < n; ++i)
    for (const auto& r : t.rows)
      if (i < r.size() && r[i].find(' ') == std::string::npos) single[i] = std::max(single[i], r[i].size());
  // a number is never broken: a right-aligned column keeps its longest word even past the width (a split
  // 704,643,07 / 2 reads as another number); text columns break the words of a sentence when nothing else gives
  const auto floor_of = [&](size_t i, bool whole_words) {
    return whole_words || right(i) ? std::min(word[i], w[i]) : std::min(single[i], w[i]);
  };
  for (const bool whole_words : {true, false}) {
    while (total_width() > limit) {
      size_t widest = n;
      // breaking words: the first column (the row's name, an id users copy) last, once no other column can give, and
      // right-aligned (number) columns after the text ones; at whole words any column may give (a number is one
      // word, so only a sentence among the numbers wraps)
      for (const bool numbers : {false, true}) {
        for (size_t i = 0; i < n; ++i) {
          // at whole words every column is of the first tier; breaking words, text columns first, then numbers
          if ((whole_words ? numbers : right(i) != numbers) || (!whole_words && i == 0 && n > 1)) continue;
          const size_t floor = floor_of(i, whole_words);
          if (w[i] > floor && (widest == n || w[i] - floor > w[widest] - floor_of(widest, whole_words))) widest = i;
        }
        if (widest != n) break;
      }
      if (widest == n && !whole_words && n > 1 && !right(0) && w[0] > floor_of(0, false)) widest = 0;
      if (widest == n) break;
      const size_t floor = floor_of(widest, whole_words);
      w[widest] = std::max(floor, w[widest] - std::min(w[widest] - floor, total_width() - limit));
    }
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::vector<std::vector<std::string>> cells(n);
    size_t height = 1;
    for (size_t i = 0; i < n; ++i) {
      const std::string& c = i < r.size() ? r[i] : std::string();
      cells[i] = c.size() > w[i] ? wrap(c, w[i]) : std::vector<std::string>{c};
      height = std::max(height, cells[i].size());
    }
    std::string s;
    for (size_t k = 0; k < height; ++k) {
      std::string l;
      for (size_t i = 0; i < n; ++i) {
        const std::string c = k < cells[i].size() ? cells[i][k] : std::string();
        const std::string pad(w[i] > c.size() ? w[i] - c.size() : 0, ' ');
        l += (i ? "  " : "") + (right(i) ? pad + c : c + (i + 1 < n ? pad : ""));
      }
      while (!l.empty() && l.back() == ' ') l.pop_back();
      s += l + "\n";
    }
    return s;
  };
  if (!t.title.empty()) o << one_line(t.title) << "\n";
  o << line(t.columns);
  o << std::string(total_width(), '-') << "\n";
  for (const auto& r : t.rows) o << line(r);
  return o.str();
}

}  // namespace

ojson envelope(const std::string& schema_name, const std::string& schema_version, const std::vector<std::string>& argv,
               const std::vector<std::string>& profile_sources, ojson inputs, ojson results) {
  ojson e;
  e["schema"] = {{"name", schema_name}, {"version", schema_version}};
  e["meta"] = {{"tool", "kvplan"}, {"tool_version", kVersion}, {"git_sha", kGitSha}, {"argv", argv},
               {"profiles", profile_sources}};
  e["inputs"] = std::move(inputs);
  e["results"] = std::move(results);
  return e;
}

Table flatten(const ojson& j) {
  Table t;
  t.columns = {"key", "value"};
  t.right_align = {false, true};
  std::vector<std::pair<std::string, const ojson*>> stack = {{"", &j}};
  std::vector<std::vector<std::string>> rows;
  auto walk = [&](auto&& self, const std::string& prefix, const ojson& v) -> void {
    if (v.is_object()) {
      for (const auto& [k, x] : v.items()) self(self, prefix.empty() ? k : prefix + "." + k, x);
    } else if (v.is_array()) {
      if (v.empty()) rows.push_back({prefix, "[]"});
      for (size_t i = 0; i < v.size(); ++i) self(self, prefix + "." + std::to_string(i), v[i]);
    } else {
      rows.push_back({prefix, v.is_string() ? v.get<std::string>() : v.dump()});
    }
  };
  walk(walk, "", j);
  t.rows = std::move(rows);
  return t;
}

std::string fmt(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string one_line(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const unsigned char c : s) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
  }
  return out;
}

std::string grouped(long long v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

}  // namespace kvplan::cli
