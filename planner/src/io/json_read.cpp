// Strict JSON reading with file/JSON-path error messages (see json_read.hpp).
#include "kvplan/io/json_read.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace kvplan::io {

namespace {

// Replaces NaN / Infinity / -Infinity tokens outside strings by quoted strings.
std::string quote_nonfinite(const std::string& t) {
  std::string out;
  out.reserve(t.size() + 16);
  bool in_str = false, esc = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_str) {
      out += c;
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') { in_str = true; out += c; continue; }
    auto starts = [&](const char* w) { return t.compare(i, std::char_traits<char>::length(w), w) == 0; };
    if (starts("-Infinity")) { out += "\"-Infinity\""; i += 8; continue; }
    if (starts("Infinity")) { out += "\"Infinity\""; i += 7; continue; }
    if (starts("NaN")) { out += "\"NaN\""; i += 2; continue; }
    out += c;
  }
  return out;
}

void line_col(const std::string& t, size_t byte, size_t& line, size_t& col) {
  line = 1; col = 1;
  for (size_t i = 0; i < byte && i < t.size(); ++i) {
    if (t[i] == '\n') { ++line; col = 1; } else { ++col; }
  }
}

// Depth guard: nlohmann recurses per nesting level; refuse absurd nesting before parsing.
void check_depth(const std::string& t, const std::string& label) {
  int depth = 0;
  bool in_str = false, esc = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_str) {
      if (esc) esc = false; else if (c == '\\') esc = true; else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '[' || c == '{') {
      if (++depth > 256) {
        size_t l, cl; line_col(t, i, l, cl);
        throw InputError(label, "line " + std::to_string(l) + ", column " + std::to_string(cl) +
                                    ": nesting deeper than 256 levels", "flatten the document");
      }
    } else if (c == ']' || c == '}') --depth;
  }
}

}  // namespace

namespace {

json parse_checked(const std::string& text, const std::string& label, bool unique_keys) {
  check_depth(text, label);
  const std::string t = quote_nonfinite(text);
  // the keys of each open object (and an empty set for each open array), innermost last
  std::vector<std::set<std::string>> seen;
  const json::parser_callback_t unique = [&](int, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::object_start || ev == json::parse_event_t::array_start) seen.emplace_back();
    else if ((ev == json::parse_event_t::object_end || ev == json::parse_event_t::array_end) && !seen.empty()) seen.pop_back();
    else if (ev == json::parse_event_t::key && !seen.empty() && !seen.back().insert(parsed.get<std::string>()).second)
      throw InputError(label, "key " + json(parsed.get<std::string>()).dump(-1, ' ', true) + " appears twice in one object (the last would silently win)",
                       "keep one of them");
    return true;
  };
  try {
    return unique_keys ? json::parse(t, unique) : json::parse(t);
  } catch (const json::parse_error& e) {
    // Map the byte offset back onto the original text (the rewrite only grows strings by quotes).
    size_t line = 0, col = 0;
    line_col(t, e.byte > 0 ? e.byte - 1 : 0, line, col);
    std::string what = e.what();
    const auto p = what.find("parse error");
    const auto colon = what.find(": ", p == std::string::npos ? 0 : p);
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) detail = "empty document";
    std::string clean;  // the parser quotes input bytes: keep the error line printable ASCII
    for (unsigned char c : detail) {
      if (c >= 0x20 && c < 0x7f) {
        clean += static_cast<char>(c);
      } else {
        static const char* hex = "0123456789abcdef";
        clean += std::string("\\x") + hex[c >> 4] + hex[c & 15];
      }
    }
    detail = clean;
    throw InputError(label, "line " + std::to_string(line) + ", column " + std::to_string(col) +
                                ": invalid JSON (" + detail + ")",
                     "fix the JSON syntax");
  } catch (const json::exception& e) {
    // e.g. out_of_range 406: a number literal beyond double's range (found by fuzzing)
    std::string what = e.what();
    const auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
    if (what.size() > 120) what = what.substr(0, 117) + "...";
    throw InputError(label, "invalid JSON (" + what + ")", "fix the value");
  }
}

}  // namespace

json parse_json_text(const std::string& text, const std::string& label) { return parse_checked(text, label, false); }
json parse_json_text_unique_keys(const std::string& text, const std::string& label) { return parse_checked(text, label, true); }

std::string read_text_file(const std::string& path, std::int64_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, "no such file", "check the path");
  if (fs::is_directory(path, ec)) throw InputError(path, "is a directory, expected a file", "name the file itself");
  const auto size = fs::file_size(path, ec);
  if (!ec && static_cast<std::int64_t>(size) > max_bytes)
    throw InputError(path, "file is " + std::to_string(size) + " bytes, larger than the " +
                               std::to_string(max_bytes) + "-byte limit",
                     "pass the real config file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot be read (permission denied?)", "check the file's permissions");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path, "read error", "check the file");
  return ss.str();
}

json parse_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

json parse_json_file_for(const std::string& path, const std::string& setting_where) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const InputError& e) {
    throw InputError(setting_where, "'" + path + "': " + e.problem(), e.fix());
  }
  return parse_json_text(text, path);
}

