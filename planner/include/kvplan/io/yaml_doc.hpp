// YAML and JSON documents as JSON trees that remember where every value was written: the reader
// behind deployment files, Kubernetes manifests, compose files and engine option files. Errors name
// file:line:column (YAML) or the JSON path, and reading is bounded against alias bombs and nesting.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/checked.hpp"
#include "kvplan/io/json_read.hpp"

namespace kvplan::io {

/// A mapping key as a JSON-pointer token ("nvidia.com/gpu" -> "nvidia.com~1gpu").
std::string pointer_token(const std::string& key);

/// One parsed document: its JSON tree and the source location of every JSON path in it.
struct LocatedDoc {
  json root;
  std::map<std::string, std::string> where;  // "/deployments/0/gpu" -> "file:3:5"
  std::string file;
  bool yaml = false;
  int index = 0;  // position in a multi-document stream (0 for the first)
  /// "file:line:col" for a path (YAML), else "file: /path".
  std::string at(const std::string& path) const;
};

/// Reads a file: .yaml/.yml as YAML (every document of a multi-document stream when `all`, else
/// exactly one), anything else as JSON. Empty documents in a stream are skipped. Bounded: at most
/// 20,000 nodes per file and 64 levels of nesting; at most `max_bytes` bytes.
std::vector<LocatedDoc> load_documents(const std::string& path, bool all, std::int64_t max_bytes = 16LL << 20);

/// The same for text already in memory (`file` labels errors); `yaml` chooses the parser.
std::vector<LocatedDoc> parse_documents(const std::string& text, const std::string& file, bool yaml, bool all);

/// Typed access to a mapping of a LocatedDoc, every error naming file:line:col.
struct DocNode {
  const LocatedDoc& doc;
  const json& j;
  std::string path;

  std::string at(const std::string& key) const { return doc.at(path + "/" + pointer_token(key)); }
  std::string here() const { return doc.at(path); }
  [[noreturn]] void fail(const std::string& key, const std::string& what, const std::string& fix = {}) const;
  bool has(const std::string& key) const { return j.is_object() && j.contains(key) && !j[key].is_null(); }
  /// Every key must be one of `keys` (else "unknown key" with "did you mean").
  void only(const std::vector<std::string>& keys) const;
  std::string str(const std::string& key, bool required = false) const;
  std::optional<i64> count(const std::string& key, i64 lo, i64 hi) const;
  std::optional<double> number(const std::string& key, double lo, double hi) const;
  std::optional<bool> boolean(const std::string& key) const;
  std::optional<DocNode> object(const std::string& key) const;
  /// A child mapping or list item by JSON pointer suffix ("/spec/template").
  DocNode child(const std::string& key) const { return DocNode{doc, j[key], path + "/" + pointer_token(key)}; }
  DocNode item(std::size_t i) const { return DocNode{doc, j[i], path + "/" + std::to_string(i)}; }
  /// A scalar as text (string, number or boolean as written); error for lists and mappings.
  std::string scalar_text(const std::string& key) const;
};

}  // namespace kvplan::io
