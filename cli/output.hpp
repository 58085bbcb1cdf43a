// One table model rendered as a terminal table, Markdown or CSV; one JSON envelope for every
// command. Subcommands build these; nothing else prints data.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvplan::cli {

using ojson = nlohmann::ordered_json;

enum class Format { table, md, csv, json, jsonl };

/// Parses --format; throws InputError naming the flag.
Format parse_format_flag(const std::string& s);

struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<bool> right_align;  // per column; numbers right-aligned
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> verbose_only;  // per column; shown with --verbose (and always in md/csv/json)
  std::vector<bool> text;          // per column; a string in jsonl even when it reads as a number (a name "42")
};

/// Terminal tables fit `width` columns (default: $COLUMNS, else 100): verbose-only columns are
/// dropped unless `verbose`, then the widest text columns wrap.
void set_table_options(int width, bool verbose);
int table_width();

/// Renders a table as aligned text (table), GitHub Markdown (md) or RFC 4180 CSV (csv).
std::string render(const Table& t, Format f);

/// The envelope: schema {name, version}, meta {tool, version, git_sha, argv, profiles}, inputs, results.
ojson envelope(const std::string& schema_name, const std::string& schema_version, const std::vector<std::string>& argv,
               const std::vector<std::string>& profile_sources, ojson inputs, ojson results);

/// A JSON result as rows of (key, value): nested keys joined with '.', list items by index
/// ("cases.0.median_s"); one value per cell, numbers raw (table, md, csv and jsonl of JSON-first commands).
Table flatten(const ojson& j);

/// A message made one printable line: control bytes (a newline or an escape in a file name) as \xNN, UTF-8 kept.
std::string one_line(const std::string& s);
/// Integer with thousands separators: 131,072.
std::string grouped(long long v);

/// A number with `digits` decimals ("%.*f"); "n/a" when it is not finite.
std::string fmt(double v, int digits);

}  // namespace kvplan::cli
