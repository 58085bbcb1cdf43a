// Table rendering and the JSON envelope (see output.hpp).
#include "output.hpp"

#include <algorithm>
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

std::string render(const Table& t, Format f) {
  std::ostringstream o;
  const size_t n = t.columns.size();
  auto right = [&](size_t i) { return i < t.right_align.size() && t.right_align[i]; };
  if (f == Format::jsonl || f == Format::json) {  // one object per row, keyed by column
    for (const auto& r : t.rows) {
      ojson j = ojson::object();
      for (size_t i = 0; i < n; ++i) j[t.columns[i]] = i < r.size() ? r[i] : "";
      o << j.dump() << "\n";
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
    if (!t.title.empty()) o << "### " << t.title << "\n\n";
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
  std::vector<size_t> w(n, 0);
  for (size_t i = 0; i < n; ++i) w[i] = t.columns[i].size();
  for (const auto& r : t.rows)
    for (size_t i = 0; i < n && i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      const std::string& c = i < r.size() ? r[i] : std::string();
      const std::string pad(w[i] - c.size(), ' ');
      s += (i ? "  " : "") + (right(i) ? pad + c : c + (i + 1 < n ? pad : ""));
    }
    return s + "\n";
  };
  if (!t.title.empty()) o << t.title << "\n";
  o << line(t.columns);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) total += w[i] + (i ? 2 : 0);
  o << std::string(total, '-') << "\n";
  for (const auto& r : t.rows) o << line(r);
  return o.str();
}

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

std::string grouped(long long v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

}  // namespace kvplan::cli
