// YAML/JSON documents with source locations (see yaml_doc.hpp).
#include "kvplan/io/yaml_doc.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <new>
#include <cmath>
#include <string_view>

#include "kvplan/core/suggest.hpp"

namespace kvplan::io::detail {
extern thread_local std::size_t* parse_budget;  // parse_budget.cpp
}

namespace kvplan::io {

namespace {

// Bytes yaml-cpp may allocate while parsing one file: 64 per byte of text, at least 64 MiB (a
// 16 MiB file gets 1 GiB; the pathological inputs fuzzing found need gigabytes at any size).
std::size_t parse_budget_for(std::size_t text_bytes) { return std::max<std::size_t>(std::size_t{64} << 20, 64 * text_bytes); }

struct BudgetScope {
  std::size_t budget;
  explicit BudgetScope(std::size_t bytes) : budget(bytes) { detail::parse_budget = &budget; }
  ~BudgetScope() { detail::parse_budget = nullptr; }
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;
};

constexpr size_t kMaxNodes = 20000;  // alias bombs expand past this (100 deployments of 50 keys are 5,000)
constexpr int kMaxDepth = 64;

json yaml_scalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: always a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const bool neg = s[0] == '-';
  const std::string digits = neg || s[0] == '+' ? s.substr(1) : s;
  if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (digits.size() <= 18) return (neg ? -1 : 1) * std::stoll(digits);
    return s;  // too large: left as text, rejected by the typed reader with its value shown
  }
  if (s == ".nan" || s == ".NaN") return "NaN";
  if (s == ".inf" || s == ".Inf") return "Infinity";
  if (s.find_first_not_of("0123456789+-.eE") == std::string::npos) {
    try {
      size_t used = 0;
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
  }
  return s;
}

void yaml_to_json(const YAML::Node& n, json& out, const std::string& path, LocatedDoc& doc, size_t& nodes, int depth) {
  if (++nodes > kMaxNodes)
    throw InputError(doc.file, "more than " + std::to_string(kMaxNodes) + " YAML nodes (an alias bomb?)", "write the document out plainly");
  if (depth > kMaxDepth) throw InputError(doc.at(path), "nesting deeper than " + std::to_string(kMaxDepth) + " levels", "flatten the document");
  const auto m = n.Mark();
  doc.where[path] = doc.file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: out = nullptr; return;
    case YAML::NodeType::Scalar: out = yaml_scalar(n); return;
    case YAML::NodeType::Sequence: {
      out = json::array();
      size_t i = 0;
      for (const auto& item : n) {
        json v;
        yaml_to_json(item, v, path + "/" + std::to_string(i++), doc, nodes, depth + 1);
        out.push_back(std::move(v));
      }
      return;
    }
    case YAML::NodeType::Map: {
      out = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) throw InputError(doc.at(path), "mapping keys must be plain names");
        const std::string key = kv.first.Scalar();
        // a key given twice: the last would silently win (a loosened requirement, another model), so say where
        if (out.contains(key)) {
          const auto k = kv.first.Mark();
          throw InputError(doc.file + ":" + std::to_string(k.line + 1) + ":" + std::to_string(k.column + 1),
                           "key '" + key + "' appears twice in one mapping (first at " + doc.at(path + "/" + pointer_token(key)) + ")", "keep one of them");
        }
        json v;
        yaml_to_json(kv.second, v, path + "/" + pointer_token(key), doc, nodes, depth + 1);
        out[key] = std::move(v);
      }
      return;
    }
  }
}

// yaml-cpp 0.7 allocates without bound on a ',' that starts a line in block context when an
// indented block came before it ("  - x\n ,"): refuse that before the parser sees it. Lines inside
// block scalars (| >), quoted scalars and flow collections ([ ] { }) are skipped.
void guard_yaml(const std::string& text, const std::string& file) {
  int flow = 0;                 // open [ and { outside quotes
  char quote = 0;               // inside a ' or " scalar that spans lines
  std::ptrdiff_t block = -1;    // indentation of the line that opened a block scalar, -1 when none
  std::size_t line_no = 0, pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line(text.data() + pos, end - pos);
    ++line_no;
    pos = end + 1;
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    const auto indent = static_cast<std::ptrdiff_t>(first);
    if (block >= 0) {
      if (indent > block) continue;  // block scalar content
      block = -1;
    }
    if (!quote && flow == 0 && line[first] == ',')
      throw InputError(file + ":" + std::to_string(line_no) + ":" + std::to_string(first + 1),
                       "',' starts a line outside a flow collection ([...] or {...})", "quote the value or put the list in [ ]");
    bool comment = false;
    for (std::size_t i = first; i < line.size() && !comment; ++i) {
      const char c = line[i];
      if (quote) {
        if (c == '\\' && quote == '"') ++i;
        else if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') {
        if (i == first || line[i - 1] == ' ' || line[i - 1] == '[' || line[i - 1] == '{' || line[i - 1] == ',' || line[i - 1] == ':' || line[i - 1] == '-')
          quote = c;
      } else if (c == '#' && (i == first || line[i - 1] == ' ' || line[i - 1] == '\t')) {
        comment = true;
      } else if (c == '[' || c == '{') {
        ++flow;
      } else if ((c == ']' || c == '}') && flow > 0) {
        --flow;
      }
    }
    // a block scalar starts when the line ends (before a comment) with | or > and its modifiers
    std::string_view rest = line.substr(first);
    if (const std::size_t h = rest.find(" #"); h != std::string_view::npos) rest = rest.substr(0, h);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r' || rest.back() == '\t')) rest.remove_suffix(1);
    std::size_t k = rest.size();
    while (k > 0 && (std::isdigit(static_cast<unsigned char>(rest[k - 1])) || rest[k - 1] == '-' || rest[k - 1] == '+')) --k;
    if (!quote && flow == 0 && k > 0 && (rest[k - 1] == '|' || rest[k - 1] == '>') && (k == 1 || rest[k - 2] == ' '))
      block = indent;
  }
}

}  // namespace