std::string describe_value(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) return v.dump();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "NaN" || s == "Infinity" || s == "-Infinity") return s;
    return "string \"" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "\"";
  }
  if (v.is_array()) return "an array";
  return "an object";
}

bool JsonView::has(const std::string& key) const {
  return j_->is_object() && j_->contains(key) && !(*j_)[key].is_null();
}

std::optional<std::string> JsonView::first_present(const std::vector<std::string>& keys) const {
  for (const auto& k : keys)
    if (has(k)) return k;
  return std::nullopt;
}

void JsonView::fail(const std::string& key, const std::string& what, const std::string& fix) const {
  throw InputError(where(key), what, fix);
}

namespace {
std::string range_text(std::int64_t lo, std::int64_t hi) {
  return "integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}
}  // namespace

std::optional<std::int64_t> JsonView::opt_int(const std::string& key, std::int64_t lo, std::int64_t hi) const {
  if (!has(key)) return std::nullopt;
  const json& v = at(key);
  std::int64_t x = 0;
  if (v.is_number_integer()) {
    x = v.get<std::int64_t>();
  } else if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) fail(key, "expected " + range_text(lo, hi) + ", got " + v.dump());
    x = static_cast<std::int64_t>(u);
  } else {
    fail(key, "expected " + range_text(lo, hi) + ", got " + describe_value(v));
  }
  if (x < lo || x > hi) fail(key, "expected " + range_text(lo, hi) + ", got " + std::to_string(x));
  return x;
}

std::int64_t JsonView::get_int(const std::string& key, std::int64_t lo, std::int64_t hi) const {
  auto v = opt_int(key, lo, hi);
  if (!v) fail(key, "missing; expected " + range_text(lo, hi), "add it to the config");
  return *v;
}

std::int64_t JsonView::int_or(const std::string& key, std::int64_t dflt, std::int64_t lo, std::int64_t hi) const {
  auto v = opt_int(key, lo, hi);
  return v ? *v : dflt;
}

std::int64_t JsonView::get_int_any(const std::vector<std::string>& keys, std::int64_t lo, std::int64_t hi) const {
  if (auto k = first_present(keys)) return get_int(*k, lo, hi);
  std::string alt;
  for (size_t i = 1; i < keys.size(); ++i) alt += (i > 1 ? ", " : " (or ") + keys[i];
  if (!alt.empty()) alt += ")";
  fail(keys.front(), "missing" + alt + "; expected " + range_text(lo, hi), "add it to the config");
}

std::optional<double> JsonView::opt_number(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const json& v = at(key);
  if (!v.is_number()) fail(key, "expected a number, got " + describe_value(v));
  return v.get<double>();
}

double JsonView::get_number(const std::string& key) const {
  auto v = opt_number(key);
  if (!v) fail(key, "missing; expected a number", "add it to the config");
  return *v;
}

bool JsonView::bool_or(const std::string& key, bool dflt) const {
  if (!has(key)) return dflt;
  const json& v = at(key);
  if (!v.is_boolean()) fail(key, "expected true or false, got " + describe_value(v));
  return v.get<bool>();
}

std::string JsonView::string_or(const std::string& key, const std::string& dflt) const {
  if (!has(key)) return dflt;
  const json& v = at(key);
  if (!v.is_string()) fail(key, "expected a string, got " + describe_value(v));
  return v.get<std::string>();
}

std::string JsonView::get_string(const std::string& key) const {
  if (!has(key)) fail(key, "missing; expected a string", "add it");
  return string_or(key, "");
}

std::vector<std::string> JsonView::string_list(const std::string& key) const {
  std::vector<std::string> out;
  if (!has(key)) return out;
  const json& v = at(key);
  if (!v.is_array()) fail(key, "expected an array of strings, got " + describe_value(v));
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      throw InputError(where(key) + "/" + std::to_string(i), "expected a string, got " + describe_value(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

std::vector<std::int64_t> JsonView::int_list(const std::string& key, std::int64_t lo, std::int64_t hi) const {
  std::vector<std::int64_t> out;
  if (!has(key)) return out;
  const json& v = at(key);
  if (!v.is_array()) fail(key, "expected an array of integers, got " + describe_value(v));
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    const std::string w = where(key) + "/" + std::to_string(i);
    if (!e.is_number_integer() && !e.is_number_unsigned())
      throw InputError(w, "expected " + range_text(lo, hi) + ", got " + describe_value(e));
    if (e.is_number_unsigned() && e.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      throw InputError(w, "expected " + range_text(lo, hi) + ", got " + e.dump());
    const auto x = e.get<std::int64_t>();
    if (x < lo || x > hi) throw InputError(w, "expected " + range_text(lo, hi) + ", got " + std::to_string(x));
    out.push_back(x);
  }
  return out;
}

std::optional<JsonView> JsonView::object(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const json& v = at(key);
  if (!v.is_object()) fail(key, "expected an object, got " + describe_value(v));
  return JsonView(v, file_, path_of(key));
}

}  // namespace kvplan::io
