// Strict, path-aware JSON reading: parse text (accepting the NaN / Infinity tokens real
// Hugging Face files contain) and read typed fields with errors that name the file and JSON path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvplan/core/error.hpp"

namespace kvplan::io {

using json = nlohmann::json;

/// Parses JSON text. Bare NaN, Infinity and -Infinity outside strings become the strings
/// "NaN", "Infinity", "-Infinity" (sizes holding them are then rejected as non-integers).
/// Syntax errors throw InputError "<label>: line L, column C: <what>".
json parse_json_text(const std::string& text, const std::string& label);
// The same, refusing a key repeated within one object (InputError naming it and its object's JSON pointer): for the
// documents kvplan reads as settings and requirements, where the last value silently winning would hide a typo.
json parse_json_text_unique_keys(const std::string& text, const std::string& label);

/// Reads a file and parses it; unreadable file -> InputError (exit 2) naming it.
json parse_json_file(const std::string& path);
/// The same for a file a setting names: a missing or unreadable file is an error of the setting ("--set overheads:
/// 'x.json': no such file"), its content's errors name the file and line as above.
json parse_json_file_for(const std::string& path, const std::string& setting_where);

/// Reads a whole file; throws InputError naming the path when it is missing, a directory or unreadable.
std::string read_text_file(const std::string& path, std::int64_t max_bytes = 64LL << 20);

/// A JSON object with the file label and the JSON pointer that leads to it.
class JsonView {
 public:
  JsonView(const json& j, std::string file, std::string path = "")
      : j_(&j), file_(std::move(file)), path_(std::move(path)) {}

  const json& raw() const { return *j_; }
  const std::string& file() const { return file_; }
  std::string path_of(const std::string& key) const { return path_ + "/" + key; }
  std::string where(const std::string& key) const { return file_ + ": " + path_of(key); }

  /// Present and not null.
  bool has(const std::string& key) const;
  /// First of `keys` that is present and not null (empty when none).
  std::optional<std::string> first_present(const std::vector<std::string>& keys) const;

  std::int64_t get_int(const std::string& key, std::int64_t lo, std::int64_t hi) const;
  std::optional<std::int64_t> opt_int(const std::string& key, std::int64_t lo, std::int64_t hi) const;
  std::int64_t int_or(const std::string& key, std::int64_t dflt, std::int64_t lo, std::int64_t hi) const;
  /// The first present key of `keys`; error naming the first key when none is present.
  std::int64_t get_int_any(const std::vector<std::string>& keys, std::int64_t lo, std::int64_t hi) const;

  double get_number(const std::string& key) const;
  std::optional<double> opt_number(const std::string& key) const;
  bool bool_or(const std::string& key, bool dflt) const;
  std::string string_or(const std::string& key, const std::string& dflt) const;
  std::string get_string(const std::string& key) const;
  std::vector<std::string> string_list(const std::string& key) const;
  std::vector<std::int64_t> int_list(const std::string& key, std::int64_t lo, std::int64_t hi) const;

  /// Child object (error when present but not an object).
  std::optional<JsonView> object(const std::string& key) const;

  [[noreturn]] void fail(const std::string& key, const std::string& what, const std::string& fix = {}) const;

 private:
  const json& at(const std::string& key) const { return (*j_)[key]; }
  const json* j_;
  std::string file_, path_;
};

/// "integer", "string", "Infinity" … for error messages ("got <describe(v)>").
std::string describe_value(const json& v);

}  // namespace kvplan::io