std::string pointer_token(const std::string& key) {
  if (key.find_first_of("~/") == std::string::npos) return key;
  std::string t;
  for (char c : key) {
    if (c == '~') t += "~0";
    else if (c == '/') t += "~1";
    else t += c;
  }
  return t;
}

std::string LocatedDoc::at(const std::string& path) const {
  if (auto it = where.find(path); it != where.end()) return it->second;
  if (path.size() > 80) return file + ": " + path.substr(0, 77) + "...";
  return file + ": " + (path.empty() ? "/" : path);
}

std::vector<LocatedDoc> parse_documents(const std::string& text, const std::string& file, bool yaml, bool all) {
  std::vector<LocatedDoc> out;
  if (!yaml) {
    LocatedDoc d;
    d.file = file;
    d.root = parse_json_text_unique_keys(text, file);
    out.push_back(std::move(d));
    return out;
  }
  guard_yaml(text, file);
  try {
    std::vector<YAML::Node> nodes;
    try {
      BudgetScope scope(parse_budget_for(text.size()));
      nodes = YAML::LoadAll(text);
    } catch (const std::bad_alloc&) {
      throw InputError(file, "the YAML parser needed more than " + std::to_string(parse_budget_for(text.size()) >> 20) + " MiB for this file",
                       "check the YAML syntax (indentation, stray ',' or '-')");
    }
    size_t count = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      LocatedDoc d;
      d.file = file;
      d.yaml = true;
      d.index = static_cast<int>(i);
      yaml_to_json(nodes[i], d.root, "", d, count, 0);
      if (d.root.is_null()) continue;  // "---" followed by nothing (a header comment before the document)
      // a file read as one document that holds two: the second would be dropped without a word
      if (!all && !out.empty())
        throw InputError(file + ":" + std::to_string(nodes[i].Mark().line + 1),
                         "a second YAML document (after '---'); this file is read as one document",
                         "put its keys in the first document (one 'deployments:' list holds every deployment), or give it as its own file");
      out.push_back(std::move(d));
    }
  } catch (const YAML::Exception& e) {
    throw InputError(file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1),
                     "invalid YAML (" + e.msg + ")", "fix the YAML syntax");
  }
  if (out.empty() && !all) {
    LocatedDoc d;
    d.file = file;
    d.yaml = true;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<LocatedDoc> load_documents(const std::string& path, bool all, std::int64_t max_bytes) {
  const std::string text = read_text_file(path, max_bytes);
  const bool yaml = path.size() > 4 && (path.ends_with(".yaml") || path.ends_with(".yml"));
  return parse_documents(text, path, yaml, all);
}

void DocNode::fail(const std::string& key, const std::string& what, const std::string& fix) const {
  throw InputError(at(key), what, fix);
}

void DocNode::only(const std::vector<std::string>& keys) const {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) != keys.end()) continue;
    const auto s = closest(it.key(), keys);
    std::string all;
    for (const auto& k : keys) all += (all.empty() ? "" : ", ") + k;
    fail(it.key(), "unknown key '" + it.key() + "'", s ? "did you mean '" + *s + "'?" : "known keys: " + all);
  }
}

std::string DocNode::str(const std::string& key, bool required) const {
  if (!has(key)) {
    if (required) throw InputError(here(), "missing '" + key + "'", "add " + key + ":");
    return {};
  }
  if (!j[key].is_string()) fail(key, key + ": expected a string, got " + describe_value(j[key]));
  return j[key].get<std::string>();
}

std::optional<i64> DocNode::count(const std::string& key, i64 lo, i64 hi) const {
  if (!has(key)) return std::nullopt;
  const json& v = j[key];
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.is_number_integer() && !v.is_number_unsigned()) fail(key, key + ": expected an integer in " + range + ", got " + describe_value(v));
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    fail(key, key + ": expected an integer in " + range + ", got " + v.dump());
  const i64 x = v.get<i64>();
  if (x < lo || x > hi) fail(key, key + ": expected an integer in " + range + ", got " + std::to_string(x));
  return x;
}

std::optional<double> DocNode::number(const std::string& key, double lo, double hi) const {
  if (!has(key)) return std::nullopt;
  const json& v = j[key];
  const std::string range = "[" + json(lo).dump() + ", " + json(hi).dump() + "]";
  if (!v.is_number() || !std::isfinite(v.get<double>())) fail(key, key + ": expected a number in " + range + ", got " + describe_value(v));
  const double x = v.get<double>();
  if (x < lo || x > hi) fail(key, key + ": expected a number in " + range + ", got " + v.dump());
  return x;
}

std::optional<bool> DocNode::boolean(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  if (!j[key].is_boolean()) fail(key, key + ": expected true or false, got " + describe_value(j[key]));
  return j[key].get<bool>();
}

std::optional<DocNode> DocNode::object(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  if (!j[key].is_object()) fail(key, key + ": expected a mapping, got " + describe_value(j[key]));
  return child(key);
}

std::string DocNode::scalar_text(const std::string& key) const {
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) return v.dump();
  fail(key, key + ": expected a scalar value, got " + describe_value(v));
}

}  // namespace kvplan::io
